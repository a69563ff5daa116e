"""The public API: every class, function, method and property documented; errors are ValueErrors."""

import inspect

import axe
from axe import cute, hlo, jax as axe_jax, torch as axe_torch, triton

MODULES = [axe, cute, hlo, triton, axe_jax, axe_torch]


def public(obj):
    for name in dir(obj):
        if not name.startswith("_"):
            yield name, getattr(obj, name)


def test_everything_public_has_a_docstring():
    missing = []
    for mod in MODULES:
        assert (mod.__doc__ or "").strip(), mod.__name__
        for name, obj in public(mod):
            if inspect.ismodule(obj) or type(obj).__name__ == "_Feature" or isinstance(obj, (str, int)):
                continue
            if not (obj.__doc__ or "").strip():
                missing.append(f"{mod.__name__}.{name}")
            if inspect.isclass(obj) and not issubclass(obj, BaseException):
                for attr, member in vars(obj).items():
                    if attr.startswith("_"):
                        continue
                    if not (getattr(member, "__doc__", None) or "").strip():
                        missing.append(f"{mod.__name__}.{name}.{attr}")
    assert not missing, missing


def test_errors_are_value_errors():
    for e in [axe.ParseError, axe.LayoutError, axe.XlaError, axe.RelayoutError, axe.ShardingError,
              axe.CuteError, axe.TritonError]:
        assert issubclass(e, axe.AxeError) and issubclass(e, ValueError)


def test_version():
    assert axe.__version__.count(".") == 2
