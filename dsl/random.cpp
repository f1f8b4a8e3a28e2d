// Philox 4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11), as
// Triton's language/random.py computes it. Each 32-bit word lives in an i64 tile as a value
// in [0, 2^32), so a 32x32-bit product is exact in 64 bits and its high word is a logical
// shift right by 32.
#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "dsl/program.hpp"

namespace tj {

namespace {

constexpr double kWordMask = 4294967295.0;  // 0xffffffff
constexpr double kRoundA = 0xD2511F53, kRoundB = 0xCD9E8D57;
constexpr double kKeyA = 0x9E3779B9, kKeyB = 0xBB67AE85;
constexpr int kRounds = 10;

// The rounds, with every op at the user's line.
class Philox {
 public:
  explicit Philox(Loc loc) : loc_(loc) {}

  // The four words for counter (c0, c1 or 0, 0, 0) and key (seed's low word, its high word).
  std::array<Tile, 4> operator()(const Tile& seed, const Tile& c0, const std::optional<Tile>& c1) const {
    Tile zero = c0 * at(0);
    std::array<Tile, 4> c = {c0, c1.value_or(zero), zero, zero};
    Tile k0 = word(seed), k1 = logical_shift_right(seed, at(32));
    for (int round = 0; round < kRounds; ++round) {
      Tile productA = c[0] * at(kRoundA), productB = c[2] * at(kRoundB);
      c = {high(productB) ^ at(c[1]) ^ at(k0), word(productB), high(productA) ^ at(c[3]) ^ at(k1), word(productA)};
      k0 = word(k0 + at(kKeyA));
      k1 = word(k1 + at(kKeyB));
    }
    return c;
  }

  Tile word(const Tile& x) const { return x & at(kWordMask); }
  Tile high(const Tile& x) const { return logical_shift_right(x, at(32)); }
  Operand at(const Tile& x) const { return Operand(x, loc_); }
  Operand at(double x) const { return Operand(x, loc_); }

 private:
  Loc loc_;
};

// Triton's uint_to_uniform_float for 32-bit words: the word as an i32 folded onto [0, 2^31),
// times the largest f32 scale that keeps every result below 1.
Tile uniform(const Tile& bits, Loc loc) {
  Philox r(loc);
  Tile x = where(bits < r.at(0), -TileArg(bits, loc) - r.at(1), r.at(bits), loc);
  return x.cast(f32, loc) * r.at(4.6566127342e-10);
}

}  // namespace

std::array<Tile, 4> Program::randint4x(const Operand& seed, const Tile& offset, Loc loc) {
  return randomWords("randint4x", seed, offset, loc);
}

Tile Program::randint(const Operand& seed, const Tile& offset, Loc loc) {
  return randomWords("randint", seed, offset, loc)[0];
}

Tile Program::rand(const Operand& seed, const Tile& offset, Loc loc) {
  return uniform(randomWords("rand", seed, offset, loc)[0], loc);
}

// Box-Muller on the first two words, as Triton's randn (which drops the second normal).
Tile Program::randn(const Operand& seed, const Tile& offset, Loc loc) {
  std::array<Tile, 4> words = randomWords("randn", seed, offset, loc);
  Philox r(loc);
  Tile u1 = max(uniform(words[0], loc), r.at(1.0e-7)), u2 = uniform(words[1], loc);
  Tile radius = (u1.log(loc) * r.at(-2.0)).sqrt(loc);
  return radius * r.at((u2 * r.at(6.283185307179586)).cos(loc));
}

std::array<Tile, 4> Program::randomWords(std::string_view op, const Operand& seed, const Tile& offset, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  DType t = offset.dtype();
  if (!isInteger(t))
    fail(l, op, fmt::format("the offset must be an integer tile (i32 as in Triton, or i64 for more than 2^32 draws), "
                            "got {}", dtypeName(t)));
  Philox r(loc);
  // Triton's randint4x: the counter's first word is offset.to(tl.uint32) (a narrower signed
  // offset sign-extends, as the cast to i64 does), its second the high word of a 64-bit offset.
  Tile wide = offset.cast(i64, loc);
  std::optional<Tile> c1;
  if (dtypeBytes(t) == 8) c1 = r.high(wide);
  std::array<Tile, 4> words = r(seedTile(op, seed, l, loc), r.word(wide), c1);
  for (Tile& w : words) w = w.cast(i32, loc);  // wraps: the same 32 bits
  return words;
}

// The seed as a rank-0 i64 tile: its 64 bits are the key.
Tile Program::seedTile(std::string_view op, const Operand& seed, const SourceLoc& l, Loc loc) {
  if (seed.index) return scalar(*seed.index, i64, loc);
  if (!seed.tile) {
    if (std::trunc(seed.number) != seed.number || std::fabs(seed.number) >= 0x1p63)
      fail(l, op, fmt::format("the seed {} is not an integer of i64's range", seed.number));
    return full({}, seed.number, i64, loc);
  }
  const Tile& s = *seed.tile;
  if (s.rank() != 0 || isFloat(s.dtype()) || s.dtype() == DType::boolean)
    fail(l, op, fmt::format("the seed must be a number, an Index or a rank-0 integer tile, got a {} tile of rank {}",
                            dtypeName(s.dtype()), s.rank()));
  return s.cast(i64, loc);
}

}  // namespace tj
