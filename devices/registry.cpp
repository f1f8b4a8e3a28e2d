#include "devices/registry.hpp"

#include <algorithm>
#include <string>

#include "devices/cpu/cpu_device.hpp"
#include "devices/cuda/cuda_device.hpp"
#include "devices/hip/hip_device.hpp"
#include "devices/interp/interp_device.hpp"
#include "devices/vulkan/vulkan_device.hpp"
#include "ir/error.hpp"

namespace tj {

const std::vector<DeviceKind>& deviceKinds() {
  // A new backend adds its line here.
  static const std::vector<DeviceKind> kinds = {cpu::deviceKind(), interp::deviceKind(), vulkan::deviceKind(),
                                                cuda::deviceKind(), hip::deviceKind()};
  return kinds;
}

std::vector<std::string> describedDevices(std::string_view kind, int count,
                                          const std::function<std::string(int)>& describe) {
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) {
    std::string name = std::string(kind) + ":" + std::to_string(i);
    try {
      name += " (" + describe(i) + ")";
    } catch (const Error&) {
    }
    names.push_back(name);
  }
  return names;
}

const DeviceKind* findDeviceKind(std::string_view deviceName) {
  std::string_view base = deviceName.substr(0, deviceName.find(':'));
  auto it = std::ranges::find(deviceKinds(), base, &DeviceKind::name);
  return it == deviceKinds().end() ? nullptr : &*it;
}

}  // namespace tj
