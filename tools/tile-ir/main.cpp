// tile-ir: read, check, canonicalize and print tile IR.
//   tile-ir FILE.tir            parse, verify, canonicalize, print
//   tile-ir --sample gemm       the traced IR of a sample kernel
//   tile-ir --hash ...          the semantic hash instead of the text
//   tile-ir --stage=NAME ...    the IR after a pipeline stage (parsed, canonical, llvm)
//   tile-ir --stage=grad ...    the derived backward kernel (grad/derive_backward), canonical: the
//                               gradients of the float tensors read from those of the ones written
//   tile-ir --stage=llvm --cpu=avx2 ...  the CPU lowering for an x86 level, not this host's
//   tile-ir --stage=buffers [--cpu=L] ...  where the CPU lowering keeps each value (fused, buffer...)
//   tile-ir --stage=layout --target=T ...  the canonical IR with each value's layout on target T
//   tile-ir --stage=readahead --target=T ...  the dot operands of folds that may be read ahead
//   tile-ir --stage=kernel --target=T ...  the per-thread GPU kernel IR on target T
//   tile-ir --stage=spirv ...   the Vulkan compute shader, disassembled by spirv-dis (spirv-tools)
//   tile-ir --stage=ptx --target=sm_90 ...  the PTX for an NVIDIA target (--stage=llvm: its LLVM IR)
//   tile-ir --stage=amdgpu --target=gfx942 ...  the assembly for an AMD target (gfx942, gfx1100,
//                               gfx1151 with gfx1100's layouts; --stage=llvm: its LLVM IR)
//   tile-ir --stages=N --warp-specialize ...  every fold with N stages, warp-specialized, as
//                               p.stages and p.warp_specialize
//   tile-ir --warps=N ...       GPU stages on N warps (subgroups) per program, as p.warps,
//                               TILEJIT_VULKAN_WARPS or a spread over lavapipe's code budget give
#include <CLI/CLI.hpp>

#include <bit>
#include <cstdio>
#include <filesystem>
#include <unistd.h>
#include <fstream>
#include <iostream>
#include <sstream>

#include "grad/tile_backward.hpp"
#include "ir/passes.hpp"
#include "jit/cpu_compiler.hpp"
#include "layout/infer_layouts.hpp"
#include "lower/cpu/lower_to_llvm.hpp"
#include "lower/cpu/plan_buffers.hpp"
#include "lower/gpu/plan_read_ahead.hpp"
#include "lower/gpu/lower_to_kernel_ir.hpp"
#include "lower/gpu/spread_over_warps.hpp"
#include "lower/amdgpu/amdgpu.hpp"
#include "lower/ptx/nvptx.hpp"
#include "lower/spirv/print_kernel_ir.hpp"
#include "samples/kernels.hpp"

namespace {

const std::vector<std::string> kStages = {"parsed", "canonical", "grad", "split", "buffers", "llvm", "layout", "readahead", "kernel", "spirv", "ptx", "amdgpu", "asm"};

// The layout target `name` on `warps` warps per program (--warps, else the kernel's p.warps; 0:
// the target's default).
tj::layout::Target targetOn(const std::string& name, int64_t warps) {
  tj::layout::Target t = tj::layout::targetByName(name);
  if (warps == 0) return t;
  if (!std::has_single_bit(uint64_t(warps)) || warps * t.subgroupSize > t.maxWorkgroupThreads)
    throw tj::Error("tile-ir: --warps or p.warps of " + std::to_string(warps) + " is not a power of two from 1 to " +
                    std::to_string(t.maxWorkgroupThreads / t.subgroupSize) + " (" + name + "'s workgroups)");
  t.warpsPerProgram = warps;
  return t;
}

// The launch facts of --general (none) or else of contiguous tensors of whole vectors.
tj::gpu::KernelLoweringOptions launchOptions(const tj::ir::Kernel& k, bool general) {
  tj::gpu::KernelLoweringOptions options;
  options.vectorTensors.assign(k.tensors.size(), !general);
  return options;
}

// Lowered as a launch would lower it: for tensors that allow the target's widest accesses
// (contiguous, 16-byte-aligned rows), unless `general` asks for the kernel every launch can run.
tj::gpu::KernelFunction kernelIR(const tj::ir::Kernel& k, const std::string& target, int64_t warps, bool general) {
  const tj::layout::Target t = targetOn(target, warps);
  const tj::gpu::KernelLoweringOptions options = launchOptions(k, general);
  const tj::ir::Kernel lowered = tj::gpu::kernelForTarget(k, t, options);  // as the devices lower it
  return tj::gpu::lowerToKernelIR(lowered, tj::layout::inferLayouts(lowered, t), t, options);
}

// The CPU lowering's options for an x86 level, or this host's.
tj::cpu::CpuLoweringOptions cpuOptions(const std::string& isa) {
  return isa == "host" ? tj::jit::loweringOptions() : tj::cpu::loweringOptionsForIsa(isa);
}

// The NVIDIA target of --stage=ptx.
const std::string& nvidiaTarget(const std::string& target, const std::string& stage) {
  if (target.rfind("sm_", 0) != 0)
    throw tj::Error("tile-ir: --stage=" + stage + " needs an NVIDIA --target (sm_80, sm_89, sm_90, sm_90a), not '" + target + "'");
  return target;
}

// The layout target of an AMD arch of --stage=amdgpu (RDNA 3 and 3.5 take gfx1100's, CDNA gfx942's).
std::string amdLayoutTarget(const std::string& target, const std::string& stage) {
  if (target.rfind("gfx", 0) != 0)
    throw tj::Error("tile-ir: --stage=" + stage + " needs an AMD --target (gfx942, gfx1100, gfx1151), not '" + target + "'");
  return tj::amdgpu::layoutTargetName(target);
}

// Our SPIR-V is a binary; spirv-dis (from spirv-tools, a development tool, not a
// dependency of the library) turns it into text.
std::string disassemble(const std::vector<uint32_t>& words) {
  std::string path = std::filesystem::temp_directory_path() / ("tile-ir-" + std::to_string(getpid()) + ".spv");
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(words.data()),
                                              static_cast<std::streamsize>(words.size() * 4));
  FILE* pipe = popen(("spirv-dis --no-color '" + path + "' 2>&1").c_str(), "r");
  std::string text;
  char buf[4096];
  while (size_t n = pipe ? fread(buf, 1, sizeof buf, pipe) : 0) text.append(buf, n);
  int status = pipe ? pclose(pipe) : -1;
  std::filesystem::remove(path);
  if (status != 0) throw tj::Error("tile-ir: spirv-dis failed (install spirv-tools): " + text);
  return text;
}

tj::ir::Kernel readFile(const std::string& path, bool canonical) {
  std::ifstream in(path);
  if (!in) throw tj::Error(path + ": cannot open file");
  std::stringstream text;
  text << in.rdbuf();
  tj::ir::Kernel k;
  try {
    k = tj::ir::parse(text.str());
  } catch (const tj::ir::ParseError& e) {
    throw tj::Error(path + ":" + e.what());
  }
  tj::ir::verify(k);
  return canonical ? tj::ir::canonicalize(k) : k;
}

// Every fold of b with the integer attribute `key` = `value`.
void setOnFolds(tj::ir::Block& b, tj::ir::AttrKey<int64_t> key, int64_t value) {
  for (tj::ir::Op& op : b.ops) {
    if (op.code == tj::ir::OpCode::fold) op.set(key, value);
    for (tj::ir::Block& r : op.regions) setOnFolds(r, key, value);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Reads, checks, canonicalizes and prints tilejit tile IR", "tile-ir");
  std::string file, sample, stage = "canonical", target = "cpu", cpu = "host";
  bool hash = false, general = false;
  int64_t warps = 0, stages = 0;
  bool specialize = false;
  app.add_option("file", file, "a .tir file");
  app.add_option("--sample", sample, "print a sample kernel's IR instead of a file")
      ->check(CLI::IsMember(tj::samples::sampleNames()));
  app.add_option("--stage", stage, "the pipeline stage to print")->check(CLI::IsMember(kStages));
  app.add_flag("--hash", hash, "print the semantic hash instead of the IR");
  app.add_flag("--general", general,
               "GPU stages: the kernel for any tensor arguments (by default, for contiguous tensors whose rows are "
               "aligned to 16 bytes, which load and store whole vectors)");
  app.add_option("--target", target, "the target of --stage=layout, readahead, kernel, llvm, ptx and amdgpu (vulkan, sm_80, sm_89, sm_90, sm_90a, gfx1100, gfx942, gfx1151 for amdgpu, gfx950 for llvm only, cpu)");
  app.add_option("--cpu", cpu,
                 "--stage=buffers, asm, and llvm with --target=cpu: the x86 level to lower for (host, sse4.2, avx2, avx2vnni, avx512, "
                 "avx512vnni, avx512bf16, amx), "
                 "so that the output does not depend on this machine");
  app.add_option("--warps", warps,
                 "GPU stages: warps (subgroups) per program, a power of two, as p.warps (default: the kernel's p.warps, else "
                 "the target's 4)");
  app.add_option("--stages", stages, "every fold's stages, as p.stages (1 to 4)");
  app.add_flag("--warp-specialize", specialize, "every fold warp-specialized, as p.warp_specialize");
  CLI11_PARSE(app, argc, argv);
  if (file.empty() == sample.empty()) {
    std::fprintf(stderr, "tile-ir: give exactly one of FILE or --sample NAME\n");
    return 2;
  }
  try {
    tj::ir::Kernel k = sample.empty() ? readFile(file, stage != "parsed") : tj::samples::traceSample(sample);
    if (warps == 0) warps = k.warps;  // the kernel's own p.warps, as the devices take them
    if (stages) setOnFolds(k.body, tj::ir::attr::stages, stages);
    if (specialize) setOnFolds(k.body, tj::ir::attr::specialize, 1);
    if (stages || specialize) tj::ir::verify(k);
    if (hash) std::cout << tj::ir::hashHex(tj::ir::semanticHash(k)) << "\n";
    else if (stage == "grad") std::cout << tj::ir::print(tj::ir::canonicalize(tj::grad::backwardKernel(k)));
    else if (stage == "buffers") std::cout << tj::cpu::printWithBuffers(k, tj::cpu::planBuffers(k, tj::cpu::UseInfo(k), cpuOptions(cpu)));
    else if (stage == "llvm" && target == "cpu") std::cout << tj::cpu::lowerToLLVMText(k, cpuOptions(cpu));
    else if (stage == "asm")
      std::cout << tj::jit::assemblyOf(k, cpu == "host" ? tj::jit::hostTarget() : tj::jit::x86TargetForIsa(cpu), cpuOptions(cpu));
    else if (stage == "llvm" && target.rfind("gfx", 0) == 0)
      std::cout << tj::amdgpu::printLlvmIr(kernelIR(k, amdLayoutTarget(target, stage), warps, general), target);
    else if (stage == "llvm")
      std::cout << tj::ptx::printNvptxLlvm(kernelIR(k, nvidiaTarget(target, stage), warps, general), target);
    else if (stage == "amdgpu")
      std::cout << tj::amdgpu::printAssembly(kernelIR(k, amdLayoutTarget(target, stage), warps, general), target);
    else if (stage == "ptx") std::cout << tj::ptx::printPtx(kernelIR(k, nvidiaTarget(target, stage), warps, general), target);
    else if (stage == "split") std::cout << tj::ir::print(tj::ir::splitFoldsAtMasks(k));
    else if (stage == "readahead" || stage == "layout") {
      const tj::layout::Target t = targetOn(target, warps);
      const tj::ir::Kernel lowered = tj::gpu::kernelForTarget(k, t, launchOptions(k, general));
      const tj::layout::LayoutAssignment a = tj::layout::inferLayouts(lowered, t);
      std::cout << (stage == "layout" ? tj::layout::printWithLayouts(lowered, a)
                                      : tj::gpu::printReadAhead(lowered, tj::gpu::planReadAhead(lowered, a)));
    }
    else if (stage == "kernel") std::cout << tj::gpu::print(kernelIR(k, target, warps, general));
    else if (stage == "spirv") std::cout << disassemble(tj::spirv::printSpirv(kernelIR(k, "vulkan", warps, general)));
    else std::cout << tj::ir::print(k);
  } catch (const tj::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
