"""A message that can never be stored never stalls a channel (issue 27, item 6).

Text that UTF-8 cannot encode (a lone surrogate, ``"\\ud800"`` in the JSON) is repaired to U+FFFD and
stored; a storage failure that no retry can change is skipped with one line naming the update or event,
while a busy or read-only database still leaves the message unconfirmed. The property tests push such
text through the real clients (python-telegram-bot, lark-oapi) from the local servers into the real
gateway loop and SQLite inbox, each followed by an ordinary message that must be handled too.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from channels.base import InboundMessage, Undeliverable
from channels.encodable import encodable
from channels.feishu.channel import FeishuChannel, FeishuSettings
from channels.telegram.channel import TelegramChannel, TelegramSettings
from gateway.inbox import DurableInbox
from gateway.loop import ProcessLoop
from localservers.feishu_server import FeishuStub, message_event
from localservers.telegram_server import TelegramStub
from memory.engine import MemoryEngine
from memory.store.errors import cannot_succeed_on_retry

# What fuzzing found and its neighbours: lone surrogates, NULs, and backslash sequences that look like
# (invalid) JSON escapes once they are text.
AWKWARD = ("\ud800", "\udfff", "\udc00\ud800", "\x00", "\\x", "\\u12", "\\ud800", "\\", '"', "\u2028")
POISON = st.lists(
    st.one_of(st.characters(exclude_categories=()), st.sampled_from(AWKWARD)), min_size=1, max_size=10
).map("".join)
EXAMPLES = settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def test_encodable_repairs_only_what_utf8_cannot_encode() -> None:
    assert encodable("a\ud800b") == "a\ufffdb"
    assert encodable("\ud83d\ude00") == "😀"  # a pair kept as two code points is joined
    assert encodable("a NUL\x00 here") == "a NUL\ufffd here"  # PostgreSQL refuses it (issue 37)
    plain = "nothing to do here"
    assert encodable(plain) is plain


@given(st.text(alphabet=st.characters(exclude_categories=())))
def test_encodable_text_always_encodes_and_keeps_what_it_can(text: str) -> None:
    fixed = encodable(text)
    fixed.encode("utf-8")  # never raises
    assert len(fixed) <= len(text)
    if "\ufffd" not in fixed:
        assert fixed.encode("utf-16-le", "surrogatepass") == text.encode("utf-16-le", "surrogatepass")


async def test_what_the_store_refuses_for_good_is_told_from_a_database_in_trouble(
    engine: MemoryEngine,
) -> None:
    rows = engine.store.inbox
    with pytest.raises(UnicodeEncodeError) as refused:
        await rows.add("telegram", "42", "u1", '{"text": "\ud800"}', "2026-01-01T00:00:00")
    assert cannot_succeed_on_retry(refused.value)
    await engine.store.db.write("PRAGMA query_only = 1")  # read-only now: a retry later may succeed
    try:
        with pytest.raises(Exception) as busy:
            await rows.add("telegram", "42", "u2", '{"text": "fine"}', "2026-01-01T00:00:00")
    finally:
        await engine.store.db.write("PRAGMA query_only = 0")
    assert not cannot_succeed_on_retry(busy.value)


async def _handled(seen: list[str], count: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while len(seen) < count:
        assert time.monotonic() < deadline, f"only {len(seen)} of {count} messages handled: {seen!r}"
        await asyncio.sleep(0.02)


async def _gateway_loop(db: Path) -> tuple[MemoryEngine, ProcessLoop, list[str]]:
    """The real loop and durable inbox; the handler records what it was given (after storing)."""
    engine = await MemoryEngine.open(db)
    seen: list[str] = []

    async def handler(message: InboundMessage) -> None:
        seen.append(message.text)
        return None

    loop = ProcessLoop(handler, inbox=DurableInbox(engine.store))
    loop.start()
    return engine, loop, seen


async def _telegram_round(tg: TelegramStub, db: Path, texts: list[str]) -> list[str]:
    engine, loop, seen = await _gateway_loop(db)
    channel = TelegramChannel(
        TelegramSettings(token=tg.token, allow_from=("42",), base_url=tg.base_url, poll_timeout=1)
    )
    channel.retry_base_seconds = 0.05
    loop.add_channel(channel)
    await channel.start(loop.deliver)
    try:
        for n, text in enumerate(texts):
            tg.push(tg.message("x" + text, entities=[]))  # Telegram would escape it as \ud800 in the JSON
            tg.push(tg.message(f"after {n}", entities=[]))
        await _handled(seen, 2 * len(texts))
        await loop.drain()
    finally:
        await channel.stop()
        await asyncio.wait_for(loop.stop(), 60)
        await engine.close()
    return seen


@EXAMPLES
@given(st.lists(POISON, min_size=1, max_size=3))
def test_telegram_never_stalls_on_text_it_cannot_store(tg: TelegramStub, texts: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        seen = asyncio.run(_telegram_round(tg, Path(tmp) / "memory.db", texts))
    expected = [m for n, t in enumerate(texts) for m in (encodable("x" + t), f"after {n}")]
    assert seen == expected
    assert tg.pending_updates() == []  # every update confirmed: polling goes on for everyone


async def _feishu_round(feishu: FeishuStub, db: Path, texts: list[str]) -> list[str]:
    engine, loop, seen = await _gateway_loop(db)
    channel = FeishuChannel(
        FeishuSettings(
            app_id="cli_unstorable", app_secret="s", allow_from=("ou_alice",),
            domain=feishu.domain, mode="websocket", timeout_seconds=30.0,
        )
    )  # fmt: skip
    loop.add_channel(channel)
    await channel.start(loop.deliver)
    try:
        for n, text in enumerate(texts):
            for said in ("x" + text, f"after {n}"):
                await feishu.wait_for_ack(await feishu.push_event(message_event(said)))
        await _handled(seen, 2 * len(texts))
        await loop.drain()
    finally:
        await channel.stop()
        await asyncio.wait_for(loop.stop(), 60)
        await engine.close()
    return seen


@EXAMPLES
@given(st.lists(POISON, min_size=1, max_size=3))
def test_feishu_never_stalls_on_text_it_cannot_store(feishu: FeishuStub, texts: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        seen = asyncio.run(_feishu_round(feishu, Path(tmp) / "memory.db", texts))
    expected = [m for n, t in enumerate(texts) for m in (encodable(("x" + t).strip()), f"after {n}")]
    assert seen == expected


async def test_telegram_skips_an_update_that_can_never_be_stored_with_one_line(
    tg: TelegramStub, caplog: pytest.LogCaptureFixture
) -> None:
    delivered: list[str] = []

    async def deliver(message: InboundMessage) -> None:
        if message.text == "poison":
            raise Undeliverable("UnicodeEncodeError: surrogates not allowed")
        delivered.append(message.text)

    channel = TelegramChannel(
        TelegramSettings(token=tg.token, allow_from=("42",), base_url=tg.base_url, poll_timeout=1)
    )
    with caplog.at_level(logging.WARNING, logger="tierclaw.channels"):
        await channel.start(deliver)
        try:
            tg.push(tg.message("poison"))
            tg.push(tg.message("next"))
            await _handled(delivered, 1)
        finally:
            await channel.stop()
    assert delivered == ["next"]
    assert tg.pending_updates() == []
    skipped = [r.getMessage() for r in caplog.records if "can never be stored" in r.getMessage()]
    assert skipped == ["[telegram] skipped update 1: it can never be stored (UnicodeEncodeError: "
                       "surrogates not allowed)"]  # fmt: skip
    assert "poison" not in caplog.text  # the id, never the content


async def test_feishu_skips_an_event_that_can_never_be_stored_with_one_line(
    feishu: FeishuStub, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    delivered: list[str] = []

    async def deliver(message: InboundMessage) -> None:
        if message.text == "poison":
            raise Undeliverable("IntegrityError")
        delivered.append(message.text)

    channel = FeishuChannel(
        FeishuSettings(
            app_id="cli_skip", app_secret="s", allow_from=("ou_alice",),
            domain=feishu.domain, mode="websocket", timeout_seconds=30.0,
        )
    )  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="tierclaw.channels"):
        await channel.start(deliver)
        try:
            poison = await feishu.push_event(message_event("poison", event_id="ev_poison"))
            assert (await feishu.wait_for_ack(poison)).get("code") == 200  # acknowledged: not redelivered
            await feishu.wait_for_ack(await feishu.push_event(message_event("next")))
            await _handled(delivered, 1)
        finally:
            await channel.stop()
    assert delivered == ["next"]
    skipped = [r.getMessage() for r in caplog.records if "can never be stored" in r.getMessage()]
    assert skipped == ["[feishu] skipped event ev_poison: it can never be stored (IntegrityError)"]
