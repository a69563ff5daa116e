"""axe.hlo: reports as Python objects, XLA's printing, errors."""

import json
import os
import pathlib
import subprocess

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


# --- per_device as the CLI's --json gives it, shapes=, MLIR text ----------------------------------------

ROOT = pathlib.Path(__file__).resolve().parents[3]
MEMORY = ROOT / "crates/axe-xla/tests/hlo_memory"


def cli():
    """The `axe` CLI to compare with: $AXE_CLI, else the newest of target/{debug,release}/axe."""
    if os.environ.get("AXE_CLI"):
        return os.environ["AXE_CLI"]
    built = [p for p in (ROOT / "target/debug/axe", ROOT / "target/release/axe") if p.exists()]
    return str(max(built, key=lambda p: p.stat().st_mtime)) if built else None


def cli_per_device(path, shapes=None):
    exe = cli()
    if exe is None:
        pytest.skip("no axe CLI built (cargo build -p axe-cli, or set AXE_CLI)")
    args = [exe, "hlo", "stats", "--json", str(path)] + (["--shapes", shapes] if shapes else [])
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["per_device"]


@pytest.mark.parametrize(
    "name", ["tuple_out.after.hlo", "tuple_out.before.hlo", "dtypes.before.hlo", "while_loop.after.hlo"]
)
@pytest.mark.parametrize("shapes", [None, "global", "per-device"])
def test_per_device_is_what_the_cli_json_gives(name, shapes):
    path = MEMORY / name
    got = axe.hlo.read(path, shapes=shapes).per_device
    assert got == cli_per_device(path, shapes)
    assert list(got) == list(cli_per_device(path, shapes)), "the same keys in the same order"


def test_per_device_has_xlas_argument_and_output_bytes_and_both_readings():
    # XLA's memory_analysis() of this module (jax, 8 CPU devices): 1024 bytes of arguments, 2588 of
    # outputs (3 arrays and the tuple's index table), per device; its shapes are already per device.
    s = axe.hlo.read(MEMORY / "tuple_out.after.hlo")
    p = s.per_device
    assert (p["shapes"], p["argument_bytes"], p["output_bytes"]) == ("per-device", 1024, 2588)
    assert "is_scheduled" in p["shapes_reason"]
    assert p["output_sharding"] in ("given", "inferred", "whole")
    assert p["output_bytes"] <= p["output_whole_bytes"]
    assert set(p["readings"]) == {"global", "per-device"}
    assert p["readings"]["per-device"]["argument_bytes"] == 1024
    assert p["readings"]["global"]["argument_bytes"] == 128
    g = axe.hlo.read(MEMORY / "tuple_out.after.hlo", shapes="global").per_device
    assert (g["shapes"], g["shapes_reason"], g["argument_bytes"]) == ("global", "given", 128)
    assert g["readings"] == p["readings"]
    with pytest.raises(axe.AxeError, match="shapes=`local`: expected `global` or `per-device`"):
        axe.hlo.read_text(MODULE, shapes="local")


# jax 0.10.2's `jax.jit(lambda a, b: jnp.sin(a) @ b).lower(a, b).as_text()` (the default: StableHLO).
STABLEHLO = (MEMORY.parent / "hlo_mlir" / "jax_default.mlir").read_text()


def test_mlir_text_is_refused_with_the_way_to_hlo_text(tmp_path):
    path = tmp_path / "m.mlir"
    path.write_text(STABLEHLO)
    calls = (
        lambda: axe.hlo.read(path),
        lambda: axe.hlo.read_text(STABLEHLO),
        lambda: axe.hlo.format(STABLEHLO),
    )
    for call in calls:
        with pytest.raises(axe.XlaError) as e:
            call()
        message = str(e.value)
        assert message.startswith("1:8: this is MLIR (StableHLO), not HLO text;"), message
        assert 'as_text(dialect="hlo")' in message and ".compile().as_text()" in message, message
        assert "XLA_FLAGS=--xla_dump_to=DIR" in message, message
