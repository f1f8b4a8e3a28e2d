// Loop-invariant code motion: ops of a fold body that read only values from
// outside the body move in front of the fold, so they run once instead of on
// every iteration. One nesting level per run; canonicalize repeats it.
#include <set>

#include "ir/passes.hpp"
#include "ir/rewrite.hpp"

namespace tj::ir {

namespace {

class HoistInvariants : public Rewriter {
 public:
  explicit HoistInvariants(const Kernel& k) : Rewriter("hoist-invariants") {
    forEachOp(k.body, [&](const Op& op) {
      if (writesTensor(op.code)) storedTensors_.insert(op.get(attr::tensor));
    });
  }

 private:
  // Pure ops only. Integer division stays put: hoisted out of a loop that runs
  // zero times it could fault where the original did not.
  bool canHoist(const Op& op, const Kernel& k) const {
    if (!op.regions.empty() || hasSideEffects(op.code)) return false;
    bool intDivision = (op.code == OpCode::div || op.code == OpCode::rem) && !isFloat(k.type(op.results[0]).dtype);
    if (intDivision) return false;
    return !readsTensor(op.code) || !storedTensors_.count(op.get(attr::tensor));
  }

  void visit(const Op& op) override {
    if (op.code != OpCode::fold) return Rewriter::visit(op);
    const Block& body = op.regions[0];
    std::set<ValueId> inside(body.args.begin(), body.args.end()), hoisted;
    for (const Op& o : body.ops) inside.insert(o.results.begin(), o.results.end());
    Op loop = op;
    loop.regions[0].ops.clear();
    for (const Op& o : body.ops) {
      bool invariant = canHoist(o, input());
      for (ValueId v : o.operands) invariant = invariant && (!inside.count(v) || hoisted.count(v));
      if (invariant) {
        hoisted.insert(o.results.begin(), o.results.end());
        emit(remap(o));
      } else {
        loop.regions[0].ops.push_back(o);
      }
    }
    emit(remap(loop));
  }

  std::set<int64_t> storedTensors_;
};

}  // namespace

Kernel hoistLoopInvariants(const Kernel& k) { return HoistInvariants(k).run(k); }

}  // namespace tj::ir
