#include "devices/device.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "devices/cpu/cpu_device.hpp"
#include "devices/interp/interpreter.hpp"
#include "jit/cpu_target.hpp"

namespace tj {

namespace {

class InterpreterDevice final : public Device {
 public:
  std::string name() const override { return "interp"; }
  void launch(const ir::Kernel& kernel, const LaunchArgs& args) override { interpret(kernel, args); }
};

// Devices the design names whose backends are not in this build yet.
const std::vector<std::string> kPlannedDevices = {"vulkan", "cuda", "hip"};

// The device an empty name selects: the CPU backend where it can run, else
// the interpreter (which stays selectable by name).
Device& bestDevice(Device& interp) { return jit::hostTargetSupported() ? cpu::CpuDevice::instance() : interp; }

}  // namespace

std::vector<std::string> availableDevices() {
  if (jit::hostTargetSupported()) return {"cpu", "interp"};
  return {"interp"};
}

Device& selectDevice(const std::string& requested) {
  static InterpreterDevice interp;
  std::string name = requested;
  if (name.empty()) {
    const char* env = std::getenv("TILEJIT_DEVICE");
    name = env ? env : "";
  }
  if (name.empty()) return bestDevice(interp);
  if (name == "interp") return interp;
  std::string base = name.substr(0, name.find(':'));
  if (base == "cpu") {
    if (!jit::hostTargetSupported()) throw Error("device: the cpu device cannot run here: LLVM cannot target this host");
    return cpu::CpuDevice::instance();
  }
  if (std::find(kPlannedDevices.begin(), kPlannedDevices.end(), base) != kPlannedDevices.end()) {
    static std::once_flag warned;
    std::call_once(warned, [&] {
      spdlog::warn("tilejit: device '{}' has no backend in this build; running on interp instead", name);
    });
    return interp;
  }
  throw Error("device: unknown device '" + name + "'; known devices: interp, cpu, vulkan, cuda, hip");
}

}  // namespace tj
