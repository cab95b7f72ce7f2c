"""The training program's flags: every flag of the published command (aliases where TRL's
names differ), recipes, one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from watercolour.train.config import parse_args, parser

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ("--env-url http://127.0.0.1:8000 --model Qwen/Qwen3.5-35B-A3B --lora --all-linear "
             "--bf16 --gradient-checkpointing --subject 'a peach hibiscus' --references 4 "
             "--top-p 0.95 --top-k 20 --lr 5e-5 --lr-scheduler constant_with_warmup "
             "--warmup-steps 5 --scale-rewards none --steps 110 --n-episodes 240 "
             "--num-generations 8 --per-device-batch-size 1 --gradient-accumulation-steps 8 "
             "--max-completion-length 8192 --run-tag my-run --out user/watercolour-grpo "
             "--push-to-hub")


def published_argv() -> list[str]:
    import shlex

    return shlex.split(PUBLISHED)


def test_the_published_command_parses_with_its_own_names():
    run, t = parse_args(published_argv())
    assert run.model_name_or_path == "Qwen/Qwen3.5-35B-A3B"
    assert run.lora and run.all_linear and run.target_modules == "all-linear"
    assert run.env_url == ["http://127.0.0.1:8000"]
    assert run.subject == "a peach hibiscus" and run.references == 4 and run.n_episodes == 240
    assert t.bf16 is True  # kept even without a GPU (the trainer refuses it then)
    assert t.activation_checkpointing is True
    assert (t.top_p, t.top_k, t.learning_rate, t.warmup_steps) == (0.95, 20, 5e-5, 5)
    assert str(t.lr_scheduler_type.value if hasattr(t.lr_scheduler_type, "value")
               else t.lr_scheduler_type) == "constant_with_warmup"
    assert t.scale_rewards == "none" and t.max_steps == 110
    assert (t.num_generations, t.per_device_train_batch_size,
            t.gradient_accumulation_steps) == (8, 1, 8)
    assert t.generation_batch_size == 8  # one prompt a step, a group of 8
    assert t.max_completion_length == 8192
    assert t.run_name == "my-run" and t.output_dir == "user/watercolour-grpo"
    assert t.push_to_hub is True


def test_every_published_flag_is_an_option_with_help():
    options = {}
    for action in parser()._actions:
        for s in action.option_strings:
            options[s] = action
    for flag in [a for a in published_argv() if a.startswith("--")]:
        assert flag in options, flag
        assert (options[flag].help or "").strip(), f"{flag} has no help"
    for flag in ("--config", "--resume", "--dry-run", "--json", "--use-vllm", "--report-to",
                 "--mix", "--pool", "--gate-mode"):
        assert flag in options or flag == "--config", flag


def test_a_recipe_sets_defaults_and_flags_override_it():
    run, t = parse_args(["--config", str(ROOT / "src/watercolour/recipes/full-35b.yaml"), "--steps", "3",
                         "--env-url", "http://a:1,http://b:2", "--env-url", "http://c:3"])
    assert t.max_steps == 3 and t.max_completion_length == 8192
    assert t.chat_template_kwargs == {"enable_thinking": False}
    assert run.all_linear and run.model_name_or_path == "Qwen/Qwen3.5-35B-A3B"
    assert run.env_url == ["http://c:3"]  # the last --env-url wins, commas separate
    run, _ = parse_args(["--env-url", "http://a:1,http://b:2"])
    assert run.env_url == ["http://a:1", "http://b:2"]


@pytest.mark.parametrize("recipe, dtype", [("tiny-cpu", "float32"), ("smoke-4b", "bfloat16"),
                                           ("full-35b", "bfloat16")])
def test_the_gpu_recipes_and_bf16_load_the_weights_in_bfloat16(recipe, dtype):
    """TRL loads in float32 unless model_init_kwargs names a dtype: --bf16 names bfloat16."""
    run, t = parse_args(["--config", recipe])
    assert t.load_dtype == dtype and run.dtype == dtype and not run.adapt_vision
    assert (t.model_init_kwargs or {}).get("dtype", "float32") == dtype
    _, t = parse_args(["--config", recipe, "--bf16", "false"])
    assert t.load_dtype == "float32"
    _, t = parse_args(["--bf16", "--model-init-kwargs", '{"dtype": "float32"}'])
    assert t.load_dtype == "float32"  # an explicit dtype wins
    _, t = parse_args(["--model-init-kwargs", '{"dtype": "bfloat16"}'])
    assert t.load_dtype == "bfloat16" and not t.bf16


@pytest.mark.parametrize("recipe", ["tiny-cpu", "smoke-4b", "full-35b", "revise-4b",
                                    "smollm2-cpu"])
def test_every_recipe_parses(recipe):
    _run, t = parse_args(["--config", str(ROOT / f"src/watercolour/recipes/{recipe}.yaml")])
    assert t.generation_batch_size % t.num_generations == 0
    assert t.max_steps > 0 and t.output_dir


def test_tiny_recipe_trains_the_tiny_painter_behind_the_allowlist_gate():
    run, training = parse_args(["--config", str(ROOT / "src/watercolour/recipes/tiny-cpu.yaml")])
    assert run.model_name_or_path == "builtin:tiny-painter"
    assert run.gate_mode == "allowlist" and run.prompt == "short"
    assert training.num_generations == 8 and training.max_steps >= 60


def test_the_smollm2_recipe_trains_the_warm_start_with_lora_and_no_reference_pass():
    run, training = parse_args(["--config", str(ROOT / "src/watercolour/recipes/smollm2-cpu.yaml")])
    assert run.model_name_or_path == "runs/sft-smollm2/final"
    assert run.gate_mode == "allowlist" and run.prompt == "short" and run.mix == "judge-led"
    assert training.beta == 0.0 and training.max_steps >= 40
    assert training.generation_batch_size == training.num_generations  # one prompt a step
    assert training.load_dtype == "bfloat16" and not training.bf16  # no autocast on a CPU


@pytest.mark.parametrize("argv, message", [
    (["--mix", "everything"], "unknown mix .everything.; choose from"),
    (["--all-linear"], "add --lora"),
    (["--adapt-vision"], "add --lora"),
    (["--prompt", "long"], "--prompt must be full or short"),
    (["--references", "0"], "--references must be positive"),
    (["--render-workers", "0"], "--render-workers must be positive"),
    (["--gate-mode", "open"], "--gate-mode must be one of library, allowlist"),
    (["--use_rslora"], "add --lora"),
    (["--lora", "--all-linear", "--lora_target_modules", "q_proj"], "one or the other"),
    (["--lora", "--lora_r", "0"], "--lora_r must be at least 1"),
    (["--dtype", "float16", "--model-init-kwargs", '{"dtype": "bfloat16"}'], "disagree"),
])
def test_bad_values_are_refused_with_the_reason(argv, message):
    with pytest.raises(ValueError, match=message):
        parse_args(argv)


BORROWED = {"WATERCOLOUR_REFERENCES": "2", "WATERCOLOUR_RENDER_WORKERS": "3",
            "WATERCOLOUR_RENDER_DEADLINE": "12.5", "WATERCOLOUR_GATE_MODE": "allowlist",
            "WATERCOLOUR_POOL": "some/pool"}


def test_the_dry_run_keeps_the_environments_values(monkeypatch):
    """A flag left unset is its WATERCOLOUR_* variable (it was the flag's own default: 4
    references and one browser whatever the environment said)."""
    from watercolour.train.trainer import dry_run

    for name, value in BORROWED.items():
        monkeypatch.setenv(name, value)
    run, training = parse_args(["--config", "tiny-cpu"])
    assert (run.references, run.render_workers, run.render_deadline_s, run.pool) == \
        (2, 3, 12.5, "some/pool")
    assert run.render_config().workers == 3 and run.render_config().deadline_s == 12.5
    shown = dry_run(run, training)
    assert shown["reward"]["references"] == 2 and shown["reward"]["pool"] == "some/pool"
    assert shown["config"]["run"]["render_workers"] == 3
    assert "2 references a group" in shown["reward_summary"]
    assert "(3 browsers)" in shown["reward_summary"]


def test_unset_and_no_variable_is_the_configs_default(monkeypatch):
    from watercolour.render import RenderConfig
    from watercolour.rewards import RewardConfig

    for name in [*BORROWED, "WATERCOLOUR_JUDGE_WEIGHT", "WATERCOLOUR_HPS_WEIGHT"]:
        monkeypatch.delenv(name, raising=False)
    run, _ = parse_args([])
    assert (run.references, run.pool, run.gate_mode, run.mix) == \
        (RewardConfig.references, None, "library", None)
    assert (run.render_workers, run.render_deadline_s) == \
        (RenderConfig.workers, RenderConfig.deadline_s)
    assert run.reward_config().mix.name == "judge-led"


def test_a_flag_beats_the_environment_and_the_recipe_beats_it_too(monkeypatch):
    for name, value in BORROWED.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("WATERCOLOUR_JUDGE_WEIGHT", "0.3")
    monkeypatch.setenv("WATERCOLOUR_HPS_WEIGHT", "0.6")
    run, _ = parse_args(["--references", "6", "--render-workers", "1", "--render-deadline-s",
                         "40", "--gate-mode", "library", "--pool", "other", "--mix", "hps-only"])
    assert (run.references, run.render_workers, run.render_deadline_s, run.gate_mode,
            run.pool) == (6, 1, 40.0, "library", "other")
    config = run.reward_config()
    assert (config.references, config.gate_mode, config.mix.name) == (6, "library", "hps-only")
    monkeypatch.setenv("WATERCOLOUR_GATE_MODE", "library")
    run, _ = parse_args(["--config", "tiny-cpu"])  # the recipe says allowlist, judge-led
    assert run.gate_mode == "allowlist" and run.reward_config().mix.name == "judge-led"
    run, _ = parse_args([])  # no recipe, no flag: the variables' mix
    assert run.mix is None and run.reward_config().mix.name == "hps-led"


@pytest.mark.parametrize("name, value, message", [
    ("WATERCOLOUR_RENDER_WORKERS", "0", "WATERCOLOUR_RENDER_WORKERS must be positive, got '0'"),
    ("WATERCOLOUR_RENDER_DEADLINE", "soon",
     "WATERCOLOUR_RENDER_DEADLINE must be a number, got 'soon'"),
    ("WATERCOLOUR_REFERENCES", "two", "WATERCOLOUR_REFERENCES must be an integer, got 'two'"),
    ("WATERCOLOUR_GATE_MODE", "open", "WATERCOLOUR_GATE_MODE must be one of library, allowlist"),
])
def test_a_bad_variable_is_one_error_naming_it(capsys, monkeypatch, name, value, message):
    """Refused when the flags are read, before anything runs (a bad render variable was
    ignored: the flag's own default won)."""
    monkeypatch.setenv(name, value)
    code, out, err = _cli(capsys, "--config", "tiny-cpu", "--dry-run", "--json")
    assert code == 2 and not out
    assert err.strip().count("\n") == 0 and message in err, err


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    """``watercolour train ARGS`` in this process (the subprocess path is the dry-run test's)."""
    from watercolour.cli import main

    try:
        code = main(["train", *args])
    except SystemExit as stop:
        code = int(stop.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_errors_are_one_line(capsys):
    code, _, err = _cli(capsys, "--no-such-flag", "3")
    assert code == 2
    assert err.strip().count("\n") == 0, err
    assert "--no-such-flag" in err
    code, _, err = _cli(capsys, "--mix", "everything", "--dry-run")
    assert code == 2
    assert err.strip().count("\n") == 0 and "unknown mix 'everything'" in err, err


def test_help_lists_our_flags_and_trls(capsys):
    code, out, _ = _cli(capsys, "--help")
    assert code == 0
    for flag in ("--n-episodes", "--env-url", "--lr", "--steps", "--run-tag", "--out",
                 "--num_generations", "--scale_rewards", "--dry-run", "--model", "--lora",
                 "--all-linear", "--adapt-vision", "--use_peft", "--lora_target_modules",
                 "--dtype", "--use_rslora", "--model_name_or_path"):
        assert flag in out, flag
    variables = out[out.index("environment variables"):]
    for name in ("WATERCOLOUR_REFERENCES (4)", "WATERCOLOUR_RENDER_WORKERS (1)",
                 "WATERCOLOUR_JUDGE_WEIGHT", "WATERCOLOUR_POOL", "WATERCOLOUR_CACHE"):
        assert f"  {name}" in variables, name
    assert "WATERCOLOUR_ENV_TOKEN" not in variables  # the server's, not a run's
    assert "(default: None)" not in out  # an unset flag's help says what it is then


def test_a_dataset_smaller_than_one_step_is_refused_before_training(tmp_path):
    from watercolour.train.trainer import prompts_per_step, train

    run, training = parse_args(["--config", "tiny-cpu", "--n-episodes", "1",
                                "--out", str(tmp_path / "run")])
    assert prompts_per_step(training) == 2
    with pytest.raises(ValueError, match="fewer than the 2 prompts a step takes"):
        train(run, training, log=lambda *_: None)
    assert not (tmp_path / "run").exists()  # refused before anything was written


# ---------------------------------------------------------------- TRL's ModelConfig


def test_trls_model_config_flags_parse():
    """The flags TRL users know from TRL's own scripts (ModelConfig's fields)."""
    from trl import ModelConfig

    from watercolour.train.config import RunArguments

    assert issubclass(RunArguments, ModelConfig)
    run, t = parse_args(["--model_name_or_path", "Qwen/Qwen3.5-4B", "--use_peft",
                         "--lora_target_modules", "q_proj", "v_proj", "--lora_r", "8",
                         "--lora_alpha", "16", "--lora_dropout", "0.1", "--dtype", "bfloat16",
                         "--use_rslora", "--model_revision", "abc",
                         "--attn_implementation", "sdpa"])
    assert run.model_name_or_path == "Qwen/Qwen3.5-4B" and run.use_peft and run.lora
    assert run.lora_target_modules == ["q_proj", "v_proj"] and not run.all_linear
    assert (run.lora_r, run.lora_alpha, run.lora_dropout, run.use_rslora) == (8, 16, 0.1, True)
    assert not t.bf16 and t.load_dtype == "bfloat16"  # --dtype alone chooses the load dtype
    assert t.model_init_kwargs == {"revision": "abc", "trust_remote_code": False,
                                   "attn_implementation": "sdpa", "dtype": "bfloat16"}
    run, _ = parse_args(["--use_peft", "--lora_target_modules", "all-linear"])
    assert run.lora_target_modules == "all-linear" and run.all_linear


def test_our_defaults_where_trls_differ_and_an_explicit_dtype_wins():
    from watercolour.train.config import DENSE_TARGET_MODULES

    run, t = parse_args(["--lora"])
    assert run.lora_dropout == 0.0  # TRL: 0.05
    assert run.lora_target_modules == list(DENSE_TARGET_MODULES)  # TRL: None
    assert (run.lora_r, run.lora_alpha) == (16, 32) and run.dtype == "float32"
    _, t = parse_args(["--config", "full-35b", "--dtype", "float32"])
    assert t.bf16 and t.load_dtype == "float32"  # --dtype beats --bf16
    _, t = parse_args(["--config", "full-35b", "--dtype", "auto"])
    assert t.load_dtype == "auto"


def test_the_published_aliases_are_trls_fields():
    """--model, --lora, --all-linear give exactly what TRL's names give."""
    published, t1 = parse_args(["--model", "Qwen/Qwen3.5-35B-A3B", "--lora", "--all-linear",
                                "--bf16"])
    trl_names, t2 = parse_args(["--model_name_or_path", "Qwen/Qwen3.5-35B-A3B", "--use_peft",
                                "--lora_target_modules", "all-linear", "--bf16"])
    assert published == trl_names and t1.to_dict() == t2.to_dict()
    assert published.lora_target_modules == "all-linear" and published.dtype == "bfloat16"


@pytest.mark.parametrize("recipe, lora", [("tiny-cpu", False), ("smoke-4b", True),
                                          ("full-35b", True), ("revise-4b", True)])
def test_the_recipes_use_trls_field_names(recipe, lora):
    import yaml

    from watercolour.train.config import find_recipe

    keys = set(yaml.safe_load(find_recipe(recipe).read_text()))
    assert not keys & {"lora", "all_linear"}  # the published names are flags, not keys
    run, _ = parse_args(["--config", recipe])
    assert run.use_peft is lora
    if lora:
        assert "use_peft" in keys and run.lora_target_modules == "all-linear"


def test_lora_comes_from_trls_get_peft_config_with_the_vision_tower_excluded(monkeypatch):
    import trl

    from watercolour.train import plan
    from watercolour.train.trainer import lora_config

    run, _ = parse_args(["--config", "full-35b", "--use_rslora", "--lora_r", "8",
                         "--lora_modules_to_save", "lm_head"])
    calls = []
    real = trl.get_peft_config
    monkeypatch.setattr(trl, "get_peft_config", lambda args: calls.append(args) or real(args))
    config = lora_config(run)
    assert calls == [run]
    assert config.use_rslora and config.r == 8 and config.lora_alpha == 32
    assert config.lora_dropout == 0.0 and config.target_modules == "all-linear"
    assert config.modules_to_save == ["lm_head"]
    assert config.exclude_modules == plan.VISION_MODULES
    run, _ = parse_args(["--config", "full-35b", "--adapt-vision"])
    assert lora_config(run).exclude_modules is None
    run, _ = parse_args(["--config", "full-35b", "--use_peft", "false"])
    assert lora_config(run) is None


def test_a_run_that_cannot_train_is_refused_before_anything_is_built(tmp_path):
    from watercolour.errors import InputError
    from watercolour.train.trainer import preflight

    run, training = parse_args(["--config", "tiny-cpu", "--n-episodes", "1",
                                "--out", str(tmp_path / "run")])
    with pytest.raises(InputError, match="--n-episodes 1 is fewer than the 2 prompts"):
        preflight(run, training, log=lambda line: None)
    run, training = parse_args(["--config", "tiny-cpu", "--trackio-space-id", "me/space",
                                "--out", str(tmp_path / "run")])
    with pytest.raises(InputError, match="add --report-to trackio"):
        preflight(run, training, log=lambda line: None)
    assert not (tmp_path / "run").exists()


def test_the_output_folder_holds_one_run_and_resume_cuts_the_logs_back(tmp_path):
    from watercolour.errors import InputError
    from watercolour.train.trainer import open_output

    out = tmp_path / "run"
    run, training = parse_args(["--config", "tiny-cpu", "--out", str(out)])
    folder, rollouts, metrics, checkpoint = open_output(run, training)
    assert metrics.path == out / "metrics.csv"
    assert folder == out and checkpoint is None
    rollouts.path.parent.mkdir(parents=True)
    rollouts.path.write_text("")
    with pytest.raises(InputError, match="already holds a run: add --resume"):
        open_output(run, training)
    resumed, training = parse_args(["--config", "tiny-cpu", "--out", str(out), "--resume"])
    with pytest.raises(FileNotFoundError, match="--resume: no checkpoint in"):
        open_output(resumed, training)
    (out / "checkpoint-2").mkdir()
    logged = []
    assert open_output(resumed, training, log=logged.append)[3] == out / "checkpoint-2"
    assert logged == ["resuming from checkpoint-2: dropped 0 rollouts and 0 metric rows of "
                      "the steps after it"]


def test_a_resumed_run_keeps_how_its_earlier_steps_ran_and_names_a_changed_length(tmp_path):
    import json

    from watercolour.train.trainer import checkpoint_max_steps, earlier_runs, open_output

    out = tmp_path / "run"
    (out / "checkpoint-4").mkdir(parents=True)
    (out / "checkpoint-4" / "trainer_state.json").write_text(json.dumps({"max_steps": 4}))
    first = ["watercolour", "train", "--references-schedule", "linear:0:0.5"]
    (out / "run.json").write_text(json.dumps({"argv": first,
                                              "config": {"training": {"max_steps": 4}}}))
    resumed, training = parse_args(["--config", "tiny-cpu", "--out", str(out), "--resume",
                                    "--max-steps", "9"])
    logged: list[str] = []
    checkpoint = open_output(resumed, training, log=logged.append)[3]
    assert checkpoint_max_steps(checkpoint) == 4
    assert "references schedule" not in logged[1]  # only a linear one is laid over the length
    linear, training = parse_args(["--config", "tiny-cpu", "--out", str(out), "--resume",
                                   "--max-steps", "9", "--references-schedule", "linear:0:1"])
    logged.clear()
    open_output(linear, training, log=logged.append)
    assert logged[1].endswith("and the linear references schedule over 9 too")
    assert logged[1].startswith("note: checkpoint-4 was saved by a run of 4 steps and this "
                                "one runs 9: the learning-rate schedule (cosine) is laid over 9")
    history = earlier_runs(out, checkpoint)
    assert history == [{"argv": first, "max_steps": 4, "until_step": 4}]
    # resumed again later: the oldest invocation stays first
    (out / "run.json").write_text(json.dumps({"argv": ["second"], "earlier": history,
                                              "config": {"training": {"max_steps": 9}}}))
    (out / "checkpoint-9").mkdir()
    assert [h["until_step"] for h in earlier_runs(out, out / "checkpoint-9")] == [4, 9]
    assert earlier_runs(tmp_path / "fresh", out / "checkpoint-9") == []  # no run.json
    same, training = parse_args(["--config", "tiny-cpu", "--out", str(out), "--resume",
                                 "--max-steps", "4"])
    (out / "checkpoint-9" / "trainer_state.json").write_text(json.dumps({"max_steps": 9}))
    logged.clear()
    open_output(same, training, log=logged.append)
    assert len(logged) == 2 and "runs 4" in logged[1]
    assert checkpoint_max_steps(tmp_path) is None
