#include "grad/graph.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "grad/kernels.hpp"
#include "grad/tile_backward.hpp"

namespace tj::grad {

struct Graph::Node {
  Tensor value;            // row-major
  std::vector<int> inputs;  // node ids
  bool needsGradient;      // an input, or computed from one
  Backward backward;       // the inputs' gradients from this node's; empty for inputs and constants
  std::string op;
  SourceLoc loc;
};

namespace {

using kernels::Strided;

std::string describe(const Tensor& t) { return fmt::format("{}[{}]", dtypeName(t.dtype()), fmt::join(t.shape(), ", ")); }

void checkDtype(const Tensor& t, std::string_view op, const SourceLoc& loc) {
  if (t.dtype() != f32 && t.dtype() != f64)
    fail(loc, op, fmt::format("a graph computes in f32 or f64, not {}: cast the tensor first", describe(t)));
}

// NumPy's broadcast of two shapes, or an Error naming both.
Shape broadcastShapes(const Shape& a, const Shape& b, std::string_view op, const SourceLoc& loc) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1, y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1)
      fail(loc, op, fmt::format("shapes [{}] and [{}] do not broadcast (axis {} from the end: {} against {})",
                                fmt::join(a, ", "), fmt::join(b, ", "), i + 1, x, y));
    out[out.size() - 1 - i] = std::max(x, y);
  }
  return out;
}

// An axis counted from the end when negative, checked against `rank`.
int axisOf(int axis, int rank, std::string_view op, const SourceLoc& loc) {
  if (axis < -rank || axis >= rank)
    fail(loc, op, fmt::format("axis {} is outside the {} axes of the value", axis, rank));
  return axis < 0 ? axis + rank : axis;
}

Strided same(const Tensor& t) { return kernels::broadcast(t, t.shape()); }

// The value as [rows, last axis], a view.
Tensor asRows(const Tensor& t) {
  int64_t cols = t.rank() == 0 ? 1 : t.shape().back();
  return t.reshape({cols == 0 ? 0 : t.numel() / cols, cols});
}

std::vector<int> inverse(const std::vector<int>& perm) {
  std::vector<int> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[static_cast<size_t>(perm[i])] = static_cast<int>(i);
  return inv;
}

}  // namespace

const Tensor& Var::value() const { return graph_->nodes_[static_cast<size_t>(id_)].value; }

Tensor Gradients::of(const Var& v, Loc loc) const {
  const Graph::Node& n = graph_->node(v, "Gradients::of", SourceLoc::from(loc));
  const Tensor& g = byNode_[static_cast<size_t>(v.id_)];
  return g.defined() ? g : Tensor::zeros(n.value.shape(), n.value.dtype());
}

Graph::Graph(GraphOptions options) { run_.device = std::move(options.device); }
Graph::~Graph() = default;

const Graph::Node& Graph::node(const Var& v, std::string_view op, const SourceLoc& loc) const {
  if (v.graph_ != this) fail(loc, op, "the value belongs to another graph");
  return nodes_[static_cast<size_t>(v.id_)];
}

Var Graph::record(Tensor value, std::vector<Var> inputs, Backward backward, std::string_view op,
                  const SourceLoc& loc) {
  Node n{std::move(value), {}, false, std::move(backward), std::string(op), loc};
  for (const Var& v : inputs) {
    n.inputs.push_back(v.id_);
    n.needsGradient |= nodes_[static_cast<size_t>(v.id_)].needsGradient;
  }
  if (!n.needsGradient) n.backward = nullptr;
  nodes_.push_back(std::move(n));
  return Var(this, static_cast<int>(nodes_.size() - 1));
}

Var Graph::input(const Tensor& t, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  t.checkDefined("Graph::input", l);
  checkDtype(t, "Graph::input", l);
  nodes_.push_back({t.is_contiguous() ? t : t.contiguous(), {}, true, nullptr, "input", l});
  return Var(this, static_cast<int>(nodes_.size() - 1));
}

Var Graph::constant(const Tensor& t, Loc loc) {
  SourceLoc l = SourceLoc::from(loc);
  t.checkDefined("Graph::constant", l);
  checkDtype(t, "Graph::constant", l);
  return record(t.is_contiguous() ? t : t.contiguous(), {}, nullptr, "constant", l);
}

Var Graph::constant(double value, DType dtype, Loc loc) { return constant(Tensor::full({}, value, dtype, loc), loc); }

Tensor Graph::sumTo(const Tensor& gradient, const Shape& shape) const {
  if (gradient.shape() == shape) return gradient;
  const size_t lead = static_cast<size_t>(gradient.rank()) - shape.size();
  std::vector<bool> reduced(static_cast<size_t>(gradient.rank()));
  for (size_t d = 0; d < reduced.size(); ++d)
    reduced[d] = d < lead || (shape[d - lead] == 1 && gradient.dim(static_cast<int>(d)) != 1);
  return kernels::sumOver(gradient, reduced, run_).reshape(shape);
}

Tensor Graph::addGradients(const Tensor& a, const Tensor& b) const {
  return kernels::map({same(a), same(b)}, a.shape(), a.dtype(), [](const auto& x) { return x[0] + x[1]; },
                      "grad_accumulate", run_);
}

Var Graph::unary(const Var& a, std::string_view op, const SourceLoc& loc,
                 const std::function<Tile(const Tile&)>& forward,
                 const std::function<Tile(const Tile& x, const Tile& y, const Tile& dy)>& gradient) {
  const Tensor x = node(a, op, loc).value;
  const std::string name = fmt::format("grad_{}", op);
  Tensor y = kernels::map({same(x)}, x.shape(), x.dtype(), [&](const auto& t) { return forward(t[0]); }, name, run_);
  RunOptions run = run_;
  return record(y, {a}, [=](const Tensor& dy) {
    return std::vector{kernels::map({same(x), same(y), same(dy)}, x.shape(), x.dtype(),
                                    [&](const auto& t) { return gradient(t[0], t[1], t[2]); }, name + "_backward",
                                    run)};
  }, op, loc);
}

Var Graph::binary(const Var& a, const Var& b, std::string_view op, const SourceLoc& loc) {
  const Tensor x = node(a, op, loc).value, y = node(b, op, loc).value;
  if (x.dtype() != y.dtype())
    fail(loc, op, fmt::format("operands {} and {} differ in dtype", describe(x), describe(y)));
  const Shape shape = broadcastShapes(x.shape(), y.shape(), op, loc);
  const std::string name = fmt::format("grad_{}", op);
  const char code = op[0];  // add, sub, mul, div
  auto apply = [code](const Tile& l, const Tile& r) {
    return code == 'a' ? l + r : code == 's' ? l - r : code == 'm' ? l * r : l / r;
  };
  Tensor out = kernels::map({kernels::broadcast(x, shape), kernels::broadcast(y, shape)}, shape, x.dtype(),
                            [&](const auto& t) { return apply(t[0], t[1]); }, name, run_);
  return record(out, {a, b}, [this, x, y, shape, code, name](const Tensor& d) {
    // Each operand's gradient over the output's shape, then summed over its broadcast axes.
    auto over = [&](const std::function<Tile(const Tile& d, const Tile& x, const Tile& y)>& f) {
      return kernels::map({same(d), kernels::broadcast(x, shape), kernels::broadcast(y, shape)}, shape, x.dtype(),
                          [&](const auto& t) { return f(t[0], t[1], t[2]); }, name + "_backward", run_);
    };
    Tensor dx, dy;
    switch (code) {
      case 'a': dx = d, dy = d; break;
      case 's': dx = d, dy = over([](const Tile& g, const Tile&, const Tile&) { return -g; }); break;
      case 'm':
        dx = over([](const Tile& g, const Tile&, const Tile& r) { return g * r; });
        dy = over([](const Tile& g, const Tile& l, const Tile&) { return g * l; });
        break;
      default:
        dx = over([](const Tile& g, const Tile&, const Tile& r) { return g / r; });
        dy = over([](const Tile& g, const Tile& l, const Tile& r) { return -(g * l) / (r * r); });
    }
    return std::vector{sumTo(dx, x.shape()), sumTo(dy, y.shape())};
  }, op, loc);
}

Var Graph::add(const Var& a, const Var& b, Loc loc) { return binary(a, b, "add", SourceLoc::from(loc)); }
Var Graph::sub(const Var& a, const Var& b, Loc loc) { return binary(a, b, "sub", SourceLoc::from(loc)); }
Var Graph::mul(const Var& a, const Var& b, Loc loc) { return binary(a, b, "mul", SourceLoc::from(loc)); }
Var Graph::div(const Var& a, const Var& b, Loc loc) { return binary(a, b, "div", SourceLoc::from(loc)); }

Var Graph::neg(const Var& a, Loc loc) {
  return unary(a, "neg", SourceLoc::from(loc), [](const Tile& x) { return -x; },
               [](const Tile&, const Tile&, const Tile& dy) { return -dy; });
}
Var Graph::exp(const Var& a, Loc loc) {
  return unary(a, "exp", SourceLoc::from(loc), [](const Tile& x) { return x.exp(); },
               [](const Tile&, const Tile& y, const Tile& dy) { return dy * y; });
}
Var Graph::log(const Var& a, Loc loc) {
  return unary(a, "log", SourceLoc::from(loc), [](const Tile& x) { return x.log(); },
               [](const Tile& x, const Tile&, const Tile& dy) { return dy / x; });
}
Var Graph::relu(const Var& a, Loc loc) {
  return unary(a, "relu", SourceLoc::from(loc), [](const Tile& x) { return x.relu(); },
               [](const Tile& x, const Tile&, const Tile& dy) { return where(x > 0.0, dy, 0.0); });
}

Var Graph::matmul(const Var& a, const Var& b, Loc loc) {
  const SourceLoc l = SourceLoc::from(loc);
  const Tensor x = node(a, "matmul", l).value, y = node(b, "matmul", l).value;
  if (x.rank() != 2 || y.rank() != 2 || x.dim(1) != y.dim(0) || x.dtype() != y.dtype())
    fail(l, "matmul", fmt::format("takes [M, K] and [K, N] of one dtype, not {} and {}", describe(x), describe(y)));
  return record(kernels::matmul(x, y, run_), {a, b}, [this, x, y](const Tensor& d) {
    return std::vector{kernels::matmul(d, y.transpose(), run_), kernels::matmul(x.transpose(), d, run_)};
  }, "matmul", l);
}

Var Graph::reduce(const Var& a, const std::vector<int>& axes, bool keepdims, bool average, std::string_view op,
                  const SourceLoc& loc) {
  const Tensor x = node(a, op, loc).value;
  std::vector<bool> reduced(static_cast<size_t>(x.rank()));
  for (int axis : axes) {
    size_t d = static_cast<size_t>(axisOf(axis, x.rank(), op, loc));
    if (reduced[d]) fail(loc, op, fmt::format("axis {} is named twice", axis));
    reduced[d] = true;
  }
  Tensor kept = kernels::sumOver(x, reduced, run_);  // the reduced axes of size 1
  const double count = static_cast<double>(x.numel() / std::max<int64_t>(kept.numel(), 1));
  if (average && x.numel() > 0)
    kept = kernels::map({same(kept)}, kept.shape(), x.dtype(), [&](const auto& t) { return t[0] / count; },
                        "grad_mean", run_);
  Shape shape;
  for (size_t d = 0; d < reduced.size(); ++d)
    if (!reduced[d] || keepdims) shape.push_back(kept.dim(static_cast<int>(d)));
  const Shape keptShape = kept.shape();
  return record(kept.reshape(shape), {a}, [this, x, keptShape, average, count](const Tensor& d) {
    // Every element of x receives its sum's gradient (over count, for a mean).
    Strided spread = kernels::broadcast(d.reshape(keptShape), x.shape());
    return std::vector{kernels::map({spread}, x.shape(), x.dtype(),
                                    [&](const auto& t) { return average ? t[0] / count : t[0]; },
                                    "grad_sum_backward", run_)};
  }, op, loc);
}

Var Graph::sum(const Var& a, Loc loc) {
  std::vector<int> all(a.shape().size());
  std::iota(all.begin(), all.end(), 0);
  return reduce(a, all, false, false, "sum", SourceLoc::from(loc));
}
Var Graph::sum(const Var& a, const std::vector<int>& axes, bool keepdims, Loc loc) {
  return reduce(a, axes, keepdims, false, "sum", SourceLoc::from(loc));
}
Var Graph::mean(const Var& a, Loc loc) {
  std::vector<int> all(a.shape().size());
  std::iota(all.begin(), all.end(), 0);
  return reduce(a, all, false, true, "mean", SourceLoc::from(loc));
}
Var Graph::mean(const Var& a, const std::vector<int>& axes, bool keepdims, Loc loc) {
  return reduce(a, axes, keepdims, true, "mean", SourceLoc::from(loc));
}

Var Graph::reshape(const Var& a, const Shape& shape, Loc loc) {
  const SourceLoc l = SourceLoc::from(loc);
  const Tensor x = node(a, "reshape", l).value;
  const Shape from = x.shape();
  return record(x.reshape(shape, loc), {a}, [from](const Tensor& d) { return std::vector{d.reshape(from)}; },
                "reshape", l);
}

Var Graph::permute(const Var& a, const std::vector<int>& perm, Loc loc) {
  const SourceLoc l = SourceLoc::from(loc);
  const Tensor x = node(a, "permute", l).value;
  std::vector<int> axes;
  for (int p : perm) axes.push_back(axisOf(p, x.rank(), "permute", l));
  std::vector<int> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  if (sorted.size() != static_cast<size_t>(x.rank()) || std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    fail(l, "permute", fmt::format("[{}] is not a permutation of the axes of {}", fmt::join(perm, ", "), describe(x)));
  Shape shape;
  for (int p : axes) shape.push_back(x.dim(p));
  auto copy = [this](const Tensor& t, const std::vector<int>& order, const Shape& to) {
    return kernels::map({kernels::permuted(t, order)}, to, t.dtype(), [](const auto& v) { return v[0]; },
                        "grad_permute", run_);
  };
  const Shape from = x.shape();
  return record(copy(x, axes, shape), {a}, [copy, axes, from](const Tensor& d) {
    return std::vector{copy(d, inverse(axes), from)};
  }, "permute", l);
}

Var Graph::transpose(const Var& a, int axis0, int axis1, Loc loc) {
  const SourceLoc l = SourceLoc::from(loc);
  const int rank = node(a, "transpose", l).value.rank();
  std::vector<int> perm(static_cast<size_t>(rank));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[static_cast<size_t>(axisOf(axis0, rank, "transpose", l))],
            perm[static_cast<size_t>(axisOf(axis1, rank, "transpose", l))]);
  return permute(a, perm, loc);
}

Var Graph::rowOp(const Var& a, int axis, std::string_view op, const SourceLoc& loc, bool logarithm) {
  const Tensor x = node(a, op, loc).value;
  if (x.rank() == 0) fail(loc, op, "takes a value of rank 1 or more, not a rank-0 one");
  const int last = x.rank() - 1, d = axisOf(axis, x.rank(), op, loc);
  if (d != last) {  // along another axis: that axis moved last and back, each move recorded
    std::vector<int> swap(static_cast<size_t>(x.rank()));
    std::iota(swap.begin(), swap.end(), 0);
    std::swap(swap[static_cast<size_t>(d)], swap[static_cast<size_t>(last)]);
    Loc here = Loc::current();
    return permute(rowOp(permute(a, swap, here), -1, op, loc, logarithm), swap, here);
  }
  Tensor y = kernels::softmax(asRows(x), logarithm, run_).reshape(x.shape());
  return record(y, {a}, [this, y, logarithm](const Tensor& dy) {
    return std::vector{kernels::softmaxBackward(asRows(y), asRows(dy), logarithm, run_).reshape(y.shape())};
  }, op, loc);
}

Var Graph::softmax(const Var& a, int axis, Loc loc) { return rowOp(a, axis, "softmax", SourceLoc::from(loc), false); }
Var Graph::log_softmax(const Var& a, int axis, Loc loc) {
  return rowOp(a, axis, "log_softmax", SourceLoc::from(loc), true);
}

Var Graph::layer_norm(const Var& a, const Var& weight, const Var& bias, double eps, Loc loc) {
  const SourceLoc l = SourceLoc::from(loc);
  const Tensor x = node(a, "layer_norm", l).value, w = node(weight, "layer_norm", l).value,
               b = node(bias, "layer_norm", l).value;
  if (x.rank() == 0) fail(l, "layer_norm", "takes a value of rank 1 or more, not a rank-0 one");
  const Shape vector{x.shape().back()};
  if (w.shape() != vector || b.shape() != vector || w.dtype() != x.dtype() || b.dtype() != x.dtype())
    fail(l, "layer_norm", fmt::format("weight {} and bias {} must be {}[{}], as the last axis of {}", describe(w),
                                      describe(b), dtypeName(x.dtype()), vector[0], describe(x)));
  kernels::LayerNorm out = kernels::layerNorm(asRows(x), w, b, eps, run_);
  return record(out.y.reshape(x.shape()), {a, weight, bias}, [this, x, w, out](const Tensor& dy) {
    const Tensor rows = asRows(x), dRows = asRows(dy);
    Tensor dx = kernels::layerNormBackward(rows, dRows, w, out.mean, out.rstd, run_).reshape(x.shape());
    const Shape shape = rows.shape(), column{shape[0], 1};
    Tensor scaled = kernels::map({same(rows), kernels::broadcast(out.mean.reshape(column), shape),
                                  kernels::broadcast(out.rstd.reshape(column), shape), same(dRows)},
                                 shape, x.dtype(), [](const auto& t) { return (t[0] - t[1]) * t[2] * t[3]; },
                                 "grad_layer_norm_weight", run_);
    auto overRows = [&](const Tensor& t) { return kernels::sumOver(t, {true, false}, run_).reshape(w.shape()); };
    return std::vector{dx, overRows(scaled), overRows(dRows)};
  }, "layer_norm", l);
}

Var Graph::layer_norm(const Var& a, double eps, Loc loc) {
  const SourceLoc l = SourceLoc::from(loc);
  const Tensor x = node(a, "layer_norm", l).value;
  if (x.rank() == 0) fail(l, "layer_norm", "takes a value of rank 1 or more, not a rank-0 one");
  kernels::LayerNorm out = kernels::layerNorm(asRows(x), Tensor(), Tensor(), eps, run_);
  return record(out.y.reshape(x.shape()), {a}, [this, x, out](const Tensor& dy) {
    return std::vector{
        kernels::layerNormBackward(asRows(x), asRows(dy), Tensor(), out.mean, out.rstd, run_).reshape(x.shape())};
  }, "layer_norm", l);
}

Var Graph::custom(const std::vector<Var>& inputs, const Tensor& output, GradientFn gradients, const std::string& name,
                  Loc loc) {
  const SourceLoc l = SourceLoc::from(loc);
  const std::string op = fmt::format("custom operation '{}'", name);
  output.checkDefined(op, l);
  checkDtype(output, op, l);
  std::vector<Tensor> values;
  for (const Var& v : inputs) values.push_back(node(v, op, l).value);
  return record(output.is_contiguous() ? output : output.contiguous(), inputs,
                [values, gradients = std::move(gradients), op, l](const Tensor& d) {
    std::vector<Tensor> out = gradients(d);
    if (out.size() != values.size())
      fail(l, op, fmt::format("its gradient function returned {} tensors for its {} inputs", out.size(), values.size()));
    for (size_t i = 0; i < out.size(); ++i) {
      if (!out[i].defined()) continue;
      if (out[i].shape() != values[i].shape() || out[i].dtype() != values[i].dtype())
        fail(l, op, fmt::format("gradient {} is {}, but input {} is {}", i, describe(out[i]), i, describe(values[i])));
      if (!out[i].is_contiguous()) out[i] = out[i].contiguous();
    }
    return out;
  }, op, l);
}

Var Graph::tile(const std::vector<int64_t>& grid, const KernelBody& body, const std::vector<Var>& inputs,
                const Tensor& output, const std::string& name, Loc loc) {
  RunOptions run = run_;
  run.name = name;
  TracedKernel forward = trace(grid, body, name, loc);
  launch(forward, grid, run, loc);
  std::vector<Tensor> values;
  for (const Var& v : inputs) values.push_back(node(v, name, SourceLoc::from(loc)).value);
  return custom(inputs, output, [forward, grid, values, output, run, loc](const Tensor& d) {
    return grad::backward(forward, grid, values, {{output, d}}, run, loc);
  }, name, loc);
}

Gradients Graph::backward(const Var& result, Loc loc) {
  const SourceLoc l = SourceLoc::from(loc);
  const Node& root = node(result, "backward", l);
  if (root.value.numel() != 1)
    fail(l, "backward", fmt::format("takes a one-element result, not {}: sum or mean it first", describe(root.value)));
  std::vector<Tensor> grads(nodes_.size());
  grads[static_cast<size_t>(result.id_)] = Tensor::full(root.value.shape(), 1.0, root.value.dtype());
  for (size_t id = static_cast<size_t>(result.id_) + 1; id-- > 0;) {
    const Node& n = nodes_[id];
    if (!n.backward || !grads[id].defined()) continue;
    std::vector<Tensor> inputs = n.backward(grads[id]);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      Tensor& g = grads[static_cast<size_t>(n.inputs[i])];
      if (!inputs[i].defined() || !nodes_[static_cast<size_t>(n.inputs[i])].needsGradient) continue;
      g = g.defined() ? addGradients(g, inputs[i]) : inputs[i];
    }
  }
  return Gradients(this, std::move(grads));
}

namespace {

// The two sides of a Var operator as Vars of one graph: a number becomes a constant of the
// other side's dtype.
std::pair<Var, Var> sides(const VarOperand& a, const VarOperand& b) {
  const Var& v = a.var ? *a.var : *b.var;
  auto asVar = [&](const VarOperand& o) { return o.var ? *o.var : v.graph().constant(o.number, v.dtype(), o.loc); };
  return {asVar(a), asVar(b)};
}

}  // namespace

#define TJ_VAR_OPERATOR(OP, METHOD)                                          \
  Var operator OP(const Var& a, const VarOperand& b) {                       \
    auto [l, r] = sides(VarOperand(a, b.loc), b);                            \
    return l.graph().METHOD(l, r, b.loc);                                    \
  }                                                                          \
  Var operator OP(double a, const VarOperand& b) {                           \
    auto [l, r] = sides(VarOperand(a, b.loc), b);                            \
    return l.graph().METHOD(l, r, b.loc);                                    \
  }
TJ_VAR_OPERATOR(+, add) TJ_VAR_OPERATOR(-, sub) TJ_VAR_OPERATOR(*, mul) TJ_VAR_OPERATOR(/, div)
#undef TJ_VAR_OPERATOR

Var operator-(const VarOperand& a) {
  if (!a.var) fail(SourceLoc::from(a.loc), "neg", "needs a Var");
  return a.var->graph().neg(*a.var, a.loc);
}

}  // namespace tj::grad
