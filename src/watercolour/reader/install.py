"""What a chapter's install cell does: install the package's extras that chapter imports, and a
browser, when they are missing (on Colab, in a fresh virtual environment); nothing otherwise.

A chapter's ``package`` parameter names *where* the package comes from, without extras: a git
URL (``git+https://github.com/OWNER/watercolour``), a wheel or a folder (a path), or a name
on PyPI (``watercolour``, ``watercolour==0.1.0``). :func:`requirement` adds the chapter's
extras to it (``watercolour[book,env] @ git+https://...``). The cell is short because this
module does the work::

    import importlib.util, subprocess, sys
    if importlib.util.find_spec("watercolour") is None:  # the package alone, from `package`
        pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps"]
        subprocess.run([*pip, package], check=True)
    from watercolour.notebooks import install
    install(package, "book", "env", mode=mode)

(the first pip call only puts this module on the path: pip resolves once, in :func:`install`,
the dependencies with the extras). This module imports nothing outside the
standard library at import time, so it runs before the package's dependencies exist.

The browser: ``WATERCOLOUR_CHROMIUM``, Debian's Chromium or one on the ``PATH`` (the renderer's
own order), else Playwright's. When none is there: on Debian, ``apt-get install chromium`` and
Mesa's software GL (what ``scripts/install.sh`` does); anywhere else (Colab),
``playwright install --with-deps chromium`` (``--with-deps`` only as root: it runs the system's
package manager).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

DISTRIBUTION = "watercolour"
EXTRAS = ("book", "env", "train", "dev")
MODES = ("tiny", "smoke-4b", "full")
LOG_VARIABLE = "WATERCOLOUR_INSTALL_LOG"
"""When set, :func:`install` appends its record (one JSON line) to this file."""


@dataclass
class InstallSettings:
    """What the environment tells :func:`install` (declared the way ``watercolour.settings``
    reads, in plain metadata: this module imports nothing outside the standard library)."""

    log: str | None = field(default=None, metadata={
        "env": LOG_VARIABLE, "help": "a chapter's install cell appends its record (one JSON "
        "line: what it installed, how long it took) to this file"})
DEBIAN_PACKAGES = ("chromium", "libgl1-mesa-dri", "libegl-mesa0")


@dataclass
class InstallRecord:
    """What :func:`install` found and did."""

    extras: list[str]
    """The extras the chapter asked for."""
    requirement: str | None = None
    """What pip installed (``None``: nothing was missing)."""
    missing: list[str] = field(default_factory=list)
    """The requirements that were missing or outside their range before."""
    browser: str | None = None
    """The Chromium the renderer will launch (``"playwright"``: Playwright's own)."""
    browser_commands: list[list[str]] | None = None
    """The commands that installed a browser (``None``: one was there)."""
    seconds: float = 0.0
    dry_run: bool = False

    def describe(self) -> str:
        what = f"pip install {self.requirement}" if self.requirement else "nothing to install"
        # programs by their names: the line is printed in the page, a path is the machine's
        if self.browser_commands:
            program, *args = self.browser_commands[-1]
            browser = f"browser: {' '.join([Path(program).name, *args])}"
        else:
            browser = f"browser: {Path(self.browser).name if self.browser else 'not needed'}"
        if self.dry_run:
            return f"watercolour [{','.join(self.extras)}] (dry run): {what}; {browser}"
        return f"watercolour [{','.join(self.extras)}]: {what}; {browser} ({self.seconds:.0f} s)"


def requirement(package: str, extras: Sequence[str]) -> str:
    """``package`` (a source without extras) with ``extras`` added, as pip takes it.

    >>> requirement("git+https://github.com/o/watercolour", ["book"])
    'watercolour[book] @ git+https://github.com/o/watercolour'
    >>> requirement("watercolour==0.1.0", ["book", "env"])
    'watercolour[book,env]==0.1.0'
    """
    package = package.strip()
    wanted = ",".join(extras)
    suffix = f"[{wanted}]" if wanted else ""
    if not package:
        raise ValueError("no package: name where watercolour comes from (a git URL, a wheel, "
                         "a folder or a PyPI name)")
    if "[" in package.split("@")[0]:
        raise ValueError(f"package {package!r} names extras; give the source alone: the "
                         "chapter adds the extras it needs")
    found = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*@\s*(\S.*)$", package)
    if found:  # "watercolour @ URL"
        return f"{found.group(1)}{suffix} @ {found.group(2)}"
    if re.match(r"^[a-z][a-z0-9+.-]*://", package) or package.startswith("git+"):
        return f"{DISTRIBUTION}{suffix} @ {package}"
    path = Path(package).expanduser()
    if path.suffix == ".whl" or path.exists() or package.startswith((".", "/", "~")):
        return f"{DISTRIBUTION}{suffix} @ {path.resolve().as_uri()}"
    found = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(.*)$", package)
    if found is None:
        raise ValueError(f"package {package!r} is not a URL, a path or a package name")
    return f"{found.group(1)}{suffix}{found.group(2)}"


def missing_requirements(extras: Sequence[str]) -> list[str]:
    """The requirements of the installed package and of ``extras`` that are not installed or
    not within their range. Everything when the package itself is not installed."""
    try:
        declared = importlib.metadata.requires(DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        return [DISTRIBUTION]
    missing = []
    for text in declared:
        name, spec, marker = _split(text)
        extra = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", marker or "")
        if extra and extra.group(1) not in extras:
            continue
        if marker and not extra and not _marker_holds(marker):
            continue
        try:
            version = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            missing.append(text.split(";")[0].strip())
            continue
        if spec and not _satisfies(version, spec):
            missing.append(f"{text.split(';')[0].strip()} (installed {version})")
    return missing


def find_browser() -> str | None:
    """The Chromium the renderer will launch, or ``None`` when there is none. ``"playwright"``
    stands for Playwright's own browser (found by asking Playwright, in a subprocess)."""
    explicit = os.environ.get("WATERCOLOUR_CHROMIUM")
    if explicit:
        return explicit if Path(explicit).exists() else None
    for candidate in ("/usr/lib/chromium/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser")):
        if candidate and Path(candidate).exists():
            return candidate
    probe = ("from playwright.sync_api import sync_playwright\n"
             "with sync_playwright() as p: print(p.chromium.executable_path)\n")
    try:
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                             timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    path = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""
    return "playwright" if out.returncode == 0 and path and Path(path).exists() else None


def browser_commands() -> list[list[str]]:
    """How to install a browser here: Debian's Chromium (and Mesa's software GL) through
    apt-get on Debian, Playwright's Chromium elsewhere (with its system libraries as root)."""
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    if _is_debian() and shutil.which("apt-get"):
        apt = [*([] if root else ["sudo"]), "env", "DEBIAN_FRONTEND=noninteractive", "apt-get"]
        return [[*apt, "update", "-qq"],
                [*apt, "install", "-y", "-qq", "--no-install-recommends", *DEBIAN_PACKAGES]]
    deps = ["--with-deps"] if root and sys.platform.startswith("linux") else []
    return [[sys.executable, "-m", "playwright", "install", *deps, "chromium"]]


def install(package: str = "", *extras: str, mode: str | None = None, browser: bool = True,
            dry_run: bool = False, quiet: bool = False) -> InstallRecord:
    """Install what a chapter needs when it is missing: the package's ``extras`` (from
    ``package``, a source without extras) and, with ``browser``, a Chromium. Prints one line
    and returns what it did; ``dry_run`` says what it would do and does nothing.

    Raises ``ValueError`` for a ``mode`` that is not one of ``tiny``, ``smoke-4b``, ``full``
    or an unknown extra, and ``RuntimeError`` when something is missing and ``package`` is
    empty (outside a checkout: set it), or when pip or the browser install fails.
    """
    t0 = time.perf_counter()
    if mode is not None and mode not in MODES:
        raise ValueError(f"mode {mode!r} is not one of {', '.join(MODES)}")
    unknown = sorted(set(extras) - set(EXTRAS))
    if unknown:
        raise ValueError(f"unknown extra(s) {', '.join(unknown)}; the package has "
                         f"{', '.join(EXTRAS)}")
    record = InstallRecord(extras=list(extras), dry_run=dry_run)
    record.missing = missing_requirements(extras)
    if record.missing:
        source = package or _installed_source()
        if not source:
            raise RuntimeError(
                f"watercolour's [{','.join(extras)}] needs {', '.join(record.missing)}: set "
                "`package` to where watercolour comes from (its git URL, a wheel, a PyPI name)")
        record.requirement = requirement(source, extras)
        if not dry_run:
            _run([sys.executable, "-m", "pip", "install", "-q", record.requirement], "pip")
            importlib.invalidate_caches()
    if browser:
        record.browser = find_browser()
        if record.browser is None:
            record.browser_commands = browser_commands()
            if not dry_run:
                for command in record.browser_commands:
                    _run(command, "installing a browser")
                record.browser = find_browser()
    record.seconds = round(time.perf_counter() - t0, 2)
    if not quiet:
        print(record.describe())
    log = os.environ.get(LOG_VARIABLE)
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(asdict(record)) + "\n")
    return record


# ---------------------------------------------------------------- small parts


def _installed_source() -> str | None:
    """Where the installed package came from (pip's ``direct_url.json``): a folder, a wheel or
    a git URL, else the index at its version, so a reader who installed it once need not say
    so again."""
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None
    text = dist.read_text("direct_url.json")
    if not text:
        return f"{DISTRIBUTION}=={dist.version}"
    info = json.loads(text)
    url = info.get("url")
    vcs = info.get("vcs_info")
    if url and vcs:
        return f"{vcs.get('vcs', 'git')}+{url}"
    return url


def _split(text: str) -> tuple[str, str, str | None]:
    req, _, marker = text.partition(";")
    found = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$", req)
    assert found is not None, text
    return found.group(1), found.group(3).strip(), marker.strip() or None


def _satisfies(version: str, spec: str) -> bool:
    try:
        from packaging.specifiers import SpecifierSet
    except ImportError:  # no packaging yet: installed is good enough
        return True
    return SpecifierSet(spec).contains(version, prereleases=True)


def _marker_holds(marker: str) -> bool:
    try:
        from packaging.markers import Marker
    except ImportError:
        return True
    return Marker(marker).evaluate({"extra": ""})


def _is_debian() -> bool:
    try:
        text = Path("/etc/os-release").read_text(encoding="utf-8")
    except OSError:
        return False
    return bool(re.search(r"^ID=\"?debian\"?$", text, re.M))


def _run(command: list[str], what: str) -> None:
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-8:]
        raise RuntimeError(f"{what} failed (exit {proc.returncode}): {' '.join(command)}\n"
                           + "\n".join(tail))
