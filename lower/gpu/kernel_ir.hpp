// The per-thread GPU kernel IR: what one thread of a workgroup executes, shared by
// every GPU backend (each backend only prints it as SPIR-V, PTX or AMDGPU).
//
// Values are typed SSA registers (%N) holding scalars. Control flow is structured:
// `for` (a region ^(k, carried...) yielding the new carried registers); predicates guard
// memory accesses instead of branches.
// Instructions (operands in parentheses, attributes in braces):
//   thread_id lane_id warp_id {}       : i32  this thread in the workgroup / its subgroup / its subgroup's index
//   workgroup_id workgroup_count {axis}: i64  the program id / grid size on an axis
//   param {index}                      : the function's parameter `index` (sizes, strides, scalars)
//   constant {value}                   : T
//   unary {fn[, approx]} (x), binary {fn} (a, b) : fn is a tile-IR elementwise op name (add, exp, rsqrt, max,
//                                        xor, shl, shr...); approx: the tile IR's exp/exp2 {approx = 1}
//   cmp {pred} (a, b)                  : bool; pred lt le gt ge eq ne in the order of the operands' dtype
//                                        (unsigned for u8...u64), ult (unsigned less: 0 <= a < b when b >= 0)
//   select (c, a, b), cast (x)         : cast converts to the result type
//   fma [approx] (a, b, c)             : a * b + c rounded once (f32, f64); with approx, a target
//                                        without a fused multiply-add may round a * b first
//   load_global {buffer, fill, vec} (index, pred)  : buffer[index] if pred else fill (index in elements)
//   store_global {buffer, vec} (index, pred, value): buffer[index] = value if pred
//   atomic_global {buffer, fn} (index, pred, value[, compare]) : the tile IR's atomic on buffer[index] if
//                                        pred (acquire-release, device scope); its old value, else 0
//   load_shared {alloc} (index), store_shared {alloc} (index, values...): workgroup memory, index in
//                                        elements; several results (values) come from (go to)
//                                        consecutive elements as one access, aligned to its size
//   atomic_shared {alloc} (index, value) : adds the i32 value to element `index` of workgroup memory
//                                        alloc atomically (relaxed: a barrier orders it with reads)
//   ldmatrix {alloc, num, trans} (index) : num (1, 2, 4) 8x8 matrices of 16-bit elements, PTX's ldmatrix:
//                                        lane l gives at `index` the row l%8 of matrix l/8 (16 bytes,
//                                        aligned); results 2j and 2j+1 are matrix j's elements
//                                        (l/4, 2(l%4)) and (l/4, 2(l%4)+1), transposed with trans:
//                                        (2(l%4), l/4) and (2(l%4)+1, l/4). Of 8-bit elements (not
//                                        trans), each 16-bit one is two: results 4j..4j+3, low byte first
//   async_copy {buffer, alloc, bytes} (index, pred, slot) : starts copying `bytes` (4, 8 or 16) from
//                                        buffer[index] (zeros where pred is false) to element `slot` of
//                                        workgroup memory alloc; they land by the async_wait that
//                                        completes its group (PTX's cp.async)
//   async_commit                       : closes this thread's group of the async copies started since the last
//   async_wait {pending}               : waits until at most `pending` of this thread's groups are in flight
//   barrier {[id, threads[, arrive]]}  : workgroup barrier (memory and execution); with id (1 to 15),
//                                        a named barrier that `threads` threads (whole warps) meet at,
//                                        the others going on (PTX's barrier.sync id, threads); with
//                                        arrive, these threads count toward it and go on at once
//                                        (barrier.arrive: orders their accesses before the others')
//   shuffle_xor {mask} (x), shuffle_idx (x, lane) : x from another lane of the subgroup
//   subgroup_reduce {fn, cluster} (x)  : fn over clusters of `cluster` consecutive lanes
//   pack (values...) : u32             : the bits of 32 / w values of one w-bit dtype (8 or 16 bits; an
//                                        8-bit float's code, bf16's high half) in one word, the first lowest
//   unpack (word) : T...               : the reverse: a u32's w-bit pieces as values of T, the lowest first
//   byte_perm (a, b, selector) : u32   : byte j is byte (selector >> 4j) & 7 of the u32s b:a, a's lowest
//                                        byte 0 (PTX's prmt without its sign modes)
//   mma {instr, m, n, k, a, b, c} (a..., b..., c...) : one matrix instruction over register fragments; results d...
//   wgmma {n, k, a, b, allocB, transB, swizzleB, leadingB, strideB[, allocA, transA, swizzleA, leadingA,
//          strideA]} (startA | a0..a7, startB, c...) : Hopper's warpgroup MMA m64nNk into f32 (k 16 for
//                                        f16/bf16, 32 for 8-bit floats, both then K-major), issued
//                                        asynchronously by the 128 threads of a warpgroup: b (k x n)
//                                        and, with allocA, a (64 x k) are read from workgroup memory in
//                                        their allocations' wgmma Shared layouts, from element start: rows
//                                        M (N) rather than K with trans, 8-row groups `stride` bytes apart,
//                                        column blocks `leading` apart, swizzled by `swizzle` bytes.
//                                        Without allocA, a is registers: m16n8k16's a fragment per warp
//                                        (8), or m16n8k32's for 8-bit floats (16).
//                                        c... and results d...: m16n8k16's accumulator per warp, its n/8
//                                        column tiles in order, warps stacked along M. The results are
//                                        ready after a wgmma_wait.
//   wgmma_fence, wgmma_commit          : orders earlier register writes before the next wgmma / closes
//                                        this warpgroup's group of wgmmas issued since the last commit
//   wgmma_wait {pending} (values...)   : waits until at most `pending` groups are in flight; returns
//                                        `values` (wgmma results), which may be read from then on
//   fence_async_shared                 : orders this thread's earlier workgroup-memory accesses (stores,
//                                        landed copies, reads) before the async proxy's (wgmma, tma_load)
//   mbarrier_init {alloc, count} (index, pred) : if pred, makes element `index` (an i64) of workgroup
//                                        memory alloc a transaction barrier of `count` arrivals, in phase 0
//   mbarrier_expect {alloc, bytes} (index, pred) : if pred, arrives on the barrier and has its current
//                                        phase also wait for `bytes` transaction bytes (PTX's
//                                        mbarrier.arrive.expect_tx); a phase completes when all its
//                                        arrivals and bytes are in
//   mbarrier_arrive {alloc} (index, pred) : if pred, arrives on the barrier (releasing this thread's
//                                        earlier accesses of workgroup memory to its waiters)
//   mbarrier_wait {alloc} (index, parity[, pred]) : (if pred) waits until the barrier's phase of this
//                                        parity (0 or 1) has completed (try_wait.parity in a loop): the
//                                        current phase if it has that parity, else the one before, which
//                                        a barrier in phase 0 counts as done
//   mbarrier_inval {alloc} (index, pred) : if pred, ends the barrier, so its bytes may be reused
//   tma_load {map, alloc, barrier} (pred, slot, index, coords...) : if pred, Hopper's tensor memory
//                                        accelerator copies the box of tensor-map parameter `map` at
//                                        coords (i32, the tensor's dimensions in order, the box's first
//                                        element; zeros outside the tensor) to workgroup memory alloc from
//                                        element slot, row-major and swizzled as the map says; its bytes
//                                        count toward barrier `index` of alloc `barrier`
//   tma_store {map, alloc} (pred, slot, coords...) : if pred, TMA copies a box from workgroup memory
//                                        alloc at element slot (as tma_load places it) to the tensor at
//                                        coords, leaving out elements outside the tensor; it reads the
//                                        workgroup memory asynchronously (the async proxy)
//   tma_store_wait {pending} (pred)    : if pred, the TMA stores this thread issued since its last
//                                        wait become a group, and it waits until at most `pending`
//                                        of its groups have not read their workgroup memory
//   for (start, end, inits...) / yield (values...)
//   branch (cond)                      : regions ^() then and ^() else, no results: the threads where
//                                        cond holds run then, the others else, side by side; cond is
//                                        the same within each warp (warp specialization's roles)
//   set_max_registers {count, grow}    : the warpgroup's registers per thread become `count` (a
//                                        multiple of 8, 24 to 256), grown or shrunk as grow says
//                                        (PTX's setmaxnreg.inc / .dec: the registers a producer
//                                        warpgroup gives up go to the consumers)
//   while (inits...)                   : regions ^(carried...) cond, yielding a bool the same in every
//                                        thread, and ^(carried...) body, yielding the next carried
//                                        registers; the results are the last ones
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "ir/dtype.hpp"
#include "ir/ir.hpp"

namespace tj::gpu {

using Reg = int32_t;

enum class KOp : uint8_t {
  thread_id, lane_id, warp_id, workgroup_id, workgroup_count, param, constant,
  unary, binary, cmp, select, cast,
  load_global, store_global, load_shared, store_shared, barrier,
  shuffle_xor, shuffle_idx, subgroup_reduce, mma,
  for_loop, yield,
  atomic_global, ldmatrix, async_copy, async_commit, async_wait, atomic_shared,
  while_loop, wgmma, wgmma_fence, wgmma_commit, wgmma_wait, fence_async_shared,
  mbarrier_init, mbarrier_expect, mbarrier_wait, mbarrier_inval, tma_load, mbarrier_arrive, tma_store, tma_store_wait,
  pack, unpack, byte_perm, fma, branch, set_max_registers,
};
std::string_view kopName(KOp op);  // "for" for the structured loop
bool isPure(KOp op);               // no side effects and no dependence on control (CSE-able)

using KAttrValue = std::variant<int64_t, double, std::string>;
struct KAttr {
  std::string name;
  KAttrValue value;
  bool operator==(const KAttr&) const = default;
};

struct KInst;
struct KBlock {
  std::vector<Reg> args;
  std::vector<KInst> insts;
};

struct KInst {
  KOp op;
  std::vector<Reg> results, operands;
  std::vector<KAttr> attrs;  // in insertion order, printed as given
  std::vector<KBlock> regions;
};

// A runtime argument: a tensor's buffer, one of its sizes or strides, a scalar, a tensor
// map: Hopper's TMA descriptor of a tensor (CUtensorMap, 128 bytes, passed by value), which
// the device encodes at each launch from the tensor's address, sizes and strides; or a
// persistent kernel's program count on an axis (i64: the launch's grid, which its
// workgroups go through in turn).
struct KParam {
  enum class Kind : uint8_t { buffer, size, stride, scalar, tensor_map, program_count } kind;
  std::string name;  // "t0", "t0.size1", "t0.stride1", "s0", "t0.map0", "programs0"
  DType dtype;       // the element type of a buffer or tensor map; i64 for sizes and strides
  size_t number = 0;  // the tensor's or scalar's index: N in "tN..." or "sN"
  size_t axis = 0;    // the dimension of a size or stride
  // A tensor map's box (elements per dimension, the tensor's dimensions in order, the last
  // one contiguous) and its swizzle in bytes (0, 32, 64 or 128: the span of the pattern
  // that XORs 16-byte chunk bits 4.. of workgroup-memory addresses with bits 7..).
  std::vector<int64_t> box = {};
  int64_t swizzle = 0;
  bool operator==(const KParam&) const = default;
};

// A range of workgroup memory. Each allocation lives only from its stores (after a barrier)
// to its loads, so allocations overlap one another unless they are live together (the
// operands of an FMA dot): the workgroup's buffer is the largest end.
struct SharedAlloc {
  int64_t offset, bytes;
  DType dtype;
  std::string layout;  // how elements are placed (the swizzled layout), for reading
};

// A print op: each program stores its tile row-major into its slice (in row-major grid
// order) of the buffer parameter `param`; the device prints the slices after the launch.
struct KPrint {
  std::string label;
  DType dtype;
  std::vector<int64_t> shape;
  size_t param;
};

// The words of the fault buffer: what the device reports after a launch.
enum class FaultWord : int64_t {
  divisionByZero = 0,  // integer division or remainder by zero in a real element (the CPU's error)
  loopLimit = 1,       // the loops ran past the target's loopIterationLimit: the results are cut short
  // A failed check: 1 + its number in op order, set once (compare-exchange from 0); the thread
  // that set it writes the program's row-major id (two words) and the element's.
  check = 2, checkProgramLow = 3, checkProgramHigh = 4, checkElement = 5,
};
inline constexpr int64_t kFaultWords = 6;

struct KernelFunction {
  std::string name, target;
  int64_t workgroupSize = 1, subgroupSize = 1;
  std::vector<KParam> params;  // print and fault buffers are buffer parameters numbered after the tensors
  std::vector<KPrint> prints;
  // The buffer parameter of the fault words (FaultWord), i32s;
  // -1 when nothing in the kernel can fault.
  int64_t faultParam = -1;
  // Loop iterations one thread may run, all loops together (the target's); 0: no limit. A
  // printer counts every loop it emits and past the limit sets FaultWord::loopLimit.
  int64_t loopIterationLimit = 0;
  // The alignment the allocations' offsets assume of workgroup memory's start: 1024 where a
  // wgmma or TMA swizzle pattern, counted from address 0, must start on an allocation.
  int64_t sharedAlignment = 16;
  std::vector<SharedAlloc> shared;
  std::vector<DType> regTypes;  // indexed by Reg
  KBlock body;

  Reg newReg(DType t) {
    regTypes.push_back(t);
    return static_cast<Reg>(regTypes.size() - 1);
  }
  int64_t sharedBytes() const;  // the largest end of an allocation
  // A buffer parameter after the tensors' (bindings follow parameter numbers); its index.
  size_t addBufferParam(std::string name, DType t);
  // The fault buffer's parameter, added on first use.
  size_t faultBuffer();
};

// Appends instructions to the innermost open block. Pure instructions are value-numbered:
// the same op, operands and attributes give the register computed before in an
// enclosing block, so address arithmetic shared by registers is emitted once.
class KBuilder {
 public:
  // Past `maxInstructions` appended instructions (0: no limit) an append throws OverBudget,
  // whose what() is "<maxInstructions> instructions per thread".
  explicit KBuilder(KernelFunction& f, int64_t maxInstructions = 0);
  struct OverBudget : Unsupported {
    using Unsupported::Unsupported;
  };

  Reg emit(KOp op, DType type, std::vector<Reg> operands = {}, std::vector<KAttr> attrs = {});
  void effect(KOp op, std::vector<Reg> operands = {}, std::vector<KAttr> attrs = {});  // no result
  std::vector<Reg> emitMulti(KOp op, const std::vector<DType>& types, std::vector<Reg> operands,
                             std::vector<KAttr> attrs);  // several results (mma)
  Reg constant(DType t, double value);
  Reg constant(DType t, const ir::Number& value);  // an IR attribute: integers stay exact past 2^53
  Reg unary(std::string_view fn, Reg x);
  Reg binary(std::string_view fn, Reg a, Reg b);  // the result has a's type (cmp has its own)
  Reg cmp(std::string_view pred, Reg a, Reg b);    // bool
  Reg select(Reg cond, Reg a, Reg b);             // a's type
  DType type(Reg r) const { return f_.regTypes.at(static_cast<size_t>(r)); }

  // Opens a region on the last instruction (a for) with block arguments of `types`.
  std::vector<Reg> openRegion(const std::vector<DType>& types);
  void closeRegion();
  KInst& lastInst() { return open_.back()->insts.back(); }

 private:
  std::string key(KOp op, const std::vector<Reg>& operands, const std::vector<KAttr>& attrs, DType t) const;
  void append(KInst inst);
  KernelFunction& f_;
  int64_t maxInstructions_, appended_ = 0;
  std::vector<KBlock*> open_;
  std::vector<std::map<std::string, Reg>> numbered_;  // per open block
};

// An instruction's attribute; throws Error("kernel ir: <op> without attribute <name>").
const KAttrValue& attr(const KInst& i, std::string_view name);
bool hasAttr(const KInst& i, std::string_view name);
int64_t intAttr(const KInst& i, std::string_view name);
const std::string& strAttr(const KInst& i, std::string_view name);
double number(const KAttrValue& v);  // a double attribute, or an integer one as a double

// Whether a kernel with these parameters is persistent: it takes program_count parameters, and
// the device launches at most one workgroup per multiprocessor on a 1-D grid, workgroup w
// running programs w, w + workgroup_count, ... in row-major order of the program grid.
bool isPersistent(const std::vector<KParam>& params);

// Stable text for goldens.
std::string print(const KernelFunction& f);

// Counts instructions of one kind, nested regions included (for tests and statistics).
int64_t countOps(const KBlock& b, KOp op);
// Counts every instruction, nested regions included: the size of a thread's code.
int64_t instructionCount(const KBlock& b);
// Counts the accesses to global and workgroup memory (loads, stores, atomics, copies), nested
// regions included.
int64_t memoryAccessCount(const KBlock& b);
// Counts the loads and stores of workgroup memory, nested regions included.
int64_t sharedAccessCount(const KBlock& b);

}  // namespace tj::gpu
