"""The offline stand-ins: the no-key memory model and the labelled offline chat model."""

from __future__ import annotations

from datetime import date

from gateway.agent import ChatModel, ChatRequest
from gateway.offline_chat import OFFLINE_HINT, OfflineChatModel, looks_like_statement
from memory.engine import MemoryEngine
from memory.model.offline_model import PROFILE_MAX_ENTRIES, SUMMARY_MAX_CHARS, OfflineMemoryModel
from memory.model.protocol import MemoryModel, Turn
from memory.records import Memory, Retrieved

OWNER = "alice"
NOW = "2026-01-05 10:00:00"


def _turn(role: str, content: str) -> Turn:
    return Turn(role=role, content=content, created_at=NOW)


def _memory(mid: int, content: str, **kw) -> Memory:
    base = dict(
        id=mid,
        owner=OWNER,
        tier=2,
        project="_global",
        topic="_general",
        category="event",
        content=content,
        importance=0.5,
        source="extraction",
        source_ref=None,
        subject=None,
        predicate=None,
        created_at=NOW,
        updated_at=NOW,
        last_accessed=NOW,
        access_count=0,
        is_archived=False,
        superseded_by=None,
    )
    base.update(kw)
    return Memory(**base)


def _retrieved(content: str) -> Retrieved:
    return Retrieved(
        id=1,
        content=content,
        tier=2,
        project="_global",
        topic="_general",
        category="event",
        importance=0.5,
        created_at=NOW,
        score=1.0,
        match=1.0,
    )


def test_both_satisfy_their_protocols() -> None:
    memory_model: MemoryModel = OfflineMemoryModel()
    chat_model: ChatModel = OfflineChatModel()
    assert memory_model.label == "offline (no API key: a small local model keeps plain facts)"
    assert chat_model.label == "offline (no API key)"


# ------------------------------------------------------------------------------ OfflineMemoryModel


async def test_extract_reads_user_turns_only() -> None:
    turns = [
        _turn("user", "Hi! My name is Alice. What can you do?"),
        _turn("assistant", "I live in Paris and I like cheese."),  # must never become a user fact
        _turn("user", "我喜欢喝咖啡"),
    ]
    got = await OfflineMemoryModel().extract(turns)
    assert [f.content for f in got.facts] == ["My name is Alice", "我喜欢喝咖啡"]
    assert "Paris" not in got.summary and "cheese" not in got.summary
    assert got.summary == "My name is Alice. What can you do? 我喜欢喝咖啡"


async def test_extract_without_user_turns_is_empty() -> None:
    got = await OfflineMemoryModel().extract([_turn("assistant", "My name is Bot.")])
    assert got.facts == [] and got.summary == ""


async def test_extract_summary_is_capped_and_deterministic() -> None:
    turns = [_turn("user", f"I went to city number {i} this year.") for i in range(40)]
    one = await OfflineMemoryModel().extract(turns)
    two = await OfflineMemoryModel().extract(turns)
    assert one.summary == two.summary
    assert SUMMARY_MAX_CHARS - 2 <= len(one.summary) <= SUMMARY_MAX_CHARS and one.summary.endswith("…")
    assert one.summary.startswith("I went to city number 0 this year.")


async def test_extract_uses_known_projects() -> None:
    model = OfflineMemoryModel(known_projects=frozenset({"tierclaw"}))
    got = await model.extract([_turn("user", "We decided to use SQLite for tierclaw.")])
    assert [(f.category, f.project) for f in got.facts] == [("decision", "tierclaw")]


async def test_compress_events_reads_summaries(engine: MemoryEngine) -> None:
    await engine.events.add(OWNER, "I live in Berlin. What time is it?", event_date=date(2026, 1, 4))
    await engine.events.add(OWNER, "The user asked about the weather.", event_date=date(2026, 1, 4))
    await engine.events.add(OWNER, "I live in Berlin.", event_date=date(2026, 1, 4))
    events = await engine.events.find(OWNER)
    facts = await OfflineMemoryModel().compress_events(events)
    assert [(f.content, f.predicate, f.source) for f in facts] == [
        ("I live in Berlin", "lives_in", "compression")
    ]


async def test_merge_partition_folds_exact_duplicates_and_keeps_the_rest() -> None:
    mems = [
        _memory(1, "User likes tea.", importance=0.4, created_at="2026-01-03 08:00:00"),
        _memory(2, "User likes coffee", importance=0.6),
        _memory(3, "user likes TEA", importance=0.9, category="decision", created_at="2026-01-01 08:00:00"),
        _memory(4, "User lives in Berlin", category="identity", subject="user", predicate="lives_in"),
    ]
    merged = await OfflineMemoryModel().merge_partition(mems)
    assert [f.content for f in merged] == ["User likes tea.", "User likes coffee", "User lives in Berlin"]
    tea = merged[0]
    assert (tea.importance, tea.category) == (0.9, "decision")
    assert tea.created_at is not None and tea.created_at.day == 1
    assert (merged[2].subject, merged[2].predicate) == ("user", "lives_in")
    assert all(f.project == "_global" and f.topic == "_general" for f in merged)


async def test_refresh_profile_keeps_user_entries_and_adds_important_identity_config() -> None:
    profile = [
        _memory(1, "Prefers answers in English", tier=1, category="config", source="manual", importance=1.0),
        _memory(2, "I live in Berlin", tier=1, category="identity", source="compression", importance=1.0),
    ]
    important = [
        _memory(10, "I moved to Paris", category="identity", importance=1.0),
        _memory(11, "I use Neovim", category="config", importance=0.8),
        _memory(12, "We decided to use Postgres", category="decision", importance=0.8),
        _memory(13, "prefers answers in english!", category="config", importance=0.8),
    ]
    facts = await OfflineMemoryModel().refresh_profile(profile, important)
    assert [f.content for f in facts] == ["Prefers answers in English", "I moved to Paris", "I use Neovim"]
    assert all(f.tier == 1 and f.project == "_global" and f.topic == "_profile" for f in facts)
    assert all(f.subject is None and f.predicate is None for f in facts)
    assert [f.source for f in facts] == ["manual", "compression", "compression"]


async def test_refresh_profile_is_capped() -> None:
    important = [_memory(i, f"I use tool number {i}", category="config", importance=0.8) for i in range(150)]
    facts = await OfflineMemoryModel().refresh_profile([], important)
    assert len(facts) == PROFILE_MAX_ENTRIES


# ------------------------------------------------------------------------------- OfflineChatModel


async def test_reply_lists_memories_without_the_hint() -> None:
    request = ChatRequest(
        system="s",
        user_text="Where do I live?",
        memories=[_retrieved("I live in Berlin"), _retrieved("I moved to Paris")],
    )
    reply = await OfflineChatModel().reply(request)
    assert reply == (
        "[offline model] What I recall that seems relevant:\n1. I live in Berlin\n2. I moved to Paris"
    )


def test_hint_text_is_exact() -> None:
    assert OFFLINE_HINT == (
        "(Offline mode: set provider.apiKey in ~/.tierclaw/config.json or TIERCLAW_PROVIDER_API_KEY "
        "for real answers.)"
    )


def test_statement_detection() -> None:
    assert looks_like_statement("I live in Berlin")
    assert looks_like_statement("我喜欢喝咖啡")
    for text in ("ok", "Thanks!", "你好", "What is this?", "Do you know me", "你记得我吗", "好的", "  "):
        assert not looks_like_statement(text), text
