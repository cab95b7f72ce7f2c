"""Training: one GRPO program (TRL ``GRPOTrainer`` + PEFT LoRA) for every scale, from a tiny
random Qwen3 on a CPU to Qwen3.5-35B-A3B on one H200.

    watercolour train --config recipes/full-35b.yaml --dry-run --json   # the LoRA plan
    python -m watercolour.train --config recipes/tiny-cpu.yaml --out runs/tiny

Modules, one job each: :mod:`~watercolour.train.config` (the flags: TRL's GRPOConfig with the
published names as aliases + ours), :mod:`~watercolour.train.trainer` (the run and what it
leaves in ``--out``), :mod:`~watercolour.train.reward_source` (in-process or environment
rewards, never raising; the per-step metrics), :mod:`~watercolour.train.rollouts` (every
rollout, crash-safe), :mod:`~watercolour.train.metrics` (``metrics.csv``),
:mod:`~watercolour.train.plan` (the LoRA plan, the memory estimate, the weights-fit check),
:mod:`~watercolour.train.hub` (the upload folder), :mod:`~watercolour.train.tiny` (the tiny
painter's experiments). The models trained, by name, are :mod:`watercolour.models`'s; the
reproduction's published curves are in :mod:`watercolour.analysis`.
"""

from watercolour.train.config import RunArguments, TrainArguments, parse_args
from watercolour.train.plan import lora_plan, memory_estimate

__all__ = ["RunArguments", "TrainArguments", "lora_plan", "memory_estimate", "parse_args"]
