"""The training program, ``watercolour train``: the same for the command line,
``python -m watercolour.train`` and a Hugging Face job (:mod:`watercolour.train.launch`), so
none of them reaches back into :mod:`watercolour.cli`."""

from __future__ import annotations

from watercolour.errors import exit_status


def run(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (flags, ``--config RECIPE``), then print the dry run or train. Bad input
    raises (:data:`~watercolour.errors.DOMAIN_ERRORS`); a bad flag exits 2 (argparse)."""
    from watercolour.train.config import parse_args
    from watercolour.train.trainer import dry_run, print_dry_run, train

    run_args, training = parse_args(argv)
    if run_args.dry_run:
        print_dry_run(dry_run(run_args, training), run_args.json)
        return 0
    summary = train(run_args, training)
    print(f"trained {summary['global_step']} steps: {summary['rollouts']} rollouts, "
          f"{summary['metrics_rows']} metric rows in {summary['out']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """:func:`run`, with bad input and setup problems as one line on stderr and exit 2 (as
    the command line reports them), an interrupt as 130."""
    return exit_status("watercolour train", lambda: run(argv))
