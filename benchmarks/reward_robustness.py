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
MARGIN = 0.05
"""The search's best must stay this far below both the love median and the example (at
seed 0), else its winners become negatives and the judge is refitted."""
BEFORE = "e65d96e"
"""The last revision before the pool-bounded judge."""


# ---------------------------------------------------------------- scoring (old or new code)


def reward_of(pool, judge, scorer, png: bytes, code: str, subject: str, seed: int,
              exclude: str | None = None, references: int = 4) -> dict[str, Any]:
    """The judge-led reward of an already gated (``ok``) render, as the rewarder computes it.
    Only public API that the old and the new code share."""
    from watercolour.rewards import Mix, combine, draw_references, judge_group, length_term
    from watercolour.rewards.references import ReferencePool

    drawn_from = pool if exclude is None else ReferencePool(
        [p for p in pool.paintings if p.id != exclude], pool.source)
    refs = draw_references(drawn_from, seed, references)
    judged = judge_group(judge, [png], refs, subject)[0]
    hps = scorer.score([png], f"a watercolour painting of {subject}")[0]
    length = length_term(code)
    total, _, _, _ = combine(Mix.preset("judge-led"), "ok", length["raw"], judged.score,
                                  hps.unit)
    return {"reward": total, "judge": judged.score, "hps": round(hps.unit, 4),
            "length": round(length["raw"], 4), "tokens": length["tokens"]}


def mean_reward(pool, judge, scorer, pngs: dict[int, bytes], code: str, subject: str,
                exclude: str | None = None) -> dict[str, Any]:
    rows = [reward_of(pool, judge, scorer, pngs[s], code, subject, s, exclude) for s in pngs]
    return {k: round(statistics.mean(r[k] for r in rows), 4)
            for k in ("reward", "judge", "hps", "length")}


def legacy_score(request_path: str) -> None:
    """Subprocess entry (old code on ``sys.path``): score a request file, print JSON."""
    from watercolour.rewards.hps.offline import HandSetAestheticScorer
    from watercolour.rewards.judge.offline_judge import PoolFittedJudge
    from watercolour.rewards.references import ReferencePool

    request = json.loads(Path(request_path).read_text())
    pool = ReferencePool.load(request["pool"])
    judge, scorer = PoolFittedJudge.fit(pool), HandSetAestheticScorer()
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
    from watercolour.rewards.redteam import FAMILIES, GAMED, RenderCache, gamed_sketch, search
    from watercolour.rewards.references import ReferencePool

    started = time.monotonic()
    load = os.getloadavg()
    pool = ReferencePool.load(args.pool)
    table = load_pool(args.pool)
    codes = dict(zip(table["id"], table["sketch"]))
    subjects = dict(zip(table["id"], table["subject"]))
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

    def love_median(j) -> tuple[float, dict[str, float]]:
        rewards = {}
        for p in pool.tier("love"):
            rewards[p.id] = mean_reward(pool, j, scorer, dict.fromkeys(SEEDS, p.png),
                                        codes[p.id], subjects[p.id] or SUBJECT,
                                        exclude=p.id)["reward"]
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

        finds = search(score, FAMILIES, per_family=args.per_family,
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
        abstract_top = max(v for k, v in best.items() if FAMILIES[k].abstract)
        if abstract_top < bar or r == args.rounds - 1:
            break
        winners = [f for name, found in finds.items() if FAMILIES[name].abstract
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
    gamed["example_as_sunflower"] = mean_reward(pool, judge, scorer, example_pngs, example_code,
                                                OTHER["hibiscus"])
    candidates["gamed:example_as_sunflower"] = (example_pngs, example_code, OTHER["hibiscus"],
                                                None)
    for p in pool.tier("love"):
        candidates[f"love:{p.id}"] = (dict.fromkeys(SEEDS, p.png), codes[p.id],
                                      subjects[p.id] or SUBJECT, p.id)

    # subject: each love painting as its own subject and as another
    own, other = [], []
    from watercolour.rewards.judge.offline_judge import subject_key

    for p in pool.tier("love"):
        asked = subjects[p.id] or SUBJECT
        wrong = OTHER.get(subject_key(asked) or "", SUBJECT)
        pngs = dict.fromkeys(SEEDS, p.png)
        own.append(mean_reward(pool, judge, scorer, pngs, codes[p.id], asked, p.id)["reward"])
        other.append(mean_reward(pool, judge, scorer, pngs, codes[p.id], wrong, p.id)["reward"])

    # cost: features of a fresh picture + the 8 comparisons + the scorer, against a render
    from watercolour.rewards.negatives import with_confetti

    fresh = [with_confetti(example_pngs[0], 3, seed=1000 + i) for i in range(5)]
    t = time.monotonic()
    for png in fresh:
        reward_of(pool, judge, scorer, png, example_code, SUBJECT, 0)
    score_s = (time.monotonic() - t) / len(fresh)
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
    adversarial_best = max(v["reward"] for v in families.values())
    targets = {
        "every family below the example": adversarial_best < example["reward"],
        "every family below the love median": adversarial_best < median,
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
                  "families": families, "gamed": gamed,
                  "love_rewards": {k: round(v, 4) for k, v in love_rewards.items()}},
        "before": before,
        "subject": {"own_mean": round(statistics.mean(own), 4),
                    "other_mean": round(statistics.mean(other), 4), "paintings": len(own)},
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
    return {"revision": revision, "example": scored["example"],
            "love_median": round(statistics.median(love), 4), "families": families,
            "gamed": {k.split(":", 1)[1]: v for k, v in scored.items()
                      if k.startswith("gamed:")}}


def print_table(result: dict[str, Any]) -> None:
    after, before = result["after"], result["before"] or {}
    print("\nfamily                    before   after    (best reward found, seeds 0-2)")
    for name in after["families"]:
        b = before.get("families", {}).get(name, {}).get("reward")
        print(f"  {name:24s} {b if b is not None else '-':>7} "
              f"{after['families'][name]['reward']:>7}")
    for name in after["gamed"]:
        b = before.get("gamed", {}).get(name, {}).get("reward")
        print(f"  gamed:{name:18s} {b if b is not None else '-':>7} "
              f"{after['gamed'][name]['reward']:>7}")
    print(f"  {'peach_hibiscus example':24s} {before.get('example', {}).get('reward', '-'):>7} "
          f"{after['example']['reward']:>7}")
    print(f"  {'love median (LOO)':24s} {before.get('love_median', '-'):>7} "
          f"{after['love_median']:>7}")
    print("\ntargets:")
    for name, ok in result["targets"].items():
        print(f"  [{'pass' if ok else 'FAIL'}] {name}")


if __name__ == "__main__":
    main()
