// tile-tune: look at, clear and fill a device's tuning file (dsl/autotune.hpp).
//   tile-tune list                     every entry: id, choice, its time, when
//   tile-tune show ID                  one entry with every candidate
//   tile-tune clear [ID]               remove one entry, or all of them
//   tile-tune pretune --sample gemm --shape 2048x2048x2048 [--shape ...] [--dtype f16|i8|u8...]
//   tile-tune pretune --sample attention --shape 1x8x1024x64 [--causal] [--dtype bf16]
//                                      tune the sample kernels now, so that later runs only read the file
// --file F reads and writes F instead of the device's file; --device D picks the
// device (default: $TILEJIT_DEVICE or the best).
#include <CLI/CLI.hpp>
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <utility>

#include "dsl/autotune.hpp"
#include "jit/kernel_cache.hpp"
#include "samples/harness.hpp"
#include "samples/kernels.hpp"

using namespace tj;

namespace {

struct Options {
  std::string device, file, id, sample = "gemm", dtype = "f32";
  std::vector<std::string> shapes;
  bool causal = false;
};

std::filesystem::path tuningFile(const Options& o) {
  if (!o.file.empty()) return o.file;
  std::filesystem::path file = tuningFilePath(o.device);
  if (file.empty()) throw Error("the disk cache is off (TILEJIT_CACHE=0), so there is no tuning file; give --file");
  return file;
}

std::string bestTime(const TuningEntry& e) {
  for (const CandidateRecord& c : e.candidates)
    if (c.config == e.chosen && c.medianMs) return fmt::format("{:.3f} ms", *c.medianMs);
  return "-";
}

// Whether the entry was tuned by this build of the compiler (its kernels'
// IR can only be checked by tuning, which re-tunes what changed).
std::string compilerNote(const TuningEntry& e) {
  return e.compiler == jit::compilerBuildId() ? "" : "  (another compiler build: re-tuned on next use)";
}

int list(const Options& o) {
  std::filesystem::path file = tuningFile(o);
  Tunings tunings = loadTunings(file);
  std::printf("%s: %zu entries\n", file.c_str(), tunings.size());
  for (const auto& [id, e] : tunings)
    std::printf("%s  %s  %s  %s%s\n", id.c_str(), e.chosen.str().c_str(), bestTime(e).c_str(), e.tunedAt.c_str(),
                compilerNote(e).c_str());
  return 0;
}

const TuningEntry& entryOf(const Tunings& tunings, const std::string& id, const std::filesystem::path& file) {
  auto it = tunings.find(id);
  if (it == tunings.end()) throw Error("no entry '" + id + "' in " + file.string() + " (see tile-tune list)");
  return it->second;
}

void printCandidate(const CandidateRecord& c, bool chosen) {
  std::string result = c.medianMs ? fmt::format("{:10.3f} ms  median of {}", *c.medianMs, c.runs) : "failed: " + c.error;
  std::printf("  %s %-40s %s  ir %s\n", chosen ? "*" : " ", c.config.str().c_str(), result.c_str(),
              c.irHash.empty() ? "-" : c.irHash.c_str());
}

int show(const Options& o) {
  std::filesystem::path file = tuningFile(o);
  Tunings tunings = loadTunings(file);
  const TuningEntry& e = entryOf(tunings, o.id, file);
  std::printf("%s\n  kernel %s, sizes %s%s\n  compiler %s%s\n  tuned %s in %.0f ms; candidates (* chosen):\n",
              o.id.c_str(), e.kernel.c_str(), e.key.str().c_str(), e.key.exact ? " (exact)" : " (bucketed)",
              e.compiler.c_str(), compilerNote(e).c_str(), e.tunedAt.c_str(), e.tuneMs);
  for (const CandidateRecord& c : e.candidates) printCandidate(c, c.config == e.chosen);
  return 0;
}

int clear(const Options& o) {
  std::filesystem::path file = tuningFile(o);
  size_t removed = 0;
  updateTunings(file, [&](Tunings& t) {
    if (!o.id.empty()) entryOf(t, o.id, file);  // throws for an unknown id
    removed = o.id.empty() ? std::exchange(t, {}).size() : t.erase(o.id);
  });
  std::printf("%s: removed %zu entries\n", file.c_str(), removed);
  return 0;
}

std::vector<int64_t> parseShape(const std::string& text, size_t rank, const std::string& sample) {
  std::vector<int64_t> sizes;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, 'x');) {
    try {
      sizes.push_back(std::stoll(part));
    } catch (const std::exception&) {
      sizes.clear();
      break;
    }
  }
  if (sizes.size() != rank || std::ranges::any_of(sizes, [](int64_t s) { return s <= 0; }))
    throw Error("--shape '" + text + "': " + sample + " takes " + (rank == 3 ? "MxNxK" : "BATCHxHEADSxSEQxDIM") +
                " with positive sizes");
  return sizes;
}

TuneResult pretuneOne(const Options& o, const std::vector<int64_t>& s, const TuneOptions& tuning) {
  RunOptions run{.name = o.sample, .device = o.device};
  if (o.sample == "gemm") {
    DType dtype = samples::parseDTypeOption(o.dtype);
    if (isFloat8(dtype))
      throw Error("--dtype " + o.dtype + ": the gemm sample's 8-bit products (scaledGemm) take fixed blocks, not tuned ones");
    if (o.causal) throw Error("--causal: the gemm sample has no mask; it is attention's");
    auto [a, b, cType] = samples::gemmOperands(dtype, s[0], s[1], s[2]);
    return samples::tuneGemm(a, b, Tensor::empty({s[0], s[1]}, cType), run, tuning);
  }
  Shape shape(s.begin(), s.end());
  DType dtype = samples::parseDTypeOption(o.dtype);
  if (!isFloat(dtype)) throw Error("--dtype " + o.dtype + ": attention takes f32, f16, bf16, f8e4m3 or f8e5m2");
  Tensor q = Tensor::random(shape, 1, dtype), k = Tensor::random(shape, 2, dtype), v = Tensor::random(shape, 3, dtype);
  samples::AttentionScales scales;
  if (isFloat8(dtype)) {  // the FP8 kernel the sample runs: unit scales, v stored [batch, heads, dim, seq]
    const int64_t heads = s[0] * s[1], keyBlocks = cdiv(s[2], samples::kScaleBlock);
    v = Tensor::random({s[0], s[1], s[3], s[2]}, 3, dtype).transpose(2, 3);
    scales = {Tensor::full({heads, s[2], 1}, 1.0), Tensor::full({heads, keyBlocks, 1}, 1.0),
              Tensor::full({heads, keyBlocks, 1}, 1.0)};
  }
  return samples::tuneAttention(q, k, v, Tensor::empty(shape), o.causal, run, tuning, scales);
}

int pretune(const Options& o) {
  TuneOptions tuning{.file = tuningFile(o)};
  for (const std::string& text : o.shapes) {
    TuneResult r = pretuneOne(o, parseShape(text, o.sample == "gemm" ? 3 : 4, o.sample), tuning);
    std::printf("%s %s: %s  (%s, %.0f ms, %d runs)\n", o.sample.c_str(), text.c_str(), r.chosen.str().c_str(),
                std::string(tuneSourceName(r.source)).c_str(), r.tuneMs, r.timedRuns);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Lists, shows, clears and fills tilejit tuning files", "tile-tune");
  app.require_subcommand(1);
  app.fallthrough();
  Options o;
  app.add_option("--device", o.device, "the device whose file to use (default: $TILEJIT_DEVICE or the best)");
  app.add_option("--file", o.file, "a tuning file instead of the device's");
  CLI::App* listCmd = app.add_subcommand("list", "every entry: id, choice, its time, when it was tuned");
  CLI::App* showCmd = app.add_subcommand("show", "one entry with every candidate's config, time and IR hash");
  showCmd->add_option("id", o.id, "the entry, as list prints it: gemm/2048x2048x2048/f32")->required();
  CLI::App* clearCmd = app.add_subcommand("clear", "remove one entry, or every entry");
  clearCmd->add_option("id", o.id, "the entry (default: all)");
  CLI::App* pretuneCmd = app.add_subcommand("pretune", "tune sample kernels for the given shapes now");
  pretuneCmd->add_option("--sample", o.sample, "gemm or attention")->check(CLI::IsMember({"gemm", "attention"}));
  pretuneCmd->add_option("--shape", o.shapes, "gemm: MxNxK; attention: BATCHxHEADSxSEQxDIM (repeatable)")
      ->required();
  pretuneCmd
      ->add_option("--dtype", o.dtype,
                   "operand dtype: f32, f16, bf16; gemm also i8 and u8 (times B of i8, into i32); attention also "
                   "f8e4m3, f8e5m2 (with scales)")
      ->check(CLI::IsMember({"f32", "f16", "bf16", "f8e4m3", "f8e5m2", "i8", "u8"}));
  pretuneCmd->add_flag("--causal", o.causal, "attention with a causal mask");
  CLI11_PARSE(app, argc, argv);
  try {
    if (listCmd->parsed()) return list(o);
    if (showCmd->parsed()) return show(o);
    if (clearCmd->parsed()) return clear(o);
    return pretune(o);
  } catch (const Error& e) {
    std::fprintf(stderr, "tile-tune: %s\n", e.what());
    return 1;
  }
}
