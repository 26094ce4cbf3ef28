"""When each owner's buffered turns are next extracted, and which replica extracts them: due times and
per-owner claims kept in the database, so several gateways on one database extract each owner once
(docs/scale-out.md, "Extraction").

Every buffered turn pushes its owner's due time (the quiet gap from now, or now when the owner's buffer
reached the token budget, counted in the database over every replica's turns). Any replica polls for due
owners and claims one with a lease; the claim is the per-owner lock across replicas. It is renewed while
the extraction runs and released after the write; a replica that dies stops renewing, and when the lease
runs out another replica claims the owner and extracts what is still buffered (turns leave the buffer
only in the transaction that writes their memories: ``extraction.py``).

Due times and leases are the store's one clock (the server's on PostgreSQL: ``memory/store/sql.py``,
``store_clock``): this module gives seconds from now, never a host's time, so replicas whose clocks
disagree agree on them. A claim carries a generation that rises when it changes hands; the batch's write
is fenced by it (``fence``, inside the write's transaction), so a replica that stalled past its lease
and wakes writes nothing (docs/scale-out.md, "Fencing").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import datetime

from memory.store.coordination_api import ExtractionDueRowsAPI

log = logging.getLogger("tierclaw.memory")

# How long a claim holds without renewal: a replica that died mid-extraction is taken over after it.
DEFAULT_LEASE = 120.0
# How often each replica looks for due owners (one indexed read); a turn buffered here also wakes it.
DEFAULT_POLL = 1.0


@dataclass(slots=True)
class OwnerClaim:
    """This replica's claim on one owner: the due time it saw, the claim's generation, and whether it was
    lost meanwhile (its lease ran out and another replica took the owner: stop before the next batch)."""

    owner: str
    seen_due: str
    generation: int = 0
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

    def _from_now(self, moment: datetime) -> float:
        """Seconds from now (this host's clock) until ``moment``: what the store adds to its own clock."""
        return max((moment - self._clock()).total_seconds(), 0.0)

    async def push(self, owner: str, *, quiet_gap: float, token_budget: int) -> float:
        """After a buffered turn: the owner is due in ``quiet_gap`` seconds, or now when its buffer
        reached ``token_budget``; returns the seconds until due."""
        hit = await self._rows.push(owner, token_budget, quiet_gap)
        return 0.0 if hit else quiet_gap

    async def ensure(self, owner: str, due: datetime) -> None:
        """An owner with buffered turns and no due time gets ``due`` (resuming at start)."""
        await self._rows.ensure(owner, self._from_now(due))

    async def claim(self, owner: str) -> OwnerClaim | None:
        """Claim ``owner`` now whatever its due time (``/memory``, ``/new``, the sweep); None when another
        replica is extracting it."""
        taken = await self._rows.claim(owner, self.replica, self.lease)
        return OwnerClaim(owner, *taken) if taken is not None else None

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
        found = await self._rows.claim_due(self.replica, self.lease)
        if found is None:
            return None
        owner, _, holder, _ = found
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
                    if not await self.fence(claim):
                        claim.lost = True  # the flush says so, once (extraction.py)
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

    async def fence(self, claim: OwnerClaim) -> bool:
        """Whether ``claim`` is still this replica's at its generation, renewing its lease if so. Inside
        the batch's write transaction it is the write's fence (the row stays locked to the commit on
        PostgreSQL)."""
        return await self._rows.renew(claim.owner, self.replica, claim.generation, self.lease)

    async def release(self, claim: OwnerClaim, next_due: datetime | None) -> None:
        """End the claim: the owner's row goes (``next_due`` None: nothing left to extract) or waits for
        ``next_due``; a due time a new turn pushed meanwhile is kept. A failure is logged: the lease runs
        out and the owner is claimed again."""
        try:
            next_in = self._from_now(next_due) if next_due is not None else None
            await self._rows.release(claim.owner, self.replica, claim.generation, claim.seen_due, next_in)
        except Exception as exc:
            log.warning(
                "[memory] could not release the extraction claim owner=%s: %s",
                claim.owner,
                type(exc).__name__,
            )
