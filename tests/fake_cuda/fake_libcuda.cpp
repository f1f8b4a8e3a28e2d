// A stand-in for libcuda.so.1 for tests on machines without a GPU (TILEJIT_LIBCUDA names it):
// one device that reports an H200's attributes, device memory in host memory, a "linker"
// whose cubin is the PTX behind a marker, tensor maps that record their arguments
// (TjFakeTensorMap), and launches that run nothing themselves: they copy each parameter's
// bytes as the PTX entry declares them and call the test's kernel, failing with
// CUDA_ERROR_NOT_SUPPORTED where no test set one. It checks what a real driver would reject:
// unknown pointers and handles, copies past an allocation, cubins it did not make, kernel
// names the PTX lacks, parameters it cannot size, tensor maps against the Driver API's rules.
// The tjFakeCuda* functions (fake_cuda.hpp) let a test count calls, act as the kernel and
// have device names come without their NUL.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "devices/cuda/cuda_api.hpp"
#include "tests/fake_cuda/fake_cuda.hpp"
#include "tests/fake_driver.hpp"

using namespace tj::cuda;

namespace {

constexpr CUresult kInvalidValue = 1, kInvalidImage = 200, kInvalidHandle = 400, kNotFound = 500;
constexpr const char kCubinMarker[] = "tilejit fake cubin\n";

// A parameter as the PTX entry declares it: its bytes and their alignment.
struct ParamDecl {
  size_t bytes, align;
};

struct Fake {
  std::mutex mutex;
  TjFakeCudaCounts counts{};
  TjFakeCudaKernel kernel = nullptr;
  bool unterminatedName = false;  // cuDeviceGetName fills the whole buffer, without a NUL
  int multiprocessors = 132;      // an H200's
  tj::fake::Memory memory;
  tj::fake::Handles handles;
  std::map<CUmodule, std::string> modules;    // PTX by module
  std::map<CUfunction, std::pair<std::string, std::string>> functions;  // (PTX, entry) by function
  std::map<CUfunction, std::vector<ParamDecl>> params;  // the entry's parameters, by function
  std::map<CUfunction, int> dynamicShared;  // the opted-in dynamic shared memory, by function
  std::map<CUlinkState, std::string> links;   // the PTX added, then the cubin
  tj::fake::Events<CUevent> events;
  TjFakeStreams streams{};
};

Fake& fake() {
  static Fake f;
  return f;
}

void* at(CUdeviceptr address) { return reinterpret_cast<void*>(uintptr_t(address)); }

// One `.param` declaration: `.param .u64 x` (8 bytes), `.param .f32 x` (4),
// `.param .u64 .ptr .global .align 1 x` (8: that `.align` is the pointee's), `.param .align 64
// .b8 x[128]` (128, aligned to 64). False where it is none of those.
bool parseParam(const std::string& declaration, ParamDecl& param) {
  std::istringstream in(declaration);
  std::string token;
  size_t width = 0, align = 0, count = 1;
  bool named = false, pointer = false;
  while (in >> token) {
    if (token == ".param") continue;
    if (token == ".ptr") pointer = true;
    else if (token == ".align") {
      size_t n = 0;
      if (!(in >> n) || !n) return false;
      if (!pointer) align = n;
    } else if (token.size() >= 3 && token[0] == '.' && std::strchr("usbf", token[1])) {
      int bits = std::atoi(token.c_str() + 2);
      if (bits != 8 && bits != 16 && bits != 32 && bits != 64) return false;
      width = size_t(bits / 8);
    } else if (token[0] == '.') {
      continue;  // .global and the like
    } else {
      named = true;
      if (size_t open = token.find('['); open != std::string::npos) {
        count = size_t(std::strtoull(token.c_str() + open + 1, nullptr, 10));
        if (!count || token.back() != ']') return false;
      }
    }
  }
  if (!width || !named) return false;
  param = {width * count, std::max(width, align)};
  return true;
}

// The parameters of `entry`'s list in `ptx`, in order; false where one cannot be sized.
bool entryParams(const std::string& ptx, const std::string& entry, std::vector<ParamDecl>& params) {
  size_t open = ptx.find(".entry " + entry + "(");
  if (open == std::string::npos) return false;
  open = ptx.find('(', open) + 1;
  size_t close = ptx.find(')', open);
  if (close == std::string::npos) return false;
  std::string list = ptx.substr(open, close - open);
  if (list.find_first_not_of(" \t\n") == std::string::npos) return true;
  for (size_t at = 0; at <= list.size();) {
    size_t comma = std::min(list.find(',', at), list.size());
    ParamDecl p{};
    if (!parseParam(list.substr(at, comma - at), p)) return false;
    params.push_back(p);
    at = comma + 1;
  }
  return true;
}

// The bytes of one element of a tensor map's data type; 0 for the packed 4- and 6-bit ones,
// which the fake does not model.
size_t elementBytes(CUtensorMapDataType type) {
  constexpr size_t bytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};  // UINT8 .. TFLOAT32_FTZ, cuda.h's order
  return size_t(type) < std::size(bytes) ? bytes[type] : 0;
}

}  // namespace

extern "C" {

TjFakeCudaCounts tjFakeCudaCounts() {
  std::lock_guard lock(fake().mutex);
  return fake().counts;
}

TjFakeStreams tjFakeCudaStreams() {
  std::lock_guard lock(fake().mutex);
  return fake().streams;
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
void tjFakeCudaSetMultiprocessors(int count) {
  std::lock_guard lock(fake().mutex);
  fake().multiprocessors = count;
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
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: {
      std::lock_guard lock(fake().mutex);
      *value = fake().multiprocessors;
      break;
    }
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
CUresult cuCtxSynchronize() {
  std::lock_guard lock(fake().mutex);
  fake().streams.synchronize = nullptr;
  return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream stream) {
  std::lock_guard lock(fake().mutex);
  fake().streams.synchronize = stream;
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr* pointer, size_t bytes) {
  if (!bytes) return kInvalidValue;
  std::lock_guard lock(fake().mutex);
  void* p = fake().memory.allocate(bytes);
  if (!p) return 2;  // CUDA_ERROR_OUT_OF_MEMORY
  *pointer = CUdeviceptr(uintptr_t(p));
  ++fake().counts.allocations;
  return CUDA_SUCCESS;
}
CUresult cuMemFree_v2(CUdeviceptr pointer) {
  std::lock_guard lock(fake().mutex);
  return fake().memory.release(at(pointer)) ? CUDA_SUCCESS : kInvalidValue;
}
// Device 0's, for memory the fake allocated: its ordinal and its allocation's range.
CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr pointer) {
  std::lock_guard lock(fake().mutex);
  auto allocation = fake().memory.allocationOf(at(pointer));
  if (!allocation) return kInvalidValue;
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *static_cast<int*>(data) = 0; return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *static_cast<CUdeviceptr*>(data) = allocation->first; return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *static_cast<size_t*>(data) = allocation->second; return CUDA_SUCCESS;
  }
  return kInvalidValue;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr destination, const void* source, size_t bytes) {
  std::lock_guard lock(fake().mutex);
  if (!fake().memory.holds(at(destination), bytes)) return kInvalidValue;
  std::memcpy(at(destination), source, bytes);
  ++fake().counts.uploads;
  fake().streams.upload = nullptr;
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoH_v2(void* destination, CUdeviceptr source, size_t bytes) {
  std::lock_guard lock(fake().mutex);
  if (!fake().memory.holds(at(source), bytes)) return kInvalidValue;
  std::memcpy(destination, at(source), bytes);
  ++fake().counts.downloads;
  fake().streams.download = nullptr;
  return CUDA_SUCCESS;
}
CUresult cuMemsetD8_v2(CUdeviceptr destination, unsigned char value, size_t count) {
  std::lock_guard lock(fake().mutex);
  if (!fake().memory.holds(at(destination), count)) return kInvalidValue;
  std::memset(at(destination), value, count);
  fake().streams.zero = nullptr;
  return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr destination, const void* source, size_t bytes, CUstream stream) {
  return tj::fake::onStream(fake().mutex, fake().streams.upload, stream, cuMemcpyHtoD_v2(destination, source, bytes));
}
CUresult cuMemcpyDtoHAsync_v2(void* destination, CUdeviceptr source, size_t bytes, CUstream stream) {
  return tj::fake::onStream(fake().mutex, fake().streams.download, stream, cuMemcpyDtoH_v2(destination, source, bytes));
}
CUresult cuMemsetD8Async(CUdeviceptr destination, unsigned char value, size_t count, CUstream stream) {
  return tj::fake::onStream(fake().mutex, fake().streams.zero, stream, cuMemsetD8_v2(destination, value, count));
}

CUresult cuLinkCreate_v2(unsigned, CUjit_option*, void**, CUlinkState* state) {
  std::lock_guard lock(fake().mutex);
  *state = fake().handles.next<CUlinkState>();
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
  *module = fake().handles.next<CUmodule>();
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
  std::vector<ParamDecl> params;
  if (!entryParams(it->second, name, params)) return kInvalidImage;  // a parameter the fake cannot size
  *function = fake().handles.next<CUfunction>();
  fake().functions[*function] = {it->second, name};
  fake().params[*function] = std::move(params);
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
                        unsigned blockY, unsigned blockZ, unsigned sharedBytes, CUstream stream, void** params,
                        void** extra) {
  std::unique_lock lock(fake().mutex);
  auto it = fake().functions.find(function);
  if (it == fake().functions.end()) return kInvalidHandle;
  if (extra || blockY != 1 || blockZ != 1 || !blockX || blockX > 1024 || !gridX || !gridY || !gridZ) return kInvalidValue;
  // Dynamic shared memory past 48 KiB needs the function's opt-in, as on the device.
  if (sharedBytes > 48 * 1024 && int(sharedBytes) > fake().dynamicShared[function]) return kInvalidValue;
  // Each parameter's bytes at an offset aligned as declared, in a buffer aligned to 64.
  const std::vector<ParamDecl>& decls = fake().params.at(function);
  std::vector<size_t> offsets;
  size_t end = 0;
  for (const ParamDecl& d : decls) {
    end = (end + d.align - 1) / d.align * d.align;
    offsets.push_back(end);
    end += d.bytes;
  }
  struct alignas(64) Chunk {
    unsigned char bytes[64];
  };
  std::vector<Chunk> buffer(end / sizeof(Chunk) + 1);
  auto* bytes = reinterpret_cast<unsigned char*>(buffer.data());
  std::vector<TjFakeCudaParam> copied;
  for (size_t p = 0; p < decls.size(); ++p) {
    std::memcpy(bytes + offsets[p], params[p], decls[p].bytes);
    copied.push_back({bytes + offsets[p], decls[p].bytes});
  }
  ++fake().counts.launches;
  fake().streams.launch = stream;
  TjFakeCudaKernel kernel = fake().kernel;
  std::string text = it->second.first;
  lock.unlock();
  const unsigned grid[3] = {gridX, gridY, gridZ};
  // Without the test's kernel nothing can run it: the launch fails, as an unsupported one does.
  return kernel ? kernel(text.c_str(), grid, blockX, sharedBytes, copied.data(), unsigned(copied.size())) : 801;
}

// The Driver API's rules for a tiled tensor map (cuda.h, cuTensorMapEncodeTiled), each broken
// one CUDA_ERROR_INVALID_VALUE; the packed 4- and 6-bit types CUDA_ERROR_NOT_SUPPORTED (not
// modelled). The map records the arguments (TjFakeTensorMap).
CUresult cuTensorMapEncodeTiled(CUtensorMap* tensorMap, CUtensorMapDataType dataType, cuuint32_t rank,
                                void* globalAddress, const cuuint64_t* globalDim, const cuuint64_t* globalStrides,
                                const cuuint32_t* boxDim, const cuuint32_t* elementStrides,
                                CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill) {
  if (!tensorMap || uintptr_t(tensorMap) % 64 || !globalDim || !boxDim || !elementStrides ||
      (rank > 1 && !globalStrides))
    return kInvalidValue;
  if (dataType < 0 || dataType > CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B || interleave < 0 ||
      interleave > CU_TENSOR_MAP_INTERLEAVE_32B || swizzle < 0 || swizzle > CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B ||
      l2Promotion < 0 || l2Promotion > CU_TENSOR_MAP_L2_PROMOTION_L2_256B || oobFill < 0 ||
      oobFill > CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
    return kInvalidValue;
  const size_t bytes = elementBytes(dataType);
  if (!bytes) return 801;  // CUDA_ERROR_NOT_SUPPORTED
  const bool interleaved = interleave != CU_TENSOR_MAP_INTERLEAVE_NONE, wide = interleave == CU_TENSOR_MAP_INTERLEAVE_32B;
  if (rank < (interleaved ? 3u : 1u) || rank > 5) return kInvalidValue;
  if (uintptr_t(globalAddress) % (wide ? 32 : 16)) return kInvalidValue;
  uint64_t extent = bytes;  // from the address to past the last element
  for (cuuint32_t i = 0; i < rank; ++i) {
    if (globalDim[i] < 1 || globalDim[i] > uint64_t(1) << 32) return kInvalidValue;
    if (boxDim[i] < 1 || boxDim[i] > 256 || elementStrides[i] < 1 || elementStrides[i] > 8) return kInvalidValue;
    uint64_t stride = i == 0 ? bytes : globalStrides[i - 1];
    if (i > 0 && (stride % (wide ? 32 : 16) || stride >= uint64_t(1) << 40)) return kInvalidValue;
    extent += (globalDim[i] - 1) * stride;
  }
  const uint64_t inner = uint64_t(boxDim[0]) * bytes;  // the box's contiguous bytes
  if (!interleaved && inner % 16) return kInvalidValue;
  if (wide && swizzle != CU_TENSOR_MAP_SWIZZLE_32B) return kInvalidValue;
  const uint64_t span = swizzle == CU_TENSOR_MAP_SWIZZLE_NONE ? 0
                        : swizzle == CU_TENSOR_MAP_SWIZZLE_32B ? 32
                        : swizzle == CU_TENSOR_MAP_SWIZZLE_64B ? 64
                                                               : 128;
  if (!interleaved && span && inner > span) return kInvalidValue;
  // The NaN fill is for floating-point types only: FLOAT16 and those after it, packed ones aside.
  if (oobFill != CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE && dataType < CU_TENSOR_MAP_DATA_TYPE_FLOAT16) return kInvalidValue;
  std::lock_guard lock(fake().mutex);
  if (!fake().memory.holds(globalAddress, extent)) return kInvalidValue;
  TjFakeTensorMap record{};
  record.magic = TjFakeTensorMap::kMagic;
  record.dataType = uint8_t(dataType);
  record.rank = uint8_t(rank);
  record.interleave = uint8_t(interleave);
  record.swizzle = uint8_t(swizzle);
  record.l2Promotion = uint8_t(l2Promotion);
  record.oobFill = uint8_t(oobFill);
  record.address = uint64_t(uintptr_t(globalAddress));
  for (cuuint32_t i = 0; i < rank; ++i) {
    record.dims[i] = globalDim[i];
    record.box[i] = uint16_t(boxDim[i]);
    record.elementStrides[i] = uint8_t(elementStrides[i]);
    if (i > 0) record.strides[i - 1] = globalStrides[i - 1];
  }
  *tensorMap = {};
  std::memcpy(tensorMap, &record, sizeof record);
  ++fake().counts.tensorMaps;
  return CUDA_SUCCESS;
}

CUresult cuEventCreate(CUevent* event, unsigned) {
  std::lock_guard lock(fake().mutex);
  *event = fake().events.create(fake().handles);
  return CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent event, CUstream stream) {
  std::lock_guard lock(fake().mutex);
  fake().streams.record = stream;
  return fake().events.record(event) ? CUDA_SUCCESS : kInvalidHandle;
}
CUresult cuEventElapsedTime(float* milliseconds, CUevent start, CUevent end) {
  std::lock_guard lock(fake().mutex);
  // An event never recorded is an invalid handle too, as the driver says.
  return fake().events.elapsed(start, end, *milliseconds) == tj::fake::Events<CUevent>::Status::ok ? CUDA_SUCCESS
                                                                                                : kInvalidHandle;
}
CUresult cuEventDestroy_v2(CUevent event) {
  std::lock_guard lock(fake().mutex);
  return fake().events.destroy(event) ? CUDA_SUCCESS : kInvalidHandle;
}

}  // extern "C"
