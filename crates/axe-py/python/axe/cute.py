"""CuTe layouts shaped like pycute, with every algebra result checked.

``Layout(shape, stride)`` takes int tuples (``Layout((4, (2, 3)), (1, (4, 8)))``; the stride defaults to
compact column-major) or CuTe's notation (``Layout("(4,(2,3)):(1,(4,8))")``, swizzled
``Layout("Sw<3,3,3> o 0 o (8,64):(64,1)")``). The free functions follow pycute's names and arguments
(``composition(A, B)``, ``complement(A, n)``, ``logical_divide(A, tiler)``, ``size``, ``prefix_product``,
...), tilers may be layouts, ints, tuples of tilers or ``None``; the methods of earlier versions
(``a.composition(b)``, ``a.to_axe()``, ``a.svg()``) remain. Where no layout has an operator's law the
operator raises ``axe.CuteError`` naming the reason (pycute would return a wrong layout or assert).
Differences from pycute are listed in docs/cute.md.
"""

from __future__ import annotations

import operator as _operator
import os as _os

from . import _axe
from ._axe import CuteError
from ._cute_int_tuple import (  # noqa: F401 -- re-exported, pycute's names
    is_int,
    is_tuple,
    _check_tuple,
    flatten,
    signum,
    product,
    inner_product,
    tuple_max,
    elem_scale,
    shape_div,
    prefix_product,
    idx2crd,
    crd2idx,
    crd2crd,
    has_none,
    slice_,
)

_Native = _axe.CuteLayout

__all__ = [
    "ComposedLayout", "Layout", "Swizzle", "blocked_product", "coalesce", "complement", "composition",
    "cosize", "crd2crd", "crd2idx", "elem_scale", "filter", "flat_divide", "flat_product", "flatten",
    "has_none", "idx2crd", "inner_product", "is_int", "is_layout", "is_tuple", "left_inverse",
    "logical_divide", "logical_product", "make_layout", "prefix_product", "product", "raked_product",
    "right_inverse", "shape_div", "signum", "size", "slice_", "slice_and_offset", "tiled_divide",
    "tiled_product", "tuple_max", "zipped_divide", "zipped_product",
]


def _text(t):
    if is_tuple(t):
        return "(" + ",".join(_text(e) for e in t) + ")"
    return str(int(t))


def _parse(s, i=0):
    """An int tuple from CuTe's notation (``_4`` allowed), keeping 1-tuples: ``(value, next index)``."""
    if s[i] == "(":
        items, i = [], i + 1
        while True:
            v, i = _parse(s, i)
            items.append(v)
            if s[i] == ")":
                return tuple(items), i + 1
            i += 1
    j = i + 1
    while j < len(s) and s[j] not in ",)":
        j += 1
    return int(s[i:j].lstrip("_")), j


def _from_native(n):
    shape, stride = str(n).split(":")
    return Layout(_parse(shape)[0], _parse(stride)[0], _native=n)


# ----------------------------------------------------------------------------------------------------
# Layouts
# ----------------------------------------------------------------------------------------------------


class _Count(int):
    """An integer that can also be called, so that ``l.size`` and pycute's ``l.size()`` both work."""

    def __call__(self):
        return int(self)


class LayoutBase:
    """The common base of ``Layout`` and ``ComposedLayout`` (pycute's ``LayoutBase``)."""


def is_layout(x):
    """Whether ``x`` is a layout (plain or composed)."""
    return isinstance(x, LayoutBase)


class Layout(LayoutBase):
    """A CuTe layout: ``Layout(shape, stride=None)`` from int tuples (compact column-major strides by
    default) or ``Layout("(4,(2,3)):(1,(4,8))")`` from CuTe's notation; a swizzled text gives a
    ``ComposedLayout``. Index order is colexicographic (leftmost mode fastest)."""

    def __new__(cls, _shape=None, _stride=None, _native=None):
        if isinstance(_shape, str) and _shape.lstrip().startswith("Sw"):
            return ComposedLayout._from_text(str(_Native(_shape)))
        return super().__new__(cls)

    def __init__(self, _shape, _stride=None, _native=None):
        if isinstance(_shape, str):
            n = _native or _Native(_shape)
            shape, stride = str(n).split(":")
            self.shape, self.stride, self._n = _parse(shape)[0], _parse(stride)[0], n
            return
        if _stride is None:
            _stride = prefix_product(_shape)
        _check_tuple(_shape, "shape")
        _check_tuple(_stride, "stride")
        self.shape, self.stride = _shape, _stride
        try:
            self._n = _native or _Native(f"{_text(_shape)}:{_text(_stride)}")
        except _axe.ParseError as e:  # no text of the user's: say what was wrong without a caret
            raise CuteError(f"Layout({_shape!r}, {_stride!r}): {str(e).splitlines()[0]}") from None

    # -- pycute's protocol --------------------------------------------------------------------------

    def __eq__(self, other):
        return isinstance(other, Layout) and self.shape == other.shape and self.stride == other.stride

    def __hash__(self):
        return hash((self.shape, self.stride))

    def __len__(self):
        return len(self.shape) if is_tuple(self.shape) else 1

    def __getitem__(self, i):
        if is_tuple(self.shape):
            return Layout(self.shape[i], self.stride[i])
        if i not in (0, -1):
            raise IndexError(f"mode {i} of a rank-1 layout")
        return self

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __call__(self, *args):
        """The value at a coordinate (``l(i)``, ``l(i, j)``, ``l((i, (j, k)))``; past the size the last
        mode runs on), or with ``None`` in the coordinate the sliced layout: the kept modes as a tuple,
        as CuTe builds it (``Layout((4, 3))(None, 2) == Layout((4,), (1,))``)."""
        crd = args[0] if len(args) == 1 else args
        if has_none(crd):
            return Layout(slice_(crd, self.shape), slice_(crd, self.stride))
        _check_tuple(crd, "coordinate")
        return crd2idx(crd, self.shape, self.stride)

    @property
    def size(self):
        """The domain size, the product of the shape (also callable: ``l.size()``)."""
        return _Count(self._n.size)

    @property
    def cosize(self):
        """One more than the largest value (also callable: ``l.cosize()``)."""
        return _Count(self._n.cosize)

    @property
    def rank(self):
        """The number of top-level modes."""
        return self._n.rank

    @property
    def depth(self):
        """The nesting depth of the shape."""
        return self._n.depth

    def __str__(self):
        return str(self._n)

    def __repr__(self):
        return f"Layout({self.shape!r}, {self.stride!r})"

    def __reduce__(self):
        return (Layout, (self.shape, self.stride))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    # -- the methods of earlier versions ---------------------------------------------------------

    def map(self):
        """The value of every index, ``map[i] = L(i)``, as an ``int64`` numpy array."""
        return self._n.map()

    def coalesce(self, profile=None):
        """``coalesce(self, profile)``."""
        return coalesce(self, profile)

    def filter(self, profile=None):
        """``filter(self, profile)``."""
        return filter(self, profile)

    def composition(self, other):
        """``composition(self, other)``."""
        return composition(self, other)

    def complement(self, bound=None):
        """``complement(self, bound)``; the default bound is the cosize."""
        return complement(self, self.cosize if bound is None else bound)

    def right_inverse(self):
        """``right_inverse(self)``."""
        return right_inverse(self)

    def left_inverse(self, strict=False):
        """``left_inverse(self, strict)``."""
        return left_inverse(self, strict)

    @property
    def injective(self):
        """Whether the layout is injective (``left_inverse`` is then a true inverse)."""
        return self._n.injective

    def logical_divide(self, tiler):
        """``logical_divide(self, tiler)``."""
        return logical_divide(self, tiler)

    def zipped_divide(self, tiler):
        """``zipped_divide(self, tiler)``."""
        return zipped_divide(self, tiler)

    def tiled_divide(self, tiler):
        """``tiled_divide(self, tiler)``."""
        return tiled_divide(self, tiler)

    def flat_divide(self, tiler):
        """``flat_divide(self, tiler)``."""
        return flat_divide(self, tiler)

    def logical_product(self, tiler):
        """``logical_product(self, tiler)``."""
        return logical_product(self, tiler)

    def zipped_product(self, tiler):
        """``zipped_product(self, tiler)``."""
        return zipped_product(self, tiler)

    def tiled_product(self, tiler):
        """``tiled_product(self, tiler)``."""
        return tiled_product(self, tiler)

    def flat_product(self, tiler):
        """``flat_product(self, tiler)``."""
        return flat_product(self, tiler)

    def blocked_product(self, other):
        """``blocked_product(self, other)``."""
        return blocked_product(self, other)

    def raked_product(self, other):
        """``raked_product(self, other)``."""
        return raked_product(self, other)

    def to_axe(self, tv=False):
        """The Axe layout of the same map (or with ``tv=True`` of a TV layout's tile on tid/val)."""
        return self._n.to_axe(tv)

    @staticmethod
    def from_axe(layout, shape=None, tv=False):
        """The CuTe layout of an Axe layout on one axis (over ``shape``, CuTe text or an int tuple), or
        with ``tv=True`` the TV layout of an Axe layout over tid/val."""
        if shape is not None and not isinstance(shape, str):
            shape = _text(shape)
        return _from_native(_Native.from_axe(layout, shape, tv))

    def svg(self, tv=False, shape=None):
        """The picture as SVG text (``tv=True``: the thread/value picture over the tile ``shape``)."""
        return self._n.svg(tv, shape)

    def render(self, path, tv=False, shape=None):
        """Draws the layout into ``path`` (a ``str`` or ``os.PathLike``; ``.svg``, ``.png`` or
        ``.txt``)."""
        return self._n.render(_os.fspath(path), tv, shape)

    def _repr_svg_(self):
        return self._n._repr_svg_()


def _as_layout(x, what="layout"):
    if isinstance(x, Layout):
        return x
    if is_int(x):
        return Layout(x)
    if isinstance(x, str):
        return Layout(x)
    raise CuteError(f"{what}: {x!r} is not a layout")


def make_layout(*layouts):
    """The layout whose mode ``i`` is ``layouts[i]`` (also given as one iterable)."""
    if len(layouts) == 1 and not is_layout(layouts[0]):
        layouts = tuple(layouts[0])
    layouts = [_as_layout(x) for x in layouts]
    return Layout(tuple(x.shape for x in layouts), tuple(x.stride for x in layouts))


def size(x):
    """The size of a layout, or the product of an int tuple."""
    if is_layout(x):
        return int(x.size)
    return product(x)


def cosize(x):
    """The cosize of a layout (one more than its largest value)."""
    return int(_as_layout(x).cosize)


def coalesce(layout, profile=None):
    """The fewest modes with the same map; with a tuple profile mode by mode (each mode's size kept)."""
    layout = _as_layout(layout)
    p = None if profile is None or is_int(profile) else _text(profile)
    return _from_native(layout._n.coalesce(p))


def filter(layout, profile=None):  # noqa: A001 -- pycute's name
    """The stride-0 and extent-1 modes removed, then coalesced; with a tuple profile mode by mode."""
    layout = _as_layout(layout)
    p = None if profile is None or is_int(profile) else _text(profile)
    return _from_native(layout._n.filter(p))


def _by_mode(one, a, t):
    """``one`` on the whole layout, or mode by mode for a tuple tiler (``None`` keeps a mode)."""
    if t is None:
        return a
    if is_tuple(t):
        if len(t) > len(a):
            raise CuteError(f"the tiler {t} has {len(t)} modes, the layout {a} has {len(a)}")
        return make_layout([_by_mode(one, a[i], t[i]) for i in range(len(t))]
                           + [a[i] for i in range(len(t), len(a))])
    return one(a, _as_layout(t, "tiler"))


def _unzip(one, a, t):
    """A by-mode divide or product gathered as ``((tiles...), (rests..., untouched modes...))``."""
    if t is None:
        return make_layout(Layout(1, 0), a)
    if is_tuple(t):
        if len(t) > len(a):
            raise CuteError(f"the tiler {t} has {len(t)} modes, the layout {a} has {len(a)}")
        split = [_unzip(one, a[i], t[i]) for i in range(len(t))]
        return make_layout(make_layout([s[0] for s in split]),
                           make_layout([s[1] for s in split] + [a[i] for i in range(len(t), len(a))]))
    return one(a, _as_layout(t, "tiler"))


def _composition1(a, b):
    return _from_native(a._n.composition(b._n))


def composition(layoutA, layoutB):
    """``A ∘ B``: ``(A ∘ B)(c) = A(B(c))`` for every ``c`` of ``B``; ``B`` an int, a tuple of tilers (by
    mode, ``None`` keeping a mode) or ``None``. A swizzled ``A`` keeps its swizzle outermost. ``A`` may
    be a ``Swizzle``, as in CuTe: with a ``Swizzle`` ``B``, one swizzle (``Swizzle.compose``); with a
    layout, ``ComposedLayout(A, 0, B)``; with ``Sw2 o off o L``, ``(A ∘ Sw2) o off o L``."""
    if isinstance(layoutA, Swizzle):
        if isinstance(layoutB, Swizzle):
            return layoutA.compose(layoutB)
        if isinstance(layoutB, ComposedLayout):
            return ComposedLayout(layoutA.compose(layoutB.layoutB), layoutB.offset, layoutB.layoutA)
        if isinstance(layoutB, Layout):
            return ComposedLayout(layoutA, 0, layoutB)
        raise CuteError(f"composition: {layoutA} ∘ B takes a Swizzle or a layout B, not "
                        f"{type(layoutB).__name__} {layoutB!r}")
    if isinstance(layoutB, Swizzle):
        raise CuteError(f"composition: A ∘ {layoutB} is no CuTe layout: a swizzle composes on the "
                        f"left only ({layoutB} ∘ A is ComposedLayout({layoutB!r}, 0, A))")
    a = _as_any(layoutA)
    if isinstance(a, ComposedLayout):
        return a._with(composition(a.layoutA, layoutB))
    return _by_mode(_composition1, a, layoutB)


def complement(layout, max_idx=1):
    """CuTe's complement of ``layout`` up to ``max_idx``: increasing, disjoint from the layout's values
    (but 0), its modes filling the gaps between the layout's sorted modes; refused (with the broken
    postcondition named) where CuTe's answer breaks CuTe's own postconditions."""
    layout = _as_layout(layout)
    return _from_native(layout._n.complement(max_idx))


def right_inverse(layout):
    """``R`` with ``layout(R(i)) = i`` on ``R``'s domain, as long as CuTe's construction gives."""
    if layout is None:
        return None
    return _from_native(_as_layout(layout)._n.right_inverse())


def left_inverse(layout, strict=False):
    """``R`` with ``R(layout(i)) = i`` for an injective layout; for a non-injective one CuTe's generalised
    inverse (``layout(R(layout(i))) = layout(i)``; not a true inverse), or with ``strict=True`` an
    error."""
    if layout is None:
        return None
    return _from_native(_as_layout(layout)._n.left_inverse(strict))


def _divide1(a, b):
    return _from_native(a._n.logical_divide(b._n))


def _product1(a, b):
    return _from_native(a._n.logical_product(b._n))


def logical_divide(layoutA, layoutB):
    """``A ∘ (B, complement(B, size(A)))``: the elements of each tile of ``B``, then the tiles; by mode
    for a tuple tiler. A swizzled ``A`` keeps its swizzle outermost."""
    a = _as_any(layoutA)
    if isinstance(a, ComposedLayout):
        return a._with(logical_divide(a.layoutA, layoutB))
    return _by_mode(_divide1, a, layoutB)


def logical_product(layoutA, layoutB):
    """``(A, complement(A, size(A)·cosize(B)) ∘ B)``: ``A`` repeated as ``B`` says; by mode for a tuple
    tiler. (pycute divides instead when ``B`` is an integer.)"""
    return _by_mode(_product1, _as_layout(layoutA), layoutB)


def zipped_divide(layoutA, layoutB):
    """``logical_divide`` with the tiles gathered into mode 0 and the rest into mode 1."""
    a = _as_any(layoutA)
    if isinstance(a, ComposedLayout):
        return a._with(zipped_divide(a.layoutA, layoutB))
    return _unzip(_divide1, a, layoutB)


def tiled_divide(layoutA, layoutB):
    """``zipped_divide`` with the rest modes unpacked: ``((tiles...), rest0, rest1, ...)``."""
    a = _as_any(layoutA)
    if isinstance(a, ComposedLayout):
        return a._with(tiled_divide(a.layoutA, layoutB))
    r = zipped_divide(a, layoutB)
    return make_layout([r[0]] + list(r[1]))


def flat_divide(layoutA, layoutB):
    """``zipped_divide`` with both groups unpacked."""
    a = _as_any(layoutA)
    if isinstance(a, ComposedLayout):
        return a._with(flat_divide(a.layoutA, layoutB))
    r = zipped_divide(a, layoutB)
    return make_layout(list(r[0]) + list(r[1]))


def zipped_product(layoutA, layoutB):
    """``logical_product`` gathered as ``((A...), (repeats...))``."""
    return _unzip(_product1, _as_layout(layoutA), layoutB)


def tiled_product(layoutA, layoutB):
    """``zipped_product`` with the repeat modes unpacked."""
    r = zipped_product(layoutA, layoutB)
    return make_layout([r[0]] + list(r[1]))


def flat_product(layoutA, layoutB):
    """``zipped_product`` with both groups unpacked."""
    r = zipped_product(layoutA, layoutB)
    return make_layout(list(r[0]) + list(r[1]))


def blocked_product(layoutA, layoutB):
    """``A`` repeated over ``B`` mode by mode, ``A``'s elements fastest (blocks of ``A``)."""
    return _from_native(_as_layout(layoutA)._n.blocked_product(_as_layout(layoutB)._n))


def raked_product(layoutA, layoutB):
    """``A`` repeated over ``B`` mode by mode, the copies fastest (``A``'s elements interleaved)."""
    return _from_native(_as_layout(layoutA)._n.raked_product(_as_layout(layoutB)._n))


def slice_and_offset(crd, layout):
    """``(the layout sliced at crd, the offset of crd with its None parts at 0)``."""
    if not isinstance(layout, Layout):
        raise TypeError(f"slice_and_offset: {type(layout).__name__} is not a cute.Layout")
    return (Layout(slice_(crd, layout.shape), slice_(crd, layout.stride)),
            crd2idx(crd, layout.shape, layout.stride))


# ----------------------------------------------------------------------------------------------------
# Swizzles and composed layouts
# ----------------------------------------------------------------------------------------------------


class Swizzle:
    """CuTe's ``Swizzle<B, M, S>``: XORs the ``B`` bits at ``M + max(0, S)`` into those at
    ``M - min(0, S)``."""

    def __init__(self, bits, base, shift):
        _Native(f"Sw<{bits},{base},{shift}> o 0 o 1:0")  # validates, raising CuteError
        self.bits, self.base, self.shift = bits, base, shift

    def __call__(self, offset):
        offset = _operator.index(offset)  # an integer (numpy's too); anything else is a TypeError
        mask = ((1 << self.bits) - 1) << (self.base + max(0, self.shift))
        y = offset & mask
        return offset ^ (y >> self.shift if self.shift >= 0 else y << -self.shift)

    def size(self):
        """The span of the swizzle's bits."""
        return 1 << (self.bits + self.base + abs(self.shift))

    def cosize(self):
        """As ``size``."""
        return self.size()

    def compose(self, other):
        """``self ∘ other`` (``other`` first) as one ``Swizzle``: ``R(x) = self(other(x))`` for every
        offset; raises ``CuteError`` where no swizzle does both (two that move bits by different shifts).
        """
        if not isinstance(other, Swizzle):
            raise TypeError(f"Swizzle.compose: {type(other).__name__} is not a Swizzle")
        b, m, s = _axe._cute_swizzle_compose((self.bits, self.base, self.shift),
                                             (other.bits, other.base, other.shift))
        return Swizzle(b, m, s)

    def __eq__(self, other):
        return isinstance(other, Swizzle) and (self.bits, self.base, self.shift) == (
            other.bits, other.base, other.shift)

    def __hash__(self):
        return hash((self.bits, self.base, self.shift))

    def __str__(self):
        return f"Sw<{self.bits},{self.base},{self.shift}>"

    def __repr__(self):
        return f"Swizzle({self.bits}, {self.base}, {self.shift})"


class ComposedLayout(LayoutBase):
    """``layoutB o offset o layoutA`` (CuTe's ``ComposedLayout``), ``layoutB`` a ``Swizzle``: its value at
    a coordinate is ``layoutB(offset + layoutA(c))``. Composition, divides and coalesce act on
    ``layoutA`` and keep the swizzle outermost."""

    def __init__(self, layoutB, offset, layoutA):
        if not isinstance(layoutB, Swizzle):
            raise CuteError("ComposedLayout: the outer function must be a Swizzle")
        self.layoutB, self.offset, self.layoutA = layoutB, offset, _as_layout(layoutA)

    @staticmethod
    def _from_text(text):
        sw, off, lay = (p.strip() for p in text.split(" o ", 2))
        b, m, s = (int(x) for x in sw[3:-1].split(","))
        return ComposedLayout(Swizzle(b, m, s), int(off), Layout(lay))

    def _with(self, inner):
        return ComposedLayout(self.layoutB, self.offset, inner)

    def __eq__(self, other):
        return isinstance(other, ComposedLayout) and (self.layoutB, self.offset, self.layoutA) == (
            other.layoutB, other.offset, other.layoutA)

    def __hash__(self):
        return hash((self.layoutB, self.offset, self.layoutA))

    def __len__(self):
        return len(self.layoutA)

    def __getitem__(self, i):
        return self._with(self.layoutA[i])

    def __call__(self, *args):
        """``layoutB(offset + layoutA(*args))``."""
        return self.layoutB(self.offset + self.layoutA(*args))

    @property
    def size(self):
        """The domain size (also callable)."""
        return _Count(self.layoutA.size)

    @property
    def cosize(self):
        """One more than the largest value (also callable); ``None`` past 2^20 elements."""
        c = _Native(str(self)).cosize
        return None if c is None else _Count(c)

    @property
    def rank(self):
        """The number of top-level modes."""
        return self.layoutA.rank

    @property
    def depth(self):
        """The nesting depth of the shape."""
        return self.layoutA.depth

    def map(self):
        """The value of every index as an ``int64`` numpy array."""
        return _Native(str(self)).map()

    def coalesce(self, profile=None):
        """The inner layout coalesced, the swizzle kept."""
        return self._with(coalesce(self.layoutA, profile))

    def composition(self, other):
        """``self ∘ other``: the inner layout composed, the swizzle kept."""
        return composition(self, other)

    def logical_divide(self, tiler):
        """The inner layout divided, the swizzle kept."""
        return logical_divide(self, tiler)

    def zipped_divide(self, tiler):
        """The inner layout divided and zipped, the swizzle kept."""
        return zipped_divide(self, tiler)

    def svg(self, tv=False, shape=None):
        """The picture as SVG text."""
        return _Native(str(self)).svg(tv, shape)

    def render(self, path, tv=False, shape=None):
        """Draws the layout into ``path`` (a ``str`` or ``os.PathLike``)."""
        return _Native(str(self)).render(_os.fspath(path), tv, shape)

    def _repr_svg_(self):
        return _Native(str(self))._repr_svg_()

    def __str__(self):
        return f"{self.layoutB} o {self.offset} o {self.layoutA}"

    def __repr__(self):
        return f"ComposedLayout({self.layoutB!r}, {self.offset!r}, {self.layoutA!r})"

    def __reduce__(self):
        return (ComposedLayout, (self.layoutB, self.offset, self.layoutA))


def _as_any(x):
    return x if isinstance(x, ComposedLayout) else _as_layout(x)
