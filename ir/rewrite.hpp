// Shared machinery for the IR passes: a Halide-style mutator that rebuilds a
// kernel op by op, and the canonical byte encoding behind hashes and CSE keys.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.hpp"

namespace tj::ir {

// Rebuilds a kernel into a new one. Values keep their ids, so the output shares
// the input's type table; a pass drops ops by not emitting them, replaces ops by
// emitting others that define the same results, and redirects later uses of a
// value with forward().
class Rewriter {
 public:
  explicit Rewriter(std::string_view passName) : passName_(passName) {}
  virtual ~Rewriter() = default;
  // Rewrites `k` and logs the op count at debug level.
  Kernel run(const Kernel& k);

 protected:
  // Emits the replacement of `op` into the current block; by default the op itself.
  virtual void visit(const Op& op) { emit(remap(op)); }
  // Rewrites a block (a region or the kernel body); passes with scopes wrap it.
  virtual Block visitBlock(const Block& b);

  const Kernel& input() const { return *in_; }
  ValueId lookup(ValueId v) const;
  void forward(ValueId from, ValueId to);  // later uses of `from` read `to`
  Op remap(const Op& op);                  // op with operands looked up and regions rewritten
  void emit(Op op) { current_->ops.push_back(std::move(op)); }

 private:
  std::string_view passName_;
  const Kernel* in_ = nullptr;
  std::vector<ValueId> forwards_;  // indexed by ValueId
  Block* current_ = nullptr;
};

// Number of ops in a block, nested regions included.
size_t countOps(const Block& b);

// Appends fields in a fixed little-endian layout, so equal bytes mean equal
// content on every platform and in every process. Doubles are written by bit
// pattern: -0.0 and 0.0 differ, a NaN equals itself.
class ByteWriter {
 public:
  void u8(uint8_t v) { bytes_.push_back(static_cast<char>(v)); }
  void i64(int64_t v);
  void f64(double v);
  void str(std::string_view s);
  void type(const Type& t);
  void attrs(const std::vector<Attr>& attrs);
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

}  // namespace tj::ir
