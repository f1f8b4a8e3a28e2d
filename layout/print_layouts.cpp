// The IR text with layouts: each line that defines values gets a trailing comment
// with their layouts; a summary lists the conversions.
#include <map>

#include "ir/print_annotated.hpp"
#include "layout/infer_layouts.hpp"

namespace tj::layout {

namespace {

std::string conversionLine(const Conversion& c, const std::map<ir::ValueId, int>& numberOf) {
  auto name = [&](ir::ValueId v) { return std::string("%").append(std::to_string(numberOf.at(v))); };
  std::string user = std::string(ir::opName(c.user->code));
  if (!c.user->results.empty()) user = name(c.user->results[0]) + " = " + user;
  std::string line = "//   " + name(c.value) + " -> operand " + std::to_string(c.operand) + " of " + user + ": " +
                     std::string(kindName(c.kind)) + ", " + str(*c.from) + " -> " + str(*c.to);
  return c.via ? line + " via " + str(Layout{*c.via}) : line;
}

}  // namespace

std::string printWithLayouts(const ir::Kernel& k, const LayoutAssignment& a) {
  std::vector<ir::ValueId> byNumber = ir::printedNumbering(k.body);
  std::map<ir::ValueId, int> numberOf;
  for (size_t i = 0; i < byNumber.size(); ++i) numberOf[byNumber[i]] = static_cast<int>(i);
  std::string out = "// layouts for target " + a.target + "\n";
  out += ir::printAnnotated(k, [&](ir::ValueId v) { return str(a.of(v)); });
  out += "// conversions: " + std::to_string(a.conversions.size()) + "\n";
  for (const Conversion& c : a.conversions) out += conversionLine(c, numberOf) + "\n";
  return out;
}

}  // namespace tj::layout
