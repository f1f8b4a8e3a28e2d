#include "devices/interp/interp_device.hpp"

#include "devices/interp/interpreter.hpp"

namespace tj::interp {

namespace {

class InterpreterDevice final : public Device {
 public:
  std::string name() const override { return "interp"; }
  LaunchReport launch(const ir::Kernel& kernel, const LaunchArgs& args) override {
    interpret(kernel, args);
    return {.device = name()};
  }
};

}  // namespace

DeviceKind deviceKind() {
  return {.name = "interp",
          .unavailableReason = [] { return std::string(); },
          .devices = [] { return std::vector<std::string>{"interp:0"}; },
          .open = [](const std::string&) -> Device& {
            static InterpreterDevice device;
            return device;
          }};
}

}  // namespace tj::interp
