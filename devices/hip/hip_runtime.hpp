// AMD's HIP runtime without linking ROCm: libamdhip64.so is loaded with dlopen on first use
// ($TILEJIT_LIBHIP names another file, for tests), so a build runs where there is no AMD GPU,
// and status() says why HIP cannot be used. Every runtime error becomes a tj::Error naming the
// call and the error ("hip: hipMalloc failed: hipErrorOutOfMemory (2)").
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "devices/hip/hip_api.hpp"
#include "ir/error.hpp"

namespace tj::hip {

// The entry points, each loaded from the symbol of its name.
#define TJ_HIP_FUNCTIONS(X)                                                                                       \
  X(hipInit) X(hipRuntimeGetVersion) X(hipGetErrorName) X(hipGetDeviceCount) X(hipSetDevice)                     \
  X(hipDeviceGetAttribute) X(hipDeviceGetName) X(hipMalloc) X(hipFree) X(hipMemcpyHtoD) X(hipMemcpyDtoH)         \
  X(hipMemset) X(hipModuleLoadData) X(hipModuleUnload) X(hipModuleGetFunction) X(hipModuleLaunchKernel)          \
  X(hipDeviceSynchronize) X(hipEventCreate) X(hipEventRecord) X(hipEventElapsedTime) X(hipEventDestroy)         \
  X(hipMemcpyHtoDAsync) X(hipMemcpyDtoHAsync) X(hipMemsetAsync) X(hipStreamSynchronize) X(hipPointerGetAttributes)      \
  X(hipMemGetAddressRange)

struct Functions {
#define TJ_HIP_DECLARE(name) PFN_##name name = nullptr;
  TJ_HIP_FUNCTIONS(TJ_HIP_DECLARE)
#undef TJ_HIP_DECLARE
  // ROCm 6's hipGetDevicePropertiesR0600, else the unsuffixed one (ROCm 5's layout).
  PFN_hipGetDeviceProperties getDeviceProperties = nullptr;
  size_t archNameOffset = 0;  // where that one puts gcnArchName
};

// Whether HIP can be used here; `reason` is "HIP not available: ..." when not, naming what
// failed: loading the library (each name tried), a missing symbol, hipInit, no devices.
struct Status {
  bool available = false;
  std::string reason;
  std::string library;     // the file loaded
  int runtimeVersion = 0;  // hipRuntimeGetVersion's: major * 10^7 + minor * 10^5 + patch
  int devices = 0;
};

// The runtime, loaded once per process: $TILEJIT_LIBHIP, else libamdhip64.so, .so.7, .so.6, .so.5.
const Status& status();
// The process's entry points; throws Unsupported(status().reason) when unavailable.
const Functions& functions();

// "hip: <call> failed: <error name> (<code>)".
std::string errorMessage(hipError_t result, std::string_view call);
// Throws Unsupported(errorMessage(result, call)) unless result is hipSuccess.
void check(hipError_t result, std::string_view call);

// The N of "hip" (0) or "hip:N"; throws Error for anything else.
uint32_t deviceIndex(std::string_view deviceName);

// One device, as the runtime reports it.
struct DeviceInfo {
  uint32_t index = 0;
  std::string name;        // "AMD Instinct MI300X"
  std::string targetId;    // gcnArchName: "gfx942:sramecc+:xnack-"
  int multiprocessors = 0, warpSize = 64, maxThreadsPerBlock = 0;
  int sharedPerBlock = 0;  // LDS per workgroup
  int maxGrid[3] = {0, 0, 0};
  int runtimeVersion = 0;
  // The processor of the target id, what LLVM compiles for: "gfx942".
  std::string arch() const { return targetId.substr(0, targetId.find(':')); }
};
// Throws Error when HIP is unavailable or there is no device `index`.
DeviceInfo deviceInfo(uint32_t index);

// Device memory, freed when destroyed.
// Its transfers and zeroing are ordered on `stream` where one is given (the Async calls), else
// synchronous on the null stream.
class DeviceMemory {
 public:
  using Stream = hipStream_t;
  explicit DeviceMemory(size_t bytes);  // at least one byte is allocated
  // The `bytes` at `address` on `device`, which someone else allocated and frees. Throws
  // Unsupported where they (more than none) are not memory the runtime allocated, are another
  // device's, or reach past their allocation.
  DeviceMemory(uint64_t address, size_t bytes, const DeviceInfo& device);
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  uint64_t address() const { return uint64_t(uintptr_t(pointer_)); }
  size_t size() const { return bytes_; }
  void upload(const void* host, size_t bytes, hipStream_t stream = nullptr);
  void download(void* host, size_t bytes, hipStream_t stream = nullptr) const;
  void zero(hipStream_t stream = nullptr);

 private:
  void* pointer_ = nullptr;
  size_t bytes_;
  bool owned_ = true;
};

// A HIP event on the default stream, for timing. Only creating one throws.
class Event {
 public:
  using Stream = hipStream_t;
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  bool record(hipStream_t stream = nullptr);  // false where the runtime refused
  // Milliseconds from `start`'s record to this one's, both completed; -1 where unknown.
  double msSince(const Event& start) const;

 private:
  hipEvent_t event_ = nullptr;
};

// A code object loaded on the current device, with one of its kernels.
class Module {
 public:
  Module(std::span<const char> codeObject, const std::string& kernelName);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  hipFunction_t function() const { return function_; }

 private:
  hipModule_t module_ = nullptr;
  hipFunction_t function_ = nullptr;
};

}  // namespace tj::hip
