"""tilejit's custom ops against PyTorch: eager results against torch's own ops, tensors through
tilejit without copies, torch.compile(fullgraph=True) without graph breaks, and gradcheck in
f64. `tools/dev torch` runs them."""
import math
import unittest

import torch
import torch.nn.functional as F

import tilejit
import tilejit_ops as T


def close(test, got, want, tol):
    test.assertTrue(torch.allclose(got, want, rtol=tol, atol=tol, equal_nan=True),
                    f"max difference {(got - want).abs().nan_to_num().max().item()}")


class Eager(unittest.TestCase):
    def test_softmax_with_inf_nan_and_denormals(self):
        x = torch.randn(37, 53) * 4
        x[0, 0], x[1, 1], x[2, 2], x[3, 3] = math.inf, -math.inf, math.nan, 1e-40
        close(self, T.softmax(x), torch.softmax(x, -1), 2e-6)
        close(self, T.softmax(x.t().contiguous().t()), torch.softmax(x, -1), 2e-6)  # a column-major view

    def test_layer_norm(self):
        x, w, b = torch.randn(19, 45), torch.randn(45), torch.randn(45)
        close(self, T.layer_norm(x, w, b), F.layer_norm(x, (45,), w, b), 1e-5)

    def test_layer_norm_in_bf16_computes_in_f32(self):
        x, w, b = torch.randn(7, 300), torch.randn(300), torch.randn(300)  # 300 columns: not a bf16 integer
        got = T.layer_norm(x.bfloat16(), w.bfloat16(), b.bfloat16())
        self.assertEqual(got.dtype, torch.bfloat16)
        want = F.layer_norm(x.bfloat16().float(), (300,), w.bfloat16().float(), b.bfloat16().float())
        close(self, got.float(), want, 2e-2)  # one bf16 rounding of each output

    def test_a_dtype_tilejit_lacks_is_an_error_naming_it(self):
        with self.assertRaisesRegex(RuntimeError, "dtype int16 is not one of tilejit's"):
            T.softmax(torch.zeros(3, 4, dtype=torch.int16))

    def test_attention(self):
        q, k, v = (torch.randn(2, 3, 45, 32) for _ in range(3))
        for causal in (False, True):
            with self.subTest(causal=causal):
                close(self, T.attention(q, k, v, causal), F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                      1e-5)


class NoCopy(unittest.TestCase):
    def test_a_torch_tensor_goes_into_a_kernel_and_back_without_a_copy(self):
        x, out = torch.randn(5, 7), torch.full((5, 7), math.nan)
        t = tilejit.from_dlpack(x)
        self.assertEqual(torch.from_dlpack(t).data_ptr(), x.data_ptr())  # the same memory both ways
        result = torch.from_dlpack(tilejit.softmax(x, out=out))
        self.assertEqual(result.data_ptr(), out.data_ptr())  # the kernel wrote torch's memory
        close(self, out, torch.softmax(x, -1), 2e-6)


class Compiled(unittest.TestCase):
    def test_fullgraph_compile_runs_the_custom_ops_with_no_graph_break(self):
        def model(x, w, b, q, k, v):
            return T.layer_norm(T.softmax(x), w, b).square().sum() + T.attention(q, k, v, True).square().sum()

        def inputs():
            torch.manual_seed(0)
            shapes = [(13, 29), (29,), (29,), (1, 2, 21, 16), (1, 2, 21, 16), (1, 2, 21, 16)]
            return [torch.randn(s, requires_grad=True) for s in shapes]

        eager, compiled = inputs(), inputs()
        model(*eager).backward()
        torch._dynamo.reset()
        loss = torch.compile(model, fullgraph=True)(*compiled)  # fullgraph: a graph break is an error
        loss.backward()
        close(self, loss.detach(), model(*eager).detach(), 1e-5)
        for a, b in zip(eager, compiled):
            close(self, b.grad, a.grad, 1e-4)


class Gradients(unittest.TestCase):
    def test_gradcheck_in_f64(self):
        f64 = dict(dtype=torch.float64, requires_grad=True)
        x = torch.randn(5, 7, **f64)
        self.assertTrue(torch.autograd.gradcheck(T.softmax, (x,)))
        w, b = torch.randn(7, **f64), torch.randn(7, **f64)
        self.assertTrue(torch.autograd.gradcheck(T.layer_norm, (x, w, b)))
        q, k, v = (torch.randn(1, 2, 9, 16, **f64) for _ in range(3))
        for causal in (False, True):
            self.assertTrue(torch.autograd.gradcheck(lambda q, k, v: T.attention(q, k, v, causal), (q, k, v)))

    def test_opcheck(self):
        x, w, b = torch.randn(6, 11), torch.randn(11), torch.randn(11)
        torch.library.opcheck(torch.ops.tilejit.softmax.default, (x,))
        torch.library.opcheck(torch.ops.tilejit.layer_norm.default, (x, w, b, 1e-5))


if __name__ == "__main__":
    unittest.main()
