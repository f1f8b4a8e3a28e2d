#include "devices/interp/sanitizer.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>

#include "devices/interp/interpreter.hpp"

namespace tj::interp {

namespace {

constexpr size_t kMaxFindings = 20;
constexpr size_t kPageElements = 1024;

std::string locText(const ir::Op& op) {
  return op.loc.known() ? op.loc.str() : "(" + std::string(ir::opName(op.code)) + " op)";
}

// The coordinates of the element `offset` elements from a tensor's first one.
ir::Shape coordinates(const TensorArg& t, int64_t offset) {
  std::vector<size_t> axes(t.shape.size());
  std::iota(axes.begin(), axes.end(), size_t{0});
  std::ranges::sort(axes, [&](size_t a, size_t b) { return std::abs(t.strides[a]) > std::abs(t.strides[b]); });
  ir::Shape at(t.shape.size(), 0);
  for (size_t d : axes) {
    if (t.strides[d] == 0) continue;
    at[d] = offset / t.strides[d];
    offset -= at[d] * t.strides[d];
  }
  return at;
}

std::string tuple(const ir::Shape& s, char open, char close) {
  std::string text(1, open);
  for (size_t i = 0; i < s.size(); ++i) text += (i ? ", " : "") + std::to_string(s[i]);
  return text + close;
}

// Whether an element of `t` was written before this launch (only Tensor::empty's may not be).
bool wasWritten(const TensorArg& t, int64_t offset) {
  if (!t.written || t.written->all) return true;
  auto at = static_cast<const std::byte*>(t.data) + offset * dtypeBytes(t.dtype) - t.written->base;
  return t.written->bits.at(static_cast<size_t>(at / t.written->elementBytes));
}

void recordWritten(const TensorArg& t, int64_t offset) {
  if (!t.written) return;
  auto at = static_cast<const std::byte*>(t.data) + offset * dtypeBytes(t.dtype) - t.written->base;
  t.written->bits.at(static_cast<size_t>(at / t.written->elementBytes)) = true;
}

// The bytes [first, last) a tensor argument's elements span.
std::pair<std::byte*, std::byte*> span(const TensorArg& t) {
  int64_t low = 0, high = 0;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    if (t.shape[d] == 0) return {nullptr, nullptr};
    int64_t reach = (t.shape[d] - 1) * t.strides[d];
    (reach < 0 ? low : high) += reach;
  }
  auto* data = static_cast<std::byte*>(t.data);
  int bytes = dtypeBytes(t.dtype);
  return {data + low * bytes, data + (high + 1) * bytes};
}

}  // namespace

// One access: its program (row-major id), the atomics that program had run before it, and its op.
struct Sanitizer::Access {
  int32_t program = -1;
  uint32_t epoch = 0;
  const ir::Op* op = nullptr;
};

// The shadow of one tensor element within this launch. Two readers (and two atomic updaters)
// of different programs are enough: a later writer differs from at least one of them.
struct Sanitizer::Element {
  Access writer;
  Access readers[2];
  Access atomics[2];
  bool touched() const { return writer.program >= 0 || atomics[0].program >= 0; }
};

// Bytes some tensor arguments share, shadowed in pages allocated as they are touched.
struct Sanitizer::Region {
  std::byte* first;
  std::byte* last;
  int granularity;  // bytes per shadow element: the smallest element of the tensors in it
  std::vector<std::unique_ptr<Element[]>> pages;
};

// The atomic updates of one element: each program's, as (position in the element's history,
// the program's count of atomics before it), in order.
struct Sanitizer::AtomicHistory {
  uint32_t size = 0;
  std::map<int32_t, std::vector<std::pair<uint32_t, uint32_t>>> byProgram;
};

struct Sanitizer::Finding {
  std::string text;
  int64_t count = 0;  // elements it was seen at (a race: once per later program)
};

Sanitizer::Sanitizer(const ir::Kernel& kernel, const LaunchArgs& args) : kernel_(kernel), args_(args) {
  std::vector<size_t> order;
  for (size_t t = 0; t < args.tensors.size(); ++t)
    if (span(args.tensors[t]).first) order.push_back(t);
  std::ranges::sort(order, [&](size_t a, size_t b) { return span(args.tensors[a]).first < span(args.tensors[b]).first; });
  tensorRegion_.assign(args.tensors.size(), {0, 0});
  for (size_t t : order) {
    auto [first, last] = span(args.tensors[t]);
    int bytes = dtypeBytes(args.tensors[t].dtype);
    if (regions_.empty() || first >= regions_.back().last) regions_.push_back({first, last, bytes, {}});
    Region& r = regions_.back();
    r.last = std::max(r.last, last);
    r.granularity = std::min(r.granularity, bytes);
    tensorRegion_[t] = {regions_.size() - 1, 0};
  }
  for (size_t t : order) {
    Region& r = regions_[tensorRegion_[t].first];
    tensorRegion_[t].second = static_cast<size_t>(static_cast<std::byte*>(args.tensors[t].data) - r.first);
    r.pages.resize((static_cast<size_t>(r.last - r.first) / r.granularity + kPageElements - 1) / kPageElements);
  }
}

Sanitizer::~Sanitizer() = default;

void Sanitizer::beginProgram(const ir::Shape& programId) {
  int64_t flat = 0;
  for (size_t d = 0; d < programId.size(); ++d) flat = flat * args_.grid[d] + programId[d];
  program_ = static_cast<int32_t>(flat);
  epoch_ = 0;
  acquired_.clear();
}

Sanitizer::Element& Sanitizer::element(size_t tensor, int64_t offset) {
  const TensorArg& t = args_.tensors[tensor];
  auto [regionIndex, dataAt] = tensorRegion_.at(tensor);
  Region& r = regions_.at(regionIndex);
  auto index = static_cast<size_t>((static_cast<int64_t>(dataAt) + offset * dtypeBytes(t.dtype)) / r.granularity);
  auto& page = r.pages.at(index / kPageElements);
  if (!page) page = std::make_unique<Element[]>(kPageElements);
  return page[index % kPageElements];
}

// Whether the current program's atomics ordered `earlier` (another program's access) before
// it: it updated an element atomically after that program did so after the access.
bool Sanitizer::ordered(const Access& earlier) const {
  for (auto [e, length] : acquired_) {
    const auto& byProgram = atomics_.at(e).byProgram;
    auto it = byProgram.find(earlier.program);
    if (it == byProgram.end()) continue;
    auto before = std::ranges::lower_bound(it->second, length, {}, &std::pair<uint32_t, uint32_t>::first);
    if (before != it->second.begin() && std::prev(before)->second >= earlier.epoch) return true;
  }
  return false;
}

std::string Sanitizer::program(int32_t flat) const {
  ir::Shape id(args_.grid.size());
  for (size_t d = id.size(); d-- > 0;) {
    id[d] = flat % args_.grid[d];
    flat /= static_cast<int32_t>(args_.grid[d]);
  }
  return "program " + tuple(id, '(', ')');
}

// Tensors are named by their position among the kernel's (the tracer's t0, t1, ...).
std::string Sanitizer::where(size_t tensor, int64_t offset) const {
  return "tensor " + std::to_string(tensor) + " element " + tuple(coordinates(args_.tensors[tensor], offset), '[', ']');
}

void Sanitizer::add(const std::string& key, const std::function<std::string()>& text) {
  auto [it, added] = findingIndex_.try_emplace(key, findings_.size());
  if (added) findings_.push_back({text(), 0});
  ++findings_[it->second].count;
}

void Sanitizer::conflict(const char* what, const Access& earlier, const ir::Op& op, size_t tensor, int64_t offset) {
  if (earlier.program < 0 || earlier.program == program_ || ordered(earlier)) return;
  auto verb = [](const ir::Op& o) {
    return o.code == ir::OpCode::atomic ? "updates atomically" : ir::readsTensor(o.code) ? "reads" : "writes";
  };
  std::string key = std::string(what) + locText(*earlier.op) + "|" + locText(op) + "|" + std::to_string(tensor);
  add(key, [&] {
    return std::string(what) + " on " + where(tensor, offset) + ": " + program(earlier.program) + " " +
           verb(*earlier.op) + " it at " + locText(*earlier.op) + " and " + program(program_) + " " + verb(op) +
           " it at " + locText(op) + ", with no atomic ordering them";
  });
}

// Records `a` in one of two slots, keeping two different programs when there are.
void Sanitizer::remember(Access (&slots)[2], const Access& a) {
  if (slots[0].program < 0 || slots[0].program == a.program) slots[0] = a;
  else slots[1] = a;
}

uint8_t Sanitizer::read(const ir::Op& op, size_t tensor, int64_t offset) {
  Element& e = element(tensor, offset);
  conflict("read-write race", e.writer, op, tensor, offset);
  for (const Access& a : e.atomics) conflict("race between a read and an atomic", a, op, tensor, offset);
  bool unwritten = !e.touched() && !wasWritten(args_.tensors[tensor], offset);
  remember(e.readers, {program_, epoch_, &op});
  return kFromTensor | (unwritten ? kUnwritten : 0);
}

void Sanitizer::write(const ir::Op& op, size_t tensor, int64_t offset, uint8_t value,
                      std::span<const std::byte> before) {
  // A store of the bytes an element already holds is invisible to every other access, in any
  // order: programs that all store one value (a flag, a shared result) do not race.
  const TensorArg& t = args_.tensors[tensor];
  Element& e = element(tensor, offset);
  const std::byte* now = static_cast<const std::byte*>(t.data) + offset * dtypeBytes(t.dtype);
  // Bytes that were never a value (before, or stored now) compare equal to nothing.
  bool values = (e.touched() || wasWritten(t, offset)) && !(value & kUnwritten);
  if (!values || std::memcmp(before.data(), now, before.size()) != 0) {
    conflict("write-write race", e.writer, op, tensor, offset);
    for (const Access& r : e.readers) conflict("read-write race", r, op, tensor, offset);
    for (const Access& a : e.atomics) conflict("race between a write and an atomic", a, op, tensor, offset);
    e.writer = {program_, epoch_, &op};
  }
  recordWritten(args_.tensors[tensor], offset);
  if (!op.internal && (value & (kMismatchedDot | kFromDefaultFill | kUnwritten))) stored(op, tensor, offset, value);
}

// A value whose provenance is a finding reaches memory.
void Sanitizer::stored(const ir::Op& op, size_t tensor, int64_t offset, uint8_t value) {
  auto finding = [&](uint8_t bit, const char* kind, const char* what) {
    if (!(value & bit)) return;
    add(std::string(kind) + "|" + locText(op), [&] {
      return std::string(kind) + ": " + program(program_) + " stores to " + where(tensor, offset) + " at " +
             locText(op) + " " + what;
    });
  };
  finding(kMismatchedDot, "mismatched dot operands",
          "a dot product that multiplied elements from inside a tensor with the other operand's fill along K "
          "(the operands' blocks do not cover the same K range)");
  finding(kFromDefaultFill, "a default fill stored",
          "a value read from outside its tensor where no fill was given; pass the fill you mean");
  finding(kUnwritten, "unwritten memory stored", "a value read from Tensor::empty memory that nothing wrote");
}

uint8_t Sanitizer::atomic(const ir::Op& op, size_t tensor, int64_t offset, uint8_t value) {
  Element& e = element(tensor, offset);
  conflict("race between an atomic and a write", e.writer, op, tensor, offset);
  for (const Access& r : e.readers) conflict("race between an atomic and a read", r, op, tensor, offset);
  bool unwritten = !e.touched() && !wasWritten(args_.tensors[tensor], offset);
  if (unwritten && op.get(ir::attr::fn) != "xchg") usedUnwritten(op);  // the update computes from it
  AtomicHistory& history = atomics_[&e];
  uint32_t& seen = acquired_[&e];
  seen = std::max(seen, history.size);
  history.byProgram[program_].emplace_back(history.size++, epoch_);
  remember(e.atomics, {program_, epoch_, &op});
  recordWritten(args_.tensors[tensor], offset);
  if (value & (kMismatchedDot | kFromDefaultFill | kUnwritten)) stored(op, tensor, offset, value);
  return kFromTensor | (unwritten ? kUnwritten : 0);
}

void Sanitizer::atomicDone() { ++epoch_; }

void Sanitizer::use(const ir::Op& op, const std::vector<uint8_t>& values) {
  if (std::ranges::any_of(values, [](uint8_t v) { return v & kUnwritten; })) usedUnwritten(op);
}

void Sanitizer::usedUnwritten(const ir::Op& op) {
  add("unwritten memory used|" + locText(op), [&] {
    return "unwritten memory used: " + program(program_) + " computes " + std::string(ir::opName(op.code)) + " at " +
           locText(op) + " from values read from Tensor::empty memory that nothing wrote";
  });
}

void Sanitizer::report() const {
  if (findings_.empty()) return;
  std::string text = "sanitizer: kernel '" + kernel_.name + "': " + std::to_string(findings_.size()) +
                     (findings_.size() == 1 ? " finding" : " findings");
  for (size_t i = 0; i < std::min(findings_.size(), kMaxFindings); ++i) {
    const Finding& f = findings_[i];
    text += "\n- " + f.text;
    if (f.count > 1) text += " (" + std::to_string(f.count) + " times)";
  }
  if (findings_.size() > kMaxFindings) text += "\n- and " + std::to_string(findings_.size() - kMaxFindings) + " more";
  throw Error(text);
}

namespace {

class SanitizingInterpreter final : public Device {
 public:
  std::string name() const override { return "interp"; }
  LaunchReport launch(const ir::Kernel& kernel, const LaunchArgs& args) override {
    if (firstTime("sanitizer"))
      spdlog::info("tilejit: sanitizer on: kernels run on the interpreter with shadow state per tensor element");
    checkLaunchArgs(kernel, args, "sanitize");
    Sanitizer sanitizer(kernel, args);
    interpret(kernel, args, &sanitizer);
    sanitizer.report();
    return {.device = name()};
  }
};

}  // namespace

Device& sanitizingInterpreter() {
  static SanitizingInterpreter device;
  return device;
}

bool sanitizeRequested() {
  const char* v = std::getenv("TILEJIT_SANITIZE");
  return v && *v && std::string(v) != "0";
}

}  // namespace tj::interp
