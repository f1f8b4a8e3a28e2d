// The CUDA device's launch path on a machine without a GPU, through tests/fake_cuda's stand-in
// driver (main sets TILEJIT_LIBCUDA to it): each launch's kernel is run by the kernel-IR
// simulator on the device memory and parameters the launch passed, after checking that the
// PTX the device linked is the lowering's; so these tests check the device's own work (its
// parameters, memory bindings, device-resident tensors and cubin cache) against the
// interpreter, everything but the GPU itself.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "devices/cuda/cubin_cache.hpp"
#include "devices/cuda/cuda_device.hpp"
#include "devices/cuda/cuda_runtime.hpp"
#include "dsl/tilejit.hpp"
#include "ir/fault_injection.hpp"
#include "ir/passes.hpp"
#include "jit/cache_file.hpp"
#include "lower/gpu/spread_over_warps.hpp"
#include "lower/ptx/nvptx.hpp"
#include "samples/harness.hpp"
#include "samples/kernels.hpp"
#include "tests/dlpack_producer.hpp"
#include "tests/fake_cuda/fake_cuda.hpp"
#include "tests/fake_driver.hpp"
#include "tests/kernel_ir_simulator.hpp"
#include "tests/support.hpp"

namespace tj::fakecuda {

namespace {

namespace fs = std::filesystem;

using Counts = TjFakeCudaCounts;

// The fake driver's own entry points, from the library the runtime loaded.
void* fakeSymbol(const char* name) {
  static void* library = dlopen(std::getenv("TILEJIT_LIBCUDA"), RTLD_NOW | RTLD_LOCAL);
  void* symbol = library ? dlsym(library, name) : nullptr;
  if (!symbol) throw Error(std::string("the fake driver has no ") + name);
  return symbol;
}

Counts counts() { return reinterpret_cast<Counts (*)()>(fakeSymbol("tjFakeCudaCounts"))(); }
TjFakeStreams streams() { return reinterpret_cast<TjFakeStreams (*)()>(fakeSymbol("tjFakeCudaStreams"))(); }

// What the next launches run: the kernel as devices receive it and its tensor arguments.
struct Launching {
  ir::Kernel kernel;
  std::vector<TensorArg> tensors;
  std::string failure;  // why the last launch did not match, if it did not
  std::string ptx;      // what the last launch ran
  int64_t workgroups = 0;  // how many workgroups it ran
  int64_t sharedBytes = 0;  // the workgroup memory its kernel takes
  bool refuse = false;  // fail the launch, as a driver may (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
};
Launching gLaunching;

// Which of the launch's tensors allow 16-byte accesses, as the device decides it.
std::vector<bool> vectorFacts(const layout::Target& target) {
  std::vector<bool> facts;
  for (const TensorArg& t : gLaunching.tensors)
    facts.push_back(gpu::allowsVectorAccess(0, t.dtype, t.shape, t.strides, target.vectorBytes));
  return facts;
}

// A parameter's bytes as a word: a buffer's address, a size, stride or scalar (a float's 4
// bytes in the low half).
uint64_t word(const TjFakeCudaParam& param) {
  uint64_t value = 0;
  std::memcpy(&value, param.bytes, std::min(param.size, sizeof value));
  return value;
}

// Throws unless `param` holds the fake's record of tensor map `map` for tensor `t` at
// `address`, as the device encodes it: t's sizes and byte strides and map's box in the
// driver's order (innermost first), element strides 1, no interleave, map's swizzle, 128-byte
// L2 promotion, zeros outside the tensor.
void checkTensorMap(const gpu::KParam& map, const TjFakeCudaParam& param, const TensorArg& t, uint64_t address) {
  std::optional<TjFakeTensorMap> m = decodeFakeTensorMap(param.bytes, param.size);
  if (!m) throw Error("tensor map " + map.name + " holds no record of the fake's cuTensorMapEncodeTiled");
  auto wrong = [&](const std::string& what) { throw Error("tensor map " + map.name + ": " + what + " is not the tensor's"); };
  const size_t rank = t.shape.size(), bytes = size_t(dtypeBytes(t.dtype));
  const int type = t.dtype == DType::f16 ? cuda::CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                   : t.dtype == DType::bf16 ? cuda::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                   : t.dtype == DType::f32  ? cuda::CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                            : cuda::CU_TENSOR_MAP_DATA_TYPE_UINT8;
  if (m->dataType != type || bytes != size_t(dtypeBytes(map.dtype))) wrong("the data type");
  if (m->rank != rank || map.box.size() != rank) wrong("the rank");
  if (m->address != address) wrong("the address");
  for (size_t i = 0; i < rank; ++i) {
    size_t d = rank - 1 - i;
    if (m->dims[i] != uint64_t(t.shape[d])) wrong("size " + std::to_string(d));
    if (i > 0 && m->strides[i - 1] != uint64_t(t.strides[d]) * bytes) wrong("stride " + std::to_string(d));
    if (m->box[i] != map.box[d]) wrong("box dimension " + std::to_string(d));
    if (m->elementStrides[i] != 1) wrong("element stride " + std::to_string(d));
  }
  const int swizzle = map.swizzle == 128 ? cuda::CU_TENSOR_MAP_SWIZZLE_128B
                      : map.swizzle == 64 ? cuda::CU_TENSOR_MAP_SWIZZLE_64B
                      : map.swizzle == 32 ? cuda::CU_TENSOR_MAP_SWIZZLE_32B
                                          : cuda::CU_TENSOR_MAP_SWIZZLE_NONE;
  if (m->swizzle != swizzle) wrong("the swizzle");
  if (m->interleave != cuda::CU_TENSOR_MAP_INTERLEAVE_NONE || m->oobFill != cuda::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE ||
      m->l2Promotion != cuda::CU_TENSOR_MAP_L2_PROMOTION_L2_128B)
    wrong("the interleave, fill or L2 promotion");
}

// Each parameter's bytes against the size the device gives it, and each tensor map against
// its tensor (the address the buffer parameter of its tensor got, where there is one): the
// tensors' addresses, from buffer parameters or else tensor maps.
std::vector<uint64_t> checkParameters(const std::vector<gpu::KParam>& params, const TjFakeCudaParam* passed,
                                      unsigned count) {
  if (count != params.size()) throw Error("the parameter count");
  std::vector<uint64_t> addresses(gLaunching.tensors.size(), 0);
  for (size_t p = 0; p < params.size(); ++p) {
    if (passed[p].size != parameterBytes(params[p]))
      throw Error("parameter " + params[p].name + " arrived as " + std::to_string(passed[p].size) + " bytes");
    if (params[p].kind == gpu::KParam::Kind::buffer && params[p].number < addresses.size())
      addresses[params[p].number] = word(passed[p]);
  }
  for (size_t p = 0; p < params.size(); ++p) {
    if (params[p].kind != gpu::KParam::Kind::tensor_map) continue;
    size_t t = params[p].number;
    std::optional<TjFakeTensorMap> m = decodeFakeTensorMap(passed[p].bytes, passed[p].size);
    if (!addresses.at(t) && m) addresses[t] = m->address;  // a tensor only TMA reads
    checkTensorMap(params[p], passed[p], gLaunching.tensors.at(t), addresses[t]);
  }
  return addresses;
}

// The fake driver's kernel: lowers the expected kernel as the device does (the same target
// and 16-byte facts), checks that its PTX is what the device linked, and simulates it on the
// launch's memory and parameters.
int simulateLaunch(const char* ptx, const unsigned grid[3], unsigned block, unsigned sharedBytes,
                   const TjFakeCudaParam* params, unsigned count) {
  if (gLaunching.refuse) return 701;
  try {
    layout::Target target = cuda::targetFor(cuda::deviceInfo(0));
    gpu::KernelLoweringOptions options;
    options.vectorTensors = vectorFacts(target);
    gpu::KernelFunction f = gpu::lowerWithinCodeBudget(gLaunching.kernel, target, options);
    gLaunching.ptx = ptx;
    gLaunching.workgroups = int64_t(grid[0]) * grid[1] * grid[2];
    gLaunching.sharedBytes = f.sharedBytes();
    if (ptx::printPtx(f, "sm_90a") != ptx) throw Error("the PTX launched is not the kernel's lowering");
    if (block != unsigned(f.workgroupSize)) throw Error("threads per block");
    if (f.sharedBytes() > ptx::kStaticSharedBytes && sharedBytes < f.sharedBytes())
      throw Error("launched with " + std::to_string(sharedBytes) + " bytes of dynamic shared memory");
    std::vector<uint64_t> addresses = checkParameters(f.params, params, count);
    gpu::simulateLaunch(f, gLaunching.tensors, addresses, [&](size_t p) { return word(params[p]); },
                        {grid[0], grid[1], grid[2]});
    return 0;
  } catch (const std::exception& e) {
    gLaunching.failure = e.what();
    return 719;  // CUDA_ERROR_LAUNCH_FAILED
  }
}

// out = (a + b) * 0.5 over [kRows, kCols] matrices (not multiples of the blocks), b a
// transposed view, so that strides reach the kernel too.
constexpr int64_t kRows = 13, kCols = 77;
const std::vector<int64_t> kGrid = {cdiv(kRows, 4)};

const auto& average() {
  static auto k = kernel("fake_cuda_average", [](Program& p, const Tensor& a, const Tensor& b, const Tensor& out) {
    Index i = p.id(0);
    Tile x = p.read(a, {4, 128}).at({i, 0}), y = p.read(b, {4, 128}).at({i, 0});
    p.write(out, {4, 128}).put((x + y) * 0.5, {i, 0});
  });
  return k;
}

struct Inputs {
  Tensor a = Tensor::random({kRows, kCols}, 31), bStorage = Tensor::random({kCols, kRows}, 32);
  Tensor b = bStorage.transpose();
};

// Makes the fake driver's launches run simulateLaunch.
void setKernel(TjFakeCudaKernel kernel) {
  reinterpret_cast<void (*)(TjFakeCudaKernel)>(fakeSymbol("tjFakeCudaSetKernel"))(kernel);
}
void simulateLaunches() { setKernel(simulateLaunch); }

// Makes the fake driver's launches run the average of a and b into out, as devices receive it.
void expectAverage(const Tensor& a, const Tensor& b, const Tensor& out) {
  CaptureTraces capture;
  average()(kGrid, a, b, out);
  REQUIRE(capture.kernels().size() == 1);
  gLaunching = {capture.kernels()[0], {a.launchArg(), b.launchArg(), out.launchArg()}, ""};
  simulateLaunches();
}

std::vector<double> expectedAverage(const Inputs& in) {
  Tensor out = samples::poisoned({kRows, kCols});
  average().launch(kGrid, in.a, in.b, out, {.device = "interp"});
  return out.values();
}

LaunchReport gAverageReport;  // what the last launchAverage did

// Launches the average on `device` directly (each CudaDevice object is a process's worth of
// state: its own modules, the disk cache shared); the result, or a failure naming why.
std::vector<double> launchAverage(cuda::CudaDevice& device, const Inputs& in, const Tensor& out) {
  expectAverage(in.a, in.b, out);
  gAverageReport = device.launch(gLaunching.kernel, {gLaunching.tensors, kGrid});
  CHECK_MESSAGE(!gAverageReport.fellBack(), gAverageReport.fallbackReason, " / ", gLaunching.failure);
  CHECK(gAverageReport.target == "sm_90a");
  return out.values();
}

size_t cubinFiles(const fs::path& dir) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().extension() == ".cubin";
  return n;
}

}  // namespace

TEST_CASE("fake cuda: the tuning file names the GPU's model and target, so another GPU does not reuse it") {
  test::ScopedEnv on("TILEJIT_CACHE", nullptr), at("TILEJIT_CACHE_DIR", "/some/dir");
  std::string stem = tuningFilePath("cuda").stem().string();
  CHECK(stem.rfind("cuda-", 0) == 0);
  CHECK(stem.find("fake") != std::string::npos);
  CHECK(stem.find("sm_90a") != std::string::npos);
}

TEST_CASE("fake cuda: the driver is the fake, an H200 at compute capability 9.0") {
  REQUIRE_MESSAGE(cuda::status().available, cuda::status().reason);
  cuda::DeviceInfo info = cuda::deviceInfo(0);
  CHECK(info.multiprocessors == 132);
  CHECK(info.arch() == "sm_90a");
  CHECK(info.name.find("fake") != std::string::npos);
}

TEST_CASE("fake cuda: a device name the driver does not end with a NUL is read within its buffer") {
  auto unterminated = reinterpret_cast<void (*)(bool)>(fakeSymbol("tjFakeCudaSetNameUnterminated"));
  unterminated(true);
  std::string name = cuda::deviceInfo(0).name;
  unterminated(false);
  CHECK(name == std::string(256, 'X'));
  CHECK(cuda::deviceInfo(0).name == "NVIDIA H200 (tilejit fake driver)");
}

TEST_CASE("fake cuda: cuda:N past the driver's devices is an Error naming the one there is") {
  CHECK(&selectDevice("cuda:0") == &selectDevice("cuda"));  // one device, one context
  CHECK(selectDevice("cuda:0").name() == "cuda");
  CHECK_THROWS_WITH_AS(selectDevice("cuda:1"),
                       "device: no device 'cuda:1'; there is one: cuda:0 (NVIDIA H200 (tilejit fake driver))", Error);
}

TEST_CASE("fake cuda: a launch passes the kernel its memory and parameters: the interpreter's results") {
  test::ScopedEnv cache("TILEJIT_CACHE", "0");
  Inputs in;
  cuda::CudaDevice device("cuda");
  Tensor out = samples::poisoned({kRows, kCols});
  Counts before = counts();
  CHECK(launchAverage(device, in, out) == expectedAverage(in));
  CHECK(gAverageReport.cache == jit::CacheSource::compiled);
  // The fake's events time the simulated kernel on the host: a time, and not a made-up one.
  CHECK(gAverageReport.kernelMs > 0);
  CHECK(gAverageReport.kernelMs < 60000);
  Counts after = counts();
  CHECK(after.launches == before.launches + 1);
  CHECK(after.links == before.links + 1);
  CHECK(after.uploads == before.uploads + 3);   // each tensor, the poisoned output too
  CHECK(after.downloads == before.downloads + 1);  // the output only
  // Through run(), the device the samples use.
  Tensor again = samples::poisoned({kRows, kCols});
  expectAverage(in.a, in.b, again);
  CHECK(average().launch(kGrid, in.a, in.b, again, {.device = "cuda"}) == "cuda");
  CHECK(again.values() == expectedAverage(in));
}

TEST_CASE("fake cuda: a second process loads the cubin from disk, without LLVM or the driver's linker") {
  test::ScopedEnv cache("TILEJIT_CACHE_DIR", test::scratchDir("fake_cuda", "cubins").c_str());
  fs::path dir = std::getenv("TILEJIT_CACHE_DIR");
  Inputs in;
  const std::vector<double> expected = expectedAverage(in);
  cuda::CudaDevice first("cuda"), second("cuda");
  Counts start = counts();
  CHECK(launchAverage(first, in, samples::poisoned({kRows, kCols})) == expected);
  CHECK(gAverageReport.cache == jit::CacheSource::compiled);
  CHECK(cubinFiles(dir) == 1);
  CHECK(launchAverage(first, in, samples::poisoned({kRows, kCols})) == expected);
  CHECK(gAverageReport.cache == jit::CacheSource::memory);
  CHECK(launchAverage(second, in, samples::poisoned({kRows, kCols})) == expected);
  CHECK(gAverageReport.cache == jit::CacheSource::disk);
  Counts end = counts();
  CHECK(end.links == start.links + 1);
  CHECK(end.moduleLoads == start.moduleLoads + 2);
  CHECK(end.launches == start.launches + 3);
  CHECK(cubinFiles(dir) == 1);
}

TEST_CASE("fake cuda: a torn cubin entry, or one the driver rejects, is reported, rebuilt and replaced") {
  test::ScopedEnv cache("TILEJIT_CACHE_DIR", test::scratchDir("fake_cuda", "damaged").c_str());
  fs::path dir = std::getenv("TILEJIT_CACHE_DIR");
  Inputs in;
  const std::vector<double> expected = expectedAverage(in);
  {
    cuda::CudaDevice writer("cuda");
    CHECK(launchAverage(writer, in, samples::poisoned({kRows, kCols})) == expected);
  }
  REQUIRE(cubinFiles(dir) == 1);
  fs::path entry = fs::directory_iterator(dir)->path();
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".cubin") entry = e.path();
  std::vector<char> bytes = *jit::readRegularFile(entry);
  cuda::DeviceInfo info = cuda::deviceInfo(0);
  layout::Target target = cuda::targetFor(info);
  jit::ArtifactStore store(dir);
  jit::ArtifactKey key = cuda::cubinKey(ir::semanticHash(gLaunching.kernel), info, target, vectorFacts(target));
  REQUIRE(store.path(key) == entry);
  DriverBinary good = cuda::decodeCubinBinary(*store.read(key));

  auto relaunch = [&](const char* warning) {
    test::CaptureLog log;
    cuda::CudaDevice reader("cuda");
    CHECK(launchAverage(reader, in, samples::poisoned({kRows, kCols})) == expected);
    CHECK(gAverageReport.cache == jit::CacheSource::compiled);
    CHECK_MESSAGE(log.text().find(warning) != std::string::npos, log.text());
    cuda::CudaDevice next("cuda");  // the entry was replaced by a good one
    CHECK(launchAverage(next, in, samples::poisoned({kRows, kCols})) == expected);
    CHECK(gAverageReport.cache == jit::CacheSource::disk);
  };
  SUBCASE("torn") {
    bytes.resize(bytes.size() - 7);
    std::ofstream(entry, std::ios::binary | std::ios::trunc).write(bytes.data(), std::streamsize(bytes.size()));
    relaunch("unusable");
  }
  SUBCASE("whole, but not a cubin the driver loads") {
    DriverBinary bad = good;
    std::string text = "not a cubin";
    bad.image.assign(text.c_str(), text.c_str() + text.size() + 1);
    REQUIRE(store.write(key, cuda::encodeCubinBinary(bad)));
    relaunch("is unusable (cuda: ");
  }
}

TEST_CASE("fake cuda: Tensor::on(\"cuda\") keeps tensors in device memory across launches") {
  Inputs in;
  const std::vector<double> expected = expectedAverage(in);
  Tensor out = samples::poisoned({kRows, kCols});
  Tensor a = in.a.on("cuda"), b = in.b.on("cuda"), o = out.on("cuda");
  expectAverage(a, b, o);
  Counts start = counts();
  for (int launch = 0; launch < 3; ++launch)
    CHECK(average().launch(kGrid, a, b, o, {.device = "cuda"}) == "cuda");
  Counts afterLaunches = counts();
  CHECK(afterLaunches.uploads == start.uploads);  // all three were in device memory already
  CHECK(afterLaunches.downloads == start.downloads);
  CHECK(afterLaunches.allocations == start.allocations);  // no temporaries
  CHECK(out.values() == expected);  // the host reads the device's result once
  CHECK(out.values() == expected);
  CHECK(counts().downloads == start.downloads + 1);

  // A host write to an input makes its device copy stale: the next launch uploads it.
  static_cast<float*>(in.a.data())[5] = 1000.0f;
  CHECK(average().launch(kGrid, a, b, o, {.device = "cuda"}) == "cuda");
  CHECK(counts().uploads == afterLaunches.uploads + 1);
  std::vector<double> changed = out.values();
  CHECK(changed[5] == double((1000.0f + float(in.bStorage.values()[5 * kRows])) * 0.5f));

  // The CPU reads and writes the host bytes: it downloads the inputs' copies only where newer.
  Tensor onCpu = samples::poisoned({kRows, kCols});
  CHECK(average().launch(kGrid, a, b, onCpu, {.device = "cpu"}) == "cpu");
  CHECK(onCpu.values() == changed);
}

// Device memory another library allocated (as PyTorch's allocator holds it), with `host`'s bytes.
struct ProducerMemory {
  explicit ProducerMemory(const Tensor& host) : memory(size_t(host.numel()) * 4) {
    memory.upload(host.data(), memory.size());
  }
  void* address() const { return reinterpret_cast<void*>(uintptr_t(memory.address())); }
  std::vector<double> values() const {
    std::vector<float> bytes(memory.size() / 4);
    memory.download(bytes.data(), memory.size());  // throws once the memory was freed
    return {bytes.begin(), bytes.end()};
  }
  cuda::DeviceMemory memory;
};

TEST_CASE("fake cuda: a kDLCUDA tensor is used in its producer's device memory, with no copy, and stays there") {
  Inputs in;
  const std::vector<double> expected = expectedAverage(in);
  ProducerMemory aMemory(in.a), bMemory(in.bStorage), outMemory(samples::poisoned({kRows, kCols})),
      cpuOutMemory(samples::poisoned({kRows, kCols}));
  constexpr DLDataType f32Code{kDLFloat, 32, 1};
  constexpr DLDevice gpu{kDLCUDA, 0};
  test::DLPackProducer aProducer(aMemory.address(), f32Code, {kRows, kCols}, {}, 0, gpu),
      bProducer(bMemory.address(), f32Code, {kRows, kCols}, {1, kRows}, 0, gpu),  // a transposed view
      outProducer(outMemory.address(), f32Code, {kRows, kCols}, {kCols, 1}, 0, gpu),
      cpuOutProducer(cpuOutMemory.address(), f32Code, {kRows, kCols}, {}, 0, gpu);
  {
    Tensor a = Tensor::fromDLPack(aProducer.versioned()), b = Tensor::fromDLPack(bProducer.legacy()),
           out = Tensor::fromDLPack(outProducer.versioned());
    expectAverage(a, b, out);
    Counts start = counts();
    CHECK(average().launch(kGrid, a, b, out, {.device = "cuda"}) == "cuda");
    CHECK(counts().uploads == start.uploads);  // the kernel ran on the producer's memory
    CHECK(counts().allocations == start.allocations);
    CHECK(counts().downloads == start.downloads);
    CHECK(outMemory.values() == expected);
    DLManagedTensorVersioned* exported = out.toDLPack();  // the same memory, back out
    CHECK(exported->dl_tensor.data == outMemory.address());
    CHECK(exported->dl_tensor.device.device_type == kDLCUDA);
    CHECK(exported->dl_tensor.device.device_id == 0);
    CHECK(out.exportDevice() == std::pair{int32_t(kDLCUDA), 0});
    exported->deleter(exported);
    CHECK(out.values() == expected);  // the host reads a download

    // The CPU computes on host bytes, and its result reaches the producer's memory.
    Tensor cpuOut = Tensor::fromDLPack(cpuOutProducer.versioned());
    CHECK(average().launch(kGrid, a, b, cpuOut, {.device = "cpu"}) == "cpu");
    CHECK(cpuOutMemory.values() == expected);
    cpuOut.setItem(0, 5.0);
    CHECK(cpuOutMemory.values()[0] == 5.0);
    if (test::vulkanAvailable())
      CHECK(test::errorOf([&] { out.on("vulkan"); }).find("the tensor's values live in cuda:0's memory, which another "
                                                          "library owns (a DLPack import)") != std::string::npos);
    CHECK(aProducer.deleted() == 0);
  }
  CHECK(aProducer.deleted() == 1);  // each deleter once, and the memory still the producer's
  CHECK(bProducer.deleted() == 1);
  CHECK(outProducer.deleted() == 1);
  CHECK(outMemory.values() == expected);
}

// Whether every call of the last launch (its uploads, kernel, events, wait and downloads) was
// on `stream`.
void checkStreams(const void* stream) {
  std::string off = callsOffStream(streams(), stream);
  CHECK_MESSAGE(off.empty(), "not on the stream: ", off);
}

TEST_CASE("fake cuda: a kDLCUDA tensor outside the driver's memory, or past its allocation, is an Error") {
  std::vector<float> host(16, 1.0f);
  ProducerMemory device(Tensor::random({4, 4}, 34));
  constexpr DLDataType f32Code{kDLFloat, 32, 1};
  struct Case {
    const char* what;
    void* data;
    std::vector<int64_t> shape;
    std::string expected;
  };
  for (const Case& c : {Case{"host memory", host.data(), {4, 4}, "are not memory the driver knows ("
                                                                  "cuda: cuPointerGetAttribute failed: CUDA_ERROR_INVALID_VALUE"},
                        Case{"past the allocation", device.address(), {5, 4}, "reach past their allocation's 64 bytes"}}) {
    CAPTURE(std::string(c.what));
    test::DLPackProducer producer(c.data, f32Code, c.shape, {}, 0, {kDLCUDA, 0});
    DLManagedTensorVersioned* m = producer.versioned();
    std::string error = test::errorOf([&] { Tensor::fromDLPack(m); });
    CHECK_MESSAGE(error.find("Tensor::fromDLPack: the tensor is in cuda:0's memory, which tilejit cannot use here: "
                             "cuda: the ") != std::string::npos,
                  error);
    CHECK_MESSAGE(error.find(c.expected) != std::string::npos, error);
    CHECK(producer.deleted() == 0);
    m->deleter(m);
  }
}

TEST_CASE("fake cuda: a tensor's exported device copy stays until the export's deleter runs") {
  Tensor t = Tensor::random({kRows, kCols}, 33).on("cuda");
  DLManagedTensorVersioned* exported = t.toDLPack();
  CHECK(exported->dl_tensor.device.device_type == kDLCUDA);
  if (test::vulkanAvailable()) {
    std::string error = test::errorOf([&] { t.on("vulkan"); });
    CHECK_MESSAGE(error.find("Tensor::on: the tensor's copy on cuda:0 is handed out through DLPack (1 export not yet "
                             "released by its deleter), so it cannot move to vulkan") != std::string::npos,
                  error);
  }
  exported->deleter(exported);
  if (test::vulkanAvailable()) CHECK(t.on("vulkan").exportDevice().first == kDLCPU);
}

TEST_CASE("fake cuda: a launch is ordered on the caller's stream: its copies, kernel, events and wait") {
  Inputs in;
  const std::vector<double> expected = expectedAverage(in);
  void* stream = reinterpret_cast<void*>(uintptr_t{0x5150});
  void* scoped = reinterpret_cast<void*>(uintptr_t{0x6160});
  Tensor out = samples::poisoned({kRows, kCols});
  expectAverage(in.a, in.b, out);
  CHECK(average().launch(kGrid, in.a, in.b, out, {.device = "cuda", .stream = stream}) == "cuda");
  checkStreams(stream);
  CHECK(out.values() == expected);
  {
    StreamScope scope(scoped);  // a framework's current stream, for launches that name none
    CHECK(average().launch(kGrid, in.a, in.b, out, {.device = "cuda"}) == "cuda");
    checkStreams(scoped);
    CHECK(average().launch(kGrid, in.a, in.b, out, {.device = "cuda", .stream = stream}) == "cuda");
    checkStreams(stream);  // the launch's own stream first
  }
  CHECK(average().launch(kGrid, in.a, in.b, out, {.device = "cuda"}) == "cuda");
  checkStreams(nullptr);  // the legacy default stream, with synchronous copies
  CHECK(out.values() == expected);
}

TEST_CASE("fake cuda: a launch the driver refuses runs on the CPU, on the newest bytes of resident tensors") {
  Inputs in;
  Tensor mean = samples::poisoned({kRows, kCols}), again = samples::poisoned({kRows, kCols});
  Tensor a = in.a.on("cuda"), b = in.b.on("cuda"), m = mean.on("cuda"), m2 = again.on("cuda");
  expectAverage(a, b, m);
  CHECK(average().launch(kGrid, a, b, m, {.device = "cuda"}) == "cuda");  // m is newer on the device
  expectAverage(m, a, m2);
  gLaunching.refuse = true;
  {
    test::CaptureLog log;
    CHECK(average().launch(kGrid, m, a, m2, {.device = "cuda"}) == "cpu");
    CHECK_MESSAGE(log.text().find("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (701)") != std::string::npos, log.text());
  }
  std::vector<double> av = in.a.values(), mv = expectedAverage(in), expected(mv.size());
  for (size_t i = 0; i < mv.size(); ++i) expected[i] = double((float(mv[i]) + float(av[i])) * 0.5f);
  CHECK(again.values() == expected);
  // The CPU wrote m2 on the host: a launch on cuda reading it uploads it first.
  gLaunching.refuse = false;
  Tensor third = samples::poisoned({kRows, kCols});
  expectAverage(m2, a, third);
  Counts before = counts();
  CHECK(average().launch(kGrid, m2, a, third, {.device = "cuda"}) == "cuda");
  CHECK(counts().uploads == before.uploads + 2);  // m2, and the temporary for third
  std::vector<double> thirdExpected(mv.size());
  for (size_t i = 0; i < mv.size(); ++i) thirdExpected[i] = double((float(expected[i]) + float(av[i])) * 0.5f);
  CHECK(third.values() == thirdExpected);
}

TEST_CASE("fake cuda: a bug in the lowering fails the launch and is not remembered; what the device cannot run, runs on the CPU") {
  test::ScopedEnv cache("TILEJIT_CACHE", "0");
  Inputs in;
  std::vector<double> expected = expectedAverage(in);
  {
    cuda::CudaDevice device("cuda");
    Tensor out = samples::poisoned({kRows, kCols});
    expectAverage(in.a, in.b, out);
    {
      testing::ScopedFault fault("kernel ir", "fake_cuda_average", testing::FaultKind::internal);
      CHECK_THROWS_AS(device.launch(gLaunching.kernel, {gLaunching.tensors, kGrid}), InternalError);
    }
    CHECK(launchAverage(device, in, out) == expected);  // the same device object: nothing refused
  }
  cuda::CudaDevice device("cuda");
  Tensor out = samples::poisoned({kRows, kCols});
  expectAverage(in.a, in.b, out);
  {
    testing::ScopedFault fault("kernel ir", "fake_cuda_average", testing::FaultKind::unsupported);
    LaunchReport report = device.launch(gLaunching.kernel, {gLaunching.tensors, kGrid});
    CHECK(report.device == "cpu");
    CHECK(report.fallbackReason == "kernel ir: unsupported: a fault armed by a test");
  }
  CHECK(out.values() == expected);
  // Refused once, for the life of the device (and its disk cache, were it on).
  LaunchReport again = device.launch(gLaunching.kernel, {gLaunching.tensors, kGrid});
  CHECK(again.fallbackReason == "kernel ir: unsupported: a fault armed by a test");
}

// The f16 gemm sample at m x n x k through the fake device, its launches run by the simulator:
// the report, the tensor maps the launch encoded and the elements that differ from the
// interpreter's (f32 sums in another order; a NaN, an element no program wrote, differs too).
struct GemmRun {
  LaunchReport report;
  int tensorMaps;
  size_t differ;
};
GemmRun runGemmSample(int64_t m, int64_t n, int64_t k, const samples::GemmBlocks& blocks, uint64_t seed) {
  test::ScopedEnv cache("TILEJIT_CACHE", "0");
  Tensor a = Tensor::random({m, k}, seed, f16), b = Tensor::random({k, n}, seed + 1, f16);
  Tensor expected = samples::poisoned({m, n}), c = samples::poisoned({m, n});
  samples::gemm(a, b, expected, {.device = "interp"}, blocks);
  {
    CaptureTraces capture;
    samples::gemm(a, b, c, {}, blocks);
    REQUIRE(capture.kernels().size() == 1);
    gLaunching = {capture.kernels()[0], {a.launchArg(), b.launchArg(), c.launchArg()}, ""};
  }
  simulateLaunches();
  cuda::CudaDevice device("cuda");
  const int64_t grid[] = {cdiv(m, blocks.m), cdiv(n, blocks.n)};
  Counts before = counts();
  GemmRun run{device.launch(gLaunching.kernel, {gLaunching.tensors, grid}), counts().tensorMaps - before.tensorMaps, 0};
  std::vector<double> want = expected.values(), got = c.values();
  REQUIRE(want.size() == got.size());
  for (size_t i = 0; i < want.size(); ++i) run.differ += !(std::abs(got[i] - want[i]) <= 1e-5 * (1 + std::abs(want[i])));
  return run;
}

// The fast path as the device (an H200, sm_90a) builds it: rings in dynamic shared memory past
// 48 KiB (opted in) in wgmma's swizzled layout, filled by TMA boxes (tensor maps encoded at the
// launch) or 16-byte cp.async copies, proxy fences, wgmma from descriptors and vector stores,
// run by the simulator from the launch's parameters. Warp-specialized (p.warp_specialize): a
// producer warpgroup more, 384 threads a block.
TEST_CASE("fake cuda: the f16 gemm sample kernel through the device: wgmma, TMA or cp.async") {
  for (bool specialize : {false, true}) {
    CAPTURE(specialize);
    // Three stages of 128x64 and 64x128 f16 blocks: 96 KiB of shared memory, past the static 48.
    // Rows of 16-byte vectors, not multiples of the blocks.
    GemmRun run = runGemmSample(70, 72, 40, {.m = 128, .n = 128, .k = 64, .stages = 3, .warps = 8, .specialize = specialize}, 41);
    CHECK_MESSAGE(!run.report.fellBack(), run.report.fallbackReason, " / ", gLaunching.failure);
    CHECK_MESSAGE(run.differ == 0, run.differ << " elements differ");
    // The rings are filled by TMA and c stored by it (a tensor map of a, b and c, encoded at the
    // launch), or by cp.async and st.global.
    const bool tma = gLaunching.ptx.find("cp.async.bulk.tensor") != std::string::npos;
    CHECK(run.tensorMaps == (tma ? 3 : 0));
    CHECK_MESSAGE(gLaunching.ptx.find(tma ? ".param .align 64 .b8" : "cp.async.cg.shared.global") != std::string::npos,
                  gLaunching.ptx.substr(0, 2000));
    for (const char* instruction : {"wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", "wgmma.wait_group.sync.aligned 0",
                                    "fence.proxy.async.shared::cta", tma ? "cp.async.bulk.tensor.2d.global.shared::cta" : "st.global.v2.f32",
                                    ".extern .shared .align 1024"})
      CHECK_MESSAGE(gLaunching.ptx.find(instruction) != std::string::npos, std::string(instruction));
    // Specialized where TMA fills the rings, its producer warpgroup in the block.
    CHECK((gLaunching.ptx.find(".maxntid 384, 1, 1") != std::string::npos) == (specialize && tma));
  }
}

// Persistent (a warp-specialized GEMM): no more workgroups than multiprocessors, each going
// through its programs; the device read as having two of them. At 128 x 256 the four stages of
// rings and the result's two box buffers take 230,400 bytes of the 227 KiB a block may opt in to.
TEST_CASE("fake cuda: a persistent gemm runs on a workgroup per multiprocessor, each taking its programs in turn") {
  auto multiprocessors = reinterpret_cast<void (*)(int)>(fakeSymbol("tjFakeCudaSetMultiprocessors"));
  // 3 x 2 programs of 128 x 128 (3 stages), or 3 x 3 of 128 x 256 (4 stages).
  for (auto [n, columns, stages] : {std::array<int64_t, 3>{128, 200, 3}, {256, 520, 4}}) {
    CAPTURE(n);
    multiprocessors(2);
    GemmRun run = runGemmSample(300, columns, 72, {.m = 128, .n = n, .k = 64, .stages = stages, .warps = 8, .specialize = true}, 43);
    multiprocessors(132);
    CHECK_MESSAGE(!run.report.fellBack(), run.report.fallbackReason, " / ", gLaunching.failure);
    CHECK_MESSAGE(run.differ == 0, run.differ << " elements differ");
    CHECK(gLaunching.workgroups == 2);
    CHECK(gLaunching.ptx.find("setmaxnreg.inc.sync.aligned.u32 232") != std::string::npos);
    CHECK(gLaunching.ptx.find("cp.async.bulk.wait_group.read 1") != std::string::npos);  // a box at a time
    if (n == 256) CHECK(gLaunching.sharedBytes == 230400);  // every stage kept
  }
}

TEST_CASE("fake cuda: the causal f16 attention sample kernel through the device: the interpreter's results") {
  const Shape shape = {1, 2, 37, 64};
  Tensor q = Tensor::random(shape, 51, f16), k = Tensor::random(shape, 52, f16), v = Tensor::random(shape, 53, f16);
  Tensor expected = samples::poisoned(shape), o = samples::poisoned(shape);
  samples::AttentionBlocks blocks = samples::AttentionBlocks::from(samples::attentionTuneSpace("cuda").at(0));
  samples::attention(q, k, v, expected, true, {.device = "interp"}, blocks);
  {
    CaptureTraces capture;
    samples::attention(q, k, v, o, true, {}, blocks);
    REQUIRE(capture.kernels().size() == 1);
    gLaunching = {capture.kernels()[0], {q.launchArg(), k.launchArg(), v.launchArg(), o.launchArg()}, ""};
  }
  simulateLaunches();
  LaunchWatch launches;
  CHECK(samples::attention(q, k, v, o, true, {.device = "cuda"}, blocks) == "cuda");
  CHECK_MESSAGE(!launches.last().fellBack(), launches.last().fallbackReason, " / ", gLaunching.failure);
  std::vector<double> want = expected.values(), got = o.values();
  size_t differ = 0;  // exp within an ulp of f32 on both; a NaN (an unwritten element) differs too
  for (size_t i = 0; i < want.size(); ++i) differ += !(std::abs(got[i] - want[i]) <= 1e-5 * (1 + std::abs(want[i])));
  CHECK_MESSAGE(differ == 0, differ << " elements differ, the first " << got[0] << " vs " << want[0]);
  CHECK(gLaunching.ptx.find("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16") != std::string::npos);
}

// 144 keys: two scale blocks, the last key block partial; v stored [batch, heads, dim, seq] and
// read along the keys, as 8-bit wgmma's b must be, by TMA like k. At CUDA's first blocks, and
// warp-specialized with the softmax overlapped (each step the previous block's values product).
TEST_CASE("fake cuda: the causal FP8 attention sample kernel through the device: 8-bit wgmma, the interpreter's results") {
  const int64_t seq = 144;
  const Shape shape = {1, 2, seq, 64};
  Tensor q = Tensor::random(shape, 71, DType::f8e4m3), k = Tensor::random(shape, 72, DType::f8e4m3);
  Tensor v = Tensor::random({1, 2, 64, seq}, 73, DType::f8e4m3).transpose(2, 3);
  const samples::AttentionScales scales{Tensor::random({2, seq, 1}, 74, f32, 0.5, 2),
                                        Tensor::random({2, 2, 1}, 75, f32, 0.5, 2), Tensor::random({2, 2, 1}, 76, f32, 0.5, 2)};
  const samples::AttentionBlocks first = samples::AttentionBlocks::from(samples::attentionTuneSpace("cuda").at(0));
  for (const samples::AttentionBlocks& blocks : {first, samples::AttentionBlocks{128, 64, 3, 8, true, true}}) {
    CAPTURE(blocks.config().str());
    Tensor expected = samples::poisoned(shape), o = samples::poisoned(shape);
    samples::attention(q, k, v, expected, true, {.device = "interp"}, blocks, scales);
    {
      CaptureTraces capture;
      samples::attention(q, k, v, o, true, {}, blocks, scales);
      REQUIRE(capture.kernels().size() == 1);
      gLaunching = {capture.kernels()[0], {q.launchArg(), k.launchArg(), v.transpose(2, 3).launchArg(), scales.q.launchArg(),
                                           scales.k.launchArg(), scales.v.launchArg(), o.launchArg()}, ""};
    }
    simulateLaunches();
    LaunchWatch launches;
    CHECK(samples::attention(q, k, v, o, true, {.device = "cuda"}, blocks, scales) == "cuda");
    CHECK_MESSAGE(!launches.last().fellBack(), launches.last().fallbackReason, " / ", gLaunching.failure);
    std::vector<double> want = expected.values(), got = o.values();
    size_t differ = 0;  // fast_exp2 within its bound on both; a NaN (an unwritten element) differs too
    for (size_t i = 0; i < want.size(); ++i) differ += !(std::abs(got[i] - want[i]) <= 1e-5 * (1 + std::abs(want[i])));
    CHECK_MESSAGE(differ == 0, differ << " elements differ, the first " << got[0] << " vs " << want[0]);
    for (const char* instruction : {"wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3", "cp.async.bulk.tensor.4d",
                                    "cvt.rn.satfinite.e4m3x2.f32"})
      CHECK_MESSAGE(gLaunching.ptx.find(instruction) != std::string::npos, std::string(instruction));
    CHECK((gLaunching.ptx.find(".maxntid 384, 1, 1") != std::string::npos) == blocks.specialize);
  }
}

// MLA decode's latent attention at CUDA's blocks over an 8-bit cache: the cache widened to bf16,
// its score and value products on mma.sync, on the simulator as the device lowers it.
TEST_CASE("fake cuda: MLA's latent attention over an FP8 cache multiplies in bf16 on mma.sync: the interpreter's results") {
  const int64_t batch = 2, heads = 16, nope = 32, rope = 64, latent = 256, value = 32, seq = 45;
  samples::MlaTensors t{.qNope = Tensor::random({batch, heads, nope}, 81),
                        .qPe = Tensor::random({batch, heads, rope}, 82),
                        .ropeCos = Tensor::random({batch, rope / 2}, 83),
                        .ropeSin = Tensor::random({batch, rope / 2}, 84),
                        .wUK = Tensor::random({heads, nope, latent}, 85),
                        .wUV = Tensor::random({heads, latent, value}, 86),
                        .latentCache = Tensor::random({batch, seq, latent}, 87, DType::f8e4m3),
                        .ropeKeyCache = Tensor::random({batch, seq, rope}, 88, DType::f8e4m3),
                        .seqLens = Tensor::from({batch}, {45, 17}, DType::i32),
                        .out = samples::poisoned({batch, heads, value}),
                        .cacheScales = Tensor::from({2}, {0.5, 2.0})};
  const samples::MlaBlocks blocks = samples::MlaBlocks::forDevice("cuda", latent);
  Tensor qAbs = Tensor::random({batch, heads, latent}, 89);
  Tensor expected = samples::poisoned({batch, heads, latent}), ctx = samples::poisoned({batch, heads, latent});
  samples::mlaLatentAttention(t, qAbs, expected, {.device = "interp"}, blocks);
  {
    CaptureTraces capture;
    samples::mlaLatentAttention(t, qAbs, ctx, {.device = "interp"}, blocks);
    REQUIRE(capture.kernels().size() == 1);
    gLaunching = {capture.kernels()[0], {t.seqLens.launchArg(), t.cacheScales.launchArg(), qAbs.launchArg(),
                                         t.latentCache.launchArg(), t.ropeKeyCache.launchArg(), t.qPe.launchArg(),
                                         t.ropeCos.launchArg(), t.ropeSin.launchArg(), ctx.launchArg()}, ""};
  }
  simulateLaunches();
  LaunchWatch launches;
  CHECK(samples::mlaLatentAttention(t, qAbs, ctx, {.device = "cuda"}, blocks) == "cuda");
  CHECK_MESSAGE(!launches.last().fellBack(), launches.last().fallbackReason, " / ", gLaunching.failure);
  std::vector<double> want = expected.values(), got = ctx.values();
  size_t differ = 0;  // fast_exp2 within its bound on both; a NaN (an unwritten element) differs too
  for (size_t i = 0; i < want.size(); ++i) differ += !(std::abs(got[i] - want[i]) <= 1e-5 * (1 + std::abs(want[i])));
  CHECK_MESSAGE(differ == 0, differ << " elements differ, the first " << got[0] << " vs " << want[0]);
  CHECK(gLaunching.ptx.find("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32") != std::string::npos);
}

// Sequences of 1 to 64 keys over 16-key pages: the key loop split at `position < length` runs
// whole pages unmasked and a partial last page masked, on the simulator as the device lowers it.
TEST_CASE("fake cuda: paged attention through the device, its page loop split at the length: the interpreter's results") {
  const int64_t batch = 4, heads = 2, dim = 64, pageSize = 16, pages = 4;
  Tensor q = Tensor::random({batch, heads, dim}, 61), kCache = Tensor::random({batch * pages, heads, pageSize, dim}, 62);
  Tensor vCache = Tensor::random({batch * pages, heads, pageSize, dim}, 63);
  std::vector<double> table;
  for (int64_t i = 0; i < batch * pages; ++i) table.push_back(double((i * 5) % (batch * pages)));  // pages out of order
  Tensor blockTable = Tensor::from({batch, pages}, table, DType::i32);
  Tensor lengths = Tensor::from({batch}, {1, 17, 40, 64}, DType::i32);
  Tensor expected = samples::poisoned({batch, heads, dim}), o = samples::poisoned({batch, heads, dim});
  samples::pagedAttention(q, kCache, vCache, blockTable, lengths, expected, {.device = "interp"});
  {
    CaptureTraces capture;
    samples::pagedAttention(q, kCache, vCache, blockTable, lengths, o);
    REQUIRE(capture.kernels().size() == 1);
    gLaunching = {capture.kernels()[0], {lengths.launchArg(), q.launchArg(), kCache.launchArg(), vCache.launchArg(),
                                         blockTable.launchArg(), o.launchArg()}, ""};
  }
  const ir::Kernel split = ir::splitFoldsAtMasks(gLaunching.kernel);
  CHECK(std::ranges::count_if(split.body.ops, [](const ir::Op& op) { return op.code == ir::OpCode::fold; }) == 2);
  simulateLaunches();
  LaunchWatch launches;
  CHECK(samples::pagedAttention(q, kCache, vCache, blockTable, lengths, o, {.device = "cuda"}) == "cuda");
  CHECK_MESSAGE(!launches.last().fellBack(), launches.last().fallbackReason, " / ", gLaunching.failure);
  std::vector<double> want = expected.values(), got = o.values();
  size_t differ = 0;  // fast_exp2 within its bound on both; a NaN (an unwritten element) differs too
  for (size_t i = 0; i < want.size(); ++i) differ += !(std::abs(got[i] - want[i]) <= 1e-5 * (1 + std::abs(want[i])));
  CHECK_MESSAGE(differ == 0, differ << " elements differ, the first " << got[0] << " vs " << want[0]);
}

TEST_CASE("fake cuda: the cubin key names the device, the launch facts and the target") {
  cuda::DeviceInfo h200 = cuda::deviceInfo(0);
  layout::Target target = cuda::targetFor(h200);
  std::string base = cuda::cubinKey(7, h200, target, {true, false}).str();
  auto differs = [&](cuda::DeviceInfo d, layout::Target t, std::vector<bool> facts) {
    return cuda::cubinKey(7, d, t, facts).str() != base;
  };
  CHECK(!differs(h200, target, {true, false}));
  CHECK(cuda::cubinKey(8, h200, target, {true, false}).str() != base);
  CHECK(differs(h200, target, {true, true}));
  cuda::DeviceInfo d = h200;
  d.driverVersion += 10;
  CHECK(differs(d, target, {true, false}));
  d = h200;
  d.multiprocessors = 114;
  CHECK(differs(d, target, {true, false}));
  d = h200;
  d.minor = 1;
  CHECK(differs(d, target, {true, false}));
  layout::Target fewer = target;
  fewer.warpsPerProgram = 8;
  CHECK(differs(h200, fewer, {true, false}));
}

namespace {

// The fake's own cuTensorMapEncodeTiled, as the runtime loaded it.
cuda::PFN_cuTensorMapEncodeTiled fakeEncode() {
  return reinterpret_cast<cuda::PFN_cuTensorMapEncodeTiled>(fakeSymbol("cuTensorMapEncodeTiled"));
}

// A cubin entry written by hand, as the lowering makes none with tensor maps yet: the average's
// a and b each as a buffer and a tensor map (boxes of 2x32 swizzled 128 bytes and 4x8 swizzled
// 32), out as a buffer and its size 0; a PTX entry that declares them and does nothing.
std::vector<gpu::KParam> handParams(std::vector<int64_t> boxA = {2, 32}) {
  using K = gpu::KParam::Kind;
  return {{K::buffer, "t0", DType::f32, 0, 0},
          {K::tensor_map, "t0.map0", DType::f32, 0, 0, std::move(boxA), 128},
          {K::buffer, "t1", DType::f32, 1, 0},
          {K::tensor_map, "t1.map0", DType::f32, 1, 0, {4, 8}, 32},
          {K::buffer, "t2", DType::f32, 2, 0},
          {K::size, "t2.size0", DType::i64, 2, 0}};
}
DriverBinary handEntry(const std::vector<gpu::KParam>& params) {
  std::string ptx = ".version 8.0\n.target sm_90a\n.address_size 64\n\n.visible .entry tj_fake_maps(\n";
  for (size_t p = 0; p < params.size(); ++p) {
    std::string name = "tj_fake_maps_param_" + std::to_string(p);
    ptx += params[p].kind == gpu::KParam::Kind::tensor_map ? "\t.param .align 64 .b8 " + name + "[128]"
           : params[p].kind == gpu::KParam::Kind::buffer   ? "\t.param .u64 .ptr .global .align 1 " + name
                                                           : "\t.param .u64 " + name;
    ptx += p + 1 < params.size() ? ",\n" : "\n";
  }
  ptx += ")\n.maxntid 128, 1, 1\n{\n\tret;\n}\n";
  std::string cubin = "tilejit fake cubin\n" + ptx;
  DriverBinary b{.params = params, .workgroupSize = 128, .sharedBytes = 0, .entry = "tj_fake_maps",
                      .image = {cubin.begin(), cubin.end()}};
  b.image.push_back('\0');
  for (gpu::KParam& param : b.params) param.name.clear();  // as the device stores them
  return b;
}

// The hand entry's launches: their parameters checked against its interface.
std::vector<gpu::KParam> gHandParams;
std::vector<size_t> gHandSizes;  // the bytes of each parameter of the last launch
int checkHandLaunch(const char*, const unsigned*, unsigned, unsigned, const TjFakeCudaParam* params, unsigned count) {
  try {
    gHandSizes.clear();
    for (unsigned p = 0; p < count; ++p) gHandSizes.push_back(params[p].size);
    checkParameters(gHandParams, params, count);
    return 0;
  } catch (const std::exception& e) {
    gLaunching.failure = e.what();
    return 719;  // CUDA_ERROR_LAUNCH_FAILED
  }
}

}  // namespace

TEST_CASE("fake cuda: cuTensorMapEncodeTiled keeps the Driver API's rules and records what it encoded") {
  cuda::DeviceMemory memory(64 * 128 * 2);  // a 64x128 f16 matrix
  const uintptr_t base = uintptr_t(memory.address());
  // The arguments of a good encoding, in the driver's order: 64-element (128-byte) rows of a
  // box 32 rows high, swizzled over 128 bytes.
  struct Arguments {
    uintptr_t address;
    cuda::cuuint32_t rank = 2;
    cuda::cuuint64_t dims[2] = {128, 64}, strides[1] = {256};
    cuda::cuuint32_t box[2] = {64, 32}, elementStrides[2] = {1, 1};
    cuda::CUtensorMapSwizzle swizzle = cuda::CU_TENSOR_MAP_SWIZZLE_128B;
    cuda::CUtensorMapDataType type = cuda::CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    cuda::CUtensorMapInterleave interleave = cuda::CU_TENSOR_MAP_INTERLEAVE_NONE;
    cuda::CUtensorMapFloatOOBfill fill = cuda::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  };
  cuda::CUtensorMap map{};
  auto encode = [&](const Arguments& a, cuda::CUtensorMap* into = nullptr) {
    return fakeEncode()(into ? into : &map, a.type, a.rank, reinterpret_cast<void*>(a.address), a.dims, a.strides,
                        a.box, a.elementStrides, a.interleave, a.swizzle, cuda::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                        a.fill);
  };
  const Arguments good{.address = base};
  int before = counts().tensorMaps;
  REQUIRE(encode(good) == cuda::CUDA_SUCCESS);
  CHECK(counts().tensorMaps == before + 1);
  std::optional<TjFakeTensorMap> m = decodeFakeTensorMap(reinterpret_cast<const unsigned char*>(&map), sizeof map);
  REQUIRE(m);
  CHECK(m->dataType == cuda::CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
  CHECK(m->rank == 2);
  CHECK(m->address == base);
  CHECK(m->dims[0] == 128);
  CHECK(m->dims[1] == 64);
  CHECK(m->strides[0] == 256);
  CHECK(m->box[0] == 64);
  CHECK(m->box[1] == 32);
  CHECK(m->elementStrides[1] == 1);
  CHECK(m->swizzle == cuda::CU_TENSOR_MAP_SWIZZLE_128B);
  CHECK(m->l2Promotion == cuda::CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  CHECK(m->oobFill == cuda::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);

  auto refused = [&](Arguments a) { return encode(a) == 1; };  // CUDA_ERROR_INVALID_VALUE
  Arguments a = good;
  a.address = base + 8;  // not 16-byte aligned (and the last rows' ends still in the allocation)
  a.dims[1] = 32;
  CHECK(refused(a));
  a.address = base + 16;
  CHECK(!refused(a));
  a = good;
  a.strides[0] = 200;  // not a multiple of 16
  CHECK(refused(a));
  a.strides[0] = cuda::cuuint64_t(1) << 40;
  CHECK(refused(a));
  a = good;
  a.box[1] = 257;
  CHECK(refused(a));
  a.box[1] = 256;
  a.dims[1] = 64;
  CHECK(!refused(a));
  a.box[1] = 0;
  CHECK(refused(a));
  a = good;
  a.swizzle = cuda::CU_TENSOR_MAP_SWIZZLE_64B;  // the box's 128-byte rows are past a 64-byte span
  CHECK(refused(a));
  a.box[0] = 32;
  CHECK(!refused(a));
  a.swizzle = cuda::CU_TENSOR_MAP_SWIZZLE_32B;
  CHECK(refused(a));
  a.box[0] = 4;  // 8 bytes: not a multiple of 16
  a.swizzle = cuda::CU_TENSOR_MAP_SWIZZLE_NONE;
  CHECK(refused(a));
  a = good;
  a.dims[1] = 65;  // the last row past the allocation
  CHECK(refused(a));
  a.dims[1] = 0;
  CHECK(refused(a));
  a = good;
  a.elementStrides[1] = 9;
  CHECK(refused(a));
  a = good;
  a.rank = 6;
  CHECK(refused(a));
  a = good;
  a.type = cuda::CUtensorMapDataType(16);  // past the last
  CHECK(refused(a));
  a = good;
  a.type = cuda::CU_TENSOR_MAP_DATA_TYPE_UINT8;
  a.fill = cuda::CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;  // a NaN fill of integers
  CHECK(refused(a));
  a.interleave = cuda::CU_TENSOR_MAP_INTERLEAVE_32B;  // needs rank 3 or more
  a.fill = cuda::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  a.swizzle = cuda::CU_TENSOR_MAP_SWIZZLE_32B;
  CHECK(refused(a));
  alignas(128) unsigned char bytes[256] = {};
  CHECK(encode(good, reinterpret_cast<cuda::CUtensorMap*>(bytes + 32)) == 1);  // a map not 64-byte aligned
  CHECK(counts().tensorMaps == before + 4);  // the good ones only
}

TEST_CASE("fake cuda: the device encodes a tensor map of its tensor: sizes, byte strides and box innermost first") {
  cuda::DeviceMemory memory(4 * 64 * 128 * 2);
  gpu::KParam map{gpu::KParam::Kind::tensor_map, "t1.map0", DType::bf16, 1, 0, {2, 16, 64}, 128};
  // A [3, 64, 128] view of a [4, 64, 128] bf16 tensor from its second matrix.
  TensorArg t{.data = nullptr, .dtype = DType::bf16, .shape = {3, 64, 128}, .strides = {64 * 128, 128, 1}};
  const cuda::CUdeviceptr address = memory.address() + 64 * 128 * 2;
  cuda::CUtensorMap encoded = cuda::encodeTensorMap(map, t, address);
  std::optional<TjFakeTensorMap> m = decodeFakeTensorMap(reinterpret_cast<const unsigned char*>(&encoded), sizeof encoded);
  REQUIRE(m);
  CHECK(m->dataType == cuda::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  CHECK(m->rank == 3);
  CHECK(m->address == address);
  CHECK(std::vector<uint64_t>(m->dims, m->dims + 3) == std::vector<uint64_t>{128, 64, 3});
  CHECK(std::vector<uint64_t>(m->strides, m->strides + 2) == std::vector<uint64_t>{256, 64 * 128 * 2});
  CHECK(std::vector<uint16_t>(m->box, m->box + 3) == std::vector<uint16_t>{64, 16, 2});
  CHECK(m->swizzle == cuda::CU_TENSOR_MAP_SWIZZLE_128B);
  TjFakeCudaParam param{reinterpret_cast<const unsigned char*>(&encoded), sizeof encoded};
  CHECK_NOTHROW(checkTensorMap(map, param, t, address));
  // 8-bit elements of any kind are bytes to TMA.
  for (DType type : {DType::f8e4m3, DType::f8e5m2, DType::i8, DType::u8}) {
    gpu::KParam bytes{gpu::KParam::Kind::tensor_map, "t0.map0", type, 0, 0, {8, 64}, 64};
    TensorArg u{.data = nullptr, .dtype = type, .shape = {64, 64}, .strides = {64, 1}};
    encoded = cuda::encodeTensorMap(bytes, u, memory.address());
    m = decodeFakeTensorMap(reinterpret_cast<const unsigned char*>(&encoded), sizeof encoded);
    REQUIRE(m);
    CHECK(m->dataType == cuda::CU_TENSOR_MAP_DATA_TYPE_UINT8);
    CHECK(m->box[0] == 64);
  }
  // Rows of 100 bf16 elements: 200 bytes apart, which TMA cannot stride.
  t.strides = {64 * 100, 100, 1};
  std::string refused = fmt::format("cuda: cuTensorMapEncodeTiled failed: CUDA_ERROR_INVALID_VALUE (1) for tensor t1 "
                                    "(bf16, sizes [3, 64, 128], strides [6400, 100, 1] elements, at {:#x}), box "
                                    "[2, 16, 64], swizzle 128",
                                    address);
  CHECK_THROWS_WITH_AS(cuda::encodeTensorMap(map, t, address), refused.c_str(), Unsupported);
}

TEST_CASE("fake cuda: a launch passes each tensor map as 128 bytes encoded for its tensor; one the driver refuses runs on the CPU") {
  test::ScopedEnv cache("TILEJIT_CACHE_DIR", test::scratchDir("fake_cuda", "tensor_maps").c_str());
  fs::path dir = std::getenv("TILEJIT_CACHE_DIR");
  cuda::DeviceInfo info = cuda::deviceInfo(0);
  layout::Target target = cuda::targetFor(info);
  jit::ArtifactStore store(dir);
  auto launchHand = [&](const Tensor& a, const Tensor& b, const Tensor& out, const std::vector<gpu::KParam>& params) {
    expectAverage(a, b, out);
    gHandParams = params;
    REQUIRE(store.write(cuda::cubinKey(ir::semanticHash(gLaunching.kernel), info, target, vectorFacts(target)),
                        cuda::encodeCubinBinary(handEntry(params))));
    setKernel(checkHandLaunch);
    gLaunching.failure.clear();
    cuda::CudaDevice device("cuda");
    return device.launch(gLaunching.kernel, {gLaunching.tensors, std::vector<int64_t>{4}});
  };
  Tensor a = Tensor::random({16, 64}, 61), b = Tensor::random({16, 64}, 62);
  SUBCASE("encoded and passed whole") {
    Counts before = counts();
    LaunchReport report = launchHand(a, b, samples::poisoned({16, 64}), handParams());
    CHECK_MESSAGE(!report.fellBack(), report.fallbackReason, " / ", gLaunching.failure);
    CHECK(report.cache == jit::CacheSource::disk);
    CHECK(gLaunching.failure.empty());
    CHECK(gHandSizes == std::vector<size_t>{8, 128, 8, 128, 8, 8});
    CHECK(counts().tensorMaps == before.tensorMaps + 2);
    CHECK(counts().launches == before.launches + 1);
  }
  SUBCASE("rows of 61 floats: TMA cannot stride 244 bytes") {
    Tensor narrow = Tensor::random({16, 61}, 63), narrowB = Tensor::random({16, 61}, 64), out = samples::poisoned({16, 61});
    Counts before = counts();
    test::CaptureLog log;
    LaunchReport report = launchHand(narrow, narrowB, out, handParams());
    CHECK(report.fellBack());
    CHECK_MESSAGE(report.fallbackReason.starts_with("cuda: cuTensorMapEncodeTiled failed: CUDA_ERROR_INVALID_VALUE (1) for "
                                                    "tensor t0 (f32, sizes [16, 61], strides [61, 1] elements"),
                  report.fallbackReason);
    CHECK(counts().launches == before.launches);
    Tensor expected = samples::poisoned({16, 61});
    average().launch(std::vector<int64_t>{4}, narrow, narrowB, expected, {.device = "interp"});
    CHECK(out.values() == expected.values());
  }
  SUBCASE("a box past 256 elements does not fit the kernel: the entry is rebuilt") {
    test::CaptureLog log;
    Tensor out = samples::poisoned({16, 64});
    expectAverage(a, b, out);
    gHandParams = handParams({2, 512});
    REQUIRE(store.write(cuda::cubinKey(ir::semanticHash(gLaunching.kernel), info, target, vectorFacts(target)),
                        cuda::encodeCubinBinary(handEntry(gHandParams))));
    cuda::CudaDevice device("cuda");
    LaunchReport report = device.launch(gLaunching.kernel, {gLaunching.tensors, std::vector<int64_t>{4}});
    CHECK_MESSAGE(!report.fellBack(), report.fallbackReason, " / ", gLaunching.failure);
    CHECK(report.cache == jit::CacheSource::compiled);
    CHECK_MESSAGE(log.text().find("parameter 1 does not fit kernel 'fake_cuda_average'") != std::string::npos, log.text());
    Tensor expected = samples::poisoned({16, 64});
    average().launch(std::vector<int64_t>{4}, a, b, expected, {.device = "interp"});
    CHECK(out.values() == expected.values());
  }
  simulateLaunches();
}

}  // namespace tj::fakecuda

// The process's driver is the fake, whatever the environment says.
int main(int argc, char** argv) {
  setenv("TILEJIT_LIBCUDA", TILEJIT_FAKE_LIBCUDA, 1);
  return doctest::Context(argc, argv).run();
}
