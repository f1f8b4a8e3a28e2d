// ROCm's code object manager (libamd_comgr) without linking ROCm: loaded with dlopen on first
// use ($TILEJIT_LIBCOMGR names another file, for tests), it links the HIP device's relocatable
// objects into code objects where the user's ROCm has one that knows the device's processor
// (elsewhere LLD links them in process: lower/amdgpu, which every machine can do), and
// compiles LLVM's bitcode for a processor this build's LLVM does not know (gfx950).
#pragma once
#include <string>
#include <vector>

namespace tj::hip::comgr {

// Whether comgr can be used here; `reason` is "comgr not available: ..." when not, naming what
// failed: loading the library (each name tried) or a missing symbol.
struct Status {
  bool available = false;
  std::string reason;
  std::string library;                  // the file loaded
  std::string version;                  // amd_comgr_get_version's "major.minor"
  std::vector<std::string> processors;  // those of its ISA names: "gfx90a", ...
};

// The library, loaded once per process: $TILEJIT_LIBCOMGR, else libamd_comgr.so.3, .so.2,
// libamd_comgr.so.
const Status& status();
// Whether comgr is available and lists `arch` ("gfx90a") among its ISAs.
bool knows(const std::string& arch);

// A relocatable object for `arch` ("gfx90a") linked into a code object by comgr
// (AMD_COMGR_ACTION_LINK_RELOCATABLE_TO_EXECUTABLE). Throws Unsupported where comgr is not
// available or does not know `arch`, and where the link fails ("hip: comgr <version> could not
// link ...: <status>; its log: ..."). One action at a time in the process.
std::vector<char> linkCodeObject(const std::vector<char>& object, const std::string& arch);
// LLVM bitcode compiled for `arch` into a relocatable object by comgr
// (AMD_COMGR_ACTION_CODEGEN_BC_TO_RELOCATABLE, -O3), for a processor this build's LLVM does not
// know. Throws as linkCodeObject does.
std::vector<char> compileBitcode(const std::vector<char>& bitcode, const std::string& arch);

// How a HIP device's code objects are made for `arch`, and why.
struct Toolchain {
  bool comgrCompiles = false;  // the kernel's bitcode compiled by comgr, else by this build's LLVM
  bool comgrLinks = false;     // linked by comgr, else by LLD in process
  bool comgrRequired = false;  // TILEJIT_AMD_LINKER=comgr: a failed link is not left to LLD
  std::string compiler, linker;  // "LLVM 19.1.7", "comgr 2.4", "lld": part of the cache key
  std::string why;               // "libamd_comgr.so.2 knows gfx90a", "TILEJIT_AMD_LINKER=lld", ...
  std::string name() const { return compiler + " + " + linker; }
};
// comgr compiles where this build's LLVM does not know `arch` (Unsupported where comgr cannot
// either). $TILEJIT_AMD_LINKER chooses the linker: "lld" always LLD; "comgr" comgr or
// Unsupported naming why not; unset or empty, comgr where status() lists `arch`, else LLD.
// Throws Error for another value (the HIP device is then unusable, and its launches run on the
// CPU with a warning naming the value).
Toolchain toolchainFor(const std::string& arch);

}  // namespace tj::hip::comgr
