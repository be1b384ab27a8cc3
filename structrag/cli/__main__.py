"""``python -m structrag.cli``: the ``structrag`` command."""

import sys

from .app import main

sys.exit(main())
