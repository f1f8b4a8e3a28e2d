// The kernel-IR lowering's reductions (registers, lanes, warps), scans, sorts and histograms.
#include "lower/gpu/lowering.hpp"

namespace tj::gpu::detail {

auto Lowering::mixes(const Basis& b, size_t axis) -> bool {
  bool along = b[axis] != 0, across = false;
  for (size_t d = 0; d < b.size(); ++d) across |= d != axis && b[d] != 0;
  return along && across;
}

void Lowering::reduce(const ir::Op& op) {
  size_t axis = size_t(op.get(ir::attr::axis));
  const ir::Shape& shape = k_.type(op.operands[0]).shape;
  LinearLayout src = layout::toLinear(operandLayout(op, 0), shape);
  for (const auto& in : src.ins())
    for (const Basis& b : in.bases)
      if (mixes(b, axis)) unsupported(op, "over " + layout::str(operandLayout(op, 0)) + ": a bit mixes the reduced axis");
  std::vector<Reg> in = operand(op, 0);
  std::map<Coord, Partial> groups;  // the register coordinate with the axis zeroed -> partial result
  for (int64_t r = 0; r < registerCount(src); ++r) {
    Coord key = input(src, layout::kRegister, r);
    key[axis] = 0;
    Partial x = element(op, src, r, in.at(size_t(r)), shape);
    auto [it, fresh] = groups.emplace(key, x);
    if (!fresh) it->second = combine(op.code, it->second, x);
  }
  for (auto& [key, partial] : groups) partial = acrossLanes(op.code, partial, bases(src, layout::kLane), axis);
  acrossWarps(op.code, groups, bases(src, layout::kWarp), axis);
  std::vector<Reg> out;
  LinearLayout dst = linear(op.results[0]);
  for (int64_t r = 0; r < registerCount(dst); ++r) {
    Coord key = input(dst, layout::kRegister, r);
    key.insert(key.begin() + std::ptrdiff_t(axis), 0);
    const Partial& p = groups.at(key);
    out.push_back(isArg(op.code) ? p.index : p.value);
  }
  define(op.results[0], out);
}

auto Lowering::element(const ir::Op& op, const LinearLayout& src, int64_t r, Reg x, const ir::Shape& shape) -> Partial {
  size_t axis = size_t(op.get(ir::attr::axis));
  if (isArg(op.code) && b_.type(x) == DType::boolean) x = b_.emit(KOp::cast, DType::i32, {x});
  Reg at = coords(src, r)[axis];
  Reg value = maskAlong(src, r, at, axis, shape, x, [&] { return identity(op.code, b_.type(x)); });
  if (!isArg(op.code)) return {value};
  Reg index = maskAlong(src, r, at, axis, shape, at, [&] { return b_.constant(DType::i32, double(shape[axis])); });
  return {value, index};
}

auto Lowering::identity(ir::OpCode code, DType t) -> Reg {
  bool isMax = code == ir::OpCode::reduce_max || code == ir::OpCode::argmax;
  if (code == ir::OpCode::reduce_sum) return b_.constant(t, isFloat(t) ? -0.0 : 0.0);
  if (isFloat(t)) return b_.constant(t, isMax ? -INFINITY : INFINITY);
  if (t == DType::boolean) return b_.constant(t, isMax ? 0.0 : 1.0);
  if (isUnsigned(t)) return b_.constant(t, isMax ? 0.0 : -1.0);  // -1: all ones
  Reg lowest = b_.constant(t, -std::ldexp(1.0, int(dtypeBytes(t)) * 8 - 1));
  return isMax ? lowest : b_.binary("xor", lowest, b_.constant(t, -1.0));  // the largest: ~lowest
}

auto Lowering::combine(ir::OpCode code, const Partial& a, const Partial& b) -> Partial {
  if (!isArg(code)) return {b_.binary(combineFn(code), a.value, b.value)};
  Reg earlier = b_.cmp("lt", b.index, a.index);
  Reg bWins = b_.binary("or", b_.cmp(code == ir::OpCode::argmax ? "gt" : "lt", b.value, a.value),
                        b_.binary("and", b_.cmp("eq", b.value, a.value), earlier));
  if (isFloat(b_.type(a.value))) {
    Reg aNaN = b_.cmp("ne", a.value, a.value), bNaN = b_.cmp("ne", b.value, b.value);
    Reg aNumber = b_.unary("not", aNaN);
    bWins = b_.select(bNaN, b_.binary("or", aNumber, earlier), b_.binary("and", aNumber, bWins));
  }
  return {b_.select(bWins, b.value, a.value), b_.select(bWins, b.index, a.index)};
}

auto Lowering::acrossLanes(ir::OpCode code, Partial x, const std::vector<Basis>& lanes, size_t axis) -> Partial {
  std::vector<int64_t> masks;
  for (size_t i = 0; i < lanes.size(); ++i)
    if (lanes[i][axis] != 0) masks.push_back(int64_t{1} << i);
  if (masks.empty()) return x;
  if (!isArg(code) && masks.back() == int64_t{1} << (masks.size() - 1))  // bits 0..n-1
    return {b_.emit(KOp::subgroup_reduce, b_.type(x.value), {x.value},
                    {{"fn", std::string(combineFn(code))}, {"cluster", masks.back() * 2}})};
  for (int64_t m : masks) x = combine(code, x, shuffleXor(x, m));
  return x;
}

void Lowering::acrossWarps(ir::OpCode code, std::map<Coord, Partial>& groups, const std::vector<Basis>& warps,
                           size_t axis) {
  int64_t axisMask = 0;
  for (size_t i = 0; i < warps.size(); ++i)
    if (warps[i][axis] != 0) axisMask |= int64_t{1} << i;
  if (axisMask == 0) return;
  int64_t W = t_.warpsPerProgram, L = t_.subgroupSize, G = int64_t(groups.size());
  DType dt = b_.type(groups.begin()->second.value);
  int64_t values = allocShared(G * W * L * dtypeBytes(dt), dt, "reduction partials [group][warp][lane]");
  int64_t indices = isArg(code) ? allocShared(G * W * L * 4, DType::i32, "their indices", f_.shared[size_t(values)].bytes) : -1;
  Reg warp = b_.emit(KOp::warp_id, DType::i32), lane = b_.emit(KOp::lane_id, DType::i32);
  auto slot = [&](int64_t g, Reg w) {
    Reg row = b_.binary("add", b_.constant(DType::i32, double(g * W)), w);
    return b_.binary("add", b_.binary("mul", row, b_.constant(DType::i32, double(L))), lane);
  };
  b_.effect(KOp::barrier);
  int64_t g = 0;
  for (auto& [key, partial] : groups) {
    b_.effect(KOp::store_shared, {slot(g, warp), partial.value}, {{"alloc", values}});
    if (partial.index >= 0) b_.effect(KOp::store_shared, {slot(g, warp), partial.index}, {{"alloc", indices}});
    ++g;
  }
  b_.effect(KOp::barrier);
  Reg base = b_.binary("and", warp, b_.constant(DType::i32, double(~axisMask)));
  g = 0;
  for (auto& [key, partial] : groups) {
    std::optional<Partial> acc;
    for (int64_t m = 0; m <= axisMask; ++m) {
      if ((m & ~axisMask) != 0) continue;  // m ranges over the reduced warp bits
      Reg w = m == 0 ? base : b_.binary("or", base, b_.constant(DType::i32, double(m)));
      Partial x{b_.emit(KOp::load_shared, dt, {slot(g, w)}, {{"alloc", values}})};
      if (partial.index >= 0) x.index = b_.emit(KOp::load_shared, DType::i32, {slot(g, w)}, {{"alloc", indices}});
      acc = acc ? combine(code, *acc, x) : x;
    }
    partial = *acc;
    ++g;
  }
}

void Lowering::scan(const ir::Op& op) {
  if (scanInSubgroups(op)) return;
  const ir::Shape& shape = k_.type(op.results[0]).shape;
  ScanPlan s = planScan(shape, size_t(op.get(ir::attr::axis)));
  LinearLayout lin = linear(op.results[0]);
  std::vector<DType> types;
  for (ir::ValueId v : op.operands) types.push_back(dtypeOf(v));
  // A slot per thread past the elements: where a thread's loops point when it has no element.
  s.allocs = allocSharedTogether(types, s.count + f_.workgroupSize, "row-major, then a scratch slot per thread");
  s.scratch = b_.binary("add", b_.emit(KOp::thread_id, DType::i32), b_.constant(DType::i32, double(s.count)));
  std::vector<Reg> flat;
  for (int64_t r = 0; r < registerCount(lin); ++r) flat.push_back(slotOf(lin, r, coords(lin, r), shape, shape));
  b_.effect(KOp::barrier);  // an aliased buffer's readers are done
  for (size_t i = 0; i < op.operands.size(); ++i) {
    std::vector<Reg> values = operand(op, int(i));
    for (size_t r = 0; r < flat.size(); ++r) b_.effect(KOp::store_shared, {flat[r], values[r]}, {{"alloc", s.allocs[i]}});
  }
  b_.effect(KOp::barrier);
  scanChunks(op, s);
  if (s.chunks > 1) {
    b_.effect(KOp::barrier);
    carryAcrossChunks(op, s);
    b_.effect(KOp::barrier);
    addCarries(op, s);
  }
  b_.effect(KOp::barrier);
  for (size_t i = 0; i < op.operands.size(); ++i) {
    std::vector<Reg> out;
    for (Reg at : flat) out.push_back(b_.emit(KOp::load_shared, types[i], {at}, {{"alloc", s.allocs[i]}}));
    define(op.results[i], out);
  }
}

auto Lowering::scanInSubgroups(const ir::Op& op) -> bool {
  size_t axis = size_t(op.get(ir::attr::axis));
  LinearLayout lin = linear(op.results[0]);
  int64_t length = layout::paddedShape(k_.type(op.results[0]).shape)[axis];
  std::vector<std::pair<const std::string*, size_t>> bitFrom(size_t(std::countr_zero(uint64_t(length))), {nullptr, 0});
  static const std::string kIds[] = {layout::kRegister, layout::kLane, layout::kWarp};
  for (const std::string& id : kIds)
    for (size_t i = 0; i < bases(lin, id).size(); ++i) {
      const Basis& b = bases(lin, id)[i];
      if (b[axis] == 0) continue;
      bool single = std::has_single_bit(uint64_t(b[axis])) &&
                    std::count(b.begin(), b.end(), 0) == std::ptrdiff_t(b.size()) - 1;
      size_t bit = size_t(std::countr_zero(uint64_t(b[axis])));
      if (&id == &kIds[2] || !single || bit >= bitFrom.size() || bitFrom[bit].first) return false;
      bitFrom[bit] = {&id, i};
    }
  if (std::ranges::any_of(bitFrom, [](const auto& f) { return f.first == nullptr; })) return false;
  size_t n = op.operands.size();
  std::vector<std::vector<Reg>> S, T;  // [register][operand]
  for (int64_t r = 0; r < registerCount(lin); ++r) {
    S.emplace_back();
    for (size_t i = 0; i < n; ++i) S.back().push_back(operand(op, int(i)).at(size_t(r)));
  }
  T = S;
  // Along a run of lane bits each block also carries E, the combined totals of the lanes'
  // blocks before its own in the run (where `has`), which S takes at the run's end.
  std::vector<std::vector<Reg>> E;
  Reg has = -1;  // -1: no lane bit of the run is set
  auto endLaneRun = [&] {
    if (E.empty()) return;
    for (size_t r = 0; r < S.size(); ++r) {
      std::vector<Reg> withEarlier = combine(op, E[r], S[r]);
      for (size_t v = 0; v < n; ++v) S[r][v] = b_.select(has, withEarlier[v], S[r][v]);
    }
    E.clear();
    has = -1;
  };
  // A run of register bits takes its 2^m blocks in order, carrying their combined totals.
  std::vector<size_t> registerRun;
  auto endRegisterRun = [&] {
    if (registerRun.empty()) return;
    size_t runMask = 0;
    for (size_t i : registerRun) runMask |= size_t{1} << i;
    std::vector<std::vector<Reg>> before = T;
    for (size_t first = 0; first < T.size(); ++first) {
      if (first & runMask) continue;
      auto member = [&](size_t j) {  // the register of block j of the run, with first's other bits
        size_t r = first;
        for (size_t t = 0; t < registerRun.size(); ++t)
          if ((j >> t) & 1) r |= size_t{1} << registerRun[t];
        return r;
      };
      size_t blocks = size_t{1} << registerRun.size();
      std::vector<Reg> carry = before[first];
      for (size_t j = 1; j < blocks; ++j) {
        S[member(j)] = combine(op, carry, S[member(j)]);
        carry = combine(op, carry, before[member(j)]);
      }
      for (size_t j = 0; j < blocks; ++j) T[member(j)] = carry;
    }
    registerRun.clear();
  };
  for (const auto& [id, i] : bitFrom) {
    if (*id == layout::kRegister) {
      endLaneRun();
      registerRun.push_back(i);
      continue;
    }
    endRegisterRun();
    if (E.empty()) E = T;  // a placeholder until `has`
    Reg bit = b_.binary("and", b_.binary("shr", b_.emit(KOp::lane_id, DType::i32), b_.constant(DType::i32, double(i))),
                        b_.constant(DType::i32, 1));
    Reg upper = b_.cmp("ne", bit, b_.constant(DType::i32, 0));
    std::map<Reg, Reg> moved;  // each block's T crosses lanes once
    for (size_t r = 0; r < T.size(); ++r) {
      std::vector<Reg> partner;
      for (Reg t : T[r]) {
        auto [it, fresh] = moved.try_emplace(t, -1);
        if (fresh) it->second = b_.emit(KOp::shuffle_xor, b_.type(t), {t}, {{"mask", int64_t{1} << i}});
        partner.push_back(it->second);
      }
      // The partner's block is the lower half where this lane is the upper one.
      std::vector<Reg> upperT = combine(op, partner, T[r]);
      std::vector<Reg> lowerT = commutes(op) ? upperT : combine(op, T[r], partner);
      std::vector<Reg> earlier = has < 0 ? partner : combine(op, partner, E[r]);
      for (size_t v = 0; v < n; ++v) {
        E[r][v] = b_.select(upper, has < 0 ? partner[v] : b_.select(has, earlier[v], partner[v]), E[r][v]);
        T[r][v] = upperT[v] == lowerT[v] ? upperT[v] : b_.select(upper, upperT[v], lowerT[v]);
      }
    }
    has = has < 0 ? upper : b_.binary("or", has, upper);
  }
  endRegisterRun();
  endLaneRun();
  for (size_t v = 0; v < n; ++v) {
    std::vector<Reg> out;
    for (const std::vector<Reg>& regs : S) out.push_back(regs[v]);
    define(op.results[v], out);
  }
  return true;
}

auto Lowering::planScan(const ir::Shape& shape, size_t axis) const -> ScanPlan {
  ScanPlan s;
  s.count = ir::Type{DType::i32, shape}.numel();
  s.length = shape[axis];
  for (size_t d = axis + 1; d < shape.size(); ++d) s.stride *= shape[d];
  s.lines = s.count / std::max<int64_t>(1, s.length);
  int64_t root = int64_t(std::ceil(std::sqrt(double(s.length))));
  int64_t chunks = std::clamp<int64_t>(f_.workgroupSize / std::max<int64_t>(1, s.lines), 1, root);
  s.chunkLength = (s.length + chunks - 1) / chunks;
  s.chunks = (s.length + s.chunkLength - 1) / s.chunkLength;
  return s;
}

auto Lowering::forEach(int64_t n, const std::vector<Reg>& inits,
                       const std::function<std::vector<Reg>(Reg, const std::vector<Reg>&)>& body)
    -> std::vector<Reg> {
  if (n <= 0) return inits;
  if (n == 1) return body(b_.constant(DType::i32, 0), inits);
  std::vector<DType> types;
  for (Reg r : inits) types.push_back(b_.type(r));
  std::vector<Reg> operands = {b_.constant(DType::i32, 0), b_.constant(DType::i32, double(n))};
  operands.insert(operands.end(), inits.begin(), inits.end());
  std::vector<Reg> results = b_.emitMulti(KOp::for_loop, types, operands, {});
  types.insert(types.begin(), DType::i32);
  std::vector<Reg> args = b_.openRegion(types);
  b_.effect(KOp::yield, body(args[0], std::vector<Reg>(args.begin() + 1, args.end())));
  b_.closeRegion();
  return results;
}

auto Lowering::scanItem(const ScanPlan& s, Reg i, int64_t items) -> ScanItem {
  Reg threads = b_.constant(DType::i32, double(f_.workgroupSize));
  Reg item = b_.binary("add", b_.emit(KOp::thread_id, DType::i32), b_.binary("mul", i, threads));
  Reg real = items % f_.workgroupSize == 0 ? -1 : b_.cmp("lt", item, b_.constant(DType::i32, double(items)));
  Reg chunks = b_.constant(DType::i32, double(s.chunks));
  Reg line = s.chunks == 1 ? item : b_.binary("div", item, chunks);
  Reg chunk = s.chunks == 1 ? b_.constant(DType::i32, 0) : b_.binary("rem", item, chunks);
  // Line l starts at (l / stride) * length * stride + l % stride.
  Reg stride = b_.constant(DType::i32, double(s.stride));
  Reg start = s.stride == 1 ? b_.binary("mul", line, b_.constant(DType::i32, double(s.length)))
                            : b_.binary("add", b_.binary("mul", b_.binary("div", line, stride), b_.constant(DType::i32, double(s.length * s.stride))),
                                        b_.binary("rem", line, stride));
  return {real, start, chunk};
}

auto Lowering::loadScan(const ir::Op& op, const ScanPlan& s, Reg at) -> std::vector<Reg> {
  std::vector<Reg> out;
  for (size_t i = 0; i < s.allocs.size(); ++i)
    out.push_back(b_.emit(KOp::load_shared, dtypeOf(op.operands[i]), {at}, {{"alloc", s.allocs[i]}}));
  return out;
}

void Lowering::scanChunks(const ir::Op& op, const ScanPlan& s) {
  int64_t items = s.lines * s.chunks;
  forEach((items + f_.workgroupSize - 1) / f_.workgroupSize, {}, [&](Reg i, const std::vector<Reg>&) {
    ScanItem item = scanItem(s, i, items);
    Reg first = b_.binary("mul", item.chunk, b_.constant(DType::i32, double(s.chunkLength)));
    std::vector<Reg> running = loadScan(op, s, scanSlot(s, item.line, first, item.real));
    forEach(s.chunkLength - 1, running, [&](Reg k, const std::vector<Reg>& earlier) {
      Reg along = b_.binary("add", first, b_.binary("add", k, b_.constant(DType::i32, 1)));
      Reg ok = s.length % s.chunkLength == 0 ? item.real
                                             : both(item.real, b_.cmp("lt", along, b_.constant(DType::i32, double(s.length))));
      Reg at = scanSlot(s, item.line, along, ok);
      std::vector<Reg> combined = combine(op, earlier, loadScan(op, s, at));
      storeScan(s, at, combined);
      return combined;
    });
    return std::vector<Reg>{};
  });
}

void Lowering::carryAcrossChunks(const ir::Op& op, const ScanPlan& s) {
  ScanItem line = scanItem(s, b_.constant(DType::i32, 0), s.lines * s.chunks);  // thread t's item t: chunk 0 of line t / chunks
  Reg real = both(line.real, b_.cmp("eq", line.chunk, b_.constant(DType::i32, 0)));
  Reg chunkLength = b_.constant(DType::i32, double(s.chunkLength)), one = b_.constant(DType::i32, 1);
  std::vector<Reg> running = loadScan(op, s, scanSlot(s, line.line, b_.binary("sub", chunkLength, one), real));
  forEach(s.chunks - 1, running, [&](Reg c, const std::vector<Reg>& earlier) {
    // The last element of chunk c + 1: min((c + 2) * chunkLength, length) - 1.
    Reg end = b_.binary("mul", b_.binary("add", c, b_.constant(DType::i32, 2)), chunkLength);
    Reg last = b_.binary("sub", b_.binary("min", end, b_.constant(DType::i32, double(s.length))), one);
    Reg at = scanSlot(s, line.line, last, real);
    std::vector<Reg> combined = combine(op, earlier, loadScan(op, s, at));
    storeScan(s, at, combined);
    return combined;
  });
}

void Lowering::addCarries(const ir::Op& op, const ScanPlan& s) {
  int64_t items = s.lines * s.chunks;
  forEach((items + f_.workgroupSize - 1) / f_.workgroupSize, {}, [&](Reg i, const std::vector<Reg>&) {
    ScanItem item = scanItem(s, i, items);
    Reg real = both(item.real, b_.cmp("gt", item.chunk, b_.constant(DType::i32, 0)));
    Reg first = b_.binary("mul", item.chunk, b_.constant(DType::i32, double(s.chunkLength)));
    Reg one = b_.constant(DType::i32, 1);
    std::vector<Reg> carry = loadScan(op, s, scanSlot(s, item.line, b_.binary("sub", first, one), real));
    forEach(s.chunkLength - 1, {}, [&](Reg k, const std::vector<Reg>&) {
      Reg along = b_.binary("add", first, k);
      Reg at = scanSlot(s, item.line, along, both(real, b_.cmp("lt", along, b_.constant(DType::i32, double(s.length - 1)))));
      storeScan(s, at, combine(op, carry, loadScan(op, s, at)));
      return std::vector<Reg>{};
    });
    return std::vector<Reg>{};
  });
}

auto Lowering::commutes(const ir::Op& op) const -> bool {
  if (!op.regions.empty()) return false;
  const std::string& fn = op.get(ir::attr::fn);
  return fn == "add" || fn == "mul" || (!isFloat(dtypeOf(op.operands[0])) && (fn == "max" || fn == "min"));
}

auto Lowering::combine(const ir::Op& op, const std::vector<Reg>& earlier, const std::vector<Reg>& later)
    -> std::vector<Reg> {
  if (op.regions.empty()) return {b_.binary(op.get(ir::attr::fn), earlier[0], later[0])};
  const ir::Block& region = op.regions[0];
  for (size_t i = 0; i < earlier.size(); ++i) {
    define(region.args[i], {earlier[i]});
    define(region.args[earlier.size() + i], {later[i]});
  }
  for (size_t i = 0; i + 1 < region.ops.size(); ++i) lower(region.ops[i]);  // the yield is read here
  std::vector<Reg> out;
  for (ir::ValueId v : region.ops.back().operands) out.push_back(regs_.at(v).at(0));
  return out;
}

void Lowering::sort(const ir::Op& op) {
  ir::Shape padded = layout::paddedShape(k_.type(op.results[0]).shape);
  size_t axis = size_t(op.get(ir::attr::axis));
  SortLines s;
  s.length = padded[axis];
  for (size_t d = axis + 1; d < padded.size(); ++d) s.stride *= padded[d];
  int64_t count = ir::Type{DType::i32, padded}.numel();
  s.pairs = count / 2;
  LinearLayout lin = linear(op.results[0]);
  std::vector<Reg> slot, along;
  for (int64_t r = 0; r < registerCount(lin); ++r) {
    std::vector<Reg> at = coords(lin, r);
    slot.push_back(rowMajor(at, padded));
    along.push_back(at[axis]);
  }
  std::vector<std::vector<Reg>> values = {operand(op, 0), along};
  s.types = {dtypeOf(op.operands[0]), DType::i32};
  // A payload of the positions along the axis (an argsort, a topk) is the origins.
  bool payloadIsOrigin = op.operands.size() == 2 && operand(op, 1) == along;
  if (op.operands.size() == 2 && !payloadIsOrigin) {
    values.push_back(operand(op, 1));
    s.types.push_back(dtypeOf(op.operands[1]));
  }
  bool idle = s.pairs % f_.workgroupSize != 0;  // some threads have no pair in a step's last round
  s.allocs = allocSharedTogether(s.types, count + (idle ? f_.workgroupSize : 0),
                                 idle ? "row-major over the padded shape, then a scratch slot per thread"
                                      : "row-major over the padded shape");
  if (idle) s.scratch = b_.binary("add", b_.emit(KOp::thread_id, DType::i32), b_.constant(DType::i32, double(count)));
  b_.effect(KOp::barrier);  // an aliased buffer's readers are done
  for (size_t v = 0; v < values.size(); ++v)
    for (size_t r = 0; r < slot.size(); ++r) b_.effect(KOp::store_shared, {slot[r], values[v][r]}, {{"alloc", s.allocs[v]}});
  // Stage t (k = 2^t) has steps j = k/2 .. 1: step u of it is j = 2^(t - 1 - u).
  int64_t stages = std::countr_zero(uint64_t(s.length));
  Reg one = b_.constant(DType::i32, 1);
  forEach(stages, {}, [&](Reg stage, const std::vector<Reg>&) {
    Reg t = b_.binary("add", stage, one);
    Reg k = b_.binary("shl", one, t);
    forRange(t, [&](Reg u) {
      Reg j = b_.binary("shl", one, b_.binary("sub", b_.binary("sub", t, one), u));
      b_.effect(KOp::barrier);  // the previous step's stores are done
      forEach((s.pairs + f_.workgroupSize - 1) / f_.workgroupSize, {}, [&](Reg round, const std::vector<Reg>&) {
        compareExchange(op, s, round, k, j);
        return std::vector<Reg>{};
      });
    });
    return std::vector<Reg>{};
  });
  b_.effect(KOp::barrier);
  for (size_t result = 0; result < op.results.size(); ++result) {
    size_t v = result == 0 ? 0 : payloadIsOrigin ? 1 : 2;
    std::vector<Reg> out;
    for (Reg at : slot) out.push_back(b_.emit(KOp::load_shared, s.types[v], {at}, {{"alloc", s.allocs[v]}}));
    define(op.results[result], out);
  }
}

void Lowering::forRange(Reg n, const std::function<void(Reg)>& body) {
  b_.emitMulti(KOp::for_loop, {}, {b_.constant(DType::i32, 0), n}, {});
  std::vector<Reg> args = b_.openRegion({DType::i32});
  body(args[0]);
  b_.effect(KOp::yield, {});
  b_.closeRegion();
}

void Lowering::compareExchange(const ir::Op& op, const SortLines& s, Reg round, Reg k, Reg j) {
  auto i32 = [&](int64_t v) { return b_.constant(DType::i32, double(v)); };
  Reg q = b_.binary("add", b_.emit(KOp::thread_id, DType::i32), b_.binary("mul", round, i32(f_.workgroupSize)));
  Reg distance = b_.binary("mul", j, i32(s.stride));
  Reg low = b_.binary("and", q, b_.binary("sub", distance, i32(1)));
  Reg first = b_.binary("add", b_.binary("mul", b_.binary("sub", q, low), i32(2)), low);
  Reg second = b_.binary("add", first, distance);
  if (s.scratch >= 0) {
    Reg real = b_.cmp("lt", q, i32(s.pairs));
    first = b_.select(real, first, s.scratch);
    second = b_.select(real, second, s.scratch);
  }
  std::vector<Reg> a, b;
  for (size_t v = 0; v < s.allocs.size(); ++v) {
    a.push_back(b_.emit(KOp::load_shared, s.types[v], {first}, {{"alloc", s.allocs[v]}}));
    b.push_back(b_.emit(KOp::load_shared, s.types[v], {second}, {{"alloc", s.allocs[v]}}));
  }
  Reg position = b_.binary("and", b_.binary("div", first, i32(s.stride)), i32(s.length - 1));
  Reg ascending = b_.cmp("eq", b_.binary("and", position, k), i32(0));
  Reg swap = b_.cmp("eq", sortsBefore(op, b[0], b[1], a[0], a[1]), ascending);
  for (size_t v = 0; v < s.allocs.size(); ++v) {
    b_.effect(KOp::store_shared, {first, b_.select(swap, b[v], a[v])}, {{"alloc", s.allocs[v]}});
    b_.effect(KOp::store_shared, {second, b_.select(swap, a[v], b[v])}, {{"alloc", s.allocs[v]}});
  }
}

auto Lowering::sortsBefore(const ir::Op& op, Reg a, Reg i, Reg b, Reg o) -> Reg {
  DType dt = dtypeOf(op.operands[0]);
  bool descending = op.get(ir::attr::descending) != 0;
  Reg before = b_.cmp(descending ? "gt" : "lt", a, b), tie = b_.cmp("eq", a, b);
  if (isFloat(dt)) {
    Reg aNaN = b_.cmp("ne", a, a), bNaN = b_.cmp("ne", b, b);
    Reg nanFirst = descending ? both(aNaN, b_.unary("not", bNaN)) : both(b_.unary("not", aNaN), bNaN);
    before = b_.binary("or", before, nanFirst);
    tie = b_.binary("or", tie, both(aNaN, bNaN));
  }
  before = b_.binary("or", before, both(tie, b_.cmp("lt", i, o)));
  int64_t n = k_.type(op.operands[0]).shape[size_t(op.get(ir::attr::axis))];
  if (n == layout::paddedShape({n})[0]) return before;
  Reg real = b_.cmp("lt", i, b_.constant(DType::i32, double(n))), otherReal = b_.cmp("lt", o, b_.constant(DType::i32, double(n)));
  return b_.select(b_.cmp("eq", real, otherReal), before, real);
}

void Lowering::histogram(const ir::Op& op) {
  ir::ValueId x = op.operands[0], res = op.results[0];
  int64_t bins = op.get(ir::attr::bins);
  int64_t alloc = allocShared(alignTo16(paddedNumel(res) * 4), DType::i32, "one count per bin");
  LinearLayout counts = linear(res), in = linear(x);
  b_.effect(KOp::barrier);  // an aliased allocation's readers are done
  for (int64_t r = 0; r < registerCount(counts); ++r)
    b_.effect(KOp::store_shared, {coords(counts, r)[0], b_.constant(DType::i32, 0)}, {{"alloc", alloc}});
  b_.effect(KOp::barrier);
  DType wide = dtypeBytes(dtypeOf(x)) == 8 ? DType::i64 : DType::i32;  // bins may not fit 8 bits
  Reg owns = ownsCopies(in), one = b_.constant(DType::i32, 1), zero = b_.constant(DType::i32, 0);
  const std::vector<Reg>& values = regs_.at(x);
  for (int64_t r = 0; r < registerCount(in); ++r) {
    if (isCopy(in, r)) continue;
    Reg v = dtypeOf(x) == wide ? values[size_t(r)] : b_.emit(KOp::cast, wide, {values[size_t(r)]});
    Reg binned = b_.cmp("ult", v, b_.constant(wide, double(bins)));
    Reg counted = ownedElement(in, r, coords(in, r), k_.type(x).shape, owns, binned);
    Reg bin = b_.select(binned, wide == DType::i32 ? v : b_.emit(KOp::cast, DType::i32, {v}), zero);
    b_.effect(KOp::atomic_shared, {bin, b_.select(counted, one, zero)}, {{"alloc", alloc}});
  }
  b_.effect(KOp::barrier);
  std::vector<Reg> out;
  for (int64_t r = 0; r < registerCount(counts); ++r)
    out.push_back(b_.emit(KOp::load_shared, DType::i32, {coords(counts, r)[0]}, {{"alloc", alloc}}));
  define(res, out);
}

}  // namespace tj::gpu::detail
