"""``python -m bench.streaming``: streamed replies on every surface (``cli.py`` says what is measured)."""
