// A stand-in for libamdhip64.so for tests on machines without an AMD GPU (TILEJIT_LIBHIP names
// it): four devices, hip:0 an MI300X (gfx942, wave64), hip:1 a Radeon RX 7900 XTX (gfx1100,
// wave32), hip:2 one die of an MI250X (gfx90a, wave64; the one Debian's comgr knows) and hip:3 an
// MI355X (gfx950, which LLVM 19 does not know: tests/fake_comgr compiles for it), device memory in host memory, and launches that run nothing themselves: they hand
// the test's kernel the launch, failing with hipErrorNotSupported where no test set one. It
// checks what the real runtime would reject: unknown pointers and handles, copies past an
// allocation, an image that is not an AMDGPU code object (a shared ELF) for the current
// device's processor, a kernel without its descriptor (<name>.kd), `extra` instead of
// kernelParams, workgroups past 1024 threads, a module's image freed or changed before its
// launches (read again at each one: freed, ASan reports it).
#include <elf.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "devices/hip/hip_api.hpp"
#include "tests/fake_driver.hpp"
#include "tests/fake_hip/fake_hip.hpp"

using namespace tj::hip;

namespace {

constexpr hipError_t kInvalidValue = 1, kInvalidDevicePointer = 17, kInvalidDevice = 101, kInvalidImage = 200, kNoBinaryForGpu = 209,
                     kInvalidHandle = 400, kNotFound = 500, kNotSupported = 801;

struct FakeDevice {
  const char* name;
  const char* targetId;
  unsigned mach;  // the code objects' EF_AMDGPU_MACH
  int wave, computeUnits;
};
constexpr FakeDevice kDevices[] = {
    {"AMD Instinct MI300X (tilejit fake runtime)", "gfx942:sramecc+:xnack-", 0x04c, 64, 304},
    {"AMD Radeon RX 7900 XTX (tilejit fake runtime)", "gfx1100", 0x041, 32, 48},
    {"AMD Instinct MI250X (tilejit fake runtime)", "gfx90a:sramecc+:xnack-", 0x03f, 64, 110},
    {"AMD Instinct MI355X (tilejit fake runtime)", "gfx950:sramecc+:xnack-", 0x04f, 64, 256},
};
constexpr int kDeviceCount = int(std::size(kDevices));

// A loaded code object's kernel: its module, name and kernel descriptor's facts.
struct Function {
  hipModule_t module;
  std::string name;
  uint32_t ldsBytes, kernargBytes;
};

struct Fake {
  std::mutex mutex;
  TjFakeHipCounts counts{};
  TjFakeHipKernel kernel = nullptr;
  int current = 0;
  tj::fake::Memory memory;
  std::map<uintptr_t, int> allocatedOn;  // each allocation's device, by its start
  tj::fake::Handles handles;
  // Each module's code object: its bytes, and where the caller keeps it, which the runtime may
  // read again (clr keeps a plain code object by reference), as launches here do.
  std::map<hipModule_t, std::pair<std::vector<char>, const void*>> modules;
  std::map<hipFunction_t, Function> functions;
  tj::fake::Events<hipEvent_t> events;
  TjFakeStreams streams{};
};

Fake& fake() {
  static Fake f;
  return f;
}

// Whether [offset, offset + length) lies within `size` bytes (no overflow).
bool within(uint64_t offset, uint64_t length, uint64_t size) { return offset <= size && length <= size - offset; }

constexpr uint64_t kMaxImage = uint64_t{64} << 20;

// The bytes of a 64-bit little-endian AMDGPU shared ELF for processor `mach` (hipModuleLoadData
// takes no size: the section header table, which LLD writes last, ends it); empty for another,
// or for a header whose table lies past 64 MiB.
std::vector<char> codeObject(const void* image, unsigned mach) {
  Elf64_Ehdr h;
  std::memcpy(&h, image, sizeof h);
  if (std::memcmp(h.e_ident, ELFMAG, SELFMAG) != 0 || h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_machine != 224 ||
      h.e_type != ET_DYN || h.e_ehsize != sizeof h || h.e_shentsize != sizeof(Elf64_Shdr) || h.e_shnum == 0 ||
      (h.e_flags & 0xff) != mach || h.e_shoff < sizeof h || !within(h.e_shoff, uint64_t(h.e_shnum) * sizeof(Elf64_Shdr), kMaxImage))
    return {};
  const char* bytes = static_cast<const char*>(image);
  return {bytes, bytes + h.e_shoff + size_t(h.e_shnum) * sizeof(Elf64_Shdr)};
}

// Section header `index` of a code object codeObject() accepted, when its bytes lie in it.
std::optional<Elf64_Shdr> section(const std::vector<char>& elf, size_t index) {
  Elf64_Ehdr h;
  std::memcpy(&h, elf.data(), sizeof h);
  if (index >= h.e_shnum) return std::nullopt;
  Elf64_Shdr s;
  std::memcpy(&s, elf.data() + h.e_shoff + index * sizeof s, sizeof s);
  if (s.sh_type != SHT_NOBITS && !within(s.sh_offset, s.sh_size, elf.size())) return std::nullopt;
  return s;
}

// The kernel descriptor of `kernel` (the symbol <kernel>.kd, 64 bytes) in the code object;
// false where there is none.
bool kernelDescriptor(const std::vector<char>& elf, const std::string& kernel, Function& f) {
  Elf64_Ehdr h;
  std::memcpy(&h, elf.data(), sizeof h);
  const std::string wanted = kernel + ".kd";
  for (size_t index = 0; index < h.e_shnum; ++index) {
    std::optional<Elf64_Shdr> symbols = section(elf, index);
    if (!symbols || (symbols->sh_type != SHT_DYNSYM && symbols->sh_type != SHT_SYMTAB)) continue;
    std::optional<Elf64_Shdr> strings = section(elf, symbols->sh_link);
    if (!strings || strings->sh_type != SHT_STRTAB) continue;
    for (uint64_t at = 0; at + sizeof(Elf64_Sym) <= symbols->sh_size; at += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, elf.data() + symbols->sh_offset + at, sizeof sym);
      if (sym.st_name >= strings->sh_size || sym.st_size != 64) continue;
      const char* name = elf.data() + strings->sh_offset + sym.st_name;
      size_t room = size_t(strings->sh_size - sym.st_name);
      if (!std::memchr(name, 0, room) || name != wanted) continue;
      std::optional<Elf64_Shdr> home = section(elf, sym.st_shndx);
      if (!home || home->sh_type == SHT_NOBITS || sym.st_value < home->sh_addr ||
          !within(sym.st_value - home->sh_addr, 64, home->sh_size))
        return false;
      const char* kd = elf.data() + home->sh_offset + (sym.st_value - home->sh_addr);
      std::memcpy(&f.ldsBytes, kd, 4);      // group_segment_fixed_size
      std::memcpy(&f.kernargBytes, kd + 8, 4);  // kernarg_size
      f.name = kernel;
      return true;
    }
  }
  return false;
}

}  // namespace

extern "C" {

TjFakeHipCounts tjFakeHipCounts() {
  std::lock_guard lock(fake().mutex);
  return fake().counts;
}

TjFakeStreams tjFakeHipStreams() {
  std::lock_guard lock(fake().mutex);
  return fake().streams;
}

void tjFakeHipSetKernel(TjFakeHipKernel kernel) {
  std::lock_guard lock(fake().mutex);
  fake().kernel = kernel;
}

hipError_t hipInit(unsigned flags) { return flags == 0 ? 0 : kInvalidValue; }
hipError_t hipRuntimeGetVersion(int* version) {
  *version = 60'342'134;  // ROCm 6.3
  return 0;
}
const char* hipGetErrorName(hipError_t error) {
  switch (error) {
    case 0: return "hipSuccess";
    case kInvalidValue: return "hipErrorInvalidValue";
    case kInvalidDevicePointer: return "hipErrorInvalidDevicePointer";
    case 2: return "hipErrorOutOfMemory";
    case kInvalidDevice: return "hipErrorInvalidDevice";
    case kInvalidImage: return "hipErrorInvalidImage";
    case kNoBinaryForGpu: return "hipErrorNoBinaryForGpu";
    case kInvalidHandle: return "hipErrorInvalidHandle";
    case kNotFound: return "hipErrorNotFound";
    case 701: return "hipErrorLaunchOutOfResources";
    case 719: return "hipErrorLaunchFailure";
    case kNotSupported: return "hipErrorNotSupported";
    default: return "hipErrorUnknown";
  }
}
hipError_t hipGetDeviceCount(int* count) {
  *count = kDeviceCount;
  return 0;
}
hipError_t hipSetDevice(int device) {
  if (device < 0 || device >= kDeviceCount) return kInvalidDevice;
  std::lock_guard lock(fake().mutex);
  fake().current = device;
  return 0;
}
hipError_t hipDeviceGetName(char* name, int length, hipDevice_t device) {
  if (device < 0 || device >= kDeviceCount || length < 1) return kInvalidValue;
  std::strncpy(name, kDevices[device].name, size_t(length));
  return 0;
}
// ROCm 6's layout: the name at 0, gcnArchName at 1160, 1472 bytes in all; built as ROCm 5's
// runtime (TJ_FAKE_HIP_ROCM5), only the unsuffixed function, whose layout puts it at 396 of 792.
#ifdef TJ_FAKE_HIP_ROCM5
hipError_t hipGetDeviceProperties(void* properties, int device) {
  constexpr size_t bytes = 792, archAt = kArchNameOffsetR0000;
#else
hipError_t hipGetDevicePropertiesR0600(void* properties, int device) {
  constexpr size_t bytes = 1472, archAt = kArchNameOffsetR0600;
#endif
  if (device < 0 || device >= kDeviceCount) return kInvalidDevice;
  auto* out = static_cast<char*>(properties);
  std::memset(out, 0, bytes);
  std::strncpy(out, kDevices[device].name, 256);
  std::strncpy(out + archAt, kDevices[device].targetId, kArchNameBytes);
  return 0;
}
hipError_t hipDeviceGetAttribute(int* value, hipDeviceAttribute_t attribute, int device) {
  if (device < 0 || device >= kDeviceCount) return kInvalidDevice;
  switch (attribute) {
    case hipDeviceAttributeMaxThreadsPerBlock: *value = 1024; break;
    case hipDeviceAttributeMaxGridDimX: *value = 2147483647; break;
    case hipDeviceAttributeMaxGridDimY:
    case hipDeviceAttributeMaxGridDimZ: *value = 65536; break;
    case hipDeviceAttributeMaxSharedMemoryPerBlock: *value = 64 * 1024; break;
    case hipDeviceAttributeWarpSize: *value = kDevices[device].wave; break;
    case hipDeviceAttributeMultiprocessorCount: *value = kDevices[device].computeUnits; break;
    default: return kInvalidValue;
  }
  return 0;
}

hipError_t hipMalloc(void** pointer, size_t bytes) {
  if (!bytes) return kInvalidValue;
  std::lock_guard lock(fake().mutex);
  void* p = fake().memory.allocate(bytes);
  if (!p) return 2;  // hipErrorOutOfMemory
  *pointer = p;
  fake().allocatedOn[uintptr_t(p)] = fake().current;
  ++fake().counts.allocations;
  return 0;
}
hipError_t hipFree(void* pointer) {
  std::lock_guard lock(fake().mutex);
  fake().allocatedOn.erase(uintptr_t(pointer));
  return fake().memory.release(pointer) ? 0 : kInvalidValue;
}
hipError_t hipMemGetAddressRange(hipDeviceptr_t* base, size_t* bytes, hipDeviceptr_t pointer) {
  std::lock_guard lock(fake().mutex);
  auto allocation = fake().memory.allocationOf(pointer);
  if (!allocation) return kInvalidDevicePointer;
  *base = reinterpret_cast<void*>(allocation->first);
  *bytes = allocation->second;
  return 0;
}
// ROCm 6's numbering: hipMemoryTypeDevice is 2, and host memory it did not allocate is
// hipMemoryTypeUnregistered (0) with success.
hipError_t hipPointerGetAttributes(hipPointerAttribute_t* attributes, const void* pointer) {
  std::lock_guard lock(fake().mutex);
  *attributes = {};
  auto allocation = fake().memory.allocationOf(pointer);
  if (!allocation) return 0;
  attributes->memoryType = 2;
  attributes->device = fake().allocatedOn.at(allocation->first);
  attributes->devicePointer = const_cast<void*>(pointer);
  return 0;
}
hipError_t hipMemcpyHtoD(hipDeviceptr_t destination, void* source, size_t bytes) {
  std::lock_guard lock(fake().mutex);
  if (!fake().memory.holds(destination, bytes)) return kInvalidValue;
  std::memcpy(destination, source, bytes);
  ++fake().counts.uploads;
  fake().streams.upload = nullptr;
  return 0;
}
hipError_t hipMemcpyDtoH(void* destination, hipDeviceptr_t source, size_t bytes) {
  std::lock_guard lock(fake().mutex);
  if (!fake().memory.holds(source, bytes)) return kInvalidValue;
  std::memcpy(destination, source, bytes);
  ++fake().counts.downloads;
  fake().streams.download = nullptr;
  return 0;
}
hipError_t hipMemset(void* destination, int value, size_t bytes) {
  std::lock_guard lock(fake().mutex);
  if (!fake().memory.holds(destination, bytes)) return kInvalidValue;
  std::memset(destination, value, bytes);
  fake().streams.zero = nullptr;
  return 0;
}
hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t destination, void* source, size_t bytes, hipStream_t stream) {
  return tj::fake::onStream(fake().mutex, fake().streams.upload, stream, hipMemcpyHtoD(destination, source, bytes));
}
hipError_t hipMemcpyDtoHAsync(void* destination, hipDeviceptr_t source, size_t bytes, hipStream_t stream) {
  return tj::fake::onStream(fake().mutex, fake().streams.download, stream, hipMemcpyDtoH(destination, source, bytes));
}
hipError_t hipMemsetAsync(void* destination, int value, size_t bytes, hipStream_t stream) {
  return tj::fake::onStream(fake().mutex, fake().streams.zero, stream, hipMemset(destination, value, bytes));
}

hipError_t hipModuleLoadData(hipModule_t* module, const void* image) {
  std::lock_guard lock(fake().mutex);
  std::vector<char> elf = codeObject(image, kDevices[fake().current].mach);
  if (elf.empty()) {  // an AMDGPU code object for another processor, or no code object
    Elf64_Ehdr h;
    std::memcpy(&h, image, sizeof h);
    return std::memcmp(h.e_ident, ELFMAG, SELFMAG) == 0 && h.e_machine == 224 ? kNoBinaryForGpu : kInvalidImage;
  }
  *module = fake().handles.next<hipModule_t>();
  fake().modules[*module] = {std::move(elf), image};
  ++fake().counts.moduleLoads;
  return 0;
}
hipError_t hipModuleUnload(hipModule_t module) {
  std::lock_guard lock(fake().mutex);
  std::erase_if(fake().functions, [&](const auto& f) { return f.second.module == module; });  // its kernels go with it
  return fake().modules.erase(module) ? 0 : kInvalidHandle;
}
hipError_t hipModuleGetFunction(hipFunction_t* function, hipModule_t module, const char* name) {
  std::lock_guard lock(fake().mutex);
  auto it = fake().modules.find(module);
  if (it == fake().modules.end()) return kInvalidHandle;
  Function f{.module = module, .name = {}, .ldsBytes = 0, .kernargBytes = 0};
  if (!kernelDescriptor(it->second.first, name, f)) return kNotFound;
  *function = fake().handles.next<hipFunction_t>();
  fake().functions[*function] = f;
  return 0;
}
hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gridX, unsigned gridY, unsigned gridZ, unsigned blockX,
                                 unsigned blockY, unsigned blockZ, unsigned, hipStream_t stream, void** kernelParams,
                                 void** extra) {
  TjFakeHipKernel kernel;
  TjFakeHipLaunch launch{};
  {
    std::lock_guard lock(fake().mutex);
    auto it = fake().functions.find(f);
    if (it == fake().functions.end()) return kInvalidHandle;
    if (extra || !kernelParams || blockX * blockY * blockZ > 1024 || !gridX || !gridY || !gridZ) return kInvalidValue;
    const auto& [bytes, image] = fake().modules.at(it->second.module);
    if (std::memcmp(image, bytes.data(), bytes.size()) != 0) return kInvalidImage;  // the caller's image changed
    ++fake().counts.launches;
    fake().streams.launch = stream;
    kernel = fake().kernel;
    launch = {fake().current, it->second.name.c_str(), it->second.ldsBytes, it->second.kernargBytes, {gridX, gridY, gridZ}, blockX,
              kernelParams};
  }
  return kernel ? kernel(&launch) : kNotSupported;  // outside the lock: the kernel copies memory through the fake
}
hipError_t hipDeviceSynchronize() {
  std::lock_guard lock(fake().mutex);
  fake().streams.synchronize = nullptr;
  return 0;
}
hipError_t hipStreamSynchronize(hipStream_t stream) {
  std::lock_guard lock(fake().mutex);
  fake().streams.synchronize = stream;
  return 0;
}

hipError_t hipEventCreate(hipEvent_t* event) {
  std::lock_guard lock(fake().mutex);
  *event = fake().events.create(fake().handles);
  return 0;
}
hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream) {
  std::lock_guard lock(fake().mutex);
  fake().streams.record = stream;
  return fake().events.record(event) ? 0 : kInvalidHandle;
}
hipError_t hipEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t end) {
  std::lock_guard lock(fake().mutex);
  using Status = tj::fake::Events<hipEvent_t>::Status;
  switch (fake().events.elapsed(start, end, *ms)) {
    case Status::ok: return 0;
    case Status::notRecorded: return 600;  // hipErrorNotReady
    case Status::unknown: break;
  }
  return kInvalidHandle;
}
hipError_t hipEventDestroy(hipEvent_t event) {
  std::lock_guard lock(fake().mutex);
  return fake().events.destroy(event) ? 0 : kInvalidHandle;
}

}  // extern "C"
