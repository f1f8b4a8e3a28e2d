#include "dsl/tensor.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <new>
#include <numeric>
#include <random>

#include <spdlog/spdlog.h>

#include "devices/device.hpp"
#include "dsl/tensor_storage.hpp"
#include "ir/ir.hpp"

namespace tj {

namespace {


std::string shapeText(const Shape& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

void checkShape(const Shape& shape, const char* op, std::source_location loc) {
  if (shape.size() > 4)
    fail(SourceLoc::from(loc), op, "rank " + std::to_string(shape.size()) + " of shape " + shapeText(shape) +
                                       " is above the supported 4");
  for (int64_t d : shape)
    if (d < 0) fail(SourceLoc::from(loc), op, "negative size in shape " + shapeText(shape));
}

// A shape with a zero size has no elements, whatever its other sizes.
bool hasZeroSize(const Shape& shape) { return std::find(shape.begin(), shape.end(), 0) != shape.end(); }

// Elements of a tensor's shape, which storageBytes checked when it was made.
int64_t elementCount(const Shape& shape) {
  return hasZeroSize(shape) ? 0 : std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

// The bytes of a tensor of `shape`, or an Error when its element or byte count
// does not fit in int64 (a wrapped count would allocate too little).
int64_t storageBytes(const Shape& shape, DType dtype, const char* op, std::source_location loc) {
  if (hasZeroSize(shape)) return 0;
  int64_t n = 1, bytes = 0;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      fail(SourceLoc::from(loc), op, "shape " + shapeText(shape) + " has more elements than int64 can count (overflow)");
  if (__builtin_mul_overflow(n, int64_t{dtypeBytes(dtype)}, &bytes))
    fail(SourceLoc::from(loc), op,
         "shape " + shapeText(shape) + " has " + std::to_string(n) + " elements of " + std::string(dtypeName(dtype)) +
             ", more bytes than int64 can count (overflow)");
  return bytes;
}

double readElement(const std::byte* p, DType t) {
  switch (t) {
    case DType::f32: { float v; std::memcpy(&v, p, 4); return v; }
    case DType::f64: { double v; std::memcpy(&v, p, 8); return v; }
    case DType::f16: { uint16_t v; std::memcpy(&v, p, 2); return halfToFloat(v); }
    case DType::bf16: { uint16_t v; std::memcpy(&v, p, 2); return bf16ToFloat(v); }
    case DType::f8e4m3: case DType::f8e5m2: return f8ToFloat(t, std::to_integer<uint8_t>(*p));
    default: return intToDouble(t, loadInt(p, t));
  }
}

void writeElement(std::byte* p, DType t, double v) {
  switch (t) {
    case DType::f32: { float f = static_cast<float>(v); std::memcpy(p, &f, 4); return; }
    case DType::f64: std::memcpy(p, &v, 8); return;
    case DType::f16: { uint16_t h = floatToHalf(static_cast<float>(roundToFloat(t, v))); std::memcpy(p, &h, 2); return; }
    case DType::bf16: { uint16_t h = floatToBF16(static_cast<float>(roundToFloat(t, v))); std::memcpy(p, &h, 2); return; }
    case DType::f8e4m3: case DType::f8e5m2: *p = std::byte{floatToF8(t, static_cast<float>(roundToFloat(t, v)))}; return;
    default: storeInt(p, t, saturateToInt(t, v));  // as the IR's cast: truncate, NaN to 0, saturate
  }
}

std::string numberText(double v, DType t) {
  if (!isFloat(t)) return fmt::format("{:.0f}", v);
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = t == DType::f64 ? std::to_chars(buf, buf + sizeof buf, v)
                           : std::to_chars(buf, buf + sizeof buf, static_cast<float>(v));
  return std::string(buf, r.ptr);
}

}  // namespace

Tensor::Tensor(std::shared_ptr<Storage> storage, DType dtype, Shape shape, Shape strides, int64_t offset)
    : storage_(std::move(storage)), dtype_(dtype), shape_(std::move(shape)), strides_(std::move(strides)),
      offset_(offset) {}

void Tensor::checkDefined(std::string_view op, const SourceLoc& loc) const {
  if (!defined()) fail(loc, op, "Tensor is empty (default-constructed): assign it a tensor first");
}

Tensor Tensor::empty(const Shape& shape, DType dtype, Loc loc) {
  checkShape(shape, "Tensor::empty", loc);
  int64_t bytes = storageBytes(shape, dtype, "Tensor::empty", loc);
  std::shared_ptr<Storage> storage;
  try {
    storage = std::make_shared<Storage>(static_cast<size_t>(bytes));
  } catch (const std::bad_alloc&) {
    fail(SourceLoc::from(loc), "Tensor::empty",
         "out of memory: shape " + shapeText(shape) + " of " + std::string(dtypeName(dtype)) + " needs " +
             std::to_string(bytes) + " bytes");
  }
  storage->written = std::make_shared<WrittenElements>(
      WrittenElements{storage->bytes, dtypeBytes(dtype), std::vector<bool>(static_cast<size_t>(elementCount(shape)))});
  return Tensor(std::move(storage), dtype, shape, ir::rowMajorStrides(shape), 0);
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, Loc loc) { return full(shape, 0.0, dtype, loc); }

Tensor Tensor::full(const Shape& shape, double value, DType dtype, Loc loc) {
  Tensor t = empty(shape, dtype, loc);
  t.storage_->written.reset();
  const size_t total = static_cast<size_t>(t.numel()) * static_cast<size_t>(dtypeBytes(dtype));
  if (total == 0) return t;
  // The first element, then copies of what is filled, doubling (a gradient's zeros took 80 ns an element).
  std::byte* bytes = t.storage_->bytes;
  writeElement(bytes, dtype, value);
  for (size_t filled = static_cast<size_t>(dtypeBytes(dtype)); filled < total; filled *= 2)
    std::memcpy(bytes + filled, bytes, std::min(filled, total - filled));
  return t;
}

Tensor Tensor::from(const Shape& shape, const std::vector<double>& values, DType dtype, Loc loc) {
  Tensor t = empty(shape, dtype, loc);
  t.storage_->written.reset();
  if (static_cast<int64_t>(values.size()) != t.numel())
    fail(SourceLoc::from(loc), "Tensor::from",
         std::to_string(values.size()) + " values for shape " + shapeText(shape) + " of " +
             std::to_string(t.numel()) + " elements");
  for (int64_t i = 0, n = t.numel(); i < n; ++i) t.setItem(i, values[static_cast<size_t>(i)]);
  return t;
}

Tensor Tensor::random(const Shape& shape, uint64_t seed, DType dtype, double lo, double hi, Loc loc) {
  if (!(lo <= hi))
    fail(SourceLoc::from(loc), "Tensor::random", "empty range [" + std::to_string(lo) + ", " + std::to_string(hi) + ")");
  Tensor t = empty(shape, dtype, loc);
  t.storage_->written.reset();
  std::mt19937_64 gen(seed);
  for (int64_t i = 0, n = t.numel(); i < n; ++i) {
    double u = static_cast<double>(gen() >> 11) * 0x1.0p-53;
    double v = isFloat(dtype) ? lo + (hi - lo) * u : std::floor(lo + (hi - lo + 1) * u);
    t.setItem(i, dtype == DType::boolean ? (gen() & 1) : v);
  }
  return t;
}

DType Tensor::dtype(Loc loc) const {
  checkDefined("Tensor::dtype", SourceLoc::from(loc));
  return dtype_;
}

int Tensor::rank(Loc loc) const {
  checkDefined("Tensor::rank", SourceLoc::from(loc));
  return static_cast<int>(shape_.size());
}

const Shape& Tensor::shape(Loc loc) const {
  checkDefined("Tensor::shape", SourceLoc::from(loc));
  return shape_;
}

const Shape& Tensor::strides(Loc loc) const {
  checkDefined("Tensor::strides", SourceLoc::from(loc));
  return strides_;
}

int64_t Tensor::dim(int axis, Loc loc) const {
  checkDefined("Tensor::dim", SourceLoc::from(loc));
  if (axis < 0 || axis >= rank(loc))
    fail(SourceLoc::from(loc), "Tensor::dim",
         "axis " + std::to_string(axis) + " out of range for shape " + shapeText(shape_));
  return shape_[static_cast<size_t>(axis)];
}

int64_t Tensor::numel(Loc loc) const {
  checkDefined("Tensor::numel", SourceLoc::from(loc));
  return elementCount(shape_);
}

void* Tensor::data(Loc loc) const {
  checkDefined("Tensor::data", SourceLoc::from(loc));
  storage_->written.reset();  // the caller may write any element
  return hostBytes(true) + offset_ * dtypeBytes(dtype_);
}

std::byte* Tensor::hostBytes(bool willWrite) const {
  if (storage_->residency) storage_->residency->toHost(willWrite);
  return storage_->bytes;
}

Tensor Tensor::on(const std::string& device, Loc loc) const {
  checkDefined("Tensor::on", SourceLoc::from(loc));
  Device& d = selectDevice(device);
  if (storage_->residency && d.holds(storage_->residency->copy())) return *this;
  std::string why;
  std::unique_ptr<DeviceCopy> copy = d.copyOf(storage_->size, why);
  if (!copy) {
    spdlog::warn("tilejit: {}: Tensor::on(\"{}\") keeps the tensor on the host: {}", SourceLoc::from(loc).str(),
                 device, why);
    return host();
  }
  // Checked once the device makes copies: on("cpu") and the like keep any tensor on the host.
  if (storage_->residency && storage_->residency->home() == Residency::Home::device)
    fail(SourceLoc::from(loc), "Tensor::on",
         fmt::format("the tensor's values live in {}'s memory, which another library owns (a DLPack import), so "
                     "they cannot move to {}: take contiguous() for a copy to move",
                     storage_->residency->copy().address().device, device));
  if (int exports = storage_->deviceExports; exports > 0)
    fail(SourceLoc::from(loc), "Tensor::on",
         fmt::format("the tensor's copy on {} is handed out through DLPack ({} export{} not yet released by its "
                     "deleter), so it cannot move to {}",
                     storage_->residency->copy().address().device, exports, exports == 1 ? "" : "s", device));
  hostBytes(false);  // a copy on another device hands its newer bytes over first
  storage_->residency = std::make_unique<Residency>(std::span(storage_->bytes, storage_->size), std::move(copy));
  storage_->residency->toDevice();
  return *this;
}

const Tensor& Tensor::host(Loc loc) const {
  checkDefined("Tensor::host", SourceLoc::from(loc));
  hostBytes(false);
  return *this;
}

TensorArg Tensor::launchArg(Loc loc) const {
  checkDefined("launch", SourceLoc::from(loc));
  if (storage_->written && storage_->written->all) storage_->written.reset();
  return {storage_->bytes + offset_ * dtypeBytes(dtype_), dtype_, shape_, strides_, storage_->residency.get(),
          storage_->written, storage_->readOnly};
}

Tensor Tensor::permute(const std::vector<int>& perm, Loc loc) const {
  checkDefined("Tensor::permute", SourceLoc::from(loc));
  std::vector<int> sorted(perm);
  std::sort(sorted.begin(), sorted.end());
  bool isPermutation = sorted.size() == shape_.size();
  for (size_t i = 0; isPermutation && i < sorted.size(); ++i) isPermutation = sorted[i] == static_cast<int>(i);
  if (!isPermutation)
      fail(SourceLoc::from(loc), "Tensor::permute", "not a permutation of the " + std::to_string(rank()) +
                                                         " axes of shape " + shapeText(shape_));
  Shape shape, strides;
  for (int p : perm) {
    shape.push_back(shape_[static_cast<size_t>(p)]);
    strides.push_back(strides_[static_cast<size_t>(p)]);
  }
  return Tensor(storage_, dtype_, shape, strides, offset_);
}

Tensor Tensor::transpose(int a, int b, Loc loc) const {
  checkDefined("Tensor::transpose", SourceLoc::from(loc));
  std::vector<int> perm(shape_.size());
  std::iota(perm.begin(), perm.end(), 0);
  if (a < 0 || b < 0 || a >= rank() || b >= rank())
    fail(SourceLoc::from(loc), "Tensor::transpose",
         "axes " + std::to_string(a) + ", " + std::to_string(b) + " out of range for shape " + shapeText(shape_));
  std::swap(perm[static_cast<size_t>(a)], perm[static_cast<size_t>(b)]);
  return permute(perm, loc);
}

Tensor Tensor::contiguous(Loc loc) const {
  checkDefined("Tensor::contiguous", SourceLoc::from(loc));
  Tensor t = empty(shape_, dtype_, loc);
  int bytes = dtypeBytes(dtype_);
  const std::byte* from = hostBytes(false);
  // Each element's bytes, and whether anything wrote it (for the sanitizer).
  const std::shared_ptr<WrittenElements>& written = storage_->written;
  std::vector<bool>& copied = t.storage_->written->bits;
  for (int64_t i = 0, n = numel(); i < n; ++i) {
    int64_t at = elementOffset(i, "Tensor::contiguous", loc);
    std::memcpy(t.storage_->bytes + i * bytes, from + at * bytes, static_cast<size_t>(bytes));
    copied[static_cast<size_t>(i)] = !written || written->all || written->bits[static_cast<size_t>(at)];
  }
  return t;
}

bool Tensor::is_contiguous(Loc loc) const {
  checkDefined("Tensor::is_contiguous", SourceLoc::from(loc));
  int64_t expected = 1;
  for (size_t d = shape_.size(); d-- > 0;) {
    if (shape_[d] != 1 && strides_[d] != expected) return hasZeroSize(shape_);
    expected *= shape_[d];
  }
  return true;
}

Tensor Tensor::reshape(const Shape& shape, Loc loc) const {
  checkDefined("Tensor::reshape", SourceLoc::from(loc));
  checkShape(shape, "Tensor::reshape", loc);
  if (elementCount(shape) != numel(loc))
    fail(SourceLoc::from(loc), "Tensor::reshape",
         fmt::format("shape {} has {} elements, the tensor's {} has {}", shapeText(shape), elementCount(shape),
                     shapeText(shape_), numel(loc)));
  if (!is_contiguous(loc))
    fail(SourceLoc::from(loc), "Tensor::reshape",
         fmt::format("the {} view with strides {} is not row-major: take contiguous() first", shapeText(shape_),
                     shapeText(strides_)));
  return Tensor(storage_, dtype_, shape, ir::rowMajorStrides(shape), offset_);
}

int64_t Tensor::elementOffset(int64_t flat, const char* op, Loc loc) const {
  checkDefined(op, SourceLoc::from(loc));
  if (flat < 0 || flat >= numel())
    fail(SourceLoc::from(loc), op,
         fmt::format("position {} is outside the {} elements of the {}{} tensor", flat, numel(), dtypeName(dtype_),
                     shapeText(shape_)));
  int64_t off = offset_;
  for (size_t d = shape_.size(); d-- > 0;) {
    off += (flat % shape_[d]) * strides_[d];
    flat /= shape_[d];
  }
  return off;
}

double Tensor::item(int64_t flat, Loc loc) const {
  int64_t at = elementOffset(flat, "Tensor::item", loc);
  return readElement(hostBytes(false) + at * dtypeBytes(dtype_), dtype_);
}

void Tensor::setItem(int64_t flat, double value, Loc loc) {
  int64_t at = elementOffset(flat, "Tensor::setItem", loc);
  if (storage_->readOnly)
    fail(SourceLoc::from(loc), "Tensor::setItem", "the tensor is read-only (its DLPack producer marked it so)");
  writeElement(hostBytes(true) + at * dtypeBytes(dtype_), dtype_, value);
  if (const auto& written = storage_->written) written->bits.at(static_cast<size_t>(at)) = true;
  if (storage_->residency) storage_->residency->publish();
}

bool Tensor::readOnly(Loc loc) const {
  checkDefined("Tensor::readOnly", SourceLoc::from(loc));
  return storage_->readOnly;
}

std::vector<double> Tensor::values(Loc loc) const {
  checkDefined("Tensor::values", SourceLoc::from(loc));
  std::vector<double> v(static_cast<size_t>(numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = item(static_cast<int64_t>(i), loc);
  return v;
}

std::string Tensor::text(Loc loc) const {
  checkDefined("Tensor::text", SourceLoc::from(loc));
  if (shape_.empty()) return numberText(item(0, loc), dtype_);
  std::string out;
  int64_t flat = 0;
  // Recursive lambda over axes; `flat` walks elements in row-major order.
  auto emit = [&](auto& self, size_t axis) -> void {
    out += '[';
    for (int64_t i = 0; i < shape_[axis]; ++i) {
      if (i) out += ", ";
      if (axis + 1 == shape_.size()) out += numberText(item(flat++, loc), dtype_);
      else self(self, axis + 1);
    }
    out += ']';
  };
  emit(emit, 0);
  return out;
}

bool Tensor::sameView(const Tensor& o, Loc loc) const {
  checkDefined("Tensor::sameView", SourceLoc::from(loc));
  o.checkDefined("Tensor::sameView", SourceLoc::from(loc));
  return storage_ == o.storage_ && offset_ == o.offset_ && dtype_ == o.dtype_ && shape_ == o.shape_ &&
         strides_ == o.strides_;
}

bool Tensor::sharesStorage(const Tensor& o, Loc loc) const {
  checkDefined("Tensor::sharesStorage", SourceLoc::from(loc));
  o.checkDefined("Tensor::sharesStorage", SourceLoc::from(loc));
  return storage_ == o.storage_;
}

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace tj
