"""The pool-fitted judge's held-out accuracy, and the judges' consistency.

    python benchmarks/judge_accuracy.py --pool runs/pool-build      # a build folder (with
                                                                    # its negatives/)
    python benchmarks/judge_accuracy.py --pool runs/pool-build \\
        --judge-url http://127.0.0.1:8000/v1 --judge-model MODEL    # also a real VLM judge

Held-out accuracy: k-fold by painting (``held_out_accuracy``): fit on the other folds, ask
every cross-tier pair of the held-out fold in both orders. For context, the same pairs are
ordered by two unfitted scores: the offline aesthetic scorer's built-in bands, and the offline
critic's score (which, on a starter pool, is what *assigned* the tiers: the circular ceiling).
Consistency: ``watercolour.rewards.consistency`` on love/okay pairs drawn from the pool.
Writes ``benchmarks/results/judge-accuracy.json``.
"""

from __future__ import annotations

import json
import platform
import random
import time
from dataclasses import dataclass
from pathlib import Path

from watercolour.flags import POOL, SEED, flag, parser_for
from watercolour.io import write_json_atomic
from watercolour.pool.critic import CritiqueRequest, OfflineCritic
from watercolour.rewards.consistency import consistency
from watercolour.rewards.hps.offline import aesthetic_score
from watercolour.rewards.judge.offline_judge import L2, PoolFittedJudge, held_out_accuracy
from watercolour.rewards.references import ReferencePool

RESULTS = Path(__file__).resolve().parent / "results"


def pairwise_accuracy(score, better: list[bytes], worse: list[bytes]) -> float:
    a = [score(x) for x in better]
    b = [score(y) for y in worse]
    wins = sum((x > y) + 0.5 * (x == y) for x in a for y in b)
    return round(wins / (len(a) * len(b)), 4)


@dataclass
class JudgeAccuracyFlags:
    """The benchmark's flags."""

    pool: str = flag(like=POOL, required=True, help="pool folder, build folder or Hub id")
    folds: int = flag(type=int, default=5)
    seed: int = flag(like=SEED)
    pairs: int = flag(type=int, default=12, help="pairs for the consistency check")
    judge_url: str | None = flag(help="an OpenAI-compatible /v1 endpoint")
    judge_model: str | None = flag()
    results: Path = flag(type=Path, default=RESULTS / "judge-accuracy.json")


def main() -> None:
    args = parser_for(JudgeAccuracyFlags, description=__doc__.splitlines()[0]).parse_args()

    start = time.monotonic()
    pool = ReferencePool.load(args.pool)
    love = [p.png for p in pool.tier("love")]
    okay = [p.png for p in pool.tier("okay")]
    report = held_out_accuracy(pool, folds=args.folds, seed=args.seed)
    critic = OfflineCritic()
    baselines = {
        "hand_set_aesthetic": {
            "love_vs_okay": pairwise_accuracy(aesthetic_score, love, okay),
            "pool_vs_negative": pairwise_accuracy(aesthetic_score, love + okay, pool.negatives)
            if pool.negatives else None},
        "offline_critic_score": {
            "love_vs_okay": pairwise_accuracy(
                lambda png: critic.critique(CritiqueRequest("x", png)).score, love, okay)},
    }
    rng = random.Random(args.seed)
    pairs = [(rng.choice(love), rng.choice(okay)) for _ in range(args.pairs)]
    selfs = [rng.choice(love + okay) for _ in range(max(1, args.pairs // 3))]
    judge = PoolFittedJudge.fit(pool)
    checks = {"pool-fitted": consistency(judge, pairs, "a flower", repeats=2, self_pairs=selfs)}
    if args.judge_url:
        from watercolour.rewards.judge.openai_judge import OpenAIJudge

        vlm = OpenAIJudge(args.judge_model or "default", base_url=args.judge_url)
        checks[vlm.name] = consistency(vlm, pairs, "a flower", repeats=2, self_pairs=selfs)
    for check in checks.values():
        check.pop("per_pair", None)
    build = Path(args.pool) / "build.json"
    result = {
        "pool": args.pool,
        "pool_build": (json.loads(build.read_text())["config"] if build.is_file() else None),
        "l2": L2,
        "held_out": report,
        "baselines": baselines,
        "consistency": checks,
        "importance": judge.model.importance(),
        "seconds": round(time.monotonic() - start, 1),
        "machine": {"python": platform.python_version(), "cpus": __import__("os").cpu_count()},
        "note": ("A starter pool's tiers come from the offline critic's score (the synthetic "
                 "rule), computed from measurements close to the judge's: love/okay accuracy "
                 "on such a pool is partly circular; the critic's own ordering is its ceiling."),
    }
    write_json_atomic(args.results, result)
    print(f"held-out: love/okay {report['love_vs_okay']}, pool/negative "
          f"{report['pool_vs_negative']}; wrote {args.results}")


if __name__ == "__main__":
    main()
