"""The kernel compiler's shipped kernels from Python: ``relayout``, ``softmax`` and ``gemm``, each with
its parameters, every dispatch decision (``explain``), its CUDA source (``cuda``) and a run on the CPU
interpreter (``run``) on numpy arrays. The same kernels as ``axe kernel``; GPU runs are the CLI's
(``axe kernel run ... --backend cuda``).

>>> import numpy as np, axe.kernel
>>> k = axe.kernel.softmax(4, 8)
>>> y = k.run(np.zeros((4, 8), np.float32))
>>> float(y[0, 0])
0.125
"""

from __future__ import annotations

import numpy as np

from ._axe import Kernel, KernelError, _kernel_gemm, _kernel_relayout, _kernel_softmax
from ._numpy import _accepts, _is_dense_row_major, _native, natural_dtype


def relayout(src, dst) -> Kernel:
    """The relayout kernel from array `src` (an ``axe.Shape`` or its text, e.g.
    ``"bf16[256,512]{1,0}"``) into `dst` (a layout such as ``"{1,0:T(8,128)(2,1)}"``, or a whole
    shape)."""
    return _kernel_relayout(src, dst)


def softmax(rows: int, cols: int, dtype: str = "f32") -> Kernel:
    """The softmax kernel over the rows of a row-major ``[rows, cols]`` array (f32, f16 or bf16; f32
    math)."""
    return _kernel_softmax(rows, cols, dtype)


def gemm(m: int, n: int, k: int, dtype: str = "bf16") -> Kernel:
    """The gemm kernel ``C[m, n] = A[m, k] · B`` in f32 (A and B bf16 or f16), B given as its
    transpose ``[n, k]`` (row-major; B column-major, as ``nn.Linear`` keeps weights)."""
    return _kernel_gemm(m, n, k, dtype)


def _bytes_of(array, name: str, shape) -> bytes:
    """The bytes of input `name` (holding `shape`): its logical array (row-major layouts), or its byte
    image (a 1-D ``uint8`` array of the layout's bytes)."""
    if not isinstance(array, np.ndarray):
        raise KernelError(f"{name}: expected a numpy array, got {type(array).__name__}")
    a = np.ascontiguousarray(_native(array))
    if tuple(a.shape) == tuple(shape.dims) and _is_dense_row_major(shape):
        if not _accepts(a.dtype, shape.dtype, shape.element_bits):
            raise KernelError(
                f"{name}: a {array.dtype} array cannot hold {shape.dtype} elements; convert it first"
            )
    elif not (a.ndim == 1 and a.dtype == np.uint8 and a.size == shape.physical_bytes):
        raise KernelError(
            f"{name}: an array of shape {tuple(array.shape)} and dtype {array.dtype} is neither the "
            f"logical array of {shape} (shape {tuple(shape.dims)}) nor its byte image (1-D uint8 of "
            f"{shape.physical_bytes} bytes)"
        )
    return a.reshape(-1).view(np.uint8).tobytes()


def run(kernel: Kernel, *inputs) -> np.ndarray:
    """Runs `kernel` on the CPU interpreter with numpy `inputs` (one per input parameter, in order) and
    returns its output: the logical array when the output is row-major (dtype its element type's,
    bf16 as ``ml_dtypes.bfloat16`` when installed, else ``uint16``), else its byte image."""
    params = kernel.params
    ins = [p for p in params if p[3]]
    if len(inputs) != len(ins):
        raise KernelError(
            f"{kernel.name} takes {len(ins)} input(s) ({', '.join(p[0] for p in ins)}); "
            f"{len(inputs)} given"
        )
    given = iter(inputs)
    buffers = []
    for name, shape, size, is_input in params:
        if is_input:
            buffers.append(_bytes_of(next(given), name, shape))
        else:
            buffers.append(bytes(size))
    out = kernel._run(buffers)
    (i, (name, shape, size, _)) = next((i, p) for i, p in enumerate(params) if not p[3])
    data = np.frombuffer(out[i], dtype=np.uint8)
    if _is_dense_row_major(shape):
        return data.view(natural_dtype(shape.dtype)).reshape(tuple(shape.dims)).copy()
    return data.copy()

__all__ = ["Kernel", "KernelError", "gemm", "relayout", "run", "softmax"]
