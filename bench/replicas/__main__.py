"""``python -m bench.replicas``."""

import sys

from bench.replicas.cli import main

sys.exit(main())
