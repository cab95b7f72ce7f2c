"""What a run publishes, built offline: the model card (``huggingface_hub``'s ``ModelCard``
metadata the Hub reads), the curves, the rollouts as a dataset of their own that
``datasets`` loads with images, and the two repositories ``push_folder`` commits to (a fake Hub
on 127.0.0.1)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from hub_support import FakeHub
from PIL import Image

from watercolour.train.hub import build_upload_folder, push_folder


def _png(colour: tuple[int, int, int]) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (32, 32), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def _finished_run(out: Path, model: str, lora: bool, pool: str | None,
                  space: str | None) -> None:
    (out / "final").mkdir(parents=True)
    weights = "adapter_model.safetensors" if lora else "model.safetensors"
    (out / "final" / weights).write_bytes(b"weights")
    (out / "final" / "optimizer.pt").write_bytes(b"not published")
    run = {"model_name_or_path": model, "use_peft": lora, "lora_r": 16, "pool": pool,
           "lora_target_modules": "all-linear", "subject": "a peach hibiscus"}
    training = {"max_steps": 3, "num_generations": 2, "learning_rate": 1e-5,
                "lr_scheduler_type": "constant", "scale_rewards": "group",
                "max_completion_length": 512, "trackio_space_id": space}
    (out / "run.json").write_text(json.dumps({
        "config": {"run": run, "training": training},
        "reward": {"mix": {"name": "judge-led"}, "gate_mode": "allowlist", "references": 4}}))
    with open(out / "metrics.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["step", "reward", "gate_pass_rate", "step_time"])
        for step in range(3):
            writer.writerow([step, 0.2 + 0.1 * step, 0.5, 30.0])
    rollouts = out / "rollouts"
    (rollouts / "png").mkdir(parents=True)
    lines = []
    for index, colour in enumerate(((200, 80, 60), (90, 120, 200))):
        (rollouts / "png" / f"r{index}.png").write_bytes(_png(colour))
        lines.append(json.dumps({
            "step": 0, "group": 0, "index": index, "seed": 7, "subject": "a peach hibiscus",
            "prompt": "Paint", "completion": "```js\n...\n```", "sketch": "brush.circle()",
            "png": f"png/r{index}.png", "reward": 0.4 + index / 10, "status": "ok",
            "violations": [], "components": {"gate": 1.0, "length": 0.2, "judge": 0.5,
                                             "hps": 0.6},
            "paint_fraction": 0.3, "n_shapes": 12, "references": ["p001"], "tiers": ["love"],
            "unavailable": None, "breakdown": "{}"}))
    (rollouts / "rollouts.jsonl").write_text("\n".join(lines) + "\n")


def test_a_lora_runs_card_names_its_published_base_pool_rollouts_and_dashboard(tmp_path):
    from huggingface_hub import ModelCard

    out = tmp_path / "run"
    _finished_run(out, "builtin:smollm2-135m-instruct", True, "someone/my-pool", "me/dash")
    folder = build_upload_folder(out, "me/painter")
    assert not (folder / "optimizer.pt").exists()
    card = ModelCard.load(folder / "README.md")
    assert card.data.base_model == "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert card.data.library_name == "peft" and "lora" in card.data.tags
    assert card.data.datasets == ["someone/my-pool", "me/painter-rollouts"]
    assert "https://huggingface.co/spaces/me/dash" in card.text
    assert "https://huggingface.co/datasets/me/painter-rollouts" in card.text
    pytest.importorskip("matplotlib")
    assert (folder / "curves" / "reward.png").is_file() and "(curves/reward.png)" in card.text


def test_a_full_fine_tune_from_a_local_folder_claims_no_base(tmp_path):
    from huggingface_hub import ModelCard

    local = tmp_path / "my-model"
    local.mkdir()
    out = tmp_path / "run"
    _finished_run(out, str(local), False, str(tmp_path / "pool"), None)
    card = ModelCard.load(build_upload_folder(out, "me/full") / "README.md")
    assert card.data.library_name == "transformers" and card.data.base_model is None
    assert card.data.datasets == ["me/full-rollouts"]  # a local pool is not on the Hub
    assert "Full fine-tune" in card.text and "spaces/" not in card.text


def test_a_run_recorded_before_trls_model_config_still_reads_as_lora(tmp_path):
    """run.json of older runs says "lora" (ours) where newer ones say "use_peft" (TRL's)."""
    from huggingface_hub import ModelCard

    out = tmp_path / "run"
    _finished_run(out, "Qwen/Qwen3.5-4B", True, None, None)
    record = json.loads((out / "run.json").read_text())
    run = record["config"]["run"]
    run["lora"] = run.pop("use_peft")
    del run["lora_target_modules"]
    (out / "run.json").write_text(json.dumps(record))
    card = ModelCard.load(build_upload_folder(out, "me/old") / "README.md")
    assert card.data.library_name == "peft" and "LoRA r=16." in card.text


def test_the_rollouts_load_as_a_dataset_with_images_and_go_to_their_own_repo(tmp_path):
    from datasets import load_dataset

    out = tmp_path / "run"
    _finished_run(out, "Qwen/Qwen3.5-4B", True, None, None)
    folder = build_upload_folder(out, "me/painter")
    rows = load_dataset(str(folder / "rollouts"), split="train")
    assert len(rows) == 2 and rows[1]["reward"] == pytest.approx(0.5)
    assert rows[0]["image"].size == (32, 32) and rows[0]["image"].getpixel((3, 3)) == (200, 80, 60)
    assert rows[0]["judge_score"] == 0.5 and rows[0]["sketch"] == "brush.circle()"

    hub = FakeHub()
    try:
        push_folder(folder, "me/painter", api=hub.api())
    finally:
        hub.server.shutdown()
    by_repo = {c["repo"]: set(c["files"]) for c in hub.commits}
    assert {c["repo"]: c["type"] for c in hub.commits} == {
        "me/painter-rollouts": "datasets", "me/painter": "models"}
    assert sorted(v["repoType"] for v in hub.validated) == ["dataset", "model"]
    assert {"README.md", "data/train-00000-of-00001.parquet"} <= by_repo["me/painter-rollouts"]
    assert {"README.md", "adapter_model.safetensors", "run.json", "metrics.csv",
            "rollouts/data/train-00000-of-00001.parquet"} <= by_repo["me/painter"]
