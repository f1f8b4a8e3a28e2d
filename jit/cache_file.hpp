// Whole-file reads and atomic writes, for the artifact cache (jit/artifact_cache.hpp) and
// the tuning and dump files.
#pragma once
#include <filesystem>
#include <optional>
#include <span>
#include <vector>

#include "ir/error.hpp"

namespace tj::jit {

// The bytes of the regular file at `path`; nullopt when there is none. Throws
// Error for anything else there (a directory, a FIFO, ...), which is never
// opened for waiting or read, and for a file it cannot read.
std::optional<std::vector<char>> readRegularFile(const std::filesystem::path& path);

// Writes `bytes` to `path` through a temporary file in the same folder (made if missing),
// so readers only ever see whole files. The first write into a folder in a process
// removes the temporaries there older than ten minutes, which writers that died
// between writing and renaming left behind. Throws std::exception on failure, naming
// the system's reason ("No space left on device"); a write past the file size limit
// (ulimit -f) fails with "File too large" instead of raising SIGXFSZ, which would kill
// the process.
void writeFileAtomically(const std::filesystem::path& path, std::span<const char> bytes);

}  // namespace tj::jit
