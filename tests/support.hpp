// What several test files share: running other programs (the tools, child copies
// of the test binary), scoped environment variables, and captured log output.
#pragma once
#include <doctest/doctest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "devices/vulkan/vulkan_runtime.hpp"
#include "tests/reference.hpp"
#include "ir/ir.hpp"
#include "ir/passes.hpp"

namespace tj::test {

struct CommandResult {
  int status;          // exit status, -1 when the child did not exit normally
  std::string output;  // stdout and stderr
};

// Runs the commands at the same time through the shell; results in order.
inline std::vector<CommandResult> runConcurrently(const std::vector<std::string>& commands) {
  std::vector<FILE*> pipes;
  for (const std::string& c : commands) pipes.push_back(popen((c + " 2>&1").c_str(), "r"));
  std::vector<CommandResult> results;
  for (FILE* pipe : pipes) {
    REQUIRE(pipe != nullptr);
    std::string out;
    std::array<char, 4096> buf;
    while (size_t n = fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
    int status = pclose(pipe);
    results.push_back({WIFEXITED(status) ? WEXITSTATUS(status) : -1, out});
  }
  return results;
}

inline CommandResult runCommand(const std::string& command) { return runConcurrently({command})[0]; }

// The message of the tj::Error that f throws, or "" when it throws none.
inline std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Sets an environment variable (nullptr: unsets it) until destroyed.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    set(value);
  }
  ~ScopedEnv() { set(old_ ? old_->c_str() : nullptr); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  void set(const char* value) { value ? setenv(name_, value, 1) : unsetenv(name_); }
  const char* name_;
  std::optional<std::string> old_;
};

// Collects spdlog's default-logger output while alive.
class CaptureLog {
 public:
  CaptureLog() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink));
  }
  ~CaptureLog() { spdlog::set_default_logger(previous_); }
  CaptureLog(const CaptureLog&) = delete;
  CaptureLog& operator=(const CaptureLog&) = delete;
  std::string text() const { return out_.str(); }

 private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> previous_;
};

inline std::string readText(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// An empty folder of this process under the temp folder: tilejit-<area>-<name>-<pid>.
inline std::filesystem::path scratchDir(const std::string& area, const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("tilejit-" + area + "-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Whether a Vulkan driver loads; otherwise says "vulkan skipped: <why>" (tools/dev counts
// these), failing instead when TILEJIT_REQUIRE_VULKAN=1 (as in CI, which has lavapipe).
inline bool vulkanAvailable() {
  if (vk::status().available) return true;
  const char* require = std::getenv("TILEJIT_REQUIRE_VULKAN");
  if (require && std::string(require) == "1") FAIL("Vulkan is required here: " << vk::status().reason);
  MESSAGE("vulkan skipped: " << vk::status().reason);
  return false;
}

// Checks a SPIR-V module with `spirv-val --target-env vulkan1.2`. Without the tool the
// check is skipped with a message, or fails when TILEJIT_REQUIRE_SPIRV_VAL=1 (as in CI).
inline void checkSpirvValid(const std::vector<uint32_t>& words) {
  if (runCommand("command -v spirv-val").status != 0) {
    const char* require = std::getenv("TILEJIT_REQUIRE_SPIRV_VAL");
    if (require && std::string(require) == "1") FAIL("spirv-val is not installed (apt-get install spirv-tools)");
    MESSAGE("skipped: spirv-val is not installed (apt-get install spirv-tools)");
    return;
  }
  static int counter = 0;
  auto file = std::filesystem::temp_directory_path() /
              ("tilejit_" + std::to_string(getpid()) + "_" + std::to_string(counter++) + ".spv");
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(words.data()), std::streamsize(words.size() * 4));
  CommandResult r = runCommand("spirv-val --target-env vulkan1.2 " + file.string());
  std::filesystem::remove(file);
  CHECK_MESSAGE(r.status == 0, r.output);
}

// The kernel with each fold's attribute `name` set to `value`.
inline ir::Kernel withFoldAttr(ir::Kernel k, const std::string& name, int64_t value) {
  std::function<void(ir::Block&)> visit = [&](ir::Block& b) {
    for (ir::Op& op : b.ops) {
      if (op.code == ir::OpCode::fold) {
        std::erase_if(op.attrs, [&](const ir::Attr& a) { return a.name == name; });
        op.attrs.push_back({name, value});
        std::ranges::sort(op.attrs, {}, &ir::Attr::name);
      }
      for (ir::Block& r : op.regions) visit(r);
    }
  };
  visit(k.body);
  ir::verify(k);
  return k;
}
// Each fold's stages set to `stages`.
inline ir::Kernel withStages(ir::Kernel k, int64_t stages) { return withFoldAttr(std::move(k), "stages", stages); }
// Every fold warp-specialized (p.warp_specialize).
inline ir::Kernel warpSpecialized(ir::Kernel k) { return withFoldAttr(std::move(k), "specialize", 1); }

// `k` with every `from` text replaced by its `to` in its printed IR (f16 operands to bf16...).
inline ir::Kernel retyped(const ir::Kernel& k, const std::vector<std::pair<std::string, std::string>>& replacements) {
  std::string text = ir::print(k);
  for (const auto& [from, to] : replacements)
    for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) text.replace(at, from.size(), to);
  ir::Kernel out = ir::parse(text);
  ir::verify(out);
  return out;
}

// ptxas from PATH or the toolkit's default place; "" when there is none.
inline std::string ptxas() {
  if (runCommand("command -v ptxas").status == 0) return "ptxas";
  if (std::filesystem::exists("/usr/local/cuda/bin/ptxas")) return "/usr/local/cuda/bin/ptxas";
  return "";
}

// nvdisasm from PATH or where tools/dev installs PyPI's nvidia-cuda-nvdisasm (.tools/); "" when
// there is none.
inline std::string nvdisasm() {
  if (runCommand("command -v nvdisasm").status == 0) return "nvdisasm";
  std::filesystem::path tools = std::filesystem::path(TILEJIT_SOURCE_DIR) / ".tools" / "nvdisasm" / "nvidia";
  if (std::filesystem::exists(tools))
    for (const auto& e : std::filesystem::recursive_directory_iterator(tools))
      if (e.path().filename() == "nvdisasm") return e.path().string();
  return "";
}

// The folder of this test program, where the samples and tools are built too (and where the
// GPU check's bundle, which moves them all, puts them).
inline std::string binDir() { return std::filesystem::read_symlink("/proc/self/exe").parent_path().string(); }

// Skipped with a message, or a failure when the variable `require` is 1 (as in CI).
inline void missingTool(const char* require, const std::string& what) {
  const char* required = std::getenv(require);
  if (required && std::string(required) == "1") FAIL(what << " is required here (" << require << "=1)");
  MESSAGE("skipped: no " << what);
}

struct Assembled {
  std::string report;  // ptxas -v
  std::string sass;    // nvdisasm of the cubin, "" without nvdisasm
};

// Assembles `ptx` for `arch` with `ptxas -v` (and with `withSass`, disassembles the cubin).
// Without ptxas: skipped with a message, or a failure when TILEJIT_REQUIRE_PTXAS=1 (as in CI);
// likewise nvdisasm and TILEJIT_REQUIRE_NVDISASM.
inline Assembled assemble(const std::string& ptx, const std::string& arch, bool withSass) {
  static const std::string tool = ptxas(), disassembler = nvdisasm();
  if (tool.empty()) {
    missingTool("TILEJIT_REQUIRE_PTXAS", "ptxas (the CUDA toolkit under /usr/local/cuda)");
    return {};
  }
  static int counter = 0;
  auto base = std::filesystem::temp_directory_path() /
              ("tilejit_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
  std::ofstream(base.string() + ".ptx") << ptx;
  Assembled out;
  CommandResult r = runCommand(tool + " -v -arch=" + arch + " " + base.string() + ".ptx -o " + base.string() + ".cubin");
  CHECK_MESSAGE(r.status == 0, r.output);
  out.report = r.output;
  if (withSass && disassembler.empty()) missingTool("TILEJIT_REQUIRE_NVDISASM", "nvdisasm (tools/dev installs it from PyPI)");
  if (withSass && !disassembler.empty() && r.status == 0) {
    CommandResult d = runCommand(disassembler + " " + base.string() + ".cubin");
    CHECK_MESSAGE(d.status == 0, d.output);
    out.sass = d.output;
  }
  std::filesystem::remove(base.string() + ".ptx");
  std::filesystem::remove(base.string() + ".cubin");
  return out;
}
inline std::string assemblePtx(const std::string& ptx, const std::string& arch) { return assemble(ptx, arch, false).report; }

// FAIL_CHECKs the first mismatches of ref::productMismatches and CHECKs there are none.
inline void checkProduct(const Tensor& out, int64_t m, int64_t n, int64_t k, const std::function<double(int64_t, int64_t, int64_t)>& term,
                  const std::function<double(int64_t, int64_t)>& start = {}) {
  std::vector<ref::ProductMismatch> bad = ref::productMismatches(out, m, n, k, term, start);
  for (size_t i = 0; i < std::min<size_t>(bad.size(), 5); ++i)
    FAIL_CHECK("out[", bad[i].row, ", ", bad[i].col, "] = ", bad[i].got, ", float64 says ", bad[i].want);
  CHECK(bad.empty());
}

}  // namespace tj::test
