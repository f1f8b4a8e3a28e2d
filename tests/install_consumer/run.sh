#!/usr/bin/env bash
# Installs the built tilejit into a scratch prefix, then builds and runs a consumer project against it.
set -euo pipefail
BUILD="$1"; SRC="$(cd "$(dirname "$0")" && pwd)"
WORK="$(mktemp -d)"; trap 'rm -rf "$WORK"' EXIT
cmake --install "$BUILD" --prefix "$WORK/prefix" >/dev/null
cmake -S "$SRC" -B "$WORK/build" -G Ninja -DCMAKE_PREFIX_PATH="$WORK/prefix" >/dev/null
cmake --build "$WORK/build" >/dev/null
"$WORK/build/consumer"
