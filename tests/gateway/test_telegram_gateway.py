"""End to end: a config file enabling Telegram → ``enabled_channels`` → the real gateway (loop, assistant,
SQLite memory) → python-telegram-bot → the local Bot API stub, with the model on the local OpenAI stub.

A message is pushed into the Telegram stub (polling) or POSTed to the webhook, and the tests look at what
reached Telegram (sendMessage/sendChatAction), what reached the model, and what was stored.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from channels.telegram.channel import TelegramChannel
from gateway.app import Runtime
from gateway.cli.run import enabled_channels
from gateway.commands import HELP_TEXT
from gateway.config import Config, load_config
from gateway.media.words import say
from localservers.openai_server import OpenAIStub, StubReply
from localservers.telegram_server import (
    TelegramStub,
    cant_parse,
    check_html,
    conflict,
    free_port,
    post_webhook,
    rate_limited,
    webhook_active,
)
from memory.store.turn_watermark import pending
from tests.support.sqlite_peek import sql

# PTB warns when it builds a RetryAfter (its int ``retry_after`` becomes a timedelta in v23); the channel
# reads either form.
pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2:DeprecationWarning")


def make_config(tmp_path: Path, model: OpenAIStub, tg: TelegramStub, **telegram: object) -> Config:
    raw = {
        "provider": {
            "apiKey": "sk-test-0000",
            "baseUrl": model.base_url,
            "maxRetries": 0,
            "timeoutSeconds": 60,
        },
        "agent": {"model": "main-model", "workspace": str(tmp_path / "ws")},
        "memory": {
            "dbPath": str(tmp_path / "memory.db"),
            "model": "memory-model",
            "extraction": {"quietGap": "1h"},
        },
        "channels": {
            "telegram": {
                "enabled": True,
                "token": tg.token,
                "allowFrom": ["42"],
                "baseUrl": tg.base_url,
                "timeoutSeconds": 30,
                **telegram,
            }
        },
        "timezone": "UTC",
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return load_config(path, env={})


@asynccontextmanager
async def gateway(config: Config) -> AsyncIterator[Runtime]:
    runtime = await Runtime.open(config, enabled_channels(config))
    for channel in runtime.channels:
        assert isinstance(channel, TelegramChannel)
        channel.retry_base_seconds = 0.05  # quick recovery from scripted failures
    try:
        await runtime.start(schedule=False)
        yield runtime
    finally:
        await runtime.close()


def visible(call_text: str) -> str:
    """What the person sees of an HTML message."""
    text, error = check_html(call_text)
    assert error == ""
    return text


def stored(runtime: Runtime) -> dict[str, list[tuple]]:
    """Every row a message can leave behind: extraction buffer, Tier 0 session and its messages."""
    buffer = f"SELECT owner, chat_id, sender_id, role, content FROM {pending(False)} ORDER BY id"
    return {
        "buffer": sql(runtime.engine, buffer),
        "sessions": sql(runtime.engine, "SELECT chat_key FROM chat_sessions"),
        "messages": sql(  # the session's messages: its kept turns (memory on: turn_sessions.py)
            runtime.engine,
            "SELECT channel || ':' || chat_id, role, content FROM conversation_turns WHERE session_no > 0 "
            "UNION ALL SELECT chat_key, role, content FROM session_messages",
        ),
    }


async def test_polling_reply_threads_under_the_message_after_typing(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    async with gateway(make_config(tmp_path, model, tg)) as runtime:
        message_id = tg.push(tg.message("hello there"))
        (reply,) = await tg.wait_sent(1)
        await runtime.loop.drain()  # the exchange goes with the answered-mark, after the send
        rows = stored(runtime)
    assert reply.params["chat_id"] == "42" and reply.params["parse_mode"] == "HTML"
    assert visible(reply.params["text"]) == "stub reply: hello there"
    assert reply.json("reply_parameters") == {"message_id": message_id, "allow_sending_without_reply": True}
    typing = tg.requests("sendChatAction")
    assert typing and typing[0].params == {"chat_id": "42", "action": "typing"} and typing[0].at < reply.at
    assert model.chat_requests()[0]["messages"][-1]["content"] == "hello there"
    assert ("telegram:42", "42", "42", "user", "hello there") in rows["buffer"]


async def test_polling_answers_without_waiting_out_the_reorder_window(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    # Polling stores each update before the next is handed over: no earlier message of the chat can be
    # on its way, so even an hour-long gateway.reorderWindow delays nothing (channels.base.DeliversInOrder).
    config = make_config(tmp_path, model, tg)
    raw = json.loads((tmp_path / "config.json").read_text(encoding="utf-8"))
    raw["gateway"] = {"reorderWindow": "1h"}
    (tmp_path / "config.json").write_text(json.dumps(raw), encoding="utf-8")
    config = load_config(tmp_path / "config.json", env={})
    async with gateway(config) as runtime:
        assert runtime.inbox.in_order == {"telegram"} and runtime.inbox.reorder_window == 3600
        assert runtime.inbox.repeats_dropped == set()  # no key Telegram drops a repeat by
        tg.push(tg.message("first"))
        tg.push(tg.message("second"))
        replies = await tg.wait_sent(2)
    assert [visible(r.params["text"]) for r in replies] == ["stub reply: first", "stub reply: second"]


async def test_a_stranger_gets_nothing_and_leaves_no_trace(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    async with gateway(make_config(tmp_path, model, tg)) as runtime:
        tg.push(tg.message("who are you", sender=tg.user(7, username="mallory")))
        tg.push(tg.message("/remember the stranger was here", sender=tg.user(7, username="mallory")))
        tg.push(tg.message("it's me"))
        await tg.wait_sent(1)
        await runtime.loop.drain()  # the exchange goes with the answered-mark, after the send
        rows = stored(runtime)
    assert [c.params["chat_id"] for c in tg.requests("sendMessage")] == ["42"]
    assert {c.params["chat_id"] for c in tg.requests("sendChatAction")} == {"42"}
    assert [r["messages"][-1]["content"] for r in model.chat_requests()] == ["it's me"]
    assert not any("7" in (owner, chat, sender) for owner, chat, sender, *_ in rows["buffer"])
    assert rows["sessions"] in ([], [("telegram:42",)])
    assert {chat_key for chat_key, *_ in rows["messages"]} == {"telegram:42"}
    assert sql(runtime.engine, "SELECT COUNT(*) FROM memories") == [(0,)]


async def test_empty_allow_list_answers_nobody(tmp_path: Path, model: OpenAIStub, tg: TelegramStub) -> None:
    async with gateway(make_config(tmp_path, model, tg, allowFrom=[])) as runtime:
        tg.push(tg.message("hello"))
        await tg.wait_until(lambda: not tg.pending_updates(), what="the update handled")
        await runtime.loop.drain()  # the exchange goes with the answered-mark, after the send
        rows = stored(runtime)
    assert not tg.requests("sendMessage") and not tg.requests("sendChatAction")
    assert model.requests == [] and rows == {"buffer": [], "sessions": [], "messages": []}


async def test_star_and_usernames_let_people_in(tmp_path: Path, model: OpenAIStub, tg: TelegramStub) -> None:
    async with gateway(make_config(tmp_path, model, tg, allowFrom=["@Alice", "1001"])) as runtime:
        tg.push(tg.message("from alice", sender=tg.user(5, username="alice")))
        tg.push(tg.message("from an id", sender=tg.user(1001)))
        await tg.wait_sent(2)
        await asyncio.wait_for(runtime.loop.drain(), 60)  # both marked answered: the restart has none left
    assert sorted(c.params["chat_id"] for c in tg.sent()) == ["1001", "5"]
    tg.calls.clear()
    async with gateway(make_config(tmp_path, model, tg, allowFrom=["*"])):
        tg.push(tg.message("anyone", sender=tg.user(31337)))
        (reply,) = await tg.wait_sent(1)
    assert reply.params["chat_id"] == "31337"


async def test_groups_answer_mentions_and_replies_to_the_bot_only(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    group = tg.group()
    async with gateway(make_config(tmp_path, model, tg)) as runtime:
        tg.push(tg.message("talking among ourselves", chat=group))
        tg.push(tg.message("/help", chat=group))  # meant for whichever bot: only /help@stub_bot is ours
        asked = tg.push(tg.message("@stub_bot what is the capital of France?", chat=group))
        await tg.wait_sent(1)
        tg.push(tg.message("and of Spain?", chat=group, reply_to=tg.sent()[0].result))
        await tg.wait_sent(2)
        await runtime.loop.drain()  # the exchange goes with the answered-mark, after the send
        rows = stored(runtime)
    first, second = tg.sent()
    assert first.params["chat_id"] == "-1001" and first.json("reply_parameters")["message_id"] == asked
    assert [r["messages"][-1]["content"] for r in model.chat_requests()] == [
        "what is the capital of France?",
        "and of Spain?",
    ]
    assert visible(second.params["text"]) == "stub reply: and of Spain?"
    # the sender owns the memory; the group is the chat
    assert ("telegram:42", "-1001", "42", "user", "what is the capital of France?") in rows["buffer"]
    assert {chat_key for chat_key, *_ in rows["messages"]} == {"telegram:-1001"}


async def test_open_group_policy_answers_every_message(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    async with gateway(make_config(tmp_path, model, tg, groupPolicy="open")):
        tg.push(tg.message("talking among ourselves", chat=tg.group()))
        (reply,) = await tg.wait_sent(1)
    assert visible(reply.params["text"]) == "stub reply: talking among ourselves"


async def test_commands_reach_the_gateway(tmp_path: Path, model: OpenAIStub, tg: TelegramStub) -> None:
    async with gateway(make_config(tmp_path, model, tg)):
        tg.push(tg.message("/help"))
        await tg.wait_sent(1)
        tg.push(tg.message("/remember@stub_bot my cat is called Miso"))
        await tg.wait_sent(2)
        tg.push(tg.message("/memory"))
        await tg.wait_sent(3)
    help_reply, remembered, memory = (visible(c.params["text"]) for c in tg.sent())
    assert help_reply == HELP_TEXT
    assert remembered.startswith("Remembered [") and remembered.endswith("my cat is called Miso")
    assert "my cat is called Miso" in memory
    assert model.chat_requests() == []  # commands never reach the model


async def test_long_reply_is_split_around_the_code_fence_with_a_plain_fallback(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    code = "```python\n" + "\n".join(f"print('line {i}')  # <{i}>" for i in range(150)) + "\n```"
    answer = "Here is **the plan**. " * 150 + "\n\n" + code + "\n\n" + "That's all, _folks_. " * 150
    model.script(StubReply(content=answer))
    tg.fail("sendMessage", None, cant_parse())  # Telegram rejects the second chunk's HTML once
    async with gateway(make_config(tmp_path, model, tg)):
        asked = tg.push(tg.message("write me a long program"))
        await tg.wait_sent(3)
    calls = tg.requests("sendMessage")
    assert [(c.status, c.params.get("parse_mode")) for c in calls] == [
        (200, "HTML"),
        (400, "HTML"),
        (200, None),
        (200, "HTML"),
    ]
    first, _, code_plain, last = calls
    assert first.json("reply_parameters")["message_id"] == asked
    assert code_plain.json("reply_parameters") is None and last.json("reply_parameters") is None
    assert code_plain.params["text"] == code  # the chunk's own Markdown, the fence whole
    assert all(
        len(visible(c.params["text"]) if c.params.get("parse_mode") else c.params["text"]) <= 4096
        for c in calls
    )
    assert visible(first.params["text"]).startswith("Here is the plan.")
    assert "<i>folks</i>" in last.params["text"]


async def test_rate_limited_reply_arrives_after_retry_after(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    tg.fail("sendMessage", rate_limited(1))
    async with gateway(make_config(tmp_path, model, tg)):
        tg.push(tg.message("hello"))
        await tg.wait_sent(1)
    limited, sent = tg.requests("sendMessage")
    assert limited.status == 429 and sent.at - limited.at >= 1.0


async def test_polling_recovers_from_a_conflict(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub, caplog: pytest.LogCaptureFixture
) -> None:
    tg.fail("getUpdates", conflict(), conflict())
    with caplog.at_level(logging.WARNING, logger="tierclaw.channels"):
        async with gateway(make_config(tmp_path, model, tg)):
            tg.push(tg.message("are you still answering?"))
            (reply,) = await tg.wait_sent(1)
    assert visible(reply.params["text"]) == "stub reply: are you still answering?"
    assert caplog.text.count("another bot instance is polling with this token") == 1


async def test_polling_deletes_a_webhook_that_blocks_it(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub, caplog: pytest.LogCaptureFixture
) -> None:
    tg.fail("getUpdates", webhook_active())
    with caplog.at_level(logging.WARNING, logger="tierclaw.channels"):
        async with gateway(make_config(tmp_path, model, tg)):
            tg.push(tg.message("anyone home?"))
            (reply,) = await tg.wait_sent(1)
    assert visible(reply.params["text"]) == "stub reply: anyone home?"
    assert caplog.text.count("a webhook is set for this bot") == 1
    assert "another bot instance" not in caplog.text
    assert len(tg.requests("deleteWebhook")) == 2


async def test_shutdown_stops_intake_then_still_sends_the_reply_being_written(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    model.script(StubReply(content="worth the wait", delay=1.0))
    config = make_config(tmp_path, model, tg)
    runtime = await Runtime.open(config, enabled_channels(config))
    try:
        await runtime.start(schedule=False)
        asked = tg.push(tg.message("a slow question"))
        await tg.wait_until(lambda: len(model.chat_requests()) == 1, what="the model asked")
        shutting = asyncio.create_task(runtime.shutdown(drain_timeout=30))  # a ceiling
        channel = runtime.channels[0]
        await tg.wait_until(lambda: channel._intake_stopped.is_set(), what="intake stopped first")  # type: ignore[attr-defined]
        tg.push(tg.message("one more thing"))  # arrives during the drain: left at Telegram for next time
        assert await shutting == 0
    except BaseException:
        await runtime.close()
        raise
    (reply,) = tg.sent()
    assert visible(reply.params["text"]) == "worth the wait"
    assert reply.json("reply_parameters")["message_id"] == asked
    assert len(tg.pending_updates()) == 1 and len(model.chat_requests()) == 1


async def test_a_photo_telegram_no_longer_has_is_said_and_its_caption_still_answered_and_kept(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    async with gateway(make_config(tmp_path, model, tg)) as runtime:
        tg.push(tg.message(media="photo", caption="our new sofa"))  # a file id the server does not know
        (reply,) = await tg.wait_sent(1)
        await runtime.loop.drain()  # the exchange goes with the answered-mark, after the send
        rows = stored(runtime)
    notice = say("gone", False, kind="photo", platform="Telegram")
    assert visible(reply.params["text"]) == f"{notice}\n\nstub reply: our new sofa"
    assert ("telegram:42", "42", "42", "user", "[photo]\nour new sofa") in rows["buffer"]


async def test_webhook_mode_answers_only_requests_with_the_secret(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    port = free_port()
    webhook = {"url": "https://bot.example.com/telegram", "port": port}
    async with gateway(make_config(tmp_path, model, tg, mode="webhook", webhook=webhook)) as runtime:
        assert tg.webhook["url"] == "https://bot.example.com/telegram"
        secret = tg.webhook["secret_token"]  # generated at start, since the config has none
        url = f"http://127.0.0.1:{port}/telegram"
        assert await post_webhook(url, tg.update(tg.message("no secret"))) == 403
        assert await post_webhook(url, tg.update(tg.message("bad secret")), secret="guess") == 403
        asked = tg.message("by webhook")
        assert await post_webhook(url, tg.update(asked), secret=secret) == 200
        (reply,) = await tg.wait_sent(1)
        await runtime.loop.drain()  # the exchange goes with the answered-mark, after the send
        rows = stored(runtime)
        assert runtime.inbox.in_order == set()  # concurrent requests: the reorder window applies
    assert visible(reply.params["text"]) == "stub reply: by webhook"
    assert reply.json("reply_parameters")["message_id"] == asked["message_id"]
    assert [r["messages"][-1]["content"] for r in model.chat_requests()] == ["by webhook"]
    assert [content for *_, content in rows["messages"]] == ["by webhook", "stub reply: by webhook"]
    assert tg.requests("getUpdates") == []


async def test_the_token_never_appears_in_the_logs(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    tg.fail("getUpdates", conflict())
    tg.fail("sendMessage", rate_limited(1))
    async with gateway(make_config(tmp_path, model, tg)):
        tg.push(tg.message("hello"))
        await tg.wait_sent(1)
    assert "getUpdates" in caplog.text  # PTB did log its requests at DEBUG
    assert tg.token not in caplog.text and tg.token.split(":")[1] not in caplog.text
