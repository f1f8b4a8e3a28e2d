// DLPack: other libraries' host tensors as tilejit tensors without a copy, and tilejit's as
// theirs (the CUDA side is in tests/fake_cuda/test_fake_cuda.cpp).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "dsl/tilejit.hpp"
#include "samples/harness.hpp"
#include "tests/dlpack_producer.hpp"
#include "tests/support.hpp"

namespace tj {
namespace {

using test::DLPackProducer;

constexpr DLDataType kF32{kDLFloat, 32, 1};

// out = x * 2 + 1, in blocks of [4, 8]: shapes that are not multiples of them mask the edges.
const auto& affine() {
  static auto k = kernel("dlpack_affine", [](Program& p, const Tensor& x, const Tensor& out) {
    Index i = p.id(0), j = p.id(1);
    Tile v = p.read(x, {4, 8}).at({i, j});
    p.write(out, {4, 8}).put(v * 2.0 + 1.0, {i, j});
  });
  return k;
}

std::vector<int64_t> gridFor(const Tensor& t) { return {cdiv(t.dim(0), 4), cdiv(t.dim(1), 8)}; }

// The error of launching affine on the CPU with `out` as its output, and the line it names.
std::pair<std::string, int> storingInto(const Tensor& out, const Tensor& x) {
  int line = 0;
  std::string error = test::errorOf([&] { line = __LINE__; affine().launch(gridFor(x), x, out, {.device = "cpu"}); });
  return {error, line};
}

// Random floats with an inf, a nan and a denormal among them.
std::vector<float> randomFloats(size_t n, uint64_t seed) {
  std::vector<double> v = Tensor::random({int64_t(n)}, seed).values();
  std::vector<float> f(v.begin(), v.end());
  f[0] = std::numeric_limits<float>::infinity();
  f[1] = std::numeric_limits<float>::quiet_NaN();
  f[2] = std::numeric_limits<float>::denorm_min();
  return f;
}

// x * 2 + 1 in f32, nan compared as equal.
void checkAffine(const std::vector<double>& got, const std::vector<double>& x) {
  REQUIRE(got.size() == x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    CAPTURE(i);
    float want = float(x[i]) * 2.0f + 1.0f;
    if (std::isnan(want)) CHECK(std::isnan(got[i]));
    else CHECK(got[i] == double(want));
  }
}

}  // namespace

TEST_CASE("dlpack: a producer's f32 arrays go into a kernel and back without a copy, on each host device") {
  for (const char* device : {"cpu", "interp"}) {
    CAPTURE(device);
    std::vector<float> in = randomFloats(5 * 7, 1), out(5 * 7, -777.0f);
    DLPackProducer inProducer(in.data(), kF32, {5, 7}, {}), outProducer(out.data(), kF32, {5, 7}, {7, 1});
    {
      Tensor x = Tensor::fromDLPack(inProducer.versioned()), y = Tensor::fromDLPack(outProducer.legacy());
      CHECK(x.data() == in.data());  // the producer's memory, not a copy
      CHECK(y.data() == out.data());
      CHECK(x.shape() == Shape{5, 7});
      CHECK(x.strides() == Shape{7, 1});
      CHECK(affine().launch(gridFor(x), x, y, {.device = device}) == device);
      CHECK(inProducer.deleted() == 0);  // the tensors still hold them
    }
    CHECK(inProducer.deleted() == 1);
    CHECK(outProducer.deleted() == 1);
    std::vector<double> got(out.begin(), out.end()), x(in.begin(), in.end());
    checkAffine(got, x);  // written where the producer reads
  }
}

TEST_CASE("dlpack: strided, transposed and offset views, rank 0 to 4 and empty tensors") {
  // Elements [1:8, 2:7] of a [9, 8] array, transposed: shape [5, 7], strides [1, 8]; the inf,
  // nan and denormal moved inside the view.
  std::vector<float> storage = randomFloats(9 * 8, 2);
  std::swap_ranges(storage.begin(), storage.begin() + 3, storage.begin() + 1 * 8 + 2);
  DLPackProducer producer(storage.data(), kF32, {5, 7}, {1, 8}, (1 * 8 + 2) * sizeof(float));
  Tensor x = Tensor::fromDLPack(producer.versioned());
  std::vector<double> values = x.values();
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t c = 0; c < 7; ++c) {
      double want = storage[size_t((1 + c) * 8 + 2 + r)], got = values[size_t(r * 7 + c)];
      CHECK((got == want || (std::isnan(got) && std::isnan(want))));
    }
  Tensor y = samples::poisoned({5, 7});
  CHECK(affine().launch(gridFor(x), x, y, {.device = "cpu"}) == "cpu");
  checkAffine(y.values(), values);

  std::vector<float> one{42.0f};
  DLPackProducer scalar(one.data(), kF32, {}, {});
  CHECK(Tensor::fromDLPack(scalar.versioned()).item(0) == 42.0);
  DLPackProducer rank4(storage.data(), kF32, {2, 3, 2, 2}, {});  // null strides: row-major
  Tensor r4 = Tensor::fromDLPack(rank4.legacy());
  CHECK(r4.strides() == Shape{12, 4, 2, 1});
  CHECK(r4.item(23) == double(storage[23]));
  DLPackProducer empty(nullptr, kF32, {3, 0}, {});
  CHECK(Tensor::fromDLPack(empty.versioned()).numel() == 0);
}

TEST_CASE("dlpack: every tilejit dtype goes out and back under DLPack's codes") {
  struct Expect {
    DType dtype;
    uint8_t code, bits;
  };
  for (Expect e : {Expect{f32, kDLFloat, 32}, {f64, kDLFloat, 64}, {f16, kDLFloat, 16}, {bf16, kDLBfloat, 16},
                   {i8, kDLInt, 8}, {i32, kDLInt, 32}, {i64, kDLInt, 64}, {boolean, kDLBool, 8}, {u8, kDLUInt, 8},
                   {u16, kDLUInt, 16}, {u32, kDLUInt, 32}, {u64, kDLUInt, 64}, {f8e4m3, kDLFloat8_e4m3fn, 8},
                   {f8e5m2, kDLFloat8_e5m2, 8}}) {
    CAPTURE(dtypeName(e.dtype));
    Tensor t = Tensor::from({2, 3}, {1, 0, 2, 1, 1, 0}, e.dtype).transpose();
    DLManagedTensorVersioned* out = t.toDLPack();
    CHECK(out->version.major == 1);
    CHECK(out->dl_tensor.dtype.code == e.code);
    CHECK(out->dl_tensor.dtype.bits == e.bits);
    CHECK(out->dl_tensor.dtype.lanes == 1);
    CHECK(out->dl_tensor.device.device_type == kDLCPU);
    CHECK(out->dl_tensor.data == t.data());
    CHECK(Shape(out->dl_tensor.strides, out->dl_tensor.strides + 2) == Shape{1, 3});
    Tensor back = Tensor::fromDLPack(out);  // takes `out` over
    CHECK(back.dtype() == e.dtype);
    CHECK(back.data() == t.data());
    CHECK(back.values() == t.values());
  }
}

TEST_CASE("dlpack: an export keeps the storage alive until its deleter runs, once") {
  DLManagedTensor* legacy = nullptr;
  DLManagedTensorVersioned* versioned = nullptr;
  {
    Tensor t = Tensor::from({2, 2}, {1, 2, 3, 4});
    legacy = t.toDLPackLegacy();
    versioned = t.transpose().toDLPack();
  }
  CHECK(static_cast<float*>(legacy->dl_tensor.data)[3] == 4.0f);  // the tensor is gone, the storage is not
  CHECK(static_cast<float*>(versioned->dl_tensor.data)[1] == 2.0f);
  CHECK(versioned->flags == 0);
  legacy->deleter(legacy);
  versioned->deleter(versioned);  // ASan: nothing leaked, nothing freed twice

  // Views and copies of an import share one storage: the producer's deleter runs when the last goes.
  std::vector<float> data(6, 1.0f);
  DLPackProducer producer(data.data(), kF32, {2, 3}, {});
  Tensor view;
  {
    Tensor t = Tensor::fromDLPack(producer.versioned());
    view = t.transpose();
  }
  CHECK(producer.deleted() == 0);
  view = Tensor();
  CHECK(producer.deleted() == 1);
}

TEST_CASE("dlpack: a tensor a kernel computed on Vulkan is exported with its results") {
  if (!test::vulkanAvailable()) return;
  Tensor x = Tensor::random({5, 7}, 3).on("vulkan"), y = samples::poisoned({5, 7}).on("vulkan");
  CHECK(affine().launch(gridFor(x), x, y, {.device = "vulkan"}) == "vulkan");
  DLManagedTensorVersioned* out = y.toDLPack();
  CHECK(out->dl_tensor.device.device_type == kDLCPU);  // only CUDA and HIP memory goes out as a device's
  std::vector<double> got;
  for (int i = 0; i < 35; ++i) got.push_back(static_cast<float*>(out->dl_tensor.data)[i]);
  checkAffine(got, x.values());
  out->deleter(out);
}

TEST_CASE("dlpack: read-only imports are read, and a kernel or setItem writing one is an Error") {
  std::vector<float> in = randomFloats(5 * 7, 4);
  DLPackProducer producer(in.data(), kF32, {5, 7}, {});
  Tensor x = Tensor::fromDLPack(producer.versioned(DLPACK_FLAG_BITMASK_READ_ONLY));
  CHECK(x.readOnly());
  Tensor y = samples::poisoned({5, 7});
  CHECK(affine().launch(gridFor(x), x, y, {.device = "cpu"}) == "cpu");
  checkAffine(y.values(), x.values());
  auto [error, line] = storingInto(x, y);
  CHECK_MESSAGE(error.find(fmt::format("test_dlpack.cpp:{}: kernel 'dlpack_affine': tensor argument 1 ('t1') is "
                                       "read-only (its DLPack producer marked it so) but the kernel stores to it",
                                       line)) != std::string::npos,
                error);
  error = test::errorOf([&] { x.setItem(0, 1.0); });
  CHECK_MESSAGE(error.find("test_dlpack.cpp") != std::string::npos, error);
  CHECK_MESSAGE(error.find("Tensor::setItem: the tensor is read-only") != std::string::npos, error);
  DLManagedTensorVersioned* out = x.toDLPack();
  CHECK(out->flags == DLPACK_FLAG_BITMASK_READ_ONLY);
  out->deleter(out);
  error = test::errorOf([&] { x.toDLPackLegacy(); });  // DLPack 0.x cannot say read-only
  CHECK_MESSAGE(error.find("Tensor::toDLPackLegacy: the tensor is read-only") != std::string::npos, error);
}

TEST_CASE("dlpack: a broadcast view (stride 0) is read, and a kernel storing to one is an Error") {
  std::vector<float> row = randomFloats(7, 5);
  DLPackProducer producer(row.data(), kF32, {5, 7}, {0, 1});
  Tensor x = Tensor::fromDLPack(producer.versioned());
  Tensor y = samples::poisoned({5, 7});
  CHECK(affine().launch(gridFor(x), x, y, {.device = "cpu"}) == "cpu");
  checkAffine(y.values(), x.values());
  auto [error, line] = storingInto(x, y);
  CHECK_MESSAGE(error.find(fmt::format("test_dlpack.cpp:{}: kernel 'dlpack_affine': tensor argument 1 ('t1') has "
                                       "stride 0 on axis 0 of size 5 (a broadcast view), so the kernel's stores to it "
                                       "would overlap",
                                       line)) != std::string::npos,
                error);
  // A body run() traces says so at the run's line too.
  error = test::errorOf([&] {
    line = __LINE__; run({2}, [&](Program& p) { p.write(x, {4, 8}).put(p.zeros({4, 8}), {p.id(0), 0}); });
  });
  CHECK_MESSAGE(error.find(fmt::format("test_dlpack.cpp:{}: run: tensor argument 0", line)) != std::string::npos,
                error);
}

TEST_CASE("dlpack: a bad tensor is an Error naming what is wrong, and the caller keeps it") {
  std::vector<float> data(64, 1.0f);
  struct Case {
    const char* what;
    std::string expected;
    std::function<void(DLPackProducer&)> spoil;
    DLPackVersion version{1, 1};
  };
  auto* bytes = reinterpret_cast<std::byte*>(data.data());
  for (const Case& c : std::vector<Case>{
           {"another major version", "DLPack version 2.0: tilejit reads major version 1", {}, {2, 0}},
           {"a Vulkan device", "device type 7 (id 0) is not one tilejit reads",
            [](DLPackProducer& p) { p.tensor().device = {kDLVulkan, 0}; }},
           {"a negative stride", "negative stride -1 on axis 1 (strides [4, -1])",
            [](DLPackProducer& p) { p.tensor().strides[1] = -1; }},
           {"rank 5", "rank 5 is outside the supported 0 to 4", [](DLPackProducer& p) { p.tensor().ndim = 5; }},
           {"a vector dtype", "dtype float32x2 is not one of tilejit's",
            [](DLPackProducer& p) { p.tensor().dtype.lanes = 2; }},
           {"int16", "dtype int16 is not one of tilejit's", [](DLPackProducer& p) { p.tensor().dtype = {kDLInt, 16, 1}; }},
           {"complex64", "dtype complex64 is not one of tilejit's",
            [](DLPackProducer& p) { p.tensor().dtype = {kDLComplex, 64, 1}; }},
           {"a misaligned byte offset", "is not aligned to the 4-byte f32 elements",
            [](DLPackProducer& p) { p.tensor().byte_offset = 2; }},
           {"no data", "the tensor has elements but no data", [](DLPackProducer& p) { p.tensor().data = nullptr; }},
       }) {
    CAPTURE(std::string(c.what));
    DLPackProducer producer(bytes, kF32, {4, 4}, {4, 1});
    if (c.spoil) c.spoil(producer);
    DLManagedTensorVersioned* managed = producer.versioned(0, c.version);
    int line = 0;
    std::string error = test::errorOf([&] { line = __LINE__; Tensor::fromDLPack(managed); });
    CHECK_MESSAGE(error.find(fmt::format("test_dlpack.cpp:{}: Tensor::fromDLPack: ", line)) != std::string::npos, error);
    CHECK_MESSAGE(error.find(c.expected) != std::string::npos, error);
    CHECK(producer.deleted() == 0);  // still the caller's
    managed->deleter(managed);
  }
  CHECK(test::errorOf([] { Tensor::fromDLPack(static_cast<DLManagedTensor*>(nullptr)); })
            .find("null DLManagedTensor") != std::string::npos);
  std::string error = test::errorOf([&] {
    DLPackProducer onGpu(data.data(), kF32, {4}, {}, 0, {kDLCUDA, 0});
    DLManagedTensorVersioned* m = onGpu.versioned();
    try {
      Tensor::fromDLPack(m);
    } catch (...) {
      m->deleter(m);
      throw;
    }
  });
  if (!std::ranges::count(availableDevices(), "cuda"))  // no driver here: the reason, never a crash
    CHECK_MESSAGE(error.find("the tensor is in cuda:0's memory, which tilejit cannot use here: ") != std::string::npos,
                  error);
}

}  // namespace tj
