// The kernel-IR lowering's memory ops: block loads and stores (vectorized where the launch
// facts allow), gathers, scatters, atomics, prints and concatenations.
#include "lower/gpu/lowering.hpp"

namespace tj::gpu::detail {

auto Lowering::address(int64_t tensor, const std::vector<Reg>& index) -> std::pair<Reg, Reg> {
  Reg addr = -1, pred = -1;
  for (size_t d = 0; d < index.size(); ++d) {
    Reg inside = b_.cmp("ult", index[d], tensorParam(tensor, "size", int64_t(d)));
    Reg term = b_.binary("mul", index[d], tensorParam(tensor, "stride", int64_t(d)));
    pred = pred < 0 ? inside : b_.binary("and", pred, inside);
    addr = addr < 0 ? term : b_.binary("add", addr, term);
  }
  return {addr, pred};
}

auto Lowering::blockAddress(const ir::Op& op, int64_t tensor, const std::vector<Reg>& coord) -> std::pair<Reg, Reg> {
  std::vector<Reg> index;
  for (size_t d = 0; d < coord.size(); ++d) index.push_back(b_.binary("add", regs_.at(op.operands[d]).at(0), castTo(coord[d], DType::i64)));
  return address(tensor, index);
}

auto Lowering::indirectAddress(const ir::Op& op, const std::vector<std::vector<Reg>>& in, size_t r, size_t maskAt)
    -> std::pair<Reg, Reg> {
  int64_t tensor = op.get(ir::attr::tensor);
  std::vector<Reg> index;
  for (size_t d = 0; d < size_t(k_.tensors[size_t(tensor)].rank); ++d) index.push_back(castTo(in[d].at(r), DType::i64));
  auto [addr, pred] = address(tensor, index);
  if (maskAt < in.size()) pred = b_.binary("and", pred, in[maskAt].at(r));
  return {addr, pred};
}

auto Lowering::operands(const ir::Op& op) -> std::vector<std::vector<Reg>> {
  std::vector<std::vector<Reg>> in;
  for (size_t i = 0; i < op.operands.size(); ++i) in.push_back(operand(op, int(i)));
  return in;
}

auto Lowering::fillOf(const ir::Op& op) const -> KAttrValue {
  ir::Number fill = op.get(ir::attr::fill);
  const auto* exact = std::get_if<int64_t>(&fill);  // integers stay exact past 2^53
  return isFloat(dtypeOf(op.results[0])) ? KAttrValue(ir::asDouble(fill))
         : exact                         ? KAttrValue(*exact)
                                         : KAttrValue(int64_t(ir::asDouble(fill)));
}

void Lowering::load(const ir::Op& op) {
  ir::ValueId res = op.results[0];
  int64_t tensor = op.get(ir::attr::tensor);
  LinearLayout lin = linear(res);
  int64_t vec = vectorWidth(op, tensor, lin, k_.type(res).shape);
  std::vector<Reg> out;
  for (int64_t r = 0; r < registerCount(lin); r += vec) {
    auto [addr, pred] = blockAddress(op, tensor, coords(lin, r));
    std::vector<Reg> loaded = loadGlobal(op, addr, pred, vec);
    out.insert(out.end(), loaded.begin(), loaded.end());
  }
  define(res, out);
}

void Lowering::store(const ir::Op& op) {
  if (tmaStore(op)) return;
  int valueAt = int(op.operands.size()) - 1;
  int64_t tensor = op.get(ir::attr::tensor);
  const ir::Shape& shape = k_.type(op.operands.back()).shape;
  LinearLayout lin = layout::toLinear(operandLayout(op, valueAt), shape);
  std::vector<Reg> values = operand(op, valueAt);
  int64_t vec = vectorWidth(op, tensor, lin, shape);
  Reg owner = ownsCopies(lin);
  for (int64_t r = 0; r < registerCount(lin); r += vec) {
    if (isCopy(lin, r)) continue;  // copy bits are above a vector's: it is a copy as a whole
    std::vector<Reg> at = coords(lin, r);
    auto [addr, pred] = blockAddress(op, tensor, at);
    storeGlobal(tensor, addr, ownedElement(lin, r, at, shape, owner, pred), {values.begin() + r, values.begin() + r + vec});
  }
}

void Lowering::storeGlobal(int64_t tensor, Reg addr, Reg pred, const std::vector<Reg>& values) {
  std::vector<Reg> operands = {addr, pred};
  operands.insert(operands.end(), values.begin(), values.end());
  b_.effect(KOp::store_global, operands, {{"buffer", paramIndex(tensorName(tensor))}, {"vec", int64_t(values.size())}});
}

auto Lowering::vectorWidth(const ir::Op& op, int64_t tensor, const LinearLayout& lin, const ir::Shape& shape) const
    -> int64_t {
  bool allowed = size_t(tensor) < options_.vectorTensors.size() && options_.vectorTensors[size_t(tensor)];
  if (t_.vectorBytes == 0 || !allowed) return 1;
  size_t last = shape.size() - 1;
  int64_t vec = runAlong(lin, last, t_.vectorBytes / dtypeBytes(k_.tensors[size_t(tensor)].dtype));
  while (vec > 1 && (shape[last] % vec != 0 || divisors_.at(size_t(op.operands[last])) % vec != 0)) vec /= 2;
  return vec;
}

void Lowering::gather(const ir::Op& op) {
  std::vector<std::vector<Reg>> in = operands(op);
  size_t rank = size_t(k_.tensors[size_t(op.get(ir::attr::tensor))].rank);
  std::vector<Reg> out;
  for (size_t r = 0; r < in[0].size(); ++r) {
    auto [addr, pred] = indirectAddress(op, in, r, rank);
    out.push_back(loadGlobal(op, addr, pred, 1).at(0));
  }
  define(op.results[0], out);
}

void Lowering::scatter(const ir::Op& op) {
  int64_t tensor = op.get(ir::attr::tensor);
  size_t rank = size_t(k_.tensors[size_t(tensor)].rank);
  const ir::Shape& shape = k_.type(op.operands[rank]).shape;
  std::vector<std::vector<Reg>> in = operands(op);
  if (shape.empty()) {  // a uniform element: thread 0 writes it
    auto [addr, pred] = indirectAddress(op, in, 0, rank + 1);
    return storeGlobal(tensor, addr, b_.binary("and", pred, firstThread()), {in[rank].at(0)});
  }
  LinearLayout lin = layout::toLinear(operandLayout(op, int(rank)), shape);
  Reg owner = ownsCopies(lin);
  for (int64_t r = 0; r < registerCount(lin); ++r) {
    if (isCopy(lin, r)) continue;
    auto [addr, pred] = indirectAddress(op, in, size_t(r), rank + 1);
    storeGlobal(tensor, addr, ownedElement(lin, r, coords(lin, r), shape, owner, pred), {in[rank].at(size_t(r))});
  }
}

void Lowering::atomic(const ir::Op& op) {
  int64_t tensor = op.get(ir::attr::tensor);
  ir::ValueId res = op.results[0];
  const ir::Shape& shape = k_.type(res).shape;
  const std::string& fn = op.get(ir::attr::fn);
  size_t rank = size_t(k_.tensors[size_t(tensor)].rank), values = fn == "cas" ? 2 : 1;
  std::vector<std::vector<Reg>> in = operands(op);
  auto update = [&](size_t r, Reg owned) {
    auto [addr, inside] = indirectAddress(op, in, r, rank + values);
    std::vector<Reg> args = {addr, both(inside, owned), in[rank].at(r)};
    if (values == 2) args.push_back(in[rank + 1].at(r));
    return b_.emit(KOp::atomic_global, dtypeOf(res), args, {{"buffer", paramIndex(tensorName(tensor))}, {"fn", fn}});
  };
  if (shape.empty()) {  // a uniform element: thread 0 updates it
    Reg first = firstThread(), old = update(0, first);
    return define(res, {uses_.count(res) ? shareOwned(dtypeOf(res), {{b_.constant(DType::i32, 0), first, old}}, 1).at(0) : old});
  }
  LinearLayout lin = linear(res);
  Reg owner = ownsCopies(lin);
  std::vector<Reg> out(size_t(registerCount(lin)), -1);
  std::vector<Owned> owned;
  std::vector<size_t> ownedRegs;
  for (int64_t r = 0; r < registerCount(lin); ++r) {
    if (isCopy(lin, r)) continue;
    std::vector<Reg> at = coords(lin, r);
    Reg mine = ownedElement(lin, r, at, shape, owner, -1);
    out[size_t(r)] = update(size_t(r), mine);
    owned.push_back({slotOf(lin, r, at, shape, shape), mine, out[size_t(r)]});
    ownedRegs.push_back(size_t(r));
  }
  if (owner >= 0 && uses_.count(res)) {  // every thread reads the values their owners wrote
    std::vector<Reg> shared = shareOwned(dtypeOf(res), owned, k_.type(res).numel());
    for (size_t i = 0; i < ownedRegs.size(); ++i) out[ownedRegs[i]] = shared[i];
  }
  for (int64_t r = 0; r < registerCount(lin); ++r)
    if (isCopy(lin, r)) out[size_t(r)] = out.at(size_t(r & ~copyBits(lin)));
  define(res, out);
}

auto Lowering::shareOwned(DType dt, const std::vector<Owned>& regs, int64_t n) -> std::vector<Reg> {
  int64_t alloc = allocShared((n + 1) * dtypeBytes(dt), dt, "row-major, then a scratch slot for copies");
  Reg scratch = b_.constant(DType::i32, double(n));
  b_.effect(KOp::barrier);  // earlier readers of the aliased buffer are done
  for (const Owned& o : regs)
    b_.effect(KOp::store_shared, {o.owns < 0 ? o.flat : b_.select(o.owns, o.flat, scratch), o.value}, {{"alloc", alloc}});
  b_.effect(KOp::barrier);
  std::vector<Reg> out;
  for (const Owned& o : regs) out.push_back(b_.emit(KOp::load_shared, dt, {o.flat}, {{"alloc", alloc}}));
  return out;
}

void Lowering::print(const ir::Op& op) {
  if (regionDepth_ > 0) unsupported(op, "inside a fold, a while or an if (a GPU program prints once per launch)");
  ir::ValueId x = op.operands[0];
  const ir::Type& type = k_.type(x);
  f_.prints.push_back({op.get(ir::attr::label), type.dtype, type.shape,
                       f_.addBufferParam("p" + std::to_string(f_.prints.size()), type.dtype)});
  Reg slice = b_.binary("mul", programIndex(), b_.constant(DType::i64, double(std::max<int64_t>(1, type.numel()))));
  LinearLayout lin = layout::toLinear(operandLayout(op, 0), type.shape);
  std::vector<Reg> values = operand(op, 0);
  for (int64_t r = 0; r < registerCount(lin); ++r) {
    std::vector<Reg> at = coords(lin, r);
    Reg flat = at.empty() ? b_.constant(DType::i32, 0) : rowMajor(at, type.shape);
    Reg real = inside(lin, r, at, type.shape);
    b_.effect(KOp::store_global,
              {b_.binary("add", slice, b_.emit(KOp::cast, DType::i64, {flat})), real < 0 ? b_.constant(DType::boolean, 1) : real,
               values.at(size_t(r))},
              {{"buffer", int64_t(f_.prints.back().param)}, {"vec", int64_t{1}}});
  }
}

void Lowering::moveThroughMemory(const ir::Op& op, const ir::Shape& space, const std::vector<int64_t>& storeShift,
                                 int64_t loadShift) {
  size_t axis = size_t(op.get(ir::attr::axis));
  ir::ValueId res = op.results[0];
  DType dt = dtypeOf(res);
  int64_t n = ir::Type{dt, space}.numel();
  int64_t alloc = allocShared((n + 1) * dtypeBytes(dt), dt, "row-major, then a scratch slot for padding");
  auto position = [&](const LinearLayout& lin, int64_t r, const ir::Shape& shape, int64_t shift) {
    std::vector<Reg> at = coords(lin, r);
    at[axis] = b_.binary("add", at[axis], b_.constant(DType::i32, double(shift)));
    return slotOf(lin, r, at, shape, space);
  };
  b_.effect(KOp::barrier);  // earlier readers of the aliased buffer are done
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const ir::Shape& shape = k_.type(op.operands[i]).shape;
    LinearLayout lin = layout::toLinear(operandLayout(op, int(i)), shape);
    std::vector<Reg> values = operand(op, int(i));
    for (int64_t r = 0; r < registerCount(lin); ++r)
      b_.effect(KOp::store_shared, {position(lin, r, shape, storeShift[i]), values.at(size_t(r))}, {{"alloc", alloc}});
  }
  b_.effect(KOp::barrier);
  LinearLayout lin = linear(res);
  std::vector<Reg> out;
  for (int64_t r = 0; r < registerCount(lin); ++r)
    out.push_back(b_.emit(KOp::load_shared, dt, {position(lin, r, k_.type(res).shape, loadShift)}, {{"alloc", alloc}}));
  define(res, out);
}

void Lowering::concat(const ir::Op& op) {
  std::vector<int64_t> shifts;
  int64_t at = 0;
  for (ir::ValueId x : op.operands) {
    shifts.push_back(at);
    at += k_.type(x).shape[size_t(op.get(ir::attr::axis))];
  }
  moveThroughMemory(op, k_.type(op.results[0]).shape, shifts, 0);
}

}  // namespace tj::gpu::detail
