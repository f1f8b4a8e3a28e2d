// ir::splitFoldsAtMasks: the parts of a split fold, and the split kernel against the whole one
// on the interpreter (same ops in the same order: equal bit for bit) at sizes where the masked
// iterations are none, some or all of the loop.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstring>

#include "dsl/tilejit.hpp"
#include "ir/passes.hpp"
#include "samples/harness.hpp"
#include "samples/kernels.hpp"

namespace tj::splittest {

namespace {

// The kernel body's top-level folds, in order.
std::vector<const ir::Op*> folds(const ir::Kernel& k) {
  std::vector<const ir::Op*> out;
  for (const ir::Op& op : k.body.ops)
    if (op.code == ir::OpCode::fold) out.push_back(&op);
  return out;
}

// Ops of `code` directly in a fold's body.
int64_t opsInBody(const ir::Op& fold, ir::OpCode code) {
  return std::ranges::count_if(fold.regions[0].ops, [&](const ir::Op& op) { return op.code == code; });
}

// Runs the traced kernel, and `split` in its place, on the interpreter over `grid`; `out` is
// poisoned before each run. Returns both results.
std::pair<std::vector<double>, std::vector<double>> runBoth(const TracedKernel& whole, const ir::Kernel& split,
                                                            const std::vector<int64_t>& grid, Tensor out) {
  auto run = [&](const TracedKernel& traced) {
    for (int64_t i = 0; i < out.numel(); ++i) out.setItem(i, std::nan(""));
    launch(traced, grid, {.device = "interp"});
    return out.values();
  };
  std::vector<double> a = run(whole);
  std::vector<double> b = run(bindKernel(split, whole.tensors));
  return {a, b};
}

bool sameBits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace

TEST_CASE("split folds: attention's key loop runs its full blocks without the mask, equal to the whole loop") {
  for (bool causal : {false, true})
    for (int64_t seq : {1, 15, 16, 17, 40, 48}) {
      CAPTURE(causal);
      CAPTURE(seq);
      Tensor q = Tensor::random({1, 2, seq, 8}, 1), k = Tensor::random({1, 2, seq, 8}, 2), v = Tensor::random({1, 2, seq, 8}, 3);
      Tensor out = Tensor::zeros({1, 2, seq, 8});
      samples::KernelDefinition def = samples::attentionKernel(q, k, v, out, causal, {.m = 16, .n = 16});
      TracedKernel whole = trace(def.grid, def.body, "attention");
      ir::Kernel split = ir::splitFoldsAtMasks(*whole.kernel);
      ir::verify(split);
      std::vector<const ir::Op*> parts = folds(split);
      REQUIRE(parts.size() == 2);
      for (const ir::Op* f : parts) CHECK(f->get(ir::attr::split) == 1);
      // The first part, every key valid: no compare, no select; the second keeps them.
      CHECK(opsInBody(*parts[0], ir::OpCode::select) == 0);
      CHECK(opsInBody(*parts[0], ir::OpCode::cmp) == 0);
      CHECK(opsInBody(*parts[1], ir::OpCode::select) == 1);
      CHECK(opsInBody(*parts[1], ir::OpCode::cmp) == (causal ? 2 : 1));
      // Split again (a kernel already lowered once): unchanged.
      CHECK(ir::semanticHash(ir::splitFoldsAtMasks(split)) == ir::semanticHash(split));
      auto [a, b] = runBoth(whole, split, def.grid, out);
      CHECK(sameBits(a, b));
      CHECK(std::ranges::none_of(a, [](double x) { return std::isnan(x); }));
    }
}

// A fold over row blocks whose mask (rows >= this program's columns) holds from some block on:
// the first part keeps the mask, the second runs without it.
TEST_CASE("split folds: a mask that holds from a bound on leaves the loop's tail unmasked") {
  constexpr int64_t kBlock = 8;
  for (int64_t rows : {5, 8, 21, 64}) {
    CAPTURE(rows);
    Tensor x = Tensor::random({rows, kBlock}, 4), out = Tensor::zeros({3 * kBlock, kBlock});
    TracedKernel whole = trace({3}, [&](Program& p) {
      auto X = p.read(x, {kBlock, kBlock});
      Tile sum = p.fold(0, X.blocks(0), p.zeros({kBlock, kBlock}), [&](Index n, Tile acc) {
        Tile r = p.iota({kBlock, kBlock}, 0) + n * kBlock, c = p.iota({kBlock, kBlock}, 1) + p.id(0) * kBlock;
        return acc + where(r >= c, X.at({n, 0}), 0.0);
      });
      p.write(out, {kBlock, kBlock}).put(sum, {p.id(0), 0});
    });
    ir::Kernel split = ir::splitFoldsAtMasks(*whole.kernel);
    std::vector<const ir::Op*> parts = folds(split);
    REQUIRE(parts.size() == 2);
    CHECK(opsInBody(*parts[0], ir::OpCode::cmp) == 1);
    CHECK(opsInBody(*parts[1], ir::OpCode::cmp) == 0);
    auto [a, b] = runBoth(whole, split, {3}, out);
    CHECK(sameBits(a, b));
  }
}

// Columns at n 2^30 - 3 2^30 in i32: at n = 0 they wrap to 2^30 (the mask is false), where
// 64-bit arithmetic would call them below any bound. The split checks the range at run time
// and then leaves every iteration masked.
TEST_CASE("split folds: where an i32 mask would wrap on the unmasked iterations, none runs unmasked") {
  constexpr int64_t kBlock = 8;
  Tensor x = Tensor::random({4 * kBlock}, 5), out = Tensor::zeros({kBlock});
  TracedKernel whole = trace({1}, [&](Program& p) {
    auto X = p.read(x, {kBlock});
    Tile sum = p.fold(0, X.blocks(0), p.zeros({kBlock}), [&](Index n, Tile acc) {
      Tile columns = p.iota({kBlock}, 0) + (n * (int64_t{1} << 30) - (int64_t{3} << 30));
      return acc + where(columns < X.size(0), X.at({n}), 0.0);
    });
    p.write(out, {kBlock}).put(sum, {0});
  });
  ir::Kernel split = ir::splitFoldsAtMasks(*whole.kernel);
  REQUIRE(folds(split).size() == 2);
  auto [a, b] = runBoth(whole, split, {1}, out);
  CHECK(sameBits(a, b));
  // Iteration 0 was masked off: the sum is x's blocks 1 to 3 only.
  for (int64_t i = 0; i < kBlock; ++i)
    CHECK(a[size_t(i)] == doctest::Approx(x.item(kBlock + i) + x.item(2 * kBlock + i) + x.item(3 * kBlock + i)));
}

// An inner fold with a step, starting at the outer fold's index (empty for some), whose rising
// mask's bound depends on the outer index and whose falling one (on an i64 tile) on the program:
// the rising one is taken off, the falling one stays in both parts.
TEST_CASE("split folds: nested folds, a step, a start past zero, masks of both directions and i64 tiles") {
  constexpr int64_t kBlock = 8;
  for (int64_t n : {3, 8, 13, 40, 64}) {
    CAPTURE(n);
    Tensor x = Tensor::random({n}, 7), out = Tensor::zeros({2 * kBlock});
    TracedKernel whole = trace({2}, [&](Program& p) {
      auto X = p.read(x, {kBlock});
      Tile total = p.fold(0, 3, p.zeros({kBlock}), [&](Index r, Tile outer) {
        Tile inner = p.fold(r, X.blocks(0), 2, p.zeros({kBlock}), [&](Index b, Tile acc) {
          Tile rising = p.iota({kBlock}, 0) + b * kBlock < X.size(0) - r * 3;
          Tile falling = p.iota({kBlock}, 0).cast(i64) + b * kBlock >= p.id(0) * 5;
          return acc + where(rising, X.at({b}), 0.0) + where(falling, X.at({b}) * 2.0, 0.0);
        });
        return outer + inner;
      });
      p.write(out, {kBlock}).put(total, {p.id(0)});
    });
    ir::Kernel split = ir::splitFoldsAtMasks(*whole.kernel);
    ir::verify(split);
    int64_t splitFolds = 0;
    ir::forEachOp(split.body, [&](const ir::Op& op) { splitFolds += op.code == ir::OpCode::fold && op.has(ir::attr::split); });
    CHECK(splitFolds == 2);
    auto [a, b] = runBoth(whole, split, {2}, out);
    CHECK(sameBits(a, b));
  }
}

TEST_CASE("split folds: a fold without affine masks, or with a mask the same on every iteration, stays whole") {
  Tensor x = Tensor::random({40}, 6), out = Tensor::zeros({8});
  TracedKernel whole = trace({1}, [&](Program& p) {
    auto X = p.read(x, {8});
    Tile sum = p.fold(0, X.blocks(0), p.zeros({8}), [&](Index n, Tile acc) {
      Tile t = X.at({n});
      return acc + where(p.iota({8}, 0) < 5, t, 0.0) + where(t > 0.5, t, 0.0);  // iota alone; data
    });
    p.write(out, {8}).put(sum, {0});
  });
  CHECK(ir::semanticHash(ir::splitFoldsAtMasks(*whole.kernel)) == ir::semanticHash(*whole.kernel));
}

}  // namespace tj::splittest
