"""The two kinds of error a person (not a programmer) can act on; everything else is a bug.

- :class:`InputError` (a ``ValueError``): bad input: a file that is not UTF-8 text, a flag, an
  environment variable, a pool that does not validate. Fix the input.
- :class:`SetupError` (a ``RuntimeError``): the machine cannot do what was asked: no WebGL, no
  pool configured, a book build that failed. Fix the setup.

The command line prints these (and ``FileNotFoundError``) as one line and exits 2; any other
exception is a bug and keeps its traceback. Library code raises subclasses (``SettingError``,
``MixError``, ``PoolValidationError``, ``RewardSetupError``, ...), so callers can catch either
the precise error or the kind.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path


class InputError(ValueError):
    """Bad input that its author can fix."""


class SetupError(RuntimeError):
    """The environment cannot do what was asked."""


DOMAIN_ERRORS: tuple[type[Exception], ...] = (InputError, SetupError, FileNotFoundError)
"""What a program reports as one line (exit 2); anything else raises with its traceback."""


def exit_status(program: str, call: Callable[[], int | None]) -> int:
    """``call()``'s exit status, with :data:`DOMAIN_ERRORS` reported as one line on stderr
    (``PROGRAM: error: ...``, exit 2) and an interrupt as 130."""
    try:
        return int(call() or 0)
    except KeyboardInterrupt:
        print(f"{program}: interrupted", file=sys.stderr)
        return 130
    except DOMAIN_ERRORS as err:
        print(f"{program}: error: {err}", file=sys.stderr)
        return 2


def read_text(path: str | Path, what: str = "file") -> str:
    """The UTF-8 text of ``path``; a missing file, a directory or a file that is not UTF-8 text
    is one clear error (``FileNotFoundError`` or :class:`InputError`) naming the file and what
    it should be."""
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{path} is a directory: a {what} must be a file")
    if not path.is_file():
        raise FileNotFoundError(f"{what} not found: {path}")
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(f"{path} is not UTF-8 text (byte 0x{data[err.start]:02x} at offset "
                         f"{err.start}): a {what} must be a UTF-8 text file") from None
