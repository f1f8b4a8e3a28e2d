// AMDGPU code objects: the relocatable object linked into a shared ELF by LLD's ELF linker in
// process (`ld.lld -shared`, as Triton's AMD back end runs it), so that no ROCm is needed to
// build one.
#include <lld/Common/Driver.h>
#include <llvm/Support/raw_ostream.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <unistd.h>

#include "ir/error.hpp"
#include "lower/amdgpu/amdgpu.hpp"

LLD_HAS_DRIVER(elf)

namespace tj::amdgpu {

namespace {

// LLD keeps global state while it links: one link at a time.
std::mutex& lldMutex() {
  static std::mutex m;
  return m;
}

// A directory of this process's own, removed when the link is done.
struct ScratchDirectory {
  std::filesystem::path path;
  ScratchDirectory() {
    static std::atomic<int> next{0};
    path = std::filesystem::temp_directory_path() / ("tilejit-lld-" + std::to_string(getpid()) + "-" + std::to_string(next++));
    std::filesystem::create_directories(path);
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

}  // namespace

std::vector<char> linkCodeObject(const std::vector<char>& object) {
  ScratchDirectory dir;
  std::string in = (dir.path / "kernel.o").string(), out = (dir.path / "kernel.hsaco").string();
  std::ofstream(in, std::ios::binary).write(object.data(), std::streamsize(object.size()));
  std::string messages;
  llvm::raw_string_ostream log(messages);
  std::vector<const char*> args = {"ld.lld", "-shared", "--no-undefined", in.c_str(), "-o", out.c_str()};
  lld::Result r{};
  {
    std::lock_guard lock(lldMutex());
    r = lld::lldMain(args, log, log, {{lld::Gnu, &lld::elf::link}});
  }
  if (r.retCode != 0) throw InternalError("amdgpu", "ld.lld could not link the code object: " + messages);
  std::ifstream linked(out, std::ios::binary);
  return {std::istreambuf_iterator<char>(linked), std::istreambuf_iterator<char>()};
}

std::vector<char> compileCodeObject(const gpu::KernelFunction& f, const std::string& arch) {
  return linkCodeObject(compileObject(f, arch));
}

}  // namespace tj::amdgpu
