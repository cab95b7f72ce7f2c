"""``watercolour pool build --out DIR [--size N] [--seed S]``,
``watercolour pool info PATH [--json]``, ``watercolour pool rated BUILD --ratings FILE --out DIR``,
``watercolour pool push DIR REPO`` and ``watercolour pool calibrate POOL --rollouts DIR``."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass

from watercolour import settings
from watercolour.flags import JSON, OUT, add_flags, command, flag, positional, switch
from watercolour.pool.build import BuildConfig


@dataclass
class BuildFlags:
    """``pool build``'s flags beyond :class:`~watercolour.pool.build.BuildConfig`'s."""

    painters: list[str] = flag("--painter", default=None, action="append", metavar="MODEL",
                               help="a model id served by --base-url (repeat for several; "
                               "default: the procedural painter). 'default' means the four "
                               "default painter models")
    base_url: str | None = flag(help="OpenAI-compatible endpoint for --painter and --critic "
                                "(default: Inference Providers' router, with HF_TOKEN)")
    critic: str | None = flag(metavar="MODEL",
                              help="a vision model id for the critic (default: the offline "
                              "critic)")
    vision: bool = switch(help="the painters are vision models: show them the reference and "
                          "renders")
    json: bool = flag(like=JSON, help="print the build summary as JSON")
    quiet: bool = switch(help="no progress bar")


@dataclass
class InfoFlags:
    """``pool info``'s flags."""

    path: str = positional(help="a folder or a Hub dataset id (owner/name)")
    revision: str | None = flag(help="Hub revision (branch, tag or commit)")
    no_check: bool = switch(help="skip validation")
    json: bool = flag(like=JSON, help="print an object with rows, tiers, ...")


@dataclass
class PushFlags:
    """``pool push``'s flags."""

    path: str = positional(metavar="DIR", help="a pool folder or a build folder")
    repo: str = positional(metavar="REPO", help="the dataset repository, owner/name")
    private: bool = switch(help="create the repository private")
    message: str = flag(default="Upload a watercolour pool", help="commit message")
    endpoint: str | None = flag(help="a Hub endpoint (default: HF_ENDPOINT, else "
                                "huggingface.co)")
    dry_run: bool = switch(help="validate and list what would be uploaded; upload nothing")
    json: bool = flag(like=JSON, help="print an object with repo, url, files, bytes")


@dataclass
class RatedFlags:
    """``pool rated``'s flags."""

    build: str = positional(metavar="BUILD", help="the build folder the ratings are of")
    ratings: str = flag(required=True, metavar="FILE",
                        help="the rating log (default name in a build: ratings.jsonl)")
    out: str = flag(like=OUT, type=None, required=True, metavar="DIR",
                    help="the pool folder to write")
    references: int | None = flag(type=int, metavar="N",
                                  help="references the judge draws a group (default: "
                                  "WATERCOLOUR_REFERENCES, else 4): the pool needs N//2 love "
                                  "and the rest okay")
    json: bool = flag(like=JSON, help="print an object with rows and tiers")


@dataclass
class CalibrateFlags:
    """``pool calibrate``'s flags."""

    pool: str = positional(metavar="POOL", help="a pool folder, a build folder or a Hub id")
    rollouts: str = flag(required=True, metavar="DIR",
                         help="a run's --out, its rollouts/ folder, or a rollouts file or "
                         "dataset")
    max_rollouts: int | None = flag(type=int, metavar="N",
                                    help="judge only the latest N rendered rollouts (default: "
                                    "all)")
    out: str | None = flag(like=OUT, type=None, metavar="FILE",
                           help="write the report here as JSON (atomically)")
    json: bool = flag(like=JSON, help="print the report as JSON")


def add_parser(verbs: argparse._SubParsersAction, name: str) -> None:
    p = verbs.add_parser(
        name,
        help="build, inspect and share reference pools",
        description="Reference pools: the paintings the pairwise judge compares against.",
    )
    sub = p.add_subparsers(dest="pool_command", metavar="COMMAND", required=True)

    b = sub.add_parser(
        "build",
        help="build (or resume) a pool",
        description="Build a pool: painters x refinement rounds, rendered, critiqued, tiered. "
        "By default the starter pool, offline: the procedural painter, the offline critic and "
        "a synthetic tier rule. Rerunning over the same --out resumes where it stopped.",
    )
    settings.add_arguments(b, BuildConfig, required=("out",), exclude=("progress",),
                           names={"subjects": "--subject", "render_workers": "--workers",
                                  "render_deadline_s": "--deadline"})
    add_flags(b, BuildFlags)
    b.set_defaults(run=run_build)

    command(
        sub, "info", InfoFlags, run_info,
        help="describe a pool",
        description="Rows, counts per tier, subjects and paint statistics of a pool: a pool "
        "folder, a build folder, a save_to_disk folder, or a Hub dataset id.",
    )
    command(
        sub, "push", PushFlags, run_push,
        help="upload a pool folder to the Hub as a dataset",
        description="Upload a pool folder (or a build folder's pool/) to a Hugging Face dataset "
        "repository, created if missing: its card, metadata.jsonl, images/ and sources/, the "
        "layout datasets.load_dataset reads as images with their tier, subject, sketch and "
        "critique. The pool is validated first. Needs HF_TOKEN (or `hf auth login`).",
    )
    command(
        sub, "rated", RatedFlags, run_rated,
        help="make a pool from your ratings of a build",
        description="Make a pool from a person's ratings: the build's final paintings, rated "
        "love / okay / reject in a rating log (the rating widget's file: one JSON object a "
        'line, {"id": PAINTING, "action": "love"|"okay"|"reject"|"skip"|"undo", "rater": NAME, '
        '"at": TIME}, replayed in order, so undo takes back the latest rating). The paintings '
        "rated love or okay become the pool, validated, written atomically to --out. A pool "
        "too small for the judge's draw of --references paintings a group is refused.",
    )
    command(
        sub, "calibrate", CalibrateFlags, run_calibrate,
        help="how often a policy's rollouts beat each pool painting",
        description="Reference difficulty against a policy: for each painting of POOL, the "
        "share of the policy's rendered rollouts (a run's rollout log: DIR/rollouts.jsonl or "
        "DIR/rollouts/rollouts.jsonl with their PNGs, or a rollouts dataset) that beat it "
        "under the configured judge (WATERCOLOUR_JUDGE_*; the pool-fitted judge by default), "
        "asked in both orders as the reward asks; then the same per tier. What a "
        "--references-schedule can be set from.",
    )


def run_build(args: argparse.Namespace) -> int:
    from watercolour.pool.backends import choose_critic, choose_painters
    from watercolour.pool.build import build_pool

    painters = choose_painters(args.painters or (), base_url=args.base_url, vision=args.vision)
    critic = choose_critic(args.critic, base_url=args.base_url)
    config = settings.from_arguments(BuildConfig, args, progress=not args.quiet)
    result = build_pool(config, painters=painters, critic=critic)
    if args.json:
        print(json.dumps(result.summary, indent=2))
    else:
        s = result.summary
        print(f"pool: {result.pool_rows} paintings (love {result.tiers['love']}, okay "
              f"{result.tiers['okay']}) -> {result.out / 'pool'}")
        print(f"log: {result.generations} generations ({result.new_generations} new, "
              f"{s['render_cache_hits']} renders reused) in {result.seconds:.1f} s; "
              f"mean score by round {s['score_by_round']}")
        if result.unavailable:
            print(f"unavailable after retries: {len(result.unavailable)} (rerun to retry)",
                  file=sys.stderr)
    return 0 if not result.unavailable else 3


def run_info(args: argparse.Namespace) -> int:
    from watercolour.pool.dataset import load_pool, pool_stats

    dataset = load_pool(args.path, revision=args.revision, check=not args.no_check)
    stats = pool_stats(dataset)
    stats["source"] = args.path
    if args.json:
        print(json.dumps(stats, indent=2))
        return 0
    tiers = ", ".join(f"{t} {n}" for t, n in stats["tiers"].items())
    print(f"{args.path}: {stats['rows']} paintings ({tiers})")
    if stats["subjects"]:
        print("subjects: " + ", ".join(f"{s} {n}" for s, n in stats["subjects"].items()))
    if stats["painters"]:
        print("painters: " + ", ".join(f"{s} {n}" for s, n in stats["painters"].items()))
    if stats["rated_by"]:
        print("rated by: " + ", ".join(f"{s} {n}" for s, n in stats["rated_by"].items()))
    paint = stats["paint_fraction"]
    if paint:
        print(f"paint: mean {paint['mean']:.3f}, median {paint['median']:.3f}, "
              f"range {paint['min']:.3f}-{paint['max']:.3f}")
        for tier, p in stats["paint_fraction_by_tier"].items():
            if p:
                print(f"  {tier}: mean {p['mean']:.3f}")
    if stats["n_shapes"]:
        print(f"shapes: mean {stats['n_shapes']['mean']:.1f}")
    return 0


def run_push(args: argparse.Namespace) -> int:
    from pathlib import Path

    from watercolour.errors import InputError
    from watercolour.pool.dataset import (
        is_hub_id,
        load_pool,
        push_pool,
        resolve_local,
        upload_files,
    )

    if not is_hub_id(args.repo):
        raise InputError(f"REPO must be a Hub repository id owner/name, not {args.repo!r}")
    folder = resolve_local(Path(args.path))
    if not folder.is_dir():
        raise InputError(f"no pool folder {args.path}")
    files = upload_files(folder)
    size = sum((folder / f).stat().st_size for f in files)
    rows = len(load_pool(folder))  # validated: a bad pool stops here, before any upload
    if args.dry_run:
        url = None
    else:
        url = push_pool(folder, args.repo, private=args.private, commit_message=args.message,
                        endpoint=args.endpoint, check=False)
    report = {"repo": args.repo, "url": url, "dry_run": args.dry_run, "folder": str(folder),
              "rows": rows, "files": [f.as_posix() for f in files], "bytes": size}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        verb = "would upload" if args.dry_run else "uploaded"
        print(f"{verb} {len(files)} files ({size / 1e6:.1f} MB, {rows} paintings) from "
              f"{folder} to {url or args.repo}")
    return 0


def run_rated(args: argparse.Namespace) -> int:
    from pathlib import Path

    from watercolour.errors import InputError
    from watercolour.pool.rating import RatingLog, items_from_build, rating_summary
    from watercolour.pool.rating.rated_pool import write_rated_pool
    from watercolour.rewards.config import RewardConfig

    build, ratings = Path(args.build), Path(args.ratings)
    for path, what in ((build, "build folder"), (ratings, "rating log")):
        if not path.exists():
            raise InputError(f"{what} not found: {path}")
    if not build.is_dir():
        raise InputError(f"{build} is not a folder (a build folder)")
    if ratings.is_dir():
        raise InputError(f"{ratings} is a directory, not a rating log")
    references = args.references if args.references is not None else \
        RewardConfig.from_env().references
    if references < 1:
        raise InputError(f"--references must be at least 1, got {references}")
    items = items_from_build(build)
    if not items:
        raise InputError(f"{build} holds no paintings (is it a pool build folder?)")
    log = RatingLog(ratings)
    unknown = sorted(set(log.ratings()) - {i.id for i in items})
    if unknown:
        raise InputError(f"{ratings} rates {len(unknown)} painting(s) {build} does not hold "
                         f"(first: {unknown[0]}); is it the log of another build?")
    folder = write_rated_pool(items, log, Path(args.out), references=references)
    summary = {"pool": str(folder), **rating_summary(items, log)}
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"{summary['love']} love + {summary['okay']} okay of {summary['items']} paintings "
              f"({summary['reject']} rejected, {summary['unrated']} unrated) -> {folder}")
    return 0


def rollout_renders(source: str, limit: int | None = None) -> tuple[list[tuple[bytes, str]], str]:
    """The rendered rollouts of a run's log as (PNG, subject) pairs, in step order (the latest
    ``limit`` when given), and the path they were read from."""
    from pathlib import Path

    from watercolour.analysis.rollouts import read_rollouts, rollout_png
    from watercolour.errors import InputError
    from watercolour.prompt import DEFAULT_SUBJECT

    folder = Path(source)
    path = next((p for p in (folder / "rollouts.jsonl", folder / "rollouts" / "rollouts.jsonl")
                 if p.is_file()), folder)
    if not path.exists():
        raise InputError(f"rollouts not found: {source}")
    frame = read_rollouts(path, pictures=True)
    if "png" not in frame.columns:
        raise InputError(f"{path}: the rollouts have no png column")
    out = []
    for row in frame.to_dict("records"):
        png = rollout_png(row.get("png"), path)
        if png is None:
            continue
        subject = row.get("subject")
        out.append((png, subject if isinstance(subject, str) and subject else DEFAULT_SUBJECT))
    if limit is not None:
        out = out[-limit:] if limit > 0 else []
    if not out:
        raise InputError(f"{path}: no rendered rollouts to compare")
    return out, str(path)


def run_calibrate(args: argparse.Namespace) -> int:
    from watercolour.errors import InputError
    from watercolour.io import write_json_atomic
    from watercolour.rewards.backends import make_judge
    from watercolour.rewards.config import RewardConfig
    from watercolour.rewards.curriculum import calibrate
    from watercolour.rewards.references import ReferencePool

    if args.max_rollouts is not None and args.max_rollouts < 1:
        raise InputError(f"--max-rollouts must be at least 1, got {args.max_rollouts}")
    candidates, source = rollout_renders(args.rollouts, args.max_rollouts)
    pool = ReferencePool.load(args.pool, negatives=False)
    if not len(pool):
        raise InputError(f"{args.pool}: the pool holds no paintings")
    judge = make_judge(RewardConfig.from_env(pool=args.pool), pool)
    report = {"pool": args.pool, "rollouts": source, **calibrate(judge, pool, candidates)}
    if args.out:
        write_json_atomic(args.out, report)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{report['candidates']} rendered rollouts of {source} against {len(pool)} "
          f"paintings of {args.pool} (judge {report['judge']}, both orders)")
    for tier, t in report["tiers"].items():
        rate = "n/a" if t["win_rate_pooled"] is None else f"{t['win_rate_pooled']:.3f}"
        print(f"  {tier}: the policy wins {rate} of {t['comparisons']} comparisons "
              f"({t['paintings']} paintings)")
    hardest = sorted((r for r in report["references"] if r["win_rate"] is not None),
                     key=lambda r: r["win_rate"])[:5]
    if hardest:
        print("hardest: " + ", ".join(f"{r['id']} ({r['tier']}, {r['win_rate']:.2f})"
                                      for r in hardest))
    if args.out:
        print(f"-> {args.out}")
    return 0
