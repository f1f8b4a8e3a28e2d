// tilejit's softmax, layer norm and attention kernels on PyTorch tensors, for
// samples/torch_ops/tilejit_ops.py, which registers them as torch.library custom ops. Each
// function views torch's tensors through DLPack (no copy), allocates its outputs with torch
// and has the tilejit kernel write into them.
#include <ATen/DLConvertor.h>  // first: its dlpack.h is the one tilejit's headers then use
#include <torch/extension.h>

#include <chrono>
#include <string>

#include "dsl/tilejit.hpp"
#include "samples/kernels.hpp"

namespace {

// A tilejit view of a torch tensor's memory. A tensor tilejit refuses stays torch's: its
// DLPack form is freed here.
tj::Tensor view(const at::Tensor& t) {
  std::unique_ptr<DLManagedTensor, void (*)(DLManagedTensor*)> managed(at::toDLPack(t),
                                                                      [](DLManagedTensor* m) { m->deleter(m); });
  tj::Tensor v = tj::Tensor::fromDLPack(managed.get());
  managed.release();  // the tilejit tensor owns it now
  return v;
}

// Where tilejit runs a kernel on `t`: the CPU, or the CUDA device that holds it, ordered on
// `stream` (torch.cuda.current_stream().cuda_stream; 0 on the CPU).
tj::RunOptions on(const at::Tensor& t, int64_t stream) {
  if (!t.is_cuda()) return {.device = "cpu"};
  return {.device = "cuda:" + std::to_string(t.get_device()), .stream = reinterpret_cast<void*>(stream)};
}

at::Tensor softmax(const at::Tensor& x, int64_t stream) {
  at::Tensor y = at::empty_like(x, at::MemoryFormat::Contiguous);
  tj::samples::softmax(view(x), view(y), on(x, stream));
  return y;
}

at::Tensor layernorm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, double eps,
                     int64_t stream) {
  at::Tensor y = at::empty_like(x, at::MemoryFormat::Contiguous);
  tj::samples::layernorm(view(x), view(weight), view(bias), view(y), eps, on(x, stream));
  return y;
}

std::vector<at::Tensor> layernormBackward(const at::Tensor& dy, const at::Tensor& x, const at::Tensor& weight,
                                          double eps, int64_t stream) {
  at::Tensor dx = at::empty_like(x, at::MemoryFormat::Contiguous), dw = at::empty_like(weight),
             db = at::empty_like(weight);
  tj::samples::layernormBackward({view(x), view(weight), view(dy), view(dx), view(dw), view(db)}, eps, on(x, stream));
  return {dx, dw, db};
}

// The output and each query row's logsumexp (which the backward reads).
std::vector<at::Tensor> attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal,
                                  int64_t stream) {
  at::Tensor out = at::empty_like(q, at::MemoryFormat::Contiguous);
  tj::Tensor tq = view(q);
  bool f64 = tj::samples::accumulatorFor(tq.dtype()) == tj::f64;
  at::Tensor lse = at::empty({q.size(0), q.size(1), q.size(2)}, q.options().dtype(f64 ? at::kDouble : at::kFloat));
  tj::samples::KernelDefinition kernel =
      tj::samples::attentionKernel(tq, view(k), view(v), view(out), causal, {}, view(lse));
  tj::run(kernel.grid, kernel.body, on(q, stream));
  return {out, lse};
}

std::vector<at::Tensor> attentionBackward(const at::Tensor& dout, const at::Tensor& q, const at::Tensor& k,
                                          const at::Tensor& v, const at::Tensor& out, const at::Tensor& lse,
                                          bool causal, int64_t stream) {
  at::Tensor dq = at::empty_like(q, at::MemoryFormat::Contiguous), dk = at::empty_like(k, at::MemoryFormat::Contiguous),
             dv = at::empty_like(v, at::MemoryFormat::Contiguous);
  tj::samples::attentionBackward({view(q), view(k), view(v), view(out), view(lse), view(dout.contiguous()), view(dq),
                                  view(dk), view(dv)},
                                 causal, on(q, stream));
  return {dq, dk, dv};
}

// Seconds per softmax of `x` into `y`, launched `calls` times from C++ on tilejit views made
// once: the kernel's cost without Python or the dispatcher, for the overhead benchmark.
double softmaxFromCpp(const at::Tensor& x, const at::Tensor& y, int64_t calls) {
  tj::Tensor tx = view(x), ty = view(y);
  tj::RunOptions options = on(x, 0);
  tj::samples::softmax(tx, ty, options);  // traced and compiled before the clock starts
  auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < calls; ++i) tj::samples::softmax(tx, ty, options);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / double(calls);
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("softmax", &softmax);
  m.def("layernorm", &layernorm);
  m.def("layernorm_backward", &layernormBackward);
  m.def("attention", &attention);
  m.def("attention_backward", &attentionBackward);
  m.def("softmax_from_cpp", &softmaxFromCpp);
}
