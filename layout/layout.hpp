// Named layouts: how a tile's elements are spread over the registers, lanes and
// warps of one program (register layouts), or over workgroup memory (Shared).
// Every register layout converts to a LinearLayout (toLinear), and whether two
// layouts need data movement is decided on their linear layouts alone.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/ir.hpp"
#include "layout/linear_layout.hpp"

namespace tj::layout {

using ir::Shape;

// A scalar every thread holds.
struct Uniform {
  bool operator==(const Uniform&) const = default;
};

// Each thread holds sizePerThread contiguous elements; threadsPerWarp and
// warpsPerCTA tile that block; order lists the dimensions fastest first.
// The pattern repeats (more registers) or replicates (idle bits) to fit a shape.
struct Blocked {
  Shape sizePerThread, threadsPerWarp, warpsPerCTA;
  std::vector<int64_t> order;
  bool operator==(const Blocked&) const = default;
};

// The matrix instructions whose fragments are layouts.
// wgmma_m64k16 / wgmma_m64k32: Hopper's warpgroup MMA (wgmma.mma_async.m64nNk16 for 16-bit
// floats, m64nNk32 for 8-bit ones), operands read from workgroup memory through matrix
// descriptors; its accumulator is m16n8k16's per warp, the four warps of a warpgroup stacked
// along M (warpsPerCTA [4g, 1]), so it shares that fragment table. mfma_16x16x16 (CDNA's
// v_mfma_f32_16x16x16, wave64) serves tiles too small for mfma_32x32x8; its name is WMMA's
// ("16x16x16"), the wave size telling them apart (MFMA runs in wave64, WMMA here in wave32).
enum class MatrixInstr : uint8_t {
  mma_m16n8k16,
  mma_m16n8k32,
  wmma_16x16x16,
  mfma_32x32x8,
  mfma_16x16x16,
  wgmma_m64k16,
  wgmma_m64k32
};
bool isWgmma(MatrixInstr i);
std::string_view instrName(MatrixInstr i);

// The accumulator (and result) fragments of a matrix instruction, tiled over the
// last two dimensions by warpsPerCTA; leading dimensions are batch (unit in practice).
struct MatrixAcc {
  MatrixInstr instr;
  Shape warpsPerCTA;
  bool operator==(const MatrixAcc&) const = default;
};

struct Layout;
using LayoutPtr = std::shared_ptr<const Layout>;

// Operand a (opIdx 0, [M,K]) or b (opIdx 1, [K,N]) of a dot whose result has layout
// `parent`: a MatrixAcc (the instruction's operand fragments) or a Blocked (an FMA
// dot: each thread holds its result rows or columns of the operand, all of K).
struct DotOperand {
  int opIdx;
  LayoutPtr parent;
  bool operator==(const DotOperand& o) const;
};

// A reduction's result: `parent` with dimension `dim` removed.
struct Slice {
  int64_t dim;
  LayoutPtr parent;
  bool operator==(const Slice& o) const;
};

// A tile in workgroup memory, rows along order[0]; vectors of `vec` elements in a
// row are XOR-swizzled by the row's phase ((row / perPhase) % maxPhase) so that the
// rows a warp reads at once fall in different banks. With `block` > 0 the rows are cut into
// column blocks of `block` elements, each block stored whole ([rows][block]) after the
// previous one: Hopper's swizzled operand layouts, whose rows span at most 128 bytes.
struct Shared {
  int64_t vec, perPhase, maxPhase;
  std::vector<int64_t> order;
  int64_t block = 0;
  bool operator==(const Shared&) const = default;
};

struct Layout {
  std::variant<Uniform, Blocked, MatrixAcc, DotOperand, Slice, Shared> kind;
  bool operator==(const Layout&) const = default;
  template <typename T>
  const T* as() const { return std::get_if<T>(&kind); }
};

LayoutPtr make(Layout l);
std::string str(const Layout& l);  // "#blocked<spt=[1,4], tpw=[8,4], wpc=[4,1], order=[1,0]>", ...

// The input dimensions of register layouts.
inline const std::string kRegister = "register", kLane = "lane", kWarp = "warp", kOffset = "offset";

// The linear layout of `l` for a tile of `shape`, laid out over paddedShape(shape):
// register layouts map (register, lane, warp) to coordinates; Shared maps the
// element offset in memory to coordinates; Uniform has no input bits.
LinearLayout toLinear(const Layout& l, const Shape& shape);

// What moving a tile from layout a to layout b costs, from their linear layouts.
enum class ConversionKind : uint8_t {
  none,              // the same map
  register_permute,  // every thread already holds what it needs
  warp_shuffle,      // every warp already holds what it needs
  shared_memory,     // data crosses warps: a round trip through workgroup memory
};
std::string_view kindName(ConversionKind k);  // "none", "register-permute", ...
ConversionKind conversionKind(const Layout& a, const Layout& b, const Shape& shape);

// The workgroup-memory layout wgmma reads an operand tile of `shape` (padded, rank 2) in,
// rows along order[0]: rows of 32, 64 or 128 bytes XOR-swizzled as the hardware's 32/64/128-byte
// modes (8 rows of 16-byte vectors; wider rows in 128-byte column blocks); nullopt for rows
// under 32 bytes. Allocations in it start at a multiple of wgmmaSwizzleBytes(s) * 8.
std::optional<Shared> wgmmaShared(DType dtype, const Shape& shape, const std::vector<int64_t>& order);
int64_t wgmmaSwizzleBytes(const Shared& s, DType dtype);  // 32, 64 or 128
// The order of operand opIdx (0: a [M,K], 1: b [K,N]) with K along its rows: {1, 0} or {0, 1}.
std::vector<int64_t> wgmmaKMajor(int opIdx);

bool isPowerOfTwoShape(const Shape& shape);
// Every dimension rounded up to a power of two. Layouts are linear maps over GF(2), so
// a tile of another shape is laid out over its padding; coordinates past `shape` are
// padding elements, which lowerings keep out of stores, reductions and dots.
Shape paddedShape(const Shape& shape);
// The sizes of `shape` that are not 1: a reshape keeping them moves no element.
Shape nonUnitDims(const Shape& shape);
std::vector<int64_t> rowMajorOrder(size_t rank);  // [rank-1, ..., 0]: the last dimension fastest

}  // namespace tj::layout
