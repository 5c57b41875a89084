"""``python -m matchpart``: the matchpart command line."""
import sys

from .cli import main

sys.exit(main())
