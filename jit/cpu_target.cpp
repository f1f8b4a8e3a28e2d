#include "jit/cpu_target.hpp"

#include <llvm/ADT/StringMap.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <spdlog/spdlog.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <sstream>
#include <vector>

#include "ir/error.hpp"
#include "jit/bf16_pair_rate.hpp"
#include "lower/cpu/lower_to_llvm.hpp"

namespace tj::jit {

namespace {

// The features that change what code the lowering and LLVM can emit (LLVM forms VNNI's
// vpdpwssd from pmaddwd sums by itself); the rest are implied by the CPU name or irrelevant
// to kernels. A VM may hide some of a CPU's features, so the name alone does not key them.
constexpr const char* kCodegenFeatures[] = {
    "sse4.2",     "avx",        "avx2",     "fma",      "avx512f",  "avx512bw", "avx512vl",
    "avx512dq",   "avx512vnni", "avxvnni",  "avx512bf16", "avx512fp16", "amx-tile", "amx-int8",
    "amx-bf16",   "neon",     "sve",
};

std::string deviceKey(const CpuTarget& t) {
  std::string key = "cpu-" + llvm::Triple(t.triple).getArchName().str() + "-" + t.cpu;
  for (const char* f : kCodegenFeatures)
    if (t.hasFeature(f)) key += std::string("+") + f;
  // Measured, not a feature, but it changes the code and what the tuner picks for it.
  if (t.slowBf16Pairs) key += "+bf16widen";
  return key;
}

// Linux hands a process AMX's 8 KiB of tile state only when asked (arch_prctl); a tile
// instruction before that raises SIGILL. Returns whether the request succeeded.
bool requestAmxTileData() {
#if defined(__linux__) && defined(__x86_64__)
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

CpuTarget detectHost() {
  CpuTarget t;
  t.triple = llvm::sys::getProcessTriple();
  t.cpu = llvm::sys::getHostCPUName().str();
  std::vector<std::string> all;
  auto host = llvm::sys::getHostCPUFeatures();
  for (const auto& f : host) all.push_back((f.second ? '+' : '-') + f.first().str());
  std::sort(all.begin(), all.end());  // StringMap order is unspecified
  for (const std::string& f : all) t.features += (t.features.empty() ? "" : ",") + f;
  t.deviceFeatures = deviceKey(t);
  if (const char* restriction = std::getenv("TILEJIT_CPU_FEATURES"); restriction && *restriction) {
    t = restrictFeatures(t, restriction);
    spdlog::info("tilejit: TILEJIT_CPU_FEATURES={}: compiling for {}", restriction, t.deviceFeatures);
  }
  if (t.hasFeature("amx-tile") && !requestAmxTileData()) {
    spdlog::warn("tilejit: the kernel refused this process AMX tile data (arch_prctl ARCH_REQ_XCOMP_PERM); "
                 "dots use the vector instructions instead");
    t = restrictFeatures(t, "-amx-tile");
  }
  if (t.hasFeature("avx512bf16"))
    if (std::optional<double> rate = measureBf16PairRate()) {
      t.slowBf16Pairs = *rate < kSlowBf16PairRate;
      t.deviceFeatures = deviceKey(t);
      spdlog::debug("tilejit: vdpbf16ps makes {:.2f}x the multiply-adds a second of f32 FMAs here: bf16 dots {}", *rate,
                    t.slowBf16Pairs ? "widen to f32 where AMX does not take them" : "take vdpbf16ps pairs");
    }
  return t;
}

// LLVM's backend for `triple`, or nullptr with `error` set.
const llvm::Target* findTarget(const std::string& triple, std::string& error) {
  initializeNativeTarget();
  return llvm::TargetRegistry::lookupTarget(triple, error);
}

}  // namespace

CpuTarget restrictFeatures(const CpuTarget& target, std::string_view restriction) {
  std::string requested = target.features;
  std::istringstream entries{std::string(restriction)};
  for (std::string entry; std::getline(entries, entry, ',');) {
    entry.erase(0, entry.find_first_not_of(" \t"));
    entry.erase(entry.find_last_not_of(" \t") + 1);
    if (entry.empty()) continue;
    std::string name = entry.substr(1);
    if (entry[0] != '-')
      throw Error("TILEJIT_CPU_FEATURES: '" + entry + "': entries only turn features off ('-" +
                  (entry[0] == '+' ? name : entry) + "'); the JIT emits no instruction the host cannot run");
    if (!target.hasFeature(name) && ("," + target.features + ",").find(",-" + name + ",") == std::string::npos)
      throw Error("TILEJIT_CPU_FEATURES: '" + name + "' is not a feature LLVM names for this host (" + target.cpu + ")");
    requested += ",-" + name;
  }
  // LLVM turns off what needs a disabled feature too (no avx512f: no avx512bw, avx512vnni, ...).
  std::string error;
  const llvm::Target* backend = findTarget(target.triple, error);
  if (!backend) throw Error("cpu: LLVM has no backend for " + target.triple + ": " + error);
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(backend->createMCSubtargetInfo(target.triple, target.cpu, requested));
  CpuTarget restricted = target;
  restricted.features.clear();
  std::istringstream features(target.features);
  for (std::string f; std::getline(features, f, ',');) {
    if (f[0] == '+' && !subtarget->checkFeatures(f)) f[0] = '-';
    restricted.features += (restricted.features.empty() ? "" : ",") + f;
  }
  restricted.deviceFeatures = deviceKey(restricted);
  return restricted;
}

CpuTarget x86TargetForIsa(std::string_view isa) {
  CpuTarget t;
  t.triple = "x86_64-pc-linux-gnu";
  t.cpu = cpu::x86CpuForIsa(isa);
  t.deviceFeatures = "cpu-x86_64-" + t.cpu;
  return t;
}

bool CpuTarget::hasFeature(std::string_view name) const {
  return ("," + features + ",").find(",+" + std::string(name) + ",") != std::string::npos;
}

const CpuTarget& hostTarget() {
  static const CpuTarget target = detectHost();
  return target;
}

void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

bool hostTargetSupported() {
  static const bool supported = [] {
    std::string error;
    return findTarget(hostTarget().triple, error) != nullptr;
  }();
  return supported;
}

std::unique_ptr<llvm::TargetMachine> createTargetMachine(const CpuTarget& target) {
  std::string error;
  const llvm::Target* t = findTarget(target.triple, error);
  if (!t) throw Error("cpu: LLVM has no backend for " + target.triple + ": " + error);
  std::unique_ptr<llvm::TargetMachine> tm(t->createTargetMachine(target.triple, target.cpu, target.features,
                                                                 llvm::TargetOptions(), llvm::Reloc::PIC_,
                                                                 std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!tm) throw Error("cpu: LLVM could not create a target machine for " + target.triple + " " + target.cpu);
  return tm;
}

}  // namespace tj::jit
