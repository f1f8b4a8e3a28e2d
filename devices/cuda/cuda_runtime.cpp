#include "devices/cuda/cuda_runtime.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "devices/device.hpp"
#include "devices/library_file.hpp"

namespace tj::cuda {

namespace {

// Names of the errors a loader and launcher meet, for when the driver cannot name them
// (the toolkit's stub library, whose cuGetErrorName fails too) and for tests without one.
constexpr std::pair<CUresult, const char*> kErrorNames[] = {
    {0, "CUDA_SUCCESS"}, {1, "CUDA_ERROR_INVALID_VALUE"}, {2, "CUDA_ERROR_OUT_OF_MEMORY"},
    {3, "CUDA_ERROR_NOT_INITIALIZED"}, {4, "CUDA_ERROR_DEINITIALIZED"}, {34, "CUDA_ERROR_STUB_LIBRARY"},
    {35, "CUDA_ERROR_INSUFFICIENT_DRIVER"}, {36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER"},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE"}, {100, "CUDA_ERROR_NO_DEVICE"}, {101, "CUDA_ERROR_INVALID_DEVICE"},
    {200, "CUDA_ERROR_INVALID_IMAGE"}, {201, "CUDA_ERROR_INVALID_CONTEXT"}, {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
    {218, "CUDA_ERROR_INVALID_PTX"}, {221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"}, {223, "CUDA_ERROR_JIT_COMPILATION_DISABLED"},
    {300, "CUDA_ERROR_INVALID_SOURCE"}, {400, "CUDA_ERROR_INVALID_HANDLE"}, {500, "CUDA_ERROR_NOT_FOUND"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS"}, {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
    {702, "CUDA_ERROR_LAUNCH_TIMEOUT"}, {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION"},
    {716, "CUDA_ERROR_MISALIGNED_ADDRESS"}, {719, "CUDA_ERROR_LAUNCH_FAILED"}, {800, "CUDA_ERROR_NOT_PERMITTED"},
    {801, "CUDA_ERROR_NOT_SUPPORTED"}, {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"}, {999, "CUDA_ERROR_UNKNOWN"},
};

// A loaded driver library: its entry points, and whether cuInit succeeded with a device.
class Driver {
 public:
  explicit Driver(const std::string& library) {
    try {
      load(library);
      st_.available = true;
    } catch (const std::exception& e) {
      st_.reason = std::string("CUDA not available: ") + e.what();
      close();
    }
  }
  ~Driver() = default;  // a usable driver stays loaded: the process's context lives in it
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  const Status& status() const { return st_; }
  const Functions& fn() const { return fn_; }

  // "<call> failed: <name> (<code>)".
  std::string errorText(CUresult r, std::string_view call) const {
    const char* name = nullptr;
    if (fn_.cuGetErrorName && fn_.cuGetErrorName(r, &name) != CUDA_SUCCESS) name = nullptr;
    return fmt::format("{} failed: {} ({})", call, name ? name : knownName(r), r);
  }

 private:
  void load(const std::string& library) {
    lib_ = openLibrary(library);
#define TJ_CUDA_LOAD(name)                                                               \
  fn_.name = reinterpret_cast<PFN_##name>(dlsym(lib_, #name));                           \
  if (!fn_.name) throw Error(library + " has no " #name);
    TJ_CUDA_FUNCTIONS(TJ_CUDA_LOAD)
#undef TJ_CUDA_LOAD
#define TJ_CUDA_LOAD_OPTIONAL(name) fn_.name = reinterpret_cast<PFN_##name>(dlsym(lib_, #name));
    TJ_CUDA_OPTIONAL_FUNCTIONS(TJ_CUDA_LOAD_OPTIONAL)
#undef TJ_CUDA_LOAD_OPTIONAL
    // Errors here are described by the driver when it can; the message is check()'s
    // without its "cuda: " prefix.
    auto need = [&](CUresult r, std::string_view call) {
      if (r != CUDA_SUCCESS) throw Error(errorText(r, call));
    };
    need(fn_.cuInit(0), "cuInit");
    need(fn_.cuDriverGetVersion(&st_.driverVersion), "cuDriverGetVersion");
    need(fn_.cuDeviceGetCount(&st_.devices), "cuDeviceGetCount");
    if (st_.devices <= 0) throw Error(fmt::format("the driver (CUDA {}) reports no devices", st_.driverVersion));
  }

  void close() {
    if (lib_) dlclose(lib_);
    lib_ = nullptr;
    fn_ = {};
  }

  static const char* knownName(CUresult r) {
    for (const auto& [code, name] : kErrorNames)
      if (code == r) return name;
    return "CUDA_ERROR_UNKNOWN";
  }

  void* lib_ = nullptr;
  Functions fn_;
  Status st_;
};

const Driver& driver() {
  static const Driver* d = [] {
    const char* env = std::getenv("TILEJIT_LIBCUDA");
    return new Driver(env && *env ? env : "libcuda.so.1");  // never destroyed: contexts outlive statics
  }();
  return *d;
}

}  // namespace

const Status& status() { return driver().status(); }

Status probe(const std::string& library) {
  auto d = std::make_unique<Driver>(library);
  Status s = d->status();
  if (s.available) d.release();  // keeps the library loaded, as the process's own driver does
  return s;
}

const Functions& functions() {
  const Driver& d = driver();
  if (!d.status().available) throw Unsupported(d.status().reason);
  return d.fn();
}

void missingFunction(std::string_view name) {
  throw Unsupported(fmt::format("cuda: unsupported: the driver (CUDA {}) has no {}", status().driverVersion, name));
}

std::string errorMessage(CUresult result, std::string_view call) { return "cuda: " + driver().errorText(result, call); }

void check(CUresult result, std::string_view call) {
  if (result != CUDA_SUCCESS) throw Unsupported(errorMessage(result, call));
}

uint32_t deviceIndex(std::string_view name) { return tj::deviceIndex(name, "cuda"); }

DeviceInfo deviceInfo(uint32_t index) {
  const Functions& fn = functions();
  if (index >= uint32_t(status().devices))
    throw Error(fmt::format("cuda: no device cuda:{}; the driver reports {}", index, status().devices));
  DeviceInfo info;
  info.index = index;
  info.driverVersion = status().driverVersion;
  check(fn.cuDeviceGet(&info.device, int(index)), "cuDeviceGet");
  std::array<char, 256> name{};
  check(fn.cuDeviceGetName(name.data(), int(name.size()), info.device), "cuDeviceGetName");
  info.name.assign(name.data(), strnlen(name.data(), name.size()));  // a driver may fill it without a NUL
  auto attribute = [&](CUdevice_attribute a) {
    int value = 0;
    check(fn.cuDeviceGetAttribute(&value, a, info.device), "cuDeviceGetAttribute");
    return value;
  };
  info.major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info.minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info.multiprocessors = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info.warpSize = attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  info.maxThreadsPerBlock = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  info.sharedPerBlock = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  info.sharedPerBlockOptin = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  info.maxGrid[0] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  info.maxGrid[1] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  info.maxGrid[2] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
  const char* portable = std::getenv("TILEJIT_CUDA_PORTABLE");
  info.archSpecific = !portable || std::string_view(portable) == "0";
  const char* tma = std::getenv("TILEJIT_CUDA_TMA");
  info.tma = !tma || std::string_view(tma) != "0";
  return info;
}

CUcontext primaryContext(CUdevice device) {
  CUcontext context = nullptr;
  check(functions().cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  return context;
}

// ---- DeviceMemory ----

DeviceMemory::DeviceMemory(size_t bytes) : bytes_(bytes) {
  check(functions().cuMemAlloc_v2(&pointer_, std::max<size_t>(bytes, 1)), "cuMemAlloc");
}

DeviceMemory::DeviceMemory(CUdeviceptr address, size_t bytes, const DeviceInfo& device)
    : pointer_(address), bytes_(bytes), owned_(false) {
  if (bytes == 0) return;  // an empty tensor's pointer may be null or past an allocation
  auto where = [&] { return fmt::format("cuda: the {} bytes at {:#x}", bytes, address); };
  int ordinal = -1;
  if (CUresult r = functions().cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, address))
    throw Unsupported(where() + " are not memory the driver knows (" + errorMessage(r, "cuPointerGetAttribute") + ")");
  if (ordinal != int(device.index))
    throw Unsupported(fmt::format("{} are cuda:{}'s memory, not cuda:{}'s", where(), ordinal, device.index));
  CUdeviceptr start = 0;
  size_t size = 0;
  if (functions().cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, address) == CUDA_SUCCESS &&
      functions().cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, address) == CUDA_SUCCESS &&
      address + bytes > start + size)
    throw Unsupported(fmt::format("{} reach past their allocation's {} bytes at {:#x}", where(), size, start));
}

DeviceMemory::~DeviceMemory() {
  if (owned_) functions().cuMemFree_v2(pointer_);  // an error here has nowhere to go
}

void DeviceMemory::upload(const void* host, size_t bytes, CUstream stream) {
  if (!bytes) return;
  if (stream) check(functions().cuMemcpyHtoDAsync_v2(pointer_, host, bytes, stream), "cuMemcpyHtoDAsync");
  else check(functions().cuMemcpyHtoD_v2(pointer_, host, bytes), "cuMemcpyHtoD");
}

void DeviceMemory::download(void* host, size_t bytes, CUstream stream) const {
  if (!bytes) return;
  if (stream) check(functions().cuMemcpyDtoHAsync_v2(host, pointer_, bytes, stream), "cuMemcpyDtoHAsync");
  else check(functions().cuMemcpyDtoH_v2(host, pointer_, bytes), "cuMemcpyDtoH");
}

void DeviceMemory::zero(CUstream stream) {
  size_t bytes = std::max<size_t>(bytes_, 1);
  if (stream) check(functions().cuMemsetD8Async(pointer_, 0, bytes, stream), "cuMemsetD8Async");
  else check(functions().cuMemsetD8_v2(pointer_, 0, bytes), "cuMemsetD8");
}

// ---- Event ----

Event::Event() { check(functions().cuEventCreate(&event_, 0), "cuEventCreate"); }

Event::~Event() { functions().cuEventDestroy_v2(event_); }  // an error here has nowhere to go

bool Event::record(CUstream stream) { return functions().cuEventRecord(event_, stream) == CUDA_SUCCESS; }

double Event::msSince(const Event& start) const {
  float ms = 0;
  return functions().cuEventElapsedTime(&ms, start.event_, event_) == CUDA_SUCCESS ? ms : -1;
}

// ---- Module ----

std::vector<char> linkPtx(const std::string& ptx) {
  const Functions& fn = functions();
  std::array<char, 16384> log{};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log.data(), reinterpret_cast<void*>(uintptr_t(log.size()))};
  CUlinkState link = nullptr;
  check(fn.cuLinkCreate_v2(2, options, values, &link), "cuLinkCreate");
  auto withLog = [&](CUresult r, std::string_view call) {
    if (r == CUDA_SUCCESS) return;
    std::string text(log.data(), strnlen(log.data(), log.size()));
    fn.cuLinkDestroy(link);
    std::string message = errorMessage(r, call) + (text.empty() ? "" : ": " + text);
    if (r == CUDA_ERROR_INVALID_PTX) throw InternalError("cuda", message);  // PTX the NVPTX backend printed
    throw Unsupported(message);  // e.g. a driver older than the PTX ISA
  };
  // The PTX with its terminating NUL, as the driver wants text.
  withLog(fn.cuLinkAddData_v2(link, CU_JIT_INPUT_PTX, const_cast<char*>(ptx.c_str()), ptx.size() + 1, "kernel.ptx", 0,
                              nullptr, nullptr),
          "cuLinkAddData");
  void* cubin = nullptr;
  size_t bytes = 0;
  withLog(fn.cuLinkComplete(link, &cubin, &bytes), "cuLinkComplete");
  // The cubin belongs to the link state.
  std::vector<char> copy(static_cast<const char*>(cubin), static_cast<const char*>(cubin) + bytes);
  fn.cuLinkDestroy(link);
  return copy;
}

Module::Module(std::span<const char> cubin, const std::string& kernelName) {
  const Functions& fn = functions();
  check(fn.cuModuleLoadData(&module_, cubin.data()), "cuModuleLoadData");
  CUresult found = fn.cuModuleGetFunction(&function_, module_, kernelName.c_str());
  if (found != CUDA_SUCCESS) {
    fn.cuModuleUnload(module_);
    throw InternalError("cuda", errorMessage(found, "cuModuleGetFunction") + " for kernel '" + kernelName + "'");
  }
}

Module::~Module() {
  if (module_) functions().cuModuleUnload(module_);
}

}  // namespace tj::cuda
