"""The sizes every way in refuses beyond, one number each: the server (a reply in an action,
a websocket message, an HTTP body) and the command line (a reply or sketch read from a file,
:func:`watercolour.cli.inputs.read_input`) alike. A light module: nothing heavy is imported
to know a limit."""

from __future__ import annotations

MAX_REPLY_CHARS = 1_000_000
"""The longest reply (or sketch) accepted, in characters (the gate itself rejects sketches
over 100 000 characters as the sketch's fault; this bound protects the server and the verbs
from work on input no sketch needs)."""

MAX_MESSAGE_BYTES = 4 * 1024 * 1024
"""The largest websocket message the server reads (``watercolour serve``), and the largest
HTTP request body; a larger one is refused before it is parsed."""
