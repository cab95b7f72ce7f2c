"""``benchmarks/render_bench.py --out`` takes a file or a folder."""

from __future__ import annotations

from benchmark_support import load_benchmark


def test_out_is_a_file_or_a_folder(tmp_path):
    output_path = load_benchmark("render_bench").output_path
    assert output_path(tmp_path, "s") == tmp_path / "render-s.json"  # an existing folder
    assert output_path(tmp_path / "new", "s") == tmp_path / "new" / "render-s.json"
    assert output_path(tmp_path / "r.json", "s") == tmp_path / "r.json"
    assert output_path(None, "s").name == "render-s.json"
    assert output_path(None, "s").parent.name == "results"
