// What run() and Kernel handles share between tracing and launching. Internal to dsl/.
#pragma once
#include <span>
#include <string>
#include <string_view>

#include "devices/device.hpp"
#include "dsl/run.hpp"

namespace tj {

class Tracer;

namespace detail {

// Throws Error at `loc` unless the grid has 1 to 3 axes of non-negative sizes.
void checkGrid(std::span<const int64_t> grid, const SourceLoc& loc, std::string_view op);

// Verifies and canonicalizes what `tracer` recorded, logs it, and writes it to
// $TILEJIT_DUMP/<name>-<hash>.tir when set. The tensors are the tracer's parameters.
TracedKernel finishTrace(Tracer& tracer);

// The device `name` selects ("" = $TILEJIT_DEVICE or the best); a bad name is an Error at `loc`.
// The sanitizing interpreter instead when `sanitize` or TILEJIT_SANITIZE asks for it.
Device& deviceFor(const std::string& name, bool sanitize, const SourceLoc& loc, std::string_view op);

// The CaptureTraces active on this thread, or null.
CaptureTraces* activeCapture();

// Launches a traced kernel on `device` with the `leading` tensors (a Kernel handle's
// parameters) before the trace's own; returns the name of the device that ran it (the
// CPU's when the device fell back), on options.stream or the thread's StreamScope. Arguments
// a kernel may not store to are an Error at `loc`, naming `op`.
std::string launchTraced(Device& device, const TracedKernel& traced, std::span<const Tensor* const> leading,
                         std::span<const int64_t> grid, std::span<const ScalarArg> scalars, const RunOptions& options,
                         const SourceLoc& loc, std::string_view op);

}  // namespace detail
}  // namespace tj
