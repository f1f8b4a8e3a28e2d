// The Vulkan device's caches: SPIR-V kernels on disk (a second process and a fresh
// device load them without lowering; a corrupt entry is reported, rebuilt and replaced)
// and the VkPipelineCache file (appears, is loaded at startup, is rewritten only when it
// changed). Without Vulkan each case says why and passes.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "devices/vulkan/kernel_binary.hpp"
#include "devices/vulkan/vulkan_device.hpp"
#include "devices/vulkan/vulkan_runtime.hpp"
#include "dsl/tilejit.hpp"
#include "jit/artifact_cache.hpp"
#include "lower/spirv/spirv_builder.hpp"
#include "samples/kernels.hpp"
#include "tests/support.hpp"

namespace tj::spirvtest {
spirv::Words vectorAddKernel();  // test_spirv.cpp
}  // namespace tj::spirvtest

namespace tj::vkcachetest {

namespace {

namespace fs = std::filesystem;
using jit::CacheSource;

std::vector<fs::path> filesWithExtension(const fs::path& dir, const std::string& extension) {
  std::vector<fs::path> found;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == extension) found.push_back(e.path());
  return found;
}

LaunchReport gLastReport;  // what the last addOn or bigDotOn launch did

// c = a + b on `device`, traced for n elements; returns whether every element is right.
bool addOn(Device& device, int64_t n) {
  Tensor a = Tensor::random({n}, 1), b = Tensor::random({n}, 2);
  Tensor c = Tensor::full({n}, std::numeric_limits<double>::quiet_NaN());
  TracedKernel t = trace({cdiv(n, 256)}, [&](Program& p) {
    Index i = p.id(0);
    p.write(c, {256}).put(p.read(a, {256}).at({i}) + p.read(b, {256}).at({i}), {i});
  });
  std::vector<TensorArg> args;
  for (const Tensor& x : t.tensors) args.push_back({x.data(), x.dtype(), x.shape(), x.strides()});
  int64_t grid = cdiv(n, 256);
  gLastReport = device.launch(*t.kernel, {.tensors = args, .grid = std::span(&grid, 1), .kernelHash = t.hash});
  for (int64_t i = 0; i < n; ++i)
    if (c.item(i) != float(a.item(i) + b.item(i))) return false;
  return true;
}

// A fresh device (its own Gpu and pipelines) adding on Vulkan; returns where the kernel came from.
CacheSource freshAdd() {
  vulkan::VulkanDevice device("vulkan");
  CHECK(addOn(device, 1000));
  CHECK_MESSAGE(!gLastReport.fellBack(), gLastReport.fallbackReason);
  return gLastReport.cache;
}

std::string childCommand(const fs::path& dir) {
  return "TILEJIT_VKCACHE_CHILD=1 TILEJIT_CACHE_DIR='" + dir.string() + "' " + test::binDir() +
         "/tilejit_tests -tc='vulkan cache: child process'";
}

}  // namespace

// What the parent case spawns; does nothing in a normal test run. Prints
// "child: vulkan=<0|1> cache=<source> ms=<compile or load ms> ok=<0|1>".
TEST_CASE("vulkan cache: child process") {
  if (!std::getenv("TILEJIT_VKCACHE_CHILD")) return;
  Tensor a = Tensor::random({1001}, 3), b = Tensor::random({1001}, 4), c = Tensor::zeros({1001});
  LaunchWatch launches;
  samples::vectorAdd(a, b, c, {.device = "vulkan"});
  bool ok = true;
  for (int64_t i = 0; i < 1001; ++i) ok = ok && c.item(i) == float(a.item(i) + b.item(i));
  const LaunchReport& info = launches.last();
  std::printf("child: vulkan=%d cache=%s ms=%.3f ok=%d\n", int(!info.fellBack()),
              std::string(jit::cacheSourceName(info.cache)).c_str(), info.compileMs, int(ok));
}

TEST_CASE("vulkan cache: a second process loads the SPIR-V from disk and the pipeline cache file") {
  if (!test::vulkanAvailable()) return;
  fs::path dir = test::scratchDir("vkcache", "process");
  test::CommandResult cold = test::runCommand(childCommand(dir));
  REQUIRE_MESSAGE(cold.status == 0, cold.output);
  CHECK_MESSAGE(cold.output.find("child: vulkan=1 cache=miss") != std::string::npos, cold.output);
  CHECK(filesWithExtension(dir, ".spvk").size() == 1);
  std::vector<fs::path> pipelines = filesWithExtension(dir, ".vkpc");
  REQUIRE(pipelines.size() == 1);
  auto written = fs::last_write_time(pipelines[0]);

  test::CommandResult warm = test::runCommand(childCommand(dir));
  REQUIRE_MESSAGE(warm.status == 0, warm.output);
  CHECK_MESSAGE(warm.output.find("child: vulkan=1 cache=disk") != std::string::npos, warm.output);
  CHECK(warm.output.find("ok=1") != std::string::npos);
  CHECK(cold.output.find("ok=1") != std::string::npos);
  // The second process found its pipeline in the loaded cache: nothing new to save.
  CHECK(fs::last_write_time(pipelines[0]) == written);
  auto line = [](const std::string& out) {
    size_t at = out.find("child:");
    return out.substr(at, out.find('\n', at) - at);
  };
  MESSAGE("cold: " << line(cold.output) << "; warm: " << line(warm.output));
}

TEST_CASE("vulkan cache: fresh devices hit memory, then disk: a corrupt entry is rebuilt and replaced") {
  if (!test::vulkanAvailable()) return;
  fs::path dir = test::scratchDir("vkcache", "corrupt");
  test::ScopedEnv cacheDir("TILEJIT_CACHE_DIR", dir.string().c_str());
  {
    vulkan::VulkanDevice device("vulkan");
    CHECK(addOn(device, 1000));
    CHECK(gLastReport.cache == CacheSource::compiled);
    CHECK(addOn(device, 999));  // same kernel: sizes are arguments
    CHECK(gLastReport.cache == CacheSource::memory);
  }
  CHECK(freshAdd() == CacheSource::disk);
  std::vector<fs::path> entries = filesWithExtension(dir, ".spvk");
  REQUIRE(entries.size() == 1);

  for (auto damage : {+[](const fs::path& f) { fs::resize_file(f, fs::file_size(f) / 2); },
                      +[](const fs::path& f) {
                        std::fstream io(f, std::ios::in | std::ios::out | std::ios::binary);
                        io.seekp(-9, std::ios::end);
                        io.put('\x5a');
                      }}) {
    damage(entries[0]);
    test::CaptureLog log;
    CHECK(freshAdd() == CacheSource::compiled);
    CHECK(log.text().find("unusable") != std::string::npos);
    CHECK(freshAdd() == CacheSource::disk);  // replaced by a good entry
  }
}

TEST_CASE("vulkan cache: TILEJIT_CACHE=0 writes and reads nothing") {
  if (!test::vulkanAvailable()) return;
  fs::path dir = test::scratchDir("vkcache", "off");
  test::ScopedEnv cacheDir("TILEJIT_CACHE_DIR", dir.string().c_str());
  test::ScopedEnv off("TILEJIT_CACHE", "0");
  CHECK(freshAdd() == CacheSource::compiled);
  CHECK(freshAdd() == CacheSource::compiled);
  CHECK(fs::is_empty(dir));
}

TEST_CASE("vulkan cache: the encoding round-trips and rejects damage") {
  vulkan::KernelBinary b{.params = {{gpu::KParam::Kind::buffer, "", DType::f16, 1, 0},
                                    {gpu::KParam::Kind::stride, "", DType::i64, 1, 2},
                                    {gpu::KParam::Kind::tensor_map, "", DType::bf16, 0, 0, {16, 8}, 128}},
                         .stored = {true, false, false},
                         .prints = {{"row sums", DType::bf16, {3, 5}, 1}},
                         .faultParam = 0,
                         .bufferCount = 3,
                         .workgroupSize = 128,
                         .subgroupSize = 32,
                         .spirv = std::make_shared<const std::vector<uint32_t>>(
                             std::vector<uint32_t>{0x07230203, 7, 9})};
  std::vector<char> bytes = vulkan::encodeKernelBinary(b);
  vulkan::KernelBinary back = vulkan::decodeKernelBinary(bytes);
  CHECK(back.bufferCount == 3);
  CHECK(back.workgroupSize == 128);
  CHECK(back.subgroupSize == 32);
  CHECK(back.stored == b.stored);
  REQUIRE(back.params.size() == 3);
  CHECK(back.params == b.params);
  CHECK(back.params[1].kind == gpu::KParam::Kind::stride);
  CHECK(back.params[2].kind == gpu::KParam::Kind::tensor_map);
  CHECK(back.params[2].box == std::vector<int64_t>{16, 8});
  CHECK(back.params[2].swizzle == 128);
  CHECK(back.params[0].dtype == DType::f16);
  CHECK(back.params[1].number == 1);
  CHECK(back.params[1].axis == 2);
  CHECK(*back.spirv == *b.spirv);
  REQUIRE(back.prints.size() == 1);
  CHECK(back.prints[0].label == "row sums");
  CHECK(back.prints[0].dtype == DType::bf16);
  CHECK(back.prints[0].shape == std::vector<int64_t>{3, 5});
  CHECK(back.prints[0].param == 1);
  CHECK(back.faultParam == 0);
  bytes.pop_back();
  CHECK_THROWS_AS(vulkan::decodeKernelBinary(bytes), jit::CorruptCacheEntry);
  bytes[0] = 99;
  CHECK_THROWS_WITH_AS(vulkan::decodeKernelBinary(bytes), doctest::Contains("format 99"), jit::CorruptCacheEntry);
}

// The pipeline cache's entry: the driver's data for the device, whatever the compiler build.
jit::ArtifactKey pipelineCacheKey(const vk::Gpu& gpu) {
  return {jit::ArtifactKind::pipelineCache, 0, gpu.info().featureKey(), "", ""};
}

TEST_CASE("vulkan cache: the pipeline cache file is loaded at startup, saved when it changed, replaced when corrupt") {
  if (!test::vulkanAvailable()) return;
  fs::path dir = test::scratchDir("vkcache", "pipelines");
  spirv::Words words = spirvtest::vectorAddKernel();
  fs::path file;
  std::vector<char> saved;
  {
    vk::Gpu gpu(0, dir);
    file = gpu.pipelineCachePath();
    CHECK(file.parent_path() == dir);
    CHECK(gpu.pipelineCacheLoadedBytes() == 0);
    vk::Pipeline pipeline(gpu, words, 3, 4);
    CHECK(gpu.savePipelineCache());
    CHECK(!gpu.savePipelineCache());  // unchanged
    // The payload is the driver's data, which starts with its own header.
    saved = jit::ArtifactStore(dir).read(pipelineCacheKey(gpu)).value();
    REQUIRE(saved.size() >= 16 + VK_UUID_SIZE);
    uint32_t header[4];
    std::memcpy(header, saved.data(), sizeof header);
    CHECK(header[1] == VK_PIPELINE_CACHE_HEADER_VERSION_ONE);
    CHECK(header[2] == gpu.info().vendorId);
    CHECK(header[3] == gpu.info().deviceId);
  }
  {
    vk::Gpu gpu(0, dir);
    CHECK(gpu.pipelineCacheLoadedBytes() == saved.size());
    vk::Pipeline pipeline(gpu, words, 3, 4);
    CHECK(!gpu.savePipelineCache());  // the pipeline was in the loaded cache
  }
  fs::resize_file(file, fs::file_size(file) - 3);
  test::CaptureLog log;
  vk::Gpu gpu(0, dir);
  CHECK(log.text().find("unusable") != std::string::npos);
  CHECK(gpu.pipelineCacheLoadedBytes() == 0);
  vk::Pipeline pipeline(gpu, words, 3, 4);
  CHECK(gpu.savePipelineCache());
  CHECK(jit::ArtifactStore(dir).read(pipelineCacheKey(gpu)).has_value());
}

namespace {

// c = a · b over one block of 128x128 f32 operands: more workgroup memory (and
// instructions) than a software Vulkan device takes. Returns where it ran.
std::string bigDotOn(Device& device, const Tensor& a, const Tensor& b, const Tensor& c) {
  TracedKernel t = trace({1}, [&](Program& p) {
    p.write(c, {128, 128}).put(dot(p.read(a, {128, 128}).at({0, 0}), p.read(b, {128, 128}).at({0, 0})), {0, 0});
  });
  std::vector<TensorArg> args;
  for (const Tensor& x : t.tensors) args.push_back(x.launchArg());
  int64_t grid = 1;
  gLastReport = device.launch(*t.kernel, {.tensors = args, .grid = std::span(&grid, 1), .kernelHash = t.hash});
  return gLastReport.device;
}

}  // namespace

TEST_CASE("vulkan cache: a kernel the device cannot run is decided once: one warning, no second lowering, remembered on disk") {
  if (!test::vulkanAvailable()) return;
  if (vk::listDevices().at(vk::deviceIndex("vulkan")).sharedMemoryBytes >= 2 * 128 * 128 * 4) {
    MESSAGE("the device has the workgroup memory for a 128x128 dot: nothing to refuse");
    return;
  }
  fs::path dir = test::scratchDir("vkcache", "refused");
  test::ScopedEnv cacheDir("TILEJIT_CACHE_DIR", dir.string().c_str());
  Tensor a = Tensor::random({128, 128}, 5), b = Tensor::random({128, 128}, 6);
  std::string reason;
  {
    vulkan::VulkanDevice device("vulkan");
    test::CaptureLog log;
    for (int launch = 0; launch < 3; ++launch) {
      Tensor c = Tensor::zeros({128, 128});
      CHECK(bigDotOn(device, a, b, c) == "cpu");
      CHECK(c.item(0) != 0);
      const LaunchReport& info = gLastReport;
      CHECK(info.fallbackReason.find("unsupported") != std::string::npos);
      if (launch == 0) reason = info.fallbackReason;
      CHECK(info.fallbackReason == reason);
      CHECK(info.cache == (launch == 0 ? CacheSource::compiled : CacheSource::memory));  // lowered once
    }
    std::string text = log.text();
    size_t warnings = 0;
    for (size_t at = text.find("instead of vulkan"); at != std::string::npos; at = text.find("instead of vulkan", at + 1))
      ++warnings;
    CHECK(warnings == 1);
  }
  // A fresh device (as a second process) reads the decision instead of lowering.
  CHECK(filesWithExtension(dir, ".spvno").size() == 1);
  vulkan::VulkanDevice fresh("vulkan");
  Tensor c = Tensor::zeros({128, 128});
  CHECK(bigDotOn(fresh, a, b, c) == "cpu");
  CHECK(gLastReport.cache == CacheSource::disk);
  CHECK(gLastReport.fallbackReason == reason);
}

TEST_CASE("vulkan cache: an entry with a good checksum that the device rejects is rebuilt and replaced") {
  if (!test::vulkanAvailable()) return;
  fs::path dir = test::scratchDir("vkcache", "rejected");
  test::ScopedEnv cacheDir("TILEJIT_CACHE_DIR", dir.string().c_str());
  CHECK(freshAdd() == CacheSource::compiled);
  std::vector<fs::path> entries = filesWithExtension(dir, ".spvk");
  REQUIRE(entries.size() == 1);
  // Rewrite the entry whole (a valid checksum) with a subgroup size no device runs.
  Tensor a = Tensor::random({1000}, 1), b = Tensor::random({1000}, 2), c = Tensor::zeros({1000});
  TracedKernel t = trace({4}, [&](Program& p) {
    Index i = p.id(0);
    p.write(c, {256}).put(p.read(a, {256}).at({i}) + p.read(b, {256}).at({i}), {i});
  });
  vk::DeviceInfo info = vk::listDevices().at(vk::deviceIndex("vulkan"));
  jit::ArtifactKey key = vulkan::kernelBinaryKey(t.hash, info.featureKey(), vulkan::targetFor(info));
  jit::ArtifactStore store(dir);
  REQUIRE(store.path(key) == entries[0]);
  std::optional<std::vector<char>> payload = store.read(key);
  REQUIRE(payload);
  vulkan::KernelBinary binary = vulkan::decodeKernelBinary(*payload);
  binary.subgroupSize = 3;
  REQUIRE(store.write(key, vulkan::encodeKernelBinary(binary)));
  {
    test::CaptureLog log;
    CHECK(freshAdd() == CacheSource::compiled);
    CHECK(log.text().find(entries[0].string() + " is unusable") != std::string::npos);
  }
  CHECK(freshAdd() == CacheSource::disk);  // replaced by a good entry
}

}  // namespace tj::vkcachetest
