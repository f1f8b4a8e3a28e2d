#include "devices/cpu/block_copy.hpp"

#include <algorithm>
#include <cstring>

namespace tj::cpu {

namespace {

// One row of a block (all axes but the last fixed): where it starts in the tensor, and the
// part of it [lo, hi) that lies inside (empty when an outer coordinate is outside).
struct RowSpan {
  int64_t offset = 0;  // in elements, of the row's first element (inside or not)
  int64_t lo = 0, hi = 0;
};

RowSpan rowSpan(const TensorDesc& t, int32_t rank, const int64_t* firsts, const int64_t* block, const int64_t* outer) {
  RowSpan span;
  int last = rank - 1;
  for (int d = 0; d < last; ++d) {
    int64_t c = firsts[d] + outer[d];
    if (c < 0 || c >= t.shape[d]) return span;
    span.offset += c * t.strides[d];
  }
  span.offset += firsts[last] * t.strides[last];
  span.lo = std::clamp<int64_t>(-firsts[last], 0, block[last]);
  span.hi = std::clamp<int64_t>(t.shape[last] - firsts[last], span.lo, block[last]);
  return span;
}

// Calls row(span, rowIndex) for each row of the block, in row-major order.
template <typename Row>
void forEachRow(const TensorDesc& t, int32_t rank, const int64_t* firsts, const int64_t* block, Row row) {
  int64_t outer[kMaxRank] = {};
  int64_t rows = 1;
  for (int d = 0; d + 1 < rank; ++d) rows *= block[d];
  for (int64_t r = 0; r < rows; ++r) {
    row(rowSpan(t, rank, firsts, block, outer), r);
    for (int d = rank - 2; d >= 0 && ++outer[d] == block[d]; --d) outer[d] = 0;
  }
}

template <typename Element>
void fill(char* at, int64_t count, uint64_t bits) {
  Element value;
  std::memcpy(&value, &bits, sizeof value);  // the low bytes: little-endian
  std::fill_n(reinterpret_cast<Element*>(at), count, value);
}

void fillElements(char* at, int64_t count, int32_t bytes, uint64_t bits) {
  switch (bytes) {
    case 1: return fill<uint8_t>(at, count, bits);
    case 2: return fill<uint16_t>(at, count, bits);
    case 4: return fill<uint32_t>(at, count, bits);
    default: return fill<uint64_t>(at, count, bits);
  }
}

// `count` elements, toStride and fromStride elements apart.
void copyElements(char* to, const char* from, int64_t count, int32_t bytes, int64_t toStride, int64_t fromStride) {
  if (toStride == 1 && fromStride == 1) {
    std::memcpy(to, from, static_cast<size_t>(count * bytes));
    return;
  }
  for (int64_t i = 0; i < count; ++i) std::memcpy(to + i * toStride * bytes, from + i * fromStride * bytes, size_t(bytes));
}

}  // namespace

void gatherBlock(const TensorDesc* tensor, int32_t rank, int32_t elementBytes, const int64_t* firsts,
                 const int64_t* block, uint64_t fillBits, void* staging) {
  int64_t width = block[rank - 1], stride = tensor->strides[rank - 1];
  forEachRow(*tensor, rank, firsts, block, [&](const RowSpan& span, int64_t r) {
    char* out = static_cast<char*>(staging) + r * width * elementBytes;
    fillElements(out, span.lo, elementBytes, fillBits);
    if (span.hi > span.lo) {
      const char* in = static_cast<const char*>(tensor->data) + (span.offset + span.lo * stride) * elementBytes;
      copyElements(out + span.lo * elementBytes, in, span.hi - span.lo, elementBytes, 1, stride);
    }
    fillElements(out + span.hi * elementBytes, width - span.hi, elementBytes, fillBits);
  });
}

void scatterBlock(const TensorDesc* tensor, int32_t rank, int32_t elementBytes, const int64_t* firsts,
                  const int64_t* block, const void* staging) {
  int64_t width = block[rank - 1], stride = tensor->strides[rank - 1];
  forEachRow(*tensor, rank, firsts, block, [&](const RowSpan& span, int64_t r) {
    if (span.hi == span.lo) return;
    const char* in = static_cast<const char*>(staging) + (r * width + span.lo) * elementBytes;
    char* out = static_cast<char*>(tensor->data) + (span.offset + span.lo * stride) * elementBytes;
    copyElements(out, in, span.hi - span.lo, elementBytes, stride, 1);
  });
}

}  // namespace tj::cpu
