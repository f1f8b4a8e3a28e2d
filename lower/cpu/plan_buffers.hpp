// The CPU lowering's first step: where each value of a kernel lives, decided before any code
// is emitted (lowerToLLVM plans, then emits by the plan). A function of the kernel and the
// lowering options alone; tile-ir --stage=buffers prints it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.hpp"
#include "lower/cpu/lower_to_llvm.hpp"

namespace tj::cpu {

using ir::OpCode;
using ir::ValueId;

// Ops whose element is cheap to recompute at every use.
inline bool isCheap(OpCode c) {
  return c == OpCode::constant || c == OpCode::iota || c == OpCode::broadcast || c == OpCode::reshape ||
         c == OpCode::permute || c == OpCode::program_id || c == OpCode::num_programs || c == OpCode::tensor_dim;
}

// Ops computed element by element wherever they are used (fused into the consumer's loop nest).
inline bool isFusable(OpCode c) {
  return isCheap(c) || ir::isUnaryElementwise(c) || ir::isBinaryElementwise(c) || c == OpCode::select ||
         c == OpCode::fma || c == OpCode::cast || c == OpCode::load || c == OpCode::gather || c == OpCode::slice || c == OpCode::concat;
}

// Where each value is defined and how it is used, to decide what gets a buffer.
struct UseInfo {
  std::vector<const ir::Op*> def;  // null for block arguments
  std::vector<int> uses, defDepth;
  std::vector<bool> usedDeeper, printed;
  std::vector<const ir::Op*> dotUser;  // the dot that multiplies the value, if one does
  std::vector<ValueId> yieldedInto;  // for a value a loop body yields: the block argument it replaces
  std::vector<const ir::Op*> storer;  // the store that writes the value, if one does
  std::set<int64_t> storedTensors;
  std::map<int64_t, int> tensorOps;  // how many ops read or write each tensor
  // Ops numbered in program order (an op before the ops of its regions): where each value is
  // defined and last used, and where tensors are written.
  std::vector<int> definedAt, lastUsedAt, writesAt;

  explicit UseInfo(const ir::Kernel& k)
      : def(k.types.size()), uses(k.types.size()), defDepth(k.types.size()), usedDeeper(k.types.size()),
        printed(k.types.size()), dotUser(k.types.size()), yieldedInto(k.types.size(), -1), storer(k.types.size()),
        definedAt(k.types.size()), lastUsedAt(k.types.size()) {
    walk(k.body, 0, -1);
  }

  // Whether an op writes a tensor after v is defined and before its last use.
  bool writeBeforeLastUse(ValueId v) const {
    auto next = std::upper_bound(writesAt.begin(), writesAt.end(), definedAt[size_t(v)]);
    return next != writesAt.end() && *next < lastUsedAt[size_t(v)];
  }

  // Where a region's loop-carried arguments start (a fold's after k, a while body's at 0); -1
  // for regions whose yields replace no arguments.
  static int firstCarried(const ir::Op& op, size_t region) {
    if (op.code == OpCode::fold) return 1;
    return op.code == OpCode::while_ && region == 1 ? 0 : -1;
  }

  void walk(const ir::Block& block, int depth, int carriedFrom) {
    for (ValueId a : block.args) defDepth[a] = depth;
    for (const ir::Op& op : block.ops) {
      const int at = ops_++;
      if (ir::writesTensor(op.code)) writesAt.push_back(at);
      for (size_t i = 0; i < op.operands.size(); ++i) {
        ValueId v = op.operands[i];
        ++uses[v];
        lastUsedAt[v] = at;
        if (depth > defDepth[v]) usedDeeper[v] = true;
        if (op.code == OpCode::dot && i < 2) dotUser[v] = &op;
        if (op.code == OpCode::print) printed[v] = true;
      }
      if (ir::writesTensor(op.code)) storedTensors.insert(op.get(ir::attr::tensor));
      if (op.code == OpCode::store) storer[op.operands.back()] = &op;
      if (op.has(ir::attr::tensor) && op.code != OpCode::tensor_dim) ++tensorOps[op.get(ir::attr::tensor)];
      for (ValueId r : op.results) {
        def[r] = &op;
        defDepth[r] = depth;
        definedAt[r] = at;
      }
      for (size_t r = 0; r < op.regions.size(); ++r) walk(op.regions[r], depth + 1, firstCarried(op, r));
      if (op.code == OpCode::yield && carriedFrom >= 0)
        for (size_t i = 0; i < op.operands.size(); ++i) yieldedInto[op.operands[i]] = block.args[size_t(carriedFrom) + i];
    }
  }

 private:
  int ops_ = 0;  // ops numbered so far
};

enum class Placement : uint8_t {
  scalar,   // a register value
  fused,    // computed element by element inside each user's loop nest
  buffer,   // a buffer of its own, written once (every tile of a loop, dot, reduction, scan...)
  widened,  // a buffer holding a 16- or 8-bit float dot operand as f32, written so once
  inPlace,  // an f32 dot operand read from its tensor's rows where its block lies inside them
  // a dot operand the micro-kernel reads from a copy, a block (perhaps transposed) that programs
  // differing only in some program ids read alike: packed for the micro-kernel (in f32 where it
  // widens the operands) once per launch, by the first program to need it, into the launch's
  // workspace (KernelArgs::workspace), where the others read it
  packedOnce,
};
std::string_view placementName(Placement p);

struct BufferPlan {
  std::vector<Placement> of;  // by ValueId
  // Each packedOnce value's load, and the program ids (a bit per grid axis) its offsets depend on.
  struct SharedLoad {
    const ir::Op* load;
    uint32_t programAxes;
  };
  std::map<ValueId, SharedLoad> packedOnce;
  bool buffered(ValueId v) const { return of[size_t(v)] >= Placement::buffer; }
};

// The dot rules the plan and the emission share. A dot runs on the register micro-kernel with
// f32 accumulators (i32 for i8 operands) and rows of B a whole number of vectors long. How one
// step multiplies: one k (single); two, with vdpbf16ps (bf16) or pmaddwd (i8) (pairs); four,
// with VNNI's vpdpbusd (i8) (quads); or AMX tiles of 16 rows. The micro-kernel runs a dot of 16-
// or 8-bit floats with single products on f32 copies of its operands (widens them).
enum class DotProducts { single, pairs, quads, amxTiles };
bool microKernelApplies(const ir::Kernel& k, const ir::Op& dot, const CpuLoweringOptions& options);
DotProducts dotProducts(const ir::Kernel& k, const ir::Op& dot, const CpuLoweringOptions& options);
bool widensOperands(const ir::Kernel& k, const ir::Op& dot, const CpuLoweringOptions& options);
// Whether quad products enter A's bytes biased (i8 as u8, corrected by B's column sums):
// vpdpbusd multiplies u8 by i8, so a u8 A enters as it is.
inline bool biasedQuads(DotProducts products, DType a) { return products == DotProducts::quads && a == DType::i8; }
// The k an AMX tile step covers: the most that fit a tile row's 64 bytes and divide k, in whole
// 4-byte groups, at least 32 bytes of them; 0 when none does.
int64_t amxStepK(int64_t k, DType operand);

BufferPlan planBuffers(const ir::Kernel& kernel, const UseInfo& info, const CpuLoweringOptions& options);

// The IR text, each value's placement after the line defining it.
std::string printWithBuffers(const ir::Kernel& kernel, const BufferPlan& plan);

}  // namespace tj::cpu
