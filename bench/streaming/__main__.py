"""``python -m bench.streaming [--json]`` (``cli.py``)."""

from bench.streaming.cli import main

raise SystemExit(main())
