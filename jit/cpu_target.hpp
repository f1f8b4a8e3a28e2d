// The host CPU as LLVM sees it: what kernels are compiled for and what the
// kernel cache keys on.
#pragma once
#include <memory>
#include <string>
#include <string_view>

namespace llvm {
class TargetMachine;
}  // namespace llvm

namespace tj::jit {

struct CpuTarget {
  std::string triple;          // "x86_64-pc-linux-gnu"
  std::string cpu;             // LLVM's name: "skylake-avx512", "znver4", ...
  std::string features;        // every host feature for LLVM: "+avx2,-avx512f,..."
  std::string deviceFeatures;  // the cache's and tuning files' device key: "cpu-x86_64-znver4+avx2+fma+avx512f"
  // Measured on the host (measureBf16PairRate): its vdpbf16ps makes fewer multiply-adds a second
  // than f32 FMAs, so bf16 dots that AMX does not take are widened to f32 instead.
  bool slowBf16Pairs = false;

  bool hasFeature(std::string_view name) const;  // enabled in `features`: "avx512f"
};

// Detected once per process, less what TILEJIT_CPU_FEATURES turns off (see restrictFeatures), and
// less AMX where the kernel refuses the process its tile state.
const CpuTarget& hostTarget();

// `target` with features turned off: `restriction` lists "-feature" entries by LLVM's names,
// comma-separated ("-avx512vnni,-amx-int8"); what needs a feature goes with it. Throws Error for
// a "+" entry (nothing is added to a host) or a name the host's features do not list.
CpuTarget restrictFeatures(const CpuTarget& target, std::string_view restriction);

// Registers the native target, its asm printer and parser with LLVM (once).
void initializeNativeTarget();

// Whether LLVM can generate code for the host; decided once.
bool hostTargetSupported();

// An x86-64 target for a level cpu::loweringOptionsForIsa names, by cpu::x86CpuForIsa, for
// output that does not depend on the host (tile-ir --stage=asm). Throws Error for another name.
CpuTarget x86TargetForIsa(std::string_view isa);

// A TargetMachine for `target` at -O3 with position-independent code, so an
// object can be linked anywhere by the JIT, including after a disk-cache load.
// Throws Error when LLVM has no backend for the triple.
std::unique_ptr<llvm::TargetMachine> createTargetMachine(const CpuTarget& target);

}  // namespace tj::jit
