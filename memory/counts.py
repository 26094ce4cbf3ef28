"""The memory's counts, computed in one place so that every view shows the same numbers: ``tierclaw
status``, ``tierclaw memory owners``, ``tierclaw memory stats``, ``/status`` and the memory page all read
``engine.stats`` (docs: memory/README.md).

What each count means, once:

* ``tier1`` / ``tier2`` / ``archived``: live profile entries, live memories, forgotten memories;
* ``tier3_events``: daily summaries;
* ``buffered_turns``: messages still waiting to be extracted (live ones only: a dead letter is not
  waiting, it has given up);
* ``dead_letters``: messages whose extraction failed too often (``tierclaw memory retry`` re-queues them);
* ``conversation_turns``: kept turns of the conversation tier;
* ``owners``: the people this memory holds anything of — memories, summaries, buffered messages or kept
  turns (the same people ``tierclaw memory owners`` and the memory page list).
"""

from __future__ import annotations

from memory.store.protocol import MemoryStore


async def memory_counts(store: MemoryStore, owner: str | None = None) -> dict[str, int]:
    """The counts above for one owner, or for everyone when ``owner`` is None."""
    counts = dict(await store.memories.counts(owner))
    counts["tier3_events"] = await store.events.count(owner)
    counts["buffered_turns"] = await store.buffer.count(owner, dead=False)
    counts["dead_letters"] = await store.buffer.count(owner, dead=True)
    counts["conversation_turns"] = await store.turns.count(owner)
    people = await store.events.last_activity()
    counts["owners"] = len(people) if owner is None else int(owner in people)
    return counts
