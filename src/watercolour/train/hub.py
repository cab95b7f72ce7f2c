"""``--push-to-hub``: one folder holding what a run publishes, then one upload.

:func:`build_upload_folder` makes ``OUT/upload/``: the adapter (or the full model) with its
tokenizer, a model card (``README.md``: base model, recipe, reward, LoRA plan, final
metrics), ``metrics.csv``, ``run.json`` (the resolved configuration and versions) and the
rollouts as a dataset (``rollouts/data/train-00000-of-00001.parquet``, renders embedded).
:func:`push_folder` uploads it to a model repository (the only step that needs the network).
"""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path
from typing import Any

from watercolour.errors import InputError

MODEL_FILES = re.compile(r"^(adapter_config\.json|adapter_model\.safetensors|config\.json|"
                         r"generation_config\.json|model.*\.safetensors(\.index\.json)?|"
                         r"tokenizer.*|special_tokens_map\.json|chat_template\.jinja|"
                         r"vocab\.json|merges\.txt)$")
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")


def hub_repo_id(output_dir: str, hub_model_id: str | None) -> str:
    """The repository to push to: ``--hub-model-id``, else ``--out`` when it reads
    ``owner/name`` (as in the published command); a clear error otherwise."""
    repo = hub_model_id or output_dir
    if not REPO_ID.match(repo or ""):
        raise InputError(f"--push-to-hub needs a repository id owner/name: give --hub-model-id "
                         f"or an --out of that form (got {repo!r})")
    return repo


def _last_metrics(metrics_csv: Path) -> dict[str, str]:
    if not metrics_csv.is_file():
        return {}
    with open(metrics_csv, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return rows[-1] if rows else {}


def model_card(record: dict[str, Any], metrics: dict[str, str], repo_id: str) -> str:
    run = record.get("config", {}).get("run", {})
    training = record.get("config", {}).get("training", {})
    reward = record.get("reward", {})
    plan = record.get("lora_plan") or {}
    shown = ("step", "reward", "reward_std", "gate_pass_rate", "paint_fraction_mean",
             "none_count", "step_time")
    table = "\n".join(f"| {k} | {metrics[k]} |" for k in shown if metrics.get(k))
    plan_line = (f"LoRA r={plan.get('r')} on `{plan.get('target_modules')}`: "
                 f"{plan.get('layers_adapted')}/{plan.get('layers_total')} decoder layers "
                 f"adapted, {plan.get('trainable_params'):,} trainable parameters, vision "
                 f"tower adapted: {plan.get('vision_tower_adapted', False)}, routed "
                 f"experts frozen: {plan.get('experts_frozen')}." if plan else
                 "Full fine-tune (no LoRA).")
    return f"""---
base_model: {run.get('model_name_or_path')}
library_name: peft
tags: [watercolour, grpo, trl, p5.brush]
---

# {repo_id}

A policy trained with GRPO (TRL) to paint *{run.get('subject')}* in watercolour by writing
p5.js + p5.brush sketches, rewarded by the watercolour environment.

- Base model: `{run.get('model_name_or_path')}`
- {plan_line}
- Steps: {training.get('max_steps')}, {training.get('num_generations')} generations a group,
  learning rate {training.get('learning_rate')} ({training.get('lr_scheduler_type')}),
  `scale_rewards={training.get('scale_rewards')}`,
  {training.get('max_completion_length')} completion tokens.
- Reward: the `{(reward.get('mix') or {}).get('name')}` mix, gate mode
  `{reward.get('gate_mode')}`, {reward.get('references')} references a group.

## Last step

| metric | value |
|---|---|
{table}

Files: the adapter, `metrics.csv` (one row per step), `run.json` (configuration and
versions), `rollouts/` (every rollout with its sketch, render and reward).
"""


def build_upload_folder(out_dir: str | Path, repo_id: str,
                        target: str | Path | None = None) -> Path:
    """Assemble ``OUT/upload`` (or ``target``) from a finished run folder."""
    from watercolour.train.rollouts import RolloutLog

    out = Path(out_dir)
    folder = Path(target) if target is not None else out / "upload"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    model_dir = out / "final"
    if not model_dir.is_dir():
        raise FileNotFoundError(f"no trained model in {model_dir}: the run did not finish")
    for item in sorted(model_dir.iterdir()):
        if item.is_file() and MODEL_FILES.match(item.name):
            shutil.copy2(item, folder / item.name)
    record = json.loads((out / "run.json").read_text(encoding="utf-8"))
    shutil.copy2(out / "run.json", folder / "run.json")
    if (out / "metrics.csv").is_file():
        shutil.copy2(out / "metrics.csv", folder / "metrics.csv")
    dataset = RolloutLog(out).to_dataset()
    data = folder / "rollouts" / "data"
    data.mkdir(parents=True)
    dataset.to_parquet(str(data / "train-00000-of-00001.parquet"))
    (folder / "README.md").write_text(model_card(record, _last_metrics(out / "metrics.csv"),
                                                 repo_id), encoding="utf-8")
    return folder


def push_folder(folder: str | Path, repo_id: str, private: bool | None = None) -> str:
    """Upload ``folder`` to the model repository ``repo_id`` (created if needed)."""
    from huggingface_hub import HfApi

    api = HfApi()
    api.create_repo(repo_id, repo_type="model", private=private, exist_ok=True)
    info = api.upload_folder(repo_id=repo_id, folder_path=str(folder), repo_type="model",
                             commit_message="watercolour GRPO run")
    return str(getattr(info, "commit_url", repo_id))
