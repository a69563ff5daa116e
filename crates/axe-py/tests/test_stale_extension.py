"""An import of a missing or stale native extension fails, saying how to build it."""

import os
import pathlib
import shutil
import subprocess
import sys

import axe


def run_import(package_parent):
    env = dict(os.environ, PYTHONPATH=str(package_parent))
    return subprocess.run(
        [sys.executable, "-c", "import axe"], env=env, capture_output=True, text=True, cwd=package_parent
    )


def copy_package(tmp_path, with_extension=True):
    here = os.path.dirname(axe.__file__)
    dest = tmp_path / "axe"
    assert dest.parent.is_dir()
    shutil.copytree(here, dest, ignore=shutil.ignore_patterns("__pycache__", *([] if with_extension else ["_axe*.so", "_axe*.pyd"])))
    return dest


def test_the_built_extension_matches_its_package(tmp_path):
    copy_package(tmp_path)
    r = run_import(tmp_path)
    assert r.returncode == 0, r.stderr


def test_a_stale_extension_is_refused_with_how_to_build(tmp_path):
    # The source tree's layout: crates/axe-py/{python/axe, src}, a Rust source changed since the build.
    root = tmp_path / "crates" / "axe-py"
    (root / "python").mkdir(parents=True)
    dest = copy_package(root / "python")
    src = pathlib.Path(axe.__file__).parents[2] / "src"
    if src.is_dir():
        shutil.copytree(src, root / "src")
    else:  # an installed package: the sources are not beside it
        (root / "src").mkdir()
        (root / "src" / "lib.rs").write_text("// built from\n")
    r = run_import(root / "python")
    assert r.returncode == 0 or not src.is_dir(), r.stderr
    with open(root / "src" / "lib.rs", "a") as f:
        f.write("\n// changed since the extension was built\n")
    r = run_import(root / "python")
    assert r.returncode != 0
    assert "ImportError" in r.stderr and "stale" in r.stderr and "maturin develop" in r.stderr, r.stderr


def test_a_missing_extension_is_refused_with_how_to_build(tmp_path):
    copy_package(tmp_path, with_extension=False)
    r = run_import(tmp_path)
    assert r.returncode != 0
    assert "missing" in r.stderr and "pip install ./crates/axe-py" in r.stderr, r.stderr


def test_an_extension_older_than_the_package_is_refused(tmp_path):
    # One built before the package used `_relayout_target` (or any other name it imports).
    import types

    from axe import _build

    old = types.SimpleNamespace(**{n: getattr(axe._axe, n) for n in dir(axe._axe) if n != "_relayout_target"})
    try:
        _build.check(old)
    except ImportError as e:
        assert "stale" in str(e) and "maturin develop" in str(e)
    else:
        raise AssertionError("an extension without _relayout_target was accepted")
