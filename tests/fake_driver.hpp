// What the stand-in drivers (tests/fake_cuda, tests/fake_hip) keep alike: device memory in
// host memory, opaque handles, and events timed on the host. Not thread-safe: each fake calls
// these under its own lock.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

// The stream each kind of call last used (null: a synchronous call, or the legacy default
// stream), for tests of stream ordering; tjFakeCudaStreams() and tjFakeHipStreams() return it.
struct TjFakeStreams {
  const void *launch, *upload, *download, *zero, *synchronize, *record;
};

// The calls of a launch (uploads, kernel, events, wait, downloads) whose last use was not on
// `stream`, by name: "" when all were.
inline std::string callsOffStream(const TjFakeStreams& s, const void* stream) {
  std::string off;
  for (auto [name, used] : {std::pair{"upload", s.upload}, {"launch", s.launch}, {"record", s.record},
                            {"synchronize", s.synchronize}, {"download", s.download}})
    if (used != stream) off += std::string(off.empty() ? "" : ", ") + name;
  return off;
}

namespace tj::fake {

// An Async call of a fake, given the result of its synchronous form (the fakes' kernels finish
// within their launch, so everything runs at once): notes `stream` in `slot` under `mutex`.
template <class Mutex, class Result>
Result onStream(Mutex& mutex, const void*& slot, const void* stream, Result result) {
  std::lock_guard lock(mutex);
  slot = stream;
  return result;
}

// Allocations aligned to 256 bytes, as the drivers align theirs.
class Memory {
 public:
  // Null for zero bytes or where the host has no memory left.
  void* allocate(size_t bytes) {
    void* p = bytes ? std::aligned_alloc(256, (bytes + 255) / 256 * 256) : nullptr;
    if (p) sizes_[uintptr_t(p)] = bytes;
    return p;
  }
  // False for an address no allocation starts at.
  bool release(void* p) {
    if (!sizes_.erase(uintptr_t(p))) return false;
    std::free(p);
    return true;
  }
  // Whether [p, p + bytes) lies in one allocation.
  bool holds(const void* p, size_t bytes) const {
    auto a = allocationOf(p);
    return a && uintptr_t(p) + bytes <= a->first + a->second;
  }
  // The start and size of the allocation that `p` points into, if any.
  std::optional<std::pair<uintptr_t, size_t>> allocationOf(const void* p) const {
    auto it = sizes_.upper_bound(uintptr_t(p));
    if (it == sizes_.begin()) return std::nullopt;
    --it;
    if (uintptr_t(p) >= it->first + std::max<size_t>(it->second, 1)) return std::nullopt;
    return *it;
  }

 private:
  std::map<uintptr_t, size_t> sizes_;  // by address
};

// Distinct opaque handles of any pointer type.
class Handles {
 public:
  template <class Handle>
  Handle next() {
    next_ += 16;
    return reinterpret_cast<Handle>(next_);
  }

 private:
  uintptr_t next_ = 0x1000;
};

// Events: when each was last recorded on the host's clock.
template <class Event>
class Events {
 public:
  enum class Status { ok, unknown, notRecorded };
  Event create(Handles& handles) {
    Event e = handles.next<Event>();
    recorded_[e] = -1;
    return e;
  }
  bool record(Event e) {
    auto it = recorded_.find(e);
    if (it == recorded_.end()) return false;
    it->second = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
    return true;
  }
  Status elapsed(Event start, Event end, float& ms) const {
    auto from = recorded_.find(start), to = recorded_.find(end);
    if (from == recorded_.end() || to == recorded_.end()) return Status::unknown;
    if (from->second < 0 || to->second < 0) return Status::notRecorded;
    ms = float(to->second - from->second);
    return Status::ok;
  }
  bool destroy(Event e) { return recorded_.erase(e) > 0; }

 private:
  std::map<Event, double> recorded_;  // ms, or -1 before the first record
};

}  // namespace tj::fake
