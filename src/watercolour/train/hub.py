"""``--push-to-hub``: one folder holding what a run publishes, then one upload.

:func:`build_upload_folder` makes ``OUT/upload/``: the adapter (or the full model) with its
tokenizer, a model card (``README.md``, built with ``huggingface_hub``'s ``ModelCard``: base
model, library, recipe, reward, LoRA plan, final metrics, curves, links), ``metrics.csv``,
``run.json`` (the resolved configuration and versions), ``curves/`` and the rollouts as a
dataset (``rollouts/``: ``data/train-00000-of-00001.parquet``, renders embedded, and its own
card). :func:`push_folder` uploads the folder to a model repository and ``rollouts/`` to a
dataset repository of its own (the only step that needs the network).
"""

from __future__ import annotations

import csv
import json
import re
import shutil
from collections.abc import Sequence
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


BASE_MODELS = {"builtin:smollm2-135m-instruct": "HuggingFaceTB/SmolLM2-135M-Instruct"}
"""Builtin policies converted from a published model: the card names the published one."""


def _hub_id(name: str | None) -> str | None:
    """``name`` when it reads as a Hub id (``owner/name``, not a local folder), else None."""
    if not name or not REPO_ID.match(name) or Path(name).exists():
        return None
    return name


def base_model_id(name: str | None) -> str | None:
    """The Hub id of the weights a run started from: the published model of a builtin
    converted from one, the id itself, else None (a random miniature, a local folder)."""
    return BASE_MODELS.get(name or "") or _hub_id(name)


def rollouts_repo_id(repo_id: str) -> str:
    """The dataset repository that holds a run's rollouts: ``OWNER/NAME-rollouts``."""
    return f"{repo_id}-rollouts"


def model_card(record: dict[str, Any], metrics: dict[str, str], repo_id: str,
               curves: Sequence[str] = ()) -> str:
    """The run's ``README.md``, built with ``huggingface_hub``'s ``ModelCard``: metadata the
    Hub reads (base model, library, datasets: the pool when it is on the Hub and the rollouts'
    repository), the recipe, the reward, the LoRA plan, the last step and the ``curves``
    (paths of PNGs in the folder)."""
    from huggingface_hub import ModelCard, ModelCardData

    run = record.get("config", {}).get("run", {})
    training = record.get("config", {}).get("training", {})
    reward = record.get("reward", {})
    plan = record.get("lora_plan") or {}
    lora = bool(run.get("use_peft", run.get("lora")))  # TRL's ModelConfig; "lora": older runs
    base = base_model_id(run.get("model_name_or_path"))
    datasets = [d for d in (_hub_id(run.get("pool")), rollouts_repo_id(repo_id)) if d]
    data = ModelCardData(base_model=base, library_name="peft" if lora else "transformers",
                         datasets=datasets, pipeline_tag="text-generation",
                         tags=["watercolour", "grpo", "trl", "p5.brush"]
                         + (["lora"] if lora else []))
    shown = ("step", "reward", "reward_std", "gate_pass_rate", "paint_fraction_mean",
             "none_count", "step_time")
    table = "\n".join(f"| {k} | {metrics[k]} |" for k in shown if metrics.get(k))
    if plan:
        trained = (f"LoRA r={plan.get('r')} on `{plan.get('target_modules')}`: "
                   f"{plan.get('layers_adapted')}/{plan.get('layers_total')} decoder layers "
                   f"adapted, {plan.get('trainable_params'):,} trainable parameters, vision "
                   f"tower adapted: {plan.get('vision_tower_adapted', False)}, routed "
                   f"experts frozen: {plan.get('experts_frozen')}.")
    else:
        targets = run.get("lora_target_modules")
        trained = (f"LoRA r={run.get('lora_r')}"
                   + (f" on `{targets}`." if targets else ".") if lora
                   else "Full fine-tune (no LoRA).")
    started = (f"`{base}`" if base else f"`{run.get('model_name_or_path')}` (not on the Hub)")
    space = training.get("trackio_space_id")
    links = [f"- Rollouts (image, sketch, reward, components, step, group): "
             f"[{rollouts_repo_id(repo_id)}](https://huggingface.co/datasets/"
             f"{rollouts_repo_id(repo_id)})"]
    if _hub_id(run.get("pool")):
        links.append(f"- Reference pool: [{run['pool']}](https://huggingface.co/datasets/"
                     f"{run['pool']})")
    if space:
        links.append(f"- Training dashboard (trackio): "
                     f"[{space}](https://huggingface.co/spaces/{space})")
    figures = "\n\n".join(f"![{Path(c).stem}]({c})" for c in curves)
    generation = record.get("generation") or {}
    linear = ((generation.get("kernels") or {}).get("linear_attention") or {})
    generated = (f"- Generation: {generation.get('backend')}"
                 + ("; linear-attention kernels: " + ", ".join(
                     f"{k} {v}" for k, v in linear.items()) if linear else "")
                 + ".\n" if generation else "")
    content = f"""---
{data.to_yaml()}
---

# {repo_id}

A policy trained with GRPO (TRL) to paint *{run.get('subject')}* in watercolour by writing
p5.js + p5.brush sketches, rewarded by the watercolour environment.

## Recipe

- Base model: {started}
- {trained}
- Steps: {training.get('max_steps')}, {training.get('num_generations')} generations a group,
  learning rate {training.get('learning_rate')} ({training.get('lr_scheduler_type')}),
  `scale_rewards={training.get('scale_rewards')}`,
  {training.get('max_completion_length')} completion tokens; the whole configuration is in
  `run.json`.
- Reward: the `{(reward.get('mix') or {}).get('name')}` mix, gate mode
  `{reward.get('gate_mode')}`, {reward.get('references')} references a group.
{generated}
{chr(10).join(links)}

## Last step

| metric | value |
|---|---|
{table}

{figures}

Files: the {'adapter' if lora else 'model'}, `metrics.csv` (one row per step), `run.json`
(configuration and versions), `curves/` (the curves above), `rollouts/` (every rollout with
its sketch, render and reward, also published as the dataset above).
"""
    return str(ModelCard(content))


def rollouts_card(repo_id: str) -> str:
    """The rollouts dataset's ``README.md``: one parquet split the Hub's viewer shows."""
    return f"""---
configs:
- config_name: default
  data_files:
  - split: train
    path: data/*.parquet
tags: [watercolour, grpo, p5.brush]
---

# {rollouts_repo_id(repo_id)}

Every rollout of the GRPO run [{repo_id}](https://huggingface.co/{repo_id}): the render
(`image`), the sketch, the reward and its components (`*_score`), the gate's status and
violations, the step, the group and the references it was judged against.
"""


def _write_curves(metrics_csv: Path, folder: Path) -> list[str]:
    """The run's curves as PNGs in ``folder/curves`` (none without matplotlib or rows)."""
    try:
        from watercolour.analysis.curves import read_curve
        from watercolour.analysis.plots import write_plots
    except ImportError:  # a training job without the book's extra
        return []
    try:
        curve = read_curve(metrics_csv)
    except (FileNotFoundError, ValueError):
        return []
    written = write_plots(curve, folder / "curves", window=max(1, min(10, len(curve) // 3)))
    return [f"curves/{Path(p).name}" for p in written]


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
    (folder / "rollouts" / "README.md").write_text(rollouts_card(repo_id), encoding="utf-8")
    curves = _write_curves(out / "metrics.csv", folder)
    (folder / "README.md").write_text(model_card(record, _last_metrics(out / "metrics.csv"),
                                                 repo_id, curves), encoding="utf-8")
    return folder


def push_folder(folder: str | Path, repo_id: str, private: bool | None = None,
                api: Any = None) -> str:
    """Upload ``folder`` to the model repository ``repo_id`` and its ``rollouts/`` to the
    dataset repository :func:`rollouts_repo_id` (both created if needed)."""
    from huggingface_hub import HfApi

    api = api if api is not None else HfApi()
    rollouts = Path(folder) / "rollouts"
    if rollouts.is_dir():
        dataset = rollouts_repo_id(repo_id)
        api.create_repo(dataset, repo_type="dataset", private=private, exist_ok=True)
        api.upload_folder(repo_id=dataset, folder_path=str(rollouts), repo_type="dataset",
                          commit_message="watercolour GRPO run: rollouts")
    api.create_repo(repo_id, repo_type="model", private=private, exist_ok=True)
    info = api.upload_folder(repo_id=repo_id, folder_path=str(folder), repo_type="model",
                             commit_message="watercolour GRPO run")
    return str(getattr(info, "commit_url", repo_id))
