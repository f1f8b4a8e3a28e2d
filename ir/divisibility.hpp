// What is known at trace time about the integers a rank-0 value takes at run time: the
// largest power of two (up to kMaxDivisor) that divides every value it can hold. A GPU
// lowering reads it to know that a block's offset keeps 16-byte vectors aligned
// (`mul(program_id, 64)` is a multiple of 64 whatever the program).
#pragma once
#include <cstdint>
#include <vector>

#include "ir/ir.hpp"

namespace tj::ir {

inline constexpr int64_t kMaxDivisor = int64_t{1} << 30;

// Indexed by ValueId; 1 for values nothing is known about (and for tiles and floats).
std::vector<int64_t> knownDivisors(const Kernel& k);

}  // namespace tj::ir
