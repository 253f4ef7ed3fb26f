"""``python -m graphshard.cli``: the ``graphshard`` command."""

import sys

from .root import main

sys.exit(main())
