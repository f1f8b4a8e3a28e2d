// The tracing DSL: Index and Tile handles recorded into tile IR while the
// user's lambda runs once. Every call takes the caller's source location so
// a mistake is reported at the user's file:line.
//
// A C++ `for` inside the lambda runs at trace time: it unrolls into straight
// IR. Use Program::fold for a loop that stays a loop in the kernel.
#pragma once
#include <array>
#include <functional>
#include <initializer_list>
#include <optional>
#include <source_location>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "dsl/tensor.hpp"
#include "ir/ir.hpp"

namespace tj {

using Loc = std::source_location;
class Tracer;

// A scalar i64 value of the kernel: program ids, block indices, loop counters.
class Index {
 public:
  Index(int64_t constant, Loc loc = Loc::current());  // NOLINT: numbers are indices
  Index(int constant, Loc loc = Loc::current()) : Index(int64_t{constant}, loc) {}  // NOLINT
  ir::ValueId value() const { return value_; }
  uint64_t trace() const { return trace_; }  // which run() made it
  Index operator-() const;

 private:
  friend class Tracer;
  struct Raw {};
  Index(Raw, ir::ValueId v, uint64_t trace) : value_(v), trace_(trace) {}
  ir::ValueId value_;
  uint64_t trace_;
};

// What a cast does with values its result dtype cannot hold: past a float's largest finite value
// (infinities among them), or outside an integer's range.
enum class Overflow : uint8_t {
  // Floats: +-inf, or NaN for f8e4m3 (which has none), IEEE's and OCP's conversion. Integers
  // from integers keep the low bits; from floats they saturate. The default.
  infinity,
  // Floats: +- the largest finite value, NaN stays NaN (NVIDIA's satfinite; for f8e4m3 PyTorch's
  // .to(torch.float8_e4m3fn)). Integers: the nearest end of the range (requantizing an i32
  // accumulator to i8), NaN becomes 0. Not for bool results.
  saturate,
};

// A block of values with a shape and dtype (rank 0 is a scalar).
class Tile {
 public:
  ir::ValueId value() const { return value_; }
  uint64_t trace() const { return trace_; }  // which run() made it
  Shape shape() const;
  DType dtype() const;
  int rank() const { return static_cast<int>(shape().size()); }

  Tile k(double constant, Loc loc = Loc::current()) const;  // a constant tile like this one
  // Floats round to nearest even; float to integer truncates, saturates and takes NaN to 0;
  // integer to integer keeps the low bits (see Overflow).
  Tile cast(DType to, Loc loc = Loc::current()) const;
  Tile cast(DType to, Overflow overflow, Loc loc = Loc::current()) const;

  Tile exp(Loc loc = Loc::current()) const;
  Tile exp2(Loc loc = Loc::current()) const;
  // exp and exp2 that a GPU may compute with its fast hardware approximation (relative error
  // at most 2^-20 + |x| 2^-24 where the result is normal; results below that may be 0), as
  // Triton's tl.exp does: for softmax and attention, whose results round to 16 bits anyway.
  Tile fast_exp(Loc loc = Loc::current()) const;
  Tile fast_exp2(Loc loc = Loc::current()) const;
  Tile log(Loc loc = Loc::current()) const;
  Tile log2(Loc loc = Loc::current()) const;
  Tile sqrt(Loc loc = Loc::current()) const;
  Tile rsqrt(Loc loc = Loc::current()) const;
  Tile abs(Loc loc = Loc::current()) const;
  Tile neg(Loc loc = Loc::current()) const;
  Tile sin(Loc loc = Loc::current()) const;
  Tile cos(Loc loc = Loc::current()) const;
  Tile tanh(Loc loc = Loc::current()) const;
  Tile sigmoid(Loc loc = Loc::current()) const;
  Tile erf(Loc loc = Loc::current()) const;
  Tile relu(Loc loc = Loc::current()) const;
  Tile floor(Loc loc = Loc::current()) const;
  Tile ceil(Loc loc = Loc::current()) const;

  Tile sum(int axis, bool keepdims = false, Loc loc = Loc::current()) const;
  Tile max(int axis, bool keepdims = false, Loc loc = Loc::current()) const;
  Tile min(int axis, bool keepdims = false, Loc loc = Loc::current()) const;
  Tile argmax(int axis, bool keepdims = false, Loc loc = Loc::current()) const;
  Tile argmin(int axis, bool keepdims = false, Loc loc = Loc::current()) const;
  // Inclusive prefix sums, products, maxima and minima along an axis (Triton's tl.cumsum,
  // tl.cumprod): element i combines elements 0..i. Float sums may associate in any order.
  Tile cumsum(int axis, Loc loc = Loc::current()) const;
  Tile cumprod(int axis, Loc loc = Loc::current()) const;
  Tile cummax(int axis, Loc loc = Loc::current()) const;
  Tile cummin(int axis, Loc loc = Loc::current()) const;

  // The tile sorted along an axis, ascending or descending (Triton's tl.sort): stable, NaN
  // after every number ascending and before every number descending (as torch.sort).
  Tile sort(int axis, bool descending = false, Loc loc = Loc::current()) const;

  // Elements [start, start + size) along an axis (static bounds inside the tile).
  Tile slice(int axis, int64_t start, int64_t size, Loc loc = Loc::current()) const;
  Tile expand_dims(int axis, Loc loc = Loc::current()) const;
  Tile reshape(const Shape& shape, Loc loc = Loc::current()) const;
  Tile broadcast_to(const Shape& shape, Loc loc = Loc::current()) const;
  Tile permute(const std::vector<int>& perm, Loc loc = Loc::current()) const;
  Tile transpose(Loc loc = Loc::current()) const;  // swaps the last two axes

 private:
  friend class Tracer;
  Tile(ir::ValueId v, uint64_t trace) : value_(v), trace_(trace) {}
  ir::ValueId value_;
  uint64_t trace_;
};

// The operand of a unary tile operator, remembering where it was written.
struct TileArg {
  TileArg(const Tile& t, Loc l = Loc::current()) : tile(t), loc(l) {}  // NOLINT
  const Tile& tile;
  Loc loc;
};
Tile operator-(const TileArg& x);
Tile operator!(const TileArg& x);
// Bitwise not of an integer tile (on bool tiles, as !).
Tile operator~(const TileArg& x);

// The right-hand side of a tile operator: a tile, an Index or a number. A
// number or Index takes the tile's dtype (as a Python number does in Triton).
struct Operand {
  Operand(const Tile& t, Loc l = Loc::current()) : tile(&t), loc(l) {}        // NOLINT
  Operand(const Index& i, Loc l = Loc::current()) : index(&i), loc(l) {}      // NOLINT
  Operand(double v, Loc l = Loc::current()) : number(v), loc(l) {}            // NOLINT
  const Tile* tile = nullptr;
  const Index* index = nullptr;
  double number = 0;
  Loc loc;
};

// The left-hand side of `number op tile` or `index op tile`.
struct ScalarOperand {
  ScalarOperand(const Index& i, Loc l = Loc::current()) : index(&i), loc(l) {}  // NOLINT
  ScalarOperand(double v, Loc l = Loc::current()) : number(v), loc(l) {}        // NOLINT
  const Index* index = nullptr;
  double number = 0;
  Loc loc;
};

// The right-hand side of an Index operator.
struct IndexOperand {
  IndexOperand(const Index& i, Loc l = Loc::current()) : index(i), loc(l) {}  // NOLINT
  IndexOperand(int64_t v, Loc l = Loc::current()) : index(v, l), loc(l) {}    // NOLINT
  IndexOperand(int v, Loc l = Loc::current()) : index(int64_t{v}, l), loc(l) {}  // NOLINT
  Index index;
  Loc loc;
};

#define TJ_TILE_OPERATOR(OP)                               \
  Tile operator OP(const Tile& a, const Operand& b);       \
  Tile operator OP(const ScalarOperand& a, const Tile& b);
#define TJ_INDEX_OPERATOR(OP, RESULT) RESULT operator OP(const Index& a, const IndexOperand& b);
TJ_TILE_OPERATOR(+) TJ_TILE_OPERATOR(-) TJ_TILE_OPERATOR(*) TJ_TILE_OPERATOR(/) TJ_TILE_OPERATOR(%)
// Comparisons of two integer tiles of different dtypes compare their values exactly, signed
// and unsigned alike (p.scalar(i), an i64, against an i32 read from memory); other operators
// need one dtype.
TJ_TILE_OPERATOR(<) TJ_TILE_OPERATOR(<=) TJ_TILE_OPERATOR(>) TJ_TILE_OPERATOR(>=)
TJ_TILE_OPERATOR(==) TJ_TILE_OPERATOR(!=) TJ_TILE_OPERATOR(&&) TJ_TILE_OPERATOR(||)
// Bitwise, on integer tiles (& | ^ on bool tiles too, as logical ops): & and | are && and ||.
// Shifts take a count of the same dtype; one outside [0, bits) shifts every bit out
// (<< gives 0, >> the sign: it is arithmetic, like C++'s on signed integers).
TJ_TILE_OPERATOR(&) TJ_TILE_OPERATOR(|) TJ_TILE_OPERATOR(^) TJ_TILE_OPERATOR(<<) TJ_TILE_OPERATOR(>>)
TJ_INDEX_OPERATOR(+, Index) TJ_INDEX_OPERATOR(-, Index) TJ_INDEX_OPERATOR(*, Index)
TJ_INDEX_OPERATOR(/, Index) TJ_INDEX_OPERATOR(%, Index)
// Index comparisons give rank-0 bool tiles, usable in where().
TJ_INDEX_OPERATOR(<, Tile) TJ_INDEX_OPERATOR(<=, Tile) TJ_INDEX_OPERATOR(>, Tile)
TJ_INDEX_OPERATOR(>=, Tile) TJ_INDEX_OPERATOR(==, Tile) TJ_INDEX_OPERATOR(!=, Tile)
#undef TJ_TILE_OPERATOR
#undef TJ_INDEX_OPERATOR

// a >> b filling with zeros: a's bits as an unsigned integer of its width (hashes, random bits).
Tile logical_shift_right(const Tile& a, const Operand& b);
// The high half of the product of a and b as unsigned integers of their width (Triton's
// tl.umulhi), for i32, i64, u32 and u64 tiles: for 32-bit ones the bits of
// (uint32)a * (uint32)b >> 32, in their dtype.
Tile umulhi(const Tile& a, const Operand& b, Loc loc = Loc::current());

// Elementwise max/min of tiles (NaN propagates) and of indices.
Tile max(const Tile& a, const Operand& b);
Tile min(const Tile& a, const Operand& b);
Index max(const Index& a, const IndexOperand& b);
Index min(const Index& a, const IndexOperand& b);
Index cdiv(const Index& a, const IndexOperand& b);
// a where cond is true, else b: cond is a rank-0 bool tile (an Index comparison, or a value
// read from memory compared), so the choice is the same for the whole program.
Index select(const Tile& cond, const IndexOperand& a, const IndexOperand& b, Loc loc = Loc::current());

Tile where(const Tile& cond, const Operand& a, const Operand& b, Loc loc = Loc::current());
// a * b + c rounded once (IEEE's fusedMultiplyAdd, Triton's tl.fma) on every device: f32 or f64
// tiles (numbers take a's dtype), shapes broadcast as for +. Without it a * b + c rounds twice.
Tile fma(const Tile& a, const Operand& b, const Operand& c, Loc loc = Loc::current());
// a * b + c as fast as the device computes it: rounded once where it has a fused multiply-add
// (CPUs, NVIDIA, AMD), a * b rounded first elsewhere (Vulkan); LLVM's fmuladd. f32 or f64.
Tile muladd(const Tile& a, const Operand& b, const Operand& c, Loc loc = Loc::current());
// Tiles one after another along an axis (their other dimensions and dtypes equal).
Tile cat(const std::vector<Tile>& tiles, int axis, Loc loc = Loc::current());
// An inclusive scan under your combine (Triton's tl.associative_scan): element i of the result
// is combine(...combine(x[0], x[1])..., x[i]) along the axis. combine receives the earlier and
// the later element as rank-0 tiles and returns their combination, from elementwise ops; it
// must be associative (GPUs combine in a tree): a running max with its position, a segmented
// sum, a linear recurrence.
Tile associative_scan(const Tile& x, int axis, const std::function<Tile(const Tile&, const Tile&)>& combine,
                      Loc loc = Loc::current());
// Tiles of one shape scanned together: combine receives the earlier elements and the later ones
// (one rank-0 tile per input, in order) and returns one per input.
//   // a sum restarting where flags is 1: (f, v) then (g, w) give (f | g, g ? w : v + w)
//   auto sums = associative_scan({flags, x}, 0, [](const auto& a, const auto& b) {
//     return std::vector<Tile>{a[0] | b[0], where(b[0] != 0, b[1], a[1] + b[1])}; })[1];
using ScanCombine = std::function<std::vector<Tile>(const std::vector<Tile>& earlier, const std::vector<Tile>& later)>;
std::vector<Tile> associative_scan(const std::vector<Tile>& xs, int axis, const ScanCombine& combine,
                                   Loc loc = Loc::current());
// How many elements of the integer tile x equal each of 0 .. bins - 1 (Triton's tl.histogram):
// an i32 tile of `bins`; elements outside [0, bins) are not counted. A histogram of a block,
// added to a global one once per bin (p.atomic_add(counts, {p.arange(bins)}, h)), does far
// fewer atomics than one per element.
Tile histogram(const Tile& x, int64_t bins, Loc loc = Loc::current());
// keys sorted along an axis (as Tile::sort), and the payload (a tile of the keys' shape, any
// dtype) reordered with them: auto [sorted, order] = sort(x, p.iota(x.shape(), 1), 1);
std::pair<Tile, Tile> sort(const Tile& keys, const Tile& payload, int axis, bool descending = false,
                           Loc loc = Loc::current());
// The k largest elements along an axis, largest first (torch.topk; Triton's tl.topk gives
// the values), and their i32 positions along the axis; of equal values the first ones.
std::pair<Tile, Tile> topk(const Tile& x, int64_t k, int axis, Loc loc = Loc::current());
// Matrix product [M,K] x [K,N]. f16/bf16/f32 operands give f32 by default, f64 gives f64,
// i8 gives i32; `out` picks another result dtype. f8e4m3 and f8e5m2 (mixed too) give f32, f16 or
// bf16: their products are exact and accumulate in f32. f16/bf16 operands may give f16 or bf16.
Tile dot(const Tile& a, const Tile& b, Loc loc = Loc::current());
Tile dot(const Tile& a, const Tile& b, DType out, Loc loc = Loc::current());
Tile dot(const Tile& a, const Tile& b, const Tile& acc, Loc loc = Loc::current());  // acc + a·b

#define TJ_UNARY_FUNCTION(NAME) \
  inline Tile NAME(const Tile& t, Loc loc = Loc::current()) { return t.NAME(loc); }
TJ_UNARY_FUNCTION(exp) TJ_UNARY_FUNCTION(exp2) TJ_UNARY_FUNCTION(log) TJ_UNARY_FUNCTION(log2)
TJ_UNARY_FUNCTION(sqrt) TJ_UNARY_FUNCTION(rsqrt) TJ_UNARY_FUNCTION(abs) TJ_UNARY_FUNCTION(sin)
TJ_UNARY_FUNCTION(cos) TJ_UNARY_FUNCTION(tanh) TJ_UNARY_FUNCTION(sigmoid) TJ_UNARY_FUNCTION(erf)
TJ_UNARY_FUNCTION(relu) TJ_UNARY_FUNCTION(floor) TJ_UNARY_FUNCTION(ceil)
TJ_UNARY_FUNCTION(fast_exp) TJ_UNARY_FUNCTION(fast_exp2)
#undef TJ_UNARY_FUNCTION

// A tensor seen as a grid of blocks, for reading.
class ReadView {
 public:
  Tile at(const std::vector<Index>& block, Loc loc = Loc::current()) const;  // block coordinates
  // A block starting at element coordinates, for reads off the block grid.
  Tile at_offset(const std::vector<Index>& elements, Loc loc = Loc::current()) const;
  Index blocks(int axis, Loc loc = Loc::current()) const;  // cdiv(tensor size, block size)
  Index size(int axis, Loc loc = Loc::current()) const;    // the tensor's runtime size

 private:
  friend class Program;
  ReadView(Tracer& t, int tensor, Shape block, std::optional<double> fill)
      : tracer_(&t), tensor_(tensor), block_(std::move(block)), fill_(fill) {}
  Tracer* tracer_;
  int tensor_;
  Shape block_;
  std::optional<double> fill_;  // none: 0, and the sanitizer reports it reaching a store
};

// A tensor seen as a grid of blocks, for writing. Out-of-range elements are dropped;
// a tile of another dtype is converted to the tensor's dtype.
class WriteView {
 public:
  void put(const Tile& tile, const std::vector<Index>& block, Loc loc = Loc::current()) const;
  void put_at_offset(const Tile& tile, const std::vector<Index>& elements, Loc loc = Loc::current()) const;
  Index blocks(int axis, Loc loc = Loc::current()) const;

 private:
  friend class Program;
  WriteView(Tracer& t, int tensor, Shape block) : tracer_(&t), tensor_(tensor), block_(std::move(block)) {}
  Tracer* tracer_;
  int tensor_;
  Shape block_;
};

// What one program of the grid does; passed to the lambda given to run().
class Program {
 public:
  explicit Program(Tracer& t) : tracer_(t) {}
  Index id(int axis, Loc loc = Loc::current());   // this program's block on a grid axis
  Index num(int axis, Loc loc = Loc::current());  // the grid size on an axis

  // Elements outside the tensor read `fill`; without one they read 0, and TILEJIT_SANITIZE reports
  // such a default fill that reaches a store inside a tensor (pass the fill you mean).
  ReadView read(const Tensor& t, const Shape& block, std::optional<double> fill = {}, Loc loc = Loc::current());
  WriteView write(const Tensor& t, const Shape& block, Loc loc = Loc::current());

  Tile zeros(const Shape& shape, DType dtype = f32, Loc loc = Loc::current());
  Tile full(const Shape& shape, double value, DType dtype = f32, Loc loc = Loc::current());
  Tile iota(const Shape& shape, int axis, Loc loc = Loc::current());  // i32 index along axis
  Tile arange(int64_t n, Loc loc = Loc::current());                   // iota({n}, 0)
  Tile scalar(const Index& i, DType dtype = i64, Loc loc = Loc::current());  // an Index as a rank-0 tile
  // A rank-0 integer tile as an Index: a value read from memory (`p.gather(offsets, {p.id(0)})`)
  // becomes a block index, an offset or a fold bound.
  Index index(const Tile& t, Loc loc = Loc::current());

  // Reads and writes at computed coordinates: one integer tile (or Index, or number) per tensor
  // axis, broadcast together like elementwise operands; the result (the written tile) has their
  // shape. A coordinate outside the tensor, or a false `mask` element, reads `fill` / drops the
  // write, as the edges of blocks do. `value` converts to the tensor's dtype, as put does. Of
  // several writes to one element, one is written whole: on the CPU the last in row-major order,
  // on GPUs any one of them.
  //   Tile rows = p.gather(table, {ids.expand_dims(1), p.arange(64).expand_dims(0)});  // embedding
  Tile gather(const Tensor& t, const std::vector<Operand>& coords, std::optional<double> fill = {},
              Loc loc = Loc::current());
  Tile gather(const Tensor& t, const std::vector<Operand>& coords, const Tile& mask, std::optional<double> fill = {},
              Loc loc = Loc::current());
  void scatter(const Tensor& t, const std::vector<Operand>& coords, const Operand& value, Loc loc = Loc::current());
  void scatter(const Tensor& t, const std::vector<Operand>& coords, const Operand& value, const Tile& mask,
               Loc loc = Loc::current());

  // Atomic updates at computed coordinates (as scatter's, with an optional mask): each element
  // is one atomic read-modify-write of the tensor's element, so duplicates all apply (a
  // histogram: p.atomic_add(counts, {bins}, 1)). The result holds the old values (0 where
  // nothing was updated). i32, i64, u32 and u64 tensors for every update (max and min of
  // unsigned ones are unsigned), f32, f64, f16 and bf16 ones for all but atomic_cas (float
  // max and min order as max() and min() do); acquire-release ordering at device scope, as
  // Triton's default. atomic_cas writes `value` where the old value equals `compare`.
  Tile atomic_add(const Tensor& t, const std::vector<Operand>& coords, const Operand& value, Loc loc = Loc::current());
  Tile atomic_add(const Tensor& t, const std::vector<Operand>& coords, const Operand& value, const Tile& mask,
                  Loc loc = Loc::current());
  Tile atomic_max(const Tensor& t, const std::vector<Operand>& coords, const Operand& value, Loc loc = Loc::current());
  Tile atomic_max(const Tensor& t, const std::vector<Operand>& coords, const Operand& value, const Tile& mask,
                  Loc loc = Loc::current());
  Tile atomic_min(const Tensor& t, const std::vector<Operand>& coords, const Operand& value, Loc loc = Loc::current());
  Tile atomic_min(const Tensor& t, const std::vector<Operand>& coords, const Operand& value, const Tile& mask,
                  Loc loc = Loc::current());
  Tile atomic_xchg(const Tensor& t, const std::vector<Operand>& coords, const Operand& value, Loc loc = Loc::current());
  Tile atomic_xchg(const Tensor& t, const std::vector<Operand>& coords, const Operand& value, const Tile& mask,
                   Loc loc = Loc::current());
  Tile atomic_cas(const Tensor& t, const std::vector<Operand>& coords, const Operand& compare, const Operand& value,
                  Loc loc = Loc::current());
  Tile atomic_cas(const Tensor& t, const std::vector<Operand>& coords, const Operand& compare, const Operand& value,
                  const Tile& mask, Loc loc = Loc::current());

  void print(const std::string& label, const Tile& t, Loc loc = Loc::current());
  // A device assertion (Triton's tl.device_assert): where an element of the bool tile `cond`
  // is false, the launch fails with a tj::Error naming `message`, this line, a program and
  // an element. TILEJIT_CHECKS=0 leaves checks out of the kernel: they cost nothing then.
  void check(const Tile& cond, const std::string& message, Loc loc = Loc::current());

  // Counter-based random numbers (dsl/random.cpp): Philox 4x32 with 10 rounds, computed as
  // Triton's tl.randint4x / randint / rand / randn compute it, so a kernel ported from Triton
  // draws the same numbers from the same seed and offsets, on every device. `seed` is an
  // integer number, an Index or a rank-0 integer tile (a 64-bit key); `offset` an integer tile,
  // one draw per element, whose shape the results take. The counter is (offset, 0, 0, 0) for
  // i32 offsets (narrower ones widen as Triton's .to(tl.uint32)) and (its low word, its high
  // word, 0, 0) for i64 and u64 ones, as Triton's randint4x has it.
  // The four 32-bit words of a draw, as i32 tiles holding Triton's uint32 bits.
  std::array<Tile, 4> randint4x(const Operand& seed, const Tile& offset, Loc loc = Loc::current());
  Tile randint(const Operand& seed, const Tile& offset, Loc loc = Loc::current());  // the first word
  Tile rand(const Operand& seed, const Tile& offset, Loc loc = Loc::current());  // f32 uniform in [0, 1)
  Tile randn(const Operand& seed, const Tile& offset, Loc loc = Loc::current());  // f32 standard normal

  // Folds traced after this call keep the loads of their next `n - 1` iterations in flight
  // (1 to 4; Triton's num_stages): on GPUs that copy asynchronously (NVIDIA sm_80 on), a
  // block read only by a dot goes straight to a ring of `n` workgroup-memory buffers. Other
  // devices ignore it; without a call, the target's default (2 on NVIDIA). More stages hide
  // more memory latency for n times a step's operand bytes of workgroup memory; a kernel
  // they do not fit in gets fewer.
  void stages(int64_t n, Loc loc = Loc::current());
  // The warps (subgroups) each program runs on, on GPUs (Triton's num_warps): a power of two
  // from 1 to 32. More warps share a block's work (fewer registers each, more latency hidden);
  // fewer leave more registers per thread. Without a call, the device's choice (4, spread
  // further on lavapipe for compile time); the CPU ignores it. A device whose workgroups are
  // smaller runs the kernel on the CPU and says why.
  void warps(int64_t n, Loc loc = Loc::current());
  // Folds traced after this call (until p.warp_specialize(false)) are marked, and the first
  // marked one at the kernel's top level is warp-specialized on GPUs with TMA (NVIDIA sm_90a):
  // a producer warpgroup of its own, added to the p.warps consumer warps, issues the TMA
  // copies of the loads read ahead into the rings, while the consumer warpgroups only wait for
  // stages, compute and release them (Triton's warp_specialize; with 8 warps, two consumer
  // warpgroups take registers the producer gives up, and take turns on the tensor cores where
  // the loop has two products or more). Where a fold's dot operands are not all copied by TMA,
  // or more than its offsets' scalars come from before the fold, it runs as without the call.
  // Other devices ignore it.
  void warp_specialize(bool on = true);
  // A loop kept in the kernel: for k in [start, end): carried = body(k, carried).
  Tile fold(const IndexOperand& start, const IndexOperand& end, const Tile& init,
            const std::function<Tile(Index, Tile)>& body, Loc loc = Loc::current());
  // for k in start, start + step, ... while k < end (step > 0, a number).
  Tile fold(const IndexOperand& start, const IndexOperand& end, int64_t step, const Tile& init,
            const std::function<Tile(Index, Tile)>& body, Loc loc = Loc::current());
  // A loop kept in the kernel that carries nothing: body(k) for its writes, atomics and checks.
  void loop(const IndexOperand& start, const IndexOperand& end, const std::function<void(Index)>& body,
            Loc loc = Loc::current());
  void loop(const IndexOperand& start, const IndexOperand& end, int64_t step, const std::function<void(Index)>& body,
            Loc loc = Loc::current());
  // The same, carrying several tiles: body(k, t0, t1, ...) returns std::tuple{t0', t1', ...}.
  template <typename... Ts, typename F>
  std::tuple<Ts...> fold(const IndexOperand& start, const IndexOperand& end, const std::tuple<Ts...>& init,
                         F&& body, Loc loc = Loc::current());

  // A loop kept in the kernel that runs while cond holds (Triton's `while`): cond takes the
  // carried tiles and returns a rank-0 bool tile (the same for the whole program); body takes
  // them and returns the next ones. Init and the results are a Tile or a std::tuple of Tiles:
  //   auto [x, steps] = p.while_loop(std::tuple{x0, p.zeros({}, i32)},
  //       [&](const Tile& x, const Tile&) { return x.max(0) > 1.0; },
  //       [&](const Tile& x, const Tile& s) { return std::tuple{x * 0.5, s + 1}; });
  // As in C++, a while whose cond never turns false never ends.
  template <typename Init, typename Cond, typename Body>
  Init while_loop(const Init& init, Cond&& cond, Body&& body, Loc loc = Loc::current());

  // Branches kept in the kernel. `cond` is a rank-0 bool tile (an Index comparison, or a value
  // read from memory compared), the same for the whole program, so the side not taken costs
  // nothing. if_then runs `then` for its writes, atomics and checks:
  //   p.if_then(p.scalar(len) > start, [&] { ... });
  void if_then(const Tile& cond, const std::function<void()>& then, Loc loc = Loc::current());
  // The program stops here where `cond` (as if_then's) holds: what is traced after this call,
  // later iterations of the loops around it and what follows them run only where it does not.
  // Not in a while's cond.
  //   p.exit_if(p.id(0) * 64 >= p.index(p.gather(lengths, {b})));
  void exit_if(const Tile& cond, Loc loc = Loc::current());
  // `then` or `otherwise`; both return the same: nothing, a Tile or a std::tuple of Tiles.
  //   Tile y = p.if_else(p.id(0) == 0, [&] { return x * 2; }, [&] { return x; });
  template <typename Then, typename Else>
  auto if_else(const Tile& cond, Then&& then, Else&& otherwise, Loc loc = Loc::current());

 private:
  using Carried = std::vector<Tile>;
  // A std::tuple of Tiles as Carried, and back.
  template <typename Tuple>
  static Carried carriedOf(const Tuple& t) {
    return std::apply([](const auto&... x) { return Carried{x...}; }, t);
  }
  template <typename Tuple>
  static Tuple tupleOf(const Carried& c) {
    return [&]<size_t... I>(std::index_sequence<I...>) { return Tuple{c[I]...}; }(
        std::make_index_sequence<std::tuple_size_v<Tuple>>{});
  }
  Carried foldTiles(const IndexOperand& start, const IndexOperand& end, const Carried& init,
                    const std::function<Carried(Index, const Carried&)>& body, Loc loc);
  // foldTiles over k = start + i * step; the step is checked here.
  Carried steppedFold(const IndexOperand& start, const IndexOperand& end, int64_t step, const Carried& init,
                      const std::function<Carried(Index, const Carried&)>& body, Loc loc);
  Carried whileTiles(const Carried& init, const std::function<Tile(const Carried&)>& cond,
                     const std::function<Carried(const Carried&)>& body, Loc loc);
  Carried branchTiles(const Tile& cond, const std::function<Carried()>& then, const std::function<Carried()>& otherwise,
                      Loc loc);
  Tile indirectRead(const Tensor& t, const std::vector<Operand>& coords, const Tile* mask, std::optional<double> fill,
                    Loc loc);
  void indirectWrite(const Tensor& t, const std::vector<Operand>& coords, const Operand& value, const Tile* mask, Loc loc);
  Tile atomicUpdate(std::string_view fn, const Tensor& t, const std::vector<Operand>& coords, const Operand& value,
                    const Operand* compare, const Tile* mask, Loc loc);
  std::array<Tile, 4> randomWords(std::string_view op, const Operand& seed, const Tile& offset, Loc loc);
  Tile seedTile(std::string_view op, const Operand& seed, const SourceLoc& l, Loc loc);
  Tracer& tracer_;
  std::optional<int64_t> stages_;  // p.stages: every later fold's stages attribute
  bool specialize_ = false;        // p.warp_specialize: every later fold's specialize attribute
};

template <typename... Ts, typename F>
std::tuple<Ts...> Program::fold(const IndexOperand& start, const IndexOperand& end,
                                const std::tuple<Ts...>& init, F&& body, Loc loc) {
  static_assert((std::is_same_v<Ts, Tile> && ...), "fold carries Tiles");
  Carried result = foldTiles(start, end, carriedOf(init), [&](Index k, const Carried& c) {
    return carriedOf([&]<size_t... I>(std::index_sequence<I...>) { return body(k, c[I]...); }(
        std::index_sequence_for<Ts...>{}));
  }, loc);
  return tupleOf<std::tuple<Ts...>>(result);
}

template <typename Init, typename Cond, typename Body>
Init Program::while_loop(const Init& init, Cond&& cond, Body&& body, Loc loc) {
  if constexpr (std::is_same_v<Init, Tile>) {
    return whileTiles({init}, [&](const Carried& c) { return Tile(cond(c[0])); },
                      [&](const Carried& c) { return Carried{body(c[0])}; }, loc)[0];
  } else {
    auto apply = [](auto& f, const Carried& c) {
      return [&]<size_t... I>(std::index_sequence<I...>) { return f(c[I]...); }(
          std::make_index_sequence<std::tuple_size_v<Init>>{});
    };
    Carried r = whileTiles(carriedOf(init), [&](const Carried& c) { return Tile(apply(cond, c)); },
                           [&](const Carried& c) { return carriedOf(Init(apply(body, c))); }, loc);
    return tupleOf<Init>(r);
  }
}

template <typename Then, typename Else>
auto Program::if_else(const Tile& cond, Then&& then, Else&& otherwise, Loc loc) {
  using Result = std::invoke_result_t<Then>;
  static_assert(std::is_same_v<Result, std::invoke_result_t<Else>>, "if_else: both sides return the same type");
  auto toVector = [](auto&& side) {
    return [&side]() -> Carried {
      if constexpr (std::is_void_v<Result>) return side(), Carried{};
      else if constexpr (std::is_same_v<Result, Tile>) return Carried{side()};
      else return carriedOf(side());
    };
  };
  Carried r = branchTiles(cond, toVector(then), toVector(otherwise), loc);
  if constexpr (std::is_same_v<Result, Tile>) return r[0];
  else if constexpr (!std::is_void_v<Result>) return tupleOf<Result>(r);
}

}  // namespace tj
