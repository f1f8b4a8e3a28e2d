// tile-ir, golden IR of the samples, hash stability across processes, TILEJIT_DUMP.
#include <doctest/doctest.h>

#include "tests/support.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "dsl/tilejit.hpp"
#include "ir/passes.hpp"
#include "lower/cpu/lower_to_llvm.hpp"
#include "lower/cpu/plan_buffers.hpp"
#include "samples/kernels.hpp"

namespace fs = std::filesystem;
using namespace tj;

namespace {

using test::CommandResult;
using test::runCommand;


std::string tileIr(const std::string& args) { return test::binDir() + "/tile-ir " + args; }

}  // namespace

TEST_CASE("every sample's IR round-trips through text and matches its golden file") {
  for (const std::string& name : samples::sampleNames()) {
    CAPTURE(name);
    ir::Kernel k = samples::traceSample(name);
    std::string text = ir::print(k);
    ir::Kernel reparsed = ir::parse(text);
    ir::verify(reparsed);
    CHECK(ir::print(reparsed) == text);
    CHECK(ir::semanticHash(reparsed) == ir::semanticHash(k));
    CHECK(ir::print(ir::canonicalize(reparsed)) == text);  // traced IR is already canonical
    fs::path golden = fs::path(TILEJIT_SOURCE_DIR) / "tests" / "golden" / (name + ".tir");
    if (std::getenv("TILEJIT_UPDATE_GOLDEN")) std::ofstream(golden) << text;
    CHECK(test::readText(golden) == text);
  }
}

// The CPU lowering's unoptimized LLVM IR at fixed x86 levels, which tile-ir prints too: a
// change to what the lowering emits shows in these files' diffs.
TEST_CASE("the CPU lowering of samples at fixed ISA levels matches its golden files, as tile-ir --cpu prints it") {
  fs::path dir = fs::path(TILEJIT_SOURCE_DIR) / "tests" / "golden" / "cpu";
  bool update = std::getenv("TILEJIT_UPDATE_GOLDEN") != nullptr;
  if (update) fs::create_directories(dir);
  const std::pair<const char*, const char*> cases[] = {
      {"vector_add", "sse4.2"}, {"softmax", "avx2"}, {"gemm", "avx2"}, {"gemm_f16", "avx512"}};
  for (const auto& [name, isa] : cases) {
    CAPTURE(name);
    CAPTURE(isa);
    std::string text = cpu::lowerToLLVMText(samples::traceSample(name), cpu::loweringOptionsForIsa(isa));
    fs::path golden = dir / (std::string(name) + "." + isa + ".ll");
    if (update) std::ofstream(golden) << text;
    CHECK(test::readText(golden) == text);
  }
  CommandResult printed = runCommand(tileIr("--sample softmax --stage=llvm --target=cpu --cpu=avx2"));
  CHECK(printed.status == 0);
  CHECK(printed.output == test::readText(dir / "softmax.avx2.ll"));
  CommandResult unknown = runCommand(tileIr("--sample softmax --stage=llvm --target=cpu --cpu=avx3"));
  CHECK(unknown.status == 1);
  CHECK(unknown.output.find("cpu: unknown ISA level 'avx3' (sse4.2, avx2, avx2vnni, avx512, avx512vnni, avx512bf16, amx)") !=
        std::string::npos);
  // The optimized assembly for a CPU of a level, whatever this host is.
  CommandResult assembly = runCommand(tileIr("--sample gemm_bf16 --stage=asm --cpu=amx"));
  CHECK(assembly.status == 0);
  CHECK(assembly.output.find("tdpbf16ps") != std::string::npos);
  CHECK(assembly.output.find("ldtilecfg") != std::string::npos);
}

// The CPU lowering's first step: where each value lives (fused into its users' loops, a buffer,
// an f32 buffer for a narrow-float dot operand, read in place by a dot).
TEST_CASE("the CPU buffer plans of samples match their golden files, as tile-ir --stage=buffers prints them") {
  fs::path dir = fs::path(TILEJIT_SOURCE_DIR) / "tests" / "golden" / "cpu";
  bool update = std::getenv("TILEJIT_UPDATE_GOLDEN") != nullptr;
  const std::pair<const char*, const char*> cases[] = {{"gemm", "avx2"}, {"attention_f16", "avx512"}, {"softmax", "avx2"}};
  for (const auto& [name, isa] : cases) {
    CAPTURE(name);
    ir::Kernel k = samples::traceSample(name);
    std::string text = cpu::printWithBuffers(k, cpu::planBuffers(k, cpu::UseInfo(k), cpu::loweringOptionsForIsa(isa)));
    fs::path golden = dir / (std::string(name) + "." + isa + ".buffers");
    if (update) std::ofstream(golden) << text;
    CHECK(test::readText(golden) == text);
    CommandResult printed = runCommand(tileIr("--sample " + std::string(name) + " --stage=buffers --cpu=" + isa));
    CHECK(printed.status == 0);
    CHECK(printed.output == text);
  }
  CHECK(test::readText(dir / "gemm.avx2.buffers").find("// read in place") != std::string::npos);
  CHECK(test::readText(dir / "attention_f16.avx512.buffers").find("// buffer of f32") != std::string::npos);
}

// Tiles used more than once: a block read is read again where each use is, and so is an
// expression of a few one-instruction ops; a costly one, one a loop uses, or one read again
// after a tensor is written gets a buffer, and so does a costly tile a broadcast expands.
TEST_CASE("the CPU buffer plan recomputes reads and cheap tiles at each use, not costly or loop-invariant ones") {
  Tensor x = Tensor::random({8, 64}, 5), out = Tensor::zeros({8, 64});
  TracedKernel traced = trace({2}, [&](Program& p) {
    Tile t = p.read(x, {4, 64}).at({p.id(0), 0});  // read by the sum, the centering and the abs
    Tile centered = t - t.sum(1, true) / 64.0;      // a sub of a row's mean (a division, buffered)
    Tile e = centered.exp();                        // costly
    Tile magnitude = t.abs();                       // cheap, but the loop uses it
    Tile acc = p.fold(0, 2, p.zeros({4, 64}), [&](Index, Tile a) { return a + magnitude; });
    p.write(out, {4, 64}).put(centered * centered + e * e + acc, {p.id(0), 0});
  }, "plan");
  const ir::Kernel& k = *traced.kernel;
  cpu::UseInfo info(k);
  cpu::BufferPlan plan = cpu::planBuffers(k, info, cpu::loweringOptionsForIsa("avx2"));
  auto resultOf = [&](ir::OpCode code) {
    auto op = std::find_if(k.body.ops.begin(), k.body.ops.end(), [&](const ir::Op& o) { return o.code == code; });
    REQUIRE_MESSAGE(op != k.body.ops.end(), "no " << ir::opName(code) << " in the kernel");
    return op->results[0];
  };
  CHECK(info.uses[resultOf(ir::OpCode::load)] == 3);
  CHECK(plan.of[resultOf(ir::OpCode::load)] == cpu::Placement::fused);
  CHECK(info.uses[resultOf(ir::OpCode::sub)] == 3);
  CHECK(plan.of[resultOf(ir::OpCode::sub)] == cpu::Placement::fused);
  CHECK(plan.of[resultOf(ir::OpCode::exp)] == cpu::Placement::buffer);
  CHECK(plan.of[resultOf(ir::OpCode::abs)] == cpu::Placement::buffer);
  CHECK(plan.of[resultOf(ir::OpCode::div)] == cpu::Placement::buffer);
  // And the kernel computes what it says: out = c^2 + exp(c)^2 + 2|x|, c = x - mean(row).
  launch(traced, {2}, RunOptions{.device = "cpu"});
  std::vector<double> xv = x.values();
  for (int64_t r = 0; r < 8; ++r) {
    double mean = 0;
    for (int64_t c = 0; c < 64; ++c) mean += xv[size_t(r * 64 + c)] / 64;
    for (int64_t c = 0; c < 64; ++c) {
      double centered = xv[size_t(r * 64 + c)] - mean, e = std::exp(centered);
      CHECK(out.item(r * 64 + c) == doctest::Approx(centered * centered + e * e + 2 * std::fabs(xv[size_t(r * 64 + c)])).epsilon(1e-5));
    }
  }
}

// Rounding to bf16 is several ops, so a bf16 tile used twice is not computed again at each use.
TEST_CASE("the CPU buffer plan buffers a bf16 tile used twice") {
  Tensor x = Tensor::random({4, 64}, 7), y = Tensor::zeros({4, 64});
  TracedKernel traced = trace({1}, [&](Program& p) {
    Tile narrow = (p.read(x, {4, 64}).at({0, 0}) * 3.0).cast(DType::bf16);
    p.write(y, {4, 64}).put(narrow.cast(DType::f32) + narrow.abs().cast(DType::f32), {0, 0});
  }, "bf16_twice");
  const ir::Kernel& k = *traced.kernel;
  cpu::UseInfo info(k);
  cpu::BufferPlan plan = cpu::planBuffers(k, info, cpu::loweringOptionsForIsa("avx2"));
  const ir::Op& rounding = *std::find_if(k.body.ops.begin(), k.body.ops.end(), [&](const ir::Op& op) {
    return op.code == ir::OpCode::cast && k.type(op.results[0]).dtype == DType::bf16;
  });
  CHECK(info.uses[size_t(rounding.results[0])] == 2);
  CHECK(plan.of[size_t(rounding.results[0])] == cpu::Placement::buffer);
}

// A block read by two ops with a store between them keeps its copy: the store's tensor may be
// another view of the memory the block was read from.
TEST_CASE("the CPU buffer plan copies a block read again after a store") {
  Tensor x = Tensor::random({4, 64}, 6), y = Tensor::zeros({4, 64}), z = Tensor::zeros({4, 64});
  TracedKernel traced = trace({1}, [&](Program& p) {
    Tile t = p.read(x, {4, 64}).at({0, 0});
    p.write(y, {4, 64}).put(t * 2.0, {0, 0});
    p.write(z, {4, 64}).put(t + 1.0, {0, 0});
  }, "read_store_read");
  const ir::Kernel& k = *traced.kernel;
  cpu::BufferPlan plan = cpu::planBuffers(k, cpu::UseInfo(k), cpu::loweringOptionsForIsa("avx2"));
  const ir::Op& load = *std::find_if(k.body.ops.begin(), k.body.ops.end(), [](const ir::Op& op) { return op.code == ir::OpCode::load; });
  CHECK(plan.of[size_t(load.results[0])] == cpu::Placement::buffer);
}

// Halide's habit: with spdlog at debug, each lowering step logs its result as tile-ir prints it.
TEST_CASE("at debug level the lowerings log each step: buffer plan, layouts, read-ahead plan, kernel IR") {
  Tensor x = Tensor::random({300}, 91), out = Tensor::zeros({300});
  std::vector<std::string> devices = {"cpu"};
  if (test::vulkanAvailable()) devices.push_back("vulkan");
  for (const std::string& device : devices) {
    CAPTURE(device);
    test::CaptureLog log;
    spdlog::default_logger()->set_level(spdlog::level::debug);
    static const double fresh = double(std::random_device{}() % 100000);
    double c = fresh + (device == "cpu" ? 0.5 : 0.25);  // a kernel no cache holds: its first launch lowers it
    run({3}, [&](Program& p) { p.write(out, {128}).put(p.read(x, {128}).at({p.id(0)}).exp() + c, {p.id(0)}); },
        RunOptions{.name = "logged_steps", .device = device});
    std::string text = log.text();
    if (device == "cpu") {
      CHECK(text.find("tilejit: logged_steps buffer plan\n") != std::string::npos);
    } else {
      for (const char* step : {"layouts", "read-ahead plan", "kernel IR"})
        CHECK_MESSAGE(text.find("tilejit: logged_steps " + std::string(step) + "\n") != std::string::npos, step);
    }
  }
}

TEST_CASE("tile-ir prints the same IR and hash as the library, and the hash is equal across processes") {
  for (const std::string& name : {"gemm", "attention_causal"}) {
    CAPTURE(name);
    ir::Kernel k = samples::traceSample(name);
    CommandResult first = runCommand(tileIr("--sample " + std::string(name) + " --hash"));
    CommandResult second = runCommand(tileIr("--sample " + std::string(name) + " --hash"));
    REQUIRE(first.status == 0);
    CHECK(first.output == second.output);
    CHECK(first.output == ir::hashHex(ir::semanticHash(k)) + "\n");
    CHECK(runCommand(tileIr("--sample " + std::string(name))).output == ir::print(k));
  }
}

TEST_CASE("tile-ir --stages and --warp-specialize set every fold's, as p.stages and p.warp_specialize") {
  CommandResult kernel = runCommand(tileIr("--sample gemm_bf16 --stage=kernel --target=sm_90a --warps 8 --stages 4 --warp-specialize"));
  REQUIRE(kernel.status == 0);
  CHECK(kernel.output.find("workgroup 384") != std::string::npos);  // a producer warpgroup more
  CHECK(kernel.output.find("branch(") != std::string::npos);
  CHECK(kernel.output.find("set_max_registers") != std::string::npos);
  CommandResult text = runCommand(tileIr("--sample gemm_bf16 --stage=parsed --stages 3 --warp-specialize"));
  CHECK(text.output.find("{specialize = 1, stages = 3}") != std::string::npos);
  CommandResult bad = runCommand(tileIr("--sample gemm_bf16 --stages 7"));
  CHECK(bad.status != 0);
  CHECK(bad.output.find("fold: stages = 7 is outside [1, 4]") != std::string::npos);
}

// A kernel dumped with p.warps (TILEJIT_DUMP) prints as the device lowers it: on its warps.
TEST_CASE("tile-ir's GPU stages lower a kernel on its own p.warps unless --warps says otherwise") {
  fs::path dir = test::scratchDir("test", "warps");
  std::string text = ir::print(samples::traceSample("gemm_bf16"));
  REQUIRE(text.find("grid 2 {") != std::string::npos);
  text.replace(text.find("grid 2 {"), 8, "grid 2 warps 8 {");
  std::ofstream(dir / "gemm.tir") << text;
  const std::string file = (dir / "gemm.tir").string();
  CHECK(runCommand(tileIr(file + " --stage=kernel --target=sm_90a")).output.find("workgroup 256 ") != std::string::npos);
  CHECK(runCommand(tileIr(file + " --stage=kernel --target=sm_90a --warps 4")).output.find("workgroup 128 ") != std::string::npos);
  CHECK(runCommand(tileIr(file + " --stage=layout --target=sm_90a")).output.find("wpc=[8,1]") != std::string::npos);
}

TEST_CASE("tile-ir reads a file back: round trip, and any semantic edit changes the hash") {
  fs::path dir = test::scratchDir("test", "edit");
  std::string text = ir::print(samples::traceSample("gemm"));
  std::ofstream(dir / "gemm.tir") << text;
  CommandResult printed = runCommand(tileIr((dir / "gemm.tir").string()));
  REQUIRE(printed.status == 0);
  CHECK(printed.output == text);
  std::string baseHash = runCommand(tileIr("--hash " + (dir / "gemm.tir").string())).output;

  // Each edit changes meaning: a block shape, a dtype, a constant, an op.
  const std::vector<std::pair<std::string, std::string>> edits = {
      {"tile<128x64xf32>", "tile<128x32xf32>"}, {"tensor<f32, 2>", "tensor<f16, 2>"}, {"value = 64}", "value = 65}"},
      {"= mul(", "= add("}};
  for (const auto& [from, to] : edits) {
    CAPTURE(from);
    size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    std::string edited = text;
    edited.replace(at, from.size(), to);
    ir::Kernel k = ir::parse(edited);
    CHECK(ir::hashHex(ir::semanticHash(k)) + "\n" != baseHash);
  }
  // A renamed tensor and renamed values do not change the hash.
  std::string renamed = text;
  for (size_t at; (at = renamed.find("t0")) != std::string::npos;) renamed.replace(at, 2, "lhs");
  CHECK(ir::hashHex(ir::semanticHash(ir::parse(renamed))) + "\n" == baseHash);
  fs::remove_all(dir);
}

TEST_CASE("tile-ir reports a bad file with line:col and exit status 1") {
  fs::path dir = test::scratchDir("test", "bad");
  std::ofstream(dir / "bad.tir") << "kernel @k() grid 1 {\n  %0 = constant() {value = 1} : i64\n  %1 = frob(%0) : i64\n}\n";
  CommandResult r = runCommand(tileIr((dir / "bad.tir").string()));
  CHECK(r.status == 1);
  CHECK(r.output.find("bad.tir:3:") != std::string::npos);
  CHECK(r.output.find("frob") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("TILEJIT_DUMP writes each traced kernel as a .tir file tile-ir reads back") {
  fs::path dir = test::scratchDir("test", "dump");
  Tensor a = Tensor::random({1000}, 1), out = Tensor::zeros({1000});
  {
    test::ScopedEnv dump("TILEJIT_DUMP", dir.c_str());
    samples::vectorAdd(a, a, out, {.device = "interp"});
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
  REQUIRE(files.size() == 1);
  CHECK(files[0].filename().string().rfind("vector_add-", 0) == 0);
  CommandResult r = runCommand(tileIr(files[0].string()));
  CHECK(r.status == 0);
  CHECK(r.output == test::readText(files[0]));
  CHECK(out.item(999) == doctest::Approx(2 * a.item(999)));
  fs::remove_all(dir);
}

TEST_CASE("tile-ir --stage=spirv disassembles the Vulkan shader of a sample") {
  if (runCommand("spirv-dis --version").status != 0) {
    MESSAGE("spirv-dis not found (spirv-tools); skipping");
    CHECK(std::getenv("TILEJIT_REQUIRE_SPIRV_VAL") == nullptr);
    return;
  }
  CommandResult r = runCommand(tileIr("--sample vector_add --stage=spirv"));
  CHECK(r.status == 0);
  CHECK(r.output.find("OpEntryPoint GLCompute") != std::string::npos);
  CHECK(r.output.find("OpStore") != std::string::npos);
}

TEST_CASE("tile-ir --warps=N lowers on N warps per program, as a spread over lavapipe's budget does, and rejects others") {
  CommandResult four = runCommand(tileIr("--sample cumsum --stage=kernel --target=vulkan"));
  REQUIRE(four.status == 0);
  CHECK(four.output.find("workgroup 32 subgroup 8") != std::string::npos);
  CommandResult wide = runCommand(tileIr("--sample cumsum --stage=kernel --target=vulkan --warps=64"));
  REQUIRE(wide.status == 0);
  CHECK(wide.output.find("workgroup 512 subgroup 8") != std::string::npos);
  CommandResult layout = runCommand(tileIr("--sample cumsum --stage=layout --target=vulkan --warps=64"));
  CHECK(layout.status == 0);
  CHECK(layout.output != runCommand(tileIr("--sample cumsum --stage=layout --target=vulkan")).output);
  CommandResult bad = runCommand(tileIr("--sample cumsum --stage=kernel --target=vulkan --warps=3"));
  CHECK(bad.status == 1);
  CHECK(bad.output.find("--warps or p.warps of 3 is not a power of two from 1 to 128 (vulkan's workgroups)") != std::string::npos);
  CommandResult wider = runCommand(tileIr("--sample cumsum --stage=kernel --target=gfx942 --warps=32"));  // wave64
  CHECK(wider.status == 1);
  CHECK(wider.output.find("--warps or p.warps of 32 is not a power of two from 1 to 16 (gfx942's workgroups)") != std::string::npos);
}

TEST_CASE("tile-ir --stage=amdgpu prints AMDGPU assembly: attention on gfx942 on v_mfma, gemm on gfx1151 on v_wmma, not for sm_90") {
  CommandResult cdna = runCommand(tileIr("--sample attention_f16 --stage=amdgpu --target=gfx942"));
  REQUIRE(cdna.status == 0);
  CHECK(cdna.output.find("v_mfma_f32_32x32x8_f16") != std::string::npos);
  CommandResult apu = runCommand(tileIr("--sample gemm_f16 --stage=amdgpu --target=gfx1151"));
  REQUIRE(apu.status == 0);
  CHECK(apu.output.find("v_wmma_f32_16x16x16_f16") != std::string::npos);
  CommandResult llvm = runCommand(tileIr("--sample softmax --stage=llvm --target=gfx1100"));
  REQUIRE(llvm.status == 0);
  CHECK(llvm.output.find("amdgpu_kernel") != std::string::npos);
  // gfx950 (MI350), which LLVM 19 does not know: its LLVM IR, what comgr would compile, but no assembly.
  CommandResult mi350 = runCommand(tileIr("--sample gemm_f16 --stage=llvm --target=gfx950"));
  REQUIRE(mi350.status == 0);
  CHECK(mi350.output.find("@llvm.amdgcn.mfma.f32.32x32x8f16") != std::string::npos);
  CommandResult mi350Assembly = runCommand(tileIr("--sample gemm_f16 --stage=amdgpu --target=gfx950"));
  CHECK(mi350Assembly.status != 0);
  CHECK(mi350Assembly.output.find("does not know the target 'gfx950'") != std::string::npos);
  CHECK(mi350Assembly.output.find("through ROCm's comgr") != std::string::npos);
  CommandResult nvidia = runCommand(tileIr("--sample softmax --stage=amdgpu --target=sm_90"));
  CHECK(nvidia.status != 0);
  CHECK(nvidia.output.find("needs an AMD --target") != std::string::npos);
}

TEST_CASE("tile-ir --stage=ptx shows the f16 gemm's main loop on cp.async, ldmatrix and mma.sync: --general does not read ahead") {
  CommandResult r = runCommand(tileIr("--sample gemm_f16 --stage=ptx --target=sm_90"));
  REQUIRE(r.status == 0);
  size_t loop = r.output.find("bar.sync");  // the loop's first instruction after the prologue's copies
  REQUIRE(loop != std::string::npos);
  std::string body = r.output.substr(loop);
  for (const char* instruction : {"cp.async.cg.shared.global", "cp.async.wait_group", "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
                                  "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", "mma.sync.aligned.m16n8k16"})
    CHECK_MESSAGE(body.find(instruction) != std::string::npos, instruction);
  CommandResult general = runCommand(tileIr("--sample gemm_f16 --stage=ptx --target=sm_90 --general"));
  CHECK(general.status == 0);
  CHECK(general.output.find("cp.async") == std::string::npos);
  CHECK(general.output.find("ldmatrix") != std::string::npos);
}
