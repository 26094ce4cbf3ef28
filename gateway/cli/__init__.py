"""The ``tierclaw`` command line: ``main`` is the console script's entry point (``gateway.cli:main``)."""

from gateway.cli.main import main

__all__ = ["main"]
