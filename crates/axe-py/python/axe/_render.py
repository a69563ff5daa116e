"""Pictures into files."""

from __future__ import annotations

import os

from ._axe import CuteLayout, Layout, LinearLayout, Shape, Sharding

_DRAWN = (Layout, Shape, Sharding, LinearLayout, CuteLayout)


def render(obj, path, **kwargs) -> None:
    """Draws `obj` (an ``axe.Layout``, ``axe.Shape``, ``axe.Sharding``, ``axe.triton.LinearLayout``
    or ``axe.cute.Layout``) into `path` (a ``str`` or ``os.PathLike``); the extension picks the format
    (``.svg``, ``.png``, ``.txt``). A Layout takes ``shape=``. The file is written through a temporary
    file beside it and renamed into place; a new file gets the permissions the umask leaves
    (``0644`` under the usual ``022``), a file replaced keeps its own."""
    from . import cute  # axe.cute.Layout and ComposedLayout are Python classes over CuteLayout

    if not isinstance(obj, _DRAWN + (cute.LayoutBase,)):
        raise TypeError(f"axe cannot draw a {type(obj).__name__}")
    obj.render(os.fspath(path), **kwargs)
