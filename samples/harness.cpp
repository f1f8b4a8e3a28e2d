#include "samples/harness.hpp"

#include <spdlog/fmt/fmt.h>

#include "devices/cpu/thread_pool.hpp"
#include "devices/registry.hpp"
#include "samples/kernels.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

namespace tj::samples {

void Report::time(const std::function<std::string()>& f) {
  std::vector<double> runs;
  for (int i = 0; i < std::max(repeat, 1) + warmup; ++i) {
    std::optional<LaunchWatch> launches;  // of the first run: where its last kernel came from
    if (i == 0) launches.emplace();
    auto start = std::chrono::steady_clock::now();
    device = f();
    runs.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    if (launches && !launches->reports().empty() && device != "interp") {  // nothing compiles on the interpreter
      cache = jit::cacheSourceName(launches->last().cache);
      compileMs = launches->last().compileMs;
    }
  }
  firstMs = ms = runs[0];
  runs.erase(runs.begin(), runs.begin() + 1 + warmup);
  if (runs.empty()) return;
  std::nth_element(runs.begin(), runs.begin() + static_cast<std::ptrdiff_t>(runs.size() / 2), runs.end());
  ms = runs[runs.size() / 2];
}

void Report::compare(const Tensor& got, const std::vector<double>& ref, double tol) {
  double maxErr = 0, maxRef = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double g = got.item(static_cast<int64_t>(i));
    double err = std::fabs(g - ref[i]);
    maxErr = std::isnan(err) ? std::numeric_limits<double>::infinity() : std::max(maxErr, err);
    maxRef = std::max(maxRef, std::fabs(ref[i]));
  }
  double relErr = maxErr / std::max(maxRef, std::numeric_limits<double>::min());
  // Of several outputs, the one furthest past its tolerance decides.
  if (!checked || relErr - tol > maxRelErr - tolerance) maxRelErr = relErr, tolerance = tol;
  checked = true;
}

SampleCli::SampleCli(std::string sample, const std::string& description)
    : app(description, sample), sample_(std::move(sample)) {
  app.add_option("--device", device_,
                 "cpu, interp, vulkan[:N], cuda[:N] or hip[:N] (default: $TILEJIT_DEVICE or the best device)");
  app.add_flag("--check", check_, "compare with a float64 reference; exit 1 on mismatch");
  app.add_option("--repeat", repeat_, "run N times, besides --warmup's runs; ms is the median of the runs after the first")
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup_, "run N more times after the first, untimed, before the timed runs")
      ->check(CLI::NonNegativeNumber);
}

void SampleCli::addBlockOptions(const std::vector<BlockSize>& sizes, int64_t& stages, int64_t& warps, bool& specialize) {
  for (const BlockSize& s : sizes) {
    blockOptions_.push_back("--block-" + s.name);
    app.add_option(blockOptions_.back(), *s.size, s.what + " (default: tuned)")->check(CLI::PositiveNumber);
  }
  app.add_option("--stages", stages, "GPUs: the loop's stages of loads in flight, p.stages (default: the device's)")
      ->check(CLI::Range(int64_t{1}, int64_t{4}));
  app.add_option("--warps", warps, "GPUs: warps per program, p.warps (default: the device's)")
      ->check(CLI::IsMember({1, 2, 4, 8, 16, 32}));
  blockOptions_.insert(blockOptions_.end(), {"--stages", "--warps"});
  addBlockFlag("--warp-specialize", specialize,
               "Hopper: a producer warpgroup issues the loop's TMA copies, p.warp_specialize (default: off)");
}

void SampleCli::addBlockFlag(const std::string& name, bool& flag, const std::string& what) {
  app.add_flag(name, flag, what);
  blockOptions_.push_back(name);
}

bool SampleCli::blocksGiven() const {
  return std::ranges::any_of(blockOptions_, [&](const std::string& name) { return app.count(name) > 0; });
}

void SampleCli::keepOnDevice(std::initializer_list<const Tensor*> tensors) const {
  Device& device = selectDevice(device_);
  std::string why;
  const DeviceKind* kind = findDeviceKind(device.name());
  if (!kind || kind->name != "cuda" || !device.copyOf(1, why)) return;  // a launch says why it runs elsewhere
  for (const Tensor* t : tensors)
    if (t->defined()) t->on(device.name());
}

int SampleCli::main(int argc, char** argv, const std::function<void(Report&)>& body) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  Report r;
  r.sample = sample_;
  r.repeat = repeat_;
  r.warmup = warmup_;
  try {
    body(r);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: error: %s\n", sample_.c_str(), e.what());
    return 1;
  }
  double rate = r.ms > 0 ? r.work / (r.ms * 1e6) : 0;
  std::printf("RESULT sample=%s device=%s dtype=%s shape=%s ms=%.3f first_ms=%.3f %s=%.3f max_rel_err=%.3g%s%s%s\n",
              r.sample.c_str(), r.device.c_str(), r.dtype.c_str(), r.shape.c_str(), r.ms, r.firstMs, r.rateName.c_str(), rate,
              r.maxRelErr, r.checked ? (r.maxRelErr <= r.tolerance ? " check=pass" : " check=FAIL") : "",
              r.cache.empty() ? "" : fmt::format(" cache={} compile_ms={:.1f}", r.cache, r.compileMs).c_str(),
              r.tune.empty() ? "" : (" tune=" + r.tune).c_str());
  if (r.checked && !(r.maxRelErr <= r.tolerance)) {
    std::fprintf(stderr, "%s: max_rel_err %.3g exceeds the tolerance %.3g\n", sample_.c_str(), r.maxRelErr,
                 r.tolerance);
    return 1;
  }
  return 0;
}

std::vector<Tensor> timeDerivedBackward(const Report& handwritten, const TracedKernel& forward,
                                        const std::vector<int64_t>& grid, const std::vector<Tensor>& inputs,
                                        const std::vector<grad::OutputGradient>& outputs, const RunOptions& options) {
  Report derived;
  derived.repeat = handwritten.repeat;
  derived.warmup = handwritten.warmup;
  std::vector<Tensor> gradients;
  derived.time([&] {
    LaunchWatch launches;
    gradients = grad::backward(forward, grid, inputs, outputs, options);
    const LaunchReport* fallback = launches.firstFallback();
    return fallback ? fallback->device : launches.last().device;
  });
  const std::string& name = handwritten.sample;
  if (derived.device != handwritten.device)
    throw Error(fmt::format("{} --backward: the derived backward ran on {}, not {}", name, derived.device, handwritten.device));
  std::printf("FIGURE %s_backward_handwritten_ms %.3f\nFIGURE %s_backward_derived_ms %.3f\n"
              "RATIO %s_backward_derived_vs_handwritten %.3f\n",
              name.c_str(), handwritten.ms, name.c_str(), derived.ms, name.c_str(), derived.ms / handwritten.ms);
  return gradients;
}

DType parseDTypeOption(const std::string& name) {
  auto d = parseDType(name);
  if (!d) throw Error("--dtype: unknown dtype '" + name + "'");
  return *d;
}

Tensor poisoned(const Shape& shape, DType dtype) {
  return Tensor::full(shape, isFloat(dtype) ? std::numeric_limits<double>::quiet_NaN() : -1.0, dtype);
}

double tolerance(DType dtype, int64_t reductionLength) {
  double eps = dtype == DType::f16 ? 1e-3 : dtype == DType::bf16 ? 8e-3 : dtype == DType::f64 ? 1e-15 : 1.2e-7;
  return eps * 8 * std::sqrt(static_cast<double>(std::max<int64_t>(reductionLength, 1)));
}

std::pair<Tensor, double> quantizePerTensor(const Tensor& x, DType dtype) {
  std::vector<double> v = x.values();
  double amax = 0;
  for (double e : v) amax = std::max(amax, std::fabs(e));
  const double largest = maxFinite(dtype);
  const double scale = amax > 0 ? static_cast<double>(static_cast<float>(amax / largest)) : 1.0;
  for (double& e : v) e = std::clamp(e / scale, -largest, largest);
  return {Tensor::from(x.shape(), v, dtype), scale};
}

std::vector<double> elementScales(const Tensor& scale, const Shape& shape, int64_t blockRows) {
  const std::vector<double> s = scale.values();
  const size_t rank = shape.size();
  const int64_t groups = rank == 3 ? shape[0] : 1, rows = shape[rank - 2], cols = shape[rank - 1];
  const int64_t scaleCols = scale.dim(scale.rank() - 1), perGroup = cdiv(rows, blockRows) * scaleCols;
  std::vector<double> out;
  out.reserve(static_cast<size_t>(groups * rows * cols));
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        out.push_back(s.size() == 1 ? s[0] : s[static_cast<size_t>(g * perGroup + (r / blockRows) * scaleCols + c / kScaleBlock)]);
  return out;
}

std::vector<double> dequantize(const Tensor& q, const Tensor& scale, int64_t blockRows) {
  std::vector<double> v = q.values(), s = elementScales(scale, q.shape(), blockRows);
  for (size_t i = 0; i < v.size(); ++i) v[i] *= s[i];
  return v;
}

double memcpyGBps(double bytes) {
  const auto n = static_cast<int64_t>(bytes / 2);
  std::vector<char> src(static_cast<size_t>(n), 1), dst(static_cast<size_t>(n), 0);
  const int64_t chunks = 64, chunk = (n + chunks - 1) / chunks;
  auto copy = [&] {
    cpu::ThreadPool::global().parallelFor(chunks, [&](int64_t begin, int64_t end) {
      int64_t from = begin * chunk, to = std::min(n, end * chunk);
      if (from < to) std::memcpy(dst.data() + from, src.data() + from, static_cast<size_t>(to - from));
    });
  };
  copy();
  std::vector<double> runs;
  for (double total = 0; total < 0.3 || runs.size() < 3; total += runs.back()) {
    auto start = std::chrono::steady_clock::now();
    copy();
    runs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(runs.begin(), runs.begin() + static_cast<std::ptrdiff_t>(runs.size() / 2), runs.end());
  return bytes / runs[runs.size() / 2] / 1e9;
}

}  // namespace tj::samples
