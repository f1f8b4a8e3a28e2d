// Runtime values of the reference interpreter and their exact conversions.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ir/ir.hpp"

namespace tj::interp {

// A runtime tile. Float dtypes keep doubles already rounded to the dtype;
// integer and bool dtypes keep int64s already wrapped, so i64 stays exact.
// Only the vector of the dtype's kind is used.
struct Tile {
  ir::Type type;
  std::vector<double> floats;
  std::vector<int64_t> ints;
  // The sanitizer's Provenance bits per element (devices/interp/sanitizer.hpp); empty: none.
  std::vector<uint8_t> provenance;

  explicit Tile(ir::Type t);  // zero-filled
  bool isFloat() const { return tj::isFloat(type.dtype); }
  // The storage as T (double or int64_t); throws Error when the kind differs,
  // which only an unverified kernel can cause.
  template <typename T>
  std::vector<T>& data();
  template <typename T>
  const std::vector<T>& data() const { return const_cast<Tile*>(this)->data<T>(); }
};

template <typename T>
std::vector<T>& Tile::data() {
  constexpr bool wantFloat = std::is_same_v<T, double>;
  static_assert(wantFloat || std::is_same_v<T, int64_t>);
  if (isFloat() != wantFloat)
    throw InternalError("interpreter", "a " + type.str() + " value used as " + (wantFloat ? "float" : "integer") +
                                           " data; was the kernel verified?");
  if constexpr (wantFloat) return floats;
  else return ints;
}

// Tiles are immutable once built, so fold carries and aliases share them.
using Value = std::shared_ptr<const Tile>;

// Rounds (floats) or wraps (ints) every element to the tile's dtype.
void normalize(Tile& t);

// The cast op's element conversions, each rounding exactly once.
double intToFloat(DType from, DType to, int64_t v);

// One element of host memory at `p`, decoded or encoded by dtype. Values
// written must already be representable in `t`.
double readFloat(const std::byte* p, DType t);
int64_t readInt(const std::byte* p, DType t);
void writeFloat(std::byte* p, DType t, double v);
void writeInt(std::byte* p, DType t, int64_t v);

// Nested brackets, e.g. "[[1, 2], [3, 4]]"; floats in shortest round-trip form.
std::string tileText(const Tile& t);

// A tile read from row-major host memory in its dtype's storage format
// (f16/bf16 as 16-bit patterns, bool as one byte), as a compiled kernel's
// print op hands it over.
Tile decodeTile(const ir::Type& type, const std::byte* data);

// The line a print op writes: "[label] program (i, j): <tileText>".
std::string printLine(std::string_view label, std::span<const int64_t> programId, const Tile& t);

}  // namespace tj::interp
