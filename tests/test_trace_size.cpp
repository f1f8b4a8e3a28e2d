// The warning for a trace too large to compile quickly: a C++ loop in the kernel
// lambda, unrolled at trace time where p.fold would keep a loop.
#include <doctest/doctest.h>

#include <source_location>
#include <string>

#include "dsl/tilejit.hpp"
#include "dsl/tracer.hpp"
#include "samples/kernels.hpp"
#include "support.hpp"

using namespace tj;

namespace {

// Sums n 16-element blocks with a C++ loop: n loads and n adds, all traced from one
// line, whose file:line it returns.
std::string traceUnrolled(int64_t n) {
  Tensor x = Tensor::zeros({n * 16}), y = Tensor::zeros({16});
  int line = 0;
  trace({1}, [&](Program& p) {
    auto X = p.read(x, {16});
    Tile acc = p.zeros({16});
    line = __LINE__ + 1;
    for (int64_t j = 0; j < n; ++j) acc = acc + X.at({j});
    p.write(y, {16}).put(acc, {0});
  }, "unrolled");
  return std::string(std::source_location::current().file_name()) + ":" + std::to_string(line);
}

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("trace size: an unrolled C++ loop warns once, naming its line and how often it repeated") {
  const int64_t n = Tracer::kLargeTrace / 2;  // a handful of ops per iteration: well past the threshold
  test::CaptureLog log;
  std::string line = traceUnrolled(n);
  std::string text = log.text();
  CHECK(count(text, "p.fold") == 1);
  CHECK(text.find("[warning]") != std::string::npos);
  CHECK(text.find("kernel 'unrolled'") != std::string::npos);
  CHECK(text.find(line + " was traced " + std::to_string(n) + " times") != std::string::npos);
  traceUnrolled(n);  // run() retraces at every call: the line was named already
  CHECK(count(log.text(), "p.fold") == 1);
}

TEST_CASE("trace size: a short unrolled loop and the samples do not warn") {
  test::CaptureLog log;
  traceUnrolled(16);
  for (const std::string& name : samples::sampleNames()) {
    CAPTURE(name);
    samples::traceSample(name);
    CHECK(log.text().find("p.fold") == std::string::npos);
  }
}
