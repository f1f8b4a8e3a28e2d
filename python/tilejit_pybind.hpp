// tilejit tensors in pybind11 modules: a tj::Tensor parameter accepts a tilejit.Tensor or any
// object with __dlpack__ (a NumPy, PyTorch, CuPy or JAX array) or a DLPack capsule, as a view
// of its memory, no copy; a tj::Tensor result becomes a tilejit.Tensor, which NumPy and
// PyTorch take back with from_dlpack, no copy either. A module of your own kernels:
//
//   #include <pybind11/pybind11.h>
//   #include <tilejit/tilejit.hpp>
//   #include "python/tilejit_pybind.hpp"
//   PYBIND11_MODULE(my_kernels, m) {
//     pybind11::module_::import("tilejit");  // registers tilejit.Tensor
//     m.def("scale", [](tj::Tensor x) { tj::Tensor y = tj::Tensor::empty(x.shape(), x.dtype()); ...; return y; });
//   }
#pragma once
#include <pybind11/pybind11.h>

#include <string>

#include "dsl/dlpack.hpp"
#include "dsl/run.hpp"
#include "dsl/tensor.hpp"

namespace tj::python {

namespace py = pybind11;

// What Python holds of a tilejit tensor (a class of its own, so that tj::Tensor can have the
// DLPack-reading caster below).
struct PyTensor {
  Tensor tensor;
};

inline constexpr const char* kVersionedCapsule = "dltensor_versioned";
inline constexpr const char* kLegacyCapsule = "dltensor";

// The tensor of an unused DLPack capsule, which is renamed "used_..." as the protocol asks: the
// tensor owns it from then on. A used or foreign capsule is a ValueError; a tensor tilejit
// refuses leaves the capsule unused, so its destructor frees it.
template <class Managed>
Tensor fromCapsuleNamed(PyObject* capsule, const char* name, const char* usedName) {
  Tensor t = Tensor::fromDLPack(static_cast<Managed*>(PyCapsule_GetPointer(capsule, name)));
  PyCapsule_SetName(capsule, usedName);
  return t;
}

inline Tensor fromCapsule(py::handle capsule) {
  PyObject* c = capsule.ptr();
  if (PyCapsule_IsValid(c, kVersionedCapsule))
    return fromCapsuleNamed<DLManagedTensorVersioned>(c, kVersionedCapsule, "used_dltensor_versioned");
  if (PyCapsule_IsValid(c, kLegacyCapsule)) return fromCapsuleNamed<DLManagedTensor>(c, kLegacyCapsule, "used_dltensor");
  const char* name = PyCapsule_GetName(c);
  PyErr_Clear();
  throw py::value_error(std::string("tilejit.from_dlpack: the capsule is named '") + (name ? name : "") +
                        "', not an unused 'dltensor_versioned' or 'dltensor' (each capsule is read once)");
}

// Whether fromObject reads `object`: a tilejit.Tensor, a capsule, or anything with __dlpack__.
inline bool isTensorLike(py::handle object) {
  return py::isinstance<PyTensor>(object) || PyCapsule_CheckExact(object.ptr()) || py::hasattr(object, "__dlpack__");
}

// `object` as a tilejit tensor: itself, or a view of what its __dlpack__ hands out (DLPack 1.x
// asked for first, then the producer's default). A GPU producer is asked to order its work
// before the stream tilejit's launches use: the thread's StreamScope (tilejit.stream), else
// DLPack's name for the default stream (CUDA's legacy stream is 1, ROCm's null stream 0).
inline Tensor fromObject(py::handle object) {
  if (py::isinstance<PyTensor>(object)) return object.cast<const PyTensor&>().tensor;
  if (PyCapsule_CheckExact(object.ptr())) return fromCapsule(object);
  if (!py::hasattr(object, "__dlpack__"))
    throw py::type_error("tilejit: expected a tensor with __dlpack__ (NumPy, PyTorch, CuPy, JAX) or a DLPack "
                         "capsule, got " + std::string(py::str(py::type::of(object))));
  py::object stream = py::none();
  if (py::hasattr(object, "__dlpack_device__")) {
    auto device = object.attr("__dlpack_device__")().cast<std::pair<int, int>>();
    if (device.first == kDLCUDA || device.first == kDLROCM)
      stream = py::int_(StreamScope::current() ? uintptr_t(StreamScope::current()) : device.first == kDLCUDA ? 1 : 0);
  }
  py::object capsule;
  try {
    capsule = object.attr("__dlpack__")(py::arg("stream") = stream, py::arg("max_version") = py::make_tuple(1, 1));
  } catch (const py::error_already_set& e) {
    if (!e.matches(PyExc_TypeError)) throw;  // a producer of DLPack 0.x takes no max_version
    capsule = object.attr("__dlpack__")(py::arg("stream") = stream);
  }
  return fromCapsule(capsule);
}

}  // namespace tj::python

namespace pybind11::detail {

template <>
struct type_caster<tj::Tensor> {
  PYBIND11_TYPE_CASTER(tj::Tensor, const_name("tilejit.Tensor"));
  bool load(handle source, bool) {
    if (!tj::python::isTensorLike(source)) return false;
    value = tj::python::fromObject(source);
    return true;
  }
  static handle cast(const tj::Tensor& t, return_value_policy, handle) {
    return pybind11::cast(tj::python::PyTensor{t}).release();
  }
};

}  // namespace pybind11::detail
