// The CPU runtime without the lowering: the thread pool, the JIT and the CPU
// device, driving a kernel written by hand in LLVM IR. Also defines that
// kernel for test_kernel_cache.cpp.
#include <doctest/doctest.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "devices/cpu/block_copy.hpp"
#include "devices/cpu/cpu_device.hpp"
#include "devices/vulkan/vulkan_runtime.hpp"
#include "devices/cpu/thread_pool.hpp"
#include "devices/interp/interpreter.hpp"
#include "dsl/tilejit.hpp"
#include "ir/passes.hpp"
#include "jit/cpu_compiler.hpp"
#include "jit/cpu_jit.hpp"
#include "jit/kernel_cache.hpp"
#include "lower/cpu/lower_to_llvm.hpp"

namespace tj::cputest {

// The tile IR the hand-written kernel implements: every program writes its
// id to t0 and exp(id / 8) to t1, and prints its id.
const char* kIdsIR = R"(kernel @ids(t0: tensor<i64, 1>, t1: tensor<f32, 1>) grid 1 {
  %0 = program_id() {axis = 0} : i64
  %1 = reshape(%0) : tile<1xi64>
  store(%0, %1) {tensor = 0}
  %2 = cast(%1) : tile<1xf32>
  %3 = constant() {value = 0.125} : tile<1xf32>
  %4 = mul(%2, %3) : tile<1xf32>
  %5 = exp(%4) : tile<1xf32>
  store(%0, %5) {tensor = 1}
  print(%1) {label = "ids"}
}
)";

// The same kernel by hand, on the ABI of lower/cpu/abi.hpp; @ENTRY is
// replaced by the entry name. It calls libm's expf and the print callback.
const char* kIdsLLVM = R"(
%Desc = type { ptr, [4 x i64], [4 x i64] }
%Args = type { ptr, [3 x i64], ptr, ptr, ptr }

@label = private constant [4 x i8] c"ids\00"

declare float @expf(float)

define void @ENTRY(ptr %args, i64 %begin, i64 %end) {
entry:
  %tensors = load ptr, ptr %args
  %ids = load ptr, ptr %tensors
  %idsStrideP = getelementptr %Desc, ptr %tensors, i64 0, i32 2, i64 0
  %idsStride = load i64, ptr %idsStrideP
  %expsDesc = getelementptr %Desc, ptr %tensors, i64 1
  %exps = load ptr, ptr %expsDesc
  %expsStrideP = getelementptr %Desc, ptr %tensors, i64 1, i32 2, i64 0
  %expsStride = load i64, ptr %expsStrideP
  %printP = getelementptr %Args, ptr %args, i64 0, i32 2
  %print = load ptr, ptr %printP
  %contextP = getelementptr %Args, ptr %args, i64 0, i32 3
  %context = load ptr, ptr %contextP
  %pidSlot = alloca i64
  %shape = alloca i64
  store i64 1, ptr %shape
  %none = icmp sge i64 %begin, %end
  br i1 %none, label %exit, label %loop
loop:
  %pid = phi i64 [ %begin, %entry ], [ %next, %loop ]
  %idsOffset = mul i64 %pid, %idsStride
  %idsAt = getelementptr i64, ptr %ids, i64 %idsOffset
  store i64 %pid, ptr %idsAt
  %pidF = sitofp i64 %pid to float
  %x = fmul float %pidF, 0.125
  %e = call float @expf(float %x)
  %expsOffset = mul i64 %pid, %expsStride
  %expsAt = getelementptr float, ptr %exps, i64 %expsOffset
  store float %e, ptr %expsAt
  store i64 %pid, ptr %pidSlot
  call void %print(ptr %context, ptr @label, i32 6, i32 1, ptr %shape, ptr %pidSlot, ptr %pidSlot)
  %next = add i64 %pid, 1
  %more = icmp slt i64 %next, %end
  br i1 %more, label %loop, label %exit
exit:
  ret void
}
)";

// A kernel that reports an integer division by zero from every program.
const char* kFaultLLVM = R"(
%Args = type { ptr, [3 x i64], ptr, ptr, ptr }

define void @ENTRY(ptr %args, i64 %begin, i64 %end) {
  %faultsP = getelementptr %Args, ptr %args, i64 0, i32 4
  %faults = load ptr, ptr %faultsP
  %old = atomicrmw or ptr %faults, i32 1 monotonic
  ret void
}
)";

// Copies the four KernelArgs::scalars slots into tensor 0, as raw int64s.
const char* kSlotsLLVM = R"(
%Args = type { ptr, [3 x i64], ptr, ptr, ptr, ptr }

define void @ENTRY(ptr %args, i64 %begin, i64 %end) {
  %tensors = load ptr, ptr %args
  %out = load ptr, ptr %tensors
  %scalarsP = getelementptr %Args, ptr %args, i64 0, i32 5
  %scalars = load ptr, ptr %scalarsP
  %v = load <4 x i64>, ptr %scalars, align 8
  store <4 x i64> %v, ptr %out, align 8
  ret void
}
)";

std::string withEntry(std::string text, const std::string& entryName) {
  for (size_t at; (at = text.find("@ENTRY")) != std::string::npos;) text.replace(at, 6, "@" + entryName);
  return text;
}

ir::Kernel idsKernel() {
  ir::Kernel k = ir::parse(kIdsIR);
  ir::verify(k);
  return k;
}

jit::ObjectCode compileIds(const ir::Kernel&, const std::string& entryName) {
  return jit::compileAssembly(withEntry(kIdsLLVM, entryName));
}

// Host buffers for the ids kernel over n programs.
struct IdsBuffers {
  std::vector<int64_t> ids;
  std::vector<float> exps;
  explicit IdsBuffers(int64_t n) : ids(static_cast<size_t>(n), -1), exps(static_cast<size_t>(n), -1) {}

  std::vector<TensorArg> args() {
    auto n = static_cast<int64_t>(ids.size());
    return {{ids.data(), DType::i64, {n}, {1}}, {exps.data(), DType::f32, {n}, {1}}};
  }
  void check() const {
    for (size_t i = 0; i < ids.size(); ++i) {
      CAPTURE(i);
      REQUIRE(ids[i] == static_cast<int64_t>(i));
      REQUIRE(exps[i] == std::exp(static_cast<float>(i) * 0.125f));
    }
  }
};

void countPrint(void* context, const char*, int32_t, int32_t, const int64_t*, const void*, const int64_t*) {
  ++*static_cast<std::atomic<int64_t>*>(context);
}

// Runs an ids entry over n programs straight through the ABI on `pool`.
void runIds(cpu::KernelEntry entry, int64_t n, cpu::ThreadPool& pool) {
  IdsBuffers buffers(n);
  cpu::TensorDesc tensors[2] = {{buffers.ids.data(), {n, 1, 1, 1}, {1, 0, 0, 0}},
                                {buffers.exps.data(), {n, 1, 1, 1}, {1, 0, 0, 0}}};
  std::atomic<int64_t> prints{0};
  cpu::KernelFaults faults;
  cpu::KernelArgs args{tensors, {n, 1, 1}, countPrint, &prints, &faults, nullptr, cpu::gatherBlock, cpu::scatterBlock};
  pool.parallelFor(n, [&](int64_t begin, int64_t end) { entry(&args, begin, end); });
  buffers.check();
  CHECK(prints == n);
  CHECK(faults.bits == 0);
}

}  // namespace tj::cputest

namespace tj {
namespace {

using cputest::IdsBuffers;

// Runs parallelFor and returns how often each program ran.
std::vector<int> coverage(cpu::ThreadPool& pool, int64_t total) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(total));
  std::atomic<bool> badRange{false};
  pool.parallelFor(total, [&](int64_t begin, int64_t end) {
    if (begin < 0 || begin >= end || end > total) badRange = true;
    for (int64_t i = begin; i < end && !badRange; ++i) ++hits[static_cast<size_t>(i)];
  });
  CHECK_FALSE(badRange);
  return {hits.begin(), hits.end()};
}

TEST_CASE("thread pool: every program runs exactly once, for any grid and thread count") {
  for (int threads : {1, 2, 3, 7}) {
    cpu::ThreadPool pool(threads);
    CHECK(pool.threads() == threads);
    for (int64_t total : {0, 1, 2, 3, 5, 7, 8, 13, 28, 29, 64, 100, 1000, 4097, 100003}) {
      CAPTURE(threads);
      CAPTURE(total);
      std::vector<int> hits = coverage(pool, total);
      CHECK(std::count(hits.begin(), hits.end(), 1) == total);
    }
  }
}

TEST_CASE("thread pool: back-to-back launches, including from several threads, each run once") {
  cpu::ThreadPool pool(3);
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int c = 0; c < 3; ++c)
    callers.emplace_back([&, c] {
      for (int64_t round = 0; round < 300; ++round) {
        int64_t total = 1 + (round * 7 + c) % 97;
        std::atomic<int64_t> sum{0};
        pool.parallelFor(total, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) sum += i;
        });
        if (sum != total * (total - 1) / 2) ++failures;
      }
    });
  for (std::thread& t : callers) t.join();
  CHECK(failures == 0);
}

TEST_CASE("thread pool: tiny grids run on the caller") {
  cpu::ThreadPool pool(4);
  auto threadsUsed = [&](int64_t total, int64_t serialBelow) {
    std::mutex m;
    std::set<std::thread::id> ids;
    pool.parallelFor(
        total,
        [&](int64_t, int64_t) {
          std::lock_guard lock(m);
          ids.insert(std::this_thread::get_id());
        },
        serialBelow);
    return ids;
  };
  std::set<std::thread::id> caller{std::this_thread::get_id()};
  CHECK(threadsUsed(0, cpu::ThreadPool::kDefaultSerialBelow).empty());
  CHECK(threadsUsed(1, cpu::ThreadPool::kDefaultSerialBelow) == caller);
  CHECK(threadsUsed(15, 16) == caller);
}

TEST_CASE("thread pool: large grids use the workers") {
  cpu::ThreadPool pool(4);
  std::mutex m;
  std::set<std::thread::id> ids;
  pool.parallelFor(64, [&](int64_t, int64_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::lock_guard lock(m);
    ids.insert(std::this_thread::get_id());
  });
  CHECK(ids.size() > 1);
}

TEST_CASE("thread pool: an exception reaches the caller and the pool stays usable") {
  cpu::ThreadPool pool(3);
  CHECK_THROWS_WITH_AS(pool.parallelFor(1000,
                                        [](int64_t b, int64_t e) {
                                          if (b <= 500 && 500 < e) throw std::runtime_error("program 500");
                                        }),
                       "program 500", std::runtime_error);
  std::vector<int> hits = coverage(pool, 1000);
  CHECK(std::count(hits.begin(), hits.end(), 1) == 1000);
}

TEST_CASE("thread pool: a parallelFor inside a parallelFor runs on its caller") {
  cpu::ThreadPool pool(3);
  std::atomic<int64_t> inner{0};
  pool.parallelFor(10, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) pool.parallelFor(10, [&](int64_t ib, int64_t ie) { inner += ie - ib; });
  });
  CHECK(inner == 100);
}

TEST_CASE("cpu jit: a hand-written LLVM kernel compiles, links libm and runs through the pool") {
  const jit::CpuTarget& target = jit::hostTarget();
  CHECK(target.deviceFeatures.starts_with("cpu-"));
  CHECK(target.deviceFeatures.find(target.cpu) != std::string::npos);
  // Kernels cached on one host load on another only with the same dot-product instructions.
  for (const char* feature : {"avx2", "fma", "avx512f", "avx512vnni", "avxvnni", "avx512bf16", "amx-int8", "amx-bf16"}) {
    CAPTURE(feature);
    CHECK((target.deviceFeatures.find(std::string("+") + feature) != std::string::npos) == target.hasFeature(feature));
  }
  jit::ObjectCode code = cputest::compileIds(cputest::idsKernel(), "tj_test_ids");
  CHECK_FALSE(code.bytes.empty());
  cpu::KernelEntry entry = jit::loadKernel(code.bytes, "tj_test_ids");
  for (int threads : {1, 2, 7}) {
    cpu::ThreadPool pool(threads);
    for (int64_t n : {1, 2, 37, 1000}) cputest::runIds(entry, n, pool);
  }
  // The same symbol again lives in a JITDylib of its own.
  CHECK((jit::loadKernel(code.bytes, "tj_test_ids") != nullptr));
}

TEST_CASE("cpu jit: the lowering's vector width follows the target's features") {
  jit::CpuTarget target;
  target.features = "+avx,+avx2,-avx512f,+fma";
  CHECK(target.hasFeature("avx2"));
  CHECK_FALSE(target.hasFeature("avx512f"));
  CHECK_FALSE(target.hasFeature("avx5"));
  CHECK(jit::loweringOptions(target).vectorBytes == 32);
  CHECK(jit::compileOptions(target) == "O3 pic vector=32 pmaddwd");
  target.features = "+avx512f,+avx";  // i8 pair products at 64 bytes need AVX512-BW
  CHECK(jit::loweringOptions(target).vectorBytes == 64);
  CHECK_FALSE(jit::loweringOptions(target).i16PairProducts);
  target.features = "+avx512f,+avx512bw,+avx";
  CHECK(jit::loweringOptions(target).i16PairProducts);
  target.features = "+neon";
  CHECK(jit::loweringOptions(target).vectorBytes == 16);
  CHECK_FALSE(jit::loweringOptions(target).i16PairProducts);
}

TEST_CASE("cpu jit: bad LLVM assembly and missing symbols are errors") {
  CHECK_THROWS_WITH_AS(jit::compileAssembly("define void @f( {"), doctest::Contains("bad LLVM assembly"), Error);
  jit::ObjectCode code = jit::compileAssembly("declare void @nowhere()\ndefine void @f() {\n call void @nowhere()\n ret void\n}\n");
  CHECK_THROWS_AS(jit::loadKernel(code.bytes, "f"), Error);
  CHECK_THROWS_AS(jit::loadKernel(code.bytes, "not_there"), Error);
}

// LLVM reports what its code generator cannot do through its context, whose default handler
// exits the process; the compile throws instead, and the process goes on to compile more.
TEST_CASE("cpu jit: an error of LLVM's code generator is an exception, not an exit") {
  const std::string bad = "define void @f() {\n call void asm sideeffect \"not_an_instruction %eax\", \"\"()\n ret void\n}\n";
  CHECK_THROWS_WITH_AS(jit::compileAssembly(bad), doctest::Contains("LLVM could not generate code"), InternalError);
  CHECK_THROWS_WITH_AS(jit::compileAssembly(bad), doctest::Contains("not_an_instruction"), InternalError);
  CHECK_FALSE(jit::compileAssembly("define void @f() {\n ret void\n}\n").bytes.empty());
}

TEST_CASE("cpu device: launches through the cache and prints like the interpreter") {
  jit::KernelCache cache(cputest::compileIds, "");
  cpu::ThreadPool pool(3);
  cpu::CpuDevice device(cache, pool);
  ir::Kernel k = cputest::idsKernel();
  for (jit::CacheSource expected : {jit::CacheSource::compiled, jit::CacheSource::memory}) {
    const int64_t n = 41;
    IdsBuffers got(n), want(n);
    std::vector<TensorArg> gotArgs = got.args(), wantArgs = want.args();
    std::vector<int64_t> grid{n};
    std::mutex m;
    std::multiset<std::string> gotLines, wantLines;
    LaunchReport report = device.launch(k, {gotArgs, grid, [&](const std::string& line) {
                                          std::lock_guard lock(m);
                                          gotLines.insert(line);
                                        }});
    CHECK(report.device == "cpu");
    CHECK(report.cache == expected);
    CHECK((report.compileMs > 0) == (expected == jit::CacheSource::compiled));
    got.check();
    interpret(k, {wantArgs, grid, [&](const std::string& line) { wantLines.insert(line); }});
    CHECK(got.ids == want.ids);
    CHECK(gotLines == wantLines);
    CHECK(gotLines.count("[ids] program (40): [40]") == 1);
  }
}

TEST_CASE("cpu device: arguments are checked against the kernel before it runs") {
  jit::KernelCache cache(cputest::compileIds, "");
  cpu::CpuDevice device(cache, cpu::ThreadPool::global());
  ir::Kernel k = cputest::idsKernel();
  IdsBuffers buffers(4);
  std::vector<TensorArg> args = buffers.args();
  std::vector<int64_t> grid{4};
  auto launch = [&] { device.launch(k, {args, grid, {}}); };
  args[1].dtype = DType::f16;
  CHECK_THROWS_WITH_AS(launch(), "cpu: kernel 'ids': tensor 't1' is f16 but the kernel expects f32", Error);
  args = buffers.args();
  args[0].shape = {2, 2};
  CHECK_THROWS_WITH_AS(launch(), doctest::Contains("tensor 't0' has rank 2"), Error);
  args.pop_back();
  CHECK_THROWS_WITH_AS(launch(), doctest::Contains("got 1 tensors but the kernel takes 2"), Error);
  args = buffers.args();
  grid = {2, 2};
  CHECK_THROWS_WITH_AS(launch(), doctest::Contains("grid rank is 1"), Error);
  grid = {4};
  k.tensors[0].rank = 5;
  CHECK_THROWS_WITH_AS(launch(), doctest::Contains("tensor 't0' has rank 5; the CPU device supports up to 4"), Error);
  CHECK(buffers.ids == std::vector<int64_t>(4, -1));
}

TEST_CASE("cpu device: scalars reach the kernel as int64 slots, floats as their f64 bits") {
  jit::KernelCache cache(
      [](const ir::Kernel&, const std::string& entry) {
        return jit::compileAssembly(cputest::withEntry(cputest::kSlotsLLVM, entry));
      },
      "");
  cpu::CpuDevice device(cache, cpu::ThreadPool::global());
  ir::Kernel k = ir::parse("kernel @slots(t0: tensor<i64, 1>, s0: f64, s1: f16, s2: i64, s3: i32) grid 1 {\n}\n");
  ir::verify(k);
  std::vector<int64_t> out(4, -1);
  std::vector<TensorArg> tensors{{out.data(), DType::i64, {4}, {1}}};
  std::vector<int64_t> grid{1};
  const int64_t wide = (int64_t{1} << 31) + 5;
  // The kernel rounds and wraps (lower/cpu); the device passes values unchanged.
  std::vector<ScalarArg> scalars{{.f = 0.1}, {.f = -2.5}, {.i = std::numeric_limits<int64_t>::min()}, {.i = wide}};
  device.launch(k, {tensors, grid, {}, scalars});
  CHECK(out == std::vector<int64_t>{std::bit_cast<int64_t>(0.1), std::bit_cast<int64_t>(-2.5),
                                    std::numeric_limits<int64_t>::min(), wide});
  scalars.pop_back();
  CHECK_THROWS_WITH_AS(device.launch(k, {tensors, grid, {}, scalars}),
                       "cpu: kernel 'slots': got 3 scalars but the kernel takes 4", Error);
}

TEST_CASE("cpu device: a kernel's fault bits become an Error") {
  jit::KernelCache cache(
      [](const ir::Kernel&, const std::string& entry) {
        return jit::compileAssembly(cputest::withEntry(cputest::kFaultLLVM, entry));
      },
      "");
  cpu::CpuDevice device(cache, cpu::ThreadPool::global());
  IdsBuffers buffers(8);
  std::vector<TensorArg> args = buffers.args();
  std::vector<int64_t> grid{8};
  CHECK_THROWS_WITH_AS(device.launch(cputest::idsKernel(), {args, grid, {}}),
                       doctest::Contains("integer division or remainder by zero"), Error);
}

TEST_CASE("devices: cpu is selectable and the default: interp stays selectable") {
  CHECK(selectDevice("cpu").name() == "cpu");
  CHECK(selectDevice("interp").name() == "interp");
  std::vector<std::string> names = availableDevices();
  CHECK(std::find(names.begin(), names.end(), "interp") != names.end());
  bool listsVulkan = std::find(names.begin(), names.end(), "vulkan") != names.end();
  CHECK(listsVulkan == vk::status().available);
  if (jit::hostTargetSupported() && !std::getenv("TILEJIT_DEVICE")) CHECK(selectDevice().name() == "cpu");
}

}  // namespace
// A fused chain computes each element's operands in order, so `acc + x0 + x1 + ...` adds as it
// loads: C++ leaves argument order open, and g++'s right to left put every load before the
// first add, all live at once, which made LLVM's vectorizer quadratic in the chain's length.
TEST_CASE("cpu lowering: a fused chain adds each load before loading the next") {
  Tensor x = Tensor::zeros({64}), out = Tensor::zeros({16});
  TracedKernel t = trace({1}, [&](Program& p) {
    auto X = p.read(x, {16});
    Tile acc = p.zeros({16});
    for (int j = 0; j < 4; ++j) acc = acc + X.at({j});
    p.write(out, {16}).put(acc, {0});
  });
  std::string text = cpu::lowerToLLVMText(*t.kernel);
  size_t firstAdd = text.find("fadd");
  REQUIRE(firstAdd != std::string::npos);
  int loadsBefore = 0;
  for (size_t at = text.find("load float"); at < firstAdd; at = text.find("load float", at + 1)) ++loadsBefore;
  CHECK(loadsBefore == 1);  // x0 (acc starts as zeros), then its add
}

// The runtime's copies of edge blocks against an element-by-element reference: every rank,
// element size, inner stride 1 or 3, and blocks reaching past either edge of each axis.
TEST_CASE("cpu runtime: edge blocks are gathered with the fill and scattered inside the tensor only") {
  std::mt19937_64 rng(12);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int trial = 0; trial < 400; ++trial) {
    int32_t rank = static_cast<int32_t>(pick(1, cpu::kMaxRank)), bytes = int32_t{1} << pick(0, 3);
    int64_t innerStride = pick(0, 1) ? 3 : 1;
    int64_t shape[cpu::kMaxRank] = {1, 1, 1, 1}, block[cpu::kMaxRank] = {}, firsts[cpu::kMaxRank] = {};
    int64_t strides[cpu::kMaxRank] = {};
    int64_t span = innerStride;
    for (int d = rank - 1; d >= 0; --d) {
      shape[d] = pick(1, 5);
      block[d] = pick(1, 6);
      firsts[d] = pick(-block[d], shape[d]);
      strides[d] = span;
      span *= shape[d];
    }
    std::vector<uint8_t> data(static_cast<size_t>(span * bytes));
    for (uint8_t& b : data) b = static_cast<uint8_t>(pick(0, 255));
    cpu::TensorDesc desc{data.data(), {}, {}};
    std::copy(shape, shape + cpu::kMaxRank, desc.shape);
    std::copy(strides, strides + cpu::kMaxRank, desc.strides);
    int64_t count = 1;
    for (int d = 0; d < rank; ++d) count *= block[d];
    uint64_t fill = 0x0123456789abcdefull;
    std::vector<uint8_t> staging(static_cast<size_t>(count * bytes), 0xee), expected = staging;
    std::vector<uint8_t> scattered = data, stagedIn(staging.size());
    for (uint8_t& b : stagedIn) b = static_cast<uint8_t>(pick(0, 255));
    std::vector<uint8_t> expectedTensor = data;
    for (int64_t i = 0; i < count; ++i) {
      int64_t rest = i, offset = 0;
      bool inside = true;
      for (int d = rank - 1; d >= 0; --d) {
        int64_t c = firsts[d] + rest % block[d];
        rest /= block[d];
        inside = inside && c >= 0 && c < shape[d];
        offset += c * strides[d];
      }
      for (int32_t b = 0; b < bytes; ++b) {
        size_t at = static_cast<size_t>(i * bytes + b);
        expected[at] = inside ? data[static_cast<size_t>(offset * bytes + b)] : static_cast<uint8_t>(fill >> (8 * b));
        if (inside) expectedTensor[static_cast<size_t>(offset * bytes + b)] = stagedIn[at];
      }
    }
    CAPTURE(trial);
    cpu::gatherBlock(&desc, rank, bytes, firsts, block, fill, staging.data());
    CHECK(staging == expected);
    desc.data = scattered.data();
    cpu::scatterBlock(&desc, rank, bytes, firsts, block, stagedIn.data());
    CHECK(scattered == expectedTensor);
  }
}

// A fold's dot accumulator goes straight to its output on the last step only where nothing
// else can see the difference: not for a store under a condition, nor a tensor read too.
TEST_CASE("cpu lowering: a dot writes its output block on the fold's last step only when the store is certain") {
  Tensor a = Tensor::zeros({64, 64}), b = Tensor::zeros({64, 64}), out = Tensor::zeros({64, 64});
  // The last argument of the kernel's micro-kernel call: whether its first step starts from zero.
  auto lastArgument = [&](const std::function<void(Program&, const Tile&)>& write) {
    TracedKernel t = trace({1}, [&](Program& p) {
      auto A = p.read(a, {16, 16});
      auto B = p.read(b, {16, 16});
      Tile acc = p.fold(0, 4, p.zeros({16, 16}), [&](Index k, Tile acc) { return acc + dot(A.at({0, k}), B.at({k, 0})); });
      write(p, acc);
    });
    std::string text = cpu::lowerToLLVMText(*t.kernel, {.vectorBytes = 32});
    size_t call = text.find("call void @tj_dot");
    REQUIRE(call != std::string::npos);
    size_t close = text.find(')', call);
    return text.substr(text.rfind(',', close) + 2, close - text.rfind(',', close) - 2);
  };
  CHECK(lastArgument([&](Program& p, const Tile& acc) { p.write(out, {16, 16}).put(acc, {0, 0}); }) != "i1 false");
  CHECK(lastArgument([&](Program& p, const Tile& acc) {
          p.if_then(p.id(0) == 0, [&] { p.write(out, {16, 16}).put(acc, {0, 0}); });
        }) == "i1 false");
  CHECK(lastArgument([&](Program& p, const Tile& acc) {
          p.write(b, {16, 16}).put(p.read(out, {16, 16}).at({1, 1}), {0, 0});
          p.write(out, {16, 16}).put(acc, {0, 0});
        }) == "i1 false");
}

// A C++ loop unrolled into a long straight-line trace is lowered in chunks, each a function of
// its own, and a sum of many reads in nests of a few reads each (lower/cpu/lower_to_llvm.cpp).
// With edge blocks (the fill), a fold, a tile and an index made in the first chunk and used in
// the last, more staged blocks than the stack holds (the heap's), and an early exit that makes
// the rest of the body a region, chunked in its turn.
TEST_CASE("cpu lowering: a long unrolled trace runs in outlined chunks and sums right") {
  constexpr int64_t kReads = 400, kBlock = 32, kRows = 70;  // 3 ops a read
  const int64_t cols = kReads * kBlock - 5;  // the last column block lies partly outside
  Tensor x = Tensor::random({kRows, cols}, 3), y = Tensor::zeros({kRows, kBlock});
  auto body = [&](Program& p) {
    Index i = p.id(0);
    auto X = p.read(x, {kBlock, kBlock});
    Tile first = X.at({i, 0}) * 2.0;
    Tile acc = p.fold(0, 3, p.zeros({kBlock, kBlock}), [&](Index k, Tile a) { return a + X.at({i, k}); });
    p.exit_if(i == 1);
    for (int64_t r = 0; r < kReads; ++r) acc = acc + X.at({i, r});
    p.write(y, {kBlock, kBlock}).put(acc + first, {i, 0});
  };
  const int64_t programs = cdiv(kRows, kBlock);
  std::string text = cpu::lowerToLLVMText(*trace({programs}, body).kernel);
  CHECK(text.find("define internal void @tj_kernel.chunk(") != std::string::npos);
  CHECK(run({programs}, body, {.device = "cpu"}) == "cpu");
  const std::vector<double> xs = x.values(), got = y.values();
  auto at = [&](int64_t row, int64_t col) { return col < cols ? xs[size_t(row * cols + col)] : 0.0; };
  double worst = 0;
  for (int64_t row = 0; row < kRows; ++row)
    for (int64_t c = 0; c < kBlock; ++c) {
      double want = 3 * at(row, c) + at(row, kBlock + c) + at(row, 2 * kBlock + c);
      for (int64_t r = 0; r < kReads; ++r) want += at(row, r * kBlock + c);
      if (row / kBlock == 1) want = 0;  // its program exited
      worst = std::max(worst, std::fabs(got[size_t(row * kBlock + c)] - want));
    }
  CHECK(worst < 1e-3);
}

}  // namespace tj
