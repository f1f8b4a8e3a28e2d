// Errors by whose fault they are (ir/error.hpp): a bug in a lowering (InternalError) fails the
// launch on every device that lowers, saying how to report it and where the kernel's IR was
// kept, and is not remembered; a kernel a GPU device cannot run (Unsupported) runs on the host
// instead, with the reason. The faults are armed in the lowerings (ir/fault_injection.hpp).
// The interpreter lowers nothing, so no fault of a lowering reaches it.
#include <doctest/doctest.h>

#include <filesystem>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "dsl/tilejit.hpp"
#include "ir/fault_injection.hpp"
#include "ir/passes.hpp"
#include "tests/support.hpp"

namespace tj {

namespace {

using testing::FaultKind;
using testing::ScopedFault;

constexpr int64_t kElements = 200, kBlock = 64;

// Added to every element, a different one for each case (the hash that caches a kernel is
// blind to its name): new in each process, so that no cache holds these kernels and their
// first launches lower them.
double freshConstant(int forCase) {
  static const double c = double(std::random_device{}() % 100000) + 0.25;
  return c + forCase;
}

// out = x + freshConstant(forCase), named `name`, on `device`; the launch's report.
LaunchReport addConstant(int forCase, const std::string& name, const std::string& device, const Tensor& x,
                         const Tensor& out) {
  LaunchWatch watch;
  run({cdiv(kElements, kBlock)},
      [&](Program& p) {
        Index i = p.id(0);
        p.write(out, {kBlock}).put(p.read(x, {kBlock}).at({i}) + freshConstant(forCase), {i});
      },
      RunOptions{.name = name, .device = device});
  return watch.last();
}

void checkAdded(int forCase, const Tensor& x, const Tensor& out) {
  std::vector<double> in = x.values(), got = out.values();
  for (size_t e = 0; e < in.size(); ++e) CHECK(got[e] == double(float(in[e]) + float(freshConstant(forCase))));
}

// The devices that lower kernels here, each with the stage that lowers them.
std::vector<std::pair<std::string, std::string>> loweringDevices() {
  std::vector<std::pair<std::string, std::string>> devices = {{"cpu", "lower/cpu"}};
  if (test::vulkanAvailable()) devices.emplace_back("vulkan", "kernel ir");
  return devices;
}

}  // namespace

TEST_CASE("error kinds: an internal error in a lowering fails the launch on every device, with the kernel's IR kept, and is not remembered") {
  Tensor x = Tensor::random({kElements}, 81);
  int forCase = 0;
  for (const auto& [device, stage] : loweringDevices()) {
    CAPTURE(device);
    ++forCase;
    Tensor out = Tensor::full({kElements}, -7.0);
    std::string name = "internal_fault_on_" + device, message;
    {
      ScopedFault fault(stage, name, FaultKind::internal);
      try {
        addConstant(forCase, name, device, x, out);
      } catch (const InternalError& e) {
        message = e.what();
      }
    }
    CAPTURE(message);
    std::string head = "internal error in " + stage +
                       ": a fault armed by a test. This is a bug in tilejit, not in your kernel: please report it "
                       "with the kernel's IR, kept in ";
    REQUIRE(message.starts_with(head));
    REQUIRE(message.ends_with(".tir."));
    std::filesystem::path kept = message.substr(head.size(), message.size() - head.size() - 1);
    CHECK(ir::parse(test::readText(kept)).name == name);
    std::filesystem::remove(kept);
    CHECK(out.values() == std::vector<double>(kElements, -7.0));  // nothing ran anywhere
    // Disarmed, the same kernel runs where it was asked: the bug was not taken for a refusal.
    LaunchReport report = addConstant(forCase, name, device, x, out);
    CHECK(report.device.starts_with(device));
    CHECK_MESSAGE(!report.fellBack(), report.fallbackReason);
    checkAdded(forCase, x, out);
  }
}

TEST_CASE("error kinds: a kernel a GPU device cannot run runs on the host with the reason, and the host raises it") {
  Tensor x = Tensor::random({kElements}, 82);
  if (test::vulkanAvailable()) {
    Tensor out = Tensor::full({kElements}, -7.0);
    ScopedFault fault("kernel ir", "unsupported_on_vulkan", FaultKind::unsupported);
    test::CaptureLog log;
    LaunchReport report = addConstant(10, "unsupported_on_vulkan", "vulkan", x, out);
    CHECK(report.device == "cpu");
    CHECK(report.fallbackReason == "kernel ir: unsupported: a fault armed by a test");
    CHECK(log.text().find("runs on cpu instead of vulkan: kernel ir: unsupported: a fault armed by a test") !=
          std::string::npos);
    checkAdded(10, x, out);
  } else {
    MESSAGE("vulkan skipped: no Vulkan device");
  }
  ScopedFault fault("lower/cpu", "unsupported_on_cpu", FaultKind::unsupported);
  Tensor out = Tensor::zeros({kElements});
  CHECK_THROWS_WITH_AS(addConstant(11, "unsupported_on_cpu", "cpu", x, out),
                       "lower/cpu: unsupported: a fault armed by a test", Unsupported);
}

}  // namespace tj
