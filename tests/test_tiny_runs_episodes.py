"""Publishing a run of 2-turn episodes for the book: the analysis by turn, the rollout summary of
each episode's last turn and of each turn, the revision sheet and one episode turn by turn.

The run folder is written here the way the trainer writes one (``metrics.csv``, ``run.json``,
``rollouts/rollouts.jsonl`` and a PNG per rendered turn), so no browser or model is needed."""

from __future__ import annotations

import csv
import io
import json

import pytest
from PIL import Image

from watercolour.train.tiny.runs import main, publish

STEPS = 9


def png(shade: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (32, 32), (shade, 120, 200)).save(buffer, format="PNG")
    return buffer.getvalue()


def write_run(root):
    """9 steps of 2 episodes: turn 1 scores 0.4 (episode 1 of step 4: rejected), the revision
    0.4 + 0.02 x step, except episode 1 of step 8, which repeats its first sketch."""
    (root / "rollouts" / "png").mkdir(parents=True)
    lines, rows = [], []
    for step in range(STEPS):
        t1, t2 = [], []
        for index in range(2):
            episode = {}
            for turn in (1, 2):
                rejected = (step, index, turn) == (4, 1, 1)
                repeat = (step, index) == (8, 1)
                reward = 0.05 if rejected else (0.4 if turn == 1 or repeat else 0.4 + 0.02 * step)
                name = None
                if not rejected:
                    name = f"png/step-{step:05d}/g00-i{index:02d}-t{turn}.png"
                    (root / "rollouts" / name).parent.mkdir(parents=True, exist_ok=True)
                    (root / "rollouts" / name).write_bytes(png(10 * step + turn))
                sketch = "same" if repeat else f"sketch {step} {index} {turn}"
                episode[turn] = reward
                lines.append({"step": step, "group": 0, "index": index, "turn": turn,
                              "turns": 2, "reward": reward,
                              "status": "rejected" if rejected else "ok",
                              "sketch": sketch, "png": name, "subject": "a peach hibiscus",
                              "critique": f"critique of {step} {index} {turn}",
                              "n_shapes": None if rejected else 10 + turn,
                              "paint_fraction": None if rejected else 0.1 * turn,
                              "violations": ["no_painting_calls"] if rejected else [],
                              "episode_reward": None})
            t1.append(episode[1])
            t2.append(episode[2])
        rows.append({"step": step, "reward": sum(t2) / 2, "reward_turn1": sum(t1) / 2,
                     "reward_turn2": sum(t2) / 2,
                     "revision_beats_first": sum(b > a for a, b in zip(t1, t2)) / 2})
    (root / "rollouts" / "rollouts.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines))
    with open(root / "metrics.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    (root / "run.json").write_text(json.dumps({"config": {"run": {"turns": 2}}}))
    return lines


def test_an_episodes_run_is_published_with_its_turns(tmp_path):
    lines = write_run(tmp_path / "run")
    out = tmp_path / "pub"
    analysis = publish(tmp_path / "run", out)
    names = {p.name for p in out.iterdir()}
    assert {"metrics.csv", "run.json", "analysis.json", "rollouts-summary.json",
            "contact-sheet.png", "revisions.png", "episode.json", "episode-t1.png",
            "episode-t2.png"} <= names

    # the analysis: each turn by thirds; the revision's gain in the last third (steps 6-8)
    turns = analysis["turns"]["curve"]
    assert turns["by_turn"]["reward_turn1"]["last"] == pytest.approx(0.4)
    gain = turns["revision_gain"]["last"]
    assert gain["n"] == 3 and gain["mean"] == pytest.approx((0.12 + 0.14 + 0.08) / 3, abs=1e-6)
    found = analysis["turns"]["rollouts"]
    assert found["episodes_with_revision"] == 2 * STEPS
    assert found["all"]["repaired"] == 1
    assert found["all"]["unchanged_sketch"] == pytest.approx(1 / 18, abs=1e-6)

    # the summary: of last turns (18 episodes, all ok), and of each turn (18 lines each)
    summary = json.loads((out / "rollouts-summary.json").read_text())
    assert summary["rollouts"] == 2 * STEPS
    assert sum(b["ok"] for b in summary["by_third"].values()) == 2 * STEPS
    assert set(summary["by_turn"]) == {"1", "2"}
    assert sum(b["rejected"] for b in summary["by_turn"]["1"].values()) == 1
    assert sum(b["rollouts"] for b in summary["by_turn"]["2"].values()) == 2 * STEPS

    # the revision sheet: first attempts over revisions, for the first and the last third
    sheet = Image.open(out / "revisions.png")
    assert sheet.size == (110 + 6 * 160, 4 * 160)
    # the first attempt of the shown episodes is painted in its cell (not left white)
    assert sheet.getpixel((110 + 80, 80)) != (255, 255, 255)

    # one episode of the last third, turn by turn, its renders beside it
    episode = json.loads((out / "episode.json").read_text())
    assert episode["step"] in (6, 7, 8) and [t["turn"] for t in episode["turns"]] == [1, 2]
    assert episode["turns"][0]["sketch"] != episode["turns"][1]["sketch"]
    source = {(r["step"], r["index"], r["turn"]): r for r in lines}
    for turn in episode["turns"]:
        line = source[(episode["step"], episode["index"], turn["turn"])]
        assert turn["critique"] == line["critique"] and turn["reward"] == line["reward"]
        written = (out / turn["png"]).read_bytes()
        assert written == (tmp_path / "run" / "rollouts" / line["png"]).read_bytes()


def test_publish_only_prints_the_turns(tmp_path, capsys):
    write_run(tmp_path / "runs" / "revise")
    assert main(["--mix", "judge-led", "--name", "revise", "--runs", str(tmp_path / "runs"),
                 "--results", str(tmp_path / "results"), "--publish-only"]) == 0
    printed = capsys.readouterr().out
    assert "reward_turn2:" in printed and "paired t" in printed
    assert (tmp_path / "results" / "revise" / "revisions.png").is_file()


@pytest.mark.parametrize("extra", [[], ["--steps", "7"]])
def test_steps_default_to_the_recipes(tmp_path, monkeypatch, extra):
    """A run trains the recipe's max_steps unless --steps says otherwise; the trainer gets as
    many episodes as steps (2 prompts a step over 3 epochs, as the recipes set them)."""
    import watercolour.train.tiny.runs as runs
    import watercolour.train.trainer as trainer
    from watercolour.train.config import parse_args

    recipe = parse_args(["--config", "tiny-revise", "--mix", "judge-led"])[1].max_steps
    steps = int(extra[1]) if extra else recipe
    assert recipe != 7

    got = {}
    monkeypatch.setattr(trainer, "train", lambda run, training: got.update(
        steps=training.max_steps, episodes=run.n_episodes, out=training.output_dir))
    monkeypatch.setattr(runs, "publish", lambda run, out: {"findings": {}})
    assert main(["--config", "tiny-revise", "--mix", "judge-led", "--name", "revise",
                 "--runs", str(tmp_path), *extra]) == 0
    assert got == {"steps": steps, "episodes": steps, "out": str(tmp_path / "revise")}


def test_the_chapter_shows_the_published_run_by_turn(tmp_path):
    from watercolour.book.chapters import revise

    write_run(tmp_path / "runs" / "revise")
    publish(tmp_path / "runs" / "revise", tmp_path / "results" / "revise")
    assert revise.committed_run(tmp_path / "runs") is None  # not published there
    folder = revise.committed_run(tmp_path / "results")
    analysis = revise.read_analysis(folder)
    table, record = revise.turns_table(analysis)
    assert "| first attempt | 0.400 | 0.342 | 0.400 |" in table  # step 4: one rejected
    assert "revision minus first attempt" in table
    # the revision rises 0.02 a step: the gain's t is large; its slope t too
    assert record["targets"]["last_turn_rises"] is True
    assert record["revision_gain"]["last"]["n"] == 3
    changes = revise.changes_table(analysis)
    assert changes.count("\n") == 4  # header, rule, three thirds
    text = revise.episode_markdown(folder)
    episode = json.loads((folder / "episode.json").read_text())
    assert episode["turns"][0]["critique"] in text and "```javascript" in text
    assert episode["turns"][0]["sketch"] in text
    assert f"-{episode['turns'][0]['sketch']}\n+{episode['turns'][1]['sketch']}" in text
    assert revise.changed_lines("a\nb\nc", "a\nB\nc") == "@@ -2 +2 @@\n-b\n+B"
    assert revise.changed_lines("a", "a") == "(no change)"
    figure = revise.episode_figure(folder)
    assert len(figure.axes) == 2 and figure.axes[1].get_title().startswith("revision")
    curves = revise.turn_curves_figure(folder)
    assert [ax.get_title() for ax in curves.axes] == [
        "Reward by turn", "Revisions that beat their first attempt"]


def test_the_targets_are_the_issues():
    from watercolour.book.chapters.revise import targets_met

    assert targets_met(3.2, 3.0) == {"revision_beats_first_in_last_third": True,
                                     "last_turn_rises": True}
    assert targets_met(2.9, None) == {"revision_beats_first_in_last_third": False,
                                      "last_turn_rises": None}


def test_the_chapter_compares_the_evaluations_in_episodes(tmp_path):
    from watercolour.book.chapters.revise import evaluation_table
    from watercolour.train.evaluate import summarise
    from watercolour.train.evaluate_episodes import compare_turns

    def turn(number, status, reward):
        return {"turn": number, "status": status, "reward": reward,
                "violations": [] if status == "ok" else ["no_painting_calls: none"]}

    episodes = [[turn(1, "ok", 0.5), turn(2, "ok", 0.7)],
                [turn(1, "rejected", 0.05), turn(2, "ok", 0.6)]]
    result = {"turns": 2, "samples": 2,
              "by_turn": {str(t): summarise([e[t - 1] for e in episodes]) for t in (1, 2)},
              "revision": compare_turns(episodes)}
    assert evaluation_table(tmp_path) == ("", {})
    (tmp_path / "revise").mkdir()
    (tmp_path / "revise" / "final-eval.json").write_text(json.dumps(result))
    table, record = evaluation_table(tmp_path)
    assert "| after the run | 1/2 | 0.275 | 2/2 | 0.650 | 2 / 0 / 0 |" in table
    assert record["after the run"]["revision_vs_first"]["repaired"] == 1


def test_watercolour_publish_writes_any_finished_run(tmp_path, capsys):
    """The verb publishes a run that ``watercolour train`` made (not only the tiny painter's),
    into the folder named, and prints the run's headline."""
    from watercolour.cli import main as cli

    write_run(tmp_path / "run")
    out = tmp_path / "results" / "smollm2" / "judge-led"
    assert cli(["publish", "--run", str(tmp_path / "run"), "--out", str(out)]) == 0
    for name in ("metrics.csv", "run.json", "analysis.json", "rollouts-summary.json",
                 "contact-sheet.png", "revisions.png"):
        assert (out / name).is_file(), name
    printed = capsys.readouterr().out
    assert printed.startswith("reward by thirds ") and "slope t " in printed
    summary = json.loads((out / "rollouts-summary.json").read_text())
    assert summary["rollouts"] == STEPS * 2  # the last turn of each episode
