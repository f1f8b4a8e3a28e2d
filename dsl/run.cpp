#include "dsl/run.hpp"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "devices/device.hpp"
#include "dsl/launch.hpp"
#include "dsl/tracer.hpp"
#include "ir/passes.hpp"

namespace tj {

namespace {

thread_local CaptureTraces* gCapture = nullptr;

void dumpKernel(const ir::Kernel& k) {
  const char* dir = std::getenv("TILEJIT_DUMP");
  if (!dir || !*dir) return;
  std::filesystem::create_directories(dir);
  auto path = std::filesystem::path(dir) / (k.name + "-" + ir::hashHex(ir::semanticHash(k)) + ".tir");
  std::ofstream(path) << ir::print(k);
  spdlog::debug("tilejit: wrote {}", path.string());
}

}  // namespace

namespace detail {

void checkGrid(std::span<const int64_t> grid, const SourceLoc& loc, std::string_view op) {
  if (grid.empty() || grid.size() > 3)
    fail(loc, op, "the grid has rank " + std::to_string(grid.size()) + "; use 1 to 3 axes");
  for (size_t i = 0; i < grid.size(); ++i)
    if (grid[i] < 0)
      fail(loc, op, "grid axis " + std::to_string(i) + " has negative size " + std::to_string(grid[i]));
}

TracedKernel finishTrace(Tracer& tracer) {
  ir::verify(tracer.kernel());
  TracedKernel traced{ir::canonicalize(tracer.kernel()), tracer.tensors()};
  ir::verify(traced.kernel);
  spdlog::debug("tilejit: traced {}\n{}", traced.kernel.name, ir::print(traced.kernel));
  dumpKernel(traced.kernel);
  return traced;
}

Device& deviceFor(const std::string& name, const SourceLoc& loc, std::string_view op) {
  try {
    return selectDevice(name);
  } catch (const Error& e) {
    fail(loc, op, e.what());
  }
}

CaptureTraces* activeCapture() { return gCapture; }

}  // namespace detail

TracedKernel trace(const std::vector<int64_t>& grid, const KernelBody& body, const std::string& name, Loc loc) {
  detail::checkGrid(grid, SourceLoc::from(loc), "run");
  Tracer tracer(name, static_cast<int>(grid.size()));
  Program program(tracer);
  body(program);
  return detail::finishTrace(tracer);
}

std::string run(const std::vector<int64_t>& grid, const KernelBody& body, const RunOptions& options, Loc loc) {
  TracedKernel traced = trace(grid, body, options.name, loc);
  if (gCapture) {
    gCapture->add(std::move(traced.kernel));
    return "none";
  }
  Device& device = detail::deviceFor(options.device, SourceLoc::from(loc), "run");
  std::vector<TensorArg> args;
  for (const Tensor& t : traced.tensors) args.push_back(detail::tensorArg(t));
  device.launch(traced.kernel, {args, grid, {}});
  return device.name();
}

CaptureTraces::CaptureTraces() : previous_(gCapture) { gCapture = this; }
CaptureTraces::~CaptureTraces() { gCapture = previous_; }

}  // namespace tj
