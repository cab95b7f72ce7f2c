"""``watercolour render`` and ``watercolour gallery`` from the command line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from watercolour.cli import main


def test_render_json_to_file(tmp_path, small_sketch):
    sketch = tmp_path / "s.js"
    sketch.write_text(small_sketch)
    out = tmp_path / "out.png"
    proc = subprocess.run(
        [sys.executable, "-m", "watercolour.cli", "render", str(sketch), "-o", str(out),
         "--seed", "3", "--json"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["ok"] and data["seed"] == 3 and "png" not in data
    assert data["paint_fraction"] > 0.02 and data["out"] == str(out)
    assert out.read_bytes().startswith(b"\x89PNG")


def test_render_missing_file_is_one_line_error(tmp_path, capsys):
    code = main(["render", str(tmp_path / "nope.js")])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith("watercolour render: error:") and "nope.js" in err
    assert len(err.splitlines()) == 1


@pytest.mark.browser
def test_render_of_a_broken_sketch_exits_1(tmp_path, capsys):
    sketch = tmp_path / "bad.js"
    sketch.write_text("function setup(){ createCanvas(32,32,WEBGL); oops(); }")
    assert main(["render", str(sketch), "--json"]) == 1
    assert "oops" in json.loads(capsys.readouterr().out)["error"]
