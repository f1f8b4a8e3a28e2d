// The sanitizer: the reference interpreter run with shadow state for every tensor element,
// reporting the bugs of kernels that are legal but wrong, which no trace-time check sees:
// - races between programs of one launch: two programs storing to one element, or one
//   reading what another writes, without an atomic ordering them (a grid or block mapping
//   mistake); atomics never race with each other;
// - a dot whose operands disagree along K: one operand's element read from inside its
//   tensor, the other's from a fill (A [64,100] x B [90,64] multiplies A's last columns by
//   the fill), when that product reaches memory;
// - reads of memory no one wrote (Tensor::empty's, per element) reaching a store, a dot, a
//   reduction, a scan or sort, an index or a condition;
// - a default fill (a read outside the tensor where the user gave no fill) stored inside one.
// Everything is collected per launch and reported as one Error listing each distinct finding.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <memory>
#include <string>
#include <vector>

#include "devices/device.hpp"

namespace tj::interp {

// Where a tile element's value came from: the bits of interp::Tile::provenance.
enum Provenance : uint8_t {
  kFromTensor = 1,       // read from inside a tensor
  kFromFill = 2,         // the fill of a read outside its tensor or masked off
  kFromDefaultFill = 4,  // such a fill the user did not give
  kUnwritten = 8,        // read from Tensor::empty memory that nothing wrote
  kMismatchedDot = 16,   // a dot summed products of a tensor element and a fill along K
};

class Sanitizer {
 public:
  Sanitizer(const ir::Kernel& kernel, const LaunchArgs& args);
  ~Sanitizer();
  Sanitizer(const Sanitizer&) = delete;
  Sanitizer& operator=(const Sanitizer&) = delete;

  void beginProgram(const ir::Shape& programId);
  // A plain read or write by `op` of element `offset` (in elements from its data) of tensor
  // argument `tensor`. read returns the element's provenance; write takes the value's.
  uint8_t read(const ir::Op& op, size_t tensor, int64_t offset);
  // `before`: the element's bytes before the write; a write that left them as they were races with nothing.
  void write(const ir::Op& op, size_t tensor, int64_t offset, uint8_t value, std::span<const std::byte> before);
  // An atomic update: a read and write that races with plain accesses only, and orders the
  // accesses its program made after it behind those of the programs that updated the element before.
  uint8_t atomic(const ir::Op& op, size_t tensor, int64_t offset, uint8_t value);
  void atomicDone();  // after each atomic op: the program's later accesses follow it
  // `op` consumes `values`, whose unwritten elements are a finding.
  void use(const ir::Op& op, const std::vector<uint8_t>& values);
  // Throws one Error naming every distinct finding (capped), if there is any.
  void report() const;

 private:
  struct Access;
  struct Element;
  struct Region;
  struct Finding;
  static void remember(Access (&slots)[2], const Access& a);
  Element& element(size_t tensor, int64_t offset);
  bool ordered(const Access& earlier) const;
  void conflict(const char* what, const Access& earlier, const ir::Op& op, size_t tensor, int64_t offset);
  void usedUnwritten(const ir::Op& op);
  void stored(const ir::Op& op, size_t tensor, int64_t offset, uint8_t value);
  void add(const std::string& key, const std::function<std::string()>& text);
  std::string where(size_t tensor, int64_t offset) const;
  std::string program(int32_t flat) const;

  const ir::Kernel& kernel_;
  const LaunchArgs& args_;
  std::vector<Region> regions_;
  std::vector<std::pair<size_t, size_t>> tensorRegion_;  // per tensor: region, byte offset of its data in it
  int32_t program_ = -1;
  uint32_t epoch_ = 0;  // atomics the current program has run
  struct AtomicHistory;
  std::map<const Element*, AtomicHistory> atomics_;
  std::map<const Element*, uint32_t> acquired_;  // elements this program updated atomically: history length then
  std::vector<Finding> findings_;
  std::map<std::string, size_t> findingIndex_;
};

// A Device whose launches run on the sanitizing interpreter (TILEJIT_SANITIZE=1, RunOptions::sanitize).
Device& sanitizingInterpreter();
// Whether TILEJIT_SANITIZE asks for it.
bool sanitizeRequested();

}  // namespace tj::interp
