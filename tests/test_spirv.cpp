// The SPIR-V builder: compute modules built by hand, checked by spirv-val
// (tests/support.hpp's checkSpirvValid). Also defines the vector-add, workgroup-sum
// and subgroup kernels test_vulkan.cpp runs. And what the kernel-IR printer does
// that the conformance suite (tests/test_conformance.cpp) cannot see from outside.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "ir/error.hpp"
#include "lower/spirv/print_kernel_ir.hpp"
#include "lower/spirv/spirv_builder.hpp"
#include "tests/support.hpp"

namespace tj::spirvtest {

using namespace tj::spirv;

namespace {

// The usual pieces of a 1-D compute kernel: types, `void main()`, and the
// global, local and workgroup invocation ids' x components.
struct Kernel {
  Module m;
  Id u32, f32, boolT;
  Id fn = 0;
  Id gid = 0, lid = 0, wid = 0;

  Kernel() : u32(m.typeInt(32, false)), f32(m.typeFloat(32)), boolT(m.typeBool()) {
    m.capability(Capability::Shader);
  }

  // Opens main() with LocalSize(localSize) and loads the invocation ids.
  void begin(uint32_t localSize) {
    Id voidT = m.typeVoid();
    fn = m.beginFunction(voidT, m.typeFunction(voidT));
    m.entryPoint(fn, "main", localSize);
    m.name(fn, "main");
    m.label(m.newLabel());
    gid = idX(BuiltIn::GlobalInvocationId);
    lid = idX(BuiltIn::LocalInvocationId);
    wid = idX(BuiltIn::WorkgroupId);
  }

  Id idX(BuiltIn b) {
    Id uvec3 = m.typeVector(u32, 3);
    return m.op(Op::CompositeExtract, u32, {m.load(uvec3, m.builtInInput(b, uvec3)), 0});
  }

  Words end() {
    m.returnVoid();
    m.endFunction();
    return m.words();
  }

  // if (cond) { body(); }
  void ifThen(Id cond, const std::function<void()>& body) {
    Id then = m.newLabel(), merge = m.newLabel();
    m.selectionMerge(merge);
    m.branchConditional(cond, then, merge);
    m.label(then);
    body();
    m.branch(merge);
    m.label(merge);
  }

  Id at(const Module::Buffer& b, Id index) { return m.accessChain(b.elementPointer, b.variable, {m.constU32(0), index}); }

  // The u32 push constant `n` at offset 0.
  Id pushedSize() {
    Id pc = m.pushConstants({u32}, {0});
    return m.load(u32, m.accessChain(m.typePointer(StorageClass::PushConstant, u32), pc, {m.constU32(0)}));
  }
};

// The module in a temporary file, for spirv-dis.
std::string writeModule(const Words& words) {
  static int counter = 0;
  auto file = std::filesystem::temp_directory_path() /
              ("tilejit_spirv_" + std::to_string(getpid()) + "_" + std::to_string(counter++) + ".spv");
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(words.data()), static_cast<std::streamsize>(words.size() * 4));
  return file.string();
}

}  // namespace

// c[i] = a[i] + b[i] for i < n (push constant); bindings 0, 1, 2; 64 wide.
Words vectorAddKernel() {
  Kernel k;
  auto a = k.m.storageBuffer(k.f32, 4, 0, 0), b = k.m.storageBuffer(k.f32, 4, 0, 1),
       c = k.m.storageBuffer(k.f32, 4, 0, 2);
  k.begin(64);
  Id n = k.pushedSize();
  k.ifThen(k.m.op(Op::ULessThan, k.boolT, {k.gid, n}), [&] {
    Id sum = k.m.op(Op::FAdd, k.f32, {k.m.load(k.f32, k.at(a, k.gid)), k.m.load(k.f32, k.at(b, k.gid))});
    k.m.store(k.at(c, k.gid), sum);
  });
  return k.end();
}

// out[workgroup] = sum of in[256 * workgroup + 0..255] (zero past n), by a
// tree in workgroup memory: a loop with a phi and barriers. Bindings 0, 1.
Words workgroupSumKernel() {
  constexpr uint32_t kWidth = 256;
  Kernel k;
  Module& m = k.m;
  auto in = m.storageBuffer(k.f32, 4, 0, 0), out = m.storageBuffer(k.f32, 4, 0, 1);
  Id sharedPtr = m.typePointer(StorageClass::Workgroup, k.f32);
  Id shared = m.variable(m.typePointer(StorageClass::Workgroup, m.typeArray(k.f32, kWidth)), StorageClass::Workgroup);
  k.begin(kWidth);
  Id n = k.pushedSize();
  Id inside = m.op(Op::ULessThan, k.boolT, {k.gid, n});
  Id safeIndex = m.select(k.u32, inside, k.gid, m.constU32(0));
  Id value = m.select(k.f32, inside, m.load(k.f32, k.at(in, safeIndex)), m.constF32(0));
  m.store(m.accessChain(sharedPtr, shared, {k.lid}), value);
  auto barrier = [&] { m.controlBarrier(Scope::Workgroup, Scope::Workgroup, semantics::kAcquireRelease | semantics::kWorkgroupMemory); };
  barrier();

  // for (stride = 128; stride > 0; stride >>= 1) { if (lid < stride) s[lid] += s[lid + stride]; barrier(); }
  Id entry = m.currentBlock();
  Id header = m.newLabel(), body = m.newLabel(), cont = m.newLabel(), merge = m.newLabel();
  m.branch(header);
  m.label(header);
  Id halved = m.newId();  // defined in `cont`; a phi may name it first
  Id stride = m.phi(k.u32, {{m.constU32(kWidth / 2), entry}, {halved, cont}});
  Id more = m.op(Op::UGreaterThan, k.boolT, {stride, m.constU32(0)});
  m.loopMerge(merge, cont);  // must directly precede the branch
  m.branchConditional(more, body, merge);
  m.label(body);
  k.ifThen(m.op(Op::ULessThan, k.boolT, {k.lid, stride}), [&] {
    Id mine = m.accessChain(sharedPtr, shared, {k.lid});
    Id other = m.accessChain(sharedPtr, shared, {m.op(Op::IAdd, k.u32, {k.lid, stride})});
    m.store(mine, m.op(Op::FAdd, k.f32, {m.load(k.f32, mine), m.load(k.f32, other)}));
  });
  barrier();
  m.branch(cont);
  m.label(cont);
  m.op(Op::ShiftRightLogical, k.u32, {stride, m.constU32(1)}, halved);
  m.branch(header);
  m.label(merge);
  k.ifThen(m.op(Op::IEqual, k.boolT, {k.lid, m.constU32(0)}),
           [&] { m.store(k.at(out, k.wid), m.load(k.f32, m.accessChain(sharedPtr, shared, {m.constU32(0)}))); });
  return k.end();
}

// out[i] = subgroup sum + subgroup max + the value of lane 0; no size guard.
Words subgroupKernel() {
  Kernel k;
  Module& m = k.m;
  m.capability(Capability::GroupNonUniform);
  auto in = m.storageBuffer(k.f32, 4, 0, 0), out = m.storageBuffer(k.f32, 4, 0, 1);
  k.begin(64);
  Id lane = m.load(k.u32, m.builtInInput(BuiltIn::SubgroupLocalInvocationId, k.u32));
  Id v = m.load(k.f32, k.at(in, k.gid));
  Id sum = m.subgroupReduce(Op::GroupNonUniformFAdd, k.f32, v);
  Id max = m.subgroupReduce(Op::GroupNonUniformFMax, k.f32, v);
  Id first = m.subgroupShuffle(k.f32, v, m.op(Op::BitwiseAnd, k.u32, {lane, m.constU32(0)}));
  m.store(k.at(out, k.gid), m.op(Op::FAdd, k.f32, {m.op(Op::FAdd, k.f32, {sum, max}), first}));
  return k.end();
}

namespace {

// f16: h[i] = h[i] * h[i] + 1 (and through f32); i64: q[i] = q[i] * 3 + i - (q[i] >> 1).
Words f16AndI64Kernel() {
  Kernel k;
  Module& m = k.m;
  for (Capability c : {Capability::Float16, Capability::Int64, Capability::StorageBuffer16BitAccess}) m.capability(c);
  Id f16 = m.typeFloat(16), i64 = m.typeInt(64, true);
  auto h = m.storageBuffer(f16, 2, 0, 0), q = m.storageBuffer(i64, 8, 0, 1);
  k.begin(64);
  Id x = m.load(f16, k.at(h, k.gid));
  Id y = m.op(Op::FAdd, f16, {m.op(Op::FMul, f16, {x, x}), m.constant(f16, 0x3C00 /*1.0*/)});
  Id viaF32 = m.op(Op::FConvert, f16, {m.op(Op::FAdd, k.f32, {m.op(Op::FConvert, k.f32, {y}), m.constF32(0.5f)})});
  m.store(k.at(h, k.gid), viaF32);
  Id a = m.load(i64, k.at(q, k.gid));
  Id i = m.op(Op::Bitcast, i64, {m.op(Op::UConvert, m.typeInt(64, false), {k.gid})});
  Id r = m.op(Op::IAdd, i64, {m.op(Op::IMul, i64, {a, m.constant(i64, 3)}), i});
  r = m.op(Op::ISub, i64, {r, m.op(Op::ShiftRightArithmetic, i64, {a, m.constant(i64, 1)})});
  m.store(k.at(q, k.gid), r);
  return k.end();
}

// Every GLSL.std.450 function the builder names, chained on one value.
Words glslKernel() {
  Kernel k;
  Module& m = k.m;
  auto io = m.storageBuffer(k.f32, 4, 0, 0);
  k.begin(32);
  Id x = m.load(k.f32, k.at(io, k.gid));
  for (GlslOp f : {GlslOp::Exp, GlslOp::Exp2, GlslOp::Log, GlslOp::Sqrt, GlslOp::InverseSqrt, GlslOp::Tanh,
                   GlslOp::Floor, GlslOp::Ceil, GlslOp::FAbs, GlslOp::Sin, GlslOp::Cos})
    x = m.ext(f, k.f32, {x});
  x = m.ext(GlslOp::FMax, k.f32, {x, m.constF32(-1)});
  x = m.ext(GlslOp::FMin, k.f32, {x, m.constF32(1)});
  m.store(k.at(io, k.gid), x);
  return k.end();
}

}  // namespace

TEST_CASE("spirv builder: header, deduplicated types and constants") {
  Module m;
  Id a = m.typeInt(32, false);
  CHECK(m.typeInt(32, false) == a);
  CHECK(m.typeInt(32, true) != a);
  CHECK(m.typePointer(StorageClass::StorageBuffer, a) == m.typePointer(StorageClass::StorageBuffer, a));
  CHECK(m.constU32(7) == m.constU32(7));
  CHECK(m.constU32(7) != m.constI32(7));
  CHECK(m.glsl() == m.glsl());
  Words w = m.words();
  REQUIRE(w.size() >= 5);
  CHECK(w[0] == 0x07230203u);
  CHECK(w[1] == kVersion1_5);
  CHECK(w[3] > m.constU32(7));  // the id bound exceeds every id
}

TEST_CASE("spirv builder: 64-bit constants take two words") {
  Module m;
  Id i64 = m.typeInt(64, true);
  Id c = m.constant(i64, 0x1122334455667788ull);
  Words w = m.words();
  bool found = false;
  for (size_t i = 0; i + 4 < w.size(); ++i)
    if (w[i] == (5u << 16 | 43u) && w[i + 1] == i64 && w[i + 2] == c)
      found = w[i + 3] == 0x55667788u && w[i + 4] == 0x11223344u;
  CHECK(found);
}

TEST_CASE("spirv-val: vector add with a push-constant size guard") { test::checkSpirvValid(vectorAddKernel()); }
TEST_CASE("spirv-val: workgroup-memory reduction with barriers and a loop") {
  test::checkSpirvValid(workgroupSumKernel());
}
TEST_CASE("spirv-val: subgroup reduction and shuffle") { test::checkSpirvValid(subgroupKernel()); }
TEST_CASE("spirv-val: f16 and i64 arithmetic") { test::checkSpirvValid(f16AndI64Kernel()); }
TEST_CASE("spirv-val: GLSL.std.450 functions") { test::checkSpirvValid(glslKernel()); }

TEST_CASE("spirv-dis: the vector-add module disassembles to what was built") {
  if (test::runCommand("command -v spirv-dis").status != 0) {  // spirv-tools, which checkSpirvValid requires in CI
    MESSAGE("skipped: spirv-dis is not installed (apt-get install spirv-tools)");
    return;
  }
  std::string file = writeModule(vectorAddKernel());
  test::CommandResult r = test::runCommand("spirv-dis " + file);
  std::filesystem::remove(file);
  INFO(r.output);
  CHECK(r.status == 0);
  for (const char* text : {"OpEntryPoint GLCompute", "OpExecutionMode %main LocalSize 64 1 1", "BuiltIn GlobalInvocationId",
                           "OpFAdd", "OpSelectionMerge", "ArrayStride 4"})
    CHECK(r.output.find(text) != std::string::npos);
}

namespace {

// One workgroup of 8 threads: body(builder, thread) gives a value per thread, stored to
// t0[thread] (a tensor of `out`).
gpu::KernelFunction oneWorkgroup(DType out, std::vector<gpu::SharedAlloc> shared,
                                 const std::function<gpu::Reg(gpu::KBuilder&, gpu::Reg)>& body) {
  gpu::KernelFunction f{.name = "test", .target = "vulkan", .workgroupSize = 8, .subgroupSize = 8};
  f.params = {{gpu::KParam::Kind::buffer, "t0", out}};
  f.shared = std::move(shared);
  gpu::KBuilder b(f);
  gpu::Reg thread = b.emit(gpu::KOp::thread_id, DType::i32);
  gpu::Reg value = body(b, thread);
  b.effect(gpu::KOp::store_global, {thread, b.constant(DType::boolean, 1), value},
           {{"buffer", int64_t{0}}, {"vec", int64_t{1}}});
  return f;
}

// Each thread stores allocation a's value a at its index, then sums what it reads back.
gpu::KernelFunction sharedRoundTrip(const std::vector<gpu::SharedAlloc>& allocs) {
  return oneWorkgroup(DType::f32, allocs, [&](gpu::KBuilder& b, gpu::Reg thread) {
    for (size_t a = 0; a < allocs.size(); ++a)
      b.effect(gpu::KOp::store_shared, {thread, b.constant(allocs[a].dtype, double(a))}, {{"alloc", int64_t(a)}});
    b.effect(gpu::KOp::barrier);
    gpu::Reg sum = b.constant(DType::f32, 0);
    for (size_t a = 0; a < allocs.size(); ++a) {
      gpu::Reg v = b.emit(gpu::KOp::load_shared, allocs[a].dtype, {thread}, {{"alloc", int64_t(a)}});
      sum = b.binary("add", sum, b.emit(gpu::KOp::cast, DType::f32, {v}));
    }
    return sum;
  });
}

}  // namespace

TEST_CASE("spirv printer: workgroup memory is one array per element width, bounded by the given limit") {
  // bf16 values beside i32 indices (a reduction's scratch) take what the kernel IR budgeted.
  test::checkSpirvValid(spirv::printSpirv(sharedRoundTrip({{0, 16, DType::bf16, ""}, {16, 32, DType::i32, ""}})));
  // Overlapping f64 and bool ranges cannot alias: 64 + 8 bytes where the kernel IR planned 64.
  gpu::KernelFunction overlapping = sharedRoundTrip({{0, 64, DType::f64, ""}, {0, 8, DType::boolean, ""}});
  CHECK_THROWS_WITH_AS(spirv::printSpirv(overlapping),
                       "spirv: unsupported: 72 bytes of workgroup memory as one array per element width (64 available)",
                       Error);
  test::checkSpirvValid(spirv::printSpirv(overlapping, 72));
  CHECK_THROWS_WITH_AS(spirv::printSpirv(sharedRoundTrip({{2, 8, DType::f32, ""}})),
                       "spirv: unsupported: workgroup memory of f32 at an unaligned offset", Error);
}

TEST_CASE("spirv printer: warp_id is the SubgroupId built-in, not the invocation index over the subgroup size") {
  Words words = spirv::printSpirv(
      oneWorkgroup(DType::i32, {}, [](gpu::KBuilder& b, gpu::Reg) { return b.emit(gpu::KOp::warp_id, DType::i32); }));
  test::checkSpirvValid(words);
  bool decorated = false;  // OpDecorate %variable BuiltIn SubgroupId
  for (size_t i = 0; i + 3 < words.size(); ++i)
    decorated |= words[i] == (4u << 16 | uint32_t(Op::Decorate)) && words[i + 2] == uint32_t(Decoration::BuiltIn) &&
                 words[i + 3] == uint32_t(BuiltIn::SubgroupId);
  CHECK(decorated);
}

// Devices without shaderFloat64 run these: the int -> f16/bf16 casts round to odd in
// integers, not through a double.
TEST_CASE("spirv printer: casts between i64 and every narrow float declare no Float64") {
  auto hasCapability = [](const Words& words, Capability c) {
    for (size_t i = 5; i + 1 < words.size(); i += words[i] >> 16)
      if (words[i] == (2u << 16 | uint32_t(Op::Capability)) && words[i + 1] == uint32_t(c)) return true;
    return false;
  };
  for (DType t : {DType::f32, DType::f16, DType::bf16}) {
    CAPTURE(dtypeName(t));
    Words words = spirv::printSpirv(oneWorkgroup(DType::i64, {}, [&](gpu::KBuilder& b, gpu::Reg thread) {
      gpu::Reg wide = b.binary("mul", b.emit(gpu::KOp::cast, DType::i64, {thread}), b.constant(DType::i64, 1e15));
      gpu::Reg narrow = b.binary("rem", b.emit(gpu::KOp::cast, t, {wide}), b.constant(t, 3));
      return b.emit(gpu::KOp::cast, DType::i64, {narrow});
    }));
    test::checkSpirvValid(words);
    CHECK(!hasCapability(words, Capability::Float64));
  }
}

// Counts outside [0, width) are undefined in SPIR-V: the printer guards them.
TEST_CASE("spirv printer: shifts of every integer width by runtime counts validate") {
  for (DType t : {DType::i8, DType::i32, DType::i64})
    for (const char* fn : {"shl", "shr"}) {
      CAPTURE(fn);
      test::checkSpirvValid(spirv::printSpirv(oneWorkgroup(t, {}, [&](gpu::KBuilder& b, gpu::Reg thread) {
        gpu::Reg count = b.emit(gpu::KOp::cast, t, {thread});
        return b.binary(fn, b.constant(t, -3), count);
      })));
    }
}

TEST_CASE("spirv printer: parameter slots are push constants up to 128 bytes, a storage buffer beyond") {
  // A kernel reading its parameter `last`, with `count` parameters in all.
  auto reading = [](size_t count, int64_t last) {
    gpu::KernelFunction f = oneWorkgroup(DType::i64, {}, [&](gpu::KBuilder& b, gpu::Reg) {
      return b.emit(gpu::KOp::param, DType::i64, {}, {{"index", last}});
    });
    while (f.params.size() < count) f.params.push_back({gpu::KParam::Kind::size, "t0.size0", DType::i64});
    return f;
  };
  gpu::KernelFunction fits = reading(16, 15), beyond = reading(17, 16);
  CHECK(spirv::pushConstantBytes(fits) == 128);
  CHECK(spirv::paramsBinding(fits) == 1);
  CHECK(spirv::pushConstantBytes(beyond) == 0);
  test::checkSpirvValid(spirv::printSpirv(fits));
  test::checkSpirvValid(spirv::printSpirv(beyond));
}

}  // namespace tj::spirvtest
