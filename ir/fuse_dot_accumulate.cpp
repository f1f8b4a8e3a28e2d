// add(acc, dot(a, b)) -> dot(a, b, acc): the matmul loop's `acc += a @ b`
// accumulates in place. Like Triton's, this fusion may change the last bit:
// the fused dot rounds acc + a.b once where add(acc, dot) rounded twice.
#include <unordered_map>
#include <unordered_set>

#include "ir/passes.hpp"
#include "ir/rewrite.hpp"

namespace tj::ir {

namespace {

class DotAccumulateFuser : public Rewriter {
 public:
  explicit DotAccumulateFuser(const Kernel& k) : Rewriter("fuse_dot_accumulate") {
    forEachOp(k.body, [&](const Op& op) {
      for (ValueId v : op.operands) ++uses_[v];
    });
    plan(k, k.body);
  }

 private:
  struct Fusion {
    const Op* dot;
    ValueId acc;
  };

  // Pairs each add with a dot it may absorb: in the same block (moving a dot
  // into a loop would repeat it), without an accumulator, used only there.
  void plan(const Kernel& k, const Block& b) {
    std::unordered_map<ValueId, const Op*> dots;
    for (const Op& op : b.ops) {
      for (const Block& r : op.regions) plan(k, r);
      if (op.code == OpCode::dot && op.operands.size() == 2 && uses_[op.results[0]] == 1)
        dots.emplace(op.results[0], &op);
      if (op.code != OpCode::add) continue;
      for (size_t i : {1, 0}) {
        auto it = dots.find(op.operands[i]);
        ValueId acc = op.operands[1 - i];
        if (it == dots.end() || k.type(acc) != k.type(op.results[0]) || k.type(it->first) != k.type(acc)) continue;
        fusions_.emplace(op.results[0], Fusion{it->second, acc});
        fusedDots_.insert(it->first);
        break;
      }
    }
  }

  void visit(const Op& op) override {
    if (op.code == OpCode::dot && fusedDots_.count(op.results[0])) return;
    auto it = op.code == OpCode::add ? fusions_.find(op.results[0]) : fusions_.end();
    if (it == fusions_.end()) {
      Rewriter::visit(op);
      return;
    }
    const auto& [dot, acc] = it->second;
    emit(Op{OpCode::dot, {lookup(dot->operands[0]), lookup(dot->operands[1]), lookup(acc)}, op.results, dot->attrs,
            {}, op.loc});
  }

  std::unordered_map<ValueId, int> uses_;
  std::unordered_map<ValueId, Fusion> fusions_;  // by the add's result
  std::unordered_set<ValueId> fusedDots_;
};

}  // namespace

Kernel fuseDotAccumulate(const Kernel& k) { return DotAccumulateFuser(k).run(k); }

}  // namespace tj::ir
