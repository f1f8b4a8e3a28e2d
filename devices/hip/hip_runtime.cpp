#include "devices/hip/hip_runtime.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "devices/device.hpp"
#include "devices/library_file.hpp"

namespace tj::hip {

namespace {

// A loaded runtime library: its entry points, and whether hipInit succeeded with a device.
class Runtime {
 public:
  explicit Runtime(const std::vector<std::string>& libraries) {
    std::string problem;
    st_.library = loadFirstLibrary(libraries, [&](const std::string& l) { load(l); }, [&] { close(); }, problem);
    st_.available = !st_.library.empty();
    if (!st_.available) st_.reason = "HIP not available: " + problem;
  }
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const Status& status() const { return st_; }
  const Functions& fn() const { return fn_; }

  // "<call> failed: <name> (<code>)".
  std::string errorText(hipError_t r, std::string_view call) const {
    const char* name = fn_.hipGetErrorName ? fn_.hipGetErrorName(r) : nullptr;
    return fmt::format("{} failed: {} ({})", call, name && *name ? name : "hipErrorUnknown", r);
  }

 private:
  void load(const std::string& library) {
    lib_ = openLibrary(library);
#define TJ_HIP_LOAD(name)                                                      \
  fn_.name = reinterpret_cast<PFN_##name>(dlsym(lib_, #name));                 \
  if (!fn_.name) throw Error(library + " has no " #name);
    TJ_HIP_FUNCTIONS(TJ_HIP_LOAD)
#undef TJ_HIP_LOAD
    fn_.getDeviceProperties = reinterpret_cast<PFN_hipGetDeviceProperties>(dlsym(lib_, "hipGetDevicePropertiesR0600"));
    fn_.archNameOffset = kArchNameOffsetR0600;
    if (!fn_.getDeviceProperties) {
      fn_.getDeviceProperties = reinterpret_cast<PFN_hipGetDeviceProperties>(dlsym(lib_, "hipGetDeviceProperties"));
      fn_.archNameOffset = kArchNameOffsetR0000;
    }
    if (!fn_.getDeviceProperties) throw Error(library + " has no hipGetDevicePropertiesR0600 or hipGetDeviceProperties");
    auto need = [&](hipError_t r, std::string_view call) {
      if (r != hipSuccess) throw Error(errorText(r, call));
    };
    need(fn_.hipInit(0), "hipInit");
    initialized_ = true;
    need(fn_.hipRuntimeGetVersion(&st_.runtimeVersion), "hipRuntimeGetVersion");
    need(fn_.hipGetDeviceCount(&st_.devices), "hipGetDeviceCount");
    if (st_.devices <= 0) throw Error(fmt::format("{} reports no devices", library));
  }

  // A runtime that hipInit started (its threads, its exit handlers) stays loaded.
  void close() {
    if (lib_ && !initialized_) dlclose(lib_);
    lib_ = nullptr;
    fn_ = {};
    initialized_ = false;
  }

  void* lib_ = nullptr;
  bool initialized_ = false;
  Functions fn_;
  Status st_;
};

const Runtime& runtime() {
  static const Runtime* r = [] {
    const char* env = std::getenv("TILEJIT_LIBHIP");
    std::vector<std::string> names = env && *env ? std::vector<std::string>{env}
                                                 : std::vector<std::string>{"libamdhip64.so", "libamdhip64.so.7",
                                                                            "libamdhip64.so.6", "libamdhip64.so.5"};
    return new Runtime(names);  // never destroyed: modules and memory outlive statics
  }();
  return *r;
}

}  // namespace

const Status& status() { return runtime().status(); }

const Functions& functions() {
  const Runtime& r = runtime();
  if (!r.status().available) throw Unsupported(r.status().reason);
  return r.fn();
}

std::string errorMessage(hipError_t result, std::string_view call) { return "hip: " + runtime().errorText(result, call); }

void check(hipError_t result, std::string_view call) {
  if (result != hipSuccess) throw Unsupported(errorMessage(result, call));
}

uint32_t deviceIndex(std::string_view name) { return tj::deviceIndex(name, "hip"); }

DeviceInfo deviceInfo(uint32_t index) {
  const Functions& fn = functions();
  if (index >= uint32_t(status().devices))
    throw Error(fmt::format("hip: no device hip:{}; the runtime reports {}", index, status().devices));
  DeviceInfo info;
  info.index = index;
  info.runtimeVersion = status().runtimeVersion;
  const int device = int(index);  // HIP's hipDevice_t is the ordinal
  std::array<char, 256> name{};
  check(fn.hipDeviceGetName(name.data(), int(name.size()), device), "hipDeviceGetName");
  info.name.assign(name.data(), strnlen(name.data(), name.size()));
  std::vector<char> properties(kDevicePropsBytes, 0);
  check(fn.getDeviceProperties(properties.data(), device), "hipGetDeviceProperties");
  const char* targetId = properties.data() + fn.archNameOffset;
  info.targetId.assign(targetId, strnlen(targetId, kArchNameBytes));
  if (info.targetId.rfind("gfx", 0) != 0)
    throw Error(fmt::format("hip: device hip:{} ({}) has no gfx target name ('{}')", index, info.name, info.targetId));
  auto attribute = [&](hipDeviceAttribute_t a) {
    int value = 0;
    check(fn.hipDeviceGetAttribute(&value, a, device), "hipDeviceGetAttribute");
    return value;
  };
  info.multiprocessors = attribute(hipDeviceAttributeMultiprocessorCount);
  info.warpSize = attribute(hipDeviceAttributeWarpSize);
  info.maxThreadsPerBlock = attribute(hipDeviceAttributeMaxThreadsPerBlock);
  info.sharedPerBlock = attribute(hipDeviceAttributeMaxSharedMemoryPerBlock);
  info.maxGrid[0] = attribute(hipDeviceAttributeMaxGridDimX);
  info.maxGrid[1] = attribute(hipDeviceAttributeMaxGridDimY);
  info.maxGrid[2] = attribute(hipDeviceAttributeMaxGridDimZ);
  return info;
}

// ---- DeviceMemory ----

DeviceMemory::DeviceMemory(size_t bytes) : bytes_(bytes) {
  check(functions().hipMalloc(&pointer_, std::max<size_t>(bytes, 1)), "hipMalloc");
}

DeviceMemory::DeviceMemory(uint64_t address, size_t bytes, const DeviceInfo& device)
    : pointer_(reinterpret_cast<void*>(uintptr_t(address))), bytes_(bytes), owned_(false) {
  if (bytes == 0) return;  // an empty tensor's pointer may be null or past an allocation
  auto where = [&] { return fmt::format("hip: the {} bytes at {:#x}", bytes, address); };
  void* base = nullptr;
  size_t size = 0;
  if (hipError_t r = functions().hipMemGetAddressRange(&base, &size, pointer_))
    throw Unsupported(where() + " are not memory the runtime knows (" + errorMessage(r, "hipMemGetAddressRange") + ")");
  hipPointerAttribute_t attributes{};
  check(functions().hipPointerGetAttributes(&attributes, pointer_), "hipPointerGetAttributes");
  if (attributes.device != int(device.index))
    throw Unsupported(fmt::format("{} are hip:{}'s memory, not hip:{}'s", where(), attributes.device, device.index));
  uint64_t start = uint64_t(uintptr_t(base));
  if (address + bytes > start + size)
    throw Unsupported(fmt::format("{} reach past their allocation's {} bytes at {:#x}", where(), size, start));
}

DeviceMemory::~DeviceMemory() {
  if (owned_) functions().hipFree(pointer_);  // an error here has nowhere to go
}

void DeviceMemory::upload(const void* host, size_t bytes, hipStream_t stream) {
  if (!bytes) return;
  void* source = const_cast<void*>(host);
  if (stream) check(functions().hipMemcpyHtoDAsync(pointer_, source, bytes, stream), "hipMemcpyHtoDAsync");
  else check(functions().hipMemcpyHtoD(pointer_, source, bytes), "hipMemcpyHtoD");
}

void DeviceMemory::download(void* host, size_t bytes, hipStream_t stream) const {
  if (!bytes) return;
  if (stream) check(functions().hipMemcpyDtoHAsync(host, pointer_, bytes, stream), "hipMemcpyDtoHAsync");
  else check(functions().hipMemcpyDtoH(host, pointer_, bytes), "hipMemcpyDtoH");
}

void DeviceMemory::zero(hipStream_t stream) {
  size_t bytes = std::max<size_t>(bytes_, 1);
  if (stream) check(functions().hipMemsetAsync(pointer_, 0, bytes, stream), "hipMemsetAsync");
  else check(functions().hipMemset(pointer_, 0, bytes), "hipMemset");
}

// ---- Event ----

Event::Event() { check(functions().hipEventCreate(&event_), "hipEventCreate"); }

Event::~Event() { functions().hipEventDestroy(event_); }  // an error here has nowhere to go

bool Event::record(hipStream_t stream) { return functions().hipEventRecord(event_, stream) == hipSuccess; }

double Event::msSince(const Event& start) const {
  float ms = 0;
  return functions().hipEventElapsedTime(&ms, start.event_, event_) == hipSuccess ? ms : -1;
}

// ---- Module ----

Module::Module(std::span<const char> codeObject, const std::string& kernelName) {
  const Functions& fn = functions();
  check(fn.hipModuleLoadData(&module_, codeObject.data()), "hipModuleLoadData");
  hipError_t found = fn.hipModuleGetFunction(&function_, module_, kernelName.c_str());
  if (found != hipSuccess) {
    fn.hipModuleUnload(module_);
    throw InternalError("hip", errorMessage(found, "hipModuleGetFunction") + " for kernel '" + kernelName + "'");
  }
}

Module::~Module() {
  if (module_) functions().hipModuleUnload(module_);
}

}  // namespace tj::hip
