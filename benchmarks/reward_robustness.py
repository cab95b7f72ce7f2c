"""Can the embedded reward be gamed? A red-team search against it, before and after.

    python benchmarks/reward_robustness.py --pool runs/pool     # the main command's starter
                                                                # pool (a build folder)

The reward is the one a new user trains against: the ``judge-led`` mix, the allowlist gate,
the embedded judge and scorer, four references, the mean over seeds 0-2 (render seed and
reference seed), the subject ``a peach hibiscus``. Steps, all measured in one run:

1. fit the pool-fitted judge and the banded scorer on the pool;
2. red team (:func:`watercolour.rewards.redteam.search`): per adversarial family, random
   sketches and mutations of the best (the issue's gamed sketches are starting points),
   scored at seed 0; the abstract families' winners become negatives, the judge is refitted,
   and the search runs again, until their best stays :data:`MARGIN` below the pool's ``love``
   median and the example (at most ``--rounds``; the painting families, another subject and
   a painting with confetti, are measured but never made negatives: see ``Family.abstract``);
3. every family's best, the ``peach_hibiscus`` example and the pool's ``love`` paintings
   (leave-one-out: references drawn without the painting, which the judge measures against
   the others) are scored at seeds 0-2;
4. subject: the pool's ``love`` paintings scored as their own subject and as another one;
5. held-out accuracy (5-fold by painting), order and repeat agreement, the scoring cost per
   rollout against a render's;
6. **before**: the same candidates scored by the reward as it was at ``--before`` (a git
   revision; its source is unpacked to a temporary folder and run in a subprocess).

Renders are cached under ``--cache`` (a rerun renders nothing it has seen). Writes
``benchmarks/results/reward-robustness.json`` and prints the targets with pass/fail.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
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


def _copy_rule(pool, png: bytes, code: str):
    """The near-copy check of the reward in use (None where the reward has none: the code
    before issue 25)."""
    try:
        from watercolour.rewards.copies import CopyDetector
    except ImportError:
        return None
    key = hash(tuple(sorted(p.id for p in pool.paintings)))
    if key not in _DETECTORS:
        _DETECTORS[key] = CopyDetector.from_pool(pool)
    return _DETECTORS[key].check(code, png)


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
    copy = _copy_rule(drawn_from, png, code) if copies else None
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
    parser.add_argument("--legacy-score", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.legacy_score:
        legacy_score(args.legacy_score)
        return

    from watercolour.examples import load_example
    from watercolour.io import write_json_atomic
    from watercolour.pool import load_pool
    from watercolour.render import Renderer
    from watercolour.rewards import consistency
    from watercolour.rewards.hps.offline import STARTER_BANDS, PoolBandedAestheticScorer
    from watercolour.rewards.judge.offline_judge import PoolFittedJudge, held_out_accuracy
    from watercolour.rewards.redteam import (
        FAMILIES,
        GAMED,
        RenderCache,
        edit_sketch,
        gamed_sketch,
        near_copy_families,
        padded_with_string,
        search,
    )
    from watercolour.rewards.references import ReferencePool

    started = time.monotonic()
    load = os.getloadavg()
    pool = ReferencePool.load(args.pool)
    table = load_pool(args.pool)
    codes = dict(zip(table["id"], table["sketch"]))
    subjects = dict(zip(table["id"], table["subject"]))
    families_all = {**FAMILIES, **near_copy_families({p.id: codes[p.id]
                                                     for p in pool.tier("love")})}
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
        abstract_top = max(v for k, v in best.items() if families_all[k].abstract)
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
    candidates = {"example": (example_pngs, example_code, SUBJECT, None)}
    for name, found in finds.items():
        for i, f in enumerate(found[:2]):
            pngs = gated(f.code)
            if pngs is None:
                continue
            row = mean_reward(pool, judge, scorer, pngs, f.code, SUBJECT)
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
    copy_check = copy_distribution(pool, codes, gated)
    renderer.close()

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
    targets = {
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
        "held-out love vs okay >= 0.85": (held["love_vs_okay"]["accuracy"] or 0) >= 0.85,
        "pool vs negatives >= 0.95": min(
            v for v in (held["pool_vs_negative"]["accuracy"],
                        held["pool_vs_generated"]["accuracy"]) if v is not None) >= 0.95,
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
                                       if r["near_copy"]}},
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
                 if render_seconds else None, "renders": cache.renders},
        "targets": targets,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "loadavg_start": [round(x, 2) for x in load],
                    "loadavg_end": [round(x, 2) for x in os.getloadavg()]},
        "seconds": round(time.monotonic() - started, 1),
    }
    write_json_atomic(args.results, result)
    print_table(result)
    print(f"wrote {args.results}")


COPY_EDITS: tuple[tuple[str, float], ...] = (
    ("none", 0.0), ("jitter", 0.01), ("jitter", 0.03), ("jitter", 0.06), ("recolour", 0.02),
    ("recolour", 0.06), ("rename", 0.0), ("rewrite", 0.0))
"""The small edits the near-copy measurement makes to each pool painting it copies."""


def copy_distribution(pool, codes: dict[str, str], gated, n_copied: int = 6
                      ) -> dict[str, Any]:
    """Where the near-copy thresholds sit: every pool painting against the others (each one
    measured by a detector built without it) and copies of ``n_copied`` love paintings with
    each of :data:`COPY_EDITS`, rendered at seed 0 (``gated(code, (0,))``)."""
    import numpy as np

    from watercolour.rewards.copies import CopyDetector
    from watercolour.rewards.redteam import edit_sketch
    from watercolour.rewards.references import ReferencePool

    pairs = []
    for p in pool.paintings:
        rest = ReferencePool([q for q in pool.paintings if q.id != p.id], pool.source)
        detector = CopyDetector.from_pool(rest)
        pairs.append((detector.sketch_similarity(codes[p.id])[1],
                      detector.render_similarity(p.png)[1]))
    full = CopyDetector.from_pool(pool)
    copies = []
    for p in pool.tier("love")[:n_copied]:
        for edit, amount in COPY_EDITS:
            code = edit_sketch(codes[p.id], edit, amount, 7)
            pngs = gated(code, (0,))
            if pngs is None:
                continue
            sketch_pid, sketch_sim = full.sketch_similarity(code)
            render_pid, render_sim = full.render_similarity(pngs[0])
            found = full.check(code, pngs[0])
            copies.append({"painting": p.id, "edit": edit, "amount": amount,
                           "sketch": sketch_sim, "sketch_of": sketch_pid == p.id,
                           "render": render_sim, "render_of": render_pid == p.id,
                           "caught": found is not None})

    def summary(values: list[float]) -> dict[str, float]:
        v = np.array(values)
        return {"max": round(float(v.max()), 4), "p99": round(float(np.percentile(v, 99)), 4),
                "p90": round(float(np.percentile(v, 90)), 4),
                "median": round(float(np.median(v)), 4), "min": round(float(v.min()), 4)}

    by_edit: dict[str, dict] = {}
    for c in copies:
        row = by_edit.setdefault(f"{c['edit']}:{c['amount']:g}", {"sketch": [], "render": [],
                                                                  "caught": 0, "n": 0})
        row["sketch"].append(c["sketch"])
        row["render"].append(c["render"])
        row["caught"] += int(c["caught"])
        row["n"] += 1
    return {"thresholds": {"sketch": full.sketch_threshold, "render": full.render_threshold},
            "pool_vs_others": {"sketch": summary([a for a, _ in pairs]),
                               "render": summary([b for _, b in pairs]),
                               "caught": sum(1 for a, b in pairs
                                             if a >= full.sketch_threshold
                                             or b >= full.render_threshold),
                               "paintings": len(pairs)},
            "copies": {k: {"sketch_min": round(min(v["sketch"]), 4),
                           "render_min": round(min(v["render"]), 4),
                           "caught": f"{v['caught']}/{v['n']}"} for k, v in by_edit.items()},
            "copies_caught": sum(c["caught"] for c in copies), "copies_made": len(copies),
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
    print("\ntargets:")
    for name, ok in result["targets"].items():
        print(f"  [{'pass' if ok else 'FAIL'}] {name}")


if __name__ == "__main__":
    main()
