"""A plain model's fields read as plain attributes: without pydantic's ``__getattr__`` hook.

``BaseModel`` defines ``__getattr__`` (for private attributes and extra fields), so every model
class's attribute lookup is CPython's ``slot_tp_getattr_hook``, which Python 3.11 cannot
specialise: each read of a field as an attribute, found in the instance's ``__dict__``, costs
about 600 instructions. The first pass over 80 built groups read fields of the runner's models
66,621 times (counted with a counting ``__getattribute__``; rounds 38 and 39 read fewer, call
site by call site, with :func:`~._trusted.fields_of`), and the hook was 71.8 M of its 1,051.3 M
instructions, inclusive (27.4 M of it ``Request.__getattr__``'s own work). With the ordinary
lookup for the runner's models: 1,031.2-1,032.0 M (the collector off: 1,033.4 to 1,014.0-1,014.2).

For a model with no private attributes and no extra fields, the hook only ever runs once the
ordinary lookup has failed, and then raises ``AttributeError`` with the message the ordinary
lookup gives (``'Model' object has no attribute 'name'``). :func:`plain_reads` gives such a
class the ordinary lookup itself (``PyObject_GenericGetAttr``, as ``object`` has), which 3.11
specialises: the same reads, the same errors. A class that does not qualify, or an interpreter
whose type layout is not the one checked below (not CPython, or a slot elsewhere), is left as
it is: slower, never different.

The runner's models take it from their modules' bases (``__pydantic_init_subclass__ =
plain_reads_of_subclasses``, run by pydantic once a subclass is complete), or as a decorator.
Setting ``__getattr__`` or ``__getattribute__`` on a class afterwards gives it CPython's hook
again, and a subclass made later is given the hook at its creation (then this again, by its
base's ``__pydantic_init_subclass__``, if it qualifies).
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["plain_reads", "plain_reads_of_subclasses", "reads_plainly"]

ModelClass = TypeVar("ModelClass", bound=type[BaseModel])

_GETATTRO = 18 * ctypes.sizeof(ctypes.c_void_p)
"""where ``tp_getattro`` is in CPython's ``PyTypeObject`` (after the object header, size and
15 slots); checked against three classes by :func:`_getattro_slot` before it is written"""


def _slot(cls: type) -> ctypes.c_void_p:
    return ctypes.c_void_p.from_address(id(cls) + _GETATTRO)


class _Plain:
    pass


class _Hooked:
    def __getattr__(self, name: str) -> Any:
        raise AttributeError(name)


def _generic_lookup() -> int | None:
    """CPython's ordinary attribute lookup (``object``'s ``tp_getattro``), or None when the
    slot is not where :data:`_GETATTRO` says: ``object`` and a plain class share it, a class
    with ``__getattr__`` and ``BaseModel`` share another."""
    if sys.implementation.name != "cpython":
        return None
    generic = _slot(object).value
    hook = _slot(_Hooked).value
    if generic is None or generic == hook or _slot(_Plain).value != generic:
        return None
    return generic if _slot(BaseModel).value == hook else None


_GENERIC = _generic_lookup()


def reads_plainly(cls: type) -> bool:
    """Whether ``cls``'s attribute lookup is the ordinary one (``object``'s)."""
    return _GENERIC is not None and _slot(cls).value == _GENERIC


def plain_reads(cls: ModelClass) -> ModelClass:
    """``cls`` with the ordinary attribute lookup when it qualifies (see the module docstring):
    no private attributes, no extra fields allowed, and no ``__getattr__`` or
    ``__getattribute__`` but pydantic's and ``object``'s. Returns ``cls`` (a decorator)."""
    if (
        _GENERIC is not None
        and not cls.__private_attributes__
        and cls.model_config.get("extra") != "allow"
        and getattr(cls, "__getattr__", None) is BaseModel.__getattr__  # type: ignore[attr-defined]
        and cls.__getattribute__ is object.__getattribute__
    ):
        _slot(cls).value = _GENERIC
    return cls


def _plain_reads_of(cls: type[BaseModel], /, **kwargs: Any) -> None:
    plain_reads(cls)


plain_reads_of_subclasses = classmethod(_plain_reads_of)
"""A base model's ``__pydantic_init_subclass__``: each subclass gets :func:`plain_reads`."""
