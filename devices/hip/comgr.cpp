#include "devices/hip/comgr.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <mutex>

#include "devices/library_file.hpp"
#include "ir/error.hpp"
#include "lower/amdgpu/amdgpu.hpp"

namespace tj::hip::comgr {

namespace {

// The subset of amd_comgr.h used here (comgr 2 and 3 agree on it), declared here so that the
// build needs no ROCm. Handles are structs of one 64-bit word, passed by value.
using Status_t = int;  // amd_comgr_status_t; 0 is success
struct Data { uint64_t handle; };
struct DataSet { uint64_t handle; };
struct ActionInfo { uint64_t handle; };
constexpr int kDataLog = 0x5, kDataBitcode = 0x6, kDataRelocatable = 0x7, kDataExecutable = 0x8;  // amd_comgr_data_kind_t
constexpr int kActionCodegenBitcodeToRelocatable = 0x6, kActionLinkRelocatableToExecutable = 0x9;  // amd_comgr_action_kind_t

#define TJ_COMGR_FUNCTIONS(X)                                                                                 \
  X(amd_comgr_get_version, void, size_t*, size_t*)                                                           \
  X(amd_comgr_status_string, Status_t, Status_t, const char**)                                               \
  X(amd_comgr_get_isa_count, Status_t, size_t*)                                                              \
  X(amd_comgr_get_isa_name, Status_t, size_t, const char**)                                                  \
  X(amd_comgr_create_data, Status_t, int, Data*)                                                             \
  X(amd_comgr_release_data, Status_t, Data)                                                                  \
  X(amd_comgr_set_data, Status_t, Data, size_t, const char*)                                                 \
  X(amd_comgr_set_data_name, Status_t, Data, const char*)                                                    \
  X(amd_comgr_get_data, Status_t, Data, size_t*, char*)                                                      \
  X(amd_comgr_create_data_set, Status_t, DataSet*)                                                           \
  X(amd_comgr_destroy_data_set, Status_t, DataSet)                                                           \
  X(amd_comgr_data_set_add, Status_t, DataSet, Data)                                                         \
  X(amd_comgr_action_data_count, Status_t, DataSet, int, size_t*)                                            \
  X(amd_comgr_action_data_get_data, Status_t, DataSet, int, size_t, Data*)                                   \
  X(amd_comgr_create_action_info, Status_t, ActionInfo*)                                                     \
  X(amd_comgr_destroy_action_info, Status_t, ActionInfo)                                                     \
  X(amd_comgr_action_info_set_isa_name, Status_t, ActionInfo, const char*)                                   \
  X(amd_comgr_action_info_set_logging, Status_t, ActionInfo, bool)                                           \
  X(amd_comgr_action_info_set_option_list, Status_t, ActionInfo, const char**, size_t)                       \
  X(amd_comgr_do_action, Status_t, int, ActionInfo, DataSet, DataSet)

struct Functions {
#define TJ_COMGR_DECLARE(name, result, ...) result (*name)(__VA_ARGS__) = nullptr;
  TJ_COMGR_FUNCTIONS(TJ_COMGR_DECLARE)
#undef TJ_COMGR_DECLARE
};

constexpr std::string_view kIsaPrefix = "amdgcn-amd-amdhsa--";

// A loaded library and what it reported of itself. Once it loads it stays: comgr keeps LLVM's
// global state, which its exit handlers tear down.
class Library {
 public:
  explicit Library(const std::vector<std::string>& names) {
    std::string problem;
    st_.library = loadFirstLibrary(names, [&](const std::string& n) { load(n); }, [&] { close(); }, problem);
    st_.available = !st_.library.empty();
    if (!st_.available) st_.reason = "comgr not available: " + problem;
  }
  const Status& status() const { return st_; }
  const Functions& fn() const { return fn_; }

 private:
  void load(const std::string& name) {
    void* lib = lib_ = openLibrary(name);
#define TJ_COMGR_LOAD(symbol, ...)                                              \
  fn_.symbol = reinterpret_cast<decltype(fn_.symbol)>(dlsym(lib, #symbol));    \
  if (!fn_.symbol) throw Error(name + " has no " #symbol);
    TJ_COMGR_FUNCTIONS(TJ_COMGR_LOAD)
#undef TJ_COMGR_LOAD
    size_t major = 0, minor = 0, isas = 0;
    fn_.amd_comgr_get_version(&major, &minor);
    st_.version = fmt::format("{}.{}", major, minor);
    if (fn_.amd_comgr_get_isa_count(&isas) != 0) throw Error(name + ": amd_comgr_get_isa_count failed");
    for (size_t i = 0; i < isas; ++i) {
      const char* isa = nullptr;
      if (fn_.amd_comgr_get_isa_name(i, &isa) != 0 || !isa) continue;
      std::string_view n(isa);
      if (n.starts_with(kIsaPrefix)) st_.processors.emplace_back(n.substr(kIsaPrefix.size(), n.find(':') - kIsaPrefix.size()));
    }
  }

  void close() {
    if (lib_) dlclose(lib_);
    lib_ = nullptr;
    fn_ = {};
    st_.processors.clear();
  }

  void* lib_ = nullptr;
  Functions fn_;
  Status st_;
};

const Library& library() {
  static const Library* l = [] {
    const char* env = std::getenv("TILEJIT_LIBCOMGR");
    return new Library(env && *env ? std::vector<std::string>{env}
                                   : std::vector<std::string>{"libamd_comgr.so.3", "libamd_comgr.so.2", "libamd_comgr.so"});
  }();
  return *l;
}

// What one action turns into what, and the words for its errors.
struct Step {
  int action, inputKind;
  const char* inputName;
  int outputKind;
  std::vector<const char*> options;
  const char* verb;  // "link the code object", "compile the kernel"
};

// One action's comgr objects, released however it ends.
class Action {
 public:
  explicit Action(const Functions& fn) : fn_(fn) {}
  ~Action() {
    for (Data d : data_) fn_.amd_comgr_release_data(d);
    if (info_.handle) fn_.amd_comgr_destroy_action_info(info_);
    if (result_.handle) fn_.amd_comgr_destroy_data_set(result_);
    if (input_.handle) fn_.amd_comgr_destroy_data_set(input_);
  }
  Action(const Action&) = delete;
  Action& operator=(const Action&) = delete;

  std::vector<char> run(const Step& step, const std::vector<char>& bytes, const std::string& arch) {
    need(fn_.amd_comgr_create_data_set(&input_), "amd_comgr_create_data_set");
    need(fn_.amd_comgr_create_data_set(&result_), "amd_comgr_create_data_set");
    need(fn_.amd_comgr_create_action_info(&info_), "amd_comgr_create_action_info");
    Data in = make(step.inputKind);
    need(fn_.amd_comgr_set_data(in, bytes.size(), bytes.data()), "amd_comgr_set_data");
    need(fn_.amd_comgr_set_data_name(in, step.inputName), "amd_comgr_set_data_name");
    need(fn_.amd_comgr_data_set_add(input_, in), "amd_comgr_data_set_add");
    need(fn_.amd_comgr_action_info_set_isa_name(info_, (std::string(kIsaPrefix) + arch).c_str()),
         "amd_comgr_action_info_set_isa_name");
    std::vector<const char*> options = step.options;
    need(fn_.amd_comgr_action_info_set_option_list(info_, options.data(), options.size()),
         "amd_comgr_action_info_set_option_list");
    need(fn_.amd_comgr_action_info_set_logging(info_, true), "amd_comgr_action_info_set_logging");
    Status_t done = fn_.amd_comgr_do_action(step.action, info_, input_, result_);
    size_t outputs = 0;
    if (done == 0) need(fn_.amd_comgr_action_data_count(result_, step.outputKind, &outputs), "amd_comgr_action_data_count");
    if (done != 0 || outputs != 1) {
      std::string what = done ? statusName(done) : fmt::format("{} outputs", outputs);
      throw Unsupported(fmt::format("hip: comgr {} could not {} for {}: {}; its log: {}", library().status().version,
                                    step.verb, arch, what, log()));
    }
    return bytesOf(result(step.outputKind));
  }

 private:
  std::string statusName(Status_t s) const {
    const char* text = nullptr;
    return fmt::format("{} ({})", fn_.amd_comgr_status_string(s, &text) == 0 && text ? text : "unknown status", s);
  }
  void need(Status_t s, std::string_view call) const {
    if (s != 0) throw Unsupported(fmt::format("hip: {} failed: {}", call, statusName(s)));
  }
  Data make(int kind) {
    Data d{};
    need(fn_.amd_comgr_create_data(kind, &d), "amd_comgr_create_data");
    data_.push_back(d);
    return d;
  }
  Data result(int kind) {
    Data d{};
    need(fn_.amd_comgr_action_data_get_data(result_, kind, 0, &d), "amd_comgr_action_data_get_data");
    data_.push_back(d);  // a reference of our own, released with the others
    return d;
  }
  std::vector<char> bytesOf(Data d) const {
    size_t size = 0;
    need(fn_.amd_comgr_get_data(d, &size, nullptr), "amd_comgr_get_data");
    std::vector<char> bytes(size);
    need(fn_.amd_comgr_get_data(d, &size, bytes.data()), "amd_comgr_get_data");
    bytes.resize(size);
    return bytes;
  }
  // The action's log, or "(none)": never an error of its own, which would hide the action's.
  std::string log() {
    try {
      size_t logs = 0;
      if (fn_.amd_comgr_action_data_count(result_, kDataLog, &logs) != 0 || logs == 0) return "(none)";
      std::vector<char> text = bytesOf(result(kDataLog));
      std::string s(text.begin(), std::find(text.begin(), text.end(), '\0'));
      return s.empty() ? "(none)" : s;
    } catch (const Error& e) {
      return fmt::format("(unreadable: {})", e.what());
    }
  }

  const Functions& fn_;
  DataSet input_{}, result_{};
  ActionInfo info_{};
  std::vector<Data> data_;
};

}  // namespace

const Status& status() { return library().status(); }

bool knows(const std::string& arch) {
  const auto& p = status().processors;
  return std::find(p.begin(), p.end(), arch) != p.end();
}

namespace {

// Why comgr cannot serve `arch`, or "".
std::string unusableFor(const std::string& arch) {
  if (!status().available) return status().reason;
  if (!knows(arch)) return fmt::format("comgr {} ({}) does not know {}", status().version, status().library, arch);
  return "";
}

std::vector<char> runStep(const Step& step, const std::vector<char>& bytes, const std::string& arch) {
  if (std::string why = unusableFor(arch); !why.empty()) throw Unsupported(why);
  // comgr 2 (ROCm 5) is not safe to call from two threads at once; devices compile concurrently.
  static std::mutex oneAtATime;
  std::lock_guard lock(oneAtATime);
  Action action(library().fn());
  return action.run(step, bytes, arch);
}

}  // namespace

std::vector<char> linkCodeObject(const std::vector<char>& object, const std::string& arch) {
  return runStep({kActionLinkRelocatableToExecutable, kDataRelocatable, "kernel.o", kDataExecutable, {}, "link the code object"},
                 object, arch);
}

std::vector<char> compileBitcode(const std::vector<char>& bitcode, const std::string& arch) {
  return runStep({kActionCodegenBitcodeToRelocatable, kDataBitcode, "kernel.bc", kDataRelocatable, {"-O3"}, "compile the kernel"},
                 bitcode, arch);
}

Toolchain toolchainFor(const std::string& arch) {
  const char* env = std::getenv("TILEJIT_AMD_LINKER");
  std::string choice = env ? env : "";
  if (!choice.empty() && choice != "lld" && choice != "comgr")
    throw Error("TILEJIT_AMD_LINKER=" + choice + ": expected lld or comgr (or unset: comgr where it knows the GPU)");
  std::string whyNot = unusableFor(arch);
  Toolchain t;
  t.compiler = amdgpu::llvmName();
  if (!amdgpu::llvmKnows(arch)) {
    if (!whyNot.empty())
      throw Unsupported(fmt::format("amdgpu: {} does not know {}, and there is no comgr that does: {}", t.compiler, arch, whyNot));
    t.comgrCompiles = true;
    t.compiler = "comgr " + status().version;
  }
  if (choice == "lld") {
    t.linker = "lld";
    t.why = "TILEJIT_AMD_LINKER=lld";
  } else if (whyNot.empty()) {
    t.comgrLinks = true;
    t.comgrRequired = choice == "comgr";
    t.linker = "comgr " + status().version;
    t.why = fmt::format("{} knows {}", status().library, arch);
  } else if (choice == "comgr") {
    throw Unsupported("hip: TILEJIT_AMD_LINKER=comgr, but " + whyNot);
  } else {
    t.linker = "lld";
    t.why = whyNot;
  }
  if (t.comgrCompiles) t.why = fmt::format("{} does not know {}; {}", amdgpu::llvmName(), arch, t.why);
  return t;
}

}  // namespace tj::hip::comgr
