"""Can the embedded reward be gamed? A red-team search against it, before and after.

    python benchmarks/reward_robustness.py --pool runs/main/pool   # the main command's
                                                                   # starter pool (96)

The reward is the one a new user trains against: the ``judge-led`` mix, the allowlist gate,
the embedded judge and scorer, four references, the mean over seeds 0-2 (render seed and
reference seed), the subject ``a peach hibiscus``. Steps, all measured in one run:

1. fit the pool-fitted judge and the banded scorer on the pool;
2. red team (:func:`watercolour.analysis.redteam.search`): per adversarial family, random
   sketches and mutations of the best (the issue's gamed sketches are starting points),
   scored at seed 0; the abstract families' winners become negatives, the judge is refitted,
   and the search runs again, until their best stays :data:`MARGIN` below the pool's ``love``
   median and the example (at most ``--rounds``; the painting families, another subject and
   a painting with confetti, are measured but never made negatives: see ``Family.abstract``);
3. every family's best, the ``peach_hibiscus`` example and the pool's ``love`` paintings
   (leave-one-out: references drawn without the painting, which the judge measures against
   the others) are scored at seeds 0-2, each seed on its own too, under every mix: every
   attack must be rejected, or below the example on the same seed, under ``judge-led`` and
   ``hps-only`` (:data:`SEED_MIXES`); the near-copy check re-renders the pool paintings a
   rollout looks like at its seed, as the rewarder does;
   the gate's attack fixtures (every ``adversarial_*.js`` and flat flood ``shapeless_*.js``
   in ``watercolour.gates.fixtures``, read when the benchmark runs) are gated at seeds 0-2
   and scored where admitted;
   the near copies' thresholds are measured on both sides (:func:`copy_distribution`);
4. subject: the pool's ``love`` paintings scored as their own subject and as another one;
5. held-out accuracy (5-fold by painting), order and repeat agreement, the scoring cost per
   rollout against a render's;
6. **before**: the same candidates scored by the reward as it was at ``--before`` (a git
   revision; its source is unpacked to a temporary folder and run in a subprocess).

Renders are cached under ``--cache`` (a rerun renders nothing it has seen). Writes
``benchmarks/results/reward-robustness.json`` and prints the targets with pass/fail.

A subset, for a shared two-core machine (a whole run renders about a thousand sketches, more
than an hour there):
``--families`` searches only the families named (patterns), ``--no-held-out`` skips the
held-out fits. Issue 39's record (``reward-robustness-issue39.json``) is::

    python benchmarks/reward_robustness.py --pool runs/main/pool \
        --families 'copy_*,near_copy_*,flood' --no-held-out --before c533728 \
        --results benchmarks/results/reward-robustness-issue39.json

(the disguised-copy, near-copy and flat-flood families searched; every fixed gamed sketch
(the earlier rounds' attacks, held out), fixture and copy measurement as in the whole run;
``before``: the reward before issue 39). Issue 39's attacks (the ``issue 39 attacks`` rows of
``targets``): those families, the disguised pool copies among the gamed sketches and every
fixture (the trampolines, the string timer, the flat floods).
"""

from __future__ import annotations

import argparse
import base64
import fnmatch
import inspect
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parent.parent
SUBJECT = "a peach hibiscus"
OTHER = {"hibiscus": "a gold sunflower"}
"""The subject a painting is misdescribed as (a hibiscus as a sunflower, anything else as a
hibiscus)."""
SEEDS = (0, 1, 2)
DAISY = "a white daisy"
DRAWS = 10
"""Reference draws (seeds 0-9) on which the example must score lower as a daisy than as the
hibiscus it is."""
MARGIN = 0.05
"""The search's best must stay this far below both the love median and the example (at
seed 0), else its winners become negatives and the judge is refitted."""
BEFORE = "e65d96e"
"""The last revision before the pool-bounded judge."""


# ---------------------------------------------------------------- scoring (old or new code)


PIGMENT_MIX = "judge+pigment"
PIGMENT_WEIGHTS = {"judge": 0.5, "hps": 0.3, "pigment": 0.1}
"""A mix that weighs the pigment term (the code before the rubric has none: None there)."""
MIXES: tuple[str, ...] = ("judge-led", "hps-led", "hps-only", PIGMENT_MIX)
"""Every candidate is scored under each mix (one judge call and one scorer call serve all)."""
_DETECTORS: dict[int, Any] = {}
_PIGMENT: dict[int, Any] = {}


def _pigment(pool, png: bytes, subject: str) -> float | None:
    """The pigment term of the reward in use (None where the reward has none)."""
    try:
        from watercolour.rewards.pigment import PigmentBands
    except ImportError:
        return None
    key = hash(tuple(sorted(p.id for p in pool.paintings)))
    if key not in _PIGMENT:
        _PIGMENT[key] = PigmentBands.fit(pool)
    return round(_PIGMENT[key].score(png, subject)[0], 4)


def _total(name: str, length: float, judged: float | None, hps: float,
           pigment: float | None) -> float | None:
    """The total under the mix ``name``, with the old code's ``combine`` or the rubric's."""
    from watercolour.rewards import Mix, combine

    if name == PIGMENT_MIX:
        if pigment is None:
            return None
        mix = Mix.from_weights(**PIGMENT_WEIGHTS)
    else:
        mix = Mix.preset(name)
    try:
        return combine(mix, {"gate": 1.0, "length": length, "judge": judged, "hps": hps,
                             "pigment": pigment})[0]
    except TypeError:  # the code before the rubric: combine(mix, status, length, judge, hps)
        return combine(mix, "ok", length, judged, hps)[0]


COPY_RENDER: Callable[[str, int], bytes | None] | None = None
"""Renders a pool sketch at a rollout's seed for the near-copy check (set by :func:`main`: the
benchmark's render cache; None in the old code's subprocess)."""


def _copy_rule(pool, png: bytes, code: str, seed: int):
    """The near-copy check of the reward in use, at the rollout's ``seed`` (None where the
    reward has none: the code before issue 25; the code before issue 39 re-renders nothing)."""
    try:
        from watercolour.rewards.copies import CopyDetector
    except ImportError:
        return None
    key = hash(tuple(sorted(p.id for p in pool.paintings)))
    if key not in _DETECTORS:
        seeded = "render" in inspect.signature(CopyDetector.__init__).parameters
        _DETECTORS[key] = CopyDetector.from_pool(pool, render=COPY_RENDER) if seeded \
            else CopyDetector.from_pool(pool)
    detector = _DETECTORS[key]
    if "seed" in inspect.signature(detector.check).parameters:
        return detector.check(code, png, seed=seed)
    return detector.check(code, png)


def _draw(pool, seed: int, references: int, subject: str):
    from watercolour.rewards import draw_references

    try:
        return draw_references(pool, seed, references, subject=subject)
    except TypeError:  # the code before issue 25 draws from the whole pool
        return draw_references(pool, seed, references)


def reward_of(pool, judge, scorer, png: bytes, code: str, subject: str, seed: int,
              exclude: str | None = None, references: int = 4,
              copies: bool = True) -> dict[str, Any]:
    """The reward of an already gated (``ok``) render under every mix of :data:`MIXES`, as
    the rewarder computes it (the references drawn as it draws them, the caption it gives the
    scorer, its near-copy rule where it has one). Only public API that the old and the new
    code share, or looked up with a fallback."""
    from watercolour.rewards import judge_group, length_term
    from watercolour.rewards.references import ReferencePool

    try:
        from watercolour.rewards.config import HPS_PROMPT
    except ImportError:
        HPS_PROMPT = "{subject}, a watercolour painting"
    drawn_from = pool if exclude is None else ReferencePool(
        [p for p in pool.paintings if p.id != exclude], pool.source)
    refs = _draw(drawn_from, seed, references, subject)
    judged = judge_group(judge, [png], refs, subject)[0].score
    hps = scorer.score([png], HPS_PROMPT.format(subject=subject))[0].unit
    length = length_term(code)
    pigment = _pigment(drawn_from, png, subject)
    copy = _copy_rule(drawn_from, png, code, seed) if copies else None
    if copy is not None:
        judged, hps, pigment = 0.0, 0.0, (0.0 if pigment is not None else None)
    out = {"judge": judged, "hps": round(hps, 4), "length": round(length["raw"], 4),
           "pigment": pigment, "tokens": length["tokens"],
           "near_copy": copy.kind if copy is not None else None}
    for name in MIXES:
        out[name] = _total(name, length["raw"], judged, hps, pigment)
    out["reward"] = out["judge-led"]
    return out


def mean_reward(pool, judge, scorer, pngs: dict[int, bytes], code: str, subject: str,
                exclude: str | None = None, copies: bool = True) -> dict[str, Any]:
    rows = [reward_of(pool, judge, scorer, pngs[s], code, subject, s, exclude, copies=copies)
            for s in pngs]
    out: dict[str, Any] = {
        k: None if any(r[k] is None for r in rows)
        else round(statistics.mean(r[k] for r in rows), 4)
        for k in ("reward", *MIXES, "judge", "hps", "length", "pigment")}
    out["near_copy"] = next((r["near_copy"] for r in rows if r["near_copy"]), None)
    out["per_seed"] = {s: {"status": "ok", "near_copy": r["near_copy"],
                           **{m: r[m] for m in MIXES}} for s, r in zip(pngs, rows)}
    return out


def legacy_score(request_path: str) -> None:
    """Subprocess entry (old code on ``sys.path``): score a request file, print JSON."""
    from watercolour.rewards.judge.offline_judge import PoolFittedJudge
    from watercolour.rewards.references import ReferencePool

    request = json.loads(Path(request_path).read_text())
    pool = ReferencePool.load(request["pool"])
    judge = PoolFittedJudge.fit(pool)
    try:
        from watercolour.rewards.hps.offline import PoolBandedAestheticScorer
        scorer = PoolBandedAestheticScorer.fit(pool)
    except ImportError:
        from watercolour.rewards.hps.offline import HandSetAestheticScorer
        scorer = HandSetAestheticScorer()
    out = {}
    for item in request["items"]:
        pngs = {int(s): base64.b64decode(b) for s, b in item["pngs"].items()}
        out[item["key"]] = mean_reward(pool, judge, scorer, pngs, item["code"],
                                       item["subject"], item.get("exclude"))
    print(json.dumps(out))


# ---------------------------------------------------------------- the run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool", default="runs/pool", help="the starter pool's build folder")
    parser.add_argument("--cache", default="runs/reward-robustness/renders")
    parser.add_argument("--per-family", type=int, default=4)
    parser.add_argument("--generations", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3, help="search-refit rounds at most")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--before", default=BEFORE, help="git revision of the old reward "
                        "('' to skip)")
    parser.add_argument("--results", type=Path, default=RESULTS / "reward-robustness.json")
    parser.add_argument("--families", default="*", help="comma-separated name patterns of "
                        "the families to search (default all; e.g. 'copy_*,near_copy_*')")
    parser.add_argument("--no-held-out", dest="held_out", action="store_false",
                        help="skip the held-out accuracy fits (5 judge fits)")
    parser.add_argument("--legacy-score", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.legacy_score:
        legacy_score(args.legacy_score)
        return

    from watercolour.analysis.redteam import (
        FAMILIES,
        GAMED,
        RenderCache,
        disguise_sketch,
        disguised_copy_families,
        edit_sketch,
        gamed_sketch,
        near_copy_families,
        padded_with_string,
        search,
    )
    from watercolour.examples import load_example
    from watercolour.io import write_json_atomic
    from watercolour.pool import load_pool
    from watercolour.render import Renderer
    from watercolour.rewards import consistency
    from watercolour.rewards.hps.offline import STARTER_BANDS, PoolBandedAestheticScorer
    from watercolour.rewards.judge.offline_judge import PoolFittedJudge, held_out_accuracy
    from watercolour.rewards.references import ReferencePool

    started = time.monotonic()
    load = os.getloadavg()
    pool = ReferencePool.load(args.pool)
    table = load_pool(args.pool)
    codes = dict(zip(table["id"], table["sketch"]))
    subjects = dict(zip(table["id"], table["subject"]))
    love_sketches = {p.id: codes[p.id] for p in pool.tier("love")}
    families_all = {**FAMILIES, **near_copy_families(love_sketches),
                    **disguised_copy_families(love_sketches)}
    patterns = [p.strip() for p in args.families.split(",") if p.strip()]
    families_all = {k: v for k, v in families_all.items()
                    if any(fnmatch.fnmatch(k, p) for p in patterns)}
    if not families_all:
        parser.error(f"--families {args.families!r} names no family")
    scorer = PoolBandedAestheticScorer.fit(pool)
    band_drift = {k: [round(getattr(scorer.bands[k], f) - getattr(STARTER_BANDS[k], f), 4)
                      for f in ("low", "high", "width")] for k in STARTER_BANDS}
    t = time.monotonic()
    judge = PoolFittedJudge.fit(pool)
    fit_s = time.monotonic() - t
    print(f"pool {pool.counts()}, {len(pool.negatives)} negatives; judge fitted in "
          f"{fit_s:.0f} s", flush=True)

    renderer = Renderer(workers=1).start()
    cache = RenderCache(renderer, args.cache, mode="allowlist")
    render_seconds: list[float] = []
    rerender_seconds: list[float] = []

    def rerender(code: str, seed: int) -> bytes | None:
        """A pool sketch at a rollout's seed, for the near-copy check (cached on disk)."""
        before, t0 = cache.renders, time.monotonic()
        png = cache.gate(code, seed)[1]
        if cache.renders > before:
            rerender_seconds.append(time.monotonic() - t0)
        return png

    global COPY_RENDER
    COPY_RENDER = rerender

    def gated(code: str, seeds=SEEDS) -> dict[int, bytes] | None:
        out = {}
        for s in seeds:
            before = cache.renders
            t0 = time.monotonic()
            status, png = cache.gate(code, s)
            if cache.renders > before:
                render_seconds.append(time.monotonic() - t0)
            if status != "ok" or png is None:
                return None
            out[s] = png
        return out

    love_rows: dict[str, dict] = {}

    def love_median(j) -> tuple[float, dict[str, float]]:
        rewards = {}
        for p in pool.tier("love"):
            love_rows[p.id] = mean_reward(pool, j, scorer, dict.fromkeys(SEEDS, p.png),
                                          codes[p.id], subjects[p.id] or SUBJECT,
                                          exclude=p.id)
            rewards[p.id] = love_rows[p.id]["reward"]
        return statistics.median(rewards.values()), rewards

    # ------------------------------------------------------------ search, refit, repeat
    start_points: dict[str, list[dict]] = {}
    for _, (family, params) in GAMED.items():
        start_points.setdefault(family, []).append(params)
    red_negatives: list[bytes] = []
    rounds = []
    finds = {}
    example_code = load_example("peach_hibiscus")
    example_pngs = gated(example_code)
    for r in range(args.rounds):
        median, _ = love_median(judge)
        example_now = reward_of(pool, judge, scorer, example_pngs[0], example_code, SUBJECT,
                                0)["reward"]  # at seed 0, as the search scores
        bar = min(median, example_now) - MARGIN

        def score(code: str, j=judge) -> tuple[float | None, dict]:
            pngs = gated(code, (0,))
            if pngs is None:
                return None, {}
            row = reward_of(pool, j, scorer, pngs[0], code, SUBJECT, 0)
            return row["reward"], row

        finds = search(score, families_all, per_family=args.per_family,
                       generations=args.generations, seed=r, start=start_points)
        best = {name: f[0].reward for name, f in finds.items() if f}
        top = max(best.values())
        rounds.append({"round": r, "love_median": round(median, 4),
                       "example": round(example_now, 4), "bar": round(bar, 4), "best": best,
                       "renders_so_far": cache.renders, "negatives_added": 0})
        print(f"round {r}: love median {median:.3f}, example {example_now:.3f}, search best "
              f"{top:.3f} ({max(best, key=best.get)})", flush=True)
        for name, found in finds.items():  # the best found start the next round
            start_points[name] = [f.params for f in found[:2]]
        abstract_top = max((v for k, v in best.items() if families_all[k].abstract),
                           default=0.0)
        if abstract_top < bar or r == args.rounds - 1:
            break
        winners = [f for name, found in finds.items() if families_all[name].abstract
                   for f in found[:3] if f.reward >= bar - 0.1]
        for f in winners:
            red_negatives.append(gated(f.code, (0,))[0])
        rounds[-1]["negatives_added"] = len(winners)
        judge = PoolFittedJudge.fit(pool, negatives=red_negatives)

    # ------------------------------------------------------------ the final table
    example = mean_reward(pool, judge, scorer, example_pngs, example_code, SUBJECT)
    median, love_rewards = love_median(judge)
    families = {}
    scored_finds: dict[str, dict] = {}  # every find scored at seeds 0-2, for the per-seed bar
    candidates = {"example": (example_pngs, example_code, SUBJECT, None)}
    for name, found in finds.items():
        for i, f in enumerate(found[:2]):
            pngs = gated(f.code)
            if pngs is None:
                continue
            row = mean_reward(pool, judge, scorer, pngs, f.code, SUBJECT)
            scored_finds[f"{name}#{i}"] = row
            candidates[f"{name}#{i}"] = (pngs, f.code, SUBJECT, None)
            if name not in families or row["reward"] > families[name]["reward"]:
                families[name] = {**row, "params": f.params}
    gamed = {}
    for name in GAMED:
        code = gamed_sketch(name)
        pngs = gated(code)
        gamed[name] = mean_reward(pool, judge, scorer, pngs, code, SUBJECT)
        candidates[f"gamed:{name}"] = (pngs, code, SUBJECT, None)
    from watercolour.rewards.judge.offline_judge import subject_key

    def first_love(key: str) -> str:
        return next(p.id for p in pool.tier("love") if subject_key(subjects[p.id]) == key)

    hibiscus, sunflower = first_love("hibiscus"), first_love("sunflower")
    fixed = {  # name -> (code, subject)
        "pool_copy": (codes[hibiscus], SUBJECT),
        "pool_copy_string_12k": (padded_with_string(codes[hibiscus], 12000), SUBJECT),
        "pool_copy_rewritten": (edit_sketch(codes[hibiscus], "rewrite", 0.0, 1), SUBJECT),
        "pool_sunflower_as_hibiscus": (codes[sunflower], SUBJECT),
        # issue 39: the pool painting disguised, whatever way up
        "pool_copy_mirrored_rewritten": (disguise_sketch(codes[hibiscus], "mirror_x",
                                                         rewrite="product"), SUBJECT),
        "pool_copy_mirrored": (disguise_sketch(codes[hibiscus], "mirror_y"), SUBJECT),
        "pool_copy_rotated": (disguise_sketch(codes[hibiscus], "rot90", rewrite="quotient"),
                              SUBJECT),
        "pool_copy_shifted": (disguise_sketch(codes[hibiscus], shift=(50, -40),
                                              rewrite="sum", seed=3), SUBJECT),
        "pool_copy_scaled": (disguise_sketch(codes[hibiscus], scale=0.8, rewrite="product"),
                             SUBJECT),
        "example_as_sunflower": (example_code, OTHER["hibiscus"]),
        "example_as_daisy": (example_code, DAISY),
    }
    for name, (code, subject) in fixed.items():
        pngs = example_pngs if code == example_code else gated(code)
        gamed[name] = mean_reward(pool, judge, scorer, pngs, code, subject)
        candidates[f"gamed:{name}"] = (pngs, code, subject, None)
    # the judge's subject check on every reference draw: the example as a daisy vs itself
    draws = []
    for s in range(DRAWS):
        own_row = reward_of(pool, judge, scorer, example_pngs[s % 3], example_code, SUBJECT, s)
        daisy_row = reward_of(pool, judge, scorer, example_pngs[s % 3], example_code, DAISY, s)
        draws.append({"seed": s, "hibiscus": own_row["judge-led"],
                      "daisy": daisy_row["judge-led"],
                      "judge_hibiscus": own_row["judge"], "judge_daisy": daisy_row["judge"]})
        candidates[f"draw:{s}:hibiscus"] = ({s: example_pngs[s % 3]}, example_code, SUBJECT,
                                            None)
        candidates[f"draw:{s}:daisy"] = ({s: example_pngs[s % 3]}, example_code, DAISY, None)
    for p in pool.tier("love"):
        candidates[f"love:{p.id}"] = (dict.fromkeys(SEEDS, p.png), codes[p.id],
                                      subjects[p.id] or SUBJECT, p.id)

    # subject: each love painting as its own subject and as another
    own, other, hps_own, hps_other = [], [], [], []
    for p in pool.tier("love"):
        asked = subjects[p.id] or SUBJECT
        wrong = OTHER.get(subject_key(asked) or "", SUBJECT)
        pngs = dict.fromkeys(SEEDS, p.png)
        row = mean_reward(pool, judge, scorer, pngs, codes[p.id], asked, p.id)
        own.append(row["reward"])
        hps_own.append(row["hps"])
        row = mean_reward(pool, judge, scorer, pngs, codes[p.id], wrong, p.id)
        other.append(row["reward"])
        hps_other.append(row["hps"])

    # cost: features of a fresh picture + the 8 comparisons + the scorer, against a render
    from watercolour.rewards.negatives import with_confetti

    fresh = [with_confetti(example_pngs[0], 3, seed=1000 + i) for i in range(5)]
    t = time.monotonic()
    for png in fresh:
        reward_of(pool, judge, scorer, png, example_code, SUBJECT, 0)
    score_s = (time.monotonic() - t) / len(fresh)
    print("adversarial fixtures...", flush=True)
    fixtures = fixture_attacks(cache, lambda png, code, seed: reward_of(
        pool, judge, scorer, png, code, SUBJECT, seed))
    print("near-copy distribution...", flush=True)
    copy_check = copy_distribution(pool, codes, subjects, gated, COPY_RENDER)
    renderer.close()

    held = None
    if args.held_out:
        print("held-out accuracy (5-fold fits)...", flush=True)
        held = held_out_accuracy(pool, folds=args.folds)
    love = [p.png for p in pool.tier("love")]
    okay = [p.png for p in pool.tier("okay")]
    pairs = list(zip(love[:12], okay[:12]))
    agree = consistency(judge, pairs, SUBJECT, repeats=2, self_pairs=love[:3])

    before = None
    if args.before:
        before = score_before(args.before, args.pool, candidates)

    # ------------------------------------------------------------ targets
    attacks = {**{f"family:{k}": v for k, v in families.items()},
               **{f"gamed:{k}": v for k, v in gamed.items()}}
    padding = {k for k in attacks if k == "family:padded" or (k.startswith("gamed:example_")
               and not k.startswith("gamed:example_as_"))}
    strict = {k: v for k, v in attacks.items() if k not in padding}
    copies = {k: v for k, v in attacks.items() if "near_copy" in k or "pool_" in k}
    subject_blind = [v["hps"] for k, v in attacks.items()
                     if k in ("family:target", "family:palette_dots", "family:other_subject",
                              "gamed:peach_target", "gamed:peach_dots")]
    adversarial_best = max(v["reward"] for v in families.values())
    # per seed and mix: every attack rejected on that seed or below the example there
    per_seed = {**{f"family:{k}": v["per_seed"] for k, v in scored_finds.items()},
                **{f"gamed:{k}": v["per_seed"] for k, v in gamed.items()},
                **{f"fixture:{k}": v for k, v in fixtures.items()}}
    issue39 = {k for k in per_seed if k.startswith(("family:copy_", "gamed:pool_copy_",
                                                    "fixture:", "family:near_copy_",
                                                    "family:flood#"))}
    strict_seeded = {k for k in per_seed if k.split("#")[0] not in padding}
    bar = {"issue 39 attacks": issue39, "every attack": strict_seeded}
    above = {f"{group} ({mix})": paying(per_seed, keys, example["per_seed"], mix)
             for group, keys in bar.items() for mix in SEED_MIXES}
    disguised = {k: v for k, v in per_seed.items()
                 if k.startswith(("family:copy_", "gamed:pool_copy_"))}
    targets = {
        **{f"{name}: rejected or below the example on every seed": not found
           for name, found in above.items()},
        "every disguised copy caught on every seed": all(
            r["near_copy"] for v in disguised.values() for r in v.values()),
        "disguised copies of 6 pool paintings caught on every seed": copy_check[
            "disguised_caught"] == copy_check["disguised_made"],
        "no pool painting caught as a copy of another, at any seed":
            copy_check["pool_at_seed"]["caught"] == 0,
        "no example sketch caught": copy_check["examples"]["caught"] == 0,
        **{f"every attack below the example ({mix})":
           max(v[mix] for v in strict.values()) < example[mix] for mix in MIXES},
        "every family below the love median": adversarial_best < median,
        "padding does not raise the length term": all(
            attacks[k]["length"] <= example["length"] for k in padding)
        and gamed["pool_copy_string_12k"]["length"] <= gamed["pool_copy"]["length"],
        "every near-copy is caught": all(v["near_copy"] for v in copies.values()),
        "no pool painting is taken for a copy of another": not any(
            r["near_copy"] for r in love_rows.values())
        and copy_check["pool_vs_others"]["caught"] == 0,
        "every small-edit copy of a pool painting is caught":
            copy_check["copies_caught"] == copy_check["copies_made"],
        "hps slot: target, dots, another subject below the example": max(subject_blind)
        < example["hps"],
        "example as a daisy below itself on every draw": all(
            d["daisy"] < d["hibiscus"] for d in draws),
        "another subject clearly lower": statistics.mean(own) - statistics.mean(other) >= 0.1,
        **({"held-out love vs okay >= 0.85": (held["love_vs_okay"]["accuracy"] or 0) >= 0.85,
            "pool vs negatives >= 0.95": min(
                v for v in (held["pool_vs_negative"]["accuracy"],
                            held["pool_vs_generated"]["accuracy"]) if v is not None) >= 0.95}
           if held is not None else {}),
        "order and repeat agreement 1.0": agree["order_agreement"] == 1.0
        and agree["repeat_agreement"] == 1.0,
        "scoring under 10% of a render": score_s < 0.1 * statistics.median(render_seconds or [3]),
    }
    result = {
        "pool": {"source": args.pool, "tiers": pool.counts(), "negatives": len(pool.negatives)},
        "reward": {"mix": "judge-led", "gate": "allowlist", "references": 4,
                   "seeds": list(SEEDS), "subject": SUBJECT},
        "judge_fit_s": round(fit_s, 1), "judge_weights": judge.model.importance(),
        "scorer_bands": {k: vars(b) for k, b in scorer.bands.items()},
        "scorer_band_drift_from_starter": band_drift,
        "rounds": rounds, "red_team_negatives": len(red_negatives),
        "after": {"example": example, "love_median": round(median, 4),
                  "families": families, "gamed": gamed, "draws": draws,
                  "love_rewards": {k: round(v, 4) for k, v in love_rewards.items()},
                  "love_near_copies": {k: r["near_copy"] for k, r in love_rows.items()
                                       if r["near_copy"]},
                  "fixtures": fixtures, "paying": above},
        "before": before,
        "subject": {"own_mean": round(statistics.mean(own), 4),
                    "other_mean": round(statistics.mean(other), 4), "paintings": len(own),
                    "hps_own_mean": round(statistics.mean(hps_own), 4),
                    "hps_other_mean": round(statistics.mean(hps_other), 4)},
        "copies": copy_check,
        "held_out": held,
        "consistency": {k: v for k, v in agree.items() if k != "per_pair"},
        "cost": {"score_s_per_rollout": round(score_s, 4),
                 "render_s_median": round(statistics.median(render_seconds), 3)
                 if render_seconds else None, "renders": cache.renders,
                 "copy_rerenders": len(rerender_seconds),
                 "copy_rerender_s_median": round(statistics.median(rerender_seconds), 3)
                 if rerender_seconds else None},
        "options": {"families": args.families, "held_out": args.held_out,
                    "per_family": args.per_family, "rounds": args.rounds,
                    "before": args.before},
        "targets": targets,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "loadavg_start": [round(x, 2) for x in load],
                    "loadavg_end": [round(x, 2) for x in os.getloadavg()]},
        "seconds": round(time.monotonic() - started, 1),
    }
    write_json_atomic(args.results, result)
    print_table(result)
    print(f"wrote {args.results}")


SEED_MIXES: tuple[str, ...] = ("judge-led", "hps-only")
"""The mixes in which every attack must be rejected or below the example on every seed."""


def paying(per_seed: dict[str, dict], keys: Iterable[str], example: dict, mix: str
           ) -> dict[str, list[int]]:
    """The attacks of ``keys`` that the gate admitted on some seed and that reached the
    example's reward there under ``mix``: name -> those seeds."""
    out = {}
    for k in sorted(keys):
        seeds = [s for s, row in per_seed[k].items() if row.get("status") == "ok"
                 and row.get(mix) is not None and row[mix] >= example[s][mix]]
        if seeds:
            out[k] = seeds
    return out


FIXTURE_PATTERNS: tuple[str, ...] = ("adversarial_*.js", "shapeless_*.js")
"""The gate's attack fixtures the benchmark scores: every one in the folder, read when it
runs (the fixtures other work adds are scored too), and the flat floods (``shapeless_*``:
issue 39's r04-style floods among them)."""


def fixture_attacks(cache, score: Callable[[bytes, str, int], dict]) -> dict[str, dict]:
    """Every :data:`FIXTURE_PATTERNS` fixture of ``watercolour.gates.fixtures`` through the
    allowlist gate at seeds 0-2, and scored (``score(png, code, seed)``) where admitted:
    name -> seed -> status (and the mixes' totals, the near copy)."""
    from importlib import resources

    folder = resources.files("watercolour.gates.fixtures")
    manifest = json.loads(folder.joinpath("expected.json").read_text(encoding="utf-8"))
    out: dict[str, dict] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not any(fnmatch.fnmatch(entry.name, p) for p in FIXTURE_PATTERNS):
            continue
        code = entry.read_text(encoding="utf-8")
        deadline = manifest["cases"].get(entry.name, {}).get("deadline_s")
        rows = {}
        for seed in SEEDS:
            status, png = cache.gate(code, seed, deadline_s=deadline)
            row: dict[str, Any] = {"status": status}
            if status == "ok" and png is not None:
                scored = score(png, code, seed)
                row.update({m: scored[m] for m in MIXES}, near_copy=scored["near_copy"])
            rows[seed] = row
        out[entry.name] = rows
    return out


COPY_EDITS: tuple[tuple[str, float], ...] = (
    ("none", 0.0), ("jitter", 0.01), ("jitter", 0.03), ("jitter", 0.06), ("recolour", 0.02),
    ("recolour", 0.06), ("rename", 0.0), ("rewrite", 0.0))
"""The small edits the near-copy measurement makes to each pool painting it copies (rendered at
seed 0)."""
COPY_DISGUISES: dict[str, dict[str, Any]] = {
    "seed": {}, "mirror_x+product": {"turn": "mirror_x", "rewrite": "product"},
    "mirror_y": {"turn": "mirror_y"}, "rot90": {"turn": "rot90"},
    "rot180+quotient": {"turn": "rot180", "rewrite": "quotient"},
    "transpose": {"turn": "transpose"}, "shift": {"shift": (60, -45)},
    "scale0.75": {"scale": 0.75}, "scale1.15+sum": {"scale": 1.15, "rewrite": "sum"},
    "product": {"rewrite": "product"},
    "desync+mirror_x": {"turn": "mirror_x", "desync": True}}
"""The disguises (:func:`~watercolour.analysis.redteam.disguise_sketch`) of each copied pool
painting, rendered at seeds 0-2 (``seed``: the sketch as it is, at another seed;
``desync``: an invisible stroke first, so the picture bleeds as at another seed, which the
render comparison at the rollout's seed cannot see: recorded as ``render_blind_spots``)."""


def _summary(values: list[float]) -> dict[str, float] | None:
    import numpy as np

    if not values:
        return None
    v = np.array(values)
    return {"max": round(float(v.max()), 4), "p99": round(float(np.percentile(v, 99)), 4),
            "p90": round(float(np.percentile(v, 90)), 4),
            "median": round(float(np.median(v)), 4), "min": round(float(v.min()), 4)}


def copy_distribution(pool, codes: dict[str, str], subjects: dict[str, str], gated,
                      render: Callable[[str, int], bytes | None], n_copied: int = 6
                      ) -> dict[str, Any]:
    """Where the near-copy thresholds sit, both sides of each gap:

    - every pool painting against the others: by sketch (a detector built without it), by
      the screen (its own render), and rendered at seeds 0-2 as a rollout would be, checked
      as a rollout is (the others re-rendered at that seed): none may be caught;
    - the hand-made examples at seeds 0-2: none may be caught;
    - copies of ``n_copied`` love paintings (the first of each subject): the small edits of
      :data:`COPY_EDITS` at seed 0, and the disguises of :data:`COPY_DISGUISES` at seeds 0-2,
      each checked in full and by render alone (the sketch comparison off): all caught.
    """
    from watercolour.analysis.redteam import disguise_sketch, edit_sketch
    from watercolour.examples import example_names, load_example
    from watercolour.rewards.copies import CopyDetector, aligned_similarity, paint_of
    from watercolour.rewards.references import ReferencePool

    full = CopyDetector.from_pool(pool, render=render)
    by_render = CopyDetector.from_pool(pool, sketch_threshold=2.0, render=render)
    t = time.monotonic()
    others = []
    for p in pool.paintings:
        rest = ReferencePool([q for q in pool.paintings if q.id != p.id], pool.source)
        others.append((CopyDetector.from_pool(rest).sketch_similarity(codes[p.id])[1],
                       full.render_similarity(p.png, exclude=[p.id])[1]))
    at_seed, candidates = [], []
    for p in pool.paintings:
        for seed in SEEDS:
            png = render(codes[p.id], seed)
            if png is None:
                continue
            ranked = full.screen(png, exclude=[p.id])
            candidates.append(min(full.confirm, sum(
                1 for _, sim in ranked if sim >= full.screen_threshold)))
            found = full.check(codes[p.id], png, exclude=[p.id], seed=seed)
            at_seed.append({"painting": p.id, "seed": seed, "screen": ranked[0][1],
                            "seed_similarity": full.seed_similarity(
                                png, seed, exclude=[p.id], ranked=ranked)[1],
                            "caught": found.to_dict() if found else None})
    examples = []
    for name in example_names():
        code = load_example(name)
        for seed in SEEDS:
            pngs = gated(code, (seed,))
            if pngs is None:
                continue
            found = full.check(code, pngs[seed], seed=seed)
            examples.append({"example": name, "seed": seed,
                             "sketch": full.sketch_similarity(code)[1],
                             "screen": full.render_similarity(pngs[seed])[1],
                             "seed_similarity": full.seed_similarity(pngs[seed], seed)[1],
                             "caught": found.to_dict() if found else None})
    copied, seen = [], set()
    for p in pool.tier("love"):
        if subjects[p.id] not in seen and len(copied) < n_copied:
            copied.append(p)
            seen.add(subjects[p.id])
    copies = []
    for p in copied:
        made = [(f"{edit}:{amount:g}", edit_sketch(codes[p.id], edit, amount, 7), (0,))
                for edit, amount in COPY_EDITS]
        made += [(name, disguise_sketch(codes[p.id], **kw), SEEDS)
                 for name, kw in COPY_DISGUISES.items()]
        for name, code, seeds in made:
            for seed in seeds:
                pngs = gated(code, (seed,))
                if pngs is None:
                    continue
                png = pngs[seed]
                ranked = [pid for pid, _ in full.screen(png)]
                source = full.pool_at_seed(p.id, seed)
                found = full.check(code, png, seed=seed)
                alone = by_render.check(code, png, seed=seed)
                copies.append({
                    "painting": p.id, "copy": name, "seed": seed,
                    "sketch": full.sketch_similarity(code)[1],
                    "screen": dict(full.screen(png))[p.id], "screen_rank": ranked.index(p.id),
                    "seed_similarity": round(aligned_similarity(source, paint_of(png)), 4)
                    if source is not None else None,
                    "caught": found is not None and found.painting == p.id,
                    "caught_by_render": alone is not None and alone.painting == p.id,
                    "how": found.kind if found else None})
    by_copy: dict[str, dict] = {}
    for c in copies:
        row = by_copy.setdefault(c["copy"], {"sketch": [], "screen": [], "seed": [], "rank": [],
                                             "caught": 0, "by_render": 0, "n": 0})
        row["sketch"].append(c["sketch"])
        row["screen"].append(c["screen"])
        if c["seed_similarity"] is not None:
            row["seed"].append(c["seed_similarity"])
        row["rank"].append(c["screen_rank"])
        row["caught"] += int(c["caught"])
        row["by_render"] += int(c["caught_by_render"])
        row["n"] += 1
    disguised = [c for c in copies if c["copy"] in COPY_DISGUISES]
    seen = [c for c in disguised if "desync" not in c["copy"]]  # what the render can see
    distinct_seed = [r["seed_similarity"] for r in at_seed if r["seed_similarity"]]
    return {
        "thresholds": {"sketch": full.sketch_threshold, "render": full.render_threshold,
                       "screen": full.screen_threshold, "seed": full.seed_threshold,
                       "confirm": full.confirm},
        "gap": {
            "sketch": {"pool_max": max(a for a, _ in others),
                       "edited_copies_min": min(c["sketch"] for c in copies
                                                if c["copy"] != "rewrite:0")},
            "screen": {"pool_max": max(b for _, b in others),
                       "pool_at_seed_max": max(r["screen"] for r in at_seed),
                       "disguised_copies_min": min(c["screen"] for c in disguised)},
            "seed": {"pool_at_seed_max": max(distinct_seed, default=0.0),
                     "disguised_copies_min": min(c["seed_similarity"] for c in seen
                                                 if c["seed_similarity"] is not None),
                     "desynced_copies_max": max((c["seed_similarity"] for c in disguised
                                                 if c not in seen), default=None)},
            "source_rank_max": max(c["screen_rank"] for c in disguised)},
        "pool_vs_others": {"sketch": _summary([a for a, _ in others]),
                           "render": _summary([b for _, b in others]),
                           "caught": sum(1 for a, b in others if a >= full.sketch_threshold
                                         or b >= full.render_threshold),
                           "paintings": len(others)},
        "pool_at_seed": {"screen": _summary([r["screen"] for r in at_seed]),
                         "seed_similarity": _summary(distinct_seed),
                         "caught": sum(1 for r in at_seed if r["caught"]),
                         "renders": len(at_seed),
                         "rerenders_per_rollout": round(statistics.mean(candidates), 3)
                         if candidates else None,
                         "share_rerendered": round(sum(1 for c in candidates if c)
                                                   / len(candidates), 3) if candidates else None,
                         "caught_rows": [r for r in at_seed if r["caught"]]},
        "examples": {"caught": sum(1 for e in examples if e["caught"]),
                     "renders": len(examples),
                     "sketch_max": max((e["sketch"] for e in examples), default=None),
                     "screen_max": max((e["screen"] for e in examples), default=None),
                     "seed_similarity_max": max((e["seed_similarity"] for e in examples),
                                                default=None), "rows": examples},
        "copies": {k: {"sketch_min": round(min(v["sketch"]), 4),
                       "screen_min": round(min(v["screen"]), 4),
                       "seed_min": round(min(v["seed"]), 4) if v["seed"] else None,
                       "screen_rank_max": max(v["rank"]),
                       "caught": f"{v['caught']}/{v['n']}",
                       "caught_by_render": f"{v['by_render']}/{v['n']}"}
                   for k, v in by_copy.items()},
        "copies_caught": sum(c["caught"] for c in copies), "copies_made": len(copies),
        "disguised_caught": sum(c["caught"] for c in disguised),
        "disguised_caught_by_render": sum(c["caught_by_render"] for c in disguised),
        "render_blind_spots": sorted({c["copy"] for c in disguised
                                      if not c["caught_by_render"]}),
        "disguised_made": len(disguised),
        "seconds": round(time.monotonic() - t, 1),
        "rows": copies}


def score_before(revision: str, pool: str, candidates: dict) -> dict[str, Any] | None:
    """Score ``candidates`` with the reward as it was at ``revision`` (subprocess)."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "src"],
                                 capture_output=True, check=False)
        if archive.returncode != 0:
            print(f"before: cannot read revision {revision}: {archive.stderr.decode()[:200]}")
            return None
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        request = {"pool": str(Path(pool).resolve()), "items": [
            {"key": k, "code": code, "subject": subject, "exclude": exclude,
             "pngs": {str(s): base64.b64encode(b).decode() for s, b in pngs.items()}}
            for k, (pngs, code, subject, exclude) in candidates.items()]}
        path = Path(tmp) / "request.json"
        path.write_text(json.dumps(request))
        env = {**os.environ, "PYTHONPATH": str(Path(tmp) / "src")}
        done = subprocess.run([sys.executable, __file__, "--legacy-score", str(path)],
                              capture_output=True, text=True, env=env, cwd=tmp, check=False)
        if done.returncode != 0:
            print(f"before: the old reward failed: {done.stderr[-500:]}")
            return None
        scored = json.loads(done.stdout.strip().splitlines()[-1])
    families: dict[str, dict] = {}
    for key, row in scored.items():
        if "#" in key:
            name = key.split("#")[0]
            if name not in families or row["reward"] > families[name]["reward"]:
                families[name] = row
    love = [row["reward"] for k, row in scored.items() if k.startswith("love:")]
    draws = [{"seed": int(k.split(":")[1]), "hibiscus": row["judge-led"],
              "daisy": scored[k.replace(":hibiscus", ":daisy")]["judge-led"]}
             for k, row in scored.items() if k.startswith("draw:") and k.endswith(":hibiscus")]
    return {"revision": revision, "example": scored["example"],
            "love_median": round(statistics.median(love), 4), "families": families,
            "gamed": {k.split(":", 1)[1]: v for k, v in scored.items()
                      if k.startswith("gamed:")}, "draws": draws}


def print_table(result: dict[str, Any]) -> None:
    after, before = result["after"], result["before"] or {}

    def cells(row: dict | None) -> str:
        if not row:
            return " ".join(["   -  "] * len(MIXES))
        values = [row.get(m, row.get("reward")) for m in MIXES]
        return " ".join("   -  " if v is None else f"{v:6.3f}" for v in values)

    head = "  ".join(m[:8].rjust(6) for m in MIXES)
    print(f"\n{'':30s} before: {head}   after: {head}")
    rows = [(f"{name}", before.get("families", {}).get(name), row)
            for name, row in after["families"].items()]
    rows += [(f"gamed:{name}", before.get("gamed", {}).get(name), row)
             for name, row in after["gamed"].items()]
    rows.append(("peach_hibiscus example", before.get("example"), after["example"]))
    for name, b, a in rows:
        flag = f"  near_copy: {a['near_copy']}" if a.get("near_copy") else ""
        print(f"  {name:28s} {cells(b)}        {cells(a)}{flag}")
    print(f"  {'love median (LOO, judge-led)':28s} {before.get('love_median', '-'):>6}  "
          f"{'':14s}        {after['love_median']:>6}")
    if after.get("draws"):
        b_draws = {d["seed"]: d for d in before.get("draws", [])}
        print("\nthe example as a daisy / as a hibiscus (judge-led), per reference draw:")
        for d in after["draws"]:
            old = b_draws.get(d["seed"])
            was = f"{old['daisy']:.3f} / {old['hibiscus']:.3f}" if old else "-"
            print(f"  seed {d['seed']}: before {was}   after {d['daisy']:.3f} / "
                  f"{d['hibiscus']:.3f}")
    if after.get("fixtures"):
        print("\nthe gate's attack fixtures (allowlist), per seed: status, or judge-led / "
              "hps-only where admitted:")
        ex = after["example"]["per_seed"]
        print(f"  {'peach_hibiscus example':40s} " + "  ".join(
            f"{ex[s]['judge-led']:.3f}/{ex[s]['hps-only']:.3f}" for s in SEEDS))
        for name, rows in after["fixtures"].items():
            print(f"  {name:40s} " + "  ".join(
                f"{rows[s]['judge-led']:.3f}/{rows[s]['hps-only']:.3f}"
                if rows[s]["status"] == "ok" else f"{rows[s]['status']:>11s}" for s in SEEDS))
    copies = result.get("copies") or {}
    if copies.get("gap"):
        print("\nnear copies, both sides of each gap (distinct pool paintings | copies):")
        for kind, row in copies["gap"].items():
            print(f"  {kind:16s} {row}")
    print("\ntargets:")
    for name, ok in result["targets"].items():
        print(f"  [{'pass' if ok else 'FAIL'}] {name}")


if __name__ == "__main__":
    main()
