"""One behaviour for bad input across verbs: domain errors are one line and exit 2, bugs keep
their traceback; ``gate`` honours ``WATERCOLOUR_GATE_MODE`` like ``score``."""

from __future__ import annotations

import pytest

from watercolour.cli import main
from watercolour.cli import render as render_verb
from watercolour.gates import Violation
from watercolour.gates.fixtures import fixture_path


@pytest.mark.parametrize("verb", ["render", "gate", "score"])
def test_a_file_that_is_not_utf8_is_the_same_one_line_error(verb, tmp_path, capsys):
    path = tmp_path / "latin1.js"
    path.write_bytes("// caf\u00e9\nfunction setup() {}\n".encode("latin-1"))
    assert main([verb, str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"watercolour {verb}: error: {path} is not UTF-8 text (byte 0xe9 at offset "
                   f"6): a {'sketch' if verb == 'render' else 'reply'} must be a UTF-8 text file")


@pytest.mark.parametrize("verb", ["render", "gate", "score"])
def test_a_missing_file_is_the_same_one_line_error(verb, tmp_path, capsys):
    assert main([verb, str(tmp_path / "nope.js")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"watercolour {verb}: error: ") and err.endswith("not found: "
                                                                          f"{tmp_path}/nope.js")


def test_a_bad_variable_is_one_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("WATERCOLOUR_GATE_MODE", "strict")
    assert main(["gate", str(fixture_path("ok_setup_only.js"))]) == 2
    assert capsys.readouterr().err.strip() == ("watercolour gate: error: WATERCOLOUR_GATE_MODE "
                                               "must be one of library, allowlist, got 'strict'")


def test_a_bug_keeps_its_traceback(monkeypatch, tmp_path):
    def broken(args):
        raise ValueError("a bug, not bad input")

    monkeypatch.setattr(render_verb, "run", broken)
    with pytest.raises(ValueError, match="a bug"):
        main(["render", str(tmp_path / "x.js")])


def test_gate_mode_comes_from_the_environment_unless_a_flag_says(monkeypatch, capsys):
    sketch = str(fixture_path("ok_brush_named_like_p5.js"))  # calls brush.rect: off the allowlist
    monkeypatch.setenv("WATERCOLOUR_GATE_MODE", "allowlist")
    assert main(["gate", sketch, "--json"]) == 1  # decided statically: no browser needed
    assert Violation.NOT_ALLOWLISTED.value in capsys.readouterr().out
    monkeypatch.setenv("WATERCOLOUR_GATE_MODE", "library")
    assert main(["gate", sketch, "--mode", "allowlist", "--json"]) == 1
    assert '"mode": "allowlist"' in capsys.readouterr().out
