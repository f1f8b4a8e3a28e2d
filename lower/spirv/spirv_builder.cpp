#include "lower/spirv/spirv_builder.hpp"

#include <bit>
#include <cstring>

namespace tj::spirv {

namespace {

constexpr uint32_t kMagic = 0x07230203;
constexpr uint32_t kExecutionModelGLCompute = 5;
constexpr uint32_t kExecutionModeLocalSize = 17;
constexpr uint32_t kAddressingLogical = 0;
constexpr uint32_t kMemoryModelGLSL450 = 1;
constexpr uint32_t kGroupOperationReduce = 0;

constexpr uint32_t u(auto e) { return static_cast<uint32_t>(e); }

// A literal string: UTF-8, NUL-terminated, zero-padded to whole words.
void appendString(Words& out, std::string_view s) {
  Words packed(s.size() / 4 + 1, 0);
  std::memcpy(packed.data(), s.data(), s.size());
  out.insert(out.end(), packed.begin(), packed.end());
}

Words withString(Words head, std::string_view s, const Words& tail = {}) {
  appendString(head, s);
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

void append(Words& out, const Words& more) { out.insert(out.end(), more.begin(), more.end()); }

}  // namespace

Module::Module(uint32_t version) : version_(version) {}

void Module::emit(Words& section, Op op, const Words& operands) {
  section.push_back(static_cast<uint32_t>(operands.size() + 1) << 16 | u(op));
  append(section, operands);
}

// ---- declarations ----

void Module::capability(Capability c) { capabilities_.insert(u(c)); }

void Module::extension(std::string_view name) { extensions_.insert(std::string(name)); }

Id Module::glsl() {
  if (!glsl_) {
    glsl_ = fresh();
    emit(imports_, Op::ExtInstImport, withString({glsl_}, "GLSL.std.450"));
  }
  return glsl_;
}

void Module::name(Id target, std::string_view n) { emit(debug_, Op::Name, withString({target}, n)); }

void Module::decorate(Id target, Decoration d, std::initializer_list<uint32_t> literals) {
  Words ops{target, u(d)};
  ops.insert(ops.end(), literals);
  emit(annotations_, Op::Decorate, ops);
}

void Module::memberDecorate(Id structType, uint32_t member, Decoration d, std::initializer_list<uint32_t> literals) {
  Words ops{structType, member, u(d)};
  ops.insert(ops.end(), literals);
  emit(annotations_, Op::MemberDecorate, ops);
}

// ---- types ----

Id Module::cachedType(Op op, Words operands) {
  Words key = operands;
  key.insert(key.begin(), u(op));
  if (auto it = types_.find(key); it != types_.end()) return it->second;
  Id id = fresh();
  operands.insert(operands.begin(), id);
  emit(globals_, op, operands);
  types_.emplace(std::move(key), id);
  return id;
}

Id Module::typeVoid() { return cachedType(Op::TypeVoid, {}); }
Id Module::typeBool() { return cachedType(Op::TypeBool, {}); }

Id Module::typeInt(uint32_t width, bool isSigned) {
  Id id = cachedType(Op::TypeInt, {width, isSigned ? 1u : 0u});
  scalarWidth_[id] = width;
  return id;
}

Id Module::typeFloat(uint32_t width) {
  Id id = cachedType(Op::TypeFloat, {width});
  scalarWidth_[id] = width;
  return id;
}

Id Module::typeVector(Id component, uint32_t count) { return cachedType(Op::TypeVector, {component, count}); }

Id Module::typePointer(StorageClass sc, Id pointee) { return cachedType(Op::TypePointer, {u(sc), pointee}); }

Id Module::typeFunction(Id result, std::initializer_list<Id> params) {
  Words ops{result};
  ops.insert(ops.end(), params);
  return cachedType(Op::TypeFunction, ops);
}

Id Module::typeArray(Id element, uint32_t length) {
  Id lengthId = constU32(length);
  Id id = fresh();
  emit(globals_, Op::TypeArray, {id, element, lengthId});
  return id;
}

Id Module::typeRuntimeArray(Id element) {
  Id id = fresh();
  emit(globals_, Op::TypeRuntimeArray, {id, element});
  return id;
}

Id Module::typeStruct(std::initializer_list<Id> members) {
  Id id = fresh();
  Words ops{id};
  ops.insert(ops.end(), members);
  emit(globals_, Op::TypeStruct, ops);
  return id;
}

// ---- constants ----

Id Module::constant(Id type, uint64_t bits) {
  auto key = std::pair{type, bits};
  if (auto it = constants_.find(key); it != constants_.end()) return it->second;
  Id id = fresh();
  Words ops{type, id, static_cast<uint32_t>(bits)};
  if (scalarWidth_[type] == 64) ops.push_back(static_cast<uint32_t>(bits >> 32));
  emit(globals_, Op::Constant, ops);
  constants_.emplace(key, id);
  return id;
}

Id Module::constBool(bool value) {
  Id type = typeBool();
  auto key = std::pair{type, uint64_t{value}};
  if (auto it = constants_.find(key); it != constants_.end()) return it->second;
  Id id = fresh();
  emit(globals_, value ? Op::ConstantTrue : Op::ConstantFalse, {type, id});
  constants_.emplace(key, id);
  return id;
}

Id Module::constU32(uint32_t value) { return constant(typeInt(32, false), value); }
Id Module::constI32(int32_t value) { return constant(typeInt(32, true), static_cast<uint32_t>(value)); }
Id Module::constF32(float value) { return constant(typeFloat(32), std::bit_cast<uint32_t>(value)); }

// ---- variables ----

Id Module::variable(Id pointerType, StorageClass sc) {
  Id id = fresh();
  if (sc == StorageClass::Function) {
    emit(locals_, Op::Variable, {pointerType, id, u(sc)});
    return id;
  }
  emit(globals_, Op::Variable, {pointerType, id, u(sc)});
  // Before SPIR-V 1.4 the interface lists only Input and Output variables.
  if (version_ >= 0x00010400 || sc == StorageClass::Input || sc == StorageClass::Output) interface_.push_back(id);
  return id;
}

Id Module::builtInInput(BuiltIn b, Id type) {
  Id var = variable(typePointer(StorageClass::Input, type), StorageClass::Input);
  decorate(var, Decoration::BuiltIn, {u(b)});
  return var;
}

Module::Buffer Module::storageBuffer(Id elementType, uint32_t stride, uint32_t set, uint32_t binding) {
  Id array = typeRuntimeArray(elementType);
  decorate(array, Decoration::ArrayStride, {stride});
  Id block = typeStruct({array});
  decorate(block, Decoration::Block);
  memberDecorate(block, 0, Decoration::Offset, {0});
  Id var = variable(typePointer(StorageClass::StorageBuffer, block), StorageClass::StorageBuffer);
  decorate(var, Decoration::DescriptorSet, {set});
  decorate(var, Decoration::Binding, {binding});
  return {var, typePointer(StorageClass::StorageBuffer, elementType)};
}

Id Module::pushConstants(std::initializer_list<Id> members, std::initializer_list<uint32_t> offsets) {
  Id block = typeStruct(members);
  decorate(block, Decoration::Block);
  uint32_t member = 0;
  for (uint32_t offset : offsets) memberDecorate(block, member++, Decoration::Offset, {offset});
  return variable(typePointer(StorageClass::PushConstant, block), StorageClass::PushConstant);
}

Id Module::pushConstantArray(Id elementType, uint32_t stride, uint32_t count) {
  Id array = typeArray(elementType, std::max<uint32_t>(count, 1));
  decorate(array, Decoration::ArrayStride, {stride});
  return pushConstants({array}, {0});
}

// ---- functions ----

Id Module::beginFunction(Id resultType, Id functionType) {
  Id id = fresh();
  emit(functions_, Op::Function, {resultType, id, 0 /*FunctionControl None*/, functionType});
  return id;
}

// Function variables must open the first block, so they are spliced in
// after its label (the first two words of the body).
void Module::endFunction() {
  if (body_.size() >= 2) {
    append(functions_, Words(body_.begin(), body_.begin() + 2));
    append(functions_, locals_);
    append(functions_, Words(body_.begin() + 2, body_.end()));
  }
  emit(functions_, Op::FunctionEnd, {});
  body_.clear();
  locals_.clear();
  block_ = 0;
}

void Module::entryPoint(Id function, std::string_view n, uint32_t x, uint32_t y, uint32_t z) {
  entries_.push_back({function, std::string(n)});
  emit(executionModes_, Op::ExecutionMode, {function, kExecutionModeLocalSize, x, y, z});
}

// ---- control flow ----

Id Module::newLabel() { return fresh(); }

void Module::label(Id id) {
  emitInFunction(Op::Label, {id});
  block_ = id;
}

void Module::branch(Id target) { emitInFunction(Op::Branch, {target}); }

void Module::branchConditional(Id cond, Id ifTrue, Id ifFalse) {
  emitInFunction(Op::BranchConditional, {cond, ifTrue, ifFalse});
}

void Module::loopMerge(Id merge, Id continueTarget) {
  emitInFunction(Op::LoopMerge, {merge, continueTarget, 0 /*LoopControl None*/});
}

void Module::selectionMerge(Id merge) { emitInFunction(Op::SelectionMerge, {merge, 0 /*SelectionControl None*/}); }

Id Module::phi(Id type, const std::vector<std::pair<Id, Id>>& incoming) {
  Id id = fresh();
  Words ops{type, id};
  for (auto [value, block] : incoming) ops.insert(ops.end(), {value, block});
  emitInFunction(Op::Phi, ops);
  return id;
}

void Module::returnVoid() { emitInFunction(Op::Return, {}); }

// ---- instructions ----

Id Module::op(Op opcode, Id resultType, std::initializer_list<Id> operands, Id result) {
  Id id = result ? result : fresh();
  Words ops{resultType, id};
  ops.insert(ops.end(), operands);
  emitInFunction(opcode, ops);
  return id;
}

Id Module::load(Id type, Id pointer) { return op(Op::Load, type, {pointer}); }

void Module::store(Id pointer, Id value) { emitInFunction(Op::Store, {pointer, value}); }

Id Module::accessChain(Id pointerType, Id base, std::initializer_list<Id> indices) {
  Words ops{base};
  ops.insert(ops.end(), indices);
  Id id = fresh();
  ops.insert(ops.begin(), {pointerType, id});
  emitInFunction(Op::AccessChain, ops);
  return id;
}

Id Module::select(Id type, Id cond, Id ifTrue, Id ifFalse) { return op(Op::Select, type, {cond, ifTrue, ifFalse}); }

Id Module::ext(GlslOp f, Id type, std::initializer_list<Id> args) {
  Words ops{type, fresh(), glsl(), u(f)};
  ops.insert(ops.end(), args);
  emitInFunction(Op::ExtInst, ops);
  return ops[1];
}

void Module::controlBarrier(Scope execution, Scope memory, uint32_t sem) {
  emitInFunction(Op::ControlBarrier, {constU32(u(execution)), constU32(u(memory)), constU32(sem)});
}

void Module::memoryBarrier(Scope memory, uint32_t sem) {
  emitInFunction(Op::MemoryBarrier, {constU32(u(memory)), constU32(sem)});
}

Id Module::subgroupShuffle(Id type, Id value, Id lane) {
  capability(Capability::GroupNonUniformShuffle);
  return op(Op::GroupNonUniformShuffle, type, {constU32(u(Scope::Subgroup)), value, lane});
}

Id Module::subgroupReduce(Op groupOp, Id type, Id value) {
  capability(Capability::GroupNonUniformArithmetic);
  Id id = fresh();
  emitInFunction(groupOp, {type, id, constU32(u(Scope::Subgroup)), kGroupOperationReduce, value});
  return id;
}

// ---- output ----

Words Module::words() const {
  Words out{kMagic, version_, 0 /*generator*/, next_ /*id bound*/, 0 /*schema*/};
  for (uint32_t c : capabilities_) emit(out, Op::Capability, {c});
  for (const std::string& e : extensions_) emit(out, Op::Extension, withString({}, e));
  append(out, imports_);
  emit(out, Op::MemoryModel, {kAddressingLogical, kMemoryModelGLSL450});
  for (const Entry& e : entries_)
    emit(out, Op::EntryPoint, withString({kExecutionModelGLCompute, e.function}, e.name, interface_));
  for (const Words* section : {&executionModes_, &debug_, &annotations_, &globals_, &functions_}) append(out, *section);
  return out;
}

}  // namespace tj::spirv
