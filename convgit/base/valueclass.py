"""``valueclass``: a dataclass whose methods are not compiled when its class is made.

``dataclasses.dataclass`` writes each method it adds (``__init__``, ``__repr__``, ``__eq__``,
``__hash__``, a frozen class's ``__setattr__`` and ``__delattr__``) as source text and compiles it
when the class statement runs: about 0.5 ms a class, paid by every process that imports the module
(a snapshot's command made 34 of them, 20 ms of its start). A ``valueclass`` is a dataclass all the
same (``dataclasses.fields``, ``replace`` and ``asdict`` take it), whose methods are shared ones
that read its fields, compiled once with this module. Its instances cost a little more to make
(the arguments are matched to the fields at each call): a class made in bulk (an entry of a
conversation) stays a plain dataclass.

Taken: ``frozen``, ``field(default=..., default_factory=..., repr=..., compare=...)`` and
``__post_init__``; anything else is refused when the class is made (not mistaken at run time).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, overload

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:
        return lambda decorated: decorated


T = TypeVar("T")
_MISSING = dataclasses.MISSING


class _Plan:
    """What a valueclass's shared methods read: its fields, in order."""

    __slots__ = ("cls", "compared", "defaults", "frozen", "known", "names", "post", "shown")

    def __init__(self, cls: type, frozen: bool) -> None:
        fields = dataclasses.fields(cls)
        for f in fields:
            if not f.init or f.hash is not None or f.kw_only is True:
                raise TypeError(f"valueclass {cls.__qualname__}.{f.name}: a field option it lacks")
        self.cls = cls
        self.names = tuple(f.name for f in fields)
        self.known = frozenset(self.names)
        # name -> (default, factory) for the fields that have one
        self.defaults = {
            f.name: (f.default, f.default_factory)
            for f in fields
            if f.default is not _MISSING or f.default_factory is not _MISSING
        }
        self.shown = tuple(f.name for f in fields if f.repr)
        self.compared = tuple(f.name for f in fields if f.compare)
        self.frozen = frozen
        self.post = getattr(cls, "__post_init__", None)


def _plan(self: Any) -> _Plan:
    plan: _Plan = type(self).__valueclass__
    return plan


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    plan: _Plan = type(self).__valueclass__
    names = plan.names
    if not kwargs and len(args) == len(names):  # every field in order: the common call
        self.__dict__.update(zip(names, args, strict=False))
        if plan.post is not None:
            self.__post_init__()
        return
    if len(args) > len(names):
        raise TypeError(f"{plan.cls.__qualname__}() takes {len(names)} arguments, not {len(args)}")
    values = dict(zip(names, args, strict=False))
    for name in kwargs:
        if name not in plan.known or name in values:
            raise TypeError(f"{plan.cls.__qualname__}() got an unexpected or repeated {name!r}")
    values.update(kwargs)
    if len(values) < len(names):
        for name in names:
            if name not in values:
                if name not in plan.defaults:
                    raise TypeError(f"{plan.cls.__qualname__}() is missing {name!r}")
                default, factory = plan.defaults[name]
                values[name] = factory() if default is _MISSING else default  # type: ignore[operator]
    self.__dict__.update(values)  # past a frozen class's __setattr__, as dataclasses' own
    if plan.post is not None:
        self.__post_init__()


def _repr(self: Any) -> str:
    plan = _plan(self)
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in plan.shown)
    return f"{type(self).__qualname__}({shown})"


def _values(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, name) for name in _plan(self).compared)


def _eq(self: Any, other: object) -> Any:  # a bool, or NotImplemented for another class
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _values(self) == _values(other)


def _hash(self: Any) -> int:
    return hash(_values(self))


def _setattr(self: Any, name: str, value: Any) -> None:
    if type(self).__valueclass__.frozen:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _delattr(self: Any, name: str) -> None:
    if type(self).__valueclass__.frozen:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
    object.__delattr__(self, name)


def _make(cls: type[T], frozen: bool) -> type[T]:
    for name in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"):
        if name in cls.__dict__:
            raise TypeError(f"valueclass {cls.__qualname__} defines {name} of its own")
    for base in cls.__mro__[1:]:
        if dataclasses.is_dataclass(base) and "__valueclass__" not in base.__dict__:
            raise TypeError(f"valueclass {cls.__qualname__} derives from a plain dataclass")
        if "__valueclass__" in base.__dict__ and base.__valueclass__.frozen != frozen:  # type: ignore[attr-defined]
            raise TypeError(f"valueclass {cls.__qualname__} is frozen unlike {base.__qualname__}")
    if cls.__doc__ is None:
        cls.__doc__ = cls.__name__  # dataclasses would compute a signature for it
    # the fields alone: dataclasses compiles nothing without these methods
    made = dataclasses.dataclass(init=False, repr=False, eq=False)(cls)
    methods: dict[str, Any] = {
        "__valueclass__": _Plan(made, frozen),
        "__init__": _init,
        "__repr__": _repr,
        "__eq__": _eq,
        # dataclasses' rule: eq and frozen hash by the fields; eq alone is not hashable
        "__hash__": _hash if frozen else None,
    }
    if frozen:
        methods.update(__setattr__=_setattr, __delattr__=_delattr)
    for name, method in methods.items():
        setattr(made, name, method)
    return made


@overload
def valueclass(cls: type[T], /) -> type[T]: ...


@overload
def valueclass(*, frozen: bool = False) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(field_specifiers=(dataclasses.field,))
def valueclass(cls: type[T] | None = None, /, *, frozen: bool = False) -> Any:
    """``@valueclass`` or ``@valueclass(frozen=True)``, where ``@dataclass`` would be."""
    if cls is None:
        return lambda later: _make(later, frozen)
    return _make(cls, frozen)
