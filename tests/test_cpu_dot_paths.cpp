// Every dot-product path of the CPU micro-kernels (plain, pmaddwd and vdpbf16ps pairs, VNNI
// quads, AMX tiles), each lowered with its own options and run through a CPU device against a
// float64 reference: natively where this host has the instructions, and emulated on every host
// (CpuLoweringOptions::emulateMatrixInstructions: the instructions as plain IR, AMX
// micro-kernels compiled unoptimized where LLVM turns tiles into loops), since a host without
// them runs that form. Prints which ran how.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "devices/cpu/cpu_device.hpp"
#include "dsl/tilejit.hpp"
#include "jit/cpu_compiler.hpp"
#include "jit/bf16_pair_rate.hpp"
#include "jit/cpu_target.hpp"
#include "lower/cpu/plan_buffers.hpp"
#include "tests/support.hpp"

using namespace tj;

namespace {

struct DotPath {
  const char* name;
  DType a, b;                       // the operands' dtypes
  cpu::CpuLoweringOptions options;  // emulateMatrixInstructions is set where the host lacks them
  bool native;                      // the host runs these instructions
  cpu::DotProducts products;        // what the path's dots must take
  bool skipped = false;             // neither native nor emulated
  // vdpbf16ps and tdpbf16ps take subnormal inputs as zeros (so inf times a subnormal is NaN) and flush
  // subnormal results; their emulations keep both.
  bool flushesSubnormalInputs() const { return native && a == DType::bf16 && products != cpu::DotProducts::single; }
  // vpdpbusd, vdpbf16ps and AMX have one (CpuLoweringOptions::emulateMatrixInstructions).
  bool hasEmulatedForm() const {
    return products == cpu::DotProducts::quads || products == cpu::DotProducts::amxTiles ||
           (products == cpu::DotProducts::pairs && a == DType::bf16);
  }
};

std::vector<DotPath> dotPaths() {
  const cpu::CpuLoweringOptions host = jit::loweringOptions();
  const int width = host.vectorBytes;
  auto emulatedUnless = [](bool native, cpu::CpuLoweringOptions o) {
    o.emulateMatrixInstructions = !native;
    return o;
  };
  using P = cpu::DotProducts;
  // pmaddwd has no emulated form: a host without it at its width (AVX without AVX2) skips it.
  const DType i8 = DType::i8, u8 = DType::u8, bf16 = DType::bf16;
  const cpu::CpuLoweringOptions pairs{.vectorBytes = width, .i16PairProducts = true},
      quads = emulatedUnless(host.i8QuadProducts, {.vectorBytes = width, .i8QuadProducts = true}),
      amx = emulatedUnless(host.amxInt8, {.vectorBytes = width, .amxInt8 = true});
  return {
      {"i8 single products", i8, i8, {.vectorBytes = width}, true, P::single},
      {"i8 pmaddwd pairs", i8, i8, pairs, host.i16PairProducts, P::pairs, !host.i16PairProducts},
      {"i8 VNNI quads", i8, i8, quads, host.i8QuadProducts, P::quads},
      {"i8 AMX tiles", i8, i8, amx, host.amxInt8, P::amxTiles},
      {"u8 x i8 single products", u8, i8, {.vectorBytes = width}, true, P::single},
      {"u8 x i8 pmaddwd pairs", u8, i8, pairs, host.i16PairProducts, P::pairs, !host.i16PairProducts},
      {"u8 x i8 VNNI quads", u8, i8, quads, host.i8QuadProducts, P::quads},
      {"u8 x i8 AMX tiles", u8, i8, amx, host.amxInt8, P::amxTiles},
      {"bf16 widened to f32", bf16, bf16, {.vectorBytes = width}, true, P::single},
      {"bf16 vdpbf16ps pairs", bf16, bf16,
       emulatedUnless(host.bf16DotProduct, {.vectorBytes = 64, .bf16DotProduct = true}), host.bf16DotProduct, P::pairs},
      {"bf16 widened to f32 where vdpbf16ps is slower", bf16, bf16,
       {.vectorBytes = width, .bf16DotProduct = true, .widenBf16Dots = true}, true, P::single},
      {"bf16 AMX tiles", bf16, bf16, emulatedUnless(host.amxBf16, {.vectorBytes = width, .amxBf16 = true}),
       host.amxBf16, P::amxTiles},
  };
}

// i8 and u8 over their whole range, both ends included; bf16 in [-2, 2) with a NaN,
// infinities and subnormals.
Tensor operand(const Shape& shape, DType t, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> values(static_cast<size_t>(shape[0] * shape[1]));
  const int low = t == DType::i8 ? -128 : 0;
  for (double& v : values)
    v = t == DType::bf16 ? std::ldexp(static_cast<double>(static_cast<int>(rng() % 512) - 256), -7)
                         : static_cast<double>(static_cast<int>(rng() % 256) + low);
  values[0] = t == DType::bf16 ? 1e-39 : low;
  values[1] = t == DType::bf16 ? -3e-40 : low + 255;
  if (t == DType::bf16) {
    values[values.size() / 2] = std::numeric_limits<double>::quiet_NaN();
    values[values.size() / 3] = seed % 2 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  }
  return Tensor::from(shape, values, t);
}

// out = init + A·B over blocks, init zeros (the micro-kernel's output-accumulator start) or a
// bias; checked against float64 (of A and B with subnormals as zeros where the path's
// instructions take them so): i32 exactly, f32 within the bound of a K-term f32 sum. With
// `BOperand::transposed`, B is stored [N, K] and each block transposed, as attention's K is (bf16 pairs
// pack such a block straight from its rows: packTransposedPairs); `identityPermuted` permutes B's
// blocks by {0, 1}, which is no transpose.
enum class BOperand { asStored, transposed, identityPermuted };
void checkGemm(const DotPath& path, const Shape& sizes, const Shape& block, bool bias, BOperand bOperand) {
  const bool transposedB = bOperand == BOperand::transposed;
  const int64_t M = sizes[0], K = sizes[1], N = sizes[2], bm = block[0], bk = block[1], bn = block[2];
  DType result = path.b == DType::i8 ? DType::i32 : DType::f32;
  Tensor a = operand({M, K}, path.a, 11), b = operand({K, N}, path.b, 12);
  Tensor stored = transposedB ? b.transpose(0, 1).contiguous() : b;
  Tensor init = Tensor::random({M, N}, 13, result, -100, 100);
  Tensor out = Tensor::full({M, N}, result == DType::i32 ? -7777777 : 1e30, result);
  TracedKernel traced = trace({cdiv(M, bm), cdiv(N, bn)}, [&](Program& p) {
    Index i = p.id(0), j = p.id(1);
    auto A = p.read(a, {bm, bk});
    auto B = p.read(stored, transposedB ? Shape{bn, bk} : Shape{bk, bn});
    Tile start = bias ? p.read(init, {bm, bn}).at({i, j}) : p.zeros({bm, bn}, result);
    Tile acc = p.fold(0, A.blocks(1), start, [&](Index k, Tile acc) {
      Tile b = transposedB ? B.at({j, k}).transpose() : B.at({k, j});
      return dot(A.at({i, k}), bOperand == BOperand::identityPermuted ? b.permute({0, 1}) : b, acc);
    });
    p.write(out, {bm, bn}).put(acc, {i, j});
  }, "dot_path");
  const ir::Kernel& kernel = *traced.kernel;
  bool found = false;
  const cpu::BufferPlan plan = cpu::planBuffers(kernel, cpu::UseInfo(kernel), path.options);
  ir::forEachOp(kernel.body, [&](const ir::Op& op) {
    if (op.code != ir::OpCode::dot) return;
    found = true;
    CHECK(cpu::dotProducts(kernel, op, path.options) == path.products);
    // AMX loads A's tiles from its tensor's rows (but emulated); the other paths read A's bytes
    // from a copy, packed once.
    const bool amx = path.products == cpu::DotProducts::amxTiles && !path.options.emulateMatrixInstructions;
    // B's offsets do not depend on the row block, A's on the column block: both are packed once
    // (A where it is copied).
    CHECK(plan.of[size_t(op.operands[0])] == (amx ? cpu::Placement::inPlace : cpu::Placement::packedOnce));
    CHECK(plan.of[size_t(op.operands[1])] == cpu::Placement::packedOnce);
  });
  REQUIRE(found);
  jit::KernelCache cache(
      [&](const ir::Kernel& k, const std::string& entry) { return jit::compileKernel(k, entry, path.options); },
      "");
  cpu::CpuDevice device(cache, cpu::ThreadPool::global());
  std::vector<TensorArg> args;
  for (const Tensor& t : traced.tensors) args.push_back(t.launchArg());
  std::vector<int64_t> grid{cdiv(M, bm), cdiv(N, bn)};
  device.launch(kernel, {args, grid, {}});
  auto input = [&](double v) { return path.flushesSubnormalInputs() && std::fabs(v) < 0x1p-126 ? 0.0 : v; };
  test::checkProduct(out, M, N, K, [&](int64_t r, int64_t c, int64_t k) { return input(a.item(r * K + k)) * input(b.item(k * N + c)); },
               [&](int64_t r, int64_t c) { return bias ? init.item(r * N + c) : 0.0; });
}

std::string shapeText(const Shape& s) {
  return std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]);
}

}  // namespace

TEST_CASE("cpu dot paths: each runs against float64, natively where the host has its instructions") {
  // Blocks: one AMX K step (two for bf16) with a 32-row band and a 5-row rest; K steps of 36 (i8) and 18
  // (bf16) on 16-column tiles; 512 deep (AMX's K loop in two chunks of 8 steps for bf16) with a
  // 4-row second tile and three 16-column blocks. Every size leaves partial edge blocks.
  const std::array<std::pair<Shape, Shape>, 3> cases = {
      std::pair{Shape{45, 131, 70}, Shape{37, 64, 32}}, std::pair{Shape{33, 75, 40}, Shape{16, 36, 16}},
      std::pair{Shape{41, 1100, 50}, Shape{20, 512, 48}}};
  if (!jit::hostTarget().triple.starts_with("x86_64")) {
    MESSAGE("cpu dot paths: x86 instructions, and this host is " << jit::hostTarget().triple);
    return;
  }
  for (const DotPath& native : dotPaths()) {
    if (native.skipped) {
      std::printf("cpu dot paths: %s not run (the host lacks it, and it has no emulated form)\n", native.name);
      continue;
    }
    // A path the host runs natively runs emulated too, as a host without it would run it.
    std::vector<DotPath> forms{native};
    if (native.native && native.hasEmulatedForm()) {
      forms.push_back(native);
      forms.back().native = false;
      forms.back().options.emulateMatrixInstructions = true;
    }
    std::printf("cpu dot paths: %s %s\n", native.name,
                !native.native ? "emulated (the host lacks it)" : forms.size() > 1 ? "ran natively and emulated" : "ran natively");
    for (const DotPath& path : forms)
      for (const auto& [sizes, block] : cases)
        for (bool bias : {false, true}) {
          std::string what = std::string(path.name) + (path.native ? "" : " (emulated)") + ": " + shapeText(sizes) +
                             " in blocks " + shapeText(block) + (bias ? " from a bias" : " from zeros");
          INFO(what);
          for (BOperand operand : {BOperand::asStored, BOperand::transposed, BOperand::identityPermuted}) {
            if (operand != BOperand::asStored && path.a != DType::bf16) continue;
            const char* form = operand == BOperand::asStored     ? "B as stored"
                               : operand == BOperand::transposed ? "B stored transposed"
                                                                 : "B permuted by {0, 1}";
            INFO(form);
            checkGemm(path, sizes, block, bias, operand);
          }
        }
  }
}

TEST_CASE("cpu dot paths: the host's options follow its features, TILEJIT_CPU_FEATURES turns them off") {
  jit::CpuTarget target = jit::hostTarget();
  target.features = "+avx,+avx2,+fma,+avxvnni,-avx512f,-avx512vnni,-amx-tile";
  cpu::CpuLoweringOptions o = jit::loweringOptions(target);
  CHECK(o.vectorBytes == 32);
  CHECK(o.i8QuadProducts);
  CHECK_FALSE(o.amxInt8);
  CHECK(jit::compileOptions(target) == "O3 pic vector=32 pmaddwd vnni");
  target.features = "+avx,+avx2,+avx512f,+avx512bw,+avx512vl,+avx512vnni,+avx512bf16,+amx-tile,+amx-int8,+amx-bf16";
  target.slowBf16Pairs = false;
  CHECK(jit::compileOptions(target) == "O3 pic vector=64 bf16dot pmaddwd vnni amx-int8 amx-bf16");
  target.slowBf16Pairs = true;  // measured so: its conversions stay, bf16 dots AMX leaves widen
  CHECK(jit::loweringOptions(target).widenBf16Dots);
  CHECK(jit::compileOptions(target) == "O3 pic vector=64 bf16widen pmaddwd vnni amx-int8 amx-bf16");
  // The restriction goes through LLVM, which takes what needs a feature away with it.
  if (jit::hostTarget().triple.starts_with("x86_64") && jit::hostTarget().hasFeature("avx2")) {
    jit::CpuTarget host = jit::hostTarget();
    jit::CpuTarget restricted = jit::restrictFeatures(host, "-avx2");
    CHECK_FALSE(restricted.hasFeature("avx2"));
    CHECK_FALSE(restricted.hasFeature("avx512f"));
    CHECK_FALSE(restricted.hasFeature("avxvnni"));
    CHECK(restricted.hasFeature("avx") == host.hasFeature("avx"));
    CHECK(restricted.deviceFeatures.find("+avx2") == std::string::npos);
    CHECK(jit::loweringOptions(restricted).vectorBytes == 32);
    CHECK_THROWS_WITH_AS(jit::restrictFeatures(host, "+avx512vnni"), doctest::Contains("only turn features off"), Error);
    CHECK_THROWS_WITH_AS(jit::restrictFeatures(host, "-avx9"), doctest::Contains("'avx9' is not a feature"), Error);
  }
}

// The hardware ranges from half the f32 rate (a Sapphire Rapids core issues vdpbf16ps every
// other cycle, FMAs twice a cycle) to twice it (Zen 4 by published tables: both once a cycle).
TEST_CASE("cpu dot paths: bf16 dots widen to f32 where the host's vdpbf16ps is slower than its FMAs, as measured") {
  const jit::CpuTarget& host = jit::hostTarget();
  if (!host.hasFeature("avx512bf16")) {
    CHECK_FALSE(host.slowBf16Pairs);
    CHECK_FALSE(jit::loweringOptions().widenBf16Dots);
    MESSAGE("cpu dot paths: this host has no AVX512-BF16 to measure");
    return;
  }
  std::vector<double> rates;
  for (int i = 0; i < 3; ++i) {
    std::optional<double> rate = jit::measureBf16PairRate();
    REQUIRE(rate);
    CHECK(*rate > 0.1);
    CHECK(*rate < 8);
    rates.push_back(*rate);
  }
  std::sort(rates.begin(), rates.end());
  const double rate = rates[1];
  std::printf("cpu dot paths: vdpbf16ps makes %.2fx the multiply-adds a second of f32 FMAs here; bf16 dots %s\n", rate,
              host.slowBf16Pairs ? "widen to f32 where AMX does not take them" : "take vdpbf16ps pairs");
  // The host's decision came from one measurement at start; near the threshold two may fall on
  // either side of it.
  if (rate < 0.6 || rate > 0.9) CHECK(host.slowBf16Pairs == (rate < jit::kSlowBf16PairRate));
  // 8 rows: fewer than AMX takes.
  Tensor a = Tensor::zeros({8, 64}, DType::bf16), b = Tensor::zeros({64, 32}, DType::bf16), c = Tensor::zeros({8, 32});
  TracedKernel traced = trace({1}, [&](Program& p) {
    p.write(c, {8, 32}).put(dot(p.read(a, {8, 64}).at({0, 0}), p.read(b, {64, 32}).at({0, 0})), {0, 0});
  }, "small_bf16_dot");
  const cpu::CpuLoweringOptions options = jit::loweringOptions();
  CHECK(options.widenBf16Dots == host.slowBf16Pairs);
  // Tuning files and cached kernels of the two choices are kept apart.
  CHECK((host.deviceFeatures.find("+bf16widen") != std::string::npos) == host.slowBf16Pairs);
  ir::forEachOp(traced.kernel->body, [&](const ir::Op& op) {
    if (op.code != ir::OpCode::dot) return;
    CHECK(cpu::dotProducts(*traced.kernel, op, options) == (host.slowBf16Pairs ? cpu::DotProducts::single : cpu::DotProducts::pairs));
    CHECK(cpu::widensOperands(*traced.kernel, op, options) == host.slowBf16Pairs);
  });
}

// The instructions each x86 level's dots are lowered to, in the optimized assembly for a CPU of
// that level: checked on any x86 host, since nothing runs.
TEST_CASE("cpu dot paths: each level's dot instructions are in its assembly") {
  struct Want {
    const char* isa;
    DType a, b;
    std::vector<std::string> instructions;
  };
  const DType i8 = DType::i8, u8 = DType::u8, bf16 = DType::bf16;
  const Want wants[] = {{"avx2", i8, i8, {"vpmaddwd"}},
                        {"avx2", u8, i8, {"vpmaddwd"}},
                        {"avx2vnni", i8, i8, {"{vex}\tvpdpbusd"}},
                        {"avx512vnni", i8, i8, {"vpdpbusd\t%zmm"}},
                        {"avx512vnni", u8, i8, {"vpdpbusd\t%zmm"}},
                        {"avx512bf16", bf16, bf16, {"vdpbf16ps\t%zmm"}},
                        {"amx", i8, i8, {"ldtilecfg", "tileloadd", "tdpbssd", "tilestored"}},
                        {"amx", u8, i8, {"ldtilecfg", "tdpbusd"}},
                        {"amx", bf16, bf16, {"ldtilecfg", "tdpbf16ps"}}};
  if (!jit::hostTarget().triple.starts_with("x86_64")) {
    MESSAGE("cpu dot paths: LLVM's x86 backend is registered only on an x86 host; this is " << jit::hostTarget().triple);
    return;
  }
  for (const Want& want : wants) {
    DType result = want.b == DType::i8 ? DType::i32 : DType::f32;
    Tensor a = Tensor::zeros({128, 256}, want.a), b = Tensor::zeros({256, 96}, want.b);
    Tensor out = Tensor::zeros({128, 96}, result);
    TracedKernel traced = trace({2, 3}, [&](Program& p) {
      auto A = p.read(a, {64, 64});
      auto B = p.read(b, {64, 32});
      Tile acc = p.fold(0, A.blocks(1), p.zeros({64, 32}, result),
                        [&](Index k, Tile acc) { return dot(A.at({p.id(0), k}), B.at({k, p.id(1)}), acc); });
      p.write(out, {64, 32}).put(acc, {p.id(0), p.id(1)});
    }, "dot_instructions");
    std::string assembly = jit::assemblyOf(*traced.kernel, jit::x86TargetForIsa(want.isa), cpu::loweringOptionsForIsa(want.isa));
    for (const std::string& instruction : want.instructions) {
      INFO(std::string(want.isa), " ", std::string(dtypeName(want.a)), " x ", std::string(dtypeName(want.b)), ": ", instruction);
      CHECK(assembly.find(instruction) != std::string::npos);
    }
  }
}

// P·V as attention takes it: an f32 tile that another op reads too (so it has a buffer), rounded
// to bf16 for a dot. On the bf16 products the host runs, with AVX512-BF16, the rounding is the
// host's instruction (vcvtneps2bf16, which takes subnormals as zeros, as those products do);
// emulated, it is exact.
// exp2 of [-135, 5) makes subnormals, ties and infinities of the f32 values.
TEST_CASE("cpu dot paths: an f32 tile rounded to bf16 for the dot, by the host's conversion where it runs the products") {
  const int64_t M = 45, K = 64, N = 32, bm = 16;
  if (!jit::hostTarget().triple.starts_with("x86_64")) return;
  std::mt19937_64 rng(5);
  std::vector<double> av(size_t(M * K));
  for (double& v : av) v = std::ldexp(double(int(rng() % 4480) - 4320), -5);
  av[7] = std::numeric_limits<double>::quiet_NaN();
  av[9] = std::numeric_limits<double>::infinity();
  av[11] = -std::numeric_limits<double>::infinity();
  Tensor a = Tensor::from({M, K}, av), b = operand({K, N}, DType::bf16, 3);
  for (const DotPath& path : dotPaths()) {
    if (path.a != DType::bf16 || path.products == cpu::DotProducts::single) continue;
    for (bool emulated : {false, true}) {
      if (!emulated && !path.native) continue;
      DotPath form = path;
      form.native = !emulated;
      form.options.emulateMatrixInstructions = emulated;
      // As the host's options have it (the AMX path's options leave it off)
      form.options.bf16DotProduct = jit::loweringOptions().bf16DotProduct;
      INFO(std::string(path.name), emulated ? " (emulated)" : "");
      Tensor probabilities = Tensor::full({M, K}, 1e30), out = Tensor::full({M, N}, 1e30);
      TracedKernel traced = trace({cdiv(M, bm)}, [&](Program& p) {
        Tile e = p.read(a, {bm, K}).at({p.id(0), 0}).exp2();
        p.write(probabilities, {bm, K}).put(e, {p.id(0), 0});
        p.write(out, {bm, N}).put(dot(e.cast(DType::bf16), p.read(b, {K, N}).at({0, 0})), {p.id(0), 0});
      }, "rounded_operand");
      std::string assembly = jit::assemblyOf(*traced.kernel, jit::hostTarget(), form.options);
      CHECK((assembly.find("vcvtneps2bf16") != std::string::npos) == (form.native && form.options.bf16DotProduct));
      jit::KernelCache cache([&](const ir::Kernel& k, const std::string& entry) { return jit::compileKernel(k, entry, form.options); }, "");
      cpu::CpuDevice device(cache, cpu::ThreadPool::global());
      std::vector<TensorArg> args;
      for (const Tensor& t : traced.tensors) args.push_back(t.launchArg());
      device.launch(*traced.kernel, {args, std::vector<int64_t>{cdiv(M, bm)}, {}});
      test::checkProduct(out, M, N, K, [&](int64_t r, int64_t c, int64_t k) {
        double p = probabilities.item(r * K + k);
        double rounded = Tensor::from({1}, {p}, DType::bf16).item(0);  // to nearest even
        return (form.flushesSubnormalInputs() && std::fabs(p) < 0x1p-126 ? 0.0 : rounded) * b.item(k * N + c);
      });
    }
  }
}

// A tile multiplied by itself, and a B that two dots multiply with products of different packings
// (i8 A needs B's column sums for vpdpbusd's bias, u8 A does not): each dot packs B for itself, in
// a buffer as large as its own packing.
TEST_CASE("cpu dot paths: x·x, and one B for an i8 and a u8 A, on quad products") {
  if (!jit::hostTarget().triple.starts_with("x86_64")) return;
  const cpu::CpuLoweringOptions host = jit::loweringOptions();
  cpu::CpuLoweringOptions quads{.vectorBytes = host.vectorBytes, .i8QuadProducts = true,
                                .emulateMatrixInstructions = !host.i8QuadProducts};
  const int64_t n = 32;
  Tensor x = operand({n, n}, DType::i8, 21), a8 = operand({n, n}, DType::u8, 22);
  Tensor square = Tensor::full({n, n}, -7777777, DType::i32), both = Tensor::full({n, n}, -7777777, DType::i32);
  TracedKernel traced = trace({1}, [&](Program& p) {
    Tile xt = p.read(x, {n, n}).at({0, 0});
    p.write(square, {n, n}).put(dot(xt, xt), {0, 0});
    Tile b = p.read(x, {n, n}).at({0, 0});
    p.write(both, {n, n}).put(dot(xt, b) + dot(p.read(a8, {n, n}).at({0, 0}), b), {0, 0});
  }, "shared_b");
  jit::KernelCache cache([&](const ir::Kernel& k, const std::string& entry) { return jit::compileKernel(k, entry, quads); }, "");
  cpu::CpuDevice device(cache, cpu::ThreadPool::global());
  std::vector<TensorArg> args;
  for (const Tensor& t : traced.tensors) args.push_back(t.launchArg());
  device.launch(*traced.kernel, {args, std::vector<int64_t>{1}, {}});
  INFO("x·x");
  test::checkProduct(square, n, n, n, [&](int64_t r, int64_t c, int64_t k) { return x.item(r * n + k) * x.item(k * n + c); });
  INFO("x·b + a8·b");
  test::checkProduct(both, n, n, n, [&](int64_t r, int64_t c, int64_t k) {
    return (x.item(r * n + k) + a8.item(r * n + k)) * x.item(k * n + c);
  });
}
