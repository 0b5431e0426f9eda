"""A value computed once and kept as a plain attribute of its instance: :class:`kept_property`.

``functools.cached_property`` keeps its value with ``instance.__dict__[name] = value``. On
Python 3.11 that asks for the instance's ``__dict__``, which an instance of an ordinary class
does not have until then (its attributes are kept in a compact array the class's instances
share the keys of): the dict it makes shares that array (a "split" dict). A read of an
attribute of an instance with such a dict is specialised for a dict with its own values
(``LOAD_ATTR_WITH_HINT``), misses, and is done by the generic lookup every time: about
three times the time of an ordinary read. In the first pass over 80 built groups the
prepared groups' and typed tasks' and facts' attributes were read 41,648 times so (counted
with a counting ``__getattribute__``), after a cached property of each had made its dict;
with :class:`kept_property` none: the pass 940.0 to 931.7 M instructions (the collector off
921.9 to 914.4).

:class:`kept_property` sets its value with ``object.__setattr__`` instead (the class
has no ``__set__`` for the name, so the value goes where the instance's other attributes
are): no dict is made, and every read stays specialised. Otherwise it is
``functools.cached_property``: computed at the first read, kept in the instance (in
``vars(instance)``, pickled and copied with it, deleted with ``del``), found there by later
reads before the descriptor, and settable on a frozen dataclass. It takes no lock (3.12's
does not either): two threads that read it first at once each compute it, the same value.
"""

from __future__ import annotations

import functools
from typing import Any, Self, TypeVar, overload

__all__ = ["kept_property"]

Value = TypeVar("Value")

_set_attribute = object.__setattr__


class kept_property(functools.cached_property[Value]):
    """``functools.cached_property`` whose value is set as a plain attribute (see the module
    docstring)."""

    @overload
    def __get__(self, instance: None, owner: type[Any] | None = None) -> Self: ...

    @overload
    def __get__(self, instance: object, owner: type[Any] | None = None) -> Value: ...

    def __get__(self, instance: object | None, owner: type[Any] | None = None) -> Any:
        if instance is None:
            return self
        name = self.attrname
        if name is None:
            raise TypeError("Cannot use kept_property instance without calling __set_name__ on it.")
        value = self.func(instance)
        _set_attribute(instance, name, value)
        return value
