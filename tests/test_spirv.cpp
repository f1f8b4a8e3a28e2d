// The SPIR-V builder: compute modules built by hand, checked by spirv-val
// (run as a process; skipped with a message when it is not installed, unless
// TILEJIT_REQUIRE_SPIRV_VAL=1). Also defines the vector-add, workgroup-sum
// and subgroup kernels test_vulkan.cpp runs.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "lower/spirv/spirv_builder.hpp"

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

// ---- spirv-val and spirv-dis as processes ----

std::string findTool(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin";
  for (size_t start = 0; start <= dirs.size();) {
    size_t colon = dirs.find(':', start);
    if (colon == std::string::npos) colon = dirs.size();
    std::filesystem::path candidate = std::filesystem::path(dirs.substr(start, colon - start)) / name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
    start = colon + 1;
  }
  return "";
}

std::string writeModule(const Words& words) {
  static int counter = 0;
  auto file = std::filesystem::temp_directory_path() /
              ("tilejit_spirv_" + std::to_string(getpid()) + "_" + std::to_string(counter++) + ".spv");
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(words.data()), static_cast<std::streamsize>(words.size() * 4));
  return file.string();
}

struct ToolResult {
  int status = -1;
  std::string output;
};

ToolResult runTool(const std::string& command) {
  ToolResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), pipe)) r.output.append(buf.data(), n);
  int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

// The tool's path, or "" after saying why it is skipped (failing instead
// when TILEJIT_REQUIRE_SPIRV_VAL=1, as in CI).
std::string requireTool(const std::string& name) {
  std::string tool = findTool(name);
  if (tool.empty()) {
    const char* require = std::getenv("TILEJIT_REQUIRE_SPIRV_VAL");
    if (require && std::string(require) == "1") FAIL(name << " is not installed (apt-get install spirv-tools)");
    MESSAGE("skipped: " << name << " is not installed (apt-get install spirv-tools)");
  }
  return tool;
}

// Checks the module with spirv-val for Vulkan 1.2 (skips without the tool).
void checkValid(const Words& words) {
  std::string tool = requireTool("spirv-val");
  if (tool.empty()) return;
  std::string file = writeModule(words);
  ToolResult r = runTool(tool + " --target-env vulkan1.2 " + file);
  INFO(r.output);
  CHECK(r.status == 0);
  if (r.status != 0) MESSAGE(runTool(findTool("spirv-dis") + " " + file).output);
  std::filesystem::remove(file);
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

TEST_CASE("spirv-val: vector add with a push-constant size guard") { checkValid(vectorAddKernel()); }
TEST_CASE("spirv-val: workgroup-memory reduction with barriers and a loop") { checkValid(workgroupSumKernel()); }
TEST_CASE("spirv-val: subgroup reduction and shuffle") { checkValid(subgroupKernel()); }
TEST_CASE("spirv-val: f16 and i64 arithmetic") { checkValid(f16AndI64Kernel()); }
TEST_CASE("spirv-val: GLSL.std.450 functions") { checkValid(glslKernel()); }

TEST_CASE("spirv-dis: the vector-add module disassembles to what was built") {
  std::string tool = requireTool("spirv-dis");
  if (tool.empty()) return;
  std::string file = writeModule(vectorAddKernel());
  ToolResult r = runTool(tool + " " + file);
  std::filesystem::remove(file);
  INFO(r.output);
  CHECK(r.status == 0);
  for (const char* text : {"OpEntryPoint GLCompute", "OpExecutionMode %main LocalSize 64 1 1", "BuiltIn GlobalInvocationId",
                           "OpFAdd", "OpSelectionMerge", "ArrayStride 4"})
    CHECK(r.output.find(text) != std::string::npos);
}

}  // namespace tj::spirvtest
