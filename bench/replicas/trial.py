"""What every trial shares: its settings, waiting, the end of a run (every message answered, or no new
answer for a while), and the counts every mode reports (bench/replicas/__init__.py)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.replicas.counting import (
    Sent,
    answer_latencies,
    count,
    duplicate_memories,
    in_flight,
    inbox_timeline,
    job_runs,
    job_runs_duplicated,
    lateness,
    order_causes,
    spread,
    stored_out_of_order,
)
from bench.replicas.gateways import Replica

REORDER_WINDOW_S = 0.3  # gateway.reorderWindow's default, which the trials keep
Answers = Callable[[], list[tuple[float, Hashable]]]  # (time, replied-to message) of every answer so far


@dataclass
class TrialSettings:
    database: str  # the scratch database's URL (or SQLite file) this trial runs on
    replicas: int
    chats: int
    messages: int
    latency: float
    kill_at: float | None  # share of messages accepted before the kill; None: no kill
    restart_after: float
    timeout: float  # for the replicas to become ready, and the messages to be accepted
    idle: float  # no new answer for this long: the trial ends, what is unanswered is lost
    jobs_every: float | None = None  # gateway.jobsEvery: every scheduled job's period, in seconds
    stall_for: float = 35.0  # the stall trial: seconds replica 0 stays SIGSTOPped (past its 30 s lease)
    skew: float = 25.0  # the skew trial: seconds replica 1's clock runs ahead (gateway.clockOffset)

    @property
    def total(self) -> int:
        return self.chats * self.messages


async def until(predicate: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"not done within {timeout:.0f} s")
        await asyncio.sleep(0.05)


async def settle(answers: Answers, ours: set[Hashable], idle: float) -> float:
    """Until every message is answered, or no new answer came for ``idle`` seconds (then some are lost);
    when the last answer came."""
    seen, last = -1, time.monotonic()
    while True:
        answered = {m for _, m in answers()} & ours
        if len(answered) != seen:
            seen, last = len(answered), time.monotonic()
        if seen >= len(ours) or time.monotonic() - last > idle:
            return last
        await asyncio.sleep(0.05)


async def kill_accepted(s: TrialSettings, sent: Sent) -> None:
    """Wait until ``kill_at`` of the messages were accepted."""
    assert s.kill_at is not None
    wanted = int(s.total * s.kill_at)
    await until(lambda: len(sent.accepted_at) >= wanted, s.timeout)


async def answered_after(
    answers: Answers, killed: float, pending: set[Hashable], wait: float
) -> float | None:
    """Seconds from ``killed`` until the last of ``pending`` (accepted, unanswered at the kill) was
    answered; None when nothing was pending. A message never answered counts as lost, later."""
    if not pending:
        return None
    with contextlib.suppress(TimeoutError):
        await until(lambda: pending <= {m for _, m in answers()}, wait)
    first: dict[Hashable, float] = {}
    for at, message in answers():
        if message in pending and at >= killed:
            first.setdefault(message, at)
    return max(first.values()) - killed if first else 0.0


def _keep_record(
    sent: Sent, answers: list[tuple[float, Hashable]], timeline: list[tuple[Any, ...]], path: Path
) -> None:
    """What was sent and answered, beside the replicas' logs (``--workdir`` keeps it): which message was
    lost, answered twice or out of order, to read against the logs; ``inbox``: the inbox's rows
    (``InboxRows.timeline``: chat, platform order, stored and answered on the store's clock)."""
    messages = [
        {
            "message": str(m),
            "chat": sent.chat_of[m],
            "place": sent.order[m],
            "accepted": sent.accepted_at.get(m),
            "delivery": sent.posted.get(m, ("", None))[0],
            "posted_wall": sent.posted.get(m, ("", None))[1],
        }
        for m in sent.chat_of
    ]
    record = {
        "started": sent.started,
        "sent": messages,
        "answers": [[at, str(m)] for at, m in answers],
        "inbox": [list(row) for row in timeline],
    }
    path.write_text(json.dumps(record), encoding="utf-8")


async def in_flight_at(s: TrialSettings, victim: Replica) -> int:
    """Right after ``victim`` was killed (or stopped): the messages it had claimed (the claim is the send
    intent) and not marked answered — on Telegram, the only ones another replica may answer again."""
    return await in_flight(s.database, victim.name)


async def report(
    mode: str, s: TrialSettings, sent: Sent, answers: Answers, replicas: list[Replica], finished: float
) -> dict[str, Any]:
    """The run's JSON object (after every replica stopped), without ``takeover_s`` and
    ``in_flight_at_kill`` (the trial's own)."""
    result: dict[str, Any] = {"mode": mode, "replicas": s.replicas, "messages": s.total}
    result.update(count(sent, answers()))
    result["duplicate_memories"], result["memories"] = await duplicate_memories(s.database)
    result["stored_out_of_order"] = await stored_out_of_order(s.database)
    timeline = await inbox_timeline(s.database)
    _keep_record(sent, answers(), timeline, replicas[0].log.parent / "answers.json")
    result.update(order_causes(timeline, REORDER_WINDOW_S))
    result["late_by_s"] = spread(lateness(timeline))  # how late the deliveries stored out of order were
    result["answer_latency_s"] = spread(answer_latencies(sent, answers()))
    runs = job_runs(r.log_text() for r in replicas)
    result["job_runs_duplicated"] = job_runs_duplicated(runs)
    result["job_periods"] = len(runs)  # how many (job, period) ran at all: what the 0 above is out of
    result["seconds"] = round(finished - sent.started, 3)
    return result
