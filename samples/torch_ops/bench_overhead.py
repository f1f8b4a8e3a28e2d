"""What calling a tilejit kernel through a PyTorch custom op costs beyond calling it from C++:
per-call times of tilejit's softmax on a small tensor (where the call, not the kernel, is the
cost), launched from C++ in a loop, through the extension's Python function, and as
torch.ops.tilejit.softmax; torch.softmax for scale. `tools/dev torch --bench` runs it."""
import argparse
import time

import torch

import tilejit_ops as T


def per_call(f, calls):
    f()  # traced, compiled and warm
    start = time.perf_counter()
    for _ in range(calls):
        f()
    return (time.perf_counter() - start) / calls


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--rows", type=int, default=64)
    parser.add_argument("--cols", type=int, default=128)
    args = parser.parse_args()
    torch.set_num_threads(1)
    x = torch.randn(args.rows, args.cols)
    y = torch.empty_like(x)
    cpp = T.ext.softmax_from_cpp(x, y, args.calls)
    rows = [("tilejit softmax launched from C++", cpp),
            ("extension function (pybind11, DLPack views)", per_call(lambda: T.ext.softmax(x, 0), args.calls)),
            ("torch.ops.tilejit.softmax (custom op)", per_call(lambda: torch.ops.tilejit.softmax(x), args.calls)),
            ("torch.softmax", per_call(lambda: torch.softmax(x, -1), args.calls))]
    print(f"softmax of [{args.rows}, {args.cols}] f32, {args.calls} calls each, one torch thread")
    for name, seconds in rows:
        print(f"  {name:46s} {seconds * 1e6:8.2f} us/call  {seconds / cpp:5.2f}x C++  "
              f"overhead {(seconds - cpp) * 1e6:+7.2f} us")


if __name__ == "__main__":
    main()
