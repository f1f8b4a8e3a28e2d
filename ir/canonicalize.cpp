// The standard cleanup pipeline, repeated until a round changes nothing. A
// round that changes anything removes ops or turns some into constants, so
// the loop terminates.
#include <spdlog/spdlog.h>

#include "ir/passes.hpp"

namespace tj::ir {

Kernel canonicalize(const Kernel& k) {
  Kernel cur = k;
  uint64_t hash = semanticHash(cur);
  for (int round = 1;; ++round) {
    Kernel next = eliminateDeadCode(
        fuseDotAccumulate(eliminateCommonSubexpressions(hoistLoopInvariants(foldConstants(cur)))));
    uint64_t nextHash = semanticHash(next);
    if (nextHash == hash) {
      spdlog::debug("canonicalize: stable after round {}", round);
      return next;
    }
    cur = std::move(next);
    hash = nextHash;
  }
}

}  // namespace tj::ir
