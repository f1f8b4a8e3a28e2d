// The kernel-IR lowering (lowerToKernelIR): one class, Lowering, whose steps live in
// lower_to_kernel_ir.cpp (parameters, coordinates, padding, elementwise ops, checks) and
// kernel_ir_{conversions,memory,reductions,control}.cpp. Internal to lower/gpu.
#pragma once
#include "lower/gpu/lower_to_kernel_ir.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "ir/divisibility.hpp"
#include "ir/error.hpp"
#include "lower/gpu/plan_read_ahead.hpp"

namespace tj::gpu::detail {

using layout::LinearLayout;
using Basis = LinearLayout::Basis;

[[noreturn]] inline void unsupported(const ir::Op& op, const std::string& what) {
  throw Unsupported("kernel ir: unsupported: " + std::string(ir::opName(op.code)) + " " + what);
}

inline Basis input(const LinearLayout& lin, const std::string& name, int64_t value) {
  std::vector<int64_t> inputs;
  for (const auto& in : lin.ins()) inputs.push_back(in.name == name ? value : 0);
  return lin.apply(inputs);
}
inline const std::vector<Basis>& bases(const LinearLayout& lin, const std::string& name) {
  static const std::vector<Basis> none;
  for (const auto& in : lin.ins())
    if (in.name == name) return in.bases;
  return none;
}
inline int64_t registerCount(const LinearLayout& lin) {
  for (const auto& in : lin.ins())
    if (in.name == layout::kRegister) return int64_t{1} << in.bases.size();
  return 1;
}

// A GEMM's shape: a grid of two axes or more, and a fold's matrix-unit dot of two blocks its
// body loads (through views and casts).
bool gemmShaped(const ir::Kernel& k, const layout::LayoutAssignment& a);

inline std::string_view combineFn(ir::OpCode c) {
  if (c == ir::OpCode::reduce_sum) return "add";
  return c == ir::OpCode::reduce_max ? "max" : "min";
}

// Whether a printer may emit a loop for `f`: its fors and whiles, C's fmod for a float
// remainder, and the compare-exchange loops of float atomics. Nested ones sit inside a
// top-level loop.
inline bool hasLoops(const KernelFunction& f) {
  const KAttr floatRem{"fn", std::string("rem")};
  return std::ranges::any_of(f.body.insts, [&](const KInst& i) {
    bool floatResult = !i.results.empty() && isFloat(f.regTypes.at(size_t(i.results[0])));
    return i.op == KOp::for_loop || i.op == KOp::while_loop || (i.op == KOp::atomic_global && floatResult) ||
           (i.op == KOp::binary && floatResult && std::ranges::find(i.attrs, floatRem) != i.attrs.end());
  });
}

class Lowering {
 public:
  Lowering(const ir::Kernel& k, const layout::LayoutAssignment& a, const ReadAheadPlan& readAhead,
           const layout::Target& t, KernelLoweringOptions o)
      : k_(k), a_(a), readAheadPlan_(readAhead), t_(t), options_(o), b_(f_, o.maxInstructions) {
    f_.name = k.name;
    f_.target = t.name;
    f_.subgroupSize = t.subgroupSize;
    f_.workgroupSize = t.subgroupSize * t.warpsPerProgram;
    declareParams();
    ir::forEachOp(k.body, [&](const ir::Op& op) { for (ir::ValueId v : op.operands) ++uses_[v]; });
    divisors_ = ir::knownDivisors(k);
  }

  KernelFunction run();
  // The fold chosen for warp specialization cannot have it: lowered again without.
  struct CannotSpecialize : Unsupported {
    using Unsupported::Unsupported;
  };
  // The warp-specialized kernel cannot be persistent: lowered again without.
  struct CannotPersist : Unsupported {
    using Unsupported::Unsupported;
  };
  struct SharedOverBudget : Unsupported {
    SharedOverBudget(const std::string& what, int64_t stages, bool persistent)
        : Unsupported(what), stages(stages), persistent(persistent) {}
    int64_t stages;   // the most stages a fold read ahead with
    bool persistent;  // its rings kept apart from the rest (a persistent kernel's)
  };

 private:
  // ---- parameters: per tensor its buffer, sizes and strides; then the scalars ----
  void declareParams();
  int64_t paramIndex(const std::string& name) const;
  Reg param(const std::string& name) {
    int64_t i = paramIndex(name);
    return b_.emit(KOp::param, f_.params[size_t(i)].dtype, {}, {{"index", i}});
  }
  static std::string tensorName(int64_t tensor) { return std::string("t").append(std::to_string(tensor)); }
  Reg tensorParam(int64_t tensor, const char* what, int64_t axis) {
    return param(tensorName(tensor).append(".").append(what).append(std::to_string(axis)));
  }

  // ---- layouts and coordinates ----
  LinearLayout linear(const layout::Layout& l, ir::ValueId v) const { return layout::toLinear(l, k_.type(v).shape); }
  LinearLayout linear(ir::ValueId v) const { return linear(a_.of(v), v); }

  // Bits of a thread id (lane or warp) times their bases, XORed: the runtime part of a coordinate.
  Reg idBits(KOp id, const std::vector<Basis>& bs, size_t dim, Reg acc);
  // The i32 coordinates of register `reg` of this thread.
  std::vector<Reg> coords(const LinearLayout& lin, int64_t reg);

  // The row-major position of a coordinate (i32 registers, at least one) in `shape`.
  Reg rowMajor(const std::vector<Reg>& at, const ir::Shape& shape);
  // A workgroup-memory slot for register r of a tile of `shape`: `at` (its coordinates, maybe
  // shifted) row-major in `space`, or the scratch slot past space's elements for padding.
  Reg slotOf(const LinearLayout& lin, int64_t r, const std::vector<Reg>& at, const ir::Shape& shape,
             const ir::Shape& space);
  // The thread that issues what one thread does (barrier setup, TMA): thread 0, or the
  // producer warpgroup's first in its code.
  Reg firstThread() {
    return b_.cmp("eq", b_.emit(KOp::thread_id, DType::i32), b_.constant(DType::i32, double(leaderThread_)));
  }

  // ---- padding: a tile is laid out over its power-of-two padding (layout::paddedShape) ----
  // Whether register `reg`'s coordinate `c` on dimension d is inside `shape`: -1 when it
  // always is (d is a power of two or the register never reaches the padding), else a bool.
  Reg insideAlong(const LinearLayout& lin, int64_t reg, Reg c, size_t d, const ir::Shape& shape);
  // Whether the register holds a real element (every dimension inside); -1 when it always does.
  Reg inside(const LinearLayout& lin, int64_t reg, const std::vector<Reg>& coord, const ir::Shape& shape);
  // x where the register's coordinate c on dimension d is inside, padding() elsewhere.
  Reg maskAlong(const LinearLayout& lin, int64_t reg, Reg c, size_t d, const ir::Shape& shape, Reg x,
                const std::function<Reg()>& padding);

  // For each register of `to`, the register of `from` holding the element `map` sends it to;
  // lanes and warps must already agree (otherwise data moves between threads).
  std::vector<Reg> remap(const std::vector<Reg>& src, const LinearLayout& from, const LinearLayout& to,
                         const CoordMap& map, const ir::Op& op, const layout::Layout& toLayout);

  // ---- operands and conversions ----
  // How ldmatrix reads a layout's registers from workgroup memory (loadAt: register, lane,
  // warp -> element offset). Each 8x8 matrix is 8 rows of 16 bytes, each row's address given
  // by one lane; a lane receives pairs: a row's two neighbours (or, transposed, one column's
  // two neighbouring rows). So lanes 0-1 and one register bit must step within a row and
  // lanes 2-4 across rows (transposed: the reverse); every other bit moves whole rows.
  struct MatrixLoad {
    bool trans;
    int64_t pairBit;                  // the register bit of a pair's second element
    int64_t byteBit;                  // 8-bit elements: the register bit of a 16-bit element's high byte; else -1
    std::vector<int64_t> matrixBits;  // register bits choosing among the loaded matrices
    std::vector<Basis> rowOf;         // lane bit -> the offset of the row that lane supplies
  };
  // A tile stored in workgroup memory, each register of another layout read on demand.
  struct Staged {
    int64_t alloc;
    LinearLayout loadAt;  // register, lane, warp -> element offset
    std::optional<MatrixLoad> matrices;
    Reg base = -1;  // an element offset added to every load (a read-ahead ring's stage); -1: none
  };
  // An operand's registers: at hand, or loaded from where stageInShared put them.
  class Operand {
   public:
    Operand(Lowering& l, std::vector<Reg> regs) : l_(l), regs_(std::move(regs)) {}
    Operand(Lowering& l, Staged s) : l_(l), regs_(size_t(registerCount(s.loadAt)), -1), staged_(std::move(s)) {}
    Reg get(int64_t r) {
      if (regs_.at(size_t(r)) < 0) l_.loadStaged(*staged_, r, regs_);
      return regs_[size_t(r)];
    }
    std::vector<Reg> all() {
      for (int64_t r = 0; r < int64_t(regs_.size()); ++r) get(r);
      return regs_;
    }
    // Where its workgroup memory ends (bytes past the allocations' floor), 0 when it has none
    // there (a read-ahead ring lies below the floor).
    int64_t sharedEnd() const {
      if (!staged_ || staged_->base >= 0) return 0;
      const SharedAlloc& s = l_.f_.shared[size_t(staged_->alloc)];
      return s.offset + s.bytes - l_.sharedFloor_;
    }

   private:
    Lowering& l_;
    std::vector<Reg> regs_;  // -1 until loaded
    std::optional<Staged> staged_;
  };
  const layout::Layout& operandLayout(const ir::Op& op, int i) const {
    const layout::Conversion* c = a_.conversionAt(op, i);
    return c ? *c->to : a_.of(op.operands[size_t(i)]);
  }
  std::vector<Reg> operand(const ir::Op& op, int i) { return lazyOperand(op, i, 0).all(); }
  // An operand in its user's layout. A conversion through workgroup memory (at byte
  // `sharedOffset`) stores at once and loads registers on demand, so a dot loads each
  // fragment just before the instructions that read it.
  Operand lazyOperand(const ir::Op& op, int i, int64_t sharedOffset);

  // Which source (register, lane) bits hold the element of each destination register and lane
  // bit, solved over GF(2): [register, lane, warp] bits per bit of `to`. nullopt where warps do
  // not map alike (data would cross warps).
  struct ShuffleSolution {
    std::vector<std::array<int64_t, 3>> regBits, laneBits;
  };
  std::optional<ShuffleSolution> solveShuffles(const LinearLayout& from, const LinearLayout& to) const;
  // The i32 lane this lane reads from: its bits mapped by the solution, XOR `constant`.
  Reg sourceLane(const ShuffleSolution& s, int64_t constant);
  // A conversion within warps as shuffles, one per register and source-register candidate
  // (where the register read depends on the lane, options_.maxShuffleCandidates at most);
  // nullopt otherwise (the caller goes through memory).
  std::optional<std::vector<Reg>> throughShuffles(const std::vector<Reg>& src, const LinearLayout& from,
                                                  const LinearLayout& to);
  // The same for 8-bit elements, packed four to a word: a destination word's elements come
  // from one or two source lanes; each sender packs, for every candidate register a receiver
  // may want, the elements into one word, and the receiver's byte_perm takes its own from the
  // two words (as FlashAttention-3 moves FP8 probabilities into wgmma's a fragments). nullopt
  // where a word's elements come from more lanes or their candidates do not fit in one.
  std::optional<std::vector<Reg>> throughPackedShuffles(const std::vector<Reg>& src, const LinearLayout& from,
                                                        const LinearLayout& to, DType dt);
  layout::Layout plainShared(ir::ValueId v) const {
    return layout::Layout{layout::Shared{1, 1, 1, layout::rowMajorOrder(k_.type(v).shape.size())}};
  }

  // Stores every register at its (swizzled) offset (from `offset` bytes on); loads come later.
  // asyncProxy: wgmma reads it (a proxy fence orders the stores before the async proxy's reads).
  Staged stageInShared(ir::ValueId v, const std::vector<Reg>& src, const LinearLayout& from, const LinearLayout& to,
                       const layout::Layout& mem, int64_t offset, bool asyncProxy = false);
  // Stores the registers r of src that `keep` takes to workgroup memory alloc at offsets `at`,
  // consecutive ones together (sharedVectorWidth; `keep` takes whole vectors).
  void storeRegisters(const LinearLayout& at, const std::vector<Reg>& src, int64_t alloc,
                      const std::function<bool(int64_t)>& keep);
  // How many registers one store to workgroup memory writes (at offsets `at`: register, lane,
  // warp -> element): up to the target's widest access, where the lowest register bits step
  // 1, 2, 4... elements and every other bit keeps the vector aligned.
  int64_t sharedVectorWidth(const LinearLayout& at, DType dt, int64_t alloc) const;
  // How many elements (a power of two up to `most`) the lowest register bits of `lin` step
  // through consecutively along `axis`: bit i must move 2^i along it and nowhere else.
  static int64_t runAlong(const LinearLayout& lin, size_t axis, int64_t most);
  // Loads register r of a staged tile (with the others of its ldmatrix) into `regs`.
  void loadStaged(const Staged& s, int64_t r, std::vector<Reg>& regs);
  Reg plus(Reg a, Reg b) { return b < 0 ? a : b_.binary("add", a, b); }

  std::optional<MatrixLoad> matrixLoad(const LinearLayout& loadAt, DType dt, int64_t alloc) const;
  // The ldmatrix that reads register r with the others its pair and matrix bits span, into `out`.
  void loadMatrices(const MatrixLoad& m, const Staged& s, int64_t r, std::vector<Reg>& out);
  static int64_t alignTo(int64_t bytes, int64_t to) { return (bytes + to - 1) / to * to; }
  static int64_t alignTo16(int64_t bytes) { return alignTo(bytes, 16); }
  // The offset above the floor of the first `atom`-aligned byte at or past `above` bytes over
  // it; workgroup memory's start is then aligned to `atom` too.
  int64_t alignedAbove(int64_t above, int64_t atom) {
    f_.sharedAlignment = std::max(f_.sharedAlignment, atom);
    return alignTo(sharedFloor_ + above, atom) - sharedFloor_;
  }
  int64_t paddedNumel(ir::ValueId v) const;
  // `offset` bytes above the floor: below it lie the read-ahead rings of the folds being lowered.
  int64_t allocShared(int64_t bytes, DType dt, std::string what, int64_t offset = 0) {
    f_.shared.push_back({sharedFloor_ + offset, bytes, dt, std::move(what)});
    return static_cast<int64_t>(f_.shared.size() - 1);
  }
  // Allocations live together (each step reads them all): `elements` of each dtype, one after another.
  std::vector<int64_t> allocSharedTogether(const std::vector<DType>& types, int64_t elements, const std::string& what);

  // ---- ops ----
  void block(const ir::Block& b);
  void define(ir::ValueId v, std::vector<Reg> r) { regs_[v] = std::move(r); }
  DType dtypeOf(ir::ValueId v) const { return k_.type(v).dtype; }
  int64_t countOf(ir::ValueId v) const { return registerCount(linear(v)); }

  void lower(const ir::Op& op);

  bool isNonzeroConstant(ir::ValueId v) const;

  Reg constantOf(const ir::Op& op, DType t) { return b_.constant(t, op.get(ir::attr::value)); }

  void iota(const ir::Op& op);

  void elementwise(const ir::Op& op);

  // broadcast, permute and reshapes of unit dimensions move no data when the layouts agree:
  // a renaming of registers. Other reshapes move elements between threads.
  void reshape(const ir::Op& op);
  // A reshape whose elements change threads: each real element goes to workgroup memory at
  // its row-major position and comes back in the result's layout. Padding elements all
  // store to (and load from) one scratch slot past the real ones; nothing reads it for a value.
  void reshapeThroughMemory(const ir::Op& op);

  // ---- reductions: registers, then lanes (shuffles), then warps (workgroup memory) ----
  static bool mixes(const Basis& b, size_t axis);
  static bool isArg(ir::OpCode c) { return c == ir::OpCode::argmax || c == ir::OpCode::argmin; }

  // A partial reduction: its value and, for argmax/argmin, the index it came from.
  struct Partial {
    Reg value, index = -1;
  };

  void reduce(const ir::Op& op);
  // Register r of the reduced operand as a partial: padding along the axis becomes the
  // identity (with an index past every real one); bools compare as i32.
  Partial element(const ir::Op& op, const LinearLayout& src, int64_t r, Reg x, const ir::Shape& shape);
  Reg identity(ir::OpCode code, DType t);
  // a and b combined; for argmax/argmin as the interpreter's scan (the first NaN, else the
  // first best), so the result does not depend on the order partials meet in.
  Partial combine(ir::OpCode code, const Partial& a, const Partial& b);
  Partial shuffleXor(const Partial& x, int64_t mask) {
    auto move = [&](Reg r) { return r < 0 ? r : b_.emit(KOp::shuffle_xor, b_.type(r), {r}, {{"mask", mask}}); };
    return {move(x.value), move(x.index)};
  }
  // A subgroup reduction over clusters when the reduced lane bits are the low ones; butterflies otherwise.
  Partial acrossLanes(ir::OpCode code, Partial x, const std::vector<Basis>& lanes, size_t axis);
  // Each warp writes its partials per (group, warp, lane); every warp then combines the
  // warps that share its other coordinates, in one fixed order so all agree bit for bit.
  void acrossWarps(ir::OpCode code, std::map<Coord, Partial>& groups, const std::vector<Basis>& warps, size_t axis);

  // ---- memory ----
  // Per register: the element index (offset + coordinate) per axis, the in-bounds predicate and the address.
  // The element at i64 indices of `tensor` and whether it is inside (0 <= index < size per axis).
  std::pair<Reg, Reg> address(int64_t tensor, const std::vector<Reg>& index);
  // A block's element: the op's offsets plus a register's coordinates.
  std::pair<Reg, Reg> blockAddress(const ir::Op& op, int64_t tensor, const std::vector<Reg>& coord);
  // A gather's or scatter's element r: its coordinates' registers r, and the mask's (operand maskAt) where there is one.
  std::pair<Reg, Reg> indirectAddress(const ir::Op& op, const std::vector<std::vector<Reg>>& in, size_t r, size_t maskAt);
  std::vector<std::vector<Reg>> operands(const ir::Op& op);
  KAttrValue fillOf(const ir::Op& op) const;
  void load(const ir::Op& op);
  void store(const ir::Op& op);
  // vec consecutive elements from buffer[addr] if pred, else the load's fill.
  std::vector<Reg> loadGlobal(const ir::Op& op, Reg addr, Reg pred, int64_t vec) {
    return b_.emitMulti(KOp::load_global, std::vector<DType>(size_t(vec), dtypeOf(op.results[0])), {addr, pred},
                        {{"buffer", paramIndex(tensorName(op.get(ir::attr::tensor)))}, {"fill", fillOf(op)}, {"vec", vec}});
  }
  void storeGlobal(int64_t tensor, Reg addr, Reg pred, const std::vector<Reg>& values);
  // How many consecutive elements one access of a block load or store moves: the target's
  // widest access where the tensor's launch facts allow it (options_.vectorTensors), the
  // layout's lowest register bits step 1, 2, 4... along the last axis, and the block's
  // last offset and size keep each vector wholly inside or outside the tensor and the tile.
  int64_t vectorWidth(const ir::Op& op, int64_t tensor, const LinearLayout& lin, const ir::Shape& shape) const;
  // pred, and that register r of a stored tile is a real element (not padding) and this thread's copy of it.
  // (pred: -1 for true; so is the result where nothing limits it)
  Reg ownedElement(const LinearLayout& lin, int64_t r, const std::vector<Reg>& at, const ir::Shape& shape, Reg owner, Reg pred) {
    return both(both(pred, inside(lin, r, at, shape)), owner);  // never padding
  }
  Reg both(Reg a, Reg b) { return a < 0 ? b : b < 0 ? a : b_.binary("and", a, b); }

  // ---- gather and scatter: coordinates from registers, in the layout of the result / value ----
  void gather(const ir::Op& op);
  // Of elements with the same coordinates, whichever thread stores last wins.
  void scatter(const ir::Op& op);

  // Each element is updated once, by the thread and register holding its stored copy (as a
  // store); a register copy takes its owner's old value, and copies in other threads get it
  // through workgroup memory when the old values are read.
  void atomic(const ir::Op& op);
  // A register holding element `flat` (row-major; padding: the scratch slot n), `owns` whether
  // this thread's copy is the one written (-1: always), `value` its value there.
  struct Owned {
    Reg flat, owns, value;
  };
  // Every element's owned value, read back by each of `regs`' threads at the same flat
  // positions: owners store to workgroup memory, the rest to a scratch slot past the n real
  // ones, and after a barrier every thread loads its positions.
  std::vector<Reg> shareOwned(DType dt, const std::vector<Owned>& regs, int64_t n);

  // ---- print: into a buffer of its own, printed by the device after the launch ----
  void print(const ir::Op& op);
  // Operand i's real elements go to workgroup memory at their coordinates shifted by
  // storeShift[i] along the axis, row-major in `space`; after a barrier each register of the
  // result loads its coordinates shifted by loadShift. Padding uses a scratch slot past `space`.
  void moveThroughMemory(const ir::Op& op, const ir::Shape& space, const std::vector<int64_t>& storeShift, int64_t loadShift);
  void concat(const ir::Op& op);

  // An inclusive scan in workgroup memory: every element goes to its row-major slot (padding
  // to a scratch slot past them), the lines along the axis are scanned there by loops, and each
  // register reads its slot back. The code is the same few loops for any tile (lavapipe
  // compiles unrolled steps per register slowly). Where there are more threads than lines, a
  // line is cut into chunks (ScanPlan); otherwise each thread scans whole lines left to right,
  // in the interpreter's order. Several tiles scanned together (a combine region) take one
  // allocation each.
  void scan(const ir::Op& op);
  // A scan whose lines each lie within one subgroup (every register and lane basis that moves
  // along the axis is one power of two on it, and no warp basis does), without workgroup
  // memory or barriers; false where the layout is not such. The axis position's bits are taken
  // from the lowest: with each one, every element's block (the elements sharing its higher
  // bits) doubles, holding S, the element's inclusive scan within its block, and T, the
  // block's total; the upper half of a block combines the lower half's T before its own. The
  // lower half's T is another lane's (a shuffle) for a lane bit; consecutive register bits
  // take their blocks in order in each thread. Registers of one block compute the same T once
  // (value numbering).
  bool scanInSubgroups(const ir::Op& op);
  // How a scan's lines (of `length` elements `stride` apart in the row-major tile) are shared
  // by the workgroup's threads: each line is cut into `chunks` pieces of `chunkLength` (the
  // last may be shorter), and work item t (chunk t % chunks of line t / chunks) belongs to
  // thread t % threads. With one chunk a line is scanned left to right; with more, each chunk
  // is scanned, then the chunks' last elements along the line, then each later chunk's other
  // elements combine the (final) last element of the chunk before. Chunks are few enough that
  // the second pass stays short: about the square root of the length.
  struct ScanPlan {
    int64_t count = 1, length = 1, stride = 1, lines = 1, chunks = 1, chunkLength = 1;
    std::vector<int64_t> allocs;
    Reg scratch = -1;  // this thread's scratch slot
  };
  ScanPlan planScan(const ir::Shape& shape, size_t axis) const;
  // Runs body(i) for i in [0, n): a loop, or the body itself on a constant when n is 1.
  std::vector<Reg> forEach(int64_t n, const std::vector<Reg>& inits,
                           const std::function<std::vector<Reg>(Reg, const std::vector<Reg>&)>& body);
  // This thread's work item `i` (of those the plan gives it): whether it exists, its line's
  // slot of element 0 and its chunk.
  struct ScanItem {
    Reg real, line, chunk;
  };
  ScanItem scanItem(const ScanPlan& s, Reg i, int64_t items);
  // The slot of element `along` of a line starting at `start` where `ok` (-1: always), else
  // this thread's scratch slot.
  Reg scanSlot(const ScanPlan& s, Reg start, Reg along, Reg ok) {
    Reg at = b_.binary("add", start, b_.binary("mul", along, b_.constant(DType::i32, double(s.stride))));
    return ok < 0 ? at : b_.select(ok, at, s.scratch);
  }
  std::vector<Reg> loadScan(const ir::Op& op, const ScanPlan& s, Reg at);
  void storeScan(const ScanPlan& s, Reg at, const std::vector<Reg>& values) {
    for (size_t i = 0; i < s.allocs.size(); ++i) b_.effect(KOp::store_shared, {at, values[i]}, {{"alloc", s.allocs[i]}});
  }
  // Pass 1: each chunk left to right, its running value carried in registers.
  void scanChunks(const ir::Op& op, const ScanPlan& s);
  // Pass 2: along each line (one per thread: chunks > 1 only where lines < threads), the
  // chunks' last elements become final.
  void carryAcrossChunks(const ir::Op& op, const ScanPlan& s);
  // Pass 3: every element of a later chunk but its last combines the last element of the chunk
  // before.
  void addCarries(const ir::Op& op, const ScanPlan& s);
  // Whether a scan's combine gives the same bits in either order: sums and products, and
  // integer maxima and minima (a float's may keep either zero or NaN).
  bool commutes(const ir::Op& op) const;
  // A scan's combine of an earlier and a later element: its fn, or its region's ops lowered
  // on these registers.
  std::vector<Reg> combine(const ir::Op& op, const std::vector<Reg>& earlier, const std::vector<Reg>& later);

  // A bitonic sort in workgroup memory over the axis's power-of-two padding, which sorts last.
  // Every element goes to its row-major slot with its origin (its position along the axis
  // before the sort; equal keys order by origin, so the order is the stable one), the network
  // runs there as loops over its steps, and each register reads its slot back: the same code for
  // any tile (lavapipe compiles unrolled steps per register slowly). In step (k, j) each thread
  // compare-exchanges its pairs (i, i + j*stride), where i has the axis bit j clear: positions in
  // the padded shape are bitwise concatenations.
  struct SortLines {
    int64_t length = 1, stride = 1, pairs = 1;  // along the padded axis; between neighbours; pairs per step
    std::vector<DType> types;                  // the keys, their origins, then the payload
    std::vector<int64_t> allocs;
    Reg scratch = -1;                          // this thread's slot, for a pair past the last
  };
  void sort(const ir::Op& op);
  // Runs body(i) for i in [0, n) with n a (uniform) register.
  void forRange(Reg n, const std::function<void(Reg)>& body);
  // This thread's pair of round `round` in step (k, j): the one at i stays or swaps with the one
  // at i + j*stride, so the lower position holds the first of the two in the network's ascending
  // runs (axis bit k of i clear) and the second in its descending ones.
  void compareExchange(const ir::Op& op, const SortLines& s, Reg round, Reg k, Reg j);
  // Whether the element (key a, origin i) comes before (b, o): padding last, then the keys'
  // order (NaN past every number), then the origins'.
  Reg sortsBefore(const ir::Op& op, Reg a, Reg i, Reg b, Reg o);

  // Counts in workgroup memory over the result's padded shape: zeroed, then each real element
  // (its one copy) adds 1 to its bin atomically (an element outside the bins adds 0 to bin 0),
  // then each thread reads its registers' bins.
  void histogram(const ir::Op& op);

  // A failed check: each thread finds one of its real elements where cond is false, and the
  // first thread to claim the fault word records its program and that element.
  void check(const ir::Op& op);

  // Integer division or remainder by zero in a real element sets the fault buffer, which the
  // device turns into the error the CPU reports (the interpreter's: division of fill values too).
  void checkDivisor(const LinearLayout& lin, int64_t reg, Reg divisor, const ir::Shape& shape);

  // This program's position in row-major grid order.
  Reg programIndex();
  // This program's id on `axis` (i64): the workgroup's, but in a kernel whose grid has two axes
  // or more and whose folds run matrix-unit dots of two blocks loaded along k (a GEMM's
  // shape), workgroups take the programs of axes 0 and 1 in groups of kProgramGroup along
  // axis 0 (Triton's GROUP_M): the hardware starts workgroups in order of axis 0, then 1, so
  // those running together cover a band of kProgramGroup row blocks column by column, and the
  // blocks of A and B they read stay in L2.
  // A persistent kernel's program ids are its current program's (programIds).
  Reg programId(int64_t axis) {
    if (programIds_[0] >= 0) return programIds_.at(size_t(axis));
    if (persistent_) throw InternalError("kernel ir", "a persistent kernel's program id outside its loop over the programs");
    return axis < 2 && groupedIds_[0] >= 0 ? groupedIds_[size_t(axis)] : workgroupId(axis);
  }
  // The programs on `axis` (i64): the workgroups', or a persistent kernel's program_count parameter.
  Reg programCount(int64_t axis) {
    return persistent_ ? param("programs" + std::to_string(axis)) : workgroupCount(axis);
  }
  Reg workgroupId(int64_t axis) { return b_.emit(KOp::workgroup_id, DType::i64, {}, {{"axis", axis}}); }
  Reg workgroupCount(int64_t axis) { return b_.emit(KOp::workgroup_count, DType::i64, {}, {{"axis", axis}}); }
  static constexpr int64_t kProgramGroup = 8;
  // Whether the kernel's programs are grouped; if so, sets groupedIds_ (at the kernel's top level).
  void groupPrograms();
  // The ids on axes 0 and 1 of the program numbered `started(rows)` (u32, axis 0 fastest, given
  // the u32 program count of axis 0) in groups of kProgramGroup, where the programs number
  // under 2^32; else `plain`.
  std::array<Reg, 2> groupedIds(const std::function<Reg(Reg rows)>& started, std::array<Reg, 2> plain);
  // The ids of the program numbered `linear` in a persistent kernel: row-major (axis 0
  // fastest), grouped on axes 0 and 1 as groupPrograms does where the kernel is GEMM-shaped.
  std::array<Reg, 3> programIds(Reg linear);
  bool gemmShaped_ = false;  // gemmShaped(k_, a_)
  std::array<Reg, 2> groupedIds_ = {-1, -1};
  std::array<Reg, 3> programIds_ = {-1, -1, -1};  // a persistent kernel's current program

  // ---- replicated elements: bits of a layout whose basis is zero hold copies ----
  // Each element is stored once, by its copy whose copy bits are 0: a program that reads
  // and writes the same elements (y = x + y) would otherwise race with its own copies.
  // The register bits whose basis is zero: a register with any of them set copies another.
  static int64_t copyBits(const LinearLayout& lin);
  static bool isCopy(const LinearLayout& lin, int64_t reg) { return (reg & copyBits(lin)) != 0; }
  // Whether this thread holds the stored copy of its elements; -1 when no bit copies. Thread
  // bits a layout lacks (a Uniform value's) copy too.
  Reg ownsCopies(const LinearLayout& lin);

  // ---- control ----
  // A loop's carried values from operand `first` on, as registers: all of them, their types,
  // and how many each value has.
  struct Carried {
    std::vector<Reg> regs;
    std::vector<DType> types;
    std::vector<size_t> counts;
  };
  Carried carried(const ir::Op& op, size_t first);
  void fold(const ir::Op& op);
  // Before the loop: copies of iterations start .. start + lookahead - 1 into stages 0 .. lookahead - 1.
  void readAheadPrologue(const ir::Block& body, const std::vector<ir::ValueId>& ahead, int64_t stages, int64_t lookahead,
                         Reg start, Reg end);
  // At the top of iteration k: its copies have landed (lookahead - 1 later ones may still fly)
  // and every thread is done with the stage of iteration k + lookahead - stages (k - 1, or k - 2
  // when wgmmas stay in flight across iterations), which the copies for k + lookahead now
  // refill; the dots read stage (k - start) % stages.
  void readAheadIteration(const ir::Block& body, const std::vector<ir::ValueId>& ahead, int64_t stages, int64_t lookahead,
                          Reg start, Reg end, Reg k);
  // Stores the registers a register-staged ring's loads brought (stagedLoads_) into their stage.
  void storeStagedLoads();
  // The body's wgmma dots that may stay in flight into the next iteration: acc = dot(a, b, acc)
  // in f32, the carried acc read by the dot alone and its result by the yield alone. Each
  // iteration then waits only for the previous iteration's group.
  std::set<const ir::Op*> inFlightAccumulators(const ir::Block& body) const;
  // The fold's results those dots yield, returned by a wgmma_wait for all groups.
  void waitForAccumulators(const ir::Op& fold, const std::set<const ir::Op*>& inFlight);
  // The tile IR's while: each region's arguments are the carried registers.
  void whileLoop(const ir::Op& op);
  // An if as two loops of at most one iteration, the kernel IR's structured control flow: the
  // then side runs where the (uniform) condition holds, the else side otherwise; the results
  // pass through both as carried registers.
  void branch(const ir::Op& op);
  void splitInto(const std::vector<ir::ValueId>& values, size_t first, const std::vector<Reg>& flat,
                 const std::vector<size_t>& counts);
  void yield(const ir::Op& op);

  // ---- read-ahead: a fold's dot operands copied asynchronously into rings of stages ----
  // A block moved by TMA: `blocks` boxes of the tensor map parameter `map`, `blockElements`
  // apart in workgroup memory, each `boxInner` elements of the block's last dimension wide and
  // swizzled by `swizzle` bytes.
  struct TmaBoxes {
    int64_t map, boxInner, blocks, blockElements, stageBytes, swizzle;
    // Where a box may start: on its swizzle pattern, counted from address 0 (TMA needs 128 bytes).
    int64_t patternBytes() const { return std::max<int64_t>(128, 8 * swizzle); }
  };
  // A release the fold body's yield is preceded by: the stage the iteration (step - lag) read
  // (none while that is negative), at the body's region depth.
  struct StageRelease {
    Reg step;
    int64_t lag, stages;
    int depth;
  };
  struct ReadAhead {
    const ir::Op* load;
    std::vector<ir::ValueId> views;        // the load's result, then the views between it and the dot
    std::vector<const ir::Op*> offsetOps;  // the body's ops its offsets need, in order
    LinearLayout at;                       // the dot operand's layout, in the load's coordinates
    LinearLayout storeAt;                  // the dot operand's layout -> element offset in a stage
    int64_t vec, stageElements;
    Staged staged;  // the dot's view of the ring; base: the current iteration's stage
    bool asyncProxy;  // wgmma reads it
    std::optional<TmaBoxes> tma;  // else copies of vec elements: cp.async's, or, without them,
                                  // loads into registers stored into the stage later (registerStaging)
  };
  // vec elements of register `reg` of ring `ring`'s operand, loaded for a later iteration, to be
  // stored at the stage starting at element `base`.
  struct StagedLoad {
    ir::ValueId ring;
    int64_t reg;
    std::vector<Reg> values;
    Reg base;
  };

  // The fold's read-ahead candidates (planReadAhead) given rings of `stages` buffers below a
  // raised allocation floor; with cp.async, those whose copies are 4, 8 or 16 bytes. With
  // `rings` (candidate index -> allocation), those candidates take the rings a fold before
  // handed on, and no others.
  std::vector<ir::ValueId> giveRings(const ir::Op& fold, int64_t stages, const std::map<size_t, int64_t>* rings = nullptr);
  // Whether fold `second` goes on with `first`'s iterations (it starts where `first` ends, as
  // the parts of a fold split at its masks do) reading the same blocks: its read-ahead
  // candidates load the same tensors from offsets that the same ops compute of its index.
  bool continues(const ir::Op& first, const ir::Op* second) const;
  bool copiesIn(const std::vector<ir::ValueId>& ahead) const;  // whether a ring of them is filled by cp.async
  bool allTma(const std::vector<ir::ValueId>& ahead) const;    // whether every ring of them is filled by TMA
  // The TMA boxes that fill a stage of candidate c's ring exactly as `offsetOf` (its layout:
  // coordinates -> element offset) places the operand, with the widest swizzle that does; nullopt
  // when none does, the target has no TMA or the tensor's launch facts do not allow it.
  std::optional<TmaBoxes> tmaBoxes(const ReadAheadCandidate& c, const LinearLayout& offsetOf) {
    return tmaBoxes(c.load->get(ir::attr::tensor), k_.type(c.load->results[0]).shape, c.toLoad, c.operand, offsetOf);
  }
  // The same for any block of `shape` of tensor `tensor` that value v (coordinates -> the
  // block's by toBlock) lies in workgroup memory for, as offsetOf places it.
  std::optional<TmaBoxes> tmaBoxes(int64_t tensor, const ir::Shape& shape, const CoordMap& toBlock, ir::ValueId v,
                                   const LinearLayout& offsetOf);
  // A dot result's block store as thread 0's TMA stores from workgroup memory (the whole block
  // in one pass, where a thread's direct stores cover 8 bytes of a row); false where the target,
  // the tensor's launch facts or the block do not allow one, or the store is inside a loop.
  bool tmaStore(const ir::Op& op);
  // Box `box` of a stored dot result, from element `slot` of workgroup memory `alloc`, by the first thread.
  void issueTmaStore(const ir::Op& op, const TmaBoxes& boxes, int64_t box, int64_t alloc, int64_t slot);
  // A persistent kernel's dot result (staged at `storeAt` in workgroup-memory layout `mem`),
  // stored through two box-sized buffers of its own (the rings stay): each box's TMA store
  // overlaps the staging of the next. False (nothing emitted) where a lane's or warp's offsets
  // reach past a box.
  bool storeBoxByBox(const ir::Op& op, const TmaBoxes& boxes, const LinearLayout& storeAt, const std::vector<Reg>& src,
                     const layout::Layout& mem);
  // The tensor-map parameter of `tensor` with this box and swizzle, added on first use.
  int64_t tensorMapParam(int64_t tensor, const std::vector<int64_t>& box, int64_t swizzle);
  // The stages a fold reads ahead with: its own (p.stages) or the target's, within the options'.
  int64_t foldStages(const ir::Op& fold) const;
  // A transaction barrier per stage (and a release barrier per stage with `releases`), below a
  // raised allocation floor: their allocation.
  int64_t allocTmaBarriers(int64_t stages, bool releases);
  // The barriers' setup before the prologue's copies, and their end after the loop.
  void initTmaBarriers(int64_t stages);
  void invalidateTmaBarriers(int64_t stages);
  // Before refilling stage `stage` (i64) for the round (step + distance) / stages, thread 0
  // waits until every warp has released its previous round (none in the first).
  void awaitRelease(Reg step, Reg distance, Reg stages, Reg stage);
  // Lane 0 of each warp arrives on the release barrier of release_'s stage.
  void releaseStage(const StageRelease& r);
  // Thread 0's TMA copies of ring r for iteration k into `stage` (i64) where `live`.
  void issueTma(const ReadAhead& r, Reg stage, Reg live);
  // The i32 coordinates of box j of a block loaded or stored by `access` (its first operands
  // are the block's offsets).
  std::vector<Reg> boxCoords(const ir::Op& access, size_t rank, const TmaBoxes& boxes, int64_t j);
  // `lin` with each basis sent through `map` into coordinates of `shape` (padded).
  static LinearLayout mapped(const LinearLayout& lin, const CoordMap& map, const ir::Shape& shape);
  // Starts the copies of iteration k (i64) into stage `stage` (i64) of each ring, where `live`;
  // then closes their group. The loads' offsets are computed again for this k. A
  // register-staged ring's loads go to stagedLoads_ instead.
  void issueReadAhead(const ir::Block& body, const std::vector<ir::ValueId>& ahead, Reg k, Reg stage, Reg live);

  // The i32 element offset of stage `stage` (i64) in a ring.
  Reg stageOffset(const ReadAhead& r, Reg stage) {
    return castTo(b_.binary("mul", stage, b_.constant(DType::i64, double(r.stageElements))), DType::i32);
  }

  // ---- dot ----
  void dot(const ir::Op& op);

  // ---- wgmma (kernel_ir_wgmma.cpp) ----
  static bool isWgmmaOperand(const layout::Layout& l);
  // The alignment of an allocation in `mem`: a wgmma swizzle pattern's 8 rows (else 16 bytes).
  static int64_t swizzleAtomBytes(const layout::Layout& mem, DType dt);
  // A wgmma operand in workgroup memory: its allocation, the element offset of the stage read
  // now (-1: none) and its layout.
  struct WgmmaOperand {
    int64_t alloc;
    Reg base;
    layout::Shared mem;
  };
  // Operand i of a wgmma dot: its read-ahead ring, its copy staged before the fold, or its
  // registers stored at `sharedOffset` bytes above the floor (rounded up to the swizzle pattern).
  WgmmaOperand wgmmaOperand(const ir::Op& op, int i, int64_t sharedOffset);
  // The workgroup-memory layout wgmma reads operand i in.
  layout::Shared wgmmaMemory(const ir::Op& op, int i) const;
  // Whether a wgmma dot takes a from registers (already in, or a shuffle away from, its fragments).
  bool wgmmaAFromRegisters(const ir::Op& op) const;
  // Operand i of a wgmma dot, from registers, stored in wgmma's layout `sharedOffset` bytes
  // above the floor: its allocation.
  int64_t wgmmaStaged(const ir::Op& op, int i, int64_t sharedOffset);
  // The wgmma dots' operands that a fold's body takes from outside it and reads from workgroup
  // memory (attention's q): stored once before the loop rather than in every iteration, above
  // the floor, which then rises past them. Returns the (dot, operand) pairs staged. (mma.sync
  // dots keep staging theirs in the loop: on sm_80 ptxas then spills attention at 168 registers.)
  using StagedOperands = std::map<ir::ValueId, std::pair<int64_t, layout::Shared>>;
  // `before`: what the fold right before this one staged, reused where still in place.
  std::vector<std::pair<const ir::Op*, int>> stageInvariantOperands(const ir::Block& body, const StagedOperands& before);
  // The i32 element offset of an instruction's first element (row, col) of operand v, plus
  // `warpgroupRows` (-1: none).
  Reg wgmmaStart(const WgmmaOperand& o, ir::ValueId v, int64_t row, int64_t col, Reg warpgroupRows);
  // Operand a's registers (in wgmma's a fragments) by (m step, k step), 8 each in fragment order.
  std::map<std::pair<int64_t, int64_t>, std::vector<Reg>> wgmmaFragments(const ir::Op& op, int64_t rowsPerStep, int64_t kStep);
  // Each instruction's accumulator registers by (m step, n step), in wgmma's order: per 8
  // columns, (r, c), (r, c+1), (r+8, c), (r+8, c+1) (lane 0 of warp 0's coordinates).
  static std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> wgmmaTiles(const LinearLayout& acc, int64_t rowsPerStep,
                                                                                 int64_t nInstr);
  // The attributes of operand `side` ("A", "B") read from workgroup memory: allocation, major-ness,
  // swizzle and the descriptor's byte offsets.
  void wgmmaMatrixAttrs(const WgmmaOperand& o, ir::ValueId v, const std::string& side, std::vector<KAttr>& attrs) const;
  // One wgmma per warpgroup's 64 rows, 256 columns and kStep (16, or 32 for 8-bit floats) of k;
  // issued as one group and waited for (or left in flight: inFlightAccumulators).
  void wgmmaDot(const ir::Op& op, int64_t kStep);

  // An FMA dot: a and b go to workgroup memory row-major from the layouts they were computed in
  // (instead of the operand layouts inference chose: those hold all of k in registers); then
  // a loop over k multiplies and adds into each result register.
  void fmaDot(const ir::Op& op);
  Reg castTo(Reg r, DType t) { return b_.type(r) == t ? r : b_.emit(KOp::cast, t, {r}); }
  // Stores a tile's registers (in the layout it was computed in) row-major over its
  // padded shape; the caller brackets the stores with barriers.
  int64_t stageRowMajor(ir::ValueId v, int64_t offset);

  // ---- warp specialization (kernel_ir_specialize.cpp) ----
  // The kernel as two roles: the p.warps consumer warps run it, with the fold specialized_
  // taking stages that the producer warpgroup (128 threads more) fills with TMA copies.
  void lowerSpecialized();
  // A persistent kernel's consumers: the barriers set up, the kernel run for each program of the
  // workgroup, the barriers ended.
  void persistentConsumers();
  // The consumers' code of two warpgroups, once per warpgroup where it has loops of two wgmma
  // groups or more, each copy taking turns with the other (kernel_ir_specialize.cpp's takeTurns).
  KBlock pingPong(KBlock consumers);
  // The producer's code: the scalars its copies need, then a loop over the fold's iterations
  // that waits for each stage's release and issues its copies.
  void producer();
  // The ops before the fold whose values the producer needs, in kernel order; throws
  // CannotSpecialize unless each is a scalar op at the kernel's top level without memory access.
  std::vector<const ir::Op*> producerOps() const;
  // Named barrier 1 of the consumers and the producer: at the fold's start (its barriers set up)
  // and end (every wait done).
  void syncWithProducer();
  static constexpr int64_t kProducerThreads = 128;  // a warpgroup
  // The producer's loop over one program's iterations of the fold (ring steps from stepBase_
  // on); returns how many it ran (i64).
  Reg producerLoop();
  // A persistent kernel's loop over the programs of this workgroup: `body` runs each (its ids
  // in programIds_, the ring steps of the programs before it in stepBase_) and returns how many
  // ring steps it took.
  void forEachProgram(const std::function<Reg()>& body);
  // Where a ring's iteration k (i64) is in the ring's sequence of steps: k - start, after the
  // steps of the persistent kernel's programs before this one.
  Reg ringStep(Reg k, Reg start) {
    Reg step = b_.binary("sub", k, start);
    return tma_.specialized && stepBase_ >= 0 ? b_.binary("add", step, stepBase_) : step;
  }
  // A persistent kernel's barrier allocation, the allocations made before the fold and the ring
  // steps per program (the specialized fold's iterations).
  struct PersistentRings {
    int64_t barriers;
    size_t allocations;
    Reg steps = -1;
  };
  // What the producer issues, captured when the consumers' fold takes its rings.
  struct ProducerPlan {
    const ir::Op* fold;
    ir::ValueId start, end;  // its iterations: through the fold that continues it
    int64_t stages, barriers;
    std::vector<std::pair<ir::ValueId, ReadAhead>> rings;
  };
  const ir::Op* specialized_ = nullptr;  // the fold {specialize = 1} a producer reads ahead for
  bool persistent_ = false;               // isPersistent (forEachProgram)
  std::optional<PersistentRings> persistentRings_;
  Reg stepBase_ = -1;                     // ring steps of the persistent kernel's programs before this one
  std::optional<ProducerPlan> producer_;
  int64_t leaderThread_ = 0;  // firstThread()'s

  const ir::Kernel& k_;
  const layout::LayoutAssignment& a_;
  const ReadAheadPlan& readAheadPlan_;
  const layout::Target& t_;
  KernelLoweringOptions options_;
  KernelFunction f_;
  KBuilder b_;
  std::map<ir::ValueId, std::vector<Reg>> regs_;
  std::map<ir::ValueId, const ir::Op*> producers_;
  std::vector<int64_t> divisors_;  // ir::knownDivisors: what keeps block offsets aligned
  std::map<ir::ValueId, ReadAhead> readAhead_;  // the dot operands of the folds being lowered read ahead
  std::set<ir::ValueId> readAheadViews_;        // their loads and views, never in registers
  std::set<const ir::Op*> inFlightDots_;        // wgmma dots whose groups stay in flight (inFlightAccumulators)
  std::map<std::pair<const ir::Op*, int>, int64_t> invariantStaged_;  // allocations of wgmma operands staged before their folds
  // The wgmma operands the fold lowered last staged before its loop (value: allocation,
  // layout), while no other op has been lowered since: a fold right after it (the second part
  // of a fold split at its masks, ir::splitFoldsAtMasks) reads them where they are, so their
  // registers need not live through the first loop to be stored again.
  StagedOperands lastFoldStaged_;
  // A fold's TMA rings, their barriers and phases, handed on to the fold right after it that
  // continues its iterations (continues()): the first reads ahead into the second's iterations,
  // which start with their stages full instead of a drained pipeline and new barriers.
  struct RingHandoff {
    const ir::Op* next;                // the fold that takes them
    std::map<size_t, int64_t> rings;   // candidate index -> ring allocation
    int64_t alloc, stages, lookahead;  // the barriers' allocation; how far the copies run ahead
    int64_t floor;                     // the allocation floor above the rings and barriers
    Reg start;                         // the first fold's start: stages and phases count from it
    bool specialized;                  // a producer warpgroup fills the rings
  };
  std::optional<RingHandoff> handoff_;
  const ir::Op* nextOp_ = nullptr;  // the op after the one being lowered, in its block
  // The innermost fold's barriers for its TMA rings: one transaction barrier (an i64) per stage
  // in allocation `alloc` (-1: none), then, when every ring is TMA's (`releases`), one per stage
  // that the warps arrive on when done reading it (`release`, before the body's yield), which
  // the refill waits for instead of a workgroup barrier.
  struct FoldBarriers {
    int64_t alloc = -1;
    bool releases = false;
    std::optional<StageRelease> release;
    bool specialized = false;  // the producer warpgroup issues the copies (lowerSpecialized)
  };
  FoldBarriers tma_;
  // The innermost register-staged fold's loads for its next iteration, stored before the yield
  // of its body (region depth stagedLoadsDepth_).
  std::vector<StagedLoad> stagedLoads_;
  int stagedLoadsDepth_ = -1;
  int64_t sharedFloor_ = 0;  // allocations start here: below lie those folds' rings
  int64_t stagesUsed_ = 1;   // the most stages a fold read ahead with
  std::map<ir::ValueId, int> uses_;  // how many operands read each value
  int64_t checks_ = 0;           // check ops lowered so far: the next one's number
  int regionDepth_ = 0;
};

}  // namespace tj::gpu::detail
