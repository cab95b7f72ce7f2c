"""The pool-building pipeline: painters x refinement rounds -> renders -> critiques -> pool.

As in the reproduction: each painter paints its subjects; a critic writes feedback on every
render; the painter revises from it, for three rounds; every round's sketch, render and
critique is kept. The embedded default runs the same pipeline with the procedural painter and
the offline critic; real backends are OpenAI-compatible endpoints
(:mod:`watercolour.pool.painters`, :mod:`watercolour.pool.critic`).

Crash-safe and resumable: each generation is written to the log (:mod:`watercolour.pool.log`)
the moment it is done; a rerun over the same folder skips what is logged and continues each
painting from its last logged round, so nothing is lost and nothing is done twice. A sketch
whose render repeats an earlier one exactly (same code, same seed) reuses that render.

Output folder::

    log/            the generation log (every round of every painting, and the negatives)
    pool/           the pool folder: final rounds tiered by the synthetic rule (tiers.py)
    negatives/      renders for the gates and the offline judge, with their ``kind``
    build.json      configuration, counts, timings and pool statistics
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import re
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import mean
from typing import Any

from watercolour.io import write_json_atomic
from watercolour.openai_compat import ChatError
from watercolour.pool import procedural
from watercolour.pool.backends import choose_critic, choose_painters
from watercolour.pool.critic import Critic, CritiqueRequest, OfflineCritic
from watercolour.pool.dataset import default_card, write_pool_folder
from watercolour.pool.log import GenerationLog
from watercolour.pool.painters import (
    Attempt,
    Painter,
    PaintRequest,
    Reference,
)
from watercolour.pool.schema import DEFAULT_POOL, sha256, validate_rows
from watercolour.pool.tiers import RULE, assign_tiers
from watercolour.render.attempts import render_attempts
from watercolour.settings import setting


@dataclass
class BuildConfig:
    """How a pool is built. Defaults build the starter pool offline."""

    out: str = setting(DEFAULT_POOL, help="output folder (log, pool, negatives, build.json); "
                       "a rerun resumes it")
    size: int = setting(24, positive=True, help="paintings to make; painting i goes to painter "
                        "i mod #painters")
    rounds: int = setting(3, positive=True, help="refinement rounds")
    seed: int = setting(0, help="seed of the whole build")
    canvas: int = setting(512, positive=True, help="canvas side in pixels")
    subjects: list[str] | None = setting(None, help="a subject phrase, e.g. 'a peach hibiscus' "
                                         "(repeat for several; default: the starter mix, "
                                         "hibiscus in a third, seven other flowers in the rest)")
    negatives: int = setting(1, help="negatives per kind (blank, blob, scribble, faint, grey, "
                             "off_canvas) for the gates and the judge; 0 for none")
    concurrency: int = setting(2, positive=True, help="paintings in flight at once (painter "
                               "and critic calls run in these threads)")
    render_workers: int = setting(1, positive=True, help="browsers rendering in parallel")
    render_deadline_s: float = setting(60.0, positive=True, help="seconds per render")
    retries: int = setting(2, help="further attempts at a render the browser failed "
                           "(painter/critic clients retry on their own)")
    reference: str | None = setting(None, help="reference photo (file or URL) for model "
                                    "painters")
    progress: bool = setting(True, help="show a progress bar")

    def resolved(self) -> dict[str, Any]:
        return asdict(self)


class PaintingUnavailable(RuntimeError):
    """A painting could not continue because a backend failed after its retries."""


@dataclass
class Job:
    painting_id: str
    painter: Painter
    subject: str
    seed: int

    def gen_id(self, round_: int) -> str:
        return f"{self.painting_id}-r{round_}"


@dataclass
class BuildResult:
    out: Path
    generations: int
    new_generations: int
    unavailable: list[str]
    pool_rows: int
    tiers: dict[str, int]
    seconds: float
    summary: dict[str, Any] = field(default_factory=dict)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "painter"


def plan_jobs(config: BuildConfig, painters: Sequence[Painter]) -> list[Job]:
    subjects = config.subjects or procedural.starter_subjects(config.size, config.seed)
    names = [_slug(p.name) for p in painters]
    if len(set(names)) != len(names):
        raise ValueError(f"painter names must differ: {names}")
    return [Job(f"{names[i % len(painters)]}-{i:04d}", painters[i % len(painters)],
                subjects[i % len(subjects)], config.seed * 100_000 + i)
            for i in range(config.size)]


def _utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class _Builder:
    def __init__(self, config: BuildConfig, painters: Sequence[Painter], critic: Critic,
                 renderer, log: GenerationLog, on_generation: Callable[[dict], None] | None
                 ) -> None:
        self.config = config
        self.painters = painters
        self.critic = critic
        self.renderer = renderer
        self.log = log
        self.on_generation = on_generation
        self.stop = threading.Event()
        self.bar = None
        self.new = 0
        self.unavailable: list[str] = []
        self._lock = threading.Lock()
        self._cache: dict[str, str] = {}
        for record in log.records():
            if record.get("png") and record.get("render_key"):
                self._cache.setdefault(record["render_key"], record["id"])
        self.reference = Reference(image=config.reference) if config.reference else None

    # ------------------------------------------------------------ one generation
    def _render(self, code: str, seed: int) -> tuple[dict[str, Any], bytes | None, str]:
        key = hashlib.sha256(f"{seed}\n{code}".encode()).hexdigest()
        cached_id = self._cache.get(key)
        if cached_id is not None:
            cached = self.log.get(cached_id)
            png = self.log.png(cached) if cached else None
            if cached is not None and png is not None:
                return dict(cached["render"], cached_from=cached_id), png, key
        result, attempts = render_attempts(self.renderer, code, seed,
                                           attempts=self.config.retries + 1)
        if result.infrastructure_failure:
            raise PaintingUnavailable(f"the browser failed {attempts} times: "
                                      f"{result.infra_error}")
        info = {
            "ok": result.ok, "width": result.width, "height": result.height,
            "paint_fraction": round(result.paint_fraction, 5),
            "n_shapes": int(result.evidence.get("n_shapes", 0) or 0),
            "brush_calls": result.evidence.get("brush_calls", {}),
            "error": (result.error or "")[:2000] or None, "timed_out": result.timed_out,
            "crashed": result.crashed,
            "seconds": round(result.timings.get("total_s") or 0.0, 3),
        }
        return info, (result.png if result.ok else None), key

    def _emit(self, record: dict[str, Any], png: bytes | None) -> None:
        self.log.append(record, png)
        if record.get("render_key") and png is not None:
            self._cache.setdefault(record["render_key"], record["id"])
        with self._lock:
            self.new += 1
            if self.bar is not None:
                self.bar.update(1)
        if self.on_generation is not None:
            self.on_generation(record)

    def _history(self, job: Job, upto: int) -> list[Attempt]:
        attempts = []
        for r in range(1, upto):
            record = self.log.get(job.gen_id(r))
            if record is None:
                raise RuntimeError(f"{job.gen_id(r)} missing from the log before round {upto}")
            attempts.append(Attempt(r, record.get("sketch"), record.get("critique") or "",
                                    record.get("issues") or [], self.log.png(record)))
        return attempts

    def run_painting(self, job: Job) -> None:
        for round_ in range(1, self.config.rounds + 1):
            if self.stop.is_set():
                return
            gen_id = job.gen_id(round_)
            if gen_id in self.log:
                continue
            try:
                self._one_round(job, round_)
            except (PaintingUnavailable, ChatError) as err:
                # a backend that failed after its retries: kept in failures.jsonl, retried
                # by the next run over this folder
                self.log.fail({"id": gen_id, "painting_id": job.painting_id,
                               "painter": job.painter.name, "round": round_,
                               "error": f"{type(err).__name__}: {err}", "at": _utc_now()})
                with self._lock:
                    self.unavailable.append(gen_id)
                return

    def _one_round(self, job: Job, round_: int) -> None:
        start = time.monotonic()
        request = PaintRequest(job.subject, job.seed, round_, self._history(job, round_),
                               self.reference, self.config.canvas)
        reply = job.painter.paint(request)
        painted = time.monotonic()
        if reply.code is None:
            info: dict[str, Any] = {"ok": False, "error": "the reply held no sketch"}
            png, key, status = None, None, "no_sketch"
        else:
            info, png, key = self._render(reply.code, job.seed)
            status = "ok" if png is not None else "sketch_error"
        rendered = time.monotonic()
        error = None if png is not None else (info.get("error") or
                                              ("timed out" if info.get("timed_out") else
                                               "no picture"))
        critique = self.critic.critique(CritiqueRequest(job.subject, png, round_,
                                                        reply.code or "", error))
        record = {
            "id": job.gen_id(round_), "kind": "painting", "painting_id": job.painting_id,
            "painter": job.painter.name, "subject": job.subject, "seed": job.seed,
            "round": round_, "status": status, "sketch": reply.code, "reply": reply.text or None,
            "painter_meta": reply.meta, "render": info, "render_key": key,
            "sha256": sha256(png) if png is not None else None,
            "critique": critique.text, "issues": critique.issues, "score": critique.score,
            "measurements": critique.measurements, "critic": critique.critic,
            "created_at": _utc_now(),
            "seconds": {"paint": round(painted - start, 3),
                        "render": round(rendered - painted, 3),
                        "critique": round(time.monotonic() - rendered, 3)},
        }
        self._emit(record, png)

    def run_negative(self, kind: str, k: int) -> None:
        gen_id = f"negative-{kind}-{k}"
        if gen_id in self.log or self.stop.is_set():
            return
        seed = self.config.seed * 100_000 + 90_000 + k
        sk = procedural.negative(kind, seed, self.config.canvas)
        try:
            info, png, key = self._render(sk.code, seed)
        except PaintingUnavailable as err:
            self.log.fail({"id": gen_id, "error": str(err), "at": _utc_now()})
            with self._lock:
                self.unavailable.append(gen_id)
            return
        critique = OfflineCritic().critique(CritiqueRequest(sk.subject, png, 1, sk.code))
        self._emit({
            "id": gen_id, "kind": "negative", "negative": kind, "painter": "procedural",
            "subject": sk.subject, "seed": seed, "round": 1,
            "status": "ok" if png is not None else "sketch_error", "sketch": sk.code,
            "render": info, "render_key": key, "sha256": sha256(png) if png else None,
            "critique": critique.text, "issues": critique.issues, "score": critique.score,
            "measurements": critique.measurements, "critic": "offline",
            "created_at": _utc_now(),
        }, png)


def build_pool(
    config: BuildConfig | None = None,
    painters: Sequence[Painter] | None = None,
    critic: Critic | None = None,
    renderer=None,
    on_generation: Callable[[dict], None] | None = None,
) -> BuildResult:
    """Build (or resume) a pool in ``config.out``; see the module docstring.

    Args:
        config: sizes, seeds, concurrency, output folder.
        painters: default one :class:`ProceduralPainter`.
        critic: default the :class:`OfflineCritic`.
        renderer: a started :class:`watercolour.render.Renderer` to share; default one of
            ``config.render_workers`` browsers, closed at the end.
        on_generation: called with each new record once it is logged.

    Raises:
        PoolValidationError: the generations do not make a valid pool (e.g. a tier is empty:
            build more paintings); the log is kept and a rerun reuses it.
    """
    config = config or BuildConfig()
    painters = list(painters) if painters else choose_painters()
    critic = critic or choose_critic()
    if config.rounds < 1 or config.size < 1:
        raise ValueError("size and rounds must be at least 1")
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    jobs = plan_jobs(config, painters)
    _check_identity(out / "log" / "build-identity.json", {
        "seed": config.seed, "canvas": config.canvas, "subjects": config.subjects,
        "reference": config.reference, "painters": sorted({j.painter.name for j in jobs}),
        "critic": critic.name,
    })
    log = GenerationLog(out / "log")
    kinds = [(kind, k) for k in range(config.negatives) for kind in procedural.NEGATIVES]
    total = len(jobs) * config.rounds + len(kinds)
    expected = {j.gen_id(r) for j in jobs for r in range(1, config.rounds + 1)} | {
        f"negative-{kind}-{k}" for kind, k in kinds}
    already = len(expected & {r["id"] for r in log.records()})
    start = time.monotonic()

    own_renderer = renderer is None
    if own_renderer:
        from watercolour.render import Renderer

        renderer = Renderer(workers=config.render_workers,
                            deadline_s=config.render_deadline_s).start()
    builder = _Builder(config, painters, critic, renderer, log, on_generation)
    try:
        if already < total:
            _run(builder, jobs, kinds, total, already)
    finally:
        if own_renderer:
            renderer.close()
    elapsed = time.monotonic() - start
    return _consolidate(config, out, log, jobs, builder, elapsed)


def _check_identity(path: Path, identity: dict[str, Any]) -> None:
    """A folder resumes only the build it holds: the parameters that decide what each
    generation is (seed, canvas, subjects, painters, critic) must match. ``size`` and
    ``rounds`` may grow: that extends the build."""
    if path.is_file():
        stored = json.loads(path.read_text(encoding="utf-8"))
        diff = {k: (stored.get(k), v) for k, v in identity.items()
                if k in stored and stored.get(k) != v}
        if diff:
            what = ", ".join(f"{k} {old!r} (now {new!r})" for k, (old, new) in diff.items())
            raise ValueError(f"{path.parent.parent} holds a build made with {what}; resume it "
                             "with the same parameters or choose another output folder")
        return
    write_json_atomic(path, identity)


def _run(builder: _Builder, jobs: list[Job], kinds: list[tuple[str, int]], total: int,
         already: int) -> None:
    from tqdm.auto import tqdm

    config = builder.config
    with tqdm(total=total, initial=already, desc="pool build", unit="gen",
              disable=not config.progress, dynamic_ncols=True) as bar:
        builder.bar = bar
        executor = concurrent.futures.ThreadPoolExecutor(max(1, config.concurrency),
                                                         thread_name_prefix="pool-build")
        futures = [executor.submit(builder.run_painting, job) for job in jobs]
        futures += [executor.submit(builder.run_negative, kind, k) for kind, k in kinds]
        try:
            for future in concurrent.futures.as_completed(futures):
                future.result()
        except BaseException:
            # a crash or Ctrl-C: finish the generations in flight (each is logged whole or
            # not at all), start no more
            builder.stop.set()
            executor.shutdown(wait=True, cancel_futures=True)
            raise
        finally:
            builder.bar = None
        executor.shutdown(wait=True)


def _consolidate(config: BuildConfig, out: Path, log: GenerationLog, jobs: list[Job],
                 builder: _Builder, elapsed: float) -> BuildResult:
    records = {r["id"]: r for r in log.records()}
    finals = [records[j.gen_id(config.rounds)] for j in jobs
              if j.gen_id(config.rounds) in records]
    decisions = {d.id: d for d in assign_tiers(finals)}
    rows, dropped = [], Counter()
    seen: set[str] = set()
    for record in finals:
        decision = decisions[record["id"]]
        if decision.tier is None:
            dropped[decision.reason.split(" ")[0]] += 1
            continue
        if record["sha256"] in seen:
            dropped["duplicate"] += 1
            continue
        seen.add(record["sha256"])
        rows.append({
            "id": record["id"], "tier": decision.tier, "subject": record["subject"],
            "sketch": record["sketch"], "painter": record["painter"], "round": record["round"],
            "critique": record["critique"], "seed": record["seed"],
            "paint_fraction": record["render"].get("paint_fraction"),
            "n_shapes": record["render"].get("n_shapes"), "rated_at": None,
            "rated_by": f"synthetic:{RULE}", "sha256": record["sha256"],
            "png": log.png(record), "score": record["score"],
            "tier_reason": decision.reason,
            "variant": (record.get("painter_meta") or {}).get("variant"),
        })
    validate_rows([{"id": r["id"], "tier": r["tier"], "image": r["png"],
                    "sha256": r["sha256"]} for r in rows], source=f"the pool built in {out}")
    note = ("**A synthetic pool.** These tiers were assigned by a documented rule over what a "
            f"procedural painter generated (`{RULE}`, see `watercolour.pool.tiers`), not by "
            "a person's taste. Rate the paintings (the rating widget) to make it yours.")
    write_pool_folder(rows, out / "pool", card=default_card(len(rows), note))

    negatives = [r for r in log.records() if r.get("kind") == "negative" and r.get("png")]
    write_pool_folder([{
        "id": r["id"], "tier": None, "kind": r["negative"], "subject": r["subject"],
        "sketch": r["sketch"], "painter": "procedural", "round": 1, "seed": r["seed"],
        "paint_fraction": r["render"].get("paint_fraction"),
        "n_shapes": r["render"].get("n_shapes"), "sha256": r["sha256"], "png": log.png(r),
    } for r in negatives], out / "negatives", card=(
        "# Negatives\n\nRenders a reward should reject (blank, blob, scribble, faint, grey, "
        "off-canvas), for testing the gates and the offline judge. Not a pool.\n"))

    summary = _summary(config, log, jobs, rows, dropped, builder, elapsed)
    write_json_atomic(out / "build.json", summary)
    tiers = Counter(r["tier"] for r in rows)
    return BuildResult(out, len(log), builder.new, list(builder.unavailable), len(rows),
                       {t: tiers.get(t, 0) for t in ("love", "okay")}, elapsed, summary)


def _summary(config: BuildConfig, log: GenerationLog, jobs: list[Job], rows: list[dict],
             dropped: Counter, builder: _Builder, elapsed: float) -> dict[str, Any]:
    records = log.records()
    paintings = [r for r in records if r.get("kind") == "painting"]
    by_round: dict[int, list[float]] = defaultdict(list)
    for r in paintings:
        if r.get("score") is not None:
            by_round[r["round"]].append(r["score"])
    render_s = [r["render"].get("seconds") for r in records
                if r.get("render", {}).get("seconds") and not r["render"].get("cached_from")]
    tiers = Counter(r["tier"] for r in rows)
    return {
        "config": config.resolved(),
        "painters": sorted({j.painter.name for j in jobs}),
        "critic": builder.critic.name,
        "tier_rule": RULE,
        "generations": len(records),
        "new_generations": builder.new,
        "renders": len(render_s),
        "render_cache_hits": sum(1 for r in records if r.get("render", {}).get("cached_from")),
        "render_seconds": {"total": round(sum(render_s), 2),
                           "mean": round(mean(render_s), 3) if render_s else None},
        "unavailable": list(builder.unavailable),
        "statuses": dict(Counter(r.get("status") for r in records)),
        "score_by_round": {str(k): round(mean(v), 4) for k, v in sorted(by_round.items())},
        "pool": {"rows": len(rows), "tiers": {t: tiers.get(t, 0) for t in ("love", "okay")},
                 "left_out": dict(dropped),
                 "variants": dict(Counter(r.get("variant") for r in rows)),
                 "variants_by_tier": {t: dict(Counter(r.get("variant") for r in rows
                                                      if r["tier"] == t))
                                      for t in ("love", "okay")}},
        "negatives": dict(Counter(r.get("negative") for r in records
                                  if r.get("kind") == "negative")),
        "seconds": round(elapsed, 2),
        "written_at": _utc_now(),
    }
