"""A message too long to take in is refused whole, with a reply that says so; nothing of it is kept as a
memory, a buffered turn or a conversation turn — never a fragment of it (issue 37, item 11: a
40,892-character message was kept as the memory "I like thing0")."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from gateway.app import Runtime
from gateway.config import load_config
from tests.support.typed_channel import ChatChannel

OWNER = "test:u1"


def offline_config(tmp_path: Path, **extraction: object) -> Path:
    raw = {
        "provider": {"type": "offline"},
        "agent": {"workspace": str(tmp_path / "ws")},
        "memory": {
            "dbPath": str(tmp_path / "memory.db"),
            "embedding": {"provider": "none"},
            "extraction": {"quietGap": "1h", "exitFlush": "5s", **extraction},
        },
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


def long_list(chars: int) -> str:
    """'I like thing0, thing1, …': a first-person statement whose clauses rules could pick apart."""
    items, text = [], "I like "
    n = 0
    while len(text) < chars:
        items.append(f"thing{n}")
        text = "I like " + ", ".join(items)
        n += 1
    return text


@pytest.mark.parametrize(
    ("text", "chinese"), [(long_list(40_892), False), ("我喜欢" + "、东西" * 9_000, True)]
)
async def test_a_message_too_long_is_refused_whole_and_nothing_of_it_is_kept(
    tmp_path: Path, text: str, chinese: bool
) -> None:
    channel = ChatChannel()
    runtime = await Runtime.open(load_config(offline_config(tmp_path), env={}), [channel])
    try:
        await runtime.start(schedule=False)
        reply = await channel.say(text)
        if chinese:
            assert "太长" in reply and "没有保存" in reply
        else:
            assert "too long" in reply and "kept none of it" in reply and "6,000" in reply
        assert "I'll remember" not in reply and "thing0" not in reply
        await asyncio.wait_for(runtime.loop.drain(), 30)  # an exchange would be written after the send
        engine = runtime.engine
        assert await engine.conversation.count(OWNER) == 0
        assert await runtime.assistant.extraction.buffer.pending_turns(OWNER) == 0
        await channel.say("/memory")
        assert await engine.list(OWNER) == []
        assert "remember" in await channel.say("I live in Lyon")  # the next message is taken as usual
    finally:
        await runtime.close()


async def test_a_long_message_within_the_budget_is_kept_whole(tmp_path: Path) -> None:
    text = "Notes from today. " + "The meeting ran long and we talked about the roadmap. " * 200  # ~11 kB
    channel = ChatChannel()
    runtime = await Runtime.open(load_config(offline_config(tmp_path), env={}), [channel])
    try:
        await runtime.start(schedule=False)
        await channel.say(text)
        await asyncio.wait_for(runtime.loop.drain(), 30)  # the exchange is written after the send
        [hit] = await runtime.engine.conversation.search(OWNER, "roadmap meeting", limit=1, context=0)
        assert hit.turn.content == text.strip()
    finally:
        await runtime.close()


async def test_a_long_list_within_the_budget_is_kept_whole_or_not_at_all(tmp_path: Path) -> None:
    text = long_list(20_000)  # ~5,000 tokens: one extraction batch takes it, so it is not refused
    channel = ChatChannel()
    runtime = await Runtime.open(load_config(offline_config(tmp_path), env={}), [channel])
    try:
        await runtime.start(schedule=False)
        reply = await channel.say(text)
        assert "too long" not in reply
        await channel.say("/memory")
        # /memory waits 5 s (exitFlush); an empty list after that passed "all" by being slow
        assert await runtime.assistant.extraction.flush_now(OWNER, 30.0)  # a ceiling: the list is final
        memories = await runtime.engine.list(OWNER)
        assert all(m.content.rstrip(".") == text for m in memories), [m.content[:40] for m in memories]
        assert "I'll remember: I like thing0" not in reply or text in reply  # no promise of a fragment
    finally:
        await runtime.close()
