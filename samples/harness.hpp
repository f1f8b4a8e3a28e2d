// What every sample program shares: --device and --check options, timing,
// comparison with a float64 reference, and the closing RESULT line.
#pragma once
#include <CLI/CLI.hpp>

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "dsl/tilejit.hpp"
#include "grad/tile_backward.hpp"

namespace tj::samples {

struct Report {
  std::string sample, device, dtype, shape;
  double ms = 0;
  std::string rateName = "gflops";  // or "gbps"
  double work = 0;                   // flops or bytes of one run
  double maxRelErr = 0;
  bool checked = false;
  double tolerance = 0;

  int repeat = 1;           // --repeat: runs in all; the first may compile and is left out of ms
  int warmup = 0;           // --warmup: untimed runs after the first, before the others
  double firstMs = 0;
  std::string cache;  // how the first run got its kernel on cpu, vulkan or cuda: miss, memory or disk
  double compileMs = 0;
  std::string tune;   // for samples that autotune: ran, file or off (TuneSource)

  // Runs f (which returns the device name) once, then `warmup` times untimed, then repeat - 1
  // times; ms is the median of those last runs when there are any, else the first.
  void time(const std::function<std::string()>& f);
  // max |got - ref| / max |ref| over all elements; NaN anywhere counts as infinite. Called
  // for several outputs, the report keeps the one furthest past its tolerance.
  void compare(const Tensor& got, const std::vector<double>& ref, double tolerance);
};

class SampleCli {
 public:
  SampleCli(std::string sample, const std::string& description);
  CLI::App app;
  RunOptions runOptions() const { return {.name = sample_, .device = device_}; }
  bool check() const { return check_; }
  // Keeps the tensors in device memory when the sample runs on cuda: launches are then timed
  // without copies, as a GPU program's are. On Vulkan they stay on the host, since lavapipe
  // ends long loops early, and a kernel cut short after writing a device copy in place
  // could not rerun on the CPU. Undefined tensors (optional inputs) are left out.
  void keepOnDevice(std::initializer_list<const Tensor*> tensors) const;
  // --block-NAME options (a block size each, described by `what`) and the GPU knobs --stages,
  // --warps and --warp-specialize (p.stages, p.warps, p.warp_specialize), into a blocks
  // struct's fields.
  struct BlockSize {
    std::string name, what;
    int64_t* size;
  };
  void addBlockOptions(const std::vector<BlockSize>& sizes, int64_t& stages, int64_t& warps, bool& specialize);
  // A flag that is part of the blocks (e.g. attention's --overlap-softmax).
  void addBlockFlag(const std::string& name, bool& flag, const std::string& what);
  // Whether the command line gave blocks (any option addBlockOptions or addBlockFlag added): used as they are.
  bool blocksGiven() const;
  // Parses arguments, runs body, prints RESULT; returns the exit status
  // (1 on a failed check or an error, 2 on bad arguments).
  int main(int argc, char** argv, const std::function<void(Report&)>& body);

 private:
  std::string sample_, device_;
  std::vector<std::string> blockOptions_;
  bool check_ = false;
  int repeat_ = 1, warmup_ = 0;
};

// --backward: grad::backward of `forward` (launched over `grid`), timed as `handwritten` (the
// report of the hand-written backward kernels' run) was, and checked to run on its device.
// Prints FIGURE <sample>_backward_{handwritten,derived}_ms and their RATIO; returns the gradients.
std::vector<Tensor> timeDerivedBackward(const Report& handwritten, const TracedKernel& forward,
                                        const std::vector<int64_t>& grid, const std::vector<Tensor>& inputs,
                                        const std::vector<grad::OutputGradient>& outputs, const RunOptions& options);

DType parseDTypeOption(const std::string& name);
// A tensor of NaN (or -1 for integers), so elements a kernel fails to write are caught.
Tensor poisoned(const Shape& shape, DType dtype = f32);
double tolerance(DType dtype, int64_t reductionLength);
// x rounded into an 8-bit float dtype with one scale for the whole tensor, on the host: the
// largest magnitude over the dtype's largest finite value (1 for all zeros). Returns the
// 8-bit tensor and the scale (x is about the first times the second).
std::pair<Tensor, double> quantizePerTensor(const Tensor& x, DType dtype);
// The scale of each element of a quantized matrix of `shape` [rows, cols], or of a stack of them
// [groups, rows, cols], row-major: scale[(g,) r / blockRows, c / kScaleBlock] (quantizeFp8's
// layout), or the one element of a one-element scale.
std::vector<double> elementScales(const Tensor& scale, const Shape& shape, int64_t blockRows);
// q times its scales: the values a scaled product multiplies.
std::vector<double> dequantize(const Tensor& q, const Tensor& scale, int64_t blockRows);
// GB/s of memcpy moving `bytes` in all (half read, half written, as a kernel's bytes are
// counted), split over tilejit's CPU thread pool so it pays the dispatch a kernel pays:
// the median of runs adding up to 0.3 s, after one that touches the pages.
double memcpyGBps(double bytes);

}  // namespace tj::samples
