"""``watercolour gate FILE [--mode library|allowlist] [--json]``."""

from __future__ import annotations

import json

import pytest
from gates_support import FIXTURES

from watercolour import cli
from watercolour.cli import gate


@pytest.fixture
def main(monkeypatch):
    """``watercolour`` with the gate verb registered (as cli/__init__.py will)."""
    monkeypatch.setitem(cli.VERBS, "gate", gate)
    return cli.main


def test_static_rejection_needs_no_browser(main, capsys):
    code = main(["gate", str(FIXTURES / "bare_primitives.js")])
    out = capsys.readouterr().out
    assert code == 1
    assert out.startswith(f"{FIXTURES / 'bare_primitives.js'}: REJECTED: bare_primitives")
    assert "ellipse (line 10)" in out


def test_json_for_a_reply_with_no_sketch(main, capsys):
    code = main(["gate", str(FIXTURES / "no_sketch_refusal.txt"), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["violations"] == ["no_sketch"] and not data["rendered"]
    assert data["status"] == "rejected" and data["infrastructure_failure"] is False


def test_missing_file_is_one_line_error(main, capsys, tmp_path):
    assert main(["gate", str(tmp_path / "nope.js")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("watercolour gate: error:") and len(err.splitlines()) == 1


def test_bad_mode_is_a_usage_error(main):
    with pytest.raises(SystemExit) as exit_info:
        main(["gate", str(FIXTURES / "ok_setup_only.js"), "--mode", "strict"])
    assert exit_info.value.code == 2


@pytest.mark.browser
def test_json_verdict_in_both_modes(main, capsys, tmp_path):
    path = str(FIXTURES / "ok_brush_named_like_p5.js")
    out_png = tmp_path / "render.png"
    assert main(["gate", path, "--json", "-o", str(out_png)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["passed"] and data["violations"] == [] and data["mode"] == "library"
    assert data["n_shapes"] == 3 and data["paint_fraction"] > 0.05
    assert data["methods_used"]["rect"] == 1 and data["outside_allowlist"] == ["rect"]
    assert out_png.read_bytes().startswith(b"\x89PNG")
    assert main(["gate", path, "--mode", "allowlist"]) == 1
    assert "REJECTED: not_allowlisted (brush.rect (line 12))" in capsys.readouterr().out
