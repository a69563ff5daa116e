"""Pictures into files."""

from __future__ import annotations


def render(obj, path: str, **kwargs) -> None:
    """Draws `obj` (an ``axe.Layout``, ``axe.Shape`` or ``axe.Sharding``) into `path`; the extension
    picks the format (``.svg``, ``.png``, ``.txt``). A Layout takes ``shape=``. The file is written
    through a temporary file beside it and renamed into place."""
    draw = getattr(obj, "render", None)
    if draw is None:
        raise TypeError(f"axe cannot draw a {type(obj).__name__}")
    draw(path, **kwargs)
