#!/usr/bin/env bash
# Packs what tools/gpu/check.sh runs on a lent NVIDIA GPU machine into one archive,
# .gpu-bundle/tilejit-gpu.tar.xz (ignored; the device tool's `carry` takes it along).
# Called by `tools/dev gpu-bundle` after a Release build; docs/gpu-check.md says why and how.
#   tools/gpu/bundle.sh [BUILD_DIR]    (default: build/)
#
# That machine has no LLVM and another OS image, so the archive holds the test and sample
# programs, tile-ir, libtilejit and every shared library of their ldd closure except glibc's
# (libLLVM, spdlog, fmt, xxhash, libstdc++, ...), stripped. glibc's own libraries and loader
# travel too, in glibc/, apart: check.sh runs the programs through that loader only when the
# machine's glibc is older than the newest GLIBC_x.y symbol version the programs need.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
DEST="$ROOT/.gpu-bundle"
ARCHIVE="$DEST/tilejit-gpu.tar.xz"
NAME=tilejit-gpu

# glibc's libraries: never in lib/ (they must match the loader that runs the program).
GLIBC_RE='^(linux-vdso\.so\.1|ld-linux-x86-64\.so\.2|libc\.so\.6|libm\.so\.6|libmvec\.so\.1|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libresolv\.so\.2|libutil\.so\.1|libanl\.so\.1|libnsl\.so\.1)$'
# What glibc/ holds: the loader and what libtilejit (libm, libmvec for the CPU JIT) and the
# NVIDIA driver (libdl, libpthread, librt) load.
GLIBC_FILES=(ld-linux-x86-64.so.2 libc.so.6 libm.so.6 libmvec.so.1 libpthread.so.0 libdl.so.2 librt.so.1)
GLIBC_DIR=/lib/x86_64-linux-gnu

[[ $(uname -m) == x86_64 ]] || { echo "gpu-bundle: this machine is $(uname -m); the GPU machine is x86-64" >&2; exit 1; }

# The programs: the test binary, tile-ir and every sample (a samples/*.cpp with a program).
progs=(tilejit_tests tile-ir)
for src in "$ROOT"/samples/*.cpp; do
  s="$(basename "$src" .cpp)"
  [[ -x "$BUILD/bin/$s" ]] && progs+=("$s")
done
for p in "${progs[@]}"; do
  [[ -x "$BUILD/bin/$p" ]] || { echo "gpu-bundle: $BUILD/bin/$p is missing: build first" >&2; exit 1; }
done

STAGE="$(mktemp -d /tmp/tilejit-gpu-bundle.XXXXXX)"
trap 'rm -rf "$STAGE"' EXIT
B="$STAGE/$NAME"
mkdir -p "$B/bin" "$B/lib" "$B/glibc"

for p in "${progs[@]}"; do strip --strip-unneeded -o "$B/bin/$p" "$BUILD/bin/$p"; done

# The ldd closure of every program, by soname; glibc's left out.
declare -A libs=()
for p in "${progs[@]}"; do
  while read -r soname arrow path _; do
    [[ $arrow == "=>" ]] || continue
    [[ $soname =~ $GLIBC_RE ]] && continue
    if [[ $path == "not" ]]; then echo "gpu-bundle: $p needs $soname, which is not found" >&2; exit 1; fi
    libs[$soname]="$path"
  done < <(LD_LIBRARY_PATH="$BUILD/lib" ldd "$BUILD/bin/$p")
done
for soname in "${!libs[@]}"; do
  strip --strip-unneeded -o "$B/lib/$soname" "$(readlink -f "${libs[$soname]}")"
done
# libtilejit under its soname, which the programs load, and libtilejit.so beside it.
tj_so="$(basename "$(ls "$B"/lib/libtilejit.so.* 2>/dev/null | head -1)")"
[[ -n $tj_so && $tj_so != "*" ]] || { echo "gpu-bundle: the programs do not load libtilejit" >&2; exit 1; }
ln -s "$tj_so" "$B/lib/libtilejit.so"
for f in "${GLIBC_FILES[@]}"; do cp -L "$GLIBC_DIR/$f" "$B/glibc/$f"; done

# The newest glibc symbol version anything in bin/ and lib/ needs.
need="$(for f in "$B"/bin/* "$B"/lib/*; do [[ -L $f ]] || objdump -T "$f"; done |
        grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)"
have="$(getconf GNU_LIBC_VERSION | awk '{print $2}')"
commit="$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
dirty="$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null | wc -l)"
{
  echo "GLIBC_NEEDED=$need"
  echo "GLIBC_BUNDLED=$have"
  echo "COMMIT=$commit"
  echo "DIRTY_FILES=$dirty"
  echo "BUILT=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "BUILT_ON=\"$(. /etc/os-release && echo "$PRETTY_NAME")\""
  echo "PROGRAMS=\"${progs[*]}\""
} > "$B/bundle.env"
(cd "$B" && find . -type f -printf '%s\t%p\n' | sort -k2) > "$B/MANIFEST"

mkdir -p "$DEST"
echo "gpu-bundle: ${#progs[@]} programs, ${#libs[@]} libraries, $(du -sh "$B" | cut -f1) unpacked; compressing (xz -9)"
tar -C "$STAGE" --owner=0 --group=0 --numeric-owner --sort=name -cf - "$NAME" | xz -9 -T2 > "$ARCHIVE.tmp"
mv "$ARCHIVE.tmp" "$ARCHIVE"

bytes="$(stat -c %s "$ARCHIVE")"
mib="$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }')"
echo "gpu-bundle: $ARCHIVE: $mib MiB ($bytes bytes); commit $commit with $dirty modified tracked files"
echo "gpu-bundle: the programs need glibc $need (built against $have)"
if ((bytes > 55 * 1048576)); then
  echo "gpu-bundle: too large: the working tree and carried paths travel in 64 MiB together" >&2
  exit 1
fi
cat <<EOF

On a session lent an nvidia-h200 machine, make this device call (docs/gpu-check.md):
  run  command: bash tools/gpu/check.sh
       carry:   [".gpu-bundle"]
       timeout_s: 420
EOF
