"""The Telegram channel: the real python-telegram-bot against the local Bot API stub (telegram_stub.py).

Deliveries go to a list instead of the gateway, so these tests see exactly what the channel lets through;
tests/test_telegram_gateway.py runs the same channel inside the real gateway.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from telegram.error import BadRequest, NetworkError, TimedOut

from channels.base import ChannelError, InboundMessage, OutboundMessage
from channels.telegram.channel import TelegramChannel, TelegramSettings
from channels.telegram.failures import may_have_arrived
from localservers.telegram_server import (
    BOT_ID,
    Fault,
    TelegramStub,
    cant_parse,
    conflict,
    free_port,
    post_webhook,
    rate_limited,
    slow,
    unauthorized,
    webhook_active,
)

ME = 42

# PTB warns when it builds a RetryAfter (its int ``retry_after`` becomes a timedelta in v23); the channel
# reads either form.
pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2:DeprecationWarning")


def quick(channel: TelegramChannel) -> TelegramChannel:
    """Short backoffs and watchdog margin, so failure paths run in a test's time."""
    channel.retry_base_seconds = 0.05
    channel.retry_max_seconds = 0.2
    channel.stall_margin_seconds = 0.5
    return channel


def settings(tg: TelegramStub, allow: tuple[str, ...] = (str(ME),), **extra: object) -> TelegramSettings:
    values: dict = {"poll_timeout": 1, "timeout_seconds": 2.0, **extra}
    return TelegramSettings(token=tg.token, allow_from=allow, base_url=tg.base_url, **values)


class Inbox(list[InboundMessage]):
    """The channel's ``deliver``: collects what the gateway would have received."""

    async def __call__(self, message: InboundMessage) -> None:
        self.append(message)

    async def wait(self, count: int, timeout: float = 10.0) -> InboundMessage:
        for _ in range(int(timeout / 0.01)):
            if len(self) >= count:
                return self[count - 1]
            await asyncio.sleep(0.01)
        raise AssertionError(f"only {len(self)} messages delivered, expected {count}: {list(self)}")


@asynccontextmanager
async def running(
    tg: TelegramStub, allow: tuple[str, ...] = (str(ME),), **extra: object
) -> AsyncIterator[tuple[TelegramChannel, Inbox]]:
    channel = quick(TelegramChannel(settings(tg, allow, **extra)))
    inbox = Inbox()
    await channel.start(inbox)
    try:
        yield channel, inbox
    finally:
        await channel.stop()


async def settled(tg: TelegramStub) -> None:
    """Every pushed update was handled: the channel confirmed them all with its next getUpdates offset."""
    await tg.wait_until(lambda: not tg.pending_updates(), what="all updates confirmed")


# --- who is answered ---------------------------------------------------------------------------------


async def test_private_text_is_delivered_with_its_ids(tg: TelegramStub) -> None:
    async with running(tg) as (_, inbox):
        message_id = tg.push(tg.message("hello there"))
        got = await inbox.wait(1)
    assert got == InboundMessage(
        channel="telegram",
        chat_id="42",
        sender_id="42",
        text="hello there",
        message_id=str(message_id),
        delivery_id="1",  # the update that carried it (the stub numbers updates from 1)
    )
    assert tg.requests()[0].method == "getMe" and tg.requests()[1].method == "deleteWebhook"
    polls = tg.requests("getUpdates")
    assert polls[0].json("allowed_updates") == ["message"] and polls[0].params["timeout"] == "1"


async def test_a_stranger_is_refused_before_anything_and_logged_once(
    tg: TelegramStub, caplog: pytest.LogCaptureFixture
) -> None:
    stranger = tg.user(7, username="mallory")
    with caplog.at_level(logging.WARNING, logger="tierclaw.channels"):
        async with running(tg) as (_, inbox):
            tg.push(tg.message("hi", sender=stranger))
            tg.push(tg.message("hi again", sender=stranger))
            tg.push(tg.message("me"))
            assert (await inbox.wait(1)).text == "me"
            await settled(tg)
    assert [m.text for m in inbox] == ["me"]
    refusals = [r for r in caplog.records if "ignored a message from 7" in r.getMessage()]
    assert len(refusals) == 1 and "@mallory" in refusals[0].getMessage()
    assert not tg.requests("sendChatAction") and not tg.requests("sendMessage")


async def test_empty_allow_list_lets_nobody_in_and_warns_at_start(
    tg: TelegramStub, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="tierclaw.channels"):
        async with running(tg, allow=()) as (_, inbox):
            tg.push(tg.message("hello"))
            await settled(tg)
    assert inbox == []
    assert "channels.telegram.allowFrom is empty" in caplog.text


async def test_star_lets_everyone_in_and_usernames_match(tg: TelegramStub) -> None:
    async with running(tg, allow=("*",)) as (_, inbox):
        tg.push(tg.message("anyone", sender=tg.user(999)))
        assert (await inbox.wait(1)).sender_id == "999"
    async with running(tg, allow=("@Alice",)) as (_, inbox):
        tg.push(tg.message("not alice", sender=tg.user(5, username="bob")))
        tg.push(tg.message("alice here", sender=tg.user(6, username="alice")))
        assert (await inbox.wait(1)).text == "alice here"
        await settled(tg)
    assert len(inbox) == 1


async def test_group_answers_only_mentions_replies_and_commands_for_the_bot(tg: TelegramStub) -> None:
    group = tg.group()
    async with running(tg) as (_, inbox):
        tg.push(tg.message("just chatting", chat=group))
        tg.push(tg.message("@other_bot are you there", chat=group))
        tg.push(tg.message("/help@other_bot", chat=group))
        tg.push(tg.message("/help", chat=group))  # for every bot in the group: not taken as ours
        tg.push(tg.message("/new please", chat=group))
        tg.push(tg.message("hey @Stub_Bot, what is 2+2?", chat=group))
        tg.push(tg.message("and 3+3?", chat=group, reply_to=tg.bot_message(group)))
        tg.push(tg.message("/remember@stub_bot tea at 5", chat=group))
        name_mention = [{"type": "text_mention", "offset": 0, "length": 4, "user": tg.bot}]
        tg.push(tg.message("Stub summarise this", chat=group, entities=name_mention))
        tg.push(tg.message("/help", chat=group, reply_to=tg.bot_message(group)))  # a reply to the bot
        tg.push(tg.message("/forget 3 @stub_bot", chat=group))
        await inbox.wait(6)
        await settled(tg)
    assert [m.text for m in inbox] == [
        "hey what is 2+2?",
        "and 3+3?",
        "/remember tea at 5",
        "summarise this",
        "/help",
        "/forget 3",
    ]
    first = inbox[0]
    assert first.is_group and first.mentions_bot and first.chat_id == "-1001" and first.sender_id == str(ME)
    assert inbox[1].mentions_bot and not inbox[2].mentions_bot


async def test_open_group_policy_answers_everything_but_other_bots_commands(tg: TelegramStub) -> None:
    group = tg.group(-5, kind="group")
    async with running(tg, group_policy="open") as (_, inbox):
        tg.push(tg.message("just chatting", chat=group))
        tg.push(tg.message("/help@other_bot", chat=group))
        tg.push(tg.message("/help", chat=group))  # "open" answers everything, bare commands included
        tg.push(tg.message("🙂 @stub_bot", chat=group))
        await inbox.wait(3)
        await settled(tg)
    assert [(m.text, m.is_group, m.mentions_bot) for m in inbox] == [
        ("just chatting", True, False),
        ("/help", True, False),
        ("🙂", True, True),
    ]


async def test_commands_arrive_as_text_without_the_bot_suffix(tg: TelegramStub) -> None:
    async with running(tg) as (_, inbox):
        for text in ("/start", "/help@stub_bot", "/remember@STUB_BOT buy milk", "/forget 3", "/new"):
            tg.push(tg.message(text))
        await inbox.wait(5)
    assert [m.text for m in inbox] == ["/start", "/help", "/remember buy milk", "/forget 3", "/new"]


async def test_media_is_delivered_as_an_attachment_with_its_caption(tg: TelegramStub) -> None:
    group = tg.group()
    async with running(tg) as (_, inbox):
        tg.push(tg.message(media="photo", caption="my cat"))
        tg.push(tg.message(media="voice"))
        tg.push(tg.message(media="document", caption="the report"))
        tg.push(tg.message(media="sticker"))
        tg.push(tg.message(media="video_note"))
        tg.push(tg.message(media="photo", caption="no mention", chat=group))
        tg.push(tg.message(media="photo", caption="@stub_bot look", chat=group))
        await inbox.wait(6)
        await settled(tg)
    assert [(m.attachment, m.text) for m in inbox] == [
        ("photo", "my cat"),
        ("voice", ""),
        ("document", "the report"),
        ("sticker", ""),
        ("video note", ""),
        ("photo", "look"),
    ]


async def test_edits_channel_posts_bots_and_service_messages_are_ignored(tg: TelegramStub) -> None:
    async with running(tg, allow=("*",)) as (_, inbox):
        tg.push(tg.message("edited"), kind="edited_message")
        tg.push(tg.message("post", chat={"id": -77, "type": "channel", "title": "news"}), kind="channel_post")
        tg.push(tg.message("beep", sender={"id": 9, "is_bot": True, "first_name": "Other"}))
        tg.push({**tg.message(), "new_chat_members": [tg.user(8)]})
        tg.push(tg.message("real"))
        assert (await inbox.wait(1)).text == "real"
        await settled(tg)
    assert len(inbox) == 1


# --- sending -----------------------------------------------------------------------------------------


async def test_reply_is_html_and_threads_under_the_message(tg: TelegramStub) -> None:
    text = "**Done** — see `x < y` & [docs](https://e.com)"
    async with running(tg) as (channel, _):
        await channel.send(OutboundMessage("telegram", "42", text, "9"))
    (sent,) = tg.sent()
    assert sent.params["chat_id"] == "42" and sent.params["parse_mode"] == "HTML"
    assert (
        sent.params["text"]
        == '<b>Done</b> — see <code>x &lt; y</code> &amp; <a href="https://e.com">docs</a>'
    )
    assert sent.json("reply_parameters") == {"message_id": 9, "allow_sending_without_reply": True}


async def test_long_reply_is_split_without_cutting_the_code_fence(tg: TelegramStub) -> None:
    code = "```python\n" + "\n".join(f"print({i})" for i in range(300)) + "\n```"
    text = "word " * 700 + "\n\n" + code + "\n\n" + "Done. " * 200
    async with running(tg) as (channel, _):
        await channel.send(OutboundMessage("telegram", "42", text, "3"))
    sent = tg.sent()
    assert len(sent) == 3
    assert all(len(c.params["text"]) <= 4096 for c in sent)
    assert all(c.params["parse_mode"] == "HTML" for c in sent)
    assert sent[1].params["text"].startswith('<pre><code class="language-python">print(0)')
    assert sent[1].params["text"].endswith("print(299)</code></pre>")
    assert sent[0].json("reply_parameters")["message_id"] == 3
    assert sent[1].json("reply_parameters") is None and sent[2].json("reply_parameters") is None


async def test_a_chunk_telegram_cannot_parse_is_resent_plain_alone(tg: TelegramStub) -> None:
    paragraphs = [f"**part {n}** " + "x" * 3000 for n in (1, 2, 3)]
    tg.fail("sendMessage", None, cant_parse())
    async with running(tg) as (channel, _):
        await channel.send(OutboundMessage("telegram", "42", "\n\n".join(paragraphs), "1"))
    calls = tg.requests("sendMessage")
    assert [c.status for c in calls] == [200, 400, 200, 200]
    first, _, plain, third = calls
    assert first.params["parse_mode"] == "HTML" and first.params["text"].startswith("<b>part 1</b>")
    assert "parse_mode" not in plain.params and plain.params["text"] == paragraphs[1]
    assert third.params["parse_mode"] == "HTML" and third.params["text"].startswith("<b>part 3</b>")


async def test_a_chunk_too_long_in_utf16_units_is_cut_smaller(tg: TelegramStub) -> None:
    text = "😀" * 3000  # 3000 characters, but 6000 UTF-16 units: Telegram says "message is too long"
    async with running(tg) as (channel, _):
        await channel.send(OutboundMessage("telegram", "42", text, "1"))
    sent = tg.sent()
    assert len(sent) >= 2 and "".join(c.params["text"] for c in sent) == text
    assert tg.requests("sendMessage")[0].status == 400


async def test_rate_limit_is_waited_out_then_sent(tg: TelegramStub) -> None:
    tg.fail("sendMessage", rate_limited(1))
    async with running(tg) as (channel, _):
        await channel.send(OutboundMessage("telegram", "42", "after the flood", "1"))
    limited, sent = tg.requests("sendMessage")
    assert (limited.status, sent.status) == (429, 200)
    assert sent.at - limited.at >= 1.0


async def test_a_5xx_is_retried_once_then_raised(tg: TelegramStub) -> None:
    # A 5xx may come after Telegram sent the message (its front end timing out on a slow backend): one
    # retry, so the person sees at most one duplicate.
    tg.fail("sendMessage", Fault(502, "Bad Gateway"))
    async with running(tg) as (channel, _):
        await channel.send(OutboundMessage("telegram", "42", "eventually", "1"))
        assert [c.status for c in tg.requests("sendMessage")] == [502, 200]
        tg.fail("sendMessage", Fault(500, "Internal Server Error"), Fault(502, "Bad Gateway"))
        with pytest.raises(NetworkError, match="Bad Gateway"):
            await channel.send(OutboundMessage("telegram", "42", "never", "1"))
    assert [c.status for c in tg.requests("sendMessage")] == [502, 200, 500, 502]


async def test_a_read_timeout_on_send_is_retried_once_so_at_most_one_duplicate(tg: TelegramStub) -> None:
    # Telegram takes each message, then answers too late: every try reaches the chat.
    tg.fail("sendMessage", slow(2.0), slow(2.0), slow(2.0), slow(2.0))
    async with running(tg, timeout_seconds=0.5) as (channel, _):
        with pytest.raises(TimedOut):
            await channel.send(OutboundMessage("telegram", "42", "only once, please", "1"))
        await asyncio.sleep(0.3)  # a further retry would have arrived by now
    delivered = [c.params["text"] for c in tg.sent()]
    assert delivered == ["only once, please"] * 2  # the original and one retry: at most one duplicate


async def test_a_request_that_never_left_is_retried_fully(tg: TelegramStub) -> None:
    async with running(tg) as (channel, _):
        channel.retry_base_seconds, channel.retry_max_seconds = 0.2, 1.0  # tries at 0, 0.2, 0.6, 1.4 s
        tg.refuse_connections(0.4)  # connection refused: Telegram never saw those tries
        await channel.send(OutboundMessage("telegram", "42", "after the outage", "1"))
    (sent,) = tg.requests("sendMessage")
    assert sent.status == 200 and sent.params["text"] == "after the outage"


def test_which_failures_may_have_delivered_the_message() -> None:
    request = httpx.Request("POST", "http://127.0.0.1/bot1:a/sendMessage")

    def raised(exc: NetworkError, cause: Exception | None) -> NetworkError:
        exc.__cause__ = cause
        return exc

    never_left = [
        raised(TimedOut(), httpx.ConnectTimeout("connect", request=request)),
        raised(TimedOut("Pool timeout"), httpx.PoolTimeout("pool", request=request)),
        raised(NetworkError("httpx.ConnectError: refused"), httpx.ConnectError("refused", request=request)),
    ]
    maybe_arrived = [
        raised(TimedOut(), httpx.ReadTimeout("read", request=request)),
        raised(TimedOut(), httpx.WriteTimeout("write", request=request)),
        raised(NetworkError("httpx.RemoteProtocolError"), httpx.RemoteProtocolError("gone", request=request)),
        raised(NetworkError("Bad Gateway"), None),  # an HTTP 5xx answer
    ]
    assert [may_have_arrived(e) for e in never_left] == [False] * 3
    assert [may_have_arrived(e) for e in maybe_arrived] == [True] * 4


async def test_other_bad_requests_fail_at_once(tg: TelegramStub) -> None:
    tg.fail("sendMessage", Fault(400, "Bad Request: chat not found"))
    async with running(tg) as (channel, _):
        with pytest.raises(BadRequest, match="Chat not found"):
            await channel.send(OutboundMessage("telegram", "777", "hello", ""))
    assert len(tg.requests("sendMessage")) == 1


async def test_send_before_start_raises(tg: TelegramStub) -> None:
    channel = TelegramChannel(settings(tg))
    with pytest.raises(RuntimeError, match="not started"):
        await channel.send(OutboundMessage("telegram", "42", "hello", ""))


# --- typing ------------------------------------------------------------------------------------------


async def test_typing_is_sent_at_once_renewed_and_stopped(tg: TelegramStub) -> None:
    message = InboundMessage("telegram", "42", "42", "hi", message_id="1")
    async with running(tg) as (channel, _):
        channel.typing_every_seconds = 0.1
        async with channel.working(message):
            await tg.wait_until(lambda: len(tg.requests("sendChatAction")) >= 3, what="renewed typing")
        await asyncio.sleep(0.05)  # a request already on the wire when the context closed may still land
        count = len(tg.requests("sendChatAction"))
        await asyncio.sleep(0.3)
        assert len(tg.requests("sendChatAction")) == count  # stopped with the context
    action = tg.requests("sendChatAction")[0]
    assert action.params == {"chat_id": "42", "action": "typing"}


async def test_typing_failures_never_reach_the_reply(tg: TelegramStub) -> None:
    message = InboundMessage("telegram", "42", "42", "hi", message_id="1")
    tg.fail("sendChatAction", Fault(500, "Internal Server Error"), Fault(403, "Forbidden: bot was blocked"))
    async with running(tg) as (channel, _):
        channel.typing_every_seconds = 0.05
        async with channel.working(message):
            await tg.wait_until(lambda: len(tg.requests("sendChatAction")) >= 3, what="typing retried")
            await channel.send(OutboundMessage("telegram", "42", "reply", "1"))
    assert len(tg.sent()) == 1
    async with TelegramChannel(settings(tg)).working(message):  # not started: no sign, no error
        pass


# --- receiving: failures and restarts ----------------------------------------------------------------


async def test_conflict_is_logged_once_and_polling_recovers(
    tg: TelegramStub, caplog: pytest.LogCaptureFixture
) -> None:
    tg.fail("getUpdates", conflict(), conflict(), conflict())
    with caplog.at_level(logging.INFO, logger="tierclaw.channels"):
        async with running(tg) as (_, inbox):
            tg.push(tg.message("still there?"))
            assert (await inbox.wait(1)).text == "still there?"
    lines = [r.getMessage() for r in caplog.records if r.name == "tierclaw.channels"]
    assert sum("another bot instance is polling with this token" in line for line in lines) == 1
    assert not any("webhook" in line for line in lines)
    assert any("receiving messages again" in line for line in lines)
    assert [c.status for c in tg.requests("getUpdates")][:4] == [409, 409, 409, 200]
    assert len(tg.requests("deleteWebhook")) == 1  # no webhook was in the way


async def test_a_webhook_set_while_polling_is_deleted_again(
    tg: TelegramStub, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="tierclaw.channels"):
        async with running(tg) as (_, inbox):
            tg.push(tg.message("first"))
            await inbox.wait(1)
            tg.set_webhook("https://other-deployment.example/hook")  # getUpdates now answers 409
            await tg.wait_until(lambda: any(c.status == 409 for c in tg.requests("getUpdates")))
            tg.push(tg.message("second"))
            assert (await inbox.wait(2)).text == "second"
    lines = [r.getMessage() for r in caplog.records if r.name == "tierclaw.channels"]
    assert sum("a webhook is set for this bot" in line for line in lines) == 1
    assert not any("another bot instance" in line for line in lines)
    assert len(tg.requests("deleteWebhook")) == 2 and tg.webhook == {}


async def test_a_scripted_webhook_conflict_is_told_apart(
    tg: TelegramStub, caplog: pytest.LogCaptureFixture
) -> None:
    tg.fail("getUpdates", webhook_active(), conflict())
    with caplog.at_level(logging.WARNING, logger="tierclaw.channels"):
        async with running(tg) as (_, inbox):
            tg.push(tg.message("hi"))
            await inbox.wait(1)
    assert "a webhook is set for this bot" in caplog.text
    assert "another bot instance is polling with this token" in caplog.text
    calls = [c.method for c in tg.requests() if c.method in ("deleteWebhook", "getUpdates")]
    assert calls[:4] == ["deleteWebhook", "getUpdates", "deleteWebhook", "getUpdates"]


@pytest.mark.parametrize(
    ("fault", "logged"),
    [
        (Fault(hang=30), "getUpdates stalled"),  # httpx's read timeout fires
        (Fault(trickle=30), "getUpdates stalled"),  # a byte now and then: only the watchdog notices
        (unauthorized(), "Telegram rejected the bot token"),  # PTB's own loop would stop for good here
        (Fault(502, "Bad Gateway"), "polling Telegram failed"),
    ],
)
async def test_a_stalled_or_failing_poll_is_restarted(
    tg: TelegramStub, fault: Fault, logged: str, caplog: pytest.LogCaptureFixture
) -> None:
    tg.fail("getUpdates", fault)
    with caplog.at_level(logging.WARNING, logger="tierclaw.channels"):
        async with running(tg, timeout_seconds=1.0) as (_, inbox):
            tg.push(tg.message("after the stall"))
            assert (await inbox.wait(1)).text == "after the stall"
    assert len(tg.requests("getUpdates")) >= 2
    assert logged in caplog.text


async def test_stop_confirms_handled_updates_so_a_restart_does_not_repeat_them(tg: TelegramStub) -> None:
    async with running(tg, poll_timeout=30) as (_, inbox):
        tg.push(tg.message("once"))
        await inbox.wait(1)
    assert tg.pending_updates() == []
    last = tg.requests("getUpdates")[-1]
    assert last.params["timeout"] == "0"
    async with running(tg) as (_, inbox):
        tg.push(tg.message("twice"))
        assert (await inbox.wait(1)).text == "twice"
        await settled(tg)
    assert [m.text for m in inbox] == ["twice"]


async def test_a_rejected_token_fails_start_without_showing_it(tg: TelegramStub) -> None:
    secret = "999:this-token-is-wrong"
    channel = TelegramChannel(TelegramSettings(token=secret, allow_from=("42",), base_url=tg.base_url))
    with pytest.raises(RuntimeError) as failure:
        await channel.start(Inbox())
    assert "rejected the token" in str(failure.value)
    assert secret not in str(failure.value) and failure.value.__suppress_context__


async def test_the_token_never_reaches_the_logs(tg: TelegramStub, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="httpx")  # httpx logs each request URL (with the token) at INFO
    tg.fail("getUpdates", conflict())
    async with running(tg) as (channel, inbox):
        tg.push(tg.message("hello"))
        await inbox.wait(1)
        await channel.send(OutboundMessage("telegram", "42", "reply", "1"))
    assert "HTTP Request: POST" in caplog.text and "<redacted>" in caplog.text
    assert tg.token not in caplog.text
    assert tg.token.split(":")[1] not in caplog.text
    assert not logging.getLogger("httpx").filters  # the redaction is removed with the channel


# --- stopping in two steps -----------------------------------------------------------------------


class Gate(Inbox):
    """A ``deliver`` that holds the first message until ``release()`` (the gateway being slow to take it)."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = asyncio.Event()
        self.released = asyncio.Event()

    def release(self) -> None:
        self.released.set()

    async def __call__(self, message: InboundMessage) -> None:
        self.entered.set()
        await self.released.wait()
        self.append(message)


async def test_stop_receiving_confirms_only_what_was_handed_over_and_replies_still_go_out(
    tg: TelegramStub,
) -> None:
    first = tg.push(tg.message("one"))
    tg.push(tg.message("two"))
    tg.push(tg.message("three"))  # all three come back from the first getUpdates
    channel = quick(TelegramChannel(settings(tg)))
    gate = Gate()
    await channel.start(gate)
    try:
        await asyncio.wait_for(gate.entered.wait(), 10)
        stopping = asyncio.create_task(channel.stop_receiving())
        await asyncio.sleep(0.1)
        gate.release()  # "one" reaches the gateway after intake stopped; "two" and "three" never do
        await asyncio.wait_for(stopping, 5)
        assert [m.message_id for m in gate] == [str(first)]
        assert tg.pending_updates() == [2, 3]  # "one" confirmed, the others Telegram sends again
        polls = len(tg.requests("getUpdates"))
        tg.push(tg.message("four"))
        # the gateway drains: typing and replies still work
        channel.typing_every_seconds = 0.05
        async with channel.working(gate[0]):
            await tg.wait_until(lambda: len(tg.requests("sendChatAction")) >= 2, what="typing")
            await channel.send(OutboundMessage("telegram", "42", "answer to one", str(first)))
        await channel.stop_receiving()  # idempotent
        await asyncio.sleep(0.2)
        assert len(tg.requests("getUpdates")) == polls  # nothing is fetched any more
    finally:
        started = time.monotonic()
        await channel.stop()
        assert time.monotonic() - started < 1.0
    await channel.stop()  # safe twice
    assert [c.params["text"] for c in tg.sent()] == ["answer to one"]
    assert tg.pending_updates() == [2, 3, 4] and [m.text for m in gate] == ["one"]


async def test_stop_receiving_abandons_a_long_poll_at_once(tg: TelegramStub) -> None:
    async with running(tg, poll_timeout=30) as (channel, inbox):
        tg.push(tg.message("handled"))
        await inbox.wait(1)
        await tg.wait_until(lambda: len(tg.requests("getUpdates")) >= 2, what="a long poll in flight")
        started = time.monotonic()
        await channel.stop_receiving()
        assert time.monotonic() - started < 1.5
        assert tg.pending_updates() == []
        tg.push(tg.message("too late"))
        await channel.send(OutboundMessage("telegram", "42", "still sending", ""))
        await asyncio.sleep(0.2)
    assert [m.text for m in inbox] == ["handled"]
    assert len(tg.pending_updates()) == 1  # "too late" waits at Telegram for the next start
    assert [c.params["text"] for c in tg.sent()] == ["still sending"]


async def test_stop_receiving_closes_the_webhook_server_but_sending_works(tg: TelegramStub) -> None:
    port = free_port()
    extra = {"mode": "webhook", "webhook_url": "https://b.example.com/h", "webhook_port": port}
    async with running(tg, webhook_secret="s3cret-s3cret", **extra) as (channel, inbox):
        url = f"http://127.0.0.1:{port}/telegram"
        assert await post_webhook(url, tg.update(tg.message("before")), "s3cret-s3cret") == 200
        await channel.stop_receiving()
        assert [m.text for m in inbox] == ["before"]  # what the server accepted was handed over
        with pytest.raises(OSError):  # connection refused: Telegram keeps the update and retries later
            await post_webhook(url, tg.update(tg.message("after")), "s3cret-s3cret")
        await channel.send(OutboundMessage("telegram", "42", "reply to before", ""))
    assert [c.params["text"] for c in tg.sent()] == ["reply to before"]
    assert tg.webhook  # not deleted: updates wait at Telegram for the next start


# --- start failures ----------------------------------------------------------------------------------


async def test_a_refused_set_webhook_is_a_channel_error_without_a_traceback(
    tg: TelegramStub, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    tg.fail("setWebhook", Fault(400, "Bad Request: bad webhook: HTTPS url must be provided for webhook"))
    port = free_port()
    channel = TelegramChannel(
        settings(tg, mode="webhook", webhook_url="http://insecure.example/h", webhook_port=port)
    )
    with pytest.raises(ChannelError) as failure:
        await channel.start(Inbox())
    message = str(failure.value)
    assert message.startswith("[telegram] setWebhook refused: Bad webhook: https url must be provided")
    assert tg.token not in message and failure.value.__suppress_context__
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert tg.token not in caplog.text
    assert not channel.holds_resources and not logging.getLogger("httpx").filters  # cleaned up
    assert not logging.getLogger("telegram.ext").filters
    with socket.socket() as probe:  # no webhook server left behind
        assert probe.connect_ex(("127.0.0.1", port)) != 0
    await channel.stop()  # still safe


async def test_a_webhook_port_in_use_is_a_channel_error(tg: TelegramStub) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        channel = TelegramChannel(
            settings(tg, mode="webhook", webhook_url="https://b.example.com/h", webhook_port=port)
        )
        with pytest.raises(ChannelError) as failure:
            await channel.start(Inbox())
    message = str(failure.value)
    assert message.startswith(f"[telegram] cannot listen for the webhook on 127.0.0.1:{port}:")
    assert tg.token not in message and failure.value.__suppress_context__
    assert not channel.holds_resources and not logging.getLogger("httpx").filters


# --- webhook -----------------------------------------------------------------------------------------


async def test_webhook_sets_a_random_secret_and_checks_it(tg: TelegramStub) -> None:
    port = free_port()
    async with running(tg, mode="webhook", webhook_url="https://bot.example.com/tg", webhook_port=port) as (
        _,
        inbox,
    ):
        assert tg.webhook["url"] == "https://bot.example.com/tg"
        secret = tg.webhook["secret_token"]
        assert len(secret) >= 32 and tg.requests("getUpdates") == []
        url = f"http://127.0.0.1:{port}/telegram"
        assert await post_webhook(url, tg.update(tg.message("no secret"))) == 403
        assert await post_webhook(url, tg.update(tg.message("wrong")), secret="nope") == 403
        typed = tg.update(tg.message("wrong type"))
        assert await post_webhook(url, typed, secret, content_type="application/json; charset=utf-8") == 403
        assert await post_webhook(url, tg.update(tg.message("right")), secret=secret) == 200
        assert (await inbox.wait(1)).text == "right"
        await asyncio.sleep(0.1)
    assert [m.text for m in inbox] == ["right"]


async def test_webhook_uses_the_configured_secret(tg: TelegramStub) -> None:
    port = free_port()
    extra = {"mode": "webhook", "webhook_url": "https://b.example.com/h", "webhook_port": port}
    async with running(tg, webhook_path="hook", webhook_secret="my-Secret_1", **extra) as (_, inbox):
        assert tg.webhook["secret_token"] == "my-Secret_1"
        update = tg.update(tg.message("hi", chat=tg.group(), entities=[]))  # group, no mention
        assert await post_webhook(f"http://127.0.0.1:{port}/hook", update, "my-Secret_1") == 200
        update = tg.update(tg.message("@stub_bot hi", chat=tg.group()))
        assert await post_webhook(f"http://127.0.0.1:{port}/hook", update, "my-Secret_1") == 200
        assert (await inbox.wait(1)).text == "hi"
    assert len(inbox) == 1 and inbox[0].is_group


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="mode"):
        TelegramChannel(TelegramSettings(token="1:a", allow_from=(), mode="pull"))
    with pytest.raises(ValueError, match="group_policy"):
        TelegramChannel(TelegramSettings(token="1:a", allow_from=(), group_policy="all"))
    assert TelegramChannel(TelegramSettings(token="1:a", allow_from=())).name == "telegram"
    assert BOT_ID == 123456


async def test_an_update_that_does_not_parse_is_skipped_and_polling_goes_on(
    tg: TelegramStub, caplog: pytest.LogCaptureFixture
) -> None:
    tg.push(tg.message("before the poison"))
    poison = tg.message("secret words in a broken update")
    del poison["date"]  # PTB cannot build a Message without it: the whole batch fails to parse
    tg.push(poison)
    tg.push(tg.message("after the poison"))
    with caplog.at_level(logging.INFO):  # above DEBUG nothing of a message is logged (README)
        async with running(tg) as (_, inbox):
            await inbox.wait(2)
            tg.push(tg.message("later"))
            await inbox.wait(3)
    assert [m.text for m in inbox] == ["before the poison", "after the poison", "later"]
    skipped = [r.getMessage() for r in caplog.records if "skipped update" in r.getMessage()]
    assert len(skipped) == 1 and "KeyError" in skipped[0]
    assert "secret words" not in caplog.text  # neither our line nor PTB's dump of the batch
    offsets = [c.params.get("offset") for c in tg.requests("getUpdates")]
    assert offsets.count(offsets[-1]) <= 2  # the offset moved on: no retry loop on the same batch


async def test_an_update_the_gateway_could_not_store_stays_unconfirmed_and_comes_again(
    tg: TelegramStub, caplog: pytest.LogCaptureFixture
) -> None:
    attempts: list[str] = []

    async def deliver(message: InboundMessage) -> None:
        attempts.append(message.text)
        if len(attempts) < 3:
            raise OSError("database is locked")

    channel = quick(TelegramChannel(settings(tg)))
    with caplog.at_level(logging.WARNING, logger="tierclaw.channels"):
        await channel.start(deliver)
        try:
            tg.push(tg.message("keep me"))
            tg.push(tg.message("and me"))
            await tg.wait_until(lambda: attempts.count("and me") == 1, what="both stored")
        finally:
            await channel.stop()
    assert attempts == ["keep me", "keep me", "keep me", "and me"]  # fetched again until stored, in order
    offsets = [c.params.get("offset") for c in tg.requests("getUpdates")]
    assert offsets[:3] == [None, None, None]  # asked from the start again: nothing was confirmed meanwhile
    assert sum("not stored" in r.getMessage() for r in caplog.records) == 2
