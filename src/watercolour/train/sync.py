"""A crash-safe ``--push-to-hub`` run: what reaches the repository while the run goes on, and
``--resume OWNER/NAME`` from it.

While the run goes on, three things keep the repository current:

- the trainer's own pushes (transformers' ``hub_strategy``, here ``checkpoint`` by default):
  on every save the adapter goes to the repository's top and the whole checkpoint (optimizer,
  scheduler, RNG and trainer state) to ``last-checkpoint/`` (``all_checkpoints``: to
  ``checkpoint-N/`` each);
- :class:`RunSync`, a ``huggingface_hub`` ``CommitScheduler`` on ``--out`` that commits
  :data:`SYNCED` (``metrics.csv``, ``run.json``, ``rollouts/rollouts.jsonl`` and the renders)
  every ``--hub-sync-minutes``, only the files changed since its last commit, and once more at
  the end or after a failure (:meth:`RunSync.close`);
- with ``--trackio-space-id``, trackio logs to that Space, not inside the Job's container.

A Job that dies at hour 30 leaves its last checkpoint, its metrics and its rollouts on the
Hub; ``--resume OWNER/NAME`` (:func:`pull_run`) downloads them into ``--out`` and the run
goes on from that checkpoint (the rollouts and metric rows of the steps after it are dropped
and redone, as for a local ``--resume``).
"""

from __future__ import annotations

import fnmatch
import json
import re
import shutil
from pathlib import Path
from typing import Any

from huggingface_hub import CommitScheduler

SYNCED = ("metrics.csv", "run.json", "rollouts/rollouts.jsonl", "rollouts/png/*")
"""What :class:`RunSync` commits (patterns relative to ``--out``); checkpoints are the
trainer's (``hub_strategy``), ``final/`` and the model card the end's upload."""
LAST = "last-checkpoint"
"""Where ``hub_strategy='checkpoint'`` puts the latest checkpoint in the repository."""
NUMBERED = re.compile(r"^checkpoint-(\d+)$")


def hub_api() -> Any:
    """The ``HfApi`` every call here goes through (``HF_ENDPOINT``, ``HF_TOKEN``)."""
    from huggingface_hub import HfApi

    return HfApi()


class RunSync(CommitScheduler):
    """``CommitScheduler`` on a run folder: :data:`SYNCED`, every ``every`` minutes (the first
    commit at once), then :meth:`close` at the end."""

    def __init__(self, repo_id: str, out: str | Path, every: float = 10.0, *,
                 private: bool | None = None, api: Any = None) -> None:
        super().__init__(repo_id=repo_id, folder_path=out, every=every, repo_type="model",
                         private=private, allow_patterns=list(SYNCED), hf_api=api or hub_api())

    def pending(self) -> list[str]:
        """The files (repository paths) the next commit would hold: those that match
        :data:`SYNCED` and changed since the last commit. Nothing is sent."""
        root = self.folder_path
        out = []
        for path in sorted(root.glob("**/*")):
            if not path.is_file():
                continue
            rel = path.relative_to(root).as_posix()
            if any(fnmatch.fnmatch(rel, p) for p in SYNCED) and \
                    self.last_uploaded.get(path) != path.stat().st_mtime:
                out.append(rel)
        return out

    def close(self, timeout: float | None = 600.0) -> None:
        """The last commit (what changed since the previous one), then stop. Raises what the
        commit raised (a run must not end 'succeeded' with its results not on the Hub)."""
        try:
            self.trigger().result(timeout=timeout)
        finally:
            self.stop()


def start_sync(repo_id: str, out: str | Path, every: float, private: bool | None = None
               ) -> RunSync:
    """The run's :class:`RunSync` (tests replace this function)."""
    return RunSync(repo_id, out, every, private=private)


def hub_training_args(args: Any, repo_id: str) -> Any:
    """``args`` (a copy of the run's GRPOConfig) set for the trainer's pushes during the run:
    ``push_to_hub`` on, into ``repo_id``, with the configured ``hub_strategy``."""
    args.push_to_hub = True
    args.hub_model_id = repo_id
    return args


# ---------------------------------------------------------------- --resume OWNER/NAME


def _checkpoint_folders(files: list[str]) -> dict[str, int | None]:
    """Checkpoint folders of a repository listing that hold a trainer state: name -> step
    (``None`` for ``last-checkpoint``, whose step is in its ``trainer_state.json``)."""
    found: dict[str, int | None] = {}
    for name in files:
        parts = name.split("/")
        if len(parts) == 2 and parts[1] == "trainer_state.json":
            match = NUMBERED.match(parts[0])
            if match:
                found[parts[0]] = int(match.group(1))
            elif parts[0] == LAST:
                found[LAST] = None
    return found


def pull_patterns(files: list[str]) -> list[str]:
    """What ``--resume OWNER/NAME`` downloads of a repository holding ``files``: the run's
    synced files and the latest checkpoint (``last-checkpoint/`` and the highest
    ``checkpoint-N/``: which is newer is read from their trainer states)."""
    folders = _checkpoint_folders(files)
    if not folders:
        raise FileNotFoundError("--resume: the repository holds no checkpoint (no "
                                f"{LAST}/trainer_state.json, no checkpoint-N/): was it "
                                "pushed with --push-to-hub and a hub_strategy other than end?")
    numbered = [name for name, step in folders.items() if step is not None]
    keep = ([LAST] if LAST in folders else []) + \
        ([max(numbered, key=lambda n: folders[n] or 0)] if numbered else [])
    return [*SYNCED, *(f"{name}/*" for name in keep)]


def _step(folder: Path) -> int:
    state = json.loads((folder / "trainer_state.json").read_text(encoding="utf-8"))
    return int(state["global_step"])


def adopt_pulled(out: str | Path) -> Path:
    """Lay a pulled repository out as a local run: ``last-checkpoint/`` becomes
    ``checkpoint-<its step>/`` (the name a local ``--resume`` reads the step from); return the
    newest checkpoint folder."""
    out = Path(out)
    last = out / LAST
    if last.is_dir():
        target = out / f"checkpoint-{_step(last)}"
        if target.exists():
            shutil.rmtree(last)
        else:
            last.rename(target)
    found = [p for p in out.iterdir() if p.is_dir() and NUMBERED.match(p.name)
             and (p / "trainer_state.json").is_file()]
    if not found:
        raise FileNotFoundError(f"--resume: no checkpoint pulled into {out}")
    return max(found, key=_step)


def pull_run(repo_id: str, out: str | Path, *, api: Any = None, log: Any = print) -> Path:
    """``--resume OWNER/NAME``: download the repository's latest checkpoint, ``metrics.csv``,
    ``run.json`` and rollouts into ``out`` (``snapshot_download``), lay them out as a local
    run (:func:`adopt_pulled`) and return the checkpoint folder."""
    api = api or hub_api()
    files = list(api.list_repo_files(repo_id, repo_type="model"))
    patterns = pull_patterns(files)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    api.snapshot_download(repo_id=repo_id, repo_type="model", local_dir=str(out),
                          allow_patterns=patterns)
    checkpoint = adopt_pulled(out)
    log(f"pulled {repo_id}: {checkpoint.name}, metrics.csv and rollouts into {out}")
    return checkpoint
