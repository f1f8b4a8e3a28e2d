// What a device needs to run a kernel: raw tensor arguments and a grid.
// Devices see only IR and these plain structs, never the DSL's classes.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.hpp"

namespace tj {

// One tensor argument: data pointer, element type, sizes and strides (in
// elements). Matches the kernel's TensorParam of the same position.
struct TensorArg {
  void* data = nullptr;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
};

// Receives `p.print` output: the label, the program's grid index and the
// tile's text. The default writes to stdout.
using PrintSink = std::function<void(const std::string& line)>;

// One scalar argument, matching the kernel's ScalarParam of the same position:
// `i` for an i64 parameter, `f` for a float one (rounded to its dtype by the kernel).
struct ScalarArg {
  int64_t i = 0;
  double f = 0;
};

struct LaunchArgs {
  std::span<const TensorArg> tensors;
  std::span<const int64_t> grid;
  PrintSink print;  // empty: stdout
  std::span<const ScalarArg> scalars = {};
  uint64_t kernelHash = 0;  // ir::semanticHash(kernel) when the caller has it; 0: the device computes it
};

// Checks a launch against the kernel's signature before any program runs: the
// grid's rank and sizes, each tensor's dtype, rank, sizes and data, and the
// number of scalars. Throws Error("<device>: kernel '<name>': ...").
void checkLaunchArgs(const ir::Kernel& kernel, const LaunchArgs& args, std::string_view device = "launch");

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;  // "interp", "cpu", "vulkan", ...
  virtual void launch(const ir::Kernel& kernel, const LaunchArgs& args) = 0;
};

// Device by name ("interp", ...). An empty name means $TILEJIT_DEVICE, else the
// best available device. Throws Error listing the known devices for a bad name.
Device& selectDevice(const std::string& name = "");
std::vector<std::string> availableDevices();

}  // namespace tj
