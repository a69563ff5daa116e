"""`Sharding.plan` in stages: a source partial with different ops on different mesh axes is reduced one
op a stage, the first mesh axis first, as `axe shard plan` plans it; the same keys, values and refusals
as the CLI's `--json` on the same inputs."""

import json
import os
import pathlib
import subprocess

import pytest

import axe

ROOT = pathlib.Path(__file__).resolve().parents[3]

# (source, destination, mesh, shape): staged, one-stage and refused reshards.
CASES = [
    ("[Partial(max), Partial(sum)]", "P()", "2,3", "s8[7,3]"),
    ("[Partial(max), Partial(sum)]", "[Replicate(), Partial(sum)]", "2,3", "s8[7,3]"),
    ("[Partial(min), Partial(min), Partial(sum)]", "[Replicate(), Shard(1), Replicate()]", "x=2,y=2,z=2", "f32[5,4]"),
    ("[Partial(max), Partial(sum), Shard(1)]", "P('x')", "x=2,y=3,z=2", "bf16[7,5]"),
    ("[Partial(product), Partial(avg), Partial(max)]", "P(None, 'z')", "x=2,y=2,z=2", "f32[3,6]"),
    ("[Partial(sum), Partial(max)]", "[Partial(sum), Replicate()]", "2,3", "s8[7,3]"),
    ("[Partial(max), Partial(sum), Partial(max)]", "[Replicate(), Replicate(), Partial(max)]", "2,2,2", "f32[4]"),
    ("[Shard(0), Replicate()]", "[Replicate(), Shard(1)]", "x=2,y=2", "f32[8,8]"),
    ("[Partial(sum), Shard(0)]", "P()", "x=2,y=2", "f32[8,8]"),
]


def cli():
    """The `axe` CLI to compare with: $AXE_CLI, else the newest of target/{debug,release}/axe."""
    if os.environ.get("AXE_CLI"):
        return os.environ["AXE_CLI"]
    built = [p for p in (ROOT / "target/debug/axe", ROOT / "target/release/axe") if p.exists()]
    return str(max(built, key=lambda p: p.stat().st_mtime)) if built else None


def cli_plan(src, dst, mesh, shape):
    """`axe shard plan --json`: (the parsed JSON, None) or (None, its error line)."""
    exe = cli()
    if exe is None:
        pytest.skip("no axe CLI built (cargo build -p axe-cli, or set AXE_CLI)")
    r = subprocess.run(
        [exe, "shard", "plan", src, dst, "--mesh", mesh, "--shape", shape, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if r.returncode != 0:
        # Under --json the error is the answer's `error` member.
        err = json.loads(r.stdout)["error"] if r.stdout.strip() else r.stderr
        assert err, r
        return None, err
    return json.loads(r.stdout), None


def normal(plan):
    """The plan as the CLI's JSON writes it: regions as lists, a transfer's `reduce` only where pending."""
    if isinstance(plan, dict):
        return {k: normal(v) for k, v in plan.items() if not (k == "reduce" and v is None)}
    if isinstance(plan, (list, tuple)):
        return [normal(v) for v in plan]
    return plan


def sharding(text, mesh, shape):
    return axe.Sharding(text, shape=shape, mesh=mesh, notation=None)


@pytest.mark.parametrize("src,dst,mesh,shape", CASES)
def test_plan_equals_the_cli_plan(src, dst, mesh, shape):
    a, b = sharding(src, mesh, shape), sharding(dst, mesh, shape)
    want, err = cli_plan(src, dst, mesh, shape)
    if err is not None:
        with pytest.raises(axe.ShardingError) as e:
            a.plan(b)
        # The CLI's message is the library's, after its own prefix.
        assert str(e.value) in err, (str(e.value), err)
        return
    got = normal(a.plan(b))
    assert got == want


def test_max_then_sum_is_two_stages_with_todays_keys_in_each():
    a = sharding("[Partial(max), Partial(sum)]", "2,3", "s8[7,3]")
    p = a.plan(sharding("P()", "2,3", "s8[7,3]"))
    assert sorted(p) == ["bytes", "estimate_us", "stages"]
    assert [s["reduces"] for s in p["stages"]] == ['max over "d0"', 'sum over "d1"']
    for s, op in zip(p["stages"], ["max", "sum"]):
        assert list(s) == ["reduces", "collective", "bytes", "transfers", "locals", "estimate_us"]
        assert s["collective"] == "all-reduce"
        assert s["transfers"] and all(t["reduce"] == op for t in s["transfers"])
    # 21 B a piece: each of 6 devices receives its one max partner's, then its two sum partners'.
    assert [s["bytes"] for s in p["stages"]] == [126, 252]
    assert p["bytes"] == 378
    assert p["estimate_us"] == pytest.approx(sum(s["estimate_us"] for s in p["stages"]))


def test_a_one_stage_plan_keeps_its_keys_at_the_top():
    a = sharding("[Partial(sum), Partial(sum)]", "2,3", "f32[6,3]")
    p = a.plan(sharding("P()", "2,3", "f32[6,3]"))
    assert list(p) == ["collective", "bytes", "transfers", "locals", "estimate_us"]
    assert p["collective"] == "all-reduce"


def test_reducing_past_another_op_that_stays_partial_is_refused():
    a = sharding("[Partial(sum), Partial(max)]", "2,3", "s8[7,3]")
    with pytest.raises(axe.ShardingError, match=r'"d1" \(max\) cannot be reduced while mesh axis "d0" \(sum\) stays partial'):
        a.plan(sharding("[Partial(sum), Replicate()]", "2,3", "s8[7,3]"))
