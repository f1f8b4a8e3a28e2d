#include "dsl/autotune.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "devices/device.hpp"
#include "devices/interp/sanitizer.hpp"
#include "dsl/run.hpp"
#include "ir/passes.hpp"
#include "jit/cache_file.hpp"
#include "jit/cpu_target.hpp"
#include "jit/kernel_cache.hpp"
#include "jit/timing.hpp"

namespace tj {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr int kFormatVersion = 1;

using jit::Clock;
using jit::msSince;

// Appends `item` to a `separator`-joined list.
void append(std::string& list, std::string_view separator, std::string_view item) {
  if (!list.empty()) list += separator;
  list += item;
}

// The current UTC time with strftime's `format`.
std::string utcNow(const char* format) {
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[64];
  std::strftime(text, sizeof text, format, &utc);
  return text;
}

// ---- JSON: every field optional on reading, so older files still load.

json encodeKey(const TuneKey& k) {
  json dtypes = json::array();
  for (DType d : k.dtypes) dtypes.push_back(std::string(dtypeName(d)));
  return {{"sizes", k.bucketed()}, {"dtypes", dtypes}, {"exact", k.exact}};
}

TuneKey decodeKey(const json& j) {
  TuneKey k{j.value("sizes", std::vector<int64_t>{}), {}, j.value("exact", false)};
  for (const std::string& name : j.value("dtypes", std::vector<std::string>{})) {
    std::optional<DType> d = parseDType(name);
    if (!d) throw Error("unknown dtype '" + name + "'");
    k.dtypes.push_back(*d);
  }
  return k;
}

json encodeCandidate(const CandidateRecord& c) {
  json j = {{"config", c.config.values}, {"ir_hash", c.irHash}, {"runs", c.runs}};
  if (c.medianMs) j["median_ms"] = *c.medianMs;
  if (!c.error.empty()) j["error"] = c.error;
  return j;
}

// A time that cannot be one (negative, or NaN, which JSON stores as null): its
// entry is dropped, the rest of the file kept.
struct InvalidTime : Error {
  using Error::Error;
};

// A time field in milliseconds: a finite number, at least 0.
double decodeTime(const json& j, const char* field) {
  const json& v = j.at(field);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
    throw InvalidTime(std::string(field) + " is " + v.dump() + ", not a time in milliseconds");
  return v.get<double>();
}

CandidateRecord decodeCandidate(const json& j) {
  CandidateRecord c{{j.value("config", std::map<std::string, int64_t>{})}, j.value("ir_hash", ""), std::nullopt,
                    j.value("runs", 0), j.value("error", "")};
  if (j.contains("median_ms")) c.medianMs = decodeTime(j, "median_ms");
  return c;
}

json encodeEntry(const TuningEntry& e) {
  json candidates = json::array();
  for (const CandidateRecord& c : e.candidates) candidates.push_back(encodeCandidate(c));
  return {{"kernel", e.kernel},   {"key", encodeKey(e.key)}, {"compiler", e.compiler},
          {"chosen", e.chosen.values}, {"candidates", candidates}, {"tune_ms", e.tuneMs},
          {"tuned_at", e.tunedAt}};
}

TuningEntry decodeEntry(const json& j) {
  TuningEntry e;
  e.kernel = j.value("kernel", "");
  e.key = decodeKey(j.value("key", json::object()));
  e.compiler = j.value("compiler", "");
  e.chosen.values = j.value("chosen", std::map<std::string, int64_t>{});
  for (const json& c : j.value("candidates", json::array())) e.candidates.push_back(decodeCandidate(c));
  e.tuneMs = j.contains("tune_ms") ? decodeTime(j, "tune_ms") : 0.0;
  e.tunedAt = j.value("tuned_at", "");
  return e;
}

std::string encodeTunings(const Tunings& tunings) {
  json entries = json::object();
  for (const auto& [id, e] : tunings) entries[id] = encodeEntry(e);
  return json{{"format", kFormatVersion}, {"entries", entries}}.dump(2) + "\n";
}

// Throws (json or tj) exceptions for anything that is not a tuning file; drops,
// with a warning naming `file`, the entries with an invalid time.
Tunings decodeTunings(const std::string& text, const fs::path& file) {
  json j = json::parse(text);
  if (!j.is_object()) throw Error("not a JSON object");
  Tunings tunings;
  json entries = j.value("entries", json::object());  // named: items() refers to it
  for (const auto& [id, e] : entries.items()) {
    try {
      tunings[id] = decodeEntry(e);
    } catch (const InvalidTime& bad) {
      spdlog::warn("tilejit: tuning file {}: ignoring entry {}: {}", file.string(), id, bad.what());
    }
  }
  return tunings;
}

// ---- Files.

std::optional<std::string> readText(const fs::path& file) {
  try {
    std::optional<std::vector<char>> bytes = jit::readRegularFile(file);
    if (!bytes) return std::nullopt;
    return std::string(bytes->begin(), bytes->end());
  } catch (const Error& e) {
    throw Error("cannot read tuning file " + file.string() + ": " + e.what());
  }
}

// An exclusive flock on <file>.lock, so read-change-write cycles of different
// processes do not interleave. The lock file stays: removing it would race.
class FileLock {
 public:
  explicit FileLock(const fs::path& file) {
    fs::path path = file;
    path += ".lock";
    fs::create_directories(path.parent_path());
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error("cannot open " + path.string() + ": " + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) {
        ::close(fd_);
        throw Error("cannot lock " + path.string() + ": " + std::strerror(errno));
      }
  }
  ~FileLock() { ::close(fd_); }  // closing releases the lock
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

void setAside(const fs::path& file, const std::string& reason) {
  fs::path aside = file;
  aside += ".corrupt-" + utcNow("%Y%m%dT%H%M%SZ") + "-" + std::to_string(getpid());
  std::error_code ec;
  fs::rename(file, aside, ec);
  if (ec)
    spdlog::warn("tilejit: tuning file {} is corrupt ({}) and cannot be moved aside ({}); tuning afresh",
                 file.string(), reason, ec.message());
  else
    spdlog::warn("tilejit: tuning file {} is corrupt ({}); moved it to {} and tuning afresh", file.string(), reason,
                 aside.string());
}

// Call with the lock held, so that the file set aside is the corrupt one.
Tunings readOrSetAside(const fs::path& file) {
  std::optional<std::string> text = readText(file);
  if (!text) return {};
  try {
    return decodeTunings(*text, file);
  } catch (const std::exception& e) {
    setAside(file, e.what());
    return {};
  }
}

void writeAtomically(const fs::path& file, const std::string& text) {
  try {
    jit::writeFileAtomically(file, text);
  } catch (const std::exception& e) {
    throw Error("cannot write tuning file " + file.string() + ": " + e.what());
  }
}

// ---- Tuning.

using Body = std::function<void(const TuneConfig&)>;

bool autotuneFromEnvironment() {
  const char* v = std::getenv("TILEJIT_AUTOTUNE");
  return !(v && std::string_view(v) == "0");
}

// The interpreter's speed says nothing about any real device.
bool worthTiming(const std::string& device) { return device != "interp" && !interp::sanitizeRequested(); }

std::string fileNameSafe(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && !std::strchr("+-._", c)) c = '_';
  return s;
}

// The candidate with the hash of its IR, or the error that tracing it threw.
CandidateRecord traceCandidate(const TuneConfig& config, const Body& body) {
  CandidateRecord c;
  c.config = config;
  try {
    CaptureTraces capture;
    body(config);
    for (const ir::Kernel& k : capture.kernels())
      append(c.irHash, "+", ir::hashHex(ir::semanticHash(k)));
  } catch (const std::exception& e) {
    c.error = e.what();
  }
  return c;
}

// A stored measurement that still holds for `c`: same compiler, config and IR.
const CandidateRecord* reusable(const std::optional<TuningEntry>& stored, const CandidateRecord& c) {
  if (!stored || stored->compiler != jit::compilerBuildId()) return nullptr;
  for (const CandidateRecord& old : stored->candidates)
    if (old.config == c.config && old.irHash == c.irHash && (old.medianMs || !old.error.empty())) return &old;
  return nullptr;
}

const CandidateRecord* fastest(const std::vector<CandidateRecord>& candidates) {
  const CandidateRecord* best = nullptr;
  for (const CandidateRecord& c : candidates)
    if (c.medianMs && (!best || *c.medianMs < *best->medianMs)) best = &c;
  return best;
}

double median(std::vector<double> v) {
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

const std::string kRanElsewhere = "a kernel ran elsewhere: ";

// Times candidates in rounds, one body call of each per round, so that a burst
// of load from another process slows them alike instead of whichever ran
// during it. A candidate that throws is recorded as failed and dropped.
class Timing {
 public:
  Timing(const Body& body, const TuneOptions& options) : body_(body), options_(options) {}
  void add(CandidateRecord& c) { pending_.push_back({&c, {}, 1}); }
  int calls() const { return calls_; }

  // A warm-up round (it compiles), a first timed round, then rounds until each
  // candidate has its runs. `best`: the fastest stored median, if any.
  void run(std::optional<double> best) {
    round(false);
    round(true);
    for (const Pending& p : pending_)
      if (alive(p)) best = std::min(best.value_or(p.runs[0]), p.runs[0]);
    for (Pending& p : pending_)
      if (alive(p)) p.wanted = runsWanted(p.runs[0], *best);
    while (std::ranges::any_of(pending_, [&](const Pending& p) { return wantsMore(p); })) round(true);
    for (const Pending& p : pending_)
      if (alive(p)) {
        p.record->medianMs = median(p.runs);
        p.record->runs = static_cast<int>(p.runs.size());
      }
  }

 private:
  struct Pending {
    CandidateRecord* record;
    std::vector<double> runs;
    size_t wanted = 1;
  };

  static bool alive(const Pending& p) { return p.record->error.empty(); }
  static bool wantsMore(const Pending& p) { return alive(p) && p.runs.size() < p.wanted; }

  // Enough runs for minTotalMs within the limits; one for a candidate far
  // slower than the best, whose exact time does not matter.
  size_t runsWanted(double first, double best) const {
    if (first > options_.slowFactor * best) return 1;
    int runs = static_cast<int>(std::ceil(options_.minTotalMs / std::max(first, 1e-3)));
    return static_cast<size_t>(std::clamp(runs, std::max(options_.minRuns, 1), std::max(options_.maxRuns, 1)));
  }

  void round(bool timed) {
    for (Pending& p : pending_) {
      if (timed ? !wantsMore(p) : !alive(p)) continue;
      try {
        LaunchWatch launches;
        auto start = Clock::now();
        ++calls_;
        body_(p.record->config);
        if (const LaunchReport* fallback = launches.firstFallback())
          p.record->error = kRanElsewhere + fallback->fallbackReason;
        else if (timed) p.runs.push_back(msSince(start));
      } catch (const InternalError&) {
        throw;  // a bug: not a config to skip and remember in the tuning file
      } catch (const std::exception& e) {
        p.record->error = e.what();
      }
    }
  }

  const Body& body_;
  const TuneOptions& options_;
  std::vector<Pending> pending_;
  int calls_ = 0;
};

// Whether every candidate ran on another device than the one tuned for (a fallback).
bool allRanElsewhere(const std::vector<CandidateRecord>& candidates) {
  return std::ranges::all_of(candidates, [](const CandidateRecord& c) { return c.error.starts_with(kRanElsewhere); });
}

std::string allFailedMessage(const std::string& id, const std::vector<CandidateRecord>& candidates) {
  std::string message = "tune " + id + ": every candidate failed";
  for (const CandidateRecord& c : candidates) message += "; " + c.config.str() + ": " + c.error;
  return message;
}

std::optional<TuningEntry> findEntry(const fs::path& file, const std::string& id) {
  if (file.empty()) return std::nullopt;
  try {
    Tunings tunings = loadTunings(file);
    if (auto it = tunings.find(id); it != tunings.end()) return it->second;
  } catch (const std::exception& e) {
    spdlog::warn("tilejit: cannot read tuning file {}: {}; tuning afresh", file.string(), e.what());
  }
  return std::nullopt;
}

void storeEntry(const fs::path& file, const TuningEntry& entry) {
  if (file.empty()) return;
  try {
    updateTunings(file, [&](Tunings& t) { t[entry.id()] = entry; });
  } catch (const std::exception& e) {
    spdlog::warn("tilejit: cannot save tuning {}: {}", entry.id(), e.what());
  }
}

// Whether the stored choice may be used without timing: its kernel and the
// compiler are what were timed.
bool choiceStillValid(const std::optional<TuningEntry>& stored, const std::vector<CandidateRecord>& current) {
  if (!stored) return false;
  return std::ranges::any_of(current, [&](const CandidateRecord& c) {
    if (c.config != stored->chosen) return false;
    const CandidateRecord* old = reusable(stored, c);
    return old && old->medianMs;
  });
}

// Reuses the stored measurement of each candidate that has one and times the
// others; returns how many body calls that took. New failures are logged.
int measureCandidates(const std::string& id, std::vector<CandidateRecord>& candidates,
                      const std::optional<TuningEntry>& stored, const Body& body, const TuneOptions& options) {
  Timing timing(body, options);
  std::vector<CandidateRecord*> fresh;
  std::optional<double> best;
  for (CandidateRecord& c : candidates) {
    if (const CandidateRecord* old = reusable(stored, c)) {
      c = *old;
      if (c.medianMs) best = std::min(best.value_or(*c.medianMs), *c.medianMs);
    } else {
      fresh.push_back(&c);
      if (c.error.empty()) timing.add(c);
    }
  }
  timing.run(best);
  for (const CandidateRecord* c : fresh) {
    if (c->medianMs)
      spdlog::debug("tilejit: tune {}: {}: {:.3f} ms (median of {})", id, c->config.str(), *c->medianMs, c->runs);
    else
      spdlog::warn("tilejit: tune {}: skipping {}: {}", id, c->config.str(), c->error);
  }
  return timing.calls();
}

}  // namespace

// ---- Keys and configs.

int64_t TuneConfig::operator[](const std::string& name) const {
  auto it = values.find(name);
  if (it == values.end()) throw Error("tune: the config {" + str() + "} has no value named '" + name + "'");
  return it->second;
}

std::string TuneConfig::str() const {
  std::string s;
  for (const auto& [name, value] : values) append(s, " ", name + "=" + std::to_string(value));
  return s;
}

int64_t bucketSize(int64_t n) { return static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(n, 1)))); }

std::vector<int64_t> TuneKey::bucketed() const {
  if (exact) return sizes;
  std::vector<int64_t> b;
  for (int64_t s : sizes) b.push_back(bucketSize(s));
  return b;
}

std::string TuneKey::str() const {
  std::string s;
  for (int64_t size : bucketed()) append(s, "x", std::to_string(size));
  if (s.empty()) s = "-";
  std::string types;
  for (DType d : dtypes) append(types, ",", dtypeName(d));
  return types.empty() ? s : s + "/" + types;
}

std::string_view tuneSourceName(TuneSource s) {
  switch (s) {
    case TuneSource::ran: return "ran";
    case TuneSource::file: return "file";
    case TuneSource::off: return "off";
  }
  return "?";
}

// ---- Files.

fs::path tuningFilePath(const std::string& device) {
  fs::path dir = jit::KernelCache::diskDirFromEnvironment();
  if (dir.empty()) return {};
  Device& d = selectDevice(device);
  std::string id = d.name() == "cpu" ? jit::hostTarget().deviceFeatures : d.identity();
  return dir / "tunings" / (fileNameSafe(id) + ".json");
}

Tunings loadTunings(const fs::path& file) {
  std::optional<std::string> text = readText(file);
  if (!text) return {};
  try {
    return decodeTunings(*text, file);
  } catch (const std::exception&) {
  }
  FileLock lock(file);  // sets it aside under the lock, so that no writer's fresh file is the one moved
  return readOrSetAside(file);
}

void saveTunings(const fs::path& file, const Tunings& tunings) {
  FileLock lock(file);
  writeAtomically(file, encodeTunings(tunings));
}

void updateTunings(const fs::path& file, const std::function<void(Tunings&)>& change) {
  FileLock lock(file);
  Tunings tunings = readOrSetAside(file);
  change(tunings);
  writeAtomically(file, encodeTunings(tunings));
}

// ---- tune().

TuneResult tune(const std::string& kernel, const std::vector<TuneConfig>& configs, const TuneKey& key,
                const Body& body, const TuneOptions& options) {
  auto start = Clock::now();
  std::string id = TuningEntry::tuningId(kernel, key);
  if (configs.empty()) throw Error("tune " + id + ": no configs to choose from");
  std::string device = selectDevice(options.device).name();
  TuneResult result{configs.front(), TuneSource::off};
  auto finish = [&] {
    result.tuneMs = msSince(start);
    return result;
  };
  if (!worthTiming(device)) return finish();

  fs::path file = options.file.empty() ? tuningFilePath(device) : options.file;
  TuningEntry entry;
  entry.kernel = kernel;
  entry.key = key;
  entry.compiler = jit::compilerBuildId();
  for (const TuneConfig& c : configs) entry.candidates.push_back(traceCandidate(c, body));
  std::optional<TuningEntry> stored = findEntry(file, id);
  if (!options.autotune.value_or(autotuneFromEnvironment())) {
    if (choiceStillValid(stored, entry.candidates)) result = {stored->chosen, TuneSource::file};
    return finish();
  }

  result.timedRuns = measureCandidates(id, entry.candidates, stored, body, options);
  const CandidateRecord* best = fastest(entry.candidates);
  if (!best && allRanElsewhere(entry.candidates)) {  // nothing to learn about this device: keep no entry
    spdlog::warn("tilejit: tune {}: every candidate ran on another device; using {} untimed", id, configs.front().str());
    return finish();
  }
  if (!best) throw Error(allFailedMessage(id, entry.candidates));
  entry.chosen = result.chosen = best->config;
  result.source = result.timedRuns > 0 ? TuneSource::ran : TuneSource::file;
  bool changed = !stored || stored->candidates != entry.candidates || stored->chosen != entry.chosen;
  if (changed) {
    entry.tuneMs = msSince(start);
    entry.tunedAt = utcNow("%Y-%m-%dT%H:%M:%SZ");
    storeEntry(file, entry);
  }
  if (result.source == TuneSource::ran)
    spdlog::info("tilejit: tuned {} on {}: {} ({:.3f} ms) of {} configs in {:.0f} ms", id, device, best->config.str(),
                 *best->medianMs, configs.size(), msSince(start));
  return finish();
}

}  // namespace tj
