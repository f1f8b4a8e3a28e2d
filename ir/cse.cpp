// Common subexpression elimination: a pure op equal to an earlier one in the
// same or an enclosing block is replaced by that op's results.
#include <unordered_map>

#include "ir/passes.hpp"
#include "ir/rewrite.hpp"

namespace tj::ir {

namespace {

class CommonSubexpressions : public Rewriter {
 public:
  explicit CommonSubexpressions(bool loadsArePure) : Rewriter("cse"), loadsArePure_(loadsArePure) {}

 private:
  using Scope = std::unordered_map<std::string, std::vector<ValueId>>;

  // A region sees its enclosing blocks' values, never the other way round.
  Block visitBlock(const Block& b) override {
    scopes_.emplace_back();
    Block out = Rewriter::visitBlock(b);
    scopes_.pop_back();
    return out;
  }

  void visit(const Op& in) override {
    Op op = remap(in);
    if (candidate(op)) {
      std::string k = key(op);
      if (const std::vector<ValueId>* earlier = find(k)) {
        for (size_t i = 0; i < op.results.size(); ++i) forward(op.results[i], (*earlier)[i]);
        return;
      }
      scopes_.back().emplace(std::move(k), op.results);
    }
    emit(std::move(op));
  }

  bool candidate(const Op& op) const {
    return !hasSideEffects(op.code) && op.regions.empty() && (!readsTensor(op.code) || loadsArePure_);
  }

  // Operands are already forwarded, so chains of duplicates collapse in one pass.
  std::string key(const Op& op) const {
    ByteWriter w;
    w.u8(static_cast<uint8_t>(op.code));
    w.i64(static_cast<int64_t>(op.operands.size()));
    for (ValueId v : op.operands) w.i64(v);
    w.i64(static_cast<int64_t>(op.results.size()));
    for (ValueId r : op.results) w.type(input().type(r));
    w.attrs(op.attrs);
    return w.bytes();
  }

  const std::vector<ValueId>* find(const std::string& k) const {
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s)
      if (auto it = s->find(k); it != s->end()) return &it->second;
    return nullptr;
  }

  bool loadsArePure_;
  std::vector<Scope> scopes_;
};

bool hasStore(const Block& b) {
  bool found = false;
  forEachOp(b, [&](const Op& op) { found |= writesTensor(op.code); });
  return found;
}

}  // namespace

// Loads are merged only when nothing in the kernel stores, so no store can
// change what a second load would read.
Kernel eliminateCommonSubexpressions(const Kernel& k) { return CommonSubexpressions(!hasStore(k.body)).run(k); }

}  // namespace tj::ir
