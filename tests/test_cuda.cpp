// The CUDA device without a GPU: the driver is loaded at run time and, where it is missing
// (or is the toolkit's stub, whose cuInit fails), status() says why and launches run on
// the CPU with the interpreter's results. Where a real driver and GPU are present the same
// cases check that the launch ran on CUDA instead.
#include <doctest/doctest.h>
#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "devices/cuda/cubin_cache.hpp"
#include "devices/cuda/cuda_device.hpp"
#include "devices/cuda/cuda_runtime.hpp"
#include "devices/device.hpp"
#include "devices/library_file.hpp"
#include "dsl/tilejit.hpp"
#include "ir/error.hpp"
#include "jit/cache_file.hpp"
#include "lower/gpu/spread_over_warps.hpp"
#include "lower/ptx/nvptx.hpp"
#include "samples/harness.hpp"
#include "tests/dlpack_producer.hpp"
#include "tests/support.hpp"

// Our declarations against cuda.h, where the toolkit is installed (included last: it
// defines macros such as cuMemAlloc).
#if __has_include("/usr/local/cuda/include/cuda.h")
#include "/usr/local/cuda/include/cuda.h"
#define TJ_TEST_HAVE_CUDA_H 1
#endif

namespace tj::cudatest {

namespace {

namespace fs = std::filesystem;

// The file of a library this process loaded, e.g. "libc.so.6".
std::string loadedLibrary(const char* soname) {
  void* handle = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(handle);
  link_map* map = nullptr;
  REQUIRE(dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0);
  std::string file = map->l_name;
  dlclose(handle);
  return file;
}

// The toolkit's stub driver, or "" without the toolkit.
std::string stubLibrary() {
  for (const char* dir : {static_cast<const char*>(std::getenv("CUDA_HOME")), "/usr/local/cuda"})
    if (dir && std::filesystem::exists(std::string(dir) + "/lib64/stubs/libcuda.so"))
      return std::string(dir) + "/lib64/stubs/libcuda.so";
  return "";
}

}  // namespace

#ifdef TJ_TEST_HAVE_CUDA_H
static_assert(tj::cuda::CUDA_SUCCESS == int(::CUDA_SUCCESS));
static_assert(sizeof(tj::cuda::CUresult) == sizeof(::CUresult));
static_assert(std::is_same_v<tj::cuda::CUdeviceptr, ::CUdeviceptr>);
static_assert(std::is_same_v<tj::cuda::CUdevice, ::CUdevice>);
static_assert(std::is_same_v<tj::cuda::CUcontext, ::CUcontext>);
static_assert(std::is_same_v<tj::cuda::CUmodule, ::CUmodule>);
static_assert(std::is_same_v<tj::cuda::CUfunction, ::CUfunction>);
static_assert(std::is_same_v<tj::cuda::CUstream, ::CUstream>);
static_assert(std::is_same_v<tj::cuda::CUlinkState, ::CUlinkState>);
static_assert(std::is_same_v<tj::cuda::CUevent, ::CUevent>);
#define TJ_SAME_VALUE(name) static_assert(int(tj::cuda::name) == int(::name), #name);
TJ_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
TJ_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)
TJ_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)
TJ_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)
TJ_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)
TJ_SAME_VALUE(CU_DEVICE_ATTRIBUTE_WARP_SIZE)
TJ_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
TJ_SAME_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
TJ_SAME_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
TJ_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
TJ_SAME_VALUE(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
TJ_SAME_VALUE(CU_JIT_INFO_LOG_BUFFER)
TJ_SAME_VALUE(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES)
TJ_SAME_VALUE(CU_JIT_ERROR_LOG_BUFFER)
TJ_SAME_VALUE(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
TJ_SAME_VALUE(CU_JIT_LOG_VERBOSE)
TJ_SAME_VALUE(CU_JIT_INPUT_PTX)
TJ_SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_UINT8)
TJ_SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_FLOAT16)
TJ_SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_FLOAT32)
TJ_SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16)
TJ_SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B)
TJ_SAME_VALUE(CU_TENSOR_MAP_INTERLEAVE_NONE)
TJ_SAME_VALUE(CU_TENSOR_MAP_INTERLEAVE_16B)
TJ_SAME_VALUE(CU_TENSOR_MAP_INTERLEAVE_32B)
TJ_SAME_VALUE(CU_TENSOR_MAP_SWIZZLE_NONE)
TJ_SAME_VALUE(CU_TENSOR_MAP_SWIZZLE_32B)
TJ_SAME_VALUE(CU_TENSOR_MAP_SWIZZLE_64B)
TJ_SAME_VALUE(CU_TENSOR_MAP_SWIZZLE_128B)
TJ_SAME_VALUE(CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B)
TJ_SAME_VALUE(CU_TENSOR_MAP_L2_PROMOTION_NONE)
TJ_SAME_VALUE(CU_TENSOR_MAP_L2_PROMOTION_L2_128B)
TJ_SAME_VALUE(CU_TENSOR_MAP_L2_PROMOTION_L2_256B)
TJ_SAME_VALUE(CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
TJ_SAME_VALUE(CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
#undef TJ_SAME_VALUE
static_assert(std::is_same_v<tj::cuda::cuuint32_t, ::cuuint32_t>);
static_assert(std::is_same_v<tj::cuda::cuuint64_t, ::cuuint64_t>);
static_assert(sizeof(tj::cuda::CUtensorMap) == sizeof(::CUtensorMap) && CU_TENSOR_MAP_NUM_QWORDS == 16);
static_assert(alignof(tj::cuda::CUtensorMap) == alignof(::CUtensorMap));
static_assert(sizeof(tj::cuda::CUtensorMapDataType) == sizeof(::CUtensorMapDataType));
static_assert(sizeof(tj::cuda::CUtensorMapSwizzle) == sizeof(::CUtensorMapSwizzle));
// The entry point's signature, but for the enums' types (cuda.h's are its own).
static_assert(std::is_same_v<tj::cuda::PFN_cuTensorMapEncodeTiled,
                             tj::cuda::CUresult (*)(tj::cuda::CUtensorMap*, tj::cuda::CUtensorMapDataType, ::cuuint32_t, void*,
                                          const ::cuuint64_t*, const ::cuuint64_t*, const ::cuuint32_t*,
                                          const ::cuuint32_t*, tj::cuda::CUtensorMapInterleave,
                                          tj::cuda::CUtensorMapSwizzle, tj::cuda::CUtensorMapL2promotion,
                                          tj::cuda::CUtensorMapFloatOOBfill)>);
static_assert(std::is_same_v<decltype(&::cuTensorMapEncodeTiled),
                             ::CUresult (*)(::CUtensorMap*, ::CUtensorMapDataType, ::cuuint32_t, void*,
                                          const ::cuuint64_t*, const ::cuuint64_t*, const ::cuuint32_t*,
                                          const ::cuuint32_t*, ::CUtensorMapInterleave, ::CUtensorMapSwizzle,
                                          ::CUtensorMapL2promotion, ::CUtensorMapFloatOOBfill)>);
#endif
static_assert(sizeof(tj::cuda::CUtensorMap) == 128 && alignof(tj::cuda::CUtensorMap) >= 64);

TEST_CASE("cuda: without a driver the status is unavailable and says why") {
  const cuda::Status& s = cuda::status();
  if (s.available) {
    MESSAGE("a CUDA driver is present (" << s.driverVersion << ", " << s.devices << " devices)");
    CHECK(s.reason.empty());
    CHECK(s.devices > 0);
    return;
  }
  MESSAGE(s.reason);
  CHECK(s.reason.starts_with("CUDA not available: "));
  CHECK(s.reason.size() > std::string("CUDA not available: ").size());
  CHECK_THROWS_WITH_AS(cuda::functions(), s.reason.c_str(), Error);
  CHECK_THROWS_WITH_AS(cuda::deviceInfo(0), s.reason.c_str(), Error);
  std::vector<std::string> names = availableDevices();
  CHECK(std::find(names.begin(), names.end(), "cuda") == names.end());
}

TEST_CASE("cuda: each way loading fails is named: no library, a missing symbol, cuInit's error") {
  cuda::Status missing = cuda::probe("libcuda-absent.so.1");
  CHECK(!missing.available);
  CHECK(missing.reason.starts_with("CUDA not available: dlopen(libcuda-absent.so.1): "));
  // A library that loads but is no driver.
  cuda::Status noSymbols = cuda::probe("libc.so.6");
  CHECK(!noSymbols.available);
  CHECK(noSymbols.reason == "CUDA not available: libc.so.6 has no cuInit");
  std::string stub = stubLibrary();
  if (stub.empty()) {
    MESSAGE("skipped the stub driver: no CUDA toolkit");
    return;
  }
  cuda::Status s = cuda::probe(stub);
  CHECK(!s.available);
  CHECK(s.reason == "CUDA not available: cuInit failed: CUDA_ERROR_STUB_LIBRARY (34)");
}

TEST_CASE("cuda: a truncated driver file is refused before dlopen maps it, and the CPU runs instead") {
  std::string libc = loadedLibrary("libc.so.6");
  CHECK(elfFileProblem(libc).empty());
  fs::path dir = test::scratchDir("cuda", "truncated");
  std::vector<char> whole = *jit::readRegularFile(libc);
  auto cut = [&](const std::string& name, size_t bytes) {
    std::ofstream(dir / name, std::ios::binary).write(whole.data(), std::streamsize(bytes));
    return (dir / name).string();
  };
  // Its headers whole, its segments past the end: dlopen died of SIGBUS on such a file.
  std::string half = cut("libcuda.so.1", whole.size() / 2);
  cuda::Status s = cuda::probe(half);
  CHECK(!s.available);
  CHECK_MESSAGE(s.reason.starts_with("CUDA not available: " + half + " is truncated: program header "), s.reason);
  CHECK_MESSAGE(s.reason.ends_with("but the file has " + std::to_string(whole.size() / 2) + " bytes"), s.reason);
  CHECK(elfFileProblem(cut("header.so", 40)) ==
        (dir / "header.so").string() + " is truncated: its ELF header takes " + std::to_string(sizeof(ElfW(Ehdr))) +
            " bytes, but the file has 40 bytes");
  CHECK(elfFileProblem(cut("table.so", 100)).find("is truncated: its program headers take ") != std::string::npos);
  CHECK(elfFileProblem(cut("text.so", 0)).empty());  // not ELF: dlopen says so itself
  REQUIRE(mkfifo((dir / "fifo.so").c_str(), 0644) == 0);  // dlopen would wait for a writer
  CHECK(cuda::probe((dir / "fifo.so").string()).reason ==
        "CUDA not available: " + (dir / "fifo.so").string() + " is not a regular file");

  // By name: the truncated libcuda.so.1 is the one $LD_LIBRARY_PATH gives dlopen first (the
  // folders after it still find the program's own libraries, as in the GPU check's bundle).
  test::CommandResult r = test::runCommand("env -u TILEJIT_LIBCUDA LD_LIBRARY_PATH=" + dir.string() +
                                           "${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} " + test::binDir() +
                                           "/gemm --m=37 --n=29 --k=23 --device=cuda --check");
  CAPTURE(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("instead of cuda: CUDA not available: " + half + " is truncated") != std::string::npos);
  CHECK(r.output.find("device=cpu") != std::string::npos);
  CHECK(r.output.find("check=pass") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("cuda: driver errors name the call and the error") {
  CHECK(cuda::errorMessage(2, "cuMemAlloc") == "cuda: cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (2)");
  CHECK(cuda::errorMessage(34, "cuInit") == "cuda: cuInit failed: CUDA_ERROR_STUB_LIBRARY (34)");
  CHECK(cuda::errorMessage(700, "cuCtxSynchronize") ==
        "cuda: cuCtxSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS (700)");
  CHECK(cuda::errorMessage(12345, "cuLaunchKernel") == "cuda: cuLaunchKernel failed: CUDA_ERROR_UNKNOWN (12345)");
  CHECK_NOTHROW(cuda::check(cuda::CUDA_SUCCESS, "cuInit"));
  CHECK_THROWS_WITH_AS(cuda::check(218, "cuLinkAddData"), "cuda: cuLinkAddData failed: CUDA_ERROR_INVALID_PTX (218)",
                       Error);
#ifdef TJ_TEST_HAVE_CUDA_H
  CHECK(cuda::errorMessage(::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "cuLaunchKernel") ==
        "cuda: cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (701)");
#endif
}

TEST_CASE("cuda: device names are cuda and cuda:N") {
  CHECK(cuda::deviceIndex("cuda") == 0);
  CHECK(cuda::deviceIndex("cuda:3") == 3);
  CHECK_THROWS_AS(cuda::deviceIndex("cuda:"), Error);
  CHECK_THROWS_AS(cuda::deviceIndex("cuda:x"), Error);
  CHECK(selectDevice("cuda").name() == "cuda");
  if (cuda::status().available && cuda::status().devices == 1) {
    CHECK_THROWS_WITH_AS(selectDevice("cuda:1"), doctest::Contains("no device 'cuda:1'; there is one: cuda:0 ("),
                         Error);
  } else {  // without a driver cuda:1 runs on the CPU, saying why
    CHECK(selectDevice("cuda:1").name() == "cuda:1");
    CHECK(&selectDevice("cuda:1") == &selectDevice("cuda:1"));
  }
  CHECK_THROWS_WITH_AS(selectDevice("cuda:one"), doctest::Contains("'cuda:one' is not 'cuda' or 'cuda:N'"), Error);
}

TEST_CASE("cuda: the layout target comes from the compute capability and the device's limits") {
  cuda::DeviceInfo a100{.name = "A100", .major = 8, .minor = 0, .maxThreadsPerBlock = 1024,
                        .sharedPerBlock = 48 * 1024, .sharedPerBlockOptin = 163 * 1024};
  layout::Target t = cuda::targetFor(a100);
  CHECK(t.name == "sm_80");
  CHECK(t.sharedBytes == 163 * 1024);
  CHECK(std::ranges::any_of(t.matrixUnits, [](const layout::MatrixUnit& u) { return std::ranges::count(u.operandDtypes, DType::f16) > 0; }));
  CHECK(a100.arch() == "sm_80");
  cuda::DeviceInfo rtx{.name = "RTX", .major = 8, .minor = 6, .maxThreadsPerBlock = 1024,
                       .sharedPerBlock = 48 * 1024, .sharedPerBlockOptin = 99 * 1024};
  CHECK(cuda::targetFor(rtx).name == "sm_80");
  CHECK(rtx.arch() == "sm_86");
  cuda::DeviceInfo h200{.name = "H200", .major = 9, .minor = 0, .maxThreadsPerBlock = 1024,
                        .sharedPerBlock = 48 * 1024, .sharedPerBlockOptin = 227 * 1024};
  CHECK(cuda::targetFor(h200).name == "sm_90a");
  CHECK(h200.arch() == "sm_90a");
  CHECK(cuda::targetFor(h200).tma);
  h200.tma = false;  // TILEJIT_CUDA_TMA=0: cp.async, in a cubin of its own
  CHECK(!cuda::targetFor(h200).tma);
  CHECK(cuda::cubinKey(1, h200, cuda::targetFor(h200), {}).options !=
        cuda::cubinKey(1, h200, layout::targetByName("sm_90a"), {}).options);
  h200.archSpecific = false;  // TILEJIT_CUDA_PORTABLE=1
  CHECK(cuda::targetFor(h200).name == "sm_90");
  CHECK(h200.arch() == "sm_90");
  CHECK(cuda::targetFor(h200).sharedBytes == 227 * 1024);
  cuda::DeviceInfo small{.name = "small", .major = 9, .minor = 0, .maxThreadsPerBlock = 64};
  layout::Target s = cuda::targetFor(small);
  CHECK(s.maxWorkgroupThreads == 64);
  CHECK(s.warpsPerProgram == 2);
  cuda::DeviceInfo turing{.name = "T4", .major = 7, .minor = 5};
  CHECK_THROWS_WITH_AS(cuda::targetFor(turing), doctest::Contains("cuda: unsupported: T4 has compute capability 7.5"),
                       Error);
}

TEST_CASE("cuda: a launch without a driver runs on the CPU with the interpreter's results, naming why") {
  const int64_t n = 1001;  // not a multiple of the block
  Tensor a = Tensor::random({n}, 21), b = Tensor::random({n}, 22);
  auto average = [&](const Tensor& out, const std::string& device) {
    return run({cdiv(n, 256)}, [&](Program& p) {
      Index i = p.id(0);
      auto x = p.read(a, {256}).at({i}), y = p.read(b, {256}).at({i});
      p.write(out, {256}).put((x + y) * 0.5, {i});
    }, {.name = "cuda_test_average", .device = device});
  };
  Tensor expected = samples::poisoned({n}), actual = samples::poisoned({n});
  CHECK(average(expected, "interp") == "interp");
  std::string ran, log;
  LaunchWatch watch;
  {
    test::CaptureLog capture;
    ran = average(actual, "cuda");
    log = capture.text();
  }
  const LaunchReport& info = watch.last();
  CHECK(info.device == ran);
  if (cuda::status().available) {
    CHECK_MESSAGE(ran == "cuda", info.fallbackReason);
    CHECK(!info.fellBack());
    CHECK(watch.firstFallback() == nullptr);
  } else {
    const std::string& reason = cuda::status().reason;
    CHECK(ran == hostDevice().name());
    CHECK(info.fallbackReason == reason);
    REQUIRE(watch.firstFallback() != nullptr);
    CHECK(watch.firstFallback()->device == hostDevice().name());
    CHECK_MESSAGE(log.find("kernel 'cuda_test_average' runs on " + hostDevice().name() + " instead of cuda: " +
                           reason) != std::string::npos,
                  log);
    // Once per kernel and reason.
    test::CaptureLog again;
    CHECK(average(actual, "cuda") == hostDevice().name());
    CHECK(again.text().find("cuda_test_average") == std::string::npos);
  }
  std::vector<double> e = expected.values(), got = actual.values();
  REQUIRE(e.size() == got.size());
  size_t differ = 0;
  for (size_t i = 0; i < e.size(); ++i) differ += e[i] != got[i];
  CHECK_MESSAGE(differ == 0, "first: " << got[0] << " vs " << e[0]);
}

// The launch passes each parameter as a pointer to a value of the size the PTX entry
// declares; on a GPU, scalars of every kind arrive whole.
TEST_CASE("cuda: parameters are passed as the PTX entry declares them") {
  auto scalars = kernel("cuda_scalars", [](Program& p, const Tensor& floats, const Tensor& ints, Scalar<f64> a, Tile b,
                                           Scalar<f16> c, Index n) {
    auto put = [&](const Tensor& t, const Tile& v, int64_t at) {
      p.write(t, {1}).put(v.cast(t.dtype()).reshape({1}), {Index(at)});
    };
    put(floats, (Tile(a) - 1.0) * 1099511627776.0, 0);  // 1 only when all of a's f64 bits arrive
    put(floats, b, 1);
    put(floats, c, 2);
    put(ints, p.scalar(n), 0);
  });
  const int64_t wide = std::numeric_limits<int64_t>::min() + 5;
  Tensor floats = samples::poisoned({3}), ints = Tensor::zeros({1}, i64);
  ir::Kernel traced;
  {
    CaptureTraces capture;
    scalars({1}, floats, ints, 1 + 0x1p-40, 0.1, 0.1, wide);
    REQUIRE(capture.kernels().size() == 1);
    traced = capture.kernels()[0];
  }
  for (std::string arch : {"sm_80", "sm_90"}) {
    CAPTURE(arch);
    gpu::KernelFunction f = gpu::lowerWithinCodeBudget(traced, layout::targetByName(arch));
    std::string ptx = ptx::printPtx(f, arch);
    std::string entry = cuda::ptxEntryName(ptx);
    CHECK(!entry.empty());
    size_t open = ptx.find(".entry " + entry + "(");
    REQUIRE(open != std::string::npos);
    std::string list = ptx.substr(open, ptx.find(')', open) - open);
    std::vector<size_t> declared, passed;
    for (size_t at = list.find(".param ."); at != std::string::npos; at = list.find(".param .", at + 1)) {
      std::string type = list.substr(at + 8, 3);
      if (type == "ali") {  // `.param .align 64 .b8 NAME[128]`: a tensor map, its bytes
        size_t open = list.find('[', at);
        declared.push_back(std::stoul(list.substr(open + 1)));
        continue;
      }
      declared.push_back(type == "f32" || type == "b32" || type == "u32" || type == "s32" ? 4 : 8);
    }
    for (const gpu::KParam& p : f.params) passed.push_back(parameterBytes(p));
    CHECK_MESSAGE(declared == passed, list);
  }
  if (!cuda::status().available) return;
  LaunchWatch launches;
  scalars.launch({1}, floats, ints, 1 + 0x1p-40, 0.1, 0.1, wide, {.device = "cuda"});
  CHECK_MESSAGE(!launches.last().fellBack(), launches.last().fallbackReason);
  CHECK(floats.values() == std::vector<double>{1.0, double(0.1f), 0.0999755859375});
  CHECK(ints.values() == std::vector<double>{double(wide)});
}

TEST_CASE("cuda: without a driver Tensor::on(\"cuda\") keeps the tensor on the host and says why") {
  std::string why;
  std::unique_ptr<DeviceCopy> copy = selectDevice("cuda").copyOf(64, why);
  if (cuda::status().available) {
    CHECK(copy != nullptr);
    return;
  }
  CHECK(copy == nullptr);
  CHECK(why == cuda::status().reason);
  test::CaptureLog log;
  Tensor t = Tensor::random({4, 4}, 3);
  t.on("cuda");
  CHECK(t.launchArg().residency == nullptr);
  CHECK(log.text().find("keeps the tensor on the host: " + cuda::status().reason) != std::string::npos);
}

TEST_CASE("cuda: a tensor map is 128 bytes, and sizes TMA cannot address and dtypes it cannot copy are refused before the driver") {
  gpu::KParam map{gpu::KParam::Kind::tensor_map, "t0.map0", DType::f16, 0, 0, {64, 64}, 128};
  CHECK(parameterBytes(map) == 128);
  CHECK(parameterBytes({gpu::KParam::Kind::scalar, "s0", DType::f32}) == 4);
  CHECK(parameterBytes({gpu::KParam::Kind::scalar, "s0", DType::f64}) == 8);
  CHECK(parameterBytes({gpu::KParam::Kind::buffer, "t0", DType::f16}) == 8);
  TensorArg huge{.data = nullptr, .dtype = DType::f16, .shape = {int64_t(1) << 31, 64}, .strides = {64, 1}};
  CHECK_THROWS_WITH_AS(cuda::encodeTensorMap(map, huge, 0x10000),
                       "cuda: unsupported: a tensor map of tensor t0, whose size along dimension 0 is 2147483648 (TMA "
                       "takes 1 to 2^31 - 1: its coordinates are i32)",
                       Unsupported);
  TensorArg empty{.data = nullptr, .dtype = DType::f16, .shape = {64, 0}, .strides = {64, 1}};
  CHECK_THROWS_WITH_AS(cuda::encodeTensorMap(map, empty, 0x10000), doctest::Contains("along dimension 1 is 0"),
                       Unsupported);
  gpu::KParam wide{gpu::KParam::Kind::tensor_map, "t0.map0", DType::i64, 0, 0, {8, 8}, 0};
  TensorArg ints{.data = nullptr, .dtype = DType::i64, .shape = {8, 8}, .strides = {8, 1}};
  CHECK_THROWS_AS(cuda::encodeTensorMap(wide, ints, 0x10000), InternalError);
  TensorArg flat{.data = nullptr, .dtype = DType::f16, .shape = {4096}, .strides = {1}};
  CHECK_THROWS_AS(cuda::encodeTensorMap(map, flat, 0x10000), InternalError);  // a box of another rank
  TensorArg columns{.data = nullptr, .dtype = DType::f16, .shape = {64, 64}, .strides = {1, 64}};
  CHECK_THROWS_AS(cuda::encodeTensorMap(map, columns, 0x10000), InternalError);  // TMA's innermost is contiguous
  // A driver before CUDA 12 has no cuTensorMapEncodeTiled: launches needing it are refused.
  CHECK_THROWS_WITH_AS(cuda::optionalFunction(cuda::PFN_cuTensorMapEncodeTiled{}, "cuTensorMapEncodeTiled"),
                       doctest::Contains("cuda: unsupported: the driver (CUDA "), Unsupported);
  CHECK_THROWS_WITH_AS(cuda::optionalFunction(cuda::PFN_cuTensorMapEncodeTiled{}, "cuTensorMapEncodeTiled"),
                       doctest::Contains(") has no cuTensorMapEncodeTiled"), Unsupported);
  if (!cuda::status().available) {
    TensorArg fine{.data = nullptr, .dtype = DType::f16, .shape = {64, 64}, .strides = {64, 1}};
    CHECK_THROWS_WITH_AS(cuda::encodeTensorMap(map, fine, 0x10000), cuda::status().reason.c_str(), Unsupported);
  }
}

// With a driver: its own cuTensorMapEncodeTiled takes the device's arguments for a tensor in
// device memory, and refuses rows 200 bytes apart, naming the tensor.
TEST_CASE("cuda: a driver encodes the tensor map of device memory, and one it refuses names the tensor") {
  if (!cuda::status().available) {
    MESSAGE("skipped: " << cuda::status().reason);
    return;
  }
  if (cuda::status().driverVersion < 12000 || cuda::deviceInfo(0).major < 9) {
    MESSAGE("skipped: TMA needs CUDA 12 and compute capability 9.0");
    return;
  }
  cuda::check(cuda::functions().cuCtxSetCurrent(cuda::primaryContext(cuda::deviceInfo(0).device)), "cuCtxSetCurrent");
  cuda::DeviceMemory memory(3 * 64 * 128 * 2);
  gpu::KParam map{gpu::KParam::Kind::tensor_map, "t0.map0", DType::f16, 0, 0, {2, 16, 64}, 128};
  TensorArg t{.data = nullptr, .dtype = DType::f16, .shape = {3, 64, 128}, .strides = {64 * 128, 128, 1}};
  cuda::CUtensorMap encoded = cuda::encodeTensorMap(map, t, memory.address());
  CHECK(std::ranges::any_of(encoded.opaque, [](uint64_t word) { return word != 0; }));
  gpu::KParam bytes{gpu::KParam::Kind::tensor_map, "t0.map0", DType::f8e4m3, 0, 0, {8, 64}, 64};
  TensorArg f8{.data = nullptr, .dtype = DType::f8e4m3, .shape = {64, 64}, .strides = {64, 1}};
  CHECK_NOTHROW(cuda::encodeTensorMap(bytes, f8, memory.address()));
  t.strides = {64 * 100, 100, 1};
  CHECK_THROWS_WITH_AS(cuda::encodeTensorMap(map, t, memory.address()),
                       doctest::Contains("cuTensorMapEncodeTiled failed: CUDA_ERROR_INVALID_VALUE (1) for tensor t0 (f16, "
                                         "sizes [3, 64, 128], strides [6400, 100, 1] elements"),
                       Unsupported);
}

TEST_CASE("cuda: a kDLCUDA tensor in memory the driver allocated is used in place on the GPU") {
  if (!cuda::status().available) {
    MESSAGE("skipped: " << cuda::status().reason);  // tests/fake_cuda covers the path without a GPU
    return;
  }
  const int64_t n = 1001;
  Tensor a = Tensor::random({n}, 23), expected = samples::poisoned({n}), poison = samples::poisoned({n});
  auto scale = [&](const Tensor& x, const Tensor& out, const std::string& device) {
    return run({cdiv(n, 256)}, [&](Program& p) {
      p.write(out, {256}).put(p.read(x, {256}).at({p.id(0)}) * 3.0 - 1.0, {p.id(0)});
    }, {.name = "cuda_test_dlpack_scale", .device = device});
  };
  CHECK(scale(a, expected, "interp") == "interp");
  cuda::check(cuda::functions().cuCtxSetCurrent(cuda::primaryContext(cuda::deviceInfo(0).device)), "cuCtxSetCurrent");
  const size_t bytes = size_t(n) * sizeof(float);
  cuda::DeviceMemory in(bytes), out(bytes);  // as another library holds them
  in.upload(a.data(), bytes);
  out.upload(poison.data(), bytes);
  auto at = [](const cuda::DeviceMemory& m) { return reinterpret_cast<void*>(uintptr_t(m.address())); };
  test::DLPackProducer inProducer(at(in), {kDLFloat, 32, 1}, {n}, {}, 0, {kDLCUDA, 0}),
      outProducer(at(out), {kDLFloat, 32, 1}, {n}, {}, 0, {kDLCUDA, 0});
  {
    Tensor x = Tensor::fromDLPack(inProducer.versioned()), y = Tensor::fromDLPack(outProducer.versioned());
    TransferCounts before = transferCounts();
    CHECK(scale(x, y, "cuda") == "cuda");
    CHECK(transferCounts().uploads == before.uploads);  // computed where the producer keeps them
  }
  CHECK(outProducer.deleted() == 1);
  std::vector<float> got(static_cast<size_t>(n));
  out.download(got.data(), bytes);
  CHECK(std::vector<double>(got.begin(), got.end()) == expected.values());
}

TEST_CASE("cuda: the cubin cache's encoding round-trips and rejects damage") {
  DriverBinary b{.params = {{gpu::KParam::Kind::buffer, "", DType::bf16, 2, 0},
                                 {gpu::KParam::Kind::scalar, "", DType::f64, 1, 0},
                                 {gpu::KParam::Kind::tensor_map, "", DType::f16, 2, 0, {2, 64, 32}, 64}},
                      .prints = {{"rows", DType::i32, {4}, 0}},
                      .faultParam = 1,
                      .workgroupSize = 256,
                      .sharedBytes = 70000,
                      .entry = "tj_gemm",
                      .image = {'\x7f', 'E', 'L', 'F', '\0', '\1'}};
  std::vector<char> bytes = cuda::encodeCubinBinary(b);
  DriverBinary back = cuda::decodeCubinBinary(bytes);
  CHECK(back.workgroupSize == 256);
  CHECK(back.sharedBytes == 70000);
  CHECK(back.faultParam == 1);
  CHECK(back.entry == "tj_gemm");
  CHECK(back.image == b.image);
  REQUIRE(back.params.size() == 3);
  CHECK(back.params[0].dtype == DType::bf16);
  CHECK(back.params[0].number == 2);
  CHECK(back.params[1].kind == gpu::KParam::Kind::scalar);
  CHECK(back.params == b.params);
  CHECK(back.params[2].box == std::vector<int64_t>{2, 64, 32});
  CHECK(back.params[2].swizzle == 64);
  for (auto damage : {+[](DriverBinary& c) { c.params[0].box = {4}; },  // a box on a buffer
                      +[](DriverBinary& c) { c.params[2].swizzle = 48; },
                      +[](DriverBinary& c) { c.params[2].box = {}; },
                      +[](DriverBinary& c) { c.params[2].box[1] = 0; }}) {
    DriverBinary bad = b;
    damage(bad);
    CHECK_THROWS_WITH_AS(cuda::decodeCubinBinary(cuda::encodeCubinBinary(bad)), doctest::Contains("a bad parameter"),
                         jit::CorruptCacheEntry);
  }
  REQUIRE(back.prints.size() == 1);
  CHECK(back.prints[0].label == "rows");
  CHECK(back.prints[0].shape == std::vector<int64_t>{4});
  std::vector<char> longer = bytes;
  longer.push_back(0);
  CHECK_THROWS_WITH_AS(cuda::decodeCubinBinary(longer), doctest::Contains("bytes after it"), jit::CorruptCacheEntry);
  bytes.pop_back();
  CHECK_THROWS_WITH_AS(cuda::decodeCubinBinary(bytes), "the CUDA kernel is truncated", jit::CorruptCacheEntry);
  bytes[0] = 9;
  CHECK_THROWS_WITH_AS(cuda::decodeCubinBinary(bytes), doctest::Contains("format 9"), jit::CorruptCacheEntry);
}

}  // namespace tj::cudatest
