"""axe.hlo: reports as Python objects, XLA's printing, errors."""

import pytest

import axe

MODULE = """HloModule m, entry_computation_layout={(f32[3,5]{1,0})->f32[3,5]{1,0:T(2,2)}}

ENTRY e {
  p = f32[3,5]{1,0} parameter(0)
  ROOT c = f32[3,5]{1,0:T(2,2)} copy(p)
}
"""


def test_read_reports_materialized_bytes(tmp_path):
    path = tmp_path / "m.hlo"
    path.write_text(MODULE)
    s = axe.hlo.read(path)
    assert s.module == "m" and s.instructions == 2
    assert s.materialized.logical_bytes == 120
    assert s.materialized.physical_bytes == 60 + 96
    assert s.entry == s.materialized
    assert s.top_padding[0].instruction == "c" and s.top_padding[0].totals.padding_bytes == 36
    assert [r.opcode for r in s.relayouts] == ["copy"]
    assert s.relayouts[0].from_shape == "f32[3,5]{1,0}"
    assert s.per_device is None
    assert s.computations[0].name == "e" and s.computations[0].materialized


def test_a_file_that_is_not_utf8_is_an_axe_error_naming_it_and_the_byte(tmp_path):
    path = tmp_path / "m.hlo"
    path.write_bytes(MODULE.encode().replace(b"copy(p)", b"copy(\xffp)"))
    with pytest.raises(axe.AxeError, match=r"m\.hlo:5:38: not UTF-8 text \(byte 0xff\)"):
        axe.hlo.read(path)


def test_format_prints_as_xla_does():
    printed = axe.hlo.format(MODULE)
    assert printed.rstrip("\n") == MODULE.rstrip("\n")
    assert axe.hlo.format(printed) == printed
    bare = "ENTRY e {\n  ROOT p = f32[2]{0} parameter(0)\n}\n"
    assert axe.hlo.format(bare).startswith("HloModule module_e")


def test_invalid_modules_raise():
    with pytest.raises(axe.AxeError):
        axe.hlo.read_text(MODULE.replace("copy(p)", "copy(q)"))
    with pytest.raises(axe.AxeError):
        axe.hlo.read_text(MODULE.replace("copy(p)", "frobnicate(p)"))
    with pytest.raises(axe.AxeError):
        axe.hlo.read_text("HloModule m\n\nENTRY e {\n" + "(" * 100_000)


def test_arrays_with_an_unbounded_dimension_are_counted_as_skipped():
    # `?` dims have no size: the report leaves both parameters and the result out of every figure, and
    # says how many it left (as `axe hlo stats` and the Rust `Report::unbounded_skipped` do).
    text = (
        "HloModule m\n\nENTRY e {\n  p = f32[?,4]{1,0} parameter(0)\n"
        "  q = f32[2]{0} parameter(1)\n  ROOT c = f32[?,4]{1,0} copy(p)\n}\n"
    )
    s = axe.hlo.read_text(text)
    assert s.unbounded_skipped == 2
    assert s.materialized.arrays == 1 and s.materialized.logical_bytes == 8
    assert axe.hlo.read_text(MODULE).unbounded_skipped == 0
    assert axe._axe._hlo_stats(text)["unbounded_skipped"] == 2
