// Tile IR + layouts -> per-thread kernel IR, one tile-IR op at a time: the Lowering
// (lowering.hpp) and its parameters, coordinates, padding, elementwise ops and checks.
#include "lower/gpu/lower_to_kernel_ir.hpp"

#include <spdlog/spdlog.h>

#include "ir/fault_injection.hpp"
#include "ir/op_cases.hpp"
#include "lower/gpu/lowering.hpp"

// A switch over OpCode that leaves out an op is an error here (ir/op_cases.hpp).
#pragma GCC diagnostic error "-Wswitch"

namespace tj::gpu {

namespace detail {

auto Lowering::run() -> KernelFunction {
  // The first fold {specialize = 1} at the top level, where a producer warpgroup fits.
  bool fits = f_.workgroupSize % kProducerThreads == 0 && f_.workgroupSize + kProducerThreads <= t_.maxWorkgroupThreads;
  for (const ir::Op& op : k_.body.ops)
    if (!specialized_ && options_.warpSpecialize && t_.tma && fits && op.code == ir::OpCode::fold && op.has(ir::attr::specialize))
      specialized_ = &op;
  gemmShaped_ = gemmShaped(k_, a_);
  persistent_ = specialized_ && options_.persistent && gemmShaped_ && k_.gridRank <= 3;
  for (int64_t axis = 0; persistent_ && axis < k_.gridRank; ++axis)
    f_.params.push_back({KParam::Kind::program_count, "programs" + std::to_string(axis), DType::i64, 0, size_t(axis)});
  groupPrograms();
  if (specialized_) lowerSpecialized();
  else block(k_.body);
  if (handoff_) throw InternalError("kernel ir", "a fold's rings were handed on to no fold");
  if (t_.loopIterationLimit > 0 && hasLoops(f_)) {
    f_.loopIterationLimit = t_.loopIterationLimit;
    f_.faultBuffer();
  }
  if (f_.sharedBytes() > t_.sharedBytes)
    throw SharedOverBudget("kernel ir: unsupported: " + std::to_string(f_.sharedBytes()) + " bytes of workgroup memory on " +
                               t_.name + " (" + std::to_string(t_.sharedBytes) + " available)",
                           stagesUsed_, persistent_);
  return std::move(f_);
}

void Lowering::declareParams() {
  for (size_t t = 0; t < k_.tensors.size(); ++t) {
    std::string name = "t" + std::to_string(t);
    f_.params.push_back({KParam::Kind::buffer, name, k_.tensors[t].dtype, t});
    for (size_t d = 0; d < size_t(k_.tensors[t].rank); ++d)
      f_.params.push_back({KParam::Kind::size, name + ".size" + std::to_string(d), DType::i64, t, d});
    for (size_t d = 0; d < size_t(k_.tensors[t].rank); ++d)
      f_.params.push_back({KParam::Kind::stride, name + ".stride" + std::to_string(d), DType::i64, t, d});
  }
  for (size_t s = 0; s < k_.scalars.size(); ++s) f_.params.push_back({KParam::Kind::scalar, "s" + std::to_string(s), k_.scalars[s].dtype, s});
}

auto Lowering::paramIndex(const std::string& name) const -> int64_t {
  for (size_t i = 0; i < f_.params.size(); ++i)
    if (f_.params[i].name == name) return static_cast<int64_t>(i);
  throw InternalError("kernel ir", "no parameter " + name);
}

auto Lowering::idBits(KOp id, const std::vector<Basis>& bs, size_t dim, Reg acc) -> Reg {
  for (size_t i = 0; i < bs.size(); ++i) {
    if (bs[i][dim] == 0) continue;
    Reg shifted = b_.emit(id, DType::i32);
    if (i > 0) shifted = b_.binary("shr", shifted, b_.constant(DType::i32, double(i)));
    Reg term = b_.binary("and", shifted, b_.constant(DType::i32, 1));
    if (bs[i][dim] != 1) term = b_.binary("mul", term, b_.constant(DType::i32, double(bs[i][dim])));
    acc = acc < 0 ? term : b_.binary("xor", acc, term);
  }
  return acc;
}

auto Lowering::coords(const LinearLayout& lin, int64_t reg) -> std::vector<Reg> {
  Basis fixed = input(lin, layout::kRegister, reg);
  std::vector<Reg> out;
  for (size_t d = 0; d < lin.outs().size(); ++d) {
    Reg dyn = idBits(KOp::warp_id, bases(lin, layout::kWarp), d, idBits(KOp::lane_id, bases(lin, layout::kLane), d, -1));
    Reg c = b_.constant(DType::i32, double(fixed[d]));
    out.push_back(dyn < 0 ? c : fixed[d] == 0 ? dyn : b_.binary("xor", dyn, c));
  }
  return out;
}

auto Lowering::rowMajor(const std::vector<Reg>& at, const ir::Shape& shape) -> Reg {
  Reg flat = at[0];
  for (size_t d = 1; d < at.size(); ++d)
    flat = b_.binary("add", b_.binary("mul", flat, b_.constant(DType::i32, double(shape[d]))), at[d]);
  return flat;
}

auto Lowering::slotOf(const LinearLayout& lin, int64_t r, const std::vector<Reg>& at, const ir::Shape& shape,
                      const ir::Shape& space)
    -> Reg {
  Reg flat = rowMajor(at, space), real = inside(lin, r, coords(lin, r), shape);
  return real < 0 ? flat : b_.select(real, flat, b_.constant(DType::i32, double(ir::Type{DType::i32, space}.numel())));
}

auto Lowering::insideAlong(const LinearLayout& lin, int64_t reg, Reg c, size_t d, const ir::Shape& shape) -> Reg {
  int64_t reach = input(lin, layout::kRegister, reg)[d];
  for (const std::string& id : {layout::kLane, layout::kWarp})
    for (const Basis& b : bases(lin, id)) reach |= b[d];
  if (reach < shape[d]) return -1;
  return b_.cmp("lt", c, b_.constant(DType::i32, double(shape[d])));
}

auto Lowering::inside(const LinearLayout& lin, int64_t reg, const std::vector<Reg>& coord, const ir::Shape& shape)
    -> Reg {
  Reg all = -1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (Reg in = insideAlong(lin, reg, coord[d], d, shape); in >= 0) all = all < 0 ? in : b_.binary("and", all, in);
  return all;
}

auto Lowering::maskAlong(const LinearLayout& lin, int64_t reg, Reg c, size_t d, const ir::Shape& shape, Reg x,
                         const std::function<Reg()>& padding)
    -> Reg {
  Reg in = insideAlong(lin, reg, c, d, shape);
  return in < 0 ? x : b_.select(in, x, padding());
}

auto Lowering::remap(const std::vector<Reg>& src, const LinearLayout& from, const LinearLayout& to, const CoordMap& map,
                     const ir::Op& op, const layout::Layout& toLayout)
    -> std::vector<Reg> {
  for (const std::string& id : {layout::kLane, layout::kWarp})
    for (size_t i = 0; i < bases(to, id).size(); ++i)
      if (i >= bases(from, id).size() ? map(bases(to, id)[i]) != Coord(from.outs().size(), 0)
                                      : map(bases(to, id)[i]) != bases(from, id)[i])
        unsupported(op, "moving data between threads into " + layout::str(toLayout));
  std::map<Coord, Reg> byCoord;
  for (int64_t s = registerCount(from); s-- > 0;) byCoord[input(from, layout::kRegister, s)] = src.at(size_t(s));
  std::vector<Reg> out;
  for (int64_t r = 0; r < registerCount(to); ++r) {
    auto it = byCoord.find(map(input(to, layout::kRegister, r)));
    if (it == byCoord.end()) unsupported(op, "into " + layout::str(toLayout) + ": a register's element is elsewhere");
    out.push_back(it->second);
  }
  return out;
}

void Lowering::block(const ir::Block& b) {
  for (size_t i = 0; i < b.ops.size(); ++i) {
    const ir::Op& op = b.ops[i];
    try {
      nextOp_ = i + 1 < b.ops.size() ? &b.ops[i + 1] : nullptr;
      lower(op);
      if (op.code != ir::OpCode::fold) lastFoldStaged_.clear();
    } catch (const KBuilder::OverBudget& e) {
      std::string tile = op.results.empty() ? "" : "of " + k_.type(op.results[0]).str() + " ";
      std::string where = op.loc.known() ? "at " + op.loc.str() + " " : "";
      throw CodeOverBudget("kernel ir: unsupported: " + std::string(ir::opName(op.code)) + " " + tile + where +
                           "takes the kernel past " + e.what() + " on " + std::to_string(f_.workgroupSize) +
                           " threads, the budget that bounds the driver's compile time; use smaller blocks, or "
                           "p.fold over them");
    }
  }
}

void Lowering::lower(const ir::Op& op) {
  using ir::OpCode;
  ir::ValueId res = op.results.empty() ? -1 : op.results[0];
  if (res >= 0) producers_[res] = &op;
  if (readAheadViews_.count(res)) return;  // its copies run ahead; the dot reads the ring
  switch (op.code) {
    case OpCode::program_id: return define(res, {programId(op.get(ir::attr::axis))});
    case OpCode::num_programs: return define(res, {programCount(op.get(ir::attr::axis))});
    case OpCode::tensor_dim: return define(res, {tensorParam(op.get(ir::attr::tensor), "size", op.get(ir::attr::axis))});
    case OpCode::scalar_param: return define(res, {param("s" + std::to_string(op.get(ir::attr::index)))});
    case OpCode::constant: return define(res, std::vector<Reg>(size_t(countOf(res)), constantOf(op, dtypeOf(res))));
    case OpCode::iota: return iota(op);
    TJ_SHAPE_OPS: return reshape(op);
    TJ_REDUCTION_OPS: return reduce(op);
    TJ_UNARY_ELEMENTWISE_OPS: TJ_BINARY_ELEMENTWISE_OPS: case OpCode::select: case OpCode::fma: case OpCode::cast:
      return elementwise(op);
    case OpCode::dot: return dot(op);
    case OpCode::load: return load(op);
    case OpCode::store: return store(op);
    case OpCode::gather: return gather(op);
    case OpCode::scatter: return scatter(op);
    case OpCode::atomic: return atomic(op);
    case OpCode::check: return check(op);
    case OpCode::scan: return scan(op);
    case OpCode::slice: return moveThroughMemory(op, k_.type(op.operands[0]).shape, {0}, op.get(ir::attr::start));
    case OpCode::concat: return concat(op);
    case OpCode::sort: return sort(op);
    case OpCode::histogram: return histogram(op);
    case OpCode::fold: return fold(op);
    case OpCode::while_: return whileLoop(op);
    case OpCode::if_: return branch(op);
    case OpCode::print: return print(op);
    case OpCode::yield: return yield(op);
  }
}

auto Lowering::isNonzeroConstant(ir::ValueId v) const -> bool {
  auto it = producers_.find(v);
  if (it == producers_.end() || it->second->code != ir::OpCode::constant) return false;
  return ir::asDouble(it->second->get(ir::attr::value)) != 0;
}

void Lowering::iota(const ir::Op& op) {
  LinearLayout lin = linear(op.results[0]);
  std::vector<Reg> out;
  for (int64_t r = 0; r < registerCount(lin); ++r) out.push_back(coords(lin, r).at(size_t(op.get(ir::attr::axis))));
  define(op.results[0], out);
}

void Lowering::elementwise(const ir::Op& op) {
  std::vector<std::vector<Reg>> ins = operands(op);
  DType t = dtypeOf(op.results[0]);
  std::string fn(ir::opName(op.code));
  bool checked = (op.code == ir::OpCode::div || op.code == ir::OpCode::rem) && !isFloat(t) && !isNonzeroConstant(op.operands[1]);
  std::vector<KAttr> attrs = {{"fn", fn}};
  if (op.has(ir::attr::approx) && op.get(ir::attr::approx) != 0) attrs.push_back({"approx", int64_t{1}});
  std::vector<Reg> out;
  for (size_t r = 0; r < ins[0].size(); ++r) {
    std::vector<Reg> args;
    for (const auto& in : ins) args.push_back(in.at(r));
    if (checked) checkDivisor(linear(op.results[0]), int64_t(r), args[1], k_.type(op.results[0]).shape);
    if (op.code == ir::OpCode::cmp) out.push_back(b_.emit(KOp::cmp, t, args, {{"pred", op.get(ir::attr::pred)}}));
    else if (op.code == ir::OpCode::select) out.push_back(b_.emit(KOp::select, t, args));
    else if (op.code == ir::OpCode::fma) out.push_back(b_.emit(KOp::fma, t, args, {attrs.begin() + 1, attrs.end()}));
    else if (op.code == ir::OpCode::cast) out.push_back(b_.emit(KOp::cast, t, args));
    else out.push_back(b_.emit(args.size() == 1 ? KOp::unary : KOp::binary, t, args, attrs));
  }
  define(op.results[0], out);
}

void Lowering::reshape(const ir::Op& op) {
  std::optional<CoordMap> map = viewMap(k_, op);
  // Layout inference gives a reshape's result a layout of its own, and converts its operand
  // into it through workgroup memory, where no layout of the operand's shape holds the same
  // elements in the same threads.
  const layout::Conversion* c = a_.conversionAt(op, 0);
  bool ownLayout = op.code == ir::OpCode::reshape && c && c->to == a_.layouts.at(size_t(op.results[0]));
  if (!map || ownLayout) return reshapeThroughMemory(op);
  LinearLayout src = layout::toLinear(operandLayout(op, 0), k_.type(op.operands[0]).shape);
  define(op.results[0], remap(operand(op, 0), src, linear(op.results[0]), *map, op, a_.of(op.results[0])));
}

void Lowering::reshapeThroughMemory(const ir::Op& op) {
  ir::ValueId x = op.operands[0], res = op.results[0];
  DType dt = dtypeOf(x);
  int64_t n = k_.type(x).numel();
  int64_t alloc = allocShared((n + 1) * dtypeBytes(dt), dt, "row-major, then a scratch slot for padding");
  auto position = [&](const LinearLayout& lin, int64_t r, const ir::Shape& shape) {
    return slotOf(lin, r, coords(lin, r), shape, shape);
  };
  LinearLayout src = linear(x), dst = linear(res);
  b_.effect(KOp::barrier);  // earlier readers of the aliased buffer are done
  for (int64_t r = 0; r < registerCount(src); ++r)
    b_.effect(KOp::store_shared, {position(src, r, k_.type(x).shape), regs_.at(x).at(size_t(r))}, {{"alloc", alloc}});
  b_.effect(KOp::barrier);
  std::vector<Reg> out;
  for (int64_t r = 0; r < registerCount(dst); ++r)
    out.push_back(b_.emit(KOp::load_shared, dt, {position(dst, r, k_.type(res).shape)}, {{"alloc", alloc}}));
  define(res, out);
}

void Lowering::check(const ir::Op& op) {
  const ir::Shape& shape = k_.type(op.operands[0]).shape;
  std::vector<Reg> cond = operand(op, 0);
  Reg failed = -1, element = b_.constant(DType::i32, 0);
  std::optional<LinearLayout> lin;
  if (!shape.empty()) lin = layout::toLinear(operandLayout(op, 0), shape);
  for (size_t r = 0; r < cond.size(); ++r) {
    Reg bad = b_.cmp("eq", cond[r], b_.constant(DType::boolean, 0));
    if (lin) {
      std::vector<Reg> at = coords(*lin, int64_t(r));
      bad = both(bad, inside(*lin, int64_t(r), at, shape));
      element = b_.select(bad, rowMajor(at, shape), element);
    }
    failed = failed < 0 ? bad : b_.binary("or", failed, bad);
  }
  int64_t faults = int64_t(f_.faultBuffer());
  auto word = [&](FaultWord w) { return b_.constant(DType::i64, double(w)); };
  Reg old = b_.emit(KOp::atomic_global, DType::i32,
                    {word(FaultWord::check), failed, b_.constant(DType::i32, double(checks_++ + 1)), b_.constant(DType::i32, 0)},
                    {{"buffer", faults}, {"fn", std::string("cas")}});
  Reg won = b_.binary("and", failed, b_.cmp("eq", old, b_.constant(DType::i32, 0)));
  Reg program = programIndex();
  auto record = [&](FaultWord w, Reg value) {
    b_.effect(KOp::store_global, {word(w), won, value}, {{"buffer", faults}, {"vec", int64_t{1}}});
  };
  record(FaultWord::checkProgramLow, b_.emit(KOp::cast, DType::i32, {program}));
  record(FaultWord::checkProgramHigh, b_.emit(KOp::cast, DType::i32, {b_.binary("shru", program, b_.constant(DType::i64, 32))}));
  record(FaultWord::checkElement, element);
}

void Lowering::checkDivisor(const LinearLayout& lin, int64_t reg, Reg divisor, const ir::Shape& shape) {
  int64_t faults = int64_t(f_.faultBuffer());
  Reg zero = b_.cmp("eq", divisor, b_.constant(b_.type(divisor), 0));
  if (Reg real = inside(lin, reg, coords(lin, reg), shape); real >= 0) zero = b_.binary("and", zero, real);
  b_.effect(KOp::store_global,
            {b_.constant(DType::i64, double(FaultWord::divisionByZero)), zero, b_.constant(DType::i32, 1)},
            {{"buffer", faults}, {"vec", int64_t{1}}});
}

auto Lowering::programIndex() -> Reg {
  Reg index = programId(0);
  for (int64_t axis = 1; axis < k_.gridRank; ++axis)
    index = b_.binary("add", b_.binary("mul", index, programCount(axis)), programId(axis));
  return index;
}

// A GEMM's shape: a grid of two axes or more, and a fold's matrix-unit dot of two blocks its
// body loads (through views and casts). Attention's q comes from outside its fold and P from its
// softmax: its programs along axis 0 share a head's keys and values, which the workgroups' own
// order keeps together.
bool gemmShaped(const ir::Kernel& k, const layout::LayoutAssignment& a) {
  bool streamsBoth = false;
  ir::forEachOp(k.body, [&](const ir::Op& fold) {
    if (fold.code != ir::OpCode::fold) return;
    std::map<ir::ValueId, const ir::Op*> producer;
    auto loaded = [&](ir::ValueId v) {
      const ir::Op* op = producer.count(v) ? producer.at(v) : nullptr;
      while (op && op->code != ir::OpCode::load && op->operands.size() == 1 && producer.count(op->operands[0]))
        op = producer.at(op->operands[0]);
      return op && op->code == ir::OpCode::load;
    };
    for (const ir::Op& op : fold.regions.at(0).ops) {
      streamsBoth |= op.code == ir::OpCode::dot && a.of(op.results[0]).as<layout::MatrixAcc>() && loaded(op.operands[0]) &&
                     loaded(op.operands[1]);
      for (ir::ValueId r : op.results) producer[r] = &op;
    }
  });
  return k.gridRank >= 2 && streamsBoth;
}

void Lowering::groupPrograms() {
  if (persistent_ || !gemmShaped_) return;
  auto u32 = [&](Reg r) { return castTo(r, DType::u32); };
  groupedIds_ = groupedIds([&](Reg rows) { return b_.binary("add", u32(workgroupId(0)), b_.binary("mul", u32(workgroupId(1)), rows)); },
                           {workgroupId(0), workgroupId(1)});
}

auto Lowering::groupedIds(const std::function<Reg(Reg rows)>& started, std::array<Reg, 2> plain) -> std::array<Reg, 2> {
  // In u32 (GPUs divide 64-bit integers in long sequences), where the plane's programs number
  // under 2^32.
  auto u32 = [&](Reg r) { return castTo(r, DType::u32); };
  auto constant = [&](int64_t v) { return b_.constant(DType::u32, double(v)); };
  Reg rows = u32(programCount(0)), columns = u32(programCount(1)), linear = started(rows);
  Reg perGroup = b_.binary("mul", b_.binary("min", rows, constant(kProgramGroup)), columns);  // at most the plane
  Reg group = b_.binary("div", linear, perGroup);
  Reg first = b_.binary("mul", group, constant(kProgramGroup));
  Reg size = b_.binary("min", b_.binary("sub", rows, first), constant(kProgramGroup));  // the last group may be short
  Reg within = b_.binary("sub", linear, b_.binary("mul", group, perGroup));
  Reg fits = b_.cmp("lt", b_.binary("mul", programCount(0), programCount(1)), b_.constant(DType::i64, 0x1p32));
  std::array<Reg, 2> grouped = {b_.binary("add", first, b_.binary("rem", within, size)), b_.binary("div", within, size)};
  return {b_.select(fits, castTo(grouped[0], DType::i64), plain[0]), b_.select(fits, castTo(grouped[1], DType::i64), plain[1])};
}

auto Lowering::programIds(Reg linear) -> std::array<Reg, 3> {
  std::array<Reg, 3> ids = {linear, b_.constant(DType::i64, 0), b_.constant(DType::i64, 0)};
  Reg rest = linear;
  for (int64_t axis = 0; axis + 1 < k_.gridRank; ++axis) {
    Reg count = programCount(axis);
    ids[size_t(axis)] = b_.binary("rem", rest, count);
    ids[size_t(axis) + 1] = rest = b_.binary("div", rest, count);
  }
  if (!gemmShaped_) return ids;
  Reg plane = b_.binary("mul", programCount(0), programCount(1));
  std::array<Reg, 2> grouped =
      groupedIds([&](Reg) { return castTo(b_.binary("rem", linear, plane), DType::u32); }, {ids[0], ids[1]});
  return {grouped[0], grouped[1], k_.gridRank > 2 ? b_.binary("div", linear, plane) : ids[2]};
}

auto Lowering::copyBits(const LinearLayout& lin) -> int64_t {
  const std::vector<Basis>& bs = bases(lin, layout::kRegister);
  int64_t bits = 0;
  for (size_t i = 0; i < bs.size(); ++i)
    if (std::ranges::all_of(bs[i], [](int64_t x) { return x == 0; })) bits |= int64_t{1} << i;
  return bits;
}

auto Lowering::ownsCopies(const LinearLayout& lin) -> Reg {
  Reg owns = -1;
  const std::pair<std::string, KOp> ids[] = {{layout::kLane, KOp::lane_id}, {layout::kWarp, KOp::warp_id}};
  const int threadBits[] = {layout::log2Exact(t_.subgroupSize), layout::log2Exact(t_.warpsPerProgram)};
  for (size_t which = 0; which < 2; ++which) {
    const auto& [name, id] = ids[which];
    const std::vector<Basis>& bs = bases(lin, name);
    for (size_t i = 0; i < size_t(threadBits[which]); ++i) {
      if (i < bs.size() && !std::ranges::all_of(bs[i], [](int64_t x) { return x == 0; })) continue;
      Reg bit = b_.binary("and", b_.emit(id, DType::i32), b_.constant(DType::i32, double(int64_t{1} << i)));
      Reg zero = b_.cmp("eq", bit, b_.constant(DType::i32, 0));
      owns = owns < 0 ? zero : b_.binary("and", owns, zero);
    }
  }
  return owns;
}

}  // namespace detail

using detail::Lowering;

bool allowsVectorAccess(uintptr_t address, DType t, const std::vector<int64_t>& sizes,
                        const std::vector<int64_t>& strides, int64_t bytes) {
  int64_t elements = bytes / dtypeBytes(t);
  if (sizes.empty() || elements < 1 || address % uint64_t(bytes) != 0) return false;
  if (strides.back() != 1 || sizes.back() % elements != 0) return false;
  return std::all_of(strides.begin(), strides.end() - 1, [&](int64_t s) { return s % elements == 0; });
}

KernelFunction lowerToKernelIR(const ir::Kernel& k, const layout::LayoutAssignment& a, const layout::Target& t,
                               const KernelLoweringOptions& options) {
  if (t.name == "cpu") throw Error("kernel ir: unsupported: target cpu (one thread per program; use the llvm stage)");
  testing::raiseArmedFault("kernel ir", k.name);
  ReadAheadPlan readAhead = planReadAhead(k, a);
  if (spdlog::should_log(spdlog::level::debug)) {  // each step's result, as tile-ir prints it
    spdlog::debug("tilejit: {} layouts\n{}", k.name, layout::printWithLayouts(k, a));
    spdlog::debug("tilejit: {} read-ahead plan\n{}", k.name, printReadAhead(k, readAhead));
  }
  KernelLoweringOptions tried = options;
  bool mayPersist = options.persistent;
  while (true) {
    try {
      KernelFunction f = Lowering(k, a, readAhead, t, tried).run();
      if (spdlog::should_log(spdlog::level::debug)) spdlog::debug("tilejit: {} kernel IR\n{}", k.name, print(f));
      return f;
    } catch (const Lowering::SharedOverBudget& e) {
      // A persistent kernel's rings share no bytes with its result's staging: with the same
      // stages, not persistent; with fewer, persistent again.
      if (e.persistent) {
        tried.persistent = false;
        continue;
      }
      if (e.stages <= 1) throw;
      tried.maxStages = e.stages - 1;  // smaller rings
      tried.persistent = mayPersist;
    } catch (const Lowering::CannotPersist& e) {
      spdlog::debug("tilejit: {} not persistent: {}", k.name, e.what());
      tried.persistent = mayPersist = false;
    } catch (const Lowering::CannotSpecialize& e) {
      spdlog::debug("tilejit: {} without warp specialization: {}", k.name, e.what());
      tried.warpSpecialize = false;
    }
  }
}

}  // namespace tj::gpu
