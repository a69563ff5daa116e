"""HLO modules as XLA writes them: read, validate, print, and report what their tensors cost.

``axe.hlo.read("module.txt")`` returns a :class:`Stats` (what ``axe hlo stats`` prints).
"""

from __future__ import annotations

import os as _os
from dataclasses import dataclass as _dataclass
from dataclasses import field as _field
from typing import Optional as _Optional

from ._axe import AxeError, _hlo_format, _hlo_stats


@_dataclass(frozen=True)
class Totals:
    """Bytes of a set of arrays: logical (``ByteSizeOf``), XLA's ``ArraySize``, and physical (every tile
    expanded); ``padding_bytes`` is physical minus logical."""

    arrays: int
    logical_bytes: int
    xla_bytes: int
    physical_bytes: int
    padding_bytes: int


@_dataclass(frozen=True)
class Waste:
    """A materialized tensor and the padding its layout costs."""

    computation: str
    instruction: str
    shape: str
    totals: Totals


@_dataclass(frozen=True)
class Relayout:
    """An instruction where data moves between layouts (``kind``: layout, memory space, transpose)."""

    computation: str
    instruction: str
    opcode: str
    operand: str
    from_shape: str
    to_shape: str
    bytes: int
    kind: str


@_dataclass(frozen=True)
class Computation:
    """Totals of one computation; ``materialized``: whether its values live in buffers."""

    name: str
    materialized: bool
    totals: Totals


@_dataclass(frozen=True)
class Stats:
    """The cost report of a module.

    ``materialized``: what the module keeps in memory (entry and the computations it runs as programs,
    each value once; fusion bodies, reducers and called computations' parameters left out). ``entry``:
    the entry computation's part. ``total``: every instruction of every computation (not a footprint).
    ``per_device``: for modules with ``sharding=`` attributes, the bytes each device holds.
    ``unbounded_skipped``: how many arrays with an unbounded dynamic dimension (``?``) the values held
    in memory have; they have no size, and every figure leaves them out.
    """

    module: str
    instructions: int
    materialized: Totals
    entry: Totals
    total: Totals
    memory_spaces: dict
    per_device: _Optional[dict]
    top_padding: list = _field(default_factory=list)
    relayouts: list = _field(default_factory=list)
    computations: list = _field(default_factory=list)
    unbounded_skipped: int = 0


_TOTALS = ("arrays", "logical_bytes", "xla_bytes", "physical_bytes", "padding_bytes")


def _totals(d: dict) -> Totals:
    return Totals(**{k: d[k] for k in _TOTALS})


def _stats(d: dict) -> Stats:
    return Stats(
        module=d["module"],
        instructions=d["instructions"],
        materialized=_totals(d["materialized"]),
        entry=_totals(d["entry"]),
        total=_totals(d["total"]),
        memory_spaces={k: _totals(v) for k, v in d["memory_spaces"].items()},
        per_device=d["per_device"],
        top_padding=[
            Waste(w["computation"], w["instruction"], w["shape"], _totals(w)) for w in d["top_padding"]
        ],
        relayouts=[Relayout(**r) for r in d["relayouts"]],
        computations=[Computation(c["name"], c["materialized"], _totals(c)) for c in d["computations"]],
        unbounded_skipped=d["unbounded_skipped"],
    )


def read_text(text: str, top: int = 10) -> Stats:
    """The report of the module `text`. Raises ``axe.ParseError`` / ``axe.XlaError`` (line:col in the
    message) for a module XLA would reject."""
    return _stats(_hlo_stats(text, top))


def read(path: "str | _os.PathLike[str]", top: int = 10) -> Stats:
    """The report of the module in the file at `path` (a ``str`` or ``os.PathLike``; see
    :func:`read_text`). A file that cannot be read raises ``axe.AxeError`` naming it."""
    path = _os.fspath(path)  # an int is not taken for a file descriptor
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise AxeError(f"{path}: {e.strerror or e}") from e
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = len(data[data.rfind(b"\n", 0, e.start) + 1 : e.start].decode("utf-8")) + 1
        raise AxeError(
            f"{path}:{line}:{column}: not UTF-8 text (byte 0x{data[e.start]:02x})"
        ) from None
    return read_text(text, top)


def format(text: str) -> str:  # noqa: A001 - the name of the verb
    """The module printed as XLA prints it (``axe hlo fmt``)."""
    return _hlo_format(text)


__all__ = ["Computation", "Relayout", "Stats", "Totals", "Waste", "format", "read", "read_text"]
