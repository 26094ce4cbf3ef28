"""What a trial counts, from what it recorded: the answers the platform stub received, the replicas'
logs, and the database after the run (bench/replicas/__init__.py). The pure parts are tested on
recorded logs (tests/bench/test_replicas_counting.py)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field

from memory.clock import from_db

# One line per scheduled run and period, logged by the replica that ran it (gateway/scheduler.py).
JOB_RAN_RE = re.compile(r"\[gateway\] job (\S+) of (\S+) ran here")
STANDING_BY = "another replica polls for this bot; standing by"  # channels/telegram/poll_turn.py


@dataclass
class Sent:
    """What the bench sent, by message key (a Telegram message id, a Feishu message id), and when each
    was accepted by a replica (webhook 2xx, callback 2xx, poll offset confirmed)."""

    chat_of: dict[Hashable, int] = field(default_factory=dict)  # message -> chat number
    order: dict[Hashable, int] = field(default_factory=dict)  # message -> its place in its chat
    accepted_at: dict[Hashable, float] = field(default_factory=dict)
    started: float = 0.0
    # message -> (its delivery's id, the wall clock when it was first posted), where the trial records them
    # (``race``): to read a late delivery's path against the replicas' logs
    posted: dict[Hashable, tuple[str, float]] = field(default_factory=dict)

    def add(self, message: Hashable, chat: int, place: int) -> None:
        self.chat_of[message] = chat
        self.order[message] = place


def count(sent: Sent, answers: Iterable[tuple[float, Hashable]]) -> dict[str, int]:
    """answered / lost / answered_twice / order_violations from the (time, replied-to message) of every
    answer the platform received, in arrival order. An order violation is a chat's first answer to a
    message arriving after the first answer to a later message of that chat."""
    answers = list(answers)
    times = Counter(message for _, message in answers)
    ours = set(sent.chat_of)
    last_in_chat: dict[int, int] = {}
    violations = 0
    seen: set[Hashable] = set()
    for _, message in answers:
        if message not in ours or message in seen:
            continue
        seen.add(message)
        chat, place = sent.chat_of[message], sent.order[message]
        if place < last_in_chat.get(chat, -1):
            violations += 1
        last_in_chat[chat] = max(place, last_in_chat.get(chat, -1))
    return {
        "answered": len(ours & set(times)),
        "lost": len(ours - set(times)),
        "answered_twice": sum(1 for m in ours if times[m] > 1),
        "order_violations": violations,
    }


def job_runs(logs: Iterable[str]) -> Counter[tuple[str, str]]:
    """How many times each (job, period) ran, over every replica's log."""
    runs: Counter[tuple[str, str]] = Counter()
    for text in logs:
        for match in JOB_RAN_RE.finditer(text):
            runs[(match[1], match[2])] += 1
    return runs


def job_runs_duplicated(runs: Counter[tuple[str, str]]) -> int:
    """Runs beyond the first of each (job, period)."""
    return sum(n - 1 for n in runs.values() if n > 1)


def poller(logs: dict[int, str]) -> int | None:
    """The replica polling Telegram: the only one whose log never said it stands by (None while that
    is not yet one replica)."""
    polling = [index for index, text in logs.items() if STANDING_BY not in text]
    return polling[0] if len(polling) == 1 else None


async def in_flight(database: str, replica: str) -> int:
    """Messages whose reply ``replica`` recorded as being sent and never marked answered (its send
    intent: gateway/inbox.py), read from the database."""
    from memory.store.open import open_store

    store = await open_store(database, create=False, warm_text=False)
    try:
        return await store.inbox.in_flight(replica)
    finally:
        await store.close()


async def stored_out_of_order(database: str) -> int:
    """Messages stored after a later message of their chat in the platform's order (after every replica
    stopped): how often the trial's deliveries reached the database out of order — what ``race`` must
    open for its 0 order violations to mean anything."""
    from memory.store.open import open_store

    store = await open_store(database, create=False, warm_text=False)
    try:
        return await store.inbox.stored_out_of_order()
    finally:
        await store.close()


def order_causes(
    timeline: Iterable[tuple[str, str, int, str, str | None]], window_s: float
) -> dict[str, int]:
    """What the database says of the answers' order (``InboxRows.timeline``'s rows): messages marked
    answered after a later message of their chat (platform order), and of those, the ones stored more
    than ``window_s`` (the reorder window) after that later message was — which the window cannot put
    back in order by design — and the ones stored after it was already answered."""
    chats: dict[tuple[str, str], list[tuple[int, float, float | None]]] = {}
    for channel, chat_id, seq, received, answered in timeline:
        at = None if answered is None else from_db(answered).timestamp()
        chats.setdefault((channel, chat_id), []).append((seq, from_db(received).timestamp(), at))
    late = after_answer = out_of_order = 0
    for rows in chats.values():
        rows.sort()
        for n, (_, stored, marked) in enumerate(rows):
            overtaken = [r for r in rows[n + 1 :] if marked and r[2] is not None and r[2] < marked]
            if not overtaken:
                continue
            out_of_order += 1
            first = min(overtaken, key=lambda r: r[2] or 0.0)  # the later message answered first
            late += stored - first[1] > window_s
            after_answer += first[2] is not None and stored > first[2]
    return {
        "answered_out_of_order_db": out_of_order,
        "of_them_stored_past_window": late,
        "of_them_stored_after_the_later_answer": after_answer,
    }


def lateness(timeline: Iterable[tuple[str, str, int, str, str | None]]) -> list[float]:
    """Seconds each message was stored after a later message of its chat (platform order) had been, one
    per message stored out of order (``InboxRows.timeline``'s rows): how long the reorder window had to
    be to put it back in order."""
    chats: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for channel, chat_id, seq, received, _ in timeline:
        chats.setdefault((channel, chat_id), []).append((seq, from_db(received).timestamp()))
    gaps: list[float] = []
    for rows in chats.values():
        rows.sort()
        for n, (_, stored) in enumerate(rows):
            first_later = min((later for _, later in rows[n + 1 :]), default=stored)
            if first_later < stored:
                gaps.append(stored - first_later)
    return gaps


def spread(values: Iterable[float]) -> dict[str, float | int | None]:
    """``count``, ``p50``, ``p90``, ``p99`` and ``max`` of ``values`` (nearest rank; None when empty)."""
    ordered = sorted(values)

    def rank(q: float) -> float | None:
        return round(ordered[min(int(q * len(ordered)), len(ordered) - 1)], 3) if ordered else None

    return {"count": len(ordered), "p50": rank(0.5), "p90": rank(0.9), "p99": rank(0.99), "max": rank(1.0)}


def answer_latencies(sent: Sent, answers: Iterable[tuple[float, Hashable]]) -> list[float]:
    """Seconds from each message's acceptance (2xx) to its first answer, for the messages with both: what
    the reorder window costs shows here (with the model's latency and the chat's queue)."""
    first: dict[Hashable, float] = {}
    for at, message in answers:
        first.setdefault(message, at)
    return [first[m] - at for m, at in sent.accepted_at.items() if m in first]


async def inbox_timeline(database: str) -> list[tuple[str, str, int, str, str | None]]:
    """Every kept inbox row's chat, platform order, storing and answered times (after every replica
    stopped): for ``order_causes``."""
    from memory.store.open import open_store

    store = await open_store(database, create=False, warm_text=False)
    try:
        return await store.inbox.timeline()
    finally:
        await store.close()


async def duplicate_memories(database: str) -> tuple[int, int]:
    """Live memories beyond the first with the same text, per owner (after every replica stopped), and
    how many live memories there are: what the first number is out of (0 of 0 would prove nothing)."""
    from memory.engine import MemoryEngine

    engine = await MemoryEngine.open(database, create=False)
    try:
        extra = total = 0
        for owner in await engine.owners():
            texts = Counter(m.content for m in await engine.list(owner, limit=100_000))
            extra += sum(n - 1 for n in texts.values())
            total += sum(texts.values())
        return extra, total
    finally:
        await engine.close()
