// Tensor::fromDLPack / toDLPack: tilejit tensors as views of other libraries' memory, and
// theirs of ours.
#include "dsl/dlpack.hpp"

#include <array>
#include <charconv>
#include <cstring>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "devices/device.hpp"
#include "dsl/tensor.hpp"
#include "dsl/tensor_storage.hpp"
#include "ir/ir.hpp"

namespace tj {
namespace {

constexpr const char* kImport = "Tensor::fromDLPack";

struct DTypeCode {
  DType dtype;
  DLDataTypeCode code;
  uint8_t bits;
};
constexpr std::array<DTypeCode, 14> kDTypeCodes{{
    {DType::f32, kDLFloat, 32},        {DType::f64, kDLFloat, 64},     {DType::f16, kDLFloat, 16},
    {DType::bf16, kDLBfloat, 16},      {DType::i8, kDLInt, 8},         {DType::i32, kDLInt, 32},
    {DType::i64, kDLInt, 64},          {DType::boolean, kDLBool, 8},   {DType::u8, kDLUInt, 8},
    {DType::u16, kDLUInt, 16},         {DType::u32, kDLUInt, 32},      {DType::u64, kDLUInt, 64},
    {DType::f8e4m3, kDLFloat8_e4m3fn, 8}, {DType::f8e5m2, kDLFloat8_e5m2, 8},
}};

std::string dtypeText(DLDataType t) {
  static constexpr std::array<const char*, 18> kNames{
      "int",          "uint",          "float",          "opaque handle",        "bfloat",
      "complex",      "bool",          "float8_e3m4",    "float8_e4m3",          "float8_e4m3b11fnuz",
      "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",      "float8_e8m0fnu",
      "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"};
  std::string code = t.code < kNames.size() ? kNames[t.code] : fmt::format("code {}", t.code);
  return fmt::format("{}{}{}", code, t.bits, t.lanes == 1 ? "" : fmt::format("x{}", t.lanes));
}

DType dtypeOf(DLDataType t, const SourceLoc& loc) {
  if (t.lanes == 1)
    for (const DTypeCode& c : kDTypeCodes)
      if (c.code == t.code && c.bits == t.bits) return c.dtype;
  fail(loc, kImport,
       fmt::format("dtype {} is not one of tilejit's (f32, f64, f16, bf16, i8, i32, i64, bool, u8, u16, u32, u64, "
                   "float8_e4m3fn, float8_e5m2)",
                   dtypeText(t)));
}

DLDataType dlDataTypeOf(DType d) {
  for (const DTypeCode& c : kDTypeCodes)
    if (c.dtype == d) return {uint8_t(c.code), c.bits, 1};
  throw InternalError("toDLPack", "no DLPack code for " + std::string(dtypeName(d)));
}

// The tilejit device whose memory a DLPack device is: "" for memory the host reads.
std::string deviceOf(DLDevice d, const SourceLoc& loc) {
  switch (d.device_type) {
    case kDLCPU: case kDLCUDAHost: case kDLCUDAManaged: case kDLROCMHost: return "";
    case kDLCUDA: return fmt::format("cuda:{}", d.device_id);
    case kDLROCM: return fmt::format("hip:{}", d.device_id);
    default:
      fail(loc, kImport,
           fmt::format("device type {} (id {}) is not one tilejit reads: kDLCPU, kDLCUDAHost, kDLCUDAManaged and "
                       "kDLROCMHost memory is used as host memory, kDLCUDA as \"cuda:N\"'s and kDLROCM as \"hip:N\"'s",
                       int(d.device_type), d.device_id));
  }
}

// A DLTensor as tilejit reads it: where its first element is and how far its elements reach.
struct View {
  DType dtype;
  Shape shape, strides;
  std::byte* first;     // its first element's address (host or device)
  size_t extentBytes;   // from there to past its last element
  std::string device;   // "" for host memory
};

View viewOf(const DLTensor& t, const SourceLoc& loc) {
  if (t.ndim < 0 || t.ndim > 4)
    fail(loc, kImport, fmt::format("rank {} is outside the supported 0 to 4", t.ndim));
  if (t.ndim > 0 && !t.shape) fail(loc, kImport, fmt::format("rank {} with no shape (a null pointer)", t.ndim));
  View v{dtypeOf(t.dtype, loc), Shape(t.shape, t.shape + t.ndim), {}, nullptr, 0, deviceOf(t.device, loc)};
  v.strides = t.strides ? Shape(t.strides, t.strides + t.ndim) : ir::rowMajorStrides(v.shape);
  for (int64_t d : v.shape)
    if (d < 0) fail(loc, kImport, fmt::format("negative size in shape [{}]", fmt::join(v.shape, ", ")));
  for (size_t a = 0; a < v.strides.size(); ++a)
    if (v.strides[a] < 0)
      fail(loc, kImport,
           fmt::format("negative stride {} on axis {} (strides [{}]): tilejit views take strides of 0 or more; "
                       "copy the tensor first (e.g. .contiguous() in PyTorch, np.ascontiguousarray)",
                       v.strides[a], a, fmt::join(v.strides, ", ")));
  const int64_t elementBytes = dtypeBytes(v.dtype);
  int64_t last = 0;  // the last element's offset, in elements
  bool empty = false;
  for (size_t a = 0; a < v.shape.size(); ++a) {
    empty = empty || v.shape[a] == 0;
    int64_t reach = 0;
    if (v.shape[a] > 0 && (__builtin_mul_overflow(v.shape[a] - 1, v.strides[a], &reach) ||
                           __builtin_add_overflow(last, reach, &last)))
      fail(loc, kImport, fmt::format("shape [{}] with strides [{}] reaches past int64", fmt::join(v.shape, ", "),
                                     fmt::join(v.strides, ", ")));
  }
  int64_t extent = 0;
  if (!empty && __builtin_mul_overflow(last + 1, elementBytes, &extent))
    fail(loc, kImport, "the tensor's bytes overflow int64");
  v.extentBytes = size_t(extent);
  if (!t.data && !empty) fail(loc, kImport, "the tensor has elements but no data (a null pointer)");
  v.first = static_cast<std::byte*>(t.data) + t.byte_offset;
  if (uintptr_t(v.first) % uintptr_t(elementBytes))
    fail(loc, kImport,
         fmt::format("data + byte_offset ({} + {}) is not aligned to the {}-byte {} elements", t.data, t.byte_offset,
                     elementBytes, dtypeName(v.dtype)));
  return v;
}

// The major version of a versioned tensor must be DLPack's 1: another changes the layout.
void checkVersion(const DLManagedTensorVersioned& m, const SourceLoc& loc) {
  if (m.version.major != DLPACK_MAJOR_VERSION)
    fail(loc, kImport,
         fmt::format("DLPack version {}.{}: tilejit reads major version {} (its {}.{})", m.version.major,
                     m.version.minor, DLPACK_MAJOR_VERSION, DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION));
}

// A producer's managed tensor, its deleter run once when the last view of its storage goes.
template <class Managed>
struct Producer {
  Managed* managed = nullptr;
  Producer() = default;
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;
  ~Producer() {
    if (managed && managed->deleter) managed->deleter(managed);
  }
};

// A device copy's device ("cuda", "cuda:1", "hip:0") as a DLPack device.
DLDevice dlDeviceOf(const std::string& device) {
  auto colon = std::min(device.find(':'), device.size());
  int32_t id = 0;
  if (colon < device.size()) std::from_chars(device.data() + colon + 1, device.data() + device.size(), id);
  std::string_view kind(device.data(), colon);
  if (kind == "cuda") return {kDLCUDA, id};
  if (kind == "hip") return {kDLROCM, id};
  throw InternalError("toDLPack", "no DLPack device for " + device);
}

// The device other libraries reach a storage's device copy on, or null for its host bytes.
std::optional<DLDevice> exportedDevice(const Residency* r) {
  if (!r || r->copy().address().device.empty()) return std::nullopt;
  return dlDeviceOf(r->copy().address().device);
}

}  // namespace

class DLPackExchange {
 public:
  // A tilejit tensor handed out: the view kept alive, and the shape and strides DLTensor points
  // to; an export of the device copy is counted on the storage until its deleter runs.
  template <class Managed>
  struct Exported {
    Managed managed{};
    Tensor view;
    Shape shape, strides;
    bool ofDeviceCopy = false;
    static void release(Managed* self) {
      auto* e = static_cast<Exported*>(self->manager_ctx);
      if (e->ofDeviceCopy) --e->view.storage_->deviceExports;
      delete e;
    }
  };

  template <class Managed>
  static Tensor import(Managed* m, bool readOnly, const SourceLoc& loc) {
    View v = viewOf(m->dl_tensor, loc);
    std::unique_ptr<DeviceCopy> copy;
    if (!v.device.empty()) copy = adopt(v, loc);
    // Everything allocated before the storage takes `m` over: a failure leaves it the caller's.
    auto producer = std::make_shared<Producer<Managed>>();
    std::shared_ptr<Tensor::Storage> storage;
    if (copy) {
      storage = hostMirror(v, loc);
      storage->residency = std::make_unique<Residency>(std::span(storage->bytes, storage->size), std::move(copy),
                                                       Residency::Home::device);
    } else {
      storage = std::make_shared<Tensor::Storage>(v.first, v.extentBytes);
    }
    storage->readOnly = readOnly;
    producer->managed = m;
    storage->foreign = std::move(producer);
    return Tensor(std::move(storage), v.dtype, std::move(v.shape), std::move(v.strides), 0);
  }

  template <class Managed>
  static Managed* exportView(const Tensor& t, const SourceLoc& loc) {
    t.checkDefined("Tensor::toDLPack", loc);
    if (std::is_same_v<Managed, DLManagedTensor> && t.storage_->readOnly)
      fail(loc, "Tensor::toDLPackLegacy",
           "the tensor is read-only, which a DLPack 0.x tensor cannot say: hand it out with toDLPack()");
    auto e = std::make_unique<Exported<Managed>>();
    e->view = t;
    e->shape = t.shape_;
    e->strides = t.strides_;
    DLTensor& d = e->managed.dl_tensor;
    const int64_t byteOffset = t.offset_ * dtypeBytes(t.dtype_);
    t.storage_->written.reset();  // as data(): the consumer may write any element
    Residency* r = t.storage_->residency.get();
    if (std::optional<DLDevice> device = exportedDevice(r)) {
      r->toDevice();
      r->deviceWrote();  // the consumer may write there
      d.data = reinterpret_cast<void*>(uintptr_t(r->copy().address().address + uint64_t(byteOffset)));
      d.device = *device;
      e->ofDeviceCopy = true;
      ++t.storage_->deviceExports;
    } else {
      d.data = t.hostBytes(true) + byteOffset;
      d.device = {kDLCPU, 0};
    }
    d.ndim = int32_t(e->shape.size());
    d.dtype = dlDataTypeOf(t.dtype_);
    d.shape = e->shape.data();
    d.strides = e->strides.data();
    e->managed.manager_ctx = e.get();
    e->managed.deleter = &Exported<Managed>::release;
    if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
      e->managed.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
      e->managed.flags = t.storage_->readOnly ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
    }
    return &e.release()->managed;
  }

 private:
  // A copy over the producer's GPU memory, from the device it names.
  static std::unique_ptr<DeviceCopy> adopt(const View& v, const SourceLoc& loc) {
    std::string why;
    std::unique_ptr<DeviceCopy> copy;
    try {
      copy = selectDevice(v.device).adopt(uint64_t(uintptr_t(v.first)), v.extentBytes, why);
    } catch (const Error& e) {  // no such device
      why = e.what();
    }
    if (!copy)
      fail(loc, kImport, fmt::format("the tensor is in {}'s memory, which tilejit cannot use here: {}", v.device, why));
    return copy;
  }

  // A storage for a GPU import: host bytes that the device copy's values come to when the host
  // reads them. Allocated now but untouched until then: the C library maps large blocks, so the
  // system commits their pages only when a download writes them.
  static std::shared_ptr<Tensor::Storage> hostMirror(const View& v, const SourceLoc& loc) {
    try {
      return std::make_shared<Tensor::Storage>(v.extentBytes);
    } catch (const std::bad_alloc&) {
      fail(loc, kImport, fmt::format("out of host memory for the {} bytes that mirror the {} tensor", v.extentBytes,
                                     v.device));
    }
  }
};

Tensor Tensor::fromDLPack(DLManagedTensorVersioned* managed, Loc loc) {
  SourceLoc at = SourceLoc::from(loc);
  if (!managed) fail(at, kImport, "null DLManagedTensorVersioned");
  checkVersion(*managed, at);
  return DLPackExchange::import(managed, (managed->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0, at);
}

Tensor Tensor::fromDLPack(DLManagedTensor* managed, Loc loc) {
  SourceLoc at = SourceLoc::from(loc);
  if (!managed) fail(at, kImport, "null DLManagedTensor");
  return DLPackExchange::import(managed, false, at);
}

std::pair<int32_t, int32_t> Tensor::exportDevice(Loc loc) const {
  checkDefined("Tensor::exportDevice", SourceLoc::from(loc));
  DLDevice d = exportedDevice(storage_->residency.get()).value_or(DLDevice{kDLCPU, 0});
  return {int32_t(d.device_type), d.device_id};
}

DLManagedTensorVersioned* Tensor::toDLPack(Loc loc) const {
  return DLPackExchange::exportView<DLManagedTensorVersioned>(*this, SourceLoc::from(loc));
}

DLManagedTensor* Tensor::toDLPackLegacy(Loc loc) const {
  return DLPackExchange::exportView<DLManagedTensor>(*this, SourceLoc::from(loc));
}

}  // namespace tj
