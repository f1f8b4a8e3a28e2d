// The GPU lowering's step between layouts and translation: which dot operands of each fold
// can be read ahead, copied asynchronously into rings of stages while earlier steps of k
// compute. A function of the kernel and its layouts alone; the translation gives each a ring
// and keeps those whose copies are 4, 8 or 16 bytes. tile-ir --stage=readahead prints it.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "layout/infer_layouts.hpp"

namespace tj::gpu {

using Coord = std::vector<int64_t>;
// A linear map of coordinates between two shapes (broadcast, reshape, permute).
using CoordMap = std::function<Coord(const Coord&)>;

// Where a broadcast, permute or reshape finds each result coordinate in its operand; nullopt
// for a reshape that moves elements (one that is not only adding or dropping unit dimensions).
std::optional<CoordMap> viewMap(const ir::Kernel& k, const ir::Op& op);

// A dot operand of a fold body that a block load with zero fill gives, seen through views
// (permutes, unit-dimension reshapes) each used once, read by a matrix-unit dot through
// workgroup memory, at offsets computed from k and values from outside the body.
struct ReadAheadCandidate {
  ir::ValueId operand;
  const ir::Op* load;
  std::vector<ir::ValueId> views;        // the load's result, then the views between it and the dot
  std::vector<const ir::Op*> offsetOps;  // the body's ops its offsets need, in order
  CoordMap toLoad;                       // the operand's coordinates -> the load's
  const layout::Conversion* conversion;  // to the dot's layout, through workgroup memory
};

// Each fold's candidates, in the order of its dots and their operands.
using ReadAheadPlan = std::map<const ir::Op*, std::vector<ReadAheadCandidate>>;
ReadAheadPlan planReadAhead(const ir::Kernel& k, const layout::LayoutAssignment& a);

// The IR text, each candidate noted where it is defined.
std::string printReadAhead(const ir::Kernel& k, const ReadAheadPlan& plan);

}  // namespace tj::gpu
