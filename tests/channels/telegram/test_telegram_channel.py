"""The Telegram channel: the real python-telegram-bot against the local Bot API server
(localservers/telegram_server.py) — who is answered, how replies are sent, the typing sign.

Deliveries go to a list instead of the gateway, so these tests see exactly what the channel lets through;
tests/gateway/test_telegram_gateway.py runs the same channel inside the real gateway; receiving failures,
stopping and the webhook are in test_telegram_receiving.py.
"""

from __future__ import annotations

import asyncio
import logging

import httpx
import pytest
from telegram.error import BadRequest, NetworkError, TimedOut

from channels.base import InboundMessage, OutboundMessage
from channels.telegram.channel import TelegramChannel
from channels.telegram.failures import may_have_arrived
from localservers.telegram_server import (
    Fault,
    TelegramStub,
    cant_parse,
    rate_limited,
    slow,
)
from tests.support.telegram_channel import ME, running, settings, settled
from tests.support.waiting import CEILING, until

# PTB warns when it builds a RetryAfter (its int ``retry_after`` becomes a timedelta in v23); the channel
# reads either form.
pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2:DeprecationWarning")


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
        sequence=1,  # the bot's updates are numbered in order: the gateway answers a chat in it
    )
    assert tg.requests()[0].method == "getMe" and tg.requests()[1].method == "deleteWebhook"
    polls = tg.requests("getUpdates")
    assert polls[0].json("allowed_updates") == ["message", "stopped_message_generation"]
    assert polls[0].params["timeout"] == "1"


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


async def test_a_long_reply_without_sentence_ends_is_cut_between_words(tg: TelegramStub) -> None:
    # issue 37: "…word523 wo" | "rd524 …" — a reply of words alone was cut at exactly 4096 characters
    text = " ".join(f"word{i}" for i in range(1, 901))
    async with running(tg) as (channel, _):
        await channel.send(OutboundMessage("telegram", "42", text, "3"))
    sent = [c.params["text"] for c in tg.sent()]
    assert len(sent) == 2 and all(len(t) <= 4096 for t in sent)
    assert [w for t in sent for w in t.split()] == text.split()


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
    tg.fail("sendMessage", *[slow(3600)] * 4)  # answered only when the stub stops
    async with running(tg, timeout_seconds=0.5) as (channel, _):
        with pytest.raises(TimedOut):
            await channel.send(OutboundMessage("telegram", "42", "only once, please", "1"))
    # Every try was on the wire before the raise; a starved stub thread may record the last one later.
    await tg.wait_sent(2)
    delivered = [c.params["text"] for c in tg.sent()]
    assert delivered == ["only once, please"] * 2  # the original and one retry: at most one duplicate


async def test_a_request_that_never_left_is_retried_fully(
    tg: TelegramStub, caplog: pytest.LogCaptureFixture
) -> None:
    def refused() -> int:
        return sum("send failed" in r.getMessage() for r in caplog.records)

    async with running(tg) as (channel, _):
        channel.retry_base_seconds, channel.retry_max_seconds = 0.2, 1.0  # tries at 0, 0.2, 0.6, 1.4 s
        # Refused until told (connection refused: Telegram never saw those tries), not for a fixed window
        # a starved client may try entirely inside or outside of: two tries meet it, then it ends. The
        # next try is a 0.4 s timer on this same event loop, so the port is open again before it.
        tg.refuse_connections()
        with caplog.at_level(logging.DEBUG, logger="tierclaw.channels"):
            sending = asyncio.create_task(
                channel.send(OutboundMessage("telegram", "42", "after the outage", "1"))
            )
            await until(lambda: refused() >= 2 or sending.done(), what="two refused tries")
            tg.accept_connections()
            await asyncio.wait_for(sending, CEILING)
        assert refused() == 2
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
        # stopped with the context: its task ends (cancelled, not awaited — the reply never waits on it)
        await tg.wait_until(lambda: all(t.done() for t in channel._typing), what="the sign's task ended")
        count = len(tg.requests("sendChatAction"))
    assert len(tg.requests("sendChatAction")) <= count + 1  # at most one was on the wire as it ended
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
