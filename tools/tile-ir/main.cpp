// tile-ir: read, check, canonicalize and print tile IR.
//   tile-ir FILE.tir            parse, verify, canonicalize, print
//   tile-ir --sample gemm       the traced IR of a sample kernel
//   tile-ir --hash ...          the semantic hash instead of the text
//   tile-ir --stage=NAME ...    the IR after a pipeline stage (parsed, canonical, llvm)
//   tile-ir --stage=layout --target=T ...  the canonical IR with each value's layout on target T
//   tile-ir --stage=kernel --target=T ...  the per-thread GPU kernel IR on target T
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "ir/passes.hpp"
#include "layout/infer_layouts.hpp"
#include "lower/cpu/lower_to_llvm.hpp"
#include "lower/gpu/lower_to_kernel_ir.hpp"
#include "samples/kernels.hpp"

namespace {

const std::vector<std::string> kStages = {"parsed", "canonical", "llvm", "layout", "kernel"};

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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Reads, checks, canonicalizes and prints tilejit tile IR", "tile-ir");
  std::string file, sample, stage = "canonical", target = "cpu";
  bool hash = false;
  app.add_option("file", file, "a .tir file");
  app.add_option("--sample", sample, "print a sample kernel's IR instead of a file")
      ->check(CLI::IsMember(tj::samples::sampleNames()));
  app.add_option("--stage", stage, "the pipeline stage to print")->check(CLI::IsMember(kStages));
  app.add_flag("--hash", hash, "print the semantic hash instead of the IR");
  app.add_option("--target", target, "the target of --stage=layout and --stage=kernel (vulkan, sm_80, sm_90, gfx1100, gfx942, cpu)");
  CLI11_PARSE(app, argc, argv);
  if (file.empty() == sample.empty()) {
    std::fprintf(stderr, "tile-ir: give exactly one of FILE or --sample NAME\n");
    return 2;
  }
  try {
    tj::ir::Kernel k = sample.empty() ? readFile(file, stage != "parsed") : tj::samples::traceSample(sample);
    if (hash) std::cout << tj::ir::hashHex(tj::ir::semanticHash(k)) << "\n";
    else if (stage == "llvm") std::cout << tj::cpu::lowerToLLVMText(k);
    else if (stage == "layout")
      std::cout << tj::layout::printWithLayouts(k, tj::layout::inferLayouts(k, tj::layout::targetByName(target)));
    else if (stage == "kernel") {
      const tj::layout::Target& t = tj::layout::targetByName(target);
      std::cout << tj::gpu::print(tj::gpu::lowerToKernelIR(k, tj::layout::inferLayouts(k, t), t));
    } else std::cout << tj::ir::print(k);
  } catch (const tj::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
