// Gradients by reverse mode over a graph of tensor operations.
//
// A Graph records each operation on its values (Vars) as it runs it, eagerly, and
// backward(result) walks the record in reverse: the gradient of a one-element result against
// every input. Every built-in operation, forward and backward, is a tile kernel (grad/kernels)
// run on the graph's device, so a graph runs wherever kernels do. A kernel of your own joins a
// graph through custom(), with the kernels of its gradient:
//
//   tj::grad::Graph g({.device = "cpu"});
//   tj::grad::Var x = g.input(a), y = g.input(b);
//   tj::grad::Gradients grads = g.backward(g.sum(x * y));
//   grads.of(x);  // b
//   // your kernel `product` and its gradient kernels, as one operation:
//   Var xy = g.custom({x, y}, product(a, b), [&](const Tensor& d) { return std::vector{product(d, b), product(d, a)}; });
//   // or a tile program whose backward kernel is derived from it:
//   Var z = g.tile({cdiv(n, 256)}, [&](Program& p) { ... reads x.value(), y.value(), writes out ... }, {x, y}, out);
//
// Values are f32 or f64 and row-major; binary operations broadcast as NumPy does (axes aligned
// at the right, size 1 repeated). Bad input (mismatched shapes or dtypes, a Var of another
// graph, a gradient function returning the wrong tensors) is an Error at the caller's file:line.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "dsl/tilejit.hpp"

namespace tj::grad {

struct GraphOptions {
  std::string device;  // where the kernels run, as RunOptions::device: "" = $TILEJIT_DEVICE or the best
};

class Graph;

// A value of a graph: the tensor an operation gave (or an input), and the operation.
class Var {
 public:
  const Tensor& value() const;
  const Shape& shape() const { return value().shape(); }
  DType dtype() const { return value().dtype(); }
  Graph& graph() const { return *graph_; }

 private:
  friend class Graph;
  friend class Gradients;
  Var(Graph* graph, int id) : graph_(graph), id_(id) {}
  Graph* graph_;
  int id_;
};

// The gradients that Graph::backward computed.
class Gradients {
 public:
  // The gradient of the result against v (v's shape and dtype); zeros where v does not reach it.
  Tensor of(const Var& v, Loc loc = Loc::current()) const;

 private:
  friend class Graph;
  Gradients(const Graph* graph, std::vector<Tensor> byNode) : graph_(graph), byNode_(std::move(byNode)) {}
  const Graph* graph_;
  std::vector<Tensor> byNode_;
};

// A number or a Var as the operand of a Var operator; a number takes the other side's dtype.
struct VarOperand {
  VarOperand(const Var& v, Loc l = Loc::current()) : var(&v), loc(l) {}      // NOLINT
  VarOperand(double n, Loc l = Loc::current()) : number(n), loc(l) {}        // NOLINT
  const Var* var = nullptr;
  double number = 0;
  Loc loc;
};

class Graph {
 public:
  explicit Graph(GraphOptions options = {});
  ~Graph();
  Graph(const Graph&) = delete;  // Vars point to their graph
  Graph& operator=(const Graph&) = delete;

  Var input(const Tensor& t, Loc loc = Loc::current());     // a value to take the gradient against
  Var constant(const Tensor& t, Loc loc = Loc::current());  // a value without a gradient
  Var constant(double value, DType dtype = f32, Loc loc = Loc::current());  // rank 0, broadcasts

  Var add(const Var& a, const Var& b, Loc loc = Loc::current());
  Var sub(const Var& a, const Var& b, Loc loc = Loc::current());
  Var mul(const Var& a, const Var& b, Loc loc = Loc::current());
  Var div(const Var& a, const Var& b, Loc loc = Loc::current());
  Var neg(const Var& a, Loc loc = Loc::current());
  Var exp(const Var& a, Loc loc = Loc::current());
  Var log(const Var& a, Loc loc = Loc::current());
  Var relu(const Var& a, Loc loc = Loc::current());
  // [M, K] times [K, N].
  Var matmul(const Var& a, const Var& b, Loc loc = Loc::current());

  Var sum(const Var& a, Loc loc = Loc::current());  // of every element, rank 0
  Var sum(const Var& a, const std::vector<int>& axes, bool keepdims = false, Loc loc = Loc::current());
  Var mean(const Var& a, Loc loc = Loc::current());
  Var mean(const Var& a, const std::vector<int>& axes, bool keepdims = false, Loc loc = Loc::current());

  // Axes count from the end when negative, as in NumPy.
  Var reshape(const Var& a, const Shape& shape, Loc loc = Loc::current());
  Var permute(const Var& a, const std::vector<int>& perm, Loc loc = Loc::current());
  Var transpose(const Var& a, int axis0 = -2, int axis1 = -1, Loc loc = Loc::current());

  Var softmax(const Var& a, int axis = -1, Loc loc = Loc::current());
  Var log_softmax(const Var& a, int axis = -1, Loc loc = Loc::current());
  // Over the last axis: (a - mean) / sqrt(variance + eps) * weight + bias, weight and bias
  // of the last axis's size (torch's layer_norm with normalized_shape = [a.shape[-1]]).
  Var layer_norm(const Var& a, const Var& weight, const Var& bias, double eps = 1e-5, Loc loc = Loc::current());
  Var layer_norm(const Var& a, double eps = 1e-5, Loc loc = Loc::current());  // no weight, no bias

  // The gradients of an operation's inputs, given the gradient of its output (its shape and
  // dtype): one per input, each of that input's shape and dtype, or an undefined Tensor for none.
  using GradientFn = std::function<std::vector<Tensor>(const Tensor& outputGradient)>;
  // `output`, computed from `inputs` by kernels of your own, as one operation named `name`;
  // backward calls `gradients` and checks what it returns.
  Var custom(const std::vector<Var>& inputs, const Tensor& output, GradientFn gradients,
             const std::string& name = "custom", Loc loc = Loc::current());

  // A tile program of your own as one operation whose backward is derived from it
  // (grad/tile_backward.hpp): `body` reads the values of `inputs` (Var::value()) and writes
  // `output`. It is traced once, run now on the graph's device, and its derived backward kernel
  // runs in backward(); an op outside what is derived is an Error there, at the body's line.
  Var tile(const std::vector<int64_t>& grid, const KernelBody& body, const std::vector<Var>& inputs,
           const Tensor& output, const std::string& name = "tile", Loc loc = Loc::current());

  // The gradients of `result`, a one-element value, against every value before it.
  Gradients backward(const Var& result, Loc loc = Loc::current());

  const RunOptions& runOptions() const { return run_; }

 private:
  friend class Var;
  friend class Gradients;
  struct Node;
  using Backward = std::function<std::vector<Tensor>(const Tensor&)>;
  const Node& node(const Var& v, std::string_view op, const SourceLoc& loc) const;
  Var record(Tensor value, std::vector<Var> inputs, Backward backward, std::string_view op, const SourceLoc& loc);
  Var unary(const Var& a, std::string_view op, const SourceLoc& loc,
            const std::function<Tile(const Tile&)>& forward,
            const std::function<Tile(const Tile& x, const Tile& y, const Tile& dy)>& gradient);
  Var binary(const Var& a, const Var& b, std::string_view op, const SourceLoc& loc);
  Var rowOp(const Var& a, int axis, std::string_view op, const SourceLoc& loc, bool logarithm);
  Var reduce(const Var& a, const std::vector<int>& axes, bool keepdims, bool average, std::string_view op,
             const SourceLoc& loc);
  Tensor sumTo(const Tensor& gradient, const Shape& shape) const;  // a broadcast operand's gradient
  Tensor addGradients(const Tensor& a, const Tensor& b) const;

  RunOptions run_;
  std::vector<Node> nodes_;
};

Var operator+(const Var& a, const VarOperand& b);
Var operator-(const Var& a, const VarOperand& b);
Var operator*(const Var& a, const VarOperand& b);
Var operator/(const Var& a, const VarOperand& b);
Var operator+(double a, const VarOperand& b);
Var operator-(double a, const VarOperand& b);
Var operator*(double a, const VarOperand& b);
Var operator/(double a, const VarOperand& b);
Var operator-(const VarOperand& a);

}  // namespace tj::grad
