// Per-op conformance through the public DSL: every case runs a kernel with
// tj::run on each device of conformanceDevices() and compares the output,
// element by element, with a float64/int64 reference computed here (see
// tests/reference.hpp). Outputs are poisoned before each run so unwritten
// elements show up.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "devices/cuda/cuda_runtime.hpp"
#include "devices/vulkan/vulkan_device.hpp"
#include "layout/infer_layouts.hpp"
#include "lower/amdgpu/amdgpu.hpp"
#include "lower/gpu/lower_to_kernel_ir.hpp"
#include "lower/ptx/nvptx.hpp"
#include "dsl/tilejit.hpp"
#include "samples/philox_reference.hpp"
#include "tests/reference.hpp"
#include "tests/support.hpp"

using namespace tj;
using ref::Num;

namespace {

// The devices every conformance case runs on; add a backend here when it lands.
// interp, cpu, and vulkan and cuda where they run; TILEJIT_TEST_DEVICES=a,b picks some of these.
std::vector<std::string> conformanceDevices() {
  std::vector<std::string> d = {"interp", "cpu"};
  if (test::vulkanAvailable()) d.push_back("vulkan");
  if (cuda::status().available) d.push_back("cuda");
  const char* only = std::getenv("TILEJIT_TEST_DEVICES");
  if (!only || !*only) return d;
  std::vector<std::string> picked;
  std::istringstream names(only);
  for (std::string name; std::getline(names, name, ',');)
    if (std::find(d.begin(), d.end(), name) != d.end()) picked.push_back(name);
    else FAIL("TILEJIT_TEST_DEVICES names " << name << ", which is not one of the devices that run here");
  return picked;
}

// How many ulps of the result dtype t a device may differ from the correctly rounded
// reference, per op. The interpreter is exact by construction. The CPU backend
// computes exp of f32/f16/bf16 with an inline float polynomial (2 ulps) and the
// other transcendentals in float64 (libm, or libmvec's vector versions within 4
// float64 ulps when a loop vectorizes) rounded once, so off by at most 1. Vulkan's
// (lower/math/accurate_math.cpp) measured 1 ulp at worst for 32 bits and narrower, 2 for f64.
int ulpBound(std::string_view op, const std::string& device, DType t) {
  static const std::set<std::string_view> kTranscendental = {"exp", "exp2", "log", "log2", "rsqrt",
                                                             "sin", "cos", "tanh", "erf", "sigmoid"};
  if (device == "interp" || !kTranscendental.count(op)) return 0;
  if (device == "vulkan" || device == "cuda") return t == f64 ? 2 : 1;  // lower/math on both
  return device == "cpu" && op != "exp" ? 1 : 2;
}

// How far a device may be from the float64 sum of `terms` values of total magnitude
// `magnitude` when it sums in dtype t in its own order (the interpreter sums in
// float64 in index order and rounds once, so it is exact).
double sumSlack(const std::string& device, DType t, size_t terms, double magnitude) {
  if (device == "interp" || !isFloat(t)) return 0;
  return static_cast<double>(terms + 1) * ref::unitRoundoff(t) * magnitude;
}

const std::vector<DType> kNumericTypes = {f32, f64, f16, bf16, i8, i32, i64, u8, u16, u32, u64};
const std::vector<DType> kAllTypes = {f32, f64, f16, bf16, i8, i32, i64, u8, u16, u32, u64, boolean, f8e4m3, f8e5m2};
// Storage types: they move, convert and feed dot, but compute nothing else.
const std::vector<DType> kFloat8Types = {f8e4m3, f8e5m2};

// ---- Running kernels

// Kernels this process ran on Vulkan and assembled as PTX, printed as it ends: `tools/dev
// test` adds up the lines of every ctest process.
int gVulkanRuns = 0, gPtxAssembled = 0, gAmdgpuCompiled = 0;
struct RunReport {
  ~RunReport() {
    if (gVulkanRuns > 0) std::printf("conformance: %d kernels ran on vulkan\n", gVulkanRuns);
    if (gPtxAssembled > 0) std::printf("conformance: %d kernels assembled by ptxas\n", gPtxAssembled);
    if (gAmdgpuCompiled > 0) std::printf("conformance: %d kernels compiled for AMDGPU (gfx942, gfx1100) into code objects\n", gAmdgpuCompiled);
  }
} gRunReport;

// Under the sanitizers (TILEJIT_TEST_GPU_IR_ONLY, set by tools/dev sanitize) each kernel goes
// through our part of the GPU compiles only: the lowering and the LLVM IR printers. LLVM's
// backends, ptxas and LLD are not instrumented, and took most of the suite's time there.
bool gpuIrOnly() {
  static const bool only = std::getenv("TILEJIT_TEST_GPU_IR_ONLY") != nullptr;
  return only;
}

// No NVIDIA device runs here: each kernel is printed as PTX for sm_90 and assembled
// (TILEJIT_TEST_SKIP_GPU_COMPILE: neither this nor checkAmdgpu, for a rerun of the suite with
// other Vulkan settings).
void checkPtx(const std::vector<int64_t>& grid, const KernelBody& body, const std::string& name) {
  TracedKernel traced = trace(grid, body, name);
  const layout::Target& target = layout::targetByName("sm_90");
  const ir::Kernel& k = *traced.kernel;
  gpu::KernelFunction f = gpu::lowerToKernelIR(k, layout::inferLayouts(k, target), target);
  if (gpuIrOnly()) {
    CHECK_MESSAGE(ptx::printNvptxLlvm(f, "sm_90").find("define") != std::string::npos, name);
    return;
  }
  gPtxAssembled += !test::assemblePtx(ptx::printPtx(f, "sm_90"), "sm_90").empty();
}

// No AMD GPU exists within reach: each kernel is compiled by LLVM's AMDGPU backend and linked
// by LLD into a code object for CDNA 3 (wave64) and RDNA 3 (wave32).
void checkAmdgpu(const std::vector<int64_t>& grid, const KernelBody& body, const std::string& name) {
  TracedKernel traced = trace(grid, body, name);
  const ir::Kernel& k = *traced.kernel;
  for (const char* arch : {"gfx942", "gfx1100"}) {
    const layout::Target& target = layout::targetByName(arch);
    gpu::KernelFunction f = gpu::lowerToKernelIR(k, layout::inferLayouts(k, target), target);
    if (gpuIrOnly()) {
      CHECK_MESSAGE(amdgpu::printLlvmIr(f, arch).find("amdgpu_kernel") != std::string::npos, name << " on " << arch);
      continue;
    }
    std::vector<char> code = amdgpu::compileCodeObject(f, arch);
    CHECK_MESSAGE(std::string(code.begin(), code.begin() + std::min<ptrdiff_t>(4, ptrdiff_t(code.size()))) == "\x7f" "ELF",
                  name << " on " << arch);
    ++gAmdgpuCompiled;
  }
}

void launch(const std::string& device, const std::string& name, const std::vector<int64_t>& grid,
            const KernelBody& body) {
  if (device == "interp" && !std::getenv("TILEJIT_TEST_SKIP_GPU_COMPILE")) {
    checkPtx(grid, body, name);
    checkAmdgpu(grid, body, name);
  }
  LaunchWatch launches;
  std::string ran = run(grid, body, RunOptions{.name = name, .device = device});
  CHECK_MESSAGE(ran == device, name << " ran on " << ran << " instead of " << device);
  if (device != "vulkan" || ran != device) return;
  ++gVulkanRuns;
  test::checkSpirvValid(*launches.last().spirv);
}

// A value no correct kernel writes where these tests look (NaN for floats).
double poisonValue(DType t) {
  switch (t) {
    case DType::i8: return -99;
    case DType::i32: return -123456789;
    case DType::i64: return -1234567890123.0;
    case DType::u8: return 201;
    case DType::u16: return 54321;
    case DType::u32: return 3123456789.0;
    case DType::u64: return 12345678901234567890.0;
    case DType::boolean: return 0;
    default: return ref::nan();
  }
}

Tensor poisoned(const Shape& shape, DType t) { return Tensor::full(shape, poisonValue(t), t); }

// ---- Comparing outputs

bool matches(DType t, const Num& got, const Num& want, int ulps, double slack) {
  if (!isFloat(t)) return ref::asInt(got) == ref::asInt(want);
  double g = ref::asDouble(got), w = ref::asDouble(want);
  if (std::isnan(g) || std::isnan(w)) return std::isnan(g) && std::isnan(w);
  if (slack > 0 && std::isfinite(w)) return std::fabs(g - w) <= slack;
  if (ulps == 0) return g == w && std::signbit(g) == std::signbit(w);
  return ref::ulpDistance(t, g, w) <= ulps;
}

struct Expect {
  std::vector<Num> want = {};                       // row-major over the output view
  int ulps = 0;                                     // allowed distance where no slack is given
  std::vector<double> slack = {};                   // per element absolute tolerance, or empty
  std::function<std::string(int64_t)> inputs = {};  // what produced an element, for messages
};

// Checks every element of `got`; one assertion naming the first mismatches.
void checkElements(const Tensor& got, const Expect& e) {
  REQUIRE(static_cast<size_t>(got.numel()) == e.want.size());
  std::string report;
  int64_t bad = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    Num g = ref::element(got, i);
    const Num& w = e.want[static_cast<size_t>(i)];
    double slack = e.slack.empty() ? 0 : e.slack[static_cast<size_t>(i)];
    if (matches(got.dtype(), g, w, e.ulps, slack)) continue;
    if (++bad <= 6)
      report += "  at " + ref::indexText(got.shape(), i) + ": got " + ref::text(g) + ", want " + ref::text(w) +
                (slack > 0 ? " +- " + ref::text(slack) : "") + (e.inputs ? " from " + e.inputs(i) : "") + "\n";
  }
  CHECK_MESSAGE(bad == 0, bad << " of " << got.numel() << " " << dtypeName(got.dtype()) << ref::shapeText(got.shape())
                              << " elements differ:\n"
                              << report);
}

// ---- Inputs

std::vector<Num> floatEdges(DType t) {
  std::vector<Num> v = {0.0, -0.0, ref::inf(), -ref::inf(), ref::nan(), 1.0, -1.0, 0.5, -2.5, 2.5, 3.0, -3.75};
  std::vector<double> extra;
  switch (t) {  // denormals, large values, values whose exp overflows, near the maximum
    case DType::f32: extra = {1e-40, -1e-40, 1e30, -1e30, 88.8, 3.4e38}; break;
    case DType::f64: extra = {1e-310, -1e-310, 1e300, -1e300, 710.0, 1.7e308}; break;
    case DType::f16: extra = {6e-8, -6e-8, 60000.0, -60000.0, 11.1, 65504.0}; break;
    case DType::f8e4m3: extra = {0x1p-9, -0x1p-9, 0x1.4p-7, -416.0, 11.0, 448.0}; break;  // subnormals, largest
    case DType::f8e5m2: extra = {0x1p-16, -0x1p-16, 0x1.8p-15, -49152.0, 11.0, 57344.0}; break;
    default: extra = {1e-40, -1e-40, 1e38, -1e38, 89.0, 3.0e38}; break;
  }
  v.insert(v.end(), extra.begin(), extra.end());
  return v;
}

// Unsigned dtypes take the negative ones wrapped: their largest values.
std::vector<Num> intEdges(DType t) {
  auto [lo, hi] = ref::intRange(t);
  std::vector<Num> v;
  for (int64_t x : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{2}, int64_t{-2}, int64_t{7}, int64_t{-7}, lo, hi, lo + 1,
                    hi - 1, int64_t{100}, int64_t{-100}})
    v.push_back(ref::wrap(t, x));
  return v;
}

std::vector<Num> edges(DType t) {
  if (isFloat(t)) return floatEdges(t);
  if (t == DType::boolean) return {int64_t{0}, int64_t{1}};
  return intEdges(t);
}

// A tensor whose first elements are `first` and the rest seeded random values.
Tensor sample(const Shape& shape, DType t, uint64_t seed, const std::vector<Num>& first = {}) {
  double lo = isFloat(t) ? -4 : isUnsigned(t) ? 0 : t == DType::i8 ? -128 : -1000;
  double hi = isFloat(t) ? 4 : t == DType::i8 ? 127 : t == DType::u8 ? 255 : 1000;
  Tensor x = Tensor::random(shape, seed, t, lo, hi);
  for (size_t i = 0; i < first.size() && static_cast<int64_t>(i) < x.numel(); ++i)
    ref::setElement(x, static_cast<int64_t>(i), first[i]);
  return x;
}

// A value given as a double (an integer for int dtypes) in dtype t, as the DSL converts numbers.
Num number(DType t, double v) {
  if (isFloat(t)) return roundToFloat(t, v);
  return ref::wrap(t, v >= 0x1p63 ? static_cast<int64_t>(static_cast<uint64_t>(v)) : static_cast<int64_t>(v));  // u64: bits
}
// An Index (i64) cast to t.
Num fromIndex(DType t, int64_t v) { return isFloat(t) ? Num(ref::intToFloat(t, v)) : Num(ref::wrap(t, v)); }

// NaN propagates; max prefers +0 over -0, min -0 (IEEE 754-2019 maximum/minimum).
double maxOf(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return ref::nan();
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
double minOf(double a, double b) { return -maxOf(-a, -b); }

bool isComparison(std::string_view op) {
  return op == "<" || op == "<=" || op == ">" || op == ">=" || op == "==" || op == "!=";
}

// A comparison as 0 or 1; IEEE for NaN when T is double.
template <typename T>
int64_t compare(std::string_view op, T x, T y) {
  return op == "<" ? x < y : op == "<=" ? x <= y : op == ">" ? x > y : op == ">=" ? x >= y : op == "==" ? x == y : x != y;
}

// `a op b` in dtype t as the IR defines it: floats in float64 rounded once, ints
// wrapping with truncating division, comparisons 0 or 1 (IEEE for NaN).
Num arith(std::string_view op, DType t, const Num& a, const Num& b) {
  if (isFloat(t)) {
    double x = ref::asDouble(a), y = ref::asDouble(b);
    if (isComparison(op)) return compare(op, x, y);
    double r = op == "+"     ? x + y
               : op == "-"   ? x - y
               : op == "*"   ? x * y
               : op == "/"   ? x / y
               : op == "%"   ? std::fmod(x, y)
               : op == "max" ? maxOf(x, y)
                             : minOf(x, y);
    return roundToFloat(t, r);
  }
  int64_t x = ref::asInt(a), y = ref::asInt(b);
  if (isUnsigned(t)) {
    uint64_t ux = uint64_t(x), uy = uint64_t(y);
    if (isComparison(op)) return compare(op, ux, uy);
    if (op == "/" || op == "%") return ref::wrap(t, int64_t(op == "/" ? ux / uy : ux % uy));
    if (op == "max" || op == "min") return (op == "max") == ref::intLess(t, x, y) ? y : x;
  }
  if (isComparison(op)) return compare(op, x, y);
  if (op == "&&") return x & y;
  if (op == "||") return x | y;
  int64_t r = op == "+"     ? ref::wrapAdd(x, y)
              : op == "-"   ? ref::wrapSub(x, y)
              : op == "*"   ? ref::wrapMul(x, y)
              : op == "/"   ? ref::truncDiv(x, y)
              : op == "%"   ? ref::truncRem(x, y)
              : op == "max" ? std::max(x, y)
                            : std::min(x, y);
  return ref::wrap(t, r);
}


// ---- Elementwise kernels over rank-2 outputs, with partial edge blocks

constexpr int64_t kBR = 4, kBC = 8;

// The block of an input (rank 2, or rank 1 along the columns): 1 where it broadcasts.
Shape mapBlock(const Shape& s) {
  if (s.size() == 1) return {s[0] == 1 ? 1 : kBC};
  return {s[0] == 1 ? 1 : kBR, s[1] == 1 ? 1 : kBC};
}

// The flat position in an input of shape s read for output element (r, c).
int64_t broadcastFlat(const Shape& s, int64_t r, int64_t c) {
  if (s.size() == 1) return s[0] == 1 ? 0 : c;
  return (s[0] == 1 ? 0 : r) * s[1] + (s[1] == 1 ? 0 : c);
}

using MapFn = std::function<Tile(Program&, const std::vector<Tile>&)>;
using MapRef = std::function<Num(const std::vector<Num>&, int64_t row, int64_t col)>;

// out = f(inputs) block by block; inputs are read with fill 1 (a safe divisor).
Tensor mapKernel(const std::string& device, const std::string& name, const std::vector<Tensor>& inputs,
                 const Shape& outShape, DType outType, const MapFn& f) {
  Tensor out = poisoned(outShape, outType);
  launch(device, name, {cdiv(outShape[0], kBR), cdiv(outShape[1], kBC)}, [&](Program& p) {
    Index i = p.id(0), j = p.id(1);
    std::vector<Tile> tiles;
    for (const Tensor& t : inputs) {
      const Shape& s = t.shape();
      std::vector<Index> at = s.size() == 1 ? std::vector<Index>{s[0] == 1 ? Index(0) : j}
                                            : std::vector<Index>{s[0] == 1 ? Index(0) : i, s[1] == 1 ? Index(0) : j};
      tiles.push_back(p.read(t, mapBlock(s), 1.0).at(at));
    }
    p.write(out, mapBlock(outShape)).put(f(p, tiles), {i, j});
  });
  return out;
}

// Runs f and checks each element against refFn of the (broadcast) input elements.
void checkMap(const std::string& device, const std::string& name, const std::vector<Tensor>& inputs,
              const Shape& outShape, DType outType, const MapFn& f, const MapRef& refFn, int ulps = 0) {
  Tensor out = mapKernel(device, name, inputs, outShape, outType, f);
  auto inputsAt = [&](int64_t r, int64_t c) {
    std::vector<Num> xs;
    for (const Tensor& t : inputs) xs.push_back(ref::element(t, broadcastFlat(t.shape(), r, c)));
    return xs;
  };
  Expect e{.ulps = ulps};
  for (int64_t r = 0; r < outShape[0]; ++r)
    for (int64_t c = 0; c < outShape[1]; ++c) e.want.push_back(refFn(inputsAt(r, c), r, c));
  e.inputs = [&](int64_t flat) {
    std::string s;
    for (const Num& x : inputsAt(flat / outShape[1], flat % outShape[1])) s += (s.empty() ? "" : ", ") + ref::text(x);
    return "(" + s + ")";
  };
  checkElements(out, e);
}

// ---- Unary elementwise

struct UnaryCase {
  const char* name;
  Tile (*apply)(const Tile&);
  double (*f)(double);    // float64 function of the rounded input
  int64_t (*i)(DType, int64_t);  // integer version before wrapping; null where ints are not allowed
};

const UnaryCase kUnary[] = {
    {"exp", [](const Tile& t) { return t.exp(); }, [](double x) { return std::exp(x); }, nullptr},
    {"exp2", [](const Tile& t) { return exp2(t); }, [](double x) { return std::exp2(x); }, nullptr},
    {"log", [](const Tile& t) { return t.log(); }, [](double x) { return std::log(x); }, nullptr},
    {"log2", [](const Tile& t) { return log2(t); }, [](double x) { return std::log2(x); }, nullptr},
    {"sqrt", [](const Tile& t) { return t.sqrt(); }, [](double x) { return std::sqrt(x); }, nullptr},
    {"rsqrt", [](const Tile& t) { return rsqrt(t); }, [](double x) { return 1.0 / std::sqrt(x); }, nullptr},
    {"sin", [](const Tile& t) { return t.sin(); }, [](double x) { return std::sin(x); }, nullptr},
    {"cos", [](const Tile& t) { return cos(t); }, [](double x) { return std::cos(x); }, nullptr},
    {"tanh", [](const Tile& t) { return t.tanh(); }, [](double x) { return std::tanh(x); }, nullptr},
    {"sigmoid", [](const Tile& t) { return sigmoid(t); }, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, nullptr},
    {"erf", [](const Tile& t) { return t.erf(); }, [](double x) { return std::erf(x); }, nullptr},
    {"floor", [](const Tile& t) { return floor(t); }, [](double x) { return std::floor(x); }, nullptr},
    {"ceil", [](const Tile& t) { return t.ceil(); }, [](double x) { return std::ceil(x); }, nullptr},
    {"neg", [](const Tile& t) { return -t; }, [](double x) { return -x; },
     [](DType, int64_t x) { return ref::wrapSub(0, x); }},
    {"abs", [](const Tile& t) { return abs(t); }, [](double x) { return std::fabs(x); },
     [](DType t, int64_t x) { return x < 0 && !isUnsigned(t) ? ref::wrapSub(0, x) : x; }},
    // max(x, +0): NaN propagates and -0 becomes +0.
    {"relu", [](const Tile& t) { return t.relu(); }, [](double x) { return std::isnan(x) || x > 0 ? x : 0.0; },
     [](DType t, int64_t x) { return isUnsigned(t) ? x : std::max<int64_t>(x, 0); }},
};

TEST_CASE("conformance: unary elementwise ops on random and edge inputs of every valid dtype") {
  for (const std::string& device : conformanceDevices())
    for (const UnaryCase& op : kUnary)
      for (DType t : kNumericTypes) {
        if (!isFloat(t) && !op.i) continue;
        INFO(device, ": ", std::string(op.name), " on ", dtypeName(t), "[5, 11]");
        Tensor x = sample({5, 11}, t, 11, edges(t));
        checkMap(
            device, op.name, {x}, {5, 11}, t, [&](Program&, const std::vector<Tile>& in) { return op.apply(in[0]); },
            [&](const std::vector<Num>& xs, int64_t, int64_t) -> Num {
              if (isFloat(t)) return roundToFloat(t, op.f(ref::asDouble(xs[0])));
              return ref::wrap(t, op.i(t, ref::asInt(xs[0])));
            },
            ulpBound(op.name, device, t));
      }
}

// fast_exp and fast_exp2 (exp/exp2 {approx = 1}): within their contract's relative error
// 2^-20 + |x| 2^-24 (plus the result dtype's rounding) where the result is normal; below
// that, anything within the smallest normal of 0 (a GPU may flush it).
TEST_CASE("conformance: fast_exp and fast_exp2 stay within their error bound on random and edge inputs") {
  struct FastCase {
    const char* name;
    Tile (*apply)(const Tile&);
    double (*f)(double);
  };
  const FastCase cases[] = {{"fast_exp", [](const Tile& t) { return t.fast_exp(); }, [](double x) { return std::exp(x); }},
                            {"fast_exp2", [](const Tile& t) { return fast_exp2(t); }, [](double x) { return std::exp2(x); }}};
  for (const std::string& device : conformanceDevices())
    for (const FastCase& op : cases)
      for (DType t : {f32, f64, f16, bf16}) {
        INFO(device, ": ", std::string(op.name), " on ", dtypeName(t));
        Tensor x = sample({7, 13}, t, 19, edges(t));
        for (int64_t i = 0; i < 40; ++i) ref::setElement(x, x.numel() - 1 - i, Num{double(i) * 3.3 - 88.0});  // up to 40
        // Where f32 results turn subnormal, overflow, or sit just below either.
        const double limits[] = {-150.0, -127.5, -126.5, -126.0, -125.9, -125.0, 126.9, 127.0, 127.5, 127.99, 128.0, 129.0};
        for (size_t i = 0; i < std::size(limits); ++i) ref::setElement(x, int64_t(i), Num{limits[i]});
        Tensor out = mapKernel(device, op.name, {x}, {7, 13}, t, [&](Program&, const std::vector<Tile>& in) { return op.apply(in[0]); });
        double smallestNormal = std::ldexp(1.0, t == f16 ? -14 : t == f64 ? -1022 : -126);
        Expect e;
        for (int64_t i = 0; i < x.numel(); ++i) {
          double in = ref::asDouble(ref::element(x, i)), want = op.f(in);
          e.want.push_back(roundToFloat(t, want));
          double relative = std::ldexp(1.0, -20) + std::fabs(in) * std::ldexp(1.0, -24) + 2 * ref::unitRoundoff(t);
          e.slack.push_back(std::fabs(want) * relative + smallestNormal);
        }
        e.inputs = [&](int64_t i) { return "(" + ref::text(ref::element(x, i)) + ")"; };
        checkElements(out, e);
      }
}

// ---- Binary elementwise and comparisons

struct BinaryCase {
  const char* name;  // also arith()'s op
  Tile (*apply)(const Tile&, const Tile&);
};

const BinaryCase kBinary[] = {
    {"+", [](const Tile& a, const Tile& b) { return a + b; }},
    {"-", [](const Tile& a, const Tile& b) { return a - b; }},
    {"*", [](const Tile& a, const Tile& b) { return a * b; }},
    {"/", [](const Tile& a, const Tile& b) { return a / b; }},
    {"%", [](const Tile& a, const Tile& b) { return a % b; }},
    {"max", [](const Tile& a, const Tile& b) { return max(a, b); }},
    {"min", [](const Tile& a, const Tile& b) { return min(a, b); }},
    {"<", [](const Tile& a, const Tile& b) { return a < b; }},
    {"<=", [](const Tile& a, const Tile& b) { return a <= b; }},
    {">", [](const Tile& a, const Tile& b) { return a > b; }},
    {">=", [](const Tile& a, const Tile& b) { return a >= b; }},
    {"==", [](const Tile& a, const Tile& b) { return a == b; }},
    {"!=", [](const Tile& a, const Tile& b) { return a != b; }},
};

// Every pair of edge and random values: a column [n, 1] against a row [1, n].
TEST_CASE("conformance: binary ops and comparisons on every pair of edge values, floats and wrapping ints") {
  constexpr int64_t n = 23;
  for (const std::string& device : conformanceDevices())
    for (const BinaryCase& op : kBinary)
      for (DType t : kNumericTypes) {
        INFO(device, ": x ", std::string(op.name), " y on ", dtypeName(t), "[23, 1] and [1, 23]");
        Tensor x = sample({n, 1}, t, 21, edges(t));
        std::vector<Num> ys = edges(t);
        std::reverse(ys.begin(), ys.end());
        Tensor y = sample({1, n}, t, 22, ys);
        bool divides = std::string_view(op.name) == "/" || std::string_view(op.name) == "%";
        if (divides && !isFloat(t))  // an integer division by zero is a runtime fault, tested elsewhere
          for (int64_t i = 0; i < n; ++i)
            if (ref::asInt(ref::element(y, i)) == 0) y.setItem(i, 3);
        DType out = isComparison(op.name) ? i8 : t;
        checkMap(
            device, op.name, {x, y}, {n, n}, out,
            [&](Program&, const std::vector<Tile>& in) { return op.apply(in[0], in[1]); },
            [&](const std::vector<Num>& xs, int64_t, int64_t) { return arith(op.name, t, xs[0], xs[1]); },
            ulpBound(op.name, device, t));
      }
}

// a * b + c rounded once: edge values crossed, and products that tell one rounding from two:
// (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 lies on an f32 tie, which an addend far below f64's
// precision decides (a sum rounded to f64 first loses it), and minus 1 + 2^-11 leaves 2^-24.
// muladd rounds once where the device has a fused multiply-add, and a * b first on Vulkan.
TEST_CASE("conformance: fma rounds a * b + c once, on edge values and on f32 ties an addend decides, and muladd as the device fuses") {
  constexpr int64_t n = 23;
  const double near = 1 + 0x1p-12;
  for (const std::string& device : conformanceDevices())
    for (DType t : {f32, f64})
      for (bool approx : {false, true}) {
      if (device == "vulkan" && t == f64 && !approx) continue;  // runs on the CPU: below
      const bool fused = !approx || device != "vulkan";
      INFO(device, ": ", approx ? "muladd" : "fma", "(x, y, z) on ", dtypeName(t), "[23, 1], [1, 23] and [23, 23]");
      std::vector<Num> xs = edges(t), ys = edges(t);
      std::reverse(ys.begin(), ys.end());
      xs.insert(xs.begin(), near);
      ys.insert(ys.begin(), {near, near, near, near});
      Tensor x = sample({n, 1}, t, 61, xs), y = sample({1, n}, t, 62, ys);
      Tensor z = sample({n, n}, t, 63, {-(1 + 0x1p-11), 0x1p-70, -0x1p-70, 0.0});
      checkMap(
          device, approx ? "muladd" : "fma", {x, y, z}, {n, n}, t,
          [&](Program&, const std::vector<Tile>& in) { return approx ? muladd(in[0], in[1], in[2]) : fma(in[0], in[1], in[2]); },
          [&](const std::vector<Num>& v, int64_t, int64_t) {
            double a = ref::asDouble(v[0]), b = ref::asDouble(v[1]), c = ref::asDouble(v[2]);
            if (t == f64) return Num(fused ? std::fma(a, b, c) : a * b + c);
            auto x = float(a), y = float(b), z = float(c);
            float product = x * y;
            return Num(double(fused ? std::fmaf(x, y, z) : product + z));
          });
    }
  // Vulkan's f64 arithmetic has no exact fma to build one on (f32's is an f64 sum rounded to odd):
  // the kernel runs on the CPU, saying why.
  if (std::ranges::count(conformanceDevices(), "vulkan") == 0) return;
  Tensor x = sample({5, 7}, f64, 64), out = Tensor::zeros({5, 7}, f64);
  LaunchWatch launches;
  std::string ran = run({1}, [&](Program& p) {
    Tile a = p.read(x, {5, 7}).at({0, 0});
    p.write(out, {5, 7}).put(fma(a, a, -a), {0, 0});
  }, RunOptions{.name = "fma_f64", .device = "vulkan"});
  CHECK(ran == "cpu");
  CHECK_MESSAGE(launches.last().fallbackReason.find("fma of f64 values") != std::string::npos, launches.last().fallbackReason);
  for (int64_t i = 0; i < 35; ++i) {
    double a = ref::asDouble(ref::element(x, i));
    CHECK(ref::asDouble(ref::element(out, i)) == std::fma(a, a, -a));
  }
}

// An integer element as its exact value (u64 past 2^63 included).
__int128 exactInt(DType t, const Num& x) {
  return t == u64 ? __int128(uint64_t(ref::asInt(x))) : __int128(ref::asInt(x));
}

TEST_CASE("conformance: comparisons of integer tiles of different dtypes compare their exact values") {
  // Every rule: one signedness (the wider), a narrow unsigned against i8 and i32 (i32), u32
  // against i32 (i64), and u64 against signed tiles (by sign, then as u64), in both orders.
  const std::pair<DType, DType> pairs[] = {{i32, i64}, {u32, u8}, {i8, u8},   {u16, i32}, {i32, u32},
                                           {u32, i64}, {i8, u64}, {u64, i64}, {u64, i32}};
  const std::vector<std::string_view> ops = {"<", "<=", ">", ">=", "==", "!="};
  for (const std::string& device : conformanceDevices())
    for (auto [a, b] : pairs) {
      INFO(device, ": ", dtypeName(a), "[13, 1] against ", dtypeName(b), "[13]");
      Tensor x = sample({13, 1}, a, 23, intEdges(a)), y = sample({13}, b, 24, intEdges(b));
      checkMap(  // the six comparisons as the bits of one i32
          device, "mixed_compare", {x, y}, {13, 13}, i32,
          [&](Program&, const std::vector<Tile>& in) {
            const Tile &l = in[0], &r = in[1];
            std::vector<Tile> bits = {l < r, l <= r, l > r, l >= r, l == r, l != r};
            Tile packed = bits[0].cast(i32);
            for (int k = 1; k < 6; ++k) packed = packed + bits[size_t(k)].cast(i32) * double(1 << k);
            return packed;
          },
          [&](const std::vector<Num>& xs, int64_t, int64_t) -> Num {
            int64_t packed = 0;
            for (size_t k = 0; k < ops.size(); ++k)
              packed |= compare(ops[k], exactInt(a, xs[0]), exactInt(b, xs[1])) << k;
            return packed;
          });
    }
}

TEST_CASE("conformance: broadcasting between tiles of different shapes and ranks") {
  struct Case {
    Shape a, b, out;
  };
  const Case cases[] = {
      {{5, 7}, {5, 7}, {5, 7}},  // no broadcast
      {{5, 1}, {1, 7}, {5, 7}}, {{1, 7}, {5, 1}, {5, 7}}, {{5, 7}, {5, 1}, {5, 7}},
      {{1, 7}, {5, 7}, {5, 7}}, {{5, 7}, {7}, {5, 7}},    {{7}, {5, 7}, {5, 7}},  // rank 1 with rank 2
      {{5, 7}, {1}, {5, 7}},    {{1, 1}, {5, 7}, {5, 7}},
  };
  for (const std::string& device : conformanceDevices())
    for (const Case& c : cases)
      for (DType t : {f32, i64}) {
        INFO(device, ": ", dtypeName(t), ref::shapeText(c.a), " - ", dtypeName(t), ref::shapeText(c.b));
        Tensor a = sample(c.a, t, 31), b = sample(c.b, t, 32);
        checkMap(
            device, "broadcast_sub", {a, b}, c.out, t,
            [](Program&, const std::vector<Tile>& in) { return in[0] - in[1]; },
            [&](const std::vector<Num>& xs, int64_t, int64_t) { return arith("-", t, xs[0], xs[1]); });
      }
}

// Numbers and Index operands take the tile's dtype before the op.
TEST_CASE("conformance: numbers and indices combined with tiles of every numeric dtype") {
  struct Form {
    const char* name;
    bool floatOnly, boolResult;
    Tile (*apply)(Program&, const Tile&);
    Num (*ref)(DType, const Num& x, int64_t row, int64_t col);
  };
  const Form forms[] = {
      {"t + 1.0", false, false, [](Program&, const Tile& t) { return t + 1.0; },
       [](DType d, const Num& x, int64_t, int64_t) { return arith("+", d, x, number(d, 1)); }},
      {"2.0 * t", false, false, [](Program&, const Tile& t) { return 2.0 * t; },
       [](DType d, const Num& x, int64_t, int64_t) { return arith("*", d, number(d, 2), x); }},
      {"t / 4.0", false, false, [](Program&, const Tile& t) { return t / 4.0; },
       [](DType d, const Num& x, int64_t, int64_t) { return arith("/", d, x, number(d, 4)); }},
      {"-7.0 - t", false, false, [](Program&, const Tile& t) { return -7.0 - t; },  // not on unsigned: -7 is no value
       [](DType d, const Num& x, int64_t, int64_t) { return arith("-", d, number(d, -7), x); }},
      {"t % 3.0", false, false, [](Program&, const Tile& t) { return t % 3.0; },
       [](DType d, const Num& x, int64_t, int64_t) { return arith("%", d, x, number(d, 3)); }},
      {"t * 0.1", true, false, [](Program&, const Tile& t) { return t * 0.1; },
       [](DType d, const Num& x, int64_t, int64_t) { return arith("*", d, x, number(d, 0.1)); }},
      {"max(t, 0.5)", true, false, [](Program&, const Tile& t) { return max(t, 0.5); },
       [](DType d, const Num& x, int64_t, int64_t) { return arith("max", d, x, number(d, 0.5)); }},
      {"t.k(3.0) - t", false, false, [](Program&, const Tile& t) { return t.k(3.0) - t; },
       [](DType d, const Num& x, int64_t, int64_t) { return arith("-", d, number(d, 3), x); }},
      {"t + p.id(0)", false, false, [](Program& p, const Tile& t) { return t + p.id(0); },
       [](DType d, const Num& x, int64_t r, int64_t) { return arith("+", d, x, fromIndex(d, r / kBR)); }},
      {"p.id(1) * t", false, false, [](Program& p, const Tile& t) { return p.id(1) * t; },
       [](DType d, const Num& x, int64_t, int64_t c) { return arith("*", d, fromIndex(d, c / kBC), x); }},
      {"t - (p.id(0) * 3 - 5)", false, false, [](Program& p, const Tile& t) { return t - (p.id(0) * 3 - 5); },
       [](DType d, const Num& x, int64_t r, int64_t) { return arith("-", d, x, fromIndex(d, r / kBR * 3 - 5)); }},
      {"min(t, p.id(1))", false, false, [](Program& p, const Tile& t) { return min(t, p.id(1)); },
       [](DType d, const Num& x, int64_t, int64_t c) { return arith("min", d, x, fromIndex(d, c / kBC)); }},
      {"t >= p.id(1)", false, true, [](Program& p, const Tile& t) { return t >= p.id(1); },
       [](DType d, const Num& x, int64_t, int64_t c) { return arith(">=", d, x, fromIndex(d, c / kBC)); }},
      {"2.0 < t", false, true, [](Program&, const Tile& t) { return 2.0 < t; },
       [](DType d, const Num& x, int64_t, int64_t) { return arith("<", d, number(d, 2), x); }},
  };
  for (const std::string& device : conformanceDevices())
    for (const Form& form : forms)
      for (DType t : kNumericTypes) {
        if (form.floatOnly && !isFloat(t)) continue;
        if (isUnsigned(t) && std::string_view(form.name) == "-7.0 - t") continue;
        INFO(device, ": ", std::string(form.name), " on ", dtypeName(t), "[9, 19]");
        Tensor x = sample({9, 19}, t, 41, edges(t));
        checkMap(
            device, "scalar_operand", {x}, {9, 19}, form.boolResult ? i8 : t,
            [&](Program& p, const std::vector<Tile>& in) { return form.apply(p, in[0]); },
            [&](const std::vector<Num>& xs, int64_t r, int64_t c) { return form.ref(t, xs[0], r, c); });
      }
}

TEST_CASE("conformance: where with tile, number and Index branches and a broadcast condition") {
  struct Form {
    const char* name;
    bool f32Result;
    Tile (*apply)(Program&, const Tile& x, const Tile& y);
    Num (*ref)(DType, const Num& x, const Num& y, int64_t row);
  };
  const Form forms[] = {
      {"where(x < y, x, y)", false, [](Program&, const Tile& x, const Tile& y) { return where(x < y, x, y); },
       [](DType d, const Num& x, const Num& y, int64_t) { return ref::asInt(arith("<", d, x, y)) ? x : y; }},
      {"where(x < y, x, 0.0)", false, [](Program&, const Tile& x, const Tile& y) { return where(x < y, x, 0.0); },
       [](DType d, const Num& x, const Num& y, int64_t) { return ref::asInt(arith("<", d, x, y)) ? x : number(d, 0); }},
      {"where(x != x, 1.0, y)", false, [](Program&, const Tile& x, const Tile& y) { return where(x != x, 1.0, y); },
       [](DType d, const Num& x, const Num& y, int64_t) {
         return ref::asInt(arith("!=", d, x, x)) ? number(d, 1) : y;
       }},
      {"where(x < y, 2.0, -3.0)", true, [](Program&, const Tile& x, const Tile& y) { return where(x < y, 2.0, -3.0); },
       [](DType d, const Num& x, const Num& y, int64_t) { return Num(ref::asInt(arith("<", d, x, y)) ? 2.0 : -3.0); }},
      // The [4, 1] condition broadcasts against the [1, 8] tile.
      {"where(x > 0.0, y, p.id(0))", false,
       [](Program& p, const Tile& x, const Tile& y) { return where(x > 0.0, y, p.id(0)); },
       [](DType d, const Num& x, const Num& y, int64_t r) {
         return ref::asInt(arith(">", d, x, number(d, 0))) ? y : fromIndex(d, r / kBR);
       }},
  };
  for (const std::string& device : conformanceDevices())
    for (const Form& form : forms)
      for (DType t : {f32, f16, bf16, f64, i32, i64}) {
        INFO(device, ": ", std::string(form.name), " on ", dtypeName(t), "[23, 1] and [1, 23]");
        Tensor x = sample({23, 1}, t, 51, edges(t)), y = sample({1, 23}, t, 52);
        checkMap(
            device, "where", {x, y}, {23, 23}, form.f32Result ? f32 : t,
            [&](Program& p, const std::vector<Tile>& in) { return form.apply(p, in[0], in[1]); },
            [&](const std::vector<Num>& xs, int64_t r, int64_t) { return form.ref(t, xs[0], xs[1], r); });
      }
}

TEST_CASE("conformance: logical and, or, not on bool tiles") {
  struct Form {
    const char* name;
    Tile (*apply)(const Tile& a, const Tile& b);
    int64_t (*ref)(int64_t a, int64_t b);
  };
  const Form forms[] = {
      {"a && b", [](const Tile& a, const Tile& b) { return a && b; },
       [](int64_t a, int64_t b) -> int64_t { return a && b; }},
      {"a || b", [](const Tile& a, const Tile& b) { return a || b; },
       [](int64_t a, int64_t b) -> int64_t { return a || b; }},
      {"!a || b", [](const Tile& a, const Tile& b) { return !a || b; },
       [](int64_t a, int64_t b) -> int64_t { return !a || b; }},
      {"!(a && !b)", [](const Tile& a, const Tile& b) { return !(a && !b); },
       [](int64_t a, int64_t b) -> int64_t { return !(a && !b); }},
      {"a ^ b", [](const Tile& a, const Tile& b) { return a ^ b; },
       [](int64_t a, int64_t b) -> int64_t { return a != b; }},
      {"~a & b | a ^ ~b", [](const Tile& a, const Tile& b) { return (~a & b) | (a ^ ~b); },
       [](int64_t a, int64_t b) -> int64_t { return (!a && b) || (a == b); }},
  };
  for (const std::string& device : conformanceDevices())
    for (const Form& form : forms) {
      INFO(device, ": ", std::string(form.name), " on bool[9, 1] and bool[1, 11]");
      Tensor a = sample({9, 1}, boolean, 61, {int64_t{0}, int64_t{1}});
      Tensor b = sample({1, 11}, boolean, 62, {int64_t{1}, int64_t{0}});
      checkMap(
          device, "logical", {a, b}, {9, 11}, i8,
          [&](Program&, const std::vector<Tile>& in) { return form.apply(in[0], in[1]); },
          [&](const std::vector<Num>& xs, int64_t, int64_t) -> Num {
            return form.ref(ref::asInt(xs[0]), ref::asInt(xs[1]));
          });
    }
}

// ---- Bitwise integers

const std::vector<DType> kIntTypes = {i8, i32, i64, u8, u16, u32, u64};

// `x op y` on dtype t's bits as the IR defines it; a shift count outside [0, bits) shifts
// every bit out (<< and the logical >> give 0, the arithmetic >> the sign).
int64_t bitwiseRef(std::string_view op, DType t, int64_t x, int64_t y) {
  const int64_t bits = dtypeBytes(t) * 8;
  const uint64_t unsignedX = uint64_t(x) & (bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1);
  const bool allOut = y < 0 || y >= bits;
  if (op == "&") return x & y;
  if (op == "|") return x | y;
  if (op == "^") return x ^ y;
  if (op == "<<") return allOut ? 0 : ref::wrap(t, int64_t(unsignedX << y));
  if (op == ">>" && !isUnsigned(t)) return allOut ? (x < 0 ? -1 : 0) : x >> y;
  return allOut ? 0 : ref::wrap(t, int64_t(unsignedX >> y));  // logical_shift_right
}

struct BitwiseCase {
  const char* name;  // bitwiseRef's op
  Tile (*apply)(const Tile&, const Tile&);
  bool shift = false;
};

const BitwiseCase kBitwise[] = {
    {"&", [](const Tile& a, const Tile& b) { return a & b; }},
    {"|", [](const Tile& a, const Tile& b) { return a | b; }},
    {"^", [](const Tile& a, const Tile& b) { return a ^ b; }},
    {"<<", [](const Tile& a, const Tile& b) { return a << b; }, true},
    {">>", [](const Tile& a, const Tile& b) { return a >> b; }, true},
    {"logical_shift_right", [](const Tile& a, const Tile& b) { return logical_shift_right(a, b); }, true},
};

// Shift counts around every width's edges, negative ones and the dtype's extremes.
std::vector<Num> shiftCounts(DType t) {
  auto [lo, hi] = ref::intRange(t);
  std::vector<Num> v = {lo, hi};
  for (int64_t n : {0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 62, 63, 64, 65, 100, -1, -2, -8, -64})
    if (n >= lo && n <= hi) v.push_back(n);
  return v;
}

TEST_CASE("conformance: bitwise and, or, xor and shifts on every pair of edge values of every integer dtype") {
  constexpr int64_t n = 23;
  for (const std::string& device : conformanceDevices())
    for (const BitwiseCase& op : kBitwise)
      for (DType t : kIntTypes) {
        std::vector<Num> ys = op.shift ? shiftCounts(t) : edges(t);
        int64_t m = op.shift ? int64_t(ys.size()) + 2 : n;  // counts, then random ones
        INFO(device, ": x ", std::string(op.name), " y on ", dtypeName(t), "[23, 1] and [1, ", m, "]");
        Tensor x = sample({n, 1}, t, 31, edges(t));
        if (!op.shift) std::reverse(ys.begin(), ys.end());
        Tensor y = sample({1, m}, t, 32, ys);
        checkMap(
            device, "bitwise", {x, y}, {n, m}, t,
            [&](Program&, const std::vector<Tile>& in) { return op.apply(in[0], in[1]); },
            [&](const std::vector<Num>& xs, int64_t, int64_t) -> Num {
              return bitwiseRef(op.name, t, ref::asInt(xs[0]), ref::asInt(xs[1]));
            });
      }
}

TEST_CASE("conformance: umulhi gives the high half of the unsigned product on every pair of edge values, 32 and 64 bits") {
  constexpr int64_t n = 23;
  for (const std::string& device : conformanceDevices())
    for (DType t : {i32, i64, u32, u64}) {
      INFO(device, ": umulhi(x, y) on ", dtypeName(t), "[23, 1] and [1, 23]");
      std::vector<Num> ys = edges(t);
      std::reverse(ys.begin(), ys.end());
      Tensor x = sample({n, 1}, t, 33, edges(t)), y = sample({1, n}, t, 34, ys);
      checkMap(
          device, "umulhi", {x, y}, {n, n}, t,
          [&](Program&, const std::vector<Tile>& in) { return umulhi(in[0], in[1]); },
          [&](const std::vector<Num>& xs, int64_t, int64_t) -> Num {
            uint64_t a = uint64_t(ref::asInt(xs[0])), b = uint64_t(ref::asInt(xs[1]));
            if (dtypeBytes(t) == 4) return ref::wrap(t, int64_t((uint64_t(uint32_t(a)) * uint32_t(b)) >> 32));
            return int64_t(uint64_t((static_cast<unsigned __int128>(a) * b) >> 64));
          });
    }
}

TEST_CASE("conformance: bitwise ops with numbers, ~ and a hash mixing step, on odd tiles") {
  struct Form {
    const char* name;
    Tile (*apply)(const Tile& x);
    int64_t (*ref)(DType t, int64_t x);
  };
  const Form forms[] = {
      {"~x", [](const Tile& x) { return ~x; }, [](DType, int64_t x) { return ~x; }},
      {"x ^ 90", [](const Tile& x) { return x ^ 90; }, [](DType, int64_t x) { return x ^ 90; }},
      {"x << 3", [](const Tile& x) { return x << 3; },
       [](DType t, int64_t x) { return bitwiseRef("<<", t, x, 3); }},
      {"x >> 2 | 1", [](const Tile& x) { return (x >> 2) | 1; },
       [](DType t, int64_t x) { return bitwiseRef(">>", t, x, 2) | 1; }},
      {"5 & x", [](const Tile& x) { return 5 & x; }, [](DType, int64_t x) { return 5 & x; }},
      {"1 << (x & 7)", [](const Tile& x) { return 1 << (x & 7); },
       [](DType t, int64_t x) { return bitwiseRef("<<", t, 1, x & 7); }},
      // xorshift: x ^= x << 7; x ^= logical x >> 5
      {"xorshift", [](const Tile& x) { Tile y = x ^ (x << 7); return y ^ logical_shift_right(y, 5); },
       [](DType t, int64_t x) {
         int64_t y = x ^ bitwiseRef("<<", t, x, 7);
         return y ^ bitwiseRef("logical_shift_right", t, y, 5);
       }},
  };
  for (const std::string& device : conformanceDevices())
    for (const Form& form : forms)
      for (DType t : kIntTypes) {
        INFO(device, ": ", std::string(form.name), " on ", dtypeName(t), "[9, 19]");
        Tensor x = sample({9, 19}, t, 41, edges(t));
        checkMap(
            device, "bitwise_numbers", {x}, {9, 19}, t,
            [&](Program&, const std::vector<Tile>& in) { return form.apply(in[0]); },
            [&](const std::vector<Num>& xs, int64_t, int64_t) -> Num { return ref::wrap(t, form.ref(t, ref::asInt(xs[0]))); });
      }
}

// ---- Random numbers

using samples::philox4x32;
using samples::uniformOf;

TEST_CASE("conformance: the reference Philox 4x32-10 gives Random123's known answers") {
  // Random123's tests/kat_vectors, the three philox4x32 10 lines: counter, key, result.
  CHECK(philox4x32({0, 0, 0, 0}, {0, 0}) == std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  CHECK(philox4x32({~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}) ==
        std::array<uint32_t, 4>{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  CHECK(philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}) ==
        std::array<uint32_t, 4>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
  CHECK(uniformOf(0x7fffffff) < 1.0f);
  CHECK(uniformOf(0x80000000) == uniformOf(0x7fffffff));
  CHECK(uniformOf(0) == 0.0f);
}

TEST_CASE("conformance: randint4x, rand and randn draw Triton's Philox stream from number, Index and tile seeds") {
  constexpr int64_t n = 1001, block = 128;  // a partial last block
  // An Operand points to its Index or Tile, which must outlive it.
  struct Held {
    std::optional<Index> index;
    std::optional<Tile> tile;
  };
  struct Seed {
    std::string name;
    std::function<Operand(Program&, Held&)> make;
    uint64_t value;  // for a grid of cdiv(n, block) programs
  };
  const int64_t programs = cdiv(n, block);
  const Seed seeds[] = {
      {"number", [](Program&, Held&) { return Operand(double(0x123456789ABC0000)); }, 0x123456789ABC0000},
      {"Index", [](Program& p, Held& h) { return Operand(*(h.index = p.num(0) * 1000003 - 8000000)); },
       uint64_t(programs * 1000003 - 8000000)},
      {"rank-0 i32 tile", [](Program& p, Held& h) { return Operand(*(h.tile = p.full({}, -5, i32))); },
       ~uint64_t{4}},
  };
  for (const std::string& device : conformanceDevices())
    for (const Seed& seed : seeds) {
      INFO(device, ": seed from ", seed.name);
      std::vector<Tensor> words;
      for (int w = 0; w < 4; ++w) words.push_back(poisoned({n}, i32));
      Tensor randint = poisoned({n}, i32), uniform = poisoned({n}, f32), normal = poisoned({n}, f32);
      launch(device, "random", {programs}, [&](Program& p) {
        Index i = p.id(0);
        // Offsets over the whole i32 range, negative ones too (the product wraps).
        Tile offset = (p.arange(block) + i * block) * 2654435 - 7;
        Held held;
        Operand s = seed.make(p, held);
        std::array<Tile, 4> drawn = p.randint4x(s, offset);
        for (int w = 0; w < 4; ++w) p.write(words[size_t(w)], {block}).put(drawn[size_t(w)], {i});
        p.write(randint, {block}).put(p.randint(s, offset), {i});
        p.write(uniform, {block}).put(p.rand(s, offset), {i});
        p.write(normal, {block}).put(p.randn(s, offset), {i});
      });
      std::array<Expect, 4> wordsWant;
      Expect randintWant, uniformWant, normalWant;
      for (int64_t e = 0; e < n; ++e) {
        std::array<uint32_t, 4> r = samples::tritonRandint4x(seed.value, int32_t(uint32_t(e) * 2654435u - 7u));
        for (int w = 0; w < 4; ++w) wordsWant[size_t(w)].want.push_back(int64_t(int32_t(r[size_t(w)])));
        randintWant.want.push_back(int64_t(int32_t(r[0])));
        uniformWant.want.push_back(double(uniformOf(r[0])));
        // Box-Muller as Triton's randn computes it in f32; devices' log, sqrt and cos may
        // differ from libm's by an ulp or two.
        float u1 = std::max(uniformOf(r[0]), 1.0e-7f), u2 = uniformOf(r[1]);
        double want = double(std::sqrt(std::log(u1) * -2.0f) * std::cos(u2 * float(6.283185307179586)));
        normalWant.want.push_back(want);
        normalWant.slack.push_back(1e-6 * (1 + std::fabs(want) * 4));
      }
      for (int w = 0; w < 4; ++w) {
        INFO("word ", w);
        checkElements(words[size_t(w)], wordsWant[size_t(w)]);
      }
      checkElements(randint, randintWant);
      checkElements(uniform, uniformWant);
      checkElements(normal, normalWant);
      std::vector<double> u = uniform.values(), z = normal.values();
      double mean = 0, normalMean = 0, normalSquares = 0;
      for (size_t e = 0; e < u.size(); ++e) {
        CHECK((u[e] >= 0 && u[e] < 1));
        mean += u[e] / double(n);
        normalMean += z[e] / double(n);
        normalSquares += z[e] * z[e] / double(n);
      }
      // Within about four standard errors of 1001 draws.
      CHECK(std::fabs(mean - 0.5) < 0.04);
      CHECK(std::fabs(normalMean) < 0.13);
      CHECK(std::fabs(normalSquares - 1) < 0.2);
    }
}

TEST_CASE("conformance: i64, u64, u32 and i8 offsets draw Triton's stream: counter (low word, high word, 0, 0)") {
  constexpr int64_t n = 200, block = 64;  // a partial last block
  constexpr uint64_t seed = 12345678901;
  struct Case {
    DType dtype;
    std::function<Tile(const Tile& e)> offsets;  // of the element numbers e (i64)
    std::function<uint64_t(uint64_t e)> value;   // the offset's bits, widened as Triton's .to(tl.uint32) / 64 bits
  };
  const Case cases[] = {
      // Past 2^32 and negative: the high word matters.
      {i64, [](const Tile& e) { return e * 4294967311.0 - 25769803776.0; },
       [](uint64_t e) { return e * 4294967311u - 25769803776u; }},
      {u64, [](const Tile& e) { return (e * 4294967311.0).cast(u64) + 18446744069414584320.0; },
       [](uint64_t e) { return e * 4294967311u + 18446744069414584320u; }},
      {u32, [](const Tile& e) { return e.cast(u32) * 3000000000.0; },
       [](uint64_t e) { return uint64_t(uint32_t(e * 3000000000u)); }},
      {i8, [](const Tile& e) { return e.cast(i8); },  // past 127 negative: sign-extended
       [](uint64_t e) { return uint64_t(uint32_t(int32_t(int8_t(e)))); }},
  };
  for (const std::string& device : conformanceDevices())
    for (const Case& c : cases) {
      INFO(device, ": ", dtypeName(c.dtype), " offsets");
      std::vector<Tensor> words;
      for (int w = 0; w < 4; ++w) words.push_back(poisoned({n}, i32));
      Tensor uniform = poisoned({n}, f32);
      launch(device, "random_offsets", {cdiv(n, block)}, [&](Program& p) {
        Index i = p.id(0);
        Tile offset = c.offsets(p.arange(block).cast(i64) + i * block);
        REQUIRE(offset.dtype() == c.dtype);
        std::array<Tile, 4> drawn = p.randint4x(double(seed), offset);
        for (int w = 0; w < 4; ++w) p.write(words[size_t(w)], {block}).put(drawn[size_t(w)], {i});
        p.write(uniform, {block}).put(p.rand(double(seed), offset), {i});
      });
      std::array<Expect, 4> wordsWant;
      Expect uniformWant;
      for (int64_t e = 0; e < n; ++e) {
        uint64_t offset = c.value(uint64_t(e));
        std::array<uint32_t, 4> r =
            philox4x32({uint32_t(offset), uint32_t(offset >> 32), 0, 0}, {uint32_t(seed), uint32_t(seed >> 32)});
        for (int w = 0; w < 4; ++w) wordsWant[size_t(w)].want.push_back(int64_t(int32_t(r[size_t(w)])));
        uniformWant.want.push_back(double(uniformOf(r[0])));
      }
      for (int w = 0; w < 4; ++w) {
        INFO("word ", w);
        checkElements(words[size_t(w)], wordsWant[size_t(w)]);
      }
      checkElements(uniform, uniformWant);
    }
}

// ---- Casts

// Values that probe rounding, truncation, saturation and wrapping, per source dtype.
std::vector<Num> castInputs(DType t) {
  if (t == DType::boolean) return {int64_t{0}, int64_t{1}, int64_t{1}, int64_t{0}};
  if (isFloat(t)) {
    std::vector<Num> v = floatEdges(t);
    for (double d : {0.4,           -0.6,  1.5,    -1.5,    127.9,   -128.9,     128.0,        -129.0,
                     255.5,         300.7, -300.7, 65519.0, 65520.0, 70000.3,    2147483520.0, 2147483648.0,
                     -2147483904.0, 3e9,   -3e9,   1e19,    -1e19,   16777217.0, 0.1,          1.0 / 3})
      v.push_back(d);
    return v;
  }
  std::vector<Num> v = intEdges(t);
  for (int64_t i : {int64_t{127}, int64_t{-128}, int64_t{128}, int64_t{255}, int64_t{-129}, int64_t{300},
                    int64_t{65504}, int64_t{65519}, int64_t{65520}, int64_t{16777217}, int64_t{16777219},
                    int64_t{2147483647}, int64_t{-2147483648LL}, int64_t{1} << 31, (int64_t{1} << 53) + 1,
                    (int64_t{1} << 53) + 3, (int64_t{1} << 62) + (int64_t{1} << 38) + 1, -(int64_t{1} << 60) - 1})
    v.push_back(ref::wrap(t, i));
  return v;
}

// The IR's cast: float->float rounds once; float->int truncates, NaN->0, saturates;
// int->float rounds once; int->int wraps; anything->bool is x != 0.
Num castRef(DType from, DType to, const Num& x) {
  if (isFloat(from)) {
    double v = ref::asDouble(x);
    if (isFloat(to)) return roundToFloat(to, v);
    return ref::floatToInt(to, v);
  }
  int64_t v = ref::asInt(x);
  if (isFloat(to)) return ref::intToFloat(to, v, from);
  return ref::wrap(to, v);
}

TEST_CASE("conformance: cast between every pair of dtypes") {
  for (const std::string& device : conformanceDevices())
    for (DType from : kAllTypes)
      for (DType to : kAllTypes) {
        INFO(device, ": cast ", dtypeName(from), " -> ", dtypeName(to));
        Tensor x = sample({4, 13}, from, 71, castInputs(from));
        // bool outputs go to an i8 tensor so the poison stays visible
        checkMap(
            device, "cast", {x}, {4, 13}, to == boolean ? i8 : to,
            [&](Program&, const std::vector<Tile>& in) { return in[0].cast(to); },
            [&](const std::vector<Num>& xs, int64_t, int64_t) { return castRef(from, to, xs[0]); });
      }
}

TEST_CASE("conformance: saturating casts clamp to the largest finite value, infinities too, and keep NaN") {
  const std::pair<DType, DType> pairs[] = {{f32, f8e4m3}, {f32, f8e5m2}, {f64, f8e4m3}, {f16, f8e4m3},
                                           {bf16, f8e5m2}, {f8e5m2, f8e4m3}, {f8e4m3, f8e5m2}, {f64, f32},
                                           {f32, f16}, {f16, f32}, {i32, f8e4m3}, {u16, f8e5m2},
                                           {i64, f16}, {i8, f8e4m3},   {bf16, f16},   {f16, bf16},
                                           {f32, f64}, {f32, f32},  {f16, f16},     {f8e5m2, f8e5m2}};
  for (const std::string& device : conformanceDevices())
    for (auto [from, to] : pairs) {
      INFO(device, ": saturating cast ", dtypeName(from), " -> ", dtypeName(to));
      Tensor x = sample({4, 13}, from, 72, castInputs(from));
      checkMap(
          device, "cast_saturate", {x}, {4, 13}, to,
          [&](Program&, const std::vector<Tile>& in) { return in[0].cast(to, Overflow::saturate); },
          [&](const std::vector<Num>& xs, int64_t, int64_t) -> Num {
            double v = ref::asDouble(castRef(from, f64, xs[0])), largest = maxFinite(to);
            if (std::isnan(v)) return v;
            if (isInteger(from) && std::fabs(v) <= largest) return castRef(from, to, xs[0]);  // rounded once
            return roundToFloat(to, std::clamp(v, -largest, largest));
          });
    }
}

TEST_CASE("conformance: saturating casts to integers clamp to the result's range, floats saturate and take NaN to 0") {
  const std::pair<DType, DType> pairs[] = {{i32, i8},  {i64, i32}, {i64, u8},  {u32, i32}, {u64, i64}, {i8, u32},
                                           {i64, u64}, {u64, u16}, {i8, u8},   {u8, i8},   {i32, i64}, {f32, i8},
                                           {f64, u32}, {f16, i64}, {boolean, u8}};
  for (const std::string& device : conformanceDevices())
    for (auto [from, to] : pairs) {
      INFO(device, ": saturating cast ", dtypeName(from), " -> ", dtypeName(to));
      Tensor x = sample({4, 13}, from, 74, castInputs(from));
      checkMap(
          device, "cast_saturate_int", {x}, {4, 13}, to,
          [&](Program&, const std::vector<Tile>& in) { return in[0].cast(to, Overflow::saturate); },
          [&](const std::vector<Num>& xs, int64_t, int64_t) -> Num {
            if (!isInteger(from)) return castRef(from, to, xs[0]);  // float to integer saturates anyway
            auto [low, high] = ref::intRange(to);
            __int128 top = to == u64 ? __int128(~uint64_t{0}) : __int128(high);
            __int128 v = std::clamp(exactInt(from, xs[0]), __int128(low), top);
            return int64_t(uint64_t(v));  // a u64 as its bits
          });
    }
}

TEST_CASE("conformance: 8-bit float NaN codes are PyTorch's, and a saturating cast to f8e4m3 is torch's") {
  const double nan = ref::nan(), inf = ref::inf();
  Tensor x = Tensor::from({8}, {nan, -nan, 500.0, -500.0, inf, -inf, 1.0, 448.0}, f32);
  struct Case {
    DType to;
    bool saturate;
    std::array<uint8_t, 8> codes;
  };
  const Case cases[] = {
      {f8e5m2, false, {0x7f, 0xff, 0x60, 0xe0, 0x7c, 0xfc, 0x3c, 0x5f}},  // torch writes these e5m2 NaNs
      {f8e4m3, false, {0x7f, 0xff, 0x7f, 0xff, 0x7f, 0xff, 0x38, 0x7e}},  // OCP: overflow is NaN
      {f8e4m3, true, {0x7f, 0xff, 0x7e, 0xfe, 0x7e, 0xfe, 0x38, 0x7e}},   // torch's .to(float8_e4m3fn)
  };
  auto bytes = [](const Tensor& t) {  // the codes in hex, as the failure shows them
    std::string hex;
    for (int64_t i = 0; i < t.numel(); ++i) hex += fmt::format(" {:02x}", static_cast<const uint8_t*>(t.data())[i]);
    return hex;
  };
  for (const Case& c : cases) {
    INFO(dtypeName(c.to), std::string(c.saturate ? " saturating" : ""));
    std::string want;
    for (uint8_t code : c.codes) want += fmt::format(" {:02x}", code);
    if (!c.saturate) CHECK(bytes(Tensor::from({8}, x.values(), c.to)) == want);  // the host's conversion
    for (const std::string& device : conformanceDevices()) {
      INFO(device);
      Tensor cast = Tensor::zeros({8}, c.to), stored = Tensor::zeros({8}, c.to);
      launch(device, "f8_codes", {1}, [&](Program& p) {
        Tile v = p.read(x, {8}).at({0});
        p.write(cast, {8}).put(c.saturate ? v.cast(c.to, Overflow::saturate) : v.cast(c.to), {0});
        // put converts an f32 tile; the saturating cast from f16 clamps there first
        p.write(stored, {8}).put(c.saturate ? v.cast(f16).cast(c.to, Overflow::saturate) : v, {0});
      });
      CHECK(bytes(cast) == want);
      CHECK(bytes(stored) == want);
    }
  }
}

TEST_CASE("conformance: f8 tiles move exactly through where, slice, cat, a fold and transpose") {
  for (const std::string& device : conformanceDevices())
    for (DType t : kFloat8Types) {
      INFO(device, ": ", dtypeName(t), " tiles");
      Tensor x = sample({8, 12}, t, 73, edges(t)), out = poisoned({12, 8}, t);
      launch(device, "f8_moves", {1}, [&](Program& p) {
        Tile b = where(p.arange(12).expand_dims(0) % 3 == 0, 2.0, p.read(x, {8, 12}).at({0, 0}));
        Tile c = cat({b.slice(1, 6, 6), b.slice(1, 0, 6)}, 1);  // columns rotated by 6
        Tile d = p.fold(0, 3, c, [&](Index, Tile acc) { return cat({acc.slice(1, 1, 11), acc.slice(1, 0, 1)}, 1); });
        p.write(out, {12, 8}).put(d.transpose(), {0, 0});
      });
      Expect e;
      for (int64_t r = 0; r < 12; ++r)
        for (int64_t col = 0; col < 8; ++col) {
          int64_t from = (r + 9) % 12;  // rotated by 6, then 3
          e.want.push_back(from % 3 == 0 ? Num(2.0) : ref::element(x, col * 12 + from));
        }
      checkElements(out, e);
    }
}

// ---- Reductions

struct ReduceCase {
  const char* name;
  Tile (*apply)(const Tile&, int axis, bool keepdims);
  Num (*ref)(DType, const std::vector<Num>& lane);
};

// The first NaN, else the first best element (ties to the lowest index).
template <typename Better>
Num argBest(const std::vector<Num>& lane, Better better) {
  int64_t best = 0;
  for (size_t j = 0; j < lane.size(); ++j) {
    double v = ref::asDouble(lane[j]);
    if (std::isnan(v)) return static_cast<int64_t>(j);
    if (j > 0 && better(lane[j], lane[static_cast<size_t>(best)])) best = static_cast<int64_t>(j);
  }
  return best;
}

bool greater(DType t, const Num& a, const Num& b) {
  return ref::isNum(a) ? ref::asDouble(a) > ref::asDouble(b) : ref::intLess(t, ref::asInt(b), ref::asInt(a));
}

const ReduceCase kReductions[] = {
    // Floats sum in float64 in index order and round once; ints wrap.
    {"sum", [](const Tile& t, int a, bool k) { return t.sum(a, k); },
     [](DType d, const std::vector<Num>& lane) {
       if (!isFloat(d)) {
         int64_t s = 0;
         for (const Num& x : lane) s = ref::wrapAdd(s, ref::asInt(x));
         return Num(ref::wrap(d, s));
       }
       double s = ref::asDouble(lane[0]);
       for (size_t j = 1; j < lane.size(); ++j) s += ref::asDouble(lane[j]);
       return Num(roundToFloat(d, s));
     }},
    {"max", [](const Tile& t, int a, bool k) { return t.max(a, k); },
     [](DType d, const std::vector<Num>& lane) {
       Num m = lane[0];
       for (const Num& x : lane) m = arith("max", d, m, x);
       return m;
     }},
    {"min", [](const Tile& t, int a, bool k) { return t.min(a, k); },
     [](DType d, const std::vector<Num>& lane) {
       Num m = lane[0];
       for (const Num& x : lane) m = arith("min", d, m, x);
       return m;
     }},
    {"argmax", [](const Tile& t, int a, bool k) { return t.argmax(a, k); },
     [](DType d, const std::vector<Num>& lane) {
       return argBest(lane, [d](const Num& a, const Num& b) { return greater(d, a, b); });
     }},
    {"argmin", [](const Tile& t, int a, bool k) { return t.argmin(a, k); },
     [](DType d, const std::vector<Num>& lane) {
       return argBest(lane, [d](const Num& a, const Num& b) { return greater(d, b, a); });
     }},
};

// A [7, 13] input with NaNs, infinities, signed zeros, ties and (for ints) extremes that wrap.
Tensor reductionInput(DType t) {
  constexpr int64_t cols = 13;
  Tensor x = sample({7, cols}, t, 81);
  auto set = [&](int64_t r, int64_t c, const Num& v) { ref::setElement(x, r * cols + c, v); };
  set(1, 3, number(t, 100)), set(1, 7, number(t, 100));    // a tie for the row maximum
  set(1, 4, number(t, -100)), set(1, 8, number(t, -100));  // and for the minimum
  if (isFloat(t)) {
    for (int64_t r = 0; r < 7; ++r) set(r, 11, -0.0);
    set(3, 11, 0.0);  // column 11: max +0, min -0
    set(2, 5, ref::nan()), set(4, 0, ref::nan()), set(6, 12, ref::nan());
    set(5, 2, ref::inf()), set(5, 9, -ref::inf());
  } else {
    auto [lo, hi] = ref::intRange(t);
    set(0, 0, hi), set(0, 1, hi), set(6, 4, lo), set(5, 4, lo);  // sums that wrap
  }
  return x;
}

TEST_CASE("conformance: reductions along each axis of an odd tile, with NaN inside, keepdims or not") {
  const Shape shape = {7, 13};
  for (const std::string& device : conformanceDevices())
    for (const ReduceCase& op : kReductions)
      for (DType t : kNumericTypes)
        for (int axis : {0, 1})
          for (bool keep : {false, true}) {
            INFO(device, ": ", std::string(op.name), "(axis ", axis, ", keepdims ", keep, ") of ", dtypeName(t),
                 "[7, 13]");
            Tensor x = reductionInput(t);
            Shape outShape = shape;
            if (keep)
              outShape[static_cast<size_t>(axis)] = 1;
            else
              outShape.erase(outShape.begin() + axis);
            bool isArg = std::string_view(op.name).starts_with("arg");
            Tensor out = poisoned(outShape, isArg ? i32 : t);
            launch(device, op.name, {1}, [&](Program& p) {
              Tile r = op.apply(p.read(x, shape).at({0, 0}), axis, keep);
              CHECK(r.shape() == outShape);
              p.write(out, outShape).put(r, std::vector<Index>(outShape.size(), Index(0)));
            });
            Expect e{.ulps = ulpBound(op.name, device, t)};
            int64_t lanes = shape[1 - static_cast<size_t>(axis)], n = shape[static_cast<size_t>(axis)];
            for (int64_t l = 0; l < lanes; ++l) {
              std::vector<Num> lane;
              for (int64_t j = 0; j < n; ++j)
                lane.push_back(ref::element(x, axis == 0 ? j * shape[1] + l : l * shape[1] + j));
              e.want.push_back(op.ref(t, lane));
              double magnitude = 0;
              for (const Num& v : lane) magnitude += std::fabs(ref::asDouble(v));
              if (std::string_view(op.name) == "sum") e.slack.push_back(sumSlack(device, t, lane.size(), magnitude));
            }
            checkElements(out, e);
          }
}

// A reduction's result is spread as its operand's rows or columns; given leading unit
// dimensions it keeps the threads holding it (as FlashAttention stores its row logsumexp
// into a [batch, head, row] tensor) rather than an unrelated layout of the new rank.
TEST_CASE("conformance: reductions reshaped with unit dimensions before and between, stored at rank 3") {
  const Shape shape = {13, 17};
  Tensor x = sample(shape, f32, 93);
  for (const std::string& device : conformanceDevices())
    for (int axis : {0, 1}) {
      INFO(device, ": max over axis ", axis, " of f32[13, 17], reshaped to rank 3");
      int64_t n = shape[size_t(1 - axis)];
      Shape outShape = axis == 1 ? Shape{1, 1, n} : Shape{1, n, 1};
      Tensor out = poisoned({2, outShape[1], outShape[2]}, f32);  // the first half stays poisoned
      launch(device, "reshaped_reduction", {1}, [&](Program& p) {
        Tile r = p.read(x, shape).at({0, 0}).max(axis).reshape(outShape);
        p.write(out, outShape).put(r, {Index(1), Index(0), Index(0)});
      });
      Expect e{.want = std::vector<Num>(size_t(n), ref::nan())};
      for (int64_t l = 0; l < n; ++l) {
        double m = -INFINITY;
        for (int64_t j = 0; j < shape[size_t(axis)]; ++j)
          m = std::max(m, ref::asDouble(ref::element(x, axis == 0 ? j * shape[1] + l : l * shape[1] + j)));
        e.want.push_back(m);
      }
      checkElements(out, e);
    }
}

// Rows long enough for the CPU's vector loops, which compute max and min without NaN or
// signed-zero checks and recover both afterwards: a NaN in the vector part and in the
// remainder, maxima and minima of +0 among -0s, infinities, and rows of one value.
TEST_CASE("conformance: max and min over long rows keep NaN and the sign of zero") {
  const int64_t rows = 8, cols = 1001;
  for (DType t : {f32, f16, bf16, f64}) {
    Tensor x = sample({rows, cols}, t, 82);
    auto set = [&](int64_t r, int64_t c, double v) { ref::setElement(x, r * cols + c, v); };
    for (int64_t c = 0; c < cols; ++c) {
      set(2, c, c == 700 ? 0.0 : -0.0);  // max +0, min -0
      set(3, c, c == 13 ? -0.0 : 0.0);   // max +0, min -0
      set(4, c, -ref::inf());
      set(5, c, c % 2 ? -0.0 : -1.0);  // max -0
    }
    set(0, 37, ref::nan());
    set(1, cols - 1, ref::nan());
    set(6, 500, ref::inf()), set(6, 501, -ref::inf());
    for (const ReduceCase& op : kReductions) {
      if (std::string_view(op.name) != "max" && std::string_view(op.name) != "min") continue;
      for (const std::string& device : conformanceDevices()) {
        INFO(device, ": ", op.name, " of ", dtypeName(t), "[8, 1001] along its rows");
        Tensor out = poisoned({rows}, t);
        launch(device, op.name, {1}, [&](Program& p) { p.write(out, {rows}).put(op.apply(p.read(x, {rows, cols}).at({0, 0}), 1, false), {0}); });
        Expect e;
        for (int64_t r = 0; r < rows; ++r) {
          std::vector<Num> lane;
          for (int64_t c = 0; c < cols; ++c) lane.push_back(ref::element(x, r * cols + c));
          e.want.push_back(op.ref(t, lane));
        }
        checkElements(out, e);
      }
    }
  }
}

// Column masks against a row length known only at run time, in each form the CPU's fast path
// recognizes (`iota < n`, `<=`, and mirrored), for n below, at and past the block's width.
TEST_CASE("conformance: column masks against a run-time length, below, at and past the block") {
  const int64_t rows = 3, block = 64;
  for (int64_t cols : {int64_t{1}, block - 1, block, block + 1, int64_t{200}}) {
    Tensor x = sample({rows, cols}, f32, 83);
    for (const std::string& device : conformanceDevices()) {
      INFO(device, ": masks of a [", rows, ", ", block, "] block over rows of ", cols);
      Tensor lt = poisoned({rows, block}, f32), le = poisoned({rows, block}, f32);
      Tensor gt = poisoned({rows, block}, f32), ge = poisoned({rows, block}, f32);
      Tensor ones = poisoned({rows, block}, f32);  // a mask alone, with no load to guard the nest
      launch(device, "column_masks", {1}, [&](Program& p) {
        auto X = p.read(x, {rows, block});
        Tile t = X.at({0, 0}), col = p.iota({rows, block}, 1);
        Index n = X.size(1);
        p.write(lt, {rows, block}).put(where(col < n, t, -1.0), {0, 0});
        p.write(le, {rows, block}).put(where(col <= n - 1, t, -2.0), {0, 0});
        p.write(gt, {rows, block}).put(where(n > col, t, -3.0), {0, 0});
        p.write(ge, {rows, block}).put(where(n - 1 >= col, t, -4.0), {0, 0});
        p.write(ones, {rows, block}).put(where(col < n, 1.0, -5.0), {0, 0});
      });
      for (auto [out, fill] : {std::pair{&lt, -1.0}, {&le, -2.0}, {&gt, -3.0}, {&ge, -4.0}, {&ones, -5.0}}) {
        Expect e;
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < block; ++c)
            e.want.push_back(c >= cols ? Num(fill) : out == &ones ? Num(1.0) : ref::element(x, r * cols + c));
        checkElements(*out, e);
      }
    }
  }
}

// Index masks with offsets, as flash attention and blocked kernels write them: causal
// `cols <= rows` and `rows > cols` across the diagonal, `cols < n` for rows past their length,
// a constant offset, and an offset near the i32 limit whose sums wrap (no block may be taken as
// all true there).
TEST_CASE("conformance: index masks with offsets: causal, row length and i32 wraparound") {
  const int64_t block = 16, programs = 5;
  const int64_t wrapOffset = int64_t{2147483647} - 7;  // iota + this wraps past 8 columns
  for (int64_t n : {int64_t{20}, int64_t{100}}) {
    Tensor x = Tensor::zeros({1, n});
    for (const std::string& device : conformanceDevices()) {
      INFO(device, ": index masks of ", programs, " [", block, ", ", block, "] blocks, row length ", n);
      Tensor causal = poisoned({programs * block, block}, f32), strict = poisoned({programs * block, block}, f32);
      Tensor inRow = poisoned({programs * block, block}, f32), wrapped = poisoned({programs * block, block}, f32);
      Tensor shifted = poisoned({programs * block, block}, f32);
      launch(device, "index_masks", {programs}, [&](Program& p) {
        Index g = p.id(0), length = p.read(x, {1, block}).size(1);
        Tile rows = p.iota({block, block}, 0) + g * block;
        Tile cols = p.iota({block, block}, 1) + (g % 2) * 24;
        auto put = [&](const Tensor& out, const Tile& mask) {
          p.write(out, {block, block}).put(where(mask, 1.0, 0.0), {g, 0});
        };
        put(causal, cols <= rows);
        put(strict, rows > cols);
        put(inRow, cols < length);
        put(wrapped, p.iota({block, block}, 1) + (length + (wrapOffset - n)) > length);
        put(shifted, p.iota({block, block}, 1) + 3 < length);
      });
      Expect wantCausal, wantStrict, wantInRow, wantWrapped, wantShifted;
      for (int64_t g = 0; g < programs; ++g)
        for (int64_t r = 0; r < block; ++r)
          for (int64_t c = 0; c < block; ++c) {
            int64_t row = g * block + r, col = c + (g % 2) * 24;
            auto wrappedCol = static_cast<int32_t>(static_cast<uint32_t>(c + wrapOffset));
            wantCausal.want.push_back(Num(col <= row ? 1.0 : 0.0));
            wantStrict.want.push_back(Num(row > col ? 1.0 : 0.0));
            wantInRow.want.push_back(Num(col < n ? 1.0 : 0.0));
            wantWrapped.want.push_back(Num(wrappedCol > n ? 1.0 : 0.0));
            wantShifted.want.push_back(Num(c + 3 < n ? 1.0 : 0.0));
          }
      checkElements(causal, wantCausal);
      checkElements(strict, wantStrict);
      checkElements(inRow, wantInRow);
      checkElements(wrapped, wantWrapped);
      checkElements(shifted, wantShifted);
    }
  }
}

// ---- Shape ops

struct ShapeCase {
  const char* name;
  Shape in, out;
  Tile (*apply)(const Tile&);
  Shape (*source)(const Shape& outIndex);  // the input element an output element copies; null: same flat position
};

std::vector<ShapeCase> shapeCases() {
  std::vector<ShapeCase> cases = {
      {"expand_dims(0)", {4, 5}, {1, 4, 5}, [](const Tile& t) { return t.expand_dims(0); }, nullptr},
      {"expand_dims(1)", {4, 5}, {4, 1, 5}, [](const Tile& t) { return t.expand_dims(1); }, nullptr},
      {"expand_dims(2)", {4, 5}, {4, 5, 1}, [](const Tile& t) { return t.expand_dims(2); }, nullptr},
      {"reshape 12x5",
       {3, 4, 5},
       {12, 5},
       [](const Tile& t) {
         return t.reshape({12, 5});
       },
       nullptr},
      {"reshape 60", {3, 4, 5}, {60}, [](const Tile& t) { return t.reshape({60}); }, nullptr},
      {"reshape 5x3x4",
       {3, 4, 5},
       {5, 3, 4},
       [](const Tile& t) {
         return t.reshape({5, 3, 4});
       },
       nullptr},
      {"reshape 2x2x3x5",
       {3, 4, 5},
       {2, 2, 3, 5},
       [](const Tile& t) {
         return t.reshape({2, 2, 3, 5});
       },
       nullptr},
      {"broadcast_to [1,5]->[4,5]",
       {1, 5},
       {4, 5},
       [](const Tile& t) {
         return t.broadcast_to({4, 5});
       },
       [](const Shape& o) {
         return Shape{0, o[1]};
       }},
      {"broadcast_to [5]->[3,5]",
       {5},
       {3, 5},
       [](const Tile& t) {
         return t.broadcast_to({3, 5});
       },
       [](const Shape& o) { return Shape{o[1]}; }},
      {"broadcast_to [4,1]->[4,6]",
       {4, 1},
       {4, 6},
       [](const Tile& t) {
         return t.broadcast_to({4, 6});
       },
       [](const Shape& o) {
         return Shape{o[0], 0};
       }},
      {"broadcast_to [3,1,5]->[2,3,4,5]",
       {3, 1, 5},
       {2, 3, 4, 5},
       [](const Tile& t) {
         return t.broadcast_to({2, 3, 4, 5});
       },
       [](const Shape& o) {
         return Shape{o[1], 0, o[3]};
       }},
      {"transpose [4,5]",
       {4, 5},
       {5, 4},
       [](const Tile& t) { return t.transpose(); },
       [](const Shape& o) {
         return Shape{o[1], o[0]};
       }},
      {"transpose [2,3,4]",
       {2, 3, 4},
       {2, 4, 3},
       [](const Tile& t) { return t.transpose(); },
       [](const Shape& o) {
         return Shape{o[0], o[2], o[1]};
       }},
      {"permute [2,0,1] then reshape",
       {2, 3, 4},
       {4, 6},
       [](const Tile& t) {
         return t.permute({2, 0, 1}).reshape({4, 6});
       },
       [](const Shape& o) {
         return Shape{o[1] / 3, o[1] % 3, o[0]};
       }},
  };
  return cases;
}

int64_t flatIndex(const Shape& shape, const Shape& idx) {
  int64_t f = 0;
  for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + idx[d];
  return f;
}

Shape unflatten(const Shape& shape, int64_t flat) {
  Shape idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return idx;
}

// Runs `apply` on the whole input as one tile and checks each output element is
// the input element `source` names.
void checkShapeOp(const std::string& device, const std::string& name, const Tensor& x, const Shape& outShape,
                  const std::function<Tile(const Tile&)>& apply, const std::function<Shape(const Shape&)>& source) {
  Tensor out = poisoned(outShape, x.dtype());
  launch(device, "shape_op", {1}, [&](Program& p) {
    Tile r = apply(p.read(x, x.shape()).at(std::vector<Index>(x.shape().size(), Index(0))));
    CHECK(r.shape() == outShape);
    p.write(out, outShape).put(r, std::vector<Index>(outShape.size(), Index(0)));
  });
  Expect e;
  for (int64_t i = 0; i < out.numel(); ++i)
    e.want.push_back(ref::element(x, source ? flatIndex(x.shape(), source(unflatten(outShape, i))) : i));
  INFO(name);
  checkElements(out, e);
}

// out[r, c] = the sum over k < depth(r) of term(r, k, c) in float64, each element allowed the
// error of K + 2 f32 roundings of its terms' magnitudes.
Expect dotReference(int64_t M, int64_t N, int64_t K, const std::function<int64_t(int64_t)>& depth,
                    const std::function<double(int64_t, int64_t, int64_t)>& term) {
  Expect e;
  for (int64_t r = 0; r < M; ++r)
    for (int64_t c = 0; c < N; ++c) {
      double sum = 0, magnitude = 0;
      for (int64_t k = 0; k < depth(r); ++k) {
        sum += term(r, k, c);
        magnitude += std::fabs(term(r, k, c));
      }
      e.want.push_back(sum);
      e.slack.push_back(2.0 * (K + 2) * ref::unitRoundoff(f32) * magnitude);
    }
  return e;
}

// A @ B^T with B^T a transposed block (attention's q.k^T): the CPU gives a dot operand memory
// of its own and transposes 32-bit blocks whose sides are multiples of 8 in 8x8 register
// blocks. Blocks inside the tensor and past its edges (masked), f32 and f16 (the general path).
TEST_CASE("conformance: dots of transposed blocks, in 8x8 register blocks and otherwise") {
  const int64_t M = 21, N = 37, K = 29;
  for (DType t : {f32, f16, bf16})
    for (Shape block : {Shape{8, 16, 24}, Shape{8, 8, 8}, Shape{8, 12, 16}}) {  // bm, bn, bk
      const int64_t bm = block[0], bn = block[1], bk = block[2];
      Tensor a = Tensor::random({M, K}, 85, t), b = Tensor::random({N, K}, 86, t);
      for (const std::string& device : conformanceDevices()) {
        INFO(device, ": ", dtypeName(t), " A [", M, ", ", K, "] times B^T, B [", N, ", ", K, "], blocks ", bm, "x", bn,
             "x", bk);
        Tensor out = poisoned({M, N}, f32);
        launch(device, "dot_transposed", {cdiv(M, bm), cdiv(N, bn)}, [&](Program& p) {
          Index i = p.id(0), j = p.id(1);
          auto A = p.read(a, {bm, bk});
          auto B = p.read(b, {bn, bk});
          Tile acc = p.fold(0, A.blocks(1), p.zeros({bm, bn}), [&](Index k, Tile acc) {
            return acc + dot(A.at({i, k}), B.at({j, k}).transpose(), f32);
          });
          p.write(out, {bm, bn}).put(acc, {i, j});
        });
        checkElements(out, dotReference(M, N, K, [&](int64_t) { return K; },
                                        [&](int64_t r, int64_t k, int64_t c) { return a.item(r * K + k) * b.item(c * K + k); }));
      }
    }
}

TEST_CASE("conformance: expand_dims, reshape, broadcast_to, transpose and permute move elements exactly") {
  for (const std::string& device : conformanceDevices())
    for (DType t : {f32, f16, i64, boolean})
      for (const ShapeCase& c : shapeCases()) {
        INFO(device, ": ", std::string(c.name), " on ", dtypeName(t), ref::shapeText(c.in));
        checkShapeOp(device, c.name, sample(c.in, t, 91), c.out, c.apply, c.source);
      }
}

TEST_CASE("conformance: permute by every permutation of a rank-3 tile") {
  const Shape in = {2, 3, 5};
  for (const std::string& device : conformanceDevices()) {
    std::vector<int> perm = {0, 1, 2};
    do {
      INFO(device, ": permute(", perm[0], ", ", perm[1], ", ", perm[2], ") of f32[2, 3, 5]");
      Shape out = {in[static_cast<size_t>(perm[0])], in[static_cast<size_t>(perm[1])],
                   in[static_cast<size_t>(perm[2])]};
      checkShapeOp(
          device, "permute", sample(in, f32, 92), out, [&](const Tile& t) { return t.permute(perm); },
          [&](const Shape& o) {
            Shape i(3);
            for (size_t d = 0; d < 3; ++d) i[static_cast<size_t>(perm[d])] = o[d];
            return i;
          });
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST_CASE("conformance: iota, arange and scalar tiles") {
  struct Case {
    const char* name;
    Shape shape;
    Tile (*make)(Program&);
    int64_t (*ref)(const Shape& idx);
  };
  const Case cases[] = {
      {"iota([3,5], 0)",
       {3, 5},
       [](Program& p) {
         return p.iota({3, 5}, 0);
       },
       [](const Shape& i) { return i[0]; }},
      {"iota([3,5], 1)",
       {3, 5},
       [](Program& p) {
         return p.iota({3, 5}, 1);
       },
       [](const Shape& i) { return i[1]; }},
      {"iota([2,3,4], 2)",
       {2, 3, 4},
       [](Program& p) {
         return p.iota({2, 3, 4}, 2);
       },
       [](const Shape& i) { return i[2]; }},
      {"iota([2,3,2,3], 1)",
       {2, 3, 2, 3},
       [](Program& p) {
         return p.iota({2, 3, 2, 3}, 1);
       },
       [](const Shape& i) { return i[1]; }},
      {"arange(7)", {7}, [](Program& p) { return p.arange(7); }, [](const Shape& i) { return i[0]; }},
      {"arange(7) * 3 - 4",
       {7},
       [](Program& p) { return p.arange(7) * 3 - 4; },
       [](const Shape& i) { return i[0] * 3 - 4; }},
      {"scalar(id + 6) broadcast_to [4]",
       {4},
       [](Program& p) { return p.scalar(p.id(0) + 6, i32).broadcast_to({4}); },
       [](const Shape&) { return int64_t{6}; }},
      {"iota row + iota col",
       {3, 5},
       [](Program& p) {
         return p.iota({3, 1}, 0) * 10 + p.arange(5);
       },
       [](const Shape& i) { return i[0] * 10 + i[1]; }},
  };
  for (const std::string& device : conformanceDevices())
    for (const Case& c : cases) {
      INFO(device, ": ", std::string(c.name));
      Tensor out = poisoned(c.shape, i32);
      launch(device, "iota", {1}, [&](Program& p) {
        Tile t = c.make(p);
        CHECK(t.dtype() == i32);
        p.write(out, c.shape).put(t, std::vector<Index>(c.shape.size(), Index(0)));
      });
      Expect e;
      for (int64_t i = 0; i < out.numel(); ++i) e.want.push_back(c.ref(unflatten(c.shape, i)));
      checkElements(out, e);
    }
}

// ---- dot

// C = bias + A·B with A [40, 30], B [30, 50] in odd blocks (every block edge partial, the K
// loop's last block zero fill), then in blocks the CPU's micro-kernel takes with a leftover
// band of rows (13x9x32; 7x10x16, whose even K puts i8 on pair products).
TEST_CASE("conformance: dot on odd block sizes with an accumulator, against float64") {
  constexpr int64_t M = 40, K = 30, N = 50;
  struct Case {
    DType operand, result, operandB = operand;
  };
  const Case cases[] = {{f32, f32}, {f64, f64},          {f16, f32},           {bf16, f32},
                        {i8, i32},  {u8, i32, i8},       {f8e4m3, f32},        {f8e5m2, f32},
                        {f8e4m3, f32, f8e5m2},           {f8e5m2, bf16, f8e4m3}};
  const std::array<Shape, 3> blocks = {Shape{17, 9, 23}, Shape{13, 9, 32}, Shape{7, 10, 16}};
  for (const std::string& device : conformanceDevices())
    for (const Case& c : cases)
      for (const Shape& block : blocks)
        for (bool explicitAcc : {true, false}) {
          const int64_t bm = block[0], bk = block[1], bn = block[2];
          INFO(device, ": dot of ", dtypeName(c.operand), " x ", dtypeName(c.operandB), " giving ", dtypeName(c.result),
               std::string(explicitAcc ? " as dot(a, b, acc)" : " as acc + dot(a, b)"), " in blocks ", bm, "x", bk,
               "x", bn);
          // float operands in [-1, 1)
          auto operand = [&](const Shape& s, uint64_t seed, DType t) {
            return isFloat(t) ? Tensor::random(s, seed, t) : sample(s, t, seed);
          };
          Tensor a = operand({M, K}, 101, c.operand), b = operand({K, N}, 102, c.operandB), bias = sample({M, N}, c.result, 103);
          Tensor out = poisoned({M, N}, c.result);
          launch(device, "dot", {cdiv(M, bm), cdiv(N, bn)}, [&](Program& p) {
            Index i = p.id(0), j = p.id(1);
            auto A = p.read(a, {bm, bk});
            auto B = p.read(b, {bk, bn});
            Tile acc = p.fold(0, A.blocks(1), p.read(bias, {bm, bn}).at({i, j}), [&](Index k, Tile acc) {
              return explicitAcc ? dot(A.at({i, k}), B.at({k, j}), acc) : acc + dot(A.at({i, k}), B.at({k, j}), c.result);
            });
            CHECK(acc.dtype() == c.result);
            p.write(out, {bm, bn}).put(acc, {i, j});
          });
          Expect e;
          for (int64_t r = 0; r < M; ++r)
            for (int64_t col = 0; col < N; ++col) {
              double sum = ref::asDouble(ref::element(bias, r * N + col)), magnitude = std::fabs(sum);
              for (int64_t k = 0; k < K; ++k) {
                double term = ref::asDouble(ref::element(a, r * K + k)) * ref::asDouble(ref::element(b, k * N + col));
                sum += term;
                magnitude += std::fabs(term);
              }
              // A K-term sum rounded in the result dtype errs by at most about K units of roundoff
              // of the magnitudes; the float64 reference's own error is below that.
              bool exact = !isFloat(c.result);
              e.want.push_back(exact ? Num(static_cast<int64_t>(sum)) : Num(sum));
              e.slack.push_back(exact ? 0 : 2.0 * (K + 2) * ref::unitRoundoff(c.result) * magnitude);
            }
          checkElements(out, e);
        }
}

// The CPU reads an f32 dot's left operand from its tensor when the block lies inside with unit
// columns (rows a tensor's row stride apart, not the block's width), and copies it otherwise:
// edge blocks, a transposed view, a block read once before the loop.
TEST_CASE("conformance: a dot's left operand read in place, from a transposed view, before the loop") {
  constexpr int64_t M = 40, K = 32, N = 48, bm = 13, bk = 8, bn = 16;
  Tensor rowMajor = Tensor::random({M, K}, 106), b = Tensor::random({K, N}, 107);
  Tensor transposed = Tensor::random({K, M}, 108).transpose();
  for (const std::string& device : conformanceDevices())
    for (int variant : {0, 1, 2}) {
      const char* names[] = {"row-major A", "A a transposed view", "A's whole rows read before the loop"};
      INFO(device, ": ", names[variant]);
      const Tensor& a = variant == 1 ? transposed : rowMajor;
      Tensor out = poisoned({M, N}, f32);
      if (variant < 2) {
        launch(device, "dot_in_place", {cdiv(M, bm), cdiv(N, bn)}, [&](Program& p) {
          Index i = p.id(0), j = p.id(1);
          auto A = p.read(a, {bm, bk});
          auto B = p.read(b, {bk, bn});
          Tile acc = p.fold(0, A.blocks(1), p.zeros({bm, bn}),
                            [&](Index k, Tile acc) { return acc + dot(A.at({i, k}), B.at({k, j})); });
          p.write(out, {bm, bn}).put(acc, {i, j});
        });
      } else {
        // out[:, j-block] = A_i · (sum of B's column blocks up to j), one block of A read once.
        launch(device, "dot_hoisted_operand", {cdiv(M, bm), cdiv(N, bn)}, [&](Program& p) {
          Index i = p.id(0), j = p.id(1);
          Tile rows = p.read(a, {bm, K}).at({i, 0});
          auto B = p.read(b, {K, bn});
          Tile acc = p.fold(0, j + 1, p.zeros({bm, bn}), [&](Index k, Tile acc) { return acc + dot(rows, B.at({0, k})); });
          p.write(out, {bm, bn}).put(acc, {i, j});
        });
      }
      Expect e;
      for (int64_t r = 0; r < M; ++r)
        for (int64_t c = 0; c < N; ++c) {
          double sum = 0, magnitude = 0;
          for (int64_t cb = variant < 2 ? c : c % bn; cb <= c; cb += bn)
            for (int64_t k = 0; k < K; ++k) {
              double term = a.item(r * K + k) * b.item(k * N + cb);
              sum += term;
              magnitude += std::fabs(term);
            }
          e.want.push_back(sum);
          e.slack.push_back(2.0 * (K * N / bn + 2) * ref::unitRoundoff(f32) * magnitude);
        }
      checkElements(out, e);
    }
}

// A fold's tile that starts as zeros, changes only as a dot's accumulator and is then stored:
// the CPU accumulates it in the output block itself (a stack block at edges and for strided
// outputs, scattered by the store). Row block i takes min(i, K blocks) steps, so block 0 takes
// none and must store zeros.
TEST_CASE("conformance: a dot accumulating in its output block, with no steps, edges and a strided output") {
  constexpr int64_t M = 37, K = 40, N = 44, bm = 8, bk = 8, bn = 16;
  Tensor a = Tensor::random({M, K}, 109), b = Tensor::random({K, N}, 110);
  for (const std::string& device : conformanceDevices())
    for (bool strided : {false, true}) {
      INFO(device, strided ? ": out a transposed view" : ": out row-major");
      Tensor out = strided ? poisoned({N, M}, f32).transpose() : poisoned({M, N}, f32);
      launch(device, "dot_in_output", {cdiv(M, bm), cdiv(N, bn)}, [&](Program& p) {
        Index i = p.id(0), j = p.id(1);
        auto A = p.read(a, {bm, bk});
        auto B = p.read(b, {bk, bn});
        Tile acc = p.fold(0, min(i, A.blocks(1)), p.zeros({bm, bn}),
                          [&](Index k, Tile acc) { return acc + dot(A.at({i, k}), B.at({k, j})); });
        p.write(out, {bm, bn}).put(acc, {i, j});
      });
      checkElements(out, dotReference(M, N, K, [&](int64_t r) { return std::min(r / bm, K / bk) * bk; },
                                      [&](int64_t r, int64_t k, int64_t c) { return a.item(r * K + k) * b.item(k * N + c); }));
    }
}

// The same tile also read by another carried value each step (a running maximum of the
// partial sums): the step's sum must be in the buffer it reads, so the CPU keeps it there.
TEST_CASE("conformance: a dot accumulator whose every step is also read, stored at the end") {
  constexpr int64_t M = 21, K = 24, N = 16, bm = 8, bk = 8, bn = 16;
  Tensor a = Tensor::random({M, K}, 111), b = Tensor::random({K, N}, 112);
  for (const std::string& device : conformanceDevices()) {
    INFO(device);
    Tensor out = poisoned({M, N}, f32), peak = poisoned({M, N}, f32);
    launch(device, "dot_read_each_step", {cdiv(M, bm), cdiv(N, bn)}, [&](Program& p) {
      Index i = p.id(0), j = p.id(1);
      auto A = p.read(a, {bm, bk});
      auto B = p.read(b, {bk, bn});
      auto [acc, most] = p.fold(0, A.blocks(1), std::tuple{p.zeros({bm, bn}), p.full({bm, bn}, -ref::inf())},
                                [&](Index k, Tile acc, Tile most) {
                                  Tile sum = acc + dot(A.at({i, k}), B.at({k, j}));
                                  return std::tuple{sum, max(most, sum)};
                                });
      p.write(out, {bm, bn}).put(acc, {i, j});
      p.write(peak, {bm, bn}).put(most, {i, j});
    });
    Expect sums, peaks;
    for (int64_t r = 0; r < M; ++r)
      for (int64_t c = 0; c < N; ++c) {
        double sum = 0, magnitude = 0, top = -ref::inf();
        for (int64_t k = 0; k < K; ++k) {
          double term = a.item(r * K + k) * b.item(k * N + c);
          sum += term;
          magnitude += std::fabs(term);
          if (k % bk == bk - 1) top = std::max(top, sum);
        }
        for (Expect* e : {&sums, &peaks}) e->slack.push_back(2.0 * (K + 2) * ref::unitRoundoff(f32) * magnitude);
        sums.want.push_back(sum);
        peaks.want.push_back(top);
      }
    checkElements(out, sums);
    checkElements(peak, peaks);
  }
}

// Flash attention's update `acc * s + p.v`: the CPU scales the carried tile in place and
// accumulates the product into it, unless the tile is read elsewhere too.
TEST_CASE("conformance: a dot accumulating into a rescaled carried tile, alone or read elsewhere") {
  constexpr int64_t M = 23, K = 40, N = 19, bm = 8, bk = 8, bn = 16;
  Tensor a = Tensor::random({M, K}, 104), b = Tensor::random({K, N}, 105);
  for (const std::string& device : conformanceDevices())
    for (int variant : {0, 1, 2}) {
      const char* names[] = {"dot(a, b, acc * 0.5)", "dot(a, b, 0.5 * acc) with acc also summed",
                             "dot(a, b, acc - 1) with 2 * acc also carried"};
      INFO(device, ": ", names[variant]);
      Tensor out = poisoned({M, N}, f32), sums = poisoned({M, N}, f32);
      launch(device, "rescaled_dot", {cdiv(M, bm), cdiv(N, bn)}, [&](Program& p) {
        Index i = p.id(0), j = p.id(1);
        auto A = p.read(a, {bm, bk});
        auto B = p.read(b, {bk, bn});
        auto [acc, seen] = p.fold(0, A.blocks(1), std::tuple{p.full({bm, bn}, 1.0), p.zeros({bm, bn})},
                                  [&](Index k, Tile acc, Tile seen) {
                                    Tile ab = dot(A.at({i, k}), B.at({k, j}));
                                    if (variant == 0) return std::tuple{ab + acc * 0.5, seen};
                                    if (variant == 1) return std::tuple{ab + 0.5 * acc, seen + acc};
                                    return std::tuple{ab + (acc - 1.0), seen + acc * 2.0};
                                  });
        p.write(out, {bm, bn}).put(acc, {i, j});
        p.write(sums, {bm, bn}).put(seen, {i, j});
      });
      Expect eAcc, eSeen;
      for (int64_t r = 0; r < M; ++r)
        for (int64_t c = 0; c < N; ++c) {
          double acc = 1, seen = 0, magnitude = 1;
          for (int64_t k0 = 0; k0 < K; k0 += bk) {
            double ab = 0;
            for (int64_t k = k0; k < std::min(K, k0 + bk); ++k) ab += a.item(r * K + k) * b.item(k * N + c);
            seen += variant == 0 ? 0 : variant == 1 ? acc : 2 * acc;
            acc = ab + (variant == 2 ? acc - 1 : 0.5 * acc);
            magnitude += std::fabs(acc) + bk;
          }
          eAcc.want.push_back(acc);
          eAcc.slack.push_back(4.0 * (K + 2) * ref::unitRoundoff(f32) * magnitude);
          eSeen.want.push_back(seen);
          eSeen.slack.push_back(4.0 * (K + 2) * ref::unitRoundoff(f32) * magnitude);
        }
      checkElements(out, eAcc);
      checkElements(sums, eSeen);
    }
}

// ---- fold

// Sums rows [start, end) of x [6, 8] in f32, one rounding per step, from `init`.
std::vector<double> rowSums(const Tensor& x, int64_t start, int64_t end, double init) {
  std::vector<double> acc(8, init);
  for (int64_t k = start; k < end; ++k)
    for (int64_t c = 0; c < 8; ++c)
      acc[static_cast<size_t>(c)] = roundToFloat(f32, acc[static_cast<size_t>(c)] + x.item(k * 8 + c));
  return acc;
}

Expect expectDoubles(const std::vector<double>& values) {
  Expect e;
  for (double v : values) e.want.push_back(v);
  return e;
}

TEST_CASE("conformance: fold carrying one tile and a tuple of three") {
  Tensor x = sample({6, 8}, f32, 111, {0.5, -0.0, 3.0, 1e30f, -1e30f});
  for (const std::string& device : conformanceDevices()) {
    CAPTURE(device);
    Tensor sum = poisoned({1, 8}, f32), sum3 = poisoned({1, 8}, f32), mx = poisoned({1, 8}, f32),
           count = poisoned({1, 8}, i32);
    launch(device, "fold", {1}, [&](Program& p) {
      auto X = p.read(x, {1, 8});
      Tile acc = p.fold(0, X.blocks(0), p.zeros({1, 8}), [&](Index k, Tile acc) { return acc + X.at({k, 0}); });
      p.write(sum, {1, 8}).put(acc, {0, 0});
      auto [s, m, n] = p.fold(0, 6, std::tuple{p.zeros({1, 8}), p.full({1, 8}, -ref::inf()), p.zeros({1, 8}, i32)},
                              [&](Index k, Tile s, Tile m, Tile n) {
                                Tile v = X.at({k, 0});
                                return std::tuple{s + v, max(m, v), n + (v > 0.0).cast(i32)};
                              });
      p.write(sum3, {1, 8}).put(s, {0, 0});
      p.write(mx, {1, 8}).put(m, {0, 0});
      p.write(count, {1, 8}).put(n, {0, 0});
    });
    std::vector<double> wantMax(8, -ref::inf());
    Expect wantCount;
    for (int64_t c = 0; c < 8; ++c) {
      int64_t positive = 0;
      for (int64_t r = 0; r < 6; ++r) {
        wantMax[static_cast<size_t>(c)] = maxOf(wantMax[static_cast<size_t>(c)], x.item(r * 8 + c));
        positive += x.item(r * 8 + c) > 0;
      }
      wantCount.want.push_back(positive);
    }
    checkElements(sum, expectDoubles(rowSums(x, 0, 6, 0.0)));
    checkElements(sum3, expectDoubles(rowSums(x, 0, 6, 0.0)));
    checkElements(mx, expectDoubles(wantMax));
    checkElements(count, wantCount);
  }
}

TEST_CASE("conformance: fold bounds from Index expressions, empty ranges and nested folds") {
  Tensor x = sample({6, 8}, f32, 121);
  struct Case {
    const char* name;
    Tile (*apply)(Program&, const ReadView& X);
    std::vector<double> (*ref)(const Tensor& x, int64_t program);
  };
  const Case cases[] = {
      {"fold(0, id + 1): prefix sums",
       [](Program& p, const ReadView& X) {
         return p.fold(0, p.id(0) + 1, p.zeros({1, 8}), [&](Index k, Tile acc) { return acc + X.at({k, 0}); });
       },
       [](const Tensor& x, int64_t i) { return rowSums(x, 0, i + 1, 0.0); }},
      {"fold(id * 2, 5): empty for id >= 3",
       [](Program& p, const ReadView& X) {
         return p.fold(p.id(0) * 2, 5, p.full({1, 8}, 0.25), [&](Index k, Tile acc) { return acc + X.at({k, 0}); });
       },
       [](const Tensor& x, int64_t i) { return rowSums(x, i * 2, 5, 0.25); }},
      {"fold(id + 1, id): start > end runs nothing",
       [](Program& p, const ReadView& X) {
         return p.fold(p.id(0) + 1, p.id(0), p.full({1, 8}, 7.0), [&](Index k, Tile acc) {
           return acc + X.at({k, 0});
         });
       },
       [](const Tensor&, int64_t) { return std::vector<double>(8, 7.0); }},
      {"fold(-id, min(id, 2)): a negative start",
       [](Program& p, const ReadView& X) {
         return p.fold(-p.id(0), min(p.id(0), 2), p.zeros({1, 8}), [&](Index k, Tile acc) {
           return acc + X.at({max(k, 0), 0});
         });
       },
       [](const Tensor& x, int64_t i) {
         std::vector<double> acc = rowSums(x, 0, 0, 0.0);
         for (int64_t k = -i; k < std::min<int64_t>(i, 2); ++k) {
           std::vector<double> step = rowSums(x, std::max<int64_t>(k, 0), std::max<int64_t>(k, 0) + 1, 0.0);
           for (size_t c = 0; c < 8; ++c) acc[c] = roundToFloat(f32, acc[c] + step[c]);
         }
         return acc;
       }},
      // Outer k in [0, 3), inner j in [k, id + 3): acc += x[j] * k; the inner bounds use the outer index.
      {"nested folds",
       [](Program& p, const ReadView& X) {
         return p.fold(0, 3, p.zeros({1, 8}), [&](Index k, Tile outer) {
           return p.fold(k, p.id(0) + 3, outer, [&](Index j, Tile inner) { return inner + X.at({j, 0}) * k; });
         });
       },
       [](const Tensor& x, int64_t i) {
         std::vector<double> acc(8, 0.0);
         for (int64_t k = 0; k < 3; ++k)
           for (int64_t j = k; j < std::min<int64_t>(i + 3, 6); ++j)
             for (size_t c = 0; c < 8; ++c)
               acc[c] = roundToFloat(
                   f32, acc[c] + roundToFloat(f32, x.item(j * 8 + static_cast<int64_t>(c)) * static_cast<double>(k)));
         return acc;
       }},
  };
  for (const std::string& device : conformanceDevices())
    for (const Case& c : cases) {
      INFO(device, ": ", std::string(c.name));
      Tensor out = poisoned({4, 8}, f32);
      launch(device, "fold_bounds", {4}, [&](Program& p) {
        p.write(out, {1, 8}).put(c.apply(p, p.read(x, {1, 8})), {p.id(0), 0});
      });
      std::vector<double> want;
      for (int64_t i = 0; i < 4; ++i) {
        std::vector<double> row = c.ref(x, i);
        want.insert(want.end(), row.begin(), row.end());
      }
      checkElements(out, expectDoubles(want));
    }
}

// ---- Indirect reads and writes

// Row coordinates of an odd length with values before, inside and past 37 rows; i64
// values far outside any tensor (they must not wrap into range).
Tensor gatherRows(DType t) {
  std::vector<double> rows = {0, 36, 37, -1, 5, 5, 12, 40, -7, 1, 30, 2, 19};
  if (t == i64) rows.insert(rows.end(), {0x1p40, -0x1p40, -0x1p62, 0x1p62 - 1024});
  return Tensor::from({int64_t(rows.size())}, rows, t);
}

TEST_CASE("conformance: gather reads computed coordinates: out-of-range and masked elements read the fill") {
  for (const std::string& device : conformanceDevices())
    for (auto [t, coordType, fill] : {std::tuple{f32, i32, -5.5}, std::tuple{i32, i64, -7.0}, std::tuple{f16, i32, ref::inf()},
                                      std::tuple{i64, i8, 3.0}, std::tuple{boolean, i32, 1.0}, std::tuple{u16, u32, 77.0},
                                      std::tuple{u64, u8, 5.0}, std::tuple{f8e4m3, i32, 0.4375}}) {
      for (bool transposed : {false, true}) {
        INFO(device, ": gather from ", dtypeName(t), "[37, 29]", transposed ? " (a transposed view)" : "", " at ",
             dtypeName(coordType), " coordinates, fill ", fill);
        Tensor table = transposed ? sample({29, 37}, t, 171, edges(t)).transpose() : sample({37, 29}, t, 171, edges(t));
        // Cast in the kernel: all fit i8; unsigned ones take negative rows as large ones, outside too.
        Tensor rows = gatherRows(coordType == i8 || isUnsigned(coordType) ? i32 : coordType);
        int64_t n = rows.numel(), block = 32, cols = 8;
        Tensor out = poisoned({n, cols}, t);
        launch(device, "gather", {1}, [&](Program& p) {
          Tile r = p.read(rows, {block}, -1).at({0}).cast(coordType).expand_dims(1);  // past n: row -1
          Tile c = (p.arange(cols) * 4 - 2).expand_dims(0);                          // -2, 2, ... 26
          Tile keep = (r != 12) || (c != 10);
          p.write(out, {block, cols}).put(p.gather(table, {r, c}, keep, fill), {0, 0});
        });
        Expect e;
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < cols; ++j) {
            int64_t r = ref::asInt(ref::element(rows, i)), c = j * 4 - 2;
            bool inside = r >= 0 && r < 37 && c >= 0 && c < 29 && !(r == 12 && c == 10);
            e.want.push_back(inside ? ref::element(table, r * 29 + c) : number(t, fill));
          }
        checkElements(out, e);
      }
    }
}

TEST_CASE("conformance: gather with Index, number and broadcast coordinates, of rank 1 and rank 3 tensors") {
  for (const std::string& device : conformanceDevices()) {
    INFO(device);
    Tensor x = sample({41}, f64, 181, edges(f64)), cube = sample({3, 5, 7}, i32, 182);
    Tensor line = poisoned({5, 9}, f64), planes = poisoned({3, 4, 7}, i32);
    launch(device, "gather_ranks", {3}, [&](Program& p) {
      // line[i][j] = x[(i * 9 + j) * 2 - 8]: a rank-2 tile of coordinates into a rank-1 tensor.
      Tile flat = (p.iota({5, 9}, 0) * 9 + p.iota({5, 9}, 1)) * 2 - 8;
      p.write(line, {5, 9}).put(p.gather(x, {flat}, 0.25), {0, 0});
      // planes[k][i][j] = cube[k][5 - i][j], i in [0, 4) (row 5 is past the edge): an Index and
      // broadcast row and column coordinates.
      Tile i = (5 - p.arange(4)).expand_dims(1), j = p.arange(7).expand_dims(0);
      p.write(planes, {1, 4, 7}).put(p.gather(cube, {p.id(0), i, j}, -1).expand_dims(0), {p.id(0), 0, 0});
    });
    Expect e;
    for (int64_t f = 0; f < 45; ++f) {
      int64_t at = f * 2 - 8;
      e.want.push_back(at >= 0 && at < 41 ? ref::element(x, at) : Num(0.25));
    }
    checkElements(line, e);
    Expect fromCube;
    for (int64_t k = 0; k < 3; ++k)
      for (int64_t i = 0; i < 4; ++i)
        for (int64_t j = 0; j < 7; ++j)
          fromCube.want.push_back(5 - i < 5 ? ref::element(cube, (k * 5 + 5 - i) * 7 + j) : Num(int64_t{-1}));
    checkElements(planes, fromCube);
  }
}

TEST_CASE("conformance: scatter writes computed coordinates: out-of-range and masked writes are dropped") {
  for (const std::string& device : conformanceDevices())
    for (auto [t, transposed] : {std::pair{f32, false}, std::pair{i64, true}, std::pair{bf16, false}, std::pair{i8, true}}) {
      INFO(device, ": scatter into ", dtypeName(t), "[37, 29]", transposed ? " (a transposed view)" : "");
      Tensor out = transposed ? poisoned({29, 37}, t).transpose() : poisoned({37, 29}, t);
      Tensor rows = gatherRows(i64);
      int64_t n = rows.numel();
      // Row i goes to rows[i] (distinct in range except the repeated 5, which the mask drops once),
      // column j to 28 - 3j (negative past j = 9).
      launch(device, "scatter", {1}, [&](Program& p) {
        Tile r = p.read(rows, {32}, -1).at({0}).expand_dims(1);
        Tile i = p.arange(32).expand_dims(1), j = p.arange(11).expand_dims(0);
        Tile value = (i * 11 + j).cast(f32) * 0.5 - 20;
        p.scatter(out, {r, 28 - j * 3}, value, i != 5);
      });
      std::vector<Num> want(37 * 29, number(t, poisonValue(t)));
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < 11; ++j) {
          int64_t r = ref::asInt(ref::element(rows, i)), c = 28 - 3 * j;
          if (i == 5 || r < 0 || r >= 37 || c < 0) continue;
          want[size_t(r * 29 + c)] = castRef(f32, t, roundToFloat(f32, double(i * 11 + j) * 0.5 - 20));
        }
      checkElements(out, Expect{.want = want});
    }
}

TEST_CASE("conformance: scatter of a number and of an Index, and duplicate coordinates write one of their values") {
  for (const std::string& device : conformanceDevices()) {
    INFO(device);
    Tensor marks = poisoned({24}, i32), dup = poisoned({3}, f32);
    launch(device, "scatter_dup", {2}, [&](Program& p) {
      p.scatter(marks, {p.arange(16) * 3 - p.id(0) * 2}, 7);  // 0, 3, ... and 1, 4, ..., 22 (-2 dropped)
      p.scatter(marks, {23}, p.id(0) + 100, p.id(0) == 1);    // a rank-0 scatter, from program 1 only
      // 32 writes each to dup[0] and dup[1], from program 0 (two programs' would race)
      p.scatter(dup, {p.arange(64) % 2}, p.arange(64).cast(f32), p.id(0) == 0);
    });
    for (int64_t i = 0; i < 23; ++i) {
      bool written = i % 3 == 0 || (i + 2) % 3 == 0;
      CHECK_MESSAGE(ref::asInt(ref::element(marks, i)) == (written ? 7 : poisonValue(i32)), "marks[" << i << "]");
    }
    CHECK(ref::asInt(ref::element(marks, 23)) == 101);
    double d0 = ref::asDouble(ref::element(dup, 0)), d1 = ref::asDouble(ref::element(dup, 1));
    CHECK_MESSAGE((d0 >= 0 && d0 <= 62 && std::fmod(d0, 2) == 0), "dup[0] = " << d0 << " is none of its writes");
    CHECK_MESSAGE((d1 >= 1 && d1 <= 63 && std::fmod(d1, 2) == 1), "dup[1] = " << d1 << " is none of its writes");
    CHECK(std::isnan(ref::asDouble(ref::element(dup, 2))));
    if (device == "interp" || device == "cpu") CHECK((d0 == 62 && d1 == 63));  // row-major order: the last wins
  }
}

TEST_CASE("conformance: values read from memory become block indices, offsets, fold bounds and selected indices") {
  for (const std::string& device : conformanceDevices()) {
    INFO(device);
    // Ragged rows: row r is data[starts[r], starts[r] + lengths[r]), summed over blocks of 4.
    Tensor lengths = Tensor::from({5}, {3, 0, 7, 1, 12}, i32), starts = Tensor::from({5}, {0, 3, 3, 10, 11}, i64);
    Tensor data = sample({23}, f64, 191), sums = poisoned({5}, f64), firsts = poisoned({5}, i64);
    // Blocks of 8 copied in a permuted order: block 4 of x is partial (3 of 8), the rest reads -5.
    Tensor perm = Tensor::from({5}, {2, 4, 3, 1, 0}, i32), x = sample({35}, i32, 192), shuffled = poisoned({40}, i32);
    launch(device, "ragged", {5}, [&](Program& p) {
      Index row = p.id(0);
      Index len = p.index(p.gather(lengths, {row})), start = p.index(p.gather(starts, {row}));
      auto X = p.read(data, {4});
      Tile total = p.fold(0, cdiv(len, 4), p.zeros({4}, f64), [&](Index k, Tile acc) {
        return acc + where(p.arange(4) + k * 4 < len, X.at_offset({start + k * 4}), 0.0);
      });
      p.write(sums, {1}).put(total.sum(0, true), {row});
      p.scatter(firsts, {row}, select(len > 5, start, -1));
      p.write(shuffled, {8}).put(p.read(x, {8}, -5).at({p.index(p.gather(perm, {row}))}), {row});
    });
    const int64_t len[] = {3, 0, 7, 1, 12}, start[] = {0, 3, 3, 10, 11}, order[] = {2, 4, 3, 1, 0};
    Expect sum, first, copied;
    for (int64_t r = 0; r < 5; ++r) {
      double s = 0, magnitude = 0;
      for (int64_t i = 0; i < len[r]; ++i) {
        s += ref::asDouble(ref::element(data, start[r] + i));
        magnitude += std::fabs(ref::asDouble(ref::element(data, start[r] + i)));
      }
      sum.want.push_back(s);
      sum.slack.push_back(std::max(sumSlack(device, f64, size_t(len[r]), magnitude), 1e-300));
      first.want.push_back(len[r] > 5 ? start[r] : int64_t{-1});
      for (int64_t i = 0; i < 8; ++i) {
        int64_t from = order[r] * 8 + i;
        copied.want.push_back(from < 35 ? ref::element(x, from) : Num(int64_t{-5}));
      }
    }
    checkElements(sums, sum);
    checkElements(firsts, first);
    checkElements(shuffled, copied);
  }
}

// ---- Atomics

// Whether the updates of one tensor element form a chain from `init` to `last`: the values
// each update found (olds) and left (olds combined with their values) are the same multiset
// once init and last are added: true for every serial order of the updates.
bool formsChain(double init, double last, const std::vector<std::pair<double, double>>& oldAndNew) {
  std::multiset<double> before = {init}, after = {last};
  for (auto [o, n] : oldAndNew) {
    before.insert(n);
    after.insert(o);
  }
  return before == after;
}

TEST_CASE("conformance: atomic add, max, min and xchg apply every duplicate, skip masked and outside elements") {
  for (const std::string& device : conformanceDevices())
    for (auto [fn, t] : {std::pair{"add", i32}, std::pair{"add", i64}, std::pair{"add", f32}, std::pair{"max", i32},
                         std::pair{"min", i64}, std::pair{"xchg", i32}, std::pair{"xchg", f32}, std::pair{"max", u32},
                         std::pair{"min", u32}, std::pair{"max", f32}, std::pair{"min", f64}, std::pair{"add", f64},
                         std::pair{"xchg", f64}}) {
      INFO(device, ": atomic_", fn, " on ", dtypeName(t), "[13] from 3 programs of 256 elements");
      std::string name = fn;
      Tensor bins = sample({13}, t, 201), init = bins.contiguous(), olds = poisoned({3, 256}, t);
      KernelBody body = [&](Program& p) {
        Tile i = p.arange(256);
        Tile where = (i * 7) % 17 - 2;  // -2 .. 14: bins 13 and 14 and -2, -1 are outside
        Tile value = (i - 20 + p.id(0) * 3).cast(t);
        Tile keep = i % 5 != 0;
        Tile old = name == "add" ? p.atomic_add(bins, {where}, value, keep)
                   : name == "max" ? p.atomic_max(bins, {where}, value, keep)
                   : name == "min" ? p.atomic_min(bins, {where}, value, keep)
                                   : p.atomic_xchg(bins, {where}, value, keep);
        p.write(olds, {1, 256}).put(old.expand_dims(0), {p.id(0), 0});
      };
      launch(device, "atomic_" + name, {3}, body);  // f32 add on Vulkan: VK_EXT_shader_atomic_float (lavapipe has it)
      std::vector<std::vector<std::pair<double, double>>> updates(13);
      std::vector<std::vector<double>> applied(13);
      for (int64_t prog = 0; prog < 3; ++prog)
        for (int64_t i = 0; i < 256; ++i) {
          int64_t bin = (i * 7) % 17 - 2;
          // u32 values wrap: the negative ones are the largest
          double old = ref::asDouble(ref::element(olds, prog * 256 + i)), v = ref::asDouble(number(t, double(i - 20 + prog * 3)));
          if (i % 5 == 0 || bin < 0 || bin >= 13) {
            CHECK_MESSAGE(old == 0, "element " << i << " of program " << prog << " updated nothing but got " << old);
            continue;
          }
          double next = name == "add" ? (t == f32 ? roundToFloat(t, old + v) : old + v) : name == "max" ? std::max(old, v)
                        : name == "min" ? std::min(old, v) : v;
          updates[size_t(bin)].push_back({old, next});
          applied[size_t(bin)].push_back(v);
        }
      for (int64_t bin = 0; bin < 13; ++bin) {
        double first = ref::asDouble(ref::element(init, bin)), last = ref::asDouble(ref::element(bins, bin));
        CHECK_MESSAGE(formsChain(first, last, updates[size_t(bin)]),
                      "bin " << bin << ": the updates do not chain from " << first << " to " << last);
        if (name == "xchg" || t == f32) continue;  // any order is right; f32 sums round in the order taken
        double want = first;
        for (double v : applied[size_t(bin)])
          want = name == "add" ? want + v : name == "max" ? std::max(want, v) : std::min(want, v);
        CHECK_MESSAGE(last == want, "bin " << bin << ": got " << last << ", want " << want);
      }
    }
}

TEST_CASE("conformance: f16 and bf16 atomics update their 16 bits, on Vulkan through the 32-bit word holding them") {
  for (const std::string& device : conformanceDevices())
    for (auto [fn, t] : {std::pair{"add", f16}, std::pair{"min", f16}, std::pair{"add", bf16}, std::pair{"max", bf16},
                         std::pair{"xchg", bf16}}) {
      std::string name = fn;
      INFO(device, ": atomic_", name, " on ", dtypeName(t), "[4] from 3 programs of 64 elements");
      // 5 slots: the last one's word is half outside the tensor's bytes
      Tensor slots = Tensor::from({5}, {0.5, -1.0, 2.0, 0.0, 3.0}, t), init = slots.contiguous(), olds = poisoned({3, 64}, t);
      KernelBody body = [&](Program& p) {
        Tile i = p.arange(64);
        Tile v = (((i + p.id(0) * 5) % 9 - 4).cast(f32) * 0.25f).cast(t);  // quarters in [-1, 1]: sums stay exact
        Tile old = name == "add" ? p.atomic_add(slots, {i % 5}, v)
                   : name == "max" ? p.atomic_max(slots, {i % 5}, v)
                   : name == "min" ? p.atomic_min(slots, {i % 5}, v)
                                   : p.atomic_xchg(slots, {i % 5}, v);
        p.write(olds, {1, 64}).put(old.expand_dims(0), {p.id(0), 0});
      };
      launch(device, "atomic_half", {3}, body);
      std::vector<std::vector<std::pair<double, double>>> updates(5);
      std::vector<double> want = {0.5, -1.0, 2.0, 0.0, 3.0};
      for (int64_t prog = 0; prog < 3; ++prog)
        for (int64_t i = 0; i < 64; ++i) {
          double v = double((i + prog * 5) % 9 - 4) * 0.25, old = ref::asDouble(ref::element(olds, prog * 64 + i));
          double& w = want[size_t(i % 5)];
          w = name == "add" ? w + v : name == "max" ? std::max(w, v) : name == "min" ? std::min(w, v) : w;
          updates[size_t(i % 5)].push_back({old, name == "add" ? old + v : name == "max" ? std::max(old, v)
                                                   : name == "min" ? std::min(old, v) : v});
        }
      for (size_t slot = 0; slot < 5; ++slot) {
        double first = ref::asDouble(ref::element(init, int64_t(slot))), last = ref::asDouble(ref::element(slots, int64_t(slot)));
        CHECK_MESSAGE(formsChain(first, last, updates[slot]), "slot " << slot << ": the updates do not chain from " << first
                                                                      << " to " << last);
        if (name != "xchg") CHECK_MESSAGE(last == want[slot], "slot " << slot << ": got " << last << ", want " << want[slot]);
      }
    }
}

TEST_CASE("conformance: float atomic max and min order as max and min do: NaN wins, -0 below +0") {
  for (const std::string& device : conformanceDevices())
    for (DType t : {f32, f64}) {
      INFO(device, ": atomic max and min on ", dtypeName(t));
      const std::vector<double> start = {1.0, -0.0, 0.0, 2.0, ref::nan(), -ref::inf()};
      const std::vector<double> values = {ref::nan(), 0.0, -0.0, 3.0, 5.0, 1e-300};
      Tensor maxed = Tensor::from({6}, start, t), mined = Tensor::from({6}, start, t);
      Tensor v = Tensor::from({6}, values, t), olds = poisoned({2, 6}, t);
      launch(device, "atomic_float_order", {1}, [&](Program& p) {
        Tile x = p.read(v, {8}).at({0}), at = p.arange(8);  // 6 and 7: outside
        Tile maxOld = p.atomic_max(maxed, {at}, x), minOld = p.atomic_min(mined, {at}, x);
        p.write(olds, {1, 8}).put(maxOld.expand_dims(0), {0, 0});
        p.write(olds, {1, 8}).put(minOld.expand_dims(0), {1, 0});
      });
      Expect m, n, o;
      for (size_t i = 0; i < 6; ++i) {
        m.want.push_back(roundToFloat(t, maxOf(start[i], values[i])));
        n.want.push_back(roundToFloat(t, minOf(start[i], values[i])));
      }
      for (int k = 0; k < 2; ++k)
        for (double s0 : start) o.want.push_back(s0);
      checkElements(maxed, m);
      checkElements(mined, n);
      checkElements(olds, o);
    }
}

TEST_CASE("conformance: atomic_cas lets exactly one element per slot win: a rank-0 atomic counts programs") {
  for (const std::string& device : conformanceDevices()) {
    INFO(device);
    Tensor slots = Tensor::zeros({5}, i32), olds = poisoned({2, 256}, i32), count = Tensor::full({1}, 1000, i64);
    // Old values of tiles smaller than a workgroup (copies in many threads) and of a scalar.
    Tensor small = Tensor::zeros({8}, i32), smallOlds = poisoned({2, 8}, i32), countOlds = poisoned({2}, i64);
    launch(device, "atomic_cas", {2}, [&](Program& p) {
      Tile i = p.arange(256) + p.id(0) * 256;
      Tile old = p.atomic_cas(slots, {i % 4}, 0, i + 1, i < 500);  // slot 4 is never touched
      p.write(olds, {1, 256}).put(old.expand_dims(0), {p.id(0), 0});
      Tile counted = p.atomic_add(count, {0}, p.id(0) + 1);  // one update per program: 1 + 2
      p.scatter(countOlds, {p.id(0)}, counted);
      p.write(smallOlds, {1, 8}).put(p.atomic_add(small, {p.arange(8)}, 1).expand_dims(0), {p.id(0), 0});
    });
    CHECK(ref::asInt(ref::element(count, 0)) == 1003);
    int64_t o0 = ref::asInt(ref::element(countOlds, 0)), o1 = ref::asInt(ref::element(countOlds, 1));
    CHECK_MESSAGE(formsChain(1000, 1003, {{double(o0), double(o0 + 1)}, {double(o1), double(o1 + 2)}}),
                  "the scalar atomics saw " << o0 << " and " << o1);
    for (int64_t k = 0; k < 8; ++k) {
      CHECK(ref::asInt(ref::element(small, k)) == 2);
      std::multiset<int64_t> seen = {ref::asInt(ref::element(smallOlds, k)), ref::asInt(ref::element(smallOlds, 8 + k))};
      CHECK_MESSAGE((seen == std::multiset<int64_t>{0, 1}), "small[" << k << "]'s two updates did not see 0 and 1");
    }
    CHECK(ref::asInt(ref::element(slots, 4)) == 0);
    for (int64_t s = 0; s < 4; ++s) {
      int64_t winner = ref::asInt(ref::element(slots, s)), wins = 0;
      for (int64_t i = s; i < 512; i += 4) {
        int64_t old = ref::asInt(ref::element(olds, i));
        if (i >= 500) CHECK_MESSAGE(old == 0, "masked element " << i << " got " << old);
        else if (old == 0) wins += winner == i + 1;
        else CHECK_MESSAGE(old == winner, "element " << i << " saw " << old << " but slot " << s << " holds " << winner);
      }
      CHECK_MESSAGE(wins == 1, "slot " << s << " holds " << winner << ", written by " << wins << " winning elements");
    }
  }
}

// ---- Device assertions

using test::errorOf;

TEST_CASE("conformance: check reports its message, line, program and element, and passes quietly when true") {
  for (const std::string& device : conformanceDevices()) {
    INFO(device);
    Tensor x = sample({37, 29}, i32, 211), out = poisoned({37, 29}, i32);
    x.setItem(20 * 29 + 27, 5000);  // the one element past 1000: element (4, 3) of program (1, 3)'s block
    int line = 0;
    auto body = [&](Program& p) {
      Tile block = p.read(x, {16, 8}).at({p.id(0), p.id(1)});
      line = __LINE__ + 1;
      p.check(block < 1001, "x stays below 1001");
      p.check(p.id(0) < 3, "at most 3 row blocks");
      p.write(out, {16, 8}).put(block, {p.id(0), p.id(1)});
    };
    std::string message = errorOf([&] { launch(device, "check", {3, 4}, body); });
    INFO(message);
    CHECK(message.find("test_conformance.cpp:" + std::to_string(line) + ": check: 'x stays below 1001' is false in "
                       "program (1, 3) at element [4, 3]") != std::string::npos);
    x.setItem(20 * 29 + 27, 7);
    message = errorOf([&] { launch(device, "check", {3, 4}, body); });
    CHECK_MESSAGE(message.empty(), "a check failed where every element holds: " << message);
    Expect e;
    for (int64_t i = 0; i < 37 * 29; ++i) e.want.push_back(ref::element(x, i));
    checkElements(out, e);
    message = errorOf([&] { launch(device, "check", {4, 4}, body); });
    CHECK_MESSAGE(message.find("'at most 3 row blocks' is false in program (3, ") != std::string::npos, message);
  }
}

TEST_CASE("conformance: a check inside a fold reports the iteration's element") {
  for (const std::string& device : conformanceDevices()) {
    INFO(device);
    Tensor x = Tensor::from({40}, std::vector<double>(40, 1.0)), sum = poisoned({1}, f32);
    x.setItem(29, -1);
    std::string message = errorOf([&] {
      launch(device, "check_fold", {1}, [&](Program& p) {
        auto X = p.read(x, {8}, 1.0);
        Tile total = p.fold(0, 5, p.zeros({8}), [&](Index k, Tile acc) {
          Tile block = X.at({k});
          p.check(block > 0, "positive inputs");
          return acc + block;
        });
        p.write(sum, {1}).put(total.sum(0, true), {0});
      });
    });
    CHECK_MESSAGE(message.find("'positive inputs' is false in program (0) at element [5]") != std::string::npos, message);
  }
}

TEST_CASE("conformance: loops that carry nothing, and folds and loops with a step") {
  for (const std::string& device : conformanceDevices()) {
    INFO(device);
    Tensor marks = poisoned({41}, i64), x = sample({40}, f64, 221), sums = poisoned({8}, f64), hits = Tensor::zeros({3}, i32);
    launch(device, "loops", {1}, [&](Program& p) {
      p.loop(3, 41, 5, [&](Index k) { p.scatter(marks, {k}, k * 10); });   // 3, 8, ... 38
      p.loop(0, 3, [&](Index k) { p.atomic_add(hits, {k}, k + 1); });      // a loop of atomics
      p.loop(7, 7, [&](Index k) { p.scatter(marks, {k}, -1); });           // runs zero times
      auto X = p.read(x, {8}, 0.5);
      Tile total = p.fold(1, 30, 4, p.zeros({8}, f64), [&](Index k, Tile acc) {  // blocks at 1, 5, ... 29
        p.check(p.scalar(k) < 30, "the step stays below the end");
        return acc + X.at_offset({k});
      });
      p.write(sums, {8}).put(total, {0});
    });
    for (int64_t i = 0; i < 41; ++i) {
      bool marked = i >= 3 && (i - 3) % 5 == 0;
      CHECK_MESSAGE(ref::asInt(ref::element(marks, i)) == (marked ? i * 10 : int64_t(poisonValue(i64))), "marks[" << i << "]");
    }
    for (int64_t k = 0; k < 3; ++k) CHECK(ref::asInt(ref::element(hits, k)) == k + 1);
    Expect e;
    for (int64_t j = 0; j < 8; ++j) {
      double s = 0;
      for (int64_t k = 1; k < 30; k += 4) s += k + j < 40 ? ref::asDouble(ref::element(x, k + j)) : 0.5;
      e.want.push_back(s);
      e.slack.push_back(device == "interp" ? 1e-300 : 16 * ref::unitRoundoff(f64) * 64);
    }
    checkElements(sums, e);
  }
}

// ---- Scans

TEST_CASE("conformance: cumsum, cumprod, cummax and cummin along each axis of odd tiles, NaN inside") {
  struct Scan {
    const char* fn;
    Tile (Tile::*op)(int, Loc) const;
  };
  const Scan scans[] = {{"+", &Tile::cumsum}, {"*", &Tile::cumprod}, {"max", &Tile::cummax}, {"min", &Tile::cummin}};
  for (const std::string& device : conformanceDevices())
    for (DType t : {f32, i32, f64, i64, f16, u32, u64})
      for (const Scan& s : scans)
        for (int axis : {0, 1}) {
          std::string fn = s.fn;
          if (fn == "*" && !isFloat(t)) continue;  // integer products wrap at once: one case is enough below
          INFO(device, ": ", fn, " scan along axis ", axis, " of ", dtypeName(t), "[13, 37]");
          // Small values keep products finite; the edge values (NaN, infinities, extremes) come first.
          Tensor x = fn == "*" ? Tensor::random({13, 37}, 231, t, 0.5, 1.5) : sample({13, 37}, t, 231, edges(t));
          Tensor out = poisoned({13, 37}, t);
          launch(device, "scan", {1}, [&](Program& p) {
            p.write(out, {16, 64}).put((p.read(x, {16, 64}).at({0, 0}).*s.op)(axis, Loc::current()), {0, 0});
          });
          Expect e;
          std::vector<Num> want(13 * 37);
          for (int64_t r = 0; r < 13; ++r)
            for (int64_t c = 0; c < 37; ++c) {
              int64_t i = r * 37 + c, before = axis == 0 ? i - 37 : i - 1;
              bool first = (axis == 0 ? r : c) == 0;
              want[size_t(i)] = first ? ref::element(x, i) : arith(fn, t, want[size_t(before)], ref::element(x, i));
            }
          e.want = want;
          // Float sums and products associate differently on GPUs; the CPU and the interpreter go in order.
          if (isFloat(t) && (fn == "+" || fn == "*") && device != "interp" && device != "cpu") {
            for (int64_t i = 0; i < 13 * 37; ++i) {
              int64_t terms = (axis == 0 ? i / 37 : i % 37) + 1;
              double magnitude = 0;
              for (int64_t k = 0; k < terms; ++k)
                magnitude += std::fabs(ref::asDouble(ref::element(x, axis == 0 ? i - k * 37 : i - k)));
              e.slack.push_back(fn == "+" ? sumSlack(device, t, size_t(terms), magnitude) + 0.0
                                          : 2.0 * double(terms) * ref::unitRoundoff(t) * std::fabs(ref::asDouble(want[size_t(i)])));
            }
          }
          checkElements(out, e);
        }
}

TEST_CASE("conformance: associative_scan with a combine: a segmented sum, a running max with its position, a sum") {
  for (const std::string& device : conformanceDevices())
    for (int axis : {0, 1}) {
      INFO(device, ": along axis ", axis, " of [5, 37]");
      Tensor flags = Tensor::from({5, 37}, Tensor::random({5, 37}, 301, i32, -4, 1).values(), i32);  // 1 in 6 are 1
      Tensor xi = sample({5, 37}, i32, 302), xf = Tensor::random({5, 37}, 303, f32, -4, 4);
      Tensor sums = poisoned({5, 37}, i32), maxima = poisoned({5, 37}, f32), at = poisoned({5, 37}, i32), totals = poisoned({5, 37}, i64);
      launch(device, "associative_scan", {1}, [&](Program& p) {
        Tile f = max(p.read(flags, {5, 37}).at({0, 0}), 0), v = p.read(xi, {5, 37}).at({0, 0});
        Tile segmented = associative_scan({f, v}, axis, [](const std::vector<Tile>& a, const std::vector<Tile>& b) {
          return std::vector<Tile>{a[0] | b[0], where(b[0] != 0, b[1], a[1] + b[1])};
        })[1];
        p.write(sums, {5, 37}).put(segmented, {0, 0});
        std::vector<Tile> running = associative_scan({p.read(xf, {5, 37}).at({0, 0}), p.iota({5, 37}, axis)}, axis,
                                                     [](const std::vector<Tile>& a, const std::vector<Tile>& b) {
          Tile later = b[0] > a[0];
          return std::vector<Tile>{where(later, b[0], a[0]), where(later, b[1], a[1])};
        });
        p.write(maxima, {5, 37}).put(running[0], {0, 0});
        p.write(at, {5, 37}).put(running[1], {0, 0});
        p.write(totals, {5, 37}).put(associative_scan(v.cast(i64), axis, [](const Tile& a, const Tile& b) { return a + b; }), {0, 0});
      });
      Expect s, m, a, t;
      s.want.resize(185), m.want.resize(185), a.want.resize(185), t.want.resize(185);
      for (int64_t line = 0; line < (axis == 0 ? 37 : 5); ++line) {
        int64_t first = axis == 0 ? line : line * 37, stride = axis == 0 ? 37 : 1, n = axis == 0 ? 5 : 37;
        int64_t sum = 0, total = 0, best = 0;
        for (int64_t k = 0; k < n; ++k) {
          int64_t i = first + k * stride, value = ref::asInt(ref::element(xi, i));
          sum = ref::wrap(i32, (k > 0 && ref::asInt(ref::element(flags, i)) <= 0 ? sum : 0) + value);
          total += value;
          if (k > 0 && ref::asDouble(ref::element(xf, i)) > ref::asDouble(ref::element(xf, first + best * stride))) best = k;
          s.want[size_t(i)] = sum;
          t.want[size_t(i)] = total;
          m.want[size_t(i)] = ref::element(xf, first + best * stride);
          a.want[size_t(i)] = best;
        }
      }
      checkElements(sums, s);
      checkElements(maxima, m);
      checkElements(at, a);
      checkElements(totals, t);
    }
}

TEST_CASE("conformance: a cumsum of i32 wraps, and a scan of a tile smaller than a workgroup") {
  for (const std::string& device : conformanceDevices()) {
    INFO(device);
    Tensor x = Tensor::from({5}, {2147483000, 1000, -7, 3, 5}, i32), sums = poisoned({5}, i32), prods = poisoned({5}, i32);
    launch(device, "scan_small", {1}, [&](Program& p) {
      Tile v = p.read(x, {8}).at({0});
      p.write(sums, {8}).put(v.cumsum(0), {0});
      p.write(prods, {8}).put(v.cumprod(0), {0});
    });
    Expect s, m;
    Num sum = ref::element(x, 0), prod = ref::element(x, 0);
    for (int64_t i = 0; i < 5; ++i) {
      if (i > 0) {
        sum = arith("+", i32, sum, ref::element(x, i));
        prod = arith("*", i32, prod, ref::element(x, i));
      }
      s.want.push_back(sum);
      m.want.push_back(prod);
    }
    checkElements(sums, s);
    checkElements(prods, m);
  }
}

// ---- Branches

TEST_CASE("conformance: if_else chooses tiles by a value read from memory: if_then's writes run only where taken") {
  for (const std::string& device : conformanceDevices()) {
    INFO(device);
    Tensor flags = Tensor::from({4}, {1, 0, 3, 0}, i32), x = sample({4, 37}, f32, 271, edges(f32));
    Tensor out = poisoned({4, 37}, f32), sums = poisoned({4}, f32), marks = poisoned({4}, i32);
    launch(device, "branches", {4}, [&](Program& p) {
      Index i = p.id(0);
      Tile flag = p.gather(flags, {i});
      Tile v = p.read(x, {1, 37}).at({i, 0});
      auto [y, s] = p.if_else(flag != 0, [&] { return std::tuple{v * 2, v.sum(1)}; },
                              [&] { return std::tuple{-v, p.zeros({1})}; });
      p.write(out, {1, 37}).put(y, {i, 0});
      p.write(sums, {1}).put(s, {i});
      p.if_then(flag == 3, [&] { p.scatter(marks, {i}, 7); });
    });
    Expect o, m, sm;
    for (int64_t r = 0; r < 4; ++r) {
      bool taken = ref::asInt(ref::element(flags, r)) != 0;
      double sum = 0, magnitude = 0;
      for (int64_t c = 0; c < 37; ++c) {
        double v = ref::asDouble(ref::element(x, r * 37 + c));
        o.want.push_back(roundToFloat(f32, taken ? v * 2 : -v));
        sum += v;
        magnitude += std::fabs(v);
      }
      sm.want.push_back(taken ? roundToFloat(f32, sum) : 0.0);
      sm.slack.push_back(taken ? sumSlack(device, f32, 37, magnitude) : 0.0);
      m.want.push_back(ref::asInt(ref::element(flags, r)) == 3 ? int64_t{7} : int64_t(poisonValue(i32)));
    }
    checkElements(out, o);
    checkElements(marks, m);
    checkElements(sums, sm);  // rows with inf and -inf sum to NaN on every device
  }
}

TEST_CASE("conformance: an if inside a fold on the loop counter, a fold inside an if, scalars through a branch") {
  for (const std::string& device : conformanceDevices()) {
    INFO(device);
    Tensor x = sample({9, 37}, f64, 281), evens = poisoned({1, 37}, f64), firsts = poisoned({2, 37}, f64), picks = poisoned({2}, i64);
    launch(device, "nested_branches", {2}, [&](Program& p) {
      auto X = p.read(x, {1, 37});
      Tile total = p.fold(0, 9, p.zeros({1, 37}, f64), [&](Index k, Tile acc) {
        return p.if_else(k % 2 == 0, [&] { return acc + X.at({k, 0}); }, [&] { return acc; });
      });
      p.if_then(p.id(0) == 0, [&] { p.write(evens, {1, 37}).put(total, {0, 0}); });
      Tile first = p.if_else(p.id(0) == 1, [&] {
        return p.fold(0, 3, p.zeros({1, 37}, f64), [&](Index k, Tile acc) { return acc + X.at({k, 0}); });
      }, [&] { return X.at({0, 0}); });
      p.write(firsts, {1, 37}).put(first, {p.id(0), 0});
      Tile pick = p.if_else(p.id(0) == 1, [&] { return p.scalar(p.id(0) * 10); }, [&] { return p.scalar(5); });
      p.scatter(picks, {p.id(0)}, pick);
    });
    Expect e, f;
    for (int64_t c = 0; c < 37; ++c) {
      double s = 0;
      for (int64_t k = 0; k < 9; k += 2) s += ref::asDouble(ref::element(x, k * 37 + c));
      e.want.push_back(s);
      e.slack.push_back(device == "interp" || device == "cpu" ? 1e-300 : 1e-12);
    }
    for (int64_t c = 0; c < 37; ++c) f.want.push_back(ref::element(x, c));
    for (int64_t c = 0; c < 37; ++c) {
      double s = 0;
      for (int64_t k = 0; k < 3; ++k) s += ref::asDouble(ref::element(x, k * 37 + c));
      f.want.push_back(s);
    }
    f.slack.assign(74, 1e-12);
    checkElements(evens, e);
    checkElements(firsts, f);
    checkElements(picks, Expect{{int64_t{5}, int64_t{10}}});
  }
}

TEST_CASE("conformance: while_loop runs until a value read from memory says stop: Collatz steps, none at 1") {
  const std::vector<double> starts = {27, 1, 6, 97, 2, 871, 7};
  for (const std::string& device : conformanceDevices()) {
    INFO(device);
    Tensor n = Tensor::from({7}, starts, i64), steps = poisoned({7}, i32), peaks = poisoned({7}, i64);
    launch(device, "while_collatz", {7}, [&](Program& p) {
      Tile start = p.gather(n, {p.id(0)});
      auto [last, count, peak] = p.while_loop(
          std::tuple{start, p.zeros({}, i32), start}, [&](const Tile& x, const Tile&, const Tile&) { return x != 1; },
          [&](const Tile& x, const Tile& c, const Tile& m) {
            Tile next = where(x % 2 == 0, x / 2, x * 3 + 1);
            return std::tuple{next, c + 1, max(m, next)};
          });
      p.scatter(steps, {p.id(0)}, where(last == 1, count, -1));
      p.scatter(peaks, {p.id(0)}, peak);
    });
    Expect e, m;
    for (double s : starts) {
      int64_t x = int64_t(s), c = 0, top = x;
      for (; x != 1; ++c) x = x % 2 == 0 ? x / 2 : 3 * x + 1, top = std::max(top, x);
      e.want.push_back(c);
      m.want.push_back(top);
    }
    checkElements(steps, e);
    checkElements(peaks, m);
  }
}

TEST_CASE("conformance: while_loop carries a tile halved until its largest magnitude is below 1, nested with folds") {
  for (const std::string& device : conformanceDevices()) {
    INFO(device);
    Tensor x = sample({5, 37}, f32, 293), out = poisoned({5, 37}, f32), rounds = poisoned({5}, i32);
    launch(device, "while_tile", {5}, [&](Program& p) {
      Tile row = p.read(x, {1, 37}).at({p.id(0), 0}) * (p.scalar(p.id(0)) * 7.0f + 1.0f).cast(f32);
      // The body holds a fold and the loop sits in one: twice halving by 2 is one quarter step.
      Tile twice = p.fold(0, 1, row, [&](Index, Tile r) {
        auto [v, k] = p.while_loop(std::tuple{r, p.zeros({}, i32)},
                                   [&](const Tile& v, const Tile&) { return abs(v).max(1).max(0) >= 1.0f; },
                                   [&](const Tile& v, const Tile& k) {
                                     return std::tuple{p.fold(0, 2, v, [&](Index, Tile w) { return w * 0.5f; }), k + 1};
                                   });
        p.scatter(rounds, {p.id(0)}, k);
        return v;
      });
      p.write(out, {1, 37}).put(twice, {p.id(0), 0});
    });
    Expect e, r;
    for (int64_t row = 0; row < 5; ++row) {
      std::vector<double> v(37);
      double top = 0;
      for (int64_t c = 0; c < 37; ++c) {
        v[size_t(c)] = double(float(ref::asDouble(ref::element(x, row * 37 + c)) * float(row * 7 + 1)));
        top = std::max(top, std::fabs(v[size_t(c)]));
      }
      int64_t k = 0;
      for (; top >= 1; ++k) top *= 0.25;
      for (double d : v) e.want.push_back(d * std::ldexp(1.0, -2 * int(k)));
      r.want.push_back(k);
    }
    checkElements(out, e);
    checkElements(rounds, r);
  }
}

TEST_CASE("conformance: exit_if stops a program where a value read from memory says so: what came before still runs") {
  for (const std::string& device : conformanceDevices()) {
    INFO(device);
    Tensor counts = Tensor::from({5}, {3, 0, 37, 12, 20}, i32), x = sample({5, 37}, f32, 291);
    Tensor out = poisoned({5, 37}, f32), started = poisoned({5}, i32), finished = poisoned({5}, i32);
    launch(device, "exits", {5}, [&](Program& p) {
      Index i = p.id(0);
      Tile count = p.gather(counts, {i});
      p.scatter(started, {i}, 1);
      p.exit_if(count == 0);
      Tile row = p.read(x, {1, 37}).at({i, 0});
      Tile kept = where(p.iota({1, 37}, 1) < count.broadcast_to({1, 37}), row, 0.0);
      p.write(out, {1, 37}).put(kept, {i, 0});
      p.exit_if(count > 15);  // a second exit, inside the first one's then side
      p.scatter(finished, {i}, count);
    });
    Expect o, s, f;
    for (int64_t r = 0; r < 5; ++r) {
      int64_t n = ref::asInt(ref::element(counts, r));
      for (int64_t c = 0; c < 37; ++c)
        o.want.push_back(n == 0 ? Num(ref::nan()) : c < n ? ref::element(x, r * 37 + c) : Num(0.0));
      s.want.push_back(int64_t{1});
      f.want.push_back(n == 0 || n > 15 ? int64_t(poisonValue(i32)) : n);
    }
    checkElements(out, o);
    checkElements(started, s);
    checkElements(finished, f);
  }
}

TEST_CASE("conformance: the README's ragged exit_if: an i64 Index scalar against an i32 length read from memory") {
  for (const std::string& device : conformanceDevices()) {
    INFO(device);
    Tensor lengths = Tensor::from({3}, {0, 100, 256}, i32), out = poisoned({3, 256}, f32);
    launch(device, "ragged", {3, 4}, [&](Program& p) {
      p.exit_if(p.scalar(p.id(1) * 64) >= p.gather(lengths, {p.id(0)}));
      p.write(out, {1, 64}).put(p.zeros({1, 64}) + 1.0, {p.id(0), p.id(1)});
    });
    Expect e;
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t c = 0; c < 256; ++c)  // a block runs where it starts before the length
        e.want.push_back(c / 64 * 64 < ref::asInt(ref::element(lengths, b)) ? Num(1.0) : Num(ref::nan()));
    checkElements(out, e);
  }
}

TEST_CASE("conformance: exit_if inside a fold ends the program at that iteration: later iterations and code do not run") {
  for (const std::string& device : conformanceDevices()) {
    INFO(device);
    Tensor limits = Tensor::from({5}, {3, 0, 40, 36, 12}, i64), x = sample({5, 37}, f32, 295);
    Tensor visited = poisoned({5, 37}, i32), sums = poisoned({5}, f32);
    launch(device, "fold_exit", {5}, [&](Program& p) {
      Index i = p.id(0);
      Tile limit = p.gather(limits, {i});
      auto X = p.read(x, {1, 1});
      Tile sum = p.fold(0, 37, p.zeros({}, f32), [&](Index k, Tile acc) {
        p.scatter(visited, {i, k}, 1);  // before the exit: the exiting iteration marks too
        p.exit_if(p.scalar(k) >= limit);
        return acc + X.at({i, k}).reshape({});
      });
      p.scatter(sums, {i}, sum);
    });
    Expect v, s;
    for (int64_t r = 0; r < 5; ++r) {
      int64_t limit = ref::asInt(ref::element(limits, r));
      double total = 0;
      for (int64_t c = 0; c < 37; ++c) {
        v.want.push_back(c <= limit ? int64_t{1} : int64_t(poisonValue(i32)));
        if (c <= limit) total = double(float(total + ref::asDouble(ref::element(x, r * 37 + c))));
      }
      s.want.push_back(limit >= 37 ? Num(total) : Num(ref::nan()));
    }
    checkElements(visited, v);
    checkElements(sums, s);
  }
}

TEST_CASE("conformance: exit_if inside an if side inside a while ends the program there, with the if's results") {
  for (const std::string& device : conformanceDevices()) {
    INFO(device);
    Tensor stops = Tensor::from({5}, {3, 20, 0, 9, -1}, i64);
    Tensor marks = poisoned({5}, i64), steps = poisoned({5}, i32), lasts = poisoned({5}, i64);
    Tensor condRuns = Tensor::zeros({5}, i32);  // the cond does not run again after the exit
    launch(device, "while_if_exit", {5}, [&](Program& p) {
      Index i = p.id(0);
      Tile stopAt = p.gather(stops, {i});
      auto [x, n, last] = p.while_loop(
          std::tuple{p.zeros({}, i64), p.zeros({}, i32), p.zeros({}, i64)},
          [&](const Tile& x, const Tile&, const Tile&) {
            p.atomic_add(condRuns, {i}, 1);
            return x < 10;
          },
          [&](const Tile& x, const Tile& n, const Tile&) {
            Tile y = p.if_else(x == stopAt, [&] {
              p.scatter(marks, {i}, x);
              p.exit_if(x >= 0);
              return x * 2;
            }, [&] { return x + 100; });
            return std::tuple{x + 1, n + 1, y};
          });
      p.scatter(steps, {i}, n);
      p.scatter(lasts, {i}, last);
    });
    Expect m, n, l, c;
    for (int64_t r = 0; r < 5; ++r) {
      int64_t stop = ref::asInt(ref::element(stops, r));
      bool exits = stop >= 0 && stop < 10;
      c.want.push_back(exits ? stop + 1 : int64_t{11});
      m.want.push_back(exits ? stop : int64_t(poisonValue(i64)));
      n.want.push_back(exits ? int64_t(poisonValue(i32)) : int64_t{10});
      l.want.push_back(exits ? int64_t(poisonValue(i64)) : int64_t{109});
    }
    checkElements(marks, m);
    checkElements(steps, n);
    checkElements(lasts, l);
    checkElements(condRuns, c);
  }
}

TEST_CASE("conformance: p.warps runs a program on 1, 2 or 8 warps: the same sums and maxima") {
  for (const std::string& device : conformanceDevices())
    for (int64_t warps : {1, 2, 8}) {
      INFO(device, ": ", warps, " warps");
      Tensor x = sample({37, 50}, f32, 311), sums = poisoned({37}, f32), maxima = poisoned({50}, f32);
      launch(device, "warps", {1}, [&](Program& p) {
        p.warps(warps);
        Tile v = p.read(x, {64, 64}).at({0, 0});
        p.write(sums, {64}).put(v.sum(1), {0});
        p.write(maxima, {64}).put(v.max(0), {0});
      });
      Expect s, m;
      for (int64_t r = 0; r < 37; ++r) {
        double sum = 0, magnitude = 0;
        for (int64_t c = 0; c < 50; ++c) {
          sum += ref::asDouble(ref::element(x, r * 50 + c));
          magnitude += std::fabs(ref::asDouble(ref::element(x, r * 50 + c)));
        }
        s.want.push_back(roundToFloat(f32, sum));
        s.slack.push_back(sumSlack(device, f32, 50, magnitude));
      }
      for (int64_t c = 0; c < 50; ++c) {
        double best = -ref::inf();
        for (int64_t r = 0; r < 37; ++r) best = std::max(best, ref::asDouble(ref::element(x, r * 50 + c)));
        m.want.push_back(best);
      }
      checkElements(sums, s);
      checkElements(maxima, m);
    }
}

TEST_CASE("conformance: histogram counts an odd tile's elements per bin, values outside the bins and padding left out") {
  for (const std::string& device : conformanceDevices())
    for (DType t : {i32, i8, i64, u8, u64}) {
      INFO(device, ": histogram of ", dtypeName(t), "[13, 37] into 29 bins, and i8 values into 200");
      Tensor x = Tensor::from({13, 37}, Tensor::random({13, 37}, 321, i32, -3, 33).values(), t);
      ref::setElement(x, 0, Num(ref::intRange(t).first));
      ref::setElement(x, 1, Num(ref::intRange(t).second));
      ref::setElement(x, 2, Num(ref::wrap(t, -1)));  // unsigned: the largest value
      Tensor counts = poisoned({29}, i32), whole = poisoned({1}, i32), wide = poisoned({200}, i32);
      Tensor bytes = sample({13, 37}, i8, 322, edges(i8));  // -128 .. 127: more bins than an i8 holds
      launch(device, "histogram", {1}, [&](Program& p) {
        Tile h = histogram(p.read(x, {13, 37}).at({0, 0}), 29);
        p.write(counts, {29}).put(h, {0});
        p.write(wide, {200}).put(histogram(p.read(bytes, {13, 37}).at({0, 0}), 200), {0});
        p.write(whole, {1}).put(histogram(p.read(x, {16, 64}, 28).at({0, 0}), 30).slice(0, 28, 1), {0});  // fill: bin 28
      });
      std::vector<int64_t> want(29, 0);
      for (int64_t i = 0; i < 13 * 37; ++i)
        if (int64_t v = ref::asInt(ref::element(x, i)); v >= 0 && v < 29) ++want[size_t(v)];
      Expect c;
      for (int64_t b : want) c.want.push_back(b);
      checkElements(counts, c);
      checkElements(whole, Expect{{want[28] + 16 * 64 - 13 * 37}});
      Expect w;
      w.want.assign(200, int64_t{0});
      for (int64_t i = 0; i < 13 * 37; ++i)
        if (int64_t v = ref::asInt(ref::element(bytes, i)); v >= 0) w.want[size_t(v)] = ref::asInt(w.want[size_t(v)]) + 1;
      checkElements(wide, w);
    }
}

// ---- Sorts

// Each line along `axis` of a row-major [rows, cols] tensor, ordered as ir's sort: stable,
// NaN after every number ascending and before every number descending.
std::vector<int64_t> sortedOrder(const Tensor& keys, int axis, bool descending) {
  int64_t rows = keys.shape()[0], cols = keys.shape()[1];
  int64_t n = axis == 0 ? rows : cols, lines = axis == 0 ? cols : rows, stride = axis == 0 ? cols : 1;
  auto key = [&](int64_t i) { return ref::asDouble(ref::element(keys, i)); };
  auto before = [&](int64_t a, int64_t b) {
    if (isInteger(keys.dtype())) {
      int64_t x = ref::asInt(ref::element(keys, a)), y = ref::asInt(ref::element(keys, b));
      return descending ? ref::intLess(keys.dtype(), y, x) : ref::intLess(keys.dtype(), x, y);
    }
    double x = key(a), y = key(b);
    if (std::isnan(x) || std::isnan(y)) return descending ? std::isnan(x) && !std::isnan(y) : !std::isnan(x) && std::isnan(y);
    return descending ? x > y : x < y;
  };
  std::vector<int64_t> order(size_t(rows * cols));
  for (int64_t line = 0; line < lines; ++line) {
    int64_t first = axis == 0 ? line : line * cols;
    std::vector<int64_t> at;
    for (int64_t i = 0; i < n; ++i) at.push_back(first + i * stride);
    std::vector<int64_t> sorted = at;
    std::stable_sort(sorted.begin(), sorted.end(), before);
    for (int64_t i = 0; i < n; ++i) order[size_t(at[size_t(i)])] = sorted[size_t(i)];
  }
  return order;
}

// Keys with many ties (small integers), the dtype's edge values first.
Tensor sortKeys(const Shape& shape, DType t, uint64_t seed) {
  Tensor x = Tensor::from(shape, Tensor::random(shape, seed, i32, -6, 6).values(), t);
  std::vector<Num> first = edges(t);
  for (size_t i = 0; i < first.size(); ++i) ref::setElement(x, int64_t(i) * 3, first[i]);
  return x;
}

TEST_CASE("conformance: sort along each axis of odd tiles, ascending and descending, ties stable, NaN and -0 inside") {
  for (const std::string& device : conformanceDevices())
    for (DType t : {f32, i32, f64, i8, f16, u32, u64})
      for (int axis : {0, 1})
        for (bool descending : {false, true}) {
          INFO(device, ": sort along axis ", axis, std::string(descending ? " descending" : " ascending"), " of ",
               dtypeName(t), "[13, 37]");
          Tensor x = sortKeys({13, 37}, t, 241), keys = poisoned({13, 37}, t), origins = poisoned({13, 37}, i32);
          launch(device, "sort", {1}, [&](Program& p) {  // tiles of the tensor's odd shape: padding inside
            auto [sorted, from] = sort(p.read(x, {13, 37}).at({0, 0}), p.iota({13, 37}, axis), axis, descending);
            p.write(keys, {13, 37}).put(sorted, {0, 0});
            p.write(origins, {13, 37}).put(from, {0, 0});
          });
          std::vector<int64_t> order = sortedOrder(x, axis, descending);
          Expect k, o;
          for (int64_t i = 0; i < 13 * 37; ++i) {
            int64_t from = order[size_t(i)];
            k.want.push_back(ref::element(x, from));
            o.want.push_back(axis == 0 ? from / 37 : from % 37);
          }
          checkElements(keys, k);
          checkElements(origins, o);
        }
}

TEST_CASE("conformance: sort of a rank-3 tile along its middle axis with an f64 payload, and of a line shorter than a warp") {
  for (const std::string& device : conformanceDevices()) {
    INFO(device);
    Tensor x = sortKeys({3, 5, 7}, f32, 251), payload = sample({3, 5, 7}, f64, 252);
    Tensor keys = poisoned({3, 5, 7}, f32), moved = poisoned({3, 5, 7}, f64);
    Tensor y = Tensor::from({3}, {2.0, -1.0, 2.0}, i64), ySorted = poisoned({3}, i64), alone = poisoned({3, 5, 7}, f32);
    launch(device, "sort_rank3", {1}, [&](Program& p) {
      Tile v = p.read(x, {3, 5, 7}).at({0, 0, 0});
      auto [s, m] = sort(v, p.read(payload, {3, 5, 7}).at({0, 0, 0}), 1);
      p.write(keys, {3, 5, 7}).put(s, {0, 0, 0});
      p.write(alone, {3, 5, 7}).put(v.sort(1), {0, 0, 0});
      p.write(moved, {3, 5, 7}).put(m, {0, 0, 0});
      p.write(ySorted, {3}).put(p.read(y, {3}).at({0}).sort(0, true), {0});
    });
    Expect k, m;
    for (int64_t a = 0; a < 3; ++a) {
      Tensor slab = Tensor::zeros({5, 7}, f32);
      for (int64_t i = 0; i < 35; ++i) ref::setElement(slab, i, ref::element(x, a * 35 + i));
      std::vector<int64_t> order = sortedOrder(slab, 0, false);
      for (int64_t i = 0; i < 35; ++i) {
        k.want.push_back(ref::element(x, a * 35 + order[size_t(i)]));
        m.want.push_back(ref::element(payload, a * 35 + order[size_t(i)]));
      }
    }
    checkElements(keys, k);
    checkElements(alone, k);
    checkElements(moved, m);
    checkElements(ySorted, Expect{{int64_t{2}, int64_t{2}, int64_t{-1}}});
  }
}

TEST_CASE("conformance: topk gives the k largest along an axis, first of equals first, with their positions") {
  for (const std::string& device : conformanceDevices())
    for (DType t : {f32, i32}) {
      INFO(device, ": topk 5 of ", dtypeName(t), "[13, 37] along axis 1");
      Tensor x = sortKeys({13, 37}, t, 261), values = poisoned({13, 5}, t), positions = poisoned({13, 5}, i32);
      launch(device, "topk", {1}, [&](Program& p) {
        auto [v, i] = topk(p.read(x, {13, 37}).at({0, 0}), 5, 1);
        p.write(values, {13, 5}).put(v, {0, 0});
        p.write(positions, {13, 5}).put(i, {0, 0});
      });
      std::vector<int64_t> order = sortedOrder(x, 1, true);
      Expect v, i;
      for (int64_t r = 0; r < 13; ++r)
        for (int64_t c = 0; c < 5; ++c) {
          v.want.push_back(ref::element(x, order[size_t(r * 37 + c)]));
          i.want.push_back(order[size_t(r * 37 + c)] % 37);
        }
      checkElements(values, v);
      checkElements(positions, i);
    }
}

TEST_CASE("conformance: slice and cat move elements exactly, along each axis of odd tiles") {
  for (const std::string& device : conformanceDevices())
    for (DType t : {f32, i64, f16, boolean})
      for (int axis : {0, 1}) {
        INFO(device, ": ", dtypeName(t), " slices and cat along axis ", axis);
        Tensor a = sample({5, 7}, t, 241, edges(t)), b = sample({5, 7}, t, 242);
        // Along axis 0: rows 1..3 of a, then b, then row 4 of a: 3 + 5 + 1 rows; along 1 likewise.
        Shape joined = axis == 0 ? Shape{9, 7} : Shape{5, 11};
        Tensor out = poisoned(joined, t);
        launch(device, "slice_cat", {1}, [&](Program& p) {
          Tile ta = p.read(a, {5, 7}).at({0, 0}), tb = p.read(b, {5, 7}).at({0, 0});
          int64_t n = axis == 0 ? 5 : 7;
          Tile joinedTile = cat({ta.slice(axis, 1, 3), tb, ta.slice(axis, n - 1, 1)}, axis);
          p.write(out, joined).put(joinedTile, {0, 0});
        });
        Expect e;
        int64_t n = axis == 0 ? 5 : 7;
        for (int64_t r = 0; r < joined[0]; ++r)
          for (int64_t c = 0; c < joined[1]; ++c) {
            int64_t along = axis == 0 ? r : c, other = axis == 0 ? c : r;
            auto at = [&](const Tensor& x, int64_t i) { return ref::element(x, axis == 0 ? i * 7 + other : other * 7 + i); };
            e.want.push_back(along < 3 ? at(a, along + 1) : along < 3 + n ? at(b, along - 3) : at(a, n - 1));
          }
        checkElements(out, e);
      }
}

// ---- Reads and writes

// Copies `in` into `out` block by block on a rank-1 grid: program b decodes its
// block coordinates with / and %. Only the first `limit` blocks are copied.
void copyBlocks(const std::string& device, const Tensor& in, const Tensor& out, const Shape& block, int64_t limit) {
  Shape counts;
  for (size_t d = 0; d < block.size(); ++d) counts.push_back(cdiv(in.shape()[d], block[d]));
  launch(device, "copy", {limit}, [&](Program& p) {
    std::vector<Index> at;
    Index rest = p.id(0);
    for (size_t d = counts.size(); d-- > 0;) {
      at.insert(at.begin(), rest % counts[d]);
      rest = rest / counts[d];
    }
    p.write(out, block).put(p.read(in, block).at(at), at);
  });
}

int64_t blockCount(const Shape& shape, const Shape& block) {
  int64_t n = 1;
  for (size_t d = 0; d < shape.size(); ++d) n *= cdiv(shape[d], block[d]);
  return n;
}

// Whether element idx lies in one of the first `limit` blocks in row-major block order.
bool inFirstBlocks(const Shape& shape, const Shape& block, const Shape& idx, int64_t limit) {
  int64_t b = 0;
  for (size_t d = 0; d < shape.size(); ++d) b = b * cdiv(shape[d], block[d]) + idx[d] / block[d];
  return b < limit;
}

TEST_CASE("conformance: block reads and writes of rank 1 to 4, partial edge blocks, strided views") {
  struct Case {
    std::string name;
    Tensor in, out;  // out is poisoned before each run
    Shape block;
    int64_t limit = -1;  // blocks to copy; -1: all
  };
  std::vector<Case> cases = {
      {"rank 1 [37] in [16] blocks", sample({37}, f32, 131), poisoned({37}, f32), {16}},
      {"rank 3 [5,7,3] in [2,4,2]", sample({5, 7, 3}, f32, 132), poisoned({5, 7, 3}, f32), {2, 4, 2}},
      {"rank 4 [3,5,2,7] in [2,2,2,4]", sample({3, 5, 2, 7}, i32, 133), poisoned({3, 5, 2, 7}, i32), {2, 2, 2, 4}},
      {"the first 7 of 12 blocks only", sample({37, 29}, f32, 134), poisoned({37, 29}, f32), {16, 8}, 7},
      {"transposed input view", Tensor::random({29, 37}, 135).transpose(), poisoned({37, 29}, f32), {16, 8}},
      {"permuted rank-3 input view",
       Tensor::random({3, 7, 5}, 136, i64, -1e15, 1e15).permute({2, 0, 1}),
       poisoned({5, 3, 7}, i64),
       {2, 2, 4}},
      {"transposed output view", sample({37, 29}, f16, 137), poisoned({29, 37}, f16).transpose(), {16, 8}},
      {"bool into i8", sample({37, 29}, boolean, 138), poisoned({37, 29}, i8), {16, 8}},
  };
  std::vector<DType> copied = kNumericTypes;
  copied.insert(copied.end(), kFloat8Types.begin(), kFloat8Types.end());
  for (DType t : copied)
    cases.push_back({"rank 2 [37,29] in [16,8] of " + std::string(dtypeName(t)),
                     sample({37, 29}, t, 139, edges(t)),
                     poisoned({37, 29}, t),
                     {16, 8}});
  for (const std::string& device : conformanceDevices())
    for (Case& c : cases) {
      INFO(device, ": copy ", c.name, ", ", dtypeName(c.in.dtype()), ref::shapeText(c.in.shape()));
      int64_t limit = c.limit < 0 ? blockCount(c.in.shape(), c.block) : c.limit;
      for (int64_t i = 0; i < c.out.numel(); ++i) c.out.setItem(i, poisonValue(c.out.dtype()));
      std::vector<Num> poison = ref::elements(c.out);
      copyBlocks(device, c.in, c.out, c.block, limit);
      Expect e;
      for (int64_t i = 0; i < c.in.numel(); ++i)
        e.want.push_back(inFirstBlocks(c.in.shape(), c.block, unflatten(c.in.shape(), i), limit)
                             ? ref::element(c.in, i)
                             : poison[static_cast<size_t>(i)]);
      checkElements(c.out, e);
    }
}

TEST_CASE("conformance: partial edge blocks read the fill value") {
  for (const std::string& device : conformanceDevices())
    for (auto [t, fill] :
         {std::pair{f32, 9.0}, std::pair{f16, -ref::inf()}, std::pair{i32, -7.0}, std::pair{f64, ref::nan()},
          std::pair{u64, 1e19}, std::pair{u32, 4e9}, std::pair{f8e4m3, -448.0}, std::pair{f8e5m2, ref::inf()}}) {
      INFO(device, ": ", dtypeName(t), "[37, 29] read in [16, 8] blocks with fill ", fill);
      Tensor x = sample({37, 29}, t, 141), out = poisoned({48, 32}, t);
      launch(device, "fill", {3, 4}, [&](Program& p) {
        p.write(out, {16, 8}).put(p.read(x, {16, 8}, fill).at({p.id(0), p.id(1)}), {p.id(0), p.id(1)});
      });
      Expect e;
      for (int64_t r = 0; r < 48; ++r)
        for (int64_t c = 0; c < 32; ++c)
          e.want.push_back(r < 37 && c < 29 ? ref::element(x, r * 29 + c) : number(t, fill));
      checkElements(out, e);
    }
}

const std::vector<std::pair<int64_t, int64_t>> kOffsets = {{0, 0},   {-3, -2},  {33, 25}, {-8, -8},
                                                           {37, 29}, {40, -20}, {5, 3},   {-1, 28}};

TEST_CASE("conformance: at_offset reads before, across and past the tensor's edges") {
  for (const std::string& device : conformanceDevices())
    for (auto [t, fill] : {std::pair{f32, -5.5}, std::pair{i32, -7.0}, std::pair{bf16, ref::inf()}})
      for (auto [r0, c0] : kOffsets) {
        INFO(device, ": ", dtypeName(t), "[37, 29] at_offset(", r0, ", ", c0, ") of an [8, 8] block, fill ", fill);
        Tensor x = sample({37, 29}, t, 151), out = poisoned({8, 8}, t);
        launch(device, "at_offset", {1}, [&](Program& p) {
          p.write(out, {8, 8}).put(p.read(x, {8, 8}, fill).at_offset({p.id(0) + r0, Index(c0)}), {0, 0});
        });
        Expect e;
        for (int64_t r = r0; r < r0 + 8; ++r)
          for (int64_t c = c0; c < c0 + 8; ++c)
            e.want.push_back(r >= 0 && r < 37 && c >= 0 && c < 29 ? ref::element(x, r * 29 + c) : number(t, fill));
        checkElements(out, e);
      }
}

TEST_CASE("conformance: put_at_offset writes only the part inside the tensor") {
  for (const std::string& device : conformanceDevices())
    for (auto [r0, c0] : kOffsets) {
      INFO(device, ": put_at_offset(", r0, ", ", c0, ") of an [8, 8] tile into f32[37, 29]");
      Tensor out = poisoned({37, 29}, f32);
      launch(device, "put_at_offset", {1}, [&](Program& p) {
        Tile t = p.iota({8, 8}, 0) * 8 + p.iota({8, 8}, 1) + 1;
        p.write(out, {8, 8}).put_at_offset(t, {Index(r0), p.id(0) + c0});
      });
      Expect e;
      for (int64_t r = 0; r < 37; ++r)
        for (int64_t c = 0; c < 29; ++c) {
          bool inside = r >= r0 && r < r0 + 8 && c >= c0 && c < c0 + 8;
          e.want.push_back(inside ? static_cast<double>((r - r0) * 8 + (c - c0) + 1) : ref::nan());
        }
      checkElements(out, e);
    }
}

std::vector<std::string> sortedLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

// What a kernel's print ops write to stdout on `device`, program by program.
std::string printedBy(const std::string& device, const Tensor& out) {
  std::ostringstream captured;
  std::streambuf* previous = std::cout.rdbuf(captured.rdbuf());
  launch(device, "print", {2}, [&](Program& p) {
    Tile t = p.arange(3) + 1 + p.id(0) * 10;
    p.print("conformance print", t);
    p.print("halves", t.cast(f16) / 2);
    p.write(out, {3}).put(t, {p.id(0)});
  });
  std::cout.rdbuf(previous);
  return captured.str();
}

TEST_CASE("conformance: print writes the interpreter's lines and the kernel still writes its output") {
  Tensor out = poisoned({6}, i32);
  std::string want = printedBy("interp", out);
  CHECK(std::count(want.begin(), want.end(), '\n') == 4);
  for (const std::string& device : conformanceDevices()) {
    CAPTURE(device);
    out = poisoned({6}, i32);
    std::string got = printedBy(device, out);
    if (device == "cpu") CHECK(sortedLines(got) == sortedLines(want));  // programs run on several threads
    else CHECK(got == want);
    checkElements(out, Expect{.want = {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{11}, int64_t{12}, int64_t{13}}});
  }
}

TEST_CASE("conformance: f32 exp stays within its ulp bound over a dense sweep of its whole range") {
  // 2^18 points from -105 (subnormal results) to 90 (overflow), plus the range's edges.
  const int64_t n = int64_t{1} << 18;
  std::vector<double> xs(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) xs[static_cast<size_t>(i)] = -105.0 + 195.0 * static_cast<double>(i) / n;
  Tensor x = Tensor::from({n}, xs);
  for (const std::string& device : conformanceDevices()) {
    CAPTURE(device);
    Tensor y = poisoned({n}, f32);
    launch(device, "exp_sweep", {n / 1024}, [&](Program& p) {
      Index i = p.id(0);
      p.write(y, {1024}).put(p.read(x, {1024}).at({i}).exp(), {i});
    });
    int64_t worst = 0;
    for (int64_t i = 0; i < n; ++i) {
      double want = roundToFloat(f32, std::exp(x.item(i)));
      worst = std::max(worst, ref::ulpDistance(f32, y.item(i), want));
    }
    CHECK(worst <= ulpBound("exp", device, f32));
  }
}

}  // namespace
