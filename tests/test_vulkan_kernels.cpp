// Tile kernels on the Vulkan device (lavapipe in CI) against the interpreter: every
// module the device generates passes spirv-val, and a kernel the Vulkan path cannot
// run yet falls back to the CPU with the right result. Without Vulkan each case says
// why and passes.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "devices/vulkan/vulkan_device.hpp"
#include "devices/vulkan/vulkan_runtime.hpp"
#include "dsl/tilejit.hpp"
#include "ir/error.hpp"
#include "layout/infer_layouts.hpp"
#include "lower/gpu/lower_to_kernel_ir.hpp"
#include "lower/spirv/print_kernel_ir.hpp"
#include "tests/reference.hpp"
#include "tests/support.hpp"
#include "samples/harness.hpp"
#include "samples/kernels.hpp"

namespace tj::vktest {

namespace {

int gRanOnVulkan = 0;

// Runs `sample` on the interpreter and on Vulkan (each into a fresh poisoned output of
// `outShape`), checks the generated module and compares within `maxUlps`.
void compareWithInterpreter(const Shape& outShape, int64_t maxUlps,
                            const std::function<std::string(const Tensor& out, const RunOptions&)>& sample) {
  Tensor expected = samples::poisoned(outShape), actual = samples::poisoned(outShape);
  sample(expected, {.device = "interp"});
  LaunchWatch launches;
  std::string ran = sample(actual, {.device = "vulkan"});
  const LaunchReport& info = launches.last();
  CHECK_MESSAGE(!info.fellBack(), info.fallbackReason);
  CHECK(ran == info.device);
  if (!info.fellBack()) {
    ++gRanOnVulkan;
    REQUIRE(info.spirv);
    test::checkSpirvValid(*info.spirv);
  }
  std::vector<double> e = expected.values(), a = actual.values();
  REQUIRE(e.size() == a.size());
  int64_t worst = 0;
  for (size_t i = 0; i < e.size(); ++i) worst = std::max(worst, ref::ulpDistance(f32, e[i], a[i]));
  if (worst > maxUlps) for (size_t i = 0; i < std::min<size_t>(e.size(), 12); ++i) MESSAGE(i << ": " << e[i] << " vs " << a[i]);
  CHECK_MESSAGE(worst <= maxUlps, "shape " << outShape.size() << "-d, first " << outShape[0]);
}

}  // namespace

TEST_CASE("vulkan kernels: vector_add at an odd size matches the interpreter exactly") {
  if (!test::vulkanAvailable()) return;
  Tensor a = Tensor::random({100003}, 1), b = Tensor::random({100003}, 2);
  compareWithInterpreter({100003}, 0, [&](const Tensor& out, const RunOptions& o) { return samples::vectorAdd(a, b, out, o); });
}

TEST_CASE("vulkan kernels: fused at an odd size matches the interpreter exactly") {
  if (!test::vulkanAvailable()) return;
  Tensor a = Tensor::random({5001}, 3), b = Tensor::random({5001}, 4), c = Tensor::random({5001}, 5);
  compareWithInterpreter({5001}, 0, [&](const Tensor& out, const RunOptions& o) { return samples::fused(a, b, c, out, o); });
}

TEST_CASE("vulkan kernels: softmax at odd sizes is within a few ulps of the interpreter") {
  if (!test::vulkanAvailable()) return;
  for (Shape shape : {Shape{7, 5}, Shape{33, 29}}) {
    Tensor x = Tensor::random(shape, 6, DType::f32, -4, 4);
    compareWithInterpreter(shape, 8, [&](const Tensor& out, const RunOptions& o) { return samples::softmax(x, out, o); });
  }
  MESSAGE(gRanOnVulkan << " sample launches ran on Vulkan");
}

TEST_CASE("vulkan kernels: an unsupported kernel falls back to the CPU with the right result") {
  Tensor a = Tensor::random({64, 48}, 7), b = Tensor::random({48, 40}, 8);
  Tensor expected = samples::poisoned({64, 40}), actual = samples::poisoned({64, 40});
  samples::gemm(a, b, expected, {.device = "interp"});
  LaunchWatch launches;
  std::string ran = samples::gemm(a, b, actual, {.device = "vulkan"});
  CHECK(ran != "vulkan");
  CHECK(launches.last().fellBack());
  MESSAGE("gemm ran on " << ran << ": " << launches.last().fallbackReason);
  std::vector<double> e = expected.values(), v = actual.values();
  for (size_t i = 0; i < e.size(); ++i) REQUIRE(std::abs(e[i] - v[i]) <= 1e-4 * (1 + std::abs(e[i])));
}

TEST_CASE("vulkan kernels: integer division by zero is the CPU's error, raised on Vulkan without a fallback") {
  if (!test::vulkanAvailable()) return;
  Tensor a = Tensor::from({5}, {7, 8, 9, 10, 11}, i32), b = Tensor::from({5}, {1, 2, 0, 4, 5}, i32);
  Tensor out = Tensor::zeros({5}, i32);
  auto divide = [&](Program& p) { p.write(out, {5}).put(p.read(a, {5}).at({0}) % p.read(b, {5}).at({0}), {0}); };
  CHECK_THROWS_WITH_AS(run({1}, divide, {.name = "divide", .device = "vulkan"}),
                       doctest::Contains("vulkan: kernel 'divide': integer division or remainder by zero (at "), Error);
  b.setItem(2, 3);
  CHECK(run({1}, divide, {.name = "divide", .device = "vulkan"}) == "vulkan");
  CHECK(out.values() == std::vector<double>{0, 0, 0, 2, 1});
}

TEST_CASE("vulkan kernels: an in-place update of a small tile is applied once, whatever copies threads hold") {
  if (!test::vulkanAvailable()) return;
  Tensor t = Tensor::from({5}, {1, 2, 3, 4, 5});  // 5 elements over 32 threads: most hold copies
  CHECK(run({1}, [&](Program& p) { p.write(t, {5}).put(p.read(t, {5}).at({0}) + 10, {0}); },
            {.name = "increment", .device = "vulkan"}) == "vulkan");
  CHECK(t.values() == std::vector<double>{11, 12, 13, 14, 15});
}

TEST_CASE("vulkan kernels: an error after the dispatch propagates: the kernel is not run again elsewhere") {
  if (!test::vulkanAvailable()) return;
  Tensor t = Tensor::full({5}, 1.0);
  TracedKernel traced = tj::trace({1}, [&](Program& p) {
    Tile x = p.read(t, {5}).at({0}) + 1;
    p.print("x", x);
    p.write(t, {5}).put(x, {0});
  });
  std::vector<TensorArg> args = {t.launchArg()};
  std::vector<int64_t> grid = {1};
  auto failingSink = [](const std::string&) { throw Error("the print sink failed"); };
  CHECK_THROWS_WITH_AS(vulkan::VulkanDevice::instance("vulkan").launch(*traced.kernel, {args, grid, failingSink}),
                       "the print sink failed", Error);
  CHECK_MESSAGE(t.values() == std::vector<double>(5, 2.0), t.text());  // incremented once: no CPU rerun
}

TEST_CASE("vulkan kernels: every sample that lowers prints a module spirv-val accepts") {
  layout::Target target = layout::targetByName("vulkan");
  for (const std::string& name : samples::sampleNames()) {
    ir::Kernel k = samples::traceSample(name);
    std::vector<uint32_t> words;
    try {
      words = spirv::printSpirv(gpu::lowerToKernelIR(k, layout::inferLayouts(k, target), target));
    } catch (const Error& e) {
      MESSAGE(name << ": not on Vulkan yet: " << std::string(e.what()));
      CHECK(std::string(e.what()).find("unsupported") != std::string::npos);
      continue;
    }
    MESSAGE(name << ": " << words.size() << " words");
    test::checkSpirvValid(words);
  }
}

TEST_CASE("vulkan kernels: pipelines require the kernel IR's subgroup size, with full subgroups") {
  if (!test::vulkanAvailable()) return;
  Tensor x = Tensor::random({33, 29}, 9), out = samples::poisoned({33, 29});
  LaunchWatch launches;
  samples::softmax(x, out, {.device = "vulkan"});
  const LaunchReport& launch = launches.last();
  REQUIRE_MESSAGE(!launch.fellBack(), launch.fallbackReason);
  vk::DeviceInfo device = vk::listDevices().at(0);
  MESSAGE("subgroup size control " << device.subgroupSizeControl << " [" << device.minSubgroupSize << ", "
                                   << device.maxSubgroupSize << "], full subgroups " << device.computeFullSubgroups
                                   << "; requested " << launch.requiredSubgroupSize
                                   << std::string(launch.fullSubgroups ? " full" : ""));
  // A device of one subgroup size is not asked for it (the request would bound its workgroups).
  bool oneSize = device.minSubgroupSize == device.maxSubgroupSize;
  CHECK(launch.requiredSubgroupSize == (device.subgroupSizeControl && !oneSize ? device.subgroupSize : 0));
  CHECK(launch.fullSubgroups == (device.subgroupSizeControl && device.computeFullSubgroups));
}

TEST_CASE("vulkan: a module needing what the device lacks is unsupported, before any driver sees it") {
  Tensor x = Tensor::zeros({4, 64}, f16), out = Tensor::zeros({4}, f16);
  TracedKernel traced = tj::trace({1}, [&](Program& p) {
    p.write(out, {4}).put(p.read(x, {4, 64}).at({0, 0}).sum(1), {0});  // f16 sums across lanes
  });
  const layout::Target& target = layout::targetByName("vulkan");
  std::vector<uint32_t> words = spirv::printSpirv(
      gpu::lowerToKernelIR(*traced.kernel, layout::inferLayouts(*traced.kernel, target), target));
  vk::DeviceInfo full{.float16 = true, .int16 = true, .storage16 = true, .subgroupExtendedTypes = true, .int64 = true};
  CHECK_NOTHROW(vk::checkCapabilities(words, full));
  vk::DeviceInfo noExtendedTypes = full;
  noExtendedTypes.subgroupExtendedTypes = false;
  CHECK_THROWS_WITH_AS(vk::checkCapabilities(words, noExtendedTypes),
                       "vulkan: unsupported: the device lacks subgroup operations on 8/16/64-bit values", Error);
  vk::DeviceInfo noStorage16 = full;
  noStorage16.storage16 = false;
  CHECK_THROWS_WITH_AS(vk::checkCapabilities(words, noStorage16),
                       "vulkan: unsupported: the device lacks the StorageBuffer16BitAccess capability", Error);
}

TEST_CASE("vulkan: a subgroup size the device cannot guarantee is unsupported") {
  vk::DeviceInfo fixed{.subgroupSize = 32};
  CHECK(vulkan::subgroupRequest(fixed, 32, 128).size == 0);  // the default is the size: nothing to ask
  CHECK_THROWS_WITH_AS(vulkan::subgroupRequest(fixed, 16, 128),
                       doctest::Contains("unsupported: the kernel assumes subgroups of 16 but the device runs 32"), Error);
  vk::DeviceInfo ranged{.subgroupSize = 32, .subgroupSizeControl = true, .computeFullSubgroups = true,
                        .minSubgroupSize = 8, .maxSubgroupSize = 64, .maxComputeWorkgroupSubgroups = 16};
  vk::SubgroupRequest r = vulkan::subgroupRequest(ranged, 16, 128);
  CHECK(r.size == 16);
  CHECK(r.full);
  CHECK(!vulkan::subgroupRequest(ranged, 16, 24).full);  // not a whole number of subgroups
  CHECK_THROWS_WITH_AS(vulkan::subgroupRequest(ranged, 4, 128), doctest::Contains("outside the device's [8, 64]"),
                       Error);
  CHECK_THROWS_WITH_AS(vulkan::subgroupRequest(ranged, 8, 256), doctest::Contains("more than 16 subgroups"), Error);
  ranged.computeFullSubgroups = false;
  CHECK(!vulkan::subgroupRequest(ranged, 16, 128).full);
}

TEST_CASE("vulkan: scalar slots hold f64 bits, f32 bits in the low word (rounded to odd for f16/bf16), ints as i64") {
  CHECK(scalarSlot(DType::f64, {.f = 1.0 / 3}) == std::bit_cast<int64_t>(1.0 / 3));
  CHECK(scalarSlot(DType::f32, {.f = 0.1}) == int64_t(std::bit_cast<uint32_t>(0.1f)));
  CHECK(scalarSlot(DType::f16, {.f = -2.5}) == int64_t(std::bit_cast<uint32_t>(-2.5f)));
  // Just above an f16 tie: rounding to f32 to nearest would make it a tie (rounded down to
  // even on the device); rounded to odd it stays above.
  const double aboveTie = 1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  CHECK(scalarSlot(DType::f16, {.f = aboveTie}) ==
        int64_t(std::bit_cast<uint32_t>(float(1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -23)))));
  CHECK(scalarSlot(DType::bf16, {.f = 1e39}) == int64_t(std::bit_cast<uint32_t>(std::numeric_limits<float>::max())));
  const int64_t lowest = std::numeric_limits<int64_t>::min();
  CHECK(scalarSlot(DType::i64, {.i = lowest}) == lowest);
}

TEST_CASE("vulkan kernels: scalar parameters of every kind arrive whole") {
  if (!test::vulkanAvailable()) return;
  auto scalars = kernel("scalars", [](Program& p, const Tensor& floats, const Tensor& ints, Scalar<f64> a, Tile b,
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
  LaunchWatch launches;
  scalars.launch({1}, floats, ints, 1 + 0x1p-40, 0.1, 0.1, wide, {.device = "vulkan"});
  CHECK_MESSAGE(!launches.last().fellBack(), launches.last().fallbackReason);
  CHECK(floats.values() == std::vector<double>{1.0, double(0.1f), 0.0999755859375});
  CHECK(ints.values() == std::vector<double>{double(wide)});
}

TEST_CASE("vulkan tensors: on() and host() name why a tensor stays on the host") {
  Tensor t = Tensor::random({5}, 1);
  test::CaptureLog log;
  CHECK(t.on("cpu").sameView(t));
  CHECK(log.text().find("keeps the tensor on the host: the cpu device computes on host memory") != std::string::npos);
  CHECK(&t.host() == &t);
  if (vk::status().available) return;
  CHECK(t.on("vulkan").sameView(t));
  CHECK(log.text().find(vk::status().reason) != std::string::npos);
  MESSAGE("skipped the rest: " << vk::status().reason);
}

TEST_CASE("vulkan tensors: launches run on the device copies: host access downloads only what kernels wrote") {
  if (!test::vulkanAvailable()) return;
  const int64_t n = 10007;
  Tensor a = Tensor::random({n}, 11), b = Tensor::random({n}, 12);
  std::vector<double> av = a.values(), bv = b.values();
  TransferCounts before = transferCounts();
  Tensor da = a.on("vulkan"), db = b.on("vulkan"), out = samples::poisoned({n}).on("vulkan");
  TransferCounts uploaded = transferCounts();
  CHECK(uploaded.uploads == before.uploads + 3);
  CHECK(da.sameView(a));
  CHECK(a.on("vulkan").sameView(a));  // already there: nothing to copy
  CHECK(transferCounts().uploads == uploaded.uploads);
  for (int r = 0; r < 3; ++r) CHECK(samples::vectorAdd(da, db, out, {.device = "vulkan"}) == "vulkan");
  TransferCounts ran = transferCounts();
  CHECK(ran.uploads == uploaded.uploads);  // no host round trips between launches
  CHECK(ran.downloads == uploaded.downloads);
  std::vector<double> got = out.host().values();
  CHECK(transferCounts().downloads == ran.downloads + 1);
  int64_t wrong = 0;
  for (size_t i = 0; i < got.size(); ++i) wrong += got[i] != double(float(av[i] + bv[i]));
  CHECK(wrong == 0);
  CHECK(a.values() == av);  // an input: its copy was never newer
  CHECK(transferCounts().downloads == ran.downloads + 1);
}

TEST_CASE("vulkan tensors: host writes and other devices see the newest bytes") {
  if (!test::vulkanAvailable()) return;
  const int64_t n = 1001;
  Tensor x = Tensor::random({n}, 13).on("vulkan"), y = Tensor::random({n}, 14).on("vulkan");
  Tensor out = samples::poisoned({n}).on("vulkan"), again = samples::poisoned({n});
  samples::vectorAdd(x, y, out, {.device = "vulkan"});
  samples::vectorAdd(out, y, again, {.device = "interp"});  // reads what Vulkan wrote
  for (int64_t i = 0; i < n; ++i) REQUIRE(again.item(i) == float(out.item(i) + y.item(i)));
  x.setItem(0, 100.0);  // newer on the host: uploaded by the next Vulkan launch
  TransferCounts relaunch = transferCounts();
  samples::vectorAdd(x, y, out, {.device = "vulkan"});
  CHECK(out.item(0) == float(100.0 + y.item(0)));
  CHECK(transferCounts().uploads == relaunch.uploads + 1);  // only x: the interpreter only read y and out
  // A kernel Vulkan cannot run (a print inside a fold) falls back to the CPU on the host bytes.
  Tensor twice = samples::poisoned({n}).on("vulkan");
  LaunchWatch launches;
  std::string ran = run({cdiv(n, 64)}, [&](Program& p) {
    Index i = p.id(0);
    Tile sum = p.fold(0, 2, p.zeros({64}), [&](Index, Tile acc) {
      p.print("acc", acc);
      return acc + p.read(out, {64}).at({i});
    });
    p.write(twice, {64}).put(sum, {i});
  }, {.name = "twice", .device = "vulkan"});
  CHECK(ran == hostDevice().name());
  CHECK(selectDevice("vulkan").name() == "vulkan");  // the device stays the one asked for
  CHECK(launches.last().fallbackReason.find("print") != std::string::npos);
  for (int64_t i = 0; i < n; ++i) REQUIRE(twice.item(i) == 2 * out.item(i));
}

TEST_CASE("vulkan tensors: views share their storage's device copy") {
  if (!test::vulkanAvailable()) return;
  Tensor m = Tensor::random({29, 37}, 15, DType::f32, -4, 4), expected = samples::poisoned({37, 29});
  samples::softmax(m.transpose(), expected, {.device = "interp"});
  m.on("vulkan");
  Tensor out = samples::poisoned({37, 29}).on("vulkan");
  TransferCounts before = transferCounts();
  CHECK(samples::softmax(m.transpose(), out, {.device = "vulkan"}) == "vulkan");
  CHECK(transferCounts().uploads == before.uploads);
  std::vector<double> e = expected.values(), a = out.values();
  int64_t worst = 0;
  for (size_t i = 0; i < e.size(); ++i) worst = std::max(worst, ref::ulpDistance(f32, e[i], a[i]));
  CHECK(worst <= 8);
}

namespace {
// Random integers in [-2, 2] as f32.
Tensor smallIntegers(const Shape& shape, uint64_t seed) {
  std::vector<double> v = Tensor::random(shape, seed, f32, -2, 3).values();
  for (double& x : v) x = std::floor(x);
  return Tensor::from(shape, v);
}
}  // namespace

// Mesa's llvmpipe ends every loop of a shader once its loops ran 65535 iterations in total,
// silently; a fold past that must still give the right sums (on Vulkan or after a fallback).
TEST_CASE("vulkan kernels: a fold of dots past lavapipe's loop limit sums every block") {
  if (!test::vulkanAvailable()) return;
  struct Case { int64_t rows, depth, iters; };
  for (Case c : {Case{16, 64, 950}, Case{16, 64, 1000}, Case{2, 8, 70001}}) {
    CAPTURE(c.iters);
    // Small integers keep every sum exact in f32, whatever order the device adds in.
    Tensor q = smallIntegers({8, c.depth}, 11), kv = smallIntegers({c.rows * c.iters, c.depth}, 12);
    Tensor out = samples::poisoned({8, 1});
    LaunchWatch launches;
    std::string ran = run({1}, [&](Program& p) {
      auto Q = p.read(q, {8, c.depth});
      auto KV = p.read(kv, {c.rows, c.depth});
      Tile qb = Q.at({0, 0});
      Tile acc = p.fold(0, KV.blocks(0), p.zeros({8, 1}),
                        [&](Index j, Tile acc) { return acc + dot(qb, KV.at({j, 0}).transpose()).sum(1, true); });
      p.write(out, {8, 1}).put(acc, {0, 0});
    }, {.name = "fold_of_dots", .device = "vulkan"});
    const LaunchReport& info = launches.last();
    if (info.fellBack()) CHECK_MESSAGE(info.fallbackReason.find("65535") != std::string::npos, info.fallbackReason);
    MESSAGE("ran on " << ran << (info.fellBack() ? ": " + info.fallbackReason : ""));
    std::vector<double> qv = q.values(), kvv = kv.values(), got = out.values();
    std::vector<double> columnSums(size_t(c.depth), 0.0);
    for (size_t r = 0; r < size_t(c.rows * c.iters); ++r)
      for (size_t k = 0; k < size_t(c.depth); ++k) columnSums[k] += kvv[r * size_t(c.depth) + k];
    for (size_t i = 0; i < 8; ++i) {
      double want = 0;
      for (size_t k = 0; k < size_t(c.depth); ++k) want += qv[i * size_t(c.depth) + k] * columnSums[k];
      CHECK_MESSAGE(got[i] == want, "row " << i << ": " << got[i] << " instead of " << want);
    }
  }
}

// The same limit counts the loops of float remainders (one step per halving of x / y).
TEST_CASE("vulkan kernels: float remainders past lavapipe's loop limit are exact") {
  if (!test::vulkanAvailable()) return;
  std::vector<double> xs(8 * 4096), ys(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    xs[i] = (i % 2 ? -3e37 : 3e37) * (1 + double(i % 97) / 97);
    ys[i] = 1.1e-37 * (1 + double(i % 89) / 89);
  }
  Tensor x = Tensor::from({int64_t(xs.size())}, xs), y = Tensor::from({int64_t(ys.size())}, ys);
  auto remainders = [&](const std::string& device) {
    Tensor out = samples::poisoned({4096});
    LaunchWatch launches;
    std::string ran = run({1}, [&](Program& p) {
      auto X = p.read(x, {4096}), Y = p.read(y, {4096});
      Tile sum = p.fold(0, X.blocks(0), p.zeros({4096}), [&](Index j, Tile acc) { return acc + X.at({j}) % Y.at({j}); });
      p.write(out, {4096}).put(sum, {0});
    }, {.name = "remainders", .device = device});
    if (device == "vulkan") MESSAGE("ran on " << ran << ": " << launches.last().fallbackReason);
    return out.values();
  };
  std::vector<double> expected = remainders("interp"), actual = remainders("vulkan");
  for (size_t i = 0; i < expected.size(); ++i) REQUIRE_MESSAGE(expected[i] == actual[i], "element " << i);
}

// Tiles are unrolled per register: a block whose code would take the driver minutes to
// compile runs on the CPU instead, with the budget named, instead of hanging.
// The workgroup size a module declares (OpExecutionMode LocalSize x y z).
int64_t localSize(const std::vector<uint32_t>& spirv) {
  for (size_t at = 5; at < spirv.size(); at += spirv[at] >> 16)
    if ((spirv[at] & 0xffff) == 16 && spirv[at + 2] == 17) return int64_t(spirv[at + 3]) * spirv[at + 4] * spirv[at + 5];
  return 0;
}

// exp over two blocks of `block` elements, on the interpreter and on Vulkan: what the Vulkan
// launch did, and the worst distance in ulps.
std::pair<LaunchReport, int64_t> expOfBlocks(int64_t block) {
  Tensor x = Tensor::random({block + 3}, 21, f32, -10, 10);
  Tensor expected = samples::poisoned({block + 3}), actual = samples::poisoned({block + 3});
  auto expOf = [&](const Tensor& out, const std::string& device) {
    return run({2}, [&](Program& p) {
      Index i = p.id(0);
      p.write(out, {block}).put(p.read(x, {block}).at({i}).exp(), {i});
    }, {.name = "big_exp", .device = device});
  };
  expOf(expected, "interp");
  LaunchWatch launches;
  expOf(actual, "vulkan");
  std::vector<double> e = expected.values(), a = actual.values();
  int64_t worst = 0;
  for (size_t i = 0; i < e.size(); ++i) worst = std::max(worst, ref::ulpDistance(f32, e[i], a[i]));
  return {launches.last(), worst};
}

TEST_CASE("vulkan kernels: a block past lavapipe's code budget spreads over more subgroups and runs on Vulkan") {
  if (!test::vulkanAvailable()) return;
  auto [launch, worst] = expOfBlocks(65536);  // 2K registers per thread on 4 subgroups, 128 on 64
  CHECK(launch.device == "vulkan");
  CHECK(worst <= 2);
  if (vk::listDevices().at(vk::deviceIndex("vulkan")).driverId == VK_DRIVER_ID_MESA_LLVMPIPE) {
    CHECK(launch.threadsPerProgram == 512);
    CHECK(localSize(*launch.spirv) == 512);
  }
}

TEST_CASE("vulkan kernels: a block past the instruction budget runs on the CPU, naming the op and the budget") {
  if (!test::vulkanAvailable()) return;
  auto [launch, worst] = expOfBlocks(1 << 20);  // 1K registers per thread on 1024 threads
  CHECK(launch.device == "cpu");
  const std::string& why = launch.fallbackReason;
  CHECK_MESSAGE(why.find("8192 instructions per thread") != std::string::npos, why);
  CHECK_MESSAGE(why.find("tile<1048576xf32> at ") != std::string::npos, why);
  CHECK(worst <= 2);
}

}  // namespace tj::vktest
