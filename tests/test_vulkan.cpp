// The Vulkan runtime on whatever Vulkan device this machine has (lavapipe in
// CI), running the hand-built SPIR-V kernels of test_spirv.cpp. Without
// Vulkan each case says why and passes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "devices/vulkan/vulkan_runtime.hpp"
#include "ir/dtype.hpp"
#include "ir/error.hpp"
#include "lower/amdgpu/amdgpu.hpp"
#include "lower/gpu/kernel_ir.hpp"
#include "lower/ptx/nvptx.hpp"
#include "lower/spirv/print_kernel_ir.hpp"
#include "lower/spirv/spirv_builder.hpp"
#include "tests/kernel_ir_simulator.hpp"
#include "tests/support.hpp"

namespace tj::spirvtest {
spirv::Words vectorAddKernel();     // c = a + b below n, 64 wide
spirv::Words workgroupSumKernel();  // one sum per 256 elements
spirv::Words subgroupKernel();      // subgroup sum + max + lane 0's value, 64 wide
}  // namespace tj::spirvtest

namespace tj::vktest {

namespace {

// The device under test ($TILEJIT_DEVICE when it names a Vulkan one, else
// vulkan:0), or null after saying why the case is skipped.
vk::Gpu* gpu() {
  if (!test::vulkanAvailable()) return nullptr;
  static std::unique_ptr<vk::Gpu> device = [] {
    const char* env = std::getenv("TILEJIT_DEVICE");
    std::string name = env && std::string(env).starts_with("vulkan") ? env : "vulkan";
    return std::make_unique<vk::Gpu>(vk::deviceIndex(name));
  }();
  return device.get();
}

std::vector<float> randomFloats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

uint32_t cdiv(size_t n, uint32_t d) { return static_cast<uint32_t>((n + d - 1) / d); }

std::span<const std::byte> bytesOf(const uint32_t& value) { return std::as_bytes(std::span(&value, 1)); }

// The kernel's tree order exactly: 256 values (zero past the end), halved
// by strides 128, 64, ..., 1.
float treeSum(const std::vector<float>& in, size_t begin) {
  float s[256];
  for (size_t i = 0; i < 256; ++i) s[i] = begin + i < in.size() ? in[begin + i] : 0.0f;
  for (size_t stride = 128; stride > 0; stride /= 2)
    for (size_t i = 0; i < stride; ++i) s[i] += s[i + stride];
  return s[0];
}

}  // namespace

TEST_CASE("vulkan: device names parse to indices") {
  CHECK(vk::deviceIndex("vulkan") == 0);
  CHECK(vk::deviceIndex("vulkan:3") == 3);
  CHECK_THROWS_AS(vk::deviceIndex("vulkan:"), Error);
  CHECK_THROWS_AS(vk::deviceIndex("vulkan:x"), Error);
  CHECK_THROWS_AS(vk::deviceIndex("vulkanic"), Error);
}

TEST_CASE("vulkan: devices are listed with their limits and features") {
  if (!gpu()) return;
  std::vector<vk::DeviceInfo> devices = vk::listDevices();
  REQUIRE(!devices.empty());
  bool lavapipe = false;
  for (const vk::DeviceInfo& d : devices) {
    MESSAGE("vulkan:" << d.index << " " << d.name << " subgroup " << d.subgroupSize << ", " << d.maxWorkgroupInvocations
                      << " invocations, " << d.sharedMemoryBytes << " B shared; key " << d.featureKey());
    CHECK(d.subgroupSize > 0);
    CHECK(d.maxWorkgroupInvocations >= 128);  // the Vulkan minimum
    CHECK(d.sharedMemoryBytes >= 16384);
    CHECK(d.featureKey().find("vulkan-") == 0);
    lavapipe = lavapipe || d.name.find("llvmpipe") != std::string::npos;
  }
  // Mesa's CPU driver is listed wherever it is installed and not filtered out.
  bool lavapipeInstalled = std::filesystem::exists("/usr/share/vulkan/icd.d/lvp_icd.x86_64.json") &&
                           !std::getenv("VK_ICD_FILENAMES") && !std::getenv("VK_DRIVER_FILES");
  if (lavapipeInstalled) CHECK(lavapipe);
  CHECK(vk::Gpu(0).info().name == devices[0].name);
}

TEST_CASE("vulkan: vector add at an odd size matches the host exactly, timed") {
  vk::Gpu* g = gpu();
  if (!g) return;
  const size_t n = 1000003;
  std::vector<float> a = randomFloats(n, 1), b = randomFloats(n, 2);
  std::vector<float> c(n, std::numeric_limits<float>::quiet_NaN());
  vk::Buffer bufA(*g, n * 4), bufB(*g, n * 4), bufC(*g, n * 4);
  bufA.upload(std::span<const float>(a));
  bufB.upload(std::span<const float>(b));
  bufC.upload(std::span<const float>(c));  // poisoned: every element must be written

  spirv::Words words = spirvtest::vectorAddKernel();
  vk::Pipeline pipeline(*g, words, 3, 4);
  vk::Buffer* buffers[] = {&bufA, &bufB, &bufC};
  uint32_t size = n;
  double ns = g->dispatch(pipeline, buffers, bytesOf(size), cdiv(n, 64));
  bufC.download(std::span<float>(c));

  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i) wrong += !(c[i] == a[i] + b[i]);
  CHECK(wrong == 0);
  if (g->info().timestamps) {
    MESSAGE("vector add of " << n << " floats: " << ns / 1e3 << " us on the GPU clock");
    CHECK(ns > 0);
  } else {
    MESSAGE("no timestamps on this queue");
    CHECK(ns == -1);
  }
  CHECK(g->pipelineCacheData().size() >= 16 + VK_UUID_SIZE);  // at least the cache header
}

TEST_CASE("vulkan: workgroup-memory reduction matches the host's tree order exactly") {
  vk::Gpu* g = gpu();
  if (!g) return;
  const size_t n = 100003;
  const uint32_t groups = cdiv(n, 256);
  std::vector<float> in = randomFloats(n, 3), out(groups, std::numeric_limits<float>::quiet_NaN());
  vk::Buffer bufIn(*g, n * 4), bufOut(*g, groups * 4);
  bufIn.upload(std::span<const float>(in));
  bufOut.upload(std::span<const float>(out));
  vk::Pipeline pipeline(*g, spirvtest::workgroupSumKernel(), 2, 4);
  vk::Buffer* buffers[] = {&bufIn, &bufOut};
  uint32_t size = n;
  g->dispatch(pipeline, buffers, bytesOf(size), groups);
  bufOut.download(std::span<float>(out));
  size_t wrong = 0;
  for (uint32_t w = 0; w < groups; ++w) wrong += !(out[w] == treeSum(in, size_t{w} * 256));
  CHECK(wrong == 0);
}

TEST_CASE("vulkan: subgroup reduce and shuffle agree with the host") {
  vk::Gpu* g = gpu();
  if (!g) return;
  const uint32_t groups = 33, n = groups * 64, lanes = g->info().subgroupSize;
  std::vector<float> in = randomFloats(n, 4), out(n, std::numeric_limits<float>::quiet_NaN());
  vk::Buffer bufIn(*g, n * 4), bufOut(*g, n * 4);
  bufIn.upload(std::span<const float>(in));
  vk::Pipeline pipeline(*g, spirvtest::subgroupKernel(), 2, 0);
  vk::Buffer* buffers[] = {&bufIn, &bufOut};
  g->dispatch(pipeline, buffers, {}, groups);
  bufOut.download(std::span<float>(out));
  // Subgroups are taken as runs of `lanes` consecutive invocations, as
  // drivers lay out 1-D workgroups; the sum's order is the driver's.
  size_t wrong = 0;
  for (uint32_t first = 0; first < n; first += lanes) {
    float sum = 0, max = in[first];
    for (uint32_t i = first; i < first + lanes; ++i) sum += in[i], max = std::max(max, in[i]);
    for (uint32_t i = first; i < first + lanes; ++i) wrong += !(std::abs(out[i] - (sum + max + in[first])) <= 1e-5f);
  }
  CHECK(wrong == 0);
}

namespace {

// Each thread packs its `4 / bytes` values of in (dtype t) into a word, takes lane + 3's word
// by a shuffle, byte_perms the two by its selector and unpacks the result into out; the merged
// words go to words.
gpu::KernelFunction packedShuffle(DType t, uint32_t lanes, const std::string& target) {
  const int64_t per = 4 / dtypeBytes(t);
  gpu::KernelFunction f{.name = "packed_shuffle", .target = target, .workgroupSize = lanes, .subgroupSize = lanes};
  f.addBufferParam("in", t);
  f.addBufferParam("out", t);
  f.addBufferParam("words", DType::u32);
  f.addBufferParam("selectors", DType::u32);
  gpu::KBuilder b(f);
  gpu::Reg thread = b.emit(gpu::KOp::thread_id, DType::i32), yes = b.constant(DType::boolean, 1);
  auto at = [&](int64_t e) { return b.binary("add", b.binary("mul", thread, b.constant(DType::i32, double(per))), b.constant(DType::i32, double(e))); };
  auto load = [&](int64_t buffer, DType dt, gpu::Reg index) {
    gpu::KAttrValue fill = isFloat(dt) ? gpu::KAttrValue{0.0} : gpu::KAttrValue{int64_t{0}};
    return b.emit(gpu::KOp::load_global, dt, {index, yes}, {{"buffer", buffer}, {"fill", fill}, {"vec", int64_t{1}}});
  };
  std::vector<gpu::Reg> values;
  for (int64_t e = 0; e < per; ++e) values.push_back(load(0, t, at(e)));
  gpu::Reg word = b.emit(gpu::KOp::pack, DType::u32, values);
  gpu::Reg source = b.binary("and", b.binary("add", b.emit(gpu::KOp::lane_id, DType::i32), b.constant(DType::i32, 3)),
                             b.constant(DType::i32, double(lanes - 1)));
  gpu::Reg other = b.emit(gpu::KOp::shuffle_idx, DType::u32, {word, source});
  gpu::Reg merged = b.emit(gpu::KOp::byte_perm, DType::u32, {word, other, load(3, DType::u32, thread)});
  std::vector<gpu::Reg> parts = b.emitMulti(gpu::KOp::unpack, std::vector<DType>(size_t(per), t), {merged}, {});
  auto store = [&](int64_t buffer, gpu::Reg index, gpu::Reg value) {
    b.effect(gpu::KOp::store_global, {index, yes, value}, {{"buffer", buffer}, {"vec", int64_t{1}}});
  };
  for (int64_t e = 0; e < per; ++e) store(1, at(e), parts[size_t(e)]);
  store(2, thread, merged);
  return f;
}

}  // namespace

// The LLVM printers print them too: PTX (prmt, which ptxas assembles) and AMDGPU.
TEST_CASE("vulkan: pack, byte_perm and unpack move 8- and 16-bit values' bits as the simulator and the host do") {
  for (DType t : {DType::f8e4m3, DType::i8, DType::bf16}) {
    std::string ptx = ptx::printPtx(packedShuffle(t, 32, "sm_90"), "sm_90");
    CHECK(ptx.find("prmt.b32") != std::string::npos);
    test::assemble(ptx, "sm_90", false);
    CHECK(amdgpu::printAssembly(packedShuffle(t, 64, "gfx942"), "gfx942").find("packed_shuffle") != std::string::npos);
  }
  vk::Gpu* g = gpu();
  const uint32_t lanes = g ? g->info().subgroupSize : 8;
  std::mt19937 rng(11);
  for (DType t : {DType::f8e4m3, DType::f8e5m2, DType::i8, DType::u8, DType::f16, DType::bf16, DType::u16}) {
    CAPTURE(dtypeName(t));
    // Random bits (NaNs among them), a float's as its decoding encodes them again (the
    // simulator holds values, not NaN payloads); selectors' nibbles past 7 choose as their low
    // three bits.
    std::vector<uint8_t> in(4 * lanes), out(4 * lanes, 0xa5);
    for (uint8_t& x : in) x = uint8_t(rng());
    for (size_t i = 0; i < in.size(); i += size_t(dtypeBytes(t))) {
      uint16_t bits = uint16_t(in[i] | (dtypeBytes(t) == 2 ? in[i + 1] << 8 : 0));
      if (isFloat8(t)) bits = floatToF8(t, f8ToFloat(t, uint8_t(bits)));
      if (t == DType::f16) bits = floatToHalf(halfToFloat(bits));
      if (t == DType::bf16) bits = floatToBF16(bf16ToFloat(bits));
      in[i] = uint8_t(bits);
      if (dtypeBytes(t) == 2) in[i + 1] = uint8_t(bits >> 8);
    }
    std::vector<uint32_t> selectors(lanes), words(lanes, 0xa5a5a5a5u);
    for (uint32_t& x : selectors) x = uint32_t(rng()) & 0xffff;
    // Expected: byte j of thread l's result is byte (selector >> 4j) & 7 of its word, then lane l + 3's.
    std::vector<uint8_t> expectedOut(in.size());
    std::vector<uint32_t> expectedWords(lanes);
    for (uint32_t l = 0; l < lanes; ++l) {
      uint32_t source = (l + 3) % lanes, merged = 0;
      for (uint32_t j = 0; j < 4; ++j) {
        uint32_t from = selectors[l] >> 4 * j & 7;
        merged |= uint32_t(in[4 * (from < 4 ? l : source) + from % 4]) << 8 * j;
      }
      expectedWords[l] = merged;
      for (uint32_t j = 0; j < 4; ++j) expectedOut[4 * l + j] = uint8_t(merged >> 8 * j);
    }
    gpu::KernelFunction f = packedShuffle(t, lanes, "vulkan");
    const int64_t n = int64_t(in.size()) / dtypeBytes(t);
    std::vector<uint8_t> simulatedOut = out;
    std::vector<uint32_t> simulatedWords = words;
    gpu::simulate(f,
                  {{in.data(), t, {n}, {1}}, {simulatedOut.data(), t, {n}, {1}},
                   {simulatedWords.data(), DType::u32, {int64_t(lanes)}, {1}}, {selectors.data(), DType::u32, {int64_t(lanes)}, {1}}},
                  {}, {1});
    CHECK(simulatedWords == expectedWords);
    CHECK(simulatedOut == expectedOut);
    std::vector<uint32_t> spirv = spirv::printSpirv(f);
    test::checkSpirvValid(spirv);
    if (!g) continue;
    vk::Buffer bufIn(*g, in.size()), bufOut(*g, out.size()), bufWords(*g, 4 * lanes), bufSelectors(*g, 4 * lanes);
    bufIn.upload(std::span<const uint8_t>(in));
    bufOut.upload(std::span<const uint8_t>(out));
    bufWords.upload(std::span<const uint32_t>(words));
    bufSelectors.upload(std::span<const uint32_t>(selectors));
    vk::Pipeline pipeline(*g, spirv, 4, spirv::pushConstantBytes(f));
    vk::Buffer* buffers[] = {&bufIn, &bufOut, &bufWords, &bufSelectors};
    std::vector<std::byte> pushConstants(spirv::pushConstantBytes(f));
    g->dispatch(pipeline, buffers, pushConstants, 1);
    bufOut.download(std::span<uint8_t>(out));
    bufWords.download(std::span<uint32_t>(words));
    CHECK(words == expectedWords);
    CHECK(out == expectedOut);
  }
}

TEST_CASE("vulkan: bad SPIR-V and bad dispatches are errors, not crashes") {
  vk::Gpu* g = gpu();
  if (!g) return;
  std::vector<uint32_t> tooShort = {0x07230203, 0x00010500};
  CHECK_THROWS_AS(vk::Pipeline(*g, tooShort, 0, 0), Error);
  std::vector<uint32_t> wrongMagic = {0xdeadbeef, 0x00010500, 0, 10, 0, 0x00020011, 1};
  CHECK_THROWS_WITH_AS(vk::Pipeline(*g, wrongMagic, 0, 0), doctest::Contains("invalid SPIR-V"), Error);
  spirv::Words truncated = spirvtest::vectorAddKernel();
  truncated.push_back(9u << 16 | 62);  // an OpStore claiming 9 words, with none after it
  CHECK_THROWS_AS(vk::Pipeline(*g, truncated, 3, 4), Error);

  vk::Pipeline pipeline(*g, spirvtest::vectorAddKernel(), 3, 4);
  vk::Buffer one(*g, 64);
  vk::Buffer* buffers[] = {&one};
  uint32_t size = 16;
  CHECK_THROWS_WITH_AS(g->dispatch(pipeline, buffers, bytesOf(size), 1), doctest::Contains("buffers"), Error);
  CHECK_THROWS_AS(vk::Gpu(1000), Error);
  std::vector<float> big(32);
  CHECK_THROWS_AS(one.upload(std::span<const float>(big)), Error);
}

}  // namespace tj::vktest
