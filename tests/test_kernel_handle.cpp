// Kernel handles (dsl/kernel.hpp): explicit tensor and scalar parameters, one trace
// per signature, runtime scalars, positional binding, captures and errors. Results
// are compared with float64 references on every device, into poisoned outputs.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "devices/cpu/cpu_device.hpp"
#include "dsl/tilejit.hpp"
#include "jit/kernel_cache.hpp"
#include "tests/support.hpp"

using namespace tj;

namespace {

const std::vector<std::string> kDevices = {"interp", "cpu"};
const double kNaN = std::numeric_limits<double>::quiet_NaN();

float toF32(double v) { return static_cast<float>(v); }

Tensor poisoned(int64_t n, DType t = f32) { return Tensor::full({n}, kNaN, t); }

// out = alpha * x + y, each op rounded to f32.
auto axpyKernel() {
  return kernel("axpy", [](Program& p, const Tensor& x, const Tensor& y, const Tensor& out, Tile alpha) {
    Index i = p.id(0);
    auto X = p.read(x, {128});
    auto Y = p.read(y, {128});
    p.write(out, {128}).put(alpha * X.at({i}) + Y.at({i}), {i});
  });
}

void checkAxpy(const Tensor& x, const Tensor& y, const Tensor& out, double alpha) {
  std::vector<double> xs = x.values(), ys = y.values(), got = out.values();
  REQUIRE(got.size() == xs.size());
  for (size_t i = 0; i < got.size(); ++i) {
    double want = toF32(toF32(toF32(alpha) * xs[i]) + ys[i]);
    CHECK_MESSAGE(got[i] == want, "element " << i << ": got " << got[i] << ", want " << want);
  }
}

// The message of the tj::Error that f throws.
std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "<nothing thrown>";
}

// Whether `message` is `what` reported at this file's `line`.
bool reportedAt(const std::string& message, int line, const std::string& what) {
  return message.find("test_kernel_handle.cpp:" + std::to_string(line) + ": " + what) != std::string::npos;
}

}  // namespace

TEST_CASE("kernel handle: axpy matches a float64 reference on every device at odd sizes") {
  auto axpy = axpyKernel();
  CHECK(axpy.name() == "axpy");
  for (const std::string& device : kDevices) {
    for (int64_t n : {1, 127, 129, 1001}) {
      CAPTURE(device);
      CAPTURE(n);
      Tensor x = Tensor::random({n}, 1, f32), y = Tensor::random({n}, 2, f32), out = poisoned(n);
      CHECK(axpy.launch({cdiv(n, 128)}, x, y, out, 2.5, {.device = device}) == device);
      checkAxpy(x, y, out, 2.5);
    }
  }
  CHECK(axpy.traceCount() == 8);  // a signature per device and size
}

TEST_CASE("kernel handle: new scalar values neither retrace nor recompile") {
  auto axpy = axpyKernel();
  const int64_t n = 300;
  Tensor x = Tensor::random({n}, 3, f32), y = Tensor::random({n}, 4, f32);
  jit::CacheStats before = jit::cacheStats();
  LaunchWatch launches;
  for (double alpha : {0.5, -1.25, 3.0e7}) {
    CAPTURE(alpha);
    Tensor out = poisoned(n);
    CHECK(axpy.launch({cdiv(n, 128)}, x, y, out, alpha, {.device = "cpu"}) == "cpu");
    checkAxpy(x, y, out, alpha);
  }
  jit::CacheStats after = jit::cacheStats();
  CHECK(axpy.traceCount() == 1);
  // The first launch compiles (or finds the kernel on disk, or in memory from the
  // previous test); the others hit the in-memory cache.
  CHECK(after.misses + after.diskHits - before.misses - before.diskHits <= 1);
  CHECK(after.memoryHits - before.memoryHits >= 2);
  CHECK(launches.last().cache == jit::CacheSource::memory);
}

TEST_CASE("kernel handle: a new dtype, shape, grid rank or device retraces, and the same signature does not") {
  // The body bakes x.dim(0) in as a constant: shapes must be part of the signature.
  auto fill = kernel("fill", [](Program& p, const Tensor& x, const Tensor& out) {
    Tile v = p.read(x, {64}).at({p.id(0)}) + double(x.dim(0));
    p.write(out, {64}).put(v, {p.id(0)});
  });
  auto check = [&](int64_t n, DType t, const std::vector<int64_t>& grid, const std::string& device) {
    Tensor x = Tensor::random({n}, 5, t), out = poisoned(n, t);
    fill.launch(grid, x, out, {.device = device});
    for (int64_t i = 0; i < n; ++i) REQUIRE(out.item(i) == roundToFloat(t, x.item(i) + static_cast<double>(n)));
  };
  check(100, f32, {2}, "cpu");
  check(100, f32, {2}, "cpu");
  CHECK(fill.traceCount() == 1);
  check(70, f32, {2}, "cpu");
  CHECK(fill.traceCount() == 2);
  check(70, f64, {2}, "cpu");
  CHECK(fill.traceCount() == 3);
  check(70, f64, {2, 1}, "cpu");
  CHECK(fill.traceCount() == 4);
  check(70, f64, {2, 1}, "interp");
  CHECK(fill.traceCount() == 5);
  check(100, f32, {2}, "cpu");
  CHECK(fill.traceCount() == 5);
}

TEST_CASE("kernel handle: tensors bind by position, also when one tensor is passed twice") {
  auto addInto = kernel("add_into", [](Program& p, const Tensor& x, Tensor y) {
    Index i = p.id(0);
    p.write(y, {32}).put(p.read(x, {32}).at({i}) + p.read(y, {32}).at({i}), {i});
  });
  for (const std::string& device : kDevices) {
    CAPTURE(device);
    const int64_t n = 45;
    Tensor t = Tensor::random({n}, 6, f32);
    std::vector<double> before = t.values();
    int64_t traces = addInto.traceCount();
    addInto.launch({cdiv(n, 32)}, t, t, {.device = device});  // traced with both parameters the same view
    for (int64_t i = 0; i < n; ++i) REQUIRE(t.item(i) == 2 * before[static_cast<size_t>(i)]);
    Tensor a = Tensor::random({n}, 7, f32), b = Tensor::random({n}, 8, f32);
    std::vector<double> as = a.values(), bs = b.values();
    addInto.launch({cdiv(n, 32)}, a, b, {.device = device});  // the same trace, distinct tensors
    for (int64_t i = 0; i < n; ++i) {
      REQUIRE(a.item(i) == as[static_cast<size_t>(i)]);
      REQUIRE(b.item(i) == toF32(as[static_cast<size_t>(i)] + bs[static_cast<size_t>(i)]));
    }
    CHECK(addInto.traceCount() == traces + 1);
  }
}

TEST_CASE("kernel handle: writes through both parameters of a tensor passed twice all land, on every device") {
  auto twoBlocks = kernel("two_blocks", [](Program& p, Tensor a, Tensor b) {
    p.write(a, {32}).put(p.full({32}, 1.0), {0});
    p.write(b, {32}).put(p.full({32}, 2.0), {1});
  });
  std::vector<std::string> devices = kDevices;
  if (test::vulkanAvailable()) devices.push_back("vulkan");
  for (const std::string& device : devices) {
    CAPTURE(device);
    Tensor t = Tensor::zeros({64});
    CHECK(twoBlocks.launch({1}, t, t, {.device = device}) == device);
    for (int64_t i = 0; i < 64; ++i) REQUIRE(t.item(i) == (i < 32 ? 1 : 2));
  }
}

TEST_CASE("kernel handle: a captured tensor is kept from the first trace and passed at every launch") {
  const int64_t n = 77;
  Tensor bias = Tensor::random({n}, 9, f32);
  auto addBias = kernel("add_bias", [&](Program& p, const Tensor& x, const Tensor& out) {
    Index i = p.id(0);
    p.write(out, {16}).put(p.read(x, {16}).at({i}) + p.read(bias, {16}).at({i}), {i});
  });
  for (const std::string& device : kDevices) {
    CAPTURE(device);
    for (double shift : {0.0, 100.0}) {
      bias.setItem(3, shift);  // the handle holds the storage, so a new value shows
      Tensor x = Tensor::random({n}, 10, f32), out = poisoned(n);
      addBias.launch({cdiv(n, 16)}, x, out, {.device = device});
      for (int64_t i = 0; i < n; ++i) REQUIRE(out.item(i) == toF32(x.item(i) + bias.item(i)));
    }
  }
  CHECK(addBias.traceCount() == 2);
}

TEST_CASE("kernel handle: an Index scalar as a loop bound and an offset") {
  // out[j] = sum over k < count of x[start + k + j], accumulated in f32.
  auto windowSum = kernel("window_sum", [](Program& p, const Tensor& x, const Tensor& out, Index count, Index start) {
    auto X = p.read(x, {16});
    Tile sum = p.fold(0, count, p.zeros({16}), [&](Index k, Tile acc) { return acc + X.at_offset({start + k}); });
    p.write(out, {16}).put(sum, {0});
  });
  const int64_t n = 50;
  Tensor x = Tensor::random({n}, 11, f32);
  for (const std::string& device : kDevices) {
    for (auto [count, start] : std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {1, 3}, {7, 30}, {20, 0}}) {
      CAPTURE(device);
      CAPTURE(count);
      CAPTURE(start);
      Tensor out = poisoned(16);
      windowSum.launch({1}, x, out, count, start, {.device = device});
      for (int64_t j = 0; j < 16; ++j) {
        float want = 0;
        for (int64_t k = 0; k < count; ++k) {
          int64_t e = start + k + j;
          want = toF32(double(want) + (e < n ? x.item(e) : 0.0));  // reads past the end read 0
        }
        REQUIRE(out.item(j) == want);
      }
    }
  }
  CHECK(windowSum.traceCount() == 2);
}

TEST_CASE("kernel handle: Scalar<dtype> parameters round or wrap like the parameter's dtype") {
  auto widen = kernel("widen", [](Program& p, const Tensor& floats, const Tensor& ints, Scalar<f64> a,
                                  Scalar<f16> b, Scalar<bf16> c, Tile d, Scalar<i32> e, Index f) {
    auto put = [&](const Tensor& t, const Tile& v, int64_t at) {
      p.write(t, {1}).put(v.cast(t.dtype()).reshape({1}), {Index(at)});
    };
    int64_t slot = 0;
    for (const Tile& v : {Tile(a), Tile(b), Tile(c), d}) put(floats, v, slot++);
    put(ints, e, 0);
    put(ints, p.scalar(f), 1);
  });
  const int64_t wide = (int64_t{1} << 31) + 5, huge = std::numeric_limits<int64_t>::min() + 1;
  for (const std::string& device : kDevices) {
    CAPTURE(device);
    Tensor floats = poisoned(4, f64), ints = Tensor::zeros({2}, i64);
    widen.launch({1}, floats, ints, 0.1, 0.1, 0.1, 0.1, wide, huge, {.device = device});
    CHECK(floats.values() == std::vector<double>{0.1, 0.0999755859375, 0.10009765625, toF32(0.1)});
    CHECK(ints.values() == std::vector<double>{-2147483643.0, static_cast<double>(huge)});
  }
}

TEST_CASE("kernel handle: launches from several threads share one trace") {
  auto axpy = axpyKernel();
  const int64_t n = 200;
  Tensor x = Tensor::random({n}, 12, f32), y = Tensor::random({n}, 13, f32);
  std::vector<Tensor> outs;
  for (int t = 0; t < 4; ++t) outs.push_back(poisoned(n));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < 10; ++r) axpy({cdiv(n, 128)}, x, y, outs[static_cast<size_t>(t)], double(t));
    });
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < 4; ++t) checkAxpy(x, y, outs[static_cast<size_t>(t)], double(t));
  CHECK(axpy.traceCount() >= 1);
  CHECK(axpy.traceCount() <= 4);  // threads missing at once may each trace; one trace is kept
  const int64_t traces = axpy.traceCount();
  axpy({cdiv(n, 128)}, x, y, outs[0], 1.0);
  CHECK(axpy.traceCount() == traces);
}

TEST_CASE("kernel handle: mistakes are Errors at the caller's line") {
  auto axpy = axpyKernel();
  Tensor x = Tensor::zeros({8}), y = Tensor::zeros({8}), out = Tensor::zeros({8});
  int line = 0;
  std::string e = errorOf([&] { line = __LINE__; axpy({1, 1, 1, 1}, x, y, out, 1.0); });
  CHECK_MESSAGE(reportedAt(e, line, "kernel 'axpy': the grid has rank 4; use 1 to 3 axes"), e);
  e = errorOf([&] { line = __LINE__; axpy({}, x, y, out, 1.0); });
  CHECK_MESSAGE(reportedAt(e, line, "kernel 'axpy': the grid has rank 0; use 1 to 3 axes"), e);
  e = errorOf([&] { line = __LINE__; axpy({-1}, x, y, out, 1.0); });
  CHECK_MESSAGE(reportedAt(e, line, "kernel 'axpy': grid axis 0 has negative size -1"), e);
  e = errorOf([&] { line = __LINE__; axpy.launch({1}, x, y, out, 1.0, {.device = "nosuch"}); });
  CHECK_MESSAGE(reportedAt(e, line, "kernel 'axpy': device: unknown device 'nosuch'"), e);
  CHECK(axpy.traceCount() == 0);

  // A mistake in the body names the body's line, at each launch that traces.
  auto mixed = kernel("mixed", [&](Program& p, const Tensor& a, Tile s) {
    line = __LINE__; (void)(p.read(a, {8}).at({0}) * s);
  });
  Tensor ints = Tensor::zeros({8}, i32);
  e = errorOf([&] { mixed({1}, ints, 1.0); });
  CHECK_MESSAGE(reportedAt(e, line, "*: dtype mismatch"), e);

  // A view of a parameter made in the body would be fixed at the first call.
  auto transposed = kernel("transposed", [&](Program& p, const Tensor& a, const Tensor& o) {
    line = __LINE__; p.write(o, {4, 4}).put(p.read(a.transpose(), {4, 4}).at({0, 0}), {0, 0});
  });
  Tensor square = Tensor::zeros({4, 4});
  e = errorOf([&] { transposed({1}, square, Tensor::zeros({4, 4})); });
  CHECK_MESSAGE(reportedAt(e, line, "read: this tensor shares storage with tensor parameter t0 of kernel 'transposed'"), e);
  // A copy of a parameter is that parameter.
  auto copied = kernel("copied", [](Program& p, Tensor a, const Tensor& o) {
    Tensor same = a;
    p.write(o, {8}).put(p.read(same, {8}).at({0}), {0});
  });
  Tensor ones = Tensor::full({8}, 1.0), dest = poisoned(8);
  copied({1}, ones, dest);
  CHECK(dest.values() == std::vector<double>(8, 1.0));
}
