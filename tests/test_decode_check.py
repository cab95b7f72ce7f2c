"""``benchmarks/decode_check.py``: the GPU check of the fast path (decode with the fallback
kernels against fla's, their outputs compared, one forward+backward). Everything around the
GPU runs here: the arguments, the plan on the meta device, the path swap, the comparison, the
decode timing loop and the result file on a Qwen3.5 miniature."""

from __future__ import annotations

import importlib
import json
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
MODULE = "transformers.models.qwen3_5.modeling_qwen3_5"


@pytest.fixture(scope="module")
def check():
    sys.path.insert(0, str(BENCH))
    try:
        import decode_check
    finally:
        sys.path.pop(0)
    return decode_check


def test_the_arguments_default_to_the_gpu_check_or_the_cpu_rehearsal(check):
    gpu = check.parse([])
    assert (gpu.contexts, gpu.batch, gpu.steps, gpu.warmup) == ((700, 2500), 8, 16, 3)
    assert gpu.keys == ["4b", "35b"] and gpu.paths == ("reference", "fla")
    assert gpu.budget_s == 420.0 and gpu.out == check.RESULTS
    tiny = check.parse(["--tiny", "--only", "35b", "--contexts", "5,9", "--paths",
                        "reference"])
    assert (tiny.contexts, tiny.batch, tiny.steps) == ((5, 9), 2, 3)
    assert tiny.keys == ["35b"] and tiny.paths == ("reference",)


def test_the_dry_run_plans_the_full_size_models_from_their_shipped_configs(check, capsys):
    assert check.main(["--dry-run"]) == 0
    planned = json.loads(capsys.readouterr().out)
    assert planned["4b"]["model_class"] == "Qwen3_5ForConditionalGeneration"
    assert planned["4b"]["total_params"] == 4_654_682_352
    assert (planned["4b"]["linear_attention_layers"], planned["4b"]["layers"]) == (24, 32)
    assert planned["35b"]["model_class"] == "Qwen3_5MoeForConditionalGeneration"
    assert planned["35b"]["total_params"] == 35_114_261_360
    assert (planned["35b"]["linear_attention_layers"], planned["35b"]["layers"]) == (30, 40)
    assert planned["35b"]["contexts"] == [700, 2500] and planned["35b"]["batch"] == 8


def test_the_comparison_of_two_logit_tensors(check):
    reference = torch.tensor([[0.0, 2.0, -1.0], [3.0, 0.5, 0.0]])
    assert check.compare(reference, reference.clone()) == {
        "max_abs_diff": 0.0, "max_abs_reference": 3.0, "top_token_agreement": 1.0}
    other = reference + torch.tensor([[0.0, 0.0, 3.5], [0.0, 0.0, 0.0]])  # row 0's top moves
    assert check.compare(reference, other.to(torch.bfloat16)) == {
        "max_abs_diff": 3.5, "max_abs_reference": 3.0, "top_token_agreement": 0.5}
    with pytest.raises(ValueError, match="shapes differ"):
        check.compare(reference, reference[:1])


def test_the_paths_swap_the_gated_delta_functions_and_put_them_back(check):
    paths = check.path_functions()
    module = importlib.import_module(MODULE)
    before = {name: getattr(module, name) for name in check.KERNELS}
    reference = paths["reference"]
    assert set(reference) == {(m, n) for m in check.MODULES for n in check.KERNELS}
    assert reference[(MODULE, "torch_chunk_gated_delta_rule")] is \
        before["torch_chunk_gated_delta_rule"].__wrapped__  # transformers' own PyTorch code
    assert ("fla" in paths) is (find_spec("fla") is not None)
    assert check._picked(before["torch_recurrent_gated_delta_rule"]) == \
        ("fla" if find_spec("fla") else "reference")
    with check.use_path(reference):
        assert module.torch_recurrent_gated_delta_rule is \
            reference[(MODULE, "torch_recurrent_gated_delta_rule")]
    assert {name: getattr(module, name) for name in check.KERNELS} == before


def test_a_decode_check_on_a_miniature_times_compares_and_trains(check):
    """Two paths on the 4B's miniature: the reference, and one whose decode-step function is
    off by a constant (a stand-in for a kernel that differs): the prefill agrees exactly, the
    decode step does not; each path's timing fed the same tokens through the cache."""
    reference = check.path_functions()["reference"]
    recurrent = (MODULE, "torch_recurrent_gated_delta_rule")

    def off(*args, **kwargs):
        out, state = reference[recurrent](*args, **kwargs)
        return out + 0.5, state

    args = check.parse(["--tiny", "--only", "4b", "--contexts", "6", "--steps", "2",
                        "--paths", "reference,off"])
    record, saves = {}, []
    check.check_model("4b", args, float("inf"), record, lambda: saves.append(1),
                      paths={"reference": reference, "off": {**reference, recurrent: off}})
    assert [d["path"] for d in record["decode"]] == ["reference", "off"]
    for timing in record["decode"]:
        assert (timing["context"], timing["batch"]) == (6, 2)
        assert timing["cache_tokens"] == 6 + 1 + 2  # prefill, warm-up, timed steps
        assert timing["decode_ms"] > 0 and timing["prefill_s"] > 0
    agreement = record["agreement"][0]
    assert agreement["prefill"]["max_abs_diff"] == 0.0
    assert agreement["decode"]["max_abs_diff"] > 0.0
    assert set(record["speedup"]) == {"off"}
    assert record["forward_backward"]["ok"] and record["forward_backward"]["lora_grads_finite"]
    assert record["forward_backward"]["path"] == "reference" and len(saves) >= 3


def test_the_rehearsal_writes_its_result_file(check, tmp_path, capsys):
    code = check.main(["--tiny", "--only", "4b", "--contexts", "5", "--steps", "1",
                       "--warmup", "0", "--no-backward", "--out", str(tmp_path)])
    assert code == 0
    [written] = tmp_path.glob("decode-check-tiny-*.json")
    data = json.loads(written.read_text())
    assert data["mode"].startswith("tiny") and "35b" not in data
    assert data["versions"]["transformers"] and "fla" in data["kernels_importable"]
    assert data["4b"]["decode"][0]["cache_tokens"] == 6
    assert "forward_backward" not in data["4b"]
    if find_spec("fla") is None:
        assert data["4b"]["skipped"] == ["fla at 5: not installed"]
    assert f"wrote {written.name}" in capsys.readouterr().out
