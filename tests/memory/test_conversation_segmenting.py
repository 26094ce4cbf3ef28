"""A long turn is segmented in the conversation tier's own thread, off the event loop
(``memory/conversation.py``, ``SEGMENT_OFF_LOOP_CHARS``): it is indexed, and found, exactly as a turn
segmented in the loop thread is."""

from __future__ import annotations

import pytest

from memory.conversation import SEGMENT_OFF_LOOP_CHARS
from memory.engine import MemoryEngine
from memory.text import tokenizer

LONG_EN = " ".join(
    f"The ferry to island number {n} leaves from the northern pier at dawn." for n in range(40)
)
LONG_ZH = "我们先把行李收拾好然后检查车票最后在中午之前出发路上注意安全。" * 12


@pytest.mark.both_stores
async def test_a_long_turn_is_indexed_and_found_as_a_short_one_is(engine: MemoryEngine) -> None:
    assert len(LONG_EN) >= SEGMENT_OFF_LOOP_CHARS and len(LONG_ZH) >= SEGMENT_OFF_LOOP_CHARS
    log = engine.conversation
    texts = await log.index_texts("ann", "telegram", "1", ["short question?", LONG_EN, LONG_ZH])
    short, english, chinese = (tokenizer.index_text(t) for t in ("short question?", LONG_EN, LONG_ZH))
    # each turn's own words, then the words of the turn it answers
    assert texts == [short, f"{english} {short}", f"{chinese} {english}"]
    await log.record("ann", channel="telegram", chat_id="1", role="assistant", content=LONG_ZH)
    hits = await log.search("ann", "检查车票")
    assert hits and hits[0].turn.content == LONG_ZH
