"""``watercolour sft``: a supervised warm start on a rated pool with TRL's ``SFTTrainer``, before
GRPO (``watercolour train --model OUT/final``).

The examples (``--source pool``) are the pool's sketches of the chosen tiers, or
(``--source compact``) generated sketches in the tiny painter's compact helper style, a third
the length in a small model's tokenizer, as *prompt-completion conversational* rows
(:mod:`watercolour.train.sft_data`): the prompt is exactly what GRPO
training sends for the row's subject, the completion the fenced sketch. With such rows TRL
1.16's ``SFTTrainer`` sets ``completion_only_loss`` itself (``SFTConfig.completion_only_loss``
None: True when the rows have ``prompt`` and ``completion``): it renders the prompt with the
generation prompt and the prompt + completion through the chat template, and the labels of
every token before the completion are -100, so only the sketch (and the turn's end token) is
trained; the prompt is context.

Configuration as ``watercolour train``'s (:mod:`watercolour.train.config`): TRL's
:class:`~trl.ModelConfig` subclassed with ours (:class:`SftArguments`) and TRL's
:class:`~trl.SFTConfig` (:class:`SftTrainArguments`), parsed by ``TrlParser``, ``--config``
a shipped recipe (``sft-smollm2``, ``sft-cpu``, ``sft-4b``) or a YAML file. LoRA by default
(``all-linear``, built by train's :func:`~watercolour.train.trainer.lora_config`: TRL's
``get_peft_config``, the vision tower excluded), the model resolved, loaded (by TRL, the
class its config names) and typed as train does. ``OUT`` holds::

    OUT/checkpoint-N/   the Trainer's checkpoints (--save-steps); --resume takes the last
    OUT/final/          the model, LoRA merged into the base, with its tokenizer and chat
                        template: a plain model folder for watercolour train/evaluate
    OUT/sft.json        the resolved configuration, examples kept and dropped, the loss of
                        each logged step, seconds
"""

from __future__ import annotations

import copy
import dataclasses
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trl import ModelConfig, SFTConfig, TrlParser

from watercolour.errors import InputError
from watercolour.io import save_model_folder, write_json_atomic
from watercolour.models.registry import BUILTINS, SMOLLM2
from watercolour.pool.schema import DEFAULT_POOL
from watercolour.train.config import (
    ALL_LINEAR,
    DTYPES,
    RunArguments,
    _alias,
    bf16_available,
    find_recipe,
    wire_model_init_kwargs,
)
from watercolour.train.sft_data import Examples, build_examples, compact_examples, parse_tiers

SOURCES = ("pool", "compact")
"""Where ``watercolour sft``'s examples come from (:mod:`watercolour.train.sft_data`)."""
RECORD = "sft.json"
FINAL_RECORD = "sft-model.json"
"""The record saved inside ``OUT/final`` (where the model came from)."""


@dataclass
class SftArguments(ModelConfig):
    """TRL's ModelConfig (the model, its dtype, LoRA: on by default, all-linear) and what the
    warm start adds: the pool, the tiers, the prompt, the target filters."""

    model_name_or_path: str = field(default=SMOLLM2, metadata={
        "aliases": ["--model"], "help": "The model: a Hub id, a local model folder, or a "
        "builtin: " + ", ".join(BUILTINS) + "."})
    dtype: str | None = field(default=None, metadata={
        "choices": list(DTYPES), "help": "The dtype the weights load in (unset: bfloat16 with "
        "--bf16, else float32; as watercolour train)."})
    use_peft: bool = field(default=True, metadata={
        "aliases": ["--lora"], "help": "Train LoRA adapters (merged into the model at the "
        "end); --use_peft false trains every weight."})
    lora_dropout: float = field(default=0.0, metadata={"help": "LoRA dropout (TRL's: 0.05)."})
    lora_target_modules: list[str] | None = field(default_factory=lambda: [ALL_LINEAR],
                                                  metadata={"help": "LoRA target modules."})
    all_linear: bool = field(default=False, metadata={
        "help": "Shorthand for --lora_target_modules all-linear (the default here)."})
    adapt_vision: bool = field(default=False, metadata={
        "help": "Also put LoRA adapters on a vision tower (Qwen3.5's model.visual)."})
    source: str = field(default="pool", metadata={
        "choices": list(SOURCES), "help": "Where the examples come from: pool (the rated "
        "pool's sketches) or compact (generated sketches in the tiny painter's compact helper "
        "style, ~750 tokens each for SmolLM2; --compact-examples of them)."})
    compact_examples: int = field(default=256, metadata={
        "help": "With --source compact: how many generated sketches (of --tiers: a good "
                "variant is love, a flawed one okay)."})
    pool: str = field(default=DEFAULT_POOL, metadata={
        "help": "The rated pool: a pool folder, a build folder or a Hub dataset id."})
    tiers: str = field(default="love,okay", metadata={
        "help": "The pool tiers to learn from, comma-separated."})
    subjects: list[str] = field(default_factory=list, metadata={
        "help": "Only the pool's sketches of these subjects (default: every subject)."})
    prompt: str = field(default="full", metadata={
        "help": "The prompt, as watercolour train's --prompt: full (the system prompt + the "
                "request) or short (the request alone)."})
    chat_template_kwargs: dict | str | None = field(default=None, metadata={
        "help": "Extra chat-template arguments for every example, e.g. "
                "'{\"enable_thinking\": false}' (as GRPO training's)."})
    max_sketch_tokens: int | None = field(default=None, metadata={
        "help": "Drop sketches whose reply is longer than this many tokens (the model's "
                "tokenizer); the count kept is reported."})
    strip_comments: bool = field(default=False, metadata={
        "help": "Remove // comments and runs of blank lines from the sketches first (shorter "
                "targets for a small model)."})
    resume: bool = field(default=False, metadata={
        "help": "Continue from the last checkpoint in --out."})
    dry_run: bool = field(default=False, metadata={
        "help": "Print the examples, their tokens and the trainable parameters, then exit "
                "(no weights loaded)."})
    json: bool = field(default=False, metadata={"help": "With --dry-run: print JSON."})

    def __post_init__(self) -> None:
        try:
            super().__post_init__()
        except ValueError as err:
            raise InputError(str(err)) from None
        RunArguments._check_model_and_lora(self)  # type: ignore[arg-type]  # the same rules
        self.tiers = ",".join(parse_tiers(self.tiers))
        if self.source not in SOURCES:
            raise InputError(f"--source must be one of {', '.join(SOURCES)}, got "
                             f"{self.source!r}")
        if self.compact_examples < 1:
            raise InputError(f"--compact-examples must be at least 1, got "
                             f"{self.compact_examples}")
        if self.prompt not in ("full", "short"):
            raise InputError(f"--prompt must be full or short, got {self.prompt!r}")
        if isinstance(self.chat_template_kwargs, str):
            try:
                self.chat_template_kwargs = json.loads(self.chat_template_kwargs)
            except json.JSONDecodeError as err:
                raise InputError(f"--chat_template_kwargs is not JSON: {err}") from None
        if self.max_sketch_tokens is not None and self.max_sketch_tokens < 1:
            raise InputError(f"--max-sketch-tokens must be at least 1, got "
                             f"{self.max_sketch_tokens}")

    @property
    def target_modules(self) -> str | list[str]:
        targets = self.lora_target_modules
        return list(targets) if isinstance(targets, (list, tuple)) else targets


_F = {f.name: f for f in dataclasses.fields(SFTConfig)}


@dataclass
class SftTrainArguments(SFTConfig):
    """TRL's SFTConfig with train's aliases and this project's defaults (one log row per step,
    no bf16 or checkpointing unless asked: the small recipe runs on a CPU)."""

    output_dir: str | None = _alias(_F["output_dir"], ["--out"], "runs/sft",
                                    "Here: checkpoints, final/ (the merged model), sft.json.")
    learning_rate: float = _alias(_F["learning_rate"], ["--lr"], 2e-4)
    lr_scheduler_type: str = _alias(_F["lr_scheduler_type"], ["--lr-scheduler"], "cosine")
    max_steps: int = _alias(_F["max_steps"], ["--steps"], -1)
    per_device_train_batch_size: int = _alias(_F["per_device_train_batch_size"],
                                              ["--per-device-batch-size"], 4)
    run_name: str | None = _alias(_F["run_name"], ["--run-tag"])
    bf16: bool = field(default=False, metadata={
        "help": "bfloat16 mixed precision (a GPU that has it); the weights then load in "
                "bfloat16 unless --dtype names another."})
    gradient_checkpointing: bool = field(default=False, metadata={
        "help": "Recompute activations in the backward pass (less memory, slower)."})
    logging_steps: float = field(default=1, metadata={"help": "Log every N steps."})
    save_steps: float = field(default=50, metadata={"help": "Checkpoint every N steps."})
    seed: int = _alias(_F["seed"], [], 0)

    def __post_init__(self) -> None:
        # as TrainArguments: a bf16 request is kept on a machine without it (the dry run of
        # a GPU recipe), and refused when it is time to train
        self.bf16_deferred = bool(self.bf16) and not bf16_available()
        if self.bf16_deferred:
            self.bf16 = False
        if self.gradient_checkpointing is not None:
            self.activation_checkpointing = bool(self.gradient_checkpointing)
            self.gradient_checkpointing = None
        super().__post_init__()
        if self.bf16_deferred:
            self.bf16 = True

    @property
    def load_dtype(self) -> str:
        dtype = (self.model_init_kwargs or {}).get("dtype")
        return str(dtype).removeprefix("torch.") if dtype is not None else "float32"


def parser() -> TrlParser:
    from watercolour.train.config import OneLineParser, _Help

    return OneLineParser((SftArguments, SftTrainArguments), prog="watercolour sft",
                   formatter_class=_Help)


def parse_args(argv: Sequence[str] | None = None) -> tuple[SftArguments, SftTrainArguments]:
    """Flags and ``--config RECIPE`` -> the two configurations (as train's ``parse_args``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "--config" in args:
        index = args.index("--config")
        if index + 1 >= len(args):
            raise InputError("--config needs a recipe (sft-smollm2, sft-cpu, sft-4b or a YAML "
                             "file)")
        args[index + 1] = str(find_recipe(args[index + 1]))
    try:
        sft, training = parser().parse_args_and_config(args)
    except ValueError as err:
        raise InputError(str(err)) from None
    wire_model_init_kwargs(sft, training)  # type: ignore[arg-type]  # the same fields
    return sft, training


def resolved(sft: SftArguments, training: SftTrainArguments) -> dict[str, Any]:
    return {"sft": dataclasses.asdict(sft), "training": training.to_dict()}


def _tokenizer(sft: SftArguments, folder: str | None) -> tuple[Any, str]:
    """The model's tokenizer without its weights (``folder``: a resolved local model), and
    where it came from; Qwen3.5 Hub ids not cached here get the exact offline tokenizer."""
    from transformers import AutoTokenizer

    if folder is not None:
        return AutoTokenizer.from_pretrained(folder), folder
    name = sft.model_name_or_path
    try:
        return AutoTokenizer.from_pretrained(name, revision=sft.model_revision,
                                             local_files_only=True), f"{name} (cached)"
    except Exception as err:
        if "qwen3.5" in name.lower() or "qwen3_5" in name.lower():
            from watercolour.models.qwen35 import cached_tokenizer

            return cached_tokenizer(), "the offline Qwen3.5 tokenizer (watercolour.models.qwen35)"
        raise InputError(f"{name}: its tokenizer is not cached here ({type(err).__name__}); "
                         "a dry run does not download") from None


def counter(tokenizer: Any) -> Any:
    """Tokens of a text in ``tokenizer`` (no special tokens added)."""
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])


def examples_for(sft: SftArguments, tokenizer: Any) -> Examples:
    """The run's training rows: the pool's (:func:`~watercolour.train.sft_data.build_examples`)
    or generated compact sketches (:func:`~watercolour.train.sft_data.compact_examples`)."""
    if sft.source == "compact":
        examples = compact_examples(sft.compact_examples, tiers=sft.tiers.split(","),
                                    prompt=sft.prompt, subjects=sft.subjects,
                                    count_tokens=counter(tokenizer))
    else:
        examples = build_examples(sft.pool, tiers=sft.tiers.split(","), prompt=sft.prompt,
                                  subjects=sft.subjects, strip=sft.strip_comments,
                                  max_sketch_tokens=sft.max_sketch_tokens,
                                  count_tokens=counter(tokenizer))
    if sft.chat_template_kwargs:
        for row in examples.rows:
            row["chat_template_kwargs"] = dict(sft.chat_template_kwargs)
    return examples


def example_tokens(rows: list[dict[str, Any]], tokenizer: Any) -> list[int]:
    """Tokens of each whole example (prompt + completion through the chat template)."""
    count = counter(tokenizer)
    return [count(tokenizer.apply_chat_template(row["prompt"] + row["completion"],
                                                tokenize=False,
                                                **row.get("chat_template_kwargs", {})))
            for row in rows]


def prompt_tokens(rows: list[dict[str, Any]], tokenizer: Any) -> list[int]:
    """Tokens of each prompt with the generation prompt (where the completion starts)."""
    count = counter(tokenizer)
    return [count(tokenizer.apply_chat_template(row["prompt"], tokenize=False,
                                                add_generation_prompt=True,
                                                **row.get("chat_template_kwargs", {})))
            for row in rows]


def check_lengths(rows: list[dict[str, Any]], tokenizer: Any, max_length: int | None
                  ) -> dict[str, int]:
    """How many examples ``max_length`` cuts (``truncated``), and how many it leaves with no
    completion token at all (``no_completion``: TRL drops those); every example without one
    is an InputError (TRL would fail later with a sampler error)."""
    if not max_length:
        return {"truncated": 0, "no_completion": 0}
    prompts = prompt_tokens(rows, tokenizer)
    cut = sum(t > max_length for t in example_tokens(rows, tokenizer))
    empty = sum(t >= max_length for t in prompts)
    if empty == len(rows):
        raise InputError(f"--max_length {max_length}: every example's prompt alone is at least "
                         f"that long ({min(prompts)} tokens or more), so nothing would be "
                         "trained: raise it, or use --prompt short")
    return {"truncated": cut, "no_completion": empty}


def spread(values: list[int]) -> dict[str, float] | None:
    if not values:
        return None
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def trainable(sft: SftArguments, model: str) -> dict[str, Any] | None:
    """Trainable and total parameters, built on the meta device (None when the architecture
    is not known here)."""
    from watercolour.models.architectures import build_on_meta
    from watercolour.models.registry import architecture_config
    from watercolour.train.plan import has_vision_tower, lora_plan

    config = architecture_config(model)
    if config is None:
        return None
    meta = build_on_meta(config)
    total = sum(p.numel() for p in meta.parameters())
    if not sft.use_peft:
        return {"trainable_params": total, "total_params": total, "trainable_fraction": 1.0,
                "model_class": type(meta).__name__}
    plan = lora_plan(meta, sft, adapt_vision=sft.adapt_vision or not has_vision_tower(config))
    return {k: plan[k] for k in ("trainable_params", "total_params", "trainable_fraction",
                                 "model_class", "target_modules", "exclude_modules",
                                 "vision_tower_adapted")}


def dry_run(sft: SftArguments, training: SftTrainArguments) -> dict[str, Any]:
    """The examples, their tokens and the trainable parameters; no weights loaded (a
    builtin is resolved: a cached folder, or tiny-qwen3 built in a scratch folder)."""
    from watercolour.models.registry import resolve

    with tempfile.TemporaryDirectory(prefix="sft-dry-") as scratch:
        folder: str | None = resolve(sft.model_name_or_path, scratch, seed=training.seed)
        if not Path(folder).is_dir():  # a Hub id: its tokenizer from the Hub's cache
            folder = None
        tokenizer, source = _tokenizer(sft, folder)
        examples = examples_for(sft, tokenizer)
        whole = example_tokens(examples.rows, tokenizer)
        params = trainable(sft, folder or sft.model_name_or_path)
    max_length = training.max_length
    origin = sft.pool if sft.source == "pool" else "generated compact sketches"
    return {"config": resolved(sft, training), "pool": origin, "tiers": sft.tiers,
            "pool_rows": examples.pool_rows, **examples.counts, "tokenizer": source,
            "completion_tokens": spread(examples.completion_tokens),
            "example_tokens": spread(whole),
            "over_max_length": sum(t > max_length for t in whole) if max_length else 0,
            "max_length": max_length, "load_dtype": training.load_dtype,
            "parameters": params}


def print_dry_run(data: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(data, indent=2, default=str))
        return
    s, t = data["config"]["sft"], data["config"]["training"]
    print(f"model {s['model_name_or_path']}; LoRA {s['use_peft']} "
          f"({s['lora_target_modules']} r={s['lora_r']}); weights in {data['load_dtype']}")
    print(f"pool {data['pool']}: {data['pool_rows']} rows, {data['selected']} of tiers "
          f"{data['tiers']}, {data['too_long']} over --max-sketch-tokens, {data['kept']} "
          f"examples kept")
    c, e = data["completion_tokens"], data["example_tokens"]
    print(f"tokens ({data['tokenizer']}): completion min {c['min']} median {c['median']} "
          f"max {c['max']}; whole example min {e['min']} median {e['median']} max {e['max']}; "
          f"{data['over_max_length']} over max_length {data['max_length']} (truncated)")
    p = data["parameters"]
    print("trainable parameters: " + (f"{p['trainable_params']:,} of {p['total_params']:,} "
                                      f"({p['model_class']}, on the meta device)" if p else
                                      "the architecture is not known here"))
    print(f"lr {t['learning_rate']} ({t['lr_scheduler_type']}), {t['num_train_epochs']} epochs"
          f" or {t['max_steps']} steps, batch {t['per_device_train_batch_size']} x "
          f"{t['gradient_accumulation_steps']}; out {t['output_dir']}")


def train(sft: SftArguments, training: SftTrainArguments, *, log: Any = print
          ) -> dict[str, Any]:
    """Run the warm start as configured; return what ``OUT/sft.json`` records."""
    from transformers import AutoTokenizer
    from trl import SFTTrainer

    from watercolour.models.registry import resolve
    from watercolour.train.trainer import (
        last_checkpoint,
        lora_config,
        quantization_config,
        recorded_argv,
        versions,
    )

    started = time.perf_counter()
    wire_model_init_kwargs(sft, training)  # type: ignore[arg-type]
    if training.bf16_deferred:
        raise InputError("--bf16 needs a GPU with bfloat16; this machine has none (drop "
                         "--bf16 for a CPU run)")
    out = Path(training.output_dir or "runs/sft")
    checkpoint = None
    if sft.resume:
        checkpoint = last_checkpoint(out)
        if checkpoint is None:
            raise FileNotFoundError(f"--resume: no checkpoint in {out}")
        log(f"resuming from {checkpoint.name}")
    elif (out / RECORD).exists() or last_checkpoint(out) is not None:
        raise InputError(f"{out} already holds a run: add --resume, or choose another --out")
    main = training.process_index == 0
    with training.main_process_first(local=False, desc="building the model"):
        model = resolve(sft.model_name_or_path, out, training.seed)
    tokenizer = AutoTokenizer.from_pretrained(model, revision=sft.model_revision)
    examples = examples_for(sft, tokenizer)
    log(f"{examples.counts['kept']} examples ({examples.counts['selected']} of tiers "
        f"{sft.tiers}, {examples.counts['too_long']} over --max-sketch-tokens)")
    lengths = check_lengths(examples.rows, tokenizer, training.max_length)
    if lengths["truncated"]:
        log(f"warning: {lengths['truncated']} examples are longer than --max_length "
            f"{training.max_length} and are cut ({lengths['no_completion']} with no reply "
            "left, which TRL drops)")
    args = copy.copy(training)
    args.push_to_hub = False
    trainer = SFTTrainer(model=model, args=args, train_dataset=examples.dataset(),
                         processing_class=tokenizer, peft_config=lora_config(sft, model),
                         **quantization_config(sft))  # type: ignore[arg-type]
    trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    record = {"config": resolved(sft, training), "model": sft.model_name_or_path,
              "examples": {"pool_rows": examples.pool_rows, **examples.counts,
                           "over_max_length": lengths, "ids": examples.ids},
              "completion_only_loss": trainer.completion_only_loss,
              "global_step": int(trainer.state.global_step),
              "loss": [{"step": e["step"], "loss": e["loss"]}
                       for e in trainer.state.log_history if "loss" in e],
              "resumed_from": checkpoint.name if checkpoint else None,
              "versions": versions(), "argv": recorded_argv()}
    if main:
        final = trainer.model
        if sft.use_peft:
            final = final.merge_and_unload()  # a plain model folder for train and evaluate
        record["seconds"] = round(time.perf_counter() - started, 1)
        save_model_folder(out / "final", final, tokenizer, FINAL_RECORD,
                          {"base": sft.model_name_or_path, "sft": str(out)})
        write_json_atomic(out / RECORD, record)
    return record


def run(argv: list[str] | None = None) -> int:
    """Parse ``argv``, then print the dry run or train."""
    sft, training = parse_args(argv)
    if sft.dry_run:
        print_dry_run(dry_run(sft, training), sft.json)
        return 0
    record = train(sft, training)
    last = record["loss"][-1]["loss"] if record["loss"] else None
    final = Path(training.output_dir or "runs/sft") / "final"
    print(f"trained {record['global_step']} steps on {record['examples']['kept']} examples "
          f"(last loss {last}); the model is in {final}")
    return 0
