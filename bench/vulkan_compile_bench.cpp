// vulkan-compile-bench: the cold compile time of every sample's kernel on the Vulkan
// device, with Mesa's shader cache off and no kernel or pipeline cache: our lowering
// (layouts, kernel IR, SPIR-V) and the driver's (pipeline creation and first dispatch,
// where lavapipe compiles), the process's CPU time for both, and the module's size.
// Then kernels of scans and sorts over [37, 131] tiles (one program each), where lavapipe's
// compile time grows fastest with the tile. Arguments: only the rows whose names contain one.
// Prints a row per kernel, `FIGURE vulkan_cold_compile.<name> <ms> ms` (wall) and
// `FIGURE vulkan_cold_compile_cpu.<name> <ms> ms`.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "devices/vulkan/kernel_binary.hpp"
#include "devices/vulkan/vulkan_device.hpp"
#include "devices/vulkan/vulkan_runtime.hpp"
#include "dsl/run.hpp"
#include "lower/gpu/spread_over_warps.hpp"
#include "samples/kernels.hpp"

namespace {

using namespace tj;

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}
// The process's CPU time in ms, all threads (lavapipe's included): unlike the wall time, it
// does not grow when other processes share the cores.
double cpuMs() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

// One program over tiles of a [37, 131] f32 tensor (37 lines of 131 along axis 1, 131 of 37
// along axis 0).
ir::Kernel traceTiles(const std::string& name, const std::function<void(Program&, const Tensor&, const Tensor&)>& body) {
  Tensor x = Tensor::zeros({37, 131}), out = Tensor::zeros({37, 131});
  return *trace({1}, [&](Program& p) { body(p, x, out); }, name).kernel;
}
Tile whole(Program& p, const Tensor& x) { return p.read(x, {37, 131}).at({0, 0}); }

// The kernels measured after the samples.
std::vector<std::pair<std::string, ir::Kernel>> scanAndSortKernels() {
  std::vector<std::pair<std::string, ir::Kernel>> out;
  // One cumsum along each axis: along axis 0 the warps split the lines.
  for (int axis : {1, 0}) {
    std::string name = axis == 1 ? "cumsum_37x131" : "cumsum_axis0_37x131";
    out.emplace_back(name, traceTiles(name, [axis](Program& p, const Tensor& x, const Tensor& o) {
      p.write(o, {37, 131}).put(whole(p, x).cumsum(axis), {0, 0});
    }));
  }
  // The elementwise reference: the tile's loads and stores alone.
  out.emplace_back("add_37x131", traceTiles("add_37x131", [](Program& p, const Tensor& x, const Tensor& o) {
    p.write(o, {37, 131}).put(whole(p, x) + 1.0f, {0, 0});
  }));
  // Twelve scans: each fn three times over different inputs, along axis 1 (within subgroups)
  // or alternating axes (along axis 0 the subgroups of lavapipe's spread layout split the lines,
  // so those scans go through workgroup memory).
  for (bool mixed : {false, true}) {
    std::string name = mixed ? "scans12_mixed_37x131" : "scans12_37x131";
    out.emplace_back(name, traceTiles(name, [mixed](Program& p, const Tensor& x, const Tensor& o) {
      Tile v = whole(p, x), acc = p.zeros({37, 131});
      for (int i = 0; i < 3; ++i) {
        Tile in = v * float(i + 1);
        int a = mixed ? i % 2 : 1, b = mixed ? 1 - i % 2 : 1;
        acc = acc + in.cumsum(a) + in.cumprod(b) + in.cummax(a) + in.cummin(b);
      }
      p.write(o, {37, 131}).put(acc, {0, 0});
    }));
  }
  // Sorts of 8 lines (lavapipe's 32 KiB of workgroup memory hold keys and origins of [8, 256]).
  auto eightLines = [](Program& p, const Tensor& x) { return p.read(x, {8, 131}).at({0, 0}); };
  out.emplace_back("argsort_8x131", traceTiles("argsort_8x131", [&](Program& p, const Tensor& x, const Tensor& o) {
    auto [keys, order] = sort(eightLines(p, x), p.iota({8, 131}, 1), 1);
    p.write(o, {8, 131}).put(keys + order.cast(f32), {0, 0});
  }));
  // The latent attention of a small MLA decode (2 sequences of up to 128 tokens, 16 heads,
  // latent 64, rope 16): small tiles, many of them.
  {
    CaptureTraces capture;
    samples::MlaTensors t{.qNope = Tensor::zeros({2, 16, 32}), .qPe = Tensor::zeros({2, 16, 16}),
                          .ropeCos = Tensor::zeros({2, 8}), .ropeSin = Tensor::zeros({2, 8}),
                          .wUK = Tensor::zeros({16, 32, 64}), .wUV = Tensor::zeros({16, 64, 32}),
                          .latentCache = Tensor::zeros({2, 128, 64}), .ropeKeyCache = Tensor::zeros({2, 128, 16}),
                          .seqLens = Tensor::full({2}, 128, DType::i32), .out = Tensor::zeros({2, 16, 32})};
    samples::mlaLatentAttention(t, Tensor::zeros({2, 16, 64}), Tensor::zeros({2, 16, 64}), {.device = "vulkan"});
    out.emplace_back("mla_latent_small", capture.kernels().at(0));
  }
  out.emplace_back("topk5_8x131", traceTiles("topk5_8x131", [&](Program& p, const Tensor& x, const Tensor& o) {
    auto [largest, at] = topk(eightLines(p, x), 5, 1);
    p.write(o, {8, 5}).put(largest + at.cast(f32), {0, 0});
  }));
  return out;
}

// A kernel built and given to the driver; prints its row and figure.
void measure(vk::Gpu& gpu, const vk::DeviceInfo& info, const std::string& name, const ir::Kernel& kernel) {
  auto start = std::chrono::steady_clock::now();
  double cpuStart = cpuMs();
  vulkan::KernelBinary binary;
  try {
    binary = vulkan::buildKernelBinary(kernel, vulkan::targetFor(info));
  } catch (const Error& e) {
    std::printf("%-20s runs on the CPU: %s\n", name.c_str(), e.what());
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
  double driver = msSince(start), cpu = cpuMs() - cpuStart;
  gpu::KernelFunction f = gpu::lowerWithinCodeBudget(kernel, vulkan::targetFor(info));  // the same lowering, for its counts
  std::printf("%-20s %4ld threads %5ld instructions %5ld accesses %7zu words %7.1f ms lowering %8.1f ms driver %8.1f ms cpu\n",
              name.c_str(), long(binary.workgroupSize), long(gpu::instructionCount(f.body)),
              long(gpu::memoryAccessCount(f.body)), binary.spirv->size(), lowering, driver, cpu);
  std::printf("FIGURE vulkan_cold_compile.%s %.1f ms\n", name.c_str(), lowering + driver);
  std::printf("FIGURE vulkan_cold_compile_cpu.%s %.1f ms\n", name.c_str(), cpu);
}

}  // namespace

int main(int argc, char** argv) {
  auto wanted = [&](const std::string& name) {
    for (int i = 1; i < argc; ++i)
      if (name.find(argv[i]) != std::string::npos) return true;
    return argc == 1;
  };
  setenv("MESA_SHADER_CACHE_DISABLE", "true", 1);  // before the driver loads
  if (!vk::status().available) {
    std::printf("vulkan-compile-bench: Vulkan not available: %s\n", vk::status().reason.c_str());
    return 0;
  }
  uint32_t index = vk::deviceIndex("vulkan");
  vk::DeviceInfo info = vk::listDevices().at(index);
  vk::Gpu gpu(index, {});
  std::printf("cold compiles on %s (Mesa shader cache off)\n", info.name.c_str());
  for (const std::string& name : samples::sampleNames())
    if (wanted(name)) measure(gpu, info, name, samples::traceSample(name, "vulkan"));
  for (const auto& [name, kernel] : scanAndSortKernels())
    if (wanted(name)) measure(gpu, info, name, kernel);
}
