"""How well a tiny painter writes sketches: sample replies with fixed seeds, score them with
the reward the runs use (the allowlist gate, the embedded judge and scorer), count what the
gate rejects and why.

    watercolour tiny evaluate MODEL_DIR \
        --out src/watercolour/results/tiny/sft-eval.json
    watercolour tiny evaluate MODEL_DIR --recipe tiny-cpu --mix hps-only ...
    watercolour tiny evaluate MODEL_DIR --recipe tiny-revise --turns 2 ...

(``--turns 2``: episodes of a first attempt, its critique and a revision,
:mod:`watercolour.train.evaluate_episodes`.)

A thin wrapper, kept so the committed results (``results/tiny/*eval*.json``) stay reproducible
with the commands that made them: the work is :mod:`watercolour.train.evaluate`'s (``watercolour
evaluate``, for any policy), with the short prompt, the allowlist gate, 512 new tokens and
batches of 8, as here before.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from watercolour.errors import InputError
from watercolour.flags import MIX, OUT, POOL, SEED, flag, parser_for, positional, switch
from watercolour.io import write_json_atomic
from watercolour.models.registry import Policy, load_policy
from watercolour.models.tiny.sketches import compact_sketches
from watercolour.prompt import DEFAULT_SUBJECT
from watercolour.rewards.mix import DEFAULT_MIX
from watercolour.train.evaluate import (
    Sampling,
    rejection_reasons,
    score_replies,
    summarise,
)
from watercolour.train.evaluate import sample_replies as sample_policy

__all__ = ["TinyEvaluateFlags", "evaluate_model", "main", "rejection_reasons", "sample_replies",
           "sampling", "untrained_copy"]


def sample_replies(model_dir: str | Path, subject: str = DEFAULT_SUBJECT, n: int = 64,
                   seed: int = 0, max_new_tokens: int = 512, temperature: float = 1.0,
                   top_p: float = 1.0, batch: int = 8) -> list[str]:
    """``n`` sampled replies to the short request for ``subject`` (seeded: the same every
    time)."""
    model, tokenizer = load_policy(Policy(str(model_dir), str(model_dir)))
    return sample_policy(model, tokenizer, Sampling(
        samples=n, seed=seed, subject=subject, max_new_tokens=max_new_tokens,
        temperature=temperature, top_p=top_p, prompt="short", batch=batch))


def evaluate_model(model_dir: str | Path, rewarder: Any, subject: str = DEFAULT_SUBJECT,
                   n: int = 64, seed: int = 0, group: int = 8,
                   known: set[str] | None = None, temperature: float = 1.0,
                   top_p: float = 1.0, love: int | None = None) -> dict[str, Any]:
    """Sample ``n`` replies at ``temperature`` and ``top_p``, score them in groups of
    ``group`` (group ``g`` draws references with seed ``seed + g``, ``love`` of them from the
    ``love`` tier, default half), and summarise: gate pass rate, rejection reasons, rewards."""
    started = time.perf_counter()
    replies = sample_replies(model_dir, subject, n, seed, temperature=temperature, top_p=top_p)
    sampled_s = time.perf_counter() - started
    rows, _ = score_replies(replies, rewarder, subject, seed, group, known, love)
    summary = summarise(rows)
    return {
        "model": str(model_dir), "subject": subject, "samples": n, "seed": seed,
        "temperature": temperature, "top_p": top_p, "love_references": love,
        "gate_mode": rewarder.config.gate_mode, "mix": rewarder.config.mix.name,
        **{k: summary[k] for k in ("passed", "pass_rate", "rejection_reasons", "unavailable",
                                   "mean_reward", "mean_reward_of_passed")},
        "copies_of_training_sketches": sum(r["copy_of_training_sketch"] for r in rows),
        "sampling_s": round(sampled_s, 1), "seconds": round(time.perf_counter() - started, 1),
        "rows": rows,
    }


def untrained_copy(model_dir: str | Path, folder: Path, seed: int = 0) -> Path:
    """``model_dir``'s architecture and tokenizer with fresh random weights, in ``folder``."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(seed)
    AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(str(model_dir))
                                     ).save_pretrained(folder)
    AutoTokenizer.from_pretrained(str(model_dir)).save_pretrained(folder)
    return folder


def sampling(recipe: str | None, temperature: float | None = None,
             top_p: float | None = None) -> tuple[float, float]:
    """The temperature and top_p to sample at: the recipe's when one is named (then neither
    may be given as well), else the ones given, else 1.0."""
    if recipe is None:
        return (1.0 if temperature is None else temperature, 1.0 if top_p is None else top_p)
    if temperature is not None or top_p is not None:
        raise InputError("give --recipe or --temperature/--top-p, not both: the recipe "
                         "decides how its runs sample")
    from watercolour.train.config import parse_args

    _, training = parse_args(["--config", recipe])
    return float(training.temperature), float(training.top_p)


def recipe_painter(recipe: str | None) -> str:
    """The builtin tiny painter ``recipe`` starts from (``tiny-revise``: the one that learned
    revisions), else the plain one."""
    from watercolour.models.registry import TINY_PAINTER, TINY_REVISER

    if recipe is None:
        return TINY_PAINTER
    from watercolour.train.config import parse_args

    run, _ = parse_args(["--config", recipe])
    return run.model_name_or_path if run.model_name_or_path in (
        TINY_PAINTER, TINY_REVISER) else TINY_PAINTER


@dataclass
class TinyEvaluateFlags:
    """``watercolour tiny evaluate``'s flags (``--out``, ``--pool``, ``--mix``
    and ``--seed``: the shared flags of :mod:`watercolour.flags`)."""

    model: str | None = positional(nargs="?", help="a model folder (default: the cached warm "
                                   "start, the one the --recipe trains when it names a tiny "
                                   "painter)")
    out: str = flag(like=OUT, required=True, help="where the JSON goes")
    pool: str | None = flag(like=POOL, help="the reference pool (judge-led mix)")
    mix: str = flag(like=MIX, default=DEFAULT_MIX, help=None)
    samples: int = flag(type=int, default=64)
    seed: int = flag(like=SEED, default=Sampling.seed)
    recipe: str | None = flag(help="sample as this training recipe does (its temperature and "
                              "top_p), e.g. tiny-cpu")
    temperature: float | None = flag(type=float, help="sampling temperature (default 1, or "
                                     "the recipe's)")
    top_p: float | None = flag(type=float, help="nucleus sampling: keep the likeliest tokens "
                               "up to this mass (default 1, or the recipe's)")
    love_references: int | None = flag(type=int, help="how many of each group's references "
                                       "come from the love tier (default half of them, "
                                       "WATERCOLOUR_REFERENCES; all is the harder bar)")
    turns: int = flag(type=int, default=1, help="episodes of this many turns: each revision "
                      "follows the critique of the turn before (default 1: single replies)")
    untrained: bool = switch(help="evaluate the model before its warm start: the same "
                             "architecture and tokenizer, random weights")


def main(argv: list[str] | None = None, prog: str = "watercolour tiny evaluate") -> int:
    """Sample, score and summarise a tiny painter (or episodes with ``--turns``); write
    ``--out``."""
    from watercolour.models.tiny.warm_start import painter_config
    from watercolour.render import Renderer
    from watercolour.rewards import Mix, RewardConfig, Rewarder

    args = parser_for(TinyEvaluateFlags, prog=prog,
                      description=__doc__.split("\n\n")[0]).parse_args(argv)
    temperature, top_p = sampling(args.recipe, args.temperature, args.top_p)
    warm = painter_config(recipe_painter(args.recipe))
    model = args.model or str(warm.folder())
    if args.untrained:
        import tempfile

        model = str(untrained_copy(model, Path(tempfile.mkdtemp(prefix="untrained-")),
                                   warm.seed))
    config = RewardConfig.from_env(mix=Mix.preset(args.mix), pool=args.pool,
                                   gate_mode="allowlist")
    known = {s.reply().strip() for s in compact_sketches(warm.sketches)}
    if args.turns > 1:
        return _evaluate_episodes(args, model, config, temperature, top_p)
    with Renderer() as renderer:
        result = evaluate_model(model, Rewarder(config, renderer=renderer), n=args.samples,
                                seed=args.seed, known=known, temperature=temperature,
                                top_p=top_p, love=args.love_references)
    write_json_atomic(args.out, {"recipe": args.recipe, **result})
    print(f"{result['passed']}/{result['samples']} pass the allowlist gate at temperature "
          f"{temperature}, top-p {top_p} "
          f"({result['rejection_reasons']}); mean reward {result['mean_reward']}")
    return 0


def _evaluate_episodes(args: argparse.Namespace, model: str, config: Any, temperature: float,
                       top_p: float) -> int:
    from watercolour.render import Renderer
    from watercolour.rewards import Rewarder
    from watercolour.train.evaluate_episodes import evaluate_episodes

    started = time.perf_counter()
    policy, tokenizer = load_policy(Policy(model, model))
    sampling = Sampling(samples=args.samples, seed=args.seed, temperature=temperature,
                        top_p=top_p, prompt="short")
    with Renderer() as renderer:
        result = evaluate_episodes(policy, tokenizer, Rewarder(config, renderer=renderer),
                                   sampling, turns=args.turns, love=args.love_references)
    write_json_atomic(args.out, {"recipe": args.recipe, "model": model,
                                 "samples": args.samples, "seed": args.seed,
                                 "temperature": temperature, "top_p": top_p,
                                 "love_references": args.love_references,
                                 "gate_mode": config.gate_mode, "mix": config.mix.name,
                                 **result, "seconds": round(time.perf_counter() - started, 1)})
    for turn, summary in result["by_turn"].items():
        print(f"turn {turn}: {summary['passed']}/{args.samples} pass, mean reward "
              f"{summary['mean_reward']}")
    r = result["revision"]
    print(f"revision vs first attempt over {r['episodes']} episodes: higher {r['higher']}, "
          f"lower {r['lower']}, same {r['same']}; mean gain {r['mean_gain']} "
          f"(paired t {r['paired_t']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
