"""Building pydantic models from values that are already typed and checked, cheaply.

An episode builds several models a round (the conversation, the reply records, the round
record, the observation and its reply views, the turn, the round note; about eight a round of
a first pass, since a faithful reply's record and view are made once per group) from values
the environment has made and checked itself. ``Model.model_construct`` skips validation but
still looks up aliases, asks every field whether it is required and copies every default,
each time: in a profile of the runner playing known samples again it was the largest single
cost (about a sixth).
:class:`TrustedMaker` does that work once per class and gives the same model: the same
``__dict__`` (in field order), the same set of fields set, no extra and no private state. Its
call is compiled for the class's fields (:func:`_compiled`): a round record 1.3-2.1 us (measured
on a loaded machine) against 2.7-3.2 for the general call, more for ``model_construct``.

:func:`trusted_maker` gives the same call as a plain function: a function takes its keywords
as they are, where an instance of a Python class is called through its type's ``__call__``
with them gathered into a dict first (a third of the compiled call's instructions). The
package's functions' calls are written out in :mod:`._trusted_calls`, a module Python compiles
once like any other, so a process loads them instead of compiling their sources
(:func:`_precompiled`).

Only plain models qualify (no aliases, no ``extra="allow"``, no ``model_post_init``, no
``__new__``, not a root model); for any other the maker simply calls ``model_construct``. Unlike
``model_construct``, a name that is not a field is an error rather than ignored: every
caller is our own code, and a misspelt field would otherwise vanish silently.

:func:`made_frozen` does the same for a frozen dataclass, whose ``__init__`` sets each field
through ``object.__setattr__``: the reader's requests and values, the colleagues' replies.

Reading a model's fields back has a cost of its own: a pydantic model's class has a
``__getattr__`` hook, so Python 3.11 cannot specialise a read of its field as an attribute
(about 440 instructions, where an item of the model's ``__dict__``, which holds its fields, is
about 60; the hook was 7.8% of a first pass over 80 built groups). Where the hot path reads
several fields of one model, or one many times, it reads them from :func:`fields_of` the model,
once. The runner's models now have the ordinary lookup instead of the hook
(:mod:`._plain_reads`), which Python specialises: on those, a field read as an attribute is
cheaper than the read of ``__dict__`` (never specialised) and an item of it, and ``fields_of``
pays only where one place reads several fields of one object (the forty-sixth round: the
behaviour counts reading their trace's fields as attributes, 22.1 to 16.8 million instructions
of a first pass over 80 built groups).
"""

from __future__ import annotations

import copy
import hashlib
import keyword
import sys
import types
from collections.abc import Callable
from operator import attrgetter
from typing import Any, Generic, NoReturn, TypeVar

from pydantic import BaseModel
from pydantic.fields import FieldInfo

__all__ = [
    "SharedFieldsSet",
    "TrustedMaker",
    "fields_of",
    "made_frozen",
    "new_model",
    "set_model_extra",
    "set_model_fields_set",
    "set_model_private",
    "set_model_state",
    "slot_setter",
    "trusted_maker",
]

Model = TypeVar("Model", bound=BaseModel)
Frozen = TypeVar("Frozen")

_REQUIRED = object()  # no default: left out when not given, as model_construct does
_COMPUTED = object()  # a default_factory, or a default model_construct would copy
_IMMUTABLE = (type(None), bool, int, float, str, bytes, frozenset)
_set_attribute = object.__setattr__
_new = object.__new__  # (a pydantic model has no __new__ of its own)


def _shared_default(value: object) -> bool:
    """Whether ``model_construct`` hands out ``value`` itself as the default (it deep-copies
    mutable defaults): immutable scalars, and tuples of them."""
    if isinstance(value, tuple):
        return all(_shared_default(item) for item in value)
    return isinstance(value, _IMMUTABLE)


class TrustedMaker(Generic[Model]):
    """``TrustedMaker(Reply)(role=..., text=...)`` equals ``Reply.model_construct(role=...,
    text=...)`` (see the module docstring), several times faster."""

    def __init__(self, cls: type[Model]) -> None:
        self.cls = cls
        fields = cls.__pydantic_fields__
        self._fields = fields
        self._plain = not (
            cls.__pydantic_root_model__
            or cls.__pydantic_post_init__
            or cls.__new__ is not object.__new__
            or cls.model_config.get("extra") == "allow"
            or any(f.alias is not None or f.validation_alias is not None for f in fields.values())
        )
        template: list[tuple[str, object]] = []
        for name, field in fields.items():
            if field.is_required():
                template.append((name, _REQUIRED))
            elif field.default_factory is None and _shared_default(field.default):
                template.append((name, field.default))
            else:
                template.append((name, _COMPUTED))
        self._template = tuple(template)
        self._makers = {
            name: _default_maker(fields[name]) for name, d in template if d is _COMPUTED
        }
        # every field in order, at its shared default or a marker: the state of a call is this
        # updated with the values given (a dict keeps a key's place when it is updated)
        self._initial = dict(template)
        # the fields a call must give for the usual path: those without a shared default
        self._marked = frozenset(name for name, d in template if d is _REQUIRED or d is _COMPUTED)
        self._count = len(template)
        if self._plain and all(_compilable(name) for name in fields):
            # (every instance of the class the same: one compiled call per model class,
            # compiled at the first call: a process that imports makers need not use them)
            self.__class__ = _CompiledAtFirstCall

    def __call__(self, **values: Any) -> Model:
        if not self._plain:
            return self.cls.model_construct(**values)
        state = self._initial.copy()
        state.update(values)
        # the usual call: every field without a shared default given, no name not a field
        if len(state) != self._count or not values.keys() >= self._marked:
            state = self._state_field_by_field(values)
        model = _new(self.cls)
        _set_attribute(model, "__dict__", state)
        _set_attribute(model, "__pydantic_fields_set__", set(values))
        _set_attribute(model, "__pydantic_extra__", None)
        _set_attribute(model, "__pydantic_private__", None)
        return model

    def _state_field_by_field(self, values: dict[str, Any]) -> dict[str, Any]:
        state: dict[str, Any] = {}
        for name, default in self._template:
            if name in values:
                state[name] = values[name]
            elif default is _REQUIRED:
                continue
            elif default is _COMPUTED:
                state[name] = self._default(name, state)
            else:
                state[name] = default
        unknown = sorted(name for name in values if name not in self._fields)
        if unknown:
            raise TypeError(f"{self.cls.__name__} has no field {', '.join(unknown)}")
        return state

    def _default(self, name: str, state: dict[str, Any]) -> Any:
        return self._makers[name](state)

    def __reduce__(self) -> tuple[type[TrustedMaker[Any]], tuple[type[Model]]]:
        # (a compiled call's class is made at run time: pickled as the maker of its class)
        return TrustedMaker, (self.cls,)

    def _general(self, given: dict[str, Any]) -> Model:
        """A compiled call that is not the usual one (see :func:`_compiled`): the general
        path, for the values given (``given``: the call's locals, its parameters not given
        at their marker, the names that are not fields under ``_unknown``)."""
        values = {n: v for n, v in given.items() if n in self._fields and v is not _MISSING}
        return TrustedMaker.__call__(self, **values, **given["_unknown"])


def _compilable(name: str) -> bool:
    """Whether a field can be a keyword parameter of a compiled call (none starts with an
    underscore, as the call's own names do)."""
    return name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("_")


class _CompiledAtFirstCall(TrustedMaker[Any]):
    """A maker whose call is compiled when it is first called (then its class is that call's)."""

    def __call__(self, **values: Any) -> Any:
        self.__class__ = _compiled(self.cls, self._template)
        return self(**values)


class SharedFieldsSet(set[str]):
    """The fields set the models of a frozen class share when a compiled call is given the same
    fields (a frozen model's never changes): a set (pydantic and its serialiser read a set)
    that refuses changes, copies and pickles as a plain set (pydantic copies a model's fields
    set before it updates a copy's), and gives plain sets from its operators (``set`` does for
    a subclass)."""

    __slots__ = ()

    def _refuse(self, *args: object) -> NoReturn:
        raise TypeError("a fields set shared by frozen models is not changed")

    add = discard = remove = pop = clear = update = _refuse
    difference_update = intersection_update = symmetric_difference_update = _refuse
    __ior__ = __iand__ = __isub__ = __ixor__ = _refuse

    def __reduce__(self) -> tuple[type[set[str]], tuple[list[str]]]:
        # (copy, deepcopy and pickle: a plain set)
        return set, (list(self),)


class _SharedFieldsSets(dict[int, SharedFieldsSet]):
    """A frozen class's shared fields sets, by the defaults left out (bit ``1 << i``: the
    ``i``-th field), each made when first asked for."""

    def __init__(self, names: list[str]) -> None:
        super().__init__()
        self.names = names

    def __missing__(self, left: int) -> SharedFieldsSet:
        made = self[left] = SharedFieldsSet(
            name for index, name in enumerate(self.names) if not left >> index & 1
        )
        return made


_MISSING = object()  # a compiled call's parameter that was not given
_compiled_classes: dict[type[BaseModel], type[TrustedMaker[Any]]] = {}


fields_of: Callable[[object], dict[str, Any]] = attrgetter("__dict__")
"""A model's fields, as its ``__dict__`` holds them, read without its class's ``__getattr__``
hook (see the module's docstring)."""


def slot_setter(cls: type, name: str) -> Callable[[object, object], None]:
    """The setter of the instance attribute ``name`` of ``cls`` (a slot, or ``__dict__``), as
    ``object.__setattr__(instance, name, value)`` finds it, found once: what a maker calls
    instead of a frozen class's ``__setattr__`` or ``__init__``."""
    owner = next(k for k in cls.__mro__ if name in k.__dict__)
    setter: Callable[[object, object], None] = owner.__dict__[name].__set__
    return setter


new_model: Callable[[type[Model]], Model] = _new
"""A model instance with no state yet (``object.__new__``: a pydantic model has no
``__new__`` of its own), for a maker written out where it is made: it then sets the instance's
state, fields set, extra and private with the four setters below, as a trusted maker's
compiled call does."""
set_model_state, set_model_fields_set, set_model_extra, set_model_private = (
    slot_setter(BaseModel, name)  # (BaseModel's slots: every model class's own setters)
    for name in (
        "__dict__",
        "__pydantic_fields_set__",
        "__pydantic_extra__",
        "__pydantic_private__",
    )
)
"""The setters of every model's state (its ``__dict__``), fields set, extra and private, found
once (see :func:`new_model`); callers' tests compare what they make with a maker's."""


def _call_source(
    cls: type[BaseModel], template: tuple[tuple[str, object], ...], namespace: dict[str, Any]
) -> str:
    """The source of a call written out for ``cls``'s fields (see :func:`_compiled`):
    ``def __call__(_self, *, <each field>=_M, **_unknown)``, with what it reads from its
    globals put in ``namespace``."""
    names = [name for name, _ in template]
    given = [name for name, default in template if default is _REQUIRED or default is _COMPUTED]
    # a frozen model's fields set never changes: the models made with the same fields given
    # share one, which refuses changes (a set made each call was about 1.1k instructions), by
    # the defaults left out (a bit each, by field index: ``_left``)
    shared = bool(cls.model_config.get("frozen"))
    namespace.update(
        _M=_MISSING,
        _cls=cls,
        _new=_new,
        _set_dict=slot_setter(cls, "__dict__"),
        _set_fields=slot_setter(cls, "__pydantic_fields_set__"),
        _set_extra=slot_setter(cls, "__pydantic_extra__"),
        _set_private=slot_setter(cls, "__pydantic_private__"),
    )
    if shared:
        fields_sets = _SharedFieldsSets(names)
        namespace.update(_fields_sets=fields_sets, _every_field=fields_sets[0])
    parameters = "".join(f", {name}=_M" for name in names)
    lines = [
        f"def __call__(_self, *{parameters}, **_unknown):",
        f"    if {' or '.join(['_unknown', *(f'{name} is _M' for name in given)])}:",
        "        return _self._general(locals())",
        "    _left = 0"
        if shared
        else f"    _fields = {{{', '.join(map(repr, names))}}}"
        if names
        else "    _fields = set()",
    ]
    for index, (name, default) in enumerate(template):
        if default is not _REQUIRED and default is not _COMPUTED:
            namespace[f"_default{index}"] = default
            lines += [
                f"    if {name} is _M:",
                f"        {name} = _default{index}",
                f"        _left |= {1 << index}"
                if shared
                else f"        _fields.discard({name!r})",
            ]
    lines += [
        "    _made = _new(_cls)",
        f"    _set_dict(_made, {{{', '.join(f'{name!r}: {name}' for name in names)}}})",
        "    _set_fields(_made, _fields_sets[_left] if _left else _every_field)"
        if shared
        else "    _set_fields(_made, _fields)",
        "    _set_extra(_made, None)",
        "    _set_private(_made, None)",
        "    return _made",
    ]
    return "\n".join(lines)


def _compiled(cls: type[BaseModel], template: tuple[tuple[str, object], ...]) -> type[Any]:
    """A subclass of :class:`TrustedMaker` whose call is written out for ``cls``'s fields:
    each field a keyword parameter, the state a dict display in field order, the fields set
    a set display less the shared defaults not given (a frozen class's: one
    :class:`SharedFieldsSet` for each set of defaults left out), the attributes set through their
    descriptors (about two thirds of the general call's time). A call that does not give
    every field without a shared default, or names one that is not a field, takes the
    general path."""
    found = _compiled_classes.get(cls)
    if found is not None:
        return found
    namespace: dict[str, Any] = {}
    source = _call_source(cls, template, namespace)
    # (the field names are checked identifiers; the file name tells profiles the classes apart)
    exec(compile(source, f"<TrustedMaker {cls.__qualname__}>", "exec"), namespace)
    found = type(
        f"TrustedMaker[{cls.__name__}]", (TrustedMaker,), {"__call__": namespace["__call__"]}
    )
    _compiled_classes[cls] = found
    return found


def trusted_maker(cls: type[Model]) -> Callable[..., Model]:
    """A function that makes ``cls`` as ``TrustedMaker(cls)`` does (the same models, the
    same errors), called as a plain function: an instance of a Python class is called
    through its type's ``__call__`` with the keywords gathered into a dict and handed on
    again (about 3,000 instructions a call of six keywords, a third of the compiled call),
    a function is called with them as they are. Its code is the compiled call's, put in
    place at its first call (see :class:`TrustedMaker`); a model that is not plain, or has
    a field that cannot be a parameter, gets the maker's general call. Unlike a maker, the
    function pickles by its name only (as every function)."""
    maker = TrustedMaker(cls)
    if type(maker) is not _CompiledAtFirstCall:
        return maker.__call__
    _function_classes.append(cls)
    # (the calls module holds the package's own makers' calls: not those a test makes, so
    # that the file written from a plain process is the one a test process checks)
    if sys._getframe(1).f_globals.get("__name__", "").startswith(_PACKAGE):
        _package_function_classes.add(cls)
    namespace: dict[str, Any] = {"_self": maker}
    function: Callable[..., Model] = types.FunctionType(
        _stub.__code__, namespace, f"TrustedMaker[{cls.__name__}]"
    )
    function.__qualname__ = function.__name__

    def first_call(values: dict[str, Any]) -> Model:
        source = _function_source(cls, maker._template, namespace)
        filename = f"<TrustedMaker {cls.__qualname__}>"
        code = _precompiled(source, filename)
        if code is None:
            exec(compile(source, filename, "exec"), namespace)
            code = namespace["__call__"].__code__
        function.__code__ = code  # (neither has a closure)
        # every parameter's default: the marker of a field not given, as the source has it
        parameters = code.co_varnames[: code.co_kwonlyargcount]
        function.__kwdefaults__ = dict.fromkeys(parameters, _MISSING)
        return function(**values)

    namespace["_first_call"] = first_call
    return function


_function_classes: list[type[BaseModel]] = []
"""the classes of the compiled functions :func:`trusted_maker` made"""
_PACKAGE = f"{__name__.partition('.')[0]}."
_package_function_classes: set[type[BaseModel]] = set()
"""the classes of the compiled functions the package's own modules made with
:func:`trusted_maker` (the calls module's)"""


def _function_source(
    cls: type[BaseModel], template: tuple[tuple[str, object], ...], namespace: dict[str, Any]
) -> str:
    """The source of a :func:`trusted_maker` function's call: the compiled call's without
    ``_self`` among its parameters (it is the maker, a global)."""
    source = _call_source(cls, template, namespace)
    return source.replace("def __call__(_self, *", "def __call__(*", 1)


def _source_key(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


def _precompiled(source: str, filename: str) -> types.CodeType | None:
    """The code of the function ``source`` defines (a maker function's call), as
    :mod:`._trusted_calls` holds it; None when it holds no call of that source (a class
    changed since the module was written: then the source is compiled, as before).

    That module is the calls written out (:func:`calls_module_text`), so Python compiles
    them as it compiles every module, once, into its cache of compiled modules: compiling
    the sources in every process (the parser most of it) was about 22 M instructions of a
    first pass over 80 built groups (2.2%; once a process, so less of a longer run)."""
    from . import _trusted_calls

    found: types.CodeType | None = _trusted_calls.CALLS.get(_source_key(source))
    # the function's code as the source compiled now gives it: its lines counted from the
    # source's first, under the same file name (tracebacks and profiles tell the classes apart)
    return None if found is None else found.replace(co_filename=filename, co_firstlineno=1)


def calls_module_text() -> str:
    """The text of :mod:`._trusted_calls`: each compiled call of the package's
    :func:`trusted_maker` functions, by the key of its source (write it with
    ``python -c "from uncobench_z3._trusted import write_calls_module; write_calls_module()"``
    when a maker's class changes; a test checks that it is current)."""
    import uncobench_z3.evaluation  # noqa: F401  (makes every maker of the package)

    lines = [
        '"""The compiled calls of the package\'s trusted makers, written out by',
        'uncobench_z3._trusted.calls_module_text: do not edit (see _trusted._precompiled)."""',
        "# mypy: ignore-errors",
        "",
        "# (compiled as _trusted compiles a call's source, which inherits this flag from it)",
        "from __future__ import annotations",
        "",
        "CALLS = {}",
        "_M = None  # (the parameters' default when defined: a maker sets its own marker)",
    ]
    ours = _package_function_classes
    for cls in sorted(ours, key=lambda c: (c.__module__, c.__qualname__)):
        maker = TrustedMaker(cls)
        source = _function_source(cls, maker._template, {})
        lines += ["", "", f"# {cls.__module__}.{cls.__qualname__}", source]
        lines.append(f'CALLS["{_source_key(source)}"] = __call__.__code__')
    return "\n".join(lines) + "\n"


def write_calls_module() -> None:
    """Write :mod:`._trusted_calls` again (see :func:`calls_module_text`)."""
    from pathlib import Path

    Path(__file__).with_name("_trusted_calls.py").write_text(calls_module_text())


def _stub(**values: Any) -> Any:
    """The code of a function of :func:`trusted_maker` until its first call (``_first_call``:
    a global of its own namespace)."""
    return _first_call(values)  # type: ignore[name-defined]  # noqa: F821


def _default_maker(field: FieldInfo) -> Callable[[dict[str, Any]], Any]:
    """What makes ``field``'s default as ``model_construct`` does (a factory's value, or a
    copy of a mutable default), decided once: ``FieldInfo.get_default`` inspects the
    factory's signature on every call (85 us for ``list``, against well under one)."""
    factory = field.default_factory
    if factory is None:
        default = field.default
        return lambda state: copy.deepcopy(default)
    if field.default_factory_takes_validated_data:
        return lambda state: factory(state)  # type: ignore[call-arg]
    return lambda state: factory()  # type: ignore[call-arg]


def made_frozen(cls: type[Frozen], fields: dict[str, object]) -> Frozen:
    """An instance of the frozen dataclass ``cls`` with ``fields`` (every field, in order),
    as ``cls(**fields)`` makes it, without calling its ``__init__``: that sets each field
    with ``object.__setattr__`` (3.1 us for a reading's
    :class:`~.settings._request.Request`, a tenth of a reading; 2.8 us for a colleague's
    reply; this, 0.6 and 1.1). Only for a plain dataclass (no ``__post_init__``, no
    ``__slots__``, no validation in ``__init__``), and callers' tests compare what it makes
    with what ``cls(**fields)`` makes."""
    made = _new(cls)
    made.__dict__.update(fields)
    return made
