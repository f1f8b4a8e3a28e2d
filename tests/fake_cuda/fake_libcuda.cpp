// A stand-in for libcuda.so.1 for tests on machines without a GPU (TILEJIT_LIBCUDA names it):
// one device that reports an H200's attributes, device memory in host memory, a "linker"
// whose cubin is the PTX behind a marker, and launches that run nothing themselves: they
// record their parameters and call the test's kernel, failing with CUDA_ERROR_NOT_SUPPORTED
// where no test set one. It checks what a real driver would reject: unknown pointers and
// handles, copies past an allocation, cubins it did not make, kernel names the PTX lacks.
// The tjFakeCuda* functions let a test count calls, act as the kernel and have device names
// come without their NUL.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "devices/cuda/cuda_api.hpp"

using namespace tj::cuda;

extern "C" {

struct TjFakeCudaCounts {
  int links, moduleLoads, launches, allocations, uploads, downloads;
};
// The kernel's part: called by each launch with the PTX, the grid, the threads per block, the
// dynamic shared memory and each parameter's 8-byte slot, as the PTX entry declares them.
using TjFakeCudaKernel = CUresult (*)(const char* ptx, const unsigned grid[3], unsigned block, unsigned sharedBytes,
                                     const std::uint64_t* params, unsigned count);

}  // extern "C"

namespace {

constexpr CUresult kInvalidValue = 1, kInvalidImage = 200, kInvalidHandle = 400, kNotFound = 500;
constexpr const char kCubinMarker[] = "tilejit fake cubin\n";

struct Fake {
  std::mutex mutex;
  TjFakeCudaCounts counts{};
  TjFakeCudaKernel kernel = nullptr;
  bool unterminatedName = false;  // cuDeviceGetName fills the whole buffer, without a NUL
  std::map<CUdeviceptr, size_t> allocations;  // by address: bytes
  std::map<CUmodule, std::string> modules;    // PTX by module
  std::map<CUfunction, std::pair<std::string, std::string>> functions;  // (PTX, entry) by function
  std::map<CUfunction, int> dynamicShared;  // the opted-in dynamic shared memory, by function
  std::map<CUlinkState, std::string> links;   // the PTX added, then the cubin
  std::map<CUevent, double> events;           // by event: when it was last recorded (ms), or -1
  uintptr_t nextHandle = 0x1000;
};

Fake& fake() {
  static Fake f;
  return f;
}

template <class Handle>
Handle newHandle(Fake& f) {
  f.nextHandle += 16;
  return reinterpret_cast<Handle>(f.nextHandle);
}

// Whether [address, address + bytes) lies in one allocation.
bool inAllocation(const Fake& f, CUdeviceptr address, size_t bytes) {
  auto it = f.allocations.upper_bound(address);
  if (it == f.allocations.begin()) return false;
  --it;
  return address + bytes <= it->first + it->second;
}

// The parameter count of `entry`'s list in `ptx`.
unsigned parameterCount(const std::string& ptx, const std::string& entry) {
  size_t open = ptx.find(".entry " + entry + "(");
  size_t close = ptx.find(')', open);
  unsigned count = 0;
  for (size_t at = ptx.find(".param", open); at < close; at = ptx.find(".param", at + 1)) ++count;
  return count;
}

}  // namespace

extern "C" {

TjFakeCudaCounts tjFakeCudaCounts() {
  std::lock_guard lock(fake().mutex);
  return fake().counts;
}

void tjFakeCudaSetKernel(TjFakeCudaKernel kernel) {
  std::lock_guard lock(fake().mutex);
  fake().kernel = kernel;
}

CUresult cuInit(unsigned) { return CUDA_SUCCESS; }
CUresult cuDriverGetVersion(int* version) {
  *version = 13000;
  return CUDA_SUCCESS;
}
CUresult cuGetErrorName(CUresult, const char**) { return kInvalidValue; }  // the caller's table names it
CUresult cuDeviceGetCount(int* count) {
  *count = 1;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (ordinal != 0) return 101;  // CUDA_ERROR_INVALID_DEVICE
  *device = 0;
  return CUDA_SUCCESS;
}
void tjFakeCudaSetNameUnterminated(bool unterminated) {
  std::lock_guard lock(fake().mutex);
  fake().unterminatedName = unterminated;
}

CUresult cuDeviceGetName(char* name, int length, CUdevice) {
  std::lock_guard lock(fake().mutex);
  if (fake().unterminatedName) std::memset(name, 'X', size_t(length));
  else std::strncpy(name, "NVIDIA H200 (tilejit fake driver)", size_t(length));
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice) {
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *value = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *value = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *value = 48 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *value = 32; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 132; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = 0; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *value = 227 * 1024; break;
    default: return kInvalidValue;
  }
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice) {
  *context = reinterpret_cast<CUcontext>(uintptr_t{0x10});
  return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(CUcontext) { return CUDA_SUCCESS; }
CUresult cuCtxSynchronize() { return CUDA_SUCCESS; }

CUresult cuMemAlloc_v2(CUdeviceptr* pointer, size_t bytes) {
  if (!bytes) return kInvalidValue;
  void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!p) return 2;  // CUDA_ERROR_OUT_OF_MEMORY
  std::lock_guard lock(fake().mutex);
  *pointer = CUdeviceptr(uintptr_t(p));
  fake().allocations[*pointer] = bytes;
  ++fake().counts.allocations;
  return CUDA_SUCCESS;
}
CUresult cuMemFree_v2(CUdeviceptr pointer) {
  std::lock_guard lock(fake().mutex);
  if (!fake().allocations.erase(pointer)) return kInvalidValue;
  std::free(reinterpret_cast<void*>(uintptr_t(pointer)));
  return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr destination, const void* source, size_t bytes) {
  std::lock_guard lock(fake().mutex);
  if (!inAllocation(fake(), destination, bytes)) return kInvalidValue;
  std::memcpy(reinterpret_cast<void*>(uintptr_t(destination)), source, bytes);
  ++fake().counts.uploads;
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoH_v2(void* destination, CUdeviceptr source, size_t bytes) {
  std::lock_guard lock(fake().mutex);
  if (!inAllocation(fake(), source, bytes)) return kInvalidValue;
  std::memcpy(destination, reinterpret_cast<const void*>(uintptr_t(source)), bytes);
  ++fake().counts.downloads;
  return CUDA_SUCCESS;
}
CUresult cuMemsetD8_v2(CUdeviceptr destination, unsigned char value, size_t count) {
  std::lock_guard lock(fake().mutex);
  if (!inAllocation(fake(), destination, count)) return kInvalidValue;
  std::memset(reinterpret_cast<void*>(uintptr_t(destination)), value, count);
  return CUDA_SUCCESS;
}

CUresult cuLinkCreate_v2(unsigned, CUjit_option*, void**, CUlinkState* state) {
  std::lock_guard lock(fake().mutex);
  *state = newHandle<CUlinkState>(fake());
  fake().links[*state];
  return CUDA_SUCCESS;
}
CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void* data, size_t size, const char*, unsigned,
                          CUjit_option*, void**) {
  std::lock_guard lock(fake().mutex);
  auto it = fake().links.find(state);
  if (it == fake().links.end()) return kInvalidHandle;
  const char* text = static_cast<const char*>(data);
  if (type != CU_JIT_INPUT_PTX || !size || text[size - 1] != '\0' || !std::strstr(text, ".entry "))
    return 218;  // CUDA_ERROR_INVALID_PTX
  it->second = text;
  return CUDA_SUCCESS;
}
CUresult cuLinkComplete(CUlinkState state, void** cubin, size_t* size) {
  std::lock_guard lock(fake().mutex);
  auto it = fake().links.find(state);
  if (it == fake().links.end()) return kInvalidHandle;
  it->second = kCubinMarker + it->second;
  *cubin = it->second.data();
  *size = it->second.size() + 1;
  ++fake().counts.links;
  return CUDA_SUCCESS;
}
CUresult cuLinkDestroy(CUlinkState state) {
  std::lock_guard lock(fake().mutex);
  return fake().links.erase(state) ? CUDA_SUCCESS : kInvalidHandle;
}

CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  const char* text = static_cast<const char*>(image);
  if (std::strncmp(text, kCubinMarker, sizeof kCubinMarker - 1) != 0) return kInvalidImage;
  std::lock_guard lock(fake().mutex);
  *module = newHandle<CUmodule>(fake());
  fake().modules[*module] = text + sizeof kCubinMarker - 1;
  ++fake().counts.moduleLoads;
  return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule module) {
  std::lock_guard lock(fake().mutex);
  return fake().modules.erase(module) ? CUDA_SUCCESS : kInvalidHandle;
}
CUresult cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  std::lock_guard lock(fake().mutex);
  auto it = fake().modules.find(module);
  if (it == fake().modules.end()) return kInvalidHandle;
  if (it->second.find(".entry " + std::string(name) + "(") == std::string::npos) return kNotFound;
  *function = newHandle<CUfunction>(fake());
  fake().functions[*function] = {it->second, name};
  return CUDA_SUCCESS;
}
CUresult cuFuncSetAttribute(CUfunction function, CUfunction_attribute attribute, int value) {
  std::lock_guard lock(fake().mutex);
  if (!fake().functions.count(function)) return kInvalidHandle;
  if (attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES || value < 0 || value > 227 * 1024)
    return kInvalidValue;
  fake().dynamicShared[function] = value;
  return CUDA_SUCCESS;
}
CUresult cuLaunchKernel(CUfunction function, unsigned gridX, unsigned gridY, unsigned gridZ, unsigned blockX,
                        unsigned blockY, unsigned blockZ, unsigned sharedBytes, CUstream, void** params,
                        void** extra) {
  std::unique_lock lock(fake().mutex);
  auto it = fake().functions.find(function);
  if (it == fake().functions.end()) return kInvalidHandle;
  if (extra || blockY != 1 || blockZ != 1 || !blockX || blockX > 1024 || !gridX || !gridY || !gridZ) return kInvalidValue;
  // Dynamic shared memory past 48 KiB needs the function's opt-in, as on the device.
  if (sharedBytes > 48 * 1024 && int(sharedBytes) > fake().dynamicShared[function]) return kInvalidValue;
  const auto& [ptx, entry] = it->second;
  std::vector<std::uint64_t> slots(parameterCount(ptx, entry));
  for (size_t p = 0; p < slots.size(); ++p) std::memcpy(&slots[p], params[p], sizeof slots[p]);
  ++fake().counts.launches;
  TjFakeCudaKernel kernel = fake().kernel;
  std::string text = ptx;
  lock.unlock();
  const unsigned grid[3] = {gridX, gridY, gridZ};
  // Without the test's kernel nothing can run it: the launch fails, as an unsupported one does.
  return kernel ? kernel(text.c_str(), grid, blockX, sharedBytes, slots.data(), unsigned(slots.size())) : 801;
}

CUresult cuEventCreate(CUevent* event, unsigned) {
  std::lock_guard lock(fake().mutex);
  *event = newHandle<CUevent>(fake());
  fake().events[*event] = -1;
  return CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent event, CUstream) {
  std::lock_guard lock(fake().mutex);
  auto it = fake().events.find(event);
  if (it == fake().events.end()) return kInvalidHandle;
  it->second = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
  return CUDA_SUCCESS;
}
CUresult cuEventElapsedTime(float* milliseconds, CUevent start, CUevent end) {
  std::lock_guard lock(fake().mutex);
  auto from = fake().events.find(start), to = fake().events.find(end);
  if (from == fake().events.end() || to == fake().events.end()) return kInvalidHandle;
  if (from->second < 0 || to->second < 0) return kInvalidHandle;  // never recorded, as the driver says
  *milliseconds = float(to->second - from->second);
  return CUDA_SUCCESS;
}
CUresult cuEventDestroy_v2(CUevent event) {
  std::lock_guard lock(fake().mutex);
  return fake().events.erase(event) ? CUDA_SUCCESS : kInvalidHandle;
}

}  // extern "C"
