"""``python -m watercolour.train [FLAGS]``: the same program as ``watercolour train``."""

import sys

from watercolour.train.program import main

sys.exit(main(sys.argv[1:]))
