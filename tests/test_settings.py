"""The one settings reader: fields declare default, variable and help; the environment, the
flags and the docs are read from them."""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pytest

from watercolour import settings
from watercolour.cli import build_parser
from watercolour.gates import GateConfig
from watercolour.pool.build import BuildConfig
from watercolour.render import RenderConfig
from watercolour.rewards import RewardConfig
from watercolour.settings import SettingError, setting


@dataclass
class Example:
    count: int = setting(3, env="EX_COUNT", positive=True, help="how many")
    ratio: float = setting(0.5, env="EX_RATIO", help="a share")
    name: str | None = setting(None, env="EX_NAME", help="a name")
    colour: Literal["red", "blue"] = setting("red", env="EX_COLOUR", help="a colour")
    loud: bool = setting(False, env="EX_LOUD", help="shout")
    tags: list[str] | None = setting(None, env="EX_TAGS", help="a tag")
    total: int = setting(0, reader=lambda env: len(env) or None, help="variables seen")
    fixed: int = 7


def test_defaults_then_variables_then_overrides():
    assert settings.from_env(Example, {}) == Example()
    env = {"EX_COUNT": "5", "EX_RATIO": " 0.25 ", "EX_NAME": "", "EX_COLOUR": "blue",
           "EX_LOUD": "yes", "EX_TAGS": "a, b,"}
    got = settings.from_env(Example, env, ratio=0.75, name=None)
    assert (got.count, got.ratio, got.name, got.colour, got.loud, got.tags, got.total) == \
        (5, 0.75, None, "blue", True, ["a", "b"], 6)
    assert settings.env_values(Example, {"EX_RATIO": "1"}) == {"ratio": 1.0, "total": 1}


@pytest.mark.parametrize("env, message", [
    ({"EX_COUNT": "three"}, "EX_COUNT must be an integer, got 'three'"),
    ({"EX_COUNT": "0"}, "EX_COUNT must be positive"),
    ({"EX_RATIO": "inf"}, "EX_RATIO must be a finite number"),
    ({"EX_RATIO": "half"}, "EX_RATIO must be a number"),
    ({"EX_COLOUR": "green"}, "EX_COLOUR must be one of red, blue"),
    ({"EX_LOUD": "maybe"}, "EX_LOUD must be true or false"),
])
def test_bad_text_is_one_error_naming_the_variable(env, message):
    with pytest.raises(SettingError, match=message):
        settings.from_env(Example, env)


class ExampleError(SettingError):
    """An error class of the configuration's own."""


@dataclass
class Outer:
    inner: Example = setting(default_factory=Example,
                             reader=lambda env: settings.from_env(Example, env))
    kept: int = setting(0, env="OUT_KEPT", minimum=0, help="0: none")


def test_every_mistake_is_reported_at_once_one_line_each():
    env = {"EX_COUNT": "three", "EX_LOUD": "maybe", "EX_RATIO": "0.2", "OUT_KEPT": "-1"}
    with pytest.raises(ExampleError) as err:
        settings.env_values(Outer, env, error=ExampleError)
    lines = str(err.value).splitlines()
    assert lines == ["EX_COUNT must be an integer, got 'three'",
                     "EX_LOUD must be true or false, got 'maybe'",
                     "OUT_KEPT must be at least 0, got '-1'"]
    with pytest.raises(SettingError, match=r"^EX_COUNT must be an integer, got 'three'$"):
        settings.from_env(Outer, {"EX_COUNT": "three"})  # one mistake: raised as it is
    got = settings.from_env(Outer, {"EX_RATIO": "0.2", "OUT_KEPT": "0"})
    assert (got.inner.ratio, got.kept) == (0.2, 0)


def test_check_applies_the_declared_rules_to_an_instance():
    settings.check(Outer(kept=0))
    with pytest.raises(SettingError) as err:
        settings.check(Example(count=0, colour="green"))
    assert str(err.value).splitlines() == ["count must be positive, got 0",
                                           "colour must be one of red, blue, got 'green'"]
    with pytest.raises(SettingError, match="kept must be at least 0, got -2"):
        settings.check(Outer(kept=-2))


def test_flags_come_from_the_fields():
    parser = argparse.ArgumentParser()
    settings.add_arguments(parser, Example, names={"count": "-n"}, exclude=("fixed",))
    text = parser.format_help()
    assert "-n N" in text and "how many (default 3)" in text and "env EX_COUNT" in text
    assert "--colour {red,blue}" in text and "--loud, --no-loud" in text
    assert "--fixed" not in text and "--total" not in text  # excluded; read from env only
    args = parser.parse_args(["-n", "4", "--tags", "x", "--tags", "y", "--loud"])
    got = settings.from_arguments(Example, args, {"EX_RATIO": "0.1", "EX_COUNT": "9"})
    assert (got.count, got.ratio, got.tags, got.loud) == (4, 0.1, ["x", "y"], True)
    with pytest.raises(SystemExit):
        parser.parse_args(["-n", "0"])


def test_describe_lists_every_field():
    rows = {name: (env, default) for name, env, default, _ in settings.describe(RenderConfig)}
    assert rows["workers"] == ("WATERCOLOUR_RENDER_WORKERS", 1)
    assert rows["deadline_s"] == ("WATERCOLOUR_RENDER_DEADLINE", 30.0)
    documented = {env for _, env, _, _ in settings.describe(RewardConfig) if env}
    assert {"WATERCOLOUR_POOL", "WATERCOLOUR_JUDGE_TIMEOUT", "WATERCOLOUR_REWARD_SEED"} \
        <= documented


def test_the_configs_read_their_variables():
    assert RenderConfig.from_env({"WATERCOLOUR_RENDER_WORKERS": "2"}).workers == 2
    with pytest.raises(ValueError, match="WATERCOLOUR_GL must be one of"):
        RenderConfig.from_env({"WATERCOLOUR_GL": "opengl"})
    assert GateConfig.from_env({"WATERCOLOUR_GATE_MODE": "allowlist"}).mode == "allowlist"
    assert RewardConfig.from_env({"WATERCOLOUR_GATE_MODE": "allowlist"}).gate_mode == \
        "allowlist"


def test_pool_build_flags_are_build_configs_fields():
    args = build_parser().parse_args(["pool", "build", "--out", "o", "--workers", "2",
                                      "--subject", "a lotus"])
    got = settings.from_arguments(BuildConfig, args, progress=not args.quiet)
    assert got == BuildConfig(out="o", render_workers=2, subjects=["a lotus"])
    defaults = build_parser().parse_args(["pool", "build", "--out", "o"])
    assert settings.from_arguments(BuildConfig, defaults) == BuildConfig(out="o")


def test_settings_fields_work_with_hf_argument_parser():
    transformers = pytest.importorskip("transformers")
    parser = transformers.HfArgumentParser(Example)
    (got,) = parser.parse_args_into_dataclasses(["--count", "4", "--colour", "blue"])
    assert (got.count, got.colour, got.ratio) == (4, "blue", 0.5)
    assert "how many" in parser.format_help()


@dataclass
class HfStyle:
    steps: int = field(default=10, metadata={"help": "optimiser steps"})


def test_plain_fields_with_help_get_flags_too():
    parser = argparse.ArgumentParser()
    settings.add_arguments(parser, HfStyle)
    assert "optimiser steps (default 10)" in parser.format_help()
    assert settings.from_arguments(HfStyle, parser.parse_args(["--steps", "3"])).steps == 3
    assert settings.env_values(HfStyle, {"STEPS": "5"}) == {}  # no variable declared


@dataclass
class Flags:
    """A program's flags borrowing two of Example's fields (as ``watercolour train`` does)."""

    count: int | None = settings.borrow(Example, "count")
    colour: str | None = settings.borrow(Example, "colour", "paint colour")
    other: int = 1


def test_borrowed_flags_are_the_variable_else_the_default_when_unset():
    flags = Flags()
    settings.fill(flags, {"EX_COUNT": "5"})
    assert (flags.count, flags.colour) == (5, "red")
    flags = Flags(count=2, colour="blue")
    settings.fill(flags, {"EX_COUNT": "5", "EX_COLOUR": "red"})  # given: the flag wins
    assert (flags.count, flags.colour) == (2, "blue")
    assert "EX_COUNT" in Flags.__dataclass_fields__["count"].metadata["help"]
    assert Flags.__dataclass_fields__["colour"].metadata["help"] == \
        "paint colour (unset: EX_COLOUR, else red)."


def test_borrowed_flags_are_checked_by_the_fields_rules_all_at_once():
    with pytest.raises(SettingError) as err:
        settings.fill(Flags(count=0, colour="green"), {})
    assert str(err.value).splitlines() == ["--count must be positive, got 0",
                                           "--colour must be one of red, blue, got 'green'"]
    with pytest.raises(SettingError, match=r"^EX_COUNT must be an integer, got 'x'$"):
        settings.fill(Flags(), {"EX_COUNT": "x"})


README = Path(__file__).resolve().parents[1] / "README.md"
BEGIN, END = "<!-- variables table:", "<!-- end of the variables table -->"


def test_the_readme_shows_the_generated_variables_table():
    text = README.read_text(encoding="utf-8")
    start = text.index("\n", text.index(BEGIN)) + 1
    assert text[start:text.index(END)] == settings.variables_table(), \
        "regenerate the README's table: watercolour.settings.variables_table()"


def test_every_variable_the_package_reads_is_in_the_table():
    source = Path(settings.__file__).parent
    read = set()
    for path in source.rglob("*"):
        if path.suffix in (".py", ".sh", ".yaml") or path.name == "Dockerfile":
            read |= set(re.findall(r"WATERCOLOUR_[A-Z0-9_]*[A-Z0-9]", path.read_text("utf-8")))
    documented = {name for name, *_ in settings.variables()}
    assert len(read) > 30 and read <= documented, sorted(read - documented)
    assert all(where and text for _, where, _, text in settings.variables())
