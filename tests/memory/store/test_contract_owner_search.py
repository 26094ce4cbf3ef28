"""The store contract for owner-scoped full text (issue 38, schema 26): a candidate query reads one owner's
index rows, and never returns another owner's memory, on both stores (``store`` fixture)."""

from __future__ import annotations

from memory.records import Fact
from memory.store import NewRow
from memory.store.protocol import MemoryStore
from memory.text import tokenizer

T0 = "2026-01-02 03:04:05"
OWNERS = ("alice", "bob", "telegram:42", "carol")
TEXTS = (
    "green tea in the morning",
    "the chess club meets on tuesday",
    "tea with the chess club",
    "a trip to lyon in june",
    "green bicycle for the trip",
)


async def _add(store: MemoryStore, owner: str, content: str, created_at: str = T0) -> int:
    fact = Fact(content=content)
    row = NewRow(content.lower(), tokenizer.index_text(content), created_at)
    return await store.memories.insert(owner, fact, row)


async def _fill(store: MemoryStore) -> dict[str, list[int]]:
    """Every owner gets every text, interleaved by owner (their ids are mixed in the index)."""
    ids: dict[str, list[int]] = {o: [] for o in OWNERS}
    for text in TEXTS:
        for owner in OWNERS:
            ids[owner].append(await _add(store, owner, f"{text} ({owner})"))
    return ids


async def test_candidates_are_the_owners_only(store: MemoryStore) -> None:
    ids = await _fill(store)
    store.search.indexed_rows = len(OWNERS) * len(TEXTS)
    terms = ["tea", "chess", "trip", "green"]
    for owner in OWNERS:
        for newest_first in (False, True):
            found = await store.search.matches(owner, terms, tiers=(2,), limit=50, newest_first=newest_first)
            assert found and {c.owner for c in found} == {owner}
            assert {c.id for c in found} <= set(ids[owner])
            assert len(found) == len(TEXTS)  # every text holds one of the terms
        windowed = await store.search.matches(
            owner, terms, tiers=(2,), limit=50, created_between=("2026-01-01 00:00:00", "2026-01-03 00:00:00")
        )
        assert {c.id for c in windowed} == set(ids[owner])
        both = await store.search.containing_all(owner, ["tea", "chess"], 2)
        assert [i for i, _ in both] == [ids[owner][2]]
    newest = await store.search.matches("bob", ["green"], tiers=(2,), limit=1, newest_first=True)
    assert [c.id for c in newest] == [ids["bob"][4]]  # the owner's newest, not the index's newest
    assert await store.search.matches("nobody", terms, tiers=(2,), limit=50) == []
    assert await store.search.containing_all("nobody", ["tea"], 2) == []


async def test_the_same_text_scores_the_same_for_every_owner(store: MemoryStore) -> None:
    """bm25 keeps whole-index statistics: owners holding the same rows get the same scores."""
    await _fill(store)
    scores = {}
    for owner in ("alice", "bob"):
        found = await store.search.matches(owner, ["tea", "club"], tiers=(2,), limit=9)
        scores[owner] = [round(c.text_score, 9) for c in found]
    assert scores["alice"] == scores["bob"] and len(scores["alice"]) == 3 and scores["alice"][0] > 0


async def test_edits_and_purges_keep_the_owner_index(store: MemoryStore) -> None:
    ids = await _fill(store)
    first = ids["alice"][0]
    fact = Fact(content="oolong by the river (alice)")
    await store.memories.update(
        "alice", first, fact, norm_key=fact.content, search_text=tokenizer.index_text(fact.content), now=T0
    )
    assert [c.id for c in await store.search.matches("alice", ["oolong"], tiers=(2,), limit=9)] == [first]
    assert await store.search.matches("bob", ["oolong"], tiers=(2,), limit=9) == []
    assert first not in {c.id for c in await store.search.matches("alice", ["morning"], tiers=(2,), limit=9)}
    assert await store.memories.purge("alice", first) is not None
    assert await store.search.matches("alice", ["oolong"], tiers=(2,), limit=9) == []
    late = await _add(store, "dave", "oolong for dave")  # an owner first seen after the others
    assert [c.id for c in await store.search.matches("dave", ["oolong"], tiers=(2,), limit=9)] == [late]
    assert await store.search.matches("alice", ["oolong"], tiers=(2,), limit=9) == []
