"""The training program's configuration: two dataclasses parsed the way TRL's own scripts are
(:class:`trl.TrlParser`: every field is a flag with its help, ``--config RECIPE.yaml`` sets
defaults, the command line overrides them).

- :class:`RunArguments`: TRL's :class:`~trl.ModelConfig` (the model and LoRA: ``--use_peft``,
  ``--lora_target_modules``, ``--lora_r``, ``--dtype``, ``--use_rslora``, ...; LoRA is built by
  TRL's :func:`~trl.get_peft_config`, :func:`watercolour.train.plan.lora_config`) plus ours
  (where the reward comes from, the subject, the dataset size, ``--resume``, ``--dry-run``).
  It *subclasses* ModelConfig rather than being a third dataclass beside it: ``parse_args``
  keeps returning ``(run, training)``, so its many callers (the CLI, the job script, the
  benchmarks, the tests, the book) unpack two configurations as before, and the model and
  LoRA settings stay where they always were (``run.model_name_or_path``, ``run.lora_r``).
  The published names stay aliases: ``--model`` (= ``--model_name_or_path``), ``--lora``
  (= ``--use_peft``), ``--all-linear`` (= ``--lora_target_modules all-linear``), and
  ``--adapt-vision`` is ours. Two of TRL's defaults are this project's instead (committed
  runs reproduce): ``lora_dropout`` 0.0 (TRL: 0.05) and ``lora_target_modules`` the dense list
  q/k/v/o/gate/up/down_proj (TRL: None, PEFT's per-architecture default); ``dtype`` is unset
  by default: then bfloat16 with ``--bf16``, else float32 (TRL's default), and an explicit
  ``--dtype`` wins (:func:`wire_model_init_kwargs`, what TRL's ``trl/scripts/grpo.py`` does:
  ``model_init_kwargs`` gets the dtype, revision, attention implementation and
  ``trust_remote_code``; ``--model-init-kwargs`` still adds to it).
- :class:`TrainArguments`: TRL's :class:`~trl.GRPOConfig`, every field of it, with the
  published command's names as aliases where TRL's differ (``--lr`` = ``--learning_rate``,
  ``--steps`` = ``--max_steps``, ``--lr-scheduler``, ``--per-device-batch-size``,
  ``--run-tag`` = ``--run_name``, ``--out`` = ``--output_dir``) and a few defaults changed for
  this project (one log row per step, no bf16 or checkpointing unless asked: the small
  recipes run on a CPU).

Where a value comes from: the command line, else the recipe (``--config``), else, for the
reward's and the renderer's settings (``--references``, ``--mix``, ``--pool``, ``--gate-mode``,
``--render-workers``, ``--render-deadline-s``), their ``WATERCOLOUR_*`` variable, else the
default declared once on :class:`~watercolour.rewards.RewardConfig`,
:class:`~watercolour.gates.GateConfig` or :class:`~watercolour.render.RenderConfig` (those
fields' rules check the values; a bad variable is one error naming it, before anything runs).

On a GPU machine ``--use-vllm`` (and TRL's ``--vllm-mode``, ``--vllm-server-host``,
``--vllm-gpu-memory-utilization``, ...) passes generation to vLLM: those are GRPOConfig's own
fields (vLLM is not installed or testable here). Either backend stops a reply at the closing
fence of its code block (``--stop-at-fence``, on by default) and may cap a generation call's
time (``--generation-budget-s``, transformers only): :func:`parse_args` puts both into TRL's
``generation_kwargs`` in the backend's form (:mod:`watercolour.train.generation`).

Each dataclass checks its own values in ``__post_init__`` (one-line
:class:`~watercolour.errors.InputError`); the one rule across both, ``--dtype`` against
``--model-init-kwargs``' dtype, is checked where they meet, :func:`wire_model_init_kwargs`.

>>> run, training = parse_args(["--config", "recipes/full-35b.yaml", "--dry-run"])
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from transformers.hf_argparser import string_to_bool
from trl import GRPOConfig, ModelConfig, TrlParser

from watercolour import settings
from watercolour.errors import InputError
from watercolour.gates import GateConfig
from watercolour.models.registry import BUILTINS
from watercolour.prompt import DEFAULT_SUBJECT
from watercolour.render.config import RenderConfig
from watercolour.rewards.config import DEFAULT_POOL, RewardConfig
from watercolour.rewards.curriculum import DEFAULT_SCHEDULE, ReferencesSchedule
from watercolour.rewards.mix import DEFAULT_MIX, PRESETS, Mix

DENSE_TARGET_MODULES: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj",
                                         "gate_proj", "up_proj", "down_proj")
"""The usual LoRA module list, written for dense attention + MLP models: this project's
default ``lora_target_modules`` (TRL's is None, PEFT's per-architecture default)."""
ALL_LINEAR = "all-linear"
"""PEFT's ``target_modules`` for every ``nn.Linear`` but the output head (``--all-linear``)."""
DTYPES = ("auto", "bfloat16", "float16", "float32")
"""TRL's ``--dtype`` choices."""
MIXES = tuple(PRESETS)
RESUME_LOCAL = "local"
"""``--resume`` without a value: the last checkpoint in ``--out``."""
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
"""A Hub repository id, ``owner/name``."""


@dataclass
class RunArguments(ModelConfig):
    """TRL's ModelConfig (the model, its dtype, LoRA) and what this project adds to TRL's GRPO
    configuration."""

    model_name_or_path: str = field(
        default="builtin:tiny-qwen3",
        metadata={"aliases": ["--model"], "help": "The policy: a Hub id (Qwen/Qwen3.5-35B-A3B), "
                  "a local model folder, or a builtin, made here without a download: "
                  + "; ".join(f"{name}, {what}" for name, what in BUILTINS.items()) + "."})
    dtype: str | None = field(default=None, metadata={
        "choices": list(DTYPES),
        "help": "The dtype the weights load in (TRL's --dtype: model_init_kwargs' dtype). "
                "Unset here (TRL's default is float32): bfloat16 with --bf16, else float32; "
                "given, it wins over --bf16."})
    use_peft: bool = field(default=False, metadata={
        "aliases": ["--lora"],
        "help": "Train LoRA adapters (PEFT, built by TRL's get_peft_config from the --lora_* "
                "flags) instead of every weight."})
    lora_dropout: float = field(default=0.0, metadata={
        "help": "LoRA dropout. This project's default is 0.0 (TRL's: 0.05)."})
    lora_target_modules: list[str] | None = field(
        default_factory=lambda: list(DENSE_TARGET_MODULES), metadata={
            "help": "LoRA target modules (PEFT's target_modules; one value: a name, a regex or "
                    "all-linear). This project's default is the dense-model list "
                    "q/k/v/o/gate/up/down_proj (TRL's: None, PEFT's per-architecture "
                    "default), which on Qwen3.5's hybrid layers adapts attention in the "
                    "full-attention layers only."})
    all_linear: bool = field(default=False, metadata={
        "help": "The published shorthand for --lora_target_modules all-linear (every "
                "nn.Linear but the output head); after parsing it says whether the targets "
                "are all-linear."})
    adapt_vision: bool = field(default=False, metadata={
        "help": "Also put LoRA adapters on the model's vision tower (Qwen3.5's model.visual). "
                "Off by default: a single-turn policy reads a text prompt only, so the tower never "
                "runs (in episodes with --show-render it encodes the render, and turn 2's "
                "loss reaches it: recipes/revise-4b.yaml turns this on); "
                "all-linear would otherwise adapt it too (7,978,496 of 30,455,936 trainable "
                "parameters on Qwen3.5-35B-A3B)."})
    env_url: list[str] = field(default_factory=list, metadata={
        "help": "Environment server URL(s) giving the reward (several: the resilient "
                "multi-URL client; commas also separate). None: the reward is computed in "
                "this process (a local browser and the embedded scorers)."})
    env_timeout_s: float = field(default=900.0, metadata={
        "help": "Seconds to wait for one group's evaluation from an environment server."})
    env_retries: int = field(default=2, metadata={
        "help": "Retries of a failed environment request (then the rollouts' reward is None)."})
    subject: str = field(default=DEFAULT_SUBJECT, metadata={
        "help": "What the policy is asked to paint."})
    # The reward's and the renderer's settings, offered again as flags: not given (None), each
    # is its WATERCOLOUR_* variable, else the default declared on RewardConfig / GateConfig /
    # RenderConfig (settings.borrow; __post_init__ settles them, settings.fill).
    references: int | None = settings.borrow(
        RewardConfig, "references",
        "Reference paintings the judge compares each rollout with (half love, half okay, "
        "unless --references-schedule), shared by a group.")
    references_schedule: str = field(default=DEFAULT_SCHEDULE, metadata={
        "help": "How many of a group's references come from the pool's love tier, step by "
                "step (the rest from okay): half (n // 2, as every committed run drew), "
                "love-only, linear:A:B (the love share from A at step 0 to B at the last "
                "step), steps:0=A,40=B,... (piecewise constant); love = floor(share x n). "
                "metrics.csv logs references_love_share. With --env-url each reset sends "
                "love_references (a server older than this option refuses the episode)."})
    mix: str | None = field(default=None, metadata={
        "help": f"The reward mix: {', '.join(MIXES)}, or weights such as "
                f"judge=0.5,hps=0.3,pigment=0.1 (the weighted components sum to 0.90; unset: "
                f"the WATERCOLOUR_*_WEIGHT variables, else {DEFAULT_MIX})."})
    pool: str | None = settings.borrow(
        RewardConfig, "pool", "The reference pool: a folder, a build folder or a Hub id; "
        f"none: {DEFAULT_POOL} when it exists")
    gate_mode: str | None = settings.borrow(GateConfig, "mode")
    render_workers: int | None = settings.borrow(
        RenderConfig, "workers", "Browsers rendering in parallel (in-process reward only).")
    render_deadline_s: float | None = settings.borrow(
        RenderConfig, "deadline_s", "Seconds one render may take (in-process reward only).")
    prompt: str = field(default="full", metadata={
        "help": "full: the system prompt (the 10 methods, the skeleton) + the request; short: "
                "the one-line request alone (for tiny models)."})
    turns: int = field(default=1, metadata={
        "help": "Turns an episode has. 1: one sketch a rollout. K > 1: the policy sketches, "
                "reads the environment's critique of its render and revises, K turns in all, "
                "rewarded by the episode's reward (the last turn's, less "
                "WATERCOLOUR_ENV_REGRESSION_PENALTY's penalty for a revision that made it "
                "worse); the critique's tokens are masked "
                "out of the loss; metrics.csv gains reward_turn1..K and revision_beats_first."})
    show_render: bool | None = field(default=None, metadata={
        "nargs": "?", "const": True, "type": string_to_bool,
        "help": "With --turns K > 1: the revision turn shows the policy its render as a "
                "picture beside the critique (in generation and in the loss's forward pass). "
                "Unset: on for a vision policy (a ...ForConditionalGeneration with a vision "
                "tower and an image processor: Qwen3.5), off for a text one; true for a text "
                "policy is an error."})
    stop_at_fence: bool = field(default=True, metadata={
        "help": "Stop each reply at the closing fence of its code block (and at EOS), with "
                "transformers and vLLM alike (watercolour.train.generation): a reply that "
                "finishes its sketch and keeps talking no longer runs to "
                "max_completion_length."})
    generation_budget_s: float | None = field(default=None, metadata={
        "help": "Seconds one generation call may take (a step's batch; in episodes, one "
                "turn): replies still being written then end where they are, truncated, and "
                "the gate scores them as such (transformers' max_time; refused with "
                "--use-vllm, which has no time limit per request). Unset: no limit."})
    n_episodes: int = field(default=240, metadata={
        "help": "Prompts in the training dataset (each gives one group of num_generations)."})
    resume: str | None = field(default=None, metadata={
        "nargs": "?", "const": RESUME_LOCAL,
        "help": "--resume alone: resume from the last checkpoint in --out (rollouts and "
                "metrics of the steps after it are dropped and redone: nothing lost, nothing "
                "twice). --resume OWNER/NAME: first pull that Hub repository's latest "
                "checkpoint, metrics.csv and rollouts (what --push-to-hub keeps there during a "
                "run) into --out, then the same."})
    hub_sync_minutes: float = field(default=10.0, metadata={
        "help": "With --push-to-hub: minutes between the uploads of metrics.csv, run.json and "
                "the rollouts to the repository while the run goes on (and once at the end, "
                "or after a failure); checkpoints go up as they are saved (--hub-strategy)."})
    dry_run: bool = field(default=False, metadata={
        "help": "Print the resolved configuration, the reward set-up and the LoRA plan "
                "(built on the meta device: no weights), then exit."})
    json: bool = field(default=False, metadata={"help": "With --dry-run: print JSON."})

    def __post_init__(self) -> None:
        try:
            super().__post_init__()  # ModelConfig's: one target module -> a string
        except ValueError as err:
            raise InputError(str(err)) from None
        self._check_model_and_lora()
        urls: list[str] = []
        for item in self.env_url or []:
            urls += [u.strip() for u in str(item).split(",") if u.strip()]
        self.env_url = urls
        if self.mix is not None:
            Mix.parse(self.mix)  # a preset's name or weights; MixError says what is wrong
        self.references_schedule = ReferencesSchedule.parse(self.references_schedule).text
        if self.prompt not in ("full", "short"):
            raise InputError(f"--prompt must be full or short, got {self.prompt!r}")
        settings.fill(self)  # unset: the variable, else the default; given: the field's rules
        self.reward_config()  # the rest of the reward's variables, checked before anything runs
        if not self.env_url:
            self.render_config()
        for name in ("n_episodes", "turns"):
            if getattr(self, name) < 1:
                raise InputError(f"--{name.replace('_', '-')} must be at least 1, got "
                                 f"{getattr(self, name)}")
        if self.resume in (True, "true", "True", "yes", "1", RESUME_LOCAL):
            self.resume = RESUME_LOCAL
        elif self.resume in (False, None, "", "false", "False", "no", "0"):
            self.resume = None
        elif not REPO_ID.match(str(self.resume)):
            raise InputError(f"--resume takes nothing (the last checkpoint in --out) or a Hub "
                             f"repository id owner/name, got {self.resume!r}")
        if self.generation_budget_s is not None and self.generation_budget_s <= 0:
            raise InputError(f"--generation-budget-s must be positive, got "
                             f"{self.generation_budget_s}")
        if self.hub_sync_minutes <= 0:
            raise InputError(f"--hub-sync-minutes must be positive, got {self.hub_sync_minutes}")
        if self.env_timeout_s <= 0 or self.env_retries < 0:
            raise InputError("timeouts must be positive and retries at least 0")

    def _check_model_and_lora(self) -> None:
        """ModelConfig's fields: the aliases folded in, the values and combinations checked."""
        if self.dtype is not None:
            self.dtype = str(self.dtype).removeprefix("torch.")
            if self.dtype not in DTYPES:
                raise InputError(f"--dtype must be one of {', '.join(DTYPES)}, got "
                                 f"{self.dtype!r}")
        targets = self.lora_target_modules
        if isinstance(targets, (list, tuple)):
            targets = [str(t) for t in targets]
            if not targets:
                raise InputError("--lora_target_modules needs at least one module name")
        shorthand = False  # --all-linear given, the targets not already all-linear
        if self.all_linear:
            if targets not in (ALL_LINEAR, list(DENSE_TARGET_MODULES)):
                raise InputError(f"--all-linear is --lora_target_modules {ALL_LINEAR}: give one "
                                 f"or the other, not both (got {targets!r})")
            shorthand = targets != ALL_LINEAR
            targets = ALL_LINEAR
        self.lora_target_modules = targets
        self.all_linear = targets == ALL_LINEAR
        for name in ("lora_r", "lora_alpha"):
            if getattr(self, name) < 1:
                raise InputError(f"--{name} must be at least 1, got {getattr(self, name)}")
        if not 0.0 <= float(self.lora_dropout) < 1.0:
            raise InputError(f"--lora_dropout must be in [0, 1), got {self.lora_dropout}")
        if not self.use_peft:
            for flag, given in (("--all-linear chooses LoRA's target modules", shorthand),
                                ("--adapt-vision chooses where LoRA's adapters go",
                                 self.adapt_vision),
                                ("--use_rslora is a LoRA setting", self.use_rslora),
                                ("--use_dora is a LoRA setting", self.use_dora),
                                ("--load_in_4bit works only with LoRA", self.load_in_4bit),
                                ("--load_in_8bit works only with LoRA", self.load_in_8bit)):
                if given:
                    raise InputError(f"{flag}: add --lora (--use_peft)")

    @property
    def lora(self) -> bool:
        """Whether the run trains LoRA adapters (``--lora``, TRL's ``use_peft``)."""
        return bool(self.use_peft)

    @property
    def schedule(self) -> ReferencesSchedule:
        """The references' curriculum (``--references-schedule``)."""
        return ReferencesSchedule.parse(self.references_schedule)

    def reward_config(self) -> RewardConfig:
        """The reward this run asks for: its flags over the ``WATERCOLOUR_*`` variables."""
        return RewardConfig.from_env(mix=Mix.parse(self.mix) if self.mix else None,
                                     pool=self.pool, references=self.references,
                                     gate_mode=self.gate_mode)

    def render_config(self) -> RenderConfig:
        """The in-process renderer's configuration: its flags over the variables."""
        return RenderConfig.from_env(workers=self.render_workers,
                                     deadline_s=self.render_deadline_s)

    @property
    def target_modules(self) -> str | list[str]:
        """PEFT's ``target_modules`` for this run (``lora_target_modules``)."""
        targets = self.lora_target_modules
        return list(targets) if isinstance(targets, (list, tuple)) else targets


def _alias(base: dataclasses.Field, aliases: list[str], default: Any = dataclasses.MISSING,
           help_suffix: str = "") -> Any:
    """A field of GRPOConfig again, with aliases (and optionally another default)."""
    metadata = dict(base.metadata)
    metadata["aliases"] = aliases
    if help_suffix:
        metadata["help"] = f"{metadata.get('help', '')} {help_suffix}".strip()
    if default is dataclasses.MISSING:
        default = base.default
    return field(default=default, metadata=metadata)


_F = {f.name: f for f in dataclasses.fields(GRPOConfig)}


@dataclass
class TrainArguments(GRPOConfig):
    """TRL's GRPOConfig with the published command's aliases and this project's defaults."""

    output_dir: str | None = _alias(_F["output_dir"], ["--out"], "runs/train",
                                    "Here: metrics.csv, rollouts/, checkpoints, the adapter.")
    learning_rate: float = _alias(_F["learning_rate"], ["--lr"], 5e-5)
    lr_scheduler_type: str = _alias(_F["lr_scheduler_type"], ["--lr-scheduler"],
                                    "constant_with_warmup")
    max_steps: int = _alias(_F["max_steps"], ["--steps"], 110)
    per_device_train_batch_size: int = _alias(_F["per_device_train_batch_size"],
                                              ["--per-device-batch-size"], 8)
    run_name: str | None = _alias(_F["run_name"], ["--run-tag"])
    bf16: bool = field(default=False, metadata={
        "help": "bfloat16 mixed precision (needs a GPU that has it); the weights are then "
                "also loaded in bfloat16 unless --dtype (or model_init_kwargs' dtype) names "
                "another: TRL's own default is float32, twice the memory."})
    gradient_checkpointing: bool = field(default=False, metadata={
        "help": "Recompute activations in the backward pass (less memory, ~20% slower)."})
    logging_steps: float = field(default=1, metadata={
        "help": "Log (metrics.csv, trackio) every N steps."})
    save_steps: float = field(default=10, metadata={"help": "Checkpoint every N steps."})
    scale_rewards: str = _alias(_F["scale_rewards"], [], "none")
    hub_strategy: str = _alias(_F["hub_strategy"], [], "checkpoint",
                               "Here the default is 'checkpoint': with --push-to-hub each saved "
                               "checkpoint also goes to last-checkpoint/ in the repository, "
                               "what --resume OWNER/NAME pulls.")

    def __post_init__(self) -> None:
        # transformers refuses bf16 without a bf16 GPU while it builds the config; the
        # request is kept (a dry run on a laptop shows the GPU recipe as it is) and the
        # trainer refuses it, with the reason, when it is time to train.
        self.bf16_deferred = bool(self.bf16) and not bf16_available()
        if self.bf16_deferred:
            self.bf16 = False
        if self.gradient_checkpointing is not None:  # the published flag, TRL's new name
            self.activation_checkpointing = bool(self.gradient_checkpointing)
            self.gradient_checkpointing = None
        super().__post_init__()
        if self.bf16_deferred:
            self.bf16 = True

    @property
    def load_dtype(self) -> str:
        """The dtype TRL loads the policy's weights in: ``model_init_kwargs``' ``dtype``
        (:func:`wire_model_init_kwargs`: ``--dtype``, else bfloat16 with ``--bf16``), else
        TRL's default float32."""
        dtype = (self.model_init_kwargs or {}).get("dtype")
        return str(dtype).removeprefix("torch.") if dtype is not None else "float32"


def wire_model_init_kwargs(run: RunArguments, training: TrainArguments) -> None:
    """What TRL's own script does with ModelConfig (``trl/scripts/grpo.py``): the policy's
    ``model_init_kwargs`` get ``--dtype`` (unset: bfloat16 with ``--bf16``, else float32),
    ``--model_revision``, ``--attn_implementation`` and ``--trust_remote_code``; what
    ``--model-init-kwargs`` names itself is kept. ``run.dtype`` then records the dtype the
    weights load in. The same twice gives the same (a run's configuration is wired once more
    when it is trained)."""
    given = dict(training.model_init_kwargs or {})
    if given.get("dtype") is not None:
        named = str(given["dtype"]).removeprefix("torch.")
        if run.dtype is not None and run.dtype != named:
            raise InputError(f"--dtype {run.dtype} and --model-init-kwargs' dtype {named} "
                             "disagree: give one")
        dtype = named
    else:
        dtype = run.dtype or ("bfloat16" if training.bf16 else "float32")
    kwargs = {"revision": run.model_revision, "trust_remote_code": training.trust_remote_code,
              "attn_implementation": run.attn_implementation, "dtype": dtype}
    kwargs.update({k: v for k, v in given.items() if k != "dtype"})
    training.model_init_kwargs = kwargs
    run.dtype = dtype


def bf16_available() -> bool:
    """Whether this machine can train in bfloat16 (a CUDA GPU that has it)."""
    import torch

    return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())


class _Help(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Each flag's default after its help, but not "None" (unset: its help says what then);
    the epilog (the variables) as written."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None:
            return action.help
        return super()._get_help_string(action)


READ_BY_TRAINING = ("RenderConfig", "GateConfig", "Mix", "RewardConfig", "JudgeKey",
                    "ModelCache", "WarmStartConfig")
"""The configurations whose variables a training run reads (not the server's, nor the book's)."""


def variables_epilog() -> str:
    """The ``WATERCOLOUR_*`` variables a run reads, one a line, for ``--help`` (from
    :func:`watercolour.settings.variables`, as the README's table)."""
    lines = [f"  {name} ({default.replace('`', '')}): {text}"
             for name, where, default, text in settings.variables()
             if where.split(".")[0] in READ_BY_TRAINING]
    return ("environment variables (a flag, or the recipe, wins over its variable):\n"
            + "\n".join(lines))


class OneLineParser(TrlParser):
    """TrlParser whose errors are one line (argparse would print the whole usage first);
    ``watercolour train`` and ``watercolour sft`` parse with it."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message} (see --help)\n")
        sys.exit(2)


def parser() -> TrlParser:
    return OneLineParser((RunArguments, TrainArguments), prog="watercolour train",
                   formatter_class=_Help, epilog=variables_epilog())


RECIPES = resources.files("watercolour") / "recipes"
"""The shipped recipes (``src/watercolour/recipes/`` in a checkout)."""


def find_recipe(name: str | os.PathLike[str]) -> Path:
    """A recipe file: ``name`` itself when it is a file, else the shipped recipe of that name
    (``full-35b``, ``full-35b.yaml`` or ``recipes/full-35b.yaml``), so a chapter or a job finds
    the recipes without a checkout."""
    path = Path(name)
    if path.is_file():
        return path
    shipped = RECIPES / (path.name if path.suffix == ".yaml" else f"{path.name}.yaml")
    if shipped.is_file():
        return Path(str(shipped))
    known = sorted(p.name.removesuffix(".yaml") for p in RECIPES.iterdir()
                   if p.name.endswith(".yaml"))
    raise InputError(f"no recipe {str(name)!r}: give a YAML file or one of {', '.join(known)}")


def parse_args(argv: Sequence[str] | None = None) -> tuple[RunArguments, TrainArguments]:
    """Flags and ``--config RECIPE.yaml`` -> the two configurations. Errors exit with argparse's
    one-line message (code 2)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "--config" in args:
        index = args.index("--config")
        if index + 1 >= len(args):
            raise InputError("--config needs a recipe file (recipes/*.yaml)")
        args[index + 1] = str(find_recipe(args[index + 1]))
    try:
        run, training = parser().parse_args_and_config(args)
    except ValueError as err:  # HfArgumentParser: unused arguments, bad values in a recipe
        raise InputError(str(err)) from None
    wire_model_init_kwargs(run, training)
    from watercolour.train.generation import wire_generation_kwargs

    wire_generation_kwargs(run, training)
    return run, training


def resolved(run: RunArguments, training: TrainArguments) -> dict[str, Any]:
    """Plain data of both configurations, for the record beside a run's results (``run``:
    TRL's ModelConfig fields, ``use_peft``, ``lora_target_modules``, ``dtype``, ..., and
    ours)."""
    train_dict = training.to_dict()
    return {"run": dataclasses.asdict(run), "training": train_dict}
