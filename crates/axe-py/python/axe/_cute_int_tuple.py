"""CuTe's integer tuples (shapes, strides, coordinates) as pycute handles them; re-exported by
``axe.cute``."""

from __future__ import annotations

import functools
import numbers
from itertools import chain

from ._axe import CuteError


def is_int(x):
    """Whether ``x`` is an integer (``bool`` excluded)."""
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def is_tuple(x):
    """Whether ``x`` is a tuple (an int tuple's inner node)."""
    return isinstance(x, tuple)


_MAX_DEPTH = 64


def _check_depth(t, what):
    """Refuses an int tuple nested deeper than CuTe's text notation may be (64 levels), counted
    without recursion, so that the recursive functions below never meet one."""
    stack = [(t, 0)]
    while stack:
        x, d = stack.pop()
        if d > _MAX_DEPTH:
            raise CuteError(f"{what}: an int tuple nested deeper than {_MAX_DEPTH}")
        if is_tuple(x):
            stack.extend((e, d + 1) for e in x)


def _check_tuple(t, what):
    _check_depth(t, what)
    _check_leaves(t, what)


def _check_leaves(t, what):
    if is_tuple(t):
        for e in t:
            _check_leaves(e, what)
    elif not is_int(t):
        raise CuteError(f"{what}: {t!r} is neither an integer nor a tuple of them")


def _arithmetic(f):
    """`f`, an int-tuple function doing arithmetic on its arguments' leaves, with its arguments checked
    to be int tuples (``None`` leaves allowed: coordinates slice with them) and a division by a zero
    extent or stride raised as ``CuteError``: never Python's arithmetic on other objects (``n * [x]``
    builds a list of ``n`` items) or a ``ZeroDivisionError``."""

    def leaves_ok(t):
        if is_tuple(t):
            return all(leaves_ok(e) for e in t)
        return t is None or is_int(t)

    @functools.wraps(f)
    def checked(*args, **kwargs):
        for a in (*args, *kwargs.values()):
            _check_depth(a, f.__name__)
            if not leaves_ok(a):
                raise CuteError(f"{f.__name__}: {a!r} is neither an integer nor a tuple of them")
        try:
            return f(*args, **kwargs)
        except ZeroDivisionError:
            raise CuteError(f"{f.__name__}{args!r}: a division by a zero extent or stride") from None

    return checked


def flatten(t):
    """The leaves of an int tuple, left to right, as a tuple (``(t,)`` for an integer)."""
    _check_depth(t, "flatten")
    return _flatten(t)


def _flatten(t):
    if is_tuple(t):
        return tuple(leaf for e in t for leaf in _flatten(e))
    return (t,)


def signum(a):
    """-1, 0 or 1."""
    return (a > 0) - (a < 0)


@_arithmetic
def product(a):
    """The product of the leaves (1 for ``()``)."""
    if is_tuple(a):
        out = 1
        for e in a:
            out *= product(e)
        return out
    return a


@_arithmetic
def inner_product(a, b):
    """``Σ a_k·b_k`` over the leaves of congruent ``a`` and ``b``."""
    if is_tuple(a) != is_tuple(b) or (is_tuple(a) and len(a) != len(b)):
        raise CuteError(f"inner_product: {a} and {b} are not congruent")
    if is_tuple(a):
        return sum(inner_product(x, y) for x, y in zip(a, b))
    return a * b


@_arithmetic
def tuple_max(a):
    """The largest leaf."""
    return max(flatten(a))


@_arithmetic
def elem_scale(a, b):
    """``a`` scaled leaf by leaf by ``b`` (an integer ``a`` by the product of ``b``)."""
    if is_tuple(a):
        if not is_tuple(b) or len(a) != len(b):
            raise CuteError(f"elem_scale: {b} does not match {a}")
        return tuple(elem_scale(x, y) for x, y in zip(a, b))
    return a * product(b)


@_arithmetic
def shape_div(a, b):
    """``a`` divided by ``b`` as CuTe divides shapes: leaf by leaf for congruent tuples; a tuple by an
    integer mode after mode (each mode takes what it can of the divisor); integers need one to divide the
    other and round up."""
    if is_tuple(a):
        if is_tuple(b):
            if len(a) != len(b):
                raise CuteError(f"shape_div: {a} and {b} have different ranks")
            return tuple(shape_div(x, y) for x, y in zip(a, b))
        out = []
        for v in a:
            out.append(shape_div(v, b))
            b = shape_div(b, product(v))
        return tuple(out)
    if is_tuple(b):
        return shape_div(a, product(b))
    if a % b != 0 and b % a != 0:
        raise CuteError(f"shape_div: neither of {a} and {b} divides the other")
    return -(-a // b)


@_arithmetic
def prefix_product(a, init=1):
    """The exclusive prefix products of the leaves, shaped like ``a`` (compact column-major strides)."""
    if is_tuple(a):
        if is_tuple(init):
            if len(a) != len(init):
                raise CuteError(f"prefix_product: {a} and {init} have different ranks")
            return tuple(prefix_product(x, i) for x, i in zip(a, init))
        out = []
        for v in a:
            out.append(prefix_product(v, init))
            init = init * product(v)
        return tuple(out)
    if is_tuple(init):
        raise CuteError(f"prefix_product: an integer {a} with the tuple {init}")
    return init


@_arithmetic
def idx2crd(idx, shape, stride=None):
    """The coordinate of ``idx`` in ``shape``: each leaf's component is ``(idx // stride) % extent`` with
    compact column-major strides by default (CuTe's ``idx2crd``)."""
    if stride is None:
        stride = prefix_product(shape)
    _congruent("idx2crd", shape, stride)
    if is_tuple(idx):
        if not is_tuple(shape) or len(idx) != len(shape):
            raise CuteError(f"idx2crd: {idx} does not fit {shape}")
        return tuple(idx2crd(i, s, d) for i, s, d in zip(idx, shape, stride))
    if is_tuple(shape):
        return tuple(idx2crd(idx, s, d) for s, d in zip(shape, stride))
    return (idx // stride) % shape


def _congruent(what, shape, stride):
    """Refuses a stride whose nesting is not the shape's at the top (each mode's own is checked as it
    is reached): a zip would drop the modes past the shorter, an integer times a tuple repeat it."""
    if is_tuple(shape) != is_tuple(stride) or (is_tuple(shape) and len(shape) != len(stride)):
        raise CuteError(f"{what}: the stride {stride} is not congruent with the shape {shape}")


@_arithmetic
def crd2idx(crd, shape, stride=None):
    """``Σ crd_k·stride_k`` for a coordinate into ``shape`` (compact column-major strides by default).
    An integer where the shape has a tuple is that mode's colexicographic index, its last mode running
    on past its extent (CuTe's evaluation); ``None`` is 0."""
    if stride is None:
        stride = prefix_product(shape)
    _congruent("crd2idx", shape, stride)
    if crd is None:
        crd = 0
    if is_tuple(crd):
        if not is_tuple(shape) or len(crd) != len(shape):
            raise CuteError(f"crd2idx: the coordinate {crd} does not fit the shape {shape}")
        return sum(crd2idx(c, s, d) for c, s, d in zip(crd, shape, stride))
    if is_tuple(shape):
        out = 0
        for k, (s, d) in enumerate(zip(shape, stride)):
            if k + 1 == len(shape):
                return out + crd2idx(crd, s, d)
            n = product(s)
            out += crd2idx(crd % n, s, d)
            crd //= n
        return out
    return crd * stride


@_arithmetic
def crd2crd(crd, dst_shape, src_shape=None):
    """A coordinate re-expressed in ``dst_shape`` (via its index in ``src_shape`` for a tuple into an
    integer)."""
    if is_tuple(crd):
        if is_tuple(dst_shape):
            if len(crd) != len(dst_shape):
                raise CuteError(f"crd2crd: {crd} does not fit {dst_shape}")
            return tuple(crd2crd(x, y) for x, y in zip(crd, dst_shape))
        if src_shape is None:
            raise CuteError("crd2crd: a tuple into an integer needs src_shape")
        return crd2idx(crd, src_shape)
    if is_tuple(dst_shape):
        return idx2crd(crd, dst_shape)
    return crd


def has_none(a):
    """Whether ``a`` (a coordinate) holds a ``None`` (a slice)."""
    if is_tuple(a):
        return any(has_none(v) for v in a)
    return a is None


def slice_(crd, trg):
    """The parts of ``trg`` where ``crd`` is ``None``, flattened as CuTe's ``slice`` does."""
    if is_tuple(crd):
        if not is_tuple(trg) or len(crd) != len(trg):
            raise CuteError(f"slice: the coordinate {crd} does not fit {trg}")
        return tuple(chain(*(p for p in (slice_(c, s) for c, s in zip(crd, trg)) if p != ())))
    if crd is None:
        return (trg,)
    return ()
