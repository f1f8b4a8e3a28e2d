// The tile IR: typed SSA values, ops with attributes and regions, kernels.
//
// A Kernel is a tree of plain values. Passes never modify their input; each
// takes a `const Kernel&` and returns a new Kernel (see ir/passes.hpp).
//
// Every value has a Type: a dtype and a shape. Rank 0 is a scalar; the DSL's
// Index is a rank-0 i64 value. Ops on tiles require operands of equal shape
// (the DSL inserts explicit `broadcast` ops), so each op's rule is local.
//
// Op semantics (operands in parentheses, attributes in braces; each op's operand and result
// counts, traits and attribute types are its line of ir/ops.def):
//   program_id {axis}            : i64   this program's block index on a grid axis
//   num_programs {axis}          : i64   grid size on an axis
//   tensor_dim {tensor, axis}    : i64   runtime size of a tensor dimension
//   constant {value}             : T     a splat; value is int64 for int/bool, double for floats
//   iota {axis}                  : tile<..xi32>  element index along `axis`
//   neg abs exp exp2 log log2 sqrt rsqrt sin cos tanh sigmoid erf relu floor ceil not (x)
//   exp exp2 {approx = 1}        a back end may compute them faster, to a relative error of at
//                                 most 2^-20 + |x| 2^-24 where the result is normal (smaller
//                                 results may be 0); without it, within 1 ulp as the others
//   add sub mul div rem max min and or (a, b)   integer div/rem truncate toward zero;
//                                 max/min propagate NaN; and/or on bool or integers
//   cmp {pred} (a, b)            : bool   pred is lt le gt ge eq ne (IEEE: NaN compares false but ne)
//   select (cond, a, b)          : where(cond, a, b)
//   fma (a, b, c)                : a * b + c rounded once (IEEE's fusedMultiplyAdd); f32 and f64
//   fma {approx = 1}             a back end without a fused multiply-add may round a * b first
//   cast (x)                     : the result type's dtype; float->int truncates, NaN->0, saturates
//   broadcast (x)                : result shape; x has the same rank with 1 where it grows
//   reshape (x)                  : result shape, same element count, row-major order
//   permute {perm} (x)           : result dim i is x's dim perm[i]
//   reduce_sum reduce_max reduce_min argmax argmin {axis} (x) : removes `axis`; arg* give i32
//   dot (a, b[, acc])            : [M,K] x [K,N] (+ acc) -> [M,N]; i8 may give i32; f16/bf16 multiply exactly and
//                                 accumulate in f32 (or wider); rounded once to the result dtype
//   load {tensor, fill} (offsets...)  : a tile of the tensor's rank starting at element offsets;
//                                 elements outside the tensor read `fill`
//   store {tensor} (offsets..., value) : writes the tile; elements outside are dropped
//   gather {tensor, fill} (coords...[, mask]) : element i is tensor[coords_0[i], ..., coords_r-1[i]],
//                                 one integer tile per tensor axis, all of the result's shape;
//                                 coordinates outside the tensor and false mask elements read `fill`
//   scatter {tensor} (coords..., value[, mask]) : writes value[i] at the coordinates' element i;
//                                 outside the tensor or masked off: dropped. Of several elements
//                                 with the same coordinates one is written (on the CPU the last
//                                 in row-major order; on GPUs any one of them, whole)
//   atomic {tensor, fn} (coords..., value[, compare][, mask]) : for each element, one atomic
//                                 read-modify-write of the tensor's element at the coordinates
//                                 (as scatter's); the result is its old value (0 where nothing was
//                                 updated). fn: add, max, min, xchg, cas (writes value where the old
//                                 value equals compare; the only fn with a compare operand).
//                                 Acquire-release ordering at device scope; duplicates all apply.
//                                 Float max/min as the elementwise ops (NaN wins; no cas on floats).
//   scan {fn, axis} (x)          : x's type; the inclusive prefix along `axis` of fn (add, mul, max,
//                                 min: as the elementwise ops): element i combines elements 0..i, the
//                                 first element is x's own. Floats may associate in any order.
//   scan {axis} (xs...)          : with a region ^(a..., b...) instead of fn: the inclusive scan of
//                                 the tiles xs together under the combine, which takes the earlier
//                                 and the later element of each (rank 0) and yields the combined
//                                 ones; it must be associative. Elementwise ops only inside
//   sort {axis, descending} (keys[, payload]) : results keys[, payload]: each line along `axis`
//                                 reordered so the keys ascend (descend with descending=1), the
//                                 payload's elements moving with their keys. Stable (equal keys,
//                                 -0 and +0 among them, keep their order); NaN keys sort after every
//                                 number ascending, before every number descending (as torch.sort)
//   histogram {bins} (x)         : tile<bins x i32>: element b counts x's elements equal to b; elements
//                                 outside [0, bins) are not counted
//   slice {axis, start} (x)      : elements [start, start + size) of x along `axis` (size: the result's)
//   concat {axis} (xs...)        : the operands one after another along `axis`
//   check {message} (cond)       : a device assertion: where an element of the bool cond is false,
//                                 the launch fails with an Error naming the message, the op's
//                                 location, a program and an element where it was false
//   fold {stages?} (start, end, inits...) : region ^(k: i64, carried...) runs for k in [start, end);
//                                 yields the new carried values; results are the final ones.
//                                 stages (1 to 4, p.stages): how many iterations' loads a GPU
//                                 with asynchronous copies keeps in flight; absent: the target's.
//                                 split = 1: one of the two parts of a fold split at its masks
//                                 (ir/split_folds_at_masks.cpp), not split again
//                                 specialize = 1 (p.warp_specialize): on a GPU with TMA, a
//                                 producer warpgroup of its own issues the loads read ahead
//   if (cond)                    : regions ^() then and ^() else; runs then where the rank-0 bool
//                                 cond is true, else the other; the one that ran yields the results
//   while (inits...)             : regions ^(carried...) cond, yielding a rank-0 bool, and ^(carried...)
//                                 body, yielding the new carried values: while cond holds of the
//                                 carried values the body runs; results are the final ones
//   yield (values...)            : ends a fold body, a side of an if, a while's cond or body
//   print {label} (x)            : debugging output from each program
//   scalar_param {index}         : T     the kernel's scalar parameter `index` (i64 or a float dtype)
#pragma once
#include <array>
#include <cstdint>
#include <type_traits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/dtype.hpp"
#include "ir/error.hpp"

namespace tj::ir {

using Shape = std::vector<int64_t>;

// What every lowering and device handles. The verifier enforces these limits, so a
// verified kernel lowers for every target.
// Grid axes: the CPU ABI's KernelArgs::grid[3] (lower/cpu/abi.hpp) and GPU dispatches have 3.
constexpr int kMaxGridRank = 3;
// Tensor and tile ranks: the CPU ABI's TensorDesc::shape[4]; the DSL makes tiles of rank 0 to 4.
// A tensor has rank 1 or more: the CPU and GPU lowerings address elements by at least one index.
constexpr int kMaxRank = 4;
// Elements of a tile's padded shape (each dimension rounded up to a power of two), so a
// tile takes at most 8 MiB (f64). GPU layouts lay a tile out over its padding and the
// kernel IR and SPIR-V hold one register per element and thread group: at this count
// they take seconds to emit. It is Triton's limit too.
constexpr int64_t kMaxTileElements = int64_t{1} << 20;
// A fold's stages attribute: iterations of loads in flight (Triton's num_stages goes to 4 too).
constexpr int64_t kMaxStages = 4;
// A kernel's warps (p.warps, Triton's num_warps): a power of two up to this many per program.
constexpr int64_t kMaxWarps = 32;
constexpr bool isWarpCount(int64_t w) { return w >= 1 && w <= kMaxWarps && (w & (w - 1)) == 0; }

struct Type {
  DType dtype = DType::f32;
  Shape shape;  // empty: a scalar
  bool isScalar() const { return shape.empty(); }
  int rank() const { return static_cast<int>(shape.size()); }
  int64_t numel() const;  // throws Error when the count does not fit in int64
  std::string str() const;  // "i64" or "tile<128x32xf32>"
  bool operator==(const Type&) const = default;
};

// The element strides of a contiguous row-major array of `shape`.
Shape rowMajorStrides(const Shape& shape);

// Which counts the op table allows: operands, results (ir/ops.def).
constexpr uint8_t kAny = 255;

enum class OpCode : uint8_t {
#define TJ_OP(code, ...) code,
#include "ir/ops.def"
#undef TJ_OP
};
constexpr int kNumOpCodes = 0
#define TJ_OP(...) +1
#include "ir/ops.def"
#undef TJ_OP
    ;

// What the op table says of each op's kind; the predicates below read them.
namespace trait {
constexpr uint16_t unaryElementwise = 1 << 0;
constexpr uint16_t binaryElementwise = 1 << 1;  // add .. logical_or, cmp, and xor .. shru
constexpr uint16_t reduction = 1 << 2;
constexpr uint16_t shape = 1 << 3;           // only rearranges a tile's elements by its shape
constexpr uint16_t readsTensor = 1 << 4;
constexpr uint16_t writesTensor = 1 << 5;    // implies side effects
constexpr uint16_t sideEffects = 1 << 6;     // kept though its results are unused
// May take or give 8-bit float tiles (f8e4m3, f8e5m2): the ops that move, convert and multiply
// values, and the control flow carrying them; arithmetic needs a cast to a wider float first.
constexpr uint16_t float8 = 1 << 7;
}  // namespace trait

// A constant's value or a load's fill: an int64 for integer and bool dtypes, a double for floats.
using Number = std::variant<int64_t, double>;
using AttrValue = std::variant<int64_t, double, std::vector<int64_t>, std::string>;

// An attribute's name and C++ type; ops read their attributes through these keys (attr::axis
// is an int64, attr::perm a list), so a misspelt name or a wrong type does not compile.
template <typename T>
struct AttrKey {
  std::string_view name;
};
namespace attr {
inline constexpr AttrKey<int64_t> axis{"axis"}, tensor{"tensor"}, start{"start"}, index{"index"},
    descending{"descending"}, stages{"stages"}, bins{"bins"}, approx{"approx"}, split{"split"},
    specialize{"specialize"};
inline constexpr AttrKey<std::vector<int64_t>> perm{"perm"};
inline constexpr AttrKey<std::string> pred{"pred"}, fn{"fn"}, label{"label"}, message{"message"};
inline constexpr AttrKey<Number> value{"value"}, fill{"fill"};
}  // namespace attr

enum class AttrKind : uint8_t { integer, number, integers, string };
std::string_view attrKindName(AttrKind k);  // "an integer", "a number", ...
bool admits(AttrKind k, const AttrValue& v);

// One attribute an op takes, as the op table lists it.
struct AttrSpec {
  std::string_view name;  // empty: an unused slot
  AttrKind kind = AttrKind::integer;
  bool required = false;
};
constexpr int kMaxOpAttrs = 3;

struct OpInfo {
  std::string_view name;  // as printed: "add", "not", "and", "or", ...
  uint8_t minOperands, maxOperands, minResults, maxResults;  // kAny: unbounded
  uint16_t traits;
  std::array<AttrSpec, kMaxOpAttrs> attrs;

  bool has(uint16_t t) const { return (traits & t) != 0; }
  const AttrSpec* attrSpec(std::string_view attrName) const;  // null when the op takes none of that name
};
const OpInfo& opInfo(OpCode c);

inline std::string_view opName(OpCode c) { return opInfo(c).name; }
std::optional<OpCode> parseOpName(std::string_view s);
inline bool isUnaryElementwise(OpCode c) { return opInfo(c).has(trait::unaryElementwise); }
inline bool isBinaryElementwise(OpCode c) { return opInfo(c).has(trait::binaryElementwise); }
inline bool isReduction(OpCode c) { return opInfo(c).has(trait::reduction); }
inline bool readsTensor(OpCode c) { return opInfo(c).has(trait::readsTensor); }     // load, gather, atomic
inline bool writesTensor(OpCode c) { return opInfo(c).has(trait::writesTensor); }   // store, scatter, atomic
inline bool hasSideEffects(OpCode c) { return opInfo(c).has(trait::sideEffects | trait::writesTensor); }
inline bool acceptsFloat8(OpCode c) { return opInfo(c).has(trait::float8); }

struct Attr {
  std::string name;
  AttrValue value;
  bool operator==(const Attr&) const = default;
};

template <typename T>
AttrValue toAttrValue(T v) {
  if constexpr (std::is_same_v<T, Number>) return std::visit([](auto x) { return AttrValue(x); }, v);
  else return AttrValue(std::move(v));
}

// An attribute built from its key, for the DSL and passes making ops.
template <typename T>
Attr makeAttr(AttrKey<T> key, std::type_identity_t<T> v) {
  return Attr{std::string(key.name), toAttrValue<T>(std::move(v))};
}

using ValueId = int32_t;
struct Op;

// A straight-line list of ops with block arguments (a fold body).
struct Block {
  std::vector<ValueId> args;
  std::vector<Op> ops;
};

struct Op {
  OpCode code;
  std::vector<ValueId> operands;
  std::vector<ValueId> results;
  std::vector<Attr> attrs;  // kept sorted by name
  std::vector<Block> regions;
  SourceLoc loc;  // the user's file:line that traced this op; not printed or hashed
  // A load or gather whose fill the user did not give, for the sanitizer; like loc, not printed or hashed.
  bool defaultFill = false;
  // An access tilejit added to a derived kernel, not the user's: a store of the loop values it
  // saves for itself (the sanitizer does not report what it stores), a read of an output's
  // gradient (outside the output it is exactly 0, not a fill standing in for a value). Like
  // loc, not printed or hashed.
  bool internal = false;

  // An attribute's value; throws Error naming the op when it is missing or of another type.
  int64_t get(AttrKey<int64_t> key) const;
  const std::string& get(AttrKey<std::string> key) const;
  const std::vector<int64_t>& get(AttrKey<std::vector<int64_t>> key) const;
  Number get(AttrKey<Number> key) const;
  template <typename T>
  bool has(AttrKey<T> key) const {
    return stored(key.name) != nullptr;
  }
  template <typename T>
  void set(AttrKey<T> key, std::type_identity_t<T> v) {
    setAttr(std::string(key.name), toAttrValue<T>(std::move(v)));
  }
  // For code over every attribute alike (the parser): keeps attrs sorted.
  void setAttr(std::string name, AttrValue v);

 private:
  const AttrValue* stored(std::string_view name) const;
};

// A Number attribute as a double (an integer one converted).
inline double asDouble(const Number& n) {
  return std::visit([](auto x) { return static_cast<double>(x); }, n);
}

// A tensor the kernel reads or writes. Its sizes and strides are runtime
// arguments: only dtype and rank are part of the kernel.
struct TensorParam {
  std::string name;
  DType dtype;
  int rank;
  SourceLoc loc{};  // where parsed text declared it; not compared, printed or hashed
  bool operator==(const TensorParam& o) const { return name == o.name && dtype == o.dtype && rank == o.rank; }
};

// A scalar the kernel receives at launch (not a constant baked into it).
struct ScalarParam {
  std::string name;
  DType dtype;
  SourceLoc loc{};  // as TensorParam::loc
  bool operator==(const ScalarParam& o) const { return name == o.name && dtype == o.dtype; }
};

struct Kernel {
  std::string name;
  std::vector<TensorParam> tensors;
  std::vector<ScalarParam> scalars;
  int gridRank = 1;
  SourceLoc gridLoc{};  // where parsed text gave the grid rank
  std::vector<Type> types;  // indexed by ValueId
  Block body;
  // p.warps: the subgroups (warps) each program runs on, on GPUs; 0: the device chooses.
  // Printed as `grid N warps W`, hashed; the CPU ignores it.
  int64_t warps = 0;

  ValueId addValue(Type t) {
    types.push_back(std::move(t));
    return static_cast<ValueId>(types.size() - 1);
  }
  const Type& type(ValueId v) const { return types.at(static_cast<size_t>(v)); }
};

// Calls f on every op in the block and nested regions, outer op before its body.
template <typename F>
void forEachOp(const Block& b, F&& f) {
  for (const Op& op : b.ops) {
    f(op);
    for (const Block& r : op.regions) forEachOp(r, f);
  }
}

// The atomic op's fn attribute, and the dtypes each fn updates (i32 and i64 for all, f32
// for add and xchg: what every target's hardware does in one instruction).
enum class AtomicFn : uint8_t { add, max, min, xchg, cas };
std::optional<AtomicFn> parseAtomicFn(std::string_view s);
bool atomicSupports(AtomicFn fn, DType t);

// Per tensor parameter: whether the kernel writes it (store, scatter or atomic).
std::vector<bool> writtenTensors(const Kernel& k);

// The op's operands and results of an 8-bit float dtype, when the op does not accept them: the
// first such dtype (for the error naming it).
std::optional<DType> unacceptedFloat8(const Op& op, const std::vector<Type>& types);

}  // namespace tj::ir
