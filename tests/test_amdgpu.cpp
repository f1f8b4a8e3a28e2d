// The AMDGPU back end's printing and compiling, checked without an AMD GPU (none is within
// reach): every sample compiles through LLVM's AMDGPU backend for CDNA 3 (gfx942, wave64) and
// RDNA 3 (gfx1100, wave32), the dots land on the matrix cores, and the kernel descriptors say
// what the kernels need.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "ir/error.hpp"
#include "ir/passes.hpp"
#include "layout/infer_layouts.hpp"
#include "lower/amdgpu/amdgpu.hpp"
#include "lower/gpu/lower_to_kernel_ir.hpp"
#include "lower/gpu/spread_over_warps.hpp"
#include "lower/llvm_gpu/print_kernel_ir.hpp"
#include "samples/kernels.hpp"
#include "tests/support.hpp"

#include <unistd.h>

using namespace tj;

namespace {

gpu::KernelFunction loweredFor(const ir::Kernel& k, const std::string& layoutTarget) {
  const layout::Target& t = layout::targetByName(layoutTarget);
  gpu::KernelLoweringOptions contiguous;
  contiguous.vectorTensors.assign(k.tensors.size(), true);
  return gpu::lowerToKernelIR(k, layout::inferLayouts(k, t), t, contiguous);
}

std::string assemblyOf(const ir::Kernel& k, const std::string& arch) { return amdgpu::printAssembly(loweredFor(k, arch), arch); }

// As the HIP device compiles it: its own warps (p.warps), or more where the code budget asks.
std::string deviceAssemblyOf(const ir::Kernel& k, const std::string& arch) {
  gpu::KernelLoweringOptions contiguous;
  contiguous.vectorTensors.assign(k.tensors.size(), true);
  return amdgpu::printAssembly(gpu::lowerWithinCodeBudget(k, layout::targetByName(arch), contiguous), arch);
}

// A kernel-descriptor field of the code object's metadata (".vgpr_count:     28"), -1 if absent.
int64_t metadata(const std::string& assembly, const std::string& field) {
  size_t at = assembly.find("." + field + ":");
  return at == std::string::npos ? -1 : std::stoll(assembly.substr(at + field.size() + 2));
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// Whether `instruction` lies in a loop of the assembly: between a label and a later branch
// (s_branch or s_cbranch_*) back to it.
std::optional<std::string> loopHolding(const std::string& assembly, const std::string& instruction) {
  for (size_t branch = assembly.find("branch .LBB"); branch != std::string::npos; branch = assembly.find("branch .LBB", branch + 1)) {
    size_t name = branch + 7, end = assembly.find('\n', branch);
    size_t label = assembly.find("\n" + assembly.substr(name, end - name) + ":");
    if (label < branch && assembly.substr(label, branch - label).find(instruction) != std::string::npos)
      return assembly.substr(label, branch - label);
  }
  return std::nullopt;
}
bool inLoop(const std::string& assembly, const std::string& instruction) { return loopHolding(assembly, instruction).has_value(); }

}  // namespace

TEST_CASE("amdgpu: every sample's kernel compiles for gfx942 (wave64) and gfx1100 (wave32)") {
  int compiled = 0;
  for (const std::string& name : samples::sampleNames()) {
    ir::Kernel k = samples::traceSample(name);
    for (const char* arch : {"gfx942", "gfx1100"}) {
      CAPTURE(name);
      CAPTURE(arch);
      std::string assembly = assemblyOf(k, arch);
      CHECK(assembly.find(".amdhsa_kernel " + llvmgpu::entryName(k.name)) != std::string::npos);
      CHECK(assembly.find(std::string(".amdgcn_target \"amdgcn-amd-amdhsa--") + arch) != std::string::npos);
      CHECK((assembly.find(".amdhsa_wavefront_size32 1") != std::string::npos) == (std::string(arch) == "gfx1100"));
      compiled += metadata(assembly, "vgpr_count") > 0;
    }
  }
  std::printf("amdgpu: %d kernels compiled for AMDGPU\n", compiled);  // tools/dev test adds these up
}

TEST_CASE("amdgpu: f16 and bf16 gemm and attention run v_mfma on gfx942 and v_wmma on gfx1100, without scratch at the hip defaults") {
  for (const char* dtype : {"f16", "bf16"})
    for (const char* sample : {"gemm_f16", "attention_f16"}) {
      CAPTURE(dtype);
      CAPTURE(sample);
      ir::Kernel k = test::retyped(samples::traceSample(sample, "hip"), {{"f16", dtype}});
      std::string cdna = deviceAssemblyOf(k, "gfx942"), rdna = deviceAssemblyOf(k, "gfx1100");
      CHECK(inLoop(cdna, std::string("v_mfma_f32_32x32x8_") + dtype));  // the K (key) loop's
      CHECK(inLoop(rdna, std::string("v_wmma_f32_16x16x16_") + dtype));
      CHECK_FALSE(inLoop(cdna, "s_endpgm"));  // the kernel's end lies in no loop
      CHECK(metadata(cdna, "private_segment_fixed_size") == 0);  // no spills
      CHECK(metadata(rdna, "private_segment_fixed_size") == 0);
      std::printf("amdgpu: %s %s: gfx942 %lld VGPRs (%lld AGPRs), %lld bytes of LDS; gfx1100 %lld VGPRs, %lld bytes of LDS\n",
                  sample, dtype, (long long)metadata(cdna, "vgpr_count"), (long long)metadata(cdna, "agpr_count"),
                  (long long)metadata(cdna, "group_segment_fixed_size"), (long long)metadata(rdna, "vgpr_count"),
                  (long long)metadata(rdna, "group_segment_fixed_size"));
    }
}

TEST_CASE("amdgpu: the gemm's K loop meets at one s_barrier and stores the next blocks after its matrix instructions began") {
  ir::Kernel k = samples::traceSample("gemm_f16", "hip");
  for (const char* arch : {"gfx942", "gfx1100"}) {
    CAPTURE(arch);
    const std::string matrix = std::string(arch) == "gfx942" ? "v_mfma" : "v_wmma";
    std::optional<std::string> found = loopHolding(deviceAssemblyOf(k, arch), matrix);
    REQUIRE(found);
    const std::string& loop = *found;
    // LLVM rotates the loop: the dots on this stage with the stores of the next blocks among
    // them, the barrier, then the loads of the blocks after (the next rotation's dots hide them).
    CHECK(count(loop, "s_barrier") == 1);
    CHECK(count(loop, "global_load") > 0);
    size_t store = std::min(loop.find("ds_store"), loop.find("ds_write"));  // GFX11's name, GFX9's
    REQUIRE(store != std::string::npos);
    CHECK(store > loop.find(matrix));
  }
}

TEST_CASE("amdgpu: a gemm of 16-row blocks runs v_mfma_f32_16x16x16 on gfx942, in its K loop") {
  for (const char* dtype : {"f16", "bf16"}) {
    CAPTURE(dtype);
    CaptureTraces capture;
    DType t = std::string(dtype) == "f16" ? f16 : bf16;
    samples::gemm(Tensor::zeros({37, 29}, t), Tensor::zeros({29, 23}, t), Tensor::zeros({37, 23}), {},
                  samples::GemmBlocks{16, 64, 32});
    std::string assembly = deviceAssemblyOf(capture.kernels().at(0), "gfx942");
    CHECK(inLoop(assembly, std::string("v_mfma_f32_16x16x16_") + dtype));
    CHECK(count(assembly, "v_mfma_f32_32x32x8") == 0);
    CHECK(metadata(assembly, "private_segment_fixed_size") == 0);
  }
}

TEST_CASE("amdgpu: every hip tuning candidate of the f16 gemm and causal attention compiles without scratch on both") {
  auto heads = [] { return Tensor::zeros({1, 2, 37, 64}, f16); };
  auto check = [](const ir::Kernel& k) {
    for (const char* arch : {"gfx942", "gfx1100"}) {
      CAPTURE(arch);
      CHECK(metadata(deviceAssemblyOf(k, arch), "private_segment_fixed_size") == 0);
    }
  };
  for (const TuneConfig& config : samples::gemmTuneSpace("hip")) {
    CAPTURE(config.str());
    CaptureTraces capture;
    samples::gemm(Tensor::zeros({37, 29}, f16), Tensor::zeros({29, 23}, f16), Tensor::zeros({37, 23}), {},
                  samples::GemmBlocks::from(config));
    check(capture.kernels().at(0));
  }
  for (const TuneConfig& config : samples::attentionTuneSpace("hip")) {
    CAPTURE(config.str());
    CaptureTraces capture;
    samples::attention(heads(), heads(), heads(), heads(), true, {}, samples::AttentionBlocks::from(config));
    check(capture.kernels().at(0));
  }
}

TEST_CASE("amdgpu: lanes exchange values by ds_bpermute, workgroups meet at s_barrier, the grid size comes from the dispatch packet") {
  std::string softmax = assemblyOf(samples::traceSample("softmax"), "gfx942");
  CHECK(count(softmax, "ds_bpermute_b32") > 0);
  std::string gemm = assemblyOf(samples::traceSample("gemm_f16"), "gfx1100");
  CHECK(count(gemm, "s_barrier") > 0);
  CHECK(metadata(gemm, "group_segment_fixed_size") > 0);  // its blocks in LDS
  ir::Kernel grid = ir::parse(R"(kernel @grid(t0: tensor<i32, 1>) grid 1 {
  %0 = program_id() {axis = 0} : i64
  %1 = num_programs() {axis = 0} : i64
  %2 = cast(%1) : i32
  %3 = reshape(%2) : tile<1xi32>
  store(%0, %3) {tensor = 0}
})");
  ir::verify(grid);
  std::string ir = amdgpu::printLlvmIr(loweredFor(grid, "gfx942"), "gfx942");
  CHECK(ir.find("llvm.amdgcn.dispatch.ptr") != std::string::npos);
  CHECK(ir.find("amdgpu_kernel") != std::string::npos);
  CHECK(ir.find("\"denormal-fp-math-f32\"=\"ieee,ieee\"") != std::string::npos);  // lower/math needs subnormals
}

TEST_CASE("amdgpu: gfx1151 compiles gfx1100's wave32 kernels, and an unknown arch or another wave size is a clear error") {
  ir::Kernel k = samples::traceSample("gemm_f16");
  std::string apu = amdgpu::printAssembly(loweredFor(k, "gfx1100"), "gfx1151");
  CHECK(apu.find("amdgcn-amd-amdhsa--gfx1151") != std::string::npos);
  CHECK(count(apu, "v_wmma_f32_16x16x16_f16") > 0);
  CHECK(amdgpu::waveSize("gfx942") == 64);
  CHECK(amdgpu::waveSize("gfx1151") == 32);
  CHECK_THROWS_WITH_AS(amdgpu::printAssembly(loweredFor(k, "gfx942"), "gfx1100"),
                       doctest::Contains("lowered for subgroups of 64 lanes; gfx1100 runs waves of 32"), Error);
  CHECK_THROWS_WITH_AS(amdgpu::printAssembly(loweredFor(k, "gfx942"), "gfx9999"), doctest::Contains("does not know the target 'gfx9999'"),
                       Error);
}

TEST_CASE("amdgpu: LLD links a kernel into a code object: a shared ELF with the kernel's descriptor, its gemm on v_mfma") {
  ir::Kernel k = samples::traceSample("gemm_f16");
  std::vector<char> code = amdgpu::compileCodeObject(loweredFor(k, "gfx942"), "gfx942");
  REQUIRE(code.size() > 64);
  CHECK(std::string(code.begin(), code.begin() + 4) == "\x7f" "ELF");
  uint16_t type = 0;
  std::memcpy(&type, code.data() + 16, 2);
  CHECK(type == 3);  // ET_DYN
  std::string bytes(code.begin(), code.end());
  CHECK(bytes.find(llvmgpu::entryName(k.name) + ".kd") != std::string::npos);  // the kernel descriptor's symbol
  CHECK(bytes.find("amdhsa.kernels") != std::string::npos);                      // the metadata note HIP reads
  // What llvm-objdump (llvm-19, installed with LLVM) disassembles of it.
  std::filesystem::path file = std::filesystem::temp_directory_path() / ("tilejit-test-" + std::to_string(getpid()) + ".hsaco");
  std::ofstream(file, std::ios::binary).write(code.data(), std::streamsize(code.size()));
  test::CommandResult dis = test::runCommand("llvm-objdump-19 -d --mcpu=gfx942 '" + file.string() + "'");
  std::filesystem::remove(file);
  REQUIRE(dis.status == 0);
  CHECK(count(dis.output, "v_mfma_f32_32x32x8_f16") > 0);
  CHECK(count(dis.output, "s_endpgm") > 0);
}

TEST_CASE("amdgpu: a compiled kernel is a 64-bit little-endian ELF object for EM_AMDGPU") {
  std::vector<char> object = amdgpu::compileObject(loweredFor(samples::traceSample("vector_add"), "gfx942"), "gfx942");
  REQUIRE(object.size() > 64);
  CHECK(std::string(object.begin(), object.begin() + 4) == "\x7f" "ELF");
  CHECK(object[4] == 2);  // ELFCLASS64
  CHECK(object[5] == 1);  // little-endian
  uint16_t machine = 0;
  std::memcpy(&machine, object.data() + 18, 2);
  CHECK(machine == 224);  // EM_AMDGPU
}
