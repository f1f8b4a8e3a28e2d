// The kinds of device this build runs kernels on. Each kind is registered once, in
// registry.cpp, from the one function its folder exposes (`deviceKind()`); selectDevice,
// availableDevices and hostDevice ask the registry, and nothing else names every device.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "devices/device.hpp"

namespace tj {

struct DeviceKind {
  std::string name;  // "cpu", "interp", "vulkan", "cuda": a device is "<name>" or "<name>:N"
  // A GPU kind behind a driver loaded at run time: where the driver does not load, its
  // devices run kernels on the host, saying why, instead of failing to be selected.
  bool fallsBackToHost = false;
  std::function<std::string()> unavailableReason;       // why this machine cannot run it; "" when it can
  std::function<std::vector<std::string>()> devices;    // "vulkan:0 (llvmpipe ...)" for each device here
  std::function<Device&(const std::string& name)> open;  // the device "<name>" or "<name>:N" names
};

// A GPU kind's `devices` list: "<kind>:i (<describe(i)>)" for each of `count` devices, or
// "<kind>:i" where describe throws Error (the device is there; its launch says what is wrong).
std::vector<std::string> describedDevices(std::string_view kind, int count, const std::function<std::string(int)>& describe);

// Every registered kind, the host's first: cpu, interp, then the GPU kinds.
const std::vector<DeviceKind>& deviceKinds();
// The kind a device name ("vulkan", "cuda:1") belongs to; null for a name of no kind.
const DeviceKind* findDeviceKind(std::string_view deviceName);

}  // namespace tj
