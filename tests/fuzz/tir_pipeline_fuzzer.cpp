// libFuzzer target: parse -> verify -> canonicalize -> every tile-ir stage for every
// target. The verifier is the one gate: a kernel it accepts must lower without a crash.
// A tj::Error from a lowering is a documented refusal; a signal, an abort, a sanitizer
// report or any other exception is a finding (libFuzzer reports an escaping exception).
#include <cstdint>
#include <string_view>

#include "ir/passes.hpp"
#include "tests/fuzz/every_stage.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tj::ir::Kernel k;
  try {
    k = tj::ir::parse(std::string_view(reinterpret_cast<const char*>(data), size));
    tj::ir::verify(k);
  } catch (const tj::Error&) {
    return 0;  // refused at the gate
  }
  tj::fuzz::runEveryStage(k);
  return 0;
}
