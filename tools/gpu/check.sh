#!/usr/bin/env bash
# The CUDA backend on a lent NVIDIA GPU machine, in one command (docs/gpu-check.md says how
# to call it and how to read what it prints). Run from the repo root on that machine, with
# .gpu-bundle/tilejit-gpu.tar.xz (made here by `tools/dev gpu-bundle`) carried along:
#   bash tools/gpu/check.sh
# Steps, each with its own timeout inside one budget for the whole script:
#   env          unpack, library resolution, nvidia-smi, the driver, tilejit's CUDA status, ptxas
#   cuda         tilejit_tests -tc='cuda*'
#   samples      every sample with --device=cuda --check at odd sizes (RESULT must say device=cuda)
#   cache        the f16 gemm in two processes over an empty cache folder: traced, lowered, linked
#                and written in the first (cache=miss), its cubin loaded from disk in the second
#   conformance  the conformance suite on CUDA alone
#   speed        each sample at a large size, --repeat=20, against torch where it imports
# Logs go to $OUT (env.log cuda_tests.log samples.log cache.log conformance.log speed.log summary.txt);
# the summary is printed last. Exit 0 only when every step that ran passed.
# Knobs (environment):
#   GPU_CHECK_STEPS=cuda,samples,cache,conformance,speed   which steps run after env
#   GPU_CHECK_BUDGET=360     seconds for the whole script; each step's timeout is cut to fit
#   GPU_CHECK_GLIBC=auto     host|bundled: run the programs on the machine's glibc or through the
#                            bundle's loader; auto takes the bundle's only where the machine's is older
#   GPU_CHECK_FORCE=1        run the CUDA steps even where CUDA is not available (tests this script)
#   GPU_CHECK_SPEED=large    small: tiny speed sizes (tests this script without a GPU)
#   TILEJIT_LIBCUDA          the driver library (default: libcuda.so.1 as found on the machine)
set -uo pipefail
START=$SECONDS
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ARCHIVE="${GPU_CHECK_ARCHIVE:-$ROOT/.gpu-bundle/tilejit-gpu.tar.xz}"
WORK=/tmp/tilejit-gpu-check
OUT="${OUT:-$WORK/out}"
BUDGET="${GPU_CHECK_BUDGET:-360}"
DEADLINE=$((START + BUDGET))
STEPS=",${GPU_CHECK_STEPS:-cuda,samples,cache,conformance,speed},"
FORCE="${GPU_CHECK_FORCE:-0}"
SPEED="${GPU_CHECK_SPEED:-large}"
mkdir -p "$OUT"
ENVLOG="$OUT/env.log"
: > "$ENVLOG"

# ---- Helpers

SUMMARY=()
# result STEP STATUS DETAIL: one summary line (STATUS: PASS, FAIL, TIMEOUT, NO-CUDA, SKIP).
result() {
  SUMMARY+=("$(printf '%-12s %-8s %s' "$1" "$2" "$3")")
  printf '== %s: %s %s\n' "$1" "$2" "$3"
}
want() { [[ $STEPS == *",$1,"* ]]; }
# limit SECONDS: a step's own limit, cut to what the budget leaves (20 s kept for the end).
limit() {
  local left=$((DEADLINE - SECONDS - 20))
  ((left < 0)) && left=0
  echo $(($1 < left ? $1 : left))
}
log() { printf '%s\n' "$*" >> "$ENVLOG"; }
# section TITLE COMMAND...: a command's output into env.log under a title.
section() {
  local title=$1; shift
  { echo; echo "---- $title"; "$@" 2>&1; } >> "$ENVLOG"
}

finish() {
  local failed=0 line
  {
    echo "tilejit GPU check: $(date -u +%Y-%m-%dT%H:%M:%SZ), $((SECONDS - START)) s of a $BUDGET s budget"
    echo "bundle: commit ${COMMIT:-?} (${DIRTY_FILES:-?} modified tracked files), built ${BUILT:-?}; glibc mode: ${MODE:-?}"
    echo "cuda: ${CUDA_STATUS:-unknown}"
    for line in "${SUMMARY[@]}"; do echo "$line"; done
  } > "$OUT/summary.txt"
  for line in "${SUMMARY[@]}"; do
    [[ $line =~ ^[a-z]+\ +(FAIL|TIMEOUT|NO-CUDA) ]] && failed=1
  done
  echo
  echo "================ SUMMARY ================"
  cat "$OUT/summary.txt"
  echo "logs: $(cd "$OUT" && ls | tr '\n' ' ')"
  exit "$failed"
}

# ---- env: unpack, libraries, the machine

# Nothing of ours reads or writes the tree, the home folder or a stray setting.
for v in $(compgen -e); do
  case $v in TILEJIT_LIBCUDA) ;; TILEJIT_*) unset "$v" ;; esac
done
rm -rf "$WORK/bundle" "$WORK/cache" "$WORK/run" "$WORK/ptx" "$WORK/samples"
mkdir -p "$WORK/bundle" "$WORK/cache" "$WORK/run" "$WORK/ptx" "$WORK/samples"
export TILEJIT_CACHE_DIR="$WORK/cache"
cd "$WORK/run" || exit 1

log "tilejit GPU check, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
section "machine" bash -c 'uname -a; grep -h PRETTY_NAME /etc/os-release; echo "glibc: $(getconf GNU_LIBC_VERSION)"; echo "cpus: $(nproc)"; free -g | head -2; id'

if [[ ! -f $ARCHIVE ]]; then
  result env FAIL "no $ARCHIVE: run tools/dev gpu-bundle here and carry .gpu-bundle"
  finish
fi
if command -v xz >/dev/null; then
  tar -C "$WORK/bundle" -xJf "$ARCHIVE" >> "$ENVLOG" 2>&1
else  # Python's lzma where the machine has no xz
  python3 -c 'import sys, tarfile; kw = {"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}; tarfile.open(sys.argv[1]).extractall(sys.argv[2], **kw)' \
    "$ARCHIVE" "$WORK/bundle" >> "$ENVLOG" 2>&1
fi
B="$WORK/bundle/tilejit-gpu"
if [[ ! -f $B/bundle.env ]]; then
  result env FAIL "$ARCHIVE did not unpack (see env.log)"
  finish
fi
# shellcheck disable=SC1091
. "$B/bundle.env"
read -ra PROGS <<< "$PROGRAMS"
section "bundle" cat "$B/bundle.env"

# glibc: the machine's where it is new enough, else the bundle's loader and libraries.
HOST_GLIBC="$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')"
version_le() { [[ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1)" == "$1" ]]; }
MODE="${GPU_CHECK_GLIBC:-auto}"
if [[ $MODE == auto ]]; then
  if [[ -n $HOST_GLIBC ]] && version_le "$GLIBC_NEEDED" "$HOST_GLIBC"; then MODE=host; else MODE=bundled; fi
fi
log "glibc: the programs need $GLIBC_NEEDED, the machine has ${HOST_GLIBC:-none found}: mode $MODE"

# The driver library: as given, else libcuda.so.1 where the machine keeps it.
find_libcuda() {
  local p d dirs
  p="$( (ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null) | awk '$1 == "libcuda.so.1" && /x86-64/ { print $NF; exit }')"
  if [[ -n $p && -e $p ]]; then echo "$p"; return; fi
  IFS=: read -ra dirs <<< "${LD_LIBRARY_PATH:-}"
  for d in "${dirs[@]}" /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64 /lib/x86_64-linux-gnu /usr/lib; do
    if [[ -n $d && -e $d/libcuda.so.1 ]]; then echo "$d/libcuda.so.1"; return; fi
  done
}
if [[ -z ${TILEJIT_LIBCUDA:-} ]]; then
  found="$(find_libcuda)"
  [[ -n $found ]] && export TILEJIT_LIBCUDA="$found"
fi
log "driver library: ${TILEJIT_LIBCUDA:-none found (tilejit tries libcuda.so.1)}"

# The programs' library path: the bundle first, then the driver's folder (libcuda loads
# libnvidia-ptxjitcompiler from there), then what the machine had. Set per command only:
# python3 and nvidia-smi keep the machine's own libraries.
LP="$B/lib"
[[ $MODE == bundled ]] && LP="$LP:$B/glibc"
[[ -n ${TILEJIT_LIBCUDA:-} && $TILEJIT_LIBCUDA == */* ]] && LP="$LP:$(dirname "$(readlink -f "$TILEJIT_LIBCUDA")")"
[[ -n ${LD_LIBRARY_PATH:-} ]] && LP="$LP:$LD_LIBRARY_PATH"
if [[ $MODE == bundled ]]; then
  RUNNER=("$B/glibc/ld-linux-x86-64.so.2" --library-path "$LP")
  export LC_ALL=C
else
  RUNNER=(env "LD_LIBRARY_PATH=$LP")
fi
log "library path: $LP"
# tj SECONDS PROGRAM ARGS...: a bundled program under a timeout.
tj() {
  local t=$1 p=$2; shift 2
  timeout -k 5 "$t" "${RUNNER[@]}" "$B/bin/$p" "$@"
}

# Each program's libraries: none missing, none outside the bundle but glibc's (on host mode).
libs_ok=1
for p in "${PROGS[@]}"; do
  if [[ $MODE == bundled ]]; then
    listing="$("$B/glibc/ld-linux-x86-64.so.2" --library-path "$LP" --list "$B/bin/$p" 2>&1)"
  elif ! command -v ldd >/dev/null; then
    listing="$(LD_LIBRARY_PATH="$LP" /lib64/ld-linux-x86-64.so.2 --list "$B/bin/$p" 2>&1)"
  else
    listing="$(LD_LIBRARY_PATH="$LP" ldd "$B/bin/$p" 2>&1)"
  fi
  [[ $p == tilejit_tests ]] && section "libraries of tilejit_tests ($MODE glibc)" echo "$listing"
  bad="$(awk -v b="$B/" -v mode="$MODE" '
    /not found|version .* not found|No such file/ { print; next }
    $2 == "=>" {
      if (index($3, b) == 1) next
      if (mode == "host" && $1 ~ /^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|libmvec\.so\.1|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1)$/) next
      print
    }' <<< "$listing")"
  if [[ -n $bad ]]; then
    libs_ok=0
    section "libraries of $p resolved wrongly" echo "$bad"
  fi
done
if ((libs_ok)); then
  log "libraries: every program's resolve inside the bundle (glibc: $MODE)"
else
  result libraries FAIL "a program's library is missing or outside the bundle (env.log)"
fi

section "nvidia-smi" bash -c 'if command -v nvidia-smi >/dev/null; then timeout 20 nvidia-smi; timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.sm,clocks.max.sm --format=csv; else echo "no nvidia-smi"; fi'
if command -v python3 >/dev/null; then
  section "the driver, through python3 ctypes" timeout 30 python3 - <<'PY'
import ctypes, os
name = os.environ.get("TILEJIT_LIBCUDA") or "libcuda.so.1"
try:
    cu = ctypes.CDLL(name)
except OSError as e:
    raise SystemExit(f"dlopen({name}) failed: {e}")
print(f"loaded {name}")
r = cu.cuInit(0)
print(f"cuInit(0) = {r}")
v = ctypes.c_int()
cu.cuDriverGetVersion(ctypes.byref(v))
print(f"driver API version: {v.value} (CUDA {v.value // 1000}.{v.value % 1000 // 10})")
if r == 0:
    n = ctypes.c_int()
    cu.cuDeviceGetCount(ctypes.byref(n))
    for i in range(n.value):
        d, major, minor, sms = ctypes.c_int(), ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        mem = ctypes.c_size_t()
        buf = ctypes.create_string_buffer(256)
        cu.cuDeviceGet(ctypes.byref(d), i)
        cu.cuDeviceGetName(buf, 256, d)
        cu.cuDeviceGetAttribute(ctypes.byref(major), 75, d)
        cu.cuDeviceGetAttribute(ctypes.byref(minor), 76, d)
        cu.cuDeviceGetAttribute(ctypes.byref(sms), 16, d)
        cu.cuDeviceTotalMem_v2(ctypes.byref(mem), d)
        print(f"device {i}: {buf.value.decode()}, compute capability {major.value}.{minor.value}, "
              f"{sms.value} multiprocessors, {mem.value / 2**30:.1f} GiB")
PY
fi

# tilejit's own view of the driver: the first cuda test prints it.
status_out="$(tj "$(limit 60)" tilejit_tests -tc='cuda: without a driver the status*' 2>&1)"
CUDA_STATUS="$(grep -o 'MESSAGE: .*' <<< "$status_out" | head -1 | sed 's/^MESSAGE: //')"
[[ -n $CUDA_STATUS ]] || CUDA_STATUS="tilejit_tests printed no status ($(tail -3 <<< "$status_out" | tr '\n' ' '))"
CUDA_OK=0
[[ $CUDA_STATUS == "a CUDA driver is present"* ]] && CUDA_OK=1
section "tilejit's CUDA status" echo "$CUDA_STATUS"
if ((libs_ok)); then
  result env PASS "glibc $MODE (needs $GLIBC_NEEDED, machine ${HOST_GLIBC:-?}); $CUDA_STATUS"
else
  result env FAIL "$CUDA_STATUS"
fi

# Every sample kernel printed as PTX for sm_90 and assembled by the machine's ptxas.
ptxas="$(command -v ptxas || ls /usr/local/cuda/bin/ptxas 2>/dev/null)"
kernels="$(tj 20 tile-ir --help 2>/dev/null | grep -o -- '--sample TEXT:{[^}]*}' | sed 's/.*{//; s/}//; s/,/ /g')"
printed=0 assembled=0 failed=""
for k in $kernels; do
  if tj 60 tile-ir --sample "$k" --stage=ptx --target=sm_90 > "$WORK/ptx/$k.ptx" 2>> "$ENVLOG"; then
    printed=$((printed + 1))
    if [[ -n $ptxas ]]; then
      if timeout 60 "$ptxas" -arch=sm_90 -o /dev/null "$WORK/ptx/$k.ptx" >> "$ENVLOG" 2>&1; then
        assembled=$((assembled + 1))
      else
        failed+=" $k"
      fi
    fi
  else
    failed+=" $k(tile-ir)"
  fi
done
ptx_version="$(cat "$WORK"/ptx/*.ptx 2>/dev/null | grep -m1 '^\.version')"
section "PTX (LLVM 19's NVPTX), vector_add's head" head -7 "$WORK/ptx/vector_add.ptx"
[[ -n $ptxas ]] && section "ptxas" "$ptxas" --version
if [[ -z $kernels ]]; then
  result ptxas FAIL "tile-ir did not list its sample kernels"
elif [[ -n $failed ]]; then
  result ptxas FAIL "PTX ${ptx_version#.version } not assembled for sm_90:$failed (env.log)"
elif [[ -z $ptxas ]]; then
  result ptxas SKIP "$printed kernels printed as PTX ${ptx_version#.version }; no ptxas on this machine"
else
  result ptxas PASS "$assembled/$printed sample kernels (PTX ${ptx_version#.version }, sm_90) assembled by ptxas $("$ptxas" --version | grep -o 'release [0-9.]*' | cut -d" " -f2)"
fi

# ---- Steps that need the GPU

# fallbacks LOG: the distinct reasons a kernel ran elsewhere than cuda, most frequent first.
fallbacks() {
  grep -o 'instead of cuda: .*' "$1" | sed 's/^instead of cuda: //' | sort | uniq -c | sort -rn | head -5
}
# doctest_counts LOG: "test cases: N | N passed | 0 failed" as one line.
doctest_counts() { grep -h '^\[doctest\] test cases:' "$1" | tail -1 | sed 's/^\[doctest\] //; s/  */ /g'; }
status_of_rc() { case $1 in 0) echo PASS ;; 124 | 137) echo TIMEOUT ;; *) echo FAIL ;; esac; }
no_cuda() { ((CUDA_OK == 0 && FORCE != 1)); }

if want cuda; then
  t="$(limit 120)"
  tj "$t" tilejit_tests -tc='cuda*' > "$OUT/cuda_tests.log" 2>&1
  rc=$?
  s="$(status_of_rc $rc)"
  detail="$(doctest_counts "$OUT/cuda_tests.log")"
  if [[ $s == PASS && $CUDA_OK == 0 ]]; then
    result cuda NO-CUDA "$detail, on the no-driver paths only: $CUDA_STATUS"
  else
    result cuda "$s" "rc=$rc; $detail"
  fi
  [[ $s == PASS ]] || grep -E 'ERROR|FATAL|MESSAGE|instead of cuda' "$OUT/cuda_tests.log" | head -15
fi

# Sample cases: name, program, arguments. ctest's (tests/CMakeLists.txt), then larger odd
# sizes that take many programs per launch (the FP8 attentions' at key counts whose v rows,
# stored [batch, heads, dim, seq], are whole 16-byte vectors: the TMA path).
sample_cases() {
  sed -n 's/^sample_test(\([A-Za-z0-9_]*\) \${BIN}\/\([A-Za-z0-9_]*\) \(.*\))$/\1 \2 \3/p' "$ROOT/tests/CMakeLists.txt"
  cat <<'EOF'
gemm_f32_big gemm --m=1000 --n=777 --k=515
gemm_f16_big gemm --m=515 --n=1000 --k=777 --dtype=f16
gemm_bf16_big gemm --m=333 --n=1025 --k=1001 --dtype=bf16
gemm_f8e4m3_wgmma gemm --m=333 --n=1025 --k=1001 --dtype=f8e4m3 --block-m=64 --block-n=128 --block-k=128
gemm_bf16_ws gemm --m=1333 --n=1025 --k=1001 --dtype=bf16 --block-m=128 --block-n=128 --block-k=64 --stages=4 --warps=8 --warp-specialize
gemm_bf16_ws256 gemm --m=1333 --n=1025 --k=1001 --dtype=bf16 --block-m=128 --block-n=256 --block-k=64 --stages=4 --warps=8 --warp-specialize
gemm_f8e4m3_ws gemm --m=333 --n=1025 --k=1040 --dtype=f8e4m3 --block-m=128 --block-n=128 --block-k=128 --stages=4 --warps=8 --warp-specialize
gemm_f8e5m2_tensor gemm --m=257 --n=515 --k=640 --dtype=f8e5m2 --scales=tensor
attention_causal_big attention --batch=2 --heads=3 --seq=511 --dim=64 --causal
attention_f16_d128_big attention --batch=1 --heads=4 --seq=300 --dim=128 --dtype=f16
attention_bf16_d128_ws attention --batch=1 --heads=4 --seq=300 --dim=128 --dtype=bf16 --causal --block-m=128 --block-n=64 --stages=3 --warps=8 --warp-specialize
attention_bf16_d128_overlap attention --batch=1 --heads=4 --seq=300 --dim=128 --dtype=bf16 --causal --block-m=128 --block-n=64 --stages=3 --warps=8 --warp-specialize --overlap-softmax
attention_bf16_d128_overlap_one_role attention --batch=1 --heads=4 --seq=300 --dim=128 --dtype=bf16 --block-m=128 --block-n=64 --stages=3 --warps=8 --overlap-softmax
attention_f8e4m3_d128_overlap attention --batch=1 --heads=4 --seq=1024 --dim=128 --dtype=f8e4m3 --causal --block-m=128 --block-n=64 --stages=3 --warps=8 --warp-specialize --overlap-softmax
attention_f8e4m3_d128_big attention --batch=1 --heads=4 --seq=1024 --dim=128 --dtype=f8e4m3 --causal
attention_f8e5m2_big attention --batch=2 --heads=2 --seq=512 --dim=64 --dtype=f8e5m2
softmax_big softmax --rows=1000 --cols=3001
layernorm_big layernorm --rows=1000 --cols=3001
vector_add_big vector_add --n=10000019
fused_big fused --n=10000019
dropout_big dropout --n=10000019 --p=0.37
EOF
}

if want samples; then
  if no_cuda; then
    result samples NO-CUDA "not run: $CUDA_STATUS"
  else
    : > "$OUT/samples.log"
    names=()
    running=0
    while read -r name prog args; do
      [[ -x $B/bin/$prog ]] || { echo "SKIP $name: no $prog in the bundle" >> "$OUT/samples.log"; continue; }
      names+=("$name")
      t="$(limit 90)"
      # shellcheck disable=SC2086
      (tj "$t" "$prog" $args --device=cuda --check > "$WORK/samples/$name.log" 2>&1; echo $? > "$WORK/samples/$name.rc") &
      running=$((running + 1))
      if ((running >= 4)); then wait -n; running=$((running - 1)); fi
    done < <(sample_cases)
    wait
    pass=0 fail=0 failed=""
    for name in "${names[@]}"; do
      rc="$(cat "$WORK/samples/$name.rc" 2>/dev/null || echo '?')"
      res="$(grep -h '^RESULT' "$WORK/samples/$name.log" | tail -1)"
      if [[ $rc == 0 && $res == *" device=cuda "* && $res == *"check=pass"* ]]; then
        pass=$((pass + 1)); verdict=PASS
      else
        fail=$((fail + 1)); failed+=" $name"; verdict="FAIL rc=$rc"
      fi
      {
        echo "---- $verdict $name"
        cat "$WORK/samples/$name.log"
      } >> "$OUT/samples.log"
      fields="$(grep -oE ' (device|shape|ms|max_rel_err|check)=[^ ]*' <<< "$res" | tr -d '\n')"
      printf '%-4s %-24s%s%s\n' "${verdict%% *}" "$name" "${fields:- no RESULT}" "$([[ $rc == 0 ]] || echo " rc=$rc")"
      [[ $verdict == PASS ]] ||
        grep -m1 -E 'error|instead of cuda' "$WORK/samples/$name.log" | sed 's/^\[[^]]*\] //' | cut -c1-240 | sed 's/^/     /'
    done
    if ((fail == 0)); then
      result samples PASS "$pass cases ran on cuda and matched float64"
    else
      result samples FAIL "$fail of $((pass + fail)) failed:$failed"
      fallbacks "$OUT/samples.log"
    fi
  fi
fi

# The cubin disk cache: a cold compile (trace to cubin) in one process, a disk hit in the next.
if want cache; then
  if no_cuda; then
    result cache NO-CUDA "not run: $CUDA_STATUS"
  else
    rm -rf "$WORK/cubins"
    : > "$OUT/cache.log"
    runs="" worst=0
    for run in cold disk; do
      TILEJIT_CACHE_DIR="$WORK/cubins" TILEJIT_AUTOTUNE=0 tj "$(limit 60)" gemm --m=1000 --n=777 --k=515 --dtype=f16 \
        --device=cuda --check > "$WORK/cache-$run.log" 2>&1
      rc=$?
      ((rc > worst)) && worst=$rc
      { echo "---- $run (rc=$rc)"; cat "$WORK/cache-$run.log"; } >> "$OUT/cache.log"
      res="$(grep '^RESULT' "$WORK/cache-$run.log" | tail -1)"
      fields="$(grep -oE ' (device|cache|compile_ms|check)=[^ ]*' <<< "$res" | tr -d '\n')"
      runs+=" $run:${fields:- no RESULT (rc=$rc)};"
    done
    echo "cache:$runs"
    if ((worst == 0)) && [[ $runs == *"cold: device=cuda check=pass cache=miss"*"disk: device=cuda check=pass cache=disk"* ]]; then
      result cache PASS "$runs"
    else
      result cache "$( ((worst == 124 || worst == 137)) && echo TIMEOUT || echo FAIL)" \
        "expected cache=miss, then cache=disk, both on cuda:$runs"
    fi
  fi
fi

# The conformance suite on CUDA alone, one process per test case, 8 at a time (LLVM's
# NVPTX backend and the driver's PTX compiler are the cost: the CPU's cores share it).
if want conformance; then
  if no_cuda; then
    result conformance NO-CUDA "not run: $CUDA_STATUS"
  else
    mkdir -p "$WORK/conf"
    count="$(tj 30 tilejit_tests -tc='conformance*' --count 2>&1 | grep -o 'filters: [0-9]*' | grep -o '[0-9]*$')"
    running=0
    for ((i = 1; i <= ${count:-0}; i++)); do
      t="$(limit 180)"
      ((t > 5)) || { echo "conformance: out of time before case $i" > "$WORK/conf/$i.log"; echo 124 > "$WORK/conf/$i.rc"; continue; }
      (TILEJIT_TEST_DEVICES=cuda TILEJIT_TEST_SKIP_GPU_COMPILE=1 tj "$t" tilejit_tests -tc='conformance*' --first=$i --last=$i -d \
         > "$WORK/conf/$i.log" 2>&1; echo $? > "$WORK/conf/$i.rc") &
      running=$((running + 1))
      if ((running >= 8)); then wait -n; running=$((running - 1)); fi
    done
    wait
    : > "$OUT/conformance.log"
    pass=0 fail=0 timedout=0 failed=""
    for ((i = 1; i <= ${count:-0}; i++)); do
      rc="$(cat "$WORK/conf/$i.rc" 2>/dev/null || echo '?')"
      case $rc in 0) pass=$((pass + 1)) ;; 124 | 137) timedout=$((timedout + 1)); failed+=" #$i(timeout)" ;; *) fail=$((fail + 1)); failed+=" #$i" ;; esac
      [[ $rc == 0 ]] || echo "  case #$i rc=$rc: $(grep -m1 -o 'TEST CASE: .*' "$WORK/conf/$i.log" | sed 's/TEST CASE: *//')"
      { echo "---- conformance case $i: rc=$rc"; cat "$WORK/conf/$i.log"; } >> "$OUT/conformance.log"
    done
    grep -h ' s: conformance' "$WORK"/conf/*.log | sort -rn | head -5 | sed 's/^/  slowest: /'
    fellback="$(grep -c 'instead of cuda' "$OUT/conformance.log")"
    if [[ -z $count || $count == 0 ]]; then
      result conformance FAIL "tilejit_tests listed no conformance case (conformance.log)"
      tj 30 tilejit_tests -tc='conformance*' --count >> "$OUT/conformance.log" 2>&1
    elif ((fail + timedout == 0)); then
      result conformance PASS "$pass/$count cases passed on cuda alone; $fellback launches fell back"
    else
      result conformance "$( ((fail > 0)) && echo FAIL || echo TIMEOUT)" \
        "$pass/$count passed, $fail failed, $timedout timed out:$failed; $fellback launches fell back"
      fallbacks "$OUT/conformance.log"
      grep -hE '(ERROR|FATAL)' "$OUT/conformance.log" | sed 's/^[^ ]*:[0-9]*: //' | sort | uniq -c | sort -rn | head -10
    fi
  fi
fi

# Speed: name, program, arguments, the torch peer's spec. FP8 attention has no torch peer of its own:
# it is set against the bf16 SDPA of the same sizes, which FP8 is meant to beat.
speed_cases() {
  if [[ $SPEED == small ]]; then
    cat <<'EOF'
gemm_f32 gemm --m=256 --n=256 --k=256 | gemm f32 256 256 256
gemm_f16 gemm --m=256 --n=256 --k=256 --dtype=f16 | gemm f16 256 256 256
attention_f16_causal attention --batch=1 --heads=2 --seq=128 --dim=64 --causal --dtype=f16 | attention f16 1 2 128 64 1
softmax softmax --rows=256 --cols=1024 | softmax 256 1024
layernorm layernorm --rows=256 --cols=1024 | layernorm 256 1024
vector_add vector_add --n=1048576 | add 1048576
fused fused --n=1048576 | fused 1048576
dropout dropout --n=1048576 --p=0.3 | dropout 1048576 0.3
EOF
    return
  fi
  cat <<'EOF'
gemm_f32 gemm --m=4096 --n=4096 --k=4096 | gemm f32 4096 4096 4096
gemm_f16 gemm --m=4096 --n=4096 --k=4096 --dtype=f16 | gemm f16 4096 4096 4096
gemm_bf16 gemm --m=4096 --n=4096 --k=4096 --dtype=bf16 | gemm bf16 4096 4096 4096
gemm_bf16_portable gemm --m=4096 --n=4096 --k=4096 --dtype=bf16 | gemm bf16 4096 4096 4096
gemm_bf16_notma gemm --m=4096 --n=4096 --k=4096 --dtype=bf16 | gemm bf16 4096 4096 4096
gemm_bf16_ws gemm --m=4096 --n=4096 --k=4096 --dtype=bf16 --block-m=128 --block-n=128 --block-k=64 --stages=4 --warps=8 --warp-specialize | gemm bf16 4096 4096 4096
gemm_bf16_ws256 gemm --m=4096 --n=4096 --k=4096 --dtype=bf16 --block-m=128 --block-n=256 --block-k=64 --stages=4 --warps=8 --warp-specialize | gemm bf16 4096 4096 4096
gemm_f8e4m3_tensor gemm --m=4096 --n=4096 --k=4096 --dtype=f8e4m3 --scales=tensor | scaled_gemm e4m3 4096 4096 4096
gemm_f8e4m3_tensor_ws gemm --m=4096 --n=4096 --k=4096 --dtype=f8e4m3 --scales=tensor --block-m=128 --block-n=128 --block-k=128 --stages=4 --warps=8 --warp-specialize | scaled_gemm e4m3 4096 4096 4096
attention_f32 attention --batch=4 --heads=16 --seq=2048 --dim=64 | attention f32 4 16 2048 64 0
attention_f16_causal attention --batch=4 --heads=16 --seq=2048 --dim=64 --causal --dtype=f16 | attention f16 4 16 2048 64 1
attention_f16_causal_portable attention --batch=4 --heads=16 --seq=2048 --dim=64 --causal --dtype=f16 | attention f16 4 16 2048 64 1
attention_bf16_d128 attention --batch=1 --heads=16 --seq=4096 --dim=128 --dtype=bf16 | attention bf16 1 16 4096 128 0
attention_bf16_d128_causal attention --batch=1 --heads=16 --seq=4096 --dim=128 --causal --dtype=bf16 | attention bf16 1 16 4096 128 1
attention_bf16_d128_ws attention --batch=1 --heads=16 --seq=4096 --dim=128 --dtype=bf16 --block-m=128 --block-n=64 --stages=3 --warps=8 --warp-specialize | attention bf16 1 16 4096 128 0
attention_bf16_d128_overlap attention --batch=1 --heads=16 --seq=4096 --dim=128 --dtype=bf16 --block-m=128 --block-n=64 --stages=3 --warps=8 --warp-specialize --overlap-softmax | attention bf16 1 16 4096 128 0
attention_bf16_d128_causal_overlap attention --batch=1 --heads=16 --seq=4096 --dim=128 --causal --dtype=bf16 --block-m=128 --block-n=64 --stages=3 --warps=8 --warp-specialize --overlap-softmax | attention bf16 1 16 4096 128 1
attention_f8e4m3_d128 attention --batch=1 --heads=16 --seq=4096 --dim=128 --dtype=f8e4m3 | attention bf16 1 16 4096 128 0
softmax softmax --rows=8192 --cols=8192 | softmax 8192 8192
layernorm layernorm --rows=8192 --cols=8192 | layernorm 8192 8192
vector_add vector_add --n=67108864 | add 67108864
fused fused --n=67108864 | fused 67108864
dropout dropout --n=67108864 --p=0.3 | dropout 67108864 0.3
EOF
}

if want speed; then
  if no_cuda; then
    result speed NO-CUDA "not run: $CUDA_STATUS"
  else
    : > "$OUT/speed.log"
    : > "$WORK/speed.tsv"
    ran=0 elsewhere=""
    while IFS='|' read -r left peer; do
      read -r name prog args <<< "$left"
      [[ -x $B/bin/$prog ]] || continue
      t="$(limit 45)"
      ((t > 5)) || { echo "speed: out of time before $name" >> "$OUT/speed.log"; break; }
      # A case named *_portable runs the portable target (sm_90 on a 9.0 GPU: mma.sync, not wgmma),
      # one named *_notma sm_90a with cp.async instead of TMA, each with its own cache folder so
      # that no path reuses another's tunings.
      portable=0 tma=1 cache="$TILEJIT_CACHE_DIR"
      [[ $name == *_portable ]] && portable=1 cache="$WORK/cache-portable"
      [[ $name == *_notma ]] && tma=0 cache="$WORK/cache-notma"
      echo "---- $name: TILEJIT_CUDA_PORTABLE=$portable TILEJIT_CUDA_TMA=$tma $prog $args --device=cuda --repeat=20" >> "$OUT/speed.log"
      # shellcheck disable=SC2086
      TILEJIT_CUDA_PORTABLE=$portable TILEJIT_CUDA_TMA=$tma TILEJIT_CACHE_DIR=$cache tj "$t" "$prog" $args --device=cuda --repeat=20 > "$WORK/speed-run.log" 2>&1
      rc=$?
      cat "$WORK/speed-run.log" >> "$OUT/speed.log"
      res="$(grep '^RESULT' "$WORK/speed-run.log" | tail -1)"
      if [[ -n $res ]]; then
        printf 'speed %-22s%s\n' "$name" "$(grep -oE ' (device|ms|first_ms|gflops|gbps)=[^ ]*' <<< "$res" | tr -d '\n')"
      else
        printf 'speed %-22s no RESULT (rc=%s)\n' "$name" "$rc"
      fi
      [[ -n $res ]] || { elsewhere+=" $name(rc=$rc$( ((rc == 124 || rc == 137)) && echo ', timed out'))"; continue; }
      ran=$((ran + 1))
      dev="$(grep -o ' device=[^ ]*' <<< "$res" | cut -d= -f2)"
      ms="$(grep -o ' ms=[^ ]*' <<< "$res" | cut -d= -f2)"
      first="$(grep -o ' first_ms=[^ ]*' <<< "$res" | cut -d= -f2)"
      rate="$(grep -oE ' (gflops|gbps)=[^ ]*' <<< "$res" | sed 's/^ //')"
      [[ $dev == cuda ]] || elsewhere+=" $name(device=$dev)"
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$dev" "$ms" "$first" "$rate" "$(xargs <<< "$peer")" >> "$WORK/speed.tsv"
    done < <(speed_cases)
    # The torch peers, where torch imports and sees the GPU; one RATIO line per case.
    t="$(limit 120)"
    if ((t > 10)) && command -v python3 >/dev/null; then
      PYTHONUNBUFFERED=1 timeout -k 5 "$t" python3 "$ROOT/tools/gpu/torch_peer.py" "$WORK/speed.tsv" 2>&1 | tee -a "$OUT/speed.log"
    else
      echo "speed: no torch peer (no python3 or no time left)" | tee -a "$OUT/speed.log"
    fi
    if [[ -n $elsewhere ]]; then
      result speed FAIL "$ran cases timed; not on cuda:$elsewhere"
    else
      result speed PASS "$ran cases timed on cuda (RATIO lines above and in speed.log)"
    fi
  fi
fi

finish
