#include "dsl/tracer.hpp"

#include <atomic>
#include <map>
#include <source_location>
#include <string_view>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace tj {

namespace {
thread_local Tracer* gCurrent = nullptr;
std::atomic<uint64_t> gTraceCount{0};

// Whether an op was traced from the user's code. Ops the DSL emits for its own
// purposes can carry a location in dsl/ (this file's folder), which repeats with
// every user call that needs it and is not the user's line.
bool fromUser(const SourceLoc& loc) {
  static const std::string_view file = std::source_location::current().file_name();
  static const std::string_view dslDir = file.substr(0, file.rfind('/') + 1);
  return loc.known() && !loc.file.starts_with(dslDir);
}

struct Repeat {
  std::string line;  // file:line, empty when no op came from the user's code
  size_t times = 0;
};

// The user's line traced most often. A line counts its most frequent op code:
// `acc = acc + X.at({j})` traced n times emits n loads and n adds, not 2n of anything.
Repeat mostRepeatedLine(const ir::Block& body) {
  std::map<std::pair<std::string, ir::OpCode>, size_t> perOp;
  ir::forEachOp(body, [&](const ir::Op& op) {
    if (fromUser(op.loc)) ++perOp[{op.loc.str(), op.code}];
  });
  Repeat most;
  for (const auto& [key, n] : perOp)
    if (n > most.times) most = {key.first, n};
  return most;
}

}  // namespace

Tracer::Tracer(std::string kernelName, int gridRank) : previous_(gCurrent), id_(++gTraceCount) {
  kernel_.name = std::move(kernelName);
  kernel_.gridRank = gridRank;
  blocks_.push_back(&kernel_.body);
  blockIds_.push_back(0);
  blockOpen_.push_back(true);
  exitsAllowed_.push_back(true);
  gCurrent = this;
}

Tracer::~Tracer() {
  gCurrent = previous_;
  if (std::uncaught_exceptions() == uncaught_) reportSize();
}

void Tracer::reportSize() const {
  spdlog::debug("tilejit: traced kernel '{}': {} ops", kernel_.name, opCount_);
  if (opCount_ <= kLargeTrace) return;
  Repeat most = mostRepeatedLine(kernel_.body);
  // Once per line (or kernel, without one): run() traces at every call.
  if (!firstTime("large trace " + (most.line.empty() ? "kernel " + kernel_.name : most.line))) return;
  std::string where = most.line.empty() ? "" : fmt::format("; {} was traced {} times", most.line, most.times);
  spdlog::warn("tilejit: kernel '{}' traced {} ops (more than {}){}. A C++ loop in the kernel lambda runs "
               "while tracing and unrolls into straight-line code that compiles slowly: use p.fold to keep "
               "the loop in the kernel", kernel_.name, opCount_, kLargeTrace, where);
}

Tracer& Tracer::current(const SourceLoc& loc, std::string_view op) {
  if (!gCurrent) fail(loc, op, "tiles and indices exist only inside the lambda given to run()");
  return *gCurrent;
}

ir::ValueId Tracer::newValue(const ir::Type& t) {
  valueBlock_.push_back(blockIds_.back());
  return kernel_.addValue(t);
}

void Tracer::checkFloat8(const ir::Op& op, const std::vector<ir::Type>& results) const {
  if (ir::acceptsFloat8(op.code)) return;
  std::optional<DType> f8 = ir::unacceptedFloat8(op, kernel_.types);
  for (const ir::Type& t : results)
    if (!f8 && isFloat8(t.dtype)) f8 = t.dtype;
  if (f8)
    fail(op.loc, ir::opName(op.code),
         std::string(dtypeName(*f8)) + " tiles hold values for loads, stores, casts and dot only; cast to f16, bf16 "
         "or f32 to compute (tile.cast(f32))");
}

ir::ValueId Tracer::emit(ir::OpCode code, std::vector<ir::ValueId> operands, std::optional<ir::Type> result,
                         std::vector<ir::Attr> attrs, const SourceLoc& loc) {
  ir::Op op{code, std::move(operands), {}, {}, {}, loc};
  for (ir::Attr& a : attrs) op.setAttr(std::move(a.name), std::move(a.value));
  std::vector<ir::ValueId> results = emitOp(std::move(op), result ? std::vector{*result} : std::vector<ir::Type>{});
  return results.empty() ? -1 : results[0];
}

std::vector<ir::ValueId> Tracer::emitOp(ir::Op op, const std::vector<ir::Type>& results) {
  checkFloat8(op, results);
  ++opCount_;
  for (const ir::Type& t : results) op.results.push_back(newValue(t));
  std::vector<ir::ValueId> ids = op.results;
  blocks_.back()->ops.push_back(std::move(op));
  return ids;
}

void Tracer::checkHandle(ir::ValueId v, uint64_t trace, const SourceLoc& loc, std::string_view op) const {
  if (trace != id_) fail(loc, op, "a tile or index from another run() was used here");
  checkInScope(v, loc, op);
}

void Tracer::checkInScope(ir::ValueId v, const SourceLoc& loc, std::string_view op) const {
  if (v < 0 || static_cast<size_t>(v) >= valueBlock_.size())
    fail(loc, op, "a tile or index from another run() was used here");
  if (!blockOpen_[static_cast<size_t>(valueBlock_[static_cast<size_t>(v)])])
    fail(loc, op, "a tile defined inside a fold body, a while or an if side was used outside it; return it from "
                  "the body instead");
}

int Tracer::tensorParam(const Tensor& t, const SourceLoc& loc, std::string_view op) {
  if (t.paramTrace_ == id_) return t.paramIndex_;
  // Another view of an argument's storage would be fixed to the first call's argument.
  for (size_t i = 0; i < boundTensors_; ++i)
    if (tensors_[i].sharesStorage(t))
      fail(loc, op, "this tensor shares storage with tensor parameter " + kernel_.tensors[i].name +
                        " of kernel '" + kernel_.name + "' but is not an argument: a view made in the body, or a "
                        "captured tensor, would stay the first call's; pass it as an argument of its own");
  for (size_t i = boundTensors_; i < tensors_.size(); ++i)
    if (tensors_[i].sameView(t)) return static_cast<int>(i);
  return addTensorParam(t);
}

Tensor Tracer::bindTensorParam(const Tensor& t) {
  Tensor bound = t;
  bound.paramTrace_ = id_;
  bound.paramIndex_ = addTensorParam(t);
  boundTensors_ = tensors_.size();
  return bound;
}

int Tracer::addTensorParam(const Tensor& t) {
  tensors_.push_back(t);
  kernel_.tensors.push_back({"t" + std::to_string(tensors_.size() - 1), t.dtype(), t.rank()});
  return static_cast<int>(tensors_.size() - 1);
}

ir::ValueId Tracer::bindScalarParam(DType dtype) {
  auto index = static_cast<int64_t>(kernel_.scalars.size());
  kernel_.scalars.push_back({"s" + std::to_string(index), dtype});
  return emit(ir::OpCode::scalar_param, {}, ir::Type{dtype, {}}, {ir::makeAttr(ir::attr::index, index)}, SourceLoc{});
}

void Tracer::openBlock(ir::Block& block, bool exitsAllowed) {
  blocks_.push_back(&block);
  blockIds_.push_back(static_cast<int>(blockOpen_.size()));
  blockOpen_.push_back(true);
  exitsAllowed_.push_back(exitsAllowed);
}

ir::ValueId Tracer::addBlockArg(const ir::Type& t) {
  ir::ValueId id = newValue(t);
  blocks_.back()->args.push_back(id);
  return id;
}

void Tracer::exitUnless(ir::ValueId keepGoing, const SourceLoc& loc, std::string_view op) {
  if (!exitsAllowed_.back())
    fail(loc, op, "an early exit is not possible in a while's condition or a scan's combine; exit from the "
                  "while's body instead");
  auto branch = std::make_unique<ir::Op>(ir::Op{ir::OpCode::if_, {keepGoing}, {}, {}, {ir::Block{}, ir::Block{}}, loc});
  openBlock(branch->regions[0]);
  exits_.push_back({std::move(branch), blocks_.size()});
}

void Tracer::closeExits() {
  for (; !exits_.empty(); exits_.pop_back()) {
    ir::Op& branch = *exits_.back().branch;
    emit(ir::OpCode::yield, {}, std::nullopt, {}, branch.loc);
    closeBlock();
    {
      BlockScope otherwise(*this, branch.regions[1]);
      emit(ir::OpCode::yield, {}, std::nullopt, {}, branch.loc);
    }
    emitOp(std::move(branch), {});
  }
}

std::optional<Tracer::Exited> Tracer::closeRegionExits(const std::vector<ir::ValueId>& values,
                                                       const std::function<std::vector<ir::ValueId>()>& fallback,
                                                       const SourceLoc& loc) {
  if (!inExitSide()) return std::nullopt;
  Exited out{values, emit(ir::OpCode::constant, {}, ir::Type{DType::boolean, {}}, {ir::makeAttr(ir::attr::value, int64_t{0})}, loc)};
  for (; inExitSide(); exits_.pop_back()) {
    std::vector<ir::ValueId> yielded = out.values;
    yielded.push_back(out.exited);
    emit(ir::OpCode::yield, yielded, std::nullopt, {}, loc);
    closeBlock();
    ir::Op branch = std::move(*exits_.back().branch);
    {
      BlockScope otherwise(*this, branch.regions[1]);
      std::vector<ir::ValueId> instead = fallback();
      instead.push_back(emit(ir::OpCode::constant, {}, ir::Type{DType::boolean, {}}, {ir::makeAttr(ir::attr::value, int64_t{1})}, loc));
      emit(ir::OpCode::yield, instead, std::nullopt, {}, loc);
    }
    std::vector<ir::Type> types;
    for (ir::ValueId v : yielded) types.push_back(type(v));
    std::vector<ir::ValueId> results = emitOp(std::move(branch), types);
    out.exited = results.back();
    results.pop_back();
    out.values = std::move(results);
  }
  return out;
}

void Tracer::closeBlocksFrom(size_t depth) {
  for (; blocks_.size() > depth; closeBlock())
    if (inExitSide()) exits_.pop_back();
  closeBlock();
}

void Tracer::closeBlock() {
  blockOpen_[static_cast<size_t>(blockIds_.back())] = false;
  blocks_.pop_back();
  blockIds_.pop_back();
  exitsAllowed_.pop_back();
}

}  // namespace tj
