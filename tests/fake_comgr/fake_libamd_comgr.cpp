// A stand-in for ROCm 7's libamd_comgr.so.3 (TILEJIT_LIBCOMGR names it) that knows a processor
// LLVM 19 does not: gfx950 (MI350), besides gfx942. It implements the calls devices/hip/comgr
// makes and checks what the real library would reject: unknown handles, an ISA name it does not
// list, data of the wrong kind for the action or without a name (its actions write their inputs
// to files so named), bitcode whose functions name another processor.
// Its codegen compiles gfx950 bitcode with LLVM 19 as gfx942 (the instructions tilejit's gfx942
// kernels use are gfx950's too) and marks the object as gfx950's (EF_AMDGPU_MACH 0x04f); its
// link is LLD's, in process (tilejit's amdgpu::linkCodeObject).
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/IR/LegacyPassManager.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "lower/amdgpu/amdgpu.hpp"

namespace {

using Status = int;
constexpr Status kSuccess = 0, kError = 1, kInvalidArgument = 2;
struct Handle { uint64_t handle; };
constexpr int kLog = 0x5, kBitcode = 0x6, kRelocatable = 0x7, kExecutable = 0x8;
constexpr int kCodegenBitcodeToRelocatable = 0x6, kLinkRelocatableToExecutable = 0x9;
constexpr const char* kIsas[] = {"amdgcn-amd-amdhsa--gfx942", "amdgcn-amd-amdhsa--gfx950"};
constexpr unsigned kMachGfx950 = 0x04f;

struct Data {
  int kind;
  std::string name;
  std::vector<char> bytes;
  int references = 1;
};
struct ActionInfo {
  std::string isa;
};

struct Fake {
  std::mutex mutex;
  uint64_t next = 1;
  std::map<uint64_t, Data> data;
  std::map<uint64_t, std::vector<uint64_t>> sets;
  std::map<uint64_t, ActionInfo> infos;
  // A new object in `objects` (data, sets or infos) under a fresh handle.
  template <class Objects>
  uint64_t add(Objects& objects, typename Objects::mapped_type value = {}) {
    objects.emplace(next, std::move(value));
    return next++;
  }
};
Fake& fake() {
  static Fake f;
  return f;
}

// The object a handle names in `objects`, or null.
template <class Objects>
auto* find(Objects& objects, Handle h) {
  auto it = objects.find(h.handle);
  return it == objects.end() ? nullptr : &it->second;
}

void release(uint64_t d) {
  auto it = fake().data.find(d);
  if (it != fake().data.end() && --it->second.references == 0) fake().data.erase(it);
}

// The object LLVM 19 makes of gfx950 bitcode compiled as gfx942, marked as gfx950's; or the
// reason there is none.
std::string codegen(const std::vector<char>& bitcode, const std::string& processor, std::vector<char>& object) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
  });
  llvm::LLVMContext context;
  auto module = llvm::parseBitcodeFile(llvm::MemoryBufferRef(llvm::StringRef(bitcode.data(), bitcode.size()), "kernel.bc"), context);
  if (!module) return "error: not LLVM bitcode: " + llvm::toString(module.takeError());
  for (llvm::Function& f : **module) {
    if (f.isDeclaration()) continue;
    std::string cpu = f.getFnAttribute("target-cpu").getValueAsString().str();
    if (cpu != processor) return "error: function '" + f.getName().str() + "' is for '" + cpu + "', not " + processor;
    f.addFnAttr("target-cpu", "gfx942");
  }
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget("amdgcn-amd-amdhsa", error);
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine("amdgcn-amd-amdhsa", "gfx942", "", {}, std::nullopt));
  llvm::SmallString<0> bytes;
  llvm::raw_svector_ostream out(bytes);
  llvm::legacy::PassManager pm;
  tm->addPassesToEmitFile(pm, out, nullptr, llvm::CodeGenFileType::ObjectFile);
  pm.run(**module);
  object.assign(bytes.begin(), bytes.end());
  if (processor == "gfx950") object[48] = char(kMachGfx950);  // e_flags' low byte: EF_AMDGPU_MACH
  return "";
}

}  // namespace

extern "C" {

// The data objects, data sets and action infos alive: 0 once every action's were released.
size_t tjFakeComgrLiveObjects() {
  std::lock_guard lock(fake().mutex);
  return fake().data.size() + fake().sets.size() + fake().infos.size();
}

void amd_comgr_get_version(size_t* major, size_t* minor) {
  *major = 3;
  *minor = 0;
}
Status amd_comgr_status_string(Status s, const char** text) {
  static const char* names[] = {"SUCCESS", "ERROR", "ERROR_INVALID_ARGUMENT"};
  if (s < 0 || s > 2) return kInvalidArgument;
  *text = names[s];
  return kSuccess;
}
Status amd_comgr_get_isa_count(size_t* count) {
  *count = std::size(kIsas);
  return kSuccess;
}
Status amd_comgr_get_isa_name(size_t index, const char** name) {
  if (index >= std::size(kIsas)) return kInvalidArgument;
  *name = kIsas[index];
  return kSuccess;
}
Status amd_comgr_create_data(int kind, Handle* data) {
  if (kind < kLog || kind > kExecutable) return kInvalidArgument;
  std::lock_guard lock(fake().mutex);
  data->handle = fake().add(fake().data, {kind, "", {}});
  return kSuccess;
}
Status amd_comgr_release_data(Handle data) {
  std::lock_guard lock(fake().mutex);
  if (!fake().data.contains(data.handle)) return kInvalidArgument;
  release(data.handle);
  return kSuccess;
}
Status amd_comgr_set_data(Handle data, size_t size, const char* bytes) {
  std::lock_guard lock(fake().mutex);
  Data* d = find(fake().data, data);
  if (!d || !size || !bytes) return kInvalidArgument;
  d->bytes.assign(bytes, bytes + size);
  return kSuccess;
}
Status amd_comgr_set_data_name(Handle data, const char* name) {
  std::lock_guard lock(fake().mutex);
  Data* d = find(fake().data, data);
  if (!d || !name) return kInvalidArgument;
  d->name = name;
  return kSuccess;
}
Status amd_comgr_get_data(Handle data, size_t* size, char* bytes) {
  std::lock_guard lock(fake().mutex);
  Data* d = find(fake().data, data);
  if (!d || !size) return kInvalidArgument;
  if (bytes) std::copy_n(d->bytes.begin(), std::min(*size, d->bytes.size()), bytes);
  *size = d->bytes.size();
  return kSuccess;
}
Status amd_comgr_create_data_set(Handle* set) {
  std::lock_guard lock(fake().mutex);
  set->handle = fake().add(fake().sets);
  return kSuccess;
}
Status amd_comgr_destroy_data_set(Handle set) {
  std::lock_guard lock(fake().mutex);
  auto it = fake().sets.find(set.handle);
  if (it == fake().sets.end()) return kInvalidArgument;
  for (uint64_t d : it->second) release(d);
  fake().sets.erase(it);
  return kSuccess;
}
Status amd_comgr_data_set_add(Handle set, Handle data) {
  std::lock_guard lock(fake().mutex);
  std::vector<uint64_t>* members = find(fake().sets, set);
  Data* d = find(fake().data, data);
  if (!members || !d || d->name.empty()) return kInvalidArgument;
  ++d->references;
  members->push_back(data.handle);
  return kSuccess;
}
Status amd_comgr_action_data_count(Handle set, int kind, size_t* count) {
  std::lock_guard lock(fake().mutex);
  std::vector<uint64_t>* members = find(fake().sets, set);
  if (!members) return kInvalidArgument;
  *count = size_t(std::count_if(members->begin(), members->end(), [&](uint64_t d) { return fake().data.at(d).kind == kind; }));
  return kSuccess;
}
Status amd_comgr_action_data_get_data(Handle set, int kind, size_t index, Handle* data) {
  std::lock_guard lock(fake().mutex);
  std::vector<uint64_t>* members = find(fake().sets, set);
  if (!members) return kInvalidArgument;
  for (uint64_t d : *members)
    if (fake().data.at(d).kind == kind && index-- == 0) {
      ++fake().data.at(d).references;  // the caller's reference, which it releases
      data->handle = d;
      return kSuccess;
    }
  return kInvalidArgument;
}
Status amd_comgr_create_action_info(Handle* info) {
  std::lock_guard lock(fake().mutex);
  info->handle = fake().add(fake().infos);
  return kSuccess;
}
Status amd_comgr_destroy_action_info(Handle info) {
  std::lock_guard lock(fake().mutex);
  return fake().infos.erase(info.handle) ? kSuccess : kInvalidArgument;
}
Status amd_comgr_action_info_set_isa_name(Handle info, const char* isa) {
  std::lock_guard lock(fake().mutex);
  ActionInfo* i = find(fake().infos, info);
  if (!i || !isa || std::ranges::find(kIsas, std::string_view(isa)) == std::end(kIsas)) return kInvalidArgument;
  i->isa = isa;
  return kSuccess;
}
// Options are taken as given (the stand-in's codegen has no flags).
Status amd_comgr_action_info_set_option_list(Handle info, const char** options, size_t count) {
  std::lock_guard lock(fake().mutex);
  return find(fake().infos, info) && (!count || options) ? kSuccess : kInvalidArgument;
}
Status amd_comgr_action_info_set_logging(Handle info, bool) {
  std::lock_guard lock(fake().mutex);
  return fake().infos.contains(info.handle) ? kSuccess : kInvalidArgument;
}
Status amd_comgr_do_action(int action, Handle info, Handle input, Handle result) {
  std::unique_lock lock(fake().mutex);
  ActionInfo* i = find(fake().infos, info);
  std::vector<uint64_t>* in = find(fake().sets, input);
  if (!i || i->isa.empty() || !in || !find(fake().sets, result) || in->size() != 1) return kInvalidArgument;
  const Data& source = fake().data.at((*in)[0]);
  int wanted = action == kCodegenBitcodeToRelocatable ? kBitcode : action == kLinkRelocatableToExecutable ? kRelocatable : -1;
  if (source.kind != wanted) return kInvalidArgument;
  std::string processor = i->isa.substr(i->isa.rfind('-') + 1);
  std::vector<char> bytes = source.bytes, output;
  lock.unlock();  // LLVM and LLD run outside the lock
  std::string log;
  if (action == kCodegenBitcodeToRelocatable) {
    log = codegen(bytes, processor, output);
  } else {
    try {
      output = tj::amdgpu::linkCodeObject(bytes);
    } catch (const std::exception& e) {
      log = e.what();
    }
  }
  lock.lock();
  auto& out = fake().sets.at(result.handle);
  if (!log.empty()) {
    out.push_back(fake().add(fake().data, {kLog, "log", {log.begin(), log.end()}}));
    return kError;
  }
  out.push_back(fake().add(fake().data, {action == kCodegenBitcodeToRelocatable ? kRelocatable : kExecutable, "kernel", std::move(output)}));
  return kSuccess;
}

}  // extern "C"
