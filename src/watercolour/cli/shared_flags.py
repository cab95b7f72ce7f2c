"""The flags several programs share, each declared once here (its name, type and default) as
a :class:`~watercolour.flags.Shared`. A program's flag dataclass offers one as a field with its
own help: ``json: bool = flag(like=JSON, help="print the report as JSON")``."""

from __future__ import annotations

from pathlib import Path

from watercolour.flags import Shared

JSON = Shared(("--json",), default=False, help="print the result as JSON",
              options={"action": "store_true"})
"""``--json``: print the result as JSON instead of lines for a person."""

OUT = Shared(("--out",), options={"type": Path})
"""``--out``: where the program writes its result (a file or a folder)."""

SEED = Shared(("--seed",), default=0, options={"type": int})
"""``--seed``: the seed of whatever the program draws."""

POOL = Shared(("--pool",))
"""``--pool``: a reference pool (a pool folder, a build folder or a Hub id)."""

MIX = Shared(("--mix",))
"""``--mix``: the reward mix (a preset name or weights such as judge=0.5,hps=0.5)."""

SUBJECT = Shared(("--subject",))
"""``--subject``: what the painting is of."""

DEADLINE = Shared(("--deadline",), options={"type": float})
"""``--deadline``: seconds a render may take."""
