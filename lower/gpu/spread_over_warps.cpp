#include "lower/gpu/spread_over_warps.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>
#include <optional>

#include "ir/passes.hpp"

namespace tj::gpu {

namespace {

KernelFunction lowerOn(const ir::Kernel& k, layout::Target t, int64_t warps, const KernelLoweringOptions& options) {
  t.warpsPerProgram = warps;
  return lowerToKernelIR(k, layout::inferLayouts(k, t), t, options);
}

}  // namespace

ir::Kernel kernelForTarget(const ir::Kernel& canonical, const layout::Target& target, const KernelLoweringOptions& options) {
  bool wholeVectors = options.vectorTensors.size() == canonical.tensors.size() && std::ranges::all_of(options.vectorTensors, std::identity{});
  return target.splitMaskedFolds && wholeVectors ? ir::splitFoldsAtMasks(canonical) : canonical;
}

KernelFunction lowerWithinCodeBudget(const ir::Kernel& canonical, const layout::Target& target,
                                     const KernelLoweringOptions& options) {
  const ir::Kernel k = kernelForTarget(canonical, target, options);
  if (k.warps > 0) {  // the kernel's own choice (p.warps) stands
    if (k.warps * target.subgroupSize > target.maxWorkgroupThreads)
      throw Unsupported(fmt::format("kernel ir: {} warps of {} threads pass the {} threads a workgroup of {} may have", k.warps,
                              target.subgroupSize, target.maxWorkgroupThreads, target.name));
    return lowerOn(k, target, k.warps, options);
  }
  if (target.codeBudget <= 0 && target.sharedAccessBudget <= 0) return lowerOn(k, target, target.warpsPerProgram, options);
  // How far past the budgets a lowering is: 0 within both.
  auto excess = [&](const KernelFunction& f) {
    auto over = [](int64_t size, int64_t budget) { return budget > 0 ? std::max<int64_t>(0, size - budget) : 0; };
    return over(instructionCount(f.body), target.codeBudget) + over(sharedAccessCount(f.body), target.sharedAccessBudget);
  };
  const int64_t widest = std::max<int64_t>(target.warpsPerProgram, target.maxWorkgroupThreads / target.subgroupSize);
  std::optional<KernelFunction> smallest;  // of the lowerings past the budgets, the one least past them
  std::optional<int64_t> narrowerShared;   // the workgroup-memory accesses at half the warps
  for (int64_t warps = target.warpsPerProgram; warps <= widest; warps *= 2) {
    try {
      KernelFunction f = lowerOn(k, target, warps, options);
      // More warps split a scan's or reduction's lines once they outnumber them, and the
      // exchange through workgroup memory that follows costs the driver more than it saves.
      int64_t shared = sharedAccessCount(f.body);
      if (narrowerShared && shared > *narrowerShared) break;
      narrowerShared = shared;
      if (excess(f) == 0) {
        if (warps != target.warpsPerProgram)
          spdlog::debug("tilejit: kernel {} spread over {} warps: {} instructions per thread", k.name, warps,
                        instructionCount(f.body));
        return f;
      }
      if (!smallest || excess(f) < excess(*smallest)) smallest = std::move(f);
    } catch (const CodeOverBudget&) {
      if (warps * 2 > widest && !smallest) throw;
    } catch (const Unsupported&) {
      if (!smallest) throw;
      break;  // more warps need more workgroup memory, not less
    }
  }
  return std::move(*smallest);
}

}  // namespace tj::gpu
