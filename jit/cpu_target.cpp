#include "jit/cpu_target.hpp"

#include <llvm/ADT/StringMap.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "ir/error.hpp"

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

CpuTarget detectHost() {
  CpuTarget t;
  t.triple = llvm::sys::getProcessTriple();
  t.cpu = llvm::sys::getHostCPUName().str();
  std::vector<std::string> all;
  auto host = llvm::sys::getHostCPUFeatures();
  for (const auto& f : host) all.push_back((f.second ? '+' : '-') + f.first().str());
  std::sort(all.begin(), all.end());  // StringMap order is unspecified
  for (const std::string& f : all) t.features += (t.features.empty() ? "" : ",") + f;
  t.deviceFeatures = "cpu-" + llvm::Triple(t.triple).getArchName().str() + "-" + t.cpu;
  for (const char* f : kCodegenFeatures)
    if (auto it = host.find(f); it != host.end() && it->second) t.deviceFeatures += std::string("+") + f;
  return t;
}

// LLVM's backend for `triple`, or nullptr with `error` set.
const llvm::Target* findTarget(const std::string& triple, std::string& error) {
  initializeNativeTarget();
  return llvm::TargetRegistry::lookupTarget(triple, error);
}

}  // namespace

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
