#include "lower/gpu/plan_read_ahead.hpp"

#include <algorithm>
#include <bit>
#include <set>

#include "ir/print_annotated.hpp"

namespace tj::gpu {

namespace {

// The dimensions of `shape` that are not 1, in order.
std::vector<size_t> sizedDims(const ir::Shape& shape) {
  std::vector<size_t> dims;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1) dims.push_back(d);
  return dims;
}

class Planner {
 public:
  Planner(const ir::Kernel& k, const layout::LayoutAssignment& a) : k_(k), a_(a) {
    ir::forEachOp(k.body, [&](const ir::Op& op) { for (ir::ValueId v : op.operands) ++uses_[v]; });
  }

  ReadAheadPlan run() {
    ir::forEachOp(k_.body, [&](const ir::Op& op) {
      if (op.code == ir::OpCode::fold) plan_[&op] = candidates(op.regions.at(0));
    });
    return std::move(plan_);
  }

 private:
  std::vector<ReadAheadCandidate> candidates(const ir::Block& body) {
    std::vector<ReadAheadCandidate> found;
    for (const ir::Op& dot : body.ops) {
      if (dot.code != ir::OpCode::dot || !a_.of(dot.results[0]).as<layout::MatrixAcc>()) continue;
      for (int i = 0; i < 2; ++i)
        if (std::optional<ReadAheadCandidate> c = candidate(body, dot, i)) found.push_back(std::move(*c));
    }
    return found;
  }

  std::optional<ReadAheadCandidate> candidate(const ir::Block& body, const ir::Op& dot, int i) {
    ir::ValueId v = dot.operands[size_t(i)];
    const layout::Conversion* c = a_.conversionAt(dot, i);
    if (!c || c->kind != layout::ConversionKind::shared_memory) return std::nullopt;
    std::vector<ir::ValueId> views = {v};
    CoordMap toLoad = [](const Coord& x) { return x; };
    const ir::Op* load = producerIn(body, v);
    while (load && load->code != ir::OpCode::load && load->code != ir::OpCode::broadcast && usedOnce(views.front())) {
      std::optional<CoordMap> map = viewMap(k_, *load);
      if (!map) break;
      toLoad = [inner = *map, outer = toLoad](const Coord& x) { return inner(outer(x)); };
      views.insert(views.begin(), load->operands[0]);
      load = producerIn(body, load->operands[0]);
    }
    if (!load || load->code != ir::OpCode::load || !usedOnce(views.front()) || !zeroFill(*load)) return std::nullopt;
    std::optional<std::vector<const ir::Op*>> offsetOps = offsetSlice(body, *load);
    if (!offsetOps) return std::nullopt;
    return ReadAheadCandidate{v, load, std::move(views), std::move(*offsetOps), std::move(toLoad), c};
  }

  bool usedOnce(ir::ValueId v) const { return uses_.count(v) && uses_.at(v) == 1; }

  static const ir::Op* producerIn(const ir::Block& body, ir::ValueId v) {
    for (const ir::Op& o : body.ops)
      if (std::ranges::count(o.results, v)) return &o;
    return nullptr;
  }

  // Whether a load's fill is what zero-filling copies write: +0 (or integer 0).
  static bool zeroFill(const ir::Op& load) {
    ir::Number fill = load.get(ir::attr::fill);
    if (std::holds_alternative<int64_t>(fill)) return std::get<int64_t>(fill) == 0;
    return std::bit_cast<uint64_t>(std::get<double>(fill)) == 0;
  }

  // The body's ops a load's offsets are computed by, when they read only k, values from outside
  // the body and each other (scalar ops that neither read nor write memory); nullopt otherwise.
  std::optional<std::vector<const ir::Op*>> offsetSlice(const ir::Block& body, const ir::Op& load) const {
    std::set<const ir::Op*> needed;
    std::function<bool(ir::ValueId)> need = [&](ir::ValueId v) {
      if (v == body.args[0]) return true;
      if (std::ranges::count(body.args, v)) return false;  // a carried value
      const ir::Op* o = producerIn(body, v);
      if (!o) return true;  // from outside the body
      if (needed.count(o)) return true;
      bool scalar = o->regions.empty() && !ir::readsTensor(o->code) && !ir::writesTensor(o->code) &&
                    o->code != ir::OpCode::check && o->code != ir::OpCode::print && k_.type(v).rank() == 0;
      if (!scalar || !std::ranges::all_of(o->operands, need)) return false;
      needed.insert(o);
      return true;
    };
    for (size_t d = 0; d < load.operands.size(); ++d)
      if (!need(load.operands[d])) return std::nullopt;
    std::vector<const ir::Op*> ordered;
    for (const ir::Op& o : body.ops)
      if (needed.count(&o)) ordered.push_back(&o);
    return ordered;
  }

  const ir::Kernel& k_;
  const layout::LayoutAssignment& a_;
  std::map<ir::ValueId, int> uses_;  // how many operands read each value
  ReadAheadPlan plan_;
};

}  // namespace

std::optional<CoordMap> viewMap(const ir::Kernel& k, const ir::Op& op) {
  const ir::Shape &from = k.type(op.operands[0]).shape, &to = k.type(op.results[0]).shape;
  if (op.code == ir::OpCode::broadcast)
    return [from](Coord c) { for (size_t d = 0; d < c.size(); ++d) if (from[d] == 1) c[d] = 0; return c; };
  if (op.code == ir::OpCode::permute) {
    std::vector<int64_t> perm = op.get(ir::attr::perm);
    return [perm](const Coord& c) { Coord s(c.size()); for (size_t i = 0; i < c.size(); ++i) s[size_t(perm[i])] = c[i]; return s; };
  }
  if (op.code != ir::OpCode::reshape || layout::nonUnitDims(from) != layout::nonUnitDims(to)) return std::nullopt;
  std::vector<size_t> fromDims = sizedDims(from), toDims = sizedDims(to);  // also right on padding coordinates
  return [=](const Coord& c) {
    Coord s(from.size(), 0);
    for (size_t i = 0; i < toDims.size(); ++i) s[fromDims[i]] = c[toDims[i]];
    return s;
  };
}

ReadAheadPlan planReadAhead(const ir::Kernel& k, const layout::LayoutAssignment& a) { return Planner(k, a).run(); }

std::string printReadAhead(const ir::Kernel& k, const ReadAheadPlan& plan) {
  std::vector<ir::ValueId> byNumber = ir::printedNumbering(k.body);
  std::map<ir::ValueId, size_t> numberOf;
  for (size_t i = 0; i < byNumber.size(); ++i) numberOf[byNumber[i]] = i;
  std::map<ir::ValueId, std::string> notes;
  for (const auto& [fold, candidates] : plan)
    for (const ReadAheadCandidate& c : candidates) {
      size_t views = c.views.size() - 1;
      notes[c.operand] = views == 0 ? std::string("read-ahead candidate")
                                    : "read-ahead candidate, " + std::to_string(views) + (views == 1 ? " view" : " views") +
                                          " from its load %" + std::to_string(numberOf.at(c.load->results[0]));
    }
  return ir::printAnnotated(k, [&](ir::ValueId v) { return notes.count(v) ? notes.at(v) : std::string(); });
}

}  // namespace tj::gpu
