"""The trainers' entry points set module flags of the runtime (``train.main``: the clause cutter and the
question rule the head is trained with, ``quick_extract.QUESTION_HEADS`` and ``SUBJECTLESS_STATEMENTS``).
A command ends its process; a test calling ``main`` in the suite's process must not leave them changed for
the tests after it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memory.model import quick_extract


@pytest.fixture(autouse=True)
def _runtime_flags_restored() -> Iterator[None]:
    saved = (quick_extract.QUESTION_HEADS, quick_extract.SUBJECTLESS_STATEMENTS)
    yield
    quick_extract.QUESTION_HEADS, quick_extract.SUBJECTLESS_STATEMENTS = saved
