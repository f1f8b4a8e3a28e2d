#include "ir/error.hpp"

#include <mutex>
#include <set>

namespace tj {

void fail(const SourceLoc& loc, std::string_view op, const std::string& message) {
  std::string text = loc.known() ? loc.str() + ": " : std::string();
  text += std::string(op) + ": " + message;
  throw Error(text);
}

namespace {
std::string internalText(std::string_view stage, const std::string& message, const std::string& irPath) {
  std::string text = "internal error in " + std::string(stage) + ": " + message +
                     ". This is a bug in tilejit, not in your kernel: please report it";
  return text + (irPath.empty() ? "." : " with the kernel's IR, kept in " + irPath + ".");
}
}  // namespace

InternalError::InternalError(std::string_view stage, const std::string& message)
    : InternalError(std::string(stage), message, "") {}

InternalError::InternalError(std::string stage, std::string message, std::string irPath)
    : Error(internalText(stage, message, irPath)),
      stage_(std::move(stage)),
      message_(std::move(message)),
      irPath_(std::move(irPath)) {}

InternalError InternalError::withIrAt(const std::string& path) const {
  return irPath_.empty() ? InternalError(stage_, message_, path) : *this;
}

bool firstTime(const std::string& key) {
  static std::mutex mutex;
  static std::set<std::string> seen;
  std::lock_guard lock(mutex);
  return seen.insert(key).second;
}

}  // namespace tj
