// Records DSL calls into an ir::Kernel. Internal to dsl/.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "dsl/program.hpp"

namespace tj {

class Tracer {
 public:
  Tracer(std::string kernelName, int gridRank);
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // The tracer of the run() in progress on this thread; throws when none.
  static Tracer& current(const SourceLoc& loc, std::string_view op);

  // Appends an op to the innermost open block; returns its result, or -1.
  ir::ValueId emit(ir::OpCode code, std::vector<ir::ValueId> operands, std::optional<ir::Type> result,
                   std::vector<ir::Attr> attrs, const SourceLoc& loc);
  // Appends a complete op (e.g. a fold with its region), giving it fresh results.
  std::vector<ir::ValueId> emitOp(ir::Op op, const std::vector<ir::Type>& results);
  const ir::Type& type(ir::ValueId v) const { return kernel_.type(v); }

  // Checks a handle is usable here: from this trace and not from a closed fold body.
  void checkHandle(ir::ValueId v, uint64_t trace, const SourceLoc& loc, std::string_view op) const;
  void checkInScope(ir::ValueId v, const SourceLoc& loc, std::string_view op) const;

  int tensorParam(const Tensor& t);  // the kernel parameter for this tensor view

  Tile tile(ir::ValueId v) const { return Tile(v, id_); }
  Index index(ir::ValueId v) const { return Index(Index::Raw{}, v, id_); }

  // Fold bodies: ops go into `block` between open and close.
  ir::ValueId openBlock(ir::Block& block, const ir::Type& argType);  // adds one block argument
  ir::ValueId addBlockArg(const ir::Type& t);
  void closeBlock();

  ir::Kernel& kernel() { return kernel_; }
  const std::vector<Tensor>& tensors() const { return tensors_; }

 private:
  ir::ValueId newValue(const ir::Type& t);

  ir::Kernel kernel_;
  std::vector<Tensor> tensors_;
  std::vector<ir::Block*> blocks_;   // innermost last
  std::vector<int> blockIds_;        // parallel to blocks_
  std::vector<int> valueBlock_;      // per value: the id of the block defining it
  std::vector<bool> blockOpen_;      // per block id
  Tracer* previous_;
  uint64_t id_;
};

}  // namespace tj
