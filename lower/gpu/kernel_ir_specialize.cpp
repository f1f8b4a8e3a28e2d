// Warp specialization (sm_90a): a fold {specialize = 1} whose dot operands TMA copies gets a
// producer warpgroup of its own. The kernel becomes a branch on the warp: the p.warps consumer
// warps run the whole kernel, their fold waiting for each stage's transaction barrier and
// releasing the stage when its dots are done, never issuing a copy; the producer warpgroup
// computes the scalars the copies' offsets need and loops over the fold's iterations, waiting
// for a stage's release and issuing its copies. The two meet at named barrier 1 when the
// barriers are set up and when the loop is over; the consumers' other barriers are named
// barrier 2 of their threads alone. With two consumer warpgroups or more, the producer gives up
// registers (setmaxnreg) that the consumers take, as CUTLASS's and FlashAttention-3's kernels do.
// Attention's two consumer warpgroups take turns on the tensor cores (FlashAttention-3's
// ping-pong, pingPong): each issues its products in its turn and runs its softmax while the
// other issues its own.
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

// Named barriers 3 and 4: warpgroup 0's and 1's turn to issue wgmmas.
constexpr int64_t kTurnBarrier = 3;

KInst namedBarrier(int64_t id, int64_t threads, bool arrive) {
  KInst i{KOp::barrier, {}, {}, {{"id", id}, {"threads", threads}}, {}};
  if (arrive) i.attrs.push_back({"arrive", int64_t{1}});
  return i;
}

// Instructions of kind `op` directly in b (not in nested regions).
int64_t topLevelCount(const KBlock& b, KOp op) { return std::ranges::count(b.insts, op, &KInst::op); }

// A copy of b whose registers (results and region arguments) are new ones of f.
KBlock copyWithNewRegisters(KernelFunction& f, const KBlock& b, std::map<Reg, Reg>& renamed) {
  auto fresh = [&](Reg r) { return renamed[r] = f.newReg(f.regTypes.at(size_t(r))); };
  KBlock copy;
  for (Reg a : b.args) copy.args.push_back(fresh(a));
  for (const KInst& i : b.insts) {
    KInst c{i.op, {}, {}, i.attrs, {}};
    for (Reg o : i.operands) c.operands.push_back(renamed.count(o) ? renamed.at(o) : o);
    for (const KBlock& r : i.regions) c.regions.push_back(copyWithNewRegisters(f, r, renamed));
    for (Reg r : i.results) c.results.push_back(fresh(r));
    copy.insts.push_back(std::move(c));
  }
  return copy;
}

// Whether i is a loop whose body issues two wgmma groups or more: where warpgroups take turns.
bool takesTurns(const KInst& i) {
  return i.op == KOp::for_loop && topLevelCount(i.regions.at(0), KOp::wgmma_commit) >= 2;
}
bool hasTurns(const KBlock& b) {
  return std::ranges::any_of(b.insts, [](const KInst& i) { return takesTurns(i) || std::ranges::any_of(i.regions, hasTurns); });
}

// Warpgroup g's turns in its copy of the consumers' code: in each loop whose body issues two
// wgmma groups or more (attention's products), it waits for its turn before each group and
// passes the turn on after it (the two copies run the same loops the same number of times).
void takeTurns(KBlock& b, int64_t g, int64_t threads) {
  for (size_t at = 0; at < b.insts.size(); ++at) {
    if (!takesTurns(b.insts[at])) {
      for (KBlock& r : b.insts[at].regions) takeTurns(r, g, threads);
      continue;
    }
    std::vector<KInst> body;
    for (KInst& i : b.insts[at].regions.at(0).insts) {
      if (i.op == KOp::wgmma_fence) body.push_back(namedBarrier(kTurnBarrier + g, threads, false));
      bool commit = i.op == KOp::wgmma_commit;
      body.push_back(std::move(i));
      if (commit) body.push_back(namedBarrier(kTurnBarrier + 1 - g, threads, true));
    }
    b.insts[at].regions.at(0).insts = std::move(body);
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
  KBlock& consumerCode = b_.lastInst().regions.at(0);
  nameBarriers(consumerCode, f_.workgroupSize);
  if (groups == 2) consumerCode = pingPong(std::move(consumerCode));
  b_.openRegion({});
  if (groups >= 2) b_.effect(KOp::set_max_registers, {}, {{"count", kProducerRegisters}, {"grow", int64_t{0}}});
  producer();
  b_.closeRegion();
  f_.workgroupSize += kProducerThreads;
}

void Lowering::persistentConsumers() {
  int64_t stages = foldStages(*specialized_), barriers = allocTmaBarriers(stages, true);
  persistentRings_ = PersistentRings{barriers, f_.shared.size()};
  const FoldBarriers rings{barriers, true, std::nullopt, true};
  tma_ = rings;
  initTmaBarriers(stages);
  tma_ = {};  // the fold's own, when it is lowered
  forEachProgram([&] {
    block(k_.body);  // the specialized fold, at the top level, sets the steps
    return persistentRings_->steps;
  });
  tma_ = rings;
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

KBlock Lowering::pingPong(KBlock consumers) {
  if (!hasTurns(consumers)) return consumers;
  std::map<Reg, Reg> renamed;
  KBlock second = copyWithNewRegisters(f_, consumers, renamed);
  takeTurns(consumers, 0, f_.workgroupSize);
  takeTurns(second, 1, f_.workgroupSize);
  // Warpgroup 1 gives warpgroup 0 its first turn (after the registers it takes), and warpgroup 0
  // takes the turn warpgroup 1 passed last, so that every generation of barrier 3 is met.
  bool registersFirst = !second.insts.empty() && second.insts.front().op == KOp::set_max_registers;
  second.insts.insert(second.insts.begin() + (registersFirst ? 1 : 0), namedBarrier(kTurnBarrier, f_.workgroupSize, true));
  consumers.insts.push_back(namedBarrier(kTurnBarrier, f_.workgroupSize, false));
  Reg warp = f_.newReg(DType::i32), four = f_.newReg(DType::i32), first = f_.newReg(DType::boolean);
  KBlock out;
  out.insts.push_back({KOp::warp_id, {warp}, {}, {}, {}});
  out.insts.push_back({KOp::constant, {four}, {}, {{"value", int64_t{4}}}, {}});
  out.insts.push_back({KOp::cmp, {first}, {warp, four}, {{"pred", std::string("lt")}}, {}});
  out.insts.push_back({KOp::branch, {}, {first}, {}, {std::move(consumers), std::move(second)}});
  return out;
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
  b_.effect(KOp::barrier, {}, {{"id", int64_t{1}}, {"threads", f_.workgroupSize + kProducerThreads}});
}

}  // namespace tj::gpu::detail
