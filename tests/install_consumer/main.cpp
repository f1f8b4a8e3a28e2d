// Doubles a vector with a tile kernel; exits 0 only when every element is right.
// Built by run.sh with the README's CMake snippet against an installed tilejit.
#include <tilejit/dsl/autotune.hpp>  // the README names it for tune(): it must be installed and self-contained
#include <tilejit/tilejit.hpp>

#include <cstdio>

int main() {
  using namespace tj;
  Tensor x = Tensor::random({1001}, 7), y = Tensor::zeros({1001});
  run({cdiv(1001, 256)}, [&](Program& p) {
    Index i = p.id(0);
    p.write(y, {256}).put(p.read(x, {256}).at({i}) * 2.0, {i});
  });
  for (int64_t i = 0; i < 1001; ++i)
    if (y.item(i) != 2 * x.item(i)) return std::printf("wrong element %ld\n", static_cast<long>(i)), 1;
  std::puts("consumer: ok");
  return 0;
}
