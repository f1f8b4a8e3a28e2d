// Tensors: typed, strided views over shared storage in host memory, which may also
// have a copy on a device.
//
// Device residency: `Tensor d = t.on("vulkan")` (or "cuda") gives t's storage a copy on the
// device (uploaded now, once) and returns the same view. Launches on that device then
// run on the copy without host round trips, and only the tensors a kernel stores to
// become newer there. Any host access (data(), item(), values(), text(), host())
// first downloads a newer device copy; data() and setItem() make the host bytes the
// newer ones, so the next launch there uploads them again, as does a launch on any
// other device (the CPU, the interpreter, or a GPU kernel falling back to the CPU),
// which computes on the host bytes. Every view of the storage shares the copy. on("cpu"),
// on("interp"), and on("vulkan") or on("cuda") without such a device warn, naming why, and return
// the tensor as it is, on the host. Like writing its elements, moving a storage with
// on() must not race with launches or host access through other views on other threads.
#pragma once
#include <cstdint>
#include <memory>
#include <source_location>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/dtype.hpp"
#include "ir/error.hpp"

struct DLManagedTensor;           // dsl/dlpack.hpp
struct DLManagedTensorVersioned;  // dsl/dlpack.hpp

namespace tj {

struct TensorArg;

inline constexpr DType f32 = DType::f32, f64 = DType::f64, f16 = DType::f16, bf16 = DType::bf16,
                       i8 = DType::i8, i32 = DType::i32, i64 = DType::i64, boolean = DType::boolean,
                       u8 = DType::u8, u16 = DType::u16, u32 = DType::u32, u64 = DType::u64,
                       f8e4m3 = DType::f8e4m3, f8e5m2 = DType::f8e5m2;

using Shape = std::vector<int64_t>;

class Tensor {
 public:
  using Loc = std::source_location;
  // A tensor with no storage yet, to assign one to later (`Tensor t; if (...) t = ...;`): every
  // operation on it but assignment and defined() is an Error, launches that pass it too.
  Tensor() = default;
  // Whether the tensor holds storage: false for a default-constructed one until assigned.
  bool defined() const { return storage_ != nullptr; }
  // Throws Error at `loc`, naming `op`, unless defined().
  void checkDefined(std::string_view op, const SourceLoc& loc) const;

  static Tensor empty(const Shape& shape, DType dtype = f32, Loc loc = Loc::current());
  static Tensor zeros(const Shape& shape, DType dtype = f32, Loc loc = Loc::current());
  static Tensor full(const Shape& shape, double value, DType dtype = f32, Loc loc = Loc::current());
  // Row-major values, rounded to dtype; values.size() must equal the element count.
  static Tensor from(const Shape& shape, const std::vector<double>& values, DType dtype = f32,
                     Loc loc = Loc::current());
  // Uniform in [lo, hi) for floats, integers in [lo, hi] for int dtypes; same seed, same data.
  static Tensor random(const Shape& shape, uint64_t seed, DType dtype = f32, double lo = -1.0,
                       double hi = 1.0, Loc loc = Loc::current());

  DType dtype(Loc loc = Loc::current()) const;
  int rank(Loc loc = Loc::current()) const;
  const Shape& shape(Loc loc = Loc::current()) const;
  const Shape& strides(Loc loc = Loc::current()) const;  // in elements
  int64_t dim(int axis, Loc loc = Loc::current()) const;
  int64_t numel(Loc loc = Loc::current()) const;
  void* data(Loc loc = Loc::current()) const;  // the first element of this view, in host memory

  // Device residency (see the top of this file). `device` names a device as
  // RunOptions::device does.
  Tensor on(const std::string& device, Loc loc = Loc::current()) const;
  const Tensor& host(Loc loc = Loc::current()) const;  // this view, its host bytes current
  // This view as a launch argument, its host bytes not brought back (dsl/launch.hpp).
  TensorArg launchArg(Loc loc = Loc::current()) const;

  // DLPack (dsl/dlpack.hpp): tensors exchanged with PyTorch, NumPy, JAX, CuPy... without a copy.
  // A view of the producer's memory: host memory (kDLCPU, kDLCUDAHost, kDLCUDAManaged,
  // kDLROCMHost) as this tensor's host bytes, or a GPU's (kDLCUDA on "cuda:N", kDLROCM on
  // "hip:N") as its device copy there (on()), where it stays: what a launch elsewhere or
  // setItem writes is copied back to it, and on() to another device is an Error. Any
  // non-negative strides, the byte offset and the read-only flag are honoured; rank above 4,
  // negative strides, vector dtypes, a dtype or device tilejit lacks, or a versioned tensor of
  // another major version are an Error at `loc`, after which the caller still owns `managed`.
  // Otherwise the tensor owns it: its deleter runs once, when the storage's last view goes.
  static Tensor fromDLPack(DLManagedTensorVersioned* managed, Loc loc = Loc::current());
  static Tensor fromDLPack(DLManagedTensor* managed, Loc loc = Loc::current());  // DLPack 0.x's
  // This view for another library, which must call the result's deleter once: the storage's
  // GPU copy where it has one on a CUDA or HIP device (made current), else its host bytes
  // (made current). The consumer may write through it, as through data() (the exported side
  // becomes the newer one); the storage, and an exported GPU copy, live until the deleter runs
  // (on() to another device is an Error until then).
  DLManagedTensorVersioned* toDLPack(Loc loc = Loc::current()) const;
  // For DLPack 0.x consumers; an Error for a read-only tensor, which 0.x cannot mark so.
  DLManagedTensor* toDLPackLegacy(Loc loc = Loc::current()) const;
  // Where toDLPack hands the tensor out, as DLPack's (device type, id): the CUDA or HIP device
  // whose copy it gives ((2, 1) for cuda:1), else the host's (1, 0).
  std::pair<int32_t, int32_t> exportDevice(Loc loc = Loc::current()) const;
  // Whether kernels and setItem may not write it: a DLPack import its producer marked so (data()
  // of such a tensor is for reading).
  bool readOnly(Loc loc = Loc::current()) const;

  // Views sharing storage.
  Tensor permute(const std::vector<int>& perm, Loc loc = Loc::current()) const;
  Tensor transpose(int a = 0, int b = 1, Loc loc = Loc::current()) const;
  Tensor contiguous(Loc loc = Loc::current()) const;  // a row-major copy
  // The same elements in row-major order under another shape of as many elements, sharing
  // storage: a view of a row-major tensor (is_contiguous()); others are an Error (take
  // contiguous() first).
  Tensor reshape(const Shape& shape, Loc loc = Loc::current()) const;
  bool is_contiguous(Loc loc = Loc::current()) const;  // row-major, with no gaps

  // Elements by row-major position within this view, as float64 (exact for every dtype but
  // i64 beyond 2^53); a position outside [0, numel()) is an Error.
  double item(int64_t flatIndex, Loc loc = Loc::current()) const;
  void setItem(int64_t flatIndex, double value, Loc loc = Loc::current());
  std::vector<double> values(Loc loc = Loc::current()) const;
  std::string text(Loc loc = Loc::current()) const;  // nested brackets, NumPy style

  // Whether two tensors are the same view of the same storage.
  bool sameView(const Tensor& other, Loc loc = Loc::current()) const;
  // Whether two tensors are views of the same storage.
  bool sharesStorage(const Tensor& other, Loc loc = Loc::current()) const;

 private:
  friend class Tracer;
  friend class DLPackExchange;  // dsl/dlpack.cpp
  struct Storage;
  Tensor(std::shared_ptr<Storage> storage, DType dtype, Shape shape, Shape strides, int64_t offset);
  // The storage offset of an element by row-major position, checked to be inside the view.
  int64_t elementOffset(int64_t flatIndex, const char* op, Loc loc) const;
  std::byte* hostBytes(bool willWrite) const;  // the storage's, made current

  std::shared_ptr<Storage> storage_;
  DType dtype_ = f32;
  Shape shape_, strides_;
  int64_t offset_ = 0;  // in elements
  // Set on the copies of a Kernel handle's arguments that its body receives while
  // traced: the trace and the tensor parameter. Copies keep it; derived views do not.
  uint64_t paramTrace_ = 0;
  int paramIndex_ = -1;
};

int64_t cdiv(int64_t a, int64_t b);

}  // namespace tj
