#include "lower/ptx/nvptx.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <bit>
#include <mutex>

#include "ir/error.hpp"
#include "lower/llvm_gpu/compile.hpp"
#include "lower/llvm_gpu/print_kernel_ir.hpp"

namespace tj::ptx {

namespace {

using llvm::Value;
constexpr const char* kTriple = "nvptx64-nvidia-cuda";
constexpr unsigned kGlobal = 1, kShared = 3;

class NvptxTarget final : public llvmgpu::LlvmGpuTarget {
 public:
  // `sm`: the architecture's number (90 for sm_90a), which picks the conversions it has.
  NvptxTarget(std::string dataLayout, int sm) : dataLayout_(std::move(dataLayout)), sm_(sm) {}
  std::string triple() const override { return kTriple; }
  std::string dataLayout() const override { return dataLayout_; }
  unsigned globalAddressSpace() const override { return kGlobal; }
  unsigned sharedAddressSpace() const override { return kShared; }

  void declareKernel(llvm::Module& m, llvm::Function& f, int64_t threads) const override {
    llvm::LLVMContext& c = m.getContext();
    auto* i32 = llvm::Type::getInt32Ty(c);
    llvm::NamedMDNode* annotations = m.getOrInsertNamedMetadata("nvvm.annotations");
    auto entry = [&](const char* key, int64_t value) {
      annotations->addOperand(llvm::MDNode::get(c, {llvm::ValueAsMetadata::get(&f), llvm::MDString::get(c, key),
                                                    llvm::ValueAsMetadata::get(llvm::ConstantInt::get(i32, value))}));
    };
    entry("kernel", 1);
    entry("maxntidx", threads);
    // byval parameters (tensor maps) are __grid_constant__: read in the parameter space, never
    // copied to local memory (their address is what cp.async.bulk.tensor takes).
    std::vector<llvm::Metadata*> constants;
    for (llvm::Argument& a : f.args())
      if (a.hasByValAttr()) constants.push_back(llvm::ValueAsMetadata::get(llvm::ConstantInt::get(i32, a.getArgNo() + 1)));
    if (!constants.empty())
      annotations->addOperand(llvm::MDNode::get(c, {llvm::ValueAsMetadata::get(&f), llvm::MDString::get(c, "grid_constant"),
                                                    llvm::MDNode::get(c, constants)}));
  }
  Value* threadId(llvm::IRBuilderBase& b) const override {
    return b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}, {});
  }
  Value* workgroupId(llvm::IRBuilderBase& b, int axis) const override {
    static constexpr llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                                  llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                                  llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
    return b.CreateIntrinsic(ids[checkedAxis(axis)], {}, {});
  }
  Value* workgroupCount(llvm::IRBuilderBase& b, int axis) const override {
    static constexpr llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x,
                                                  llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y,
                                                  llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z};
    return b.CreateIntrinsic(ids[checkedAxis(axis)], {}, {});
  }
  void barrier(llvm::IRBuilderBase& b) const override { b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); }
  void namedBarrier(llvm::IRBuilderBase& b, int64_t id, int64_t threads, bool arrive) const override {
    if (arrive)  // LLVM has no intrinsic for it
      callAsm(b, "barrier.arrive " + std::to_string(id) + ", " + std::to_string(threads) + ";", "~{memory}", {}, {});
    else
      b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier_sync_cnt, {}, {b.getInt32(uint32_t(id)), b.getInt32(uint32_t(threads))});
  }
  // setmaxnreg is sm_90a's (and PTX 8.0's), as wgmma is.
  void setMaxRegisters(llvm::IRBuilderBase& b, int64_t count, bool grow) const override {
    if (sm_ < 90) return LlvmGpuTarget::setMaxRegisters(b, count, grow);  // throws
    b.CreateIntrinsic(grow ? llvm::Intrinsic::nvvm_setmaxnreg_inc_sync_aligned_u32
                           : llvm::Intrinsic::nvvm_setmaxnreg_dec_sync_aligned_u32,
                      {}, {b.getInt32(uint32_t(count))});
  }
  // Every lane of the warp takes part (the kernel IR's shuffles are warp-uniform).
  Value* shuffleXor(llvm::IRBuilderBase& b, Value* x, int64_t mask, int64_t width) const override {
    return b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, {},
                             {b.getInt32(0xffffffffu), x, b.getInt32(uint32_t(mask)), b.getInt32(clamp(width))});
  }
  Value* shuffleIdx(llvm::IRBuilderBase& b, Value* x, Value* lane, int64_t width) const override {
    return b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_idx_i32, {},
                             {b.getInt32(0xffffffffu), x, lane, b.getInt32(clamp(width))});
  }
  // prmt's default mode: a selector nibble's bit 3 (replicate the sign) cleared.
  Value* bytePermute(llvm::IRBuilderBase& b, Value* lo, Value* hi, Value* selector) const override {
    return b.CreateIntrinsic(llvm::Intrinsic::nvvm_prmt, {}, {lo, hi, b.CreateAnd(selector, 0x7777)});
  }

  // mma.sync row.col: m16n8k16 with f32 accumulators, f16 operands in pairs (<2 x half>) and
  // bf16 operands as the bits of pairs (i32); m16n8k32 with i32 accumulators, i8 (or u8 x i8)
  // operands four to a register, or with f32 accumulators and 8-bit float codes four to a
  // register (sm_89).
  std::vector<Value*> mma(llvm::IRBuilderBase& b, const std::string& instr, DType a, DType bType,
                          const std::vector<Value*>& aRegs, const std::vector<Value*>& bRegs,
                          const std::vector<Value*>& cRegs) const override {
    bool half = instr == "m16n8k16" && (a == DType::f16 || a == DType::bf16) && aRegs.size() == 8 && bRegs.size() == 4;
    bool bytes = instr == "m16n8k32" && aRegs.size() == 16 && bRegs.size() == 8;
    bool float8 = bytes && isFloat8(a) && isFloat8(bType);
    bool u8TimesI8 = a == DType::u8 && bType == DType::i8;
    bytes = bytes && (float8 || a == DType::i8 || u8TimesI8);
    if ((a != bType && !float8 && !u8TimesI8) || (!half && !bytes) || cRegs.size() != 4)
      throw Unsupported("llvm gpu: unsupported: mma " + instr + " of " + std::string(dtypeName(a)) + " on NVPTX");
    auto packed = [&](const std::vector<Value*>& regs) {
      std::vector<Value*> out;
      size_t per = half ? 2 : 4;
      for (size_t r = 0; r < regs.size(); r += per)
        out.push_back(half ? pack(b, a, regs[r], regs[r + 1]) : packBytes(b, {regs.begin() + ptrdiff_t(r), regs.begin() + ptrdiff_t(r + 4)}));
      return out;
    };
    std::vector<Value*> args = packed(aRegs), bs = packed(bRegs);
    args.insert(args.end(), bs.begin(), bs.end());
    args.insert(args.end(), cRegs.begin(), cRegs.end());
    if (float8) return float8Mma(b, a, bType, args);
    auto id = u8TimesI8 ? llvm::Intrinsic::nvvm_mma_m16n8k32_row_col_u8_s8
              : bytes   ? llvm::Intrinsic::nvvm_mma_m16n8k32_row_col_s8
              : a == DType::f16 ? llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_f32_f32
                                : llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_bf16;
    Value* d = b.CreateIntrinsic(id, {}, args);
    std::vector<Value*> out;
    for (unsigned r = 0; r < 4; ++r) out.push_back(b.CreateExtractValue(d, r));
    return out;
  }

  // LLVM 19 has no intrinsic for it: inline PTX (ISA 8.4), 4 + 2 code words and 4 f32s in.
  static std::vector<Value*> float8Mma(llvm::IRBuilderBase& b, DType a, DType bType, const std::vector<Value*>& args) {
    std::string text = "mma.sync.aligned.m16n8k32.row.col.f32." + ptxType(a) + "." + ptxType(bType) +
                       ".f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};";
    Value* d = callAsm(b, text, "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f", std::vector<llvm::Type*>(4, b.getFloatTy()), args, false);
    std::vector<Value*> out;
    for (unsigned r = 0; r < 4; ++r) out.push_back(b.CreateExtractValue(d, r));
    return out;
  }

  std::vector<Value*> loadMatrix(llvm::IRBuilderBase& b, Value* row, int64_t num, bool trans) const override {
    using I = llvm::Intrinsic::ID;
    static constexpr I plain[] = {llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x1_b16,
                                  llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_b16,
                                  llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16};
    static constexpr I transposed[] = {llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x1_trans_b16,
                                       llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_trans_b16,
                                       llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16};
    if (num != 1 && num != 2 && num != 4) throw Unsupported("llvm gpu: unsupported: ldmatrix of " + std::to_string(num) + " matrices");
    size_t which = size_t(std::countr_zero(uint64_t(num)));
    Value* d = b.CreateIntrinsic((trans ? transposed : plain)[which], {row->getType()}, {row});
    if (num == 1) return {d};
    std::vector<Value*> out;
    for (unsigned r = 0; r < unsigned(num); ++r) out.push_back(b.CreateExtractValue(d, r));
    return out;
  }

  // wgmma.mma_async m64nNk16 (f16, bf16) or m64nNk32 (e4m3, e5m2: both K-major, no trans
  // operands) into f32 from matrix descriptors (PTX ISA 9.7.15.5.1.2.2), a 16-bit a also from four
  // registers of pairs, as inline PTX: LLVM 19 has no intrinsic. scale-d is 1: c is always added
  // (zeros start a sum).
  std::vector<Value*> warpgroupMma(llvm::IRBuilderBase& b, int64_t n, DType a, DType bType, const WarpgroupOperand* aShared,
                                   const std::vector<Value*>& aWords, const WarpgroupOperand& bOperand,
                                   const std::vector<Value*>& c) const override {
    bool half = a == bType && (a == DType::f16 || a == DType::bf16), bytes = isFloat8(a) && isFloat8(bType);
    if ((!half && !bytes) || int64_t(c.size()) != n / 2 || (!aShared && aWords.size() != 4))
      throw Unsupported("llvm gpu: unsupported: wgmma m64n" + std::to_string(n) + " of " + std::string(dtypeName(a)) + " and " +
                        std::string(dtypeName(bType)));
    std::string shape = "m64n" + std::to_string(n) + (half ? "k16" : "k32"), outputs, constraints;
    for (int64_t r = 0; r < n / 2; ++r) {
      outputs += (r ? ", $" : "$") + std::to_string(r);
      constraints += "=f,";
    }
    for (int64_t r = 0; r < n / 2; ++r) constraints += std::to_string(r) + ",";
    std::vector<Value*> args = c;
    std::string aText;
    if (aShared) {
      aText = "$" + std::to_string(n);
      args.push_back(descriptor(b, *aShared));
      constraints += "l,";
    } else {
      for (size_t w = 0; w < 4; ++w) {
        aText += (w ? ", $" : "{$") + std::to_string(size_t(n) + w);
        args.push_back(aWords[w]);
        constraints += "r,";
      }
      aText += "}";
    }
    size_t next = size_t(n) + args.size() - c.size();  // n / 2 results and n / 2 tied inputs come first
    std::string bText = "$" + std::to_string(next), scale = "$" + std::to_string(next + 1);
    args.push_back(descriptor(b, bOperand));
    args.push_back(b.getInt32(1));
    std::string trans = !half ? "" : (aShared ? ", " + std::to_string(int(aShared->trans)) : "") + ", " + std::to_string(int(bOperand.trans));
    std::string text = "{ .reg .pred p; setp.ne.b32 p, " + scale + ", 0; wgmma.mma_async.sync.aligned." + shape + ".f32." +
                       ptxType(a) + "." + ptxType(bType) + " {" + outputs + "}, " + aText + ", " + bText + ", p, 1, 1" + trans + "; }";
    Value* d = callAsm(b, text, constraints + "l,r", std::vector<llvm::Type*>(size_t(n / 2), b.getFloatTy()), args);
    std::vector<Value*> out;
    for (unsigned r = 0; r < unsigned(n / 2); ++r) out.push_back(b.CreateExtractValue(d, r));
    return out;
  }
  // ex2.approx.ftz.f32: one MUFU.EX2 (without ftz, ptxas brackets it with a range check and two
  // multiplies to keep subnormal results, which the approx contract lets go to 0).
  Value* approxExp2(llvm::IRBuilderBase& b, Value* x, double scale) const override {
    Value* f = b.CreateFPExt(x, b.getFloatTy());  // f16 widened exactly; an f32 as it is
    if (scale != 1.0) f = b.CreateFMul(f, llvm::ConstantFP::get(b.getFloatTy(), scale));
    return b.CreateIntrinsic(llvm::Intrinsic::nvvm_ex2_approx_ftz_f, {}, {f});
  }
  // cvt.rn.f16x2.f32 / cvt.rn.bf16x2.f32 (sm_80): one F2FP for two roundings. Their NaN is the
  // canonical positive one, so each value's sign bit is or-ed in, as single roundings do: prmt
  // gathers the f32s' top bytes into the halves' top bytes, lop3 ors their sign bits (a | b & c).
  std::vector<Value*> roundPair(llvm::IRBuilderBase& b, DType t, Value* lo, Value* hi) const override {
    if (t != DType::f16 && t != DType::bf16) return {};
    std::string text = std::string("{ .reg .b32 signs; cvt.rn.") + (t == DType::f16 ? "f16x2" : "bf16x2") +
                       ".f32 $0, $2, $1; prmt.b32 signs, $1, $2, 0x7030; lop3.b32 $0, $0, signs, 0x80008000, 0xf8; }";
    Value* word = callAsm(b, text, "=r,f,f", {b.getInt32Ty()}, {lo, hi}, false);
    if (t == DType::f16) {
      Value* pair = b.CreateBitCast(word, llvm::FixedVectorType::get(b.getHalfTy(), 2));
      return {b.CreateExtractElement(pair, uint64_t(0)), b.CreateExtractElement(pair, uint64_t(1))};
    }
    return {b.CreateBitCast(b.CreateShl(word, 16), b.getFloatTy()), b.CreateBitCast(b.CreateAnd(word, 0xffff0000u), b.getFloatTy())};
  }
  // cvt.rn.satfinite.e4m3x2.f32 / .e5m2x2 (sm_89): one F2FP for two roundings, hi's code in the
  // upper byte.
  std::vector<Value*> saturatedFloat8Pair(llvm::IRBuilderBase& b, DType t, Value* lo, Value* hi) const override {
    if (sm_ < 89 || !isFloat8(t)) return {};
    std::string text = std::string("cvt.rn.satfinite.") + (t == DType::f8e4m3 ? "e4m3x2" : "e5m2x2") + ".f32 $0, $2, $1;";
    Value* pair = callAsm(b, text, "=h,f,f", {b.getInt16Ty()}, {lo, hi}, false);
    return {b.CreateTrunc(pair, b.getInt8Ty()), b.CreateTrunc(b.CreateLShr(pair, 8), b.getInt8Ty())};
  }
  std::vector<Value*> warpgroupFragmentA(llvm::IRBuilderBase& b, DType a, const std::vector<Value*>& registers) const override {
    std::vector<Value*> words;
    for (size_t r = 0; r + 1 < registers.size(); r += 2) {
      Value* pair = pack(b, a, registers[r], registers[r + 1]);
      words.push_back(pair->getType()->isIntegerTy() ? pair : b.CreateBitCast(pair, b.getInt32Ty()));
    }
    return words;
  }
  void warpgroupFence(llvm::IRBuilderBase& b) const override { callAsm(b, "wgmma.fence.sync.aligned;", "", {}, {}); }
  void warpgroupCommit(llvm::IRBuilderBase& b) const override { callAsm(b, "wgmma.commit_group.sync.aligned;", "", {}, {}); }
  // The values pass through the asm (tied registers), so no read of them moves above the wait.
  std::vector<Value*> warpgroupWait(llvm::IRBuilderBase& b, int64_t pending, const std::vector<Value*>& values) const override {
    std::string constraints;
    std::vector<llvm::Type*> types;
    for (size_t r = 0; r < values.size(); ++r) {
      if (!values[r]->getType()->isFloatTy()) throw Unsupported("llvm gpu: unsupported: wgmma_wait of a non-f32 value");
      constraints += "=f,";
      types.push_back(b.getFloatTy());
    }
    for (size_t r = 0; r < values.size(); ++r) constraints += std::to_string(r) + (r + 1 < values.size() ? "," : "");
    Value* d = callAsm(b, "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";", constraints, types, values);
    std::vector<Value*> out;
    for (unsigned r = 0; r < unsigned(values.size()); ++r) out.push_back(values.size() == 1 ? d : b.CreateExtractValue(d, r));
    return out;
  }
  void fenceAsyncShared(llvm::IRBuilderBase& b) const override { callAsm(b, "fence.proxy.async.shared::cta;", "", {}, {}); }

  // The init is released to the async proxy (the TMA unit completes transactions on it) as
  // CUTLASS does; a workgroup barrier after it orders it before the other threads' use.
  void mbarrierInit(llvm::IRBuilderBase& b, Value* barrier, int64_t count) const override {
    callAsm(b, "mbarrier.init.shared::cta.b64 [$0], $1; fence.mbarrier_init.release.cluster;", "r,r,~{memory}", {},
            {barrier, b.getInt32(uint32_t(count))});
  }
  void mbarrierExpect(llvm::IRBuilderBase& b, Value* barrier, int64_t bytes) const override {
    callAsm(b, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r,~{memory}", {}, {barrier, b.getInt32(uint32_t(bytes))});
  }
  void mbarrierArrive(llvm::IRBuilderBase& b, Value* barrier) const override {
    callAsm(b, "mbarrier.arrive.shared::cta.b64 _, [$0];", "r,~{memory}", {}, {barrier});
  }
  // try_wait suspends the thread for a while (a hint the hardware bounds) before it fails; the
  // labels are local to the braces, so the loop may be inlined many times.
  void mbarrierWait(llvm::IRBuilderBase& b, Value* barrier, Value* parity) const override {
    callAsm(b, "{ .reg .pred done; waiting: mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1; @!done bra.uni waiting; }",
            "r,r,~{memory}", {}, {barrier, parity});
  }
  void mbarrierInval(llvm::IRBuilderBase& b, Value* barrier) const override {
    callAsm(b, "mbarrier.inval.shared::cta.b64 [$0];", "r,~{memory}", {}, {barrier});
  }
  void tmaLoad(llvm::IRBuilderBase& b, Value* to, Value* map, Value* barrier, const std::vector<Value*>& coords) const override {
    std::vector<Value*> args = {to, map, barrier};
    std::string box = tensorCoords(coords, args);
    callAsm(b, "cp.async.bulk.tensor." + std::to_string(coords.size()) +
                   "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [$0], [$1, " + box + "], [$2];",
            "r,l,r" + repeat(",r", coords.size()) + ",~{memory}", {}, args);
  }
  void tmaStore(llvm::IRBuilderBase& b, Value* from, Value* map, const std::vector<Value*>& coords) const override {
    std::vector<Value*> args = {from, map};
    std::string box = tensorCoords(coords, args);
    callAsm(b, "cp.async.bulk.tensor." + std::to_string(coords.size()) + "d.global.shared::cta.tile.bulk_group [$1, " + box + "], [$0];",
            "r,l" + repeat(",r", coords.size()) + ",~{memory}", {}, args);
  }
  void tmaStoreWait(llvm::IRBuilderBase& b, int64_t pending) const override {
    callAsm(b, "cp.async.bulk.commit_group; cp.async.bulk.wait_group.read " + std::to_string(pending) + ";", "~{memory}", {}, {});
  }
  // A TMA box's coordinates as PTX lists them, innermost first ("{$3, $4}"), appended to args.
  static std::string tensorCoords(const std::vector<Value*>& coords, std::vector<Value*>& args) {
    std::string list;
    for (size_t d = coords.size(); d-- > 0;) {
      list += (list.empty() ? "{$" : ", $") + std::to_string(args.size());
      args.push_back(coords[d]);
    }
    return list + "}";
  }
  static std::string repeat(const std::string& s, size_t n) {
    std::string out;
    for (size_t i = 0; i < n; ++i) out += s;
    return out;
  }

  // The 64-bit matrix descriptor: address, leading and stride byte offsets encoded as (x & 0x3FFFF) >> 4
  // in bits 0-13, 16-29 and 32-45; the swizzle mode in bits 62-63 (1: 128 bytes, 2: 64, 3: 32); base offset 0
  // (allocations start on a swizzle pattern's boundary). The operand's offset adds to the encoded
  // address: workgroup memory ends below 2^18 bytes, so the 14-bit field does not carry over.
  static Value* descriptor(llvm::IRBuilderBase& b, const WarpgroupOperand& o) {
    auto encode = [](int64_t bytes) { return uint64_t(bytes & 0x3FFFF) >> 4; };
    uint64_t mode = o.swizzle == 128 ? 1 : o.swizzle == 64 ? 2 : o.swizzle == 32 ? 3 : 0;
    if (mode == 0) throw Unsupported("llvm gpu: unsupported: a wgmma operand swizzled by " + std::to_string(o.swizzle) + " bytes");
    uint64_t fixed = encode(o.leading) << 16 | encode(o.stride) << 32 | mode << 62;
    Value* address = b.CreateLShr(b.CreateAnd(b.CreateZExt(o.address, b.getInt64Ty()), 0x3FFFF), 4);
    Value* descriptor = b.CreateOr(address, b.getInt64(fixed));
    return o.offset ? b.CreateAdd(descriptor, b.getInt64(uint64_t(o.offset) >> 4)) : descriptor;
  }
  // A multiplicand type's PTX name: e4m3, e5m2, f16, bf16.
  static std::string ptxType(DType t) {
    return t == DType::f8e4m3 ? "e4m3" : t == DType::f8e5m2 ? "e5m2" : std::string(dtypeName(t));
  }
  // An inline-PTX call (with side effects unless told otherwise), returning `results` (one
  // value, a struct, or none).
  static Value* callAsm(llvm::IRBuilderBase& b, const std::string& text, const std::string& constraints,
                        const std::vector<llvm::Type*>& results, const std::vector<Value*>& args, bool sideEffects = true) {
    llvm::Type* result = results.empty()     ? b.getVoidTy()
                         : results.size() == 1 ? results[0]
                                               : llvm::StructType::get(b.getContext(), results);
    std::vector<llvm::Type*> params;
    for (Value* v : args) params.push_back(v->getType());
    auto* type = llvm::FunctionType::get(result, params, false);
    llvm::CallInst* call = b.CreateCall(type, llvm::InlineAsm::get(type, text, constraints, sideEffects), args);
    if (!sideEffects) call->setDoesNotAccessMemory();  // a pure function of its operands: CSE-able
    return call;
  }

  // cp.async: 16 bytes bypass L1 (.cg), 4 and 8 may only go through it (.ca).
  void asyncCopy(llvm::IRBuilderBase& b, Value* to, Value* from, int64_t bytes, Value* fromBytes) const override {
    using I = llvm::Intrinsic::ID;
    I id = bytes == 16 ? llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16_s
           : bytes == 8 ? llvm::Intrinsic::nvvm_cp_async_ca_shared_global_8_s
           : bytes == 4 ? llvm::Intrinsic::nvvm_cp_async_ca_shared_global_4_s
                        : throw Unsupported("llvm gpu: unsupported: async_copy of " + std::to_string(bytes) + " bytes");
    b.CreateIntrinsic(id, {}, {to, from, fromBytes});
  }
  bool dynamicShared(int64_t bytes) const override { return bytes > kStaticSharedBytes; }
  void asyncCommit(llvm::IRBuilderBase& b) const override {
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {});
  }
  void asyncWait(llvm::IRBuilderBase& b, int64_t pending) const override {
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {}, {b.getInt32(uint32_t(pending))});
  }

 private:
  static size_t checkedAxis(int axis) {
    if (axis < 0 || axis > 2) throw Unsupported("llvm gpu: unsupported: grid axis " + std::to_string(axis));
    return size_t(axis);
  }
  // shfl.sync's c operand: the segment mask (32 - width) << 8 | the clamp 31.
  static uint32_t clamp(int64_t width) { return uint32_t((32 - width) << 8 | 0x1f); }
  // Four i8 registers as one 32-bit operand, the first in the low byte.
  static Value* packBytes(llvm::IRBuilderBase& b, const std::vector<Value*>& bytes) {
    Value* word = b.getInt32(0);
    for (unsigned i = 0; i < 4; ++i) word = b.CreateOr(word, b.CreateShl(b.CreateZExt(bytes[i], b.getInt32Ty()), 8 * i));
    return word;
  }
  // Two registers as one 32-bit operand; bf16 registers are f32 values exactly bf16.
  static Value* pack(llvm::IRBuilderBase& b, DType t, Value* lo, Value* hi) {
    if (t == DType::f16) {
      Value* v = llvm::PoisonValue::get(llvm::FixedVectorType::get(b.getHalfTy(), 2));
      return b.CreateInsertElement(b.CreateInsertElement(v, lo, uint64_t(0)), hi, uint64_t(1));
    }
    auto bits = [&](Value* f) { return b.CreateLShr(b.CreateBitCast(f, b.getInt32Ty()), 16); };
    return b.CreateOr(bits(lo), b.CreateShl(bits(hi), 16));
  }

  std::string dataLayout_;
  int sm_;
};

// The architecture's number: 90 for sm_90a.
int smOf(const std::string& arch) { return std::stoi(arch.substr(3)); }

std::unique_ptr<llvm::TargetMachine> machineFor(const std::string& arch) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  if (arch.rfind("sm_", 0) != 0) throw Error("ptx: unknown target '" + arch + "' (sm_80, sm_86, sm_89, sm_90, sm_90a)");
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, error);
  if (!target) throw Unsupported("ptx: LLVM has no NVPTX target: " + error);
  return std::unique_ptr<llvm::TargetMachine>(
      target->createTargetMachine(kTriple, arch, "+ptx84", llvm::TargetOptions(), std::nullopt, std::nullopt,
                                  llvm::CodeGenOptLevel::Aggressive));
}

}  // namespace

std::string printNvptxLlvm(const gpu::KernelFunction& f, const std::string& arch) {
  std::unique_ptr<llvm::TargetMachine> tm = machineFor(arch);
  llvm::LLVMContext c;
  NvptxTarget target(tm->createDataLayout().getStringRepresentation(), smOf(arch));
  std::string text;
  llvm::raw_string_ostream out(text);
  llvmgpu::printLlvm(f, target, c)->print(out, nullptr);
  return text;
}

std::string printPtx(const gpu::KernelFunction& f, const std::string& arch) {
  std::unique_ptr<llvm::TargetMachine> tm = machineFor(arch);
  llvm::LLVMContext c;
  NvptxTarget target(tm->createDataLayout().getStringRepresentation(), smOf(arch));
  std::unique_ptr<llvm::Module> m = llvmgpu::printLlvm(f, target, c);
  llvmgpu::optimize(*m, *tm);
  return llvmgpu::emit(*m, *tm, llvmgpu::FileKind::assembly, "ptx");
}

}  // namespace tj::ptx
