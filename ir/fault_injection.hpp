// Faults a test arms so that a lowering fails as a bug or a gap in it would, to check what a
// launch on each device makes of each kind of error. Nothing outside the tests arms one.
#pragma once
#include <string>
#include <string_view>

namespace tj::testing {

enum class FaultKind { internal, unsupported };

// While alive, the lowering `stage` ("kernel ir", "lower/cpu") throws InternalError or
// Unsupported for the kernel named `kernelName`.
class ScopedFault {
 public:
  ScopedFault(std::string stage, std::string kernelName, FaultKind kind);
  ~ScopedFault();
  ScopedFault(const ScopedFault&) = delete;
  ScopedFault& operator=(const ScopedFault&) = delete;

 private:
  std::string stage_, kernelName_;
};

// Throws the fault armed for `stage` and the kernel, if any: where each lowering starts.
void raiseArmedFault(std::string_view stage, const std::string& kernelName);

}  // namespace tj::testing
