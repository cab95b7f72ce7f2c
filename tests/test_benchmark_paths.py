"""``benchmarks/render_bench.py --out`` takes a file or a folder."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "render_bench.py"


def _bench():
    spec = importlib.util.spec_from_file_location("render_bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its flags are a dataclass, which looks its module up
    spec.loader.exec_module(module)
    return module


def test_out_is_a_file_or_a_folder(tmp_path):
    output_path = _bench().output_path
    assert output_path(tmp_path, "s") == tmp_path / "render-s.json"  # an existing folder
    assert output_path(tmp_path / "new", "s") == tmp_path / "new" / "render-s.json"
    assert output_path(tmp_path / "r.json", "s") == tmp_path / "r.json"
    assert output_path(None, "s").name == "render-s.json"
    assert output_path(None, "s").parent.name == "results"
