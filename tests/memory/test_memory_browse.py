"""engine.browse (the memory page's reads) and engine.restore: filters, sorts, pages, the supersede chain,
growth per week — one owner at a time."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from memory.browse import BrowseFilter
from memory.engine import MemoryEngine
from memory.records import Fact

A, B = "user:a", "user:b"


async def test_filters_sorts_and_pages(engine: MemoryEngine) -> None:
    ids = []
    for i in range(7):
        fact = Fact(
            f"note {i} about lunch",
            category="temp" if i % 2 else "identity",
            project="p" if i < 3 else "_global",
        )
        ids.append((await engine.write(A, fact, now=datetime(2026, 1, 1 + i, tzinfo=UTC))).id)
    await engine.write(B, Fact("note about lunch from b"))
    await engine.store.memories.touch([ids[2]], "2026-11-01 00:00:00")
    await engine.store.memories.touch([ids[2]], "2026-11-01 00:00:00")
    await engine.archive(A, ids[6])

    page = await engine.browse.page(A, BrowseFilter(sort="date"), per_page=4)
    assert [r.memory.id for r in page.rows] == [ids[5], ids[4], ids[3], ids[2]]
    assert (page.total, page.pages) == (6, 2)
    second = await engine.browse.page(A, BrowseFilter(sort="date", page=2), per_page=4)
    assert [r.memory.id for r in second.rows] == [ids[1], ids[0]]
    assert (await engine.browse.page(A, BrowseFilter(sort="access"))).rows[0].memory.id == ids[2]
    # Identity never decays, temp does: by decay score the identity notes come first.
    by_score = await engine.browse.page(A, BrowseFilter())
    assert {r.memory.category for r in by_score.rows[:3]} == {"identity"}
    assert [r.score for r in by_score.rows] == sorted((r.score for r in by_score.rows), reverse=True)

    only = await engine.browse.page(A, BrowseFilter(category="temp", project="p"))
    assert [r.memory.id for r in only.rows] == [ids[1]]
    archived = await engine.browse.page(A, BrowseFilter(archived="archived"))
    assert [r.memory.id for r in archived.rows] == [ids[6]]
    assert (await engine.browse.page(A, BrowseFilter(archived="all"))).total == 7
    assert (await engine.browse.page(A, BrowseFilter(archived="archived", query="NOTE 6"))).total == 1
    found = await engine.browse.page(A, BrowseFilter(query="lunch"))
    assert found.total == 6 and all(r.memory.owner == A for r in found.rows)
    assert (await engine.browse.page(A, BrowseFilter(page=99), per_page=4)).page == 2  # clamped


@pytest.mark.parametrize(
    "bad", [BrowseFilter(sort="x"), BrowseFilter(tier=3), BrowseFilter(archived="x"), BrowseFilter(page=0)]
)
async def test_values_the_page_never_offers_are_refused(engine: MemoryEngine, bad: BrowseFilter) -> None:
    with pytest.raises(ValueError):
        await engine.browse.page(A, bad)


async def test_history_follows_the_supersede_chain_and_restore_undoes_a_forget(engine: MemoryEngine) -> None:
    first = await engine.write(A, Fact("I live in Paris", subject="a", predicate="lives_in"))
    second = await engine.write(A, Fact("I live in Berlin", subject="a", predicate="lives_in"))
    third = await engine.write(A, Fact("I live in Lisbon", subject="a", predicate="lives_in"))
    history = await engine.browse.history(A, first.id)
    assert history is not None and [m.id for m in history.successors] == [second.id, third.id]
    latest = await engine.browse.history(A, third.id)
    assert latest is not None and [m.id for m in latest.replaced] == [second.id]
    assert await engine.browse.history(B, first.id) is None  # another owner's id

    assert await engine.archive(A, third.id)
    assert [h.id for h in await engine.search(A, "Lisbon")] == []
    assert not await engine.restore(B, third.id)  # not B's
    assert await engine.restore(A, third.id)
    assert [h.id for h in await engine.search(A, "Lisbon")] == [third.id]
    assert not await engine.restore(A, third.id)  # already live


async def test_growth_counts_new_live_memories_per_week_by_category(engine: MemoryEngine) -> None:
    await engine.write(A, Fact("old one", category="identity"), now=datetime(2025, 1, 1, tzinfo=UTC))
    await engine.write(A, Fact("this monday", category="decision"), now=datetime(2026, 11, 23, tzinfo=UTC))
    await engine.write(A, Fact("this sunday", category="decision"), now=datetime(2026, 11, 29, tzinfo=UTC))
    await engine.write(A, Fact("last week", category="event"), now=datetime(2026, 11, 20, tzinfo=UTC))
    weeks = await engine.browse.growth(A, weeks=3, today=date(2026, 11, 25))
    assert [w.start for w in weeks] == [date(2026, 11, 9), date(2026, 11, 16), date(2026, 11, 23)]
    assert weeks[0].before == 1
    assert weeks[1].by_category == {"event": 1} and weeks[2].by_category == {"decision": 2}
