// The kernel cache: memory and disk hits, another process, corrupt entries,
// TILEJIT_CACHE=0 and concurrent writers. The kernel is the hand-written ids
// kernel of test_cpu_runtime.cpp, so no lowering is involved.
#include <doctest/doctest.h>

#include "tests/support.hpp"
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "devices/cpu/thread_pool.hpp"
#include "ir/passes.hpp"
#include "jit/artifact_cache.hpp"
#include "jit/cpu_target.hpp"
#include "jit/kernel_cache.hpp"

namespace tj::cputest {  // test_cpu_runtime.cpp
ir::Kernel idsKernel();
jit::ObjectCode compileIds(const ir::Kernel& kernel, const std::string& entryName);
void runIds(cpu::KernelEntry entry, int64_t n, cpu::ThreadPool& pool);
}  // namespace tj::cputest

namespace tj {
namespace {

using test::CaptureLog;
using test::ScopedEnv;

namespace fs = std::filesystem;
using jit::CacheSource;

jit::ArtifactKey idsKey() {
  return {jit::ArtifactKind::cpuObject, ir::semanticHash(cputest::idsKernel()), jit::hostTarget().deviceFeatures, "test"};
}

// The ids compiler, counting its calls.
struct CountingCompiler {
  std::atomic<int> calls{0};
  jit::CompileFn fn() {
    return [this](const ir::Kernel& k, const std::string& entry) {
      ++calls;
      return cputest::compileIds(k, entry);
    };
  }
};

// Looks the ids kernel up in a fresh cache on `dir`, checks that the entry
// runs, and returns where it came from and how many compiles that took.
std::pair<CacheSource, int> freshLookup(const fs::path& dir) {
  CountingCompiler compiler;
  jit::KernelCache cache(compiler.fn(), dir);
  jit::CacheLookup r = cache.lookup(cputest::idsKernel(), idsKey());
  cputest::runIds(r.entry, 33, cpu::ThreadPool::global());
  return {r.source, compiler.calls.load()};
}

const std::pair<CacheSource, int> kDiskHit{CacheSource::disk, 0};
const std::pair<CacheSource, int> kCompiled{CacheSource::compiled, 1};




// This test binary running the child case below in `mode`.
std::string childCommand(const std::string& mode, const fs::path& dir, const std::string& extraEnv = "") {
  return "TILEJIT_CACHE_CHILD=" + mode + " TILEJIT_CACHE_DIR='" + dir.string() + "' " + extraEnv + " " +
         test::binDir() + "/tilejit_tests -tc='kernel cache: child process'";
}

std::vector<char> hammerPayload(char id) { return std::vector<char>(1000 + (id - 'A') * 777, id); }

// What the parent cases spawn; does nothing in a normal test run.
//   lookup: prints "child: cache=<source> compiles=<n>" for a fresh cache on
//           $TILEJIT_CACHE_DIR (as the environment configures it).
//   hammer: writes and reads back one entry 1000 times while another child
//           does the same with another payload; every read must be whole.
TEST_CASE("kernel cache: child process") {
  const char* mode = std::getenv("TILEJIT_CACHE_CHILD");
  if (!mode) return;
  if (std::string_view(mode) == "lookup") {
    auto [source, compiles] = freshLookup(jit::KernelCache::diskDirFromEnvironment());
    std::printf("child: cache=%s compiles=%d\n", std::string(jit::cacheSourceName(source)).c_str(), compiles);
  } else {
    char id = std::getenv("TILEJIT_CACHE_CHILD_ID")[0];
    jit::ArtifactStore store(std::getenv("TILEJIT_CACHE_DIR"));
    jit::ArtifactKey hammer{jit::ArtifactKind::cpuObject, 0, "hammer"};
    for (int i = 0; i < 1000; ++i) {
      REQUIRE(store.write(hammer, hammerPayload(id)));
      std::vector<char> got = store.read(hammer).value();
      REQUIRE((got == hammerPayload('A') || got == hammerPayload('B')));
    }
    std::printf("child: hammer ok\n");
  }
}

TEST_CASE("kernel cache: a second lookup is a memory hit that does no compiling") {
  jit::resetCacheStats();
  CountingCompiler compiler;
  jit::KernelCache cache(compiler.fn(), "");
  ir::Kernel k = cputest::idsKernel();
  jit::CacheLookup first = cache.lookup(k, idsKey());
  jit::CacheLookup second = cache.lookup(k, idsKey());
  CHECK(first.source == CacheSource::compiled);
  CHECK(first.compileMs > 0);
  CHECK(second.source == CacheSource::memory);
  CHECK((second.entry == first.entry));
  CHECK(compiler.calls == 1);
  cputest::runIds(second.entry, 100, cpu::ThreadPool::global());

  jit::ArtifactKey other = idsKey();
  other.options = "other";
  CHECK(cache.lookup(k, other).source == CacheSource::compiled);
  jit::CacheStats stats = jit::cacheStats();
  CHECK(stats.memoryHits == 1);
  CHECK(stats.misses == 2);
  CHECK(stats.diskHits == 0);
  CHECK(stats.lastCompileMs > 0);
  CHECK(stats.totalCompileMs >= first.compileMs + stats.lastCompileMs);
  CHECK(jit::cacheSourceName(CacheSource::compiled) == "miss");
}

TEST_CASE("kernel cache: a fresh cache loads the entry from disk without compiling") {
  fs::path dir = test::scratchDir("cache", "disk");
  jit::resetCacheStats();
  CHECK(freshLookup(dir) == kCompiled);
  jit::ArtifactStore store(dir);
  fs::path entry = store.path(idsKey());
  CHECK(fs::exists(entry));
  CHECK(entry.parent_path() == dir);
  CHECK(entry.filename().string().size() == 16 + 4);
  CHECK(freshLookup(dir) == kDiskHit);
  jit::CacheStats stats = jit::cacheStats();
  CHECK(stats.diskHits == 1);
  CHECK(stats.misses == 1);
  CHECK(stats.lastDiskLoadMs > 0);
  // Every part of the key separates entries.
  for (auto change : std::vector<std::function<void(jit::ArtifactKey&)>>{
           [](jit::ArtifactKey& k) { ++k.irHash; }, [](jit::ArtifactKey& k) { k.device += "+x"; },
           [](jit::ArtifactKey& k) { k.options += "x"; }, [](jit::ArtifactKey& k) { k.buildId += "x"; }}) {
    jit::ArtifactKey key = idsKey();
    change(key);
    CHECK(store.path(key) != entry);
  }
  fs::remove_all(dir);
}

TEST_CASE("kernel cache: another process hits the disk cache") {
  fs::path dir = test::scratchDir("cache", "process");
  CHECK(freshLookup(dir) == kCompiled);
  test::CommandResult child = test::runConcurrently({childCommand("lookup", dir)})[0];
  CHECK(child.status == 0);
  CHECK_MESSAGE(child.output.find("child: cache=disk compiles=0") != std::string::npos, child.output);
  fs::remove_all(dir);
}

TEST_CASE("kernel cache: a corrupt entry is reported, recompiled and replaced") {
  fs::path dir = test::scratchDir("cache", "corrupt");
  jit::ArtifactStore store(dir);
  fs::path path = store.path(idsKey());
  auto flipByte = [&](std::streamoff at) {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(at >= 0 ? at : static_cast<std::streamoff>(fs::file_size(path)) + at);
    char c = static_cast<char>(f.peek() ^ 0x5a);
    f.seekp(f.tellg());
    f.put(c);
  };
  auto payload = [&] { return store.read(idsKey()).value(); };
  // An entry for `key`, moved to the ids kernel's file.
  auto writeAs = [&](const jit::ArtifactKey& key, const std::vector<char>& bytes) {
    REQUIRE(store.write(key, bytes));
    fs::rename(store.path(key), path);
  };
  struct Corruption {
    const char* name;
    std::function<void()> apply;
    const char* reason;
  };
  const Corruption corruptions[] = {
      {"a flipped payload byte", [&] { flipByte(-1); }, "payload checksum mismatch"},
      {"a flipped magic byte", [&] { flipByte(0); }, "bad magic"},
      {"another format version", [&] { flipByte(8); }, "format version"},
      {"a truncated payload", [&] { fs::resize_file(path, fs::file_size(path) - 10); }, "size mismatch"},
      {"a truncated header", [&] { fs::resize_file(path, 5); }, "truncated header: 5 bytes"},
      {"an empty file", [&] { fs::resize_file(path, 0); }, "truncated header: 0 bytes"},
      {"another key", [&] { writeAs({jit::ArtifactKind::cpuObject, 0, "another key"}, payload()); }, "key mismatch"},
      {"another kind", [&] { writeAs({jit::ArtifactKind::cubin, 0, "cubin"}, payload()); }, "kind 3, expected 1"},
      {"an object that does not link", [&] { store.write(idsKey(), std::vector<char>(64, 7)); },
       "cpu jit"},
  };
  for (const Corruption& c : corruptions) {
    CAPTURE(c.name);
    freshLookup(dir);  // writes a good entry, or finds the one the previous round left
    REQUIRE(freshLookup(dir) == kDiskHit);
    c.apply();
    {
      CaptureLog log;
      CHECK(freshLookup(dir) == kCompiled);
      std::string warning = log.text();
      CHECK_MESSAGE(warning.find("[warning]") != std::string::npos, warning);
      CHECK_MESSAGE(warning.find(path.string()) != std::string::npos, warning);
      CHECK_MESSAGE(warning.find(c.reason) != std::string::npos, warning);
    }
    CHECK(freshLookup(dir) == kDiskHit);
  }
  fs::remove_all(dir);
}

TEST_CASE("kernel cache: an entry that is a directory or a FIFO is reported and compiled around") {
  fs::path dir = test::scratchDir("cache", "special");
  fs::path path = jit::ArtifactStore(dir).path(idsKey());
  fs::create_directory(path);
  {
    CaptureLog log;
    CHECK(freshLookup(dir) == kCompiled);
    std::string warning = log.text();
    CAPTURE(warning);
    CHECK(warning.find(path.string() + " is unusable (it is a directory, not a regular file)") != std::string::npos);
    CHECK(warning.find("cannot write kernel cache entry") != std::string::npos);  // a folder is never replaced
  }
  CHECK(fs::is_directory(path));
  fs::remove(path);

  // Opening a FIFO for reading waits for a writer: the child would hang. It must
  // compile instead, and its new entry replaces the FIFO.
  REQUIRE(mkfifo(path.c_str(), 0644) == 0);
  test::CommandResult child = test::runCommand("timeout 60 env " + childCommand("lookup", dir));
  CAPTURE(child.output);
  CHECK(child.status == 0);
  CHECK(child.output.find("is unusable (it is a FIFO, not a regular file)") != std::string::npos);
  CHECK(child.output.find("child: cache=miss compiles=1") != std::string::npos);
  CHECK(fs::is_regular_file(path));
  CHECK(freshLookup(dir) == kDiskHit);
  fs::remove_all(dir);
}

TEST_CASE("kernel cache: temporaries left by writers that died are removed when the folder is next written") {
  fs::path dir = test::scratchDir("cache", "stale");
  auto touch = [&](const std::string& name, std::chrono::minutes age) {
    std::ofstream(dir / name) << "partial";
    fs::last_write_time(dir / name, fs::file_time_type::clock::now() - age);
  };
  touch("0123.tjk.tmp.4194303.7", std::chrono::minutes(60));            // a writer that died an hour ago
  touch("tunings.json.tmp.12.0", std::chrono::minutes(11));             // the tuning file's, too
  touch("4567.tjk.tmp." + std::to_string(getpid()) + ".9", std::chrono::minutes(0));  // being written now
  touch("notes.tmp.txt", std::chrono::minutes(60));                     // not a temporary of ours
  touch("89ab.tjk", std::chrono::minutes(60));                          // an entry
  jit::ArtifactStore store(dir);
  jit::ArtifactKey key{jit::ArtifactKind::cpuObject, 0, "key"};
  REQUIRE(store.write(key, std::vector<char>(10, 'x')));
  std::set<std::string> left;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) left.insert(e.path().filename().string());
  CHECK(left == std::set<std::string>{"4567.tjk.tmp." + std::to_string(getpid()) + ".9", "notes.tmp.txt", "89ab.tjk",
                                      store.path(key).filename().string()});
  fs::remove_all(dir);
}

TEST_CASE("kernel cache: TILEJIT_CACHE=0 keeps everything in memory") {
  fs::path dir = test::scratchDir("cache", "off");
  {
    ScopedEnv off("TILEJIT_CACHE", "0"), at("TILEJIT_CACHE_DIR", dir.c_str());
    CHECK(jit::KernelCache::diskDirFromEnvironment().empty());
    CHECK(freshLookup(jit::KernelCache::diskDirFromEnvironment()) == kCompiled);
  }
  test::CommandResult child = test::runConcurrently({childCommand("lookup", dir, "TILEJIT_CACHE=0")})[0];
  CHECK_MESSAGE(child.output.find("child: cache=miss compiles=1") != std::string::npos, child.output);
  CHECK(fs::is_empty(dir));
  fs::remove_all(dir);
}

TEST_CASE("kernel cache: the disk folder comes from TILEJIT_CACHE_DIR, else HOME") {
  ScopedEnv on("TILEJIT_CACHE", "1"), at("TILEJIT_CACHE_DIR", "/some/dir"), home("HOME", "/home/someone");
  CHECK(jit::KernelCache::diskDirFromEnvironment() == "/some/dir");
  ScopedEnv noDir("TILEJIT_CACHE_DIR", nullptr);
  CHECK(jit::KernelCache::diskDirFromEnvironment() == "/home/someone/.cache/tilejit");
  ScopedEnv noHome("HOME", nullptr);
  CHECK(jit::KernelCache::diskDirFromEnvironment().empty());
}

TEST_CASE("kernel cache: an unwritable folder only costs the disk cache") {
  fs::path dir = test::scratchDir("cache", "unwritable");
  fs::path file = dir / "not-a-folder";
  std::ofstream(file) << "x";
  CaptureLog log;
  CHECK(freshLookup(file) == kCompiled);
  CHECK(log.text().find("cannot write kernel cache entry") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("kernel cache: concurrent lookups of one key compile it once per cache") {
  fs::path dir = test::scratchDir("cache", "threads");
  CountingCompiler first, second;
  jit::KernelCache a(first.fn(), dir), b(second.fn(), dir);
  std::vector<std::thread> threads;
  std::vector<cpu::KernelEntry> entries(8);
  for (size_t i = 0; i < entries.size(); ++i)
    threads.emplace_back([&, i] { entries[i] = (i % 2 ? a : b).lookup(cputest::idsKernel(), idsKey()).entry; });
  for (std::thread& t : threads) t.join();
  CHECK(first.calls <= 1);
  CHECK(second.calls <= 1);
  for (size_t i = 2; i < entries.size(); ++i) CHECK((entries[i] == entries[i % 2]));
  CHECK(freshLookup(dir) == kDiskHit);
  fs::remove_all(dir);
}

TEST_CASE("kernel cache: processes compiling and writing one entry at once leave it whole") {
  fs::path dir = test::scratchDir("cache", "processes");
  std::vector<test::CommandResult> lookups = test::runConcurrently({childCommand("lookup", dir), childCommand("lookup", dir)});
  for (const test::CommandResult& r : lookups) CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(freshLookup(dir) == kDiskHit);
  std::vector<test::CommandResult> hammers = test::runConcurrently({childCommand("hammer", dir, "TILEJIT_CACHE_CHILD_ID=A"),
                                                        childCommand("hammer", dir, "TILEJIT_CACHE_CHILD_ID=B")});
  for (const test::CommandResult& r : hammers) CHECK_MESSAGE(r.output.find("child: hammer ok") != std::string::npos, r.output);
  // Only the entries remain: every temporary file was renamed away.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.path().extension() == ".tjk";
  CHECK(files == std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tj
