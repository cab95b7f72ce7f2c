"""The plumbing of the chapter "Environment and gates": the fixtures run through the gate, their
figure and tables, the calibration table and plot, a local environment server, the episodes'
table and the chapter's ``gates.json`` and ``env.json``."""

from __future__ import annotations

import base64
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from matplotlib.figure import Figure

from watercolour.env.ports import free_port
from watercolour.gates import VOCABULARY, Expected, GateVerdict, check, matches_expected
from watercolour.gates.fixtures import fixture_text
from watercolour.notebooks import markdown_table
from watercolour.render import versions

SERVER_ENV = {"WATERCOLOUR_JUDGE_WEIGHT": "0", "WATERCOLOUR_HPS_WEIGHT": "0.9",
              "WATERCOLOUR_RENDER_WORKERS": "1", "WATERCOLOUR_RENDER_DEADLINE": "20"}
"""The chapter's server: the ``hps-only`` mix (no judge, so no pool), one browser."""


# ---------------------------------------------------------------- the fixtures


def prompt_markdown(system: str, user: str) -> str:
    """The prompt the model is given, as Markdown: the system and the user turn, each in a
    text block."""
    return f"**System**\n\n````text\n{system}\n````\n\n**User**\n\n````text\n{user}\n````"


def violations_table() -> str:
    """Every violation the gates can name: where it is found and what it means (Markdown)."""
    from watercolour.gates import Violation

    return markdown_table(["violation", "found in", "meaning"],
                          [(f"`{v.value}`", v.source, v.meaning) for v in Violation])


def run_fixtures(names: Iterable[str], cases: Mapping[str, Expected], renderer: Any,
                 seed: int = 0) -> dict[str, GateVerdict]:
    """Each named fixture through :func:`~watercolour.gates.check` (``library`` mode), with
    its own deadline where it has one (a sketch that never finishes)."""
    return {name: check(fixture_text(name), renderer, seed=seed,
                        deadline_s=cases[name].deadline_s) for name in names}


def _title(name: str, verdict: GateVerdict) -> str:
    title = name.rsplit(".", 1)[0].replace("_", " ")
    if verdict.passed:
        return f"{title}\nPASSED ({verdict.n_shapes} shapes)"
    return f"{title}\n" + ", ".join(verdict.violations)


def _why_no_picture(verdict: GateVerdict) -> str:
    first = next(iter(verdict.reasons.values()), "")
    if verdict.render is not None:
        head = "no picture"
    else:
        head = "no sketch" if verdict.sketch is None else "not rendered: the code decides"
    return head + "\n\n" + "\n".join(textwrap.wrap(first, 30)[:6])


def fixture_grid(verdicts: Mapping[str, GateVerdict], cols: int = 6) -> Figure:
    """Every fixture's render (or why there is none), titled with the gate's decision."""
    import matplotlib.pyplot as plt

    rows = max(1, -(-len(verdicts) // cols))
    fig, axes = plt.subplots(rows, cols, figsize=(2.6 * cols, 2.9 * rows), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for ax, (name, verdict) in zip(axes.flat, verdicts.items()):
        render = verdict.render
        if render is not None and render.png is not None:
            ax.imshow(render.image())
        else:
            ax.text(0.5, 0.5, _why_no_picture(verdict), ha="center", va="center", fontsize=7,
                    color="0.35", transform=ax.transAxes)
        ax.set_title(_title(name, verdict), fontsize=7,
                     color="darkgreen" if verdict.passed else "darkred")
    fig.tight_layout()
    return fig


def decision(verdict: GateVerdict) -> str:
    """``passed``, or the violations in code font."""
    return "passed" if verdict.passed else ", ".join(f"`{v}`" for v in verdict.violations)


def reasons_table(verdicts: Mapping[str, GateVerdict], limit: int = 160) -> str:
    """Markdown: each fixture's decision in ``library`` and ``allowlist`` mode, with the
    gate's reasons and notes."""
    rows = [(f"`{name}`", decision(v), decision(v.for_mode("allowlist")),
             "; ".join([*(f"{k}: {d}" for k, d in v.reasons.items()), *v.notes]))
            for name, v in verdicts.items()]
    return markdown_table(["fixture", "library", "allowlist", "reasons and notes"], rows,
                          limit=limit)


def mismatches(verdicts: Mapping[str, GateVerdict],
               cases: Mapping[str, Expected]) -> dict[str, list[str]]:
    """Fixture -> violations, for every fixture not decided as expected in either mode."""
    return {name: v.violations for name, v in verdicts.items()
            if not matches_expected(v, cases[name])
            or not matches_expected(v.for_mode("allowlist"), cases[name])}


# ---------------------------------------------------------------- the calibration


def _num(value: float | None, digits: int) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def calibration_table(calibration: Mapping[str, Any]) -> str:
    """Markdown: each calibration case's measures and verdict, then the floors."""
    # the edges inside the painted area (issue 39's flood rule), where the calibration has them
    inner = any("interior_edges" in row for row in calibration["cases"])
    rows = [(row["name"], row["expected"], _num(row["paint_fraction"], 4),
             _num(row["shape_edges"], 4),
             *((_num(row.get("interior_edges"), 3),) if inner else ()),
             _num(row["speck_fraction"], 3),
             (", ".join(row["violations"]) or "admitted")
             + ("" if row["as_expected"] else " **(unexpected)**"))
            for row in calibration["cases"]]
    floors = calibration["floors"]
    inside = (f"; edges inside the painted area ≥ {floors['interior_floor']} (both ways) once "
              f"it spans ≥ {floors['extent_coverage']} of the canvas or is a solid mass "
              f"(paint ≥ {floors['interior_coverage']})" if "interior_floor" in floors else "")
    return (markdown_table(["case", "expected", "paint", "shape edges",
                            *(("inside",) if inner else ()), "specks", "verdict"], rows)
            + f"\n\nFloors: paint ≥ {floors['paint_floor']}; specks ≤ "
            f"{floors['speck_ceiling']}; shape edges ≥ {floors['edge_floor']} once "
            f"paint ≥ {floors['flood_coverage']}{inside}.")


def calibration_figure(calibration: Mapping[str, Any]) -> Figure:
    """Paint fraction against shape edges (log-log) for every case, with the floors."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for row in calibration["cases"]:
        if row["paint_fraction"] is None:
            continue
        colour = "darkgreen" if row["expected"] == "admitted" else "darkred"
        x, y = max(row["paint_fraction"], 1e-4), max(row["shape_edges"], 1e-4)
        ax.scatter(x, y, color=colour, s=22)
        ax.annotate(row["name"].replace("example:", ""), (x, y), fontsize=6,
                    xytext=(3, 2), textcoords="offset points")
    floors = calibration["floors"]
    ax.axvline(floors["paint_floor"], color="0.5", ls="--", lw=0.8)
    ax.axvline(floors["flood_coverage"], color="0.5", ls=":", lw=0.8)
    ax.axhline(floors["edge_floor"], color="0.5", ls=":", lw=0.8)
    ax.set(xscale="log", yscale="log", xlabel="paint fraction", ylabel="shape edges")
    ax.set_title("green: must be admitted, red: must be rejected (values below 1e-4 drawn at it)",
                 fontsize=8)
    fig.tight_layout()
    return fig


def gates_summary(verdicts: Mapping[str, GateVerdict], cases: Mapping[str, Expected],
                  calibration: Mapping[str, Any] | None, prompt: str, backend: str,
                  parameters: dict[str, Any], methods: Sequence[str]) -> dict[str, Any]:
    """The chapter's ``gates.json``: each fixture's verdict in both modes, the mismatches
    and whether the calibration cases were decided as expected."""
    wrong = mismatches(verdicts, cases)
    return {
        "parameters": parameters,
        "versions": versions(),
        "backend": backend,
        "prompt": {"subject": parameters.get("subject"), "chars": len(prompt),
                   "methods": list(methods)},
        "vocabulary": VOCABULARY,
        "fixtures": {name: {
            "passed": v.passed, "status": v.status, "violations": v.violations,
            "allowlist_violations": v.for_mode("allowlist").violations,
            "reasons": v.reasons, "notes": v.notes, "n_shapes": v.n_shapes,
            "paint_fraction": round(v.paint_fraction, 5), "rendered": v.render is not None,
        } for name, v in verdicts.items()},
        "mismatches": wrong,
        "all_as_expected": not wrong,
        "calibration_all_as_expected": calibration["all_as_expected"] if calibration else None,
        "written_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


# ---------------------------------------------------------------- the server


class LocalServer:
    """``watercolour serve`` on a free loopback port, in its own process group, its output in
    ``log``; :meth:`close` (or leaving a ``with`` block) stops it.

    >>> with LocalServer("serve.log", SERVER_ENV) as server:
    ...     server.url
    """

    def __init__(self, log: str | os.PathLike[str], env: Mapping[str, str] | None = None,
                 timeout_s: float = 300.0) -> None:
        self.log_path = Path(log)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log: IO[str] = open(self.log_path, "w")  # noqa: SIM115 (closed by close())
        started = time.perf_counter()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "watercolour", "serve", "--port", str(self.port),
             "--log-level", "warning"],
            env={**os.environ, **(env or {})}, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True)
        try:
            self._wait(timeout_s)
        except BaseException:
            self.close()
            raise
        self.startup_s = time.perf_counter() - started

    def _wait(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            if self.process.poll() is not None:
                raise RuntimeError("the server exited: " + self.log_path.read_text()[-1500:])
            try:
                urllib.request.urlopen(self.url + "/health", timeout=2).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the server did not answer in {timeout_s:.0f} s: "
                                       + self.log_path.read_text()[-1500:]) from None
                time.sleep(0.5)

    def stats(self) -> dict[str, Any]:
        """The server's ``/stats`` answer."""
        with urllib.request.urlopen(self.url + "/stats", timeout=10) as answer:
            return json.loads(answer.read())

    def close(self) -> None:
        """Stop the server's process group and close its log."""
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        self._log.close()

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def observations_table(observations: Mapping[str, Any], limit: int = 140) -> str:
    """Markdown: each reply's status, reward, raw gate / length / hps terms and critique."""
    rows = []
    for label, obs in observations.items():
        raws = [_num(obs.breakdown.raw(n) if obs.breakdown else None, 2)
                for n in ("gate", "length", "hps")]
        reward = "null" if obs.reward is None else f"{obs.reward:.3f}"
        rows.append([label, obs.status, reward, *raws, obs.critique])
    return markdown_table(["reply", "status", "reward", "gate", "length", "hps", "critique"],
                          rows, limit=limit)


def turns_figure(episode: Sequence[Any]) -> Figure:
    """The picture of each turn of an episode (``include_png``), titled with its reward."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, max(1, len(episode)), figsize=(3 * max(1, len(episode)), 3.2),
                             squeeze=False)
    for ax, obs in zip(axes[0], episode):
        ax.axis("off")
        if obs.png_base64:
            ax.imshow(plt.imread(io.BytesIO(base64.b64decode(obs.png_base64)), format="png"))
        reward = "null" if obs.reward is None else f"{obs.reward:.3f}"
        ax.set_title(f"turn {obs.turn}: reward {reward}" + (" (done)" if obs.done else ""),
                     fontsize=8)
    return fig


def env_summary(url: str, observations: Mapping[str, Any], group: Sequence[Any],
                cache: Mapping[str, Any], episode: Sequence[Any]) -> dict[str, Any]:
    """The chapter's ``env.json``: the single steps, the remote group and the two turns."""
    return {
        "url": url,
        "steps": {label: {"status": o.status, "reward": o.reward, "critique": o.critique}
                  for label, o in observations.items()},
        "group": [e.reward for e in group], "render_cache": dict(cache),
        "two_turns": [{"turn": o.turn, "reward": o.reward, "done": o.done} for o in episode],
    }
