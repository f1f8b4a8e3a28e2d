#!/usr/bin/env python3
"""torch_peers: tilejit's CPU kernels against PyTorch on the same shapes, measured in one run.

Ours are the sample binaries (gemm, attention, softmax, layernorm, fused) run with --device=cpu
--repeat=R --warmup=3; their RESULT line's ms is the median of the runs after the first and the
warm-up. PyTorch's time is the median of R calls (time.perf_counter) after 3 warm-up calls, on
random data of the same shapes and dtypes:
  - torch.matmul, square f32 (1024, 2048, 4096) and bf16 (2048, 4096); torch's bf16 product is
    bf16, ours is f32. Where torch has no fast bf16 GEMM for the CPU (a 256 product under a tenth
    of f32's rate) the bf16 cases are skipped with an INFO line: they would take minutes;
  - F.scaled_dot_product_attention, batch 1, heads 2, dim 128, seq 2048, f32 and bf16, causal or not;
  - torch.softmax over rows and F.layer_norm (weight, bias, eps 1e-5), 4096x1024 f32; the softmax
    also under torch.compile (Inductor);
  - relu(a * b + c) over 16M f32 elements, eager and under torch.compile;
  - compile time of that chain at 4096 elements: cold, ours the first call (trace, compile and
    run) of a run with an empty TILEJIT_CACHE_DIR, Inductor's the wall time of torch.compile and the first call in a new process
    with an empty TORCHINDUCTOR_CACHE_DIR and TMPDIR (timed after importing torch._dynamo and
    Inductor); warm, ours the first_ms of a second run that loads the kernel from disk, Inductor's
    the same wall time in a second new process with the filled cache.
--quick leaves out the 4096 products and runs attention at seq 1024 and the chain at 4M.

Prints, like cpu-bench, `INFO`, `FIGURE <name> <value> <unit>` (PyTorch's rates) and
`RATIO <name> <value>` lines, ratio = PyTorch's time / ours (above 1: we are faster), then the
same comparisons as a markdown table. The kernel caches live in temporary folders (but for the
precompiled header of this process's Inductor, in /tmp/torchinductor_$USER).

  .venv-bench/bin/python bench/torch_peers.py [--bin build/bin] [--quick] [--threads N]
(tools/dev bench creates .venv-bench and runs this after cpu-bench.)
"""
import argparse
import importlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parent.parent
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}
WARMUP = 3
COMPILE_N = 4096  # elements of the chain whose compile time is measured


def fail(message):
    sys.exit(f"torch_peers: {message}")


def fused_chain(a, b, c):
    return torch.relu(a * b + c)


def row_softmax(x):
    return torch.softmax(x, dim=1)


def median_ms(fn, repeat):
    for _ in range(WARMUP):
        fn()
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - start) * 1e3)
    return statistics.median(runs)


class Bench:
    def __init__(self, args, cache_dir):
        self.bin, self.repeat, self.t = Path(args.bin), args.repeat, args.threads
        self.env = dict(os.environ, TILEJIT_THREADS=str(args.threads), TILEJIT_CACHE_DIR=cache_dir, TILEJIT_CACHE="1")
        self.rows = []

    def ours(self, sample, *flags, repeat=None, cache_dir=None):
        """The RESULT fields of one run of a sample binary on the CPU device."""
        cmd = [str(self.bin / sample), "--device=cpu", f"--repeat={repeat or self.repeat}", *flags]
        if not repeat:  # the warm-up PyTorch's side gets too
            cmd.append(f"--warmup={WARMUP}")
        env = dict(self.env, TILEJIT_CACHE_DIR=cache_dir) if cache_dir else self.env
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        except OSError as e:
            fail(f"cannot run `{' '.join(cmd)}`: {e}")
        results = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
        if proc.returncode != 0 or not results:
            fail(f"`{' '.join(cmd)}` exited with {proc.returncode}"
                 f"{'' if results else ' and printed no RESULT line'}:\n{proc.stdout}{proc.stderr}")
        fields = dict(kv.split("=", 1) for kv in results[-1].split()[1:])
        if fields.get("device") != "cpu":
            fail(f"`{' '.join(cmd)}` ran on '{fields.get('device')}', not on the cpu device")
        return fields

    def time(self, fn):
        return median_ms(fn, self.repeat)

    def compare(self, case, our_ms, peer, peer_figure, peer_ms, work=None, unit="GFLOP/s", note=""):
        """FIGURE of the peer (its rate for `work` flops or bytes, else its ms) and RATIO peer/ours;
        note goes into the table's label."""
        our_ms = float(our_ms)
        if work:
            figure(f"{peer_figure}_{'gflops' if unit == 'GFLOP/s' else 'gbps'}", work / (peer_ms * 1e6), unit)
        else:
            figure(f"{peer_figure}_ms", peer_ms, "ms")
        print(f"RATIO {case}_vs_{peer} {peer_ms / our_ms:.3f}", flush=True)
        self.rows.append((f"{case} vs {peer}{note}", our_ms, peer_ms, peer_ms / our_ms))


def figure(name, value, unit):
    print(f"FIGURE {name} {value:.6g} {unit}", flush=True)


def out_note(dtype):
    """Our gemm and attention write f32 whatever their operands; torch writes the operands' dtype."""
    return "" if dtype == "f32" else f" (torch out {dtype}, ours f32)"


def torch_gemm_rate(dtype, n=256):
    x, y = (torch.randn(n, n, dtype=DTYPES[dtype]) for _ in range(2))
    return 2 * n**3 / (median_ms(lambda: torch.matmul(x, y), 3) * 1e6)


def slow_bf16_gemm_reason():
    """Why torch's bf16 matmul is too slow to time here, or None. Without a bf16 GEMM for the CPU
    (oneDNN's needs AVX-512 or AMX) torch falls back to a loop hundreds of times slower than f32:
    one 2048 product took a minute on a 2-core AVX2 host."""
    f32, bf16 = torch_gemm_rate("f32"), torch_gemm_rate("bf16")
    if bf16 >= 0.1 * f32:
        return None
    return (f"torch's bf16 matmul runs {bf16:.2f} GFLOP/s against {f32:.1f} for f32 at 256 (no fast bf16 GEMM "
            f"for CPU capability {torch.backends.cpu.get_cpu_capability()}), too slow to time at full size")


def gemm(b, dtype, n):
    ours = b.ours("gemm", f"--m={n}", f"--n={n}", f"--k={n}", f"--dtype={dtype}")
    x, y = (torch.randn(n, n, dtype=DTYPES[dtype]) for _ in range(2))
    torch_ms = b.time(lambda: torch.matmul(x, y))
    b.compare(f"gemm_{dtype}_{n}_t{b.t}", ours["ms"], "torch", f"torch_matmul_{dtype}_{n}_t{b.t}", torch_ms, 2 * n**3,
              note=out_note(dtype))


def attention(b, dtype, seq, causal, batch=1, heads=2, dim=128):
    flags = [f"--batch={batch}", f"--heads={heads}", f"--seq={seq}", f"--dim={dim}", f"--dtype={dtype}"]
    ours = b.ours("attention", *flags, *(["--causal"] if causal else []))
    q, k, v = (torch.randn(batch, heads, seq, dim, dtype=DTYPES[dtype]) for _ in range(3))
    torch_ms = b.time(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
    name = f"{dtype}_s{seq}_d{dim}{'_causal' if causal else ''}_t{b.t}"
    flops = 4 * batch * heads * seq * seq * dim / (2 if causal else 1)
    b.compare(f"attention_{name}", ours["ms"], "torch_sdpa", f"torch_sdpa_{name}", torch_ms, flops,
              note=out_note(dtype))


def row_op(b, sample, fn, rows, cols, inductor):
    """softmax or layernorm of a [rows, cols] f32 matrix, eager and (if inductor) compiled."""
    ours = b.ours(sample, f"--rows={rows}", f"--cols={cols}")
    x = torch.randn(rows, cols)
    name = f"{sample}_{rows}x{cols}_t{b.t}"
    for peer, f in [("torch", fn)] + ([("inductor", torch.compile(fn))] if inductor else []):
        b.compare(name, ours["ms"], peer, f"{peer}_{name}", b.time(lambda: f(x)), 8 * rows * cols, "GB/s")


def fused(b, n):
    ours = b.ours("fused", f"--n={n}")
    x, y, z = (torch.randn(n) for _ in range(3))
    name = f"fused_{n >> 20}M_t{b.t}"
    for peer, f in (("torch", fused_chain), ("inductor", torch.compile(fused_chain))):
        b.compare(name, ours["ms"], peer, f"{peer}_{name}", b.time(lambda: f(x, y, z)), 16 * n, "GB/s")


def vector_add(b, n):
    """a + b against torch.add(out=) and against a copy of the same 12n bytes (6n read, 6n written)."""
    ours = b.ours("vector_add", f"--n={n}")
    x, y, out = torch.randn(n), torch.randn(n), torch.empty(n)
    source, copy = torch.randn(n * 3 // 2), torch.empty(n * 3 // 2)
    name = f"vector_add_{n >> 20}M_t{b.t}"
    b.compare(name, ours["ms"], "torch_add", f"torch_add_{name}", b.time(lambda: torch.add(x, y, out=out)), 12 * n, "GB/s")
    b.compare(name, ours["ms"], "copy", f"copy_{name}", b.time(lambda: copy.copy_(source)), 12 * n, "GB/s",
              note=" (torch's copy_ of the same bytes)")


def compile_times(b):
    """Cold and warm compile of the fused chain: ours in two runs, Inductor in two new processes."""
    with tempfile.TemporaryDirectory() as our_dir, tempfile.TemporaryDirectory() as inductor_dir:
        cold, warm = (b.ours("fused", f"--n={COMPILE_N}", repeat=1, cache_dir=our_dir) for _ in range(2))
        if cold.get("cache") == "disk" or warm.get("cache") != "disk":
            fail(f"fused compile runs came from the caches {cold.get('cache')} and {warm.get('cache')}, "
                 "expected a compile, then disk")
        inductor_cold, inductor_warm = (inductor_first_call(b, inductor_dir) for _ in range(2))
    figure("tilejit_compile_cold_fused_ms", float(cold["compile_ms"]), "ms")
    figure("tilejit_first_call_cold_fused_ms", float(cold["first_ms"]), "ms")
    figure("tilejit_first_call_warm_fused_ms", float(warm["first_ms"]), "ms")
    b.compare("compile_cold_fused", cold["first_ms"], "inductor", "inductor_first_call_cold_fused", inductor_cold)
    b.compare("compile_warm_fused", warm["first_ms"], "inductor", "inductor_first_call_warm_fused", inductor_warm)


def inductor_first_call(b, cache_dir):
    """ms of torch.compile and the first call of the chain in a new process (--inductor-first-call).
    TMPDIR too: Inductor keeps its precompiled header in $TMPDIR/torchinductor_$USER whatever
    TORCHINDUCTOR_CACHE_DIR says, and the cold call builds it (seconds)."""
    cmd = [sys.executable, __file__, f"--threads={b.t}", "--inductor-first-call"]
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache_dir, TMPDIR=cache_dir)
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        fail(f"`{' '.join(cmd)}` exited with {proc.returncode}:\n{proc.stdout}{proc.stderr}")
    return float(proc.stdout.split()[-1])


def print_table(rows):
    print("\n| case | ours ms | torch ms | ratio |\n|---|---:|---:|---:|")
    for case, ours, peer, ratio in rows:
        print(f"| {case} | {ours:.3f} | {peer:.3f} | {ratio:.3f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=str(ROOT / "build" / "bin"), help="the sample binaries (default: build/bin)")
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats (under ~90 s)")
    parser.add_argument("--threads", type=int, default=int(os.environ.get("TILEJIT_THREADS") or os.cpu_count()),
                        help="threads of both sides (default: $TILEJIT_THREADS or every CPU)")
    parser.add_argument("--inductor-first-call", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    if args.inductor_first_call:  # a child of compile_times
        for module in ("torch._dynamo", "torch._inductor.compile_fx"):  # Python imports are not compile time
            importlib.import_module(module)
        x, y, z = (torch.randn(COMPILE_N) for _ in range(3))
        start = time.perf_counter()
        torch.compile(fused_chain)(x, y, z)
        print(f"{(time.perf_counter() - start) * 1e3:.3f}")
        return

    args.repeat = 5 if args.quick else 10
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    print(f"INFO torch {torch.__version__} threads {args.threads} loadavg {load}", flush=True)
    with tempfile.TemporaryDirectory() as cache_dir, tempfile.TemporaryDirectory() as inductor_dir:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = inductor_dir  # read at the first torch.compile
        b = Bench(args, cache_dir)
        sizes = [1024, 2048] if args.quick else [1024, 2048, 4096]
        for n in sizes:
            gemm(b, "f32", n)
        if reason := slow_bf16_gemm_reason():
            print(f"INFO torch_matmul_bf16 skipped: {reason}", flush=True)
        else:
            for n in sizes[1:]:
                gemm(b, "bf16", n)
        for dtype in DTYPES:
            for causal in (False, True):
                attention(b, dtype, 1024 if args.quick else 2048, causal)
        row_op(b, "softmax", row_softmax, 4096, 1024, inductor=True)
        weight, bias = torch.randn(1024), torch.randn(1024)
        row_op(b, "layernorm", lambda x: F.layer_norm(x, (1024,), weight, bias, eps=1e-5), 4096, 1024, inductor=False)
        fused(b, (4 if args.quick else 16) << 20)
        vector_add(b, (4 if args.quick else 16) << 20)
        compile_times(b)
    print_table(b.rows)


if __name__ == "__main__":
    main()
