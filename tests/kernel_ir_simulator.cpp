#include "tests/kernel_ir_simulator.hpp"

#include <cmath>
#include <cstring>
#include <algorithm>
#include <bit>
#include <deque>
#include <map>
#include <ranges>
#include <set>
#include <functional>
#include <limits>
#include <list>
#include <mutex>
#include <condition_variable>
#include <thread>
#include <utility>

#include "devices/print_buffers.hpp"
#include "ir/error.hpp"
#include "layout/layout.hpp"

namespace tj::gpu {

namespace {

double readElement(const void* data, DType t, int64_t i) {
  auto at = [&](auto type) {
    decltype(type) v;
    std::memcpy(&v, static_cast<const char*>(data) + i * int64_t(sizeof v), sizeof v);
    return v;
  };
  switch (t) {
    case DType::f32: return at(float{});
    case DType::f64: return at(double{});
    case DType::f16: return halfToFloat(at(uint16_t{}));
    case DType::bf16: return bf16ToFloat(at(uint16_t{}));
    case DType::f8e4m3: case DType::f8e5m2: return f8ToFloat(t, at(uint8_t{}));
    default: return intToDouble(t, loadInt(static_cast<const char*>(data) + i * dtypeBytes(t), t));
  }
}

void writeElement(void* data, DType t, int64_t i, double v) {
  auto put = [&](auto x) { std::memcpy(static_cast<char*>(data) + i * int64_t(sizeof x), &x, sizeof x); };
  switch (t) {
    case DType::f32: return put(float(v));
    case DType::f64: return put(v);
    case DType::f16: return put(floatToHalf(float(v)));
    case DType::bf16: return put(floatToBF16(float(v)));
    case DType::f8e4m3: case DType::f8e5m2: return put(floatToF8(t, float(v)));
    default: storeInt(static_cast<char*>(data) + i * dtypeBytes(t), t, wrapNumberToInt(t, v));
  }
}

double roundTo(DType t, double v) {
  if (isFloat(t)) return roundToFloat(t, v);
  if (std::isnan(v)) return 0;
  if (t == DType::boolean) return v != 0;
  return intToDouble(t, wrapNumberToInt(t, v));
}

// max and min as the interpreter defines them: NaN if either is, +0 above -0.
double maxOf(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
double minOf(double a, double b) { return -maxOf(-a, -b); }

double unaryOp(const std::string& fn, double x, DType t) {
  if (fn == "neg") return -x;
  if (fn == "abs") return std::fabs(x);
  if (fn == "exp") return std::exp(x);
  if (fn == "exp2") return std::exp2(x);
  if (fn == "log") return std::log(x);
  if (fn == "log2") return std::log2(x);
  if (fn == "sqrt") return std::sqrt(x);
  if (fn == "rsqrt") return 1.0 / std::sqrt(x);
  if (fn == "sin") return std::sin(x);
  if (fn == "cos") return std::cos(x);
  if (fn == "tanh") return std::tanh(x);
  if (fn == "sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (fn == "erf") return std::erf(x);
  if (fn == "relu") return maxOf(x, 0.0);
  if (fn == "floor") return std::floor(x);
  if (fn == "ceil") return std::ceil(x);
  if (fn == "not") return t == DType::boolean ? x == 0 : double(~int64_t(x));
  throw Error("simulate: unknown unary " + fn);
}

// Integers wrap to their dtype t (the simulator holds every register as a double).
double binaryOp(const std::string& fn, double a, double b, DType t) {
  bool isInt = !isFloat(t);
  auto ints = [&](auto f) { return double(wrapToInt(t, f(int64_t(a), int64_t(b)))); };
  if (fn == "add") return a + b;
  if (fn == "sub") return a - b;
  if (fn == "mul") return a * b;
  if (fn == "div") return isInt ? ints([](int64_t x, int64_t y) { return y ? x / y : 0; }) : a / b;
  if (fn == "rem") return isInt ? ints([](int64_t x, int64_t y) { return y ? x % y : 0; }) : std::fmod(a, b);
  if (fn == "max") return maxOf(a, b);
  if (fn == "min") return minOf(a, b);
  if (fn == "and") return ints([](int64_t x, int64_t y) { return x & y; });
  if (fn == "or") return ints([](int64_t x, int64_t y) { return x | y; });
  if (fn == "xor") return ints([](int64_t x, int64_t y) { return x ^ y; });
  if (fn == "shr") return ints([&](int64_t x, int64_t y) { return shiftRight(t, x, y); });
  if (fn == "shl") return ints([&](int64_t x, int64_t y) { return shiftLeft(t, x, y); });
  if (fn == "shru") return ints([&](int64_t x, int64_t y) { return shiftRightLogical(t, x, y); });
  throw Error("simulate: unknown binary " + fn);
}

bool compare(const std::string& pred, double a, double b) {
  if (pred == "lt") return a < b;
  if (pred == "le") return a <= b;
  if (pred == "gt") return a > b;
  if (pred == "ge") return a >= b;
  if (pred == "eq") return a == b;
  if (pred == "ne") return a != b;
  if (pred == "ult") return a >= 0 && a < b;  // b is a size, never negative
  throw Error("simulate: unknown predicate " + pred);
}

// Runs a workgroup's threads in lockstep, one stream of them; a branch whose sides both have
// threads splits its stream in two (warp specialization's roles) until both sides end. Streams
// run one at a time, each on an OS thread of its own that holds the turn (a mutex and whose
// turn it is), and hand the turn on where they must wait for another: a transaction barrier's
// phase not complete, a named barrier not met, a branch's other side not done. When every
// stream waits and none ran an instruction since, the kernel would hang: the simulator reports it.
// The registers a block defines (results and region arguments, nested regions included) and reads.
void definedAndRead(const KBlock& b, std::set<Reg>& defined, std::set<Reg>& read) {
  defined.insert(b.args.begin(), b.args.end());
  for (const KInst& i : b.insts) {
    defined.insert(i.results.begin(), i.results.end());
    read.insert(i.operands.begin(), i.operands.end());
    for (const KBlock& r : i.regions) definedAndRead(r, defined, read);
  }
}

// The two sides of a branch run apart: neither may read what the other defines (a value that
// does not dominate its use, which the simulator would read from lanes nothing wrote).
void checkSidesApart(const KInst& branch) {
  std::set<Reg> defined[2], read[2];
  for (size_t side = 0; side < 2; ++side) definedAndRead(branch.regions.at(side), defined[side], read[side]);
  for (size_t side = 0; side < 2; ++side)
    for (Reg r : read[side])
      if (defined[1 - side].count(r))
        throw Error("simulate: branch's " + std::string(side ? "else" : "then") + " side reads %" + std::to_string(r) +
                    ", which its other side defines");
}

class Workgroup {
 public:
  // `grid`: the workgroups launched; `programs`: the program grid, a persistent kernel's
  // program_count parameters.
  Workgroup(const KernelFunction& f, const std::vector<SimTensor>& tensors, const std::vector<double>& scalars,
            const std::vector<int64_t>& grid, const std::vector<int64_t>& programs)
      : f_(f), tensors_(tensors), scalars_(scalars), grid_(grid), programs_(programs), T_(size_t(f.workgroupSize)),
        regs_(f.regTypes.size()), shared_(size_t(f.sharedBytes()), 0.0), buckets_(bucketCount(f)),
        read_(shared_.size(), buckets_), written_(shared_.size(), buckets_), unfenced_(shared_.size(), false), tmaPending_(shared_.size(), false),
        warpgroups_(std::max<size_t>(1, T_ / 128)), wgmmaReads_(shared_.size() * warpgroups_, -1),
        committed_(warpgroups_, 0), completed_(warpgroups_, 0),
        acquired_(T_, std::vector<int64_t>(buckets_, -1)), copies_(T_), bulkStores_(T_), bulkReading_(shared_.size(), 0) {}

  void run(const std::vector<int64_t>& id) {
    id_ = id;
    ++epoch_;  // a new workgroup: nothing earlier races with it
    Stream root;
    for (size_t t = 0; t < T_; ++t) root.threads.push_back(t);
    std::unique_lock lock(turnMutex_);
    root.lock = &lock;
    named_.clear();
    streams_ = {&root};
    turn_ = &root;
    running_ = &root;
    try {
      block(f_.body);
    } catch (const Cancelled&) {
      std::rethrow_exception(std::exchange(failure_, nullptr));
    }
    for (const Copies& c : copies_)
      if (!c.open.empty() || !c.groups.empty()) throw Error("simulate: the kernel ends with asynchronous copies not waited for");
    for (const auto& [at, b] : barriers_)
      if (!b.landing.empty()) throw Error("simulate: the kernel ends with TMA copies to barrier " + std::to_string(at) + " not waited for");
    if (std::ranges::any_of(bulkStores_, [](const BulkStores& s) { return !s.open.empty() || !s.groups.empty(); }))
      throw Error("simulate: the kernel ends with TMA stores not waited for");
    for (const auto& [id, n] : named_)
      if (n.arrived != 0) throw Error("simulate: the kernel ends with threads at named barrier " + std::to_string(id));
    barriers_.clear();
  }

 private:
  using Lanes = std::vector<double>;

  // ---- streams ----
  struct Stream {
    std::vector<size_t> threads;            // running this stream's code, in order
    std::unique_lock<std::mutex>* lock = nullptr;  // its OS thread's hold on the turn
    int64_t stalledAt = -1;                 // progress() when it last found it must wait
  };
  struct Cancelled {};  // another stream failed: unwinds this one
  const std::vector<size_t>& threads() const { return running_->threads; }
  int64_t progress() const { return clock_ + finished_; }
  // The stream whose turn comes after s's.
  Stream* after(Stream* s) const {
    auto next = std::next(std::ranges::find(streams_, s));
    return next == streams_.end() ? streams_.front() : *next;
  }
  // Hands the turn to the next stream and waits for it to come back.
  void passTurn() {
    Stream* self = running_;
    turn_ = after(self);
    turnChanged_.notify_all();
    turnChanged_.wait(*self->lock, [&] { return turn_ == self || failure_; });
    if (failure_) throw Cancelled{};
    running_ = self;
  }
  // The running stream cannot go on until another does something (`why`).
  void stall(const std::string& why) {
    Stream& self = *running_;
    if (streams_.size() == 1) throw Error("simulate: " + why);
    if (self.stalledAt == progress())
      throw Error("simulate: " + why + ", and every other warp waits too: the kernel would hang");
    self.stalledAt = progress();
    passTurn();
  }
  // branch: each side on its threads; both sides at once where both have threads.
  void branch(const KInst& i) {
    if (checkedBranches_.insert(&i).second) checkSidesApart(i);
    std::vector<size_t> sides[2];
    size_t S = size_t(f_.subgroupSize);
    for (size_t t : threads()) {
      bool then = reg(i.operands[0])[t] != 0;
      if (t % S != 0 && then != (reg(i.operands[0])[t - 1] != 0))
        throw Error("simulate: branch's condition differs within warp " + std::to_string(t / S));
      sides[then ? 0 : 1].push_back(t);
    }
    if (sides[0].empty() || sides[1].empty()) {
      block(i.regions.at(sides[0].empty() ? 1 : 0));
      return;
    }
    Stream& self = *running_;
    Stream child{sides[0]};
    streams_.insert(std::next(std::ranges::find(streams_, &self)), &child);
    bool done = false;
    std::thread side([&] {
      std::unique_lock lock(turnMutex_);
      child.lock = &lock;
      turnChanged_.wait(lock, [&] { return turn_ == &child || failure_; });
      running_ = &child;
      try {
        if (!failure_) block(i.regions.at(0));
      } catch (const Cancelled&) {
      } catch (...) {
        if (!failure_) failure_ = std::current_exception();
      }
      done = true;
      ++finished_;
      running_ = nullptr;
      leave(&child);
    });
    std::vector<size_t> all = std::exchange(self.threads, sides[1]);
    auto rejoin = [&] {  // the other side's OS thread ends once it has the lock
      self.lock->unlock();
      side.join();
      self.lock->lock();
      running_ = &self;
      self.threads = all;
    };
    try {
      block(i.regions.at(1));
      while (!done) stall("a branch side waits for the other side to end");
    } catch (...) {
      if (!failure_) failure_ = std::current_exception();
      turnChanged_.notify_all();
      rejoin();
      throw Cancelled{};
    }
    rejoin();
  }
  // A finished stream leaves the ring, handing the turn to the one after it.
  void leave(Stream* gone) {
    turn_ = after(gone);
    streams_.remove(gone);
    turnChanged_.notify_all();
  }
  Lanes& reg(Reg r) { return regs_.at(size_t(r)); }
  DType type(Reg r) const { return f_.regTypes.at(size_t(r)); }
  // Computes register r of the running threads; the others' lanes keep what they held.
  void set(Reg r, const std::function<double(size_t)>& f) {
    Lanes& v = reg(r);
    v.resize(T_);
    for (size_t t : threads()) v[t] = roundTo(type(r), f(t));
  }

  std::vector<Reg> block(const KBlock& b) {
    for (const KInst& i : b.insts) {
      if (i.op == KOp::yield) return i.operands;
      inst(i);
    }
    return {};
  }

  const SimTensor& tensorOf(int64_t param) const {
    return tensors_.at(f_.params.at(size_t(param)).number);
  }
  double param(int64_t index) const {
    const KParam& p = f_.params.at(size_t(index));
    if (p.kind == KParam::Kind::scalar) return scalars_.at(p.number);
    if (p.kind == KParam::Kind::program_count) return double(p.axis < programs_.size() ? programs_[p.axis] : 1);
    const SimTensor& t = tensors_.at(p.number);
    return double(p.kind == KParam::Kind::size ? t.shape.at(p.axis) : t.strides.at(p.axis));
  }

  void inst(const KInst& i) {
    ++clock_;
    const std::vector<Reg>& o = i.operands;
    if (!pending_.empty() && i.op != KOp::wgmma && i.op != KOp::wgmma_wait)
      for (Reg x : o)
        if (pending_.count(x) && pending_.at(x) >= completed_[warpgroup()])
          throw Error("simulate: " + std::string(kopName(i.op)) + " reads %" + std::to_string(x) +
                      ", a wgmma result before the wgmma_wait that returns it");
    Reg r = i.results.empty() ? -1 : i.results[0];
    size_t S = size_t(f_.subgroupSize);
    switch (i.op) {
      case KOp::thread_id: return set(r, [](size_t t) { return double(t); });
      case KOp::lane_id: return set(r, [&](size_t t) { return double(t % S); });
      case KOp::warp_id: return set(r, [&](size_t t) { return double(t / S); });
      case KOp::workgroup_id: return set(r, [&](size_t) { return double(id_.at(size_t(intAttr(i, "axis")))); });
      case KOp::workgroup_count: return set(r, [&](size_t) { return double(grid_.at(size_t(intAttr(i, "axis")))); });
      case KOp::param: return set(r, [&](size_t) { return param(intAttr(i, "index")); });
      case KOp::constant: {
        const KAttrValue& v = attr(i, "value");
        double x = std::holds_alternative<double>(v) ? std::get<double>(v) : double(std::get<int64_t>(v));
        return set(r, [&](size_t) { return x; });
      }
      case KOp::unary: return set(r, [&](size_t t) { return unaryOp(strAttr(i, "fn"), reg(o[0])[t], type(r)); });
      case KOp::binary: {
        return set(r, [&](size_t t) { return binaryOp(strAttr(i, "fn"), reg(o[0])[t], reg(o[1])[t], type(o[0])); });
      }
      case KOp::cmp: return set(r, [&](size_t t) { return compare(strAttr(i, "pred"), reg(o[0])[t], reg(o[1])[t]); });
      case KOp::select: return set(r, [&](size_t t) { return reg(o[0])[t] != 0 ? reg(o[1])[t] : reg(o[2])[t]; });
      case KOp::cast:
        return set(r, [&](size_t t) { return isFloat(type(r)) ? reg(o[0])[t] : std::trunc(reg(o[0])[t]); });
      case KOp::load_global: {
        const SimTensor& tensor = tensorOf(intAttr(i, "buffer"));
        const KAttrValue& fill = attr(i, "fill");
        double f = std::holds_alternative<double>(fill) ? std::get<double>(fill) : double(std::get<int64_t>(fill));
        for (size_t e = 0; e < i.results.size(); ++e)
          set(i.results[e], [&](size_t t) {
            return reg(o[1])[t] != 0 ? readElement(tensor.data, tensor.dtype, vectorAt(i, tensor, reg(o[0])[t]) + int64_t(e)) : f;
          });
        return;
      }
      case KOp::store_global: {
        const SimTensor& tensor = tensorOf(intAttr(i, "buffer"));
        for (size_t t : threads())
          for (size_t e = 0; e + 2 < o.size() && reg(o[1])[t] != 0; ++e)
            writeElement(tensor.data, tensor.dtype, vectorAt(i, tensor, reg(o[0])[t]) + int64_t(e), reg(o[2 + e])[t]);
        return;
      }
      case KOp::atomic_global: {  // thread by thread, each seeing the updates before it
        const SimTensor& tensor = tensorOf(intAttr(i, "buffer"));
        const std::string& fn = strAttr(i, "fn");
        return set(r, [&](size_t t) {
          if (reg(o[1])[t] == 0) return 0.0;
          auto at = int64_t(reg(o[0])[t]);
          double old = readElement(tensor.data, tensor.dtype, at), v = reg(o[2])[t];
          double next = fn == "add" ? binaryOp("add", old, v, tensor.dtype) : fn == "max" ? std::max(old, v)
                        : fn == "min" ? std::min(old, v) : fn == "cas" ? (old == reg(o[3])[t] ? v : old) : v;
          writeElement(tensor.data, tensor.dtype, at, next);
          return old;
        });
      }
      case KOp::load_shared:
        for (size_t e = 0; e < i.results.size(); ++e)
          set(i.results[e], [&](size_t t) {
            if (e == 0 && i.results.size() > 1)
              aligned(i, sharedAt(i, reg(o[0])[t]), i.results.size() * size_t(dtypeBytes(type(i.results[0]))));
            return readShared(sharedAt(i, reg(o[0])[t] + double(e)), t);
          });
        return;
      case KOp::store_shared:
        for (size_t t : threads()) {
          if (o.size() > 2) aligned(i, sharedAt(i, reg(o[0])[t]), (o.size() - 1) * size_t(dtypeBytes(type(o[1]))));
          for (size_t e = 1; e < o.size(); ++e) writeShared(sharedAt(i, reg(o[0])[t] + double(e - 1)), t, reg(o[e])[t]);
        }
        return;
      case KOp::atomic_shared:  // thread by thread; atomics do not race with one another
        for (size_t t : threads()) {
          size_t at = sharedAt(i, reg(o[0])[t]);
          if (int64_t other = unordered(read_, at, t); other != -1) race("adds to", at, t, other);
          checkNotBulkRead(at);
          access(written_, at, t);
          shared_[at] += reg(o[1])[t];
        }
        return;
      case KOp::ldmatrix: return ldmatrix(i);
      case KOp::async_copy: return asyncCopy(i);
      case KOp::async_commit:
        for (size_t t : threads()) copies_[t].groups.push_back(std::move(copies_[t].open)), copies_[t].open.clear();
        return;
      case KOp::async_wait: return asyncWait(size_t(intAttr(i, "pending")));
      case KOp::barrier:
        if (hasAttr(i, "id")) return namedBarrier(i);
        if (streams_.size() > 1)
          throw Error("simulate: a barrier of every thread while a branch runs warps apart: it would wait forever");
        ++epoch_;  // lockstep: every thread finished the previous instruction
        return;
      case KOp::branch: return branch(i);
      case KOp::set_max_registers: return setMaxRegisters(i);
      case KOp::shuffle_xor:
        return set(r, [&](size_t t) { return reg(o[0])[t / S * S + ((t % S) ^ size_t(intAttr(i, "mask")))]; });
      case KOp::shuffle_idx: return set(r, [&](size_t t) { return reg(o[0])[t / S * S + size_t(reg(o[1])[t])]; });
      case KOp::subgroup_reduce: return subgroupReduce(i);
      case KOp::pack:  // the values' bytes in one little-endian word, as memory holds them
        return set(r, [&](size_t t) {
          uint32_t word = 0;
          for (size_t e = 0; e < o.size(); ++e) writeElement(&word, type(o[e]), int64_t(e), reg(o[e])[t]);
          return double(word);
        });
      case KOp::fma:  // one rounding in the registers' dtype
        return set(r, [&](size_t t) {
          double a = reg(o[0])[t], b = reg(o[1])[t], c = reg(o[2])[t];
          return type(r) == DType::f32 ? double(std::fma(float(a), float(b), float(c))) : std::fma(a, b, c);
        });
      case KOp::byte_perm:
        return set(r, [&](size_t t) {
          uint64_t both = uint64_t(reg(o[0])[t]) | uint64_t(reg(o[1])[t]) << 32, out = 0;
          auto selector = uint64_t(reg(o[2])[t]);
          for (int j = 0; j < 4; ++j) out |= (both >> (8 * (selector >> 4 * j & 7)) & 0xff) << 8 * j;
          return double(out);
        });
      case KOp::unpack:
        for (size_t e = 0; e < i.results.size(); ++e)
          set(i.results[e], [&](size_t t) {
            auto word = uint32_t(reg(o[0])[t]);
            return readElement(&word, type(i.results[e]), int64_t(e));
          });
        return;
      case KOp::mma: return mma(i);
      case KOp::wgmma: return wgmma(i);
      case KOp::wgmma_fence: return;
      case KOp::wgmma_commit:
        for (size_t g : runningGroups(128)) ++committed_[g];
        return;
      case KOp::wgmma_wait: return wgmmaWait(i);
      case KOp::fence_async_shared: std::fill(unfenced_.begin(), unfenced_.end(), false); return;
      case KOp::mbarrier_init:
        for (size_t t : threads())
          if (reg(o[1])[t] != 0) {
            int64_t count = intAttr(i, "count");
            barriers_[barrierAt(i, t)] = {count, count, 0, 0, {}};
          }
        return;
      case KOp::mbarrier_expect:
      case KOp::mbarrier_arrive:
        for (size_t t : threads())
          if (reg(o[1])[t] != 0) {
            Mbarrier& b = barrier(i, t);
            arrive(b, t);
            if (i.op == KOp::mbarrier_expect) b.bytes += intAttr(i, "bytes");
            completeIfDone(b);
          }
        return;
      case KOp::mbarrier_wait: return mbarrierWait(i);
      case KOp::mbarrier_inval:
        for (size_t t : threads())
          if (reg(o[1])[t] != 0) {
            const Mbarrier& b = barrier(i, t);
            if (!b.landing.empty() || b.bytes != 0) throw Error("simulate: a transaction barrier ended with bytes to come");
            barriers_.erase(barrierAt(i, t));
          }
        return;
      case KOp::tma_load: return tmaLoad(i);
      case KOp::tma_store: return tmaStore(i);
      case KOp::tma_store_wait: return tmaStoreWait(i);
      case KOp::for_loop: return loop(i);
      case KOp::while_loop: return whileLoop(i);
      default: throw Error("simulate: cannot run " + std::string(kopName(i.op)));
    }
  }

  // The first element of a global access, which must be aligned to its vec elements' bytes
  // (as their allowsVectorAccess and the block offsets' divisibility promise).
  int64_t vectorAt(const KInst& i, const SimTensor& tensor, double index) const {
    int64_t at = int64_t(index), vec = intAttr(i, "vec");
    if (vec > 1) aligned(i, reinterpret_cast<uintptr_t>(tensor.data) + uintptr_t(at * dtypeBytes(tensor.dtype)), size_t(vec * dtypeBytes(tensor.dtype)));
    return at;
  }
  // Throws unless an access of `bytes` starts at a multiple of them (host or workgroup-memory address).
  static void aligned(const KInst& i, uintptr_t address, size_t bytes) {
    if (address % bytes != 0)
      throw Error("simulate: " + std::string(kopName(i.op)) + " of " + std::to_string(bytes) + " bytes at address " +
                  std::to_string(address) + ", not aligned to them");
  }
  size_t sharedAt(const KInst& i, double index) const {
    const SharedAlloc& a = f_.shared.at(size_t(intAttr(i, "alloc")));
    size_t at = size_t(a.offset + int64_t(index) * dtypeBytes(a.dtype));
    if (index < 0 || at >= shared_.size())
      throw Error("simulate: " + std::string(kopName(i.op)) + " of element " + std::to_string(int64_t(index)) +
                  " past the workgroup memory's " + std::to_string(shared_.size()) + " bytes");
    return at;
  }

  // Workgroup memory with race detection: between two barriers, no thread may read a slot
  // another thread wrote or write a slot another thread read (a real GPU orders neither),
  // unless a transaction barrier it waited on ordered that access before (acquired_).
  // Per byte address and bucket of warps, the last access since the last workgroup barrier:
  // when (the clock; -1: none) and by which thread (-2: several).
  class AccessLog {
   public:
    AccessLog(size_t bytes, size_t buckets)
        : buckets_(buckets), epochs_(bytes, -1), stamps_(bytes * buckets, -1), threads_(bytes * buckets, -1) {}
    void record(size_t at, size_t bucket, int64_t thread, int64_t epoch, int64_t clock) {
      if (epochs_[at] != epoch) {
        epochs_[at] = epoch;
        std::fill_n(stamps_.begin() + std::ptrdiff_t(at * buckets_), buckets_, -1);
      }
      size_t i = at * buckets_ + bucket;
      threads_[i] = stamps_[i] >= 0 && threads_[i] != thread ? -2 : int32_t(thread);
      stamps_[i] = clock;
    }
    // Another thread (-2: several) whose access in this epoch thread t has not acquired (by
    // bucket, up to `acquired`); -1: none.
    int64_t unordered(size_t at, int64_t t, int64_t epoch, const std::vector<int64_t>& acquired) const {
      if (epochs_[at] != epoch) return -1;
      for (size_t b = 0; b < buckets_; ++b) {
        size_t i = at * buckets_ + b;
        if (stamps_[i] >= 0 && threads_[i] != t && stamps_[i] > acquired[b]) return threads_[i];
      }
      return -1;
    }
    void clear(size_t at) { epochs_[at] = -1; }

   private:
    size_t buckets_;
    std::vector<int64_t> epochs_, stamps_;
    std::vector<int32_t> threads_;
  };
  static size_t bucketCount(const KernelFunction& f) {
    return std::min<size_t>(64, std::max<size_t>(1, size_t(f.workgroupSize / f.subgroupSize)));
  }
  // A named barrier: the threads arrived in the current generation.
  struct NamedBarrier {
    int64_t threads = 0, generation = 0;
    std::map<size_t, int64_t> warps;  // arrived: warp -> when
    std::set<size_t> waiting;         // the warps of those that wait (not barrier.arrive's)
    size_t arrived = 0;
  };
  void namedBarrier(const KInst& i) {
    int64_t id = intAttr(i, "id"), count = intAttr(i, "threads");
    NamedBarrier& n = named_[id];
    if (n.arrived == 0) n.threads = count;
    if (n.threads != count)
      throw Error("simulate: named barrier " + std::to_string(id) + " met by " + std::to_string(n.threads) + " and by " +
                  std::to_string(count) + " threads at once");
    bool waits = !hasAttr(i, "arrive");
    for (size_t t : threads()) {
      n.warps[t / size_t(f_.subgroupSize)] = clock_;
      if (waits) n.waiting.insert(t / size_t(f_.subgroupSize));
    }
    n.arrived += threads().size();
    if (n.arrived > size_t(count))
      throw Error("simulate: named barrier " + std::to_string(id) + " of " + std::to_string(count) + " threads reached by " +
                  std::to_string(n.arrived));
    if (n.arrived < size_t(count)) {
      if (!waits) return;
      for (int64_t generation = n.generation; named_[id].generation == generation;)
        stall("named barrier " + std::to_string(id) + " waits for " + std::to_string(count - int64_t(named_[id].arrived)) +
              " of its " + std::to_string(count) + " threads");
      return;
    }
    // Met: every thread that waited sees the accesses before it of all that took part.
    std::map<size_t, int64_t> met = wholeBuckets(n.warps);
    for (size_t w : n.waiting)
      for (size_t l = 0; l < size_t(f_.subgroupSize); ++l) acquire(w * size_t(f_.subgroupSize) + l, met);
    n.warps.clear(), n.waiting.clear(), n.arrived = 0, ++n.generation;
  }
  size_t bucketOf(size_t t) const { return t / size_t(f_.subgroupSize) * buckets_ / std::max<size_t>(1, T_ / size_t(f_.subgroupSize)); }
  void access(AccessLog& log, size_t at, size_t t) const { log.record(at, bucketOf(t), int64_t(t), epoch_, clock_); }
  int64_t unordered(const AccessLog& log, size_t at, size_t t) const {
    return log.unordered(at, int64_t(t), epoch_, acquired_[t]);
  }
  // Thread t's later accesses come after each bucket's accesses up to `until` (bucket -> clock).
  void acquire(size_t t, const std::map<size_t, int64_t>& until) {
    for (auto [b, clock] : until) acquired_[t][b] = std::max(acquired_[t][b], clock);
  }
  // The buckets every warp of which is among `warps` (warp -> clock), each with its earliest clock.
  std::map<size_t, int64_t> wholeBuckets(const std::map<size_t, int64_t>& warps) const {
    std::map<size_t, int64_t> earliest, seen;
    for (auto [w, clock] : warps) {
      size_t b = bucketOf(w * size_t(f_.subgroupSize));
      earliest[b] = seen[b]++ ? std::min(earliest[b], clock) : clock;
    }
    std::map<size_t, int64_t> size;  // warps per bucket
    for (size_t w = 0; w < T_ / size_t(f_.subgroupSize); ++w) ++size[bucketOf(w * size_t(f_.subgroupSize))];
    std::erase_if(earliest, [&](const auto& e) { return seen[e.first] < size[e.first]; });
    return earliest;
  }
  [[noreturn]] void race(const char* what, size_t at, size_t t, int64_t other) const {
    throw Error("simulate: a race in workgroup memory: thread " + std::to_string(t) + " " + what + " byte " +
                std::to_string(at) + " " + (other == -2 ? "several threads" : "thread " + std::to_string(other)) +
                " accessed since the last barrier");
  }
  double readShared(size_t at, size_t t) {
    if (int64_t other = unordered(written_, at, t); other != -1) race("reads", at, t, other);
    if (tmaPending_[at]) throw Error("simulate: byte " + std::to_string(at) + " is read before the TMA copy to it has landed (no wait on its barrier's phase)");
    access(read_, at, t);
    return shared_[at];
  }
  // Stores and copies may not land on bytes a wgmma group still in flight reads.
  void checkNotInFlight(size_t at) const {
    for (size_t g = 0; g < warpgroups_; ++g)
      if (wgmmaReads_[at * warpgroups_ + g] >= completed_[g])
        throw Error("simulate: workgroup memory byte " + std::to_string(at) + " is overwritten while wgmma group " +
                    std::to_string(wgmmaReads_[at * warpgroups_ + g]) + " of warpgroup " + std::to_string(g) +
                    ", which reads it, may be in flight");
  }
  // Nothing may land on bytes a TMA store group not waited for may still read.
  void checkNotBulkRead(size_t at) const {
    if (bulkReading_[at])
      throw Error("simulate: byte " + std::to_string(at) + " is written while a TMA store may still read it (its group not waited for)");
  }
  void writeShared(size_t at, size_t t, double v) {
    if (int64_t other = unordered(read_, at, t); other != -1) race("writes", at, t, other);
    if (tmaPending_[at]) throw Error("simulate: byte " + std::to_string(at) + " is written while a TMA copy to it may land");
    checkNotBulkRead(at);
    checkNotInFlight(at);
    access(written_, at, t);
    unfenced_[at] = true;
    shared_[at] = v;
  }

  // Asynchronous copies: global memory is read when one starts, workgroup memory written when
  // a wait completes its group; a start over bytes another thread read since the last barrier
  // is a race (the copy may land at once), and so is a read of them before a barrier follows
  // the wait (what readShared checks).
  struct Copy {
    size_t at;  // byte address in workgroup memory
    std::vector<double> values;
    size_t elementBytes;
  };
  struct Copies {
    std::vector<Copy> open;                 // started since the last commit
    std::deque<std::vector<Copy>> groups;  // committed, oldest first
  };
  void asyncCopy(const KInst& i) {
    const SimTensor& tensor = tensorOf(intAttr(i, "buffer"));
    const SharedAlloc& alloc = f_.shared.at(size_t(intAttr(i, "alloc")));
    size_t bytes = size_t(intAttr(i, "bytes")), elementBytes = size_t(dtypeBytes(tensor.dtype));
    if (elementBytes != size_t(dtypeBytes(alloc.dtype))) throw Error("simulate: async_copy between dtypes of different widths");
    for (size_t t : threads()) {
      size_t at = sharedAt(i, reg(i.operands[2])[t]);
      aligned(i, at, bytes);
      sharedAt(i, reg(i.operands[2])[t] + double(bytes / elementBytes - 1));  // the last element is inside too
      Copy c{at, {}, elementBytes};
      bool live = reg(i.operands[1])[t] != 0;
      int64_t first = live ? int64_t(reg(i.operands[0])[t]) : 0;
      if (live) aligned(i, reinterpret_cast<uintptr_t>(tensor.data) + uintptr_t(first) * elementBytes, bytes);
      for (size_t e = 0; e < bytes / elementBytes; ++e) {
        if (int64_t other = unordered(read_, at + e * elementBytes, t); other != -1)
          race("starts a copy over", at + e * elementBytes, t, other);
        checkNotInFlight(at + e * elementBytes);
        checkNotBulkRead(at + e * elementBytes);
        c.values.push_back(live ? readElement(tensor.data, tensor.dtype, first + int64_t(e)) : 0.0);
      }
      copies_.at(t).open.push_back(std::move(c));
    }
  }
  void asyncWait(size_t pending) {
    for (size_t t : threads())
      for (auto& groups = copies_.at(t).groups; groups.size() > pending; groups.pop_front())
        for (const Copy& c : groups.front())
          for (size_t e = 0; e < c.values.size(); ++e) writeShared(c.at + e * c.elementBytes, t, c.values[e]);
  }

  // Transaction barriers (PTX's mbarrier with expect_tx) and the TMA copies they count: a copy
  // reads global memory when it starts and lands when a wait completes its barrier's phase,
  // which needs the phase's arrivals and exactly the bytes expected. Until then its bytes may
  // be neither read nor written; once landed, every thread that waited may read them.
  struct Mbarrier {
    int64_t count, arrivals, bytes, phase;  // arrivals and transaction bytes still missing in the phase
    std::vector<Copy> landing;
    std::map<size_t, int64_t> arrived;  // this phase's arrivals: by warp, when
    // The buckets whose every warp arrived in the last completed phase, each with its earliest
    // arrival: what its waiters acquire.
    std::map<size_t, int64_t> released;
  };
  // A phase with all its arrivals and no bytes outstanding completes.
  void completeIfDone(Mbarrier& b) {
    if (b.arrivals != 0 || b.bytes != 0 || !b.landing.empty()) return;
    b.released = wholeBuckets(b.arrived);
    b.arrivals = b.count, b.arrived.clear(), ++b.phase;
  }
  void arrive(Mbarrier& b, size_t t) {
    if (--b.arrivals < 0) throw Error("simulate: more arrivals on a transaction barrier than its count");
    b.arrived[t / size_t(f_.subgroupSize)] = clock_;
  }
  // The byte address of the barrier operand `index` names in allocation attribute `alloc`.
  size_t barrierAt(const KInst& i, size_t t, const char* alloc = "alloc", size_t index = 0) {
    const SharedAlloc& a = f_.shared.at(size_t(intAttr(i, alloc)));
    double element = reg(i.operands[index])[t];
    size_t at = size_t(a.offset + int64_t(element) * 8);
    if (element < 0 || at + 8 > shared_.size()) throw Error("simulate: a transaction barrier past the workgroup memory");
    aligned(i, at, 8);
    return at;
  }
  Mbarrier& barrier(const KInst& i, size_t t, const char* alloc = "alloc", size_t index = 0) {
    auto it = barriers_.find(barrierAt(i, t, alloc, index));
    if (it == barriers_.end()) throw Error("simulate: " + std::string(kopName(i.op)) + " on a transaction barrier never initialized");
    return it->second;
  }
  // Waits until every running thread's phase is complete: one whose arrivals and bytes are all
  // in completes then (its copies land); else the stream waits for the others to bring them.
  void mbarrierWait(const KInst& i) {
    while (true) {
      std::string missing;
      for (size_t t : threads()) {
        if (i.operands.size() > 2 && reg(i.operands[2])[t] == 0) continue;
        Mbarrier& b = barrier(i, t);
        if (b.phase % 2 != int64_t(reg(i.operands[1])[t])) {  // that phase is complete (or phase 0 is current)
          if (b.phase > 0) acquire(t, b.released);
          continue;
        }
        int64_t landing = 0;
        for (const Copy& c : b.landing) landing += int64_t(c.values.size() * c.elementBytes);
        if (b.arrivals != 0 || b.bytes != landing) {
          missing = "mbarrier_wait could deadlock: its phase has " + std::to_string(b.arrivals) + " arrivals missing and expects " +
                    std::to_string(b.bytes) + " bytes, " + std::to_string(landing) + " came";
          continue;
        }
        for (const Copy& c : b.landing)
          for (size_t e = 0; e < c.values.size(); ++e) {
            size_t at = c.at + e * c.elementBytes;
            checkNotBulkRead(at);
            tmaPending_[at] = false;
            shared_[at] = c.values[e];
            written_.clear(at);  // by the async proxy, visible to the waiting threads
          }
        b.landing.clear();
        b.bytes = 0;
        completeIfDone(b);
        acquire(t, b.released);
      }
      if (missing.empty()) return;
      stall(missing);
    }
  }
  // The element offsets (in the tensor, or -1 outside it) and workgroup-memory byte addresses of
  // tensor-map parameter `map`'s box at coords (registers `first`...) from byte `start`, for thread t.
  std::vector<std::pair<int64_t, size_t>> tmaBox(const KInst& i, const KParam& map, const SimTensor& tensor, size_t start,
                                                 size_t first, size_t t) {
    size_t bytes = size_t(dtypeBytes(tensor.dtype)), rank = map.box.size();
    int64_t boxElements = 1;
    for (int64_t n : map.box) boxElements *= n;
    aligned(i, start, std::max<size_t>(128, size_t(8 * map.swizzle)));  // on the swizzle's pattern
    std::vector<std::pair<int64_t, size_t>> box;
    for (int64_t e = 0; e < boxElements; ++e) {
      int64_t rest = e, element = 0;
      bool inside = true;
      for (size_t d = rank; d-- > 0;) {
        int64_t at = int64_t(reg(i.operands[first + d])[t]) + rest % map.box[d];
        rest /= map.box[d];
        inside = inside && at >= 0 && at < tensor.shape[d];
        element += at * tensor.strides[d];
      }
      size_t at = start + size_t(e) * bytes;
      if (map.swizzle) at ^= (at >> 7 & size_t(map.swizzle / 16 - 1)) << 4;
      if (at >= shared_.size()) throw Error("simulate: " + std::string(kopName(i.op)) + " past the workgroup memory");
      box.emplace_back(inside ? element : -1, at);
    }
    return box;
  }
  const KParam& tensorMap(const KInst& i) const {
    const KParam& map = f_.params.at(size_t(intAttr(i, "map")));
    if (map.kind != KParam::Kind::tensor_map) throw Error("simulate: " + std::string(kopName(i.op)) + " of a parameter that is no tensor map");
    if (map.box.size() != tensors_.at(map.number).shape.size() || dtypeBytes(tensors_.at(map.number).dtype) !=
                                                                      dtypeBytes(f_.shared.at(size_t(intAttr(i, "alloc"))).dtype))
      throw Error("simulate: " + std::string(kopName(i.op)) + "'s box does not fit");
    return map;
  }
  // cp.async.bulk.tensor from workgroup memory: global memory is written at once (elements
  // outside the tensor left out); the async proxy reads bytes the threads' stores reached
  // only after a proxy fence and a barrier.
  void tmaStore(const KInst& i) {
    const KParam& map = tensorMap(i);
    const SimTensor& tensor = tensors_.at(map.number);
    for (size_t t : threads()) {
      if (reg(i.operands[0])[t] == 0) continue;
      for (auto [element, at] : tmaBox(i, map, tensor, sharedAt(i, reg(i.operands[1])[t]), 2, t)) {
        if (unfenced_[at]) throw Error("simulate: tma_store reads byte " + std::to_string(at) + ", stored since the last fence_async_shared");
        double v = readShared(at, t);
        if (element >= 0) writeElement(tensor.data, tensor.dtype, element, v);
        for (size_t byte = at; byte < at + size_t(dtypeBytes(tensor.dtype)); ++byte) {  // narrower writes may alias them
          bulkStores_[t].open.push_back(byte);
          ++bulkReading_[byte];
        }
      }
    }
  }
  // PTX's cp.async.bulk.commit_group and wait_group.read: the thread's stores since its last
  // wait become a group (an empty one too), and the groups but the last `pending` are done
  // reading, their reads this thread's from now (a write of another thread races with them
  // until a barrier follows).
  void tmaStoreWait(const KInst& i) {
    size_t pending = size_t(intAttr(i, "pending"));
    for (size_t t : threads()) {
      if (reg(i.operands[0])[t] == 0) continue;
      BulkStores& s = bulkStores_[t];
      s.groups.push_back(std::exchange(s.open, {}));
      for (; s.groups.size() > pending; s.groups.pop_front())
        for (size_t at : s.groups.front()) {
          --bulkReading_[at];
          access(read_, at, t);
        }
    }
  }

  // PTX ISA, cp.async.bulk.tensor (tile mode): the box at coords, row-major with the last
  // dimension fastest, zeros outside the tensor, swizzled on workgroup-memory byte addresses
  // (bits 4.. XOR bits 7.., over the swizzle's span).
  void tmaLoad(const KInst& i) {
    const KParam& map = tensorMap(i);
    const SimTensor& tensor = tensors_.at(map.number);
    size_t bytes = size_t(dtypeBytes(tensor.dtype));
    for (size_t t : threads()) {
      if (reg(i.operands[0])[t] == 0) continue;
      Mbarrier& b = barrier(i, t, "barrier", 2);
      for (auto [element, at] : tmaBox(i, map, tensor, sharedAt(i, reg(i.operands[1])[t]), 3, t)) {
        if (int64_t other = unordered(read_, at, t); other != -1) race("starts a TMA copy over", at, t, other);
        if (unfenced_[at]) throw Error("simulate: tma_load over byte " + std::to_string(at) + ", stored since the last fence_async_shared");
        if (tmaPending_[at]) throw Error("simulate: two TMA copies to byte " + std::to_string(at) + " in flight");
        checkNotInFlight(at);
        checkNotBulkRead(at);
        tmaPending_[at] = true;
        b.landing.push_back({at, {element >= 0 ? readElement(tensor.data, tensor.dtype, element) : 0.0}, bytes});
      }
    }
  }

  // PTX ISA, ldmatrix: lane l supplies the address of row l % 8 of matrix l / 8; element e of
  // result register j of lane l is matrix j's 16-bit (l / 4, 2 (l % 4) + e), transposed
  // (2 (l % 4) + e, l / 4); 8-bit elements are its bytes, low first.
  void ldmatrix(const KInst& i) {
    size_t S = size_t(f_.subgroupSize);
    if (S != 32) throw Error("simulate: ldmatrix on subgroups of " + std::to_string(S));
    const Lanes& rows = reg(i.operands[0]);
    bool trans = intAttr(i, "trans") != 0;
    size_t width = size_t(dtypeBytes(f_.shared.at(size_t(intAttr(i, "alloc"))).dtype)), perWord = 4 / width;
    for (size_t x = 0; x < i.results.size(); ++x)
      set(i.results[x], [&](size_t t) {
        size_t j = x / perWord, e = x % perWord * width / 2, byte = x % perWord * width % 2;
        size_t l = t % S, row = trans ? 2 * (l % 4) + e : l / 4, col = trans ? l / 4 : 2 * (l % 4) + e;
        size_t start = sharedAt(i, rows[t - l + 8 * j + row]);
        aligned(i, start, 16);  // a row
        return readShared(start + 2 * col + byte, t);
      });
  }

  void subgroupReduce(const KInst& i) {
    size_t cluster = size_t(intAttr(i, "cluster"));
    const Lanes& x = reg(i.operands[0]);
    set(i.results[0], [&](size_t t) {
      size_t first = t / cluster * cluster;
      double acc = x[first];
      for (size_t l = first + 1; l < first + cluster; ++l) acc = binaryOp(strAttr(i, "fn"), acc, x[l], type(i.operands[0]));
      return acc;
    });
  }

  // The first running thread's warpgroup.
  size_t warpgroup() const { return std::min(threads().front() / 128, warpgroups_ - 1); }
  // The groups of `size` consecutive threads that run (a warp, a warpgroup), each whole.
  std::vector<size_t> runningGroups(size_t size) const {
    std::vector<size_t> groups;
    for (size_t at = 0; at < threads().size(); at += size) {
      size_t first = threads()[at];
      if (first % size != 0 || at + size > threads().size() || threads()[at + size - 1] != first + size - 1)
        throw Error("simulate: an instruction of whole groups of " + std::to_string(size) + " threads run by part of one");
      groups.push_back(first / size);
    }
    return groups;
  }
  // setmaxnreg: a whole warpgroup asks for a multiple of 8 registers from 24 to 256.
  void setMaxRegisters(const KInst& i) {
    int64_t count = intAttr(i, "count");
    runningGroups(128);
    if (count % 8 != 0 || count < 24 || count > 256)
      throw Error("simulate: set_max_registers of " + std::to_string(count) + " registers, not a multiple of 8 from 24 to 256");
  }

  // Where register j of lane l holds its element of an operand (0: a, 1: b) or of the
  // accumulator (2), as (row, column) of the instruction's m x k, k x n or m x n matrix.
  struct Fragment {
    size_t registers;
    std::function<std::pair<int64_t, int64_t>(int64_t j, int64_t l)> at;
  };
  // PTX ISA, mma.m16n8k16 with 16-bit a and b: groupID l / 4, threadID_in_group l % 4.
  static Fragment ptxM16N8K16(int which) {
    switch (which) {
      case 0: return {8, [](int64_t j, int64_t l) { return std::pair{l / 4 + 8 * (j >> 1 & 1), l % 4 * 2 + (j & 1) + 8 * (j >> 2)}; }};
      case 1: return {4, [](int64_t j, int64_t l) { return std::pair{l % 4 * 2 + (j & 1) + 8 * (j >> 1), l / 4}; }};
      default: return {4, [](int64_t j, int64_t l) { return std::pair{l / 4 + 8 * (j >> 1), l % 4 * 2 + (j & 1)}; }};
    }
  }
  // mma.m16n8k32 with 8-bit a and b: four consecutive k elements per 32-bit register.
  static Fragment ptxM16N8K32(int which) {
    switch (which) {
      case 0: return {16, [](int64_t j, int64_t l) { return std::pair{l / 4 + 8 * (j >> 2 & 1), l % 4 * 4 + (j & 3) + 16 * (j >> 3)}; }};
      case 1: return {8, [](int64_t j, int64_t l) { return std::pair{l % 4 * 4 + (j & 3) + 16 * (j >> 2), l / 4}; }};
      default: return ptxM16N8K16(2);
    }
  }
  // CDNA 3 ISA, v_mfma_f32_32x32x8{f16,bf16} (wave64): a[i][k] in lane i + 32 (k / 4), item
  // k % 4; b[k][j] in lane j + 32 (k / 4), item k % 4; d[i][j] in lane j + 32 ((i / 4) % 2),
  // register i % 4 + 4 (i / 8).
  static Fragment mfma32x32x8(int which) {
    switch (which) {
      case 0: return {4, [](int64_t j, int64_t l) { return std::pair{l % 32, 4 * (l / 32) + j}; }};
      case 1: return {4, [](int64_t j, int64_t l) { return std::pair{4 * (l / 32) + j, l % 32}; }};
      default: return {16, [](int64_t j, int64_t l) { return std::pair{8 * (j / 4) + 4 * (l / 32) + j % 4, l % 32}; }};
    }
  }
  // CDNA 3 ISA, v_mfma_f32_16x16x16{f16,bf16} (wave64): a[i][k] in lane i + 16 (k / 4), item
  // k % 4; b[k][j] in lane j + 16 (k / 4), item k % 4; d[i][j] in lane j + 16 (i / 4),
  // register i % 4.
  static Fragment mfma16x16x16(int which) {
    switch (which) {
      case 0: return {4, [](int64_t j, int64_t l) { return std::pair{l % 16, 4 * (l / 16) + j}; }};
      case 1: return {4, [](int64_t j, int64_t l) { return std::pair{4 * (l / 16) + j, l % 16}; }};
      default: return {4, [](int64_t j, int64_t l) { return std::pair{4 * (l / 16) + j, l % 16}; }};
    }
  }
  // RDNA 3 ISA, v_wmma_f32_16x16x16_{f16,bf16} (wave32): lane l holds row l % 16 of a and
  // column l % 16 of b, all 16 k (lanes 16-31 repeat 0-15); d's register v holds row 2v in
  // lanes 0-15 and row 2v + 1 in lanes 16-31.
  static Fragment wmma16x16x16(int which) {
    switch (which) {
      case 0: return {16, [](int64_t j, int64_t l) { return std::pair{l % 16, j}; }};
      case 1: return {16, [](int64_t j, int64_t l) { return std::pair{j, l % 16}; }};
      default: return {8, [](int64_t j, int64_t l) { return std::pair{2 * j + l / 16, l % 16}; }};
    }
  }
  // The fragments of an instruction, from the vendors' ISA documents, so that an error in
  // layout/'s tables cannot cancel out here. "16x16x16" is MFMA's in wave64, WMMA's in wave32.
  Fragment fragment(const std::string& instr, int which) const {
    if (instr == layout::instrName(layout::MatrixInstr::mma_m16n8k16)) return ptxM16N8K16(which);
    if (instr == layout::instrName(layout::MatrixInstr::mma_m16n8k32)) return ptxM16N8K32(which);
    if (instr == layout::instrName(layout::MatrixInstr::mfma_32x32x8)) return mfma32x32x8(which);
    if (instr == layout::instrName(layout::MatrixInstr::mfma_16x16x16))
      return f_.subgroupSize == 64 ? mfma16x16x16(which) : wmma16x16x16(which);
    throw Error("simulate: no fragments for the matrix instruction " + instr);
  }

  // d = a * b + c per warp.
  void mma(const KInst& i) {
    int64_t m = intAttr(i, "m"), n = intAttr(i, "n"), k = intAttr(i, "k");
    const std::string& instr = strAttr(i, "instr");
    size_t S = size_t(f_.subgroupSize);
    Fragment aAt = fragment(instr, 0), bAt = fragment(instr, 1), cAt = fragment(instr, 2);
    size_t na = aAt.registers, nb = bAt.registers;
    if (na + nb + cAt.registers != i.operands.size() || cAt.registers != i.results.size())
      throw Error("simulate: mma " + instr + " takes " + std::to_string(na) + " + " + std::to_string(nb) + " + " +
                  std::to_string(cAt.registers) + " registers, not " + std::to_string(i.operands.size()));
    std::vector<Lanes> d(i.results.size(), Lanes(T_));
    for (size_t w : runningGroups(S)) {
      std::vector<double> A(size_t(m * k)), B(size_t(k * n)), C(size_t(m * n));
      // Lanes that repeat an element (WMMA's a and b) must agree on it.
      auto gather = [&](const Fragment& at, size_t first, size_t count, std::vector<double>& into, int64_t cols) {
        std::vector<bool> seen(into.size());
        for (size_t j = 0; j < count; ++j)
          for (size_t l = 0; l < S; ++l) {
            auto [row, col] = at.at(int64_t(j), int64_t(l));
            double x = reg(i.operands[first + j])[w * S + l];
            size_t e = size_t(row * cols + col);
            if (seen[e] && !(into[e] == x || (std::isnan(into[e]) && std::isnan(x))))
              throw Error("simulate: mma " + instr + ": lanes disagree on element (" + std::to_string(row) + ", " +
                          std::to_string(col) + ")");
            into[e] = x;
            seen[e] = true;
          }
      };
      gather(aAt, 0, na, A, k);
      gather(bAt, na, nb, B, n);
      gather(cAt, na + nb, i.results.size(), C, n);
      for (size_t j = 0; j < i.results.size(); ++j)
        for (size_t l = 0; l < S; ++l) {
          auto [row, col] = cAt.at(int64_t(j), int64_t(l));
          double sum = C[size_t(row * n + col)];
          for (int64_t x = 0; x < k; ++x) sum += A[size_t(row * k + x)] * B[size_t(x * n + col)];
          d[j][w * S + l] = roundTo(type(i.results[j]), sum);
        }
    }
    for (size_t j = 0; j < i.results.size(); ++j) reg(i.results[j]) = std::move(d[j]);
  }

  // PTX ISA 9.7.15.5.1.2: where element (mn, k) of a wgmma operand lies, from the instruction's
  // view: its start address, swizzle mode and the descriptor's byte offsets, for elements of
  // `bytes` (T = 16 / bytes to 16 bytes). K-major ((8,m),(T,2k)):((swizzle/bytes, SBO),(1,T));
  // MN-major ((T,swizzle/16,m),(8,k)):((1,T,LBO),(swizzle/bytes,SBO)); then
  // Swizzle<log2(swizzle/16),4,3> on the byte address: bits 4.. XOR bits 7...
  static size_t wgmmaAddress(size_t start, int64_t bytes, int64_t swizzle, int64_t leading, int64_t stride, bool mnMajor,
                             int64_t mn, int64_t k) {
    int64_t perRow = swizzle / bytes;  // elements in a swizzled row
    int64_t offset = mnMajor ? mn % perRow * bytes + mn / perRow * leading + k % 8 * swizzle + k / 8 * stride
                             : mn % 8 * swizzle + mn / 8 * stride + k * bytes;
    size_t at = start + size_t(offset), bits = size_t(std::countr_zero(uint64_t(swizzle / 16)));
    return at ^ ((at >> 7 & ((size_t{1} << bits) - 1)) << 4);
  }
  // wgmma m64nNk16/k32: per the PTX ISA's figures of its register fragments, warp w of a
  // warpgroup holds rows 16 w.. of D as m16n8k16's accumulator, one per 8 columns (d[4c..4c+3]
  // for columns 8c..), and a register a as m16n8k16's a (k32: m16n8k32's).
  void wgmma(const KInst& i) {
    int64_t n = intAttr(i, "n"), K = intAttr(i, "k");
    if (int64_t(i.results.size()) != n / 2)
      throw Error("simulate: wgmma m64n" + std::to_string(n) + " of " + std::to_string(i.results.size()) + " registers");
    bool aShared = hasAttr(i, "allocA");
    const Fragment aAt = K == 32 ? ptxM16N8K32(0) : ptxM16N8K16(0), dAt = ptxM16N8K16(2);
    size_t aCount = aShared ? 1 : aAt.registers;
    // Operand `side` (A: 64 x K, rows m; B: n x K, rows n) as the warpgroup from thread g reads it.
    auto matrix = [&](const std::string& side, size_t g, int64_t rows) {
      const SharedAlloc& alloc = f_.shared.at(size_t(intAttr(i, "alloc" + side)));
      int64_t bytes = dtypeBytes(alloc.dtype);
      if (bytes * K != 32 || (bytes == 1 && intAttr(i, "trans" + side) != 0))
        throw Error("simulate: wgmma k" + std::to_string(K) + " of " + std::string(dtypeName(alloc.dtype)) + " operands, or one not K-major");
      const Lanes& starts = reg(i.operands[side == "A" ? 0 : aCount]);
      for (size_t t = g; t < g + 128; ++t)
        if (starts[t] != starts[g]) throw Error("simulate: wgmma's start addresses differ within a warpgroup");
      size_t start = size_t(alloc.offset + int64_t(starts[g]) * bytes);
      int64_t swizzle = intAttr(i, "swizzle" + side), leading = intAttr(i, "leading" + side), stride = intAttr(i, "stride" + side);
      bool mnMajor = intAttr(i, "trans" + side) != 0;
      std::vector<double> m(size_t(rows * K));
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < K; ++k) {
          size_t at = wgmmaAddress(start, bytes, swizzle, leading, stride, mnMajor, r, k);
          if (at >= shared_.size()) throw Error("simulate: wgmma reads byte " + std::to_string(at) + " past the workgroup memory");
          if (unfenced_[at]) throw Error("simulate: wgmma reads byte " + std::to_string(at) + ", stored since the last fence_async_shared");
          m[size_t(r * K + k)] = readShared(at, g);
          wgmmaReads_[at * warpgroups_ + g / 128] = committed_[g / 128];
        }
      return m;
    };
    auto registers = [&](size_t g) {
      std::vector<double> m(size_t(64 * K));
      for (size_t t = g; t < g + 128; ++t)
        for (int64_t j = 0; j < int64_t(aCount); ++j) {
          auto [row, col] = aAt.at(j, int64_t(t % 32));
          m[size_t((16 * int64_t((t - g) / 32) + row) * K + col)] = reg(i.operands[size_t(j)])[t];
        }
      return m;
    };
    std::vector<Lanes> d(i.results.size(), Lanes(T_));
    for (size_t group : runningGroups(128)) {
      size_t g = group * 128;  // its first thread
      std::vector<double> A = aShared ? matrix("A", g, 64) : registers(g), B = matrix("B", g, n);
      for (size_t t = g; t < g + 128; ++t)
        for (size_t j = 0; j < i.results.size(); ++j) {
          auto [r, c] = dAt.at(int64_t(j % 4), int64_t(t % 32));
          int64_t row = 16 * int64_t((t - g) / 32) + r, col = 8 * int64_t(j / 4) + c;
          double sum = reg(i.operands[aCount + 1 + j])[t];
          for (int64_t k = 0; k < K; ++k) sum += A[size_t(row * K + k)] * B[size_t(col * K + k)];
          d[j][t] = roundTo(DType::f32, sum);
        }
    }
    for (size_t j = 0; j < i.results.size(); ++j) {
      reg(i.results[j]) = std::move(d[j]);
      pending_[i.results[j]] = committed_[warpgroup()];
    }
  }
  // A warpgroup's groups up to `committed_ - pending` are complete: their results may be read (those passed
  // through the wait come back as new registers) and the bytes they read rewritten.
  void wgmmaWait(const KInst& i) {
    for (size_t g : runningGroups(128)) completed_[g] = std::max(completed_[g], committed_[g] - intAttr(i, "pending"));
    for (size_t j = 0; j < i.operands.size(); ++j) {
      auto it = pending_.find(i.operands[j]);
      if (it != pending_.end() && it->second >= completed_[warpgroup()])
        throw Error("simulate: wgmma_wait returns %" + std::to_string(i.operands[j]) + " of a group still in flight");
      reg(i.results[j]) = reg(i.operands[j]);
    }
  }

  void loop(const KInst& i) {
    const KBlock& body = i.regions.at(0);
    size_t first = threads().front();  // the bounds are the same in every thread
    int64_t start = int64_t(reg(i.operands[0])[first]), end = int64_t(reg(i.operands[1])[first]);
    std::vector<Lanes> carried;
    std::vector<Reg> from;  // the registers the carried values come from: a wgmma group's pending follows them
    for (size_t c = 2; c < i.operands.size(); ++c) carried.push_back(reg(i.operands[c])), from.push_back(i.operands[c]);
    auto pass = [&](size_t c, Reg to) {
      if (auto it = pending_.find(from[c]); it != pending_.end()) pending_[to] = it->second;
      else pending_.erase(to);
    };
    for (int64_t k = start; k < end; ++k) {
      set(body.args[0], [&](size_t) { return double(k); });
      for (size_t c = 0; c < carried.size(); ++c) reg(body.args[c + 1]) = carried[c], pass(c, body.args[c + 1]);
      std::vector<Reg> yielded = block(body);
      for (size_t c = 0; c < carried.size(); ++c) carried[c] = reg(yielded.at(c)), from[c] = yielded.at(c);
    }
    for (size_t c = 0; c < carried.size(); ++c) reg(i.results[c]) = carried[c], pass(c, i.results[c]);
  }

  // The cond is the same in every thread (the kernel IR's rule): the first running thread's decides.
  void whileLoop(const KInst& i) {
    std::vector<Lanes> carried;
    for (Reg r : i.operands) carried.push_back(reg(r));
    auto run = [&](const KBlock& region) {
      for (size_t c = 0; c < carried.size(); ++c) reg(region.args[c]) = carried[c];
      return block(region);
    };
    while (reg(run(i.regions.at(0)).at(0))[threads().front()] != 0) {
      std::vector<Reg> yielded = run(i.regions.at(1));
      for (size_t c = 0; c < carried.size(); ++c) carried[c] = reg(yielded.at(c));
    }
    for (size_t c = 0; c < carried.size(); ++c) reg(i.results[c]) = carried[c];
  }

  const KernelFunction& f_;
  const std::vector<SimTensor>& tensors_;
  const std::vector<double>& scalars_;
  const std::vector<int64_t>& grid_;
  const std::vector<int64_t>& programs_;
  size_t T_;
  std::vector<Lanes> regs_;
  std::vector<double> shared_;  // by byte address: one slot per element start
  size_t buckets_;  // warps in up to 64 buckets (one each where there are no more)
  AccessLog read_, written_;  // per byte address, the last accesses
  std::vector<bool> unfenced_;          // per byte address: stored since the last fence_async_shared
  std::vector<bool> tmaPending_;        // per byte address: a TMA copy to it has not landed
  std::map<size_t, Mbarrier> barriers_;  // by byte address
  // wgmma results (and the loop values carrying them) -> their group (the running threads'
  // warpgroups count their groups alike: they run the same code, or a copy of their own)
  std::map<Reg, int64_t> pending_;
  size_t warpgroups_;
  std::vector<int64_t> wgmmaReads_;  // per byte address and warpgroup: the last wgmma group that read it (-1: none)
  std::vector<int64_t> committed_, completed_;  // per warpgroup: wgmma groups closed / known complete
  int64_t epoch_ = 0;                   // barriers passed
  int64_t clock_ = 0;                   // instructions run
  // Per thread and bucket of warps, the clock up to which that bucket's accesses are ordered
  // before the thread's own.
  std::vector<std::vector<int64_t>> acquired_;
  std::map<int64_t, NamedBarrier> named_;  // by id
  std::set<const KInst*> checkedBranches_;  // checkSidesApart
  std::mutex turnMutex_;
  std::condition_variable turnChanged_;
  std::list<Stream*> streams_;          // the running streams, in the order they take turns
  Stream* turn_ = nullptr;              // whose turn it is
  Stream* running_ = nullptr;           // the stream this OS thread runs
  std::exception_ptr failure_;          // the first error of a stream, which ends them all
  int64_t finished_ = 0;                // streams ended
  struct BulkStores {
    std::vector<size_t> open;                // bytes read by the stores since the last wait (each element's every byte)
    std::deque<std::vector<size_t>> groups;  // committed, not waited for: the oldest first
  };
  std::vector<BulkStores> bulkStores_;  // per thread
  std::vector<int32_t> bulkReading_;    // per byte of workgroup memory: TMA store groups reading it
  std::vector<Copies> copies_;          // per thread
  std::vector<int64_t> id_;
};

}  // namespace

namespace {

// Each workgroup of `grid` in turn; `programs`: the program grid.
void runWorkgroups(const KernelFunction& f, const std::vector<SimTensor>& tensors, const std::vector<double>& scalars,
                   const std::vector<int64_t>& grid, const std::vector<int64_t>& programs) {
  Workgroup wg(f, tensors, scalars, grid, programs);
  std::vector<int64_t> id(grid.size(), 0);
  int64_t total = 1;
  for (int64_t g : grid) total *= g;
  for (int64_t n = 0; n < total; ++n) {
    int64_t rest = n;
    for (size_t a = 0; a < grid.size(); ++a) id[a] = rest % grid[a], rest /= grid[a];
    wg.run(id);
  }
}

}  // namespace

void simulate(const KernelFunction& f, const std::vector<SimTensor>& tensors, const std::vector<double>& scalars,
              const std::vector<int64_t>& grid) {
  if (!isPersistent(f.params)) return runWorkgroups(f, tensors, scalars, grid, grid);
  int64_t programs = 1;
  for (int64_t g : grid) programs *= g;
  runWorkgroups(f, tensors, scalars, {std::min(programs, kSimulatedMultiprocessors)}, grid);
}

void simulateLaunch(const KernelFunction& f, std::span<const TensorArg> tensors, const std::vector<uint64_t>& addresses,
                    const std::function<uint64_t(size_t p)>& word, const std::vector<int64_t>& grid) {
  std::vector<SimTensor> simulated;
  for (size_t t = 0; t < tensors.size(); ++t)
    simulated.push_back({reinterpret_cast<void*>(uintptr_t(addresses.at(t))), tensors[t].dtype, tensors[t].shape,
                         tensors[t].strides});
  std::vector<int64_t> programGrid = grid;  // a persistent kernel's from its program_count parameters
  for (size_t p = 0; p < f.params.size(); ++p)
    if (const KParam& param = f.params[p]; param.kind == KParam::Kind::program_count) {
      programGrid.resize(std::max(programGrid.size(), size_t(param.axis) + 1), 1);
      programGrid[param.axis] = int64_t(word(p));
    }
  int64_t programs = 1;
  for (int64_t g : programGrid) programs *= g;
  // The print and fault buffers follow the tensors, numbered in parameter order.
  for (size_t p = 0; p < f.params.size(); ++p) {
    const KParam& param = f.params[p];
    if (param.kind != KParam::Kind::buffer || param.number < tensors.size()) continue;
    if (param.number != simulated.size()) throw Error("buffer parameter " + param.name + " out of order");
    auto print = std::ranges::find(f.prints, p, &KPrint::param);
    int64_t elements = print == f.prints.end() ? kFaultWords
                                               : int64_t(printBufferBytes(*print, programs)) / dtypeBytes(param.dtype);
    simulated.push_back({reinterpret_cast<void*>(uintptr_t(word(p))), param.dtype, {elements}, {1}});
  }
  std::vector<double> scalars;
  for (size_t p = 0; p < f.params.size(); ++p) {
    const KParam& param = f.params[p];
    if (param.kind == KParam::Kind::tensor_map || param.kind == KParam::Kind::buffer ||
        param.kind == KParam::Kind::program_count)
      continue;
    uint64_t value = word(p);
    if (param.kind == KParam::Kind::scalar) {
      scalars.resize(std::max(scalars.size(), param.number + 1));
      scalars[param.number] = param.dtype == DType::f64 ? std::bit_cast<double>(value)
                              : isFloat(param.dtype)    ? double(std::bit_cast<float>(uint32_t(value)))
                                                        : double(int64_t(value));
    } else {
      const TensorArg& t = tensors[param.number];
      int64_t expected = param.kind == KParam::Kind::size ? t.shape.at(param.axis) : t.strides.at(param.axis);
      if (int64_t(value) != expected) throw Error("parameter " + param.name + " is not the tensor's");
    }
  }
  runWorkgroups(f, simulated, scalars, grid, programGrid);
}

}  // namespace tj::gpu
