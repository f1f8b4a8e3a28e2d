// cpu-bench: tilejit's CPU kernels against oneDNN, OpenBLAS, the machine's FMA
// ceiling and memcpy, all measured on this machine in one run.
//
// Thread pools read their size from the environment when they start
// (TILEJIT_THREADS, OMP_NUM_THREADS for oneDNN, OPENBLAS_NUM_THREADS), and the
// kernel cache reads TILEJIT_CACHE_DIR, so the parent runs every group of
// measurements in a child process of itself with those set. A child writes
// lines the parent gathers into tables:
//   ROW <section>\t<cell>\t...     FIGURE <name> <value> <unit>
//   RATIO <name> <value>           INFO <name> <text>
#include <cblas.h>
#include <dnnl.h>
#include <dnnl.hpp>
#include <dnnl_debug.h>
#include <spawn.h>
#include <spdlog/fmt/fmt.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bench/measure.hpp"
#include "devices/cpu/cpu_device.hpp"
#include "samples/harness.hpp"
#include "samples/kernels.hpp"

extern char** environ;

namespace {

using namespace tj;
using namespace tj::bench;
namespace fs = std::filesystem;

// ---------------------------------------------------------------- child output

std::string gTag = "cpu-bench";  // prefixes a child's progress lines on stderr

void row(std::string_view section, const std::vector<std::string>& cells) {
  std::string line(section);
  for (const auto& c : cells) line += "\t" + c;
  std::printf("ROW %s\n", line.c_str());
  std::string progress;
  for (const auto& c : cells) progress += c + "  ";
  std::fprintf(stderr, "[%s] %s: %s\n", gTag.c_str(), std::string(section).c_str(), progress.c_str());
}
void figure(const std::string& name, double value, std::string_view unit) {
  std::printf("FIGURE %s %.6g %s\n", name.c_str(), value, std::string(unit).c_str());
}
void ratio(const std::string& name, double value) { std::printf("RATIO %s %.3f\n", name.c_str(), value); }
void info(const std::string& name, const std::string& text) { std::printf("INFO %s %s\n", name.c_str(), text.c_str()); }

std::string num(double v, int decimals = 1) { return fmt::format("{:.{}f}", v, decimals); }
double gflops(double flops, double seconds) { return flops / seconds / 1e9; }

// Every tilejit call names the CPU device: a benchmark that silently ran on the
// interpreter would be meaningless.
void onCpu(const std::string& device) {
  if (device != "cpu") throw Error("cpu-bench: a kernel ran on '" + device + "', not on the cpu device");
}
RunOptions cpuRun() { return {.name = "bench", .device = "cpu"}; }

int hostThreads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// ---------------------------------------------------------------- GEMM

struct GemmShape {
  int64_t m, n, k;
  bool quick;  // part of --quick
  std::string name() const { return m == n && n == k ? std::to_string(m) : fmt::format("{}x{}x{}", m, n, k); }
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
};
const GemmShape kGemmShapes[] = {{512, 512, 512, true},     {1024, 1024, 1024, true}, {2048, 2048, 2048, false},
                                 {4096, 4096, 4096, false}, {4096, 4096, 64, false},  {64, 4096, 4096, false},
                                 {4096, 64, 4096, false}};

// The block configs the autotuner tries on the CPU, each timed.
std::vector<samples::GemmBlocks> cpuGemmBlocks() {
  std::vector<samples::GemmBlocks> blocks;
  for (const TuneConfig& config : samples::gemmTuneSpace("cpu")) blocks.push_back(samples::GemmBlocks::from(config));
  return blocks;
}
std::string blocksName(const samples::GemmBlocks& b) { return fmt::format("{}x{}x{}", b.m, b.n, b.k); }

// A library's sgemm on row-major, contiguous operands.
struct Baseline {
  const char* id;
  void (*sgemm)(const GemmShape& s, const float* a, const float* b, float* c);
};
void onednnSgemm(const GemmShape& s, const float* a, const float* b, float* c) {
  if (dnnl_sgemm('N', 'N', s.m, s.n, s.k, 1.f, a, s.k, b, s.n, 0.f, c, s.n) != dnnl_success)
    throw Error("cpu-bench: dnnl_sgemm failed");
}
void openblasSgemm(const GemmShape& s, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(s.m), static_cast<blasint>(s.n),
              static_cast<blasint>(s.k), 1.f, a, static_cast<blasint>(s.k), b, static_cast<blasint>(s.n), 0.f, c,
              static_cast<blasint>(s.n));
}
// The first is the reference our output is checked against.
const Baseline kBaselines[] = {{"onednn", onednnSgemm}, {"openblas", openblasSgemm}};

const float* floats(const Tensor& t) { return static_cast<const float*>(t.data()); }

// max |got - ref| / max |ref|; a NaN counts as infinitely wrong.
template <class Got, class Ref>
double maxRelErr(const Got* got, const std::vector<Ref>& ref) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double d = std::fabs(static_cast<double>(got[i]) - ref[i]);
    err = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(err, d);
    scale = std::max(scale, std::fabs(static_cast<double>(ref[i])));
  }
  return err / std::max(scale, std::numeric_limits<double>::min());
}

struct OurGemm {
  double gflops = 0;
  samples::GemmBlocks blocks;
  double maxRelErr = 0;  // over every block config tried
  int64_t splits = 1;    // programs sharing a C block's K loop (split-K)
  std::string label() const { return blocksName(blocks) + (splits > 1 ? fmt::format(" split {}", splits) : ""); }
};
using TimeOurs = OurGemm (*)(const GemmShape&, const Tensor&, const Tensor&, const std::vector<float>&);

OurGemm timeOurGemm(const GemmShape& s, const Tensor& a, const Tensor& b, const std::vector<float>& ref) {
  OurGemm best;
  for (const auto& blocks : cpuGemmBlocks()) {
    Tensor c = samples::poisoned({s.m, s.n});  // NaN: an element a config fails to write is caught
    double sec = medianSeconds([&] { onCpu(samples::gemm(a, b, c, cpuRun(), blocks)); });
    best.maxRelErr = std::max(best.maxRelErr, maxRelErr(floats(c), ref));
    if (double g = gflops(s.flops(), sec); g > best.gflops) {
      best.gflops = g;
      best.blocks = blocks;
    }
  }
  return best;
}

// A skinny C with a long K: kSplitK programs per C block add their partial products into C
// with atomics, over the split-K tune space (C zeroed in each timed run: 16 KiB).
constexpr int64_t kSplitK = 16;
OurGemm timeOurSplitK(const GemmShape& s, const Tensor& a, const Tensor& b, const std::vector<float>& ref) {
  OurGemm best;
  best.splits = kSplitK;
  for (const TuneConfig& config : samples::gemmSplitKTuneSpace("cpu")) {
    const samples::GemmBlocks blocks = samples::GemmBlocks::from(config);
    Tensor c = samples::poisoned({s.m, s.n});
    double sec = medianSeconds([&] {
      c = Tensor::zeros({s.m, s.n});
      onCpu(samples::gemmSplitK(a, b, c, kSplitK, cpuRun(), blocks));
    });
    best.maxRelErr = std::max(best.maxRelErr, maxRelErr(floats(c), ref));
    if (double g = gflops(s.flops(), sec); g > best.gflops) {
      best.gflops = g;
      best.blocks = blocks;
    }
  }
  return best;
}

// One shape: the baselines, then ours; returns whether ours matched oneDNN.
bool gemmShape(const GemmShape& s, int threads, double fmaPeak, std::map<std::string, double>& ours,
               TimeOurs timeOurs = timeOurGemm) {
  Tensor a = Tensor::random({s.m, s.k}, 1), b = Tensor::random({s.k, s.n}, 2);
  std::vector<std::vector<float>> outs;
  std::vector<double> baseline;
  for (const auto& lib : kBaselines) {
    settle();
    auto& c = outs.emplace_back(static_cast<size_t>(s.m * s.n));
    baseline.push_back(gflops(s.flops(), medianSeconds([&] { lib.sgemm(s, floats(a), floats(b), c.data()); })));
  }
  settle();
  OurGemm our = timeOurs(s, a, b, outs[0]);
  ours[s.name()] = our.gflops;

  const std::string t = fmt::format("_t{}", threads);
  const std::string prefix = "gemm_f32_" + s.name() + (our.splits > 1 ? fmt::format("_split{}", our.splits) : "") + t;
  std::vector<std::string> cells = {fmt::format("{}x{}x{}", s.m, s.n, s.k), std::to_string(threads), num(our.gflops),
                                    our.label()};
  figure(prefix + "_gflops", our.gflops, "GFLOP/s");
  info(prefix + "_blocks", our.label());
  for (size_t i = 0; i < std::size(kBaselines); ++i) {
    cells.push_back(num(baseline[i]));
    figure(fmt::format("{}_f32_{}{}_gflops", kBaselines[i].id, s.name(), t), baseline[i], "GFLOP/s");
    ratio(prefix + "_vs_" + kBaselines[i].id, our.gflops / baseline[i]);
  }
  for (size_t i = 0; i < std::size(kBaselines); ++i) cells.push_back(num(our.gflops / baseline[i], 2));
  cells.push_back(num(our.gflops / fmaPeak, 2));
  ratio(prefix + "_vs_fma_peak", our.gflops / fmaPeak);
  const bool ok = our.maxRelErr <= samples::tolerance(DType::f32, s.k);
  cells.push_back(fmt::format("{:.2g}{}", our.maxRelErr, ok ? "" : " FAIL"));
  figure(prefix + "_max_rel_err", our.maxRelErr, "rel");
  row("gemm", cells);
  return ok;
}

bool gemmSection(int threads, bool quick, double fmaPeak, std::map<std::string, double>& ours) {
  bool ok = true;
  for (const auto& s : kGemmShapes)
    if (s.quick || !quick) ok = gemmShape(s, threads, fmaPeak, ours) && ok;
  // Split-K against our square GEMM at the largest size measured (2048, or 1024 with --quick).
  const GemmShape skinny{64, 64, 65536, true};
  ok = gemmShape(skinny, threads, fmaPeak, ours, timeOurSplitK) && ok;
  const std::string square = quick ? "1024" : "2048";
  ratio(fmt::format("gemm_f32_{}_split{}_t{}_vs_our_gemm_{}", skinny.name(), kSplitK, threads, square),
        ours[skinny.name()] / ours[square]);
  return ok;
}

// ---------------------------------------------------------------- mixed precision

// One operand dtype: ours at the best blocks against oneDNN's products of that dtype: its C
// GEMM API (sgemm, gemm_s8s8s32, gemm_u8s8s32) and its matmul primitive (bf16, which the GEMM
// API lacks, and the integer ones, which the primitive runs on AMX where the host has it and
// the GEMM API does not), where oneDNN implements them for the host's ISA; none for f16.
// f16/bf16 are checked against sgemm of the same values widened to f32, i8 exactly against
// s8s8s32, u8 x i8 (unsigned activations, as quantized inference runs) exactly against u8s8s32.
struct MixedCase {
  DType operands, result;
  const char* gemmPeer;  // oneDNN's C GEMM function, or nullptr
  bool matmulPeer;       // also oneDNN's matmul primitive of these dtypes
  DType right = operands;  // B's dtype
};
const MixedCase kMixedCases[] = {{DType::f32, DType::f32, "dnnl_sgemm", false},
                                 {DType::f16, DType::f32, nullptr, false},
                                 {DType::bf16, DType::f32, nullptr, true},
                                 {DType::i8, DType::i32, "dnnl_gemm_s8s8s32", true},
                                 {DType::u8, DType::i32, "dnnl_gemm_u8s8s32", true, DType::i8}};

struct PeerRun {
  std::string name;
  double rate;
};

// oneDNN's matmul primitive of a and b (plain row-major, as ours reads them) into c's dtype:
// its run, checked against `reference` (exactly for integers), or nothing where this oneDNN has
// no implementation for the host's ISA (2.6 needs AVX-512 for bf16), said once per dtype.
std::optional<PeerRun> onednnMatmul(const GemmShape& s, const Tensor& a, const Tensor& b, DType result,
                                    const std::vector<double>& reference) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  auto dnnlType = [](DType t) {
    return t == DType::bf16 ? dt::bf16 : t == DType::i8 ? dt::s8 : t == DType::u8 ? dt::u8 : t == DType::i32 ? dt::s32 : dt::f32;
  };
  const std::string name = fmt::format("dnnl matmul {}", dtypeName(a.dtype()));
  try {
    dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    dnnl::stream stream(engine);
    dnnl::memory::desc aDesc({s.m, s.k}, dnnlType(a.dtype()), tag::ab), bDesc({s.k, s.n}, dnnlType(b.dtype()), tag::ab),
        cDesc({s.m, s.n}, dnnlType(result), tag::ab);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(aDesc, bDesc, cDesc), engine);
    dnnl::matmul matmul(pd);
    static std::set<DType> named;
    if (named.insert(a.dtype()).second) info(name, fmt::format("runs oneDNN's {}", pd.impl_info_str()));
    Tensor c = Tensor::zeros({s.m, s.n}, result);
    dnnl::memory am(aDesc, engine, a.data()), bm(bDesc, engine, b.data()), cm(cDesc, engine, c.data());
    double rate = gflops(s.flops(), medianSeconds([&] {
      matmul.execute(stream, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
      stream.wait();
    }));
    double err = maxRelErr(c.values().data(), reference);
    if (result == DType::i32 ? err != 0 : err > samples::tolerance(DType::f32, s.k)) {
      std::printf("cpu-bench: %s (%s) differs from the reference by %.2g: left out as a peer\n", name.c_str(),
                  pd.impl_info_str(), err);
      return std::nullopt;
    }
    return PeerRun{name, rate};
  } catch (const dnnl::error& e) {
    static std::set<DType> said;
    if (said.insert(a.dtype()).second)
      std::printf("cpu-bench: oneDNN has no %s on this host (%s): %s\n", name.c_str(),
                  dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa()), e.what());
    return std::nullopt;
  }
}

// The reference product of a and b (oneDNN's C GEMM of them, in f32 for the float cases) and
// the peers' runs.
std::pair<std::vector<double>, std::vector<PeerRun>> mixedPeers(const MixedCase& mc, const GemmShape& s, const Tensor& a,
                                                                const Tensor& b) {
  std::vector<double> out;
  std::vector<PeerRun> peers;
  if (mc.result == DType::i32) {
    std::vector<int32_t> c(static_cast<size_t>(s.m * s.n));
    const int32_t offset = 0;
    const auto* b8 = static_cast<const int8_t*>(b.data());
    auto run = [&] {
      dnnl_status_t status =
          mc.operands == DType::u8
              ? dnnl_gemm_u8s8s32('N', 'N', 'F', s.m, s.n, s.k, 1.f, static_cast<const uint8_t*>(a.data()), s.k, 0, b8,
                                  s.n, 0, 0.f, c.data(), s.n, &offset)
              : dnnl_gemm_s8s8s32('N', 'N', 'F', s.m, s.n, s.k, 1.f, static_cast<const int8_t*>(a.data()), s.k, 0, b8,
                                  s.n, 0, 0.f, c.data(), s.n, &offset);
      if (status != dnnl_success) throw Error(std::string("cpu-bench: ") + mc.gemmPeer + " failed");
    };
    peers.push_back({mc.gemmPeer, gflops(s.flops(), medianSeconds(run))});
    out.assign(c.begin(), c.end());
  } else {
    Tensor af = Tensor::from(a.shape(), a.values()), bf = Tensor::from(b.shape(), b.values());  // exact widening
    std::vector<float> c(static_cast<size_t>(s.m * s.n));
    auto run = [&] { onednnSgemm(s, floats(af), floats(bf), c.data()); };
    if (mc.gemmPeer) peers.push_back({mc.gemmPeer, gflops(s.flops(), medianSeconds(run))});
    else run();  // only the reference
    out.assign(c.begin(), c.end());
  }
  if (mc.matmulPeer)
    if (std::optional<PeerRun> matmul = onednnMatmul(s, a, b, mc.result, out)) peers.push_back(*matmul);
  return {out, peers};
}

// f8e4m3 with DeepSeek-V3's scales (per row and 128 K of A, per 128x128 block of B), quantized
// by our kernel; oneDNN 2.6 has no FP8 product, so the reference is its sgemm of the dequantized
// operands (exactly A·B per element's scales). Returns whether the product matched.
bool scaledFp8Case(const GemmShape& s, int threads, double ourF32) {
  using samples::kScaleBlock;
  Tensor a32 = Tensor::random({s.m, s.k}, 1, DType::f32, -1, 1), b32 = Tensor::random({s.k, s.n}, 2, DType::f32, -1, 1);
  Tensor a = Tensor::empty({s.m, s.k}, DType::f8e4m3), b = Tensor::empty({s.k, s.n}, DType::f8e4m3);
  Tensor aScale = Tensor::empty({s.m, cdiv(s.k, kScaleBlock)});
  Tensor bScale = Tensor::empty({cdiv(s.k, kScaleBlock), cdiv(s.n, kScaleBlock)});
  onCpu(samples::quantizeFp8(a32, a, aScale, 1, cpuRun()));
  onCpu(samples::quantizeFp8(b32, b, bScale, kScaleBlock, cpuRun()));
  Tensor ad = Tensor::from(a.shape(), samples::dequantize(a, aScale, 1));
  Tensor bd = Tensor::from(b.shape(), samples::dequantize(b, bScale, kScaleBlock));
  std::vector<float> cRef(static_cast<size_t>(s.m * s.n));
  onednnSgemm(s, floats(ad), floats(bd), cRef.data());
  settle();
  Tensor c = samples::poisoned({s.m, s.n});
  const samples::GemmBlocks blocks = samples::scaledGemmBlocks(cpuRun());
  double rate = gflops(s.flops(), medianSeconds([&] {
    onCpu(samples::scaledGemm(a, aScale, b, bScale, c, cpuRun(), blocks));
  }));
  double err = maxRelErr(c.values().data(), cRef);
  const std::string name = fmt::format("gemm_f8e4m3_scaled_{}_t{}", s.name(), threads);
  figure(name + "_gflops", rate, "GFLOP/s");
  ratio(name + "_vs_our_f32", rate / ourF32);
  const bool ok = err <= samples::tolerance(DType::f32, s.k);
  row("mixed", {"f8e4m3 scaled", "f32", s.name(), std::to_string(threads), num(rate), "-", "-", "-",
                num(rate / ourF32, 2), fmt::format("{:.2g}{}", err, ok ? "" : " FAIL")});
  return ok;
}

// Each rate is also compared with our f32 rate measured just before it, in this section.
// Returns whether every product matched its reference.
bool mixedShape(const GemmShape& s, int threads) {
  double ourF32 = 0;
  bool allOk = true;
  for (const MixedCase& mc : kMixedCases) {
    // i8 in [-64, 63], u8 in [0, 255]: without VNNI oneDNN sums pairs of byte products in i16
    // (vpmaddubsw), which saturates past that range and gives a different, wrong product.
    const bool integer = mc.result == DType::i32;
    const double lo = integer ? -64 : -1, hi = integer ? 63 : 1;
    Tensor a = mc.operands == DType::u8 ? Tensor::random({s.m, s.k}, 1, DType::u8, 0, 255)
                                        : Tensor::random({s.m, s.k}, 1, mc.operands, lo, hi);
    Tensor b = Tensor::random({s.k, s.n}, 2, mc.right, lo, hi);
    settle();
    auto [ref, peers] = mixedPeers(mc, s, a, b);
    settle();
    double best = 0, err = 0;
    for (const auto& blocks : cpuGemmBlocks()) {
      Tensor c = samples::poisoned({s.m, s.n}, mc.result);
      double rate = gflops(s.flops(), medianSeconds([&] { onCpu(samples::gemm(a, b, c, cpuRun(), blocks)); }));
      err = std::max(err, maxRelErr(c.values().data(), ref));
      best = std::max(best, rate);
    }
    const std::string dtypes = mc.right == mc.operands ? std::string(dtypeName(mc.operands))
                                                       : fmt::format("{}{}", dtypeName(mc.operands), dtypeName(mc.right));
    const std::string name = fmt::format("gemm_{}_{}_t{}", dtypes, s.name(), threads);
    figure(name + "_gflops", best, integer ? "GOP/s" : "GFLOP/s");
    std::string vsF32 = "-";
    if (mc.operands == DType::f32) ourF32 = best;
    else if (ourF32 > 0) {
      vsF32 = num(best / ourF32, 2);
      ratio(name + "_vs_our_f32", best / ourF32);
    }
    // _vs_onednn: against the faster of oneDNN's products; a row per peer.
    double fastestPeer = 0;
    for (const PeerRun& peer : peers) fastestPeer = std::max(fastestPeer, peer.rate);
    if (fastestPeer > 0) ratio(name + "_vs_onednn", best / fastestPeer);
    const bool ok = integer ? err == 0 : err <= samples::tolerance(DType::f32, s.k);
    allOk = allOk && ok;
    if (peers.empty()) peers.push_back({"-", 0});
    for (const PeerRun& peer : peers)
      row("mixed", {mc.right == mc.operands ? std::string(dtypeName(mc.operands))
                                            : fmt::format("{} x {}", dtypeName(mc.operands), dtypeName(mc.right)),
                    std::string(dtypeName(mc.result)), s.name(), std::to_string(threads), num(best), peer.name,
                    peer.rate > 0 ? num(peer.rate) : "-", peer.rate > 0 ? num(best / peer.rate, 2) : "-", vsF32,
                    fmt::format("{:.2g}{}", err, ok ? "" : " FAIL")});
  }
  return scaledFp8Case(s, threads, ourF32) && allOk;
}

// ---------------------------------------------------------------- FMA ceiling

double fmaSection(int threads) {
  double peak = fmaPeakGflops(threads);
  row("fma", {std::to_string(threads), hostFmaLoop().isa, num(peak)});
  figure(fmt::format("fma_peak_t{}_gflops", threads), peak, "GFLOP/s");
  return peak;
}

// ---------------------------------------------------------------- memory-bound kernels

struct Streaming {
  const char* name;
  std::string shape;
  double bytes;  // read plus written by one run
  std::function<void()> run;
};

void bandwidthSection(int threads) {
  const int64_t n = int64_t{1} << 24, rows = 4096, cols = 1024;
  Tensor a = Tensor::random({n}, 1), b = Tensor::random({n}, 2), c = Tensor::random({n}, 3), out = Tensor::empty({n});
  Tensor x = Tensor::random({rows, cols}, 4), y = Tensor::empty({rows, cols});
  const int64_t vocab = 32000, dim = 1024, lookups = 8192;
  Tensor table = Tensor::random({vocab, dim}, 5), ids = Tensor::random({lookups}, 6, DType::i32, 0, vocab - 1);
  Tensor rowsOut = Tensor::empty({lookups, dim});
  Tensor values = Tensor::random({n}, 7, DType::i32, 0, 1023), counts = Tensor::zeros({1024}, DType::i32);
  const Streaming kernels[] = {
      {"fused", "relu(a*b+c), 16M", 4.0 * 4 * static_cast<double>(n),
       [&] { onCpu(samples::fused(a, b, c, out, cpuRun())); }},
      {"softmax", fmt::format("{}x{}", rows, cols), 2.0 * 4 * static_cast<double>(rows * cols),
       [&] { onCpu(samples::softmax(x, y, cpuRun())); }},
      {"embedding", fmt::format("{} rows of {}x{}", lookups, vocab, dim), 2.0 * 4 * static_cast<double>(lookups * dim),
       [&] { onCpu(samples::embedding(table, ids, rowsOut, cpuRun())); }},
      {"histogram", "16M i32 into 1024 bins (atomic adds)", 4.0 * static_cast<double>(n),
       [&] { onCpu(samples::histogram(values, counts, cpuRun())); }},
  };
  for (const auto& k : kernels) {
    double sec = medianSeconds(k.run), gbps = k.bytes / sec / 1e9, copy = samples::memcpyGBps(k.bytes);
    row("bandwidth",
        {k.name, k.shape, std::to_string(threads), num(sec * 1e3, 2), num(gbps), num(copy), num(gbps / copy, 2)});
    figure(std::string(k.name) + "_gbps", gbps, "GB/s");
    figure(std::string(k.name) + "_memcpy_gbps", copy, "GB/s");
    ratio(std::string(k.name) + "_vs_memcpy", gbps / copy);
  }
}

// ---------------------------------------------------------------- attention

struct AttentionSpec {
  int64_t seq, dim;
  bool causal;
};
constexpr int64_t kBatch = 1, kHeads = 2;

// seq x {64, 128}; causal too at the sequence the GEMM ratio is named after.
std::vector<AttentionSpec> attentionSpecs(bool quick) {
  const std::vector<int64_t> seqs = quick ? std::vector<int64_t>{1024} : std::vector<int64_t>{1024, 2048, 4096};
  const int64_t causalSeq = quick ? 1024 : 2048;
  std::vector<AttentionSpec> specs;
  for (int64_t seq : seqs)
    for (int64_t dim : {64, 128}) {
      specs.push_back({seq, dim, false});
      if (seq == causalSeq) specs.push_back({seq, dim, true});
    }
  return specs;
}

void attentionOne(const AttentionSpec& s, int threads, const std::map<std::string, double>& gemm) {
  const Shape shape = {kBatch, kHeads, s.seq, s.dim};
  Tensor q = Tensor::random(shape, 1), k = Tensor::random(shape, 2), v = Tensor::random(shape, 3);
  Tensor o = Tensor::empty(shape);
  // The blocks the sample's autotuner picks (timed once, then read from the tuning file).
  const auto blocks = samples::AttentionBlocks::from(samples::tuneAttention(q, k, v, o, s.causal, cpuRun()).chosen);
  double sec = medianSeconds([&] { onCpu(samples::attention(q, k, v, o, s.causal, cpuRun(), blocks)); });
  double flops = 4.0 * static_cast<double>(s.seq * s.seq * s.dim * kBatch * kHeads) / (s.causal ? 2 : 1);
  double g = gflops(flops, sec);
  std::string name = fmt::format("attention_f32_s{}_d{}{}", s.seq, s.dim, s.causal ? "_causal" : "");
  figure(name + "_gflops", g, "GFLOP/s");
  std::string vsGemm = "-";
  if (auto it = gemm.find(std::to_string(s.seq)); it != gemm.end()) {
    vsGemm = num(g / it->second, 2);
    ratio(name + "_vs_gemm", g / it->second);
  }
  row("attention", {std::to_string(s.seq), std::to_string(s.dim), s.causal ? "yes" : "no", std::to_string(threads),
                    fmt::format("{}x{}", blocks.m, blocks.n), num(sec * 1e3, 2), num(g), vsGemm});
}

// ---------------------------------------------------------------- compile, disk cache, launch

// The launch overhead of one tiny kernel, cached in memory: through run(), which
// traces the body at every call, and through a Kernel handle, which does not.
void launchSection() {
  constexpr int64_t kBlock = 1024;
  const auto add = kernel("vector_add", [](Program& p, const Tensor& a, const Tensor& b, const Tensor& out) {
    Index i = p.id(0);
    p.write(out, {kBlock}).put(p.read(a, {kBlock}).at({i}) + p.read(b, {kBlock}).at({i}), {i});
  });
  Tensor a = Tensor::random({16}, 1), b = Tensor::random({16}, 2), out = Tensor::empty({16});
  const struct {
    const char *path, *figure;
    std::function<std::string()> launch;
  } paths[] = {
      {"run(): trace + cache lookup + launch", "launch_run_us",
       [&] { return samples::vectorAdd(a, b, out, cpuRun()); }},
      {"Kernel handle: launch", "launch_kernel_us", [&] { return add.launch({1}, a, b, out, cpuRun()); }},
  };
  for (const auto& p : paths) {
    onCpu(p.launch());  // compiles or loads; then it is cached in memory
    std::vector<double> us(10000);
    for (auto& u : us) u = secondsOf([&] { p.launch(); }) * 1e6;
    row("launch", {p.path, "vector add, 16 elements, 1 program", num(median(us), 2)});
    figure(p.figure, median(us), "us");
  }
}

// The kernels whose compile and disk-load times are reported, in this order: the
// first kernel of a process also pays for starting the JIT, so it is a tiny one and
// reported on its own. Sizes are runtime arguments: small tensors, the same code.
struct CompileSpec {
  const char* name;
  std::string label;
  std::function<std::string()> run;
};

// The CPU time of this thread (tracing and compiling run on it) while f runs, in ms.
double threadCpuMs(const std::function<void()>& f) {
  auto now = [] {
    rusage usage{};
    getrusage(RUSAGE_THREAD, &usage);
    return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 +
           static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3;
  };
  double start = now();
  f();
  return now() - start;
}

// A C++ loop in the kernel lambda, unrolled by the trace into `reads` block reads summed: 5 ops
// a read (issue 27's kernel; the trace-size warning fires). Each count is a new kernel, compiled
// cold; the row fails when the sum is wrong.
bool straightLineSection() {
  constexpr int64_t kBlock = 16;
  bool ok = true;
  for (int reads : {1000, 2000, 4000}) {
    Tensor x = Tensor::random({reads * kBlock}, 7), y = Tensor::empty({kBlock});
    double firstMs = 0;
    LaunchWatch launches;
    const double cpuMs = threadCpuMs([&] {
      firstMs = secondsOf([&] {
        onCpu(run({1}, [&](Program& p) {
          Index i = p.id(0);
          auto X = p.read(x, {kBlock});
          Tile acc = p.zeros({kBlock});
          for (int r = 0; r < reads; ++r) acc = acc + X.at({i * reads + r});
          p.write(y, {kBlock}).put(acc, {i});
        }, cpuRun()));
      }) * 1e3;
    });
    const LaunchReport& launch = launches.last();
    std::vector<double> want(kBlock);
    const std::vector<double> xs = x.values(), got = y.values();
    for (int64_t e = 0; e < reads * kBlock; ++e) want[size_t(e % kBlock)] += xs[size_t(e)];
    const bool right = maxRelErr(got.data(), want) <= samples::tolerance(DType::f32, reads);
    if (launch.cache != jit::CacheSource::compiled)
      std::fprintf(stderr, "cpu-bench: the %d-read trace came from the %s cache, expected a compile\n", reads,
                   std::string(jit::cacheSourceName(launch.cache)).c_str());
    ok = ok && right && launch.cache == jit::CacheSource::compiled;
    row("compile", {fmt::format("straight-line trace, {} block reads{}", reads, right ? "" : " FAIL"),
                    std::string(jit::cacheSourceName(launch.cache)), num(launch.compileMs, 2), num(firstMs, 2)});
    figure(fmt::format("compile_straight_{}_reads_ms", reads), launch.compileMs, "ms");
    figure(fmt::format("compile_straight_{}_reads_first_call_cpu_ms", reads), cpuMs, "ms");
  }
  return ok;
}

// cold: a fresh TILEJIT_CACHE_DIR, so each kernel compiles; else the same
// folder in a new process, so each loads from disk.
bool compileChild(bool cold) {
  Tensor a = Tensor::random({256, 256}, 1), b = Tensor::random({256, 256}, 2), c = Tensor::empty({256, 256});
  const Shape heads = {1, 2, 256, 64};
  Tensor q = Tensor::random(heads, 3), k = Tensor::random(heads, 4), v = Tensor::random(heads, 5),
         o = Tensor::empty(heads);
  Tensor x = Tensor::random({16}, 6), y = Tensor::empty({16});
  const CompileSpec specs[] = {
      {"first_kernel", "vector add, first kernel (JIT start-up)",
       [&] { return samples::vectorAdd(x, x, y, cpuRun()); }},
      {"gemm", "gemm, blocks " + blocksName(samples::GemmBlocks{}), [&] { return samples::gemm(a, b, c, cpuRun()); }},
      {"attention", "attention, d64", [&] { return samples::attention(q, k, v, o, false, cpuRun()); }},
  };
  const jit::CacheSource expected = cold ? jit::CacheSource::compiled : jit::CacheSource::disk;
  bool ok = true;
  for (const auto& s : specs) {
    LaunchWatch launches;
    double first = secondsOf([&] { onCpu(s.run()); }) * 1e3;
    const LaunchReport& launch = launches.last();
    double ms = launch.compileMs;  // compiling cold, loading warm
    std::string source(jit::cacheSourceName(launch.cache));
    if (launch.cache != expected) {
      std::fprintf(stderr, "cpu-bench: %s came from the %s cache, expected %s\n", s.name, source.c_str(),
                   std::string(jit::cacheSourceName(expected)).c_str());
      ok = false;
    }
    row("compile", {s.label, source, num(ms, 2), num(first, 2)});
    figure(fmt::format("{}_{}_ms", cold ? "compile" : "disk_hit", s.name), ms, "ms");
  }
  if (cold) ok = straightLineSection() && ok;
  else launchSection();
  return ok;
}

// ---------------------------------------------------------------- a child's whole run

// With `mixedOnly` (--mixed) just the mixed-precision GEMMs, at every square size from 1024.
bool computeChild(int threads, bool quick, bool mixedOnly) {
  openblas_set_num_threads(threads);
  if (mixedOnly) {
    bool ok = true;
    for (const auto& s : kGemmShapes)
      if (s.m == s.n && s.n == s.k && s.m >= 1024) ok = mixedShape(s, threads) && ok;
    return ok;
  }
  double peak = fmaSection(threads);
  std::map<std::string, double> gemm;
  bool ok = gemmSection(threads, quick, peak, gemm);
  // Memory-bound kernels and attention are reported with every thread.
  if (threads == hostThreads()) {
    for (const auto& s : kGemmShapes)
      if (s.m == s.n && s.n == s.k && s.m <= (quick ? 1024 : 2048) && s.m >= 1024) ok = mixedShape(s, threads) && ok;
    bandwidthSection(threads);
    for (const auto& s : attentionSpecs(quick)) attentionOne(s, threads, gemm);
  }
  return ok;
}

int childMain(const std::string& role, int threads, bool quick, bool mixedOnly) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines reach the parent even if we crash later
  gTag = role == "compute" ? fmt::format("t{}", threads) : role;
  try {
    bool ok = role == "compute" ? computeChild(threads, quick, mixedOnly) : compileChild(role == "cold");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cpu-bench (%s): error: %s\n", role.c_str(), e.what());
    return 1;
  }
}

// ---------------------------------------------------------------- parent: processes

// Not the resolved path: a rebuild during the run replaces that file, while
// /proc/self/exe stays this very program.
constexpr const char* kSelf = "/proc/self/exe";

using Env = std::map<std::string, std::string>;

// This process's environment with `overrides` replacing or adding variables.
std::vector<std::string> childEnvironment(const Env& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string_view kv(*e);
    if (!overrides.contains(std::string(kv.substr(0, kv.find('='))))) env.emplace_back(kv);
  }
  for (const auto& [k, v] : overrides) env.push_back(k + "=" + v);
  return env;
}

std::vector<char*> cStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

struct ChildRun {
  bool ok = false;
  std::vector<std::string> lines;  // its stdout
};

// Runs this program with `args` and the environment changed by `env`; its stderr
// (progress) goes straight through, its stdout is returned.
ChildRun runChild(std::vector<std::string> args, const Env& env) {
  args.insert(args.begin(), "cpu-bench");
  std::vector<std::string> envStrings = childEnvironment(env);
  auto argv = cStrings(args), envp = cStrings(envStrings);
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("cpu-bench: pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  pid_t pid = 0;
  int err = posix_spawn(&pid, kSelf, &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  ChildRun run;
  FILE* in = fdopen(fds[0], "r");
  char* line = nullptr;
  size_t cap = 0;
  for (ssize_t len; err == 0 && (len = getline(&line, &cap, in)) > 0;)
    run.lines.emplace_back(line, static_cast<size_t>(line[len - 1] == '\n' ? len - 1 : len));
  std::free(line);
  std::fclose(in);
  int status = 0;
  if (err == 0) waitpid(pid, &status, 0);
  run.ok = err == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!run.ok)
    std::fprintf(stderr, "cpu-bench: child '%s' failed (%s)\n", args[1].c_str(),
                 err ? std::strerror(err) : fmt::format("status {}", status).c_str());
  return run;
}

Env threadEnv(int threads) {
  std::string n = std::to_string(threads);
  return {{"TILEJIT_THREADS", n}, {"OMP_NUM_THREADS", n}, {"OPENBLAS_NUM_THREADS", n}};
}

// ---------------------------------------------------------------- parent: report

struct Section {
  std::string_view id, title;
  std::vector<std::string_view> columns;
};
const Section kSections[] = {
    {"fma", "FMA ceiling (register-only FMA loop, independent accumulators)", {"threads", "isa", "GFLOP/s"}},
    {"gemm",
     "GEMM f32, row-major C[M,N] = A[M,K] B[K,N] (GFLOP/s; best tilejit block config)",
     {"MxNxK", "threads", "tilejit", "blocks", "oneDNN", "OpenBLAS", "vs oneDNN", "vs OpenBLAS", "vs FMA peak",
      "max rel err vs oneDNN"}},
    {"mixed",
     "Mixed-precision GEMM, best tilejit block config (GFLOP/s; GOP/s for i8) against oneDNN's GEMM of those operands",
     {"operands", "accumulate", "MxNxK", "threads", "tilejit", "oneDNN peer", "oneDNN", "vs oneDNN", "vs tilejit f32",
      "max rel err"}},
    {"bandwidth",
     "Memory-bound kernels against memcpy of the same bytes (GB/s)",
     {"kernel", "shape", "threads", "ms", "GB/s", "memcpy GB/s", "vs memcpy"}},
    {"attention",
     "Attention forward f32, batch 1, heads 2 (GFLOP/s = 4 S^2 D per head, halved when causal)",
     {"seq", "dim", "causal", "threads", "blocks", "ms", "GFLOP/s", "vs GEMM SxSxS"}},
    {"compile",
     "Kernel compile (fresh cache dir) and disk-cache load (new process)",
     {"kernel", "cache", "compile or load ms", "first call ms"}},
    {"launch", "Launch overhead of a cached tiny kernel (median of 10000)", {"path", "kernel", "us"}},
};

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  for (size_t start = 0;;) {
    size_t end = s.find(sep, start);
    out.emplace_back(s.substr(start, end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

void printTable(const Section& section, const std::vector<std::vector<std::string>>& rows) {
  if (rows.empty()) return;
  std::vector<size_t> width;
  for (auto c : section.columns) width.push_back(c.size());
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size() && i < width.size(); ++i) width[i] = std::max(width[i], r[i].size());
  auto line = [&](const auto& cells) {
    std::string s;
    for (size_t i = 0; i < cells.size() && i < width.size(); ++i) s += fmt::format("{:>{}}  ", cells[i], width[i]);
    std::printf("  %s\n", s.c_str());
  };
  std::printf("\n%s\n", std::string(section.title).c_str());
  line(section.columns);
  for (const auto& r : rows) line(r);
}

// When every thread together gets little more FMA throughput than one, other
// work holds the cores and the all-thread figures mean little: say so.
void warnIfContended(const std::vector<std::string>& lines) {
  std::map<std::string, double> fma;
  for (const auto& l : lines)
    if (l.starts_with("FIGURE fma_peak_t")) {
      auto f = split(l, ' ');
      fma[f[1]] = std::stod(f[2]);
    }
  const int n = hostThreads();
  double one = fma["fma_peak_t1_gflops"], all = fma[fmt::format("fma_peak_t{}_gflops", n)];
  if (n > 1 && one > 0 && all < 0.8 * n * one)
    std::printf(
        "\nWARNING: %d threads reach only %.2fx the one-thread FMA ceiling: other work is using the cores, "
        "so the %d-thread figures are unreliable. Run again on an idle machine.\n",
        n, all / one, n);
}

void printReport(const std::vector<std::string>& lines) {
  std::map<std::string, std::vector<std::vector<std::string>>, std::less<>> rows;
  for (const auto& l : lines)
    if (l.starts_with("ROW ")) {
      auto cells = split(std::string_view(l).substr(4), '\t');
      std::string id = cells.front();
      cells.erase(cells.begin());
      rows[id].push_back(std::move(cells));
    }
  for (const auto& s : kSections) printTable(s, rows[std::string(s.id)]);
  warnIfContended(lines);
  std::printf("\n");
  for (const auto& l : lines)
    if (!l.starts_with("ROW ")) std::printf("%s\n", l.c_str());
}

// ---------------------------------------------------------------- parent: machine

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string l; std::getline(in, l);)
    if (l.starts_with("model name")) return l.substr(l.find(':') + 2);
  return "unknown";
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "(unset)";
}

void printMachine(bool quick) {
  const dnnl_version_t* dv = dnnl_version();
  std::printf("cpu-bench%s: %s, %d threads, FMA loop %s\n", quick ? " --quick" : "", cpuModel().c_str(), hostThreads(),
              hostFmaLoop().isa);
  std::printf("OpenBLAS: core %s (OPENBLAS_CORETYPE=%s, auto-detected %s); config: %s\n", openblas_get_corename(),
              env("OPENBLAS_CORETYPE").c_str(), env("CPU_BENCH_OPENBLAS_DETECTED").c_str(), openblas_get_config());
  std::printf("oneDNN: %d.%d.%d, ISA %s, OpenMP threads per child = the child's thread count\n", dv->major, dv->minor,
              dv->patch, dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa()));
  std::ifstream load("/proc/loadavg");
  std::string l1;
  load >> l1;  // other work on the machine skews every figure
  std::printf("load average before the run: %s\n", l1.c_str());
  std::fflush(stdout);
}

// OpenBLAS picks its kernels as the library loads, before main, and may pick
// generic ones for a CPU model its table lacks. Name the family for it and start
// again so the new value is seen at load.
void ensureOpenblasCoretype(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE")) return;
  const char* core = __builtin_cpu_supports("avx512f") ? "SkylakeX"
                     : __builtin_cpu_supports("avx2")  ? "Haswell"
                                                       : nullptr;
  if (!core) return;
  setenv("CPU_BENCH_OPENBLAS_DETECTED", openblas_get_corename(), 1);
  setenv("OPENBLAS_CORETYPE", core, 1);
  execv(kSelf, argv);
  std::perror("cpu-bench: re-exec with OPENBLAS_CORETYPE set");  // go on with the detected core
}

int parentMain(bool quick, bool mixedOnly) {
  printMachine(quick);
  std::vector<std::string> lines;
  bool ok = true;
  auto collect = [&](ChildRun run) {
    ok = run.ok && ok;
    lines.insert(lines.end(), run.lines.begin(), run.lines.end());
  };
  std::vector<int> threadCounts = {1};
  if (hostThreads() > 1) threadCounts.push_back(hostThreads());
  for (int t : threadCounts) {
    std::vector<std::string> args = {"--role=compute", fmt::format("--threads={}", t)};
    if (quick) args.push_back("--quick");
    if (mixedOnly) args.push_back("--mixed");
    collect(runChild(args, threadEnv(t)));
  }
  if (mixedOnly) {
    printReport(lines);
    return ok ? 0 : 1;
  }
  char dir[] = "/tmp/cpu-bench-cache-XXXXXX";
  if (!mkdtemp(dir)) throw std::runtime_error("cpu-bench: mkdtemp failed");
  for (const char* role : {"--role=cold", "--role=disk"})
    collect(runChild({role}, {{"TILEJIT_CACHE_DIR", dir}, {"TILEJIT_CACHE", "1"}}));
  fs::remove_all(dir);
  printReport(lines);
  if (!ok) std::printf("cpu-bench: FAILED (a child failed or a result did not match oneDNN; see above)\n");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  ensureOpenblasCoretype(argv);
  CLI::App app("cpu-bench: tilejit's CPU kernels against oneDNN, OpenBLAS, the FMA ceiling and memcpy", "cpu-bench");
  bool quick = false;
  int threads = 1;
  std::string role;
  app.add_flag("--quick", quick, "a reduced set for smoke tests: GEMM 512 and 1024, attention seq 1024");
  bool mixedOnly = false;
  app.add_flag("--mixed", mixedOnly,
               "only the mixed-precision GEMMs (f16, bf16, i8, scaled f8 against f32 and oneDNN), square 1024 to 4096, "
               "on 1 and all threads");
  app.add_option("--threads", threads, "internal: the thread count of a child run")->group("");
  app.add_option("--role", role, "internal: what a child run measures")
      ->check(CLI::IsMember({"compute", "cold", "disk"}))
      ->group("");
  CLI11_PARSE(app, argc, argv);
  if (!role.empty()) return childMain(role, threads, quick, mixedOnly);
  try {
    return parentMain(quick, mixedOnly);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cpu-bench: error: %s\n", e.what());
    return 1;
  }
}
