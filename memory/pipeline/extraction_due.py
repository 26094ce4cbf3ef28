"""When each owner's buffered turns are next extracted, and which replica extracts them: due times and
per-owner claims kept in the database, so several gateways on one database extract each owner once
(docs/scale-out.md, "Extraction").

Every buffered turn pushes its owner's due time (the quiet gap from now, or now when the owner's buffer
reached the token budget, counted in the database over every replica's turns). Any replica polls for due
owners and claims one with a lease; the claim is the per-owner lock across replicas. It is renewed while
the extraction runs and released after the write; a replica that dies stops renewing, and when the lease
runs out another replica claims the owner and extracts what is still buffered (turns leave the buffer
only in the transaction that writes their memories: ``extraction.py``).

Times here carry microseconds (``memory.clock.to_db_fine``): a quiet gap or lease shorter than a second
compares right.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from memory.clock import to_db_fine
from memory.store.protocol import ExtractionDueRowsAPI

log = logging.getLogger("tierclaw.memory")

# How long a claim holds without renewal: a replica that died mid-extraction is taken over after it.
DEFAULT_LEASE = 120.0
# How often each replica looks for due owners (one indexed read); a turn buffered here also wakes it.
DEFAULT_POLL = 1.0


@dataclass(slots=True)
class OwnerClaim:
    """This replica's claim on one owner: the due time it saw, and whether it was lost meanwhile (its
    lease ran out and another replica took the owner: stop before the next batch)."""

    owner: str
    seen_due: str
    lost: bool = False


class DueTimes:
    """The owners' due times and claims for one replica (``replica``), on the store's ``extraction_due``."""

    def __init__(
        self,
        rows: ExtractionDueRowsAPI,
        replica: str,
        *,
        lease: float = DEFAULT_LEASE,
        clock: Callable[[], datetime],
    ) -> None:
        self._rows = rows
        self.replica = replica
        self.lease = lease
        self._clock = clock
        self.takeovers = 0  # owners claimed after another replica's lease ran out
        self.on_takeover: Callable[[], None] | None = None  # tierclaw_lease_takeovers_total (gateway)

    def _lease_end(self) -> str:
        return to_db_fine(self._clock() + timedelta(seconds=self.lease))

    async def push(self, owner: str, *, quiet_gap: float, token_budget: int) -> float:
        """After a buffered turn: the owner is due in ``quiet_gap`` seconds, or now when its buffer
        reached ``token_budget``; returns the seconds until due."""
        now = self._clock()
        hit = await self._rows.push(
            owner, token_budget, to_db_fine(now), to_db_fine(now + timedelta(seconds=quiet_gap))
        )
        return 0.0 if hit else quiet_gap

    async def ensure(self, owner: str, due: datetime) -> None:
        """An owner with buffered turns and no due time gets ``due`` (resuming at start)."""
        await self._rows.ensure(owner, to_db_fine(due))

    async def claim(self, owner: str) -> OwnerClaim | None:
        """Claim ``owner`` now whatever its due time (``/memory``, ``/new``, the sweep); None when another
        replica is extracting it."""
        now = self._clock()
        seen = await self._rows.claim(owner, self.replica, to_db_fine(now), self._lease_end())
        return OwnerClaim(owner, seen) if seen is not None else None

    async def claim_when_free(self, owner: str, patience: float, step: float = 0.1) -> OwnerClaim | None:
        """``claim``, asking again every ``step`` seconds for up to ``patience`` seconds while another
        replica holds the owner (``/memory`` waits for that replica's extraction, then checks)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(patience, 0.0)
        while True:
            claim = await self.claim(owner)
            if claim is not None or loop.time() >= deadline:
                return claim
            await asyncio.sleep(min(step, max(deadline - loop.time(), 0.0)))

    async def claim_due(self) -> str | None:
        """Claim the owner due longest ago that nobody holds; its name, or None when none is due."""
        now = self._clock()
        found = await self._rows.claim_due(self.replica, to_db_fine(now), self._lease_end())
        if found is None:
            return None
        owner, _, holder = found
        if holder is not None and holder != self.replica:
            self.takeovers += 1
            if self.on_takeover is not None:
                self.on_takeover()
            log.warning("[memory] replica %s's extraction lease ran out; extracting owner=%s", holder, owner)
        return owner

    @contextlib.asynccontextmanager
    async def renewing(self, claim: OwnerClaim) -> AsyncIterator[OwnerClaim]:
        """Renew ``claim``'s lease every third of it while the block runs (a long extraction keeps the
        owner); ``claim.lost`` turns True when another replica took it over."""

        async def renew() -> None:
            while True:
                await asyncio.sleep(self.lease / 3)
                try:
                    if not await self._rows.renew(claim.owner, self.replica, self._lease_end()):
                        claim.lost = True
                        return
                except Exception as exc:  # the database is away: the next round tries again
                    log.warning("[memory] could not renew the extraction lease: %s", type(exc).__name__)

        task = asyncio.get_running_loop().create_task(renew(), name=f"extract-lease:{claim.owner}")
        try:
            yield claim
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def release(self, claim: OwnerClaim, next_due: datetime | None) -> None:
        """End the claim: the owner's row goes (``next_due`` None: nothing left to extract) or waits for
        ``next_due``; a due time a new turn pushed meanwhile is kept. A failure is logged: the lease runs
        out and the owner is claimed again."""
        try:
            await self._rows.release(
                claim.owner, self.replica, claim.seen_due, to_db_fine(next_due) if next_due else None
            )
        except Exception as exc:
            log.warning(
                "[memory] could not release the extraction claim owner=%s: %s",
                claim.owner,
                type(exc).__name__,
            )
