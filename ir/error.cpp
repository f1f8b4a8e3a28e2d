#include "ir/error.hpp"

namespace tj {

void fail(const SourceLoc& loc, std::string_view op, const std::string& message) {
  std::string text = loc.known() ? loc.str() + ": " : std::string();
  text += std::string(op) + ": " + message;
  throw Error(text);
}

}  // namespace tj
