// A printed GPU module through LLVM: the O3 pipeline (no fast-math: nothing contracts or
// reassociates) and the target's assembly or object file.
#pragma once
#include <string>

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace tj::llvmgpu {

void optimize(llvm::Module& m, llvm::TargetMachine& tm);

enum class FileKind { assembly, object };
// The module as `kind`; throws InternalError naming `backend` if the target cannot emit it.
std::string emit(llvm::Module& m, llvm::TargetMachine& tm, FileKind kind, const std::string& backend);

}  // namespace tj::llvmgpu
