// The IR text with layouts: each line that defines values gets a trailing comment
// with their layouts; a summary lists the conversions.
#include <map>
#include <sstream>

#include "ir/passes.hpp"
#include "layout/infer_layouts.hpp"

namespace tj::layout {

namespace {

// The printer's numbering: an op's results, then its regions' arguments, then their bodies.
void number(const ir::Block& b, std::vector<ir::ValueId>& byNumber) {
  for (const ir::Op& op : b.ops) {
    byNumber.insert(byNumber.end(), op.results.begin(), op.results.end());
    for (const ir::Block& r : op.regions) {
      byNumber.insert(byNumber.end(), r.args.begin(), r.args.end());
      number(r, byNumber);
    }
  }
}

// The printed numbers a line defines: "%3 = ..." / "%1, %2 = ..." / "^(%4: i64, %5: ...):".
std::vector<int> definedNumbers(const std::string& line) {
  size_t start = line.find_first_not_of(' ');
  if (start == std::string::npos) return {};
  std::string defs;
  if (line.compare(start, 2, "^(") == 0) defs = line.substr(start);
  else if (line[start] == '%' && line.find(" = ") != std::string::npos) defs = line.substr(start, line.find(" = ") - start);
  std::vector<int> numbers;
  for (size_t at = defs.find('%'); at != std::string::npos; at = defs.find('%', at + 1))
    numbers.push_back(std::stoi(defs.substr(at + 1)));
  return numbers;
}

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
  std::vector<ir::ValueId> byNumber;
  number(k.body, byNumber);
  std::map<ir::ValueId, int> numberOf;
  for (size_t i = 0; i < byNumber.size(); ++i) numberOf[byNumber[i]] = static_cast<int>(i);

  std::istringstream in(ir::print(k));
  std::string out = "// layouts for target " + a.target + "\n";
  for (std::string line; std::getline(in, line);) {
    std::string comment;
    for (int n : definedNumbers(line))
      comment += (comment.empty() ? "  // " : "; ") + str(a.of(byNumber.at(static_cast<size_t>(n))));
    out += line + comment + "\n";
  }
  out += "// conversions: " + std::to_string(a.conversions.size()) + "\n";
  for (const Conversion& c : a.conversions) out += conversionLine(c, numberOf) + "\n";
  return out;
}

}  // namespace tj::layout
