"""``watercolour evaluate POLICY [--samples N] [--seed S] [--mix MIX] [--json] [--out FILE]
[--sheet PNG]``: the before/after probe of a policy (:mod:`watercolour.train.evaluate`)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from watercolour.flags import JSON, MIX, OUT, POOL, SEED, SUBJECT, command, flag, positional
from watercolour.pool.schema import DEFAULT_POOL
from watercolour.rewards.mix import PRESETS

DEFAULTS = {"samples": 8, "seed": 0, "max_new_tokens": 512, "temperature": 1.0, "top_p": 1.0,
            "prompt": "full"}
"""Sampling defaults when neither a flag nor ``--recipe`` says otherwise."""


@dataclass
class EvaluateFlags:
    """``watercolour evaluate``'s flags (a sampling flag left None falls back to the recipe's
    value, then to :data:`DEFAULTS`)."""

    policy: str = positional(help="builtin:NAME, a Hub id, a model folder or an adapter folder")
    samples: int | None = flag(type=int, help="replies to sample (default 8)")
    seed: int | None = flag(like=SEED, default=None,
                            help="base seed of sampling and of the reference draws (default 0)")
    subject: str | None = flag(like=SUBJECT, help="what to paint (default 'a peach hibiscus', "
                               "or the recipe's)")
    max_new_tokens: int | None = flag(type=int, help="tokens a reply may have (default 512, or "
                                      "the recipe's completion length)")
    temperature: float | None = flag(type=float, help="sampling temperature, 0 for greedy "
                                     "(default 1, or the recipe's)")
    top_p: float | None = flag(type=float, help="nucleus sampling mass (default 1, or the "
                               "recipe's)")
    prompt: str | None = flag(choices=("full", "short"),
                              help="full: the system prompt + the request; short: the request "
                              "alone (default full, or the recipe's)")
    recipe: str | None = flag(help="sample and score as this training recipe's runs do (e.g. "
                              "tiny-cpu: its temperature, top-p, completion length, prompt, "
                              "subject, mix and gate mode); flags given override it")
    mix: str | None = flag(like=MIX, help=f"the reward mix: {', '.join(PRESETS)} or weights "
                           "such as judge=0.5,hps=0.3,pigment=0.1 (default the "
                           "WATERCOLOUR_*_WEIGHT variables, else judge-led; with no pool "
                           "found, hps-only)")
    pool: str | None = flag(like=POOL, help="the reference pool (default WATERCOLOUR_POOL, "
                            f"else {DEFAULT_POOL})")
    gate_mode: str | None = flag(choices=("library", "allowlist"),
                                 help="default WATERCOLOUR_GATE_MODE, else library")
    group: int = flag(type=int, default=8,
                      help="replies that share one reference draw (default 8)")
    love_references: int | None = flag(type=int, help="how many of each group's references "
                                       "come from the love tier (default half; all of them: "
                                       "a harder bar)")
    batch: int = flag(type=int, default=8, help="replies generated at once (default 8)")
    json: bool = flag(like=JSON, help="print the summary as JSON (the rows, each reply "
                      "included, go to --out)")
    out: Path | None = flag(like=OUT, help="write everything (summary + one row per reply) as "
                            "JSON here")
    sheet: Path | None = flag(type=Path, help="write a contact sheet (every sample, in order) "
                              "as a PNG here")


def add_parser(verbs: argparse._SubParsersAction, name: str) -> None:
    command(
        verbs, name, EvaluateFlags, run,
        help="sample a policy with fixed seeds and score it: gate-pass rate, reasons, reward",
        description="Sample POLICY's replies to the painting request with fixed seeds (the "
        "same arguments give the same replies), score them with the reward a run uses (gate, "
        "judge, scorer under a mix) and summarise: the gate-pass rate, why the gate rejected, "
        "the reward's mean and spread, optionally a contact sheet. POLICY: a builtin "
        "(builtin:smollm2-135m-instruct, builtin:tiny-painter, ...; built or converted the "
        "first time, then cached), a Hub id, a local model folder, or an adapter folder "
        "(a --lora run's final/) over its base. Run it before and after training.",
    )


def settings_from(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """The :class:`~watercolour.train.evaluate.Sampling` and the reward options (mix, gate
    mode) from the flags over the recipe over the defaults."""
    from watercolour.train.evaluate import Sampling, recipe_sampling

    recipe = recipe_sampling(args.recipe) if args.recipe else {}
    chosen: dict[str, Any] = {}
    for key in ("samples", "seed", "subject", "max_new_tokens", "temperature", "top_p",
                "prompt", "mix", "gate_mode"):
        given = getattr(args, key)
        value = given if given is not None else recipe.get(key)
        chosen[key] = value if value is not None else DEFAULTS.get(key)
    reward = {"mix": chosen.pop("mix"), "gate_mode": chosen.pop("gate_mode")}
    if chosen["subject"] is None:
        chosen.pop("subject")
    return Sampling(**chosen, batch=args.batch), reward


def run(args: argparse.Namespace) -> int:
    from watercolour.cli.gate import LazyRenderer
    from watercolour.io import write_json_atomic
    from watercolour.models.registry import resolve_policy
    from watercolour.rewards import Rewarder
    from watercolour.train.evaluate import evaluate
    from watercolour.train.evaluate import reward_config as make_config

    sampling, reward = settings_from(args)
    config, note = make_config(reward["mix"], args.pool, reward["gate_mode"])
    if note:
        print(f"watercolour evaluate: {note}", file=sys.stderr)
    # a builtin is built before a browser is started; what building it prints goes to stderr
    # (--json prints only the summary)
    with contextlib.redirect_stdout(sys.stderr):
        policy = resolve_policy(args.policy)
    renderer = LazyRenderer()
    try:
        result = evaluate(policy, Rewarder(config, renderer=renderer), sampling,
                          group=args.group, sheet=args.sheet, love=args.love_references)
    finally:
        renderer.close()
    result = {"recipe": args.recipe, "note": note, **result}
    if args.out is not None:
        write_json_atomic(args.out, result)
    summary = {k: v for k, v in result.items() if k != "rows"}
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print_human(summary)
    return 0


def print_human(s: dict[str, Any]) -> None:
    reward = s["reward"]
    spread = "-" if reward["mean"] is None else \
        f"{reward['mean']:.3f} ± {reward['std']:.3f} [{reward['min']:.3f}, {reward['max']:.3f}]"
    print(f"{s['policy']}: {s['passed']}/{s['samples']} pass the {s['gate_mode']} gate "
          f"(temperature {s['temperature']}, top-p {s['top_p']}, {s['max_new_tokens']} new "
          f"tokens, {s['prompt']} prompt, seed {s['seed']})")
    if s["rejection_reasons"]:
        print("rejected for: " + ", ".join(f"{k} {v}" for k, v in
                                           s["rejection_reasons"].items()))
    print(f"reward ({s['mix']} mix): {spread}; unavailable {s['unavailable']}")
    print(f"{s['seconds']} s (load {s['load_s']}, sampling {s['sampling_s']})"
          + (f"; sheet {s['sheet']}" if s["sheet"] else ""))
