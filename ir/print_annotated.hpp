// The IR text with a note on each line that defines values, for the stages that give every
// value something (layouts, the CPU lowering's buffer plan): tile-ir prints them so.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "ir/ir.hpp"

namespace tj::ir {

// The values of `body` in the printer's numbering (%0, %1, ...): an op's results, then its
// regions' arguments, then their bodies.
std::vector<ValueId> printedNumbering(const Block& body);

// ir::print(k), each line that defines values followed by "  // " and `note` of each, "; "
// between them (empty notes left out).
std::string printAnnotated(const Kernel& k, const std::function<std::string(ValueId)>& note);

}  // namespace tj::ir
