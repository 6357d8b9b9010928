"""Every error convgit raises on purpose is one class of ``convgit.base.errors``, importable from
the package itself: a caller catches what the API raises without knowing which module raised it."""

from __future__ import annotations

import importlib
import pkgutil

import convgit
from convgit.base.errors import ConvgitError


def _every_module() -> None:
    for found in pkgutil.walk_packages(convgit.__path__, "convgit."):
        importlib.import_module(found.name)


def _subclasses(cls: type) -> set[type]:
    below = set(cls.__subclasses__())
    return below.union(*(_subclasses(sub) for sub in below))


def test_every_error_class_lives_in_errors_and_is_exported() -> None:
    _every_module()
    errors = _subclasses(ConvgitError) | {ConvgitError}
    assert {e.__name__ for e in errors if e.__module__ != "convgit.base.errors"} == set()
    assert {e.__name__ for e in errors} - set(convgit.__all__) == set()
    assert all(getattr(convgit, e.__name__) is e for e in errors)
