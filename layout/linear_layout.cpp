#include "layout/linear_layout.hpp"

#include <algorithm>
#include <bit>

#include "ir/error.hpp"

namespace tj::layout {

int log2Exact(int64_t n) {
  if (n <= 0 || !std::has_single_bit(static_cast<uint64_t>(n)))
    throw InternalError("linear layout", "size " + std::to_string(n) + " is not a power of two");
  return std::countr_zero(static_cast<uint64_t>(n));
}

std::optional<uint64_t> solveGF2(const std::vector<uint64_t>& vectors, uint64_t target) {
  if (vectors.size() > 64) throw InternalError("linear layout", "more than 64 vectors to combine");
  std::vector<std::pair<uint64_t, uint64_t>> pivots;  // (reduced vector, the combination it is)
  for (size_t i = 0; i < vectors.size(); ++i) {
    std::pair<uint64_t, uint64_t> v{vectors[i], uint64_t{1} << i};
    for (const auto& [p, combo] : pivots)
      if (v.first & std::bit_floor(p)) v.first ^= p, v.second ^= combo;
    if (!v.first) continue;  // in the span of the vectors before it
    auto at = std::find_if(pivots.begin(), pivots.end(), [&](const auto& p) { return p.first < v.first; });
    pivots.insert(at, v);  // by leading bit, highest first: each reduction keeps the ones before
  }
  uint64_t combo = 0;
  for (const auto& [p, c] : pivots)
    if (target & std::bit_floor(p)) target ^= p, combo ^= c;
  if (target != 0) return std::nullopt;
  return combo;
}

LinearLayout::LinearLayout(std::vector<InDim> ins, std::vector<OutDim> outs) : ins_(std::move(ins)), outs_(std::move(outs)) {
  int outBits = 0;
  for (const OutDim& o : outs_) outBits += log2Exact(o.size);
  if (outBits > 63) throw InternalError("linear layout", "more than 63 output bits");
  for (const InDim& d : ins_)
    for (const Basis& b : d.bases)
      if (b.size() != outs_.size()) throw InternalError("linear layout", "basis of " + d.name + " has the wrong rank");
}

const LinearLayout::InDim& LinearLayout::in(const std::string& name) const {
  for (const InDim& d : ins_)
    if (d.name == name) return d;
  throw InternalError("linear layout", "no input dimension '" + name + "'");
}

// Bits of the last output dimension are the lowest (row-major).
uint64_t LinearLayout::flatten(const Basis& b) const {
  uint64_t bits = 0;
  int shift = 0;
  for (size_t d = outs_.size(); d-- > 0;) {
    bits |= static_cast<uint64_t>(b[d]) << shift;
    shift += log2Exact(outs_[d].size);
  }
  return bits;
}

LinearLayout::Basis LinearLayout::unflatten(uint64_t bits) const {
  Basis b(outs_.size());
  for (size_t d = outs_.size(); d-- > 0;) {
    b[d] = static_cast<int64_t>(bits & static_cast<uint64_t>(outs_[d].size - 1));
    bits >>= log2Exact(outs_[d].size);
  }
  return b;
}

std::vector<uint64_t> LinearLayout::flatBases(const std::vector<std::string>& names) const {
  std::vector<uint64_t> flat;
  for (const std::string& n : names)
    for (const Basis& b : in(n).bases) flat.push_back(flatten(b));
  return flat;
}

std::vector<int64_t> LinearLayout::apply(const std::vector<int64_t>& inputs) const {
  if (inputs.size() != ins_.size()) throw InternalError("linear layout", "expected one input per input dimension");
  uint64_t out = 0;
  for (size_t d = 0; d < ins_.size(); ++d)
    for (size_t bit = 0; bit < ins_[d].bases.size(); ++bit)
      if ((inputs[d] >> bit) & 1) out ^= flatten(ins_[d].bases[bit]);
  return unflatten(out);
}

LinearLayout LinearLayout::compose(const LinearLayout& inner) const {
  if (inner.outs_.size() != ins_.size()) throw InternalError("linear layout", "cannot compose, dimensions differ");
  std::vector<InDim> ins;
  for (const InDim& d : inner.ins_) {
    InDim composed{d.name, {}};
    for (const Basis& b : d.bases) composed.bases.push_back(apply(b));
    ins.push_back(std::move(composed));
  }
  return LinearLayout(std::move(ins), outs_);
}

std::optional<LinearLayout> LinearLayout::invert() const {
  std::vector<std::string> names;
  for (const InDim& d : ins_) names.push_back(d.name);
  std::vector<uint64_t> cols = flatBases(names);
  int outBits = 0;
  for (const OutDim& o : outs_) outBits += log2Exact(o.size);
  if (static_cast<int>(cols.size()) != outBits) return std::nullopt;
  // Output bit i is produced by the input bits comb[i]; split those per input dimension.
  std::vector<uint64_t> comb;
  for (int i = 0; i < outBits; ++i) {
    std::optional<uint64_t> c = solveGF2(cols, uint64_t{1} << i);
    if (!c) return std::nullopt;  // not onto, so not a bijection
    comb.push_back(*c);
  }
  std::vector<InDim> ins;
  std::vector<OutDim> outs;
  for (const InDim& d : ins_) outs.push_back({d.name, int64_t{1} << d.bases.size()});
  size_t bit = 0;
  for (size_t d = outs_.size(); d-- > 0;) {
    InDim inverse{outs_[d].name, {}};
    for (int b = 0; b < log2Exact(outs_[d].size); ++b, ++bit) {
      Basis coords(ins_.size());
      size_t first = 0;
      for (size_t k = 0; k < ins_.size(); first += ins_[k].bases.size(), ++k)
        coords[k] = static_cast<int64_t>((comb[bit] >> first) & ((uint64_t{1} << ins_[k].bases.size()) - 1));
      inverse.bases.push_back(coords);
    }
    ins.insert(ins.begin(), std::move(inverse));
  }
  return LinearLayout(std::move(ins), std::move(outs));
}

bool LinearLayout::spans(const std::vector<std::string>& names, const LinearLayout& other,
                         const std::vector<std::string>& otherNames) const {
  if (other.outs_ != outs_) return false;
  std::vector<uint64_t> mine = flatBases(names);
  return std::ranges::all_of(other.flatBases(otherNames), [&](uint64_t v) { return solveGF2(mine, v).has_value(); });
}

std::optional<uint64_t> LinearLayout::combinationOf(const std::vector<std::string>& names, const Basis& target) const {
  if (target.size() != outs_.size()) throw InternalError("linear layout", "a target of the wrong rank");
  return solveGF2(flatBases(names), flatten(target));
}

}  // namespace tj::layout
