#include "devices/print_buffers.hpp"

#include <iostream>

#include "devices/interp/values.hpp"
#include "ir/error.hpp"

namespace tj {

namespace {

int64_t elements(const gpu::KPrint& p) {
  int64_t n = 1;
  for (int64_t d : p.shape) n *= d;
  return n;
}

}  // namespace

size_t printBufferBytes(const gpu::KPrint& p, int64_t programs) {
  return size_t(programs) * size_t(elements(p)) * size_t(dtypeBytes(p.dtype));
}

void printBuffers(const std::vector<gpu::KPrint>& prints, const std::vector<std::span<const std::byte>>& buffers,
                  std::span<const int64_t> grid, const PrintSink& sink) {
  int64_t programs = 1;
  for (int64_t g : grid) programs *= g;
  for (size_t i = 0; i < prints.size(); ++i)
    if (buffers.at(i).size() < printBufferBytes(prints[i], programs))
      throw InternalError("print", "the buffer of '" + prints[i].label + "' is smaller than the grid's prints");
  std::vector<int64_t> id(grid.size(), 0);
  for (int64_t program = 0; program < programs; ++program) {
    for (size_t d = grid.size(), rest = size_t(program); d-- > 0; rest /= size_t(grid[d])) id[d] = int64_t(rest % size_t(grid[d]));
    for (size_t i = 0; i < prints.size(); ++i) {
      const gpu::KPrint& p = prints[i];
      size_t slice = size_t(elements(p)) * size_t(dtypeBytes(p.dtype));
      interp::Tile tile = interp::decodeTile(ir::Type{p.dtype, p.shape}, buffers[i].data() + size_t(program) * slice);
      std::string line = interp::printLine(p.label, id, tile);
      if (sink) sink(line);
      else std::cout << line << '\n';
    }
  }
}

}  // namespace tj
