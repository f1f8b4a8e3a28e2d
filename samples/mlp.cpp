// A two-layer perceptron trained by gradient descent on generated data: logits =
// relu(x W1 + b1) W2 + b2, softmax cross-entropy loss, gradients from a grad::Graph (every
// operation a tile kernel on the chosen device), parameters updated by a kernel handle. Prints
// the loss as it falls; --check compares the first step's gradients with float64 and requires
// the loss to fall to a third and the points to be classified.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include <fmt/format.h>

#include "grad/graph.hpp"

#include "samples/harness.hpp"

using namespace tj;

namespace {

struct Sizes {
  int64_t points = 256, features = 8, hidden = 32, classes = 4;
};

// Points scattered around one random center per class; labels one-hot.
struct Data {
  Tensor x, labels;
  std::vector<int64_t> label;
};
Data generate(const Sizes& s) {
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> center(-2, 2);
  std::normal_distribution<double> noise(0, 1.0);
  std::vector<double> centers(size_t(s.classes * s.features)), x, oneHot(size_t(s.points * s.classes), 0.0);
  for (double& c : centers) c = center(random);
  Data d;
  for (int64_t i = 0; i < s.points; ++i) {
    const int64_t c = i % s.classes;
    d.label.push_back(c);
    oneHot[size_t(i * s.classes + c)] = 1;
    for (int64_t f = 0; f < s.features; ++f) x.push_back(centers[size_t(c * s.features + f)] + noise(random));
  }
  d.x = Tensor::from({s.points, s.features}, x);
  d.labels = Tensor::from({s.points, s.classes}, oneHot);
  return d;
}

struct Parameters {
  Tensor w1, b1, w2, b2;
};
Parameters initialize(const Sizes& s) {
  const double a = 1 / std::sqrt(double(s.features)), b = 1 / std::sqrt(double(s.hidden));
  return {Tensor::random({s.features, s.hidden}, 11, f32, -a, a), Tensor::zeros({s.hidden}),
          Tensor::random({s.hidden, s.classes}, 12, f32, -b, b), Tensor::zeros({s.classes})};
}

// One step's loss, logits and gradients (w1, b1, w2, b2).
struct Step {
  double loss;
  Tensor logits;
  std::vector<Tensor> gradients;
};
Step lossAndGradients(const Parameters& p, const Data& d, const RunOptions& run) {
  grad::Graph g({.device = run.device});
  grad::Var w1 = g.input(p.w1), b1 = g.input(p.b1), w2 = g.input(p.w2), b2 = g.input(p.b2);
  grad::Var hidden = g.relu(g.matmul(g.constant(d.x), w1) + b1);
  grad::Var logits = g.matmul(hidden, w2) + b2;
  grad::Var loss = -g.mean(g.sum(g.constant(d.labels) * g.log_softmax(logits), {1}));
  grad::Gradients grads = g.backward(loss);
  return {loss.value().item(0), logits.value(), {grads.of(w1), grads.of(b1), grads.of(w2), grads.of(b2)}};
}

// parameter -= rate * gradient, on the device, for any shape (seen flat).
void descend(const Tensor& parameter, const Tensor& gradient, double rate, const RunOptions& run) {
  static const auto step = kernel("sgd", [](Program& p, const Tensor& x, const Tensor& dx, Tile rate) {
    Index i = p.id(0);
    auto X = p.read(x, {256});
    p.write(x, {256}).put(X.at({i}) - rate * p.read(dx, {256}).at({i}), {i});
  });
  const int64_t n = parameter.numel();
  step.launch({cdiv(n, 256)}, parameter.reshape({n}), gradient.reshape({n}), rate, run);
}

// The gradients of the mean cross-entropy in float64: dz = (softmax(z) - y) / n, then back
// through the second layer, the relu and the first.
std::vector<std::vector<double>> referenceGradients(const Parameters& p, const Data& d, const Sizes& s) {
  const std::vector<double> x = d.x.values(), y = d.labels.values(), w1 = p.w1.values(), b1 = p.b1.values();
  const std::vector<double> w2 = p.w2.values(), b2 = p.b2.values();
  const int64_t n = s.points, f = s.features, h = s.hidden, c = s.classes;
  std::vector<double> pre(size_t(n * h)), z(size_t(n * c));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < h; ++j) {
      double v = b1[size_t(j)];
      for (int64_t k = 0; k < f; ++k) v += x[size_t(i * f + k)] * w1[size_t(k * h + j)];
      pre[size_t(i * h + j)] = v;
    }
  auto relu = [&](int64_t e) { return std::max(pre[size_t(e)], 0.0); };
  std::vector<double> dz(size_t(n * c));
  for (int64_t i = 0; i < n; ++i) {
    double top = -INFINITY, sum = 0;
    for (int64_t k = 0; k < c; ++k) {
      double v = b2[size_t(k)];
      for (int64_t j = 0; j < h; ++j) v += relu(i * h + j) * w2[size_t(j * c + k)];
      top = std::max(top, z[size_t(i * c + k)] = v);
    }
    for (int64_t k = 0; k < c; ++k) sum += std::exp(z[size_t(i * c + k)] - top);
    for (int64_t k = 0; k < c; ++k)
      dz[size_t(i * c + k)] = (std::exp(z[size_t(i * c + k)] - top) / sum - y[size_t(i * c + k)]) / double(n);
  }
  std::vector<double> dw1(w1.size()), db1(b1.size()), dw2(w2.size()), db2(b2.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < h; ++j) {
      double dh = 0;
      for (int64_t k = 0; k < c; ++k) {
        dh += dz[size_t(i * c + k)] * w2[size_t(j * c + k)];
        dw2[size_t(j * c + k)] += relu(i * h + j) * dz[size_t(i * c + k)];
      }
      const double dPre = pre[size_t(i * h + j)] > 0 ? dh : 0;
      db1[size_t(j)] += dPre;
      for (int64_t k = 0; k < f; ++k) dw1[size_t(k * h + j)] += x[size_t(i * f + k)] * dPre;
    }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < c; ++k) db2[size_t(k)] += dz[size_t(i * c + k)];
  return {dw1, db1, dw2, db2};
}

// The fraction of points whose largest logit is their label's.
double accuracy(const Tensor& logits, const Data& d) {
  const std::vector<double> z = logits.values();
  const int64_t classes = logits.dim(1);
  int64_t right = 0;
  for (size_t i = 0; i < d.label.size(); ++i) {
    auto row = z.begin() + int64_t(i) * classes;
    right += std::max_element(row, row + classes) - row == d.label[i];
  }
  return double(right) / double(d.label.size());
}

}  // namespace

int main(int argc, char** argv) {
  samples::SampleCli cli("mlp", "A two-layer perceptron trained with softmax cross-entropy on generated clusters");
  Sizes s;
  int64_t steps = 300;
  double rate = 0.5;
  cli.app.add_option("--points", s.points)->check(CLI::PositiveNumber);
  cli.app.add_option("--features", s.features)->check(CLI::PositiveNumber);
  cli.app.add_option("--hidden", s.hidden)->check(CLI::PositiveNumber);
  cli.app.add_option("--classes", s.classes)->check(CLI::Range(int64_t{2}, int64_t{1} << 20));
  cli.app.add_option("--steps", steps, "gradient-descent steps")->check(CLI::PositiveNumber);
  cli.app.add_option("--rate", rate, "learning rate")->check(CLI::PositiveNumber);
  return cli.main(argc, argv, [&](samples::Report& r) {
    const Data data = generate(s);
    Parameters params = initialize(s);
    const RunOptions run = cli.runOptions();
    std::vector<std::vector<double>> reference;
    if (cli.check()) reference = referenceGradients(params, data, s);
    double first = 0, last = 0;
    Step step;
    r.time([&] {
      LaunchWatch launches;
      for (int64_t k = 0; k < steps; ++k) {
        step = lossAndGradients(params, data, run);
        if (k == 0 && cli.check()) {
          for (size_t i = 0; i < reference.size(); ++i)
            r.compare(step.gradients[i], reference[i], samples::tolerance(f32, s.points + s.hidden));
        }
        if (k == 0) first = step.loss;
        last = step.loss;
        if (k % std::max<int64_t>(steps / 6, 1) == 0 || k + 1 == steps) std::printf("step %ld loss %.5f\n", long(k), step.loss);
        Tensor* tensors[] = {&params.w1, &params.b1, &params.w2, &params.b2};
        for (size_t i = 0; i < 4; ++i) descend(*tensors[i], step.gradients[i], rate, run);
      }
      const LaunchReport* fallback = launches.firstFallback();
      return fallback ? fallback->device : launches.last().device;
    });
    const double correct = accuracy(step.logits, data);
    std::printf("FIGURE mlp_loss_first %.5f\nFIGURE mlp_loss_last %.5f\nFIGURE mlp_accuracy %.4f\n", first, last, correct);
    r.dtype = "f32";
    r.shape = fmt::format("{}x{}x{}x{}-steps{}", s.points, s.features, s.hidden, s.classes, steps);
    r.work = 6.0 * double(steps) * double(s.points) * double(s.features * s.hidden + s.hidden * s.classes);
    if (cli.check() && !(last < first / 3 && correct >= 0.9))
      throw Error(fmt::format("mlp: training did not converge: loss {:.5f} -> {:.5f}, accuracy {:.3f}", first, last,
                              correct));
  });
}
