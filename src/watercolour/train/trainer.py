"""One GRPO program for every scale: :func:`train` runs TRL's ``GRPOTrainer`` (+ PEFT LoRA) on
the painting prompt with the watercolour reward, and leaves everything behind in ``--out``:

    OUT/run.json                 resolved configuration, reward set-up, LoRA plan, versions
    OUT/metrics.csv              one row per step (watercolour.train.metrics)
    OUT/rollouts/                every rollout as scored (JSONL + PNG), then a dataset
    OUT/checkpoint-N/            TRL checkpoints (--save-steps); --resume takes the last
    OUT/final/                   the adapter (or model) and tokenizer at the end
    OUT/upload/                  with --push-to-hub: what is uploaded at the end

With ``--push-to-hub`` the repository is kept current during the run (checkpoints as they are
saved, metrics and rollouts every ``--hub-sync-minutes``: :mod:`watercolour.train.sync`), and
``--resume OWNER/NAME`` goes on from what it holds.

Under ``accelerate launch`` (data parallel, ``recipes/accelerate/``) every process generates and
scores its own share of the rollouts; the main process alone writes ``OUT`` (the scored batches
of all processes are gathered to it for the rollout log: :func:`main_process_log`), builds a
builtin model first, and syncs or uploads.

All generations of a group share one seed (the same references); ``None`` rewards (the
environment or a scorer failed) are dropped from their group by TRL (advantage 0).

``--turns K`` (K > 1) trains episodes of K turns instead: the policy sketches, reads the
critique of its render and revises, rewarded by the episode's reward
(:mod:`watercolour.train.episodes`, TRL's ``rollout_func``; per-turn columns in metrics.csv,
one rollout-log line per turn). With the default 1 nothing of that runs. A vision policy
(Qwen3.5) sees its render in the revision turn, in generation and in the loss
(``--show-render``, on by default for one: :mod:`watercolour.train.vision`); the trainer is
then given the policy's processor, not its tokenizer.
"""

from __future__ import annotations

import copy
import functools
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

from trl import GRPOTrainer

from watercolour.errors import InputError
from watercolour.io import write_json_atomic
from watercolour.train.config import (
    DENSE_TARGET_MODULES,
    RunArguments,
    TrainArguments,
    resolved,
)
from watercolour.train.metrics import MetricsCSV
from watercolour.train.rollouts import RolloutLog
from watercolour.train.tiny import (
    BUILTIN,
    BUILTIN_PAINTER,
    BUILTIN_REVISER,
    build_tiny_qwen3,
    painter_config,
    warm_start,
)

VERSIONED = ("torch", "transformers", "trl", "peft", "accelerate", "datasets",
             "huggingface_hub", "trackio", "watercolour")


class WatercolourGRPOTrainer(GRPOTrainer):
    """GRPOTrainer that times generation (``time/generation_s``) and keeps each generation
    batch's advantages (``advantage_log``: ``(step, [advantage, ...])``). A ``rollout_func``
    that scores between turns sets ``scoring_in_generation_s``: that time is the reward
    stage's, not generation's.

    A ``rollout_func`` may return ``images`` (per rollout, the pictures its completion shows,
    in order: a vision policy's renders, :mod:`watercolour.train.episodes`): their image inputs
    go to every forward pass of the batch (the old and reference log-probabilities, and the
    loss), so turn 2's log-probabilities are conditioned on the picture the policy saw. TRL
    1.16 drops a ``rollout_func``'s images (``_generate`` sets ``images = None``) and builds
    completion images' inputs only for tools' images (``if self.tools and ...``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.advantage_log: list[tuple[int, list[float]]] = []
        self.scoring_in_generation_s = 0.0
        self.episode_images: dict[str, Any] | None = None  # the batch's, while it is scored

    def _generate_single_turn(self, prompt_ids: Any, images: Any, multimodal_fields: Any,
                              num_generations: int, *args: Any, **kwargs: Any) -> Any:
        """TRL's, with the tokenizer handed to transformers' ``generate`` when the generation
        config has stop strings (TRL 1.16 does not pass it, and ``generate`` refuses stop
        strings without one): the stop at the closing fence
        (:mod:`watercolour.train.generation`)."""
        stops = getattr(getattr(self, "generation_config", None), "stop_strings", None)
        if self.use_vllm or not stops:
            return super()._generate_single_turn(prompt_ids, images, multimodal_fields,
                                                 num_generations, *args, **kwargs)
        model = self.accelerator.unwrap_model(self.model_wrapped)
        model.generate = functools.partial(model.generate, tokenizer=self._tokenizer)
        try:
            return super()._generate_single_turn(prompt_ids, images, multimodal_fields,
                                                 num_generations, *args, **kwargs)
        finally:
            del model.generate

    def _recount_clipped(self, completion_ids: list[list[int]]) -> None:
        """TRL's ``completions/clipped_ratio`` counts every completion without EOS; a reply
        that stopped at its closing fence was not cut: recount without those, and log their
        share as ``completions/stopped_ratio``."""
        import torch

        from watercolour.train.generation import stopped_at_fence

        mode = "train" if self.model.training else "eval"
        ends = {*self.eos_token_ids, self._tokenizer.pad_token_id}
        open_ended = [i for i, ids in enumerate(completion_ids) if ids and ids[-1] not in ends]
        texts = self._tokenizer.batch_decode([completion_ids[i] for i in open_ended],
                                             skip_special_tokens=True)
        stopped = {i for i, text in zip(open_ended, texts) if stopped_at_fence(text)}
        flags = torch.tensor([[float(i in stopped), float(i in open_ended and i not in stopped)]
                              for i in range(len(completion_ids))] or [[0.0, 0.0]],
                             device=self.accelerator.device)
        shares = self.accelerator.gather(flags).mean(dim=0).tolist()
        metrics = self._metrics[mode]
        if metrics.get("completions/clipped_ratio"):
            metrics["completions/clipped_ratio"][-1] = shares[1]
        metrics["completions/stopped_ratio"].append(shares[0])

    def _generate(self, prompts: list) -> Any:
        from watercolour.train.episodes import IMAGES
        from watercolour.train.vision import image_inputs

        started = time.perf_counter()
        out = super()._generate(prompts)
        elapsed = time.perf_counter() - started - self.scoring_in_generation_s
        self.scoring_in_generation_s = 0.0
        self._metrics["train"]["time/generation_s"].append(elapsed)
        self._recount_clipped(out[1])
        images = out[5].pop(IMAGES, None)  # extra_fields: not a reward function's argument
        if images is not None:
            self.episode_images = image_inputs(images, self.processing_class.image_processor,
                                               self.accelerator.device)
        return out

    def _generate_and_score_completions(self, inputs: Any) -> Any:
        try:
            out = super()._generate_and_score_completions(inputs)
            if self.episode_images is not None:  # for the loss (TRL splits them per row)
                out.update({k: self.episode_images[k] for k in
                            ("pixel_values", "image_grid_thw", "num_images")})
        finally:
            self.episode_images = None
        self.advantage_log.append((int(self.state.global_step),
                                   [float(a) for a in out["advantages"].reshape(-1)]))
        return out

    def _get_per_token_logps_and_entropies(self, model: Any, input_ids: Any,
                                           attention_mask: Any, logits_to_keep: int,
                                           batch_size: int | None = None,
                                           compute_entropy: bool = False,
                                           compute_aux_loss: bool = False,
                                           **vision: Any) -> Any:
        """TRL's, with an episode batch's pictures (``images``, above): each chunk of rows
        gets its own images' inputs and ``mm_token_type_ids`` (none when it shows none)."""
        import torch

        from watercolour.train.vision import rows_inputs

        given = {k: v for k, v in vision.items() if v is not None}
        if given.keys() - {"pixel_values", "image_grid_thw", "num_images"}:
            episode = None  # another VLM's inputs (a dataset's images): TRL's own path
        elif "pixel_values" in given:
            episode = given  # the loss: the batch's pictures, as TRL split them
        else:
            episode = self.episode_images  # old / reference log-probabilities
        if episode is None or self._image_pad_token_id is None:
            return super()._get_per_token_logps_and_entropies(
                model, input_ids, attention_mask, logits_to_keep, batch_size=batch_size,
                compute_entropy=compute_entropy, compute_aux_loss=compute_aux_loss, **vision)
        size = batch_size or input_ids.size(0)
        parts = []
        for start in range(0, input_ids.size(0), size):
            end = min(start + size, input_ids.size(0))
            parts.append(super()._get_per_token_logps_and_entropies(
                model, input_ids[start:end], attention_mask[start:end], logits_to_keep,
                batch_size=end - start, compute_entropy=compute_entropy,
                compute_aux_loss=compute_aux_loss,
                **rows_inputs(episode, start, end, input_ids[start:end],
                              self._image_pad_token_id)))
        logps = torch.cat([p[0] for p in parts])
        entropies = torch.cat([p[1] for p in parts]) if compute_entropy else None
        aux = torch.stack([p[2] for p in parts]).mean() if compute_aux_loss else None
        return logps, entropies, aux


def versions() -> dict[str, str | None]:
    from importlib.metadata import PackageNotFoundError, version

    found: dict[str, str | None] = {"python": platform.python_version()}
    for name in VERSIONED:
        try:
            found[name] = version(name.replace("_", "-"))
        except PackageNotFoundError:
            found[name] = None
    return found


def reward_config(run: RunArguments) -> Any:
    return run.reward_config()


def reward_summary(run: RunArguments) -> str:
    config = reward_config(run)
    weights = ", ".join(f"{k} {v:.2f}" for k, v in config.mix.weights.items())
    source = ("environment " + ", ".join(run.env_url)) if run.env_url else \
        f"in process ({run.render_workers} browser{'s' if run.render_workers > 1 else ''})"
    return (f"reward: {config.mix.name} mix ({weights}); gate mode {config.gate_mode}; "
            f"{run.references} references a group, love share {run.references_schedule}; "
            f"source: {source}")


def prompt_messages(run: RunArguments) -> list[dict[str, str]]:
    from watercolour.prompt import messages, user_prompt

    if run.prompt == "short":
        return [{"role": "user", "content": user_prompt(run.subject)}]
    return messages(run.subject)


def dataset(run: RunArguments) -> Any:
    from datasets import Dataset

    row = {"prompt": prompt_messages(run), "subject": run.subject}
    return Dataset.from_list([row] * run.n_episodes)


def resolve_model(run: RunArguments, out: Path, seed: int) -> str:
    """A loadable model path or id (the builtin tiny Qwen3 is built into ``OUT``; the tiny
    painter and the Qwen3.5 miniatures come from their cache, built there the first time)."""
    from watercolour.train.builtin_models import SMOLLM2, build_smollm2
    from watercolour.train.miniature import MINIATURES, build_miniature

    if run.model_name_or_path == SMOLLM2:
        return str(build_smollm2())
    if run.model_name_or_path in (BUILTIN_PAINTER, BUILTIN_REVISER):
        return str(warm_start(painter_config(run.model_name_or_path)))
    if run.model_name_or_path in MINIATURES:
        return str(build_miniature(run.model_name_or_path))
    if run.model_name_or_path == BUILTIN:
        return str(build_tiny_qwen3(out / "builtin-tiny-qwen3", seed=seed))
    return run.model_name_or_path


def lora_config(run: RunArguments, model: str | None = None) -> Any:
    """PEFT's LoraConfig of the run (None without ``--lora``/``--use_peft``): TRL's
    ``get_peft_config`` of the run's ModelConfig fields, the vision tower excluded unless
    ``--adapt-vision`` (``model``: the loadable path or id, to see whether it has one)."""
    if not run.use_peft:
        return None
    from watercolour.train.plan import has_vision_tower
    from watercolour.train.plan import lora_config as plan_lora_config

    vision = True
    if model is not None:
        from transformers import AutoConfig

        vision = has_vision_tower(AutoConfig.from_pretrained(
            model, revision=run.model_revision))
    return plan_lora_config(run, adapt_vision=run.adapt_vision, vision_tower=vision)


def quantization_config(run: RunArguments) -> dict[str, Any]:
    """``quantization_config`` for the trainer when ``--load_in_4bit``/``--load_in_8bit`` ask
    for it (TRL's ``get_quantization_config``, as TRL's script passes it; needs
    bitsandbytes), else nothing."""
    if not (run.load_in_4bit or run.load_in_8bit):
        return {}
    from trl import get_quantization_config

    return {"quantization_config": get_quantization_config(run)}


def plan_for(run: RunArguments, training: TrainArguments) -> dict[str, Any] | None:
    """The LoRA plan (+ memory estimate) when the architecture is known here."""
    from watercolour.train.plan import describe

    if not run.use_peft:
        return None
    # an episode's completion holds its K turns (each up to max_completion_length) and the
    # environment's turns between them (a few hundred tokens, a picture's included): K turns
    return describe(run.model_name_or_path, run,
                    completion_tokens=int(training.max_completion_length or 256) * run.turns,
                    micro_batch=int(training.per_device_train_batch_size),
                    generations=int(training.num_generations or 8),
                    gradient_checkpointing=bool(training.activation_checkpointing),
                    adapt_vision=run.adapt_vision, dtype=training.load_dtype)


def episode_processing(run: RunArguments, model: str, tokenizer: Any, log: Any = print
                       ) -> tuple[Any, bool]:
    """The trainer's processing class and whether episodes show the policy its render: the
    tokenizer and False for one turn or a text policy; a vision policy's processor and True
    when ``--show-render`` is on (unset: on for a vision policy,
    :mod:`watercolour.train.vision`)."""
    if run.turns <= 1:
        return tokenizer, False
    from watercolour.train.vision import shows_render, vision_processor

    processor = vision_processor(model, run.model_revision) if run.show_render is not False \
        else None
    show = bool(shows_render(run.model_name_or_path, run.show_render,
                             None if run.show_render is False else processor is not None))
    if show:
        log(f"episodes: the revision turn shows {run.model_name_or_path} its render "
            f"({type(processor).__name__})")
    return (processor, True) if show else (tokenizer, False)


def show_render_plan(run: RunArguments) -> bool | None:
    """Whether the run's episodes would show the policy its render, as far as the dry run can
    tell without loading anything (None: one turn, or a model not known here)."""
    if run.turns <= 1:
        return None
    from watercolour.train.architectures import architecture_config
    from watercolour.train.vision import has_vision_class, shows_render

    config = architecture_config(run.model_name_or_path)
    vision = None if config is None else has_vision_class(config)
    return shows_render(run.model_name_or_path, run.show_render, vision)


def vllm_plan(run: RunArguments, training: TrainArguments, *, memory: Any = None,
              use_cpu: bool = False) -> dict[str, Any] | None:
    """With ``--use-vllm`` in colocate mode, the engine's memory checked against the GPU
    before anything loads (:func:`watercolour.train.plan.check_vllm_fit`; refused with the
    reason when it cannot start); else None."""
    if not training.use_vllm or training.vllm_mode != "colocate":
        return None
    from watercolour.train.plan import check_vllm_fit

    sequences = int(training.per_device_train_batch_size) * int(
        training.steps_per_generation or 1) * int(training.vllm_tensor_parallel_size or 1)
    return check_vllm_fit(run.model_name_or_path, training.load_dtype,
                          share=float(training.vllm_gpu_memory_utilization),
                          max_model_length=training.vllm_max_model_length,
                          sequences=sequences, sleep=bool(training.vllm_enable_sleep_mode),
                          memory=memory, use_cpu=use_cpu)


def prompts_per_step(training: TrainArguments) -> int:
    """How many prompts one step samples (each gets ``num_generations`` completions)."""
    return int(training.generation_batch_size // training.num_generations)


def dry_run(run: RunArguments, training: TrainArguments) -> dict[str, Any]:
    """What the run would do (no weights loaded, no browser started)."""
    config = reward_config(run)
    return {
        "config": resolved(run, training),
        "reward": config.resolved(),
        "reward_summary": reward_summary(run),
        "references_schedule": run.references_schedule,
        "show_render": show_render_plan(run),
        "prompts_per_step": prompts_per_step(training),
        "generations_per_step": int(training.generation_batch_size),
        "load_dtype": training.load_dtype,
        "lora_plan": plan_for(run, training),
        "vllm_plan": vllm_plan(run, training, memory=_h200()),
        "versions": versions(),
    }


def _h200() -> Any:
    """The GPU a dry run plans for, wherever it runs: one H200, all of it free."""
    from watercolour.train.plan import H200_GIB, DeviceMemory

    return DeviceMemory("H200 (planned)", H200_GIB)


def last_checkpoint(out: Path) -> Path | None:
    from transformers.trainer_utils import get_last_checkpoint

    found = get_last_checkpoint(str(out)) if out.is_dir() else None
    return Path(found) if found else None


def generation_record_of(trainer: Any, training: TrainArguments) -> dict[str, Any]:
    """The generation part of ``run.json`` for a built trainer: its backend and the kernel
    path of each layer type of its model (:func:`watercolour.train.generation.generation_record`)
    and the stop and budget it generates with."""
    from watercolour.train.generation import generation_record

    config = getattr(trainer.model, "config", None)
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    record = generation_record(getattr(config, "model_type", None), bool(training.use_vllm),
                               text)
    record["generation_kwargs"] = dict(training.generation_kwargs or {})
    return record


def main_process_log(on_scored: Any, training: TrainArguments) -> Any:
    """``on_scored`` for a run of ``training.world_size`` processes: with one, itself; with
    more, a callback every process calls with its own scored batch, which gathers all of them
    (in process order) to the main process, the only one that passes them on."""
    if training.world_size <= 1:
        return on_scored

    from accelerate.utils import gather_object

    def gathered(prompts: list[Any], completions: list[Any], evaluations: list[Any],
                 step: int, extra: list[Any] | None = None) -> None:
        batches = gather_object([(list(prompts), list(completions), list(evaluations),
                                  extra)])
        if training.process_index == 0:
            more = ((x for b in batches for x in b[3]) if extra is not None else ())
            on_scored([p for b in batches for p in b[0]], [c for b in batches for c in b[1]],
                      [e for b in batches for e in b[2]], step,
                      *([list(more)] if extra is not None else []))

    return gathered


def train(run: RunArguments, training: TrainArguments, *, rewarder: Any = None,
          renderer: Any = None, log: Any = print) -> dict[str, Any]:
    """Run GRPO as configured; return a summary (out dir, steps, rows, advantages).

    ``rewarder`` (anything with ``evaluate_group``) and ``renderer`` (a started Renderer)
    replace the ones this function would make (tests share a browser this way)."""
    from watercolour.render import Renderer
    from watercolour.train.config import wire_model_init_kwargs
    from watercolour.train.reward_source import GuardedRewarder, TrainingRewards, make_rewarder

    wire_model_init_kwargs(run, training)  # done by parse_args; again for a hand-made pair

    if training.bf16_deferred:
        raise InputError("--bf16 needs a GPU with bfloat16; this machine has none (drop "
                         "--bf16 for a CPU run)")
    per_step = prompts_per_step(training)
    if run.n_episodes < per_step:
        raise InputError(f"--n-episodes {run.n_episodes} is fewer than the {per_step} prompts "
                         "a step takes (generation_batch_size / num_generations): no step "
                         "could be trained")
    from watercolour.train.plan import check_weights_fit

    fits = check_weights_fit(run.model_name_or_path, training.load_dtype,
                             use_cpu=bool(training.use_cpu))
    if fits is not None:
        log(f"weights: {fits['params']:,} parameters in {fits['dtype']} = "
            f"{fits['weights_gib']} GiB of {fits['free_gib']} GiB free ({fits['device']})")
    engine = vllm_plan(run, training, use_cpu=bool(training.use_cpu))
    if engine is not None:
        log(f"vLLM colocated: {engine['engine_gib']} GiB for {engine['needed_gib']} GiB "
            f"needed (share {engine['share']}, at most {engine['max_share']})")
    out = Path(training.output_dir or "runs/train")
    main = training.process_index == 0  # under accelerate launch only the main process writes
    rollouts = RolloutLog(out)
    episode_metrics: tuple[str, ...] = ()
    if run.turns > 1:
        from watercolour.train.episodes import EpisodeRollout, episode_columns

        episode_metrics = episode_columns(run.turns)
    metrics = MetricsCSV(out / "metrics.csv", extra=episode_metrics)
    checkpoint = None
    if run.resume:
        from watercolour.train.config import RESUME_LOCAL

        if run.resume != RESUME_LOCAL:
            from watercolour.train.sync import pull_run

            pull_run(run.resume, out, log=log)
        checkpoint = last_checkpoint(out)
        if checkpoint is None:
            raise FileNotFoundError(f"--resume: no checkpoint in {out}")
        if main:
            step = int(checkpoint.name.rsplit("-", 1)[-1])
            dropped = rollouts.truncate(step), metrics.truncate(step)
            log(f"resuming from {checkpoint.name}: dropped {dropped[0]} rollouts and "
                f"{dropped[1]} metric rows of the steps after it")
    elif rollouts.path.exists() or last_checkpoint(out) is not None:
        raise InputError(f"{out} already holds a run: add --resume, or choose another --out")
    if training.trackio_space_id and "trackio" not in (training.report_to or []):
        raise InputError("--trackio-space-id is where trackio logs: add --report-to trackio")
    repo_id = None
    if training.push_to_hub:
        from watercolour.train.hub import hub_repo_id

        repo_id = hub_repo_id(str(training.output_dir), training.hub_model_id)
    log(reward_summary(run))
    config = reward_config(run)
    record = {"config": resolved(run, training), "reward": config.resolved(),
              "load_dtype": training.load_dtype, "weights_check": fits, "vllm_check": engine,
              "lora_plan": plan_for(run, training) if run.use_peft else None,
              "versions": versions(), "argv": sys.argv}
    if main:
        write_json_atomic(out / "run.json", record)
    estimate = (record["lora_plan"] or {}).get("memory")
    if fits is not None and estimate and estimate["total_gib"] > fits["free_gib"]:
        log(f"warning: the memory estimate of a step ({estimate['total_gib']} GiB) is more than "
            f"the {fits['free_gib']} GiB free: the weights fit, a step may not")

    with training.main_process_first(local=False, desc="building the model"):
        model = resolve_model(run, out, training.seed)  # a builtin is built (cached) once
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model, revision=run.model_revision)
    processing_class, show_render = episode_processing(run, model, tokenizer, log)
    if show_render and training.use_vllm:
        raise InputError("--use-vllm with a render in the conversation (--show-render, on by "
                         "default for a vision policy) is not supported yet: the episodes "
                         "give the picture to transformers' generate only; add "
                         "--show-render false, or drop --use-vllm")
    own_renderer = sync = None
    if rewarder is None and not run.env_url and renderer is None:
        own_renderer = renderer = Renderer(run.render_config()).start()
    try:
        if rewarder is None:
            source = make_rewarder(run.env_url, config, renderer=renderer,
                                   tokenizer=tokenizer, timeout_s=run.env_timeout_s,
                                   retries=run.env_retries)
        else:
            source = rewarder if isinstance(rewarder, GuardedRewarder) else \
                GuardedRewarder(rewarder, config)
        inner_pool = getattr(getattr(source, "inner", None), "pool", None)
        if inner_pool is not None and source.mix.needs("judge"):  # in process: checked now
            run.schedule.check_pool(inner_pool, source.config.references,
                                    training.max_steps if training.max_steps > 0 else None)
        on_scored = main_process_log(rollouts.append, training)
        episodes = None
        if run.turns > 1:  # episodes of several turns: TRL's rollout_func plays them
            episodes = EpisodeRollout(source, run.turns, run.subject, on_scored=on_scored,
                                      schedule=run.schedule, show_render=show_render)
        else:
            functions = TrainingRewards(source, on_scored=on_scored, default_subject=run.subject,
                                        schedule=run.schedule)
        args = copy.copy(training)  # not dataclasses.replace: GRPOConfig's derived fields
        args.push_to_hub = False
        if repo_id is not None:  # checkpoints as they are saved; metrics, rollouts every N min
            from watercolour.train.sync import hub_training_args, start_sync

            hub_training_args(args, repo_id)
            if main:
                sync = start_sync(repo_id, out, run.hub_sync_minutes,
                                  private=training.hub_private_repo)
        args.reward_weights = [1.0] if episodes else functions.weights()
        more = {"rollout_func": episodes} if episodes else {}
        trainer = WatercolourGRPOTrainer(
            model=model, args=args, train_dataset=dataset(run),
            processing_class=processing_class,
            reward_funcs=[episodes.reward_function()] if episodes else functions.functions(),
            peft_config=lora_config(run, model), callbacks=[metrics], **more,
            **quantization_config(run))
        record["generation"] = generation_record_of(trainer, training)
        if main:  # the backend and the kernel path each layer type took, once loaded
            write_json_atomic(out / "run.json", record)
        trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
        trainer.args.push_to_hub = False  # save_model would push OUT: the end's upload is ours
        trainer.save_model(str(out / "final"))  # the main process saves (TRL/transformers)
        if main:
            tokenizer.save_pretrained(str(out / "final"))
            rollouts.to_dataset()
    except BaseException:
        if sync is not None:  # what the run did until it failed reaches the Hub, then it fails
            try:
                sync.close()
                log("after the failure: metrics and rollouts synced to the Hub")
            except Exception as err:
                log(f"after the failure, the last sync failed too: {err!r}")
        raise
    finally:
        if own_renderer is not None:
            own_renderer.close()
    if sync is not None:
        sync.close()  # a failed last sync fails the run: its results are not all on the Hub
    summary = {"out": str(out), "global_step": int(trainer.state.global_step),
               "rollouts": len(rollouts.records()), "metrics_rows": len(metrics.rows()),
               "advantages": trainer.advantage_log, "source_failures": source.failures}
    if not main:
        return summary
    if training.push_to_hub:
        from watercolour.train.hub import build_upload_folder, push_folder

        folder = build_upload_folder(out, repo_id)
        summary["pushed"] = push_folder(folder, repo_id, private=training.hub_private_repo)
    write_json_atomic(out / "summary.json", {k: v for k, v in summary.items()
                                             if k != "advantages"})
    return summary


def print_dry_run(data: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(data, indent=2, default=str))
        return
    run = data["config"]["run"]
    t = data["config"]["training"]
    lora = run["use_peft"]
    targets = run["lora_target_modules"]
    targets = ("dense list" if targets == list(DENSE_TARGET_MODULES) else
               "PEFT's default" if targets is None else
               targets if isinstance(targets, str) else "/".join(targets))
    print(f"model {run['model_name_or_path']}; LoRA {lora} ({targets} r={run['lora_r']}"
          f"{', rsLoRA' if run.get('use_rslora') else ''}"
          f"{', DoRA' if run.get('use_dora') else ''})")
    print(f"{t['max_steps']} steps x {data['prompts_per_step']} prompt(s) x "
          f"{t['num_generations']} generations; lr {t['learning_rate']} "
          f"({t['lr_scheduler_type']}, {t['warmup_steps']} warm-up); scale_rewards "
          f"{t['scale_rewards']}; {t['max_completion_length']} completion tokens; "
          f"top-p {t['top_p']} top-k {t['top_k']}; out {t['output_dir']}")
    print(f"weights loaded in {data['load_dtype']}")
    print(data["reward_summary"])
    if run["turns"] > 1:
        shown = {True: "the critique and the render (a picture)", False: "the critique only",
                 None: "the render if it is a vision policy (known when it loads)"}
        print(f"episodes of {run['turns']} turns: the revision turn shows "
              f"{shown[data['show_render']]}")
    plan = data.get("lora_plan")
    if plan:
        m = plan["memory"]
        vision = ("no vision tower" if not plan["vision_tower"] else
                  f"vision tower adapted: {plan['vision_tower_adapted']}")
        print(f"LoRA plan ({plan['model_class']} on the meta device): "
              f"{plan['layers_adapted']}/{plan['layers_total']} "
              f"layers adapted {plan['layers_adapted_by_type']}, "
              f"{plan['trainable_params']:,} trainable of {plan['total_params']:,}; "
              f"{vision}; routed experts frozen: {plan['experts_frozen']}")
        print(f"memory estimate: {m['total_gib']} GiB of {m['gpu_gib']} ({plan['load_dtype']} "
              f"weights "
              f"{m['weights_gib']}, LoRA+AdamW {m['lora_and_optimizer_gib']}, activations "
              f"{m['activations_gib']}, logits {m['logits_gib']}, KV {m['kv_cache_gib']})")
    elif lora:
        print("LoRA plan: the architecture is not known here (no shipped config)")
