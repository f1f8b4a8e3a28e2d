// The IR's textual form (printer and parser) and the verifier.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "ir/passes.hpp"

using namespace tj;
using namespace tj::ir;

namespace {

// Canonical text: every op kind family, nested folds, and every attribute
// kind, including the doubles and strings that are easy to print wrongly.
constexpr std::string_view kKinds = R"IR(kernel @kinds(x: tensor<f16, 2>, y: tensor<f32, 1>, z: tensor<f32, 2>) grid 2 {
  %0 = program_id() {axis = 1} : i64
  %1 = num_programs() {axis = 0} : i64
  %2 = tensor_dim() {axis = 1, tensor = 0} : i64
  %3 = constant() {value = 16} : i64
  %4 = constant() {value = -9223372036854775808} : i64
  %5 = mul(%0, %3) : i64
  %6 = load(%5, %4) {fill = -inf, tensor = 0} : tile<16x32xf16>
  %7 = load(%4) {fill = 0, tensor = 1} : tile<32xf32>
  %8 = constant() {value = nan} : tile<16x16xf32>
  %9 = constant() {value = inf} : tile<16x16xf32>
  %10 = constant() {value = -0.0} : tile<16x16xf32>
  %11 = constant() {value = 1e-30} : tile<16x16xf32>
  %12 = iota() {axis = 0} : tile<16x16xi32>
  %13 = cast(%12) : tile<16x16xf32>
  %14 = permute(%6) {perm = [1, 0]} : tile<32x16xf16>
  %15 = dot(%6, %14, %8) : tile<16x16xf32>
  %16, %17 = fold(%4, %2, %15, %12) : tile<16x16xf32>, tile<16x16xi32> {
  ^(%18: i64, %19: tile<16x16xf32>, %20: tile<16x16xi32>):
    %21 = fold(%4, %18, %19) : tile<16x16xf32> {
    ^(%22: i64, %23: tile<16x16xf32>):
      %24 = add(%23, %11) : tile<16x16xf32>
      yield(%24)
    }
    %25 = cmp(%21, %10) {pred = "lt"} : tile<16x16xbool>
    %26 = select(%25, %21, %9) : tile<16x16xf32>
    yield(%26, %20)
  }
  %27 = reshape(%7) : tile<1x32xf32>
  %28 = broadcast(%27) : tile<16x32xf32>
  %29 = reduce_sum(%28) {axis = 1} : tile<16xf32>
  %30 = argmax(%16) {axis = 0} : tile<16xi32>
  %31 = exp(%16) : tile<16x16xf32>
  %32 = constant() {value = 3.4028234663852886e+38} : tile<16x16xf32>
  %33 = mul(%31, %32) : tile<16x16xf32>
  %34 = permute(%3) {perm = []} : i64
  store(%5, %4, %33) {tensor = 2}
  print(%29) {label = "say \"hi\"\n\\ there"}
}
)IR";

const Op& opAt(const Kernel& k, size_t i) { return k.body.ops.at(i); }

double valueAttr(const Kernel& k, size_t op) { return std::get<double>(opAt(k, op).get(attr::value)); }

ParseError parseError(std::string_view text) {
  try {
    parse(text);
  } catch (const ParseError& e) {
    return e;
  }
  return ParseError(0, 0, "parsed without error");
}

// A kernel with one rank-2 f32 tensor around the given ops.
std::string wrap(std::string_view ops) {
  return "kernel @k(a: tensor<f32, 2>) grid 1 {\n" + std::string(ops) + "}\n";
}

}  // namespace

TEST_CASE("text: a kernel with every attribute kind round-trips exactly") {
  Kernel k = parse(kKinds);
  CHECK(print(k) == kKinds);
  CHECK(print(parse(print(k))) == print(k));
  CHECK_NOTHROW(verify(k));
}

TEST_CASE("text: parsed attributes keep their kind and exact value") {
  Kernel k = parse(kKinds);
  CHECK(std::get<int64_t>(opAt(k, 4).get(attr::value)) == std::numeric_limits<int64_t>::min());
  CHECK(std::get<double>(opAt(k, 6).get(attr::fill)) == -std::numeric_limits<double>::infinity());
  CHECK(std::get<int64_t>(opAt(k, 7).get(attr::fill)) == 0);
  CHECK(std::isnan(valueAttr(k, 8)));
  CHECK(valueAttr(k, 9) == std::numeric_limits<double>::infinity());
  CHECK(valueAttr(k, 10) == 0.0);
  CHECK(std::signbit(valueAttr(k, 10)));
  CHECK(valueAttr(k, 11) == 1e-30);
  CHECK(opAt(k, 14).get(attr::perm) == std::vector<int64_t>{1, 0});
  CHECK(opAt(k, 24).get(attr::perm).empty());
  CHECK(opAt(k, 26).get(attr::label) == "say \"hi\"\n\\ there");
  CHECK(opAt(k, 16).regions.at(0).ops.at(1).get(attr::pred) == "lt");
}

TEST_CASE("text: doubles print in shortest form that reads back bit for bit") {
  const double values[] = {100.0, 0.1, 1.0 / 3, 1e20, -2.5e-8, 5e-324, std::numeric_limits<double>::max(), -0.0};
  const char* expected[] = {"100.0", "0.1", "0.3333333333333333", "1e+20", "-2.5e-08", "5e-324",
                            "1.7976931348623157e+308", "-0.0"};
  for (size_t i = 0; i < std::size(values); ++i) {
    Kernel k;
    k.name = "d";
    Op c{};
    c.code = OpCode::constant;
    c.results = {k.addValue(Type{DType::f64, {}})};
    c.setAttr("value", values[i]);
    k.body.ops.push_back(c);
    std::string text = print(k);
    CAPTURE(text);
    CHECK(text.find("{value = " + std::string(expected[i]) + "}") != std::string::npos);
    CHECK(std::bit_cast<uint64_t>(valueAttr(parse(text), 0)) == std::bit_cast<uint64_t>(values[i]));
  }
}

TEST_CASE("text: values are renumbered in definition order whatever their names and ids") {
  constexpr std::string_view named = R"IR(
    kernel @k(a: tensor<f32, 1>) grid 1 {
      %start = constant() {value = 0} : i64   // comments are skipped
      %acc = constant() {value = 0.0} : tile<8xf32>
      %out = fold(%start, %start, %acc) : tile<8xf32> {
      ^(%i: i64, %carried: tile<8xf32>):
        %x = load(%i) {fill = 0.0, tensor = 0} : tile<8xf32>
        %sum = add(%carried,%x) : tile<8xf32>
        yield(%sum)
      }
      store(%start, %out) {tensor = 0}
    })IR";
  constexpr std::string_view canonical = R"IR(kernel @k(a: tensor<f32, 1>) grid 1 {
  %0 = constant() {value = 0} : i64
  %1 = constant() {value = 0.0} : tile<8xf32>
  %2 = fold(%0, %0, %1) : tile<8xf32> {
  ^(%3: i64, %4: tile<8xf32>):
    %5 = load(%3) {fill = 0.0, tensor = 0} : tile<8xf32>
    %6 = add(%4, %5) : tile<8xf32>
    yield(%6)
  }
  store(%0, %2) {tensor = 0}
}
)IR";
  CHECK(print(parse(named)) == canonical);

  // Ids allocated in reverse definition order still print as %0, %1.
  Kernel k;
  k.name = "rev";
  ValueId late = k.addValue(Type{DType::i64, {}}), early = k.addValue(Type{DType::i64, {}});
  Op c{};
  c.code = OpCode::constant;
  c.results = {early};
  c.setAttr("value", int64_t{1});
  Op n{};
  n.code = OpCode::neg;
  n.operands = {early};
  n.results = {late};
  k.body.ops = {c, n};
  CHECK(print(k) == "kernel @rev() grid 1 {\n  %0 = constant() {value = 1} : i64\n  %1 = neg(%0) : i64\n}\n");
}

TEST_CASE("text: parse errors say where and what") {
  struct Case {
    std::string text;
    int line, col;
    std::string message;
  };
  const Case cases[] = {
      {wrap("  %0 = ad() : i64\n"), 2, 8, "unknown op 'ad'"},
      {wrap("  %0 = neg(%7) : i64\n"), 2, 12, "use of undefined value %7"},
      {wrap("  %0 = program_id() {axis = 0} : f33\n"), 2, 34, "unknown dtype 'f33'"},
      {wrap("  %0 = constant() {value = 0.0} : tile<4x8xf33>\n"), 2, 44, "unknown dtype 'f33'"},
      {wrap("  %0 = constant() {value = 0.0} : tile<4x0xf32>\n"), 2, 42, "expected a positive dimension but found '0'"},
      {wrap("  %0 = constant() {value = 1} : i64\n  %1 = add(%0 %0) : i64\n"), 3, 15, "expected ')' but found '%0'"},
      {wrap("  %0 = constant() {value = 1} : i64\n  print(%0) {label = \"open}\n"), 3, 22, "unterminated string"},
      {wrap("  %0 = constant() {value = 1, value = 2} : i64\n"), 2, 31, "duplicate attribute 'value'"},
      {wrap("  %0 = constant() {value = 1} : i64\n  %1 = neg(%0) {to = 1} : i64\n"), 3, 17,
       "neg takes no attribute 'to'"},
      {wrap("  %0 = program_id() {axis = \"0\"} : i64\n"), 2, 29, "attribute 'axis' of program_id must be an integer"},
      {wrap("  %0 = constant() {value = [1]} : i64\n"), 2, 28, "attribute 'value' of constant must be a number"},
      {wrap("  %0 = constant() {value = 1} : i64\n  %0 = constant() {value = 2} : i64\n"), 3, 3,
       "redefinition of value %0"},
      {"kernel @k() grid 1 {\n  %0 = constant() {value = 0} : i64\n  %1 = fold(%0, %0, %0) : i64 {\n"
       "  ^(%2: i64, %3: i64):\n    yield(%3)\n",
       6, 1, "expected an op or '}' but found end of input"},
      {"kernel @k(a: tensor<f32,", 1, 25, "expected a tensor rank but found end of input"},
      {"kernel k() grid 1 {}", 1, 8, "expected a kernel name like @gemm but found 'k'"},
      {"kernel @k() grid 1 {} }", 1, 23, "expected end of input but found '}'"},
      {wrap("  %0 = constant() {value = 1} : i64 $\n"), 2, 37, "unexpected character '$'"},
      {"kernel @k(s: f32, a: tensor<f32, 1>) grid 1 {}", 1, 19,
       "tensor parameter a after a scalar parameter; list tensors first"},
      {"kernel @k(s: f33) grid 1 {}", 1, 14, "unknown dtype 'f33'"},
      {"kernel @k(s f32) grid 1 {}", 1, 13, "expected ':' but found 'f32'"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    ParseError e = parseError(c.text);
    CHECK(e.line == c.line);
    CHECK(e.col == c.col);
    CHECK(std::string(e.what()) == std::to_string(c.line) + ":" + std::to_string(c.col) + ": " + c.message);
  }
}

TEST_CASE("text: scalar parameters follow the tensors and round-trip") {
  constexpr std::string_view text = R"IR(kernel @k(t0: tensor<f32, 2>, s0: f32, s1: i64) grid 2 {
  %0 = scalar_param() {index = 1} : i64
  %1 = scalar_param() {index = 0} : f32
  %2 = program_id() {axis = 0} : i64
  %3 = mul(%2, %0) : i64
  %4 = load(%3, %0) {fill = 0.0, tensor = 0} : tile<4x8xf32>
  %5 = reshape(%1) : tile<1x1xf32>
  %6 = broadcast(%5) : tile<4x8xf32>
  %7 = mul(%4, %6) : tile<4x8xf32>
  store(%3, %0, %7) {tensor = 0}
}
)IR";
  Kernel k = parse(text);
  CHECK(print(k) == text);
  CHECK(k.scalars == std::vector<ScalarParam>{{"s0", DType::f32}, {"s1", DType::i64}});
  CHECK_NOTHROW(verify(k));
  k.tensors.clear();
  CHECK(print(k).starts_with("kernel @k(s0: f32, s1: i64) grid 2 {\n"));
}

TEST_CASE("text: a value defined in a region is not visible after it") {
  std::string text = wrap(
      "  %0 = constant() {value = 0} : i64\n"
      "  %1 = fold(%0, %0, %0) : i64 {\n  ^(%2: i64, %3: i64):\n    yield(%3)\n  }\n"
      "  %4 = neg(%2) : i64\n");
  CHECK(std::string(parseError(text).what()) == "7:12: use of undefined value %2");
}

TEST_CASE("text: truncated and garbled input throws ParseError, never anything else") {
  std::string text(kKinds);
  size_t end = text.rfind('}');
  for (size_t n = 0; n < end; ++n) {
    CAPTURE(n);
    CHECK_THROWS_AS(parse(text.substr(0, n)), ParseError);
  }
  std::mt19937 rng(1234);
  const std::string junk = "%@^{}()<>[],:=-\"\\x0.e/ \n\x01";
  int rejected = 0;
  for (int trial = 0; trial < 500; ++trial) {
    std::string garbled = text;
    for (int i = 0; i < 3; ++i) garbled[rng() % garbled.size()] = junk[rng() % junk.size()];
    try {
      parse(garbled);
    } catch (const ParseError&) {
      ++rejected;
    }
  }
  CHECK(rejected > 400);
}

TEST_CASE("text: deeply nested regions are refused, not a stack overflow") {
  std::string text = "kernel @k() grid 1 {\n  %0 = constant() {value = 0} : i64\n";
  for (int i = 0; i < 10000; ++i) text += "  fold(%0, %0) {\n  ^(%k" + std::to_string(i) + ": i64):\n";
  CHECK_THROWS_WITH_AS(parse(text), doctest::Contains("regions nested too deeply"), ParseError);
}

TEST_CASE("verify: accepts valid kernels") {
  CHECK_NOTHROW(verify(parse(kKinds)));
  CHECK_NOTHROW(verify(parse(R"IR(kernel @gemm(a: tensor<f32, 2>, b: tensor<f32, 2>, c: tensor<f32, 2>) grid 2 {
  %0 = program_id() {axis = 0} : i64
  %1 = constant() {value = 128} : i64
  %2 = mul(%0, %1) : i64
  %3 = load(%2, %1) {fill = 0.0, tensor = 0} : tile<128x32xf32>
  %4 = constant() {value = 0.0} : tile<128x128xf32>
  %5, %6 = fold(%1, %2, %4, %4) : tile<128x128xf32>, tile<128x128xf32> {
  ^(%7: i64, %8: tile<128x128xf32>, %9: tile<128x128xf32>):
    %10 = cmp(%7, %1) {pred = "lt"} : bool
    yield(%8, %9)
  }
  store(%2, %2, %5) {tensor = 2}
  print(%5) {label = "acc"}
})IR")));
  // 8-bit floats: loads, casts, a mixed e4m3 x e5m2 dot to f32, a select and a store.
  CHECK_NOTHROW(verify(parse(R"IR(kernel @fp8(a: tensor<f8e4m3, 2>, b: tensor<f8e5m2, 2>, c: tensor<f8e4m3, 2>) grid 1 {
  %0 = constant() {value = 0} : i64
  %1 = load(%0, %0) {fill = 448.0, tensor = 0} : tile<16x32xf8e4m3>
  %2 = load(%0, %0) {fill = -inf, tensor = 1} : tile<32x16xf8e5m2>
  %3 = dot(%1, %2) : tile<16x16xf32>
  %4 = cast(%3) : tile<16x16xf8e4m3>
  %5 = cmp(%3, %3) {pred = "lt"} : tile<16x16xbool>
  %6 = select(%5, %4, %4) : tile<16x16xf8e4m3>
  store(%0, %0, %6) {tensor = 2}
})IR")));
}

TEST_CASE("verify: rejects ill-typed ops with a message naming the types") {
  const std::string f32x = "  %0 = constant() {value = 1.0} : tile<4x8xf32>\n";
  const std::string i32x = "  %0 = constant() {value = 1} : tile<4xi32>\n";
  const std::string idx = "  %0 = constant() {value = 0} : i64\n";
  struct Case {
    std::string ops, message;
  };
  const Case cases[] = {
      {f32x + "  %1 = constant() {value = 1.0} : tile<4x8xf16>\n  %2 = add(%0, %1) : tile<4x8xf32>\n",
       "add: operand types differ: tile<4x8xf32> vs tile<4x8xf16>"},
      {i32x + "  %1 = exp(%0) : tile<4xi32>\n", "exp: expected a float dtype but got tile<4xi32>"},
      {f32x + "  %1 = and(%0, %0) : tile<4x8xf32>\n", "and: expected a bool or integer dtype but got tile<4x8xf32>"},
      {f32x + "  %1 = cmp(%0, %0) {pred = \"lt\"} : tile<4x8xf32>\n",
       "cmp: result must be tile<4x8xbool> but is tile<4x8xf32>"},
      {f32x + "  %1 = cmp(%0, %0) {pred = \"lq\"} : tile<4x8xbool>\n", "cmp: unknown predicate 'lq'"},
      {i32x + "  %1 = select(%0, %0, %0) : tile<4xi32>\n", "select: condition must be tile<4xbool> but is tile<4xi32>"},
      {f32x + "  %1 = cast(%0) : tile<8x4xf16>\n",
       "cast: cast changes only the dtype, not tile<4x8xf32> to tile<8x4xf16>"},
      {"  %0 = constant() {value = 1.0} : tile<4x2xf32>\n  %1 = broadcast(%0) : tile<4x8xf32>\n",
       "broadcast: cannot broadcast tile<4x2xf32> to tile<4x8xf32>"},
      {f32x + "  %1 = reshape(%0) : tile<4x4xf32>\n", "reshape: cannot reshape tile<4x8xf32> to tile<4x4xf32>"},
      {f32x + "  %1 = permute(%0) {perm = [0, 0]} : tile<4x8xf32>\n",
       "permute: perm is not a permutation of the axes of tile<4x8xf32>"},
      {f32x + "  %1 = permute(%0) {perm = [1, 0]} : tile<4x8xf32>\n",
       "permute: result must be tile<8x4xf32> but is tile<4x8xf32>"},
      {f32x + "  %1 = reduce_max(%0) {axis = 2} : tile<4xf32>\n", "reduce_max: axis 2 out of range for tile<4x8xf32>"},
      {f32x + "  %1 = argmin(%0) {axis = 1} : tile<4xf32>\n", "argmin: result must be tile<4xi32> but is tile<4xf32>"},
      {f32x + "  %1 = dot(%0, %0) : tile<4x8xf32>\n", "dot: cannot multiply tile<4x8xf32> by tile<4x8xf32>"},
      {"  %0 = constant() {value = 1} : tile<4x4xi32>\n  %1 = dot(%0, %0) : tile<4x4xf32>\n",
       "dot: cannot produce tile<4x4xf32> from i32 operands"},
      {"  %0 = constant() {value = 1.0} : tile<4x4xf16>\n  %1 = constant() {value = 0.0} : tile<4x4xf16>\n"
       "  %2 = dot(%0, %0, %1) : tile<4x4xf32>\n",
       "dot: accumulator and result types differ: tile<4x4xf16> vs tile<4x4xf32>"},
      {idx + "  %1 = load(%0) {fill = 0.0, tensor = 0} : tile<4x8xf32>\n", "load: expected 2 operands but got 1"},
      {idx + "  %1 = load(%0, %0) {tensor = 0} : tile<4x8xf32>\n", "load: missing attribute 'fill', a number"},
      {idx + "  %1 = load(%0, %0) {fill = 0, tensor = 0} : tile<4x8xf16>\n",
       "load: result tile<4x8xf16> does not match tensor a (f32, rank 2)"},
      {f32x + "  store(%0, %0, %0) {tensor = 0}\n", "store: offset must be i64 but is tile<4x8xf32>"},
      {idx + "  %1 = tensor_dim() {axis = 0, tensor = 3} : i64\n",
       "tensor_dim: tensor 3 out of range; the kernel has 1 tensors"},
      {"  %0 = program_id() {axis = 1} : i64\n", "program_id: axis 1 out of range for a grid of rank 1"},
      {"  %0 = constant() {value = 1} : tile<4xf32>\n", "constant: needs a double 'value' for tile<4xf32>"},
      {"  %0 = iota() {axis = 0} : tile<4xi64>\n", "iota: result must be an i32 tile but is tile<4xi64>"},
      {f32x + "  print(%0)\n", "print: missing attribute 'label', a string"},
      {f32x + "  %1 = dot(%0, %0, %0, %0) : tile<4x8xf32>\n", "dot: expected 2 to 3 operands but got 4"},
      {idx + "  %1 = fold(%0) : i64 {\n  ^(%2: i64):\n    yield(%2)\n  }\n", "fold: expected at least 2 operands but got 1"},
      {f32x + "  %1, %2 = exp(%0) : tile<4x8xf32>, tile<4x8xf32>\n", "exp: expected 1 results but got 2"},
      {idx + "  %1 = fold(%0, %0, %0) : i64 {\n  ^(%2: i64, %3: i64):\n    %4 = constant() {value = 1.0} : f32\n"
             "    yield(%4)\n  }\n",
       "yield: yielded value and result types differ: f32 vs i64"},
      {idx + "  %1 = fold(%0, %0, %0) : i64 {\n  ^(%2: i64, %3: f32):\n    yield(%2)\n  }\n",
       "fold: initial value and body argument types differ: i64 vs f32"},
      {idx + "  %1 = fold(%0, %0, %0) : i64 {\n  ^(%2: i64, %3: i64):\n    %4 = neg(%3) : i64\n  }\n",
       "fold: body must end with yield"},
      {idx + "  yield(%0)\n", "yield: yield must be the last op of a fold body"},
      {"  %0 = constant() {value = 1.0} : tile<4xf8e4m3>\n  %1 = add(%0, %0) : tile<4xf8e4m3>\n",
       "add: takes no f8e4m3 values; cast them to f16, bf16 or f32 first"},
      {"  %0 = constant() {value = 1.0} : tile<4x4xf8e5m2>\n  %1 = dot(%0, %0) : tile<4x4xf8e5m2>\n",
       "dot: cannot produce tile<4x4xf8e5m2> from f8e5m2 operands"},
      {"  %0 = constant() {value = 1.0} : tile<4x4xf16>\n  %1 = constant() {value = 1.0} : tile<4x4xf8e5m2>\n"
       "  %2 = dot(%0, %1) : tile<4x4xf32>\n",
       "dot: cannot multiply tile<4x4xf16> by tile<4x4xf8e5m2>"},
  };
  for (const Case& c : cases) {
    std::string text = wrap(c.ops);
    CAPTURE(text);
    CHECK_THROWS_WITH_AS(verify(parse(text)), doctest::Contains(c.message.c_str()), Error);
  }
}

TEST_CASE("verify: scalar parameters and scalar_param") {
  auto withScalars = [](std::string_view params, std::string_view ops) {
    return "kernel @k(" + std::string(params) + ") grid 1 {\n" + std::string(ops) + "}\n";
  };
  for (const char* dtype : {"i64", "i32", "f32", "f64", "f16", "bf16"}) {
    CAPTURE(dtype);
    std::string op = "  %0 = scalar_param() {index = 0} : " + std::string(dtype) + "\n";
    CHECK_NOTHROW(verify(parse(withScalars("s0: " + std::string(dtype), op))));
  }
  struct Case {
    std::string params, ops, message;
  };
  const Case cases[] = {
      {"s0: bool", "", "kernel: scalar s0 has dtype bool; scalar parameters are i64, i32, f32, f64, f16 or bf16"},
      {"s0: i8", "", "kernel: scalar s0 has dtype i8"},
      {"s0: f32", "  %0 = scalar_param() {index = 1} : f32\n",
       "scalar_param: scalar 1 out of range; the kernel has 1 scalars"},
      {"s0: f32", "  %0 = scalar_param() {index = -1} : f32\n", "scalar_param: scalar -1 out of range"},
      {"s0: f32, s1: i64", "  %0 = scalar_param() {index = 1} : f32\n",
       "scalar_param: result for scalar s1 must be i64 but is f32"},
      {"s0: f32", "  %0 = scalar_param() {index = 0} : tile<4xf32>\n",
       "scalar_param: result for scalar s0 must be f32 but is tile<4xf32>"},
      {"s0: f32", "  %0 = scalar_param() : f32\n", "scalar_param: missing attribute 'index', an integer"},
      {"s0: f32", "  %0 = constant() {value = 0} : i64\n  %1 = scalar_param(%0) {index = 0} : f32\n",
       "scalar_param: expected 0 operands but got 1"},
  };
  for (const Case& c : cases) {
    std::string text = withScalars(c.params, c.ops);
    CAPTURE(text);
    CHECK_THROWS_WITH_AS(verify(parse(text)), doctest::Contains(c.message.c_str()), Error);
  }
}

TEST_CASE("verify: an op built in code with an attribute its table line does not list, or of another kind") {
  Kernel k = parse(wrap("  %0 = program_id() {axis = 0} : i64\n"));
  REQUIRE_NOTHROW(verify(k));
  Kernel extra = k;
  extra.body.ops[0].setAttr("tensor", int64_t{0});
  CHECK_THROWS_WITH_AS(verify(extra), "2:8: program_id: takes no attribute 'tensor'", Error);
  Kernel mistyped = k;
  mistyped.body.ops[0].setAttr("axis", std::string("0"));
  CHECK_THROWS_WITH_AS(verify(mistyped), "2:8: program_id: attribute 'axis' must be an integer", Error);
  CHECK_THROWS_WITH_AS(mistyped.body.ops[0].get(attr::axis), "2:8: program_id: missing or mistyped attribute 'axis'", Error);
}

TEST_CASE("verify: errors in parsed text name the op's line:col") {
  Kernel k = parse(wrap("  %0 = constant() {value = 1.0} : tile<4x8xf32>\n"
                        "    %1 = reshape(%0) : tile<4x4xf32>\n"));
  CHECK(k.body.ops.at(1).loc.str() == "3:10");
  CHECK_THROWS_WITH_AS(verify(k), "3:10: reshape: cannot reshape tile<4x8xf32> to tile<4x4xf32>", Error);
}

TEST_CASE("verify: rejects uses outside a value's scope and malformed value ids") {
  Kernel base = parse(wrap(
      "  %0 = constant() {value = 0} : i64\n"
      "  %1 = fold(%0, %0, %0) : i64 {\n  ^(%2: i64, %3: i64):\n    %4 = neg(%3) : i64\n    yield(%4)\n  }\n"
      "  %5 = neg(%1) : i64\n"));
  REQUIRE_NOTHROW(verify(base));
  Op& fold = base.body.ops.at(1);
  Op& after = base.body.ops.at(2);
  ValueId inner = fold.regions.at(0).ops.at(0).results.at(0);

  SUBCASE("a region's value used after the region") {
    after.operands = {inner};
    CHECK_THROWS_WITH_AS(verify(base), doctest::Contains("neg: uses value 4, which is not defined at this point"),
                         Error);
  }
  SUBCASE("a fold's result used in its own body") {
    fold.regions.at(0).ops.at(0).operands = {fold.results.at(0)};
    CHECK_THROWS_WITH_AS(verify(base), doctest::Contains("not defined at this point"), Error);
  }
  SUBCASE("a value defined twice") {
    after.results = {inner};
    CHECK_THROWS_WITH_AS(verify(base), doctest::Contains("neg: value 4 is defined twice"), Error);
  }
  SUBCASE("a value id with no type") {
    after.results = {99};
    CHECK_THROWS_WITH_AS(verify(base), doctest::Contains("neg: value 99 has no type in the kernel"), Error);
  }
  SUBCASE("the user's source location leads the message") {
    after.operands = {inner};
    after.loc = SourceLoc{"user.cpp", 12};
    CHECK_THROWS_WITH_AS(verify(base), "user.cpp:12: neg: uses value 4, which is not defined at this point", Error);
  }
}
