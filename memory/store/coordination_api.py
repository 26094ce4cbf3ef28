"""The store interface of what replicas share (docs/scale-out.md): the durable inbox, the chat holds, and
the claims of background work (extraction, the embedding backfill, scheduled job runs). Part of the store
interface (``protocol.py``'s ``MemoryStore`` names each); kept apart so that file stays under its size.

Leases, due times and claims are given as seconds from now on the store's own clock
(``memory/store/sql.py``, ``store_clock``); every hold and claim carries a generation that rises when it
changes hands (docs/scale-out.md, "Fencing").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from memory.store.claim_rows import AfterAnswer, Arrival, ClaimedRow
    from memory.store.exchange import ExchangeWrite


class ExtractionDueRowsAPI(Protocol):
    """Each owner's extraction due time and the replica extracting it (``memory/store/work_claims.py``);
    times are seconds from now on the store's clock."""

    async def push(self, owner: str, token_budget: int, quiet_gap_s: float) -> bool: ...
    async def ensure(self, owner: str, delay_s: float) -> bool: ...
    async def claim(self, owner: str, replica: str, lease_s: float) -> tuple[str, int] | None: ...
    async def claim_due(self, replica: str, lease_s: float) -> tuple[str, str, str | None, int] | None: ...
    async def renew(self, owner: str, replica: str, generation: int, lease_s: float) -> bool: ...
    async def release(
        self, owner: str, replica: str, generation: int, seen_due: str, next_in_s: float | None
    ) -> None: ...
    async def get(self, owner: str) -> tuple[str, str | None, str | None] | None: ...
    async def count_due(self) -> int: ...
    async def counted_tokens(self, owner: str) -> int: ...


class EmbeddingClaimRowsAPI(Protocol):
    """Rows the embedding backfill is embedding, per replica (``memory/store/work_claims.py``)."""

    async def claim(
        self, target: str, row_ids: Sequence[int], replica: str, lease_s: float
    ) -> dict[int, int]: ...
    async def held(self, target: str, claims: dict[int, int], replica: str) -> list[int]: ...
    async def release(self, target: str, row_ids: Sequence[int], replica: str) -> None: ...
    async def count(self, target: str | None = None) -> int: ...


class JobClaimRowsAPI(Protocol):
    """Each scheduled job's run per period, claimed by one replica with a lease (``job_runs.py``)."""

    async def claim(self, job: str, period: str, replica: str, lease_s: float) -> int | None: ...
    async def renew(self, job: str, period: str, replica: str, generation: int, lease_s: float) -> bool: ...
    async def finish(self, job: str, period: str, replica: str, generation: int, status: str) -> bool: ...
    async def stale(self) -> list[tuple[str, str, str]]: ...
    async def of_job(self, job: str) -> list[tuple[str, str, str | None, str | None]]: ...


class InboxRowsAPI(Protocol):
    """The durable inbox: accepted messages until they are answered (``memory/store/inbox.py``)."""

    async def add(
        self,
        channel: str,
        chat_id: str,
        delivery_key: str,
        message: str,
        platform_seq: int = 0,
        media: str = "",
        *,
        arrival: Arrival | None = None,
    ) -> int | None: ...
    async def add_and_hold(
        self,
        channel: str,
        chat_id: str,
        delivery_key: str,
        message: str,
        platform_seq: int,
        media: str,
        holder: str,
        lease_s: float,
        *,
        arrival: Arrival | None = None,
    ) -> tuple[int | None, int | None]: ...
    async def add_hold_and_claim(
        self,
        channel: str,
        chat_id: str,
        delivery_key: str,
        message: str,
        platform_seq: int,
        media: str,
        holder: str,
        lease_s: float,
        history: int = 0,
        settle_s: float = 0.0,
        *,
        arrival: Arrival | None = None,
    ) -> tuple[int | None, int | None, ClaimedRow | float | None]: ...
    async def pending(self) -> list[tuple[int, str, str]]: ...
    async def with_media(self, *, answered: bool) -> int: ...
    async def answer(self, inbox_id: int, send_error: str | None = None) -> None: ...
    async def prune(self, keep_seconds: float) -> int: ...
    async def count(self, *, answered: bool) -> int: ...
    async def unsent(self, within_seconds: float) -> int: ...
    async def in_flight(self, replica: str) -> int: ...
    async def forget_claims(self, replica: str) -> int: ...
    async def is_answered(self, inbox_id: int) -> bool: ...
    async def stored_out_of_order(self) -> int: ...
    async def timeline(self) -> list[tuple[str, str, int, str, str | None]]: ...
    async def set_reply_handle(self, inbox_id: int, handle: str) -> None: ...
    async def reply_handle(self, inbox_id: int) -> str: ...


class ChatHoldRowsAPI(Protocol):
    """Which replica answers each chat's messages, with a lease and a generation
    (``memory/store/chat_holds.py``); leases are seconds from now on the store's clock."""

    async def take(
        self, channel: str, chat_id: str, holder: str, lease_s: float, *, force: bool = False
    ) -> int | None: ...
    async def holder(self, channel: str, chat_id: str) -> str | None: ...
    async def get(self, channel: str, chat_id: str) -> tuple[str, int] | None: ...
    async def next_message(
        self, channel: str, chat_id: str, holder: str, settle_s: float = 0.0, history: int = 0
    ) -> ClaimedRow | float | None: ...
    async def fence(
        self, inbox_id: int, channel: str, chat_id: str, holder: str, generation: int, margin_s: float
    ) -> bool: ...
    async def extend(
        self, channel: str, chat_id: str, holder: str, generation: int, lease_s: float
    ) -> bool: ...
    async def answered(
        self,
        inbox_id: int,
        channel: str,
        chat_id: str,
        holder: str,
        generation: int,
        send_error: str | None = None,
    ) -> bool: ...
    async def answered_then_next(
        self,
        inbox_id: int,
        channel: str,
        chat_id: str,
        holder: str,
        generation: int,
        send_error: str | None = None,
        settle_s: float = 0.0,
        history: int = 0,
        exchange: ExchangeWrite | None = None,
    ) -> AfterAnswer: ...
    async def release(self, channel: str, chat_id: str, holder: str) -> bool: ...
    async def renew(
        self, holder: str, chats: Sequence[tuple[str, str]], lease_s: float
    ) -> list[tuple[str, str]]: ...
    async def take_waiting(
        self,
        channels: Sequence[str],
        holder: str,
        lease_s: float,
        *,
        own: bool = False,
        every: bool = False,
        limit: int = 100,
    ) -> list[tuple[str, str, str | None]]: ...
    async def drop(self, holder: str) -> int: ...
    async def prune(self, keep_s: float) -> int: ...
    async def all(self) -> list[tuple[str, str, str, str]]: ...
