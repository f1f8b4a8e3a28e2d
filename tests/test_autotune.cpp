// Autotuning: keys, tuning files (round trip, old and corrupt files, two
// processes), re-tuning exactly when a candidate's IR or the compiler changed,
// TILEJIT_AUTOTUNE=0 and failing candidates. The kernel is a tiny add on the
// cpu device, with one block size per candidate and timing cut to two runs.
#include <doctest/doctest.h>

#include "tests/support.hpp"
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dsl/tilejit.hpp"
#include "dsl/autotune.hpp"
#include "jit/cpu_target.hpp"
#include "jit/kernel_cache.hpp"

namespace tj {
namespace {

using test::CaptureLog;
using test::ScopedEnv;

namespace fs = std::filesystem;



TuneConfig block(int64_t b) { return {{{"block", b}}}; }

// out = a + offset(block) on the cpu, in blocks of the config's size. What a
// candidate does is set per block: its constant (so its IR), a failure, a delay.
struct AddProblem {
  std::string kernel = "add";
  fs::path file;
  int64_t n = 1000;
  std::vector<TuneConfig> configs = {block(256), block(512), block(1024)};
  std::map<int64_t, double> offset;        // default 1
  std::map<int64_t, std::string> failure;  // thrown when the kernel runs (not while traced)
  std::map<int64_t, int> delayMs;
  std::map<int64_t, std::string> fallback;  // the device ran it elsewhere, saying this
  std::map<int64_t, int> deviceRuns;       // body calls that ran the kernel, per block

  explicit AddProblem(fs::path f) : file(std::move(f)) {
    jit::kernelCache();  // created now, so a test's environment does not become its disk folder
  }

  void body(const TuneConfig& c) {
    int64_t b = c["block"];
    Tensor a = Tensor::full({n}, 2.0), out = Tensor::zeros({n});
    double value = offset.count(b) ? offset[b] : 1.0;
    std::string device = run({cdiv(n, b)}, [&](Program& p) {
      Index i = p.id(0);
      p.write(out, {b}).put(p.read(a, {b}).at({i}) + value, {i});
    }, {.name = kernel, .device = "cpu"});
    if (device == "none") return;  // traced by tune(), not run
    ++deviceRuns[b];
    if (failure.count(b)) throw Error(failure[b]);
    if (fallback.count(b)) LaunchWatch::record({.device = "interp", .fallbackReason = fallback[b]});
    if (delayMs.count(b)) std::this_thread::sleep_for(std::chrono::milliseconds(delayMs[b]));
  }

  TuneResult tune(TuneOptions options = {}) {
    options.file = file;
    options.minRuns = options.maxRuns = 2;
    options.slowFactor = 1e9;  // every candidate gets its two runs, so run counts are exact
    return tj::tune(kernel, configs, TuneKey{{n}, {f32}}, [this](const TuneConfig& c) { body(c); }, options);
  }

  int totalDeviceRuns() const {
    int total = 0;
    for (const auto& [b, runs] : deviceRuns) total += runs;
    return total;
  }

  TuningEntry stored() const { return loadTunings(file).at(kernel + "/1024/f32"); }
};

TuningEntry sampleEntry(const std::string& kernel, int64_t size) {
  TuningEntry e;
  e.kernel = kernel;
  e.key = TuneKey{{size, 7}, {f32, bf16}, true};
  e.compiler = "tilejit-test";
  e.chosen = block(64);
  e.candidates = {{block(64), "0123456789abcdef", 1.25, 5, ""},
                  {block(128), "fedcba9876543210+0000000000000001", 2.5, 1, ""},
                  {block(4096), "", std::nullopt, 0, "too big"}};
  e.tuneMs = 123.5;
  e.tunedAt = "2024-01-02T03:04:05Z";
  return e;
}

std::vector<fs::path> filesIn(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path().filename());
  return files;
}

bool startsWith(const fs::path& p, const std::string& prefix) { return p.string().rfind(prefix, 0) == 0; }


constexpr int kChildKeys = 8;

// What "two processes tuning at once" spawns; does nothing in a normal run.
// Tunes kernel $TILEJIT_TUNE_CHILD for kChildKeys sizes into $TILEJIT_TUNE_FILE.
TEST_CASE("autotune: child process") {
  const char* kernel = std::getenv("TILEJIT_TUNE_CHILD");
  if (!kernel) return;
  AddProblem problem(std::getenv("TILEJIT_TUNE_FILE"));
  problem.kernel = kernel;
  for (int i = 0; i < kChildKeys; ++i) {
    problem.n = int64_t{1} << (i + 4);
    REQUIRE(problem.tune().source == TuneSource::ran);
  }
  std::printf("child: tuned %d keys\n", kChildKeys);
}

TEST_CASE("autotune: keys bucket sizes up to powers of two unless exact") {
  CHECK(bucketSize(0) == 1);
  CHECK(bucketSize(1) == 1);
  CHECK(bucketSize(3) == 4);
  CHECK(bucketSize(1024) == 1024);
  CHECK(bucketSize(1025) == 2048);
  TuneKey key{{1000, 64, 3}, {f32, f16}};
  CHECK(key.bucketed() == std::vector<int64_t>{1024, 64, 4});
  CHECK(key.str() == "1024x64x4/f32,f16");
  CHECK(key == TuneKey{{1023, 33, 4}, {f32, f16}});
  CHECK_FALSE(key == TuneKey{{1025, 64, 3}, {f32, f16}});
  CHECK_FALSE(key == TuneKey{{1000, 64, 3}, {f32, f32}});
  TuneKey exact{{1000, 64, 3}, {f32}, true};
  CHECK(exact.str() == "1000x64x3/f32");
  CHECK(TuneKey{{5}, {}}.str() == "8");
  CHECK(TuningEntry::tuningId("gemm", key) == "gemm/1024x64x4/f32,f16");

  TuneConfig c{{{"block_m", 128}, {"block_k", 64}}};
  CHECK(c["block_m"] == 128);
  CHECK(c.str() == "block_k=64 block_m=128");
  CHECK_THROWS_WITH_AS(c["warps"], doctest::Contains("no value named 'warps'"), Error);
  CHECK(tuneSourceName(TuneSource::ran) == "ran");
  CHECK(tuneSourceName(TuneSource::file) == "file");
  CHECK(tuneSourceName(TuneSource::off) == "off");
}

TEST_CASE("autotune: the tuning file is per device under $TILEJIT_CACHE_DIR/tunings, none without a disk cache") {
  ScopedEnv on("TILEJIT_CACHE", nullptr), at("TILEJIT_CACHE_DIR", "/some/dir");
  fs::path file = tuningFilePath("cpu");
  CHECK(file.parent_path() == "/some/dir/tunings");
  CHECK(file.extension() == ".json");
  CHECK(file.stem().string().rfind("cpu-", 0) == 0);
  CHECK(file.stem().string().find('/') == std::string::npos);
  CHECK(tuningFilePath("interp") == "/some/dir/tunings/interp.json");
  // A GPU's file names its model too (lavapipe here, where Vulkan loads), or only its kind where it cannot open.
  std::string vulkan = tuningFilePath("vulkan").stem().string();
  CHECK(vulkan.rfind("vulkan", 0) == 0);
  if (vulkan != "vulkan") CHECK(vulkan.find("drv") != std::string::npos);
  ScopedEnv off("TILEJIT_CACHE", "0");
  CHECK(tuningFilePath("cpu").empty());
}

TEST_CASE("autotune: a tuning file round-trips through save and load: old and unknown fields load") {
  fs::path dir = test::scratchDir("tune", "roundtrip");
  fs::path file = dir / "sub" / "t.json";
  CHECK(loadTunings(file).empty());  // no file: no entries, and nothing created
  CHECK_FALSE(fs::exists(dir / "sub"));
  Tunings tunings;
  for (const TuningEntry& e : {sampleEntry("gemm", 100), sampleEntry("attention", 3)}) tunings[e.id()] = e;
  saveTunings(file, tunings);
  CHECK(loadTunings(file) == tunings);
  CHECK(tunings.count("gemm/100x7/f32,bf16") == 1);

  // An older or newer writer: fields missing, unknown ones added.
  std::ofstream(file) << R"({"format": 0, "future": [1, 2],
      "entries": {"k/8/f32": {"kernel": "k", "chosen": {"block": 8}, "candidates": [{"config": {"block": 8},
                  "median_ms": 0.5, "extra": {"a": 1}}], "someday": true}}})";
  Tunings old = loadTunings(file);
  REQUIRE(old.size() == 1);
  const TuningEntry& e = old.at("k/8/f32");
  CHECK(e.kernel == "k");
  CHECK(e.chosen == block(8));
  CHECK(e.compiler.empty());
  CHECK(e.key.sizes.empty());
  REQUIRE(e.candidates.size() == 1);
  CHECK(e.candidates[0].medianMs == 0.5);
  CHECK(e.candidates[0].irHash.empty());
  CHECK(e.candidates[0].runs == 0);
  fs::remove_all(dir);
}

TEST_CASE("autotune: a second tune of the same problem reads the file and times nothing") {
  fs::path dir = test::scratchDir("tune", "second");
  AddProblem problem(dir / "t.json");
  TuneResult first = problem.tune();
  CHECK(first.source == TuneSource::ran);
  CHECK(first.timedRuns == 9);  // 3 candidates: a warm-up and 2 timed runs each
  CHECK(problem.totalDeviceRuns() == 9);
  CHECK(first.tuneMs > 0);

  TuneResult second = problem.tune();
  CHECK(second.source == TuneSource::file);
  CHECK(second.chosen == first.chosen);
  CHECK(second.timedRuns == 0);
  CHECK(problem.totalDeviceRuns() == 9);

  problem.n = 1020;  // the same bucket
  CHECK(problem.tune().source == TuneSource::file);
  problem.n = 1025;  // the next one
  CHECK(problem.tune().source == TuneSource::ran);
  CHECK(loadTunings(problem.file).size() == 2);
  fs::remove_all(dir);
}

TEST_CASE("autotune: the fastest candidate is kept, with every candidate's time and IR hash") {
  fs::path dir = test::scratchDir("tune", "fastest");
  AddProblem problem(dir / "t.json");
  problem.delayMs = {{256, 20}, {1024, 20}};
  TuneResult r = problem.tune();
  CHECK(r.chosen == block(512));
  TuningEntry e = problem.stored();
  CHECK(e.kernel == "add");
  CHECK(e.key == TuneKey{{1000}, {f32}});
  CHECK(e.chosen == block(512));
  CHECK(e.compiler == jit::compilerBuildId());
  CHECK_FALSE(e.tunedAt.empty());
  REQUIRE(e.candidates.size() == 3);
  std::set<std::string> hashes;
  for (const CandidateRecord& c : e.candidates) {
    CAPTURE(c.config.str());
    REQUIRE(c.medianMs);
    CHECK(c.irHash.size() == 16);
    CHECK(c.error.empty());
    hashes.insert(c.irHash);
    CHECK((c.config == block(512) ? *c.medianMs < 20 : *c.medianMs >= 20));
  }
  CHECK(hashes.size() == 3);  // the block size is part of the IR
  fs::remove_all(dir);
}

TEST_CASE("autotune: a candidate the device ran elsewhere (a CPU fallback) is skipped, however fast") {
  fs::path dir = test::scratchDir("tune", "fallback");
  AddProblem problem(dir / "t.json");
  problem.delayMs = {{256, 20}, {1024, 20}};
  problem.fallback = {{512, "too much workgroup memory"}};
  TuneResult r = problem.tune();
  CHECK(r.chosen != block(512));
  for (const CandidateRecord& c : problem.stored().candidates)
    if (c.config == block(512)) {
      CHECK_FALSE(c.medianMs);
      CHECK(c.error == "a kernel ran elsewhere: too much workgroup memory");
    }
  fs::remove_all(dir);
}

TEST_CASE("autotune: when every candidate ran elsewhere, the first config is used untimed and nothing is stored") {
  fs::path dir = test::scratchDir("tune", "all-fallback");
  AddProblem problem(dir / "t.json");
  for (const TuneConfig& c : problem.configs) problem.fallback[c["block"]] = "no device";
  CaptureLog log;
  TuneResult r = problem.tune();
  CHECK(r.chosen == block(256));
  CHECK(r.source == TuneSource::off);
  CHECK(log.text().find("every candidate ran on another device") != std::string::npos);
  CHECK_FALSE(fs::exists(problem.file));
  fs::remove_all(dir);
}

TEST_CASE("autotune: an edited candidate is re-tuned, and only it is timed") {
  fs::path dir = test::scratchDir("tune", "edited");
  AddProblem problem(dir / "t.json");
  problem.tune();
  std::string oldHash = problem.stored().candidates[1].irHash;
  problem.deviceRuns.clear();
  problem.offset[512] = 2.0;  // the 512 kernel's IR changes; the others' do not
  TuneResult r = problem.tune();
  CHECK(r.source == TuneSource::ran);
  CHECK(r.timedRuns == 3);
  CHECK(problem.deviceRuns == std::map<int64_t, int>{{512, 3}});
  CHECK(problem.stored().candidates[1].irHash != oldHash);
  CHECK(problem.tune().source == TuneSource::file);

  problem.configs.push_back(block(128));  // an added config is the only one timed
  problem.deviceRuns.clear();
  CHECK(problem.tune().source == TuneSource::ran);
  CHECK(problem.deviceRuns == std::map<int64_t, int>{{128, 3}});
  fs::remove_all(dir);
}

TEST_CASE("autotune: changing an unrelated kernel re-tunes nothing else") {
  fs::path dir = test::scratchDir("tune", "unrelated");
  AddProblem add(dir / "t.json"), other(dir / "t.json");
  other.kernel = "other";
  add.tune();
  other.tune();
  REQUIRE(loadTunings(add.file).size() == 2);
  add.deviceRuns.clear();
  other.offset = {{256, 3.0}, {512, 3.0}, {1024, 3.0}};
  CHECK(other.tune().source == TuneSource::ran);
  TuneResult r = add.tune();
  CHECK(r.source == TuneSource::file);
  CHECK(r.timedRuns == 0);
  CHECK(add.deviceRuns.empty());
  fs::remove_all(dir);
}

TEST_CASE("autotune: another compiler build re-tunes") {
  fs::path dir = test::scratchDir("tune", "compiler");
  AddProblem problem(dir / "t.json");
  problem.tune();
  updateTunings(problem.file, [](Tunings& t) {
    for (auto& [id, e] : t) e.compiler = "tilejit-0.0.1 llvm-1";
  });
  TuneResult r = problem.tune();
  CHECK(r.source == TuneSource::ran);
  CHECK(r.timedRuns == 9);
  CHECK(problem.stored().compiler == jit::compilerBuildId());
  fs::remove_all(dir);
}

TEST_CASE("autotune: a corrupt tuning file is reported, set aside and tuned afresh") {
  const char* corruptions[] = {"{\"entries\": {\"add/1024/f32\": {\"kernel\": ", "[1, 2, 3]",
                               "{\"entries\": 5}", "{\"entries\": {\"x\": {\"key\": {\"dtypes\": [\"f7\"]}}}}",
                               "\x01\x02garbage"};
  for (const char* text : corruptions) {
    CAPTURE(text);
    fs::path dir = test::scratchDir("tune", "corrupt");
    AddProblem problem(dir / "t.json");
    std::ofstream(problem.file) << text;
    CaptureLog log;
    CHECK(problem.tune().source == TuneSource::ran);
    CHECK_MESSAGE(log.text().find("[warning]") != std::string::npos, log.text());
    CHECK_MESSAGE(log.text().find(problem.file.string() + " is corrupt") != std::string::npos, log.text());
    std::vector<fs::path> aside;
    for (const fs::path& f : filesIn(dir))
      if (startsWith(f, "t.json.corrupt-")) aside.push_back(f);
    REQUIRE(aside.size() == 1);
    CHECK(test::readText(dir / aside[0]) == text);
    CHECK(loadTunings(problem.file).size() == 1);
    CHECK(problem.tune().source == TuneSource::file);
    fs::remove_all(dir);
  }
}

TEST_CASE("autotune: entries with a negative or NaN time are dropped with a warning naming the file") {
  fs::path dir = test::scratchDir("tune", "times");
  fs::path file = dir / "t.json";
  Tunings tunings;
  auto add = [&](const std::string& kernel, const std::function<void(TuningEntry&)>& spoil) {
    TuningEntry e = sampleEntry(kernel, 100);
    spoil(e);
    tunings[e.id()] = e;
  };
  add("good", [](TuningEntry&) {});
  add("negative", [](TuningEntry& e) { e.candidates[1].medianMs = -0.5; });
  add("nan", [](TuningEntry& e) { e.candidates[0].medianMs = std::nan(""); });  // JSON keeps it as null
  add("tune_ms", [](TuningEntry& e) { e.tuneMs = -3.25; });
  saveTunings(file, tunings);
  CaptureLog log;
  Tunings loaded = loadTunings(file);
  CHECK(loaded.size() == 1);
  CHECK(loaded.count("good/100x7/f32,bf16") == 1);
  std::string text = log.text();
  CAPTURE(text);
  CHECK(text.find("[warning]") != std::string::npos);
  for (const char* why : {"negative/100x7/f32,bf16: median_ms is -0.5", "nan/100x7/f32,bf16: median_ms is null",
                          "tune_ms/100x7/f32,bf16: tune_ms is -3.25"})
    CHECK(text.find(file.string() + ": ignoring entry " + why) != std::string::npos);

  // A stored choice whose times are invalid is timed again, and the file mended.
  AddProblem problem(file);
  problem.tune();
  Tunings mended = loadTunings(file);
  TuningEntry stored = mended.at("add/1024/f32");
  stored.candidates[0].medianMs = -1;
  mended[stored.id()] = stored;
  saveTunings(file, mended);
  CHECK(problem.tune().source == TuneSource::ran);
  for (const CandidateRecord& c : problem.stored().candidates) CHECK(*c.medianMs >= 0);
  fs::remove_all(dir);
}

TEST_CASE("autotune: two processes tuning at once both land in the file") {
  fs::path dir = test::scratchDir("tune", "processes");
  fs::path file = dir / "t.json";
  auto child = [&](const std::string& kernel) {
    return "TILEJIT_TUNE_CHILD=" + kernel + " TILEJIT_TUNE_FILE='" + file.string() + "' TILEJIT_CACHE_DIR='" +
           dir.string() + "/kernels' " + test::binDir() + "/tilejit_tests -tc='autotune: child process'";
  };
  for (const test::CommandResult& r : test::runConcurrently({child("first"), child("second")})) {
    CHECK_MESSAGE(r.status == 0, r.output);
    CHECK_MESSAGE(r.output.find("child: tuned") != std::string::npos, r.output);
  }
  Tunings tunings = loadTunings(file);
  CHECK(tunings.size() == 2 * kChildKeys);
  CHECK(tunings.count("first/16/f32") == 1);
  CHECK(tunings.count("second/2048/f32") == 1);
  for (const fs::path& f : filesIn(dir)) CHECK_MESSAGE((f == "t.json" || f == "t.json.lock" || f == "kernels"), f);
  fs::remove_all(dir);
}

TEST_CASE("autotune: TILEJIT_AUTOTUNE=0 uses a valid stored choice, else the first config, and times nothing") {
  fs::path dir = test::scratchDir("tune", "off");
  AddProblem problem(dir / "t.json");
  problem.delayMs = {{256, 20}, {1024, 20}};
  {
    ScopedEnv off("TILEJIT_AUTOTUNE", "0");
    TuneResult r = problem.tune();
    CHECK(r.source == TuneSource::off);
    CHECK(r.chosen == block(256));
    CHECK(r.timedRuns == 0);
    CHECK_FALSE(fs::exists(problem.file));
  }
  CHECK(problem.tune().chosen == block(512));
  problem.deviceRuns.clear();
  {
    ScopedEnv off("TILEJIT_AUTOTUNE", "0");
    TuneResult r = problem.tune();
    CHECK(r.source == TuneSource::file);
    CHECK(r.chosen == block(512));
    problem.offset[512] = 5.0;  // the stored time no longer holds for the chosen kernel
    r = problem.tune();
    CHECK(r.source == TuneSource::off);
    CHECK(r.chosen == block(256));
  }
  CHECK(problem.totalDeviceRuns() == 0);
  CHECK(problem.tune({.autotune = true}).source == TuneSource::ran);
  fs::remove_all(dir);
}

TEST_CASE("autotune: a failing candidate is skipped with its reason: every one failing is an error") {
  fs::path dir = test::scratchDir("tune", "failing");
  AddProblem problem(dir / "t.json");
  problem.failure[512] = "out of shared memory";
  problem.configs.push_back({{{"block", 64}, {"unsupported", 1}}});
  auto traced = [&problem](const TuneConfig& c) {
    if (c.values.count("unsupported")) throw Error("this device has no such feature");
    problem.body(c);
  };
  CaptureLog log;
  TuneResult r = tune("add", problem.configs, TuneKey{{1000}, {f32}}, traced, {.file = problem.file, .minRuns = 2, .maxRuns = 2});
  CHECK(r.source == TuneSource::ran);
  CHECK(r.chosen != block(512));
  CHECK_MESSAGE(log.text().find("skipping block=512: out of shared memory") != std::string::npos, log.text());
  CHECK_MESSAGE(log.text().find("skipping block=64 unsupported=1: this device has no such feature") != std::string::npos,
                log.text());
  TuningEntry e = problem.stored();
  CHECK(e.candidates[1].error == "out of shared memory");
  CHECK_FALSE(e.candidates[1].medianMs);
  CHECK(e.candidates[3].irHash.empty());
  // Known failures are not retried.
  problem.deviceRuns.clear();
  CHECK(tune("add", problem.configs, TuneKey{{1000}, {f32}}, traced, {.file = problem.file}).source == TuneSource::file);
  CHECK(problem.deviceRuns.empty());

  problem.n = 5000;
  problem.configs.pop_back();
  problem.failure = {{256, "a"}, {512, "b"}, {1024, "c"}};
  CHECK_THROWS_WITH_AS(problem.tune(), doctest::Contains("every candidate failed; block=256: a; block=512: b"), Error);
  CHECK_THROWS_WITH_AS(tune("add", {}, TuneKey{{1}}, traced), doctest::Contains("no configs"), Error);
  fs::remove_all(dir);
}

TEST_CASE("autotune: the interpreter is never timed, and the default file lives in $TILEJIT_CACHE_DIR") {
  fs::path dir = test::scratchDir("tune", "default");
  AddProblem problem("");
  ScopedEnv at("TILEJIT_CACHE_DIR", dir.c_str()), on("TILEJIT_CACHE", nullptr);
  TuneResult interp = tune("add", problem.configs, TuneKey{{1000}}, [&](const TuneConfig& c) { problem.body(c); },
                           {.device = "interp"});
  CHECK(interp.source == TuneSource::off);
  CHECK(interp.chosen == block(256));
  CHECK(problem.deviceRuns.empty());
  CHECK(fs::is_empty(dir));

  CHECK(problem.tune({.device = "cpu"}).source == TuneSource::ran);
  CHECK(loadTunings(tuningFilePath("cpu")).size() == 1);
  fs::remove_all(dir);
}

TEST_CASE("autotune: tile-tune lists, shows and clears entries") {
  fs::path dir = test::scratchDir("tune", "tool");
  fs::path file = dir / "t.json";
  saveTunings(file, {{"gemm/100x7/f32,bf16", sampleEntry("gemm", 100)}, {"attention/3x7/f32,bf16", sampleEntry("attention", 3)}});
  auto tileTune = [&](const std::string& args) {
    return test::runConcurrently({test::binDir() + "/tile-tune --file '" + file.string() + "' " + args})[0];
  };
  test::CommandResult list = tileTune("list");
  CHECK(list.status == 0);
  CHECK_MESSAGE(list.output.find("2 entries") != std::string::npos, list.output);
  CHECK_MESSAGE(list.output.find("gemm/100x7/f32,bf16  block=64  1.250 ms") != std::string::npos, list.output);
  test::CommandResult show = tileTune("show gemm/100x7/f32,bf16");
  CHECK(show.status == 0);
  CHECK_MESSAGE(show.output.find("* block=64") != std::string::npos, show.output);
  CHECK_MESSAGE(show.output.find("failed: too big") != std::string::npos, show.output);
  CHECK_MESSAGE(show.output.find("fedcba9876543210+0000000000000001") != std::string::npos, show.output);
  test::CommandResult unknown = tileTune("show gemm/1/f32");
  CHECK(unknown.status == 1);
  CHECK_MESSAGE(unknown.output.find("no entry 'gemm/1/f32'") != std::string::npos, unknown.output);
  CHECK(tileTune("clear gemm/100x7/f32,bf16").status == 0);
  CHECK(loadTunings(file).size() == 1);
  CHECK(tileTune("clear").status == 0);
  CHECK(loadTunings(file).empty());
  fs::remove_all(dir);
}

// The entry's id names the dtype the sample runs in, so that the sample's own tuning finds it.
TEST_CASE("autotune: tile-tune pretunes in the dtype asked: attention 8-bit with its scales, gemm i8 and u8") {
  fs::path dir = test::scratchDir("tune", "pretune");
  fs::path file = dir / "t.json";
  auto tileTune = [&](const std::string& args) {
    return test::runConcurrently({test::binDir() + "/tile-tune --file '" + file.string() + "' --device cpu " + args})[0];
  };
  for (const char* dtype : {"bf16", "f8e4m3"}) {
    CAPTURE(dtype);
    test::CommandResult r = tileTune(std::string("pretune --sample attention --shape 1x2x70x32 --causal --dtype ") + dtype);
    CHECK_MESSAGE(r.status == 0, r.output);
    CHECK_MESSAGE(r.output.find("(ran,") != std::string::npos, r.output);
  }
  test::CommandResult list = tileTune("list");
  CHECK_MESSAGE(list.output.find("/bf16") != std::string::npos, list.output);
  CHECK_MESSAGE(list.output.find("/f8e4m3") != std::string::npos, list.output);
  test::CommandResult gemm8 = tileTune("pretune --sample gemm --shape 64x64x64 --dtype f8e4m3");
  CHECK(gemm8.status == 1);
  CHECK_MESSAGE(gemm8.output.find("take fixed blocks") != std::string::npos, gemm8.output);
  // Integer gemms: A of i8 or u8 times B of i8 into i32, under the id the sample looks up.
  for (const char* dtype : {"i8", "u8"}) {
    CAPTURE(dtype);
    test::CommandResult r = tileTune(std::string("pretune --sample gemm --shape 64x64x128 --dtype ") + dtype);
    CHECK_MESSAGE(r.status == 0, r.output);
    CHECK_MESSAGE(r.output.find("(ran,") != std::string::npos, r.output);
    CHECK_MESSAGE(tileTune("list").output.find(std::string("gemm/64x64x128/") + dtype) != std::string::npos, dtype);
  }
  test::CommandResult attention8 = tileTune("pretune --sample attention --shape 1x2x70x32 --dtype i8");
  CHECK(attention8.status == 1);
  CHECK_MESSAGE(attention8.output.find("--dtype i8: attention takes f32, f16, bf16") != std::string::npos,
                attention8.output);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tj
