"""What an extraction run reports, and the two ways a batch is given up without writing
(``extraction.py``): kept apart so the service module holds the service alone."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class FlushResult:
    """What one flush of an owner's buffer did."""

    batches: int = 0
    turns: int = 0
    facts: int = 0
    events: int = 0
    failed: int = 0
    dead: int = 0

    def add(self, other: FlushResult) -> None:
        """Count ``other`` into this result (several owners, several flushes)."""
        for name in ("batches", "turns", "facts", "events", "failed", "dead"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


class BatchAlreadyWritten(RuntimeError):
    """Another run committed some of this batch's turns first: writing it again would duplicate them."""


class ClaimLost(RuntimeError):
    """The owner's claim changed hands before the batch was written (this replica stalled past its
    lease): the batch is not written; the replica that took it over extracts those turns."""
