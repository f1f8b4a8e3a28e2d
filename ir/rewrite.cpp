#include "ir/rewrite.hpp"

#include <bit>
#include <utility>

#include <spdlog/spdlog.h>

namespace tj::ir {

Kernel Rewriter::run(const Kernel& k) {
  in_ = &k;
  forwards_.clear();
  Kernel out{k.name, k.tensors, k.scalars, k.gridRank, k.gridLoc, k.types, {}, k.warps};
  out.body = visitBlock(k.body);
  spdlog::debug("pass {}: {} ops", passName_, countOps(out.body));
  return out;
}

Block Rewriter::visitBlock(const Block& b) {
  Block out{b.args, {}};
  Block* outer = std::exchange(current_, &out);
  for (const Op& op : b.ops) visit(op);
  current_ = outer;
  return out;
}

ValueId Rewriter::lookup(ValueId v) const {
  auto i = static_cast<size_t>(v);
  return v >= 0 && i < forwards_.size() && forwards_[i] >= 0 ? forwards_[i] : v;
}

void Rewriter::forward(ValueId from, ValueId to) {
  auto i = static_cast<size_t>(from);
  if (i >= forwards_.size()) forwards_.resize(i + 1, -1);
  forwards_[i] = lookup(to);
}

Op Rewriter::remap(const Op& op) {
  Op out{op.code, {}, op.results, op.attrs, {}, op.loc};
  out.defaultFill = op.defaultFill;
  out.internal = op.internal;
  out.operands.reserve(op.operands.size());
  for (ValueId v : op.operands) out.operands.push_back(lookup(v));
  for (const Block& r : op.regions) out.regions.push_back(visitBlock(r));
  return out;
}

size_t countOps(const Block& b) {
  size_t n = 0;
  forEachOp(b, [&](const Op&) { ++n; });
  return n;
}

void ByteWriter::i64(int64_t v) {
  auto u = static_cast<uint64_t>(v);
  char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(u >> (8 * i));
  bytes_.append(bytes, 8);
}

void ByteWriter::f64(double v) { i64(std::bit_cast<int64_t>(v)); }

void ByteWriter::str(std::string_view s) {
  i64(static_cast<int64_t>(s.size()));
  bytes_.append(s);
}

void ByteWriter::type(const Type& t) {
  u8(static_cast<uint8_t>(t.dtype));
  i64(t.rank());
  for (int64_t d : t.shape) i64(d);
}

void ByteWriter::attrs(const std::vector<Attr>& attrs) {
  i64(static_cast<int64_t>(attrs.size()));
  for (const Attr& a : attrs) {
    str(a.name);
    u8(static_cast<uint8_t>(a.value.index()));
    std::visit([&](const auto& v) {
      using T = std::decay_t<decltype(v)>;
      if constexpr (std::is_same_v<T, int64_t>) i64(v);
      else if constexpr (std::is_same_v<T, double>) f64(v);
      else if constexpr (std::is_same_v<T, std::string>) str(v);
      else {
        i64(static_cast<int64_t>(v.size()));
        for (int64_t x : v) i64(x);
      }
    }, a.value);
  }
}

}  // namespace tj::ir
