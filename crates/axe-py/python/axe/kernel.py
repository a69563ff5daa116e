"""The kernel compiler from Python: kernels described with Axe layouts (``Builder``) and the shipped
ones (``relayout``, ``softmax``, ``gemm``, and ``gemm_reduce_scatter`` across devices), each with its parameters, every dispatch decision
(``explain``), its CUDA source (``cuda``) and a run on the CPU interpreter (``run``) on numpy arrays.
Kernels across the devices of a mesh (``DeviceBuilder``, ``gemm_reduce_scatter``) run one thread per
device (``DeviceKernel.run_devices``). The same compiler as ``axe kernel``; GPU runs are the CLI's
(``axe kernel run ... --backend cuda``), MPI runs too.

>>> import numpy as np, axe.kernel
>>> k = axe.kernel.softmax(4, 8)
>>> y = k.run(np.zeros((4, 8), np.float32))
>>> float(y[0, 0])
0.125

A kernel written in Python (``Builder``), run on a dict of its global buffers:

>>> from axe.kernel import Builder, Scope
>>> b = Builder("transpose", grid=1, threads=64)
>>> src = b.tensor("x", b.buffer("x", "global", "f32", 64), [8, 8], "S[(8,8):(8,1)]")
>>> dst = b.tensor("y", b.buffer("y", "global", "f32", 64), [8, 8], "S[(8,8):(1,8)]")
>>> b.copy(Scope.cta(), dst, src)
0
>>> out = b.build().run({"x": np.arange(64, dtype=np.float32)})
>>> float(out["y"].reshape(8, 8)[1, 0])
1.0
"""

from __future__ import annotations

import numpy as _np

from ._axe import (
    DeviceBuilder,
    DeviceKernel,
    Kernel,
    KernelBlock as Block,
    KernelBuffer as Buffer,
    KernelBuilder as Builder,
    KernelError,
    KernelExpr as Expr,
    KernelScope as Scope,
    KernelTensor as Tensor,
    RelayoutError,
    _kernel_cta,
    _kernel_gemm,
    _kernel_gemm_reduce_scatter,
    _kernel_relayout,
    _kernel_softmax,
    _kernel_tid,
    _kernel_wgmma_accumulator,
)
from ._numpy import _accepts, _is_dense_row_major, _native, natural_dtype, to_physical

#: ``threadIdx.x``: the thread's index in its CTA, an ``Expr``.
tid: Expr = _kernel_tid
#: ``blockIdx.x``: the CTA's index in the grid, an ``Expr``.
cta: Expr = _kernel_cta


def wgmma_accumulator(n: int):
    """The ``axe.Layout`` of a ``wgmma`` m64nNk16 accumulator ``[64, n]`` over a warpgroup's ``reg``,
    ``lane`` and ``warp`` axes (the register tensor a warpgroup-scope ``gemm`` accumulates into)."""
    return _kernel_wgmma_accumulator(n)


def relayout(src, dst) -> Kernel:
    """The relayout kernel from array `src` (an ``axe.Shape`` or its text, e.g.
    ``"bf16[256,512]{1,0}"``) into `dst`: an XLA layout such as ``"{1,0:T(8,128)(2,1)}"``, or a whole
    XLA shape of the same array (its text or an ``axe.Shape``). The kernel moves arrays between XLA
    layouts: an ``axe.Layout``, an ``axe.cute.Layout`` or Axe or CuTe notation is a ``KernelError``
    saying what `dst` takes (``axe.relayout`` moves bytes into Axe layouts on the CPU)."""
    return _kernel_relayout(src, dst)


def softmax(rows: int, cols: int, dtype: str = "f32") -> Kernel:
    """The softmax kernel over the rows of a row-major ``[rows, cols]`` array (f32, f16 or bf16; f32
    math)."""
    return _kernel_softmax(rows, cols, dtype)


def gemm(m: int, n: int, k: int, dtype: str = "bf16", target: str = "sm_80") -> Kernel:
    """The gemm kernel ``C[m, n] = A[m, k] · B`` in f32 (A and B bf16 or f16), B given as its
    transpose ``[n, k]`` (pass ``B.T``, any order: as ``nn.Linear`` keeps its weights), as shipped for
    `target`: on ``"sm_90a"``, when m, n, k are multiples of 128, 256, 64, the copy-engine (TMA) and
    ``wgmma`` kernel; else the ``mma.sync`` one."""
    return _kernel_gemm(m, n, k, dtype, target)


def gemm_reduce_scatter(
    m: int, n: int, k: int, dtype: str = "bf16", devices: int = 1, target: str = "sm_80"
) -> DeviceKernel:
    """The kernel across devices ``C[m, n] = A[m, k] · B`` in f32 (A and B bf16 or f16, B given as
    ``[n, k]`` as for ``gemm``) over a mesh ``x=devices`` (the paper's §4.2): A and B, on device 0, are
    split along K; each device runs the ``gemm`` shipped for `target` on its slices into partial sums;
    the partial sums are reduced and scattered along M (device ``d`` holds rows ``d·⌈m/P⌉…``), then
    gathered on device 0. K must split into `devices` slices the per-device gemm takes (multiples of
    32; m and n multiples of 128). ``run(a, b)`` runs every device as a thread of this process."""
    return _kernel_gemm_reduce_scatter(m, n, k, dtype, devices, target)


def _run_devices(kernel: DeviceKernel, inputs, shards: bool):
    """Runs a ``DeviceKernel`` on A and B (device 0's inputs): C gathered on device 0, or with
    `shards` the list of every device's rows of C."""
    if kernel.mnk is None:
        raise KernelError(
            f"{kernel.name} was described with axe.kernel.DeviceBuilder: run it with run_devices"
        )
    params = kernel.params
    ins = [p for p in params if p[3]]
    if len(inputs) != len(ins):
        raise KernelError(
            f"{kernel.name} takes {len(ins)} input(s) ({', '.join(p[0] for p in ins)}); "
            f"{len(inputs)} given"
        )
    a, b = (
        _bytes_of(x, name, shape, _gemm_b(kernel, name))
        for x, (name, shape, _, _) in zip(inputs, ins)
    )
    c, parts = kernel._run(a, b)
    out = next(p for p in params if not p[3])[1]
    if not shards:
        return _array_of(c, out)
    m, n = out.dims
    # Device d holds rows d·⌈m/P⌉ .. min(m, (d+1)·⌈m/P⌉) (XLA's uneven rule); its shard buffer has
    # ⌈m/P⌉ rows, the ones past m padding.
    per = -(-m // len(parts))
    rows = [max(0, min(m, (d + 1) * per) - d * per) for d in range(len(parts))]
    return [
        _np.frombuffer(s, dtype=_np.float32).reshape(-1, n)[:r].copy() for s, r in zip(parts, rows)
    ]


def _run_by_device(kernel: DeviceKernel, given, target=None) -> dict:
    """Runs a ``DeviceKernel`` on ``{tensor name: [each device's shard]}``; returns every tensor's
    shards afterwards, by name (1-D arrays of its dtype)."""
    if not isinstance(given, dict):
        raise KernelError(
            f"run_devices takes a dict {{tensor name: [device 0's shard, ...]}}, not {type(given).__name__}"
        )
    info = kernel._shards
    index = {name: i for i, (name, _, _) in enumerate(info)}
    unknown = [n for n in given if n not in index]
    if unknown:
        raise KernelError(
            f"{kernel.name} has no device tensor {', '.join(map(repr, unknown))}; "
            f"its tensors are {', '.join(index)}"
        )
    inputs = [[] for _ in range(kernel.devices)]
    for name, shards in given.items():
        i = index[name]
        _, dtype, sizes = info[i]
        if isinstance(shards, _np.ndarray) or not isinstance(shards, (list, tuple)):
            raise KernelError(f"{name}: expected a list of arrays, one per device")
        if len(shards) > kernel.devices:
            raise KernelError(f"{name}: {len(shards)} shards given; {kernel.name} runs on {kernel.devices} devices")
        for d, a in enumerate(shards):
            if a is None:
                continue
            if not isinstance(a, _np.ndarray):
                raise KernelError(f"{name} on device {d}: expected a numpy array, got {type(a).__name__}")
            a = _np.ascontiguousarray(_native(a))
            if not _accepts(a.dtype, dtype, 8 * _np.dtype(natural_dtype(dtype)).itemsize):
                raise KernelError(
                    f"{name} on device {d}: a {a.dtype} array cannot hold {dtype} elements; convert it first"
                )
            if a.nbytes != sizes[d]:
                raise KernelError(
                    f"{name} on device {d}: its shard has {sizes[d]} bytes; the array has {a.nbytes}"
                )
            inputs[d].append((i, a.reshape(-1).view(_np.uint8).tobytes()))
    out = kernel._run_devices(inputs, target)
    return {
        name: [_np.frombuffer(out[d][i], dtype=natural_dtype(dtype)).copy() for d in range(kernel.devices)]
        for i, (name, dtype, _) in enumerate(info)
    }


def _gemm_b(kernel, name: str) -> str:
    """What a shipped gemm's refusal of B adds: B is taken as its transpose, which only its shape tells
    from B itself."""
    shipped = (not kernel.built) if isinstance(kernel, Kernel) else kernel.mnk is not None
    if name == "b" and shipped and kernel.name.startswith("gemm"):
        return "; gemm takes B as its transpose, an [n, k] array: pass B.T (any order)"
    return ""


def _bytes_of(array, name: str, shape, hint: str = "") -> bytes:
    """The bytes of input `name` (holding `shape`): its logical array (in any layout: moved into the
    layout's byte image), or that byte image itself (a 1-D ``uint8`` array of the layout's bytes).
    `hint` ends the message of an array of another shape."""
    if not isinstance(array, _np.ndarray):
        raise KernelError(f"{name}: expected a numpy array, got {type(array).__name__}")
    a = _np.ascontiguousarray(_native(array))
    logical = tuple(a.shape) == tuple(shape.dims)
    image = a.ndim == 1 and a.dtype == _np.uint8 and a.size == shape.physical_bytes
    if logical and not _is_dense_row_major(shape) and not image:
        # Moved into the layout (which checks the dtype against the elements, packed pred included).
        try:
            return to_physical(a, shape).tobytes()
        except RelayoutError as e:
            raise KernelError(f"{name}: {e}") from None
    if logical and _is_dense_row_major(shape):
        if not _accepts(a.dtype, shape.dtype, shape.element_bits):
            raise KernelError(
                f"{name}: a {array.dtype} array cannot hold {shape.dtype} elements; convert it first"
            )
    elif not image:
        raise KernelError(
            f"{name}: an array of shape {tuple(array.shape)} and dtype {array.dtype} is neither the "
            f"logical array of {shape} (shape {tuple(shape.dims)}) nor its byte image (1-D uint8 of "
            f"{shape.physical_bytes} bytes){hint}"
        )
    return a.reshape(-1).view(_np.uint8).tobytes()


def _array_of(data: bytes, shape):
    """Output bytes as the logical array (row-major layouts) or the byte image."""
    raw = _np.frombuffer(data, dtype=_np.uint8)
    if _is_dense_row_major(shape):
        return raw.view(natural_dtype(shape.dtype)).reshape(tuple(shape.dims)).copy()
    return raw.copy()


def _run_by_name(kernel: Kernel, given: dict, target: str = "cpu") -> dict:
    """Runs `kernel` with the global buffers `given` by name (the others start at zero); returns every
    global buffer by name afterwards."""
    params = kernel.params
    names = [p[0] for p in params]
    unknown = [n for n in given if n not in names]
    if unknown:
        raise KernelError(
            f"{kernel.name} has no global buffer {', '.join(map(repr, unknown))}; "
            f"its buffers are {', '.join(names)}"
        )
    buffers = []
    for name, shape, _, _ in params:
        if name not in given:
            buffers.append(None)  # zeros, made once the run's memory is admitted
            continue
        a = given[name]
        if kernel.built and isinstance(a, _np.ndarray) and a.ndim != 1 and a.size == shape.dims[0]:
            a = a.reshape(-1)  # a built kernel's buffers are 1-D: any array of their size, row-major
        buffers.append(_bytes_of(a, name, shape))
    out = kernel._run(buffers, target)
    return {name: _array_of(out[i], shape) for i, (name, shape, _, _) in enumerate(params)}


def run(kernel: Kernel, *inputs, target: str = "cpu"):
    """Runs `kernel` on the CPU interpreter: the program lowered for `target` (``"cpu"``, or a GPU's
    ``"sm_80"``/``"sm_90a"`` or Trainium's ``"trn1"`` — the interpreter runs any target's program; GPU
    runs are the CLI's, ``axe kernel run ... --backend cuda``).

    With numpy `inputs`, one per input parameter of a shipped kernel in order, it returns the output:
    the logical array when the output is row-major (dtype its element type's, bf16 as
    ``ml_dtypes.bfloat16`` when installed, else ``uint16``), else its byte image. With one dict
    ``{buffer name: array}`` (how a kernel built with ``Builder`` runs), every global buffer not given
    starts at zero and it returns a dict of every global buffer afterwards (a built kernel's buffers are
    1-D: any array of the buffer's size is taken row-major). A ``DeviceKernel`` takes A and B and
    returns C (``DeviceKernel.run``)."""
    if not isinstance(kernel, (Kernel, DeviceKernel)):
        raise TypeError(f"run takes an axe.kernel.Kernel or DeviceKernel, not {type(kernel).__name__}")
    if isinstance(kernel, DeviceKernel):
        if target != "cpu":
            raise KernelError(
                f"{kernel.name} runs its per-device gemm as lowered for {kernel.target}, "
                "chosen when it was made; run it without target="
            )
        return _run_devices(kernel, inputs, False)
    if len(inputs) == 1 and isinstance(inputs[0], dict):
        return _run_by_name(kernel, inputs[0], target)
    if kernel.built:
        raise KernelError(
            f"{kernel.name} was built with axe.kernel.Builder: run it on a dict "
            "{buffer name: array} of its global buffers"
        )
    params = kernel.params
    ins = [p for p in params if p[3]]
    if len(inputs) != len(ins):
        raise KernelError(
            f"{kernel.name} takes {len(ins)} input(s) ({', '.join(p[0] for p in ins)}); "
            f"{len(inputs)} given"
        )
    given = iter(inputs)
    buffers = []
    for name, shape, _, is_input in params:
        if is_input:
            buffers.append(_bytes_of(next(given), name, shape, _gemm_b(kernel, name)))
        else:
            buffers.append(None)  # zeros, made once the run's memory is admitted
    out = kernel._run(buffers, target)
    i, (_, shape, _, _) = next((i, p) for i, p in enumerate(params) if not p[3])
    return _array_of(out[i], shape)


__all__ = [
    "Block",
    "Buffer",
    "Builder",
    "DeviceBuilder",
    "DeviceKernel",
    "Expr",
    "Kernel",
    "KernelError",
    "Scope",
    "Tensor",
    "cta",
    "gemm",
    "gemm_reduce_scatter",
    "relayout",
    "run",
    "softmax",
    "tid",
    "wgmma_accumulator",
]
