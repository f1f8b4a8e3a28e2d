#include "ir/error.hpp"

#include <mutex>
#include <set>

namespace tj {

void fail(const SourceLoc& loc, std::string_view op, const std::string& message) {
  std::string text = loc.known() ? loc.str() + ": " : std::string();
  text += std::string(op) + ": " + message;
  throw Error(text);
}

bool firstTime(const std::string& key) {
  static std::mutex mutex;
  static std::set<std::string> seen;
  std::lock_guard lock(mutex);
  return seen.insert(key).second;
}

}  // namespace tj
