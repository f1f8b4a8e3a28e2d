// The `tilejit` Python module: tilejit tensors exchanged with NumPy, PyTorch, CuPy and JAX
// through DLPack (no copies), and the sample kernels as functions over any such array. It is
// for exchange, not a Python DSL: kernels are written in C++ (python/tilejit_pybind.hpp shows
// how a module of one's own exposes them).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>
#include <string>
#include <thread>

#include "dsl/tilejit.hpp"
#include "python/tilejit_pybind.hpp"
#include "samples/kernels.hpp"

namespace tj::python {
namespace {

// A DLPack capsule whose destructor frees the tensor unless a consumer used (renamed) it.
template <class Managed>
py::capsule capsuleOf(Managed* managed, const char* name) {
  PyObject* capsule = PyCapsule_New(managed, name, [](PyObject* c) {
    const char* unused = std::is_same_v<Managed, DLManagedTensorVersioned> ? kVersionedCapsule : kLegacyCapsule;
    if (!PyCapsule_IsValid(c, unused)) return;
    auto* m = static_cast<Managed*>(PyCapsule_GetPointer(c, unused));
    if (m->deleter) m->deleter(m);
  });
  if (!capsule) {
    managed->deleter(managed);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(capsule);
}

// The array API's __dlpack__: DLPack 1.x for a consumer that asks for it (max_version), else 0.x.
// tilejit finishes each launch before returning, so a consumer's stream has nothing to wait for.
py::capsule dlpack(const PyTensor& self, py::object /*stream*/, std::optional<std::pair<int, int>> maxVersion,
                   std::optional<std::pair<int, int>> dlDevice, std::optional<bool> copy) {
  if (copy.value_or(false)) throw py::buffer_error("tilejit.Tensor.__dlpack__: tilejit hands tensors out without a copy");
  auto device = self.tensor.exportDevice();
  if (dlDevice && *dlDevice != device)
    throw py::buffer_error(fmt::format("tilejit.Tensor.__dlpack__: the tensor is on DLPack device {}, not the {} asked for",
                                       device, *dlDevice));
  if (maxVersion && maxVersion->first >= 1) return capsuleOf(self.tensor.toDLPack(), kVersionedCapsule);
  if (self.tensor.readOnly())
    throw py::buffer_error("tilejit.Tensor.__dlpack__: the tensor is read-only, which DLPack 0.x cannot say: ask for "
                           "max_version=(1, 0) or more");
  return capsuleOf(self.tensor.toDLPackLegacy(), kLegacyCapsule);
}

// A tilejit error's message without its leading "<file>:<line>: " where that is a line of
// tilejit's own sources (this module, the samples): Python's traceback names the caller's line.
std::string withoutOurLocation(std::string message) {
  constexpr std::string_view root = TILEJIT_SOURCE_DIR "/";
  size_t colon = message.find(": ");
  if (message.starts_with(root) && colon != std::string::npos) message.erase(0, colon + 2);
  return message;
}

DType dtypeNamed(const std::string& name) {
  if (std::optional<DType> d = parseDType(name)) return *d;
  throw py::value_error("tilejit: unknown dtype '" + name + "' (f32, f64, f16, bf16, i8, i32, i64, bool, u8, u16, "
                        "u32, u64, f8e4m3, f8e5m2)");
}

Tensor outputLike(const std::optional<Tensor>& out, const Shape& shape, DType dtype) {
  return out ? *out : Tensor::empty(shape, dtype);
}

RunOptions on(const std::string& device) { return {.device = device}; }

void defineTensor(py::module_& m) {
  py::class_<PyTensor>(m, "Tensor", "A tilejit tensor: a strided view over host memory that may have a GPU copy.")
      .def_property_readonly("shape", [](const PyTensor& t) { return py::tuple(py::cast(t.tensor.shape())); })
      .def_property_readonly("strides", [](const PyTensor& t) { return py::tuple(py::cast(t.tensor.strides())); },
                             "in elements")
      .def_property_readonly("dtype", [](const PyTensor& t) { return std::string(dtypeName(t.tensor.dtype())); })
      .def_property_readonly("read_only", [](const PyTensor& t) { return t.tensor.readOnly(); })
      .def("to", [](const PyTensor& t, const std::string& device) { return PyTensor{t.tensor.on(device)}; },
           py::arg("device"), "Gives the storage a copy on `device` (\"cuda\", \"vulkan\") and returns the same view.")
      .def("__dlpack__", &dlpack, py::kw_only(), py::arg("stream") = py::none(), py::arg("max_version") = py::none(),
           py::arg("dl_device") = py::none(), py::arg("copy") = py::none())
      .def("__dlpack_device__", [](const PyTensor& t) { return t.tensor.exportDevice(); })
      .def("__repr__", [](const PyTensor& t) {
        return "tilejit.Tensor(" + t.tensor.text() + ", dtype=" + std::string(dtypeName(t.tensor.dtype())) + ")";
      });
}

// `with tilejit.stream(torch.cuda.current_stream().cuda_stream):` orders the launches within on
// that CUDA (or HIP) stream. A StreamScope on the entering thread: left there, innermost first.
class StreamContext {
 public:
  explicit StreamContext(uintptr_t stream) : stream_(reinterpret_cast<void*>(stream)) {}
  void enter() {
    if (scope_) throw py::value_error("tilejit.stream: entered twice");
    scope_.emplace(stream_);
    thread_ = std::this_thread::get_id();
  }
  void exit(const py::args&) {
    if (!scope_ || thread_ != std::this_thread::get_id() || StreamScope::current() != stream_)
      throw py::value_error("tilejit.stream: left on another thread, out of order, or without entering");
    scope_.reset();
  }

 private:
  void* stream_;
  std::optional<StreamScope> scope_;
  std::thread::id thread_;
};

void defineOps(py::module_& m) {
  py::call_guard<py::gil_scoped_release> released;
  m.def("softmax", [](const Tensor& x, std::optional<Tensor> out, const std::string& device) {
        Tensor y = outputLike(out, x.shape(), x.dtype());
        samples::softmax(x, y, on(device));
        return y;
      }, py::arg("x"), py::kw_only(), py::arg("out") = py::none(), py::arg("device") = "", released,
      "Softmax over the last axis of a 2-D tensor.");
  m.def("layernorm", [](const Tensor& x, const Tensor& weight, const Tensor& bias, double eps,
                        std::optional<Tensor> out, const std::string& device) {
        Tensor y = outputLike(out, x.shape(), x.dtype());
        samples::layernorm(x, weight, bias, y, eps, on(device));
        return y;
      }, py::arg("x"), py::arg("weight"), py::arg("bias"), py::arg("eps") = 1e-5, py::kw_only(),
      py::arg("out") = py::none(), py::arg("device") = "", released,
      "Layer normalization over the last axis of a 2-D tensor.");
  m.def("gemm", [](const Tensor& a, const Tensor& b, std::optional<Tensor> out, const std::string& device) {
        if (a.rank() != 2 || b.rank() != 2 || a.dim(1) != b.dim(0))
          throw py::value_error(fmt::format("tilejit.gemm: a is [{}] and b is [{}]: two 2-D tensors, a's columns as many "
                                            "as b's rows",
                                            fmt::join(a.shape(), ", "), fmt::join(b.shape(), ", ")));
        Tensor c = outputLike(out, {a.dim(0), b.dim(1)}, a.dtype());
        samples::gemm(a, b, c, on(device));
        return c;
      }, py::arg("a"), py::arg("b"), py::kw_only(), py::arg("out") = py::none(), py::arg("device") = "", released,
      "a @ b for 2-D tensors.");
  m.def("attention", [](const Tensor& q, const Tensor& k, const Tensor& v, bool causal, std::optional<Tensor> out,
                        const std::string& device) {
        Tensor o = outputLike(out, q.shape(), q.dtype());
        samples::attention(q, k, v, o, causal, on(device));
        return o;
      }, py::arg("q"), py::arg("k"), py::arg("v"), py::arg("causal") = false, py::kw_only(),
      py::arg("out") = py::none(), py::arg("device") = "", released,
      "softmax(q k^T / sqrt(d)) v over [batch, heads, sequence, dim] tensors.");
}

}  // namespace
}  // namespace tj::python

PYBIND11_MODULE(tilejit, m) {
  using namespace tj::python;
  m.doc() = "tilejit tensors through DLPack, and tilejit's sample kernels over any DLPack-capable array";
  static py::exception<tj::Error> error(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tj::Error& e) {
      PyErr_SetString(error.ptr(), withoutOurLocation(e.what()).c_str());
    }
  });
  defineTensor(m);
  m.def("from_dlpack", [](py::handle object) { return PyTensor{fromObject(object)}; }, py::arg("x"),
        "A tilejit tensor viewing x's memory (NumPy, PyTorch, CuPy, JAX, or a DLPack capsule), no copy.");
  m.def("empty", [](const std::vector<int64_t>& shape, const std::string& dtype) {
        return PyTensor{tj::Tensor::empty(shape, dtypeNamed(dtype))};
      }, py::arg("shape"), py::arg("dtype") = "f32");
  m.def("devices", &tj::availableDevices, "The devices that can run kernels here.");
  py::class_<StreamContext>(m, "stream", "Within `with tilejit.stream(handle):`, launches are ordered on that CUDA or "
                                         "HIP stream (a CUstream as an int, e.g. torch.cuda.current_stream().cuda_stream).")
      .def(py::init<uintptr_t>(), py::arg("handle"))
      .def("__enter__", &StreamContext::enter)
      .def("__exit__", &StreamContext::exit);
  defineOps(m);
}
