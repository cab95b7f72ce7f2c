"""The side programs are verbs (issue 40): ``watercolour compare``, ``watercolour publish`` and
``watercolour tiny runs|evaluate`` parse the flags their module's dataclass declares, under the
verb's name, and ``watercolour --help`` does not import torch to list them."""

import subprocess
import sys

import pytest

from watercolour.cli import main


@pytest.mark.parametrize("argv, usage, flag", [
    (["compare", "--help"], "usage: watercolour compare", "--before BEFORE"),
    (["tiny", "evaluate", "--help"], "usage: watercolour tiny evaluate", "--love-references"),
    (["tiny", "runs", "--help"], "usage: watercolour tiny runs", "--references-schedule"),
    (["publish", "--help"], "usage: watercolour publish", "--run RUN"),
])
def test_each_side_program_answers_under_its_verb(argv, usage, flag, capsys):
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(usage) and flag in out


def test_a_missing_flag_is_named_by_the_verb(capsys):
    with pytest.raises(SystemExit) as done:
        main(["compare", "--before", "builtin:smollm2-135m-instruct"])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert "watercolour compare: error: the following arguments are required: --out" in err


def test_tiny_lists_its_subcommands_and_refuses_an_unknown_one(capsys):
    assert main(["tiny"]) == 2
    assert "watercolour tiny {runs,evaluate}" in capsys.readouterr().out
    assert main(["tiny", "train"]) == 2
    assert "unknown subcommand 'train'; choose from runs, evaluate" in capsys.readouterr().err


def test_listing_the_verbs_loads_no_torch():
    code = ("import sys, contextlib, io\nfrom watercolour.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
            "    main(['--help'])\nprint('torch' in sys.modules)")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout.strip()
    assert loaded == "False"


def test_publish_refuses_a_folder_that_is_not_a_finished_run(tmp_path, capsys):
    (tmp_path / "metrics.csv").write_text("step,reward\n0,0.5\n")
    assert main(["publish", "--run", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert "is not a finished run: no run.json, rollouts" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
