"""The model zoo's one table (:mod:`watercolour.models.registry`): every name in it resolves
through its own entry, an unknown builtin is refused naming the known ones, and the model
cache follows ``WATERCOLOUR_CACHE`` through the one setting that declares it."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

from watercolour import settings
from watercolour.cache import ModelCache, cache_root
from watercolour.errors import InputError
from watercolour.models.registry import (
    BUILTIN,
    BUILTINS,
    MODELS,
    TINY_PAINTER,
    TINY_QWEN3,
    architecture_config,
    cache_folder,
    lookup,
    resolve,
    resolve_policy,
)

SRC = Path(__file__).resolve().parents[1] / "src" / "watercolour"


def _split(path: str):
    module, name = path.split(":")
    return importlib.import_module(module), name


def test_every_entry_names_functions_that_exist_with_the_registry_signatures():
    for name, model in MODELS.items():
        assert model.name == name
        if model.build is not None:
            module, function = _split(model.build)
            parameters = list(inspect.signature(getattr(module, function)).parameters)
            assert parameters[:3] == ["name", "folder", "seed"], (name, parameters)
            assert model.folder, f"{name}: a built model needs its folder"
        else:
            assert not name.startswith(BUILTIN), f"{name}: a builtin needs a builder"
        if model.config is not None:
            module, function = _split(model.config)
            assert callable(getattr(module, function))
    assert list(BUILTINS) == [n for n in MODELS if n.startswith(BUILTIN)]
    assert "builtin:smollm2-135m-instruct" in BUILTINS and "builtin:tiny-painter" in BUILTINS


def test_every_registered_name_resolves_through_its_entry(tmp_path, monkeypatch):
    """Each builder stood in for (the real ones take seconds to minutes): ``resolve`` hands it
    the entry's folder (the model cache's, or the caller's for one that is not cached) and
    the seed, and returns what it built; a Hub model is transformers' to fetch."""
    monkeypatch.setenv("WATERCOLOUR_CACHE", str(tmp_path / "cache"))
    calls = []

    def stand_in(name, folder, seed=0):
        calls.append((name, Path(folder), seed))
        return Path(folder) / "built"

    for model in MODELS.values():
        if model.build is not None:
            module, function = _split(model.build)
            monkeypatch.setattr(module, function, stand_in)
    out = tmp_path / "run"
    for name, model in MODELS.items():
        resolved = resolve(name, out, seed=7)
        if model.build is None:
            assert resolved == name
            continue
        where = tmp_path / "cache" / model.folder if model.cached else out / model.folder
        assert calls[-1] == (name, where, 7) and resolved == str(where / "built")
        assert resolve_policy(name, out, seed=7).model == resolved
    assert {c[0] for c in calls} == set(BUILTINS)
    assert resolve("someone/some-model") == "someone/some-model"  # a Hub id, as it is
    assert resolve(str(tmp_path)) == str(tmp_path)  # a local folder, as it is


@pytest.mark.slow
def test_the_tiny_qwen3_really_builds_where_the_caller_asks(tmp_path, monkeypatch):
    monkeypatch.setenv("WATERCOLOUR_CACHE", str(tmp_path / "cache"))
    folder = Path(resolve(TINY_QWEN3, tmp_path / "run", seed=0))
    assert folder == tmp_path / "run" / "builtin-tiny-qwen3"
    assert (folder / "config.json").is_file() and (folder / "tokenizer.json").is_file()
    assert not (tmp_path / "cache").exists()  # not cached: a run's own


def test_architectures_are_known_without_weights_where_the_table_says():
    for name, model in MODELS.items():
        config = architecture_config(name)
        if model.config is None:
            assert config is None, name  # known once built (a trained vocabulary, a GGUF)
        else:
            assert config.model_type and (config.architectures or name == TINY_QWEN3), name
    assert architecture_config("someone/unknown-model") is None


def test_an_unknown_name_is_refused_naming_every_known_one():
    for call in (lambda: resolve("builtin:no-such-model"),
                 lambda: resolve_policy("builtin:no-such-model"),
                 lambda: architecture_config("builtin:no-such-model"),
                 lambda: lookup("someone/unknown-model")):
        with pytest.raises(InputError) as caught:
            call()
        message = str(caught.value)
        assert "no-such-model" in message or "unknown-model" in message
        assert all(name in message for name in MODELS), message


def test_the_cache_root_follows_watercolour_cache_through_its_one_setting(tmp_path,
                                                                            monkeypatch):
    monkeypatch.setenv("WATERCOLOUR_CACHE", str(tmp_path / "here"))
    assert cache_root() == tmp_path / "here"
    assert cache_root({"WATERCOLOUR_CACHE": str(tmp_path / "there")}) == tmp_path / "there"
    monkeypatch.delenv("WATERCOLOUR_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "watercolour"
    monkeypatch.setenv("WATERCOLOUR_CACHE", str(tmp_path / "here"))
    assert cache_folder(TINY_PAINTER) == tmp_path / "here" / "tiny-painter"

    # the warm start's folder is the registry's, under the same setting
    from watercolour.models.tiny import WarmStartConfig

    warm = WarmStartConfig.from_env({"WATERCOLOUR_CACHE": str(tmp_path / "w")})
    assert warm.folder("k") == tmp_path / "w" / "tiny-painter" / "k"
    assert WarmStartConfig(sketches=4).cache_dir == str(tmp_path / "here")

    # declared once (the variables' table names its one field), and named as a literal by no
    # other module: the zoo, training and the judge's cache read it through cache_root
    rows = [row for row in settings.variables() if row[0] == "WATERCOLOUR_CACHE"]
    assert [row[1] for row in rows] == ["ModelCache.cache_dir"]
    literal = re.compile(r"""["']WATERCOLOUR_CACHE["']""")
    naming = sorted(str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
                    if literal.search(p.read_text()))
    assert naming == ["cache.py"]
    assert ModelCache.from_env({"WATERCOLOUR_CACHE": "/c"}).cache_dir == "/c"
    from watercolour.rewards.judge.cache import default_judge_cache

    assert default_judge_cache({"WATERCOLOUR_CACHE": str(tmp_path / "j")}) == \
        str(tmp_path / "j" / "judge")
