"""The torch peer of tools/gpu/check.sh's speed step: the same operation at the same size
through PyTorch on the GPU, one RATIO line per case.

    python3 tools/gpu/torch_peer.py SPEED_TSV

SPEED_TSV has one line per sample run: name, device, ms, first_ms, rate, peer spec
("gemm f16 4096 4096 4096", "attention f32 B H S D causal", "softmax R C", "layernorm R C",
"add N", "fused N", "dropout N P", "scaled_gemm e4m3 M N K": torch._scaled_mm with per-tensor
scales and B stored [N, K], as the gemm sample's --scales=tensor). On cuda the samples keep their tensors in device
memory, so tilejit's ms (the median of --repeat=20 launches after the first) is a launch on
resident tensors. Each peer is timed twice: torch_ms, the operation alone on tensors already
on the GPU (CUDA events), and torch_copy_ms, host tensors copied in, the operation, the
result copied back (wall clock after a synchronize). ratio = tilejit_ms / torch_ms (the
like-for-like figure) and ratio_copy = tilejit_ms / torch_copy_ms: above 1, tilejit is slower.
"""
import statistics
import sys
import time


def read_cases(path):
    cases = []
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 6:
                cases.append({"name": parts[0], "device": parts[1], "ms": float(parts[2]),
                              "first_ms": float(parts[3]), "rate": parts[4], "spec": parts[5].split()})
    return cases


def main():
    cases = read_cases(sys.argv[1])
    print(f"speed: {len(cases)} tilejit cases to compare")
    try:
        import torch
        import torch.nn.functional as F
    except Exception as e:  # noqa: BLE001 - any import failure means no peer
        print(f"torch: not importable ({e}); no peer timings")
        return
    if not torch.cuda.is_available():
        print(f"torch {torch.__version__}: no GPU visible; no peer timings")
        return
    dev = torch.device("cuda")
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}; "
          f"allow_tf32={torch.backends.cuda.matmul.allow_tf32} (false: f32 products in full f32)")
    dtypes = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
    gen = torch.Generator().manual_seed(0)

    def rand(*shape, dtype=torch.float32):
        return torch.randn(*shape, generator=gen, dtype=torch.float32).to(dtype)

    def peer(spec):
        """Host inputs and the operation on device tensors."""
        kind, args = spec[0], spec[1:]
        if kind == "gemm":
            dt, m, n, k = dtypes[args[0]], int(args[1]), int(args[2]), int(args[3])
            return [rand(m, k, dtype=dt), rand(k, n, dtype=dt)], lambda a, b: a @ b
        if kind == "scaled_gemm":
            dt = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}[args[0]]
            m, n, k = int(args[1]), int(args[2]), int(args[3])
            one = torch.ones((), dtype=torch.float32, device=dev)
            return [rand(m, k, dtype=dt), rand(n, k, dtype=dt)], \
                lambda a, bt: torch._scaled_mm(a, bt.t(), scale_a=one, scale_b=one, out_dtype=torch.float32)
        if kind == "attention":
            dt = dtypes[args[0]]
            b, h, s, d, causal = (int(x) for x in args[1:6])
            qkv = [rand(b, h, s, d, dtype=dt) for _ in range(3)]
            return qkv, lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))
        if kind == "softmax":
            return [rand(int(args[0]), int(args[1]))], lambda x: torch.softmax(x, dim=-1)
        if kind == "layernorm":
            r, c = int(args[0]), int(args[1])
            return [rand(r, c), rand(c), rand(c)], lambda x, w, b: F.layer_norm(x, (c,), w, b, 1e-5)
        if kind == "add":
            n = int(args[0])
            return [rand(n), rand(n)], lambda a, b: a + b
        if kind == "fused":
            n = int(args[0])
            return [rand(n), rand(n), rand(n)], lambda a, b, c: torch.relu(a * b + c)
        if kind == "dropout":
            n, p = int(args[0]), float(args[1])
            return [rand(n)], lambda x: F.dropout(x, p, training=True)
        raise ValueError(f"unknown peer {kind}")

    def median_ms_events(fn, reps=20):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        return statistics.median(times)

    def median_ms_wall(fn, reps=10):
        fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times)

    for c in cases:
        try:
            host, op = peer(c["spec"])
            on_gpu = [t.to(dev) for t in host]
            torch_ms = median_ms_events(lambda: op(*on_gpu))
            torch_copy_ms = median_ms_wall(lambda: op(*[t.to(dev) for t in host]).cpu())
            del on_gpu, host
            torch.cuda.empty_cache()
            print(f"RATIO case={c['name']} tilejit_ms={c['ms']:.3f} (device={c['device']}) torch_ms={torch_ms:.3f} "
                  f"torch_copy_ms={torch_copy_ms:.3f} ratio={c['ms'] / torch_ms:.2f} "
                  f"ratio_copy={c['ms'] / torch_copy_ms:.2f}")
        except Exception as e:  # noqa: BLE001 - report and go on with the next case
            print(f"RATIO case={c['name']} tilejit_ms={c['ms']:.3f} torch: failed ({type(e).__name__}: {e})")
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
