"""Reminders through the real gateway and python-telegram-bot against the local Bot API server: asked for
in a message, scheduled by the offline stand-in, sent once when due and marked delivered with an event of
the day; a chat that blocked the bot is marked failed with one log line; reminders due while the gateway
was down are sent late at start, or reported and not sent past ``reminders.lateWithin`` (README
"Reminders"). On both stores."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from gateway.app import Runtime
from gateway.cli.run import enabled_channels
from localservers.telegram_server import TelegramStub
from tests.gateway.reminders.support import add, ago, config, due_row, telegram, until_status

pytestmark = [pytest.mark.both_stores, pytest.mark.filterwarnings("ignore::DeprecationWarning")]
OWNER = "telegram:42"


def reminder_texts(tg: TelegramStub) -> list[str]:
    return [c.params.get("text", "") for c in tg.sent() if "⏰" in c.params.get("text", "")]


async def test_asked_in_a_message_and_sent_once_when_due(
    tmp_path: Path, memory_url: str, tg: TelegramStub
) -> None:
    runtime = await Runtime.open(cfg := config(tmp_path, memory_url, telegram(tg)), enabled_channels(cfg))
    try:
        await runtime.start(schedule=False)
        tg.push(tg.message("remind me in 2 seconds to stretch"))
        # On a loaded machine the 2 s reminder can go out before the model's confirmation: wait for both.
        await tg.wait_until(lambda: len(tg.sent()) >= 2, 30, "the confirmation and the reminder sent")
        (reply,) = [c for c in tg.sent() if "I'll remind you" in c.params.get("text", "")]
        assert "stretch" in reply.params["text"]
        assert reminder_texts(tg) == ["⏰ Reminder: stretch"]
        assert tg.sent()[-1].params["chat_id"] == "42"
        (row,) = await runtime.engine.store.reminders.of_owner(OWNER)
        row = await until_status(runtime.engine, OWNER, row.id, "delivered")
        assert row.sent_count == 1
        events = await runtime.engine.events.find(OWNER)
        assert [e.summary for e in events] == ["Reminder sent: stretch"]
    finally:
        await runtime.close()
    assert reminder_texts(tg) == ["⏰ Reminder: stretch"]  # once


async def test_a_chat_that_blocked_the_bot_is_marked_failed_with_one_line(
    tmp_path: Path, memory_url: str, tg: TelegramStub, caplog: pytest.LogCaptureFixture
) -> None:
    tg.chat_refusals.block(42)
    runtime = await Runtime.open(cfg := config(tmp_path, memory_url, telegram(tg)), enabled_channels(cfg))
    try:
        await runtime.start(schedule=False)
        book = runtime.assistant.reminders
        assert book is not None
        made = await book.create(OWNER, "telegram", "42", said="remind me in 1 second to call the vet")
        with caplog.at_level(logging.WARNING, logger="tierclaw.gateway"):
            row = await until_status(runtime.engine, OWNER, made.id, "failed")  # type: ignore[union-attr]
        assert "bot was blocked" in (row.last_error or "")
        lines = [r.getMessage() for r in caplog.records if "could not be delivered" in r.getMessage()]
        assert len(lines) == 1 and "marked failed" in lines[0]
        assert [c.status for c in tg.requests("sendMessage")] == [403]  # tried once, not again
        tg.chat_refusals.clear(42)
        tg.push(tg.message("/reminders"))
        listing = await tg.wait_sent(1)
        assert "Not delivered:" in listing[0].params["text"] and "call the vet" in listing[0].params["text"]
    finally:
        await runtime.close()


async def test_due_while_down_is_sent_late_or_reported_not_sent(
    tmp_path: Path, memory_url: str, tg: TelegramStub, caplog: pytest.LogCaptureFixture
) -> None:
    runtime = await Runtime.open(cfg := config(tmp_path, memory_url, telegram(tg)), enabled_channels(cfg))
    engine = runtime.engine
    late = await add(engine, due_row(OWNER, "telegram", "42", "water the plants", ago(3 * 3600)))
    gone = await add(engine, due_row(OWNER, "telegram", "42", "catch the train", ago(13 * 3600)))
    daily = await add(
        engine, due_row(OWNER, "telegram", "42", "take vitamins", ago(13 * 3600), repeat="daily")
    )
    try:
        with caplog.at_level(logging.WARNING, logger="tierclaw.gateway"):
            await runtime.start(schedule=False)
            await until_status(engine, OWNER, late, "delivered")
            await until_status(engine, OWNER, gone, "missed")
        (sent,) = reminder_texts(tg)
        assert sent.startswith("⏰ Reminder: water the plants (late: due ")
        again = await until_status(engine, OWNER, daily, "pending")
        assert again.last_error and "h before it could be sent" in again.last_error and again.sent_count == 0
        reported = [r.getMessage() for r in caplog.records if "reported, not sent" in r.getMessage()]
        assert len(reported) == 2
    finally:
        await runtime.close()
    assert len(reminder_texts(tg)) == 1  # the missed ones were never sent
