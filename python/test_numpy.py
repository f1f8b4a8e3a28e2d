"""The tilejit module with NumPy: arrays in and out through DLPack without copies, kernels on
them against float64 references, and bad input as clear errors. Run by ctest (python.numpy)."""
import gc
import math
import sys
import unittest

import numpy as np

import tilejit


def address(a):
    return a.__array_interface__["data"][0]


def softmax_reference(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


class Exchange(unittest.TestCase):
    def test_numpy_array_in_and_out_without_a_copy(self):
        x = np.random.default_rng(1).standard_normal((5, 7)).astype(np.float32)
        t = tilejit.from_dlpack(x)
        self.assertEqual(t.shape, (5, 7))
        self.assertEqual(t.strides, (7, 1))
        self.assertEqual(t.dtype, "f32")
        self.assertEqual(t.__dlpack_device__(), (1, 0))
        back = np.from_dlpack(t)
        self.assertEqual(address(back), address(x))  # the same memory, both ways
        x[2, 3] = 42.0
        self.assertEqual(back[2, 3], 42.0)

    def test_views_and_dtypes(self):
        # (NumPy 1.24 exports no bool; the C++ tests cover it.)
        base = np.arange(9 * 8, dtype=np.float64).reshape(9, 8)
        view = base[1:8, 2:7].T  # strided, transposed, offset
        t = tilejit.from_dlpack(view)
        self.assertEqual(t.shape, (5, 7))
        self.assertEqual(t.strides, (1, 8))
        np.testing.assert_array_equal(np.from_dlpack(t), view)
        for dtype, name in [(np.float32, "f32"), (np.float64, "f64"), (np.float16, "f16"), (np.int8, "i8"),
                            (np.int32, "i32"), (np.int64, "i64"), (np.uint8, "u8"),
                            (np.uint16, "u16"), (np.uint32, "u32"), (np.uint64, "u64")]:
            a = np.array([[1, 0, 2], [3, 1, 0]], dtype=dtype)
            t = tilejit.from_dlpack(a)
            self.assertEqual(t.dtype, name)
            np.testing.assert_array_equal(np.from_dlpack(t), a)

    def test_a_capsule_is_read_once_and_freed_once(self):
        x = np.ones(4, dtype=np.float32)
        capsule = x.__dlpack__()
        t = tilejit.from_dlpack(capsule)
        with self.assertRaisesRegex(ValueError, "each capsule is read once"):
            tilejit.from_dlpack(capsule)
        del capsule, t
        gc.collect()

    def test_an_unused_capsule_of_ours_frees_its_tensor(self):
        x = np.arange(6, dtype=np.float32)
        refs = sys.getrefcount(x)
        t = tilejit.from_dlpack(x)
        capsule = t.__dlpack__()
        del t
        gc.collect()
        self.assertGreater(sys.getrefcount(x), refs)  # the capsule's export holds the storage, and so x
        del capsule  # never consumed: its destructor runs the export's deleter
        gc.collect()
        self.assertEqual(sys.getrefcount(x), refs)

    def test_the_array_keeps_living_after_the_tensor_goes(self):
        x = np.arange(6, dtype=np.float32)
        refs = sys.getrefcount(x)
        t = tilejit.from_dlpack(x)
        self.assertGreater(sys.getrefcount(x), refs)  # the tensor holds the array
        del t
        gc.collect()
        self.assertEqual(sys.getrefcount(x), refs)  # and lets it go: its deleter ran

    def test_tilejit_memory_goes_out_and_lives_while_numpy_holds_it(self):
        y = np.from_dlpack(tilejit.softmax(np.zeros((2, 3), dtype=np.float32)))
        gc.collect()
        np.testing.assert_allclose(y, np.full((2, 3), 1 / 3), rtol=1e-6)


class Errors(unittest.TestCase):
    def test_unsupported_dtypes_and_objects(self):
        # The message starts at the operation: Python's traceback names the caller's line.
        with self.assertRaisesRegex(tilejit.Error, "^Tensor::fromDLPack: dtype int16 is not one of tilejit's"):
            tilejit.from_dlpack(np.zeros(3, dtype=np.int16))
        with self.assertRaisesRegex(tilejit.Error, "dtype complex64 is not one of tilejit's"):
            tilejit.from_dlpack(np.zeros(3, dtype=np.complex64))
        with self.assertRaisesRegex(tilejit.Error, "negative stride -1 on axis 0"):
            tilejit.from_dlpack(np.arange(4, dtype=np.float32)[::-1])
        with self.assertRaisesRegex(TypeError, "expected a tensor with __dlpack__"):
            tilejit.from_dlpack([1.0, 2.0])
        with self.assertRaisesRegex(ValueError, "unknown dtype 'f128'"):
            tilejit.empty([2], "f128")

    def test_mismatched_shapes_name_both(self):
        with self.assertRaisesRegex(ValueError, r"tilejit.gemm: a is \[3, 4\] and b is \[5, 6\]"):
            tilejit.gemm(np.ones((3, 4), np.float32), np.ones((5, 6), np.float32))


class Kernels(unittest.TestCase):
    devices = [d for d in ("cpu", "interp", "vulkan") if d in tilejit.devices()]

    def test_softmax_into_the_callers_array(self):
        rng = np.random.default_rng(2)
        x = rng.standard_normal((37, 53)).astype(np.float32) * 4
        x[0, 0], x[1, 1] = np.inf, -np.inf  # a row whose max is inf, and one with a zero term
        x[2, 2] = np.float32(1e-40)  # a denormal
        for device in self.devices:
            with self.subTest(device=device):
                out = np.full_like(x, np.nan)  # poisoned: an unwritten element fails the check
                result = tilejit.softmax(x, out=out, device=device)
                self.assertEqual(address(np.from_dlpack(result)), address(out))
                want = softmax_reference(x)
                np.testing.assert_allclose(out[1:], want[1:], rtol=2e-5, atol=1e-7)
                self.assertTrue(np.isnan(out[0]).all())  # inf - inf, as the reference gives
                self.assertTrue(np.isnan(want[0]).all())

    def test_a_stream_scope_leaves_host_launches_as_they_are(self):
        x = np.random.default_rng(5).standard_normal((3, 9)).astype(np.float32)
        with tilejit.stream(0x5150):  # a CUDA stream's handle: only CUDA and HIP launches use it
            got = np.from_dlpack(tilejit.softmax(x, device="cpu"))
        np.testing.assert_allclose(got, softmax_reference(x), rtol=2e-5)

    def test_layernorm_and_gemm_against_float64(self):
        rng = np.random.default_rng(3)
        x = rng.standard_normal((19, 45)).astype(np.float32)
        w, b = rng.standard_normal(45).astype(np.float32), rng.standard_normal(45).astype(np.float32)
        x64 = x.astype(np.float64)
        want = (x64 - x64.mean(1, keepdims=True)) / np.sqrt(x64.var(1, keepdims=True) + 1e-5) * w + b
        np.testing.assert_allclose(np.from_dlpack(tilejit.layernorm(x, w, b)), want, rtol=1e-4, atol=1e-5)
        a, bm = rng.standard_normal((33, 71)).astype(np.float32), rng.standard_normal((71, 29)).astype(np.float32)
        np.testing.assert_allclose(np.from_dlpack(tilejit.gemm(a, bm)), a.astype(np.float64) @ bm, rtol=1e-4,
                                   atol=1e-4)

    def test_attention_against_float64(self):
        rng = np.random.default_rng(4)
        q, k, v = (rng.standard_normal((1, 2, 45, 32)).astype(np.float32) for _ in range(3))
        for causal in (False, True):
            with self.subTest(causal=causal):
                s = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 1, 3, 2) / math.sqrt(32)
                if causal:
                    s = np.where(np.tril(np.ones((45, 45), bool)), s, -np.inf)
                p = np.exp(s - s.max(-1, keepdims=True))
                want = (p / p.sum(-1, keepdims=True)) @ v.astype(np.float64)
                got = np.from_dlpack(tilejit.attention(q, k, v, causal=causal))
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


if __name__ == "__main__":
    unittest.main()
