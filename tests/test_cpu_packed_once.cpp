// Dot operands packed once per launch (lower/cpu's Placement::packedOnce): which blocks the plan
// shares between programs, and kernels run straight through the ABI with a workspace whose slots
// start empty (programs pack and share them), taken (every program packs for itself, as while
// another packs a slot), or with no workspace at all; each against float64.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>

#include "devices/cpu/block_copy.hpp"
#include "devices/cpu/thread_pool.hpp"
#include "dsl/tilejit.hpp"
#include "jit/cpu_compiler.hpp"
#include "jit/cpu_target.hpp"
#include "jit/kernel_cache.hpp"
#include "lower/cpu/plan_buffers.hpp"
#include "tests/support.hpp"

using namespace tj;

namespace {

// The value of the kernel's only dot's right operand, and its placement.
std::pair<ir::ValueId, cpu::Placement> dotOperandB(const ir::Kernel& k, const cpu::BufferPlan& plan) {
  ir::ValueId b = -1;
  ir::forEachOp(k.body, [&](const ir::Op& op) {
    if (op.code == ir::OpCode::dot) b = op.operands[1];
  });
  REQUIRE_MESSAGE(b >= 0, "no dot in kernel '" << k.name << "'");
  return {b, plan.of[size_t(b)]};
}

cpu::BufferPlan planOf(const ir::Kernel& k) { return cpu::planBuffers(k, cpu::UseInfo(k), cpu::loweringOptionsForIsa("avx2")); }

// C = A·B over a grid of (row, column) blocks.
TracedKernel gemm(const Tensor& a, const Tensor& b, const Tensor& c, const Shape& block) {
  const int64_t bm = block[0], bk = block[1], bn = block[2];
  return trace({cdiv(a.dim(0), bm), cdiv(b.dim(1), bn)}, [&](Program& p) {
    Index i = p.id(0), j = p.id(1);
    auto A = p.read(a, {bm, bk});
    auto B = p.read(b, {bk, bn});
    Tile acc = p.fold(0, A.blocks(1), p.zeros({bm, bn}, c.dtype()),
                      [&](Index k, Tile acc) { return dot(A.at({i, k}), B.at({k, j}), acc); });
    p.write(c, {bm, bn}).put(acc, {i, j});
  }, "gemm");
}

}  // namespace

TEST_CASE("the CPU buffer plan packs once per launch a dot's B block that programs share, and no other") {
  Tensor a = Tensor::random({64, 64}, 1), b = Tensor::random({64, 64}, 2), c = Tensor::zeros({64, 64});
  SUBCASE("a GEMM's B: its offsets depend on the column block, not the row block") {
    TracedKernel traced = gemm(a, b, c, {16, 16, 16});
    cpu::BufferPlan plan = planOf(*traced.kernel);
    auto [bv, placed] = dotOperandB(*traced.kernel, plan);
    CHECK(placed == cpu::Placement::packedOnce);
    REQUIRE(plan.packedOnce.count(bv));
    CHECK(plan.packedOnce.at(bv).programAxes == 0b10u);
  }
  SUBCASE("a block every program reads at offsets of its own") {
    TracedKernel traced = trace({4, 4}, [&](Program& p) {
      Index i = p.id(0), j = p.id(1);
      Tile prod = dot(p.read(a, {16, 16}).at({i, j}), p.read(b, {16, 16}).at({i, j}));
      p.write(c, {16, 16}).put(prod, {i, j});
    }, "own_blocks");
    cpu::BufferPlan plan = planOf(*traced.kernel);
    CHECK(dotOperandB(*traced.kernel, plan).second == cpu::Placement::buffer);
    CHECK(plan.packedOnce.empty());
  }
  SUBCASE("a grid of column blocks alone: no two programs read the same block") {
    TracedKernel traced = trace({4}, [&](Program& p) {
      Index j = p.id(0);
      auto B = p.read(b, {16, 16});
      Tile acc = p.fold(0, 4, p.zeros({16, 16}), [&](Index k, Tile acc) {
        return dot(p.read(a, {16, 16}).at({0, k}), B.at({k, j}), acc);
      });
      p.write(c, {16, 16}).put(acc, {0, j});
    }, "column_blocks");
    CHECK(dotOperandB(*traced.kernel, planOf(*traced.kernel)).second == cpu::Placement::buffer);
  }
  SUBCASE("a B that the kernel also writes") {
    TracedKernel traced = trace({4, 4}, [&](Program& p) {
      Index i = p.id(0), j = p.id(1);
      Tile prod = dot(p.read(a, {16, 16}).at({i, 0}), p.read(b, {16, 16}).at({0, j}));
      p.write(b, {16, 16}).put(prod, {i, j});
    }, "writes_b");
    CHECK(dotOperandB(*traced.kernel, planOf(*traced.kernel)).second == cpu::Placement::buffer);
  }
}

namespace {

// A workspace for a test's launch: every slot's state set to `state` where the runtime would
// zero them, the packed blocks poisoned.
struct TestWorkspace {
  int32_t state = 0;  // 0 empty, 1 another program packing it
  bool given = true;
  std::mutex mutex{};
  std::vector<std::byte> memory{};
  std::byte* base = nullptr;
  int64_t bytes = 0, flagBytes = 0, calls = 0, otherRequests = 0;
  static constexpr std::byte kPoison{0xA5};

  static void* provide(void* context, int64_t bytes, int64_t zeroedBytes) noexcept {
    auto& w = *static_cast<TestWorkspace*>(context);
    std::lock_guard lock(w.mutex);
    ++w.calls;
    if (!w.given) return nullptr;
    if (w.base) {
      if (bytes != w.bytes || zeroedBytes != w.flagBytes) ++w.otherRequests;
      return w.base;
    }
    w.bytes = bytes;
    w.flagBytes = zeroedBytes;
    w.memory.assign(size_t(bytes + 64), kPoison);
    w.base = w.memory.data() + (64 - reinterpret_cast<uintptr_t>(w.memory.data()) % 64) % 64;
    for (int64_t i = 0; i < zeroedBytes / 4; ++i) std::memcpy(w.base + 4 * i, &w.state, 4);
    return w.base;
  }
  int64_t slotsIn(int32_t s) const {
    int64_t n = 0;
    for (int64_t i = 0; i < flagBytes / 4; ++i) {
      int32_t word;
      std::memcpy(&word, base + 4 * i, 4);
      n += word == s;
    }
    return n;
  }
};

// Random operands of `t` with, for f32, a NaN, an infinity and a subnormal among them.
Tensor operand(const Shape& shape, DType t, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(size_t(shape[0] * shape[1]));
  for (double& x : v)
    x = t == DType::i8 ? double(int(rng() % 256) - 128) : std::ldexp(double(int(rng() % 512) - 256), -7);
  if (t == DType::f32) {
    v[v.size() / 2] = std::numeric_limits<double>::quiet_NaN();
    v[v.size() / 3] = std::numeric_limits<double>::infinity();
    v[v.size() / 5] = 1e-40;
  }
  return Tensor::from(shape, v, t);
}

// Runs a kernel's entry over a grid of rows x cols programs straight through the ABI, on
// `threads` threads, with `workspace`; returns the faults it reported.
uint32_t runThroughAbi(cpu::KernelEntry entry, const std::vector<Tensor>& tensors, int64_t rows, int64_t cols,
                       TestWorkspace& workspace, int threads) {
  std::vector<cpu::TensorDesc> descs;
  for (const Tensor& t : tensors) {
    TensorArg arg = t.launchArg();
    cpu::TensorDesc d{arg.data, {1, 1, 1, 1}, {0, 0, 0, 0}};
    std::copy(arg.shape.begin(), arg.shape.end(), d.shape);
    std::copy(arg.strides.begin(), arg.strides.end(), d.strides);
    descs.push_back(d);
  }
  cpu::KernelFaults faults;
  cpu::KernelArgs args{descs.data(), {rows, cols, 1}, nullptr, nullptr, &faults, nullptr,
                       cpu::gatherBlock, cpu::scatterBlock, TestWorkspace::provide, &workspace};
  cpu::ThreadPool pool(threads);
  pool.parallelFor(rows * cols, [&](int64_t begin, int64_t end) { entry(&args, begin, end); });
  return faults.bits;
}

// The compiled entry of a traced kernel, for the host, from `cache`.
cpu::KernelEntry entryOf(jit::KernelCache& cache, const TracedKernel& traced) {
  jit::ArtifactKey key{jit::ArtifactKind::cpuObject, traced.hash, jit::hostTarget().deviceFeatures, jit::compileOptions()};
  cpu::KernelEntry entry = cache.lookup(*traced.kernel, key).entry;
  REQUIRE_MESSAGE(bool(entry), "no entry for kernel " << traced.kernel->name);
  return entry;
}

jit::KernelCache hostCache() {
  return jit::KernelCache([](const ir::Kernel& k, const std::string& entry) { return jit::compileKernel(k, entry); }, "");
}

}  // namespace

TEST_CASE("packed-once blocks: programs share them, pack their own while a slot is taken, or without a workspace") {
  const int64_t M = 45, K = 131, N = 70;
  const Shape block{16, 32, 32};  // a grid of 3x3 programs: each B block read by three
  // (f16's A and B are widened to f32, and so packed once both; i8's A is too where the host
  // repacks it for pair or quad products rather than reading it in place for AMX.)
  for (DType dtype : {DType::f32, DType::bf16, DType::i8, DType::f16}) {
    const DType result = dtype == DType::i8 ? DType::i32 : DType::f32;
    Tensor a = operand({M, K}, dtype, 1), b = operand({K, N}, dtype, 2);
    Tensor c = Tensor::zeros({M, N}, result);
    TracedKernel traced = gemm(a, b, c, block);
    const ir::Kernel& kernel = *traced.kernel;
    const cpu::BufferPlan plan = cpu::planBuffers(kernel, cpu::UseInfo(kernel), jit::loweringOptions());
    REQUIRE(dotOperandB(kernel, plan).second == cpu::Placement::packedOnce);
    const bool aPackedOnce = plan.packedOnce.size() == 2;
    if (dtype == DType::f16) CHECK(aPackedOnce);
    jit::KernelCache cache = hostCache();
    cpu::KernelEntry entry = entryOf(cache, traced);

    for (int start : {0, 1, 2}) {  // slots empty, slots taken, no workspace
      INFO(dtypeName(dtype), start == 0 ? ": slots empty" : start == 1 ? ": slots taken" : ": no workspace");
      Tensor out = Tensor::full({M, N}, result == DType::i32 ? -7777777 : 1e30, result);
      TestWorkspace workspace{.state = start == 1 ? 1 : 0, .given = start != 2};
      CHECK(runThroughAbi(entry, {a, b, out}, cdiv(M, block[0]), cdiv(N, block[2]), workspace, 3) == 0);
      CHECK(workspace.calls > 0);
      CHECK(workspace.otherRequests == 0);
      const int64_t blocks = cdiv(K, block[1]) * cdiv(N, block[2]) + (aPackedOnce ? cdiv(M, block[0]) * cdiv(K, block[1]) : 0);
      if (start == 0) {
        CHECK(workspace.flagBytes >= 4 * blocks);
        CHECK(workspace.slotsIn(2) == blocks);  // each packed once, by one program
        CHECK(workspace.slotsIn(1) == 0);
      } else if (start == 1) {
        CHECK(workspace.slotsIn(1) == workspace.flagBytes / 4);
        bool untouched = std::all_of(workspace.base + workspace.flagBytes, workspace.base + workspace.bytes,
                                     [](std::byte x) { return x == TestWorkspace::kPoison; });
        CHECK_MESSAGE(untouched, "a program packed into a slot another program had taken");
      }
      test::checkProduct(out, M, N, K, [&](int64_t r, int64_t c, int64_t k) { return a.item(r * K + k) * b.item(k * N + c); });
    }
  }
}

// A block at offsets that are not a block's, or that start outside the tensor, has no slot: each
// program packs its own, from the right rows, and no slot is claimed.
TEST_CASE("packed-once blocks: offsets off the block grid or outside the tensor get no slot") {
  const int64_t M = 40, K = 96, N = 64, bm = 16, bk = 32, bn = 32;
  Tensor a = operand({M, K}, DType::f32, 5), b = operand({K, N}, DType::f32, 6);
  for (int64_t shift : {3, -5}) {
    INFO("B's rows shifted by ", shift);
    Tensor c = Tensor::full({M, N}, 1e30);
    TracedKernel traced = trace({cdiv(M, bm), cdiv(N, bn)}, [&](Program& p) {
      Index i = p.id(0), j = p.id(1);
      auto A = p.read(a, {bm, bk});
      auto B = p.read(b, {bk, bn});
      Tile acc = p.fold(0, A.blocks(1), p.zeros({bm, bn}), [&](Index k, Tile acc) {
        return dot(A.at({i, k}), B.at_offset({k * bk + shift, j * bn}), acc);
      });
      p.write(c, {bm, bn}).put(acc, {i, j});
    }, "shifted_b");
    const ir::Kernel& kernel = *traced.kernel;
    REQUIRE(dotOperandB(kernel, cpu::planBuffers(kernel, cpu::UseInfo(kernel), jit::loweringOptions())).second ==
            cpu::Placement::packedOnce);
    jit::KernelCache cache = hostCache();
    cpu::KernelEntry entry = entryOf(cache, traced);
    TestWorkspace workspace;
    CHECK(runThroughAbi(entry, {a, b, c}, cdiv(M, bm), cdiv(N, bn), workspace, 2) == 0);
    CHECK(workspace.slotsIn(0) == workspace.flagBytes / 4);  // none claimed
    test::checkProduct(c, M, N, K, [&](int64_t r, int64_t col, int64_t k) {
      int64_t row = k + shift;  // B's row that meets A's column k; the fill, 0, outside B
      return a.item(r * K + k) * (row < 0 || row >= K ? 0.0 : b.item(row * N + col));
    });
  }
}
