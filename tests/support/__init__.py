"""Helpers the tests share (not tests themselves): the repository's root, SQL peeks, stub clients."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
