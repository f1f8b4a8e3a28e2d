// The tile-IR passes and utilities. One file each; every pass takes a kernel
// and returns a new one, and logs its output at debug level.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "ir/ir.hpp"

namespace tj::ir {

// ir/printer.cpp: the textual form. Values are renumbered %0, %1, ... in
// definition order, so print(parse(print(k))) == print(k).
std::string print(const Kernel& k);

// ir/parser.cpp: reads the textual form; throws ParseError with line:col.
struct ParseError : Error {
  int line, col;
  ParseError(int line, int col, const std::string& message);
};
Kernel parse(std::string_view text);

// ir/verifier.cpp: checks types, shapes, operand counts, attributes, SSA
// dominance; throws Error naming the op (and its user file:line when known).
void verify(const Kernel& k);

// ir/hash.cpp: a stable 64-bit semantic hash of the kernel (xxhash of a
// canonical encoding). Ignores value numbering, names and source locations.
uint64_t semanticHash(const Kernel& k);
std::string hashHex(uint64_t h);  // 16 lowercase hex digits

// ir/fold_constants.cpp, ir/cse.cpp, ir/dce.cpp, ir/fuse_dot_accumulate.cpp
Kernel foldConstants(const Kernel& k);
Kernel eliminateCommonSubexpressions(const Kernel& k);
Kernel eliminateDeadCode(const Kernel& k);
Kernel fuseDotAccumulate(const Kernel& k);  // add(acc, dot(a, b)) -> dot(a, b, acc)
Kernel hoistLoopInvariants(const Kernel& k);  // ir/hoist_invariants.cpp: fold-invariant ops move out

// ir/canonicalize.cpp: the passes above to a fixed point (callers verify).
Kernel canonicalize(const Kernel& k);

// ir/split_folds_at_masks.cpp: a fold whose body masks tiles by compares affine in the fold
// index and iotas runs as two folds (marked split), the compares constant true on the
// iterations where they hold for every element (bounds computed before the loop), then the
// kernel is canonicalized. Back ends run it on a canonical kernel before lowering it; the
// canonical kernel itself (the interpreter's, the gradients') keeps its folds whole.
Kernel splitFoldsAtMasks(const Kernel& k);

}  // namespace tj::ir
