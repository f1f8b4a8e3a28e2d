#include "layout/layout.hpp"

#include <algorithm>
#include <bit>

#include "ir/error.hpp"

namespace tj::layout {

using Basis = LinearLayout::Basis;

bool DotOperand::operator==(const DotOperand& o) const { return opIdx == o.opIdx && *parent == *o.parent; }
bool Slice::operator==(const Slice& o) const { return dim == o.dim && *parent == *o.parent; }

LayoutPtr make(Layout l) { return std::make_shared<const Layout>(std::move(l)); }

bool isWgmma(MatrixInstr i) { return i == MatrixInstr::wgmma_m64k16 || i == MatrixInstr::wgmma_m64k32; }

std::optional<Shared> wgmmaShared(DType dtype, const Shape& shape, const std::vector<int64_t>& order) {
  int64_t bytes = dtypeBytes(dtype), rowBytes = shape.at(static_cast<size_t>(order.at(0))) * bytes;
  if (shape.size() != 2 || rowBytes < 32) return std::nullopt;
  int64_t swizzle = std::min<int64_t>(rowBytes, 128);
  // Swizzle<log2(swizzle/16), 4, 3> on byte addresses: 16-byte vector v of row r at v ^ (r / (128 / swizzle)) % (swizzle / 16).
  return Shared{16 / bytes, 128 / swizzle, swizzle / 16, order, rowBytes > 128 ? 128 / bytes : 0};
}

std::vector<int64_t> wgmmaKMajor(int opIdx) { return opIdx == 0 ? std::vector<int64_t>{1, 0} : std::vector<int64_t>{0, 1}; }

int64_t wgmmaSwizzleBytes(const Shared& s, DType dtype) { return s.maxPhase * s.vec * dtypeBytes(dtype); }

bool isPowerOfTwoShape(const Shape& shape) {
  return std::all_of(shape.begin(), shape.end(), [](int64_t n) { return n > 0 && std::has_single_bit(uint64_t(n)); });
}

Shape paddedShape(const Shape& shape) {
  Shape padded;
  for (int64_t n : shape) padded.push_back(int64_t(std::bit_ceil(uint64_t(std::max<int64_t>(n, 1)))));
  return padded;
}

Shape nonUnitDims(const Shape& shape) {
  Shape r;
  for (int64_t n : shape)
    if (n != 1) r.push_back(n);
  return r;
}

std::vector<int64_t> rowMajorOrder(size_t rank) {
  std::vector<int64_t> order;
  for (size_t d = rank; d-- > 0;) order.push_back(static_cast<int64_t>(d));
  return order;
}

std::string_view instrName(MatrixInstr i) {
  switch (i) {
    case MatrixInstr::mma_m16n8k16: return "m16n8k16";
    case MatrixInstr::mma_m16n8k32: return "m16n8k32";
    case MatrixInstr::wmma_16x16x16: return "16x16x16";
    case MatrixInstr::mfma_32x32x8: return "32x32x8";
    case MatrixInstr::mfma_16x16x16: return "16x16x16";
    case MatrixInstr::wgmma_m64k16: return "m64nNk16";
    case MatrixInstr::wgmma_m64k32: return "m64nNk32";
  }
  return "?";
}

namespace {

// One warp's fragment of a matrix instruction: the tile it covers and, per register
// and lane bit, the [row, col] it moves to (from the ISA manuals' fragment tables).
struct Fragment {
  Shape tile;
  std::vector<Basis> reg, lane;
  int64_t kWidth;  // consecutive k elements per register group (operands)
};

// role 0, 1: operands a [M,K] and b [K,N]; 2: the accumulator [M,N].
Fragment fragment(MatrixInstr instr, int role) {
  switch (instr) {
    case MatrixInstr::wgmma_m64k16:  // PTX ISA 9.7.15.5.1.1.1: per warp, m16n8k16's fragments
    case MatrixInstr::mma_m16n8k16:  // PTX ISA 9.7.13.4.8: groupID = lane / 4, threadID_in_group = lane % 4
      if (role == 0) return {{16, 16}, {{0, 1}, {8, 0}, {0, 8}}, {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}}, 2};
      if (role == 1) return {{16, 8}, {{1, 0}, {8, 0}}, {{2, 0}, {4, 0}, {0, 1}, {0, 2}, {0, 4}}, 2};
      return {{16, 8}, {{0, 1}, {8, 0}}, {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}}, 1};
    case MatrixInstr::wgmma_m64k32:  // per warp, m16n8k32's fragments
    case MatrixInstr::mma_m16n8k32:  // PTX ISA 9.7.13.4.9, 8-bit a and b: four per 32-bit register
      if (role == 0) return {{16, 32}, {{0, 1}, {0, 2}, {8, 0}, {0, 16}}, {{0, 4}, {0, 8}, {1, 0}, {2, 0}, {4, 0}}, 4};
      if (role == 1) return {{32, 8}, {{1, 0}, {2, 0}, {16, 0}}, {{4, 0}, {8, 0}, {0, 1}, {0, 2}, {0, 4}}, 4};
      return fragment(MatrixInstr::mma_m16n8k16, 2);
    case MatrixInstr::wmma_16x16x16:  // RDNA3: lanes 16..31 repeat a and b; c rows interleave by half-wave
      if (role == 0) return {{16, 16}, {{0, 1}, {0, 2}, {0, 4}, {0, 8}}, {{1, 0}, {2, 0}, {4, 0}, {8, 0}, {0, 0}}, 16};
      if (role == 1) return {{16, 16}, {{1, 0}, {2, 0}, {4, 0}, {8, 0}}, {{0, 1}, {0, 2}, {0, 4}, {0, 8}, {0, 0}}, 16};
      return {{16, 16}, {{2, 0}, {4, 0}, {8, 0}}, {{0, 1}, {0, 2}, {0, 4}, {0, 8}, {1, 0}}, 1};
    case MatrixInstr::mfma_32x32x8:  // CDNA3 v_mfma_f32_32x32x8f16: k = (lane / 32) * 4 + register
      if (role == 0) return {{32, 8}, {{0, 1}, {0, 2}}, {{1, 0}, {2, 0}, {4, 0}, {8, 0}, {16, 0}, {0, 4}}, 4};
      if (role == 1) return {{8, 32}, {{1, 0}, {2, 0}}, {{0, 1}, {0, 2}, {0, 4}, {0, 8}, {0, 16}, {4, 0}}, 4};
      return {{32, 32}, {{1, 0}, {2, 0}, {8, 0}, {16, 0}}, {{0, 1}, {0, 2}, {0, 4}, {0, 8}, {0, 16}, {4, 0}}, 1};
    case MatrixInstr::mfma_16x16x16:  // CDNA v_mfma_f32_16x16x16f16: k = (lane / 16) * 4 + register
      if (role == 0) return {{16, 16}, {{0, 1}, {0, 2}}, {{1, 0}, {2, 0}, {4, 0}, {8, 0}, {0, 4}, {0, 8}}, 4};
      if (role == 1) return {{16, 16}, {{1, 0}, {2, 0}}, {{0, 1}, {0, 2}, {0, 4}, {0, 8}, {4, 0}, {8, 0}}, 4};
      return {{16, 16}, {{1, 0}, {2, 0}}, {{0, 1}, {0, 2}, {0, 4}, {0, 8}, {4, 0}, {8, 0}}, 1};
  }
  throw InternalError("layout", "unknown matrix instruction");
}

// Builds a register layout: a per-warp pattern, then warps, then repeats in
// registers until the shape is covered; bits past the shape replicate (lanes,
// warps) or are dropped (registers).
class Builder {
 public:
  explicit Builder(Shape shape) : shape_(std::move(shape)), next_(shape_.size(), 1) {}

  // Adds log2(count) bits along dimension d to `in` (0 register, 1 lane, 2 warp),
  // or zero bases (replication) when `replicate`.
  void add(int in, size_t d, int64_t count, bool replicate = false) {
    for (int i = 0; i < log2Exact(count); ++i) {
      Basis b(shape_.size(), 0);
      if (!replicate) b[d] = next_[d], next_[d] *= 2;
      bases_[in].push_back(b);
    }
  }
  // Starts from a fixed per-warp pattern covering `tile` (the last dims of the shape).
  void pattern(const Fragment& f) {
    size_t lead = shape_.size() - f.tile.size();
    auto widen = [&](const Basis& b) {
      Basis w(lead, 0);
      w.insert(w.end(), b.begin(), b.end());
      return w;
    };
    for (const Basis& b : f.reg) bases_[0].push_back(widen(b));
    for (const Basis& b : f.lane) bases_[1].push_back(widen(b));
    for (size_t d = 0; d < f.tile.size(); ++d) next_[lead + d] = f.tile[d];
  }
  void repeat(const std::vector<int64_t>& order) {
    for (int64_t d : order)
      while (next_[d] < shape_[d]) add(0, static_cast<size_t>(d), 2);
  }
  LinearLayout finish() {
    std::vector<LinearLayout::InDim> ins;
    const std::string names[3] = {kRegister, kLane, kWarp};
    for (int in = 0; in < 3; ++in) {
      LinearLayout::InDim dim{names[in], {}};
      for (Basis b : bases_[in]) {
        bool outside = false;
        for (size_t d = 0; d < b.size(); ++d) outside |= b[d] >= shape_[d];
        if (outside && in == 0) continue;
        if (outside) std::fill(b.begin(), b.end(), 0);
        dim.bases.push_back(b);
      }
      ins.push_back(std::move(dim));
    }
    return LinearLayout(std::move(ins), outDims(shape_));
  }
  static std::vector<LinearLayout::OutDim> outDims(const Shape& shape) {
    std::vector<LinearLayout::OutDim> outs;
    for (size_t d = 0; d < shape.size(); ++d) outs.push_back({"dim" + std::to_string(d), shape[d]});
    return outs;
  }

 private:
  Shape shape_, next_;
  std::vector<Basis> bases_[3];
};

LinearLayout blockedLinear(const Blocked& b, const Shape& shape) {
  if (b.order.size() != shape.size()) throw InternalError("layout", str(Layout{b}) + " does not fit a rank-" + std::to_string(shape.size()) + " tile");
  Builder builder(shape);
  for (const auto& [in, sizes] : {std::pair{0, &b.sizePerThread}, {1, &b.threadsPerWarp}, {2, &b.warpsPerCTA}})
    for (int64_t d : b.order) builder.add(in, static_cast<size_t>(d), (*sizes)[static_cast<size_t>(d)]);
  builder.repeat(b.order);
  return builder.finish();
}

// Warps tile the last two dims, N first; an operand replicates over the warps of the
// dimension it lacks (a over N, b over M).
LinearLayout matrixLinear(const MatrixAcc& acc, int role, const Shape& shape) {
  if (acc.warpsPerCTA.size() != shape.size()) throw InternalError("layout", str(Layout{acc}) + " does not fit the tile");
  Builder builder(shape);
  builder.pattern(fragment(acc.instr, role));
  size_t rank = shape.size();
  for (size_t d : {rank - 1, rank - 2}) {
    bool replicate = (role == 0 && d == rank - 1) || (role == 1 && d == rank - 2);
    builder.add(2, d, acc.warpsPerCTA[d], replicate);
  }
  builder.repeat(rowMajorOrder(rank));
  return builder.finish();
}

// An FMA dot's operand: the parent's bases along the operand's non-k dimension, all of k in registers.
LinearLayout blockedOperandLinear(const Blocked& parent, int opIdx, const Shape& shape) {
  size_t kDim = opIdx == 0 ? 1 : 0, other = 1 - kDim;
  Shape parentShape = shape;
  parentShape[kDim] = 1;  // the parent's bases along the dot's other dimension vanish
  LinearLayout p = blockedLinear(parent, parentShape);
  std::vector<Basis> kBits;
  for (int64_t c = 1; c < shape[kDim]; c *= 2) kBits.push_back(kDim == 0 ? Basis{c, 0} : Basis{0, c});
  std::vector<Basis> reg = p.in(kRegister).bases;
  // Registers stay row-major: k is the fast dimension of a, the slow one of b.
  if (other == 0) reg.insert(reg.begin(), kBits.begin(), kBits.end());
  else reg.insert(reg.end(), kBits.begin(), kBits.end());
  return LinearLayout({{kRegister, reg}, p.in(kLane), p.in(kWarp)}, Builder::outDims(shape));
}

LinearLayout sliceLinear(const Slice& s, const Shape& shape) {
  Shape parentShape = shape;
  parentShape.insert(parentShape.begin() + s.dim, 1);
  LinearLayout p = toLinear(*s.parent, parentShape);
  std::vector<LinearLayout::InDim> ins = p.ins();
  for (auto& in : ins)
    for (Basis& b : in.bases) b.erase(b.begin() + s.dim);  // always 0: the dimension has size 1
  return LinearLayout(std::move(ins), Builder::outDims(shape));
}

// Offset bits: along order[0] (columns) within a block, then order[1] (rows, whose bits also
// XOR the column vector by their phase), then the column blocks, then the rest.
LinearLayout sharedLinear(const Shared& s, const Shape& shape) {
  size_t col = static_cast<size_t>(s.order[0]);
  int64_t block = s.block > 0 ? std::min(s.block, shape[col]) : shape[col];
  auto bits = [&](size_t d, int64_t from, int64_t to, bool swizzles, std::vector<Basis>& into) {
    for (int64_t c = from; c < to; c *= 2) {
      Basis b(shape.size(), 0);
      b[d] = c;
      if (swizzles) b[col] = (((c / s.perPhase) % s.maxPhase) * s.vec) % block;
      into.push_back(b);
    }
  };
  std::vector<Basis> bases;
  bits(col, 1, block, false, bases);
  for (size_t i = 1; i < s.order.size(); ++i) {
    size_t d = static_cast<size_t>(s.order[i]);
    bits(d, 1, shape[d], i == 1, bases);
    if (i == 1) bits(col, block, shape[col], false, bases);
  }
  if (s.order.size() == 1) bits(col, block, shape[col], false, bases);
  return LinearLayout({{kOffset, bases}}, Builder::outDims(shape));
}

std::string ints(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s.append(i ? "," : "").append(std::to_string(v[i]));
  return s + "]";
}

std::string accName(const MatrixAcc& m) {
  bool mma = m.instr == MatrixInstr::mma_m16n8k16 || m.instr == MatrixInstr::mma_m16n8k32;
  std::string_view family = mma                                   ? "mma"
                            : isWgmma(m.instr)                      ? "wgmma"
                            : m.instr == MatrixInstr::wmma_16x16x16 ? "wmma"
                                                                    : "mfma";
  return std::string("#").append(family).append("<").append(instrName(m.instr)).append(", wpc=").append(ints(m.warpsPerCTA)).append(">");
}

}  // namespace

std::string str(const Layout& l) {
  struct Printer {
    std::string operator()(const Uniform&) const { return "#uniform"; }
    std::string operator()(const Blocked& b) const {
      return "#blocked<spt=" + ints(b.sizePerThread) + ", tpw=" + ints(b.threadsPerWarp) + ", wpc=" + ints(b.warpsPerCTA) +
             ", order=" + ints(b.order) + ">";
    }
    std::string operator()(const MatrixAcc& m) const { return accName(m); }
    std::string operator()(const DotOperand& d) const {
      std::string kWidth;
      if (const auto* acc = d.parent->as<MatrixAcc>())
        kWidth = ", kWidth=" + std::to_string(fragment(acc->instr, d.opIdx).kWidth);
      return "#dot_op<opIdx=" + std::to_string(d.opIdx) + kWidth + ", " + str(*d.parent) + ">";
    }
    std::string operator()(const Slice& s) const { return "#slice<dim=" + std::to_string(s.dim) + ", " + str(*s.parent) + ">"; }
    std::string operator()(const Shared& s) const {
      return "#shared<vec=" + std::to_string(s.vec) + ", perPhase=" + std::to_string(s.perPhase) +
             ", maxPhase=" + std::to_string(s.maxPhase) + ", order=" + ints(s.order) +
             (s.block > 0 ? ", block=" + std::to_string(s.block) : "") + ">";
    }
  };
  return std::visit(Printer{}, l.kind);
}

LinearLayout toLinear(const Layout& l, const Shape& shape) {
  struct Linearize {
    const Shape& shape;
    LinearLayout operator()(const Uniform&) const {
      return LinearLayout({{kRegister, {}}, {kLane, {}}, {kWarp, {}}}, Builder::outDims(shape));
    }
    LinearLayout operator()(const Blocked& b) const { return blockedLinear(b, shape); }
    LinearLayout operator()(const MatrixAcc& m) const { return matrixLinear(m, 2, shape); }
    LinearLayout operator()(const DotOperand& d) const {
      if (shape.size() != 2) throw InternalError("layout", "a dot operand is a rank-2 tile");
      if (const auto* acc = d.parent->as<MatrixAcc>()) return matrixLinear(*acc, d.opIdx, shape);
      if (const auto* b = d.parent->as<Blocked>()) return blockedOperandLinear(*b, d.opIdx, shape);
      throw InternalError("layout", "a dot operand's parent must be a matrix or blocked layout");
    }
    LinearLayout operator()(const Slice& s) const { return sliceLinear(s, shape); }
    LinearLayout operator()(const Shared& s) const { return sharedLinear(s, shape); }
  };
  return std::visit(Linearize{paddedShape(shape)}, l.kind);
}

std::string_view kindName(ConversionKind k) {
  switch (k) {
    case ConversionKind::none: return "none";
    case ConversionKind::register_permute: return "register-permute";
    case ConversionKind::warp_shuffle: return "warp-shuffle";
    case ConversionKind::shared_memory: return "shared-memory";
  }
  return "?";
}

ConversionKind conversionKind(const Layout& a, const Layout& b, const Shape& shape) {
  bool registers = !a.as<Shared>() && !b.as<Shared>() && !a.as<Uniform>() && !b.as<Uniform>();
  if (!registers) return a == b ? ConversionKind::none : ConversionKind::shared_memory;
  LinearLayout la = toLinear(a, shape), lb = toLinear(b, shape);
  if (la == lb) return ConversionKind::none;
  // b's threads need data that a placed in: the same thread, the same warp, or anywhere.
  bool sameWarps = la.in(kWarp) == lb.in(kWarp);
  if (sameWarps && la.in(kLane) == lb.in(kLane) && la.spans({kRegister}, lb, {kRegister}))
    return ConversionKind::register_permute;
  if (sameWarps && la.spans({kRegister, kLane}, lb, {kRegister, kLane})) return ConversionKind::warp_shuffle;
  return ConversionKind::shared_memory;
}

}  // namespace tj::layout
