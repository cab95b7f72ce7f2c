"""What the book shows of a run of 2-turn episodes: first attempts beside their revisions, and
one episode turn by turn.

:func:`revision_sheet` is a PNG of, per chosen third, a row of first attempts over a row of
their revisions (the episodes nearest that third's median gain, left to right by gain);
:func:`typical_episode` picks one episode of the last third (both turns scored, the sketch
changed, the gain nearest the third's median) and :func:`episode_record` writes it down: each
turn's sketch, reward, status, what the environment said of its render, and its render's file.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pandas as pd

from watercolour.analysis.thirds import third_of_steps
from watercolour.analysis.turns import EPISODE_KEYS, episode_pairs

SHEET_THIRDS = ("first", "last")
"""The thirds :func:`revision_sheet` shows: how the revisions began and how they ended."""


def scored_pairs(rollouts: pd.DataFrame) -> pd.DataFrame:
    """Episodes whose first and last turns both rendered and scored, with their ``gain`` (last
    minus first) and ``third``."""
    pairs = episode_pairs(rollouts)
    if pairs.empty:
        return pairs
    pairs = pairs[(pairs["status_first"] == "ok") & (pairs["status_last"] == "ok")
                  & pairs["reward_first"].notna() & pairs["reward_last"].notna()].copy()
    pairs["gain"] = pairs["reward_last"] - pairs["reward_first"]
    pairs["third"] = third_of_steps(pairs["step"]).to_numpy()
    return pairs


def nearest_median_gain(pairs: pd.DataFrame, n: int) -> pd.DataFrame:
    """The ``n`` episodes whose gain is nearest the median gain, by gain."""
    if pairs.empty:
        return pairs
    distance = (pairs["gain"] - pairs["gain"].median()).abs()
    return pairs.assign(distance=distance).nsmallest(n, "distance").sort_values("gain")


def paste_cell(sheet: Any, png: bytes | None, at: tuple[int, int], size: int, label: str
               ) -> None:
    """Paste ``png`` shrunk to ``size`` x ``size`` into ``sheet`` (a PIL image) at ``at``, with
    ``label`` in its corner; nothing when there is no picture."""
    from PIL import Image, ImageDraw

    if png is None:
        return
    image = Image.open(io.BytesIO(png)).convert("RGB").resize((size, size))
    sheet.paste(image, at)
    ImageDraw.Draw(sheet).text((at[0] + 4, at[1] + 4), label, fill="black")


def revision_sheet(pairs: pd.DataFrame, source: str | Path, per_row: int = 6,
                   size: int = 160) -> bytes:
    """A PNG: for each of :data:`SHEET_THIRDS`, the first attempts of ``per_row`` of the
    episodes in ``pairs`` (:func:`scored_pairs`) over their revisions, each labelled with its
    step and reward."""
    from PIL import Image, ImageDraw

    from watercolour.analysis.rollouts import rollout_png

    label_w = 110
    sheet = Image.new("RGB", (label_w + per_row * size, 2 * len(SHEET_THIRDS) * size), "white")
    draw = ImageDraw.Draw(sheet)
    for block, third in enumerate(SHEET_THIRDS):
        chosen = nearest_median_gain(pairs[pairs["third"] == third] if not pairs.empty
                                     else pairs, per_row)
        for row, (end, label) in enumerate((("first", "first\nattempt"),
                                            ("last", "revision"))):
            y = (2 * block + row) * size
            draw.text((6, y + size // 2 - 12), f"{third} third\n{label}", fill="black")
            for col, (_, item) in enumerate(chosen.iterrows()):
                paste_cell(sheet, rollout_png(item.get(f"png_{end}"), source),
                           (label_w + col * size, y), size,
                           f"s{int(item['step'])} {item[f'reward_{end}']:.2f}")
    buffer = io.BytesIO()
    sheet.save(buffer, format="PNG")
    return buffer.getvalue()


def typical_episode(rollouts: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame | None:
    """One episode of ``rollouts``, every turn in order: of ``pairs`` (:func:`scored_pairs`)
    in the last third, one whose sketch changed, its gain nearest the third's median
    (``None`` when no episode qualifies)."""
    if pairs.empty:
        return None
    pairs = pairs[pairs["third"] == "last"]
    changed = pairs[~pairs["unchanged"]]
    chosen = nearest_median_gain(changed if not changed.empty else pairs, 1)
    if chosen.empty:
        return None
    key = chosen.iloc[0]
    mask = pd.Series(True, index=rollouts.index)
    for name in EPISODE_KEYS:
        mask &= rollouts[name] == key[name]
    return rollouts[mask].sort_values("turn")


def episode_record(episode: pd.DataFrame, source: str | Path, out: Path
                   ) -> dict[str, Any]:
    """Write each turn's render as ``out/episode-tN.png`` and return the episode as JSON-ready
    data: ``step``, ``group``, ``index`` and per turn its ``sketch``, ``reward``, ``status``,
    ``critique`` (what the environment said of this turn's render, shown before the next
    turn) and ``png`` (the file's name beside the record, or ``None``)."""
    from watercolour.analysis.rollouts import rollout_png
    from watercolour.io import write_bytes_atomic

    first = episode.iloc[0]
    turns = []
    for _, row in episode.iterrows():
        turn = int(row["turn"])
        png = rollout_png(row.get("png"), source)
        name = None
        if png is not None:
            name = f"episode-t{turn}.png"
            write_bytes_atomic(out / name, png)
        reward = row.get("reward")
        turns.append({"turn": turn, "sketch": row.get("sketch"),
                      "reward": None if pd.isna(reward) else round(float(reward), 4),
                      "status": row.get("status"), "critique": row.get("critique"),
                      "png": name})
    return {**{k: int(first[k]) for k in EPISODE_KEYS}, "subject": first.get("subject"),
            "turns": turns}
