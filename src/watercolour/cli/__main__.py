"""``python -m watercolour.cli``."""

import sys

from watercolour.cli import main

sys.exit(main())
