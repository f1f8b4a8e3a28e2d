// The one artifact cache (jit/artifact_cache.hpp) that CPU objects, SPIR-V, cubins,
// refusals and Vulkan's pipeline cache share: every kind round-trips through one codec,
// and a torn file, a file of another format version or kind, or a key that differs in
// any part is rejected or missed the same way for all of them.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "devices/cuda/cubin_cache.hpp"
#include "devices/vulkan/kernel_binary.hpp"
#include "jit/artifact_cache.hpp"
#include "tests/support.hpp"

namespace tj {
namespace {

namespace fs = std::filesystem;
using jit::ArtifactKey;
using jit::ArtifactKind;

constexpr ArtifactKind kKinds[] = {ArtifactKind::cpuObject, ArtifactKind::spirvKernel, ArtifactKind::cubin,
                                   ArtifactKind::refusal, ArtifactKind::pipelineCache};

ArtifactKey keyOf(ArtifactKind kind) { return {kind, 0x1234, "device-facts", "options"}; }

std::vector<char> bytesOf(const std::string& s) { return {s.begin(), s.end()}; }

// What load() made of the entry, or "" when it found none or rejected it.
std::string loaded(const jit::ArtifactStore& store, const ArtifactKey& key) {
  return store.load(key, [](const std::vector<char>& p) { return std::string(p.begin(), p.end()); }).value_or("");
}

TEST_CASE("artifact cache: every kind round-trips through one codec, in a file of its own") {
  fs::path dir = test::scratchDir("artifacts", "kinds");
  jit::ArtifactStore store(dir);
  for (ArtifactKind kind : kKinds) {
    CAPTURE(jit::artifactExtension(kind));
    ArtifactKey key = keyOf(kind);
    CHECK(!store.read(key));
    REQUIRE(store.write(key, bytesOf("payload of " + std::string(jit::artifactExtension(kind)))));
    CHECK(store.path(key).extension() == jit::artifactExtension(kind));
    CHECK(loaded(store, key) == "payload of " + std::string(jit::artifactExtension(kind)));
  }
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  CHECK(files == std::size(kKinds));
  fs::remove_all(dir);
}

TEST_CASE("artifact cache: the GPU payloads round-trip through the store") {
  fs::path dir = test::scratchDir("artifacts", "gpu");
  jit::ArtifactStore store(dir);
  vulkan::KernelBinary spirv{.params = {{gpu::KParam::Kind::buffer, "", DType::f32, 0, 0}},
                             .stored = {true},
                             .bufferCount = 2,
                             .workgroupSize = 64,
                             .subgroupSize = 32,
                             .spirv = std::make_shared<const std::vector<uint32_t>>(std::vector<uint32_t>{0x07230203, 1})};
  ArtifactKey spirvKey = keyOf(ArtifactKind::spirvKernel);
  REQUIRE(store.write(spirvKey, vulkan::encodeKernelBinary(spirv)));
  vulkan::KernelBinary spirvBack = vulkan::decodeKernelBinary(store.read(spirvKey).value());
  CHECK(*spirvBack.spirv == *spirv.spirv);
  CHECK(spirvBack.stored == spirv.stored);

  DriverBinary cubin{.params = {{gpu::KParam::Kind::scalar, "", DType::i32, 0, 0}},
                          .workgroupSize = 128,
                          .entry = "tj_k",
                          .image = {'\x7f', 'E', 'L', 'F'}};
  ArtifactKey cubinKey = keyOf(ArtifactKind::cubin);
  REQUIRE(store.write(cubinKey, cuda::encodeCubinBinary(cubin)));
  DriverBinary cubinBack = cuda::decodeCubinBinary(store.read(cubinKey).value());
  CHECK(cubinBack.image == cubin.image);
  CHECK(cubinBack.entry == "tj_k");
  fs::remove_all(dir);
}

TEST_CASE("artifact cache: a torn entry is reported once, then rebuilt and found") {
  fs::path dir = test::scratchDir("artifacts", "torn");
  jit::ArtifactStore store(dir);
  for (ArtifactKind kind : kKinds) {
    CAPTURE(jit::artifactExtension(kind));
    ArtifactKey key = keyOf(kind);
    REQUIRE(store.write(key, bytesOf("whole payload")));
    fs::resize_file(store.path(key), fs::file_size(store.path(key)) - 3);
    CHECK_THROWS_WITH_AS(store.read(key), doctest::Contains("size mismatch"), jit::CorruptCacheEntry);
    {
      test::CaptureLog log;
      CHECK(loaded(store, key).empty());
      CHECK(log.text().find(store.path(key).string() + " is unusable (size mismatch") != std::string::npos);
    }
    REQUIRE(store.write(key, bytesOf("rebuilt")));
    test::CaptureLog log;
    CHECK(loaded(store, key) == "rebuilt");
    CHECK(log.text().empty());
  }
  fs::remove_all(dir);
}

TEST_CASE("artifact cache: a file of another format version or another kind is rejected") {
  fs::path dir = test::scratchDir("artifacts", "foreign");
  jit::ArtifactStore store(dir);
  ArtifactKey cubin = keyOf(ArtifactKind::cubin), spirv = keyOf(ArtifactKind::spirvKernel);
  REQUIRE(store.write(spirv, bytesOf("spirv")));
  fs::copy_file(store.path(spirv), store.path(cubin));
  CHECK_THROWS_WITH_AS(store.read(cubin), doctest::Contains("kind 2, expected 3 (.cubin)"), jit::CorruptCacheEntry);

  REQUIRE(store.write(cubin, bytesOf("cubin")));
  {
    std::fstream f(store.path(cubin), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(8);  // the format version, after the magic
    f.put(1);
  }
  CHECK_THROWS_WITH_AS(store.read(cubin), doctest::Contains("format version 1, expected 2"), jit::CorruptCacheEntry);
  CHECK(loaded(store, spirv) == "spirv");  // the other kind's own file is whole
  fs::remove_all(dir);
}

TEST_CASE("artifact cache: a key that differs in IR, device facts, options or build id misses") {
  fs::path dir = test::scratchDir("artifacts", "keys");
  jit::ArtifactStore store(dir);
  ArtifactKey base = keyOf(ArtifactKind::cubin);
  REQUIRE(store.write(base, bytesOf("base")));
  CHECK(base.buildId == jit::compilerBuildId());
  for (auto change : {+[](ArtifactKey& k) { ++k.irHash; }, +[](ArtifactKey& k) { k.device += " sms132"; },
                      +[](ArtifactKey& k) { k.options += " warps=8"; }, +[](ArtifactKey& k) { k.buildId += "+1"; },
                      +[](ArtifactKey& k) { k.kind = ArtifactKind::spirvKernel; }}) {
    ArtifactKey key = base;
    change(key);
    CHECK(store.path(key) != store.path(base));
    CHECK(!store.read(key));
    // Two keys whose files collide are told apart by the key in the header.
    if (key.kind != base.kind) continue;
    fs::copy_file(store.path(base), store.path(key));
    CHECK_THROWS_WITH_AS(store.read(key), doctest::Contains("key mismatch"), jit::CorruptCacheEntry);
  }
  CHECK(loaded(store, base) == "base");
  fs::remove_all(dir);
}

TEST_CASE("artifact cache: a refusal is kept beside its kernel's entry, and no folder stores nothing") {
  fs::path dir = test::scratchDir("artifacts", "refusal");
  jit::ArtifactStore store(dir);
  ArtifactKey key = keyOf(ArtifactKind::spirvKernel);
  CHECK(!store.refusal(key));
  store.refuse(key, "unsupported: 131072 bytes of workgroup memory");
  CHECK(store.refusal(key) == "unsupported: 131072 bytes of workgroup memory");
  CHECK(!store.read(key));  // the kernel itself has no entry
  ArtifactKey otherBuild = key;
  otherBuild.buildId += "+1";
  CHECK(!store.refusal(otherBuild));  // a new compiler decides again

  jit::ArtifactStore none("");
  CHECK(!none.enabled());
  CHECK(!none.write(key, bytesOf("x")));
  none.refuse(key, "why");
  CHECK(!none.read(key));
  CHECK(!none.refusal(key));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tj
