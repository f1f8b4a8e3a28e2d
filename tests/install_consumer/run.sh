#!/usr/bin/env bash
# Installs the built tilejit into a scratch prefix, then builds and runs a consumer whose
# CMakeLists.txt is the README's snippet, verbatim: what a user copies must work as it is.
set -euo pipefail
BUILD="$1"; SRC="$(cd "$(dirname "$0")" && pwd)"; README="$SRC/../../README.md"
WORK="$(mktemp -d)"; trap 'rm -rf "$WORK"' EXIT
fail() { echo "install.find_package: $*" >&2; exit 1; }

cmake --install "$BUILD" --prefix "$WORK/prefix" >/dev/null
# LLVM, xxhash, spdlog and nlohmann-json are private to libtilejit: the package's code (its
# comments may) must not name them.
if grep -rliE '^[^#]*(llvm|xxhash|spdlog|nlohmann)' "$WORK/prefix/lib/cmake/tilejit"; then
  fail "the installed CMake package names a private dependency (files above)"
fi

# The first cmake block after the README's "Using tilejit from another CMake project" heading.
mkdir "$WORK/app"
awk '/^## Using tilejit from another CMake project/ { section = 1; next }
     section && /^## / { exit }
     section && /^```cmake$/ { inside = 1; next }
     inside && /^```$/ { exit }
     inside { print }' "$README" >"$WORK/app/CMakeLists.txt"
grep -q 'find_package(tilejit' "$WORK/app/CMakeLists.txt" || fail "no cmake snippet with find_package(tilejit) in $README"
grep -q 'CMAKE_CXX_STANDARD' "$WORK/app/CMakeLists.txt" && fail "the README's snippet sets the C++ standard: tilejit's target must"

# The consumer's configure output: clean, and LLVM's CMake files never read.
cp "$SRC/main.cpp" "$WORK/app/main.cpp"
cmake -S "$WORK/app" -B "$WORK/build" -G Ninja -DCMAKE_PREFIX_PATH="$WORK/prefix" >"$WORK/configure.log" 2>&1 ||
  { cat "$WORK/configure.log"; fail "configuring the README's snippet failed"; }
if grep -E 'Could NOT find|CMake Warning' "$WORK/configure.log"; then fail "the consumer's configure printed the lines above"; fi
if grep -E '^LLVM_DIR' "$WORK/build/CMakeCache.txt"; then fail "the consumer's configure looked for LLVM"; fi

# Only <tilejit/...> is an include path of the consumer: the stage folders are not top-level.
for header in dsl/tensor.hpp ir/ir.hpp; do
  printf '#include <%s>\nint main() { return 0; }\n' "$header" >"$WORK/app/main.cpp"
  if cmake --build "$WORK/build" >"$WORK/probe.log" 2>&1; then fail "#include <$header> compiled for the consumer"; fi
  grep -q "$header: No such file or directory" "$WORK/probe.log" || { cat "$WORK/probe.log"; fail "#include <$header> failed otherwise"; }
done

cp "$SRC/main.cpp" "$WORK/app/main.cpp"
cmake --build "$WORK/build" >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; fail "building the consumer failed"; }
"$WORK/build/app"
