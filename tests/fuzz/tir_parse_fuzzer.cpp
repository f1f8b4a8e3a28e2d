// libFuzzer target: the .tir reader. Any input must parse or throw ParseError (with
// line:col); what parses must print and read back to the same text.
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string_view>

#include "ir/passes.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  tj::ir::Kernel k;
  try {
    k = tj::ir::parse(text);
  } catch (const tj::ir::ParseError&) {
    return 0;
  }
  // The printer's output is the parser's canonical input: it must read back exactly.
  std::string printed = tj::ir::print(k);
  if (tj::ir::print(tj::ir::parse(printed)) != printed) {
    std::fprintf(stderr, "print(parse(print(k))) != print(k) for:\n%s\n", printed.c_str());
    std::abort();
  }
  return 0;
}
