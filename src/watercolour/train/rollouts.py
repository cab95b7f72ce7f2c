"""Every rollout of a run, kept as it is scored.

``OUT/rollouts/rollouts.jsonl`` gets one line per rollout (appended and fsynced before the
trainer moves on: a crash loses nothing already scored, a torn last line is dropped) and
``OUT/rollouts/png/step-00012/g00-i03.png`` its render (written atomically before its line).
At the end :meth:`RolloutLog.to_dataset` saves a ``datasets`` dataset with the renders
embedded. On ``--resume`` from checkpoint *k*, the rollouts of steps >= *k* (generated after
the checkpoint, so generated again) are cut first: nothing lost, nothing twice.

A record: ``step``, ``group``, ``index``, ``seed``, ``subject``, ``prompt``, ``completion``,
``sketch``, ``png`` (path under ``rollouts/``), ``reward``, ``status``, ``violations``,
``components`` (raw score of gate, length, judge, hps), ``paint_fraction``, ``n_shapes``,
``references`` (ids), ``tiers``, ``unavailable`` (the reason) and ``breakdown`` (the whole
evaluation record, JSON).

A run of episodes (``--turns K``) writes one line per turn: ``reward`` and ``status`` are that
turn's, and ``turn``, ``turns``, ``critique`` (what the environment said of its render) and
``episode_reward`` (the episode's, the same on each of its lines) come after the usual fields
(``group`` and ``index`` are the episode's), and with ``--show-render`` ``saw_render``
(whether the turn was written looking at the previous turn's render); the render is
``png/step-00012/g00-i03-t2.png``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from watercolour import jsonl
from watercolour.io import write_bytes_atomic, write_text_atomic
from watercolour.rewards import Evaluation
from watercolour.rewards.rubric import NAMES

LOG = "rollouts.jsonl"


def _sketch(evaluation: Evaluation, completion: str) -> str | None:
    if evaluation.verdict is not None:
        return evaluation.verdict.sketch
    from watercolour.gates import extract_sketch

    return extract_sketch(completion).code


def _prompt_text(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    return json.dumps(prompt, ensure_ascii=False)


class RolloutLog:
    """The rollouts of one run under ``OUT/rollouts``."""

    def __init__(self, out_dir: str | Path) -> None:
        self.root = Path(out_dir) / "rollouts"
        self.path = self.root / LOG

    def records(self) -> list[dict[str, Any]]:
        return jsonl.read(self.path)

    def append(self, prompts: Sequence[Any], completions: Sequence[str],
               evaluations: Sequence[Evaluation], step: int,
               extra: Sequence[dict[str, Any]] | None = None) -> None:
        """Record one scored batch (groups = distinct prompts, in order of appearance);
        ``extra``: fields added to each rollout's line (an episode's turn: ``turn``, ...)."""
        groups: dict[str, int] = {}
        counters: dict[int, int] = {}
        more = list(extra) if extra is not None else [{} for _ in evaluations]
        for prompt, completion, e, fields in zip(prompts, completions, evaluations, more):
            key = _prompt_text(prompt)
            group = groups.setdefault(key, len(groups))
            index = counters.get(group, 0)
            counters[group] = index + 1
            fields = dict(fields)  # an episode's later turn keeps its first turn's place
            group, index = fields.pop("group", group), fields.pop("index", index)
            png_rel = None
            if e.png:
                turn = f"-t{fields['turn']}" if "turn" in fields else ""
                png_rel = f"png/step-{step:05d}/g{group:02d}-i{index:02d}{turn}.png"
                write_bytes_atomic(self.root / png_rel, e.png)
            record = e.record
            jsonl.append(self.path, {
                "step": step, "group": group, "index": index,
                "seed": record.seed, "subject": record.subject,
                "prompt": key, "completion": completion, "sketch": _sketch(e, completion),
                "png": png_rel, "reward": e.reward, "status": e.status,
                "violations": record.violations,
                "components": {c: e.component(c) for c in NAMES},
                "paint_fraction": record.paint_fraction,
                "n_shapes": record.n_shapes,
                "references": record.reference_ids,
                "tiers": list((record.references or {}).get("tiers") or []),
                "unavailable": record.unavailable.reason if record.unavailable else None,
                "breakdown": json.dumps(e.to_dict(), default=str),
                **fields,
            })

    def truncate(self, first_dropped_step: int) -> int:
        """Keep only the rollouts of steps before ``first_dropped_step``; return how many
        were dropped."""
        jsonl.repair(self.path)
        records = self.records()
        kept = [r for r in records if int(r["step"]) < first_dropped_step]
        if len(kept) != len(records):
            lines = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":"),
                                       default=str) + "\n" for r in kept)
            write_text_atomic(self.path, lines)
        png = self.root / "png"
        if png.is_dir():
            for folder in png.iterdir():
                if folder.name.startswith("step-") and int(folder.name[5:]) >= \
                        first_dropped_step:
                    shutil.rmtree(folder)
        return len(records) - len(kept)

    def to_dataset(self, target: str | Path | None = None) -> Any:
        """The rollouts as a ``datasets.Dataset`` (renders embedded as images), saved to
        ``target`` (default ``OUT/rollouts/dataset``)."""
        from datasets import Dataset, Features, Image, Value
        from datasets import Sequence as Seq

        rows = []
        for r in self.records():
            row = {k: v for k, v in r.items() if k != "components"}
            row.update({f"{c}_score": (r.get("components") or {}).get(c) for c in NAMES})
            png = r.get("png")
            row["image"] = ({"bytes": (self.root / png).read_bytes(), "path": png}
                            if png and (self.root / png).is_file() else None)
            rows.append(row)
        string = Value("string")
        episode = {"turn": Value("int64"), "turns": Value("int64"), "critique": string,
                   "episode_reward": Value("float64"), "saw_render": Value("bool")}
        features = Features({
            "step": Value("int64"), "group": Value("int64"), "index": Value("int64"),
            "seed": Value("int64"), "subject": string, "prompt": string,
            "completion": string, "sketch": string, "png": string,
            "reward": Value("float64"), "status": string, "violations": Seq(string),
            "paint_fraction": Value("float64"), "n_shapes": Value("int64"),
            "references": Seq(string), "tiers": Seq(string), "unavailable": string,
            "breakdown": string, **{f"{c}_score": Value("float64") for c in NAMES},
            "image": Image(),
            **{k: v for k, v in episode.items() if any(k in r for r in rows)},
        })
        dataset = Dataset.from_list(rows, features=features)
        target = Path(target) if target is not None else self.root / "dataset"
        if target.exists():
            shutil.rmtree(target)
        dataset.save_to_disk(str(target))
        return dataset
