"""``python -m watercolour.train [FLAGS]``: the same program as ``watercolour train``."""

import sys

from watercolour.cli import main

sys.exit(main(["train", *sys.argv[1:]]))
