#include "ir/print_annotated.hpp"

#include <sstream>

#include "ir/passes.hpp"

namespace tj::ir {

namespace {

void number(const Block& b, std::vector<ValueId>& byNumber) {
  for (const Op& op : b.ops) {
    byNumber.insert(byNumber.end(), op.results.begin(), op.results.end());
    for (const Block& r : op.regions) {
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

}  // namespace

std::vector<ValueId> printedNumbering(const Block& body) {
  std::vector<ValueId> byNumber;
  number(body, byNumber);
  return byNumber;
}

std::string printAnnotated(const Kernel& k, const std::function<std::string(ValueId)>& note) {
  std::vector<ValueId> byNumber = printedNumbering(k.body);
  std::istringstream in(print(k));
  std::string out;
  for (std::string line; std::getline(in, line);) {
    std::string comment;
    for (int n : definedNumbers(line))
      if (std::string text = note(byNumber.at(size_t(n))); !text.empty()) comment += (comment.empty() ? "  // " : "; ") + text;
    out += line + comment + "\n";
  }
  return out;
}

}  // namespace tj::ir
