// The textual form of a kernel. Values are renumbered in the order the printer
// meets their definitions, so the text does not depend on ValueIds and
// print(parse(print(k))) == print(k).
#include <charconv>
#include <cmath>
#include <unordered_map>

#include "ir/passes.hpp"

namespace tj::ir {

namespace {

template <typename T, typename F>
std::string join(const std::vector<T>& items, F&& text) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + text(items[i]);
  return s;
}

// Shortest round-trip digits, always with a '.' or exponent so the parser
// reads a double back rather than an int.
std::string formatDouble(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::string s(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string quote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return q + "\"";
}

std::string attrText(const AttrValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) return std::to_string(v);
        else if constexpr (std::is_same_v<T, double>) return formatDouble(v);
        else if constexpr (std::is_same_v<T, std::string>) return quote(v);
        else return "[" + join(v, [](int64_t i) { return std::to_string(i); }) + "]";
      },
      value);
}

class Printer {
 public:
  explicit Printer(const Kernel& k) : k_(k) {}

  std::string run() {
    out_ = "kernel @" + k_.name + "(" + join(params(), [](const std::string& p) { return p; });
    out_ += ") grid " + std::to_string(k_.gridRank);
    if (k_.warps) out_ += " warps " + std::to_string(k_.warps);
    out_ += " {\n";
    block(k_.body, 1);
    return out_ + "}\n";
  }

 private:
  // Tensors first, then scalars: `t: tensor<f32, 2>`, `s: f32`.
  std::vector<std::string> params() const {
    std::vector<std::string> out;
    for (const TensorParam& t : k_.tensors)
      out.push_back(t.name + ": tensor<" + std::string(dtypeName(t.dtype)) + ", " + std::to_string(t.rank) + ">");
    for (const ScalarParam& s : k_.scalars) out.push_back(s.name + ": " + std::string(dtypeName(s.dtype)));
    return out;
  }

  static std::string indent(int depth) { return std::string(2 * static_cast<size_t>(depth), ' '); }

  std::string define(ValueId v) {
    numbers_[v] = next_;
    return "%" + std::to_string(next_++);
  }

  // Malformed kernels still print, so the verifier's complaints can be read
  // next to the text; the parser then rejects the odd names.
  std::string use(ValueId v) const {
    auto it = numbers_.find(v);
    return it == numbers_.end() ? "%undef" + std::to_string(v) : "%" + std::to_string(it->second);
  }
  std::string typeText(ValueId v) const {
    return v >= 0 && static_cast<size_t>(v) < k_.types.size() ? k_.type(v).str() : "<invalid>";
  }

  void block(const Block& b, int depth) {
    for (const Op& op : b.ops) this->op(op, depth);
  }

  void op(const Op& op, int depth) {
    out_ += indent(depth);
    if (!op.results.empty()) out_ += join(op.results, [&](ValueId v) { return define(v); }) + " = ";
    out_ += std::string(opName(op.code)) + "(" + join(op.operands, [&](ValueId v) { return use(v); }) + ")";
    if (!op.attrs.empty())
      out_ += " {" + join(op.attrs, [](const Attr& a) { return a.name + " = " + attrText(a.value); }) + "}";
    if (!op.results.empty()) out_ += " : " + join(op.results, [&](ValueId v) { return typeText(v); });
    for (const Block& r : op.regions) region(r, depth);
    out_ += "\n";
  }

  void region(const Block& r, int depth) {
    out_ += " {\n" + indent(depth) + "^(" +
            join(r.args, [&](ValueId v) { return define(v) + ": " + typeText(v); }) + "):\n";
    block(r, depth + 1);
    out_ += indent(depth) + "}";
  }

  const Kernel& k_;
  std::unordered_map<ValueId, int> numbers_;
  int next_ = 0;
  std::string out_;
};

}  // namespace

std::string print(const Kernel& k) { return Printer(k).run(); }

}  // namespace tj::ir
