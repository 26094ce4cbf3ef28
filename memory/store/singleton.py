"""Work that exactly one process may do at a time (the Telegram poller: Telegram allows one
``getUpdates`` consumer per bot), and the SQLite side of it.

``store.singleton(name)`` hands out a ``Singleton``: ``acquire()`` tries to become the one doing ``name``
(True when this process is, now or already), ``held()`` says whether it still is, ``release()`` gives it
up. On SQLite one gateway process owns the file (gateway/process_lock.py), so the lock is always this
process's. On PostgreSQL it is an advisory lock on a dedicated connection
(``memory/store/postgres/singleton.py``): a replica that dies loses its connection and with it the
lock, so another replica takes over (docs/scale-out.md, "Channels").
"""

from __future__ import annotations

from typing import Protocol


class Singleton(Protocol):
    """One named piece of exclusive work; see the module docstring."""

    name: str

    async def acquire(self) -> bool:
        """Try to become (or stay) the one process doing the work; never waits for another holder."""
        ...

    async def held(self) -> bool:
        """Whether this process still holds it (False after the connection holding it was lost)."""
        ...

    async def release(self) -> None:
        """Give it up (nothing when not held)."""
        ...


class ProcessSingleton:
    """The trivial lock of a one-process store: acquired at once, held until released."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._held = False

    async def acquire(self) -> bool:
        self._held = True
        return True

    async def held(self) -> bool:
        return self._held

    async def release(self) -> None:
        self._held = False
