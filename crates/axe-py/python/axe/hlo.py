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
    ``materialized`` is a sum with no liveness: an upper bound on what is held at once, not XLA's peak.
    ``per_device``: for modules with ``sharding=`` attributes or ``num_partitions`` above one, a dict of
    what ``axe hlo stats --json`` gives under ``per_device``, by the same names (``None`` otherwise):
    ``shapes`` (the reading used: ``"global"`` or ``"per-device"``) and ``shapes_reason`` (why);
    ``devices``; ``largest_bytes`` / ``largest_device`` / ``smallest_bytes`` (each device's values
    summed, no liveness: an upper bound, not XLA's peak); ``argument_bytes`` and ``output_bytes`` (the
    entry's parameters and result on the device holding the most: exact, as
    ``compiled.memory_analysis()`` gives them); ``output_sharding`` (``"given"``, ``"inferred"`` or
    ``"whole"``: where the result's sharding comes from) and ``output_whole_bytes`` (the result whole on
    one device, the most ``output_bytes`` can be); ``sharded_values`` and ``unannotated_values``; and
    ``readings``: these figures in both readings, by name (``{"global": {...}, "per-device": {...}}``).
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


def read_text(text: str, top: int = 10, shapes: _Optional[str] = None) -> Stats:
    """The report of the module `text`. `shapes` says how a sharded module's shapes read, as
    ``axe hlo stats --shapes`` does: ``"global"`` (whole arrays, before XLA's partitioner) or
    ``"per-device"`` (already cut, as ``.compile().as_text()``); ``None`` decides from the module.
    Raises ``axe.ParseError`` / ``axe.XlaError`` (line:col in the message) for a module XLA would
    reject (for MLIR text, such as JAX's default ``lower(...).as_text()``, one that says how to get HLO
    text), ``axe.AxeError`` for another `shapes`."""
    return _stats(_hlo_stats(text, top, shapes))


def read(path: "str | _os.PathLike[str]", top: int = 10, shapes: _Optional[str] = None) -> Stats:
    """The report of the module in the file at `path` (a ``str`` or ``os.PathLike``; see
    :func:`read_text`, which takes `top` and `shapes` alike). A file that cannot be read raises
    ``axe.AxeError`` naming it."""
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
    return read_text(text, top, shapes)


def format(text: str) -> str:  # noqa: A001 - the name of the verb
    """The module printed as XLA prints it (``axe hlo fmt``)."""
    return _hlo_format(text)


__all__ = ["Computation", "Relayout", "Stats", "Totals", "Waste", "format", "read", "read_text"]
