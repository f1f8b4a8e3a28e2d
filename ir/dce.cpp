// Dead code elimination: drops ops whose results nothing live reads and that
// neither write, print nor check, fold loops included. Liveness comes from one
// backward walk: every value is defined before its uses, and a fold body only
// reads values defined before the fold.
#include "ir/passes.hpp"
#include "ir/rewrite.hpp"

namespace tj::ir {

namespace {

// Whether running the op can be observed other than through its results.
bool writesOrPrints(const Op& op) {
  if (writesTensor(op.code) || op.code == OpCode::print || op.code == OpCode::check) return true;
  for (const Block& r : op.regions)
    for (const Op& o : r.ops)
      if (writesOrPrints(o)) return true;
  return false;
}

class DeadCode : public Rewriter {
 public:
  explicit DeadCode(const Kernel& k) : Rewriter("dce"), live_(k.types.size(), false) { mark(k.body); }

 private:
  void visit(const Op& op) override {
    if (isLive(op)) Rewriter::visit(op);
  }

  // A yield is live with its block: it carries the fold's state, used or not.
  bool isLive(const Op& op) const {
    if (op.code == OpCode::yield || writesOrPrints(op)) return true;
    for (ValueId r : op.results)
      if (live_.at(static_cast<size_t>(r))) return true;
    return false;
  }

  void mark(const Block& b) {
    for (auto op = b.ops.rbegin(); op != b.ops.rend(); ++op) {
      if (!isLive(*op)) continue;
      for (ValueId v : op->operands) live_.at(static_cast<size_t>(v)) = true;
      for (const Block& r : op->regions) mark(r);
    }
  }

  std::vector<bool> live_;  // indexed by ValueId
};

}  // namespace

Kernel eliminateDeadCode(const Kernel& k) { return DeadCode(k).run(k); }

}  // namespace tj::ir
