#include "lower/cpu/plan_buffers.hpp"

#include "ir/op_cases.hpp"
#include "ir/print_annotated.hpp"

// A switch over OpCode that leaves out an op is an error here (ir/op_cases.hpp).
#pragma GCC diagnostic error "-Wswitch"

namespace tj::cpu {

namespace {

// A nest reads each block its expression loads through a view of its own (a base and a row
// stride held across the nest, an edge test before it). A sum of N reads fused into one nest
// was N times that code in a single op, which no chunk boundary splits, with 2N values live in
// one loop: a tile whose expression would stage more than kMaxFusedLoads blocks gets a buffer
// instead (nests of 8 to 32 reads compiled alike, 64 a fifth slower; no sample stages more than
// a few).
constexpr int kMaxFusedLoads = 16;

// A tile used more than once is computed again at each use, rather than written to a buffer
// and read back, when its fused expression costs at most kMaxRecomputedOps one-instruction ops
// (adds, compares, selects...) per element and it has at most kMaxRecomputedUses uses (and no
// tensor is written between them): in memory-bound kernels the buffer's extra pass costs more
// (layernorm's `where(inRow, x - mean, 0)`, read three times: 4096x1024 0.78 -> 0.71 ms).
constexpr int kMaxRecomputedOps = 4, kMaxRecomputedUses = 4;

// What an op costs per element, in one-instruction ops, computed again at each use.
int opCost(OpCode c) {
  switch (c) {
    case OpCode::neg: case OpCode::abs: case OpCode::relu: case OpCode::floor: case OpCode::ceil:
    case OpCode::logical_not: case OpCode::add: case OpCode::sub: case OpCode::mul: case OpCode::max:
    case OpCode::min: case OpCode::logical_and: case OpCode::logical_or: case OpCode::cmp: case OpCode::bit_xor:
    case OpCode::shl: case OpCode::shr: case OpCode::shru: case OpCode::select: case OpCode::fma: case OpCode::cast:
      return 1;
    case OpCode::div: case OpCode::rem: case OpCode::sqrt: case OpCode::rsqrt:
      return 8;
    default:
      return isCheap(c) || c == OpCode::load ? 0 : 32;  // transcendentals, gathers, atomics...
  }
}

bool isNarrowFloat(DType t) { return t == DType::f16 || t == DType::bf16 || isFloat8(t); }

// opCost, and four times it where a 16- or 8-bit float is rounded to or converted from (each
// op on those rounds its f32 result; bf16 and 8-bit conversions are several integer ops).
int recomputeCost(const ir::Kernel& k, const ir::Op& op) {
  bool narrow = isNarrowFloat(k.type(op.results[0]).dtype) ||
                (op.code == OpCode::cast && isNarrowFloat(k.type(op.operands[0]).dtype));
  return opCost(op.code) * (narrow ? 4 : 1);
}

class Planner {
 public:
  Planner(const ir::Kernel& k, const UseInfo& info, const CpuLoweringOptions& options)
      : k_(k), info_(info), options_(options), fusedLoads_(k.types.size()), fusedOps_(k.types.size()),
        programAxes_(k.types.size(), kEveryAxis) {
    // Block arguments hold scalars or loop-carried tiles, which live in buffers.
    for (size_t v = 0; v < k.types.size(); ++v)
      plan_.of.push_back(k.types[v].isScalar() ? Placement::scalar : Placement::buffer);
  }

  BufferPlan run() {
    visit(k_.body);
    return std::move(plan_);
  }

 private:
  const ir::Type& type(ValueId v) const { return k_.type(v); }

  void visit(const ir::Block& b) {
    for (const ir::Op& op : b.ops) {
      trackProgramAxes(op);
      place(op);
      for (const ir::Block& region : op.regions) visit(region);
    }
  }

  // The tiles of ops with code of their own (loops, dots, reductions, scans...) keep their
  // buffers; a value is fused or buffered here.
  void place(const ir::Op& op) {
    switch (op.code) {
      case OpCode::fold: case OpCode::while_: case OpCode::if_: case OpCode::store: case OpCode::scatter:
      case OpCode::print: case OpCode::check: case OpCode::scan: case OpCode::sort: case OpCode::histogram:
      case OpCode::dot: case OpCode::yield:
      TJ_REDUCTION_OPS:
        return;
      TJ_UNARY_ELEMENTWISE_OPS: TJ_BINARY_ELEMENTWISE_OPS: TJ_SHAPE_OPS:
      case OpCode::program_id: case OpCode::num_programs: case OpCode::tensor_dim: case OpCode::scalar_param:
      case OpCode::constant: case OpCode::iota: case OpCode::select: case OpCode::fma: case OpCode::cast:
      case OpCode::load: case OpCode::gather: case OpCode::atomic: case OpCode::slice: case OpCode::concat:
        return placeValue(op.results.at(0));
    }
  }

  void placeValue(ValueId r) {
    if (type(r).isScalar()) return;
    const ir::Op& op = *info_.def[r];
    if (op.code == OpCode::broadcast) bufferCostlyOperand(op);
    int loads = countFusedLoads(op), ops = countFusedOps(op);
    if (!needsBuffer(r, ops) && loads <= kMaxFusedLoads) {
      plan_.of[size_t(r)] = Placement::fused;
      return;
    }
    plan_.of[size_t(r)] = storedWidened(r) ? Placement::widened : readsInPlace(r) ? Placement::inPlace : Placement::buffer;
    if (plan_.of[size_t(r)] == Placement::buffer || plan_.of[size_t(r)] == Placement::widened) placePackedOnce(r);
  }

  // Which program ids (a bit per grid axis) each scalar depends on, as far as the plan can tell:
  // a fold's index on its start's (programs that start alike walk the same first indices, as
  // causal attention's query blocks walk the same key blocks to ends of their own); values
  // carried by loops, out of regions, or read from memory the kernel writes, on all of them.
  void trackProgramAxes(const ir::Op& op) {
    uint32_t axes = 0;
    if (op.code == OpCode::program_id) axes = 1u << op.get(ir::attr::axis);
    else if (!op.regions.empty() || op.code == OpCode::atomic ||
             (ir::readsTensor(op.code) && info_.storedTensors.count(op.get(ir::attr::tensor))))
      axes = kEveryAxis;
    else
      for (ValueId o : op.operands) axes |= programAxes_[size_t(o)];
    for (ValueId r : op.results) programAxes_[size_t(r)] = axes;
    if (op.code == OpCode::fold)
      programAxes_[size_t(op.regions[0].args[0])] = programAxes_[size_t(op.operands[0])];
  }

  // Packed once (Placement::packedOnce) when v is an operand of a micro-kernel dot and nothing
  // else, copied for it (A is read in place where it can be), a block of a tensor no program
  // writes (or its transpose, through reshapes of unit axes, each used once) at offsets that do
  // not depend on every program id: B of a GEMM, one block per column block and K step, which
  // every row block of C reads; A where it is copied (widened, repacked, or as it is), which
  // every column block reads.
  void placePackedOnce(ValueId v) {
    const ir::Op* dot = info_.dotUser[v];
    if (!dot || dot->operands[0] == dot->operands[1] || info_.uses[v] != 1 || !microKernelApplies(k_, *dot, options_))
      return;
    ValueId x = v;
    while (info_.def[x] && (info_.def[x]->code == OpCode::permute || info_.def[x]->code == OpCode::reshape) &&
           (x == v || (info_.uses[x] == 1 && !plan_.buffered(x))))
      x = info_.def[x]->operands[0];
    const ir::Op* load = info_.def[x];
    if (!load || load->code != OpCode::load || (x != v && (info_.uses[x] != 1 || plan_.buffered(x))) ||
        info_.storedTensors.count(load->get(ir::attr::tensor)))
      return;
    uint32_t axes = 0, grid = (1u << k_.gridRank) - 1;
    for (ValueId offset : load->operands) axes |= programAxes_[size_t(offset)];
    if ((axes & grid) == grid) return;
    plan_.of[size_t(v)] = Placement::packedOnce;
    plan_.packedOnce[v] = {load, axes & grid};
  }

  // `ops`: the recomputeCost of v's fused expression.
  bool needsBuffer(ValueId v, int ops) const {
    const ir::Op* op = info_.def[v];
    if (!isFusable(op->code)) return true;
    if (info_.dotUser[v] || info_.printed[v]) return true;
    // A read must read memory before any later write to the same tensor can change it.
    if (ir::readsTensor(op->code) && info_.storedTensors.count(op->get(ir::attr::tensor))) return true;
    if (isCheap(op->code)) return false;
    if (info_.usedDeeper[v]) return true;  // a loop would compute it at every step
    if (info_.uses[v] == 1) return false;
    // Used again after a write to a tensor (another view of the memory it reads, perhaps), it
    // would read what the write left.
    if (info_.writeBeforeLastUse(v)) return true;
    // A block read again where each use is (from cache) costs no more than its copy read again,
    // and spares writing the copy (layernorm 4096x1024, x read twice: 0.86 -> 0.78 ms).
    if (op->code == OpCode::load) return false;
    return ops > kMaxRecomputedOps || info_.uses[v] > kMaxRecomputedUses;
  }

  // A costly tile that a broadcast expands (a row's mean, exp of a row's max) is computed once,
  // into a buffer, rather than at every element the broadcast makes of it.
  void bufferCostlyOperand(const ir::Op& broadcast) {
    ValueId o = broadcast.operands[0];
    if (plan_.of[size_t(o)] == Placement::fused && fusedOps_[size_t(o)] > kMaxRecomputedOps &&
        type(o).numel() < type(broadcast.results[0]).numel())
      plan_.of[size_t(o)] = Placement::buffer;
  }

  // The loads a tile's fused expression stages (buffered operands stage none).
  int countFusedLoads(const ir::Op& op) {
    int loads = op.code == OpCode::load ? 1 : 0;
    for (ValueId o : op.operands)
      if (!plan_.buffered(o)) loads += fusedLoads_[size_t(o)];
    return fusedLoads_[size_t(op.results[0])] = loads;
  }

  // The recomputeCost of a tile's fused expression per element (buffered operands are read, not
  // computed).
  int countFusedOps(const ir::Op& op) {
    int64_t ops = recomputeCost(k_, op);
    for (ValueId o : op.operands)
      if (!plan_.buffered(o)) ops += fusedOps_[size_t(o)];
    return fusedOps_[size_t(op.results[0])] = static_cast<int>(std::min<int64_t>(ops, 1 << 20));
  }

  // Whether v, a dot operand read by nothing else, is written straight into an f32 buffer (the
  // f32 form its elements are computed in, exact), sparing the micro-kernel a pass that widens
  // it: bf16 (bf16 attention 29.2 -> 27.6 ms) and 8-bit floats (scaled f8e4m3 GEMM 113 -> 140
  // GFLOP/s). Not an f16 block loaded as it is, whose conversion LLVM's vectorizer runs at half
  // width in the copy loop (f16 GEMM 158 -> 150 GFLOP/s); the widening pass does it at full width.
  bool storedWidened(ValueId v) const {
    const ir::Op* dot = info_.dotUser[v];
    if (!dot || info_.uses[v] != 1 || !widensOperands(k_, *dot, options_)) return false;
    return !(type(v).dtype == DType::f16 && info_.def[v] && info_.def[v]->code == OpCode::load);
  }

  // Whether v, a block loaded for a dot's left operand alone, may be read where it lies
  // instead of copied: an f32 micro-kernel reads A one element at a time (broadcast), and AMX
  // loads A's tiles row by row at any stride, so their rows need no copy (B's rows, read as
  // vectors, are copied: rows a large power of two apart would share cache sets).
  bool readsInPlace(ValueId v) const {
    const ir::Op* load = info_.def[v];
    const ir::Op* dot = info_.dotUser[v];
    if (!load || load->code != OpCode::load || !dot || info_.uses[v] != 1 || dot->operands[0] != v) return false;
    const ir::Type& t = type(v);
    // (Not AMX emulated: LLVM's loops for tileloadd take the stride in 4-byte units, and a
    // tensor's rows may lie any number of bytes apart.)
    bool amx = dotProducts(k_, *dot, options_) == DotProducts::amxTiles && !options_.emulateMatrixInstructions;
    bool readAsItIs = t.dtype == DType::f32 || amx;
    return readAsItIs && t.shape.size() == 2 && microKernelApplies(k_, *dot, options_) &&
           !info_.storedTensors.count(load->get(ir::attr::tensor));
  }

  const ir::Kernel& k_;
  const UseInfo& info_;
  const CpuLoweringOptions& options_;
  BufferPlan plan_;
  std::vector<int> fusedLoads_;  // per tile: the loads its fused expression stages
  std::vector<int> fusedOps_;    // per tile: the recomputeCost of its fused expression
  static constexpr uint32_t kEveryAxis = ~0u;
  std::vector<uint32_t> programAxes_;  // per scalar: the program ids it depends on (trackProgramAxes)
};

}  // namespace

std::string_view placementName(Placement p) {
  switch (p) {
    case Placement::scalar: return "scalar";
    case Placement::fused: return "fused";
    case Placement::buffer: return "buffer";
    case Placement::widened: return "buffer of f32";
    case Placement::inPlace: return "read in place";
    case Placement::packedOnce: return "packed once per launch";
  }
  return "?";
}

namespace {

// i8 x i8 or u8 x i8 into i32: the byte products.
bool bytesIntoI32(const ir::Kernel& k, const ir::Op& dot) {
  DType a = k.type(dot.operands[0]).dtype;
  return (a == DType::i8 || a == DType::u8) && k.type(dot.results[0]).dtype == DType::i32;
}

}  // namespace

bool microKernelApplies(const ir::Kernel& k, const ir::Op& dot, const CpuLoweringOptions& options) {
  DType resultType = k.type(dot.results[0]).dtype;
  bool f32Acc = isFloat(resultType) && resultType != DType::f64;
  return (f32Acc || bytesIntoI32(k, dot)) && k.type(dot.operands[1]).shape[1] % (options.vectorBytes / 4) == 0;
}

int64_t amxStepK(int64_t k, DType operand) {
  int64_t perGroup = 4 / dtypeBytes(operand);
  for (int64_t step = 64 / dtypeBytes(operand); step * dtypeBytes(operand) >= 32; step -= perGroup)
    if (k % step == 0) return step;
  return 0;
}

DotProducts dotProducts(const ir::Kernel& k, const ir::Op& dot, const CpuLoweringOptions& options) {
  const ir::Type& at = k.type(dot.operands[0]);
  const ir::Type& bt = k.type(dot.operands[1]);
  bool bytes = bytesIntoI32(k, dot);
  bool bf16 = at.dtype == DType::bf16 && bt.dtype == DType::bf16;
  int64_t depth = at.shape[1];
  if (!microKernelApplies(k, dot, options)) return DotProducts::single;
  // AMX where its tiles are at least half full: 16 rows, half a row's 64 bytes of K.
  bool amx = (bytes && options.amxInt8) || (bf16 && options.amxBf16);
  if (amx && at.shape[0] >= 16 && bt.shape[1] % 16 == 0 && amxStepK(depth, at.dtype)) return DotProducts::amxTiles;
  if (bytes && options.i8QuadProducts && depth % 4 == 0) return DotProducts::quads;
  bool bf16Pairs = bf16 && options.bf16DotProduct && !options.widenBf16Dots && options.vectorBytes == 64;
  if ((bf16Pairs || (bytes && options.i16PairProducts)) && depth % 2 == 0) return DotProducts::pairs;
  return DotProducts::single;
}

bool widensOperands(const ir::Kernel& k, const ir::Op& dot, const CpuLoweringOptions& options) {
  DType operand = k.type(dot.operands[0]).dtype;
  return isNarrowFloat(operand) && microKernelApplies(k, dot, options) && dotProducts(k, dot, options) == DotProducts::single;
}

BufferPlan planBuffers(const ir::Kernel& kernel, const UseInfo& info, const CpuLoweringOptions& options) {
  return Planner(kernel, info, options).run();
}

std::string printWithBuffers(const ir::Kernel& kernel, const BufferPlan& plan) {
  return ir::printAnnotated(kernel, [&](ValueId v) { return std::string(placementName(plan.of[size_t(v)])); });
}

}  // namespace tj::cpu
