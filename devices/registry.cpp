#include "devices/registry.hpp"

#include <algorithm>

#include "devices/cpu/cpu_device.hpp"
#include "devices/cuda/cuda_device.hpp"
#include "devices/hip/hip_device.hpp"
#include "devices/interp/interp_device.hpp"
#include "devices/vulkan/vulkan_device.hpp"

namespace tj {

const std::vector<DeviceKind>& deviceKinds() {
  // A new backend adds its line here.
  static const std::vector<DeviceKind> kinds = {cpu::deviceKind(), interp::deviceKind(), vulkan::deviceKind(),
                                                cuda::deviceKind(), hip::deviceKind()};
  return kinds;
}

const DeviceKind* findDeviceKind(std::string_view deviceName) {
  std::string_view base = deviceName.substr(0, deviceName.find(':'));
  auto it = std::ranges::find(deviceKinds(), base, &DeviceKind::name);
  return it == deviceKinds().end() ? nullptr : &*it;
}

}  // namespace tj
