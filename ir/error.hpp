// What tilejit throws, by whose fault it is: Error is the user's (bad code or input), and the
// base of the two other kinds, so that `catch (const tj::Error&)` sees every one.
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

// This device cannot run this kernel: an op, a size or a feature it lacks, or a driver that
// refuses it. The only error on which a GPU device runs the kernel on the host instead (saying
// why), and the only one a device remembers as its refusal of the kernel.
class Unsupported : public Error {
 public:
  using Error::Error;
};

// A bug in tilejit: a stage found its own invariant broken. Never a fallback and never
// remembered; the launch adds where it kept the kernel's IR for the report.
class InternalError : public Error {
 public:
  // "internal error in <stage>: <message>" and how to report it.
  InternalError(std::string_view stage, const std::string& message);
  // The same error, the path of the kernel's IR added (once).
  InternalError withIrAt(const std::string& path) const;

 private:
  InternalError(std::string stage, std::string message, std::string irPath);
  std::string stage_, message_, irPath_;
};

// Throws Error("file:line: op: message"), dropping the location when unknown.
[[noreturn]] void fail(const SourceLoc& loc, std::string_view op, const std::string& message);

// Whether this process asks with `key` for the first time (thread-safe): for what is
// done or warned about once, whatever the number of kernels or launches.
bool firstTime(const std::string& key);

}  // namespace tj
