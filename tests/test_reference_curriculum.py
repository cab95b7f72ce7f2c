"""A curriculum of references (issue 30 §3): how many of a group's references come from the
pool's love tier, step by step (``--references-schedule``), the default draw unchanged, the
schedule in the dry run and in metrics.csv, and ``watercolour pool calibrate``."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from rewards_support import painting, pool
from train_support import LengthRewarder, small_run

from watercolour.cli import main
from watercolour.errors import InputError
from watercolour.rewards.curriculum import ReferencesSchedule, calibrate
from watercolour.rewards.references import draw_references


# ---------------------------------------------------------------- the draw
def test_the_default_draw_is_todays_draw():
    p = pool(6, 6)
    # recorded with the draw as it was before the curriculum (commit e04926c)
    recorded = {(11, 4): ["love-03", "love-04", "okay-03", "okay-05"],
                (3, 5): ["love-01", "love-04", "okay-04", "okay-01", "okay-02"],
                (7, 2): ["love-02", "okay-01"]}
    for (seed, n), ids in recorded.items():
        assert draw_references(p, seed, n).ids == ids
        assert draw_references(p, seed, n, love=n // 2).ids == ids
        assert draw_references(p, seed, n, love=ReferencesSchedule.parse("half").love(
            99, n, 100)).ids == ids


def test_love_only_draws_only_love_and_zero_draws_only_okay():
    only_love = pool(6, 0)  # a pool with no okay tier serves a love-only draw
    for seed in range(10):
        refs = draw_references(only_love, seed, 4, love=4)
        assert refs.tiers == ["love"] * 4 and len(set(refs.ids)) == 4
    refs = draw_references(pool(0, 6), 3, 4, love=0)
    assert refs.tiers == ["okay"] * 4
    assert draw_references(pool(6, 6), 5, 4, love=3).tiers == ["love"] * 3 + ["okay"]


@pytest.mark.parametrize("love", [-1, 5, 2.0, True, "2"])
def test_a_love_count_outside_zero_to_n_is_refused(love):
    with pytest.raises(InputError, match="love references"):
        draw_references(pool(6, 6), 0, 4, love=love)


def test_too_few_love_paintings_for_the_count_is_said():
    with pytest.raises(InputError, match="'love' painting"):
        draw_references(pool(2, 6), 0, 4, love=3)


# ---------------------------------------------------------------- the schedule
def test_the_schedules_give_the_love_count_by_step():
    half = ReferencesSchedule.parse(None)
    assert half.is_default and half.text == "half"
    assert [half.love(s, n, 10) for s, n in ((0, 4), (9, 5), (3, 1), (0, 7))] == [2, 2, 0, 3]
    only = ReferencesSchedule.parse("love-only")
    assert not only.is_default and [only.love(s, 4, 10) for s in (0, 9)] == [4, 4]
    linear = ReferencesSchedule.parse("linear:0.5:1.0")
    assert linear.text == "linear:0.5:1"
    assert [linear.love(s, 4, 5) for s in range(5)] == [2, 2, 3, 3, 4]  # 0.5 .. 1.0
    assert linear.share(4, 5) == 1.0 and linear.share(99, 5) == 1.0
    assert linear.love(0, 4, None) == 2  # the run's length unknown: the start share
    steps = ReferencesSchedule.parse(" steps:0=0.5, 40=0.75 ,80=1.0 ")
    assert steps.text == "steps:0=0.5,40=0.75,80=1"
    assert [steps.love(s, 4) for s in (0, 39, 40, 79, 80, 500)] == [2, 2, 3, 3, 4, 4]
    assert ReferencesSchedule.parse("steps:0=0.29").love(0, 100) == 29  # float slack
    assert ReferencesSchedule.parse("linear:0:0").love(3, 4, 10) == 0
    for text in ("half", "love-only", "linear:0.25:0.75", "steps:0=0,10=1"):
        schedule = ReferencesSchedule.parse(text)
        for step in range(0, 20):
            for n in range(1, 9):
                assert 0 <= schedule.love(step, n, 20) <= n


def test_a_pool_too_small_for_the_schedule_is_refused_before_the_run():
    small = pool(3, 1)
    ReferencesSchedule.parse("love-only").check_pool(pool(4, 0), 4, 10)
    with pytest.raises(InputError, match="up to 4 of 4 references from 'love'; the pool "
                                         "synthetic holds 3"):
        ReferencesSchedule.parse("love-only").check_pool(small, 4, 10)
    with pytest.raises(InputError, match="up to 2 of 4 references from 'okay'"):
        ReferencesSchedule.parse("half").check_pool(small, 4, 10)
    ReferencesSchedule.parse("steps:0=0.75,80=1").check_pool(small, 4, 60)  # never reaches 80
    with pytest.raises(InputError, match="'love'"):
        ReferencesSchedule.parse("steps:0=0.75,80=1").check_pool(small, 4, 100)
    with pytest.raises(InputError, match="'love'"):
        ReferencesSchedule.parse("steps:0=0.75,80=1").check_pool(small, 4)


@pytest.mark.parametrize("text", ["third", "linear:0.5", "linear:0.5:1.5", "linear:a:1",
                                  "steps:10=0.5", "steps:0=0.5,0=1", "steps:0=0.5,x=1",
                                  "steps:0", "steps:0=-0.1", "love only"])
def test_bad_schedule_text_is_one_error_naming_the_forms(text):
    with pytest.raises(InputError) as caught:
        ReferencesSchedule.parse(text)
    message = str(caught.value)
    assert "--references-schedule" in message and "\n" not in message
    for form in ("half", "love-only", "linear:A:B", "steps:0=A"):
        assert form in message


# ---------------------------------------------------------------- training
def test_the_dry_run_shows_and_records_the_schedule(capsys):
    from watercolour.train.config import parse_args
    from watercolour.train.trainer import dry_run, print_dry_run, reward_summary

    run, training = parse_args(["--config", "tiny-cpu", "--dry-run"])
    assert run.references_schedule == "half" and "love share half" in reward_summary(run)
    run, training = parse_args(["--config", "tiny-cpu", "--dry-run", "--references-schedule",
                                "linear:0.5:1.0"])
    data = dry_run(run, training)
    assert data["references_schedule"] == "linear:0.5:1"
    assert data["config"]["run"]["references_schedule"] == "linear:0.5:1"
    print_dry_run(data, as_json=False)
    assert "love share linear:0.5:1" in capsys.readouterr().out
    print_dry_run(data, as_json=True)
    assert json.loads(capsys.readouterr().out)["references_schedule"] == "linear:0.5:1"


def test_the_trainer_refuses_a_bad_schedule_and_takes_one_with_a_server():
    from watercolour.train.config import parse_args

    with pytest.raises(InputError, match="accepted: half"):
        parse_args(["--config", "tiny-cpu", "--references-schedule", "most"])
    run, _ = parse_args(["--config", "tiny-cpu", "--references-schedule", "love-only",
                         "--env-url", "http://127.0.0.1:9"])
    assert run.references_schedule == "love-only" and run.schedule.love(0, 4) == 4
    run, _ = parse_args(["--config", "tiny-cpu", "--env-url", "http://127.0.0.1:9"])
    assert run.references_schedule == "half"


class DrawingRewarder(LengthRewarder):
    """LengthRewarder whose records carry a draw from a synthetic pool, ``love`` as asked."""

    def __init__(self, config) -> None:
        super().__init__(config)
        self.pool = pool(6, 6)
        self.loves: list[int | None] = []

    def evaluate_group(self, replies, subject=None, seed=None, render_seed=None, love=None):
        self.loves.append(love)
        refs = draw_references(self.pool, seed, self.config.references, love=love)
        out = super().evaluate_group(replies, subject, seed, render_seed)
        for e in out:
            e.record.references = refs.to_dict()
        return out


@pytest.mark.slow
def test_a_run_with_a_schedule_draws_by_step_and_logs_the_love_share(tmp_path):
    import torch

    from watercolour.train.config import parse_args
    from watercolour.train.trainer import reward_config, train

    torch.set_num_threads(1)
    out = tmp_path / "run"
    run, training = parse_args(small_run("builtin:tiny-qwen3", out, "--references-schedule",
                                         "linear:0.5:1.0", "--save-steps", "10"))
    rewarder = DrawingRewarder(reward_config(run))
    summary = train(run, training, rewarder=rewarder)
    assert summary["global_step"] == 2
    assert rewarder.loves == [2, 4]  # 4 references: a share of 0.5 at step 0, 1.0 at the last
    with open(out / "metrics.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [float(r["references_love_share"]) for r in rows] == [0.5, 1.0]
    records = [json.loads(line) for line in
               (out / "rollouts/rollouts.jsonl").read_text().splitlines()]
    assert json.loads((out / "run.json").read_text())["config"]["run"][
        "references_schedule"] == "linear:0.5:1"
    assert len(records) == 8


def test_the_love_share_metric_counts_each_draw_once():
    from watercolour.rewards import Evaluation
    from watercolour.train.reward_source import batch_metrics

    def one(seed, tiers):
        return Evaluation.from_dict({"reward": 0.5, "status": "ok", "components": {},
                                     "references": {"seed": seed, "ids": [f"{seed}-{i}" for i
                                                                          in range(len(tiers))],
                                                    "tiers": tiers}})

    batch = [one(1, ["love", "okay"])] * 3 + [one(2, ["love", "love"])]
    assert batch_metrics(batch, {})["references_love_share"] == 0.75
    assert "references_love_share" not in batch_metrics(
        [Evaluation.from_dict({"reward": 0.5, "status": "ok", "components": {}})], {})


def test_the_default_schedule_calls_the_source_as_before():
    from watercolour.rewards import RewardConfig
    from watercolour.rewards.trl import RewardFunctions

    class Plain(LengthRewarder):  # no love keyword: a source written before the curriculum
        pass

    functions = RewardFunctions(Plain(RewardConfig.from_env(environ={})),
                                schedule=ReferencesSchedule.parse("half"))
    assert [e.reward for e in functions.evaluations(["x" * 50], ["p"])] == [0.5]


# ---------------------------------------------------------------- calibrate
def _rollout_folder(folder: Path, kinds: list[str]) -> Path:
    (folder / "rollouts" / "png").mkdir(parents=True)
    lines = []
    for i, kind in enumerate(kinds):
        rel = f"png/{i:03d}.png"
        (folder / "rollouts" / rel).write_bytes(painting(500 + i, kind))
        lines.append(json.dumps({"step": i // 2, "group": 0, "index": i % 2, "seed": 1,
                                 "subject": "a peach hibiscus", "reward": 0.5, "status": "ok",
                                 "png": rel}))
    lines.append(json.dumps({"step": 9, "group": 0, "index": 0, "seed": 1, "reward": 0.0,
                             "status": "rejected", "png": None}))
    (folder / "rollouts" / "rollouts.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def test_calibrate_measures_each_reference_against_the_policy():
    from watercolour.rewards.judge.offline_judge import PoolFittedJudge

    p = pool(3, 3)
    judge = PoolFittedJudge.fit(p)
    candidates = [(painting(700 + i, "okay"), "a rose") for i in range(3)]
    report = calibrate(judge, p, candidates)
    assert report["candidates"] == 3 and len(report["references"]) == 6
    for row in report["references"]:
        assert row["asked"] == 6 and 0 <= row["comparisons"] <= 6  # 3 renders x 2 orders
        assert row["win_rate"] is None or 0.0 <= row["win_rate"] <= 1.0
    assert set(report["tiers"]) == {"love", "okay"}
    assert report["tiers"]["love"]["paintings"] == 3


def test_pool_calibrate_writes_the_report(tmp_path, capsys, monkeypatch):
    from pool_helpers import rows

    from watercolour.pool.dataset import write_pool_folder

    monkeypatch.chdir(tmp_path)  # the judge's fit cache lands here
    pool_rows = rows(3, 3)
    for row in pool_rows:
        row["png"] = painting(row["seed"], row["tier"])
    folder = write_pool_folder(pool_rows, tmp_path / "pool")
    run = _rollout_folder(tmp_path / "run", ["love", "okay", "love", "okay"])
    out = tmp_path / "calibration.json"
    assert main(["pool", "calibrate", str(folder), "--rollouts", str(run), "--out", str(out),
                 "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    written = json.loads(out.read_text())
    assert written == json.loads(json.dumps(printed, sort_keys=True))
    assert written["candidates"] == 4  # the rejected rollout has no render
    assert {r["id"] for r in written["references"]} == {r["id"] for r in pool_rows}
    for r in written["references"]:
        assert set(r) >= {"id", "tier", "subject", "win_rate", "comparisons"}
        assert r["asked"] == 8
    assert set(written["tiers"]) == {"love", "okay"}
    assert main(["pool", "calibrate", str(folder), "--rollouts",
                 str(run / "rollouts"), "--max-rollouts", "1"]) == 0
    text = capsys.readouterr().out
    assert "1 rendered rollouts" in text and "love:" in text and "okay:" in text


def test_pool_calibrate_bad_input_is_one_line(tmp_path, capsys):
    from pool_helpers import rows

    from watercolour.pool.dataset import write_pool_folder

    folder = write_pool_folder(rows(2, 2), tmp_path / "pool")
    assert main(["pool", "calibrate", str(folder), "--rollouts", str(tmp_path / "none")]) == 2
    assert "rollouts not found" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "rollouts.jsonl").write_text(json.dumps(
        {"step": 0, "reward": 0.0, "status": "rejected", "png": None}) + "\n")
    assert main(["pool", "calibrate", str(folder), "--rollouts", str(empty)]) == 2
    assert "no rendered rollouts" in capsys.readouterr().err
    assert main(["pool", "calibrate", str(folder), "--rollouts", str(empty),
                 "--max-rollouts", "0"]) == 2
    assert "--max-rollouts" in capsys.readouterr().err


# ---------------------------------------------------------------- the environment server
def _pool_folder(folder: Path) -> Path:
    from pool_helpers import rows

    from watercolour.pool.dataset import write_pool_folder

    pool_rows = rows(4, 4)
    for row in pool_rows:
        row["png"] = painting(row["seed"], row["tier"])
    return write_pool_folder(pool_rows, folder)


def test_reset_takes_the_love_count_as_an_option(tmp_path, monkeypatch):
    from watercolour.env.config import EnvConfig
    from watercolour.env.server.environment import Service, WatercolourEnvironment
    from watercolour.render import RenderConfig
    from watercolour.rewards import Mix, RewardConfig

    monkeypatch.chdir(tmp_path)
    pool_folder = _pool_folder(tmp_path / "pool")
    config = EnvConfig(reward=RewardConfig(mix=Mix.preset("judge-led"), pool=str(pool_folder)),
                       render=RenderConfig(workers=1), max_turns=2)
    service = Service(config, renderer=object())  # reset renders nothing
    default = WatercolourEnvironment(service).reset(seed=7, subject="a lotus")
    same = WatercolourEnvironment(service).reset(seed=7, subject="a lotus", love_references=2)
    assert same.reference_ids == default.reference_ids  # 2 of 4: today's draw
    env = WatercolourEnvironment(service)
    ids = env.reset(seed=7, subject="a lotus", love_references=4).reference_ids
    tiers = [service.rewarder.pool.get(i).tier for i in ids]
    assert tiers == ["love"] * 4 and env.state.love_references == 4
    assert WatercolourEnvironment(service).state.love_references is None
    for bad in (5, -1, True, "2", 1.5):
        with pytest.raises(ValueError, match="love_references must be a whole number from 0 "
                                             "to 4"):
            WatercolourEnvironment(service).reset(seed=1, love_references=bad)


@pytest.mark.browser
@pytest.mark.slow
def test_the_remote_rewarder_sends_the_love_count(tmp_path):
    from serving import EnvServer

    from watercolour.env import RemoteRewarder

    pool_folder = _pool_folder(tmp_path / "pool")
    server = EnvServer(tmp_path, {"WATERCOLOUR_POOL": str(pool_folder),
                                  "WATERCOLOUR_RENDER_WORKERS": "1",
                                  "WATERCOLOUR_JUDGE_WEIGHT": "", "WATERCOLOUR_HPS_WEIGHT": "",
                                  "WATERCOLOUR_HPS_URL": "",
                                  "WATERCOLOUR_JUDGE_BASE_URL": ""}).start()
    rejected = ("```javascript\nfunction setup() { createCanvas(256, 256, WEBGL); }\n"
                "function draw() { ellipse(0, 0, 80, 80); }\n```\n")  # nothing rendered
    try:
        server.wait()
        with RemoteRewarder([server.url], timeout_s=120, retries=0) as rewarder:
            default, = rewarder.evaluate_group([rejected], "a lotus", 7)
            half, = rewarder.evaluate_group([rejected], "a lotus", 7, love=2)
            only, = rewarder.evaluate_group([rejected], "a lotus", 7, love=4)
            too_many, = rewarder.evaluate_group([rejected], "a lotus", 7, love=5)
            with pytest.raises(TypeError, match="love must be an integer"):
                rewarder.evaluate_group([rejected], love="4")
    finally:
        server.stop()
    assert default.status == "rejected" and default.record.references["tiers"] == \
        ["love", "love", "okay", "okay"]
    assert half.record.references == default.record.references
    assert only.record.references["tiers"] == ["love"] * 4
    assert too_many.status == "unavailable" and too_many.reward is None
    assert "love_references must be" in too_many.to_dict()["unavailable"]["reason"]


def test_the_multi_turn_rollout_draws_by_the_schedule():
    from types import SimpleNamespace

    from watercolour.rewards import RewardConfig
    from watercolour.train.episodes import EpisodeRollout

    source = DrawingRewarder(RewardConfig.from_env(environ={}))
    episodes = EpisodeRollout(source, 2, "a lotus", penalty=0.0,
                              schedule=ReferencesSchedule.parse("steps:0=0.25,5=1"))
    state = SimpleNamespace(max_steps=10)
    first = episodes._score(["a" * 10, "b" * 10], ["k", "k"], 0, state)
    later = episodes._score(["a" * 10], ["k"], 7, state)
    assert source.loves == [1, 4]
    assert first[0].record.references["tiers"] == ["love", "okay", "okay", "okay"]
    assert later[0].record.references["tiers"] == ["love"] * 4
    plain = EpisodeRollout(source, 2, "a lotus", penalty=0.0)
    plain._score(["a"], ["k"], 0, state)
    assert source.loves[-1] is None  # no schedule: the source's default draw
