// The CUDA Driver API without linking CUDA: libcuda.so.1 is loaded with dlopen on first
// use ($TILEJIT_LIBCUDA names another file, for tests), so a build runs where there is no
// NVIDIA driver, and status() says why CUDA cannot be used. Every driver error becomes a
// tj::Error naming the call and the error ("cuda: cuMemAlloc failed:
// CUDA_ERROR_OUT_OF_MEMORY (2)").
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "devices/cuda/cuda_api.hpp"
#include "ir/error.hpp"

namespace tj::cuda {

// The entry points, each loaded from the symbol of its name.
#define TJ_CUDA_FUNCTIONS(X)                                                                                      \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetAttribute)   \
  X(cuDeviceGetName) X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuCtxSynchronize) X(cuModuleLoadData)      \
  X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncSetAttribute) X(cuLaunchKernel) X(cuMemAlloc_v2)              \
  X(cuMemFree_v2) X(cuMemcpyHtoD_v2) X(cuMemcpyDtoH_v2) X(cuMemsetD8_v2) X(cuLinkCreate_v2) X(cuLinkAddData_v2) \
  X(cuLinkComplete) X(cuLinkDestroy) X(cuEventCreate) X(cuEventRecord) X(cuEventElapsedTime) X(cuEventDestroy_v2) \
  X(cuMemcpyHtoDAsync_v2) X(cuMemcpyDtoHAsync_v2) X(cuMemsetD8Async) X(cuStreamSynchronize) X(cuPointerGetAttribute)
// Those a driver may lack (null then): cuTensorMapEncodeTiled came with CUDA 12.
#define TJ_CUDA_OPTIONAL_FUNCTIONS(X) X(cuTensorMapEncodeTiled)

struct Functions {
#define TJ_CUDA_DECLARE(name) PFN_##name name = nullptr;
  TJ_CUDA_FUNCTIONS(TJ_CUDA_DECLARE)
  TJ_CUDA_OPTIONAL_FUNCTIONS(TJ_CUDA_DECLARE)
#undef TJ_CUDA_DECLARE
};

// An optional entry point `fn`, loaded as `name`; throws Unsupported("cuda: unsupported: the
// driver (CUDA N) has no <name>") where the driver lacks it.
[[noreturn]] void missingFunction(std::string_view name);
template <class F>
F optionalFunction(F fn, std::string_view name) {
  if (!fn) missingFunction(name);
  return fn;
}

// Whether CUDA can be used here; `reason` is "CUDA not available: ..." when not, naming
// what failed: loading the library (a truncated file is refused before dlopen maps it:
// devices/library_file.hpp), a missing symbol, cuInit (its error), no devices.
struct Status {
  bool available = false;
  std::string reason;
  int driverVersion = 0;  // cuDriverGetVersion's, e.g. 13000
  int devices = 0;
};

// The driver, loaded once per process: $TILEJIT_LIBCUDA, else libcuda.so.1.
const Status& status();
// Loads `library` now, for tests (the toolkit's stub libcuda.so, whose cuInit fails):
// its status, without touching the process's driver. The library stays loaded only when
// it is usable.
Status probe(const std::string& library);

// The process's driver entry points; throws Error(status().reason) when unavailable.
const Functions& functions();

// "cuda: <call> failed: <error name> (<code>)"; the name from the driver where it knows
// it, else from our own table, else "CUDA_ERROR_UNKNOWN".
std::string errorMessage(CUresult result, std::string_view call);
// Throws Unsupported(errorMessage(result, call)) unless result is CUDA_SUCCESS: the driver
// refused (no memory, a PTX ISA newer than it, ...).
void check(CUresult result, std::string_view call);

// The N of "cuda" (0) or "cuda:N"; throws Error for anything else.
uint32_t deviceIndex(std::string_view deviceName);

// One device, as the driver reports it.
struct DeviceInfo {
  uint32_t index = 0;
  CUdevice device = 0;
  std::string name;
  int major = 0, minor = 0;  // compute capability
  int multiprocessors = 0, warpSize = 32, maxThreadsPerBlock = 0;
  int sharedPerBlock = 0;       // without opting in (48 KiB)
  int sharedPerBlockOptin = 0;  // with cuFuncSetAttribute (227 KiB on H100/H200)
  int maxGrid[3] = {0, 0, 0};
  int driverVersion = 0;
  // Whether 9.0 (Hopper) takes the architecture-specific sm_90a, whose wgmma no other GPU runs;
  // TILEJIT_CUDA_PORTABLE=1 keeps it on sm_90 (mma.sync), to compare the two or to avoid one.
  bool archSpecific = true;
  // Whether sm_90a reads dot operands ahead with TMA; TILEJIT_CUDA_TMA=0 keeps cp.async, to
  // compare the two or to avoid one.
  bool tma = true;
  std::string arch() const {
    return "sm_" + std::to_string(major) + std::to_string(minor) + (archSpecific && major == 9 && minor == 0 ? "a" : "");
  }
};
// Throws Error when CUDA is unavailable or there is no device `index`.
DeviceInfo deviceInfo(uint32_t index);

// A device's primary context, retained for the process.
CUcontext primaryContext(CUdevice device);

// Device memory, freed when destroyed. Its transfers and zeroing are ordered on `stream` where
// one is given (the Async calls), else synchronous on the legacy default stream.
class DeviceMemory {
 public:
  using Stream = CUstream;
  explicit DeviceMemory(size_t bytes);  // at least one byte is allocated
  // The `bytes` at `address`, which someone else allocated and frees: throws Unsupported unless
  // the driver knows them (more than none) as one allocation of device `device`'s.
  DeviceMemory(CUdeviceptr address, size_t bytes, const DeviceInfo& device);
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  CUdeviceptr address() const { return pointer_; }
  size_t size() const { return bytes_; }
  void upload(const void* host, size_t bytes, CUstream stream = nullptr);
  void download(void* host, size_t bytes, CUstream stream = nullptr) const;
  void zero(CUstream stream = nullptr);

 private:
  CUdeviceptr pointer_ = 0;
  size_t bytes_;
  bool owned_ = true;
};

// A CUDA event in the current context, for timing work on the GPU. Timing is best effort:
// only creating one throws, so a failed record never turns a launch into an error.
class Event {
 public:
  using Stream = CUstream;
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  bool record(CUstream stream = nullptr);  // false where the driver refused
  // Milliseconds on the GPU from `start`'s record to this one's, both completed; -1 where
  // the driver cannot tell.
  double msSince(const Event& start) const;

 private:
  CUevent event_ = nullptr;
};

// PTX linked into a cubin by the driver (cuLinkCreate/AddData/Complete) for the current
// context's device. Link errors carry the driver's log: InternalError for PTX the driver calls
// invalid (the NVPTX backend printed it), Unsupported for the rest (e.g. an older driver).
std::vector<char> linkPtx(const std::string& ptx);

// A cubin loaded into the current context, with one of its kernels.
class Module {
 public:
  Module(std::span<const char> cubin, const std::string& kernelName);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  CUfunction function() const { return function_; }

 private:
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
};

}  // namespace tj::cuda
