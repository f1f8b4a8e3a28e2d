#include "lower/amdgpu/amdgpu.hpp"

#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/TargetParser.h>
#include <llvm/TargetParser/Triple.h>

#include <mutex>
#include <set>

#include "ir/error.hpp"
#include "lower/llvm_gpu/compile.hpp"
#include "lower/llvm_gpu/print_kernel_ir.hpp"

namespace tj::amdgpu {

namespace {

using llvm::Value;
constexpr const char* kTriple = "amdgcn-amd-amdhsa";
constexpr unsigned kGlobal = 1, kShared = 3;

class AmdgpuTarget final : public llvmgpu::LlvmGpuTarget {
 public:
  AmdgpuTarget(std::string dataLayout, int64_t wave) : dataLayout_(std::move(dataLayout)), wave_(wave) {}
  std::string triple() const override { return kTriple; }
  std::string dataLayout() const override { return dataLayout_; }
  unsigned globalAddressSpace() const override { return kGlobal; }
  unsigned sharedAddressSpace() const override { return kShared; }

  // Subnormal f32s kept (lower/math's accurate functions assume them; CDNA and RDNA flush
  // f32 denormals unless asked), and the exact workgroup size, so that LLVM sizes registers for it.
  void declareKernel(llvm::Module& m, llvm::Function& f, int64_t threads) const override {
    for (llvm::Argument& a : f.args())
      if (a.hasByValAttr()) throw Unsupported("llvm gpu: unsupported: a tensor map (Hopper's TMA) on AMDGPU");
    f.setCallingConv(llvm::CallingConv::AMDGPU_KERNEL);
    f.addFnAttr("amdgpu-flat-work-group-size", std::to_string(threads) + "," + std::to_string(threads));
    f.addFnAttr("uniform-work-group-size", "true");
    f.addFnAttr("denormal-fp-math-f32", "ieee,ieee");
    m.addModuleFlag(llvm::Module::Error, "amdhsa_code_object_version", 500);
  }
  Value* threadId(llvm::IRBuilderBase& b) const override {
    return b.CreateIntrinsic(llvm::Intrinsic::amdgcn_workitem_id_x, {}, {});
  }
  Value* workgroupId(llvm::IRBuilderBase& b, int axis) const override {
    static constexpr llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::amdgcn_workgroup_id_x, llvm::Intrinsic::amdgcn_workgroup_id_y,
                                                  llvm::Intrinsic::amdgcn_workgroup_id_z};
    return b.CreateIntrinsic(ids[checkedAxis(axis)], {}, {});
  }
  // The HSA dispatch packet's grid size (in work-items, a u32 at byte 12 + 4 axis) over its
  // workgroup size (a u16 at byte 4 + 2 axis).
  Value* workgroupCount(llvm::IRBuilderBase& b, int axis) const override {
    size_t a = checkedAxis(axis);
    Value* packet = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_dispatch_ptr, {}, {});
    auto field = [&](int64_t at, llvm::Type* t) {
      return b.CreateAlignedLoad(t, b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), packet, uint64_t(at)), llvm::Align(t->getPrimitiveSizeInBits() / 8));
    };
    Value* grid = field(12 + 4 * int64_t(a), b.getInt32Ty());
    Value* group = b.CreateZExt(field(4 + 2 * int64_t(a), b.getInt16Ty()), b.getInt32Ty());
    return b.CreateUDiv(grid, group);
  }
  // OpenCL's barrier: workgroup-scope release, s_barrier, acquire (workgroup memory and global).
  void barrier(llvm::IRBuilderBase& b) const override {
    llvm::SyncScope::ID scope = b.getContext().getOrInsertSyncScopeID("workgroup");
    b.CreateFence(llvm::AtomicOrdering::Release, scope);
    b.CreateIntrinsic(llvm::Intrinsic::amdgcn_s_barrier, {}, {});
    b.CreateFence(llvm::AtomicOrdering::Acquire, scope);
  }
  // ds_bpermute: each lane reads the lane whose byte address (lane * 4) it gives, across the wave.
  Value* shuffleXor(llvm::IRBuilderBase& b, Value* x, int64_t mask, int64_t) const override {
    return permute(b, x, b.CreateXor(lane(b), b.getInt32(uint32_t(mask))));
  }
  // Lane `from` of this lane's cluster of `width` lanes.
  Value* shuffleIdx(llvm::IRBuilderBase& b, Value* x, Value* from, int64_t width) const override {
    Value* cluster = b.CreateAnd(lane(b), b.getInt32(~uint32_t(width - 1)));
    return permute(b, x, b.CreateOr(cluster, b.CreateAnd(from, b.getInt32(uint32_t(width - 1)))));
  }

  // v_mfma_f32_32x32x8{f16,bf16_1k} and v_mfma_f32_16x16x16{f16,bf16_1k} (CDNA, wave64: 4 a
  // and 4 b elements, 16 or 4 accumulators per lane) and v_wmma_f32_16x16x16_{f16,bf16} (RDNA
  // 3, wave32: a row and a column of 16, lanes 16-31 repeating 0-15, 8 accumulators), their
  // registers in layout/'s fragment order. "16x16x16" is MFMA's in wave64, WMMA's in wave32.
  std::vector<Value*> mma(llvm::IRBuilderBase& b, const std::string& instr, DType a, DType bType,
                          const std::vector<Value*>& aRegs, const std::vector<Value*>& bRegs,
                          const std::vector<Value*>& cRegs) const override {
    bool half = a == bType && (a == DType::f16 || a == DType::bf16);
    bool fourEach = aRegs.size() == 4 && bRegs.size() == 4;
    bool mfma32 = instr == "32x32x8" && wave_ == 64 && fourEach && cRegs.size() == 16;
    bool mfma16 = instr == "16x16x16" && wave_ == 64 && fourEach && cRegs.size() == 4;
    bool wmma = instr == "16x16x16" && wave_ == 32 && aRegs.size() == 16 && bRegs.size() == 16 && cRegs.size() == 8;
    if (!half || (!mfma32 && !mfma16 && !wmma))
      throw Unsupported("llvm gpu: unsupported: mma " + instr + " of " + std::string(dtypeName(a)) + " on AMDGPU wave" +
                        std::to_string(wave_));
    bool f16 = a == DType::f16, mfma = mfma32 || mfma16;
    using I = llvm::Intrinsic::ID;
    I id = mfma32   ? (f16 ? I(llvm::Intrinsic::amdgcn_mfma_f32_32x32x8f16) : I(llvm::Intrinsic::amdgcn_mfma_f32_32x32x8bf16_1k))
           : mfma16 ? (f16 ? I(llvm::Intrinsic::amdgcn_mfma_f32_16x16x16f16) : I(llvm::Intrinsic::amdgcn_mfma_f32_16x16x16bf16_1k))
                    : (f16 ? I(llvm::Intrinsic::amdgcn_wmma_f32_16x16x16_f16) : I(llvm::Intrinsic::amdgcn_wmma_f32_16x16x16_bf16));
    std::vector<Value*> args = {vector(b, a, aRegs), vector(b, a, bRegs), vector(b, DType::f32, cRegs)};
    if (mfma) args.insert(args.end(), {b.getInt32(0), b.getInt32(0), b.getInt32(0)});  // no broadcast of blocks
    Value* d = wmma ? b.CreateIntrinsic(id, {args[2]->getType(), args[0]->getType()}, args) : b.CreateIntrinsic(id, {}, args);
    std::vector<Value*> out;
    for (unsigned r = 0; r < cRegs.size(); ++r) out.push_back(b.CreateExtractElement(d, uint64_t(r)));
    return out;
  }

 private:
  static size_t checkedAxis(int axis) {
    if (axis < 0 || axis > 2) throw Unsupported("llvm gpu: unsupported: grid axis " + std::to_string(axis));
    return size_t(axis);
  }
  // This lane's index in the wave: mbcnt counts the set mask bits below it.
  Value* lane(llvm::IRBuilderBase& b) const {
    Value* low = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_mbcnt_lo, {}, {b.getInt32(~0u), b.getInt32(0)});
    return wave_ == 32 ? low : b.CreateIntrinsic(llvm::Intrinsic::amdgcn_mbcnt_hi, {}, {b.getInt32(~0u), low});
  }
  static Value* permute(llvm::IRBuilderBase& b, Value* x, Value* from) {
    return b.CreateIntrinsic(llvm::Intrinsic::amdgcn_ds_bpermute, {}, {b.CreateShl(from, 2), x});
  }
  // Registers as the intrinsic's vector operand: f16 as half, bf16 (f32 values exactly bf16)
  // as their high 16 bits, f32 as float.
  static Value* vector(llvm::IRBuilderBase& b, DType t, const std::vector<Value*>& regs) {
    llvm::Type* element = t == DType::f16 ? b.getHalfTy() : t == DType::bf16 ? b.getInt16Ty() : b.getFloatTy();
    Value* v = llvm::PoisonValue::get(llvm::FixedVectorType::get(element, unsigned(regs.size())));
    for (size_t r = 0; r < regs.size(); ++r) {
      Value* x = t != DType::bf16 ? regs[r] : b.CreateTrunc(b.CreateLShr(b.CreateBitCast(regs[r], b.getInt32Ty()), 16), b.getInt16Ty());
      v = b.CreateInsertElement(v, x, uint64_t(r));
    }
    return v;
  }

  std::string dataLayout_;
  int64_t wave_;
};

std::unique_ptr<llvm::TargetMachine> machineFor(const std::string& arch) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
  });
  if (llvm::AMDGPU::parseArchAMDGCN(arch) == llvm::AMDGPU::GK_NONE)
    throw Error("amdgpu: LLVM " LLVM_VERSION_STRING " does not know the target '" + arch +
                "' (gfx942, gfx1100, gfx1151, ...); the HIP device compiles for it through ROCm's comgr where one knows it");
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, error);
  if (!target) throw Unsupported("amdgpu: LLVM has no AMDGPU target: " + error);
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      kTriple, arch, "", llvm::TargetOptions(), std::nullopt, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
}

AmdgpuTarget targetFor(const gpu::KernelFunction& f, const std::string& arch, const llvm::TargetMachine& tm) {
  int64_t wave = waveSize(arch);
  if (f.subgroupSize != wave)
    throw Error("amdgpu: the kernel was lowered for subgroups of " + std::to_string(f.subgroupSize) + " lanes; " + arch +
                " runs waves of " + std::to_string(wave));
  return AmdgpuTarget(tm.createDataLayout().getStringRepresentation(), wave);
}

// The machine whose IR-level passes and data layout the module for `arch` gets: arch's own, or
// where LLVM does not know it (the module goes to comgr as bitcode), the processor of its layouts.
std::unique_ptr<llvm::TargetMachine> irMachineFor(const std::string& arch) {
  return machineFor(llvmKnows(arch) ? arch : layoutTargetName(arch));
}

std::string emit(const gpu::KernelFunction& f, const std::string& arch, llvmgpu::FileKind kind) {
  std::unique_ptr<llvm::TargetMachine> tm = machineFor(arch);
  llvm::LLVMContext c;
  std::unique_ptr<llvm::Module> m = llvmgpu::printLlvm(f, targetFor(f, arch, *tm), c);
  llvmgpu::optimize(*m, *tm);
  return llvmgpu::emit(*m, *tm, kind, "amdgpu");
}

}  // namespace

std::string layoutTargetName(const std::string& arch) {
  static const std::set<std::string> cdna = {"gfx90a", "gfx940", "gfx941", "gfx942", "gfx950"};
  static const std::set<std::string> rdna3 = {"gfx1100", "gfx1101", "gfx1102", "gfx1103",
                                              "gfx1150", "gfx1151", "gfx1152", "gfx1153"};
  if (cdna.contains(arch)) return "gfx942";
  if (rdna3.contains(arch)) return "gfx1100";
  throw Unsupported("amdgpu: unsupported: " + arch + "; tilejit runs CDNA 2-4 (gfx90a, gfx940-gfx942, gfx950: MFMA) and " +
                    "RDNA 3/3.5 (gfx1100-gfx1103, gfx1150-gfx1153: WMMA)");
}

bool llvmKnows(const std::string& arch) { return llvm::AMDGPU::parseArchAMDGCN(arch) != llvm::AMDGPU::GK_NONE; }

std::string llvmName() { return "LLVM " LLVM_VERSION_STRING; }

std::vector<char> compileBitcode(const gpu::KernelFunction& f, const std::string& arch) {
  std::unique_ptr<llvm::TargetMachine> tm = irMachineFor(arch);
  llvm::LLVMContext c;
  std::unique_ptr<llvm::Module> m = llvmgpu::printLlvm(f, targetFor(f, arch, *tm), c);
  llvmgpu::optimize(*m, *tm);
  for (llvm::Function& fn : *m)
    if (!fn.isDeclaration()) fn.addFnAttr("target-cpu", arch);
  llvm::SmallString<0> bytes;
  llvm::raw_svector_ostream out(bytes);
  llvm::WriteBitcodeToFile(*m, out);
  return {bytes.begin(), bytes.end()};
}

int64_t waveSize(const std::string& arch) { return arch.rfind("gfx9", 0) == 0 ? 64 : 32; }

std::string printAssembly(const gpu::KernelFunction& f, const std::string& arch) {
  return emit(f, arch, llvmgpu::FileKind::assembly);
}

std::vector<char> compileObject(const gpu::KernelFunction& f, const std::string& arch) {
  std::string bytes = emit(f, arch, llvmgpu::FileKind::object);
  return {bytes.begin(), bytes.end()};
}

std::string printLlvmIr(const gpu::KernelFunction& f, const std::string& arch) {
  std::unique_ptr<llvm::TargetMachine> tm = irMachineFor(arch);
  llvm::LLVMContext c;
  std::string text;
  llvm::raw_string_ostream out(text);
  llvmgpu::printLlvm(f, targetFor(f, arch, *tm), c)->print(out, nullptr);
  return text;
}

}  // namespace tj::amdgpu
