#include "ir/divisibility.hpp"

#include <algorithm>
#include <bit>
#include <variant>

namespace tj::ir {

namespace {

int64_t ofConstant(const Op& op) {
  Number v = op.get(attr::value);
  if (!std::holds_alternative<int64_t>(v)) return 1;
  uint64_t x = uint64_t(std::get<int64_t>(v));
  return x == 0 ? kMaxDivisor : std::min(kMaxDivisor, int64_t{1} << std::countr_zero(x));
}

int64_t capped(int64_t a, int64_t b) { return a >= kMaxDivisor / b ? kMaxDivisor : a * b; }

}  // namespace

std::vector<int64_t> knownDivisors(const Kernel& k) {
  std::vector<int64_t> d(k.types.size(), 1);
  auto of = [&](ValueId v) { return d.at(size_t(v)); };
  forEachOp(k.body, [&](const Op& op) {
    if (op.results.size() != 1 || k.type(op.results[0]).rank() != 0 || isFloat(k.type(op.results[0]).dtype)) return;
    int64_t& out = d[size_t(op.results[0])];
    switch (op.code) {
      case OpCode::constant: out = ofConstant(op); break;
      case OpCode::mul: out = capped(of(op.operands[0]), of(op.operands[1])); break;
      case OpCode::add: case OpCode::sub: case OpCode::max: case OpCode::min: case OpCode::select:
        out = std::min(of(op.operands[op.operands.size() - 2]), of(op.operands.back()));
        break;
      default: break;  // program ids, sizes, scalars, loop indices (steps of 1), ...
    }
  });
  return d;
}

}  // namespace tj::ir
