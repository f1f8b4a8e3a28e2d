// Runs a verified kernel through every stage `tile-ir --stage=...` prints, for every
// target, through the entry points tile-ir calls. Shared by the pipeline fuzzer and
// the verifier-limit tests: whatever the verifier accepts must come through here
// without a crash. A stage may refuse a kernel with a tj::Error (an "unsupported"
// feature or resource); those are returned, one line each.
#pragma once
#include <string>
#include <vector>

#include "ir/passes.hpp"
#include "layout/infer_layouts.hpp"
#include "lower/cpu/lower_to_llvm.hpp"
#include "lower/gpu/lower_to_kernel_ir.hpp"
#include "lower/spirv/print_kernel_ir.hpp"

namespace tj::fuzz {

// Canonicalization must keep a verified kernel valid, so its errors and the
// verifier's on its output propagate: they are bugs, not refusals.
inline std::vector<std::string> runEveryStage(const ir::Kernel& verified) {
  std::vector<std::string> refusals;
  auto stage = [&](const std::string& name, auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      refusals.push_back(name + ": " + e.what());
    }
  };
  ir::print(verified);  // --stage=parsed
  ir::Kernel k = ir::canonicalize(verified);
  ir::verify(k);
  ir::print(k);  // --stage=canonical
  ir::semanticHash(k);  // --hash
  // --stage=split: its folds split at their masks, as valid as the canonical kernel.
  const ir::Kernel split = ir::splitFoldsAtMasks(k);
  ir::verify(split);
  ir::print(split);
  stage("llvm", [&] { cpu::lowerToLLVMText(k); });
  for (const layout::Target& t : layout::targets()) {
    const ir::Kernel& lowered = t.splitMaskedFolds ? split : k;  // what that target's device lowers
    stage("layout " + t.name, [&] {
      layout::LayoutAssignment layouts = layout::inferLayouts(lowered, t);
      layout::printWithLayouts(lowered, layouts);
      stage("kernel " + t.name, [&] {
        gpu::KernelFunction f = gpu::lowerToKernelIR(lowered, layouts, t);
        gpu::print(f);
        if (t.name == "vulkan") stage("spirv", [&] { spirv::printSpirv(f); });
      });
    });
  }
  return refusals;
}

}  // namespace tj::fuzz
