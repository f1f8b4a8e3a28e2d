// The SPIR-V math::MathEmitter and the accurate math's SPIR-V entry point.
#include "lower/spirv/spirv_math.hpp"

#include <bit>
#include <cstdint>

namespace tj::spirv {

SpirvMath::SpirvMath(Module& m, int bits)
    : m_(m), bits_(bits), f_(m.typeFloat(bits)), i_(m.typeInt(32, true)), b_(m.typeBool()),
      words_(bits == 64 ? m.typeVector(i_, 2) : 0) {
  if (bits == 64) m.capability(Capability::Float64);
}

Id SpirvMath::c(double v) {
  return m_.constant(f_, f64() ? std::bit_cast<uint64_t>(v) : std::bit_cast<uint32_t>(static_cast<float>(v)));
}

Id SpirvMath::fromWords(Id lo, Id hi) {
  return m_.op(Op::Bitcast, f_, {m_.op(Op::CompositeConstruct, words_, {lo, hi})});
}

Id SpirvMath::exact(Id r) {
  m_.decorate(r, Decoration::NoContraction);
  return r;
}

Id SpirvMath::word(Id x, uint32_t index) {
  return m_.op(Op::CompositeExtract, i_, {m_.op(Op::Bitcast, words_, {x}), index});
}

Id accurateUnary(Module& m, std::string_view fn, int floatBits, Id x) {
  int bits = math::computeBits(fn, floatBits);
  if (bits == 0) return 0;
  SpirvMath e(m, bits);
  if (bits == floatBits) return math::accurateUnary(e, fn, floatBits, x);
  return m.op(Op::FConvert, m.typeFloat(32),
              {math::accurateUnary(e, fn, floatBits, m.op(Op::FConvert, e.type(), {x}))});
}

}  // namespace tj::spirv
