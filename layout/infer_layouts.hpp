// Layout inference: one layout per value of a canonical kernel for a target, and
// the conversions where two different layouts meet.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "layout/layout.hpp"

namespace tj::layout {

// A matrix instruction: its M x N x K shape and the operand dtypes it multiplies.
struct MatrixUnit {
  MatrixInstr instr;
  int64_t m, n, k;
  std::vector<DType> operandDtypes;
};

struct Target {
  std::string name;
  int64_t subgroupSize;         // lanes of a warp / wave / subgroup
  int64_t warpsPerProgram;      // subgroups one program runs on
  int64_t maxWorkgroupThreads;
  int64_t sharedBytes;          // workgroup memory
  std::vector<MatrixUnit> matrixUnits;  // each for the operand dtypes it lists
  // The unit of instruction `i`; null when the target has none.
  const MatrixUnit* matrixOf(MatrixInstr i) const;
  // Loop iterations one thread may run in total, all loops together; 0: no limit. Mesa's
  // llvmpipe (lavapipe) silently ends every loop of a shader past 65535 of them.
  int64_t loopIterationLimit = 0;
  // Kernel-IR instructions per thread a program should stay within; past it a GPU lowering
  // spreads the program over more warps (up to maxWorkgroupThreads), so each thread holds
  // fewer registers of every tile. For drivers whose compile time grows faster than a
  // thread's code (lavapipe). 0: always warpsPerProgram.
  int64_t codeBudget = 0;
  // Workgroup-memory accesses per thread a program should stay within (0: no limit); past it
  // the lowering spreads too. Lavapipe compiles each access as a loop over the lanes.
  int64_t sharedAccessBudget = 0;
  // PTX's ldmatrix: 16-bit matrix operands leave workgroup memory 8x8 at a time.
  bool ldmatrix = false;
  // The widest global memory access of one thread in bytes (16: ld.global.v4.b32); 0: one
  // element at a time.
  int64_t vectorBytes = 0;
  // Global-to-workgroup-memory copies that run while the threads compute (cp.async): a fold's
  // dot operands are read `stages - 1` iterations ahead (ir.hpp's fold), by default this many.
  bool asyncCopy = false;
  int64_t defaultStages = 1;
  // Without such copies, a fold's dot operands are read one iteration ahead through registers
  // (p.stages 2; AMD): the global loads of iteration k + 1 issue before the dots of k, whose
  // latency hides theirs, and their registers go to the other of two workgroup-memory stages
  // at the end of k, so each iteration meets at one barrier instead of two.
  bool registerStaging = false;
  // Hopper's tensor memory accelerator: a ring whose stage is one or more boxes of its load,
  // as TMA swizzles them, is filled by cp.async.bulk.tensor under transaction barriers.
  bool tma = false;
  // Folds split at their masks before lowering (ir::splitFoldsAtMasks): the iterations whose
  // compares hold for every element run without them. Each compare and select is a thread's
  // instruction per element here; the cost is a second copy of the loop. sm_90a only, where the
  // second part reads the wgmma operands the first staged: lavapipe's compile time grows faster
  // than the code; on sm_80 attention's mma.sync loops took 173 -> 242 registers (spilling for
  // tensors of any strides), and on gfx1100 its register-staged loop spills (124 bytes).
  bool splitMaskedFolds = false;
};

const std::vector<Target>& targets();  // vulkan, sm_80, sm_90, gfx1100, gfx942, cpu
const Target& targetByName(const std::string& name);  // throws Error listing the names

// A tile moved from one layout to another before `user` reads it as operand `operand`.
struct Conversion {
  ir::ValueId value;
  // The op itself, in the kernel inferred (which its lowering must be given): two yields (of
  // two ifs, or an if and a fold) may yield one value at one index into different layouts.
  const ir::Op* user;
  int operand;
  LayoutPtr from, to;
  ConversionKind kind;
  std::optional<Shared> via;  // the workgroup-memory layout of a shared-memory conversion
};

struct LayoutAssignment {
  std::string target;
  std::vector<LayoutPtr> layouts;  // indexed by ValueId; every value has one
  std::vector<Conversion> conversions;
  const Layout& of(ir::ValueId v) const { return *layouts.at(static_cast<size_t>(v)); }
  // The conversion of `user`'s operand `operand` into the layout the user needs; null for none.
  const Conversion* conversionAt(const ir::Op& user, int operand) const {
    for (const Conversion& c : conversions)
      if (c.user == &user && c.operand == operand) return &c;
    return nullptr;
  }
};

LayoutAssignment inferLayouts(const ir::Kernel& k, const Target& target);

// layout/print_layouts.cpp: the canonical IR text, each line annotated with the
// layouts of the values it defines, then the conversions.
std::string printWithLayouts(const ir::Kernel& k, const LayoutAssignment& a);

}  // namespace tj::layout
