// The per-thread GPU kernel IR: structural checks on the samples and golden texts.
#include <doctest/doctest.h>

#include <algorithm>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>


#include "devices/interp/interpreter.hpp"
#include "devices/print_buffers.hpp"
#include "dsl/tilejit.hpp"
#include "ir/passes.hpp"
#include "layout/infer_layouts.hpp"
#include "lower/gpu/lower_to_kernel_ir.hpp"
#include "lower/gpu/plan_read_ahead.hpp"
#include "lower/gpu/spread_over_warps.hpp"
#include "tests/kernel_ir_simulator.hpp"
#include "samples/kernels.hpp"
#include "tests/support.hpp"

namespace fs = std::filesystem;
using namespace tj;
using namespace tj::gpu;

namespace {

// A sample with every f32 replaced by f16 (as in test_layout.cpp): matrix units multiply f16.
ir::Kernel kernelNamed(const std::string& name) {
  const std::string suffix = "_f16";
  // The f16 attention samples' own kernels (f32 scores and accumulator, P rounded to f16):
  // retyped, their fma would take f16 tiles.
  if (!name.ends_with(suffix) || name == "attention_f16") return samples::traceSample(name);
  if (name == "attention_causal_f16") {
    auto heads = [](DType t) { return Tensor::zeros({1, 2, 37, 64}, t); };
    samples::KernelDefinition def = samples::attentionKernel(
        heads(DType::f16), heads(DType::f16), heads(DType::f16), heads(DType::f32), true,
        samples::AttentionBlocks::from(samples::attentionTuneSpace("cpu").at(0)));
    return *tj::trace(def.grid, def.body, "attention").kernel;
  }
  std::string text = ir::print(samples::traceSample(name.substr(0, name.size() - suffix.size())));
  for (size_t at; (at = text.find("f32")) != std::string::npos;) text.replace(at, 3, "f16");
  ir::Kernel k = ir::parse(text);
  ir::verify(k);
  return k;
}

KernelFunction lowered(const std::string& name, const std::string& target) {
  ir::Kernel k = kernelNamed(name);
  const layout::Target& t = layout::targetByName(target);
  return lowerToKernelIR(k, layout::inferLayouts(k, t), t);
}

// Whether any instruction of kind `op` has attribute `name` = `value`.
bool hasAttr(const KBlock& b, KOp op, const std::string& name, const KAttrValue& value) {
  for (const KInst& i : b.insts) {
    if (i.op == op)
      for (const KAttr& a : i.attrs)
        if (a.name == name && a.value == value) return true;
    for (const KBlock& r : i.regions)
      if (hasAttr(r, op, name, value)) return true;
  }
  return false;
}

// The tensors traceSample traces each sample with, in parameter order.
std::vector<ir::Shape> sampleShapes(const std::string& name) {
  if (name.starts_with("gemm")) return {{37, 29}, {29, 23}, {37, 23}};
  if (name.starts_with("softmax")) return {{37, 29}, {37, 29}};
  if (name.starts_with("layernorm")) return {{37, 29}, {29}, {29}, {37, 29}};
  // 8-bit: q, k, v stored [batch, heads, dim, seq], the scales of q's rows and of k's and v's blocks, out.
  if (name == "attention_f8e4m3") return {{1, 2, 37, 64}, {1, 2, 37, 64}, {1, 2, 64, 37}, {2, 37, 1}, {2, 1, 1}, {2, 1, 1}, {1, 2, 37, 64}};
  if (name.starts_with("attention")) return std::vector<ir::Shape>(4, {1, 2, 37, 64});
  return std::vector<ir::Shape>(name == "fused" ? 4 : 3, {1000});
}

// Host tensors with deterministic values in [-1, 1) (stored as the kernel's dtypes; integers
// over their ranges).
struct HostTensors {
  std::vector<std::vector<char>> storage;
  std::vector<TensorArg> args;

  HostTensors(const ir::Kernel& k, const std::vector<ir::Shape>& shapes) {
    uint64_t seed = 12345;
    for (size_t t = 0; t < shapes.size(); ++t) {
      DType dt = k.tensors[t].dtype;
      int64_t n = 1;
      std::vector<int64_t> strides(shapes[t].size(), 1);
      for (size_t d = shapes[t].size(); d-- > 0;) strides[d] = n, n *= shapes[t][d];
      storage.emplace_back(size_t(n * dtypeBytes(dt)));
      for (int64_t i = 0; i < n; ++i) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        int64_t r = int64_t(seed >> 40) % 2000 - 1000;
        float v = float(r) / 1000.0f;
        char* at = storage.back().data() + i * dtypeBytes(dt);
        if (dt == DType::f16) { uint16_t h = floatToHalf(v); std::memcpy(at, &h, 2); }
        else if (dt == DType::bf16) { uint16_t h = floatToBF16(v); std::memcpy(at, &h, 2); }
        else if (dt == DType::i8) { auto b = int8_t(r % 128); std::memcpy(at, &b, 1); }
        else if (dt == DType::u8) *at = char(uint8_t((r + 1000) % 256));  // 0 to 255
        else if (isFloat8(dt)) *at = char(floatToF8(dt, v * 4));
        else if (dt == DType::i32) { auto x = int32_t(r); std::memcpy(at, &x, 4); }
        else std::memcpy(at, &v, 4);
      }
      args.push_back({storage.back().data(), dt, shapes[t], strides});
    }
  }
  std::vector<gpu::SimTensor> sim() const {
    std::vector<gpu::SimTensor> out;
    for (const TensorArg& a : args) out.push_back({a.data, a.dtype, a.shape, a.strides});
    return out;
  }
  double at(size_t t, size_t i) const {
    const char* p = storage[t].data() + i * size_t(dtypeBytes(args[t].dtype));
    if (args[t].dtype == DType::f16) { uint16_t h; std::memcpy(&h, p, 2); return halfToFloat(h); }
    if (args[t].dtype == DType::bf16) { uint16_t h; std::memcpy(&h, p, 2); return bf16ToFloat(h); }
    if (args[t].dtype == DType::i8) return double(*reinterpret_cast<const int8_t*>(p));
    if (args[t].dtype == DType::u8) return double(*reinterpret_cast<const uint8_t*>(p));
    if (isFloat8(args[t].dtype)) return f8ToFloat(args[t].dtype, uint8_t(*p));
    if (args[t].dtype == DType::i32) { int32_t x; std::memcpy(&x, p, 4); return x; }
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
};

// Runs a sample's kernel IR on the simulator and the tile IR on the interpreter over the
// same small grid; every tensor must agree within `tolerance` (reductions sum in another order).
void checkAgainstInterpreter(const ir::Kernel& k, const std::vector<ir::Shape>& shapes, const KernelFunction& f,
                             std::vector<int64_t> grid, double tolerance) {
  CAPTURE(k.name);
  CAPTURE(f.target);
  HostTensors expected(k, shapes), actual(k, shapes);
  interpret(k, LaunchArgs{expected.args, grid, [](const std::string&) {}});
  gpu::simulate(f, actual.sim(), {}, grid);
  int64_t mismatches = 0;
  for (size_t t = 0; t < expected.args.size(); ++t)
    for (size_t i = 0; i < expected.storage[t].size() / size_t(dtypeBytes(expected.args[t].dtype)); ++i) {
      double want = expected.at(t, i), got = actual.at(t, i);
      if (!(std::fabs(want - got) <= tolerance * (1 + std::fabs(want))) && mismatches++ < 5)
        FAIL_CHECK("tensor " << t << " element " << i << ": " << got << " != " << want);
    }
  CHECK(mismatches == 0);
}

void checkAgainstInterpreter(const ir::Kernel& k, const std::vector<ir::Shape>& shapes, const std::string& target,
                             std::vector<int64_t> grid, double tolerance, const KernelLoweringOptions& options = {}) {
  const layout::Target& t = layout::targetByName(target);
  checkAgainstInterpreter(k, shapes, lowerToKernelIR(k, layout::inferLayouts(k, t), t, options), std::move(grid),
                          tolerance);
}

void checkAgainstInterpreter(const std::string& name, const std::string& target, std::vector<int64_t> grid,
                             double tolerance) {
  checkAgainstInterpreter(kernelNamed(name), sampleShapes(name), target, std::move(grid), tolerance);
}

// Column sums and maxima of a 64x32 block: the rows spread over lanes and warps.
ir::Kernel columnReductions() {
  ir::Kernel k = ir::parse(R"(kernel @columns(t0: tensor<f32, 2>, t1: tensor<f32, 1>, t2: tensor<f32, 1>) grid 1 {
  %0 = constant() {value = 0} : i64
  %1 = load(%0, %0) {fill = 0.0, tensor = 0} : tile<64x32xf32>
  %2 = reduce_sum(%1) {axis = 0} : tile<32xf32>
  store(%0, %2) {tensor = 1}
  %3 = reduce_max(%1) {axis = 0} : tile<32xf32>
  store(%0, %3) {tensor = 2}
})");
  ir::verify(k);
  return ir::canonicalize(k);
}

// Tiles whose sizes are not powers of two, read from and written into larger tensors: the
// padding must stay out of the stores, the sum, the argmax, the reshape and the dot's k.
ir::Kernel oddTiles() {
  ir::Kernel k = ir::parse(R"(kernel @odd(t0: tensor<f32, 2>, t1: tensor<f32, 2>, t2: tensor<f32, 1>, t3: tensor<f32, 1>, t4: tensor<f32, 2>, t5: tensor<f32, 2>) grid 1 {
  %0 = constant() {value = 0} : i64
  %1 = load(%0, %0) {fill = 0.0, tensor = 0} : tile<7x13xf32>
  %2 = reduce_sum(%1) {axis = 1} : tile<7xf32>
  store(%0, %2) {tensor = 2}
  %3 = argmax(%1) {axis = 0} : tile<13xi32>
  %4 = cast(%3) : tile<13xf32>
  store(%0, %4) {tensor = 3}
  %5 = reshape(%1) : tile<13x7xf32>
  store(%0, %0, %5) {tensor = 4}
  %6 = load(%0, %0) {fill = 0.0, tensor = 1} : tile<13x5xf32>
  %7 = dot(%1, %6) : tile<7x5xf32>
  store(%0, %0, %7) {tensor = 5}
})");
  ir::verify(k);
  return ir::canonicalize(k);
}

}  // namespace

TEST_CASE("kernel ir: tiles of any size run over their power-of-two padding") {
  ir::Kernel k = oddTiles();
  for (const std::string target : {"vulkan", "sm_90", "gfx942"})
    checkAgainstInterpreter(k, {{9, 15}, {15, 7}, {9}, {16}, {16, 8}, {8, 8}}, target, {1}, 1e-6);
}

TEST_CASE("kernel ir: sorts, scans of several tiles and histograms move elements through workgroup memory without races") {
  ir::Kernel k = ir::parse(R"(kernel @sorts(t0: tensor<f32, 2>, t1: tensor<f32, 2>, t2: tensor<i32, 2>, t3: tensor<f32, 2>, t4: tensor<f32, 2>, t5: tensor<i32, 2>, t6: tensor<i32, 2>, t7: tensor<i32, 1>) grid 1 {
  %0 = constant() {value = 0} : i64
  %1 = load(%0, %0) {fill = 0.0, tensor = 0} : tile<7x19xf32>
  %2 = iota() {axis = 1} : tile<7x19xi32>
  %3, %4 = sort(%1, %2) {axis = 1, descending = 1} : tile<7x19xf32>, tile<7x19xi32>
  store(%0, %0, %3) {tensor = 1}
  store(%0, %0, %4) {tensor = 2}
  %5 = sort(%1) {axis = 0, descending = 0} : tile<7x19xf32>
  store(%0, %0, %5) {tensor = 3}
  %6, %7 = scan(%1, %2) {axis = 1} : tile<7x19xf32>, tile<7x19xi32> {
    ^(%a: f32, %ai: i32, %b: f32, %bi: i32):
      %later = cmp(%b, %a) {pred = "gt"} : bool
      %m = select(%later, %b, %a) : f32
      %mi = select(%later, %bi, %ai) : i32
      yield(%m, %mi)
  }
  store(%0, %0, %6) {tensor = 4}
  store(%0, %0, %7) {tensor = 5}
  %8 = load(%0, %0) {fill = 0, tensor = 6} : tile<7x19xi32>
  %9 = histogram(%8) {bins = 40} : tile<40xi32>
  store(%0, %9) {tensor = 7}
})");
  ir::verify(k);
  for (const std::string target : {"vulkan", "sm_80", "gfx942"})
    checkAgainstInterpreter(ir::canonicalize(k), {{7, 19}, {7, 19}, {7, 19}, {7, 19}, {7, 19}, {7, 19}, {7, 19}, {40}},
                            target, {1}, 0);
}

// A [37, 131] tile's scan along axis 1 of its default layout stays in its subgroups; along axis 0
// (split by the warps) its code is the tile's stores and loads and loops that do not grow.
TEST_CASE("kernel ir: a scan within subgroups uses no workgroup memory, across subgroups loops over it") {
  auto scanKernel = [](int axis, const std::string& shape) {
    return ir::canonicalize(ir::parse("kernel @scan(t0: tensor<f32, 2>, t1: tensor<f32, 2>) grid 1 {\n"
                                      "  %0 = constant() {value = 0} : i64\n"
                                      "  %1 = load(%0, %0) {fill = 0.0, tensor = 0} : tile<" + shape + "xf32>\n"
                                      "  %2 = scan(%1) {axis = " + std::to_string(axis) + ", fn = \"add\"} : tile<" + shape + "xf32>\n"
                                      "  store(%0, %0, %2) {tensor = 1}\n}"));
  };
  layout::Target target = layout::targetByName("vulkan");
  target.warpsPerProgram = 32;  // lavapipe's spread: 64 registers a thread
  KernelFunction along = lowerToKernelIR(scanKernel(1, "37x131"), layout::inferLayouts(scanKernel(1, "37x131"), target), target);
  CHECK(countOps(along.body, KOp::barrier) == 0);
  CHECK(sharedAccessCount(along.body) == 0);
  KernelFunction across = lowerToKernelIR(scanKernel(0, "37x131"), layout::inferLayouts(scanKernel(0, "37x131"), target), target);
  int64_t registers = countOps(across.body, KOp::load_global);
  CHECK(countOps(across.body, KOp::for_loop) >= 1);
  CHECK(countOps(across.body, KOp::load_shared) <= registers + 4);
  CHECK(countOps(across.body, KOp::store_shared) <= registers + 4);
  for (int axis : {0, 1})
    for (const std::string t : {"vulkan", "sm_80", "gfx942"})
      checkAgainstInterpreter(scanKernel(axis, "13x37"), {{13, 37}, {13, 37}}, t, {1}, 1e-5);
  // A scan takes its operand's layout: here a matrix unit's accumulators (registers and lanes
  // on both axes, warps on one).
  for (int axis : {0, 1}) {
    ir::Kernel dotScan = ir::canonicalize(ir::parse(
        "kernel @dot_scan(t0: tensor<f16, 2>, t1: tensor<f16, 2>, t2: tensor<f32, 2>) grid 1 {\n"
        "  %0 = constant() {value = 0} : i64\n"
        "  %1 = load(%0, %0) {fill = 0.0, tensor = 0} : tile<32x16xf16>\n"
        "  %2 = load(%0, %0) {fill = 0.0, tensor = 1} : tile<16x32xf16>\n"
        "  %3 = dot(%1, %2) : tile<32x32xf32>\n"
        "  %4 = scan(%3) {axis = " + std::to_string(axis) + ", fn = \"max\"} : tile<32x32xf32>\n"
        "  store(%0, %0, %4) {tensor = 2}\n}"));
    checkAgainstInterpreter(dotScan, {{32, 16}, {16, 32}, {32, 32}}, "sm_80", {1}, 1e-6);
  }
}

TEST_CASE("kernel ir: an if runs one side as a loop of at most one iteration, results carried through both") {
  std::string text = R"(kernel @branch(t0: tensor<f32, 2>, t1: tensor<f32, 2>) grid 1 {
  %0 = constant() {value = 0} : i64
  %1 = load(%0, %0) {fill = 0.0, tensor = 0} : tile<7x19xf32>
  %2 = program_id() {axis = 0} : i64
  %3 = cmp(%2, %0) {pred = "eq"} : bool
  %4 = if(%3) : tile<7x19xf32> {
    ^():
      %5 = reduce_sum(%1) {axis = 1} : tile<7xf32>
      %6 = reshape(%5) : tile<7x1xf32>
      %7 = broadcast(%6) : tile<7x19xf32>
      %8 = sub(%1, %7) : tile<7x19xf32>
      yield(%8)
  } {
    ^():
      yield(%1)
  }
  store(%0, %0, %4) {tensor = 1}
})";
  ir::Kernel k = ir::parse(text);
  ir::verify(k);
  CHECK(ir::print(ir::parse(ir::print(k))) == ir::print(k));
  for (const std::string target : {"vulkan", "sm_80"})
    checkAgainstInterpreter(ir::canonicalize(k), std::vector<ir::Shape>(2, {7, 19}), target, {1}, 1e-6);
}

TEST_CASE("kernel ir: a while runs its cond, then its body, on registers carried through both regions") {
  // Halves a tile, reduced across warps for the cond, until its largest magnitude is below 0.01.
  std::string text = R"(kernel @halve(t0: tensor<f32, 2>, t1: tensor<f32, 2>) grid 1 {
  %0 = constant() {value = 0} : i64
  %1 = load(%0, %0) {fill = 0.0, tensor = 0} : tile<7x19xf32>
  %2 = while(%1) : tile<7x19xf32> {
    ^(%3: tile<7x19xf32>):
      %4 = abs(%3) : tile<7x19xf32>
      %5 = reduce_max(%4) {axis = 1} : tile<7xf32>
      %6 = reduce_max(%5) {axis = 0} : f32
      %7 = constant() {value = 0.01} : f32
      %8 = cmp(%6, %7) {pred = "ge"} : bool
      yield(%8)
  } {
    ^(%9: tile<7x19xf32>):
      %10 = constant() {value = 0.5} : tile<7x19xf32>
      %11 = mul(%9, %10) : tile<7x19xf32>
      yield(%11)
  }
  store(%0, %0, %2) {tensor = 1}
})";
  ir::Kernel k = ir::parse(text);
  ir::verify(k);
  CHECK(ir::print(ir::parse(ir::print(k))) == ir::print(k));
  for (const std::string target : {"vulkan", "sm_80"}) {
    const layout::Target& t = layout::targetByName(target);
    KernelFunction f = lowerToKernelIR(ir::canonicalize(k), layout::inferLayouts(ir::canonicalize(k), t), t);
    CHECK(countOps(f.body, KOp::while_loop) == 1);
    checkAgainstInterpreter(ir::canonicalize(k), std::vector<ir::Shape>(2, {7, 19}), f, {1}, 0);
  }
}

TEST_CASE("kernel ir: each program prints its tile into its slice of a print buffer, padding left out") {
  Tensor out = Tensor::zeros({10}, i32);
  TracedKernel traced = tj::trace({2, 3}, [&](Program& p) {
    Tile t = p.arange(5) + p.id(0) * 100 + p.id(1) * 10;
    p.print("row", t);
    p.write(out, {5}).put(t, {p.id(0)});
  });
  for (const std::string target : {"vulkan", "sm_90"}) {
    CAPTURE(target);
    const layout::Target& t = layout::targetByName(target);
    KernelFunction f = lowerToKernelIR(*traced.kernel, layout::inferLayouts(*traced.kernel, t), t);
    REQUIRE(f.prints.size() == 1);
    CHECK(f.prints[0].label == "row");
    CHECK(f.prints[0].shape == std::vector<int64_t>{5});
    std::vector<int32_t> printed(2 * 3 * 5 + 1, -1);  // one past the slices: must stay untouched
    std::vector<SimTensor> tensors = {{out.data(), i32, {10}, {1}}, {printed.data(), i32, {31}, {1}}};
    gpu::simulate(f, tensors, {}, {2, 3});
    for (int64_t program = 0; program < 6; ++program)
      for (int64_t e = 0; e < 5; ++e)
        CHECK(printed[size_t(program * 5 + e)] == (program / 3) * 100 + (program % 3) * 10 + e);
    CHECK(printed[30] == -1);
    // Printed from the buffer, the lines are the interpreter's.
    std::vector<std::string> want, got;
    std::vector<TensorArg> args(1);
    args[0].data = out.data(), args[0].dtype = i32, args[0].shape = {10}, args[0].strides = {1};
    std::vector<int64_t> grid = {2, 3};
    interpret(*traced.kernel, LaunchArgs{args, grid, [&](const std::string& line) { want.push_back(line); }});
    printBuffers(f.prints, {std::as_bytes(std::span(printed))}, grid,
                 [&](const std::string& line) { got.push_back(line); });
    CHECK(got.size() == 6);
    CHECK(got == want);
  }
}

TEST_CASE("kernel ir: prints and the fault flag interleaved take bindings in order: a 2-d print leaves padding out") {
  Tensor a = Tensor::from({3, 5}, std::vector<double>(15, 6.0), i32), out = Tensor::zeros({3, 5}, i32);
  TracedKernel traced = tj::trace({1}, [&](Program& p) {
    Tile x = p.read(a, {3, 5}).at({0, 0});
    p.print("x", x);
    Tile q = x / (x - 3);
    p.print("q", q);
    p.write(out, {3, 5}).put(q, {0, 0});
  });
  const layout::Target& t = layout::targetByName("sm_90");
  KernelFunction f = lowerToKernelIR(*traced.kernel, layout::inferLayouts(*traced.kernel, t), t);
  REQUIRE(f.prints.size() == 2);
  REQUIRE(f.faultParam >= 0);
  CHECK(f.params[f.prints[0].param].number == 2);
  CHECK(f.params[size_t(f.faultParam)].number == 3);
  CHECK(f.params[f.prints[1].param].number == 4);
  std::vector<int32_t> xs(16, -1), qs(16, -1);
  int32_t fault = 0;
  gpu::simulate(f, {{a.data(), i32, {3, 5}, {5, 1}}, {out.data(), i32, {3, 5}, {5, 1}}, {xs.data(), i32, {16}, {1}},
                    {&fault, i32, {1}, {1}}, {qs.data(), i32, {16}, {1}}}, {}, {1});
  CHECK(fault == 0);
  CHECK(xs == std::vector<int32_t>{6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, -1});
  CHECK(qs == std::vector<int32_t>{2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, -1});
}

TEST_CASE("kernel ir: integer division by zero in a real element, not in padding, sets the fault buffer") {
  Tensor a = Tensor::zeros({5}, i32), b = Tensor::zeros({8}, i32), out = Tensor::zeros({5}, i32);
  TracedKernel traced = tj::trace({1}, [&](Program& p) {
    p.write(out, {5}).put(p.read(a, {5}).at({0}) / p.read(b, {5}).at({0}), {0});
  });
  const layout::Target& t = layout::targetByName("vulkan");
  KernelFunction f = lowerToKernelIR(*traced.kernel, layout::inferLayouts(*traced.kernel, t), t);
  REQUIRE(f.faultParam >= 0);
  auto faults = [&](std::vector<int32_t> divisors) {
    int32_t fault = 0;
    std::vector<SimTensor> tensors = {{a.data(), i32, {5}, {1}}, {divisors.data(), i32, {8}, {1}},
                                      {out.data(), i32, {5}, {1}}, {&fault, i32, {1}, {1}}};
    gpu::simulate(f, tensors, {}, {1});
    return fault;
  };
  CHECK(faults({1, 2, 3, 4, 5, 0, 0, 0}) == 0);  // zeros past the 5-element tile: its padding
  CHECK(faults({1, 2, 3, 4, 0, 7, 7, 7}) == 1);
  TracedKernel byConstant = tj::trace({1}, [&](Program& p) {
    p.write(out, {5}).put(p.read(a, {5}).at({0}) / 3 + p.read(a, {5}).at({0}) % 2, {0});
  });
  CHECK(lowerToKernelIR(*byConstant.kernel, layout::inferLayouts(*byConstant.kernel, t), t).faultParam == -1);
}

TEST_CASE("kernel ir: fma is one kernel-IR instruction, rounding once as the interpreter does") {
  Tensor x = Tensor::zeros({37, 29}), out = Tensor::zeros({37, 29});
  TracedKernel traced = tj::trace({2}, [&](Program& p) {
    Index i = p.id(0);
    auto X = p.read(x, {32, 29});
    Tile a = X.at({i, 0});
    p.write(out, {32, 29}).put(fma(a, a.sin(), -a), {i, 0});
  });
  for (const std::string target : {"sm_90", "gfx942", "vulkan"}) {
    const layout::Target& t = layout::targetByName(target);
    KernelFunction f = lowerToKernelIR(*traced.kernel, layout::inferLayouts(*traced.kernel, t), t);
    CHECK(countOps(f.body, KOp::fma) > 0);
    checkAgainstInterpreter(*traced.kernel, {{37, 29}, {37, 29}}, f, {2}, 0);
  }
}

TEST_CASE("kernel ir: integer constants and fills stay exact past 2^53") {
  ir::Kernel k = ir::parse(R"(kernel @wide(t0: tensor<i64, 1>, t1: tensor<i64, 1>) grid 1 {
  %0 = constant() {value = 0} : i64
  %1 = load(%0) {fill = 9007199254740993, tensor = 0} : tile<8xi64>
  %2 = constant() {value = 4611686018427387905} : tile<8xi64>
  %3 = add(%1, %2) : tile<8xi64>
  store(%0, %3) {tensor = 1}
})");
  ir::verify(k);
  const layout::Target& t = layout::targetByName("vulkan");
  KernelFunction f = lowerToKernelIR(k, layout::inferLayouts(k, t), t);
  CHECK(hasAttr(f.body, KOp::constant, "value", int64_t{4611686018427387905}));
  CHECK(hasAttr(f.body, KOp::load_global, "fill", int64_t{9007199254740993}));
}

TEST_CASE("kernel ir: reductions across lanes use butterflies and across warps workgroup memory") {
  ir::Kernel k = columnReductions();
  for (const std::string target : {"vulkan", "sm_90", "gfx942"}) {
    const layout::Target& t = layout::targetByName(target);
    KernelFunction f = lowerToKernelIR(k, layout::inferLayouts(k, t), t);
    CAPTURE(target);
    // Rows go down lanes 8 apart (lane bits 3.. : butterflies) except on vulkan (8 lanes per row).
    CHECK((countOps(f.body, KOp::shuffle_xor) > 0) == (target != "vulkan"));
    CHECK(countOps(f.body, KOp::barrier) > 0);  // the 4 warps hold different rows
    checkAgainstInterpreter(k, {{50, 20}, {20}, {20}}, target, {1}, 1e-6);
  }
}

TEST_CASE("kernel ir: a warp-shuffle conversion moves registers with lane shuffles") {
  // wmma's accumulator to its a operand on gfx1100: the source register depends on the lane
  // (8 candidates), so by default it goes through workgroup memory.
  ir::Kernel k = kernelNamed("attention_f16");
  const layout::Target& t = layout::targetByName("gfx1100");
  layout::LayoutAssignment a = layout::inferLayouts(k, t);
  CHECK(countOps(lowerToKernelIR(k, a, t).body, KOp::shuffle_idx) == 0);
  KernelLoweringOptions shuffles{.maxShuffleCandidates = 8};
  CHECK(countOps(lowerToKernelIR(k, a, t, shuffles).body, KOp::shuffle_idx) > 0);
  checkAgainstInterpreter(k, sampleShapes("attention_f16"), "gfx1100", {1, 2}, 1e-2, shuffles);
}

TEST_CASE("kernel ir: the simulated kernel IR computes what the interpreter does") {
  checkAgainstInterpreter("vector_add", "vulkan", {1}, 0);
  checkAgainstInterpreter("softmax", "vulkan", {3}, 1e-6);
  checkAgainstInterpreter("softmax", "sm_90", {3}, 1e-6);
  checkAgainstInterpreter("layernorm", "gfx942", {2}, 1e-5);
  checkAgainstInterpreter("gemm", "sm_90", {1, 1}, 1e-5);
  checkAgainstInterpreter("gemm_f16", "sm_90", {1, 1}, 1e-2);
  checkAgainstInterpreter("gemm_f16", "gfx1100", {1, 1}, 1e-2);
  checkAgainstInterpreter("gemm_f16", "gfx942", {1, 1}, 1e-2);
  checkAgainstInterpreter("attention_f16", "sm_90", {1, 2}, 1e-2);
  checkAgainstInterpreter("attention", "gfx942", {1, 2}, 1e-5);
  checkAgainstInterpreter("attention_f16", "gfx1100", {1, 2}, 1e-2);  // a warp-shuffle conversion, via memory
  checkAgainstInterpreter("layernorm", "vulkan", {2}, 1e-5);
  checkAgainstInterpreter("gemm_f16", "vulkan", {1, 1}, 1e-2);  // an FMA dot of f16 operands
  checkAgainstInterpreter("fused", "gfx1100", {1}, 1e-6);
}

TEST_CASE("kernel ir: a kernel past the target's code budget spreads over more warps, each thread within it") {
  ir::Kernel k = samples::traceSample("attention", "vulkan");
  layout::Target t = layout::targetByName("vulkan");
  CHECK(lowerWithinCodeBudget(k, t).workgroupSize == 32);  // no budget: the target's 4 warps
  t.codeBudget = 1500;
  KernelFunction spread = lowerWithinCodeBudget(k, t);
  CHECK(spread.workgroupSize == 128);
  CHECK(instructionCount(spread.body) <= 1500);
  CHECK(instructionCount(lowered("attention", "vulkan").body) > 1500);
  checkAgainstInterpreter(k, sampleShapes("attention"), spread, {1, 2}, 1e-5);
}

TEST_CASE("kernel ir: a kernel past the target's workgroup-memory access budget spreads too") {
  // A sort of [8, 131] moves 2 values (keys, origins) in and out of workgroup memory per register.
  ir::Kernel k = ir::canonicalize(ir::parse(R"(kernel @argsort(t0: tensor<f32, 2>, t1: tensor<i32, 2>) grid 1 {
  %0 = constant() {value = 0} : i64
  %1 = load(%0, %0) {fill = 0.0, tensor = 0} : tile<8x131xf32>
  %2 = iota() {axis = 1} : tile<8x131xi32>
  %3, %4 = sort(%1, %2) {axis = 1, descending = 0} : tile<8x131xf32>, tile<8x131xi32>
  store(%0, %0, %4) {tensor = 1}
})"));
  layout::Target t = layout::targetByName("vulkan");
  t.codeBudget = 1500;
  KernelFunction narrow = lowerWithinCodeBudget(k, t);
  CHECK(narrow.workgroupSize == 32);  // within the instructions
  CHECK(sharedAccessCount(narrow.body) > 200);
  t.sharedAccessBudget = 200;
  KernelFunction spread = lowerWithinCodeBudget(k, t);
  CHECK(spread.workgroupSize > 32);
  CHECK(sharedAccessCount(spread.body) <= 200);
  checkAgainstInterpreter(k, {{8, 131}, {8, 131}}, spread, {1}, 0);
}

TEST_CASE("kernel ir: a spread stops before more warps split the scanned lines over workgroup memory") {
  // Three scans along the 131 columns: up to 64 warps a line stays in one subgroup; at 128 the
  // subgroups split the lines, and every scan would exchange through workgroup memory.
  ir::Kernel k = ir::canonicalize(ir::parse(R"(kernel @scans(t0: tensor<f32, 2>, t1: tensor<f32, 2>) grid 1 {
  %0 = constant() {value = 0} : i64
  %1 = load(%0, %0) {fill = 0.0, tensor = 0} : tile<37x131xf32>
  %2 = scan(%1) {axis = 1, fn = "add"} : tile<37x131xf32>
  %3 = scan(%1) {axis = 1, fn = "max"} : tile<37x131xf32>
  %4 = scan(%1) {axis = 1, fn = "mul"} : tile<37x131xf32>
  %5 = add(%2, %3) : tile<37x131xf32>
  %6 = add(%5, %4) : tile<37x131xf32>
  store(%0, %0, %6) {tensor = 1}
})"));
  layout::Target t = layout::targetByName("vulkan");
  t.warpsPerProgram = 128;
  KernelFunction widest = lowerWithinCodeBudget(k, t);
  CHECK(sharedAccessCount(widest.body) > 0);
  t.warpsPerProgram = 4;
  t.codeBudget = 100;  // past it at every width
  t.sharedAccessBudget = 200;
  KernelFunction f = lowerWithinCodeBudget(k, t);
  CHECK(f.workgroupSize == 512);
  CHECK(sharedAccessCount(f.body) == 0);
  CHECK(instructionCount(f.body) > instructionCount(widest.body));
  checkAgainstInterpreter(k, {{37, 131}, {37, 131}}, f, {1}, 1e-5);
}

TEST_CASE("kernel ir: the widest spread is bounded by the instruction limit only, and past it names the threads") {
  ir::Kernel k = samples::traceSample("attention", "vulkan");
  layout::Target t = layout::targetByName("vulkan");
  t.codeBudget = 10;
  CHECK(lowerWithinCodeBudget(k, t).workgroupSize == t.maxWorkgroupThreads);
  KernelLoweringOptions tight;
  tight.maxInstructions = 200;
  CHECK_THROWS_WITH_AS(lowerWithinCodeBudget(k, t, tight),
                       doctest::Contains("takes the kernel past 200 instructions per thread on 1024 threads"),
                       CodeOverBudget);
}

TEST_CASE("kernel ir: a spread that needs more workgroup memory than the target has keeps the narrower lowering") {
  // Column sums of a 16x1024 block: each warp's partial sums go through workgroup memory.
  ir::Kernel k = ir::parse(R"(kernel @columns(t0: tensor<f32, 2>, t1: tensor<f32, 1>) grid 1 {
  %0 = constant() {value = 0} : i64
  %1 = load(%0, %0) {fill = 0.0, tensor = 0} : tile<16x1024xf32>
  %2 = reduce_sum(%1) {axis = 0} : tile<1024xf32>
  store(%0, %2) {tensor = 1}
})");
  ir::verify(k);
  k = ir::canonicalize(k);
  layout::Target t = layout::targetByName("vulkan");
  t.codeBudget = 1500;
  KernelFunction narrow = lowerToKernelIR(k, layout::inferLayouts(k, t), t);
  CHECK(instructionCount(narrow.body) > t.codeBudget);
  t.sharedBytes = narrow.sharedBytes();  // the 8 warps a spread would use need more
  KernelFunction f = lowerWithinCodeBudget(k, t);
  CHECK(f.workgroupSize == 32);
  checkAgainstInterpreter(k, {{16, 1024}, {1024}}, f, {1}, 1e-6);
}

TEST_CASE("kernel ir: softmax on vulkan reduces rows in the subgroup") {
  KernelFunction f = lowered("softmax", "vulkan");
  CHECK(f.workgroupSize == 32);
  CHECK(countOps(f.body, KOp::subgroup_reduce) + countOps(f.body, KOp::shuffle_xor) > 0);
  CHECK(hasAttr(f.body, KOp::subgroup_reduce, "fn", std::string("max")));
  CHECK(hasAttr(f.body, KOp::subgroup_reduce, "fn", std::string("add")));
  CHECK(countOps(f.body, KOp::mma) == 0);
}

TEST_CASE("kernel ir: loads and stores are predicated on the tensor bounds") {
  KernelFunction f = lowered("vector_add", "sm_90");
  // Every global access carries a predicate: an unsigned index < size compare.
  CHECK(countOps(f.body, KOp::store_global) > 0);
  CHECK(hasAttr(f.body, KOp::cmp, "pred", std::string("ult")));
  for (const KInst& i : f.body.insts)
    if (i.op == KOp::store_global) CHECK(f.regTypes.at(size_t(i.operands[1])) == DType::boolean);
}

TEST_CASE("kernel ir: register counts equal the layouts' register counts") {
  ir::Kernel k = samples::traceSample("vector_add");
  const layout::Target& t = layout::targetByName("vulkan");
  layout::LayoutAssignment a = layout::inferLayouts(k, t);
  KernelFunction f = lowerToKernelIR(k, a, t);
  // One global load per register of each loaded tile, one store per register of the sum.
  int64_t loads = 0, stores = 0;
  ir::forEachOp(k.body, [&](const ir::Op& op) {
    if (op.code != ir::OpCode::load && op.code != ir::OpCode::store) return;
    ir::ValueId v = op.code == ir::OpCode::load ? op.results[0] : op.operands.back();
    int64_t regs = layout::toLinear(a.of(v), k.type(v).shape).inSize(layout::kRegister);
    (op.code == ir::OpCode::load ? loads : stores) += regs;
  });
  CHECK(countOps(f.body, KOp::load_global) == loads);
  CHECK(countOps(f.body, KOp::store_global) == stores);
}

TEST_CASE("kernel ir: an f16 gemm on sm_90 runs mma instructions inside its k loop") {
  ir::Kernel k = kernelNamed("gemm_f16");
  const layout::Target& t = layout::targetByName("sm_90");
  layout::LayoutAssignment a = layout::inferLayouts(k, t);
  KernelFunction f = lowerToKernelIR(k, a, t);
  REQUIRE(countOps(f.body, KOp::for_loop) == 1);
  CHECK(countOps(f.body, KOp::mma) > 0);
  CHECK(hasAttr(f.body, KOp::mma, "instr", std::string("m16n8k16")));
  // The loop carries exactly the accumulator's registers.
  ir::ValueId accumulator = -1;
  ir::forEachOp(k.body, [&](const ir::Op& op) { if (op.code == ir::OpCode::fold) accumulator = op.results[0]; });
  int64_t accRegs = layout::toLinear(a.of(accumulator), k.type(accumulator).shape).inSize(layout::kRegister);
  for (const KInst& i : f.body.insts)
    if (i.op == KOp::for_loop) CHECK(int64_t(i.results.size()) == accRegs);
  // Each mma reads a, b and c fragments (8 + 4 + 4 registers for m16n8k16) and writes d.
  for (const KInst& i : f.body.insts)
    for (const KBlock& r : i.regions)
      for (const KInst& m : r.insts)
        if (m.op == KOp::mma) CHECK((m.operands.size() == 16 && m.results.size() == 4));
  CHECK(countOps(f.body, KOp::barrier) > 0);  // operands through workgroup memory
}

KernelFunction contiguousLowering(const ir::Kernel& k, const std::string& target) {
  const layout::Target& t = layout::targetByName(target);
  KernelLoweringOptions contiguous;
  contiguous.vectorTensors.assign(k.tensors.size(), true);
  return lowerToKernelIR(k, layout::inferLayouts(k, t), t, contiguous);
}

// The instructions of the first for's body.
const KBlock& loopBody(const KernelFunction& f) {
  for (const KInst& i : f.body.insts)
    if (i.op == KOp::for_loop) return i.regions.at(0);
  FAIL("no loop");
  return f.body;
}

TEST_CASE("kernel ir: f16 and bf16 gemms on sm_90a run wgmma from read-ahead rings, as the interpreter computes them") {
  for (const char* dtype : {"f16", "bf16"}) {
    CAPTURE(dtype);
    ir::Kernel k = test::retyped(samples::traceSample("gemm_f16"), {{"f16", dtype}});
    KernelFunction f = contiguousLowering(k, "sm_90a");
    CHECK(countOps(f.body, KOp::mma) == 0);
    CHECK(countOps(f.body, KOp::ldmatrix) == 0);  // wgmma reads workgroup memory itself
    // A 128x64 block on one warpgroup: 2 x 4 instructions m64n64k16 per step, one group.
    CHECK(countOps(loopBody(f), KOp::wgmma) == 8);
    CHECK(hasAttr(f.body, KOp::wgmma, "n", int64_t{64}));
    CHECK(countOps(loopBody(f), KOp::wgmma_commit) == 1);
    // Each operand's stage is one TMA box (rows of 64 elements: 128 bytes, swizzled by 128),
    // started by thread 0, waited for on the stage's transaction barrier.
    CHECK(countOps(loopBody(f), KOp::tma_load) == 2);
    CHECK(countOps(loopBody(f), KOp::mbarrier_expect) == 1);
    // No workgroup barrier in the loop: each warp releases the stage it read (lane 0 arrives
    // on the stage's release barrier) and thread 0 waits for those before refilling it.
    CHECK(countOps(loopBody(f), KOp::mbarrier_wait) == 2);
    CHECK(countOps(loopBody(f), KOp::mbarrier_arrive) == 1);
    CHECK(countOps(loopBody(f), KOp::barrier) == 0);
    CHECK(countOps(loopBody(f), KOp::async_copy) == 0);
    CHECK(countOps(loopBody(f), KOp::fence_async_shared) == 0);  // TMA writes as the async proxy wgmma reads with
    // The 128x64 f32 result leaves as two TMA boxes of 128x32 (128-byte rows), from workgroup memory.
    CHECK(std::ranges::count(f.params, KParam::Kind::tensor_map, &KParam::kind) == 3);
    CHECK(countOps(f.body, KOp::tma_store) == 2);
    CHECK(countOps(f.body, KOp::tma_store_wait) == 1);
    CHECK(countOps(f.body, KOp::store_global) == 0);
    for (const SharedAlloc& s : f.shared)
      if (s.dtype != DType::i64) CHECK(s.offset % 1024 == 0);  // 128-byte swizzle patterns
    checkAgainstInterpreter(k, {{37, 144}, {144, 48}, {37, 48}}, f, {1, 1}, 1e-4);
    // Rows not of whole 16-byte vectors: through registers, then stored in wgmma's layout.
    checkAgainstInterpreter(k, sampleShapes("gemm"), "sm_90a", {1, 1}, 1e-4);
  }
}

// Every instruction of kind `op` in b, nested regions included, in program order.
std::vector<KInst*> allOf(KBlock& b, KOp op) {
  std::vector<KInst*> found;
  for (KInst& i : b.insts) {
    if (i.op == op) found.push_back(&i);
    for (KBlock& r : i.regions) std::ranges::copy(allOf(r, op), std::back_inserter(found));
  }
  return found;
}

// The first of them; null if none.
KInst* firstOf(KBlock& b, KOp op) {
  std::vector<KInst*> all = allOf(b, op);
  return all.empty() ? nullptr : all.front();
}

// The block of b (b itself or one nested in it) that holds instruction i; null if none.
KBlock* blockOf(KBlock& b, const KInst* i) {
  for (KInst& inst : b.insts) {
    if (&inst == i) return &b;
    for (KBlock& r : inst.regions)
      if (KBlock* found = blockOf(r, i)) return found;
  }
  return nullptr;
}

TEST_CASE("kernel ir: the simulator holds sm_90a's TMA copies to their barriers and fences: a read before the wait, bytes not expected, a store unfenced or not waited for, fail") {
  ir::Kernel k = samples::traceSample("gemm_f16");
  std::vector<ir::Shape> shapes = {{37, 144}, {144, 48}, {37, 48}};
  HostTensors tensors(k, shapes);
  KernelFunction unwaited = contiguousLowering(k, "sm_90a");
  KInst* wait = firstOf(unwaited.body, KOp::mbarrier_wait);
  REQUIRE(wait != nullptr);
  *wait = KInst{KOp::wgmma_fence, {}, {}, {}, {}};  // the stage is read as it lands
  CHECK_THROWS_WITH_AS(gpu::simulate(unwaited, tensors.sim(), {}, {1, 1}), doctest::Contains("before the TMA copy to it has landed"), Error);
  KernelFunction short_ = contiguousLowering(k, "sm_90a");
  KInst* expect = firstOf(short_.body, KOp::mbarrier_expect);
  REQUIRE(expect != nullptr);
  expect->attrs = {{"alloc", attr(*expect, "alloc")}, {"bytes", intAttr(*expect, "bytes") + 16}};  // never all arrive
  CHECK_THROWS_WITH_AS(gpu::simulate(short_, tensors.sim(), {}, {1, 1}), doctest::Contains("could deadlock"), Error);
  // A stage no warp releases is never refilled: thread 0 would wait forever.
  KernelFunction unreleased = contiguousLowering(k, "sm_90a");
  KInst* arrive = firstOf(unreleased.body, KOp::mbarrier_arrive);
  REQUIRE(arrive != nullptr);
  *arrive = KInst{KOp::wgmma_fence, {}, {}, {}, {}};
  CHECK_THROWS_WITH_AS(gpu::simulate(unreleased, tensors.sim(), {}, {1, 1}), doctest::Contains("could deadlock"), Error);
  // The result's TMA store reads workgroup memory as the async proxy: after a proxy fence, and
  // waited for before the kernel ends.
  KernelFunction unfenced = contiguousLowering(k, "sm_90a");
  auto lastFence = std::find_if(unfenced.body.insts.rbegin(), unfenced.body.insts.rend(),
                                [](const KInst& i) { return i.op == KOp::fence_async_shared; });
  REQUIRE(lastFence != unfenced.body.insts.rend());
  *lastFence = KInst{KOp::wgmma_fence, {}, {}, {}, {}};
  CHECK_THROWS_WITH_AS(gpu::simulate(unfenced, tensors.sim(), {}, {1, 1}), doctest::Contains("tma_store reads byte"), Error);
  KernelFunction unwaitedStore = contiguousLowering(k, "sm_90a");
  KInst* storeWait = firstOf(unwaitedStore.body, KOp::tma_store_wait);
  REQUIRE(storeWait != nullptr);
  *storeWait = KInst{KOp::wgmma_fence, {}, {}, {}, {}};
  CHECK_THROWS_WITH_AS(gpu::simulate(unwaitedStore, tensors.sim(), {}, {1, 1}), doctest::Contains("TMA stores not waited for"), Error);
  // Without the launch facts (16-byte rows and address) TMA may not read the tensors.
  const layout::Target& t = layout::targetByName("sm_90a");
  CHECK(countOps(lowerToKernelIR(k, layout::inferLayouts(k, t), t).body, KOp::tma_load) == 0);
}

TEST_CASE("kernel ir: on sm_90a a dot that does not fill a warpgroup runs mma.sync, its operands read by ldmatrix from TMA rings, as the interpreter computes it") {
  ir::Kernel k = test::retyped(samples::traceSample("gemm_f16"), {{"grid 2 {", "grid 2 warps 2 {"}});
  KernelLoweringOptions contiguous;
  contiguous.vectorTensors.assign(k.tensors.size(), true);
  KernelFunction f = lowerWithinCodeBudget(k, layout::targetByName("sm_90a"), contiguous);
  CHECK(countOps(f.body, KOp::wgmma) == 0);
  CHECK(countOps(loopBody(f), KOp::ldmatrix) > 0);
  CHECK(countOps(loopBody(f), KOp::tma_load) == 2);
  CHECK(countOps(loopBody(f), KOp::barrier) == 0);
  checkAgainstInterpreter(k, {{37, 144}, {144, 48}, {37, 48}}, f, {1, 1}, 1e-4);
}

// The consumers' and the producer's code of a warp-specialized kernel (its branch's regions).
std::pair<const KBlock*, const KBlock*> roles(const KernelFunction& f) {
  for (const KInst& i : f.body.insts)
    if (i.op == KOp::branch) return {&i.regions.at(0), &i.regions.at(1)};
  FAIL("no branch");
  return {nullptr, nullptr};
}

TEST_CASE("kernel ir: a warp-specialized sm_90a gemm: a producer warpgroup issues the TMA copies, the consumers only wait, compute and release, as the interpreter computes it") {
  for (int64_t warps : {4, 8}) {
    CAPTURE(warps);
    ir::Kernel k = test::warpSpecialized(test::withStages(
        test::retyped(samples::traceSample("gemm_f16"), {{"grid 2 {", "grid 2 warps " + std::to_string(warps) + " {"}}), 3));
    KernelLoweringOptions contiguous;
    contiguous.vectorTensors.assign(k.tensors.size(), true);
    KernelFunction f = lowerWithinCodeBudget(k, layout::targetByName("sm_90a"), contiguous);
    CHECK(f.workgroupSize == 32 * warps + 128);
    auto [consumers, producer] = roles(f);
    CHECK(countOps(*consumers, KOp::tma_load) == 0);
    CHECK(countOps(*consumers, KOp::wgmma) > 0);
    CHECK(countOps(*consumers, KOp::mbarrier_arrive) == 1);  // the stage released
    CHECK(countOps(*producer, KOp::tma_load) == 2);
    CHECK(countOps(*producer, KOp::mbarrier_expect) == 1);
    CHECK(countOps(*producer, KOp::mbarrier_wait) == 1);  // for the stage's release
    CHECK(countOps(*producer, KOp::wgmma) == 0);
    // Two consumer warpgroups take the registers the producer gives up.
    CHECK(countOps(f.body, KOp::set_max_registers) == (warps == 8 ? 2 : 0));
    // The consumers' barriers leave the producer out; the two roles meet at named barrier 1.
    CHECK(!hasAttr(*consumers, KOp::barrier, "id", int64_t{0}));
    CHECK(hasAttr(*producer, KOp::barrier, "threads", f.workgroupSize));
    for (const std::vector<ir::Shape>& shapes : {std::vector<ir::Shape>{{37, 144}, {144, 48}, {37, 48}},
                                                 std::vector<ir::Shape>{{130, 400}, {400, 70}, {130, 70}}})
      checkAgainstInterpreter(k, shapes, f, {2, 1}, 1e-4);
  }
}

TEST_CASE("kernel ir: a warp-specialized gemm is persistent: each workgroup goes through its programs, the rings' phases going on, as the interpreter computes it") {
  ir::Kernel k = test::warpSpecialized(test::withStages(
      test::retyped(samples::traceSample("gemm_f16"), {{"grid 2 {", "grid 2 warps 8 {"}}), 3));
  KernelLoweringOptions contiguous;
  contiguous.vectorTensors.assign(k.tensors.size(), true);
  KernelFunction f = lowerWithinCodeBudget(k, layout::targetByName("sm_90a"), contiguous);
  REQUIRE(isPersistent(f.params));
  CHECK(std::ranges::count(f.params, KParam::Kind::program_count, &KParam::kind) == 2);
  auto [consumers, producer] = roles(f);
  // The barriers are set up once, before the loop over the programs, and ended after it.
  CHECK(countOps(*consumers, KOp::mbarrier_init) == 6);
  for (const KBlock* role : {consumers, producer}) {
    const KInst* programs = nullptr;
    for (const KInst& i : role->insts)
      if (i.op == KOp::for_loop) programs = &i;
    REQUIRE(programs != nullptr);
    CHECK(countOps(programs->regions.at(0), KOp::mbarrier_init) == 0);
    CHECK(countOps(programs->regions.at(0), KOp::for_loop) == 1);  // the fold, inside
  }
  // Nothing else lies on the rings' bytes: the result's staging for its TMA store is above them.
  int64_t ringsEnd = 0;
  for (const SharedAlloc& a : f.shared)
    if (a.layout.find("read-ahead ring") != std::string::npos) ringsEnd = std::max(ringsEnd, a.offset + a.bytes);
  for (const SharedAlloc& a : f.shared)
    if (a.layout.find("read-ahead ring") == std::string::npos && a.dtype != DType::i64) CHECK(a.offset >= ringsEnd);
  // 3 x 2 programs on kSimulatedMultiprocessors (3) workgroups, two programs each; K of 5
  // steps, so that a program's first step is on another stage and phase than the one before's.
  const std::vector<ir::Shape> shapes = {{300, 320}, {320, 70}, {300, 70}};
  checkAgainstInterpreter(k, shapes, f, {3, 2}, 1e-4);
  checkAgainstInterpreter(k, {{37, 40}, {40, 48}, {37, 48}}, f, {1, 1}, 1e-4);
  // Consumers whose steps start again at each program wait for stages the producer fills later,
  // or read them before: the simulator reports it (a hang or a read before the copy landed).
  KernelFunction restarted = f;
  KBlock& consumerCode = restarted.body.insts.back().regions.at(0);
  auto programLoop = std::ranges::find(consumerCode.insts, KOp::for_loop, &KInst::op);
  REQUIRE(programLoop != consumerCode.insts.end());
  KBlock& perProgram = programLoop->regions.at(0);
  perProgram.insts.back().operands = {perProgram.args.at(1)};  // yield the same base
  HostTensors tensors(k, shapes);
  CHECK_THROWS_AS(gpu::simulate(restarted, tensors.sim(), {}, {3, 2}), Error);
  // 128 x 256 blocks: the result leaves a box (128 x 32 f32) at a time through two buffers of
  // 16 KiB, so that three stages of rings stay beside them within the 227 KiB: persistent.
  {
    Tensor a = Tensor::zeros({256, 256}, DType::bf16), b = Tensor::zeros({256, 512}, DType::bf16), c = Tensor::zeros({256, 512});
    CaptureTraces capture;
    samples::gemm(a, b, c, {.device = "interp"}, samples::GemmBlocks{128, 256, 64, 3, 8, true});
    samples::gemm(a, b, c, {.device = "interp"}, samples::GemmBlocks{128, 256, 128, 3, 8, true});
    samples::gemm(a, b, c, {.device = "interp"}, samples::GemmBlocks{128, 32, 64, 3, 8, true});
    const ir::Kernel& wide = capture.kernels().at(0);
    contiguous.vectorTensors.assign(wide.tensors.size(), true);
    KernelFunction g = lowerWithinCodeBudget(wide, layout::targetByName("sm_90a"), contiguous);
    CHECK(g.workgroupSize == 384);
    CHECK(isPersistent(g.params));
    CHECK(countOps(g.body, KOp::tma_store_wait) == 8);  // one a box: the whole block staged at once would wait once
    CHECK(g.sharedBytes() == 181248);  // 48 KiB of rings per stage, 32 KiB of buffers for the result, barriers
    // 3 x 3 programs on 3 workgroups, three each.
    const std::vector<ir::Shape> wideShapes = {{300, 70}, {70, 520}, {300, 520}};
    checkAgainstInterpreter(wide, wideShapes, g, {3, 3}, 1e-4);
    HostTensors wideTensors(wide, wideShapes);
    // A box staged over the buffer whose store is not waited for, and one staged before every
    // thread knows that the first thread waited: the simulator reports both.
    KernelFunction unwaited = g;
    for (KInst* wait : allOf(unwaited.body, KOp::tma_store_wait)) wait->attrs = {{"pending", int64_t{2}}};
    CHECK_THROWS_WITH_AS(gpu::simulate(unwaited, wideTensors.sim(), {}, {3, 3}), doctest::Contains("while a TMA store may still read it"), Error);
    KernelFunction unsynchronized = g;
    const KInst* secondWait = allOf(unsynchronized.body, KOp::tma_store_wait).at(1);
    KBlock* epilogue = blockOf(unsynchronized.body, secondWait);
    REQUIRE(epilogue != nullptr);
    size_t next = size_t(secondWait - epilogue->insts.data()) + 1;
    REQUIRE(next < epilogue->insts.size());
    REQUIRE(epilogue->insts[next].op == KOp::barrier);
    epilogue->insts[next] = KInst{KOp::wgmma_fence, {}, {}, {}, {}};
    CHECK_THROWS_WITH_AS(gpu::simulate(unsynchronized, wideTensors.sim(), {}, {3, 3}), doctest::Contains("a race in workgroup memory"), Error);
    // Rings of 96 KiB a stage: three pass the budget, persistent or not; with two the kernel is
    // persistent again (196,608 bytes of rings, 32,768 of box buffers).
    const ir::Kernel& deep = capture.kernels().at(1);
    KernelFunction h = lowerWithinCodeBudget(deep, layout::targetByName("sm_90a"), contiguous);
    CHECK(isPersistent(h.params));
    CHECK(countOps(h.body, KOp::mbarrier_init) == 4);
    CHECK(h.sharedBytes() == 230400);
    // 128 x 32 f32: a single box, one buffer, each program's store waited for before the next's.
    const ir::Kernel& narrow = capture.kernels().at(2);
    KernelFunction one = lowerWithinCodeBudget(narrow, layout::targetByName("sm_90a"), contiguous);
    CHECK(isPersistent(one.params));
    CHECK(countOps(one.body, KOp::tma_store) == 1);
    checkAgainstInterpreter(narrow, {{300, 70}, {70, 90}, {300, 90}}, one, {3, 3}, 1e-4);
  }
  // Without persistence, a workgroup per program.
  KernelLoweringOptions onePerProgram = contiguous;
  onePerProgram.persistent = false;
  KernelFunction plain = lowerWithinCodeBudget(k, layout::targetByName("sm_90a"), onePerProgram);
  CHECK(!isPersistent(plain.params));
  checkAgainstInterpreter(k, shapes, plain, {3, 2}, 1e-4);
}

TEST_CASE("kernel ir: the simulator runs a warp-specialized kernel's roles side by side and reports a producer or consumer that would wait forever") {
  ir::Kernel k = test::warpSpecialized(test::withStages(samples::traceSample("gemm_f16"), 3));
  HostTensors tensors(k, {{37, 400}, {400, 48}, {37, 48}});
  // Consumers that never release a stage: the producer waits forever for it.
  KernelFunction unreleased = contiguousLowering(k, "sm_90a");
  KInst* arrive = firstOf(unreleased.body, KOp::mbarrier_arrive);
  REQUIRE(arrive != nullptr);
  *arrive = KInst{KOp::wgmma_fence, {}, {}, {}, {}};
  CHECK_THROWS_WITH_AS(gpu::simulate(unreleased, tensors.sim(), {}, {1, 1}), doctest::Contains("the kernel would hang"), Error);
  // A producer that never arrives at the barrier closing the loop.
  KernelFunction early = contiguousLowering(k, "sm_90a");
  KBlock& producer = early.body.insts.back().regions.at(1);
  REQUIRE(producer.insts.back().op == KOp::barrier);
  producer.insts.pop_back();
  CHECK_THROWS_WITH_AS(gpu::simulate(early, tensors.sim(), {}, {1, 1}), doctest::Contains("named barrier 1 waits for 128"), Error);
  // Without specialization (a fold whose operands are not read by TMA) the kernel is as before.
  const layout::Target& t = layout::targetByName("sm_90a");
  CHECK(countOps(lowerToKernelIR(k, layout::inferLayouts(k, t), t).body, KOp::branch) == 0);
}

// The in-loop wgmma_wait of a lowered function (pending 1: the previous iteration's group).
KInst* inFlightWait(KBlock& b) {
  for (KInst& i : b.insts) {
    if (i.op == KOp::wgmma_wait && i.operands.empty()) return &i;
    for (KBlock& r : i.regions)
      if (KInst* found = inFlightWait(r)) return found;
  }
  return nullptr;
}

TEST_CASE("kernel ir: with 3 stages an sm_90a gemm keeps one wgmma group in flight across iterations") {
  ir::Kernel k = test::withStages(samples::traceSample("gemm_f16"), 3);
  KernelFunction f = contiguousLowering(k, "sm_90a");
  KInst* wait = inFlightWait(f.body);
  REQUIRE(wait != nullptr);
  CHECK(intAttr(*wait, "pending") == 1);
  // Copies run one iteration ahead, not two: the prologue fills one stage (a box of each operand).
  CHECK(countOps(f.body, KOp::tma_load) - countOps(loopBody(f), KOp::tma_load) == 2);
  CHECK(countOps(f.body, KOp::wgmma_wait) == 2);  // in the loop, and for the accumulator after it
  checkAgainstInterpreter(k, {{37, 400}, {400, 48}, {37, 48}}, f, {1, 1}, 1e-4);
  // Waiting for none but the last two groups would refill a stage a wgmma in flight still reads.
  wait->attrs = {{"pending", int64_t{2}}};
  HostTensors tensors(k, {{37, 400}, {400, 48}, {37, 48}});
  CHECK_THROWS_WITH_AS(gpu::simulate(f, tensors.sim(), {}, {1, 1}), doctest::Contains("may be in flight"), Error);
  // Two stages leave no room: each dot waits for its own group.
  KernelFunction two = contiguousLowering(test::withStages(k, 2), "sm_90a");
  CHECK(inFlightWait(two.body) == nullptr);
}

TEST_CASE("kernel ir: on sm_90a an a read transposed (its rows along M in memory) is M-major for wgmma, as the interpreter computes it") {
  ir::Kernel k = ir::parse(R"(kernel @transposed(t0: tensor<f16, 2>, t1: tensor<f16, 2>, t2: tensor<f32, 2>) grid 1 {
  %0 = constant() {value = 0} : i64
  %1 = load(%0, %0) {fill = 0.0, tensor = 0} : tile<32x128xf16>
  %2 = permute(%1) {perm = [1, 0]} : tile<128x32xf16>
  %3 = load(%0, %0) {fill = 0.0, tensor = 1} : tile<32x64xf16>
  %4 = dot(%2, %3) : tile<128x64xf32>
  store(%0, %0, %4) {tensor = 2}
})");
  ir::verify(k);
  k = ir::canonicalize(k);
  const layout::Target& t = layout::targetByName("sm_90a");
  KernelFunction f = lowerToKernelIR(k, layout::inferLayouts(k, t), t);
  CHECK(hasAttr(f.body, KOp::wgmma, "transA", int64_t{1}));   // 128 M elements: two 64-column blocks
  CHECK(hasAttr(f.body, KOp::wgmma, "leadingA", int64_t{32 * 128}));  // 32 rows of 128 bytes apart
  checkAgainstInterpreter(k, {{29, 101}, {29, 50}, {101, 50}}, f, {1}, 1e-4);
}

TEST_CASE("kernel ir: f16 attention on sm_90a runs both products on wgmma: K transposed (K-major b), P from registers") {
  KernelFunction f = lowered("attention_f16", "sm_90a");
  CHECK(countOps(f.body, KOp::wgmma) > 0);
  CHECK(countOps(f.body, KOp::mma) == 0);
  CHECK(hasAttr(f.body, KOp::wgmma, "transB", int64_t{0}));  // Q K^T: k along K's rows
  CHECK(hasAttr(f.body, KOp::wgmma, "transB", int64_t{1}));  // P V: V's rows along k
  // P is the first product's accumulator, already in wgmma's a fragments: read from registers.
  std::function<int64_t(const KBlock&)> registerA = [&](const KBlock& b) {
    int64_t n = 0;
    for (const KInst& i : b.insts) {
      n += i.op == KOp::wgmma && !gpu::hasAttr(i, "allocA");
      for (const KBlock& r : i.regions) n += registerA(r);
    }
    return n;
  };
  CHECK(registerA(f.body) == 4);  // 64 x 64 x 64: one warpgroup, 4 k steps
  // Q, the same in every iteration, is stored for wgmma once before the loop: with K and V in
  // TMA rings, the loop body stores nothing to workgroup memory and has no workgroup barrier.
  KernelFunction tma = contiguousLowering(samples::traceSample("attention_f16"), "sm_90a");
  CHECK(countOps(loopBody(tma), KOp::tma_load) > 0);
  CHECK(countOps(loopBody(tma), KOp::store_shared) == 0);
  CHECK(countOps(loopBody(tma), KOp::barrier) == 0);
  CHECK(countOps(tma.body, KOp::store_shared) > 0);
  checkAgainstInterpreter("attention_f16", "sm_90a", {1, 2}, 1e-2);
  checkAgainstInterpreter(samples::traceSample("attention_f16"), sampleShapes("attention_f16"), tma, {1, 2}, 1e-2);
}

// FP8 attention at 144 keys (a partial key block past two scale blocks) and at the sample's 37.
TEST_CASE("kernel ir: FP8 attention runs both products on 8-bit wgmma (sm_90a) or mma.sync (sm_90), as the interpreter computes it") {
  ir::Kernel k = kernelNamed("attention_f8e4m3");
  const int64_t seq = 144;
  const std::vector<ir::Shape> shapes{{1, 2, seq, 64}, {1, 2, seq, 64}, {1, 2, 64, seq}, {2, seq, 1},
                                      {2, 2, 1},       {2, 2, 1},       {1, 2, seq, 64}};
  KernelFunction f = contiguousLowering(k, "sm_90a");
  CHECK(countOps(f.body, KOp::mma) == 0);
  CHECK(hasAttr(loopBody(f), KOp::wgmma, "k", int64_t{32}));
  // k and v, both along the head dim and the keys in memory (K-major for both products), come
  // by TMA; P reaches its product's a fragments in registers, four 8-bit values a shuffle: the
  // loop stores nothing to workgroup memory and has no workgroup barrier.
  CHECK(countOps(loopBody(f), KOp::tma_load) == 2);
  CHECK(countOps(loopBody(f), KOp::store_shared) == 0);
  CHECK(countOps(loopBody(f), KOp::barrier) == 0);
  // A thread's 32 values of P make 8 words, each half from one of two lanes; a lane sends both
  // halves a receiver may want in one packed word (the same for both senders), and one
  // byte_perm a word merges the receiver's halves.
  CHECK(countOps(loopBody(f), KOp::shuffle_idx) == 16);
  CHECK(countOps(loopBody(f), KOp::pack) == 8);
  CHECK(countOps(loopBody(f), KOp::byte_perm) == 8);
  CHECK(!hasAttr(f.body, KOp::wgmma, "transB", int64_t{1}));
  checkAgainstInterpreter(k, shapes, f, {3, 2}, 1e-5);
  checkAgainstInterpreter(k, shapes, "sm_90a", {3, 2}, 1e-5);
  checkAgainstInterpreter("attention_f8e4m3", "sm_90a", {1, 2}, 1e-5);
  KernelFunction portable = contiguousLowering(k, "sm_90");
  CHECK(hasAttr(portable.body, KOp::mma, "instr", std::string("m16n8k32")));
  checkAgainstInterpreter(k, shapes, portable, {3, 2}, 1e-5);
  // e5m2 at head dim 128, causal, 8 warps on 128 query rows: two warpgroups.
  CaptureTraces capture;
  const int64_t dim = 128;
  samples::attention(Tensor::zeros({1, 1, seq, dim}, DType::f8e5m2), Tensor::zeros({1, 1, seq, dim}, DType::f8e5m2),
                     Tensor::zeros({1, 1, dim, seq}, DType::f8e5m2).transpose(2, 3), Tensor::zeros({1, 1, seq, dim}), true,
                     {.device = "interp"}, {.m = 128, .n = 64, .stages = 3, .warps = 8},
                     {Tensor::zeros({1, seq, 1}), Tensor::zeros({1, 2, 1}), Tensor::zeros({1, 2, 1})});
  const ir::Kernel& wide = capture.kernels().at(0);
  KernelLoweringOptions contiguous;  // as the device lowers it: its warps, the key loop split at the mask
  contiguous.vectorTensors.assign(wide.tensors.size(), true);
  KernelFunction twoGroups = lowerWithinCodeBudget(wide, layout::targetByName("sm_90a"), contiguous);
  CHECK(twoGroups.workgroupSize == 256);
  CHECK(hasAttr(loopBody(twoGroups), KOp::wgmma, "b", std::string("f8e5m2")));
  checkAgainstInterpreter(wide, {{1, 1, seq, dim}, {1, 1, seq, dim}, {1, 1, dim, seq}, {1, seq, 1}, {1, 2, 1}, {1, 2, 1}, {1, 1, seq, dim}},
                          twoGroups, {2, 1}, 1e-5);
}

TEST_CASE("samples: FP8 attention's scales of another shape, key blocks past a scale block or heads past 128 dims are Errors naming them") {
  auto errorOf = [](int64_t seq, int64_t dim, int64_t blockN, int64_t kBlocks) -> std::string {
    const Shape shape{1, 2, seq, dim};
    Tensor q = Tensor::zeros(shape, DType::f8e4m3), out = Tensor::zeros(shape);
    try {
      samples::attention(q, q, q, out, false, {.device = "interp"}, {.m = 64, .n = blockN},
                         {Tensor::zeros({2, seq, 1}), Tensor::zeros({2, kBlocks, 1}), Tensor::zeros({2, cdiv(seq, 128), 1})});
    } catch (const Error& e) {
      return e.what();
    }
    return "nothing thrown";
  };
  CHECK(errorOf(200, 64, 64, 2) == "nothing thrown");
  CHECK(errorOf(200, 64, 64, 1) == "attention: k's scales are f32 [2, 1, 1]; they must be f32 [2, 2, 1]");
  CHECK(errorOf(200, 64, 256, 2).find("block_n 256 must divide the key scales' blocks of 128") != std::string::npos);
  CHECK(errorOf(200, 256, 64, 2).find("8-bit heads of 256 dims") != std::string::npos);
  const Shape shape{1, 2, 64, 64};
  Tensor e4m3 = Tensor::zeros(shape, DType::f8e4m3), half = Tensor::zeros(shape, DType::f16), out = Tensor::zeros(shape);
  const samples::AttentionScales scales{Tensor::zeros({2, 64, 1}), Tensor::zeros({2, 1, 1}), Tensor::zeros({2, 1, 1})};
  auto message = [&](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "nothing thrown";
  };
  CHECK(message([&] { samples::attention(e4m3, e4m3, half, out, false, {.device = "interp"}, {}, scales); }) ==
        "attention: scales are for 8-bit float q, k and v; v is f16");
  CHECK(message([&] { samples::attention(e4m3, e4m3, e4m3, out, false, {.device = "interp"}, {}, {scales.q, scales.k, {}}); }) ==
        "attention: v's scales are missing: q, k and v take theirs together");
  CHECK(message([&] { samples::quantizeFp8(Tensor::zeros({2, 64, 64}), Tensor::zeros({2, 64, 64}, DType::f8e4m3),
                                           Tensor::zeros({2, 1, 1}), 1, {.device = "interp"}); }) ==
        "quantizeFp8: x [2, 64, 64] takes an 8-bit q of its shape and f32 scales [2, 64, 1]; got f8e4m3 q [2, 64, 64] "
        "and f32 scales [2, 1, 1]");
}

TEST_CASE("kernel ir: f16 and bf16 gemm and attention on gfx942 (MFMA, wave64) and gfx1100 (WMMA, wave32) compute as the interpreter does") {
  // The simulator takes MFMA's and WMMA's fragments from AMD's ISA documents, the AMDGPU printer
  // hands the registers to the instructions in layout/'s order: agreeing here, they agree there.
  for (const char* dtype : {"f16", "bf16"})
    for (const char* target : {"gfx942", "gfx1100"}) {
      CAPTURE(dtype);
      CAPTURE(target);
      ir::Kernel gemm = test::retyped(samples::traceSample("gemm_f16"), {{"f16", dtype}});
      ir::Kernel attention = test::retyped(samples::traceSample("attention_f16"), {{"f16", dtype}});
      CHECK(hasAttr(contiguousLowering(gemm, target).body, KOp::mma, "instr",
                    std::string(std::string(target) == "gfx942" ? "32x32x8" : "16x16x16")));
      // Odd sizes with any rows; rows of whole 16-byte vectors, read 16 bytes at a time.
      checkAgainstInterpreter(gemm, {{37, 29}, {29, 23}, {37, 23}}, target, {1, 1}, 2e-2);
      checkAgainstInterpreter(gemm, {{37, 40}, {40, 24}, {37, 24}}, contiguousLowering(gemm, target), {1, 1}, 2e-2);
      checkAgainstInterpreter(attention, sampleShapes("attention_f16"), target, {1, 2}, 2e-2);
      checkAgainstInterpreter(attention, sampleShapes("attention_f16"), contiguousLowering(attention, target), {1, 2}, 2e-2);
    }
}

TEST_CASE("kernel ir: a gemm of 16-row blocks runs MFMA 16x16x16 on gfx942 (too small for 32x32x8), as the interpreter computes it") {
  for (DType dtype : {DType::f16, DType::bf16}) {
    CAPTURE(dtypeName(dtype));
    CaptureTraces capture;
    samples::gemm(Tensor::zeros({37, 29}, dtype), Tensor::zeros({29, 23}, dtype), Tensor::zeros({37, 23}),
                  {.device = "interp"}, samples::GemmBlocks{16, 64, 32});
    const ir::Kernel& k = capture.kernels().at(0);
    KernelFunction f = contiguousLowering(k, "gfx942");
    CHECK(hasAttr(f.body, KOp::mma, "instr", std::string("16x16x16")));
    CHECK_FALSE(hasAttr(f.body, KOp::mma, "instr", std::string("32x32x8")));
    checkAgainstInterpreter(k, {{37, 29}, {29, 23}, {37, 23}}, "gfx942", {3, 1}, 2e-2);
    checkAgainstInterpreter(k, {{37, 48}, {48, 24}, {37, 24}}, f, {3, 1}, 2e-2);
  }
}

// Workgroups take a GEMM's programs in bands of 8 row blocks (ir-level program ids unchanged):
// every block written once, the last band short; attention keeps the workgroups' own order.
TEST_CASE("kernel ir: a gemm's programs run in bands of 8 row blocks, column by column, as the interpreter computes them") {
  CaptureTraces capture;
  samples::gemm(Tensor::zeros({170, 29}, DType::f16), Tensor::zeros({29, 45}, DType::f16), Tensor::zeros({170, 45}),
                {.device = "interp"}, samples::GemmBlocks{16, 16, 32, 2, 1});  // one warp: mma.sync / MFMA
  const ir::Kernel& k = capture.kernels().at(0);
  for (const std::string target : {"sm_90", "gfx942"}) {
    CAPTURE(target);
    KernelFunction f = contiguousLowering(k, target);
    CHECK(countOps(f.body, KOp::workgroup_count) == 2);  // the grid's rows and columns, for the bands
    checkAgainstInterpreter(k, {{170, 40}, {40, 48}, {170, 48}}, f, {11, 3}, 2e-2);  // rows of whole vectors
    checkAgainstInterpreter(k, {{170, 29}, {29, 45}, {170, 45}}, target, {11, 3}, 2e-2);
  }
  CHECK(countOps(contiguousLowering(kernelNamed("attention_f16"), "sm_90").body, KOp::workgroup_count) == 0);
}

// The f16 gemm with i8 operands and an i32 accumulator: the m16n8k32 integer matrix unit.
ir::Kernel gemmI8() { return test::retyped(samples::traceSample("gemm_f16"), {{"f16", "i8"}, {"f32", "i32"}, {"= 0.0", "= 0"}}); }

TEST_CASE("kernel ir: an i8 gemm accumulates in i32 on mma.sync m16n8k32, read ahead, as the interpreter computes it") {
  ir::Kernel k = gemmI8();
  KernelFunction f = contiguousLowering(k, "sm_90");
  CHECK(hasAttr(f.body, KOp::mma, "instr", std::string("m16n8k32")));
  CHECK(countOps(loopBody(f), KOp::async_copy) == (128 * 64 + 64 * 64) / 128 / 16);  // 16 i8 per copy
  // Rows of whole 16-byte vectors read ahead; other sizes through registers, element by element.
  checkAgainstInterpreter(k, {{37, 144}, {144, 48}, {37, 48}}, f, {1, 1}, 0);
  checkAgainstInterpreter(k, sampleShapes("gemm"), "sm_80", {1, 1}, 0);
}

// The same with u8 activations times i8 weights: m16n8k32's u8.s8 form.
TEST_CASE("kernel ir: a u8 x i8 gemm accumulates in i32 on mma.sync m16n8k32 with an unsigned a, as the interpreter computes it") {
  ir::Kernel k = test::retyped(gemmI8(), {{"t0: tensor<i8", "t0: tensor<u8"}, {"tile<128x64xi8>", "tile<128x64xu8>"}});
  KernelFunction f = contiguousLowering(k, "sm_90");
  CHECK(hasAttr(f.body, KOp::mma, "a", std::string("u8")));
  CHECK(hasAttr(f.body, KOp::mma, "b", std::string("i8")));
  checkAgainstInterpreter(k, {{37, 144}, {144, 48}, {37, 48}}, f, {1, 1}, 0);
  checkAgainstInterpreter(k, sampleShapes("gemm"), "sm_80", {1, 1}, 0);
}

// The f16 gemm with 8-bit float operands (e4m3 x e5m2) and its f32 accumulator.
ir::Kernel gemmF8() {
  return test::retyped(samples::traceSample("gemm_f16"), {{"f16", "f8e4m3"},
                                                         {"t1: tensor<f8e4m3", "t1: tensor<f8e5m2"},
                                                         {"tile<64x64xf8e4m3>", "tile<64x64xf8e5m2>"}});
}

TEST_CASE("kernel ir: an 8-bit float gemm runs mma.sync m16n8k32 on sm_90, the FMA dot on sm_80, as the interpreter computes it") {
  ir::Kernel k = gemmF8();
  KernelFunction f = contiguousLowering(k, "sm_90");
  CHECK(hasAttr(f.body, KOp::mma, "instr", std::string("m16n8k32")));
  CHECK(hasAttr(f.body, KOp::mma, "a", std::string("f8e4m3")));
  CHECK(hasAttr(f.body, KOp::mma, "b", std::string("f8e5m2")));
  CHECK(hasAttr(f.body, KOp::mma, "c", std::string("f32")));
  checkAgainstInterpreter(k, {{37, 144}, {144, 48}, {37, 48}}, f, {1, 1}, 1e-5);
  const layout::Target& sm80 = layout::targetByName("sm_80");  // no 8-bit float matrix unit before sm_89
  CHECK(countOps(lowerToKernelIR(k, layout::inferLayouts(k, sm80), sm80).body, KOp::mma) == 0);
  checkAgainstInterpreter(k, sampleShapes("gemm"), "sm_80", {1, 1}, 1e-5);
}

TEST_CASE("kernel ir: an 8-bit float gemm on sm_90a runs wgmma m64nNk32 with both operands K-major, as the interpreter computes it") {
  ir::Kernel k = gemmF8();
  KernelFunction f = contiguousLowering(k, "sm_90a");
  CHECK(countOps(f.body, KOp::mma) == 0);
  CHECK(countOps(loopBody(f), KOp::wgmma) == 4);  // 128x64 on one warpgroup: 2 x 2 of m64n64k32 per step
  CHECK(hasAttr(f.body, KOp::wgmma, "k", int64_t{32}));
  CHECK(!hasAttr(f.body, KOp::wgmma, "transA", int64_t{1}));
  CHECK(!hasAttr(f.body, KOp::wgmma, "transB", int64_t{1}));
  // a's rows run along k in memory too: read ahead by TMA; b's run along n, so it is stored
  // transposed from registers.
  CHECK(countOps(loopBody(f), KOp::tma_load) == 1);
  checkAgainstInterpreter(k, {{37, 144}, {144, 48}, {37, 48}}, f, {1, 1}, 1e-5);
  checkAgainstInterpreter(k, sampleShapes("gemm"), "sm_90a", {1, 1}, 1e-5);
}

TEST_CASE("kernel ir: the scaled FP8 gemm with B stored [N, K] runs wgmma on two warpgroups, both operands read ahead by TMA, as the interpreter computes it") {
  const int64_t M = 130, N = 200, K = 384;  // rows of whole 16-byte vectors, partial blocks
  Tensor a = Tensor::zeros({M, K}, DType::f8e4m3), bStored = Tensor::zeros({N, K}, DType::f8e4m3);
  Tensor aScale = Tensor::zeros({M, K / samples::kScaleBlock}), bStoredScale = Tensor::zeros({2, K / samples::kScaleBlock});
  CaptureTraces capture;
  samples::scaledGemm(a, aScale, bStored.transpose(), bStoredScale.transpose(), Tensor::zeros({M, N}), {.device = "interp"},
                      samples::GemmBlocks{128, 128, 128, 3, 8});  // scaledGemmBlocks' on CUDA
  const ir::Kernel& k = capture.kernels().at(0);
  KernelLoweringOptions contiguous;
  contiguous.vectorTensors.assign(k.tensors.size(), true);
  KernelFunction f = lowerWithinCodeBudget(k, layout::targetByName("sm_90a"), contiguous);
  CHECK(f.workgroupSize == 256);
  CHECK(countOps(f.body, KOp::mma) == 0);
  CHECK(hasAttr(f.body, KOp::wgmma, "k", int64_t{32}));
  CHECK(countOps(loopBody(f), KOp::tma_load) == 2);  // 128 8-bit elements of K: one 128-byte box each
  // Nothing goes through workgroup memory but what TMA and wgmma move: the rows' scales are
  // loaded in the dot's layout, where they scale its block.
  CHECK(countOps(loopBody(f), KOp::store_shared) == 0);
  CHECK(countOps(loopBody(f), KOp::barrier) == 0);
  // The tensors in order of first read: a, b stored, a's scales, b's (a transposed view), c.
  checkAgainstInterpreter(k, {{M, K}, {N, K}, {M, K / 128}, {K / 128, 2}, {M, N}}, f, {2, 2}, 1e-5);
  // Warp-specialized: the producer copies a's and b's blocks; the consumers still load the scales.
  KernelFunction specialized = lowerWithinCodeBudget(test::warpSpecialized(k), layout::targetByName("sm_90a"), contiguous);
  CHECK(specialized.workgroupSize == 384);
  CHECK(countOps(*roles(specialized).second, KOp::tma_load) == 2);
  CHECK(countOps(*roles(specialized).first, KOp::load_global) > 0);
  checkAgainstInterpreter(k, {{M, K}, {N, K}, {M, K / 128}, {K / 128, 2}, {M, N}}, specialized, {2, 2}, 1e-5);
}

TEST_CASE("kernel ir: matrix operands leave workgroup memory through ldmatrix, the transposed one with .trans") {
  for (const char* name : {"gemm_f16", "attention_f16"}) {
    CAPTURE(name);
    KernelFunction f = lowered(name, "sm_80");
    CHECK(countOps(f.body, KOp::ldmatrix) > 0);
    CHECK(countOps(f.body, KOp::load_shared) == 0);
    CHECK(hasAttr(f.body, KOp::ldmatrix, "trans", int64_t{1}));  // b is k x n, row-major in memory
    CHECK(hasAttr(f.body, KOp::ldmatrix, "num", int64_t{4}));
  }
  // Without the instruction (and on f32, which it does not move) every element is a load.
  CHECK(countOps(lowered("gemm_f16", "gfx1100").body, KOp::ldmatrix) == 0);
  CHECK(countOps(lowered("attention", "sm_80").body, KOp::ldmatrix) == 0);
}

TEST_CASE("kernel ir: blocks of contiguous, aligned tensors move 16 bytes per access where offsets keep them aligned") {
  ir::Kernel k = test::withStages(kernelNamed("gemm_f16"), 1);  // loads into registers, not read ahead
  const layout::Target& t = layout::targetByName("sm_90");
  layout::LayoutAssignment a = layout::inferLayouts(k, t);
  KernelLoweringOptions contiguous;
  contiguous.vectorTensors.assign(k.tensors.size(), true);
  KernelFunction general = lowerToKernelIR(k, a, t), vectors = lowerToKernelIR(k, a, t, contiguous);
  CHECK_FALSE(hasAttr(general.body, KOp::load_global, "vec", int64_t{8}));
  CHECK(hasAttr(vectors.body, KOp::load_global, "vec", int64_t{8}));  // 8 f16 = 16 bytes
  CHECK(countOps(vectors.body, KOp::load_global) * 8 == countOps(general.body, KOp::load_global));
  CHECK(hasAttr(vectors.body, KOp::store_global, "vec", int64_t{2}));  // an mma accumulator holds column pairs
  // Workgroup memory is ours: whatever the launch, a thread stores its 64 + 32 operand elements 8 at a time.
  CHECK(countOps(general.body, KOp::load_global) == 128 * 64 / 128 + 64 * 64 / 128);
  for (const KernelFunction* f : {&general, &vectors}) CHECK(countOps(f->body, KOp::store_shared) == (64 + 32) / 8);
  // One tensor's facts do not vectorize another's accesses.
  KernelLoweringOptions onlyB;
  onlyB.vectorTensors = {false, true};
  KernelFunction some = lowerToKernelIR(k, a, t, onlyB);
  CHECK(countOps(some.body, KOp::load_global) == 128 * 64 / 128 + 64 * 64 / 128 / 8);  // a by elements, b by vectors
  // Vulkan has no vector access: the facts change nothing there.
  const layout::Target& vulkan = layout::targetByName("vulkan");
  ir::Kernel small = samples::traceSample("gemm_f16", "vulkan");
  KernelLoweringOptions all;
  all.vectorTensors.assign(small.tensors.size(), true);
  CHECK(print(lowerToKernelIR(small, layout::inferLayouts(small, vulkan), vulkan, all)) ==
        print(lowerToKernelIR(small, layout::inferLayouts(small, vulkan), vulkan)));
}

TEST_CASE("kernel ir: vector accesses and ldmatrix compute what the interpreter does") {
  ir::Kernel gemm = kernelNamed("gemm_f16"), attention = kernelNamed("attention_f16");
  KernelLoweringOptions contiguous;
  contiguous.vectorTensors.assign(gemm.tensors.size(), true);
  // Rows of 8-element multiples (the launch facts); 136 = three k blocks, the last one partial.
  checkAgainstInterpreter(gemm, {{72, 136}, {136, 56}, {72, 56}}, "sm_80", {1, 1}, 1e-2, contiguous);
  contiguous.vectorTensors.assign(attention.tensors.size(), true);
  checkAgainstInterpreter(attention, sampleShapes("attention_f16"), "sm_80", {1, 2}, 1e-2, contiguous);
}

TEST_CASE("kernel ir: a fold's dot operands are read ahead into rings of its stages by asynchronous copies") {
  ir::Kernel gemm = kernelNamed("gemm_f16");
  const int64_t stageBytes = (128 * 64 + 64 * 64) * 2;  // a and b blocks of f16
  for (int64_t stages : {2, 3, 4}) {
    CAPTURE(stages);
    KernelFunction f = contiguousLowering(test::withStages(gemm, stages), "sm_90");
    // 16-byte copies: 64 + 32 elements per thread and iteration, once per stage but the last.
    CHECK(countOps(loopBody(f), KOp::async_copy) == (64 + 32) / 8);
    CHECK(countOps(f.body, KOp::async_copy) == stages * (64 + 32) / 8);
    CHECK(hasAttr(loopBody(f), KOp::async_wait, "pending", stages - 2));
    CHECK(countOps(loopBody(f), KOp::store_shared) == 0);
    CHECK(countOps(loopBody(f), KOp::load_global) == 0);
    CHECK(countOps(loopBody(f), KOp::ldmatrix) > 0);
    CHECK(f.sharedBytes() == stages * stageBytes);
  }
  // sm_80 has 48 KiB: three stages do not fit, two do.
  CHECK(contiguousLowering(test::withStages(gemm, 3), "sm_80").sharedBytes() == 2 * stageBytes);
  // One stage, a target without asynchronous copies, or 2-byte elements not known to form
  // 16-byte rows: loads into registers, as before.
  CHECK(countOps(contiguousLowering(test::withStages(gemm, 1), "sm_90").body, KOp::async_copy) == 0);
  CHECK(countOps(contiguousLowering(gemm, "gfx1100").body, KOp::async_copy) == 0);
  CHECK(countOps(lowered("gemm_f16", "sm_90").body, KOp::async_copy) == 0);
}

TEST_CASE("kernel ir: on AMD a fold's dot operands are read one iteration ahead through registers, at one barrier per iteration") {
  ir::Kernel gemm = kernelNamed("gemm_f16");
  const int64_t stageBytes = (128 * 64 + 64 * 64) * 2;  // a and b blocks of f16
  for (const char* target : {"gfx942", "gfx1100"}) {
    CAPTURE(target);
    KernelFunction f = contiguousLowering(gemm, target);  // 2 stages by default
    const KBlock& body = loopBody(f);
    auto position = [&](KOp op, bool last) {
      std::vector<ptrdiff_t> at;
      for (size_t i = 0; i < body.insts.size(); ++i)
        if (body.insts[i].op == op) at.push_back(ptrdiff_t(i));
      REQUIRE_FALSE(at.empty());
      return last ? at.back() : at.front();
    };
    // The next iteration's loads, the dots on this one's stage, then the stores of what the loads brought.
    CHECK(countOps(body, KOp::barrier) == 1);
    CHECK(position(KOp::load_global, true) < position(KOp::mma, false));
    CHECK(position(KOp::store_shared, false) > position(KOp::mma, true));
    CHECK(countOps(f.body, KOp::async_copy) == 0);
    CHECK(f.sharedBytes() == 2 * stageBytes);
    // One stage: loaded, stored and read within each iteration, each operand between two barriers.
    KernelFunction single = contiguousLowering(test::withStages(gemm, 1), target);
    CHECK(countOps(loopBody(single), KOp::barrier) == 4);
    CHECK(single.sharedBytes() == stageBytes);
  }
  // Odd sizes, a single iteration, and attention's k and v read ahead through their views.
  checkAgainstInterpreter(gemm, {{37, 136}, {136, 56}, {37, 56}}, contiguousLowering(gemm, "gfx942"), {1, 1}, 1e-2);
  checkAgainstInterpreter(gemm, {{37, 40}, {40, 56}, {37, 56}}, contiguousLowering(gemm, "gfx1100"), {1, 1}, 1e-2);
  checkAgainstInterpreter(gemm, {{37, 136}, {136, 56}, {37, 56}}, "gfx1100", {1, 1}, 1e-2);  // element by element
  ir::Kernel attention = kernelNamed("attention_f16");
  KernelFunction staged = contiguousLowering(test::withStages(attention, 2), "gfx942");
  CHECK(countOps(loopBody(staged), KOp::barrier) < countOps(loopBody(contiguousLowering(test::withStages(attention, 1), "gfx942")), KOp::barrier));
  checkAgainstInterpreter(attention, std::vector<ir::Shape>(4, {1, 2, 150, 64}), staged, {3, 2}, 1e-2);
}

TEST_CASE("kernel ir: read-ahead folds compute what the interpreter does, at odd sizes, with 2 to 4 stages (gemm and attention)") {
  ir::Kernel gemm = kernelNamed("gemm_f16");
  // 37 rows (a partial block); k = 136: two full blocks and 8 of a third; 56 columns of 64.
  for (int64_t stages : {2, 3, 4}) {
    CAPTURE(stages);
    checkAgainstInterpreter(gemm, {{37, 136}, {136, 56}, {37, 56}}, contiguousLowering(test::withStages(gemm, stages), "sm_90"),
                            {1, 1}, 1e-2);
  }
  // A single iteration: every later stage's copies are zero fills past the end.
  checkAgainstInterpreter(gemm, {{37, 40}, {40, 56}, {37, 56}}, contiguousLowering(test::withStages(gemm, 3), "sm_90"), {1, 1}, 1e-2);
  // Attention reads k and v ahead through their reshape (and k's transpose): 37 keys, a partial block.
  ir::Kernel attention = kernelNamed("attention_f16");
  for (int64_t stages : {2, 3}) {
    CAPTURE(stages);
    KernelFunction f = contiguousLowering(test::withStages(attention, stages), "sm_90");
    CHECK(countOps(loopBody(f), KOp::async_copy) == 2 * 64 * 64 / 128 / 8);
    checkAgainstInterpreter(attention, sampleShapes("attention_f16"), f, {1, 2}, 1e-2);
  }
  checkAgainstInterpreter(attention, std::vector<ir::Shape>(4, {1, 2, 150, 64}),
                          contiguousLowering(test::withStages(attention, 3), "sm_90"), {3, 2}, 1e-2);
}

// What the CUDA device lowers on sm_90a: the key loop split at its masks, both parts on TMA rings
// and wgmma; 150 keys: two full blocks unmasked, the third (22 keys) masked; causal, the
// diagonal blocks masked.
TEST_CASE("kernel ir: attention split at its masks on sm_90a computes what the interpreter does") {
  const layout::Target& sm90a = layout::targetByName("sm_90a");
  for (const char* name : {"attention_f16", "attention_causal_f16"}) {
    CAPTURE(name);
    ir::Kernel k = kernelNamed(name);
    KernelLoweringOptions contiguous;
    contiguous.vectorTensors.assign(k.tensors.size(), true);
    ir::Kernel split = kernelForTarget(k, sm90a, contiguous);
    CHECK(std::ranges::count_if(split.body.ops, [](const ir::Op& op) { return op.code == ir::OpCode::fold; }) == 2);
    for (int64_t stages : {2, 3}) {
      CAPTURE(stages);
      KernelFunction f = contiguousLowering(test::withStages(split, stages), "sm_90a");
      const std::string text = print(f);
      CHECK(text.find("wgmma") != std::string::npos);
      CHECK(text.find("tma_load") != std::string::npos);
      // The second loop goes on with the first's rings, barriers and phases: one set of
      // transaction and release barriers, set up once, its stages filled by the first loop.
      CHECK(countOps(f.body, KOp::mbarrier_init) == 2 * stages);
      CHECK(countOps(f.body, KOp::mbarrier_inval) == 2 * stages);
      // 150 keys: full blocks, then a partial one; 128: no masked block (non-causal); 37: only one.
      for (int64_t seq : {150, 128, 37})
        checkAgainstInterpreter(k, std::vector<ir::Shape>(4, {1, 2, seq, 64}), f, {cdiv(seq, 64), 2}, 1e-2);
    }
  }
}

TEST_CASE("kernel ir: warp-specialized attention on sm_90a: the producer fills K and V's rings through both parts of a fold split at its masks, as the interpreter computes it") {
  const layout::Target& sm90a = layout::targetByName("sm_90a");
  for (const char* name : {"attention_f16", "attention_causal_f16", "attention_f8e4m3"}) {
    CAPTURE(name);
    ir::Kernel k = test::warpSpecialized(test::withStages(kernelNamed(name), 3));
    KernelLoweringOptions contiguous;
    contiguous.vectorTensors.assign(k.tensors.size(), true);
    KernelFunction f = lowerWithinCodeBudget(k, sm90a, contiguous);
    REQUIRE(f.workgroupSize == 256);
    auto [consumers, producer] = roles(f);
    CHECK(countOps(*consumers, KOp::tma_load) == 0);
    CHECK(countOps(*producer, KOp::tma_load) > 0);
    CHECK(countOps(*producer, KOp::for_loop) == 1);  // one loop over both parts' iterations
    CHECK(countOps(*consumers, KOp::mbarrier_init) == 6);
    if (std::string(name) == "attention_f8e4m3") {
      checkAgainstInterpreter(k, sampleShapes(name), f, {1, 2}, 2e-2);
      continue;
    }
    for (int64_t seq : {150, 37})
      checkAgainstInterpreter(k, std::vector<ir::Shape>(4, {1, 2, seq, 64}), f, {cdiv(seq, 64), 2}, 1e-2);
  }
}

// Two consumer warpgroups of 64 query rows each: each runs its own copy of the consumers' code,
// waiting for its turn (named barrier 3 or 4) before each product and passing it after.
TEST_CASE("kernel ir: warp-specialized attention on two consumer warpgroups takes turns on the tensor cores (ping-pong), as the interpreter computes it") {
  for (bool causal : {false, true}) {
    CAPTURE(causal);
    Tensor q = Tensor::zeros({1, 2, 150, 64}, DType::f16), kv = Tensor::zeros({1, 2, 150, 64}, DType::f16);
    Tensor v = Tensor::zeros({1, 2, 150, 64}, DType::f16), out = Tensor::zeros({1, 2, 150, 64});
    samples::KernelDefinition def = samples::attentionKernel(q, kv, v, out, causal, {128, 64, 3, 8, true});
    ir::Kernel k = *tj::trace(def.grid, def.body, "attention").kernel;
    KernelLoweringOptions contiguous;
    contiguous.vectorTensors.assign(k.tensors.size(), true);
    KernelFunction f = lowerWithinCodeBudget(k, layout::targetByName("sm_90a"), contiguous);
    REQUIRE(f.workgroupSize == 384);
    const KBlock& consumers = *roles(f).first;
    const KInst* perWarpgroup = firstOf(const_cast<KBlock&>(consumers), KOp::branch);
    REQUIRE(perWarpgroup != nullptr);
    for (int64_t g : {0, 1}) {
      CAPTURE(g);
      const KBlock& code = perWarpgroup->regions.at(size_t(g));
      // A turn per wgmma group in the loops: waited for on its own barrier, passed on the other's.
      int64_t fences = countOps(code, KOp::wgmma_fence);
      CHECK(fences >= 4);
      CHECK(hasAttr(code, KOp::barrier, "id", int64_t{3 + g}));
      CHECK(hasAttr(code, KOp::barrier, "id", int64_t{4 - g}));
    }
    CHECK(countOps(f.body, KOp::tma_load) > 0);
    checkAgainstInterpreter(k, std::vector<ir::Shape>(4, {1, 2, 150, 64}), f, def.grid, 1e-2);
    // Without the first turn (warpgroup 1 passing it to warpgroup 0) warpgroup 0 waits forever.
    KernelFunction unprimed = f;
    KBlock& second = firstOf(const_cast<KBlock&>(*roles(unprimed).first), KOp::branch)->regions.at(1);
    auto prime = std::ranges::find_if(second.insts, [](const KInst& i) { return i.op == KOp::barrier && hasAttr(i, "arrive"); });
    REQUIRE(prime != second.insts.end());
    second.insts.erase(prime);
    HostTensors tensors(k, std::vector<ir::Shape>(4, {1, 2, 150, 64}));
    CHECK_THROWS_WITH_AS(gpu::simulate(unprimed, tensors.sim(), {}, def.grid), doctest::Contains("would hang"), Error);
    // Each warpgroup waits for its own wgmma groups: warpgroup 1 reading S without its wait is
    // caught though warpgroup 0 waited for its own.
    KernelFunction unwaited = f;
    KInst* wait = firstOf(firstOf(const_cast<KBlock&>(*roles(unwaited).first), KOp::branch)->regions.at(1), KOp::wgmma_wait);
    REQUIRE(wait != nullptr);
    wait->attrs = {{"pending", int64_t{1}}};
    CHECK_THROWS_WITH_AS(gpu::simulate(unwaited, tensors.sim(), {}, def.grid), doctest::Contains("wgmma_wait"), Error);
  }
}

// FlashAttention-3's pipelining within a warpgroup (AttentionBlocks::overlapSoftmax): each step
// multiplies the previous key block's probabilities (carried) by its values, one step more.
TEST_CASE("kernel ir: attention with its softmax overlapped multiplies the previous block's probabilities, as the interpreter computes it") {
  for (bool causal : {false, true})
    for (bool specialize : {false, true}) {
      CAPTURE(causal);
      CAPTURE(specialize);
      Tensor q = Tensor::zeros({1, 2, 150, 64}, DType::f16), k = Tensor::zeros({1, 2, 150, 64}, DType::f16);
      Tensor v = Tensor::zeros({1, 2, 150, 64}, DType::f16), out = Tensor::zeros({1, 2, 150, 64});
      samples::KernelDefinition def = samples::attentionKernel(q, k, v, out, causal, {128, 64, 3, 8, specialize, true});
      ir::Kernel kernel = *tj::trace(def.grid, def.body, "attention").kernel;
      auto fold = std::ranges::find(kernel.body.ops, ir::OpCode::fold, &ir::Op::code);
      REQUIRE(fold != kernel.body.ops.end());
      const ir::Block& body = fold->regions.at(0);
      auto values = std::ranges::find_if(body.ops, [&](const ir::Op& op) {
        return op.code == ir::OpCode::dot && std::ranges::find(body.args, op.operands[0]) != body.args.end();
      });
      CHECK(values != body.ops.end());  // nothing in the step's softmax feeds it
      KernelLoweringOptions contiguous;
      contiguous.vectorTensors.assign(kernel.tensors.size(), true);
      KernelFunction f = lowerWithinCodeBudget(kernel, layout::targetByName("sm_90a"), contiguous);
      CHECK(f.workgroupSize == (specialize ? 384 : 256));
      // 150 keys: full blocks, then a partial one; 37: a partial one alone.
      checkAgainstInterpreter(kernel, std::vector<ir::Shape>(4, {1, 2, 150, 64}), f, def.grid, 1e-2);
      checkAgainstInterpreter(kernel, std::vector<ir::Shape>(4, {1, 2, 37, 64}), f, {1, 2}, 1e-2);
    }
}

TEST_CASE("kernel ir: the simulator catches a read-ahead ring read without its wait or its barrier") {
  ir::Kernel gemm = kernelNamed("gemm_f16");
  KernelFunction f = contiguousLowering(test::withStages(gemm, 2), "sm_90");
  auto without = [&](KOp op) {
    KernelFunction g = f;
    for (KInst& i : g.body.insts)
      if (i.op == KOp::for_loop) std::erase_if(i.regions[0].insts, [&](const KInst& x) { return x.op == op; });
    return g;
  };
  std::vector<ir::Shape> shapes = {{37, 136}, {136, 56}, {37, 56}};
  HostTensors tensors(gemm, shapes);
  CHECK_THROWS_WITH_AS(simulate(without(KOp::barrier), tensors.sim(), {}, {1, 1}),
                       doctest::Contains("a race in workgroup memory"), Error);
  // Copies landing later, at the wait after the loop, over a stage other threads read.
  CHECK_THROWS_WITH_AS(simulate(without(KOp::async_wait), tensors.sim(), {}, {1, 1}),
                       doctest::Contains("a race in workgroup memory"), Error);
}

TEST_CASE("kernel ir: launch facts: unit last stride, an aligned base, and rows of whole vectors") {
  CHECK(allowsVectorAccess(0x1000, DType::f16, {4, 16}, {16, 1}, 16));
  CHECK(allowsVectorAccess(0x1000, DType::f32, {3, 4}, {8, 1}, 16));
  CHECK_FALSE(allowsVectorAccess(0x1002, DType::f16, {4, 16}, {16, 1}, 16));  // the base
  CHECK_FALSE(allowsVectorAccess(0x1000, DType::f16, {4, 12}, {12, 1}, 16));  // 12 f16 rows: 24 bytes
  CHECK_FALSE(allowsVectorAccess(0x1000, DType::f16, {16, 4}, {1, 16}, 16));  // a transposed view
  CHECK_FALSE(allowsVectorAccess(0x1000, DType::f32, {4, 8}, {6, 1}, 16));    // the row stride
  CHECK_FALSE(allowsVectorAccess(0x1000, DType::f32, {4, 8}, {8, 1}, 0));     // no vectors on the target
}

TEST_CASE("kernel ir: the simulator reports workgroup memory read before a barrier orders it after its write") {
  KernelFunction f{.name = "race", .target = "sm_80", .workgroupSize = 64, .subgroupSize = 32};
  f.params = {{KParam::Kind::buffer, "t0", DType::f32}};
  f.shared = {{0, 64 * 4, DType::f32, ""}};
  auto build = [&](bool withBarrier) {
    KernelFunction g = f;
    KBuilder b(g);
    Reg thread = b.emit(KOp::thread_id, DType::i32);
    b.effect(KOp::store_shared, {thread, b.emit(KOp::cast, DType::f32, {thread})}, {{"alloc", int64_t{0}}});
    if (withBarrier) b.effect(KOp::barrier);
    Reg neighbour = b.binary("xor", thread, b.constant(DType::i32, 1));
    Reg v = b.emit(KOp::load_shared, DType::f32, {neighbour}, {{"alloc", int64_t{0}}});
    b.effect(KOp::store_global, {thread, b.constant(DType::boolean, 1), v}, {{"buffer", int64_t{0}}, {"vec", int64_t{1}}});
    return g;
  };
  std::vector<float> out(64, -1);
  std::vector<SimTensor> tensors = {{out.data(), DType::f32, {64}, {1}}};
  CHECK_THROWS_WITH_AS(simulate(build(false), tensors, {}, {1}),
                       doctest::Contains("a race in workgroup memory: thread 0 reads byte 4"), Error);
  simulate(build(true), tensors, {}, {1});
  for (int t = 0; t < 64; ++t) CHECK(out[size_t(t)] == float(t ^ 1));
}

// Named barriers order only the warps that meet there; a thread reading its own write after one
// is no race, a read of another warp's write before it is.
TEST_CASE("kernel ir: the simulator's named barriers order the accesses of the warps that meet there") {
  KernelFunction f{.name = "named", .target = "sm_90a", .workgroupSize = 64, .subgroupSize = 32};
  f.params = {{KParam::Kind::buffer, "t0", DType::f32}};
  f.shared = {{0, 64 * 4, DType::f32, ""}};
  auto build = [&](bool named) {
    KernelFunction g = f;
    KBuilder b(g);
    Reg thread = b.emit(KOp::thread_id, DType::i32);
    Reg other = b.binary("rem", b.binary("add", thread, b.constant(DType::i32, 32)), b.constant(DType::i32, 64));
    b.effect(KOp::store_shared, {other, b.emit(KOp::cast, DType::f32, {other})}, {{"alloc", int64_t{0}}});
    if (named) b.effect(KOp::barrier, {}, {{"id", int64_t{2}}, {"threads", int64_t{64}}});
    b.effect(KOp::store_shared, {thread, b.emit(KOp::cast, DType::f32, {thread})}, {{"alloc", int64_t{0}}});
    Reg v = b.emit(KOp::load_shared, DType::f32, {thread}, {{"alloc", int64_t{0}}});
    b.effect(KOp::store_global, {thread, b.constant(DType::boolean, 1), v}, {{"buffer", int64_t{0}}, {"vec", int64_t{1}}});
    return g;
  };
  std::vector<float> out(64, -1);
  std::vector<SimTensor> tensors = {{out.data(), DType::f32, {64}, {1}}};
  simulate(build(true), tensors, {}, {1});
  for (int t = 0; t < 64; ++t) CHECK(out[size_t(t)] == float(t));
  CHECK_THROWS_WITH_AS(simulate(build(false), tensors, {}, {1}), doctest::Contains("a race in workgroup memory"), Error);
}

TEST_CASE("kernel ir: a branch's sides run apart: a condition that differs within a warp, or a side reading the other's registers, is an error") {
  KernelFunction f{.name = "sides", .target = "sm_90a", .workgroupSize = 64, .subgroupSize = 32};
  f.params = {{KParam::Kind::buffer, "t0", DType::f32}};
  auto build = [&](KOp id, bool crossRead) {
    KernelFunction g = f;
    KBuilder b(g);
    Reg cond = b.cmp("lt", b.emit(id, DType::i32), b.constant(DType::i32, 1));
    b.effect(KOp::branch, {cond});
    b.openRegion({});
    Reg thenValue = b.emit(KOp::cast, DType::f32, {b.emit(KOp::thread_id, DType::i32)});
    b.closeRegion();
    b.openRegion({});
    Reg thread = b.emit(KOp::thread_id, DType::i32);
    Reg v = crossRead ? thenValue : b.constant(DType::f32, 2);
    b.effect(KOp::store_global, {thread, b.constant(DType::boolean, 1), v}, {{"buffer", int64_t{0}}, {"vec", int64_t{1}}});
    b.closeRegion();
    return g;
  };
  std::vector<float> out(64, -1);
  std::vector<SimTensor> tensors = {{out.data(), DType::f32, {64}, {1}}};
  simulate(build(KOp::warp_id, false), tensors, {}, {1});  // warp 0 runs then, warp 1 else
  for (int t = 0; t < 64; ++t) CHECK(out[size_t(t)] == (t < 32 ? -1.0f : 2.0f));
  CHECK_THROWS_WITH_AS(simulate(build(KOp::lane_id, false), tensors, {}, {1}),
                       doctest::Contains("branch's condition differs within warp 0"), Error);
  CHECK_THROWS_WITH_AS(simulate(build(KOp::warp_id, true), tensors, {}, {1}),
                       doctest::Contains("branch's else side reads %"), Error);
}

TEST_CASE("kernel ir: what is not lowered yet fails with a clear error") {
  CHECK_THROWS_WITH_AS(lowered("gemm", "vulkan"), doctest::Contains("kernel ir: unsupported: 49152 bytes of workgroup memory"), Error);
  CHECK_THROWS_WITH_AS(lowered("softmax", "cpu"), doctest::Contains("kernel ir: unsupported: target cpu"), Error);
}

TEST_CASE("kernel ir: tile-ir --stage=kernel prints the library's text and fails on what is unsupported") {
  auto tileIr = [](const std::string& args) { return test::runCommand(test::binDir() + "/tile-ir " + args); };
  test::CommandResult r = tileIr("--sample softmax --stage=kernel --target=vulkan");
  CHECK(r.status == 0);
  CHECK(r.output == print(lowered("softmax", "vulkan")));
  r = tileIr("--sample gemm --stage=kernel --target=vulkan");
  CHECK(r.status == 1);
  CHECK(r.output.find("kernel ir: unsupported:") != std::string::npos);
}

TEST_CASE("kernel ir: the samples' kernel IR matches the golden files") {
  fs::path dir = fs::path(TILEJIT_SOURCE_DIR) / "tests" / "golden" / "kernel";
  bool update = std::getenv("TILEJIT_UPDATE_GOLDEN") != nullptr;
  if (update) fs::create_directories(dir);
  const std::pair<const char*, const char*> cases[] = {
      {"vector_add", "sm_90"}, {"vector_add", "vulkan"}, {"softmax", "sm_90"}, {"softmax", "vulkan"},
      {"gemm", "sm_90"}, {"gemm_f16", "sm_90"}, {"gemm_f16", "sm_90a"}};
  for (const auto& [name, target] : cases) {
    CAPTURE(name);
    CAPTURE(target);
    std::string text = print(lowered(name, target));
    fs::path golden = dir / (std::string(name) + "." + target + ".kir");
    if (update) std::ofstream(golden) << text;
    CHECK(test::readText(golden) == text);
  }
}

TEST_CASE("kernel ir: the read-ahead plans of the samples' folds match the golden files, as tile-ir prints them") {
  fs::path dir = fs::path(TILEJIT_SOURCE_DIR) / "tests" / "golden" / "kernel";
  bool update = std::getenv("TILEJIT_UPDATE_GOLDEN") != nullptr;
  for (const char* name : {"gemm_f16", "attention_f16"}) {
    CAPTURE(name);
    const layout::Target& sm90 = layout::targetByName("sm_90");
    ir::Kernel k = samples::traceSample(name);
    KernelLoweringOptions contiguous;
    contiguous.vectorTensors.assign(k.tensors.size(), true);
    k = kernelForTarget(k, sm90, contiguous);
    std::string text = printReadAhead(k, planReadAhead(k, layout::inferLayouts(k, sm90)));
    fs::path golden = dir / (std::string(name) + ".sm_90.readahead");
    if (update) std::ofstream(golden) << text;
    CHECK(test::readText(golden) == text);
    test::CommandResult r = test::runCommand(test::binDir() + "/tile-ir --sample " + name + " --stage=readahead --target=sm_90");
    CHECK(r.status == 0);
    CHECK(r.output == text);
  }
  // Both operands of the gemm's dot come from zero-filled loads: both are read ahead.
  CHECK(test::readText(dir / "gemm_f16.sm_90.readahead").find("read-ahead candidate") != std::string::npos);
}

TEST_CASE("kernel ir: the samples' CUDA tune spaces sweep stages, which reach the fold and its read-ahead") {
  int64_t staged = 0;
  for (const TuneConfig& c : samples::gemmTuneSpace("cuda")) staged += c.values.count("stages");
  CHECK(staged > 0);
  CHECK(samples::gemmTuneSpace("cpu").front().values.count("stages") == 0);  // CPU configs leave it unset
  // Attention's knobs survive a config's round trip: the overlapped entries stay overlapped.
  int64_t overlapped = 0;
  for (const TuneConfig& c : samples::attentionTuneSpace("cuda")) {
    samples::AttentionBlocks b = samples::AttentionBlocks::from(c);
    CHECK(b.config().str() == c.str());
    overlapped += b.overlapSoftmax;
  }
  CHECK(overlapped == 2);
  samples::GemmBlocks blocks = samples::GemmBlocks::from(samples::gemmTuneSpace("cuda").at(1));
  CHECK(blocks.stages == 3);
  CHECK(samples::GemmBlocks::from(blocks.config()).stages == 3);
  CaptureTraces capture;
  samples::gemm(Tensor::zeros({64, 64}, DType::f16), Tensor::zeros({64, 64}, DType::f16), Tensor::zeros({64, 64}),
                {.device = "interp"}, blocks);
  const ir::Kernel& k = capture.kernels().at(0);
  int64_t stages = 0;
  ir::forEachOp(k.body, [&](const ir::Op& op) { if (op.code == ir::OpCode::fold) stages = op.get(ir::attr::stages); });
  CHECK(stages == 3);
  CHECK(countOps(loopBody(contiguousLowering(k, "sm_90")), KOp::async_wait) == 1);
  CHECK(hasAttr(loopBody(contiguousLowering(k, "sm_90")), KOp::async_wait, "pending", int64_t{1}));
}

TEST_CASE("kernel ir: p.warps sets the warps of each program, tuned on CUDA: more than a workgroup holds is an error") {
  samples::GemmBlocks blocks = samples::GemmBlocks::from(samples::gemmTuneSpace("cuda").at(2));
  CHECK(blocks.warps == 8);
  CHECK(samples::GemmBlocks::from(blocks.config()).warps == 8);
  CaptureTraces capture;
  samples::gemm(Tensor::zeros({64, 64}, DType::f16), Tensor::zeros({64, 64}, DType::f16), Tensor::zeros({64, 64}),
                {.device = "interp"}, blocks);
  ir::Kernel k = capture.kernels().at(0);
  CHECK(k.warps == 8);
  CHECK(ir::print(k).find(") grid 2 warps 8 {") != std::string::npos);
  CHECK(ir::print(ir::parse(ir::print(k))) == ir::print(k));
  const layout::Target& sm90 = layout::targetByName("sm_90");
  CHECK(lowerWithinCodeBudget(k, sm90).workgroupSize == 8 * 32);
  checkAgainstInterpreter(k, {{37, 29}, {29, 23}, {37, 23}}, lowerWithinCodeBudget(k, sm90), {1, 1}, 1e-2);
  ir::Kernel without = k;
  without.warps = 0;
  CHECK(ir::semanticHash(without) != ir::semanticHash(k));
  CHECK(lowerWithinCodeBudget(without, sm90).workgroupSize == sm90.warpsPerProgram * 32);
  k.warps = 32;  // 1024 threads: more than lavapipe's workgroups hold
  layout::Target small = layout::targetByName("vulkan");
  small.maxWorkgroupThreads = 128;
  CHECK_THROWS_WITH(lowerWithinCodeBudget(k, small), doctest::Contains("32 warps"));
}

TEST_CASE("kernel ir: a read-ahead ring waits for the readers of the workgroup memory it reuses") {
  // A column sum across warps goes through workgroup memory just before the fold; the
  // fold's first copies land on the same bytes.
  Tensor a = Tensor::zeros({128, 64}, DType::f16), b = Tensor::zeros({64, 64}, DType::f16);
  Tensor c = Tensor::zeros({128, 64}), sums = Tensor::zeros({64});
  CaptureTraces capture;
  run({1, 1}, [&](Program& p) {
    auto A = p.read(a, {128, 64});
    auto B = p.read(b, {64, 64});
    p.write(sums, {64}).put(A.at({0, 0}).cast(DType::f32).sum(0), {0});
    Tile acc = p.fold(0, A.blocks(1), p.zeros({128, 64}), [&](Index k, Tile acc) { return acc + dot(A.at({0, k}), B.at({k, 0})); });
    p.write(c, {128, 64}).put(acc, {0, 0});
  }, {.name = "sum_then_gemm", .device = "interp"});
  const ir::Kernel& k = capture.kernels().at(0);
  KernelFunction f = contiguousLowering(k, "sm_90");
  CHECK(countOps(f.body, KOp::async_copy) > 0);
  checkAgainstInterpreter(k, {{128, 136}, {136, 64}, {64}, {128, 64}}, f, {1, 1}, 1e-2);  // tensors in order of use
}
