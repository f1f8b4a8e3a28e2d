// The subset of AMD's HIP runtime API tilejit uses, declared here instead of taken from
// hip_runtime_api.h, so the library builds without ROCm; libamdhip64.so is loaded at run time
// (hip_runtime.cpp). Values and signatures are ROCm 6's (ROCm 5 numbers the attributes and
// errors used here the same way).
#pragma once
#include <cstddef>
#include <cstdint>

// Opaque handles, with the runtime's struct names.
struct ihipModule_t;
struct ihipModuleSymbol_t;
struct ihipStream_t;
struct ihipEvent_t;

namespace tj::hip {

using hipError_t = int;  // an enum in the header; 0 is hipSuccess
using hipDevice_t = int;
using hipDeviceptr_t = void*;
using hipModule_t = ihipModule_t*;
using hipFunction_t = ihipModuleSymbol_t*;
using hipStream_t = ihipStream_t*;
using hipEvent_t = ihipEvent_t*;

inline constexpr hipError_t hipSuccess = 0;

enum hipDeviceAttribute_t : int {
  hipDeviceAttributeMaxGridDimX = 29,
  hipDeviceAttributeMaxGridDimY = 30,
  hipDeviceAttributeMaxGridDimZ = 31,
  hipDeviceAttributeMaxThreadsPerBlock = 56,
  hipDeviceAttributeMultiprocessorCount = 63,
  hipDeviceAttributeMaxSharedMemoryPerBlock = 74,
  hipDeviceAttributeWarpSize = 87,
};

// hipDeviceProp_t, of which only the target name is read: the gfx target id with its features
// ("gfx942:sramecc+:xnack-"). ROCm 6's hipGetDevicePropertiesR0600 fills 1472 bytes and puts
// it at byte 1160; the unsuffixed hipGetDeviceProperties (ROCm 5's, kept in ROCm 6 for old
// binaries) fills 792 and puts it at 396.
inline constexpr size_t kDevicePropsBytes = 4096;  // room for either, and for growth
inline constexpr size_t kArchNameOffsetR0600 = 1160;
inline constexpr size_t kArchNameOffsetR0000 = 396;
inline constexpr size_t kArchNameBytes = 256;

using PFN_hipInit = hipError_t (*)(unsigned int flags);
using PFN_hipRuntimeGetVersion = hipError_t (*)(int* version);
using PFN_hipGetErrorName = const char* (*)(hipError_t error);
using PFN_hipGetDeviceCount = hipError_t (*)(int* count);
using PFN_hipSetDevice = hipError_t (*)(int device);
using PFN_hipDeviceGetAttribute = hipError_t (*)(int* value, hipDeviceAttribute_t attribute, int device);
using PFN_hipDeviceGetName = hipError_t (*)(char* name, int length, hipDevice_t device);
using PFN_hipGetDeviceProperties = hipError_t (*)(void* properties, int device);
using PFN_hipMalloc = hipError_t (*)(void** pointer, size_t bytes);
using PFN_hipFree = hipError_t (*)(void* pointer);
using PFN_hipMemcpyHtoD = hipError_t (*)(hipDeviceptr_t destination, void* source, size_t bytes);
using PFN_hipMemcpyDtoH = hipError_t (*)(void* destination, hipDeviceptr_t source, size_t bytes);
// hipPointerAttribute_t: where a pointer's memory lives. The memory type's numbering changed
// in ROCm 6; the device ordinal, read here, is the second int in both.
struct hipPointerAttribute_t {
  int memoryType;
  int device;
  void* devicePointer;
  void* hostPointer;
  int isManaged;
  unsigned allocationFlags;
};
using PFN_hipPointerGetAttributes = hipError_t (*)(hipPointerAttribute_t* attributes, const void* pointer);
// The allocation `pointer` lies in; an error for memory the runtime did not allocate.
using PFN_hipMemGetAddressRange = hipError_t (*)(hipDeviceptr_t* base, size_t* bytes, hipDeviceptr_t pointer);
using PFN_hipMemset = hipError_t (*)(void* destination, int value, size_t bytes);
using PFN_hipMemcpyHtoDAsync = hipError_t (*)(hipDeviceptr_t destination, void* source, size_t bytes, hipStream_t stream);
using PFN_hipMemcpyDtoHAsync = hipError_t (*)(void* destination, hipDeviceptr_t source, size_t bytes, hipStream_t stream);
using PFN_hipMemsetAsync = hipError_t (*)(void* destination, int value, size_t bytes, hipStream_t stream);
using PFN_hipStreamSynchronize = hipError_t (*)(hipStream_t stream);
using PFN_hipModuleLoadData = hipError_t (*)(hipModule_t* module, const void* image);
using PFN_hipModuleUnload = hipError_t (*)(hipModule_t module);
using PFN_hipModuleGetFunction = hipError_t (*)(hipFunction_t* function, hipModule_t module, const char* name);
// The grid in workgroups; `kernelParams` one pointer per explicit parameter (the runtime lays
// them out from the code object's metadata and fills the hidden ones); `extra` null.
using PFN_hipModuleLaunchKernel = hipError_t (*)(hipFunction_t f, unsigned int gridX, unsigned int gridY,
                                                 unsigned int gridZ, unsigned int blockX, unsigned int blockY,
                                                 unsigned int blockZ, unsigned int sharedMemBytes, hipStream_t stream,
                                                 void** kernelParams, void** extra);
using PFN_hipDeviceSynchronize = hipError_t (*)();
using PFN_hipEventCreate = hipError_t (*)(hipEvent_t* event);
using PFN_hipEventRecord = hipError_t (*)(hipEvent_t event, hipStream_t stream);
using PFN_hipEventElapsedTime = hipError_t (*)(float* milliseconds, hipEvent_t start, hipEvent_t end);
using PFN_hipEventDestroy = hipError_t (*)(hipEvent_t event);

}  // namespace tj::hip
