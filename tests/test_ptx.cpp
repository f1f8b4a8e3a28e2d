// NVIDIA through LLVM's NVPTX backend (lower/llvm_gpu, lower/ptx): every sample's kernel
// printed as PTX and assembled by the CUDA toolkit's ptxas. There is no GPU here, so these
// check everything short of running: that the PTX is what ptxas accepts, and the
// instructions that carry the semantics (no contraction, mma.sync for f16 dots).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "ir/passes.hpp"
#include "layout/infer_layouts.hpp"
#include "lower/gpu/lower_to_kernel_ir.hpp"
#include "lower/ptx/nvptx.hpp"
#include "samples/kernels.hpp"
#include "tests/support.hpp"

namespace tj::ptxtest {

namespace {

const char* const kArchs[] = {"sm_80", "sm_90"};

std::string ptxOf(const ir::Kernel& k, const std::string& arch) {
  const layout::Target& t = layout::targetByName(arch);
  return ptx::printPtx(gpu::lowerToKernelIR(k, layout::inferLayouts(k, t), t), arch);
}

// ptxas from PATH or the toolkit's default place; "" when there is none.
std::string ptxas() {
  if (test::runCommand("command -v ptxas").status == 0) return "ptxas";
  if (std::filesystem::exists("/usr/local/cuda/bin/ptxas")) return "/usr/local/cuda/bin/ptxas";
  return "";
}

// Assembles `ptx` for `arch`; ptxas -v's report. Without ptxas: skipped with a message, or a
// failure when TILEJIT_REQUIRE_PTXAS=1 (as in CI).
std::string assemble(const std::string& ptx, const std::string& arch) {
  std::string tool = ptxas();
  if (tool.empty()) {
    const char* require = std::getenv("TILEJIT_REQUIRE_PTXAS");
    if (require && std::string(require) == "1") FAIL("ptxas is required here (the CUDA toolkit under /usr/local/cuda)");
    MESSAGE("skipped: no ptxas (the CUDA toolkit)");
    return "";
  }
  static int counter = 0;
  auto base = std::filesystem::temp_directory_path() /
              ("tilejit_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
  std::ofstream(base.string() + ".ptx") << ptx;
  test::CommandResult r = test::runCommand(tool + " -v -arch=" + arch + " " + base.string() + ".ptx -o " +
                                           base.string() + ".cubin 2>&1");
  std::filesystem::remove(base.string() + ".ptx");
  std::filesystem::remove(base.string() + ".cubin");
  CHECK_MESSAGE(r.status == 0, r.output);
  return r.output;
}

}  // namespace

TEST_CASE("ptx: every sample's kernel prints as PTX that ptxas assembles for sm_80 and sm_90") {
  int assembled = 0;
  for (const std::string& name : samples::sampleNames()) {
    ir::Kernel k = samples::traceSample(name);
    for (const char* arch : kArchs) {
      CAPTURE(name);
      CAPTURE(arch);
      std::string ptx = ptxOf(k, arch);
      CHECK(ptx.find(".visible .entry " + k.name) != std::string::npos);
      CHECK(ptx.find(std::string(".target ") + arch) != std::string::npos);
      std::string report = assemble(ptx, arch);
      assembled += !report.empty();
    }
  }
  MESSAGE("ptx: " << assembled << " kernels assembled by ptxas");
}

TEST_CASE("ptx: an f16 dot runs on mma.sync with f32 accumulators") {
  std::string ptx = ptxOf(samples::traceSample("attention_f16"), "sm_90");
  CHECK(ptx.find("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") != std::string::npos);
  CHECK(ptx.find("bar.sync") != std::string::npos);
  CHECK(ptx.find("shfl.sync.bfly.b32") != std::string::npos);
}

TEST_CASE("ptx: float products and sums stay separate roundings, as on the host") {
  std::string ptx = ptxOf(samples::traceSample("fused"), "sm_80");  // relu(a * b + c)
  CHECK(ptx.find("mul.rn.f32") != std::string::npos);
  CHECK(ptx.find("add.rn.f32") != std::string::npos);
  CHECK(ptx.find("fma.") == std::string::npos);
}

TEST_CASE("ptx: accurate exp is lower/math's, not the hardware's approximation") {
  std::string ptx = ptxOf(samples::traceSample("softmax"), "sm_90");
  CHECK(ptx.find("ex2.approx") == std::string::npos);
  CHECK(ptx.find("cvt.rni.f32.f32") != std::string::npos);  // the exp's k = roundEven(x·log2(e))
}

TEST_CASE("ptx: what the printer cannot print yet is an error naming it, and other targets are refused") {
  ir::Kernel k = ir::parse(R"(kernel @frem(t0: tensor<f32, 1>) grid 1 {
  %0 = constant() {value = 0} : i64
  %1 = load(%0) {fill = 1.0, tensor = 0} : tile<64xf32>
  %2 = rem(%1, %1) : tile<64xf32>
  store(%0, %2) {tensor = 0}
})");
  ir::verify(k);
  CHECK_THROWS_WITH_AS(ptxOf(ir::canonicalize(k), "sm_90"), doctest::Contains("binary rem on f32"), Error);
  const layout::Target& t = layout::targetByName("sm_90");
  ir::Kernel add = samples::traceSample("vector_add");
  CHECK_THROWS_WITH_AS(ptx::printPtx(gpu::lowerToKernelIR(add, layout::inferLayouts(add, t), t), "gfx942"),
                       doctest::Contains("unknown target 'gfx942'"), Error);
}

}  // namespace tj::ptxtest
