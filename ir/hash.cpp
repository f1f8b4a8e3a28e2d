// The semantic hash: XXH3 over a canonical encoding in which values are named
// by definition order (as the printer numbers them), so ValueIds, names and
// source locations do not matter but every op, type and attribute does.
#include <xxhash.h>

#include "ir/passes.hpp"
#include "ir/rewrite.hpp"

namespace tj::ir {

namespace {

// Bump when the encoding changes, so old and new hashes never collide by design.
constexpr std::string_view kFormat = "tilejit-ir-hash/2";  // 2: scalar parameters

class Encoder {
 public:
  explicit Encoder(const Kernel& k) : k_(k), index_(k.types.size(), -1) {}

  std::string encode() {
    out_.str(kFormat);
    out_.i64(k_.gridRank);
    if (k_.warps) {  // only when set, so kernels without it keep their hashes
      out_.str("warps");
      out_.i64(k_.warps);
    }
    out_.i64(static_cast<int64_t>(k_.tensors.size()));
    for (const TensorParam& t : k_.tensors) {
      out_.u8(static_cast<uint8_t>(t.dtype));
      out_.i64(t.rank);
    }
    out_.i64(static_cast<int64_t>(k_.scalars.size()));
    for (const ScalarParam& s : k_.scalars) out_.u8(static_cast<uint8_t>(s.dtype));
    block(k_.body);
    return out_.bytes();
  }

 private:
  void define(ValueId v) {
    const Type& t = k_.type(v);  // throws for an id outside the type table
    int64_t& slot = index_[static_cast<size_t>(v)];
    if (slot < 0) slot = defined_++;  // a redefinition keeps its first number
    out_.type(t);
  }

  void block(const Block& b) {
    out_.i64(static_cast<int64_t>(b.args.size()));
    for (ValueId a : b.args) define(a);
    out_.i64(static_cast<int64_t>(b.ops.size()));
    for (const Op& op : b.ops) this->op(op);
  }

  void op(const Op& op) {
    out_.u8(static_cast<uint8_t>(op.code));
    out_.i64(static_cast<int64_t>(op.operands.size()));
    for (ValueId v : op.operands)  // undefined: -1, malformed but still hashable
      out_.i64(v >= 0 && static_cast<size_t>(v) < index_.size() ? index_[static_cast<size_t>(v)] : -1);
    out_.i64(static_cast<int64_t>(op.results.size()));
    for (ValueId r : op.results) define(r);
    out_.attrs(op.attrs);
    out_.i64(static_cast<int64_t>(op.regions.size()));
    for (const Block& r : op.regions) block(r);
  }

  const Kernel& k_;
  ByteWriter out_;
  std::vector<int64_t> index_;  // by ValueId: definition number, -1 until defined
  int64_t defined_ = 0;
};

}  // namespace

uint64_t semanticHash(const Kernel& k) {
  std::string bytes = Encoder(k).encode();
  return XXH3_64bits(bytes.data(), bytes.size());
}

std::string hashHex(uint64_t h) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) s[static_cast<size_t>(i)] = kDigits[h & 0xf];
  return s;
}

}  // namespace tj::ir
