"""What a running browser costs: its processes' CPU time and memory, read from ``/proc``
(Linux). For benchmarks and reports; the renderer itself does not need it."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class ChromiumProcess:
    pid: int
    kind: str
    """Chromium's ``--type`` (``renderer``, ``gpu-process``, ``utility``, ...), or ``browser``
    (in :func:`browser_processes`, ``starting`` for a child not yet running its program)."""
    cpu_s: float
    """User + system CPU seconds so far."""
    rss_bytes: int


def _all_processes() -> tuple[dict[int, int], dict[int, ChromiumProcess], dict[int, bytes]]:
    """Every process's parent, costs and command line, from /proc."""
    tick, page = os.sysconf("SC_CLK_TCK"), os.sysconf("SC_PAGE_SIZE")
    parents: dict[int, int] = {}
    found: dict[int, ChromiumProcess] = {}
    cmdlines: dict[int, bytes] = {}
    for proc in PROC.iterdir():
        if not proc.name.isdigit():
            continue
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (proc / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if fields[0] in ("Z", "X"):  # exited, not yet reaped: no memory, no command line
            continue
        pid = int(proc.name)
        parents[pid] = int(fields[1])
        kind = re.search(rb"--type=([\w-]+)", cmdline)
        found[pid] = ChromiumProcess(pid, kind.group(1).decode() if kind else "browser",
                                     (int(fields[11]) + int(fields[12])) / tick,
                                     int(fields[21]) * page)
        cmdlines[pid] = cmdline
    return parents, found, cmdlines


def _family(root: int, parents: dict[int, int]) -> set[int]:
    family, grew = {root}, True
    while grew:
        grew = False
        for pid, ppid in parents.items():
            if ppid in family and pid not in family:
                family.add(pid)
                grew = True
    return family


def browser_processes(marker: str) -> list[ChromiumProcess]:
    """The browser launched with ``--watercolour-worker=marker`` and all its descendants;
    empty when it is not running."""
    needle = f"--watercolour-worker={marker}".encode()
    parents, found, cmdlines = _all_processes()
    root = next((pid for pid in sorted(found) if found[pid].kind == "browser"
                 and needle in cmdlines[pid]), None)
    if root is None:
        return []
    # a child without a --type has been forked and not yet started its own program
    return [found[pid] if pid == root or found[pid].kind != "browser" else
            replace(found[pid], kind="starting") for pid in sorted(_family(root, parents))]


def family_rss_mb(pid: int) -> float:
    """Resident memory of a process (a server, say) and all its descendants, in MiB."""
    parents, found, _ = _all_processes()
    return round(sum(found[p].rss_bytes for p in _family(pid, parents) if p in found) / 2**20, 1)


def browser_rss_mb(marker: str) -> float:
    """Resident memory of the marked browser and all its child processes, in MiB."""
    return round(sum(p.rss_bytes for p in browser_processes(marker)) / 2**20, 1)
