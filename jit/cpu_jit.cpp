#include "jit/cpu_jit.hpp"

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/DynamicLibrary.h>
#include <spdlog/spdlog.h>

#include <atomic>

#include "ir/error.hpp"
#include "jit/cpu_target.hpp"

namespace tj::jit {

namespace {

template <typename T>
T orThrow(llvm::Expected<T> value, const std::string& what) {
  if (!value) throw Error("cpu jit: " + what + ": " + llvm::toString(value.takeError()));
  return std::forward<T>(*value);
}

void orThrow(llvm::Error error, const std::string& what) {
  if (error) throw Error("cpu jit: " + what + ": " + llvm::toString(std::move(error)));
}
}  // namespace

bool vectorMathAvailable() {
  static const bool loaded = [] {
    std::string error;
    bool ok = !llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1", &error);
    if (!ok) spdlog::info("tilejit: no libmvec ({}); loops with transcendentals stay scalar", error);
    return ok;
  }();
  return loaded;
}

namespace {

// LLJIT's default link order ends in a process-symbols JITDylib with a
// DynamicLibrarySearchGenerator, so every JITDylib made by createJITDylib
// resolves libm and other process symbols.
llvm::orc::LLJIT& processJit() {
  static std::unique_ptr<llvm::orc::LLJIT> jit = [] {
    initializeNativeTarget();
    vectorMathAvailable();  // before the first lookup, so kernels can link libmvec's symbols
    auto created = orThrow(llvm::orc::LLJITBuilder().create(), "cannot create LLJIT");
    // Failed links also fail the lookup, which throws; LLVM would print them too.
    created->getExecutionSession().setErrorReporter(
        [](llvm::Error e) { spdlog::debug("tilejit: JIT session error: {}", llvm::toString(std::move(e))); });
    return created;
  }();
  return *jit;
}

}  // namespace

cpu::KernelEntry loadKernel(std::span<const char> object, const std::string& entryName) {
  static std::atomic<uint64_t> loads{0};
  llvm::orc::LLJIT& jit = processJit();
  std::string dylibName = entryName + "." + std::to_string(loads++);
  llvm::orc::JITDylib& dylib = orThrow(jit.createJITDylib(dylibName), "cannot create " + dylibName);
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(object.data(), object.size()), dylibName);
  orThrow(jit.addObjectFile(dylib, std::move(buffer)), "cannot add the object of " + entryName);
  llvm::orc::ExecutorAddr entry = orThrow(jit.lookup(dylib, entryName), "cannot link " + entryName);
  return entry.toPtr<cpu::KernelEntry>();
}

}  // namespace tj::jit
