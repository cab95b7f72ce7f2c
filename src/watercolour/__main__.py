"""``python -m watercolour``."""

import sys

from watercolour.cli import main

sys.exit(main())
