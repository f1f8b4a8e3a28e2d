// The one exception type tilejit throws for user mistakes and bad input.
#pragma once
#include <source_location>
#include <stdexcept>
#include <string>

namespace tj {

// Where in the user's source an IR op was traced from (file:line), or where in
// parsed text it was written (line:col, no file), or empty.
struct SourceLoc {
  std::string file;
  int line = 0;
  int col = 0;  // set by the text parser, whose input has no file name
  static SourceLoc from(const std::source_location& l) { return {l.file_name(), static_cast<int>(l.line())}; }
  bool known() const { return line > 0; }
  std::string str() const {
    std::string s = file.empty() ? std::to_string(line) : file + ":" + std::to_string(line);
    return col > 0 ? s + ":" + std::to_string(col) : s;
  }
};

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws Error("file:line: op: message"), dropping the location when unknown.
[[noreturn]] void fail(const SourceLoc& loc, std::string_view op, const std::string& message);

// Whether this process asks with `key` for the first time (thread-safe): for what is
// done or warned about once, whatever the number of kernels or launches.
bool firstTime(const std::string& key);

}  // namespace tj
