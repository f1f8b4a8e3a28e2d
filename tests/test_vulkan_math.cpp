// Accurate math on Vulkan (lower/math/accurate_math.cpp): dense sweeps of each unary
// transcendental over its whole range, every binade of both signs, denormals and the
// special values included, against the correctly rounded result. f32 runs through the
// public DSL; f64 through hand-built modules calling accurateUnary directly. Each case
// reports its worst ulp distance; without Vulkan they say why and pass.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "devices/vulkan/vulkan_device.hpp"
#include "devices/vulkan/vulkan_runtime.hpp"
#include "dsl/tilejit.hpp"
#include "lower/spirv/spirv_math.hpp"
#include "tests/support.hpp"

using namespace tj;

namespace {

constexpr int64_t kTile = 1024;

// A function under test: its reference in long double (rounded once to the dtype),
// the interval a uniform half of the sweep covers, and its ulp bounds on Vulkan.
struct Function {
  const char* name;
  Tile (*apply)(const Tile&);
  long double (*ref)(long double);
  double lo, hi;
  int ulps32, ulps64;  // ulps64 < 0: accurateUnary has no f64 version
  bool native32 = false;  // the f32 version computes in f32 (no Float64 capability)
};

const Function kFunctions[] = {
    {"exp", [](const Tile& t) { return t.exp(); }, [](long double v) { return std::exp(v); }, -110, 95, 1, 2, true},
    {"exp2", [](const Tile& t) { return t.exp2(); }, [](long double v) { return std::exp2(v); }, -155, 130, 1, 2, true},
    {"log", [](const Tile& t) { return t.log(); }, [](long double v) { return std::log(v); }, 0, 4, 1, 1},
    {"log2", [](const Tile& t) { return t.log2(); }, [](long double v) { return std::log2(v); }, 0, 4, 1, 2},
    {"sin", [](const Tile& t) { return t.sin(); }, [](long double v) { return std::sin(v); }, -100, 100, 1, 2},
    {"cos", [](const Tile& t) { return t.cos(); }, [](long double v) { return std::cos(v); }, -100, 100, 1, 2},
    {"tanh", [](const Tile& t) { return t.tanh(); }, [](long double v) { return std::tanh(v); }, -10, 10, 1, 2, true},
    // As the interpreter computes it: 0 once exp(-x) overflows a double.
    {"sigmoid", [](const Tile& t) { return t.sigmoid(); },
     [](long double v) { return std::isinf(std::exp(-double(v))) ? 0 : 1 / (1 + std::exp(-v)); }, -110, 30, 1, 2,
     true},
    {"erf", [](const Tile& t) { return t.erf(); }, [](long double v) { return std::erf(v); }, -5, 5, 1, 2},
    {"rsqrt", [](const Tile& t) { return t.rsqrt(); }, [](long double v) { return 1 / std::sqrt(v); }, 0, 4, 1, 1},
    {"sqrt", [](const Tile& t) { return t.sqrt(); }, [](long double v) { return std::sqrt(v); }, 0, 4, 0, -1},
};

template <class Float>
constexpr Float kInf = std::numeric_limits<Float>::infinity();

// v rounded to Float, ±inf beyond its range.
template <class Float>
Float narrow(long double v) {
  return std::abs(v) > std::numeric_limits<Float>::max() ? std::copysign(kInf<Float>, Float(v > 0 ? 1 : -1))
                                                         : static_cast<Float>(v);
}

// n inputs: specials and thresholds, then half the rest spread over all bit patterns
// (log-uniform over every binade of both signs), half uniform over [lo, hi].
template <class Float, class Bits>
std::vector<double> sweep(const Function& f, size_t n) {
  using L = std::numeric_limits<Float>;
  std::vector<double> xs = {0.0, -0.0, kInf<Float>, -kInf<Float>, L::quiet_NaN(), L::denorm_min(), L::min(),
                            L::max(), 1, 0.5, 2, 1e-40, 1e-300, 1e30, 1e300, 88.72283172607421875,
                            88.7228393554687, 709.782712893384, 709.79, -87.33654, -103.27892, -103.97208,
                            -745.13321910194, -746, 128, 127.99999, -126, -149, -150, 1024, -1022, -1074, -1075,
                            0.84375, 1.25, 2.857142857, 6, 3.92, 20, 22, 1.5707963267948966, 3.141592653589793,
                            4.71238898038469, 6.283185307179586, 0x1.921fb54442d18p+20, 1e22,
                            6381956970095103.0 * 0x1p797, 0x1p-1022, 0x1p-1030};
  for (size_t i = xs.size(), end = xs.size(); i < end * 2; ++i) xs.push_back(-xs[i - end]);
  size_t spread = (n - xs.size()) / 2;
  uint64_t step = (uint64_t{1} << (sizeof(Bits) * 8 - 1)) / spread * 2;
  for (uint64_t i = 0; i < spread; ++i) {
    auto bits = static_cast<Bits>(i * step + (i * 2654435761u) % step);
    xs.push_back(double(std::bit_cast<Float>(bits)));
  }
  while (xs.size() < n) xs.push_back(f.lo + (f.hi - f.lo) * double(xs.size()) / double(n));
  for (double& x : xs) x = double(narrow<Float>(x));  // out-of-range thresholds become ±inf
  return xs;
}

// Ulps of Float between got and the correctly rounded want; NaN only matches NaN.
template <class Float, class Bits>
int64_t ulps(double got, long double want) {
  Float w = narrow<Float>(want), g = static_cast<Float>(got);
  if (std::isnan(w) || std::isnan(g)) return std::isnan(w) && std::isnan(g) ? 0 : std::numeric_limits<int>::max();
  auto ordered = [](Float v) {
    auto b = static_cast<int64_t>(std::bit_cast<Bits>(std::abs(v)));
    return std::signbit(v) ? -b : b;
  };
  return std::abs(ordered(g) - ordered(w));
}

template <class Float, class Bits>
void report(const Function& f, const std::vector<double>& xs, const std::vector<double>& ys, int bound) {
  int64_t worst = 0;
  double worstX = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    int64_t d = ulps<Float, Bits>(ys[i], f.ref(xs[i]));
    if (d > worst) worst = d, worstX = xs[i];
  }
  std::ostringstream line;
  line << f.name << (sizeof(Float) == 4 ? " f32" : " f64") << ": worst " << worst << " ulps (bound " << bound << ")";
  if (worst) line << " at x = " << std::setprecision(17) << worstX;
  MESSAGE(line.str());
  CHECK(worst <= bound);
}

bool declaresFloat64(const std::vector<uint32_t>& words) {
  constexpr uint32_t kCapability = 17, kFloat64 = 10;
  for (size_t i = 5; i + 1 < words.size() && words[i] >> 16; i += words[i] >> 16)
    if ((words[i] & 0xffff) == kCapability && words[i + 1] == kFloat64) return true;
  return false;
}

// f64 through a 64-wide module: out[i] = fn(in[i]).
std::vector<uint32_t> f64Module(const char* fn) {
  using namespace spirv;
  Module m;
  m.capability(Capability::Shader);
  Id f64 = m.typeFloat(64), u32 = m.typeInt(32, false), uvec3 = m.typeVector(u32, 3), voidT = m.typeVoid();
  auto in = m.storageBuffer(f64, 8, 0, 0), out = m.storageBuffer(f64, 8, 0, 1);
  Id main = m.beginFunction(voidT, m.typeFunction(voidT));
  m.entryPoint(main, "main", 64);
  m.label(m.newLabel());
  Id i = m.op(Op::CompositeExtract, u32, {m.load(uvec3, m.builtInInput(BuiltIn::GlobalInvocationId, uvec3)), 0});
  Id x = m.load(f64, m.accessChain(in.elementPointer, in.variable, {m.constU32(0), i}));
  Id y = accurateUnary(m, fn, 64, x);
  REQUIRE(y != 0);
  m.store(m.accessChain(out.elementPointer, out.variable, {m.constU32(0), i}), y);
  m.returnVoid();
  m.endFunction();
  return m.words();
}

}  // namespace

TEST_CASE("vulkan math: f32 unary functions stay within their ulp bounds over dense sweeps of their whole range") {
  if (!test::vulkanAvailable()) return;
  const int64_t n = int64_t{1} << 18;
  for (const Function& f : kFunctions) {
    CAPTURE(std::string(f.name));
    std::vector<double> xs = sweep<float, uint32_t>(f, size_t(n));
    Tensor x = Tensor::from({n}, xs), y = Tensor::full({n}, -7777.0);
    LaunchWatch launches;
    std::string ran = run(
        {n / kTile},
        [&](Program& p) {
          Index i = p.id(0);
          p.write(y, {kTile}).put(f.apply(p.read(x, {kTile}).at({i})), {i});
        },
        RunOptions{.name = std::string("math_sweep_") + f.name, .device = "vulkan"});
    REQUIRE(ran == "vulkan");
    const std::vector<uint32_t>& spirv = *launches.last().spirv;
    test::checkSpirvValid(spirv);
    CHECK(declaresFloat64(spirv) == !f.native32);
    report<float, uint32_t>(f, xs, y.values(), f.ulps32);
  }
}

TEST_CASE("vulkan math: f64 versions stay within their ulp bounds over dense sweeps of their whole range") {
  if (!test::vulkanAvailable()) return;
  const size_t n = size_t{1} << 17;
  vk::Gpu gpu(0);
  for (const Function& f : kFunctions) {
    CAPTURE(std::string(f.name));
    if (f.ulps64 < 0) {
      spirv::Module m;
      CHECK(spirv::accurateUnary(m, f.name, 64, 1) == 0);
      continue;
    }
    std::vector<double> xs = sweep<double, uint64_t>(f, n), ys(n, -7777.0);
    std::vector<uint32_t> words = f64Module(f.name);
    test::checkSpirvValid(words);
    vk::Buffer in(gpu, n * 8), out(gpu, n * 8);
    in.upload(std::span<const double>(xs));
    vk::Pipeline pipeline(gpu, words, 2, 0);
    vk::Buffer* buffers[] = {&in, &out};
    gpu.dispatch(pipeline, buffers, {}, uint32_t(n / 64));
    out.download(std::span<double>(ys));
    report<double, uint64_t>(f, xs, ys, f.ulps64);
  }
}
