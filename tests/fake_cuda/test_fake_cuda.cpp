// The CUDA device's launch path on a machine without a GPU, through tests/fake_cuda's stand-in
// driver (main sets TILEJIT_LIBCUDA to it): each launch's kernel is run by the kernel-IR
// simulator on the device memory and parameters the launch passed, after checking that the
// PTX the device linked is the lowering's; so these tests check the device's own work (its
// parameters, memory bindings, device-resident tensors and cubin cache) against the
// interpreter, everything but the GPU itself.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <dlfcn.h>

#include <bit>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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
#include "tests/kernel_ir_simulator.hpp"
#include "tests/support.hpp"

namespace tj::fakecuda {

namespace {

namespace fs = std::filesystem;

struct Counts {
  int links, moduleLoads, launches, allocations, uploads, downloads;
};

// The fake driver's own entry points, from the library the runtime loaded.
void* fakeSymbol(const char* name) {
  static void* library = dlopen(std::getenv("TILEJIT_LIBCUDA"), RTLD_NOW | RTLD_LOCAL);
  void* symbol = library ? dlsym(library, name) : nullptr;
  if (!symbol) throw Error(std::string("the fake driver has no ") + name);
  return symbol;
}

Counts counts() { return reinterpret_cast<Counts (*)()>(fakeSymbol("tjFakeCudaCounts"))(); }

// What the next launches run: the kernel as devices receive it and its tensor arguments.
struct Launching {
  ir::Kernel kernel;
  std::vector<TensorArg> tensors;
  std::string failure;  // why the last launch did not match, if it did not
  std::string ptx;      // what the last launch ran
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

// The fake driver's kernel: lowers the expected kernel as the device does (the same target
// and 16-byte facts), checks that its PTX is what the device linked, and simulates it on the
// launch's memory and parameters.
int simulateLaunch(const char* ptx, const unsigned grid[3], unsigned block, unsigned sharedBytes, const uint64_t* slots,
                   unsigned count) {
  if (gLaunching.refuse) return 701;
  try {
    layout::Target target = cuda::targetFor(cuda::deviceInfo(0));
    gpu::KernelLoweringOptions options;
    options.vectorTensors = vectorFacts(target);
    gpu::KernelFunction f = gpu::lowerWithinCodeBudget(gLaunching.kernel, target, options);
    gLaunching.ptx = ptx;
    if (ptx::printPtx(f, "sm_90a") != ptx) throw Error("the PTX launched is not the kernel's lowering");
    if (block != unsigned(f.workgroupSize) || count != f.params.size()) throw Error("threads or parameter count");
    if (f.sharedBytes() > ptx::kStaticSharedBytes && sharedBytes < f.sharedBytes())
      throw Error("launched with " + std::to_string(sharedBytes) + " bytes of dynamic shared memory");
    std::vector<gpu::SimTensor> tensors;
    for (const TensorArg& t : gLaunching.tensors) tensors.push_back({nullptr, t.dtype, t.shape, t.strides});
    std::vector<double> scalars;
    for (size_t p = 0; p < f.params.size(); ++p) {
      const gpu::KParam& param = f.params[p];
      if (param.kind == gpu::KParam::Kind::buffer) {
        if (param.number >= tensors.size()) throw Error("a print or fault buffer: not simulated here");
        tensors[param.number].data = reinterpret_cast<void*>(uintptr_t(slots[p]));
      } else if (param.kind == gpu::KParam::Kind::scalar) {
        scalars.resize(std::max(scalars.size(), param.number + 1));
        scalars[param.number] = param.dtype == DType::f64 ? std::bit_cast<double>(slots[p])
                                : isFloat(param.dtype)    ? double(std::bit_cast<float>(uint32_t(slots[p])))
                                                          : double(int64_t(slots[p]));
      } else {
        const TensorArg& t = gLaunching.tensors.at(param.number);
        int64_t expected = param.kind == gpu::KParam::Kind::size ? t.shape.at(param.axis) : t.strides.at(param.axis);
        if (int64_t(slots[p]) != expected) throw Error("parameter " + param.name + " is not the tensor's");
      }
    }
    gpu::simulate(f, tensors, scalars, {grid[0], grid[1], grid[2]});
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
void simulateLaunches() {
  using Kernel = int (*)(const char*, const unsigned*, unsigned, unsigned, const uint64_t*, unsigned);
  reinterpret_cast<void (*)(Kernel)>(fakeSymbol("tjFakeCudaSetKernel"))(simulateLaunch);
}

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
  CHECK(selectDevice("cuda:0").name() == "cuda:0");
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
  cuda::CubinBinary good = cuda::decodeCubinBinary(*store.read(key));

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
    cuda::CubinBinary bad = good;
    std::string text = "not a cubin";
    bad.cubin.assign(text.c_str(), text.c_str() + text.size() + 1);
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

// The fast path as the device (an H200, sm_90a) builds it: 16-byte cp.async rings in dynamic
// shared memory past 48 KiB (opted in) in wgmma's swizzled layout, proxy fences, wgmma from
// descriptors and vector stores, run by the simulator from the launch's slots.
TEST_CASE("fake cuda: the f16 gemm sample kernel through the device: wgmma, cp.async") {
  test::ScopedEnv cache("TILEJIT_CACHE", "0");
  const int64_t m = 70, n = 72, k = 40;  // rows of 16-byte vectors, not multiples of the blocks
  Tensor a = Tensor::random({m, k}, 41, f16), b = Tensor::random({k, n}, 42, f16);
  Tensor expected = samples::poisoned({m, n}), c = samples::poisoned({m, n});
  // Three stages of 128x64 and 64x128 f16 blocks: 96 KiB of shared memory, past the static 48.
  samples::GemmBlocks blocks{.m = 128, .n = 128, .k = 64, .stages = 3, .warps = 8};
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
  LaunchReport report = device.launch(gLaunching.kernel, {gLaunching.tensors, grid});
  CHECK_MESSAGE(!report.fellBack(), report.fallbackReason, " / ", gLaunching.failure);
  std::vector<double> want = expected.values(), got = c.values();
  REQUIRE(want.size() == got.size());
  size_t differ = 0;  // f32 sums in another order; a NaN (an unwritten element) differs too
  for (size_t i = 0; i < want.size(); ++i) differ += !(std::abs(got[i] - want[i]) <= 1e-5 * (1 + std::abs(want[i])));
  CHECK_MESSAGE(differ == 0, differ << " elements differ, the first " << got[0] << " vs " << want[0]);
  for (const char* instruction : {"wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", "wgmma.wait_group.sync.aligned 0",
                                  "fence.proxy.async.shared::cta", "cp.async.cg.shared.global", "st.global.v2.f32",
                                  ".extern .shared .align 1024"})
    CHECK_MESSAGE(gLaunching.ptx.find(instruction) != std::string::npos, std::string(instruction));
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

}  // namespace tj::fakecuda

// The process's driver is the fake, whatever the environment says.
int main(int argc, char** argv) {
  setenv("TILEJIT_LIBCUDA", TILEJIT_FAKE_LIBCUDA, 1);
  return doctest::Context(argc, argv).run();
}
