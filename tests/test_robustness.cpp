// Inputs that used to kill the process: tiles too big for a thread's stack on the
// CPU, tensors whose size overflows or does not fit in memory, a thread count no
// machine can start, a dump folder that is not a folder, a cache write past the file
// size limit; and a device index that used to be accepted silently. Each must run or throw
// tj::Error naming what and how much; never a signal or an uncaught exception.
#include <doctest/doctest.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "devices/cpu/thread_pool.hpp"
#include "dsl/tilejit.hpp"
#include "samples/harness.hpp"
#include "samples/kernels.hpp"
#include "tests/support.hpp"

using namespace tj;

namespace {

using test::CaptureLog;
using test::ScopedEnv;

const RunOptions kCpu{.name = "big", .device = "cpu"};

// This test binary running the child case below in `mode`, with `shell` run first (e.g. a ulimit).
test::CommandResult runChild(const std::string& mode, const std::string& shell = "") {
  return test::runCommand(shell + (shell.empty() ? "" : "; ") + "TILEJIT_ROBUSTNESS_CHILD=" + mode + " " +
                          test::binDir() + "/tilejit_tests -tc='robustness: child process'");
}

// c = a·b for one program of [block, block] tiles, with the K loop in a fold or as one dot.
void bigDot(const Tensor& a, const Tensor& b, const Tensor& c, int64_t block, bool fold) {
  run({1}, [&](Program& p) {
    auto A = p.read(a, {block, block});
    auto B = p.read(b, {block, block});
    Tile acc = fold ? p.fold(0, A.blocks(1), p.zeros({block, block}),
                             [&](Index k, Tile acc) { return acc + dot(A.at({0, k}), B.at({k, 0})); })
                    : dot(A.at({0, 0}), B.at({0, 0}));
    p.write(c, {block, block}).put(acc, {0, 0});
  }, kCpu);
}

// Row-major m x n times a vector, in float64; `absolute` multiplies |m| by |x|.
std::vector<double> matVec(const std::vector<double>& m, const std::vector<double>& x, bool absolute = false) {
  size_t cols = x.size(), rows = m.size() / cols;
  std::vector<double> y(rows, 0.0);
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) y[i] += absolute ? std::fabs(m[i * cols + j] * x[j]) : m[i * cols + j] * x[j];
  return y;
}

// Freivalds' check of c = a·b in O(n²): c·x against a·(b·x) for random x, each row
// within the f32 rounding bound of a k-term dot, 2·k·u·(|a|·|b|·|x|). An unwritten
// (NaN) or wrong element of c fails the row it is in.
void checkProduct(const Tensor& a, const Tensor& b, const Tensor& c) {
  int64_t k = a.dim(1);
  std::vector<double> av = a.values(), bv = b.values(), cv = c.values();
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (int trial = 0; trial < 2; ++trial) {
    std::vector<double> x(static_cast<size_t>(b.dim(1)));
    for (double& v : x) v = uniform(gen);
    std::vector<double> got = matVec(cv, x), want = matVec(av, matVec(bv, x));
    std::vector<double> bound = matVec(av, matVec(bv, x, true), true);
    for (size_t i = 0; i < got.size(); ++i) {
      CAPTURE(i);
      REQUIRE(std::fabs(got[i] - want[i]) <= 2.0 * static_cast<double>(k) * 0x1p-24 * bound[i]);
    }
  }
}

TEST_CASE("robustness: a dot of 900x900 f32 blocks in a fold runs on the cpu") {
  // K = 1000 takes two steps, the second masked; 897 rows and columns mask the edges too.
  Tensor a = Tensor::random({897, 1000}, 1), b = Tensor::random({1000, 899}, 2), c = samples::poisoned({897, 899});
  bigDot(a, b, c, 900, true);
  checkProduct(a, b, c);
}

TEST_CASE("robustness: a dot of 1024x1024 f32 blocks without a fold runs on the cpu") {
  Tensor a = Tensor::random({1001, 1024}, 3), b = Tensor::random({1024, 1023}, 4), c = samples::poisoned({1001, 1023});
  bigDot(a, b, c, 1024, false);
  checkProduct(a, b, c);
}

// Float64 softmax over each row.
std::vector<double> softmaxReference(const Tensor& x) {
  int64_t rows = x.dim(0), cols = x.dim(1);
  std::vector<double> v = x.values();
  for (int64_t r = 0; r < rows; ++r) {
    auto row = v.begin() + r * cols;
    double top = *std::max_element(row, row + cols), sum = 0;
    std::for_each(row, row + cols, [&](double& e) { sum += e = std::exp(e - top); });
    std::for_each(row, row + cols, [&](double& e) { e /= sum; });
  }
  return v;
}

TEST_CASE("robustness: softmax over rows of 400000 columns runs on the cpu") {
  // Each program's tiles are [2, 524288] f32, 4 MiB apiece: far beyond the stack budget.
  Tensor x = Tensor::random({3, 400001}, 5, f32, -4.0, 4.0), y = samples::poisoned({3, 400001});
  CHECK(samples::softmax(x, y, kCpu) == "cpu");
  std::vector<double> want = softmaxReference(x), got = y.values();
  for (size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    // exp within 2 ulps, the sum and the division one rounding each; relative to each value.
    REQUIRE(std::fabs(got[i] - want[i]) <= 1e-5 * want[i]);
  }
}

// What the parent cases spawn; does nothing in a normal test run.
//   oom:     launches a kernel whose 1 MiB tiles take 3 MiB past the stack, then again under
//            an address-space limit of 1 MiB more than it uses; prints "child: error: <message>"
//            for the Error the second launch must throw.
//   threads: a pool asked for 64 threads when the address space fits only a few stacks;
//            prints "child: threads=<n> covered=<programs run once>".
TEST_CASE("robustness: child process") {
  const char* mode = std::getenv("TILEJIT_ROBUSTNESS_CHILD");
  if (!mode) return;
  Tensor x = Tensor::random({3, 5}, 8), out = samples::poisoned({3, 5});
  auto limitAddressSpace = [](rlim_t extraBytes) {
    std::string status = test::readText("/proc/self/status");
    size_t at = status.find("VmSize:");
    REQUIRE(at != std::string::npos);
    rlim_t used = std::strtoull(status.c_str() + at + 7, nullptr, 10) * 1024;
    rlimit limit{used + extraBytes, used + extraBytes};
    REQUIRE(setrlimit(RLIMIT_AS, &limit) == 0);
  };
  if (std::string_view(mode) == "oom") {
    // Four [512, 512] f32 buffers (each used twice): the first on the stack, three on the heap.
    auto launch = [&] {
      run({1}, [&](Program& p) {
        Tile t = p.read(x, {512, 512}).at({0, 0});
        for (int i = 0; i < 3; ++i) t = (t + t.max(1, true)).exp();
        p.write(out, {512, 512}).put(t + t.min(0, true), {0, 0});
      }, kCpu);
    };
    launch();  // compiles it, and the heap block is had and freed
    limitAddressSpace(size_t{1} << 20);
    try {
      launch();
      std::printf("child: no error\n");
    } catch (const Error& e) {
      std::printf("child: error: %s\n", e.what());
    }
  } else {
    limitAddressSpace(size_t{48} << 20);  // a few 8 MiB thread stacks
    cpu::ThreadPool pool(64);
    std::vector<int> hits(1000);
    pool.parallelFor(1000, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) ++hits[static_cast<size_t>(i)];
    });
    std::printf("child: threads=%d covered=%d\n", pool.threads(),
                static_cast<int>(std::count(hits.begin(), hits.end(), 1)));
  }
}

TEST_CASE("robustness: a tile the heap cannot hold is an Error naming its bytes and not a crash") {
  test::CommandResult r = runChild("oom");
  CAPTURE(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("child: error: ") != std::string::npos);
  CHECK(r.output.find("out of memory") != std::string::npos);
  size_t need = r.output.find(" bytes of heap");
  REQUIRE(need != std::string::npos);
  size_t digits = r.output.find_last_not_of("0123456789", need - 1) + 1;
  CHECK(std::stoll(r.output.substr(digits, need - digits)) >= 3 << 20);  // three tiles past the stack at least
}

TEST_CASE("robustness: threads that cannot be created leave a smaller pool that works") {
  test::CommandResult r = runChild("threads");
  CAPTURE(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("covered=1000") != std::string::npos);
  CHECK(r.output.find("threads=64") == std::string::npos);
  CHECK(r.output.find("could not start") != std::string::npos);
}

TEST_CASE("robustness: TILEJIT_THREADS beyond any use is clamped with a warning") {
  test::CommandResult r = test::runCommand("TILEJIT_THREADS=100000 " + test::binDir() +
                                           "/vector_add --n=100003 --device=cpu --check");
  CAPTURE(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("check=pass") != std::string::npos);
  CHECK(r.output.find("TILEJIT_THREADS=100000") != std::string::npos);
}

TEST_CASE("robustness: TILEJIT_VULKAN_WARPS that is not a power of two the device allows is ignored with a warning") {
  if (!test::vulkanAvailable()) return;
  for (const char* bad : {"3", "0", "x", "4096"}) {
    test::CommandResult r = test::runCommand(std::string("TILEJIT_VULKAN_WARPS=") + bad + " " + test::binDir() +
                                             "/softmax --rows=37 --cols=301 --device=vulkan --check");
    CAPTURE(r.output);
    CHECK(r.status == 0);
    CHECK(r.output.find("device=vulkan") != std::string::npos);
    CHECK(r.output.find(std::string("TILEJIT_VULKAN_WARPS='") + bad + "' is not a power of two") != std::string::npos);
  }
}

TEST_CASE("robustness: tensor sizes that overflow or exceed memory are Errors naming the shape and bytes") {
  int64_t huge = int64_t{1} << 62;
  CHECK_THROWS_WITH_AS(Tensor::empty({huge}), doctest::Contains("[4611686018427387904]"), Error);
  CHECK_THROWS_WITH_AS(Tensor::empty({huge}), doctest::Contains("overflow"), Error);
  CHECK_THROWS_WITH_AS(Tensor::empty({int64_t{1} << 32, int64_t{1} << 32}), doctest::Contains("elements"), Error);
  // 2^48 f32 is 1 PiB: no machine has it, whatever its overcommit setting.
  CHECK_THROWS_WITH_AS(Tensor::zeros({int64_t{1} << 24, int64_t{1} << 24}), doctest::Contains("1125899906842624 bytes"),
                       Error);
  CHECK(Tensor::empty({0, huge}).numel() == 0);  // no elements: no overflow, whatever the other sizes

  test::CommandResult r = test::runCommand(test::binDir() + "/gemm --m=4611686018427387904 --n=1 --k=1");
  CAPTURE(r.output);
  CHECK(r.status == 1);
  CHECK(r.output.find("gemm: error: ") != std::string::npos);
  CHECK(r.output.find("Tensor::") != std::string::npos);
}

TEST_CASE("robustness: a TILEJIT_DUMP that is not a folder warns once and the kernels still run") {
  ScopedEnv dump("TILEJIT_DUMP", "/dev/null");
  CaptureLog log;
  Tensor a = Tensor::random({1000}, 9), b = Tensor::random({1000}, 10);
  for (int round = 0; round < 2; ++round) {
    Tensor out = samples::poisoned({1000});
    CHECK(samples::vectorAdd(a, b, out, {.name = "dump" + std::to_string(round), .device = "cpu"}) == "cpu");
    for (int64_t i = 0; i < 1000; i += 37) CHECK(out.item(i) == static_cast<float>(a.item(i) + b.item(i)));
  }
  std::string text = log.text();
  CAPTURE(text);
  size_t first = text.find("TILEJIT_DUMP");
  CHECK(first != std::string::npos);
  CHECK(text.find("/dev/null") != std::string::npos);
  CHECK(text.find("TILEJIT_DUMP", first + 1) == std::string::npos);
}

TEST_CASE("robustness: a cache write past ulimit -f warns with the system's reason and the kernel still runs") {
  // The write past the limit raised SIGXFSZ, whose default action killed the process.
  std::filesystem::path dir = test::scratchDir("robustness", "fsize");
  test::CommandResult r = test::runCommand("ulimit -f 1; TILEJIT_CACHE_DIR=" + dir.string() + " " + test::binDir() +
                                           "/vector_add --n=100003 --device=cpu --check");
  CAPTURE(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("cannot write kernel cache entry " + dir.string()) != std::string::npos);
  CHECK(r.output.find(": File too large") != std::string::npos);
  CHECK(r.output.find("device=cpu") != std::string::npos);
  CHECK(r.output.find("check=pass") != std::string::npos);
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))  // no torn entry, no temporary
    CHECK_MESSAGE(!e.is_regular_file(), e.path().string());
  std::filesystem::remove_all(dir);
}

TEST_CASE("robustness: a device index past those of its kind is an Error naming the ones there are") {
  CHECK(selectDevice("interp:0").name() == "interp");
  CHECK_THROWS_WITH_AS(selectDevice("interp:1"), "device: no device 'interp:1'; there is one: interp:0", Error);
  CHECK_THROWS_WITH_AS(selectDevice("cpu:7"), "device: no device 'cpu:7'; there is one: cpu:0", Error);
  CHECK_THROWS_WITH_AS(selectDevice("cpu:x"), "device: 'cpu:x' is not 'cpu' or 'cpu:N'", Error);
  CHECK(selectDevice("cpu:0").name() == "cpu");
  Tensor x = Tensor::random({100}, 11), y = samples::poisoned({100});
  CHECK_THROWS_WITH_AS(samples::vectorAdd(x, x, y, {.name = "index", .device = "cpu:7"}),
                       doctest::Contains("no device 'cpu:7'; there is one: cpu:0"), Error);
  test::CommandResult r = test::runCommand(test::binDir() + "/vector_add --n=100 --device=cpu:7");
  CAPTURE(r.output);
  CHECK(r.status != 0);
  CHECK(r.output.find("no device 'cpu:7'; there is one: cpu:0") != std::string::npos);
  if (!test::vulkanAvailable()) return;
  std::string vulkan0 = "vulkan:0 (" + vk::listDevices().at(0).name + ")";
  CHECK_THROWS_WITH_AS(selectDevice("vulkan:7"), doctest::Contains("no device 'vulkan:7'; there "), Error);
  CHECK_THROWS_WITH_AS(selectDevice("vulkan:7"), doctest::Contains(vulkan0.c_str()), Error);
}

}  // namespace
