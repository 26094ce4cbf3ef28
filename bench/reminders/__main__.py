"""``python -m bench.reminders``."""

import sys

from bench.reminders.cli import main

sys.exit(main())
