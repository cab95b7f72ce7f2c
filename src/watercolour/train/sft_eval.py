"""Before and after training: the same policy sampled on the same seeds, before (``--before``,
e.g. the base model or a warm start) and after (``--after``: ``watercolour sft``'s ``final/``,
or a GRPO run's adapter), scored by one reward, side by side.

    watercolour compare --before builtin:smollm2-135m-instruct \\
        --after runs/sft-smollm2/final --pool runs/main/pool --gate-mode allowlist \\
        --samples 32 --max-new-tokens 1024 --temperature 0.8 --top-p 0.95 --prompt short \\
        --out src/watercolour/results/sft/smollm2

writes ``OUT/eval.json`` (``{"samples": N, "before": {...}, "after": {...}, "paired":
{...}}``: each side's gate pass rate, rejection reasons, reward mean and spread, and one row per
sample without its text; ``paired``: after minus before, sample by sample, its mean, sd and
t) and ``OUT/before.png`` / ``OUT/after.png`` (every sample's render or why it was
rejected, in order). The work is :func:`watercolour.train.evaluate.evaluate`'s.
``--love-references N`` draws N of each group's references from the pool's love tier (4:
love only, the bar the training's half-love references do not set).

A side already in ``OUT/eval.json`` for the same policy, sampling, group, mix and gate is kept,
not sampled again: ``--before`` alone can run while the warm start still trains, and the run
with ``--after`` then adds its side (a changed setting starts the file afresh).
``--keep-before FOLDER`` takes the before side from another comparison's folder instead (its
``eval.json`` side and ``before.png``), when it was sampled the same way: a second trained
policy is then compared with the very samples of the first comparison's warm start.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from watercolour.flags import MIX, OUT, POOL, SEED, flag, parser_for
from watercolour.gates.verdict import MODES, GateConfig
from watercolour.rewards.mix import DEFAULT_MIX
from watercolour.train.evaluate import GROUP, PROMPTS, Sampling

SIDES = ("before", "after")
KEPT = ("policy", "model", "adapter", "gate_mode", "mix", "passed", "pass_rate",
        "rejection_reasons", "violations", "unavailable", "mean_reward", "reward",
        "mean_reward_of_passed", "reward_of_passed", "load_s", "sampling_s", "seconds")
"""What each side keeps of an evaluation (its sampling is the file's own)."""


def side_record(result: dict[str, Any]) -> dict[str, Any]:
    """One side of the comparison: the summary, and the rows without the replies' text (their
    length kept)."""
    rows = [{k: v for k, v in row.items() if k != "reply"} | {"reply_chars": len(row["reply"])}
            for row in result["rows"]]
    return {**{k: result.get(k) for k in KEPT}, "rows": rows}


def kept_sides(out: Path, record: dict[str, Any], policies: dict[str, str],
               reward: dict[str, Any]) -> dict[str, Any]:
    """The sides of ``out/eval.json`` that stand: same sampling and group as ``record``, the
    same policy, mix and gate mode as asked now (``reward``: ``mix``, ``gate_mode``)."""
    path = out / "eval.json"
    if not path.is_file():
        return {}
    import json

    old = json.loads(path.read_text())
    return {side: old[side] for side, policy in policies.items()
            if isinstance(old.get(side), dict)
            and not differences(old, record, side, policy, reward)}


def differences(old: dict[str, Any], record: dict[str, Any], side: str, policy: str,
                reward: dict[str, Any]) -> list[str]:
    """What keeps ``old`` (an ``eval.json``)'s ``side`` from standing in ``record`` (its
    :func:`header`): the sampling settings that differ, then the side's policy, mix or gate."""
    differ = [k for k in ("samples", "sampling", "group", "love_references")
              if old.get(k) != record[k]]
    return differ + [k for k, v in {"policy": policy, **reward}.items()
                     if old[side].get(k) != v]


def header(sampling: Sampling, group: int, love: int | None) -> dict[str, Any]:
    """What ``eval.json`` says of how both sides were sampled."""
    return {"samples": sampling.samples, "sampling": asdict(sampling), "group": group,
            "love_references": love}


def borrowed_before(source: Path, record: dict[str, Any], policy: str,
                    reward: dict[str, Any]) -> dict[str, Any]:
    """The before side of ``source/eval.json`` when it was sampled as ``record`` (its
    :func:`header`) asks, by ``policy``, mix and gate (``reward``); anything else is an
    :class:`~watercolour.errors.InputError` naming what differs. ``source/before.png`` must be
    there too."""
    import json

    from watercolour.errors import InputError

    path, sheet = source / "eval.json", source / "before.png"
    if not path.is_file() or not sheet.is_file():
        raise InputError(f"--keep-before {source}: needs eval.json and before.png there")
    try:
        old = json.loads(path.read_text())
    except ValueError as error:
        raise InputError(f"--keep-before {path}: not JSON ({error})") from None
    if not isinstance(old, dict) or not isinstance(old.get("before"), dict):
        raise InputError(f"--keep-before {path}: holds no before side")
    differ = differences(old, record, "before", policy, reward)
    if differ:
        raise InputError(f"--keep-before {path}: its before side was not sampled as this "
                         f"comparison asks ({', '.join(differ)} differ)")
    return old["before"]


def paired(record: dict[str, Any]) -> dict[str, Any] | None:
    """After minus before, sample by sample (the same seed; a rejected reply scores 0): the
    mean difference, its sd, the paired t and n; ``None`` until both sides are in."""
    import pandas as pd

    from watercolour.analysis.turns import paired_gain

    if not all(isinstance(record.get(side), dict) for side in SIDES):
        return None
    before, after = (pd.Series([row["reward"] for row in record[side]["rows"]], dtype=float)
                     for side in SIDES)
    return paired_gain(after, before)


def compare(policies: dict[str, str], sampling: Sampling, rewarder: Any, out: Path,
            group: int = GROUP, love: int | None = None,
            keep_before: Path | None = None) -> dict[str, Any]:
    """Evaluate each of ``policies`` (``{"before": ..., "after": ...}``) with ``sampling`` and
    ``rewarder`` (``love`` of each group's references from the love tier; default half);
    write ``eval.json`` and one contact sheet per side into ``out``. A side ``out/eval.json``
    already holds for the same settings is kept (:func:`kept_sides`); ``keep_before``:
    another comparison's folder whose before side is taken instead (:func:`borrowed_before`)."""
    from watercolour.io import write_bytes_atomic, write_json_atomic
    from watercolour.train.evaluate import evaluate

    record = header(sampling, group, love)
    reward = {"mix": rewarder.config.mix.name, "gate_mode": rewarder.config.gate_mode}
    borrowed = None if keep_before is None else \
        borrowed_before(keep_before, record, policies["before"], reward)
    out.mkdir(parents=True, exist_ok=True)
    record |= kept_sides(out, record, policies, reward)
    if borrowed is not None and "before" not in record:
        write_bytes_atomic(out / "before.png", (keep_before / "before.png").read_bytes())
        record["before"] = borrowed
    for side, policy in policies.items():
        if side in record and (out / f"{side}.png").is_file():
            continue
        result = evaluate(policy, rewarder, sampling, group=group, sheet=out / f"{side}.png",
                          love=love)
        record[side] = side_record(result)
        write_json_atomic(out / "eval.json", record)  # a side at a time: a crash keeps one
    record["paired"] = paired(record)
    write_json_atomic(out / "eval.json", record)
    return record


def headline(record: dict[str, Any]) -> str:
    """One line per side: pass rate, reasons, mean reward; then the paired difference."""
    lines = []
    for side in SIDES:
        s = record.get(side)
        if s:
            lines.append(f"{side}: {s['passed']}/{record['samples']} pass the {s['gate_mode']} "
                         f"gate ({s['rejection_reasons']}); mean reward {s['mean_reward']}")
    gain = record.get("paired")
    if gain:
        lines.append(f"after - before, sample by sample: mean {gain['mean']} (sd {gain['sd']}, "
                     f"paired t {gain['t']}, n {gain['n']})")
    return "\n".join(lines)


@dataclass
class SftEvalFlags:
    """``watercolour compare``'s flags (the sampling ones: :class:`Sampling`'s
    fields, with this comparison's defaults; ``--out``, ``--pool``, ``--mix`` and ``--seed``
    the shared flags of :mod:`watercolour.flags`)."""

    before: str = flag(required=True, help="the policy before (builtin, folder)")
    after: str | None = flag(help="the policy after (a model folder); left out, only the "
                             "before side is sampled (a later run with it keeps that side)")
    out: Path = flag(like=OUT, required=True, help="where eval.json and the contact sheets go")
    pool: str | None = flag(like=POOL, help="the reference pool (the judge's)")
    mix: str = flag(like=MIX, default=DEFAULT_MIX, help=None)
    gate_mode: str = flag(choices=MODES, default=GateConfig.mode)
    samples: int = flag(type=int, default=32)
    seed: int = flag(like=SEED, default=Sampling.seed)
    max_new_tokens: int = flag(type=int, default=2560)
    temperature: float = flag(type=float, default=0.7)
    top_p: float = flag(type=float, default=0.95)
    prompt: str = flag(choices=PROMPTS, default=Sampling.prompt)
    batch: int = flag(type=int, default=Sampling.batch)
    love_references: int | None = flag(type=int, help="how many of each group's references "
                                       "come from the pool's love tier (default half; 4: love "
                                       "only)")
    keep_before: Path | None = flag(type=Path, metavar="FOLDER", help="another comparison's "
                                    "folder: its before side (sampled the same way) and "
                                    "before.png are reused, not sampled again")


def main(argv: list[str] | None = None, prog: str = "watercolour compare") -> int:
    """Compare ``--before`` with ``--after``; print one line per side."""
    from watercolour.errors import InputError
    from watercolour.render import Renderer
    from watercolour.rewards import Rewarder
    from watercolour.train.evaluate import reward_config

    args = parser_for(SftEvalFlags, prog=prog,
                      description=__doc__.split("\n\n")[0]).parse_args(argv)
    sampling = Sampling(samples=args.samples, seed=args.seed, max_new_tokens=args.max_new_tokens,
                        temperature=args.temperature, top_p=args.top_p, prompt=args.prompt,
                        batch=args.batch)
    config, _ = reward_config(args.mix, args.pool, args.gate_mode)
    love = args.love_references
    if love is not None and not 0 <= love <= config.references:
        raise InputError(f"--love-references must be from 0 to {config.references} (the "
                         f"references a group), got {love}")
    policies = {"before": args.before} | ({"after": args.after} if args.after else {})
    if args.keep_before is not None:  # refused before the browser starts
        borrowed_before(args.keep_before, header(sampling, GROUP, love), args.before,
                        {"mix": config.mix.name, "gate_mode": config.gate_mode})
    with Renderer() as renderer:
        record = compare(policies, sampling, Rewarder(config, renderer=renderer), args.out,
                         love=love, keep_before=args.keep_before)
    print(headline(record), file=sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
