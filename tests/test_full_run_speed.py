"""Chapter 07's measured H200 day and its step time per generation path
(``watercolour.book.chapters.full_run``): read from the GPU check's recorded JSON, projected
with the cited factors, each figure with its source; the run's hours and cost per path."""

from __future__ import annotations

import pytest

from watercolour.book.chapters import full_run
from watercolour.notebooks import measurement

RUN = {"step_s": 100.0, "generation_s": 80.0, "update_s": 20.0, "generation_share": 0.8,
       "completions_mean_length": 500.0, "peak_gib": 10.0, "estimate_gib": 12.0}
CHECK = {"4b": RUN, "35b": {**RUN, "generation_s": 100.0, "update_s": 10.0},
         "revise": {"error": "OOM"}, "fast_kernels": {"flash-linear-attention": False}}


def test_the_recorded_check_ships_with_the_book_and_reads_as_measured():
    check = measurement(full_run.GPU_CHECK)
    rows = {r["run"]: r for r in full_run.measured_day(check)}
    assert set(rows) == {"smoke-4b", "full-35b", "revise-4b, 2 turns"}
    big = rows["full-35b"]
    assert (big["peak_gib"], big["plan_gib"], big["step_s"]) == (66.74, 68.74, 104.74)
    assert big["generation_share"] == 0.877 and big["decode_ms"] == 162.8  # 91.81 s / 564
    assert rows["smoke-4b"]["decode_ms"] == 136.1
    assert full_run.kernel_path(check).startswith("the PyTorch fallback")
    table = full_run.measured_table(list(rows.values())).splitlines()
    assert table[0] == "| run | peak of plan (GiB) | step (s) | generation | decode step (ms) |"
    assert table[3] == "| full-35b | 66.7 of 68.7 | 105 | 88% | 163 |"


def test_a_run_that_failed_is_left_out_and_the_kernels_are_named():
    assert [r["run"] for r in full_run.measured_day(CHECK)] == ["smoke-4b", "full-35b"]
    assert full_run.kernel_path({"fast_kernels": {"flash-linear-attention": True,
                                                  "causal-conv1d": False}}) == \
        "fast kernels: flash-linear-attention"


def test_the_step_time_per_path():
    run = full_run.measured_day(CHECK)[0]  # decode 160 ms, update 20 s over 700 + 500 tokens
    fallback = full_run.step_time(run, "fallback", reply_tokens=1000, prompt_tokens=700)
    assert fallback == pytest.approx(160 + 20 * 1700 / 1200)
    fla = full_run.step_time(run, "fla", reply_tokens=1000, prompt_tokens=700)
    assert fla == pytest.approx(160 / 1.7 + 20 * 1700 / 1200 / 3)
    measured = full_run.step_time(run, "fla", reply_tokens=1000, prompt_tokens=700,
                                  fla_decode=4.0)
    assert measured == pytest.approx(40 + 20 * 1700 / 1200 / 3)
    vllm = full_run.step_time(run, "vllm", reply_tokens=1000, prompt_tokens=700)
    assert vllm == pytest.approx(9.87 + 20 * 1700 / 1200 / 3 * 1.3)
    with pytest.raises(ValueError, match="unknown path"):
        full_run.step_time(run, "tpu")


def test_the_paths_of_the_recorded_check_each_with_its_source():
    paths = full_run.step_paths(measurement(full_run.GPU_CHECK))
    assert [r["kind"] for r in paths] == ["measured"] + ["projected"] * 3
    assert paths[0]["path"] == "measured: fallback, ~570-token replies"
    assert (paths[0]["4b"], paths[0]["35b"]) == (94.17, 104.74)
    assert paths[0]["source"] == full_run.GPU_CHECK
    assert (paths[1]["4b"], paths[1]["35b"]) == (305.3, 353.2)  # the GPU-speed notes: ~305, ~354
    assert (paths[2]["4b"], paths[2]["35b"]) == (171.1, 200.7)  # ~171, ~201
    assert "openthai-systemone#2" in paths[2]["source"]
    assert "vllm-project/vllm#36795" in paths[3]["source"]
    table = full_run.paths_table(paths)
    assert "| measured: fallback, ~570-token replies [1] | 94 | 105 |" in table
    assert "\n\nSources:\n\n1. train-gpu-20261204-170050.json\n" in table


def test_a_measured_fla_speedup_replaces_the_cited_one_only_when_the_outputs_agree():
    decode = {"4b": {"speedup": {"fla": {"2500": 2.5}}, "agreement": [
                  {"path": "fla", "context": 2500, "decode": {"top_token_agreement": 1.0}}]},
              "35b": {"speedup": {"fla": {"2500": 2.0}}, "agreement": [
                  {"path": "fla", "context": 2500, "decode": {"top_token_agreement": 0.5}}]}}
    assert full_run.measured_decode_speedup(decode, "4b") == 2.5
    assert full_run.measured_decode_speedup(decode, "35b") is None  # outputs disagree
    assert full_run.measured_decode_speedup(None, "4b") is None
    decode["35b"]["agreement"][0]["decode"]["top_token_agreement"] = 1.0
    check = measurement(full_run.GPU_CHECK)
    paths = full_run.step_paths(check, decode)
    assert paths[2]["source"].startswith("decode: this project's decode check")
    assert paths[2]["4b"] < full_run.step_paths(check)[2]["4b"]


def test_the_run_hours_and_cost_per_path():
    paths = [{"kind": "measured", "path": "m", "4b": 1, "35b": 1},
             {"kind": "projected", "path": "projected: fast", "4b": 1.0, "35b": 357.0}]
    assert full_run.run_costs(paths, 100, rendering_s=3.0, usd_per_hour=(4.0, 6.0)) == [
        {"path": "fast", "step_s": 360.0, "hours": 10.0, "usd": [40, 60]}]
    table = full_run.costs_table(full_run.run_costs(paths, 100, 3.0, (4.0, 6.0)))
    assert table.splitlines()[-1] == "| fast | 360 | 10.0 | 40-60 |"
