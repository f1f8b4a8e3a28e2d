"""tilejit's softmax, layer norm and attention as PyTorch custom operators.

`import tilejit_ops` builds samples/torch_ops/tilejit_torch.cpp with torch.utils.cpp_extension
(against build/lib/libtilejit.so; $TILEJIT_BUILD_DIR names another build) and registers
torch.ops.tilejit.softmax, .layer_norm and .attention_forward (attention() returns its output),
with their backwards' ops: each with a schema, a fake
implementation (shapes only, for torch.compile) and autograd (layer norm's and attention's
backwards are tilejit kernels too; softmax's is torch arithmetic). They run in eager mode and
inside torch.compile(fullgraph=True) without a graph break.
"""
import os
import pathlib

import torch
import torch.utils.cpp_extension

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("TILEJIT_BUILD_DIR", ROOT / "build"))

(BUILD / "torch_ops").mkdir(exist_ok=True)
SAMPLES = BUILD / "lib/libtilejit_samples.a"  # linked in: its time in the flags rebuilds the extension when it changes
ext = torch.utils.cpp_extension.load(
    name="tilejit_torch",
    sources=[str(ROOT / "samples/torch_ops/tilejit_torch.cpp")],
    extra_include_paths=[str(ROOT)],
    extra_cflags=["-std=c++20", "-O2", f"-DTILEJIT_SAMPLES_BUILT={SAMPLES.stat().st_mtime_ns}"],
    extra_ldflags=[str(SAMPLES), f"-L{BUILD / 'lib'}", "-ltilejit",
                   f"-Wl,-rpath,{BUILD / 'lib'}"],
    build_directory=str(BUILD / "torch_ops"),
)


def _stream(t):
    """The stream tilejit orders a launch on: PyTorch's current one for a CUDA tensor."""
    return torch.cuda.current_stream(t.device).cuda_stream if t.is_cuda else 0


# ---- softmax over the last axis of a 2-D tensor ----

@torch.library.custom_op("tilejit::softmax", mutates_args=())
def softmax(x: torch.Tensor) -> torch.Tensor:
    return ext.softmax(x, _stream(x))


@softmax.register_fake
def _(x):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _softmax_context(ctx, inputs, output):
    ctx.save_for_backward(output)


def _softmax_backward(ctx, dy):
    (y,) = ctx.saved_tensors
    return y * (dy - (dy * y).sum(-1, keepdim=True))


softmax.register_autograd(_softmax_backward, setup_context=_softmax_context)


# ---- layer norm over the last axis of a 2-D tensor ----

@torch.library.custom_op("tilejit::layer_norm_backward", mutates_args=())
def layer_norm_backward(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor,
                        eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return tuple(ext.layernorm_backward(dy, x, weight, eps, _stream(x)))


@layer_norm_backward.register_fake
def _(dy, x, weight, eps):
    return (torch.empty_like(x, memory_format=torch.contiguous_format), torch.empty_like(weight),
            torch.empty_like(weight))


@torch.library.custom_op("tilejit::layer_norm", mutates_args=())
def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    return ext.layernorm(x, weight, bias, eps, _stream(x))


@layer_norm.register_fake
def _(x, weight, bias, eps=1e-5):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _layer_norm_context(ctx, inputs, output):
    x, weight, _, eps = inputs
    ctx.save_for_backward(x, weight)
    ctx.eps = eps


def _layer_norm_grad(ctx, dy):
    x, weight = ctx.saved_tensors
    dx, dw, db = layer_norm_backward(dy.contiguous(), x, weight, ctx.eps)
    return dx, dw, db, None


layer_norm.register_autograd(_layer_norm_grad, setup_context=_layer_norm_context)


# ---- attention over [batch, heads, sequence, dim] tensors ----

@torch.library.custom_op("tilejit::attention_forward", mutates_args=())
def attention_forward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                      causal: bool) -> tuple[torch.Tensor, torch.Tensor]:
    return tuple(ext.attention(q, k, v, causal, _stream(q)))


@attention_forward.register_fake
def _(q, k, v, causal):
    accumulator = torch.float64 if q.dtype == torch.float64 else torch.float32
    return torch.empty_like(q, memory_format=torch.contiguous_format), q.new_empty(q.shape[:3], dtype=accumulator)


@torch.library.custom_op("tilejit::attention_backward", mutates_args=())
def attention_backward(dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, out: torch.Tensor,
                       lse: torch.Tensor, causal: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return tuple(ext.attention_backward(dout, q, k, v, out, lse, causal, _stream(q)))


@attention_backward.register_fake
def _(dout, q, k, v, out, lse, causal):
    return tuple(torch.empty_like(t, memory_format=torch.contiguous_format) for t in (q, k, v))


def _attention_context(ctx, inputs, output):
    q, k, v, causal = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse)
    ctx.causal = causal


def _attention_grad(ctx, dout, dlse):
    q, k, v, out, lse = ctx.saved_tensors
    dq, dk, dv = attention_backward(dout, q, k, v, out, lse, ctx.causal)
    return dq, dk, dv, None


attention_forward.register_autograd(_attention_grad, setup_context=_attention_context)


def attention(q, k, v, causal=False):
    """softmax(q k^T / sqrt(d)) v, as F.scaled_dot_product_attention(q, k, v, is_causal=causal)."""
    return attention_forward(q, k, v, causal)[0]
