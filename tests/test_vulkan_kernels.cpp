// Tile kernels on the Vulkan device (lavapipe in CI) against the interpreter: every
// module the device generates passes spirv-val, and a kernel the Vulkan path cannot
// run yet falls back to the CPU with the right result. Without Vulkan each case says
// why and passes.
#include <doctest/doctest.h>

#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "devices/vulkan/vulkan_device.hpp"
#include "devices/vulkan/vulkan_runtime.hpp"
#include "dsl/tensor.hpp"
#include "ir/error.hpp"
#include "layout/infer_layouts.hpp"
#include "lower/gpu/lower_to_kernel_ir.hpp"
#include "lower/spirv/print_kernel_ir.hpp"
#include "tests/support.hpp"
#include "samples/kernels.hpp"

namespace tj::vktest {

namespace {

int gRanOnVulkan = 0;

bool vulkanAvailable() {
  if (vk::status().available) return true;
  MESSAGE("skipped: " << vk::status().reason);
  return false;
}

// spirv-val for Vulkan 1.2 on `words` (skipped with a message without the tool).
void checkValid(const std::vector<uint32_t>& words) {
  if (test::runCommand("command -v spirv-val").status != 0) {
    MESSAGE("skipped: spirv-val is not installed (apt-get install spirv-tools)");
    return;
  }
  static int counter = 0;
  auto file = std::filesystem::temp_directory_path() /
              ("tilejit_vkk_" + std::to_string(getpid()) + "_" + std::to_string(counter++) + ".spv");
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(words.data()), std::streamsize(words.size() * 4));
  test::CommandResult r = test::runCommand("spirv-val --target-env vulkan1.2 " + file.string());
  std::filesystem::remove(file);
  CHECK_MESSAGE(r.status == 0, r.output);
}

Tensor poisoned(const Shape& shape) { return Tensor::full(shape, std::numeric_limits<double>::quiet_NaN()); }

// Distance in f32 units in the last place (NaN against anything: huge).
int64_t ulps(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<int64_t>::max();
  auto key = [](float f) {
    int32_t i = std::bit_cast<int32_t>(f);
    return i < 0 ? int64_t(INT32_MIN) - i : int64_t(i);
  };
  return std::abs(key(float(a)) - key(float(b)));
}

// Runs `sample` on the interpreter and on Vulkan (each into a fresh poisoned output of
// `outShape`), checks the generated module and compares within `maxUlps`.
void compareWithInterpreter(const Shape& outShape, int64_t maxUlps,
                            const std::function<std::string(const Tensor& out, const RunOptions&)>& sample) {
  Tensor expected = poisoned(outShape), actual = poisoned(outShape);
  sample(expected, {.device = "interp"});
  std::string ran = sample(actual, {.device = "vulkan"});
  const vulkan::LaunchInfo& info = vulkan::lastLaunchInfo();
  CHECK_MESSAGE(info.onVulkan, info.fallbackReason);
  CHECK(ran == (info.onVulkan ? "vulkan" : "cpu"));
  if (info.onVulkan) {
    ++gRanOnVulkan;
    REQUIRE(info.spirv);
    checkValid(*info.spirv);
  }
  std::vector<double> e = expected.values(), a = actual.values();
  REQUIRE(e.size() == a.size());
  int64_t worst = 0;
  for (size_t i = 0; i < e.size(); ++i) worst = std::max(worst, e[i] == a[i] ? 0 : ulps(e[i], a[i]));
  if (worst > maxUlps) for (size_t i = 0; i < std::min<size_t>(e.size(), 12); ++i) MESSAGE(i << ": " << e[i] << " vs " << a[i]);
  CHECK_MESSAGE(worst <= maxUlps, "shape " << outShape.size() << "-d, first " << outShape[0]);
}

}  // namespace

TEST_CASE("vulkan kernels: vector_add at an odd size matches the interpreter exactly") {
  if (!vulkanAvailable()) return;
  Tensor a = Tensor::random({100003}, 1), b = Tensor::random({100003}, 2);
  compareWithInterpreter({100003}, 0, [&](const Tensor& out, const RunOptions& o) { return samples::vectorAdd(a, b, out, o); });
}

TEST_CASE("vulkan kernels: fused at an odd size matches the interpreter exactly") {
  if (!vulkanAvailable()) return;
  Tensor a = Tensor::random({5001}, 3), b = Tensor::random({5001}, 4), c = Tensor::random({5001}, 5);
  compareWithInterpreter({5001}, 0, [&](const Tensor& out, const RunOptions& o) { return samples::fused(a, b, c, out, o); });
}

TEST_CASE("vulkan kernels: softmax at odd sizes is within a few ulps of the interpreter") {
  if (!vulkanAvailable()) return;
  for (Shape shape : {Shape{7, 5}, Shape{33, 29}}) {
    Tensor x = Tensor::random(shape, 6, DType::f32, -4, 4);
    compareWithInterpreter(shape, 8, [&](const Tensor& out, const RunOptions& o) { return samples::softmax(x, out, o); });
  }
  MESSAGE(gRanOnVulkan << " sample launches ran on Vulkan");
}

TEST_CASE("vulkan kernels: an unsupported kernel falls back to the CPU with the right result") {
  Tensor a = Tensor::random({64, 48}, 7), b = Tensor::random({48, 40}, 8);
  Tensor expected = poisoned({64, 40}), actual = poisoned({64, 40});
  samples::gemm(a, b, expected, {.device = "interp"});
  std::string ran = samples::gemm(a, b, actual, {.device = "vulkan"});
  CHECK(ran != "vulkan");
  CHECK(!vulkan::lastLaunchInfo().onVulkan);
  MESSAGE("gemm ran on " << ran << ": " << vulkan::lastLaunchInfo().fallbackReason);
  std::vector<double> e = expected.values(), v = actual.values();
  for (size_t i = 0; i < e.size(); ++i) REQUIRE(std::abs(e[i] - v[i]) <= 1e-4 * (1 + std::abs(e[i])));
}

TEST_CASE("vulkan kernels: every sample that lowers prints a module spirv-val accepts") {
  layout::Target target = layout::targetByName("vulkan");
  for (const std::string& name : samples::sampleNames()) {
    ir::Kernel k = samples::traceSample(name);
    std::vector<uint32_t> words;
    try {
      words = spirv::printSpirv(gpu::lowerToKernelIR(k, layout::inferLayouts(k, target), target));
    } catch (const Error& e) {
      MESSAGE(name << ": not on Vulkan yet: " << std::string(e.what()));
      CHECK(std::string(e.what()).find("unsupported") != std::string::npos);
      continue;
    }
    MESSAGE(name << ": " << words.size() << " words");
    checkValid(words);
  }
}

}  // namespace tj::vktest
