// Kernel handles: a kernel with explicit tensor and scalar parameters, traced once
// per signature and relaunched without tracing.
//
//   auto axpy = tj::kernel("axpy", [](tj::Program& p, const tj::Tensor& x, const tj::Tensor& y, tj::Tile alpha) {
//     tj::Index i = p.id(0);
//     auto X = p.read(x, {1024}), Y = p.read(y, {1024});
//     p.write(y, {1024}).put(alpha * X.at({i}) + Y.at({i}), {i});
//   });
//   axpy({tj::cdiv(n, 1024)}, x, y, 2.5);                      // returns the device's name
//   axpy.launch({tj::cdiv(n, 1024)}, x, y, 0.5, {.device = "interp"});
//
// The lambda's parameters after Program& declare the kernel's: `const Tensor&` (or
// `Tensor`) a tensor, `Index` an i64 scalar (pass an integer), `Tile` an f32 scalar
// (a rank-0 tile; pass a number), `Scalar<dtype>` a scalar of another dtype. Scalars
// are runtime arguments of the kernel: a new value neither retraces nor recompiles.
//
// The body is traced once per signature: the device, the grid's rank, and each
// tensor's dtype and shape. Shapes are in the signature because host code in the
// body may read `x.dim(0)`, which bakes the size in; take sizes from
// `view.size(axis)` and `view.blocks(axis)` instead so one trace serves every shape.
// A tensor the body captures (rather than takes as a parameter) is kept by the
// handle from its first trace and passed at every launch.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "devices/device.hpp"
#include "dsl/program.hpp"
#include "dsl/run.hpp"

namespace tj {

// A scalar parameter of dtype D of a Kernel body: a rank-0 tile.
template <DType D>
class Scalar : public Tile {
 public:
  static_assert(D == i64 || D == i32 || D == f32 || D == f64 || D == f16 || D == bf16,
                "tj::Scalar: scalar parameters are i64, i32, f32, f64, f16 or bf16");
  explicit Scalar(const Tile& t) : Tile(t) {}
};

namespace kernel_detail {

// ---- Arguments at the call: each converts from what its parameter takes, and
// static_asserts with a message naming the parameter's kind otherwise.

struct TensorArgument {
  template <typename T>
  TensorArgument(const T& t) {  // NOLINT: implicit at the call
    static_assert(std::is_same_v<T, Tensor>, "tj::Kernel: a tensor parameter takes a tj::Tensor");
    if constexpr (std::is_same_v<T, Tensor>) tensor = &t;
  }
  const Tensor* tensor = nullptr;
};

struct ScalarArgument {
  ScalarArg value;
};

struct IntegerArgument : ScalarArgument {
  template <typename T>
  IntegerArgument(const T& v) {  // NOLINT: implicit at the call
    static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>,
                  "tj::Kernel: an Index or integer Scalar parameter takes an integer");
    if constexpr (std::is_integral_v<T>) value.i = static_cast<int64_t>(v);
  }
};

struct NumberArgument : ScalarArgument {
  template <typename T>
  NumberArgument(const T& v) {  // NOLINT: implicit at the call
    static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>,
                  "tj::Kernel: a Tile or float Scalar parameter takes a number");
    if constexpr (std::is_arithmetic_v<T>) value.f = static_cast<double>(v);
  }
};

// ---- What the body receives while traced (filled by kernel.cpp).

class TraceArguments {
 public:
  Tensor& tensor(size_t i) { return tensors_[i]; }
  Index index(size_t scalar) const;
  Tile tile(size_t scalar) const;

 private:
  friend class KernelCore;
  explicit TraceArguments(Tracer& t) : tracer_(t) {}
  Tracer& tracer_;
  std::vector<Tensor> tensors_;
  std::vector<ir::ValueId> scalars_;
};

// ---- Parameter kinds, by the decayed type of a lambda parameter.

template <typename P>
struct Param {
  static constexpr bool valid = false;
};
template <>
struct Param<Tensor> {
  static constexpr bool valid = true, isTensor = true;
  using Argument = TensorArgument;
  static Tensor& get(TraceArguments& a, size_t slot) { return a.tensor(slot); }
};
template <>
struct Param<Index> {
  static constexpr bool valid = true, isTensor = false;
  static constexpr DType dtype = i64;
  using Argument = IntegerArgument;
  static Index get(TraceArguments& a, size_t slot) { return a.index(slot); }
};
template <>
struct Param<Tile> {
  static constexpr bool valid = true, isTensor = false;
  static constexpr DType dtype = f32;
  using Argument = NumberArgument;
  static Tile get(TraceArguments& a, size_t slot) { return a.tile(slot); }
};
template <DType D>
struct Param<Scalar<D>> {
  static constexpr bool valid = true, isTensor = false;
  static constexpr DType dtype = D;
  using Argument = std::conditional_t<D == f32 || D == f64 || D == f16 || D == bf16, NumberArgument, IntegerArgument>;
  static Scalar<D> get(TraceArguments& a, size_t slot) { return Scalar<D>(a.tile(slot)); }
};

// ---- The non-template part (kernel.cpp): the signature cache, tracing, launching.

class KernelCore;
struct Checked {};  // passed by tj::kernel() once the body's signature is checked
using Body = std::function<void(Program&, TraceArguments&)>;
std::shared_ptr<KernelCore> makeCore(std::string name, std::vector<DType> scalarTypes, Body body);
std::string launch(KernelCore& core, std::span<const int64_t> grid, std::span<const Tensor* const> tensors,
                   std::span<const ScalarArg> scalars, const RunOptions& options, Loc loc);
int64_t traceCount(const KernelCore& core);
const std::string& name(const KernelCore& core);

// The parameter list of a lambda (non-generic), functor or function pointer.
template <typename F>
struct CallSignature : CallSignature<decltype(&F::operator())> {};
template <typename C, typename R, typename... A>
struct CallSignature<R (C::*)(A...) const> {
  using Type = std::type_identity<void(A...)>;
};
template <typename C, typename R, typename... A>
struct CallSignature<R (C::*)(A...)> {  // a mutable lambda
  using Type = std::type_identity<void(A...)>;
};
template <typename R, typename... A>
struct CallSignature<R (*)(A...)> {
  using Type = std::type_identity<void(A...)>;
};

template <typename F>
concept HasCallSignature = std::is_pointer_v<F> || requires { &F::operator(); };

}  // namespace kernel_detail

// A kernel handle; make one with tj::kernel(). Copies share the traces.
template <typename... Ps>
class Kernel {
  static constexpr size_t kParams = sizeof...(Ps);
  static constexpr size_t kTensors = (size_t{kernel_detail::Param<Ps>::isTensor} + ... + 0);

 public:
  // Launches over `grid` (rank 1 to 3) with one argument per parameter; returns the device's name.
  std::string operator()(const std::vector<int64_t>& grid, typename kernel_detail::Param<Ps>::Argument... args,
                         Loc loc = Loc::current()) const {
    return dispatch(grid, RunOptions{}, loc, args...);
  }
  // The same on the device `options.device` names; the kernel's name is the handle's.
  std::string launch(const std::vector<int64_t>& grid, typename kernel_detail::Param<Ps>::Argument... args,
                     const RunOptions& options, Loc loc = Loc::current()) const {
    return dispatch(grid, options, loc, args...);
  }

  // Calls with the wrong number of arguments.
  template <typename... As>
    requires(sizeof...(As) != kParams)
  std::string operator()(const std::vector<int64_t>&, As&&...) const {
    static_assert(sizeof...(As) == kParams,
                  "tj::Kernel: pass the grid, then one argument per parameter of the kernel's lambda after Program&");
    return {};
  }
  template <typename... As>
    requires(sizeof...(As) != kParams + 1)
  std::string launch(const std::vector<int64_t>&, As&&...) const {
    static_assert(sizeof...(As) == kParams + 1,
                  "tj::Kernel::launch: pass the grid, one argument per parameter of the kernel's lambda after "
                  "Program&, then RunOptions");
    return {};
  }

  // How often the body has been traced: once per signature.
  int64_t traceCount() const { return kernel_detail::traceCount(*core_); }
  const std::string& name() const { return kernel_detail::name(*core_); }

  // Made by tj::kernel(), which checks the body's signature.
  template <typename F>
  Kernel(kernel_detail::Checked, std::string name, F body)
      : core_(kernel_detail::makeCore(std::move(name), scalarTypes(), wrap(std::move(body)))) {}

 private:
  std::string dispatch(const std::vector<int64_t>& grid, const RunOptions& options, Loc loc,
                       const typename kernel_detail::Param<Ps>::Argument&... args) const {
    std::array<const Tensor*, kTensors> tensors{};
    std::array<ScalarArg, kParams - kTensors> scalars{};
    [&]<size_t... I>(std::index_sequence<I...>) {
      (place(kSlots[I], args, tensors, scalars), ...);
    }(std::index_sequence_for<Ps...>{});
    return kernel_detail::launch(*core_, grid, tensors, scalars, options, loc);
  }

  // Each parameter's position among the tensors or among the scalars.
  static constexpr std::array<size_t, kParams> slots() {
    constexpr bool isTensor[] = {kernel_detail::Param<Ps>::isTensor..., false};
    std::array<size_t, kParams> out{};
    size_t tensors = 0, scalars = 0;
    for (size_t i = 0; i < kParams; ++i) out[i] = isTensor[i] ? tensors++ : scalars++;
    return out;
  }
  static constexpr std::array<size_t, kParams> kSlots = slots();

  static std::vector<DType> scalarTypes() {
    std::vector<DType> types;
    auto add = [&]<typename P>(std::type_identity<P>) {
      if constexpr (!kernel_detail::Param<P>::isTensor) types.push_back(kernel_detail::Param<P>::dtype);
    };
    (add(std::type_identity<Ps>{}), ...);
    return types;
  }

  template <typename F>
  static kernel_detail::Body wrap(F body) {
    return [body = std::move(body)](Program& p, kernel_detail::TraceArguments& a) mutable {
      [&]<size_t... I>(std::index_sequence<I...>) {
        body(p, kernel_detail::Param<Ps>::get(a, kSlots[I])...);
      }(std::index_sequence_for<Ps...>{});
    };
  }

  template <typename Tensors, typename Scalars>
  static void place(size_t slot, const kernel_detail::TensorArgument& a, Tensors& tensors, Scalars&) {
    tensors[slot] = a.tensor;
  }
  template <typename Tensors, typename Scalars>
  static void place(size_t slot, const kernel_detail::ScalarArgument& a, Tensors&, Scalars& scalars) {
    scalars[slot] = a.value;
  }

  std::shared_ptr<kernel_detail::KernelCore> core_;
};

namespace kernel_detail {

template <typename F, typename P0, typename... Ps>
auto make(std::string name, F body, std::type_identity<void(P0, Ps...)>) {
  static_assert(std::is_same_v<P0, Program&>, "tj::kernel: the body's first parameter must be tj::Program&");
  static_assert((Param<std::decay_t<Ps>>::valid && ...),
                "tj::kernel: each parameter after Program& must be a tensor (const tj::Tensor& or tj::Tensor), "
                "tj::Index (an i64 scalar), tj::Tile (an f32 scalar) or tj::Scalar<dtype>");
  static_assert(!(std::is_rvalue_reference_v<Ps> || ...), "tj::kernel: take parameters by value or const&, not &&");
  if constexpr (std::is_same_v<P0, Program&> && (Param<std::decay_t<Ps>>::valid && ...))
    return Kernel<std::decay_t<Ps>...>(Checked{}, std::move(name), std::move(body));
}

template <typename F>
void make(std::string, F, std::type_identity<void()>) {
  static_assert(sizeof(F) == 0, "tj::kernel: the body's first parameter must be tj::Program&");
}

}  // namespace kernel_detail

// A kernel handle named `name` whose parameters are those of `body` after Program&.
template <typename F>
auto kernel(std::string name, F body) {
  static_assert(kernel_detail::HasCallSignature<F>,
                "tj::kernel: the body must be a lambda with explicit parameter types (tj::Program&, then "
                "const tj::Tensor&, tj::Index, tj::Tile or tj::Scalar<dtype>); auto parameters cannot declare "
                "the kernel's parameters");
  if constexpr (kernel_detail::HasCallSignature<F>)
    return kernel_detail::make(std::move(name), std::move(body), typename kernel_detail::CallSignature<F>::Type{});
}

}  // namespace tj
