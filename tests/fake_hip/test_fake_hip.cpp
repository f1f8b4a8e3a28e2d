// The HIP device's launch path on a machine without an AMD GPU, through tests/fake_hip's
// stand-in runtime (main sets TILEJIT_LIBHIP to it): each launch's kernel is run by the
// kernel-IR simulator on the device memory and parameters the launch passed, after checking the
// code object's kernel against the lowering (its name, threads, LDS and argument bytes), so
// these tests check the device's own work (code objects, parameters, memory bindings,
// device-resident tensors, the disk cache) against the interpreter, everything but the GPU.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <dlfcn.h>
#include <elf.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "devices/hip/comgr.hpp"
#include "devices/hip/hip_device.hpp"
#include "devices/hip/hip_runtime.hpp"
#include "dsl/tilejit.hpp"
#include "ir/passes.hpp"
#include "jit/cache_file.hpp"
#include "lower/amdgpu/amdgpu.hpp"
#include "lower/gpu/spread_over_warps.hpp"
#include "lower/llvm_gpu/print_kernel_ir.hpp"
#include "samples/harness.hpp"
#include "samples/kernels.hpp"
#include "tests/dlpack_producer.hpp"
#include "tests/fake_driver.hpp"
#include "tests/fake_hip/fake_hip.hpp"
#include "tests/kernel_ir_simulator.hpp"
#include "tests/support.hpp"

namespace tj::fakehip {

namespace {

namespace fs = std::filesystem;

void* fakeSymbol(const char* name) {
  static void* library = dlopen(std::getenv("TILEJIT_LIBHIP"), RTLD_NOW | RTLD_LOCAL);
  void* symbol = library ? dlsym(library, name) : nullptr;
  if (!symbol) throw Error(std::string("the fake runtime has no ") + name);
  return symbol;
}

TjFakeHipCounts counts() { return reinterpret_cast<TjFakeHipCounts (*)()>(fakeSymbol("tjFakeHipCounts"))(); }
TjFakeStreams streams() { return reinterpret_cast<TjFakeStreams (*)()>(fakeSymbol("tjFakeHipStreams"))(); }

// What the next launches run: the kernel as devices receive it and its tensor arguments.
struct Launching {
  ir::Kernel kernel;
  std::vector<TensorArg> tensors;
  std::string failure;   // why the last launch did not match, if it did not
  bool refuse = false;   // fail the launch, as a runtime may (hipErrorLaunchOutOfResources)
  std::string target;    // the layout target of the last launch
};
Launching gLaunching;

uint64_t word(void* param, size_t bytes) {
  uint64_t value = 0;
  std::memcpy(&value, param, bytes);
  return value;
}

// The explicit kernel arguments' bytes, each at its natural alignment (the AMDGPU ABI).
uint32_t explicitArgumentBytes(const std::vector<gpu::KParam>& params) {
  uint32_t end = 0;
  for (const gpu::KParam& p : params) {
    auto bytes = uint32_t(parameterBytes(p));
    end = (end + bytes - 1) / bytes * bytes + bytes;
  }
  return end;
}

// The fake runtime's kernel: lowers the expected kernel as the device does (its target, the
// 16-byte facts of allocations aligned to 256 bytes), checks the code object's kernel against
// it and simulates it on the launch's memory and parameters.
hip::hipError_t simulateLaunch(const TjFakeHipLaunch* launch) {
  if (gLaunching.refuse) return 701;
  try {
    layout::Target target = hip::targetFor(hip::deviceInfo(uint32_t(launch->device)));
    gLaunching.target = target.name;
    gpu::KernelLoweringOptions options;
    for (const TensorArg& t : gLaunching.tensors)
      options.vectorTensors.push_back(gpu::allowsVectorAccess(0, t.dtype, t.shape, t.strides, target.vectorBytes));
    gpu::KernelFunction f = gpu::lowerWithinCodeBudget(gLaunching.kernel, target, options);
    if (launch->kernel != llvmgpu::entryName(f.name)) throw Error(std::string("kernel ") + launch->kernel);
    if (launch->block != unsigned(f.workgroupSize)) throw Error("threads per workgroup");
    if (launch->ldsBytes < f.sharedBytes()) throw Error("the code object's LDS is smaller than the kernel's");
    if (launch->kernargBytes < explicitArgumentBytes(f.params)) throw Error("the code object takes fewer argument bytes");
    std::vector<uint64_t> addresses(gLaunching.tensors.size(), 0);
    for (size_t p = 0; p < f.params.size(); ++p)
      if (f.params[p].kind == gpu::KParam::Kind::buffer && f.params[p].number < addresses.size())
        addresses[f.params[p].number] = word(launch->params[p], 8);
    gpu::simulateLaunch(
        f, gLaunching.tensors, addresses, [&](size_t p) { return word(launch->params[p], parameterBytes(f.params[p])); },
        {launch->grid[0], launch->grid[1], launch->grid[2]});
    return 0;
  } catch (const std::exception& e) {
    gLaunching.failure = e.what();
    return 719;  // hipErrorLaunchFailure
  }
}


// out = (a + b) * 0.5 over [kRows, kCols] (not multiples of the blocks), b a transposed view.
constexpr int64_t kRows = 13, kCols = 77;
const std::vector<int64_t> kGrid = {cdiv(kRows, 4)};

const auto& average() {
  static auto k = kernel("fake_hip_average", [](Program& p, const Tensor& a, const Tensor& b, const Tensor& out) {
    Index i = p.id(0);
    Tile x = p.read(a, {4, 128}).at({i, 0}), y = p.read(b, {4, 128}).at({i, 0});
    p.write(out, {4, 128}).put((x + y) * 0.5, {i, 0});
  });
  return k;
}

struct Inputs {
  Tensor a = Tensor::random({kRows, kCols}, 71), bStorage = Tensor::random({kCols, kRows}, 72);
  Tensor b = bStorage.transpose();
};

void expectAverage(const Tensor& a, const Tensor& b, const Tensor& out) {
  CaptureTraces capture;
  average()(kGrid, a, b, out);
  REQUIRE(capture.kernels().size() == 1);
  gLaunching.kernel = capture.kernels()[0];
  gLaunching.tensors = {a.launchArg(), b.launchArg(), out.launchArg()};
  gLaunching.failure.clear();
}

std::vector<double> expectedAverage(const Inputs& in) {
  Tensor out = samples::poisoned({kRows, kCols});
  average().launch(kGrid, in.a, in.b, out, {.device = "interp"});
  return out.values();
}

LaunchReport gReport;  // what the last launchAverage did

// Launches the average on `device` directly (each HipDevice object is a process's worth of
// state: its own modules, the disk cache shared), on `stream` (null: the null stream).
std::vector<double> launchAverage(hip::HipDevice& device, const Inputs& in, const Tensor& out, void* stream = nullptr) {
  expectAverage(in.a, in.b, out);
  gReport = device.launch(gLaunching.kernel, {gLaunching.tensors, kGrid, {}, {}, 0, stream});
  CHECK_MESSAGE(!gReport.fellBack(), gReport.fallbackReason, " / ", gLaunching.failure);
  return out.values();
}

size_t codeObjectFiles(const fs::path& dir) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().extension() == ".hsaco";
  return n;
}

// Elements of `got` farther than `tolerance` (relative) from `want`; a NaN (unwritten) counts.
size_t differing(const Tensor& got, const Tensor& want, double tolerance) {
  std::vector<double> g = got.values(), w = want.values();
  REQUIRE(g.size() == w.size());
  size_t n = 0;
  for (size_t i = 0; i < g.size(); ++i) n += !(std::abs(g[i] - w[i]) <= tolerance * (1 + std::abs(w[i])));
  return n;
}

}  // namespace

// Makes the fake runtime's launches run simulateLaunch.
void simulateLaunches() {
  reinterpret_cast<void (*)(TjFakeHipKernel)>(fakeSymbol("tjFakeHipSetKernel"))(simulateLaunch);
}

TEST_CASE("fake hip: the runtime is the fake: an MI300X (gfx942), an RX 7900 XTX (gfx1100), an MI250X (gfx90a), an MI355X (gfx950)") {
  REQUIRE_MESSAGE(hip::status().available, hip::status().reason);
  CHECK(hip::status().devices == 4);
  hip::DeviceInfo mi300 = hip::deviceInfo(0), navi = hip::deviceInfo(1), mi250 = hip::deviceInfo(2),
                  mi355 = hip::deviceInfo(3);
  CHECK(mi250.arch() == "gfx90a");
  CHECK(mi250.warpSize == 64);
  CHECK(mi355.arch() == "gfx950");
  CHECK(mi300.targetId == "gfx942:sramecc+:xnack-");
  CHECK(mi300.arch() == "gfx942");
  CHECK(mi300.warpSize == 64);
  CHECK(mi300.multiprocessors == 304);
  CHECK(navi.arch() == "gfx1100");
  CHECK(navi.warpSize == 32);
  CHECK(selectDevice("hip:1").name() == "hip:1");
  CHECK_THROWS_WITH_AS(selectDevice("hip:4"), doctest::Contains("no device 'hip:4'; there are: hip:0 (AMD Instinct MI300X"),
                       Error);
  CHECK_THROWS_WITH_AS(selectDevice("hip:x"), doctest::Contains("'hip:x' is not 'hip' or 'hip:N'"), Error);
}

TEST_CASE("fake hip: the layout target comes from the gfx target, the wave size and the device's limits") {
  hip::DeviceInfo d{.name = "MI250X", .targetId = "gfx90a:sramecc+:xnack-", .warpSize = 64, .maxThreadsPerBlock = 1024,
                    .sharedPerBlock = 64 * 1024};
  CHECK(hip::targetFor(d).name == "gfx942");  // CDNA 2 multiplies on the same MFMA shape
  d.targetId = "gfx1151";
  d.warpSize = 32;
  d.maxThreadsPerBlock = 256;
  layout::Target apu = hip::targetFor(d);
  CHECK(apu.name == "gfx1100");
  CHECK(apu.maxWorkgroupThreads == 256);
  CHECK(apu.warpsPerProgram <= 8);
  d.warpSize = 64;
  CHECK_THROWS_WITH_AS(hip::targetFor(d), doctest::Contains("runs waves of 64; tilejit's gfx1100 kernels need 32"),
                       Unsupported);
  d.targetId = "gfx1030";
  CHECK_THROWS_WITH_AS(hip::targetFor(d), doctest::Contains("amdgpu: unsupported: gfx1030; tilejit runs CDNA 2-4"),
                       Unsupported);
}

TEST_CASE("fake hip: a launch passes the kernel its memory and parameters on each device: the interpreter's results") {
  test::ScopedEnv cache("TILEJIT_CACHE", "0");
  Inputs in;
  const std::vector<double> expected = expectedAverage(in);
  for (const char* name : {"hip:0", "hip:1"}) {
    CAPTURE(name);
    hip::HipDevice device(name);
    TjFakeHipCounts before = counts();
    CHECK(launchAverage(device, in, samples::poisoned({kRows, kCols})) == expected);
    CHECK(gReport.cache == jit::CacheSource::compiled);
    CHECK(gReport.target == (std::string(name) == "hip:0" ? "gfx942" : "gfx1100"));
    CHECK(gLaunching.target == (std::string(name) == "hip:0" ? "gfx942" : "gfx1100"));
    CHECK(gReport.kernelMs > 0);  // the fake's events time the simulated kernel on the host
    TjFakeHipCounts after = counts();
    CHECK(after.moduleLoads == before.moduleLoads + 1);
    CHECK(after.launches == before.launches + 1);
    CHECK(after.uploads == before.uploads + 3);      // each tensor, the poisoned output too
    CHECK(after.downloads == before.downloads + 1);  // the output only
  }
  // Through run(), as the samples launch.
  Tensor out = samples::poisoned({kRows, kCols});
  expectAverage(in.a, in.b, out);
  CHECK(average().launch(kGrid, in.a, in.b, out, {.device = "hip"}) == "hip");
  CHECK(out.values() == expected);
}

TEST_CASE("fake hip: a launch on a stream makes its copies, kernel, events and wait there") {
  Inputs in;
  const std::vector<double> expected = expectedAverage(in);
  hip::HipDevice device("hip:1");
  for (void* stream : {reinterpret_cast<void*>(uintptr_t{0x7170}), static_cast<void*>(nullptr)}) {
    CAPTURE(stream);
    CHECK(launchAverage(device, in, samples::poisoned({kRows, kCols}), stream) == expected);
    std::string off = callsOffStream(streams(), stream);
    CHECK_MESSAGE(off.empty(), "not on the stream: ", off);
  }
}

TEST_CASE("fake hip: a kDLROCM tensor is used in its producer's device memory on hip:1, with no copy") {
  Inputs in;
  const std::vector<double> expected = expectedAverage(in);
  const size_t bytes = size_t(kRows * kCols) * sizeof(float);
  Tensor poison = samples::poisoned({kRows, kCols});
  hip::check(hip::functions().hipSetDevice(1), "hipSetDevice");
  hip::DeviceMemory aMemory(bytes), bMemory(bytes), outMemory(bytes);  // another library's allocations, on hip:1
  aMemory.upload(in.a.data(), bytes);
  bMemory.upload(in.bStorage.data(), bytes);
  outMemory.upload(poison.data(), bytes);
  auto at = [](const hip::DeviceMemory& m) { return reinterpret_cast<void*>(uintptr_t(m.address())); };
  constexpr DLDataType f32Code{kDLFloat, 32, 1};
  constexpr DLDevice gpu{kDLROCM, 1};
  test::DLPackProducer aProducer(at(aMemory), f32Code, {kRows, kCols}, {}, 0, gpu),
      bProducer(at(bMemory), f32Code, {kRows, kCols}, {1, kRows}, 0, gpu),
      outProducer(at(outMemory), f32Code, {kRows, kCols}, {}, 0, gpu);
  {
    Tensor a = Tensor::fromDLPack(aProducer.versioned()), b = Tensor::fromDLPack(bProducer.versioned()),
           out = Tensor::fromDLPack(outProducer.versioned());
    expectAverage(a, b, out);
    TjFakeHipCounts before = counts();
    CHECK(average().launch(kGrid, a, b, out, {.device = "hip:1"}) == "hip:1");
    CHECK(counts().uploads == before.uploads);  // the kernel ran on the producer's memory
    CHECK(counts().allocations == before.allocations);
    std::vector<float> got(size_t(kRows * kCols));
    outMemory.download(got.data(), bytes);
    CHECK(std::vector<double>(got.begin(), got.end()) == expected);
    DLManagedTensorVersioned* exported = out.toDLPack();
    CHECK(exported->dl_tensor.data == at(outMemory));
    CHECK(exported->dl_tensor.device.device_type == kDLROCM);
    CHECK(exported->dl_tensor.device.device_id == 1);
    exported->deleter(exported);
  }
  CHECK(outProducer.deleted() == 1);
}

TEST_CASE("fake hip: a kDLROCM tensor outside the runtime's memory, on another device or past its allocation, is an Error") {
  std::vector<float> host(16, 1.0f);
  hip::check(hip::functions().hipSetDevice(0), "hipSetDevice");
  hip::DeviceMemory onHip0(64);
  void* device = reinterpret_cast<void*>(uintptr_t(onHip0.address()));
  constexpr DLDataType f32Code{kDLFloat, 32, 1};
  struct Case {
    const char* what;
    void* data;
    int deviceId;
    std::vector<int64_t> shape;
    std::string expected;
  };
  for (const Case& c : {Case{"host memory", host.data(), 0, {4, 4},
                             "are not memory the runtime knows (hip: hipMemGetAddressRange failed: "
                             "hipErrorInvalidDevicePointer (17))"},
                        Case{"another device's", device, 1, {4, 4}, "are hip:0's memory, not hip:1's"},
                        Case{"past the allocation", device, 0, {5, 4}, "reach past their allocation's 64 bytes"}}) {
    CAPTURE(std::string(c.what));
    test::DLPackProducer producer(c.data, f32Code, c.shape, {}, 0, {kDLROCM, c.deviceId});
    DLManagedTensorVersioned* m = producer.versioned();
    std::string error = test::errorOf([&] { Tensor::fromDLPack(m); });
    CHECK_MESSAGE(error.find(fmt::format("Tensor::fromDLPack: the tensor is in hip:{}'s memory, which tilejit cannot "
                                         "use here: hip: the ",
                                         c.deviceId)) != std::string::npos,
                  error);
    CHECK_MESSAGE(error.find(c.expected) != std::string::npos, error);
    CHECK(producer.deleted() == 0);
    m->deleter(m);
  }
}

TEST_CASE("fake hip: an empty kDLROCM tensor is imported whatever its pointer") {
  constexpr DLDataType f32Code{kDLFloat, 32, 1};
  test::DLPackProducer producer(nullptr, f32Code, {0, 4}, {}, 0, {kDLROCM, 0});
  Tensor empty = Tensor::fromDLPack(producer.versioned());
  CHECK(empty.numel() == 0);
  CHECK(empty.dim(1) == 4);
}

TEST_CASE("fake hip: a second process loads the code object from disk, without LLVM") {
  test::ScopedEnv cache("TILEJIT_CACHE_DIR", test::scratchDir("fake_hip", "code_objects").c_str());
  fs::path dir = std::getenv("TILEJIT_CACHE_DIR");
  Inputs in;
  const std::vector<double> expected = expectedAverage(in);
  hip::HipDevice first("hip"), second("hip");
  TjFakeHipCounts start = counts();
  CHECK(launchAverage(first, in, samples::poisoned({kRows, kCols})) == expected);
  CHECK(gReport.cache == jit::CacheSource::compiled);
  CHECK(codeObjectFiles(dir) == 1);
  CHECK(launchAverage(first, in, samples::poisoned({kRows, kCols})) == expected);
  CHECK(gReport.cache == jit::CacheSource::memory);
  CHECK(launchAverage(second, in, samples::poisoned({kRows, kCols})) == expected);
  CHECK(gReport.cache == jit::CacheSource::disk);
  CHECK(counts().moduleLoads == start.moduleLoads + 2);
  CHECK(codeObjectFiles(dir) == 1);
}

TEST_CASE("fake hip: a cached code object for another processor is reported, rebuilt and replaced") {
  test::ScopedEnv cache("TILEJIT_CACHE_DIR", test::scratchDir("fake_hip", "other_arch").c_str());
  Inputs in;
  const std::vector<double> expected = expectedAverage(in);
  expectAverage(in.a, in.b, samples::poisoned({kRows, kCols}));
  // hip:1's (gfx1100) kernel written under hip:0's (gfx942) key: the runtime refuses it.
  hip::DeviceInfo mi300 = hip::deviceInfo(0);
  layout::Target gfx942 = hip::targetFor(mi300), gfx1100 = hip::targetFor(hip::deviceInfo(1));
  std::vector<bool> facts = {false, false, false};
  gpu::KernelLoweringOptions options;
  options.vectorTensors = facts;
  gpu::KernelFunction f = gpu::lowerWithinCodeBudget(gLaunching.kernel, gfx1100, options);
  DriverBinary wrong{.params = f.params, .prints = f.prints, .faultParam = f.faultParam,
                     .workgroupSize = f.workgroupSize, .sharedBytes = f.sharedBytes(),
                     .entry = llvmgpu::entryName(f.name), .image = amdgpu::compileCodeObject(f, "gfx1100")};
  for (gpu::KParam& p : wrong.params) p.name.clear();
  jit::ArtifactStore store(std::getenv("TILEJIT_CACHE_DIR"));
  jit::ArtifactKey key = hip::codeObjectKey(ir::semanticHash(gLaunching.kernel), mi300, gfx942, facts,
                                            hip::comgr::toolchainFor("gfx942").name());
  REQUIRE(store.write(key, hip::encodeCodeObjectBinary(wrong)));
  test::CaptureLog log;
  hip::HipDevice device("hip:0");
  CHECK(launchAverage(device, in, samples::poisoned({kRows, kCols})) == expected);
  CHECK(gReport.cache == jit::CacheSource::compiled);
  CHECK_MESSAGE(log.text().find("hipModuleLoadData failed: hipErrorNoBinaryForGpu (209)") != std::string::npos,
                log.text());
  hip::HipDevice next("hip:0");
  CHECK(launchAverage(next, in, samples::poisoned({kRows, kCols})) == expected);
  CHECK(gReport.cache == jit::CacheSource::disk);  // replaced by the rebuilt one
}

TEST_CASE("fake hip: Tensor::on(\"hip\") keeps tensors in device memory across launches") {
  test::ScopedEnv cache("TILEJIT_CACHE", "0");
  Inputs in;
  const std::vector<double> expected = expectedAverage(in);
  Tensor a = in.a.on("hip"), out = samples::poisoned({kRows, kCols}).on("hip");
  expectAverage(a, in.b, out);
  REQUIRE(average().launch(kGrid, a, in.b, out, {.device = "hip"}) == "hip");
  TjFakeHipCounts before = counts();
  REQUIRE(average().launch(kGrid, a, in.b, out, {.device = "hip"}) == "hip");
  TjFakeHipCounts after = counts();
  CHECK(after.uploads == before.uploads + 1);  // b only: a and out stay on the device
  CHECK(after.downloads == before.downloads);  // out is read back only when the host reads it
  CHECK(out.values() == expected);
}

TEST_CASE("fake hip: a launch the runtime refuses runs on the CPU, saying why") {
  test::ScopedEnv cache("TILEJIT_CACHE", "0");
  Inputs in;
  Tensor out = samples::poisoned({kRows, kCols});
  expectAverage(in.a, in.b, out);
  gLaunching.refuse = true;
  hip::HipDevice device("hip");
  LaunchReport report = device.launch(gLaunching.kernel, {gLaunching.tensors, kGrid});
  gLaunching.refuse = false;
  CHECK(report.device == "cpu");
  CHECK_MESSAGE(report.fallbackReason.find("hip: hipModuleLaunchKernel failed: hipErrorLaunchOutOfResources (701)") !=
                    std::string::npos,
                report.fallbackReason);
  CHECK(out.values() == expectedAverage(in));
}

TEST_CASE("fake hip: a kernel's prints and a failed check come back from the device as from the interpreter") {
  test::ScopedEnv cache("TILEJIT_CACHE", "0");
  Tensor t = Tensor::zeros({2, 8});
  t.setItem(13, 7);  // program 1, element [0, 5]: the one the check fails at
  auto body = [&](Program& p) {
    Tile x = p.read(t, {1, 8}).at({p.id(0), 0}) + 0.5;
    p.print("x", x);
    p.check(x < 1, "x below 1");
  };
  const std::vector<int64_t> grid = {2};
  auto linesOn = [&](const std::string& device, std::string& error, void* stream = nullptr) {
    std::vector<std::string> lines;
    TracedKernel traced = tj::trace(grid, body, {.name = "fake_hip_print_check"});
    gLaunching.kernel = *traced.kernel;
    gLaunching.tensors = {t.launchArg()};
    try {
      selectDevice(device).launch(*traced.kernel, {gLaunching.tensors, grid,
                                                   [&](const std::string& l) { lines.push_back(l); }, {}, 0, stream});
    } catch (const Error& e) {
      error = e.what();
    }
    return lines;
  };
  std::string interpError, hipError;
  std::vector<std::string> expected = linesOn("interp", interpError), printed = linesOn("hip:0", hipError);
  CHECK(printed == expected);
  CHECK(printed.size() == 2);
  CHECK_MESSAGE(hipError.find("'x below 1' is false in program (1) at element [0, 5] of kernel 'fake_hip_print_check' on hip") !=
                    std::string::npos,
                hipError, " / ", gLaunching.failure);
  CHECK(interpError.find("'x below 1' is false in program (1) at element [0, 5]") != std::string::npos);
  // On a stream, the print and fault buffers are zeroed and read back there too.
  void* stream = reinterpret_cast<void*>(uintptr_t{0x8180});
  std::string streamError;
  CHECK(linesOn("hip:0", streamError, stream) == expected);
  CHECK(streamError == hipError);
  CHECK(streams().zero == stream);
  std::string off = callsOffStream(streams(), stream);
  CHECK_MESSAGE(off.empty(), "not on the stream: ", off);
}

// The gemm sample on `device` against the interpreter, at a size whose rows are 16-byte vectors
// and not multiples of the blocks, with the hip tuning space's first blocks (8 waves).
void checkGemm(const char* device, DType dtype) {
  CAPTURE(device);
  CAPTURE(dtypeName(dtype));
  test::ScopedEnv cache("TILEJIT_CACHE", "0");
  const int64_t m = 70, n = 72, k = 40;
  Tensor a = Tensor::random({m, k}, 81, dtype), b = Tensor::random({k, n}, 82, dtype);
  Tensor expected = samples::poisoned({m, n}), c = samples::poisoned({m, n});
  samples::GemmBlocks blocks = samples::GemmBlocks::from(samples::gemmTuneSpace("hip").at(0));
  samples::gemm(a, b, expected, {.device = "interp"}, blocks);
  {
    CaptureTraces capture;
    samples::gemm(a, b, c, {}, blocks);
    REQUIRE(capture.kernels().size() == 1);
    gLaunching.kernel = capture.kernels()[0];
    gLaunching.tensors = {a.launchArg(), b.launchArg(), c.launchArg()};
  }
  LaunchWatch launches;
  CHECK(samples::gemm(a, b, c, {.device = device}, blocks) == device);
  CHECK_MESSAGE(!launches.last().fellBack(), launches.last().fallbackReason, " / ", gLaunching.failure);
  CHECK(differing(c, expected, 1e-5) == 0);  // f32 sums in another order
}

TEST_CASE("fake hip: the f16 and bf16 gemm sample kernels on MFMA (gfx942) and WMMA (gfx1100): the interpreter's results") {
  for (DType dtype : {f16, bf16})
    for (const char* device : {"hip", "hip:1"}) checkGemm(device, dtype);
}

TEST_CASE("fake hip: the causal f16 attention sample kernel on both devices: the interpreter's results") {
  test::ScopedEnv cache("TILEJIT_CACHE", "0");
  const Shape shape = {1, 2, 37, 64};
  Tensor q = Tensor::random(shape, 91, f16), k = Tensor::random(shape, 92, f16), v = Tensor::random(shape, 93, f16);
  Tensor expected = samples::poisoned(shape);
  samples::AttentionBlocks blocks = samples::AttentionBlocks::from(samples::attentionTuneSpace("hip").at(0));
  samples::attention(q, k, v, expected, true, {.device = "interp"}, blocks);
  for (const char* device : {"hip", "hip:1"}) {
    CAPTURE(device);
    Tensor o = samples::poisoned(shape);
    {
      CaptureTraces capture;
      samples::attention(q, k, v, o, true, {}, blocks);
      REQUIRE(capture.kernels().size() == 1);
      gLaunching.kernel = capture.kernels()[0];
      gLaunching.tensors = {q.launchArg(), k.launchArg(), v.launchArg(), o.launchArg()};
    }
    LaunchWatch launches;
    CHECK(samples::attention(q, k, v, o, true, {.device = device}, blocks) == device);
    CHECK_MESSAGE(!launches.last().fellBack(), launches.last().fallbackReason, " / ", gLaunching.failure);
    CHECK(differing(o, expected, 1e-5) == 0);  // exp within an ulp of f32 on both
  }
}

// Whether the user's ROCm comgr loads (Debian's libamd-comgr2, which tools/dev installs);
// otherwise says "comgr skipped: <why>", failing instead when TILEJIT_REQUIRE_COMGR=1 (as in CI).
bool comgrAvailable() {
  if (hip::comgr::status().available) return true;
  const char* require = std::getenv("TILEJIT_REQUIRE_COMGR");
  if (require && std::string(require) == "1") FAIL("comgr is required here: " << hip::comgr::status().reason);
  MESSAGE("comgr skipped: " << hip::comgr::status().reason);
  return false;
}

// The fake's devices and their processors, hip:N being kProcessors[N].
constexpr const char* kProcessors[] = {"gfx942", "gfx1100", "gfx90a"};

TEST_CASE("fake hip: comgr links the code objects of the processors it knows, LLD the others") {
  if (!comgrAvailable()) return;
  test::ScopedEnv cache("TILEJIT_CACHE", "0");  // each code object compiled and linked now
  const hip::comgr::Status& comgr = hip::comgr::status();
  MESSAGE("comgr ", comgr.version, " (", comgr.library, ") knows ", comgr.processors.size(), " processors");
  Inputs in;
  const std::vector<double> expected = expectedAverage(in);
  std::vector<std::string> linked;  // the processors comgr linked for
  for (int device = 0; device < 3; ++device) {
    const std::string arch = kProcessors[device];
    CAPTURE(arch);
    hip::comgr::Toolchain toolchain = hip::comgr::toolchainFor(arch);
    bool knows = hip::comgr::knows(arch);
    CHECK_FALSE(toolchain.comgrCompiles);  // LLVM knows all three
    CHECK(toolchain.compiler == amdgpu::llvmName());
    CHECK(toolchain.comgrLinks == knows);
    CHECK(toolchain.linker == (knows ? "comgr " + comgr.version : "lld"));
    CHECK_MESSAGE(toolchain.why == (knows ? comgr.library + " knows " : "comgr " + comgr.version + " (" + comgr.library +
                                                                         ") does not know ") + arch,
                  toolchain.why);
    test::ScopedEnv only("TILEJIT_AMD_LINKER", "comgr");
    hip::HipDevice hipN(fmt::format("hip:{}", device));
    if (!knows) {  // asked for, comgr cannot link it: the CPU runs it, saying why
      Tensor out = samples::poisoned({kRows, kCols});
      expectAverage(in.a, in.b, out);
      LaunchReport r = hipN.launch(gLaunching.kernel, {gLaunching.tensors, kGrid, {}, {}, 0, nullptr});
      CHECK(r.fellBack());
      CHECK_MESSAGE(r.fallbackReason.find("hip: TILEJIT_AMD_LINKER=comgr, but comgr " + comgr.version + " (" + comgr.library +
                                          ") does not know " + arch) != std::string::npos,
                    r.fallbackReason);
      CHECK(out.values() == expected);
      continue;
    }
    linked.push_back(arch);
    TjFakeHipCounts before = counts();
    CHECK(launchAverage(hipN, in, samples::poisoned({kRows, kCols})) == expected);
    CHECK(gReport.cache == jit::CacheSource::compiled);
    CHECK(counts().moduleLoads == before.moduleLoads + 1);
  }
  // Debian's comgr 5.2 knows gfx90a (not gfx942 or gfx1100): one of the three at least.
  CHECK(!linked.empty());
  std::printf("amdgpu: comgr %s (%s) linked the code objects the fake runtime ran for %s; LLD links the others\n",
              comgr.version.c_str(), comgr.library.c_str(), fmt::format("{}", fmt::join(linked, ", ")).c_str());
}

TEST_CASE("fake hip: comgr's code object is a shared ELF for the processor with the kernel's descriptor, and its errors carry its log") {
  if (!comgrAvailable()) return;
  if (!hip::comgr::knows("gfx90a")) {
    MESSAGE("skipped: comgr ", hip::comgr::status().version, " does not know gfx90a");
    return;
  }
  Inputs in;
  expectAverage(in.a, in.b, samples::poisoned({kRows, kCols}));
  gpu::KernelLoweringOptions options;
  options.vectorTensors = {false, false, false};
  gpu::KernelFunction f = gpu::lowerWithinCodeBudget(gLaunching.kernel, hip::targetFor(hip::deviceInfo(2)), options);
  std::vector<char> codeObject = hip::comgr::linkCodeObject(amdgpu::compileObject(f, "gfx90a"), "gfx90a");
  Elf64_Ehdr h;
  REQUIRE(codeObject.size() > sizeof h);
  std::memcpy(&h, codeObject.data(), sizeof h);
  CHECK(h.e_type == ET_DYN);
  CHECK(h.e_machine == 224);           // EM_AMDGPU
  CHECK((h.e_flags & 0xff) == 0x03f);  // EF_AMDGPU_MACH_AMDGCN_GFX90A
  hip::check(hip::functions().hipSetDevice(2), "hipSetDevice");
  CHECK_NOTHROW(hip::Module(codeObject, llvmgpu::entryName(f.name)));  // the fake finds <kernel>.kd

  std::vector<char> notAnObject(256, 'x');
  std::string error = test::errorOf([&] { hip::comgr::linkCodeObject(notAnObject, "gfx90a"); });
  CHECK_MESSAGE(error.find("hip: comgr " + hip::comgr::status().version + " could not link the code object for gfx90a: ") !=
                    std::string::npos,
                error);
  CHECK_MESSAGE(error.find("its log: ") != std::string::npos, error);
  CHECK_MESSAGE(error.find("its log: (none)") == std::string::npos, error);  // comgr's own words
  CHECK_THROWS_WITH_AS(hip::comgr::linkCodeObject(notAnObject, "gfx1"), doctest::Contains("does not know gfx1"),
                       Unsupported);
}

TEST_CASE("fake hip: an MI355X (gfx950, which LLVM 19 does not know) runs what comgr compiles from LLVM's bitcode") {
  REQUIRE(hip::deviceInfo(3).arch() == "gfx950");
  CHECK_FALSE(amdgpu::llvmKnows("gfx950"));
  const hip::comgr::Status& comgr = hip::comgr::status();
  bool knows = hip::comgr::knows("gfx950");
  Inputs in;
  const std::vector<double> expected = expectedAverage(in);
  if (!knows) {  // Debian's comgr 5.2, or none: the CPU runs it, saying why
    REQUIRE_MESSAGE(std::getenv("TILEJIT_FAKE_COMGR") == nullptr, "the stand-in comgr did not load: ", comgr.reason);
    Tensor out = samples::poisoned({kRows, kCols});
    expectAverage(in.a, in.b, out);
    hip::HipDevice mi355("hip:3");
    LaunchReport r = mi355.launch(gLaunching.kernel, {gLaunching.tensors, kGrid, {}, {}, 0, nullptr});
    CHECK(r.fellBack());
    CHECK_MESSAGE(r.fallbackReason.find("amdgpu: " + amdgpu::llvmName() + " does not know gfx950, and there is no comgr that does: ") !=
                      std::string::npos,
                  r.fallbackReason);
    CHECK(out.values() == expected);
    return;
  }
  test::ScopedEnv cache("TILEJIT_CACHE", "0");
  hip::comgr::Toolchain toolchain = hip::comgr::toolchainFor("gfx950");
  CHECK(toolchain.comgrCompiles);
  CHECK(toolchain.comgrLinks);
  CHECK(toolchain.name() == "comgr " + comgr.version + " + comgr " + comgr.version);
  CHECK(toolchain.why == amdgpu::llvmName() + " does not know gfx950; " + comgr.library + " knows gfx950");
  hip::HipDevice mi355("hip:3");
  CHECK(launchAverage(mi355, in, samples::poisoned({kRows, kCols})) == expected);
  CHECK(gReport.cache == jit::CacheSource::compiled);
  for (DType dtype : {f16, bf16}) checkGemm("hip:3", dtype);  // MFMA
  if (std::getenv("TILEJIT_FAKE_COMGR")) {  // the stand-in counts its objects: every one released
    void* fake = dlopen(comgr.library.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    auto live = fake ? reinterpret_cast<size_t (*)()>(dlsym(fake, "tjFakeComgrLiveObjects")) : nullptr;
    bool found = live != nullptr;
    REQUIRE_MESSAGE(found, "the stand-in comgr ", comgr.library, " has no tjFakeComgrLiveObjects");
    CHECK(live() == 0);
    dlclose(fake);
  }
  std::printf("amdgpu: comgr %s (%s) compiled and linked gfx950's code objects (LLVM 19 does not know it), which the fake runtime ran\n",
              comgr.version.c_str(), comgr.library.c_str());
}

TEST_CASE("fake hip: TILEJIT_AMD_LINKER=lld keeps LLD, and another value is an error naming it") {
  {
    test::ScopedEnv lld("TILEJIT_AMD_LINKER", "lld");
    hip::comgr::Toolchain toolchain = hip::comgr::toolchainFor("gfx90a");
    CHECK_FALSE(toolchain.comgrLinks);
    CHECK(toolchain.why == "TILEJIT_AMD_LINKER=lld");
    Inputs in;
    hip::HipDevice mi250("hip:2");
    CHECK(launchAverage(mi250, in, samples::poisoned({kRows, kCols})) == expectedAverage(in));
  }
  test::ScopedEnv bogus("TILEJIT_AMD_LINKER", "ld.gold");
  CHECK_THROWS_WITH_AS(hip::comgr::toolchainFor("gfx90a"),
                       "TILEJIT_AMD_LINKER=ld.gold: expected lld or comgr (or unset: comgr where it knows the GPU)", Error);
}

}  // namespace tj::fakehip

// The process's runtime is the fake, whatever the environment says.
int main(int argc, char** argv) {
  setenv("TILEJIT_LIBHIP", TILEJIT_FAKE_LIBHIP, 1);
  tj::fakehip::simulateLaunches();
  return doctest::Context(argc, argv).run();
}
