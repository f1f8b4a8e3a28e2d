// Autotuning: pick the fastest of several configurations of a kernel once per
// device and problem size, and remember the choice across processes.
//
//   std::vector<TuneConfig> space = {{{{"block", 1024}}}, {{{"block", 256}}}};
//   TuneResult t = tune("add", space, TuneKey{{n}, {f32}}, [&](const TuneConfig& c) {
//     run({cdiv(n, c["block"])}, [&](Program& p) { ... c["block"] ... });
//   });
//   ... run the body with t.chosen ...
//
// tune() traces every candidate without running it (CaptureTraces) to learn the
// semantic hash of its IR. The tuning file of the device holds, per kernel name
// and key, every candidate's config, IR hash and median time, the choice and
// the compiler build id. A candidate whose config, IR hash and compiler match
// a stored one keeps its stored time; the others are timed on the device with
// wall-clock around the body (the CPU device's own timer): one warm-up run
// (which compiles), then the median of several runs, the candidates taking
// turns. So an edited kernel is re-tuned, an added config is the only one
// timed, and an unchanged kernel is never timed again.
//
// Tuning files: $TILEJIT_CACHE_DIR/tunings/<device features>.json (none when
// the disk cache is off), JSON, written atomically under a lock file with the
// other writers' entries merged in. A corrupt file is reported, renamed to
// <file>.corrupt-<time> and tuned afresh. TILEJIT_AUTOTUNE=0 times nothing: it
// uses the file's choice when it is still valid, else the first config.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.hpp"

namespace tj {

// Named integers the kernel body reads: block sizes, warps, stages, ...
struct TuneConfig {
  std::map<std::string, int64_t> values;
  int64_t operator[](const std::string& name) const;  // throws Error naming the missing value
  std::string str() const;                            // "block_k=64 block_m=128"
  bool operator==(const TuneConfig&) const = default;
};

// The problem a choice is kept for: its sizes, bucketed up to powers of two
// unless `exact`, and its dtypes. Build it from the arguments of the call.
struct TuneKey {
  std::vector<int64_t> sizes;
  std::vector<DType> dtypes;
  bool exact = false;
  std::vector<int64_t> bucketed() const;  // the sizes the key compares
  std::string str() const;                // "2048x1024x512/f32" (bucketed)
  bool operator==(const TuneKey& o) const { return bucketed() == o.bucketed() && dtypes == o.dtypes; }
};
int64_t bucketSize(int64_t n);  // the smallest power of two >= n (1 for n <= 1)

// Where a choice came from: timed in this call, read from the tuning file, or
// the first config untimed (TILEJIT_AUTOTUNE=0 without a valid entry, or a
// device whose speed means nothing, like the interpreter).
enum class TuneSource { ran, file, off };
std::string_view tuneSourceName(TuneSource s);  // "ran", "file", "off"

struct TuneOptions {
  std::string device;          // the device the body runs on; "" = $TILEJIT_DEVICE or the best
  std::filesystem::path file;  // "" = tuningFilePath(device)
  std::optional<bool> autotune;  // whether to time; unset = $TILEJIT_AUTOTUNE != "0"
  int minRuns = 3;             // timed runs per candidate, after the warm-up
  int maxRuns = 25;
  double minTotalMs = 50;      // more runs, up to maxRuns, until they add up to this
  double slowFactor = 3;       // a candidate this many times slower than the best is timed once
};

struct TuneResult {
  TuneConfig chosen;
  TuneSource source = TuneSource::off;
  double tuneMs = 0;  // spent in tune(): tracing, reading and writing the file, timing
  int timedRuns = 0;  // body calls that ran on the device, warm-ups included
};

// Chooses among `configs` for (kernel, key, device) and returns the choice;
// the caller then runs body(chosen). While timing, body runs each candidate
// several times on the real arguments, so it must give the same result when
// repeated (write its outputs, never accumulate into them). A candidate that
// throws (at trace, compile or run time) is skipped with a warning naming it;
// when every candidate fails, throws Error listing them. An empty `configs`
// is an Error.
TuneResult tune(const std::string& kernel, const std::vector<TuneConfig>& configs, const TuneKey& key,
                const std::function<void(const TuneConfig&)>& body, const TuneOptions& options = {});

// One candidate as measured: no median when it failed (then `error` says why).
struct CandidateRecord {
  TuneConfig config;
  std::string irHash;  // semantic hashes of the kernels its body runs, '+'-joined; "" if tracing failed
  std::optional<double> medianMs;
  int runs = 0;
  std::string error;
  bool operator==(const CandidateRecord&) const = default;
};

// Everything the file keeps for one (kernel, key).
struct TuningEntry {
  std::string kernel;
  TuneKey key;
  std::string compiler;  // jit::compilerBuildId() when tuned
  TuneConfig chosen;
  std::vector<CandidateRecord> candidates;
  double tuneMs = 0;
  std::string tunedAt;  // UTC, ISO 8601
  bool operator==(const TuningEntry&) const = default;
  std::string id() const { return tuningId(kernel, key); }
  static std::string tuningId(const std::string& kernel, const TuneKey& key) { return kernel + "/" + key.str(); }
};

// A tuning file's entries by id ("gemm/2048x2048x2048/f32").
using Tunings = std::map<std::string, TuningEntry>;

// The device's tuning file: $TILEJIT_CACHE_DIR/tunings/<id>.json, where the id
// is the CPU's feature string on the cpu device and the device name elsewhere;
// empty when the disk cache is off. "" = $TILEJIT_DEVICE or the best device.
std::filesystem::path tuningFilePath(const std::string& device = "");

// Reads a tuning file: empty when it does not exist. Unknown fields are
// ignored and missing ones defaulted; a file that is not a tuning file is
// reported, set aside as <file>.corrupt-<time> and read as empty.
Tunings loadTunings(const std::filesystem::path& file);
// Replaces the file's entries with `tunings`, atomically. Throws Error when
// it cannot write.
void saveTunings(const std::filesystem::path& file, const Tunings& tunings);
// Reads, changes and writes the file under its lock, so concurrent updates
// (from any process) all land. Throws Error when it cannot write.
void updateTunings(const std::filesystem::path& file, const std::function<void(Tunings&)>& change);

}  // namespace tj
