"""The scratchpad: one short Markdown note per person — active projects, current focus, open questions,
next steps — that the memory model keeps up to date and the system prompt shows after the profile.

Facts say what is true; the scratchpad says what is going on. It is rewritten, not appended to: the
memory model gets the current note and what was just said and returns the whole new note
(``MemoryModel.update_scratchpad``), at most ``SCRATCHPAD_MAX_CHARS``. The person can read, replace and
clear it (``/scratchpad``, ``tierclaw memory scratchpad``). The offline model leaves it as it is.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from memory.clock import to_db, utcnow
from memory.store.protocol import MemoryStore
from memory.writes import check_owner

log = logging.getLogger("tierclaw.memory")

SCRATCHPAD_MAX_CHARS = 2000
NOTES_KEPT = 10_000  # owners whose note is cached


@dataclass(slots=True)
class Scratchpad:
    """A person's note and when it last changed (stored form, UTC; "" when never written)."""

    content: str = ""
    updated_at: str = ""


def fit(content: str) -> str:
    """``content`` without NUL and outer blank lines, cut to ``SCRATCHPAD_MAX_CHARS`` at a line end."""
    text = content.replace("\x00", "").strip()
    if len(text) <= SCRATCHPAD_MAX_CHARS:
        return text
    cut = text[:SCRATCHPAD_MAX_CHARS]
    return cut[: cut.rfind("\n")].rstrip() if "\n" in cut else cut.rstrip()


class ScratchpadStore:
    """Reads and writes the notes (``engine.scratchpad``)."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store
        # Each owner's note as last read or written here (the system prompt shows it on every message):
        # dropped when another process changes it (``store.changes``, kind ``scratchpad``).
        self._notes: dict[str, Scratchpad] = {}
        store.changes.listen("scratchpad", self._others_changed)

    def _others_changed(self, owner: str | None, _rows_delta: int) -> None:
        if owner is None:
            self._notes.clear()
        else:
            self._notes.pop(owner, None)

    def _cache(self, owner: str, note: Scratchpad) -> Scratchpad:
        self._notes.pop(owner, None)
        if len(self._notes) >= NOTES_KEPT:
            self._notes.pop(next(iter(self._notes)))  # the owner read longest ago
        self._notes[owner] = note
        return note

    async def get(self, owner: str) -> Scratchpad:
        """The owner's note (empty when there is none); read from the database only when it changed in
        another process since it was last read here."""
        check_owner(owner)
        await self._store.changes.refresh()
        cached = self._notes.get(owner)
        if cached is not None:
            return cached
        row = await self._store.scratchpads.get(owner)
        return self._cache(owner, Scratchpad(*row) if row else Scratchpad())

    async def put(self, owner: str, content: str) -> Scratchpad:
        """Replace the owner's note (an empty one clears it); returns what is stored."""
        check_owner(owner)
        text = fit(content)
        if not text:
            await self.clear(owner)
            return Scratchpad()
        now = to_db(utcnow())
        await self._store.scratchpads.put(owner, text, now)
        self._cache(owner, Scratchpad(text, now))
        log.info("[memory] scratchpad owner=%s updated, %d chars", owner, len(text))
        return Scratchpad(text, now)

    async def clear(self, owner: str) -> bool:
        """Delete the owner's note; False when there was none."""
        check_owner(owner)
        self._notes.pop(owner, None)
        cleared = await self._store.scratchpads.clear(owner)
        self._cache(owner, Scratchpad())
        return cleared
