#include "devices/interp/values.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

namespace tj::interp {

Tile::Tile(ir::Type t) : type(std::move(t)) {
  auto n = static_cast<size_t>(type.numel());
  if (isFloat()) floats.resize(n);
  else ints.resize(n);
}

void normalize(Tile& t) {
  DType d = t.type.dtype;
  if (d == DType::f64 || d == DType::i64) return;
  if (t.isFloat()) {
    for (double& v : t.floats) v = roundToFloat(d, v);
  } else {
    for (int64_t& v : t.ints) v = wrapToInt(d, v);
  }
}

namespace {

template <typename T>
T loadAs(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename T>
void storeAs(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

// int64 -> double rounded to odd: truncate to 53 bits and set the last bit when
// anything was dropped. A later round-to-nearest to 24 bits or fewer then gives
// the same result as rounding the integer directly (no double rounding).
double roundToOddDouble(DType from, int64_t v) {
  bool negative = v < 0 && !isUnsigned(from);
  uint64_t mag = negative ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  int dropped = std::bit_width(mag) - std::numeric_limits<double>::digits;
  if (dropped > 0) {
    bool inexact = (mag & ((uint64_t{1} << dropped) - 1)) != 0;
    mag = (mag >> dropped) | inexact;
  }
  double d = std::ldexp(static_cast<double>(mag), std::max(dropped, 0));
  return negative ? -d : d;
}

std::string numberText(DType t, double v) {
  if (std::isnan(v)) return "nan";
  char buf[64];
  // Narrow floats are exact in float, whose shortest form is the short one.
  auto r = t == DType::f64 ? std::to_chars(buf, buf + sizeof buf, v)
                           : std::to_chars(buf, buf + sizeof buf, static_cast<float>(v));
  return std::string(buf, r.ptr);
}

}  // namespace

double intToFloat(DType from, DType to, int64_t v) {
  if (to == DType::f64) return intToDouble(from, v);
  return roundToFloat(to, roundToOddDouble(from, v));
}

double readFloat(const std::byte* p, DType t) {
  switch (t) {
    case DType::f32: return loadAs<float>(p);
    case DType::f64: return loadAs<double>(p);
    case DType::f16: return halfToFloat(loadAs<uint16_t>(p));
    case DType::bf16: return bf16ToFloat(loadAs<uint16_t>(p));
    case DType::f8e4m3: case DType::f8e5m2: return f8ToFloat(t, loadAs<uint8_t>(p));
    default: throw InternalError("interpreter", std::string(dtypeName(t)) + " read as a float");
  }
}

int64_t readInt(const std::byte* p, DType t) {
  if (isFloat(t)) throw InternalError("interpreter", std::string(dtypeName(t)) + " read as an integer");
  return loadInt(p, t);
}

void writeFloat(std::byte* p, DType t, double v) {
  switch (t) {
    case DType::f32: return storeAs(p, static_cast<float>(v));
    case DType::f64: return storeAs(p, v);
    case DType::f16: return storeAs(p, floatToHalf(static_cast<float>(v)));
    case DType::bf16: return storeAs(p, floatToBF16(static_cast<float>(v)));
    case DType::f8e4m3: case DType::f8e5m2: return storeAs(p, floatToF8(t, static_cast<float>(v)));
    default: throw InternalError("interpreter", std::string(dtypeName(t)) + " written as a float");
  }
}

void writeInt(std::byte* p, DType t, int64_t v) {
  if (isFloat(t)) throw InternalError("interpreter", std::string(dtypeName(t)) + " written as an integer");
  storeInt(p, t, v);
}

std::string tileText(const Tile& t) {
  auto element = [&](size_t i) {
    if (t.isFloat()) return numberText(t.type.dtype, t.floats[i]);
    return t.type.dtype == DType::u64 ? std::to_string(static_cast<uint64_t>(t.ints[i])) : std::to_string(t.ints[i]);
  };
  if (t.type.isScalar()) return element(0);
  std::string out;
  size_t flat = 0;
  // Recurses over axes while `flat` walks the elements in row-major order.
  auto emit = [&](auto& self, size_t axis) -> void {
    out += '[';
    for (int64_t i = 0; i < t.type.shape[axis]; ++i) {
      if (i) out += ", ";
      if (axis + 1 == t.type.shape.size()) out += element(flat++);
      else self(self, axis + 1);
    }
    out += ']';
  };
  emit(emit, 0);
  return out;
}

Tile decodeTile(const ir::Type& type, const std::byte* data) {
  Tile t(type);
  size_t step = static_cast<size_t>(dtypeBytes(type.dtype));
  if (t.isFloat()) {
    for (size_t i = 0; i < t.floats.size(); ++i) t.floats[i] = readFloat(data + i * step, type.dtype);
  } else {
    for (size_t i = 0; i < t.ints.size(); ++i) t.ints[i] = readInt(data + i * step, type.dtype);
  }
  return t;
}

std::string printLine(std::string_view label, std::span<const int64_t> programId, const Tile& t) {
  std::string line = "[";
  line += label;
  line += "] program (";
  for (size_t d = 0; d < programId.size(); ++d) line += (d ? ", " : "") + std::to_string(programId[d]);
  return line + "): " + tileText(t);
}

}  // namespace tj::interp
