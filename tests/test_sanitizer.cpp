// The sanitizer (RunOptions::sanitize, TILEJIT_SANITIZE=1): each seeded bug of a legal kernel
// is reported with the kernel, tensor, element, programs and lines; correct kernels that use
// atomics, masks, checks and fills on purpose are not.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "dsl/tilejit.hpp"
#include "tests/support.hpp"

using namespace tj;

namespace {

const RunOptions kSanitize{.name = "seeded", .sanitize = true};

// The sanitizer's Error text for a run, "" when it ran clean.
const auto findings = test::errorOf;

std::string here(int line) { return std::string(__FILE__) + ":" + std::to_string(line); }

}  // namespace

TEST_CASE("sanitizer: two programs storing one block is a write-write race naming both programs and lines") {
  Tensor x = Tensor::random({256}, 1), y = Tensor::zeros({64});
  int line = 0;
  std::string report = findings([&] {
    run({4}, [&](Program& p) {
      auto X = p.read(x, {64});
      line = __LINE__ + 1;
      p.write(y, {64}).put(X.at({p.id(0)}), {0});  // every program writes block 0
    }, kSanitize);
  });
  CHECK(report.find("kernel 'seeded'") != std::string::npos);
  CHECK(report.find("write-write race on tensor 1 element [0]: program (0) writes it at " + here(line) +
                    " and program (1) writes it at " + here(line)) != std::string::npos);
  CHECK(report.find("(192 times)") != std::string::npos);  // each element, by programs 1, 2 and 3

  SUBCASE("programs that all store the same values do not race") {
    CHECK(findings([&] { run({4}, [&](Program& p) { p.write(y, {64}).put(p.read(x, {64}, 0.0).at({1}), {0}); }, kSanitize); }) ==
          "");
  }
}

TEST_CASE("sanitizer: a program reading the block another program writes is a read-write race") {
  Tensor y = Tensor::random({256}, 2);
  int readLine = 0, writeLine = 0;
  std::string report = findings([&] {
    run({3}, [&](Program& p) {
      Index i = p.id(0);
      readLine = __LINE__ + 1;
      Tile next = p.read(y, {64}).at({i + 1});
      writeLine = __LINE__ + 1;
      p.write(y, {64}).put(next * 2.0, {i});  // y[i] = 2 y[i+1], in place
    }, kSanitize);
  });
  // Program 0 reads block 1, which program 1 then writes.
  CHECK(report.find("read-write race on tensor 0 element [64]: program (0) reads it at " + here(readLine) +
                    " and program (1) writes it at " + here(writeLine)) != std::string::npos);
}

TEST_CASE("sanitizer: dot operands whose blocks cover different K ranges are reported where the product is stored") {
  Tensor a = Tensor::random({64, 100}, 3), b = Tensor::random({90, 64}, 4), c = Tensor::zeros({64, 64});
  int line = 0;
  std::string report = findings([&] {
    run({1}, [&](Program& p) {
      Tile prod = dot(p.read(a, {64, 128}).at({0, 0}), p.read(b, {128, 64}).at({0, 0}));
      line = __LINE__ + 1;
      p.write(c, {64, 64}).put(prod, {0, 0});
    }, kSanitize);
  });
  CHECK(report.find("mismatched dot operands: program (0) stores to tensor 2 element [0, 0] at " + here(line)) !=
        std::string::npos);
  CHECK(report.find("(4096 times)") != std::string::npos);

  SUBCASE("operands of equal K with edges filled on both sides are fine") {
    Tensor b100 = Tensor::random({100, 64}, 5);
    CHECK(findings([&] {
            run({1}, [&](Program& p) {
              Tile acc = p.fold(0, 2, p.zeros({64, 64}), [&](Index k, Tile acc) {
                return acc + dot(p.read(a, {64, 64}).at({0, k}), p.read(b100, {64, 64}).at({k, 0}));
              });
              p.write(c, {64, 64}).put(acc, {0, 0});
            }, kSanitize);
          }) == "");
  }
}

TEST_CASE("sanitizer: Tensor::empty memory read before anything wrote it is reported per element") {
  Tensor x = Tensor::random({100}, 6), partial = Tensor::empty({100}), out = Tensor::zeros({100});
  // A first launch writes the first 64 elements only.
  run({1}, [&](Program& p) { p.write(partial, {64}).put(p.read(x, {64}).at({0}), {0}); }, kSanitize);
  int line = 0;
  std::string report = findings([&] {
    run({1}, [&](Program& p) {
      Tile v = p.read(partial, {128}, 0.0).at({0}) + 1.0;
      line = __LINE__ + 1;
      p.write(out, {128}).put(v, {0});
    }, kSanitize);
  });
  CHECK(report.find("unwritten memory stored: program (0) stores to tensor 1 element [64] at " + here(line)) !=
        std::string::npos);
  CHECK(report.find("(36 times)") != std::string::npos);

  SUBCASE("a reduction over it is a use") {
    Tensor total = Tensor::zeros({1});
    CHECK(findings([&] {
            run({1}, [&](Program& p) {
              p.write(total, {1}).put(p.read(partial, {128}, 0.0).at({0}).sum(0, true), {0});
            }, kSanitize);
          }).find("unwritten memory used: program (0) computes reduce_sum") != std::string::npos);
  }
  SUBCASE("elementwise ops pass it on, fma as a * b + c: only where it is stored is it reported") {
    for (bool fused : {false, true}) {
      CAPTURE(fused);
      std::string masked = findings([&] {
        run({1}, [&](Program& p) {
          Tile v = p.read(partial, {128}, 0.0).at({0});
          Tile y = fused ? fma(v, 2.0, 1.0) : v * 2.0 + 1.0;
          p.write(out, {128}).put(where(p.arange(128) < 64, y, 0.0), {0});
        }, kSanitize);
      });
      CHECK(masked == "");
    }
  }
  SUBCASE("host writes and launches on other devices count as writes") {
    Tensor filled = Tensor::empty({100});
    run({1}, [&](Program& p) { p.write(filled, {128}).put(p.zeros({128}), {0}); }, {.device = "interp"});
    Tensor hostWritten = Tensor::empty({100});
    float* host = static_cast<float*>(hostWritten.data());
    std::fill(host, host + 100, 1.0f);
    for (const Tensor* t : {&filled, &hostWritten})
      CHECK(findings([&] {
              run({1}, [&](Program& p) { p.write(out, {128}).put(p.read(*t, {128}, 0.0).at({0}), {0}); }, kSanitize);
            }) == "");
  }
  SUBCASE("a contiguous copy keeps which elements were written") {
    Tensor copied = Tensor::random({100}, 8).contiguous(), half = partial.contiguous();
    CHECK(findings([&] {
            run({1}, [&](Program& p) { p.write(out, {128}).put(p.read(copied, {128}, 0.0).at({0}), {0}); }, kSanitize);
          }) == "");
    CHECK(findings([&] {
            run({1}, [&](Program& p) { p.write(out, {128}).put(p.read(half, {128}, 0.0).at({0}), {0}); }, kSanitize);
          }).find("(36 times)") != std::string::npos);
  }
}

TEST_CASE("sanitizer: a default fill stored inside a tensor is reported, a fill the user gave is not") {
  Tensor x = Tensor::random({100}, 7), y = Tensor::zeros({128});
  int line = 0;
  std::string report = findings([&] {
    run({1}, [&](Program& p) {
      auto X = p.read(x, {128});
      line = __LINE__ + 1;
      p.write(y, {128}).put(X.at({0}), {0});
    }, kSanitize);
  });
  CHECK(report.find("a default fill stored: program (0) stores to tensor 1 element [100] at " + here(line)) !=
        std::string::npos);
  CHECK(report.find("(28 times)") != std::string::npos);
  CHECK(findings([&] {
          run({1}, [&](Program& p) { p.write(y, {128}).put(p.read(x, {128}, 0.0).at({0}), {0}); }, kSanitize);
        }) == "");
  // Gathers too: masked-off coordinates read the fill (y is tensor 0: put's view comes first).
  CHECK(findings([&] {
          run({1}, [&](Program& p) {
            Tile cols = p.arange(128);
            p.write(y, {128}).put(p.gather(x, {cols}, cols < 50), {0});
          }, kSanitize);
        }).find("a default fill stored: program (0) stores to tensor 0 element [50]") != std::string::npos);
}

TEST_CASE("sanitizer: every distinct finding is listed, not only the first") {
  Tensor x = Tensor::random({90}, 8), y = Tensor::zeros({64});
  std::string report = findings([&] {
    run({2}, [&](Program& p) {
      p.write(y, {64}).put(p.read(x, {128}).at({0}).slice(0, 36, 64) + p.scalar(p.id(0)).cast(f32), {0});
    }, kSanitize);
  });
  CHECK(report.find("2 findings") != std::string::npos);
  CHECK(report.find("write-write race") != std::string::npos);
  CHECK(report.find("a default fill stored") != std::string::npos);
}

TEST_CASE("sanitizer: atomics, masked stores, checks and programs ordered through atomics run clean") {
  Tensor values = Tensor::random({1000}, 9, i32, 0, 15), counts = Tensor::zeros({16}, i32);
  CHECK(findings([&] {
          run({cdiv(1000, 128)}, [&](Program& p) {
            Tile v = p.read(values, {128}, -1).at({p.id(0)});
            p.atomic_add(counts, {v}, 1, v >= 0);
            p.check(v < 16, "values below 16");
          }, kSanitize);
        }) == "");
  CHECK(counts.values() == Tensor::from({16}, [&] {
          std::vector<double> want(16, 0);
          for (double v : values.values()) want[static_cast<size_t>(v)] += 1;
          return want;
        }(), i32).values());

  // The last program to arrive (by an atomic counter) sums what the others stored: the
  // counter orders their stores before its reads.
  Tensor x = Tensor::random({512}, 10), partial = Tensor::zeros({4}), arrived = Tensor::zeros({1}, i32),
         total = Tensor::zeros({1});
  CHECK(findings([&] {
          run({4}, [&](Program& p) {
            Index i = p.id(0);
            p.write(partial, {1}).put(p.read(x, {128}).at({i}).sum(0, true), {i});
            Tile before = p.atomic_add(arrived, {0}, 1);
            p.if_then(before == 3, [&] { p.write(total, {1}).put(p.read(partial, {4}).at({0}).sum(0, true), {0}); });
          }, kSanitize);
        }) == "");
  double want = 0;
  for (double v : x.values()) want += v;
  CHECK(total.item(0) == doctest::Approx(want).epsilon(1e-5));

  SUBCASE("without the counter the same reads race") {  // partial is tensor 0 here
    partial = Tensor::zeros({4});  // stores of the bytes already there would race with nothing
    CHECK(findings([&] {
            run({4}, [&](Program& p) {
              Index i = p.id(0);
              p.write(partial, {1}).put(p.read(x, {128}).at({i}).sum(0, true), {i});
              p.if_then(p.scalar(i) == 3,
                        [&] { p.write(total, {1}).put(p.read(partial, {4}).at({0}).sum(0, true), {0}); });
            }, kSanitize);
          }).find("read-write race on tensor 0 element [0]: program (0) writes it") != std::string::npos);
  }
}

TEST_CASE("sanitizer: TILEJIT_SANITIZE=1 sends every launch to the sanitizing interpreter") {
  test::ScopedEnv sanitize("TILEJIT_SANITIZE", "1");
  Tensor x = Tensor::random({256}, 11), y = Tensor::zeros({64});
  std::string ranOn;
  std::string report = findings([&] {
    ranOn = run({4}, [&](Program& p) { p.write(y, {64}).put(p.read(x, {64}).at({p.id(0)}), {0}); },
                {.device = "cpu"});
  });
  CHECK(report.find("write-write race") != std::string::npos);
  auto k = kernel("copy", [](Program& p, const Tensor& from, const Tensor& to) {
    p.write(to, {64}).put(p.read(from, {64}).at({p.id(0)}), {p.id(0)});
  });
  Tensor z = Tensor::zeros({256});
  CHECK(findings([&] { k({4}, x, z); }) == "");
  CHECK(z.values() == x.values());
}
