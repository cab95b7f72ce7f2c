"""A program's flags declared as dataclass fields (watercolour.flags): one field, one flag."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import pytest

from watercolour.flags import (
    JSON,
    OUT,
    SEED,
    add_flags,
    command,
    flag,
    parser_for,
    positional,
    switch,
)


@dataclass
class Example:
    path: str = positional(metavar="DIR", help="a folder")
    size: int = flag(type=int, default=3, help="how many")
    run_dir: Path = flag("--run", type=Path, default=Path("runs"), help="the run folder")
    params: list[str] = flag("-p", "--parameter", action="append", default=[], help="a pair")
    mode: str = flag(choices=("a", "b"), default="a", help="the mode")
    quiet: bool = switch(help="say nothing")
    json: bool = flag(like=JSON, help="print it as JSON")
    out: Path | None = flag(like=OUT, help="write here")
    seed: int | None = flag(like=SEED, default=None, help="the seed")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="example")
    add_flags(p, Example)
    return p


def test_each_field_is_one_flag_with_its_default_and_help():
    args = parser().parse_args(["here"])
    assert vars(args) == {"path": "here", "size": 3, "run_dir": Path("runs"), "params": [],
                          "mode": "a", "quiet": False, "json": False, "out": None,
                          "seed": None}
    text = parser().format_help()
    for line in ("DIR", "--size SIZE", "how many", "--run RUN_DIR", "-p PARAMS, --parameter",
                 "--mode {a,b}", "--quiet", "say nothing", "--json", "print it as JSON",
                 "--out OUT", "write here"):
        assert line in text


def test_flags_given_are_parsed_into_the_fields_names():
    args = parser().parse_args(["d", "--size", "5", "--run", "r", "-p", "x=1", "--parameter",
                                "y=2", "--mode", "b", "--quiet", "--json", "--out", "o.json"])
    assert (args.size, args.run_dir, args.params, args.mode, args.quiet, args.json,
            args.out) == (5, Path("r"), ["x=1", "y=2"], "b", True, True, Path("o.json"))


def test_a_list_default_is_not_shared_between_parses():
    first = parser().parse_args(["d", "-p", "x=1"])
    assert first.params == ["x=1"] and parser().parse_args(["d"]).params == []


def test_bad_values_are_argparse_errors(capsys):
    with pytest.raises(SystemExit) as exit_:
        parser().parse_args(["d", "--mode", "c"])
    assert exit_.value.code == 2 and "invalid choice: 'c'" in capsys.readouterr().err


def test_command_makes_a_subcommand_that_runs():
    top = argparse.ArgumentParser(prog="top")
    sub = top.add_subparsers(dest="verb", required=True)
    command(sub, "go", Example, lambda args: 7, help="go somewhere")
    args = top.parse_args(["go", "there"])
    assert args.run(args) == 7 and args.path == "there"


def test_a_shared_flag_keeps_its_names_and_type_and_takes_the_programs_help_and_default():
    args = parser().parse_args(["d", "--seed", "4"])
    assert args.seed == 4 and parser().parse_args(["d"]).seed is None
    assert "the seed" in parser().format_help()
    assert SEED.default == 0 and SEED.help is None  # the declaration itself is unchanged


def test_a_programs_whole_parser_is_its_flags():
    p = parser_for(Example, prog="bench", description="a benchmark")
    assert p.parse_args(["d", "--size", "9"]).size == 9
    assert "a benchmark" in p.format_help()
