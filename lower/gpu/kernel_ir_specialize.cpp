// Warp specialization (sm_90a): a fold {specialize = 1} whose dot operands TMA copies gets a
// producer warpgroup of its own. The kernel becomes a branch on the warp: the p.warps consumer
// warps run the whole kernel, their fold waiting for each stage's transaction barrier and
// releasing the stage when its dots are done, never issuing a copy; the producer warpgroup
// computes the scalars the copies' offsets need and loops over the fold's iterations, waiting
// for a stage's release and issuing its copies. The two meet at named barrier 1 when the
// barriers are set up and when the loop is over; the consumers' other barriers are named
// barrier 2 of their threads alone. With two consumer warpgroups or more, the producer gives up
// registers (setmaxnreg) that the consumers take, as CUTLASS's and FlashAttention-3's kernels do.
// A GEMM-shaped kernel is persistent as well: both roles loop over the programs their workgroup
// takes (forEachProgram), the rings' steps and phases going on from one program to the next, so
// that the producer fills the next program's first stages while the consumers store this one's
// result; the barriers are set up once before the loop, and nothing else takes the rings' bytes.
#include "ir/op_cases.hpp"
#include "lower/gpu/lowering.hpp"

namespace tj::gpu::detail {

namespace {

constexpr int64_t kProducerRegisters = 40;    // enough for a loop of scalars and TMA issues
constexpr int64_t kRegistersPerThread = 512;  // per warpgroup's threads, one workgroup an SM: 64K / 128

// The registers each of `groups` consumer warpgroups gets: what the producer leaves, in
// setmaxnreg's steps of 8, at most 256.
int64_t consumerRegisters(int64_t groups) {
  return std::min<int64_t>(256, (kRegistersPerThread - kProducerRegisters) / groups / 8 * 8);
}

// Every workgroup barrier of the consumers' code becomes named barrier 2 of their `threads`:
// the producer warpgroup never reaches it.
void nameBarriers(KBlock& block, int64_t threads) {
  for (KInst& i : block.insts) {
    if (i.op == KOp::barrier && !hasAttr(i, "id")) i.attrs = {{"id", int64_t{2}}, {"threads", threads}};
    for (KBlock& r : i.regions) nameBarriers(r, threads);
  }
}

bool scalarOnly(ir::OpCode c) {
  using ir::OpCode;
  switch (c) {
    case OpCode::program_id: case OpCode::num_programs: case OpCode::tensor_dim: case OpCode::scalar_param:
    case OpCode::constant: case OpCode::select: case OpCode::cast: case OpCode::fma:
    TJ_UNARY_ELEMENTWISE_OPS: TJ_BINARY_ELEMENTWISE_OPS:
      return true;
    default:
      return false;
  }
}

}  // namespace

void Lowering::lowerSpecialized() {
  int64_t warps = f_.workgroupSize / f_.subgroupSize, groups = warps / 4;
  Reg consumers = b_.cmp("lt", b_.emit(KOp::warp_id, DType::i32), b_.constant(DType::i32, double(warps)));
  b_.effect(KOp::branch, {consumers});
  b_.openRegion({});
  if (groups >= 2) b_.effect(KOp::set_max_registers, {}, {{"count", consumerRegisters(groups)}, {"grow", int64_t{1}}});
  if (persistent_) {
    persistentConsumers();
  } else {
    block(k_.body);
  }
  b_.closeRegion();
  if (!producer_) throw CannotSpecialize("kernel ir: the specialized fold reads nothing ahead");
  nameBarriers(b_.lastInst().regions.at(0), f_.workgroupSize);
  b_.openRegion({});
  if (groups >= 2) b_.effect(KOp::set_max_registers, {}, {{"count", kProducerRegisters}, {"grow", int64_t{0}}});
  producer();
  b_.closeRegion();
  f_.workgroupSize += 4 * f_.subgroupSize;
}

void Lowering::persistentConsumers() {
  const ir::Op& fold = *specialized_;
  int64_t stages = std::min(options_.maxStages, fold.has(ir::attr::stages) ? fold.get(ir::attr::stages) : t_.defaultStages);
  int64_t bytes = 2 * stages * 8;  // a transaction barrier and a release barrier per stage
  int64_t barriers = allocShared(bytes, DType::i64, "transaction barriers, then release barriers, one per stage", alignedAbove(0, 8));
  sharedFloor_ = f_.shared[size_t(barriers)].offset + bytes;
  persistentRings_ = PersistentRings{stages, barriers, f_.shared.size()};
  tma_ = FoldBarriers{barriers, true, std::nullopt, true};
  initTmaBarriers(stages);
  forEachProgram([&] {
    block(k_.body);
    if (!producer_ || persistentRings_->steps < 0) throw CannotPersist("kernel ir: the specialized fold is not lowered once a program");
    return persistentRings_->steps;
  });
  tma_ = FoldBarriers{barriers, true, std::nullopt, true};
  invalidateTmaBarriers(stages);
  tma_ = {};
}

void Lowering::forEachProgram(const std::function<Reg()>& body) {
  Reg workgroup = workgroupId(0), workgroups = workgroupCount(0), programs = programCount(0);
  for (int64_t axis = 1; axis < k_.gridRank; ++axis) programs = b_.binary("mul", programs, programCount(axis));
  Reg one = b_.constant(DType::i64, 1), zero = b_.constant(DType::i64, 0);
  // Workgroup w takes programs w, w + workgroups, ... (the device launches no more workgroups than programs).
  Reg rounds = b_.binary("div", b_.binary("add", b_.binary("sub", programs, workgroup), b_.binary("sub", workgroups, one)),
                         workgroups);
  b_.emitMulti(KOp::for_loop, {DType::i64}, {zero, rounds, zero}, {});
  std::vector<Reg> args = b_.openRegion({DType::i64, DType::i64});
  programIds_ = programIds(b_.binary("add", workgroup, b_.binary("mul", args[0], workgroups)));
  stepBase_ = args[1];
  Reg steps = body();
  b_.effect(KOp::yield, {b_.binary("add", args[1], steps)});
  b_.closeRegion();
  programIds_ = {-1, -1, -1};
  stepBase_ = -1;
}

void Lowering::producer() {
  const ProducerPlan& p = *producer_;
  syncWithProducer();  // the consumers have set the barriers up
  leaderThread_ = f_.workgroupSize;
  std::map<ir::ValueId, std::vector<Reg>> consumerRegs = std::exchange(regs_, {});
  tma_ = FoldBarriers{p.barriers, true, std::nullopt, true};
  for (const auto& [v, ring] : p.rings) readAhead_.emplace(v, ring);
  if (persistent_) forEachProgram([&] { return producerLoop(); });
  else producerLoop();
  syncWithProducer();  // the consumers are past their last wait
  for (const auto& [v, ring] : p.rings) readAhead_.erase(v);
  tma_ = {};
  regs_ = std::move(consumerRegs);
  leaderThread_ = 0;
}

Reg Lowering::producerLoop() {
  const ProducerPlan& p = *producer_;
  regs_.clear();
  for (const ir::Op* op : producerOps()) lower(*op);
  std::vector<ir::ValueId> ahead;
  for (const auto& ring : p.rings) ahead.push_back(ring.first);
  Reg start = regs_.at(p.start).at(0), end = regs_.at(p.end).at(0);
  b_.emitMulti(KOp::for_loop, {}, {start, end}, {});
  Reg k = b_.openRegion({DType::i64}).at(0);
  Reg step = ringStep(k, start), S = b_.constant(DType::i64, double(p.stages));
  Reg stage = b_.binary("rem", step, S);
  awaitRelease(step, b_.constant(DType::i64, 0), S, stage);
  issueReadAhead(p.fold->regions.at(0), ahead, k, stage, b_.constant(DType::boolean, 1));
  b_.effect(KOp::yield);
  b_.closeRegion();
  return b_.binary("max", b_.binary("sub", end, start), b_.constant(DType::i64, 0));
}

std::vector<const ir::Op*> Lowering::producerOps() const {
  const ProducerPlan& p = *producer_;
  std::set<ir::ValueId> inside = {p.fold->regions.at(0).args.at(0)};
  std::vector<ir::ValueId> needed = {p.start, p.end};
  for (const auto& [v, ring] : p.rings) {
    for (const ir::Op* op : ring.offsetOps) {
      needed.insert(needed.end(), op->operands.begin(), op->operands.end());
      inside.insert(op->results.begin(), op->results.end());
    }
    size_t rank = size_t(k_.type(ring.load->results[0]).rank());
    needed.insert(needed.end(), ring.load->operands.begin(), ring.load->operands.begin() + std::ptrdiff_t(rank));
  }
  const ir::Op* first = &k_.body.ops.front();
  const ir::Op* last = &k_.body.ops.back();
  std::set<const ir::Op*> ops;
  while (!needed.empty()) {
    ir::ValueId v = needed.back();
    needed.pop_back();
    if (inside.count(v)) continue;
    auto it = producers_.find(v);
    const ir::Op* op = it == producers_.end() ? nullptr : it->second;
    if (!op || op < first || op > last || !scalarOnly(op->code) || k_.type(v).rank() != 0)
      throw CannotSpecialize("kernel ir: the specialized fold's copies need %" + std::to_string(v) +
                             ", which is not a scalar computed at the kernel's top level");
    if (ops.insert(op).second) needed.insert(needed.end(), op->operands.begin(), op->operands.end());
  }
  std::vector<const ir::Op*> ordered(ops.begin(), ops.end());  // by address: the body's order
  return ordered;
}

void Lowering::syncWithProducer() {
  b_.effect(KOp::barrier, {}, {{"id", int64_t{1}}, {"threads", f_.workgroupSize + 4 * f_.subgroupSize}});
}

}  // namespace tj::gpu::detail
