#include "ir/fault_injection.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <utility>

#include "ir/error.hpp"

namespace tj::testing {

namespace {

struct Armed {
  std::mutex mutex;
  std::map<std::pair<std::string, std::string>, FaultKind> faults;  // by stage and kernel name
  std::atomic<bool> any = false;  // so that a lowering with none armed takes no lock
};

Armed& armed() {
  static Armed a;
  return a;
}

}  // namespace

ScopedFault::ScopedFault(std::string stage, std::string kernelName, FaultKind kind)
    : stage_(std::move(stage)), kernelName_(std::move(kernelName)) {
  Armed& a = armed();
  std::lock_guard lock(a.mutex);
  a.faults[{stage_, kernelName_}] = kind;
  a.any = true;
}

ScopedFault::~ScopedFault() {
  Armed& a = armed();
  std::lock_guard lock(a.mutex);
  a.faults.erase({stage_, kernelName_});
  a.any = !a.faults.empty();
}

void raiseArmedFault(std::string_view stage, const std::string& kernelName) {
  Armed& a = armed();
  if (!a.any) return;
  std::lock_guard lock(a.mutex);
  auto it = a.faults.find({std::string(stage), kernelName});
  if (it == a.faults.end()) return;
  if (it->second == FaultKind::internal) throw InternalError(stage, "a fault armed by a test");
  throw Unsupported(std::string(stage) + ": unsupported: a fault armed by a test");
}

}  // namespace tj::testing
