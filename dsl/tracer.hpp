// Records DSL calls into an ir::Kernel. Internal to dsl/.
#pragma once
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dsl/program.hpp"

namespace tj {

class Tracer {
 public:
  // A trace of more ops than this is almost surely a C++ loop unrolled at trace time:
  // the samples trace 11 to 123 ops, while an unrolled loop of this many ops takes LLVM
  // over a second to compile at O3, and the time grows superlinearly with the ops.
  static constexpr size_t kLargeTrace = 2000;

  Tracer(std::string kernelName, int gridRank);
  // Warns, once per source line, when the finished trace has more than kLargeTrace ops.
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

  // The kernel parameter for a tensor the body reads or writes: a bound parameter,
  // else one parameter per distinct view (run()'s tensors, a Kernel body's captures).
  int tensorParam(const Tensor& t, const SourceLoc& loc, std::string_view op);

  // Kernel handles declare their parameters before the body runs. The next tensor
  // parameter is `t`, even when another argument is the same view; returns the copy
  // the body receives, which tensorParam maps back to this parameter.
  Tensor bindTensorParam(const Tensor& t);
  // A new scalar parameter: the value of its scalar_param op.
  ir::ValueId bindScalarParam(DType dtype);

  Tile tile(ir::ValueId v) const { return Tile(v, id_); }
  Index index(ir::ValueId v) const { return Index(Index::Raw{}, v, id_); }

  // Regions (fold bodies, if sides, scan combines): ops go into `block` between open and close.
  // exit_if is refused in a region opened with exitsAllowed false (a while's cond, a combine).
  void openBlock(ir::Block& block, bool exitsAllowed = true);
  ir::ValueId addBlockArg(const ir::Type& t);
  void closeBlock();
  // `block` open for a scope, closed on every exit, so that an error the user catches leaves
  // the trace consistent.
  class BlockScope {
   public:
    BlockScope(Tracer& t, ir::Block& block, bool exitsAllowed = true) : t_(t) {
      t_.openBlock(block, exitsAllowed);
      depth_ = t_.blocks_.size();
    }
    ~BlockScope() { t_.closeBlocksFrom(depth_); }
    BlockScope(const BlockScope&) = delete;
    BlockScope& operator=(const BlockScope&) = delete;

   private:
    Tracer& t_;
    size_t depth_;
  };

  // p.exit_if: the ops traced after it, to the end of the innermost region, go into the then
  // side of an if on `keepGoing`. closeExits appends the top level's (innermost first) once the
  // body has returned; a region's closer calls closeRegionExits for its own.
  void exitUnless(ir::ValueId keepGoing, const SourceLoc& loc, std::string_view op);
  void closeExits();
  // The innermost region is about to yield `values`. Closes its pending exits, each an if whose
  // then side yields the values (and whether a later exit was taken) and whose else side yields
  // fallback()'s, emitted there, and true. Returns the values as the region yields them and
  // whether it exited; nullopt where it took no exit.
  struct Exited {
    std::vector<ir::ValueId> values;
    ir::ValueId exited;
  };
  std::optional<Exited> closeRegionExits(const std::vector<ir::ValueId>& values,
                                         const std::function<std::vector<ir::ValueId>()>& fallback, const SourceLoc& loc);

  ir::Kernel& kernel() { return kernel_; }
  // The tensor parameters, moved out once tracing is done (finishTrace).
  std::vector<Tensor> takeTensors() { return std::move(tensors_); }

 private:
  ir::ValueId newValue(const ir::Type& t);
  // Fails, naming the user's line, when the op computes on 8-bit floats (see ir::acceptsFloat8).
  void checkFloat8(const ir::Op& op, const std::vector<ir::Type>& results) const;
  // Closes the block that made blocks_ `depth` long, and the blocks opened since that are still
  // open: exit sides an error left (their exits are dropped with them).
  void closeBlocksFrom(size_t depth);
  // Logs the op count; warns past kLargeTrace.
  void reportSize() const;
  int addTensorParam(const Tensor& t);

  ir::Kernel kernel_;
  std::vector<Tensor> tensors_;
  size_t boundTensors_ = 0;          // tensors_[0, boundTensors_) are a Kernel handle's arguments
  struct Exit {
    std::unique_ptr<ir::Op> branch;
    size_t depth;  // blocks_.size() with its then side open
  };
  // Whether the innermost open block is an exit's then side: when a region's body is done,
  // whether the region has exits to close.
  bool inExitSide() const { return !exits_.empty() && exits_.back().depth == blocks_.size(); }
  std::vector<Exit> exits_;          // open exit_if branches, innermost last
  std::vector<ir::Block*> blocks_;   // innermost last
  std::vector<int> blockIds_;        // parallel to blocks_
  std::vector<int> valueBlock_;      // per value: the id of the block defining it
  std::vector<bool> blockOpen_;      // per block id
  std::vector<bool> exitsAllowed_;   // parallel to blocks_
  Tracer* previous_;
  uint64_t id_;
  size_t opCount_ = 0;                               // every op emitted, fold bodies included
  const int uncaught_ = std::uncaught_exceptions();  // a body that throws left no trace to warn about
};

}  // namespace tj
