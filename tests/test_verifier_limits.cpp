// The verifier is the one gate before the lowerings: every limit a lowering or device
// relies on (grid and tensor ranks, tile sizes, element counts, constants that fit
// their dtype) is checked there, with the line:col of parsed text.
#include <doctest/doctest.h>

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "ir/passes.hpp"
#include "lower/cpu/abi.hpp"
#include "tests/fuzz/every_stage.hpp"

using namespace tj;
using namespace tj::ir;

// The CPU lowering indexes KernelArgs::grid and TensorDesc::shape up to these ranks.
static_assert(kMaxGridRank == cpu::kMaxGridRank);
static_assert(kMaxRank == cpu::kMaxRank);

namespace {

// A kernel with one f32 tensor of rank 2 around `ops`.
std::string withOps(const std::string& ops) { return "kernel @k(a: tensor<f32, 2>) grid 1 {\n" + ops + "}\n"; }

// A kernel whose one op is a constant `value` of `type`, at 2:8.
std::string constantOf(const std::string& value, const std::string& type) {
  return withOps("  %0 = constant() {value = " + value + "} : " + type + "\n");
}

}  // namespace

TEST_CASE("limits: a grid has 1 to 3 axes, refused at the grid's line:col") {
  auto grid = [](const std::string& rank) { return "kernel @k() grid " + rank + " {\n}\n"; };
  CHECK_NOTHROW(verify(parse(grid("3"))));
  CHECK_THROWS_WITH_AS(verify(parse(grid("4"))), "1:18: kernel: grid rank 4 is out of range: a grid has 1 to 3 axes",
                       Error);
  CHECK_THROWS_WITH_AS(verify(parse(grid("0"))), doctest::Contains("1:18: kernel: grid rank 0 is out of range"), Error);
  // The lowerings allocated per axis until std::bad_alloc aborted.
  CHECK_THROWS_WITH_AS(verify(parse(grid("2147483647"))), doctest::Contains("grid rank 2147483647 is out of range"),
                       Error);
}

TEST_CASE("limits: a tensor has rank 1 to 4, refused at the parameter's line:col") {
  auto tensor = [](const std::string& rank) {
    return "kernel @k(x: tensor<f32, 1>,\n          y: tensor<f32, " + rank + ">) grid 1 {\n}\n";
  };
  CHECK_NOTHROW(verify(parse(tensor("4"))));
  CHECK_THROWS_WITH_AS(verify(parse(tensor("5"))), "2:11: kernel: tensor y has rank 5; tensors have rank 1 to 4",
                       Error);
  // The CPU lowering indexed an empty shape, the GPU lowering an address of no terms (fuzzing).
  CHECK_THROWS_WITH_AS(verify(parse(tensor("0"))), "2:11: kernel: tensor y has rank 0; tensors have rank 1 to 4",
                       Error);
  CHECK_THROWS_WITH_AS(verify(parse(tensor("2147483647"))), doctest::Contains("tensor y has rank 2147483647"), Error);
}

TEST_CASE("limits: a fold's stages are 1 to 4, its split and specialize flags 1") {
  auto fold = [](const std::string& attrs) {
    return withOps("  %0 = constant() {value = 0} : i64\n  %1 = constant() {value = 4} : i64\n"
                   "  fold(%0, %1) {" + attrs + "} {\n  ^(%2: i64):\n    yield()\n  }\n");
  };
  CHECK_NOTHROW(verify(parse(fold("specialize = 1, stages = 4"))));
  CHECK_THROWS_WITH_AS(verify(parse(fold("stages = 5"))), doctest::Contains("fold: stages = 5 is outside [1, 4]"), Error);
  CHECK_THROWS_WITH_AS(verify(parse(fold("specialize = 2"))), doctest::Contains("fold: specialize = 2 is not 1"), Error);
  CHECK_THROWS_WITH_AS(verify(parse(fold("split = 0"))), doctest::Contains("fold: split = 0 is not 1"), Error);
}

TEST_CASE("limits: a tile has rank at most 4") {
  CHECK_NOTHROW(verify(parse(constantOf("1.0", "tile<1x2x3x4xf32>"))));
  CHECK_THROWS_WITH_AS(verify(parse(constantOf("1.0", "tile<1x1x2x3x4xf32>"))),
                       "2:8: constant: type tile<1x1x2x3x4xf32> has rank 5; tiles have rank 0 to 4", Error);
}

TEST_CASE("limits: element counts that overflow int64 are refused, not wrapped") {
  // 2^32 * (2^32 + 1) wraps to 2^32 in int64 arithmetic: the reshape verified.
  std::string text = withOps(
      "  %0 = constant() {value = 1.0} : tile<4294967296x4294967297xf32>\n"
      "  %1 = reshape(%0) : tile<4294967296xf32>\n");
  CHECK_THROWS_WITH_AS(verify(parse(text)),
                       doctest::Contains("2:8: constant: type tile<4294967296x4294967297xf32> has more than 1048576"),
                       Error);
  Type huge{DType::f32, {int64_t{1} << 32, (int64_t{1} << 32) + 1}};
  CHECK_THROWS_WITH_AS(huge.numel(), "type: the element count of tile<4294967296x4294967297xf32> overflows int64",
                       Error);
  CHECK(Type{DType::f32, {int64_t{1} << 31, int64_t{1} << 31}}.numel() == int64_t{1} << 62);
}

TEST_CASE("limits: a tile holds at most 2^20 elements, counted over its shape padded to powers of two") {
  CHECK_NOTHROW(verify(parse(constantOf("1.0", "tile<1024x1024xf64>"))));
  CHECK_NOTHROW(verify(parse(constantOf("1.0", "tile<2x524288xf32>"))));
  CHECK_THROWS_WITH_AS(verify(parse(constantOf("1.0", "tile<1024x1025xf32>"))),
                       doctest::Contains("2:8: constant: type tile<1024x1025xf32> has more than 1048576 elements"),
                       Error);
  // 1025 x 1000 = 1025000 elements, but GPU layouts lay them out over 2048 x 1024.
  CHECK_THROWS_WITH_AS(verify(parse(constantOf("1", "tile<1025x1000xi8>"))),
                       "2:8: constant: type tile<1025x1000xi8> has more than 1048576 elements with each dimension "
                       "rounded up to a power of two, the most a tile holds",
                       Error);
  CHECK_THROWS_WITH_AS(verify(parse(constantOf("1", "tile<2147483647xi8>"))),
                       doctest::Contains("has more than 1048576 elements"), Error);
}

TEST_CASE("limits: constants and fills are values of their dtype") {
  for (const auto& [value, type] : std::initializer_list<std::pair<std::string, std::string>>{
           {"127", "tile<4xi8>"}, {"-128", "i8"}, {"-2147483648", "i32"}, {"1", "bool"}, {"0", "bool"},
           {"65504.0", "f16"}, {"-inf", "f16"}, {"nan", "f32"}, {"3.4028234663852886e+38", "f32"},
           {"-3.3895313892515355e+38", "bf16"}, {"1e+300", "f64"}, {"16777217.0", "f32"}}) {
    CAPTURE(value);
    CAPTURE(type);
    CHECK_NOTHROW(verify(parse(constantOf(value, type))));
  }
  struct Case {
    const char *value, *type, *message;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"128", "tile<4xi8>", "2:8: constant: value 128 does not fit i8"},
           {"2147483648", "i32", "2:8: constant: value 2147483648 does not fit i32"},
           {"2", "tile<2xbool>", "2:8: constant: value 2 does not fit bool"},
           {"-1", "bool", "2:8: constant: value -1 does not fit bool"},
           {"65520.0", "f16", "2:8: constant: value 65520 does not fit f16"},
           {"1e+300", "tile<2xf32>", "2:8: constant: value 1.0000000000000001e+300 does not fit f32"},
           {"-1e+39", "bf16", "2:8: constant: value -9.9999999999999994e+38 does not fit bf16"},
       }) {
    CAPTURE(std::string(c.value));
    CHECK_THROWS_WITH_AS(verify(parse(constantOf(c.value, c.type))), c.message, Error);
  }
  auto load = [](const std::string& fill, const std::string& dtype) {
    return "kernel @k(a: tensor<" + dtype + ", 1>) grid 1 {\n  %0 = constant() {value = 0} : i64\n" +
           "  %1 = load(%0) {fill = " + fill + ", tensor = 0} : tile<4x" + dtype + ">\n}\n";
  };
  CHECK_NOTHROW(verify(parse(load("-inf", "f32"))));
  CHECK_NOTHROW(verify(parse(load("-7", "i32"))));
  CHECK_NOTHROW(verify(parse(load("-7.0", "i32"))));  // an integral double converts exactly
  CHECK_THROWS_WITH_AS(verify(parse(load("0.5", "i32"))), "3:8: load: fill 0.5 does not fit the tensor's i32", Error);
  CHECK_THROWS_WITH_AS(verify(parse(load("nan", "i8"))), "3:8: load: fill nan does not fit the tensor's i8", Error);
  CHECK_THROWS_WITH_AS(verify(parse(load("1e+19", "i32"))),
                       doctest::Contains("load: fill 1e+19 does not fit the tensor's i32"), Error);
  CHECK_THROWS_WITH_AS(verify(parse(load("300", "i8"))), "3:8: load: fill 300 does not fit the tensor's i8", Error);
  CHECK_THROWS_WITH_AS(verify(parse(load("1e+39", "f32"))), doctest::Contains("load: fill 9.9999999999999994e+38 does"),
                       Error);
}

TEST_CASE("limits: a kernel at every limit lowers at every stage for every target") {
  // Grid rank 3, a rank-4 tensor and tile, constants at their dtype's edges.
  Kernel k = parse(R"IR(kernel @edges(x: tensor<f16, 4>, y: tensor<i8, 4>) grid 3 {
  %0 = program_id() {axis = 2} : i64
  %1 = load(%0, %0, %0, %0) {fill = 65504.0, tensor = 0} : tile<1x2x4x8xf16>
  %2 = constant() {value = -65504.0} : tile<1x2x4x8xf16>
  %3 = max(%1, %2) : tile<1x2x4x8xf16>
  %4 = cast(%3) : tile<1x2x4x8xi8>
  %5 = constant() {value = -128} : tile<1x2x4x8xi8>
  %6 = add(%4, %5) : tile<1x2x4x8xi8>
  store(%0, %0, %0, %0, %6) {tensor = 1}
}
)IR");
  REQUIRE_NOTHROW(verify(k));
  // Every stage but the CPU's kernel IR, which it has none of (it runs the llvm stage).
  std::vector<std::string> refusals = fuzz::runEveryStage(k);
  REQUIRE(refusals.size() == 1);
  CHECK(refusals[0].starts_with("kernel cpu: kernel ir: unsupported: target cpu"));
  // The largest tile, on the CPU (GPU lowerings of 2^20 elements take seconds).
  Kernel big = parse(R"IR(kernel @big(x: tensor<f32, 2>) grid 1 {
  %0 = program_id() {axis = 0} : i64
  %1 = load(%0, %0) {fill = 0, tensor = 0} : tile<1000x1000xf32>
  %2 = reduce_sum(%1) {axis = 1} : tile<1000xf32>
  %3 = reshape(%2) : tile<1000x1xf32>
  %4 = broadcast(%3) : tile<1000x1000xf32>
  %5 = div(%1, %4) : tile<1000x1000xf32>
  store(%0, %0, %5) {tensor = 0}
}
)IR");
  REQUIRE_NOTHROW(verify(big));
  CHECK_FALSE(cpu::lowerToLLVMText(canonicalize(big)).empty());
}
