// The kernel-IR lowering's layout conversions: register renames, warp shuffles solved over
// GF(2), and tiles staged through workgroup memory (ldmatrix where it fits).
#include "lower/gpu/lowering.hpp"

namespace tj::gpu::detail {

auto Lowering::lazyOperand(const ir::Op& op, int i, int64_t sharedOffset) -> Operand {
  ir::ValueId v = op.operands[size_t(i)];
  if (auto ahead = readAhead_.find(v); ahead != readAhead_.end()) return Operand(*this, ahead->second.staged);
  const layout::Conversion* c = a_.conversionAt(op, i);
  const std::vector<Reg>& src = regs_.at(v);
  if (!c || c->kind == layout::ConversionKind::none) return Operand(*this, src);
  LinearLayout from = linear(*c->from, v), to = linear(*c->to, v);
  if (c->kind == layout::ConversionKind::register_permute)
    return Operand(*this, remap(src, from, to, [](const Coord& x) { return x; }, op, *c->to));
  if (c->kind == layout::ConversionKind::warp_shuffle) {
    // 8-bit elements move four to a shuffle.
    DType dt = dtypeOf(v);
    std::optional<std::vector<Reg>> moved = dtypeBytes(dt) == 1 ? throughPackedShuffles(src, from, to, dt) : std::nullopt;
    if (!moved) moved = throughShuffles(src, from, to);
    if (moved) return Operand(*this, *moved);
  }
  return Operand(*this, stageInShared(v, src, from, to, c->via ? layout::Layout{*c->via} : plainShared(v), sharedOffset));
}

auto Lowering::solveShuffles(const LinearLayout& from, const LinearLayout& to) const -> std::optional<ShuffleSolution> {
  const std::vector<std::string> ids = {layout::kRegister, layout::kLane, layout::kWarp};
  std::vector<std::string> present;  // those the source has: the others add no bits
  for (const std::string& id : ids)
    if (!bases(from, id).empty()) present.push_back(id);
  // Per destination bit: the source register, lane and warp bits whose bases XOR to its basis.
  auto solve = [&](const Basis& b) -> std::optional<std::array<int64_t, 3>> {
    std::optional<uint64_t> combo = from.combinationOf(present, b);
    if (!combo) return std::nullopt;
    std::array<int64_t, 3> parts{0, 0, 0};
    size_t column = 0;  // bit of the combination: the source's bases in ids order
    for (size_t id = 0; id < ids.size(); ++id)
      for (size_t i = 0; i < bases(from, ids[id]).size(); ++i, ++column)
        if (*combo >> column & 1) parts[id] ^= int64_t{1} << i;
    return parts;
  };
  ShuffleSolution s;
  for (const Basis& b : bases(to, layout::kRegister)) s.regBits.push_back(solve(b).value_or(std::array<int64_t, 3>{-1, 0, 0}));
  for (const Basis& b : bases(to, layout::kLane)) s.laneBits.push_back(solve(b).value_or(std::array<int64_t, 3>{-1, 0, 0}));
  for (const auto& p : s.regBits) if (p[0] < 0 || p[2] != 0) return std::nullopt;
  for (const auto& p : s.laneBits) if (p[0] < 0 || p[2] != 0) return std::nullopt;
  for (size_t i = 0; i < bases(to, layout::kWarp).size(); ++i) {
    auto p = solve(bases(to, layout::kWarp)[i]);
    if (!p || (*p)[0] != 0 || (*p)[1] != 0 || (*p)[2] != (int64_t{1} << i)) return std::nullopt;
  }
  return s;
}

Reg Lowering::sourceLane(const ShuffleSolution& s, int64_t constant) {
  std::vector<Basis> laneMap;
  for (const auto& p : s.laneBits) laneMap.push_back({p[1]});
  Reg lane = idBits(KOp::lane_id, laneMap, 0, -1);
  Reg c = b_.constant(DType::i32, double(constant));
  return lane < 0 ? c : constant == 0 ? lane : b_.binary("xor", lane, c);
}

auto Lowering::throughShuffles(const std::vector<Reg>& src, const LinearLayout& from, const LinearLayout& to)
    -> std::optional<std::vector<Reg>> {
  std::optional<ShuffleSolution> s = solveShuffles(from, to);
  if (!s) return std::nullopt;
  // This lane's bits -> the source register offset (when the register depends on the lane,
  // every lane reads each candidate register and selects its own).
  std::vector<Basis> regMap;
  std::set<int64_t> offsets = {0};
  for (const auto& p : s->laneBits) {
    regMap.push_back({p[0]});
    for (int64_t o : std::set<int64_t>(offsets)) offsets.insert(o ^ p[0]);
  }
  if (int64_t(offsets.size()) > options_.maxShuffleCandidates) return std::nullopt;
  Reg regOffset = offsets.size() > 1 ? idBits(KOp::lane_id, regMap, 0, -1) : -1;
  std::vector<Reg> out;
  for (int64_t r = 0; r < registerCount(to); ++r) {
    int64_t base = 0, srcLane = 0;
    for (size_t i = 0; i < s->regBits.size(); ++i)
      if (r >> i & 1) base ^= s->regBits[i][0], srcLane ^= s->regBits[i][1];
    Reg lane = sourceLane(*s, srcLane);
    Reg value = -1;
    for (int64_t o : offsets) {
      Reg x = src.at(size_t(base ^ o));
      Reg moved = b_.emit(KOp::shuffle_idx, b_.type(x), {x, lane});
      Reg mine = value < 0 ? -1 : b_.cmp("eq", regOffset, b_.constant(DType::i32, double(o)));
      value = value < 0 ? moved : b_.select(mine, moved, value);
    }
    out.push_back(value);
  }
  return out;
}

auto Lowering::throughPackedShuffles(const std::vector<Reg>& src, const LinearLayout& from, const LinearLayout& to, DType dt)
    -> std::optional<std::vector<Reg>> {
  constexpr int64_t perWord = 4, wordBits = 2;  // 8-bit elements
  std::optional<ShuffleSolution> s = solveShuffles(from, to);
  if (!s || int64_t(s->regBits.size()) < wordBits) return std::nullopt;
  // The source register offsets a lane's bits select among: candidate c is the XOR of the
  // independent offsets `spanning` picked by c's bits; each lane bit picks `pick`.
  std::vector<int64_t> spanning;
  auto offsetOf = [&](int64_t c) {
    int64_t o = 0;
    for (size_t i = 0; i < spanning.size(); ++i)
      if (c >> i & 1) o ^= spanning[i];
    return o;
  };
  std::vector<Basis> pick;
  for (const auto& p : s->laneBits) {
    int64_t c = 0, n = int64_t{1} << spanning.size();
    while (c < n && offsetOf(c) != p[0]) ++c;
    if (c == n) spanning.push_back(p[0]);  // independent of those before: a new candidate bit
    pick.push_back({c});
  }
  const int64_t candidates = int64_t{1} << spanning.size();
  // A word's elements (its registers' lowest bits) by the source lane they come from.
  auto contribution = [&](int64_t bits, size_t from, size_t to, size_t part) {
    int64_t x = 0;
    for (size_t i = from; i < to; ++i)
      if (bits >> (i - from) & 1) x ^= s->regBits[i][part];
    return x;
  };
  std::map<int64_t, std::vector<int64_t>> groups;  // source lane offset -> the word's elements
  for (int64_t e = 0; e < perWord; ++e) groups[contribution(e, 0, size_t(wordBits), 1)].push_back(e);
  if (groups.size() > 2) return std::nullopt;  // one byte_perm merges two words
  for (const auto& [lane, elements] : groups)
    if (int64_t(elements.size()) * candidates > perWord) return std::nullopt;
  // Each sender packs every candidate's elements of a group (the same registers in every
  // lane); a receiver's byte_perm picks its own candidate's from the group's two words. The
  // selector is linear in the candidate: its bytes lie |elements| further per step.
  int64_t selector = 0, step = 0, g = 0;
  for (const auto& [lane, elements] : groups) {
    for (size_t k = 0; k < elements.size(); ++k) {  // element elements[k] is destination byte elements[k]
      selector |= (4 * g + int64_t(k)) << 4 * elements[k];
      step |= int64_t(elements.size()) << 4 * elements[k];
    }
    ++g;
  }
  Reg select = b_.constant(DType::u32, double(selector));
  if (candidates > 1) {
    Reg candidate = castTo(idBits(KOp::lane_id, pick, 0, -1), DType::u32);
    select = b_.binary("add", select, b_.binary("mul", candidate, b_.constant(DType::u32, double(step))));
  }
  std::vector<Reg> out;
  for (int64_t w = 0; w < registerCount(to) / perWord; ++w) {
    int64_t baseReg = contribution(w, size_t(wordBits), s->regBits.size(), 0);
    int64_t baseLane = contribution(w, size_t(wordBits), s->regBits.size(), 1);
    std::vector<Reg> words;
    for (const auto& [laneOffset, elements] : groups) {
      std::vector<Reg> packed;
      for (int64_t c = 0; c < candidates; ++c)
        for (int64_t e : elements) packed.push_back(src.at(size_t(baseReg ^ contribution(e, 0, size_t(wordBits), 0) ^ offsetOf(c))));
      packed.resize(size_t(perWord), packed[0]);
      Reg word = b_.emit(KOp::pack, DType::u32, packed);
      words.push_back(b_.emit(KOp::shuffle_idx, DType::u32, {word, sourceLane(*s, baseLane ^ laneOffset)}));
    }
    Reg merged = b_.emit(KOp::byte_perm, DType::u32, {words.front(), words.back(), select});
    std::vector<Reg> parts = b_.emitMulti(KOp::unpack, std::vector<DType>(size_t(perWord), dt), {merged}, {});
    out.insert(out.end(), parts.begin(), parts.end());
  }
  return out;
}

auto Lowering::stageInShared(ir::ValueId v, const std::vector<Reg>& src, const LinearLayout& from,
                             const LinearLayout& to, const layout::Layout& mem, int64_t offset, bool asyncProxy)
    -> Staged {
  std::optional<LinearLayout> offsetOf = layout::toLinear(mem, k_.type(v).shape).invert();
  if (!offsetOf) throw Unsupported("kernel ir: unsupported: a non-invertible workgroup-memory layout " + layout::str(mem));
  DType dt = k_.type(v).dtype;
  int64_t alloc = allocShared(paddedNumel(v) * dtypeBytes(dt), dt, layout::str(mem), offset);
  LinearLayout storeAt = offsetOf->compose(from), loadAt = offsetOf->compose(to);
  b_.effect(KOp::barrier);  // earlier readers of the aliased buffer are done
  storeRegisters(storeAt, src, alloc, [](int64_t) { return true; });
  if (asyncProxy) b_.effect(KOp::fence_async_shared);
  b_.effect(KOp::barrier);
  return {alloc, loadAt, matrixLoad(loadAt, dt, alloc)};
}

void Lowering::storeRegisters(const LinearLayout& at, const std::vector<Reg>& src, int64_t alloc,
                              const std::function<bool(int64_t)>& keep) {
  int64_t vec = sharedVectorWidth(at, f_.shared[size_t(alloc)].dtype, alloc);
  for (int64_t r = 0; r < registerCount(at); r += vec) {
    if (!keep(r)) continue;
    std::vector<Reg> operands = {coords(at, r)[0]};
    operands.insert(operands.end(), src.begin() + r, src.begin() + r + vec);
    b_.effect(KOp::store_shared, operands, {{"alloc", alloc}});
  }
}

auto Lowering::sharedVectorWidth(const LinearLayout& at, DType dt, int64_t alloc) const -> int64_t {
  if (t_.vectorBytes == 0 || f_.shared[size_t(alloc)].offset % t_.vectorBytes != 0) return 1;
  int64_t vec = runAlong(at, 0, t_.vectorBytes / dtypeBytes(dt));
  const std::vector<Basis>& regs = bases(at, layout::kRegister);
  auto aligned = [&](const Basis& b) { return b[0] % vec == 0; };
  bool others = std::all_of(regs.begin() + std::countr_zero(uint64_t(vec)), regs.end(), aligned) &&
                std::ranges::all_of(bases(at, layout::kLane), aligned) && std::ranges::all_of(bases(at, layout::kWarp), aligned);
  return others ? vec : 1;
}

auto Lowering::runAlong(const LinearLayout& lin, size_t axis, int64_t most) -> int64_t {
  const std::vector<Basis>& regs = bases(lin, layout::kRegister);
  int64_t vec = 1;
  for (size_t bit = 0; vec < most && bit < regs.size(); ++bit, vec *= 2) {
    Basis step(lin.outs().size(), 0);
    step[axis] = vec;
    if (regs[bit] != step) break;
  }
  return vec;
}

void Lowering::loadStaged(const Staged& s, int64_t r, std::vector<Reg>& regs) {
  if (s.matrices) return loadMatrices(*s.matrices, s, r, regs);
  DType dt = f_.shared[size_t(s.alloc)].dtype;
  // Registers consecutive in memory leave it together, as one access of up to the target's widest.
  int64_t vec = sharedVectorWidth(s.loadAt, dt, s.alloc), first = r / vec * vec;
  std::vector<Reg> loaded = b_.emitMulti(KOp::load_shared, std::vector<DType>(size_t(vec), dt),
                                         {plus(coords(s.loadAt, first)[0], s.base)}, {{"alloc", s.alloc}});
  std::ranges::copy(loaded, regs.begin() + first);
}

auto Lowering::matrixLoad(const LinearLayout& loadAt, DType dt, int64_t alloc) const -> std::optional<MatrixLoad> {
  int64_t width = dtypeBytes(dt);
  if (!t_.ldmatrix || (width != 1 && width != 2) || f_.shared[size_t(alloc)].offset % 16 != 0) return std::nullopt;
  auto offsets = [&](const std::string& id) {
    std::vector<int64_t> o;
    for (const Basis& b : bases(loadAt, id)) o.push_back(b[0]);
    return o;
  };
  std::vector<int64_t> reg = offsets(layout::kRegister), lane = offsets(layout::kLane);
  // 8-bit elements go two to a 16-bit one: a register bit must step to the next byte, and
  // ldmatrix cannot transpose within the pairs.
  int64_t byteBit = width == 1 ? std::ranges::find(reg, 1) - reg.begin() : -1;
  if (byteBit == int64_t(reg.size())) return std::nullopt;
  auto halves = [&](int64_t o) { return width == 1 ? (o % 2 == 0 ? o / 2 : -1) : o; };  // in 16-bit elements
  auto wholeRows = [&](int64_t o) { return halves(o) >= 0 && halves(o) % 8 == 0; };
  if (lane.size() != 5 || !std::ranges::all_of(offsets(layout::kWarp), wholeRows)) return std::nullopt;
  for (bool trans : {false, true}) {
    if (trans && width == 1) break;
    bool lanesFit = trans ? halves(lane[2]) == 1 && halves(lane[3]) == 2 && halves(lane[4]) == 4 && wholeRows(lane[0]) &&
                                wholeRows(lane[1])
                          : halves(lane[0]) == 2 && halves(lane[1]) == 4 && wholeRows(lane[2]) && wholeRows(lane[3]) &&
                                wholeRows(lane[4]);
    int64_t pair = -1;
    for (int64_t bit = 0; bit < int64_t(reg.size()) && pair < 0; ++bit)
      if (bit != byteBit && (trans ? wholeRows(reg[size_t(bit)]) : halves(reg[size_t(bit)]) == 1)) pair = bit;
    if (!lanesFit || pair < 0) continue;
    MatrixLoad m{trans, pair, byteBit, {}, {}};
    bool rowsFit = true;
    for (int64_t bit = 0; bit < int64_t(reg.size()); ++bit) {
      if (bit == m.pairBit || bit == byteBit) continue;
      rowsFit = rowsFit && wholeRows(reg[size_t(bit)]);
      if (m.matrixBits.size() < 2) m.matrixBits.push_back(bit);
    }
    if (!rowsFit) continue;
    // Lane l supplies row l % 8 of matrix l / 8.
    std::vector<int64_t> rowLanes = trans ? std::vector<int64_t>{reg[size_t(m.pairBit)], lane[0], lane[1]}
                                          : std::vector<int64_t>{lane[2], lane[3], lane[4]};
    for (int64_t bit : m.matrixBits) rowLanes.push_back(reg[size_t(bit)]);
    for (int64_t o : rowLanes) m.rowOf.push_back({o});
    return m;
  }
  return std::nullopt;
}

void Lowering::loadMatrices(const MatrixLoad& m, const Staged& s, int64_t r, std::vector<Reg>& out) {
  const LinearLayout& loadAt = s.loadAt;
  int64_t alloc = s.alloc;
  int64_t spanned = int64_t{1} << m.pairBit, num = int64_t{1} << m.matrixBits.size();
  for (int64_t bit : m.matrixBits) spanned |= int64_t{1} << bit;
  if (m.byteBit >= 0) spanned |= int64_t{1} << m.byteBit;
  int64_t first = r & ~spanned;
  Reg rows = idBits(KOp::warp_id, bases(loadAt, layout::kWarp), 0, idBits(KOp::lane_id, m.rowOf, 0, -1));
  Reg at = b_.constant(DType::i32, double(input(loadAt, layout::kRegister, first)[0]));
  at = plus(rows < 0 ? at : b_.binary("xor", rows, at), s.base);
  DType dt = f_.shared[size_t(alloc)].dtype;
  int64_t perWord = 4 / dtypeBytes(dt);  // elements per 32-bit result register
  std::vector<Reg> loaded = b_.emitMulti(KOp::ldmatrix, std::vector<DType>(size_t(perWord * num), dt), {at},
                                         {{"alloc", alloc}, {"num", num}, {"trans", int64_t{m.trans}}});
  for (int64_t e = 0; e < int64_t(loaded.size()); ++e) {  // word j's pair element, then byte
    int64_t x = first, j = e / perWord, inWord = e % perWord;
    for (size_t b = 0; b < m.matrixBits.size(); ++b)
      if (j >> b & 1) x |= int64_t{1} << m.matrixBits[b];
    if (inWord / (perWord / 2)) x |= int64_t{1} << m.pairBit;
    if (perWord == 4 && inWord % 2) x |= int64_t{1} << m.byteBit;
    out.at(size_t(x)) = loaded[size_t(e)];
  }
}

auto Lowering::paddedNumel(ir::ValueId v) const -> int64_t {
  int64_t n = 1;
  for (int64_t d : layout::paddedShape(k_.type(v).shape)) n *= d;
  return n;
}

auto Lowering::allocSharedTogether(const std::vector<DType>& types, int64_t elements, const std::string& what)
    -> std::vector<int64_t> {
  std::vector<int64_t> allocs;
  for (int64_t offset = 0; DType dt : types) {
    allocs.push_back(allocShared(alignTo16(elements * dtypeBytes(dt)), dt, what, offset));
    offset += f_.shared.back().bytes;
  }
  return allocs;
}

}  // namespace tj::gpu::detail
