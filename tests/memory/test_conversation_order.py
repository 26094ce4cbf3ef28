"""Conversation search never puts a turn without the query's words or meaning above one with them, and a
turn that matches by nothing is not a result (memory/conversation.py, ``rerank``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memory.engine import MemoryEngine

DAY = datetime(2026, 10, 1, 9, 0, tzinfo=UTC)

DINNER = [
    ("user", "Do you know a good recipe for dinner?"),
    ("assistant", "How about a risotto?"),
    ("user", "Sounds good. What wine goes with it?"),
    ("assistant", "A dry white works well."),
    ("user", "My cello teacher says I should practise more."),
    ("assistant", "That's a good idea."),
]
DINNER_ZH = [
    ("user", "你知道晚饭做什么菜好吗？"),
    ("assistant", "做个番茄炒蛋怎么样？"),
    ("user", "好主意。配什么汤？"),
    ("assistant", "紫菜蛋花汤就很好。"),
    ("user", "我的大提琴老师说我要多练琴。"),
    ("assistant", "确实应该。"),
]


async def _keep(engine: MemoryEngine, owner: str, lines: list[tuple[str, str]]) -> None:
    for n, (role, text) in enumerate(lines):
        await engine.conversation.record(
            owner, channel="telegram", chat_id="1", role=role, content=text, now=DAY + timedelta(minutes=n)
        )


async def test_the_reply_to_a_reply_is_not_a_result(engine: MemoryEngine) -> None:
    await _keep(engine, "alice", DINNER)
    hits = await engine.conversation.search("alice", "recipe dinner", limit=5, context=0)
    said = [h.turn.content for h in hits]
    assert "Sounds good. What wine goes with it?" not in said  # it answers "How about a risotto?"
    assert said[-1] == "Do you know a good recipe for dinner?" and len(said) == 2
    assert all(h.score > 0 for h in hits)


async def test_a_turn_with_the_word_ranks_above_one_found_only_through_the_turn_before(
    engine: MemoryEngine,
) -> None:
    await _keep(engine, "alice", DINNER)
    hits = await engine.conversation.search("alice", "cello", limit=5, context=0)
    assert [h.turn.content for h in hits] == [
        "My cello teacher says I should practise more.",
        "That's a good idea.",  # found through the words of the turn it answers, below them
    ]
    assert hits[0].score > hits[1].score > 0
    assert await engine.conversation.search("alice", "violin", limit=5, context=0) == []


async def test_chinese_order_and_no_empty_matches(engine: MemoryEngine) -> None:
    await _keep(engine, "bob", DINNER_ZH)
    hits = await engine.conversation.search("bob", "大提琴", limit=5, context=0)
    assert hits[0].turn.content == "我的大提琴老师说我要多练琴。"
    assert all(h.score > 0 for h in hits)
    hits = await engine.conversation.search("bob", "晚饭做什么菜", limit=5, context=0)
    assert "好主意。配什么汤？" not in [h.turn.content for h in hits]  # the reply to a reply
    assert all(h.score > 0 for h in hits)
