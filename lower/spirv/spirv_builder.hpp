// A small SPIR-V module builder: typed ids in, the binary word vector out.
// Enough for Vulkan compute kernels (storage buffers, push constants,
// workgroup memory, barriers, subgroup operations, GLSL.std.450). It emits
// sections in the order the SPIR-V spec requires whatever order calls come in;
// it does not validate (tests run spirv-val on what it produces).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tj::spirv {

using Id = uint32_t;
using Words = std::vector<uint32_t>;

constexpr uint32_t kVersion1_3 = 0x00010300;
constexpr uint32_t kVersion1_5 = 0x00010500;  // what Vulkan 1.2 guarantees

// Opcodes this builder emits, numbered as in the SPIR-V spec.
enum class Op : uint16_t {
  Name = 5, MemberName = 6, Extension = 10, ExtInstImport = 11, ExtInst = 12, MemoryModel = 14, EntryPoint = 15,
  ExecutionMode = 16, Capability = 17, TypeVoid = 19, TypeBool = 20, TypeInt = 21, TypeFloat = 22, TypeVector = 23,
  TypeArray = 28, TypeRuntimeArray = 29, TypeStruct = 30, TypePointer = 32, TypeFunction = 33, ConstantTrue = 41,
  ConstantFalse = 42, Constant = 43, ConstantComposite = 44, Function = 54, FunctionParameter = 55, FunctionEnd = 56,
  FunctionCall = 57, Variable = 59, Load = 61, Store = 62, AccessChain = 65, Decorate = 71, MemberDecorate = 72,
  VectorShuffle = 79, CompositeConstruct = 80, CompositeExtract = 81, CompositeInsert = 82, CopyObject = 83,
  ConvertFToU = 109, ConvertFToS = 110, ConvertSToF = 111, ConvertUToF = 112, UConvert = 113, SConvert = 114,
  FConvert = 115, Bitcast = 124,
  SNegate = 126, FNegate = 127, IAdd = 128, FAdd = 129, ISub = 130, FSub = 131, IMul = 132, FMul = 133, UDiv = 134,
  SDiv = 135, FDiv = 136, UMod = 137, SRem = 138, SMod = 139, FRem = 140, FMod = 141, IsNan = 156, IsInf = 157,
  LogicalEqual = 164, LogicalNotEqual = 165, LogicalOr = 166, LogicalAnd = 167, LogicalNot = 168, Select = 169,
  IEqual = 170, INotEqual = 171, UGreaterThan = 172, SGreaterThan = 173, UGreaterThanEqual = 174,
  SGreaterThanEqual = 175, ULessThan = 176, SLessThan = 177, ULessThanEqual = 178, SLessThanEqual = 179,
  FOrdEqual = 180, FOrdNotEqual = 182, FOrdLessThan = 184, FOrdGreaterThan = 186, FOrdLessThanEqual = 188,
  FOrdGreaterThanEqual = 190, FUnordNotEqual = 183,
  ShiftRightLogical = 194, ShiftRightArithmetic = 195, ShiftLeftLogical = 196, BitwiseOr = 197, BitwiseXor = 198,
  BitwiseAnd = 199, Not = 200,
  ControlBarrier = 224, MemoryBarrier = 225, AtomicExchange = 229, AtomicCompareExchange = 230, AtomicIAdd = 234,
  AtomicSMin = 236, AtomicUMin = 237, AtomicSMax = 238, AtomicUMax = 239,
  Phi = 245, LoopMerge = 246, SelectionMerge = 247, Label = 248, Branch = 249, BranchConditional = 250,
  Return = 253, ReturnValue = 254,
  GroupNonUniformShuffle = 345, GroupNonUniformShuffleXor = 346, GroupNonUniformIAdd = 349,
  GroupNonUniformFAdd = 350, GroupNonUniformSMin = 353, GroupNonUniformUMin = 354, GroupNonUniformFMin = 355, GroupNonUniformSMax = 356,
  GroupNonUniformUMax = 357,
  GroupNonUniformFMax = 358, AtomicFAddEXT = 6035,
};

enum class Capability : uint32_t {
  Shader = 1, Float16 = 9, Float64 = 10, Int64 = 11, Int64Atomics = 12, Int16 = 22, Int8 = 39, GroupNonUniform = 61,
  GroupNonUniformArithmetic = 63, GroupNonUniformShuffle = 65, StorageBuffer16BitAccess = 4433,
  StorageBuffer8BitAccess = 4448, PhysicalStorageBufferAddresses = 5347, AtomicFloat32AddEXT = 6033,
};

enum class StorageClass : uint32_t {
  UniformConstant = 0, Input = 1, Uniform = 2, Output = 3, Workgroup = 4, Private = 6, Function = 7,
  PushConstant = 9, StorageBuffer = 12, PhysicalStorageBuffer = 5349,
};

enum class Decoration : uint32_t {
  Block = 2, ArrayStride = 6, BuiltIn = 11, Restrict = 19, Aliased = 20, NonWritable = 24, NonReadable = 25,
  Binding = 33, DescriptorSet = 34, Offset = 35, NoContraction = 42,
};

enum class BuiltIn : uint32_t {
  NumWorkgroups = 24, WorkgroupId = 26, LocalInvocationId = 27, GlobalInvocationId = 28, LocalInvocationIndex = 29,
  SubgroupSize = 36, SubgroupId = 40, SubgroupLocalInvocationId = 41,
};

// GLSL.std.450 extended instructions.
enum class GlslOp : uint32_t {
  RoundEven = 2, FAbs = 4, SAbs = 5, Floor = 8, Ceil = 9, Sin = 13, Cos = 14, Tanh = 21, Exp = 27, Log = 28, Exp2 = 29, Log2 = 30,
  Sqrt = 31, InverseSqrt = 32, FMin = 37, FMax = 40, Fma = 50,
};

enum class Scope : uint32_t { Device = 1, Workgroup = 2, Subgroup = 3, Invocation = 4 };

namespace semantics {
constexpr uint32_t kAcquire = 0x2;
constexpr uint32_t kAcquireRelease = 0x8;
constexpr uint32_t kUniformMemory = 0x40;
constexpr uint32_t kWorkgroupMemory = 0x100;
}  // namespace semantics

class Module {
 public:
  explicit Module(uint32_t version = kVersion1_5);

  // Declarations; repeats of a capability or an extension are dropped.
  void capability(Capability c);
  void extension(std::string_view name);
  Id glsl();  // the GLSL.std.450 import, created on first use
  void name(Id target, std::string_view name);
  void decorate(Id target, Decoration d, std::initializer_list<uint32_t> literals = {});
  void memberDecorate(Id structType, uint32_t member, Decoration d, std::initializer_list<uint32_t> literals = {});

  // Types. Scalars, vectors, pointers and function types are deduplicated
  // (SPIR-V forbids duplicates); arrays and structs are always new so each
  // can carry its own layout decorations.
  Id typeVoid();
  Id typeBool();
  Id typeInt(uint32_t width, bool isSigned);
  Id typeFloat(uint32_t width);
  Id typeVector(Id component, uint32_t count);
  Id typePointer(StorageClass sc, Id pointee);
  Id typeFunction(Id result, std::initializer_list<Id> params = {});
  Id typeArray(Id element, uint32_t length);
  Id typeRuntimeArray(Id element);
  Id typeStruct(std::initializer_list<Id> members);

  // Constants, deduplicated by type and value. `bits` is the bit pattern of
  // a scalar int or float constant (f16 as its 16 bits).
  Id constant(Id type, uint64_t bits);
  Id constBool(bool value);
  Id constU32(uint32_t value);
  Id constI32(int32_t value);
  Id constF32(float value);

  // Variables. A global one (any class but Function) joins the entry point's
  // interface; a Function one goes to the top of the current function.
  Id variable(Id pointerType, StorageClass sc);
  Id builtInInput(BuiltIn b, Id type);
  // A storage buffer `{ T data[]; }` at (set, binding): the variable and the
  // pointer type of one element, for accessChain(elementPointer, variable, {0, i}).
  struct Buffer {
    Id variable;
    Id elementPointer;
  };
  Buffer storageBuffer(Id elementType, uint32_t stride, uint32_t set, uint32_t binding);
  // A push-constant block of scalar members at the given byte offsets.
  Id pushConstants(std::initializer_list<Id> members, std::initializer_list<uint32_t> offsets);
  // A push-constant block holding one array of `count` elements `stride` bytes apart.
  Id pushConstantArray(Id elementType, uint32_t stride, uint32_t count);

  // Functions. The GLCompute entry point gets LocalSize(x, y, z).
  Id beginFunction(Id resultType, Id functionType);
  void endFunction();
  void entryPoint(Id function, std::string_view name, uint32_t x, uint32_t y = 1, uint32_t z = 1);

  // Blocks and control flow. newLabel() reserves an id; label() opens the block.
  Id newLabel();
  void label(Id id);
  Id currentBlock() const { return block_; }
  void branch(Id target);
  void branchConditional(Id cond, Id ifTrue, Id ifFalse);
  void loopMerge(Id merge, Id continueTarget);
  void selectionMerge(Id merge);
  Id phi(Id type, const std::vector<std::pair<Id, Id>>& incoming);  // (value, predecessor block)
  void returnVoid();

  // Instructions. op() emits any instruction whose operands are all ids
  // (arithmetic, comparisons, conversions, bitcasts, composites). `result`
  // is an id from newId() when a phi had to name it first (a loop's
  // continue value); 0 means a fresh one.
  Id newId() { return fresh(); }
  Id op(Op opcode, Id resultType, std::initializer_list<Id> operands, Id result = 0);
  Id load(Id type, Id pointer);
  void store(Id pointer, Id value);
  Id accessChain(Id pointerType, Id base, std::initializer_list<Id> indices);
  Id select(Id type, Id cond, Id ifTrue, Id ifFalse);
  Id ext(GlslOp f, Id type, std::initializer_list<Id> args);
  void controlBarrier(Scope execution, Scope memory, uint32_t semantics);
  void memoryBarrier(Scope memory, uint32_t semantics);
  Id subgroupShuffle(Id type, Id value, Id lane);
  Id subgroupReduce(Op groupOp, Id type, Id value);  // e.g. GroupNonUniformFAdd with Reduce

  // The module's binary: header then sections in the spec's order.
  Words words() const;

 private:
  Id fresh() { return next_++; }
  Id cachedType(Op op, Words operands);  // operands without the result id
  static void emit(Words& section, Op op, const Words& operands);
  void emitInFunction(Op op, const Words& operands) { emit(body_, op, operands); }

  uint32_t version_;
  Id next_ = 1;
  Id glsl_ = 0;
  std::set<uint32_t> capabilities_;
  std::set<std::string> extensions_;
  struct Entry {
    Id function;
    std::string name;
  };
  std::vector<Entry> entries_;  // emitted by words(), once the interface is known
  Words imports_, executionModes_, debug_, annotations_, globals_, functions_;
  Words locals_, body_;  // the open function's Function variables and blocks
  std::map<Words, Id> types_;
  std::map<std::pair<Id, uint64_t>, Id> constants_;
  std::map<Id, uint32_t> scalarWidth_;
  std::vector<Id> interface_;
  Id block_ = 0;
};

}  // namespace tj::spirv
