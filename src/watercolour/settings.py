"""Settings declared once, on their dataclass fields: default, environment variable, help.

A configuration is a plain dataclass whose fields are made with :func:`setting`::

    @dataclass
    class RenderConfig:
        workers: int = setting(1, env="WATERCOLOUR_RENDER_WORKERS", positive=True,
                               help="warm browsers kept open")

        @classmethod
        def from_env(cls, environ=None, **overrides):
            return settings.from_env(cls, environ, **overrides)

and one generic reader turns text into field values, for every configuration alike:

- :func:`from_env` ``(cls, environ=None, **overrides)``: the defaults, then each field's
  environment variable (unset or blank: the default), then the explicit overrides that are not
  None. Bad values raise one :class:`SettingError` (a ``ValueError``) listing every mistake,
  one line each, naming the variable.
- :func:`env_values` ``(cls, environ=None, error=SettingError)``: only the fields whose
  variable is set, as ``{field: value}`` (for configurations with a rule across fields). Every
  field is read before it raises: one mistake raises as it is, several raise one ``error``
  with a line each (a nested configuration's reader contributes all of its lines).
- :func:`check` ``(obj)``: the fields' ``positive`` / ``minimum`` / ``choices`` rules applied to
  an instance built in code (a ``__post_init__`` calls it), so each rule is declared once.
- :func:`add_arguments` ``(parser, cls, names=..., exclude=..., required=...)``: one argparse
  flag per field (``--field-name``, or the name given in ``names``), typed from the annotation,
  the help and the default taken from the field; unset flags stay None.
- :func:`from_arguments` ``(cls, namespace, environ=None, **overrides)``: the instance those
  flags describe: the defaults, then the variables, then the flags given, then the overrides
  (so every verb honours the same variables as the library).
- :func:`borrow` ``(cls, name)`` and :func:`fill` ``(obj)``: a field of one configuration
  offered again by another dataclass (``watercolour train``'s flags, parsed by TRL's parser):
  default None, "not given"; ``fill`` (from a ``__post_init__``) turns that into the field's
  variable, else its default, and checks a given value against the field's rules, so a flag
  never hides a variable behind a default of its own.
- :func:`describe` ``(cls)``: ``(field, variable, default, help)`` rows, for docs and ``--help``.
- :func:`variables_table` ``()``: every ``WATERCOLOUR_*`` variable of every configuration
  (:data:`CONFIGURATIONS`) by its full name, as the Markdown table the README shows.

Types understood: ``int``, ``float`` (finite), ``str``, ``bool`` (1/0, true/false, yes/no,
on/off), ``Literal[...]`` (its values are the choices), ``X | None`` of those, and ``list[str]``
(a repeated flag; comma-separated in a variable). Anything else (a nested configuration, a
value built from several variables) declares ``reader=``: a function of the whole environment
that returns the value, or None for the default (a nested configuration: its ``from_env``).
``positive=True`` rejects zero and negative numbers, ``minimum=`` numbers below it;
``choices=`` restricts the values.

The fields stay plain dataclass fields whose ``metadata`` holds only ``{"help": ...}`` (the
variable, checks and reader are kept beside them), so a configuration declared with
:func:`setting` also works with ``transformers.HfArgumentParser`` / TRL's ``TrlParser``, and
this reader works on their ``field(metadata={"help": ...})`` fields (help only, no variable).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from watercolour.errors import InputError

T = TypeVar("T")

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


class SettingError(InputError):
    """A setting's text could not become its value (the message names the variable or flag)."""


def setting(default: Any = dataclasses.MISSING, *, env: str | None = None, help: str = "",
            default_factory: Callable[[], Any] | Any = dataclasses.MISSING,
            positive: bool = False, minimum: float | None = None,
            choices: Sequence[Any] | None = None,
            reader: Callable[[Mapping[str, str]], Any] | None = None,
            shown: str | None = None) -> Any:
    """A dataclass field that carries its environment variable, help, and checks.

    Args:
        default: the default value (or give ``default_factory``; neither: a required field).
        env: the environment variable that sets it (None: not read from the environment).
        help: one line for ``--help``, the docs and ``describe``.
        positive: numbers must be above zero.
        minimum: numbers must be at least this.
        choices: the allowed values (a ``Literal`` annotation gives them too).
        reader: for values no single string describes: ``reader(environ)`` returns the value,
            or None to keep the default (``env`` then only names the variable it reads, for
            the docs).
        shown: the default as the docs show it, where the value itself is not text or
            depends on the machine (a home folder).
    """
    f = dataclasses.field(default=default, default_factory=default_factory,
                          metadata={"help": help} if help else None)
    _EXTRAS[id(f)] = (f, {"env": env, "positive": positive, "minimum": minimum,
                          "reader": reader, "shown": shown,
                          "choices": tuple(choices) if choices is not None else None})
    return f


_EXTRAS: dict[int, tuple[dataclasses.Field, dict[str, Any]]] = {}
"""What :func:`setting` knows beyond the help, per field: kept beside the field, not in its
``metadata``, because ``HfArgumentParser`` passes every metadata key on to argparse."""


def _meta(f: dataclasses.Field) -> dict[str, Any]:
    """A field's help (from its metadata, so plain ``field(metadata={"help": ...})`` fields
    work too) and the variable, checks and reader :func:`setting` gave it."""
    entry = _EXTRAS.get(id(f))
    extras = entry[1] if entry is not None and entry[0] is f else {}
    if not extras and f.metadata.get("env"):  # a module that cannot import this one
        extras = {"env": f.metadata["env"]}
    return {"help": f.metadata.get("help", ""), **extras}


def from_env(cls: type[T], environ: Mapping[str, str] | None = None, **overrides: Any) -> T:
    """``cls`` from its defaults, then its fields' variables, then the non-None overrides."""
    values = env_values(cls, environ)
    values.update({k: v for k, v in overrides.items() if v is not None})
    return cls(**values)


def env_values(cls: type, environ: Mapping[str, str] | None = None,
               error: type[ValueError] = SettingError) -> dict[str, Any]:
    """The fields of ``cls`` set by the environment, parsed. Every field is read first; then
    one mistake raises as it is (a reader's own ``InputError`` keeps its class, bad text is an
    ``error``), several raise one ``error`` with one line per mistake."""
    env = os.environ if environ is None else environ
    hints = _hints(cls)
    values: dict[str, Any] = {}
    mistakes: list[ValueError] = []
    for f in dataclasses.fields(cls):
        try:
            value = _read(f, hints[f.name], env, error)
        except ValueError as err:
            mistakes.append(err)
            continue
        if value is not None:
            values[f.name] = value
    _raise(mistakes, error)
    return values


def _read(f: dataclasses.Field, annotation: Any, env: Mapping[str, str],
          error: type[ValueError] = SettingError) -> Any:
    """One field's value from the environment, or None when its variable is unset or blank
    (a reader's own ``InputError`` keeps its class, bad text is an ``error``)."""
    meta = _meta(f)
    if meta.get("reader") is not None:
        try:
            return meta["reader"](env)
        except InputError:
            raise
        except ValueError as err:  # a reader's bad text is a setting error too
            raise error(str(err)) from None
    name = meta.get("env")
    raw = (env.get(name) or "").strip() if name else ""
    if not raw:
        return None
    try:
        return parse(annotation, raw, name, f)
    except SettingError as err:
        raise error(str(err)) from None


def _raise(mistakes: Sequence[ValueError], error: type[ValueError] = SettingError) -> None:
    """Nothing, one mistake as it is, or several as one ``error`` with a line each."""
    if len(mistakes) == 1:
        raise mistakes[0] from None
    if mistakes:
        raise error("\n".join(str(m) for m in mistakes)) from None


def parse(annotation: Any, raw: str, name: str, f: dataclasses.Field | None = None) -> Any:
    """The value of ``raw`` for a field annotated ``annotation`` (``name`` is the variable or
    flag, for the message)."""
    meta = _meta(f) if f is not None else {}
    kind, choices = _kind(annotation)
    choices = meta.get("choices") or choices
    if kind is list:
        return [part.strip() for part in raw.split(",") if part.strip()]
    if kind is bool:
        low = raw.strip().lower()
        if low not in _TRUE | _FALSE:
            raise SettingError(f"{name} must be true or false, got {raw!r}")
        return low in _TRUE
    if kind is int:
        try:
            value: Any = int(raw)
        except ValueError:
            raise SettingError(f"{name} must be an integer, got {raw!r}") from None
    elif kind is float:
        try:
            value = float(raw)
        except ValueError:
            raise SettingError(f"{name} must be a number, got {raw!r}") from None
        if not math.isfinite(value):
            raise SettingError(f"{name} must be a finite number, got {raw!r}")
    else:
        value = raw
    _check(value, raw, name, meta, choices)
    return value


def check(obj: Any) -> None:
    """Raise :class:`SettingError` (one line per mistake) where a field of the dataclass
    instance ``obj`` breaks its declared ``positive`` / ``minimum`` / ``choices`` rule."""
    mistakes = []
    hints = _hints(type(obj))
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, int | float | str) and not isinstance(value, bool):
            try:
                _check(value, value, f.name, _meta(f), _kind(hints[f.name])[1])
            except SettingError as err:
                mistakes.append(str(err))
    if mistakes:
        raise SettingError("\n".join(mistakes))


def _check(value: Any, raw: Any, name: str, meta: Mapping[str, Any],
           choices: Sequence[Any] | None) -> None:
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    if numeric and meta.get("positive") and value <= 0:
        raise SettingError(f"{name} must be positive, got {raw!r}")
    least = meta.get("minimum")
    if numeric and least is not None and value < least:
        raise SettingError(f"{name} must be at least {least:g}, got {raw!r}")
    choices = meta.get("choices") or choices
    if choices and value not in choices:
        raise SettingError(f"{name} must be one of {', '.join(map(str, choices))}, got {raw!r}")


def add_arguments(parser: argparse.ArgumentParser | argparse._ArgumentGroup, cls: type,
                  names: Mapping[str, str] | None = None, exclude: Iterable[str] = (),
                  required: Iterable[str] = ()) -> None:
    """One flag per field of ``cls`` (except ``exclude`` and fields with a ``reader``): its
    name from ``names`` or ``--field-name``, its type, choices and help from the field."""
    names = dict(names or {})
    skip, needed = set(exclude), set(required)
    hints = _hints(cls)
    for f in dataclasses.fields(cls):
        meta = _meta(f)
        if f.name in skip or meta.get("reader") is not None:
            continue
        flag = names.get(f.name, "--" + f.name.replace("_", "-"))
        kind, choices = _kind(hints[f.name])
        choices = meta.get("choices") or choices
        help_text = meta["help"]
        default = _default(f)
        if f.name not in needed and default is not dataclasses.MISSING and default is not None:
            help_text = f"{help_text} (default {default})" if help_text else f"default {default}"
        if meta.get("env"):
            help_text += f"; env {meta['env']}"
        kwargs: dict[str, Any] = {"dest": f.name, "default": None, "help": help_text}
        if f.name in needed:
            kwargs["required"] = True
        if kind is bool:
            kwargs["action"] = argparse.BooleanOptionalAction
        elif kind is list:
            kwargs.update(action="append", metavar=flag.lstrip("-").upper())
        else:
            kwargs["type"] = _flag_type(hints[f.name], flag, f)
            kwargs["metavar"] = ("{" + ",".join(map(str, choices)) + "}" if choices
                                 else flag.lstrip("-").replace("-", "_").upper())
        parser.add_argument(flag, **kwargs)


def from_arguments(cls: type[T], namespace: argparse.Namespace,
                   environ: Mapping[str, str] | None = None, **overrides: Any) -> T:
    """``cls`` from the defaults, then its variables, then the flags :func:`add_arguments`
    made (those given), then the non-None overrides."""
    flags = {f.name: getattr(namespace, f.name) for f in dataclasses.fields(cls)
             if getattr(namespace, f.name, None) is not None}
    return from_env(cls, environ, **{**flags, **overrides})


def borrow(cls: type, name: str, help: str = "") -> Any:
    """Field ``name`` of the configuration ``cls`` offered again by another dataclass (a
    program's flags): its default is None, "not given", and :func:`fill` turns that into the
    field's variable, else its default; its help is the field's, naming both. A flag never
    declares a second default that would hide the variable."""
    source = _field(cls, name)
    meta = _meta(source)
    text = help or meta["help"]
    default = _default(source)
    where = f"{meta['env']}, else " if meta.get("env") else ""
    shown = "none" if default is None else default
    text = f"{text.rstrip('. ')} (unset: {where}{shown})." if text else f"unset: {where}{shown}"
    f = dataclasses.field(default=None, metadata={"help": text})
    _EXTRAS[id(f)] = (f, {"env": meta.get("env"), "borrowed": (cls, name)})
    return f


def fill(obj: Any, environ: Mapping[str, str] | None = None) -> None:
    """Settle the :func:`borrow` ed fields of the dataclass instance ``obj`` in place: one given
    (not None) is checked against the rules of the field it borrows (the message names its flag,
    ``--field-name``); one not given takes that field's variable, else its default. Every field
    is read first; the mistakes raise one :class:`SettingError`, a line each."""
    env = os.environ if environ is None else environ
    mistakes: list[ValueError] = []
    for f in dataclasses.fields(obj):
        borrowed = _meta(f).get("borrowed")
        if borrowed is None:
            continue
        cls, name = borrowed
        source = _field(cls, name)
        annotation = _hints(cls)[name]
        value = getattr(obj, f.name)
        try:
            if value is None:
                value = _read(source, annotation, env)
                setattr(obj, f.name, _default(source) if value is None else value)
            else:
                flag = "--" + f.name.replace("_", "-")
                _check(value, value, flag, _meta(source), _kind(annotation)[1])
        except ValueError as err:
            mistakes.append(err)
    _raise(mistakes)


def _field(cls: type, name: str) -> dataclasses.Field:
    for f in dataclasses.fields(cls):
        if f.name == name:
            return f
    raise AttributeError(f"{cls.__name__} has no field {name!r}")


def describe(cls: type) -> list[tuple[str, str | None, Any, str]]:
    """``(field, environment variable, default, help)`` for each field of ``cls``."""
    return [(f.name, _meta(f).get("env"), _default(f), _meta(f)["help"])
            for f in dataclasses.fields(cls)]


CONFIGURATIONS: tuple[str, ...] = (
    "watercolour.render.config:RenderConfig",
    "watercolour.gates.verdict:GateConfig",
    "watercolour.rewards.mix:Mix",
    "watercolour.rewards.config:RewardConfig",
    "watercolour.rewards.judge.openai_judge:JudgeKey",
    "watercolour.env.config:EnvConfig",
    "watercolour.cache:ModelCache",
    "watercolour.models.tiny.warm_start:WarmStartConfig",
    "watercolour.reader.install:InstallSettings",
)
"""Every configuration that declares a ``WATERCOLOUR_*`` variable, as ``module:Class`` (imported
by :func:`variables`, so this module imports none of them)."""


def variables(classes: Iterable[type] | None = None) -> list[tuple[str, str, str, str]]:
    """``(variable, "Class.field", default as text, help)`` for every variable the fields of
    ``classes`` (default: :data:`CONFIGURATIONS`) declare, the first declaration of each."""
    if classes is None:
        import importlib

        classes = [getattr(importlib.import_module(module), name)
                   for module, name in (entry.split(":") for entry in CONFIGURATIONS)]
    rows: dict[str, tuple[str, str, str, str]] = {}
    for cls in classes:
        for f in dataclasses.fields(cls):
            meta = _meta(f)
            name = meta.get("env")
            if name and name not in rows:
                rows[name] = (name, f"{cls.__name__}.{f.name}", _shown(f), meta["help"])
        declared = getattr(cls, "declared_variables", None)  # variables not on a field
        for row in (declared() if declared is not None else []):
            rows.setdefault(row[0], row)
    return list(rows.values())


def variables_table(classes: Iterable[type] | None = None) -> str:
    """:func:`variables` as a Markdown table (the README's, ``docs`` and ``--help`` read it)."""
    lines = ["| variable | default | meaning | field |", "|---|---|---|---|"]
    for name, where, default, text in variables(classes):
        text = text.replace("|", "\\|")
        lines.append(f"| `{name}` | {default} | {text} | `{where}` |")
    return "\n".join(lines) + "\n"


def _shown(f: dataclasses.Field) -> str:
    """A field's default for the docs: its ``shown`` text, else the value (``unset`` for
    None, a dash for a required field)."""
    shown = _meta(f).get("shown")
    if shown is not None:
        return shown
    value = _default(f)
    if value is dataclasses.MISSING:
        return "—"
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, float):
        return f"`{value:g}`"
    return f"`{value}`"


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def _flag_type(annotation: Any, flag: str, f: dataclasses.Field) -> Callable[[str], Any]:
    def convert(raw: str) -> Any:
        try:
            return parse(annotation, raw, flag, f)
        except SettingError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    convert.__name__ = _kind(annotation)[0].__name__  # argparse's "invalid <type> value"
    return convert


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _kind(annotation: Any) -> tuple[type, tuple[Any, ...] | None]:
    """The base type of an annotation (``X | None`` -> X) and its ``Literal`` choices."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return _kind(args[0])
        return str, None
    if origin is typing.Literal:
        values = typing.get_args(annotation)
        return type(values[0]), values
    if origin in (list, tuple) or annotation in (list, tuple):
        return list, None
    if annotation in (int, float, bool, str):
        return annotation, None
    return str, None
