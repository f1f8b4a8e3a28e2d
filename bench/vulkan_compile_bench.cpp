// vulkan-compile-bench: the cold compile time of every sample's kernel on the Vulkan
// device, with Mesa's shader cache off and no kernel or pipeline cache: our lowering
// (layouts, kernel IR, SPIR-V) and the driver's (pipeline creation and first dispatch,
// where lavapipe compiles), and the module's size.
// Prints a row per sample and `FIGURE vulkan_cold_compile.<sample> <ms> ms`.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "devices/vulkan/kernel_binary.hpp"
#include "devices/vulkan/vulkan_device.hpp"
#include "devices/vulkan/vulkan_runtime.hpp"
#include "samples/kernels.hpp"

namespace {

using namespace tj;

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// One sample's kernel, built and given to the driver; prints its row and figure.
void measure(vk::Gpu& gpu, const vk::DeviceInfo& info, const std::string& name) {
  ir::Kernel kernel = samples::traceSample(name, "vulkan");
  auto start = std::chrono::steady_clock::now();
  vulkan::KernelBinary binary;
  try {
    binary = vulkan::buildKernelBinary(kernel, vulkan::targetFor(info));
  } catch (const Error& e) {
    std::printf("%-18s runs on the CPU: %s\n", name.c_str(), e.what());
    return;
  }
  double lowering = msSince(start);
  start = std::chrono::steady_clock::now();
  vk::Pipeline pipeline(gpu, *binary.spirv, binary.bufferCount, binary.pushConstantBytes,
                        vulkan::subgroupRequest(info, binary.subgroupSize, binary.workgroupSize));
  // Lavapipe compiles a shader at its first dispatch: one workgroup over empty tensors
  // (every size 0, so every access is masked off).
  std::vector<std::unique_ptr<vk::Buffer>> buffers;
  std::vector<vk::Buffer*> bound;
  for (uint32_t b = 0; b < binary.bufferCount; ++b) {
    buffers.push_back(std::make_unique<vk::Buffer>(gpu, 8 * binary.params.size() + 16));
    buffers.back()->upload(std::span<const std::byte>(std::vector<std::byte>(buffers.back()->size())));
    bound.push_back(buffers.back().get());
  }
  std::vector<std::byte> zeros(binary.pushConstantBytes);
  gpu.dispatch(pipeline, bound, zeros, 1, 1, 1);
  double driver = msSince(start);
  std::printf("%-18s %4ld threads %8zu words %9.1f ms lowering %10.1f ms driver\n", name.c_str(),
              long(binary.workgroupSize), binary.spirv->size(), lowering, driver);
  std::printf("FIGURE vulkan_cold_compile.%s %.1f ms\n", name.c_str(), lowering + driver);
}

}  // namespace

int main() {
  setenv("MESA_SHADER_CACHE_DISABLE", "true", 1);  // before the driver loads
  if (!vk::status().available) {
    std::printf("vulkan-compile-bench: Vulkan not available: %s\n", vk::status().reason.c_str());
    return 0;
  }
  uint32_t index = vk::deviceIndex("vulkan");
  vk::DeviceInfo info = vk::listDevices().at(index);
  vk::Gpu gpu(index, {});
  std::printf("cold compiles on %s (Mesa shader cache off)\n", info.name.c_str());
  for (const std::string& name : samples::sampleNames()) measure(gpu, info, name);
}
