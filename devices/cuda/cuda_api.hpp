// The subset of the CUDA Driver API tilejit uses, declared here instead of taken from
// cuda.h, so the library builds without the CUDA toolkit; libcuda.so.1 is loaded at run
// time (cuda_runtime.cpp). Values and signatures are cuda.h's (CUDA 13); tests/test_cuda.cpp
// checks the values against cuda.h where the toolkit is installed.
#pragma once
#include <cstddef>
#include <cstdint>

// Opaque handles, with cuda.h's struct names.
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUlinkState_st;
struct CUevent_st;

namespace tj::cuda {

using CUresult = int;  // an enum in cuda.h; 0 is CUDA_SUCCESS
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUlinkState = CUlinkState_st*;
using CUevent = CUevent_st*;
using cuuint32_t = uint32_t;
using cuuint64_t = uint64_t;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_INVALID_PTX = 218;

enum CUdevice_attribute : int {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

enum CUfunction_attribute : int {
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

enum CUpointer_attribute : int {
  CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,   // an int
  CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11,  // a CUdeviceptr: the allocation's start
  CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12,        // a size_t: the allocation's size
};

enum CUjit_option : int {
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_LOG_VERBOSE = 12,
};

enum CUjitInputType : int {
  CU_JIT_INPUT_PTX = 1,
};

// Hopper's TMA descriptor (cuTensorMapEncodeTiled's output), passed to kernels by value.
struct alignas(128) CUtensorMap {  // CUDA 13 aligns it to 128 bytes; the driver needs 64
  cuuint64_t opaque[16];            // CU_TENSOR_MAP_NUM_QWORDS
};

enum CUtensorMapDataType : int {
  CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7,
  CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9,
  CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B = 15,  // the last
};

enum CUtensorMapInterleave : int {
  CU_TENSOR_MAP_INTERLEAVE_NONE = 0,
  CU_TENSOR_MAP_INTERLEAVE_16B = 1,
  CU_TENSOR_MAP_INTERLEAVE_32B = 2,
};

enum CUtensorMapSwizzle : int {
  CU_TENSOR_MAP_SWIZZLE_NONE = 0,
  CU_TENSOR_MAP_SWIZZLE_32B = 1,
  CU_TENSOR_MAP_SWIZZLE_64B = 2,
  CU_TENSOR_MAP_SWIZZLE_128B = 3,
  CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B = 6,  // the last
};

enum CUtensorMapL2promotion : int {
  CU_TENSOR_MAP_L2_PROMOTION_NONE = 0,
  CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2,
  CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3,  // the last
};

enum CUtensorMapFloatOOBfill : int {
  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0,  // zeros
  CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA = 1,
};

// The entry points, by the symbol each is loaded from (versioned where cuda.h maps the
// plain name to a _v2 one).
using PFN_cuInit = CUresult (*)(unsigned int flags);
using PFN_cuDriverGetVersion = CUresult (*)(int* version);
using PFN_cuGetErrorName = CUresult (*)(CUresult error, const char** name);
using PFN_cuDeviceGetCount = CUresult (*)(int* count);
using PFN_cuDeviceGet = CUresult (*)(CUdevice* device, int ordinal);
using PFN_cuDeviceGetAttribute = CUresult (*)(int* value, CUdevice_attribute attribute, CUdevice device);
using PFN_cuDeviceGetName = CUresult (*)(char* name, int length, CUdevice device);
using PFN_cuDevicePrimaryCtxRetain = CUresult (*)(CUcontext* context, CUdevice device);
using PFN_cuCtxSetCurrent = CUresult (*)(CUcontext context);
using PFN_cuCtxSynchronize = CUresult (*)();
using PFN_cuModuleLoadData = CUresult (*)(CUmodule* module, const void* image);
using PFN_cuModuleUnload = CUresult (*)(CUmodule module);
using PFN_cuModuleGetFunction = CUresult (*)(CUfunction* function, CUmodule module, const char* name);
using PFN_cuFuncSetAttribute = CUresult (*)(CUfunction function, CUfunction_attribute attribute, int value);
using PFN_cuLaunchKernel = CUresult (*)(CUfunction f, unsigned int gridX, unsigned int gridY, unsigned int gridZ,
                                        unsigned int blockX, unsigned int blockY, unsigned int blockZ,
                                        unsigned int sharedMemBytes, CUstream stream, void** kernelParams,
                                        void** extra);
using PFN_cuMemAlloc_v2 = CUresult (*)(CUdeviceptr* pointer, size_t bytes);
using PFN_cuMemFree_v2 = CUresult (*)(CUdeviceptr pointer);
using PFN_cuPointerGetAttribute = CUresult (*)(void* data, CUpointer_attribute attribute, CUdeviceptr pointer);
using PFN_cuMemcpyHtoD_v2 = CUresult (*)(CUdeviceptr destination, const void* source, size_t bytes);
using PFN_cuMemcpyDtoH_v2 = CUresult (*)(void* destination, CUdeviceptr source, size_t bytes);
using PFN_cuMemsetD8_v2 = CUresult (*)(CUdeviceptr destination, unsigned char value, size_t count);
using PFN_cuMemcpyHtoDAsync_v2 = CUresult (*)(CUdeviceptr destination, const void* source, size_t bytes, CUstream stream);
using PFN_cuMemcpyDtoHAsync_v2 = CUresult (*)(void* destination, CUdeviceptr source, size_t bytes, CUstream stream);
using PFN_cuMemsetD8Async = CUresult (*)(CUdeviceptr destination, unsigned char value, size_t count, CUstream stream);
using PFN_cuStreamSynchronize = CUresult (*)(CUstream stream);
using PFN_cuLinkCreate_v2 = CUresult (*)(unsigned int numOptions, CUjit_option* options, void** optionValues,
                                         CUlinkState* state);
using PFN_cuLinkAddData_v2 = CUresult (*)(CUlinkState state, CUjitInputType type, void* data, size_t size,
                                          const char* name, unsigned int numOptions, CUjit_option* options,
                                          void** optionValues);
using PFN_cuLinkComplete = CUresult (*)(CUlinkState state, void** cubin, size_t* size);
using PFN_cuLinkDestroy = CUresult (*)(CUlinkState state);
using PFN_cuEventCreate = CUresult (*)(CUevent* event, unsigned int flags);
using PFN_cuEventRecord = CUresult (*)(CUevent event, CUstream stream);
using PFN_cuEventElapsedTime = CUresult (*)(float* milliseconds, CUevent start, CUevent end);
using PFN_cuEventDestroy_v2 = CUresult (*)(CUevent event);
// Dimensions innermost first (globalDim[0] is the contiguous one); globalStrides are the
// rank - 1 byte strides of dimensions 1.. in that order.
using PFN_cuTensorMapEncodeTiled = CUresult (*)(CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType,
                                                cuuint32_t tensorRank, void* globalAddress,
                                                const cuuint64_t* globalDim, const cuuint64_t* globalStrides,
                                                const cuuint32_t* boxDim, const cuuint32_t* elementStrides,
                                                CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                                CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill);

}  // namespace tj::cuda
