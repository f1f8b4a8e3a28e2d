// Linear layouts (Triton's LinearLayout): a map from named input dimensions
// (register, lane, warp; or a shared-memory offset) to tensor coordinates that is
// linear over GF(2). Each input dimension has one basis vector per bit; the
// coordinates of an input are the XOR of the bases of its set bits. A zero basis
// means that bit replicates data (broadcast). All sizes are powers of two.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tj::layout {

class LinearLayout {
 public:
  using Basis = std::vector<int64_t>;  // one coordinate per output dimension
  struct InDim {
    std::string name;
    std::vector<Basis> bases;  // bit i of the input maps to bases[i]
    bool operator==(const InDim&) const = default;
  };
  struct OutDim {
    std::string name;
    int64_t size;  // a power of two
    bool operator==(const OutDim&) const = default;
  };

  LinearLayout(std::vector<InDim> ins, std::vector<OutDim> outs);

  const std::vector<InDim>& ins() const { return ins_; }
  const std::vector<OutDim>& outs() const { return outs_; }
  const InDim& in(const std::string& name) const;  // throws Error when missing
  int64_t inSize(const std::string& name) const { return int64_t{1} << in(name).bases.size(); }

  // The output coordinates of one input value per input dimension (in ins() order).
  std::vector<int64_t> apply(const std::vector<int64_t>& inputs) const;
  // this ∘ inner: inner's output dimensions must be this layout's input dimensions.
  LinearLayout compose(const LinearLayout& inner) const;
  // The inverse map when this layout is a bijection; nullopt otherwise.
  std::optional<LinearLayout> invert() const;
  // Whether the bases of `names` span every basis of `other`'s `otherNames` (as flat bit vectors).
  bool spans(const std::vector<std::string>& names, const LinearLayout& other,
             const std::vector<std::string>& otherNames) const;
  // Which bases of `names` (every bit of each, in order) XOR to the coordinates `target`: bit
  // i of the result is the i-th basis. nullopt when `target` is outside their span.
  std::optional<uint64_t> combinationOf(const std::vector<std::string>& names, const Basis& target) const;

  bool operator==(const LinearLayout&) const = default;

 private:
  uint64_t flatten(const Basis& b) const;  // output coordinates as one bit vector
  Basis unflatten(uint64_t bits) const;
  std::vector<uint64_t> flatBases(const std::vector<std::string>& names) const;

  std::vector<InDim> ins_;
  std::vector<OutDim> outs_;
};

int log2Exact(int64_t n);  // throws Error unless n is a power of two

// Which of `vectors` (at most 64) XOR to `target`, over GF(2): bit i of the result is
// vectors[i]. A vector in the span of those before it is never used, so the answer is unique;
// nullopt when `target` is outside their span. The one solver of the layouts and lowerings.
std::optional<uint64_t> solveGF2(const std::vector<uint64_t>& vectors, uint64_t target);

}  // namespace tj::layout
