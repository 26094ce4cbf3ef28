"""The Feishu channel on its own (no gateway) against the local Feishu server: parsing events, sending replies
(uuid, retries, fallbacks, errors) and refused callbacks. The real lark-oapi SDK does every request; both
connection modes' receiving, start and stop are in test_feishu_receiving.py."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import aiohttp
import pytest

from channels.base import InboundMessage, OutboundMessage
from channels.feishu.channel import FeishuChannel, FeishuSettings
from channels.feishu.events import FeishuEvent, Mention, inbound_message, message_uuid
from channels.feishu.open_api import FeishuApiError
from localservers.feishu_server import (
    BOT_NOT_IN_CHAT,
    BOT_OPEN_ID,
    RATE_LIMITED,
    SERVER_ERROR,
    FeishuStub,
    message_event,
    post_callback,
)
from tests.support.feishu_channel import (
    ENCRYPT_KEY,
    SECRET,
    TOKEN,
    callback_url,
    make_settings,
    reply,
    running,
)

# --- parsing -----------------------------------------------------------------------------------------


def event(text: str = "hi", **fields: object) -> FeishuEvent:
    values: dict[str, object] = {
        "event_id": "ev1",
        "message_id": "om1",
        "chat_id": "oc1",
        "chat_type": "p2p",
        "sender_open_id": "ou_alice",
        "sender_type": "user",
        "message_type": "text",
        "content": json.dumps({"text": text}),
    }
    values.update(fields)
    return FeishuEvent(**values)  # type: ignore[arg-type]


BOT = Mention("@_user_1", BOT_OPEN_ID, "StubBot")


def test_p2p_text() -> None:
    message = inbound_message(event("hello"), BOT_OPEN_ID)
    assert message == InboundMessage(
        channel="feishu",
        chat_id="oc1",
        sender_id="ou_alice",
        text="hello",
        message_id="om1",
        delivery_id="ev1",
    )


def test_group_needs_the_bot_mentioned_and_placeholders_are_resolved() -> None:
    assert inbound_message(event("hello all", chat_type="group"), BOT_OPEN_ID) is None
    bob = Mention("@_user_2", "ou_bob", "Bob")
    other_only = event("@_user_2 hi", chat_type="group", mentions=(bob,))
    assert inbound_message(other_only, BOT_OPEN_ID) is None
    many = tuple(Mention(f"@_user_{i}", f"ou_{i}", f"P{i}") for i in range(2, 11))
    text = "@_user_1 ask @_user_2 and @_user_10 about lunch"
    message = inbound_message(event(text, chat_type="group", mentions=(BOT, *many)), BOT_OPEN_ID)
    assert message is not None
    assert message.text == "ask @P2 and @P10 about lunch"
    assert message.is_group and message.mentions_bot


def test_unknown_bot_id_any_mention_counts() -> None:
    bob = Mention("@_user_1", "ou_bob", "Bob")
    message = inbound_message(event("@_user_1 hi", chat_type="group", mentions=(bob,)), "")
    assert message is not None and message.text == "hi"


@pytest.mark.parametrize("kind", ["image", "file", "audio", "media", "sticker", "interactive"])
def test_non_text_messages_are_attachments(kind: str) -> None:
    message = inbound_message(event(message_type=kind, content='{"image_key": "img_1"}'), BOT_OPEN_ID)
    assert message is not None
    assert (message.text, message.attachment) == ("", kind)


def test_post_becomes_its_text() -> None:
    content = '{"title": "", "content": [[{"tag": "text", "text": "see "}, {"tag": "a", "text": "this"}]]}'
    message = inbound_message(event(message_type="post", content=content), BOT_OPEN_ID)
    assert message is not None
    assert (message.text, message.attachment) == ("see this", "")


def test_message_uuid_is_deterministic_short_and_distinct() -> None:
    first = message_uuid("om_1", 0, "hello")
    assert first == message_uuid("om_1", 0, "hello")
    assert len(first) <= 50
    assert len({first, message_uuid("om_1", 1, "hello"), message_uuid("om_2", 0, "hello")}) == 3
    assert message_uuid("om_1", 0, "hello!") != first


def test_settings_repr_hides_secrets(tmp_path: Path) -> None:
    settings = FeishuSettings("cli_x", SECRET, ("*",), TOKEN, ENCRYPT_KEY)
    shown = repr(settings)
    assert "cli_x" in shown
    assert SECRET not in shown and TOKEN not in shown and ENCRYPT_KEY not in shown


# --- sending -----------------------------------------------------------------------------------------


async def test_plain_reply_is_a_text_reply_with_a_uuid(tmp_path: Path, feishu: FeishuStub) -> None:
    async with running(make_settings(tmp_path, feishu)) as (channel, _):
        await channel.send(reply("Hello there"))
    [sent] = feishu.sent
    assert (sent.kind, sent.target, sent.msg_type, sent.text) == ("reply", "om_in_1", "text", "Hello there")
    assert sent.uuid == message_uuid("om_in_1", 0, "Hello there")
    assert feishu.send_requests()[0].body["reply_in_thread"] is False


async def test_a_long_reply_without_sentence_ends_is_cut_between_words(
    tmp_path: Path, feishu: FeishuStub
) -> None:
    text = " ".join(f"word{i}" for i in range(1, 901))  # one line, no sentence end: only words to cut at
    async with running(make_settings(tmp_path, feishu)) as (channel, _):
        await channel.send(reply(text))
    sent = [s.text for s in feishu.sent]
    assert len(sent) == 2 and all(len(t) <= 4000 for t in sent)
    assert [w for t in sent for w in t.split()] == text.split()


async def test_without_reply_to_the_message_is_created_in_the_chat(
    tmp_path: Path, feishu: FeishuStub
) -> None:
    async with running(make_settings(tmp_path, feishu)) as (channel, _):
        await channel.send(OutboundMessage("feishu", "oc_chat_alice", "Good morning"))
    [sent] = feishu.sent
    assert (sent.kind, sent.target, sent.text) == ("create", "oc_chat_alice", "Good morning")
    assert feishu.send_requests()[0].query == {"receive_id_type": "chat_id"}


async def test_a_retried_send_is_not_posted_twice(tmp_path: Path, feishu: FeishuStub) -> None:
    async with running(make_settings(tmp_path, feishu)) as (channel, _):
        await channel.send(reply("Only once, please"))
        await channel.send(reply("Only once, please"))
    requests = feishu.send_requests()
    assert len(requests) == 2
    assert requests[0].body["uuid"] == requests[1].body["uuid"]
    assert len(feishu.sent) == 1


async def test_rate_limit_is_retried(tmp_path: Path, feishu: FeishuStub) -> None:
    feishu.fail_sends(RATE_LIMITED, RATE_LIMITED)
    async with running(make_settings(tmp_path, feishu)) as (channel, _):
        await channel.send(reply("after the limit"))
    assert len(feishu.send_requests()) == 3
    assert [s.text for s in feishu.sent] == ["after the limit"]


async def test_server_errors_are_retried_a_bounded_number_of_times(
    tmp_path: Path, feishu: FeishuStub
) -> None:
    feishu.fail_sends(SERVER_ERROR)
    async with running(make_settings(tmp_path, feishu)) as (channel, _):
        channel.retry_base_seconds = 0.001
        await channel.send(reply("second time lucky"))
        assert len(feishu.sent) == 1
        feishu.fail_sends(*[SERVER_ERROR] * 10)
        with pytest.raises(FeishuApiError) as caught:
            await channel.send(reply("never"))
    assert caught.value.status == 500
    assert len(feishu.send_requests()) == 2 + 4


async def test_a_refusal_raises_with_code_and_message_but_no_secret(
    tmp_path: Path, feishu: FeishuStub
) -> None:
    feishu.fail_sends(BOT_NOT_IN_CHAT)
    async with running(make_settings(tmp_path, feishu)) as (channel, _):
        with pytest.raises(FeishuApiError) as caught:
            await channel.send(reply("hello?"))
    text = str(caught.value)
    assert "230002" in text and "out of the chat" in text and "om_in_1" in text
    assert SECRET not in text
    assert len(feishu.send_requests()) == 1  # not retried
    assert feishu.sent == []


async def test_markdown_goes_as_post_and_falls_back_to_text(tmp_path: Path, feishu: FeishuStub) -> None:
    markdown = "**Plan**\n- one\n- two"
    async with running(make_settings(tmp_path, feishu)) as (channel, _):
        await channel.send(reply(markdown, to="om_a"))
        feishu.refuse_posts = True
        await channel.send(reply(markdown, to="om_b"))
    first, second = feishu.sent
    assert first.msg_type == "post"
    assert first.content == {"zh_cn": {"content": [[{"tag": "md", "text": markdown}]]}}
    assert (second.msg_type, second.text, second.target) == ("text", markdown, "om_b")
    assert [r.body["msg_type"] for r in feishu.send_requests()] == ["post", "post", "text"]


# ------------------------------------------------------------------ refused callbacks are cheap


async def _post_raw(url: str, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(url, data=body, headers=headers or {}) as resp,
    ):
        return resp.status, await resp.read()


@pytest.mark.parametrize(
    ("case", "status", "reason"),
    [
        ("malformed JSON", 400, "malformed JSON"),
        ("bad signature", 401, "X-Lark-Signature"),
        ("undecryptable", 403, "cannot decrypt"),
        ("wrong token", 403, "verification token"),
    ],
)
async def test_a_refused_callback_is_one_line_and_a_fixed_answer(
    tmp_path: Path,
    feishu: FeishuStub,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
    case: str,
    status: int,
    reason: str,
) -> None:
    from localservers.feishu_server import signed_body

    caplog.set_level(logging.DEBUG)
    async with running(make_settings(tmp_path, feishu)) as (channel, inbox):
        url = callback_url(channel)
        if case == "malformed JSON":
            answer = await _post_raw(url, b"{not json")
        elif case == "bad signature":
            body, headers = signed_body(message_event("x", token=TOKEN), ENCRYPT_KEY, bad_signature=True)
            answer = await _post_raw(url, body, headers)
        elif case == "undecryptable":
            body, headers = signed_body(message_event("x", token=TOKEN), "some-other-key")
            answer = await _post_raw(url, body, headers)
        else:
            body, headers = signed_body(message_event("x", token="wrong"), ENCRYPT_KEY)
            answer = await _post_raw(url, body, headers)
        assert await post_callback(
            url, message_event("a good one", token=TOKEN), encrypt_key=ENCRYPT_KEY
        ) == (
            200,
            {"msg": "success"},
        )
        assert [m.text for m in await inbox.wait(1)] == ["a good one"]  # nothing else got through
    got_status, got_body = answer
    assert got_status == status
    assert json.loads(got_body) in ({"msg": "bad request"}, {"msg": "unauthorized"}, {"msg": "forbidden"})
    refusals = [r for r in caplog.records if "refused a callback" in r.getMessage()]
    assert (
        len(refusals) == 1 and reason in refusals[0].getMessage() and "127.0.0.1" in refusals[0].getMessage()
    )
    assert not [r for r in caplog.records if r.exc_info]  # no traceback, from us or from lark
    assert "Traceback" not in capfd.readouterr().err


async def test_an_event_the_gateway_could_not_store_is_not_acknowledged_and_comes_again(
    tmp_path: Path, feishu: FeishuStub
) -> None:
    delivered: list[str] = []
    failures = [OSError("database is locked")]

    async def deliver(message: InboundMessage) -> None:
        if failures:
            raise failures.pop()
        delivered.append(message.text)

    channel = FeishuChannel(make_settings(tmp_path, feishu))
    await channel.start(deliver)
    try:
        incoming = message_event("keep me", token=TOKEN)
        first, _ = await post_callback(callback_url(channel), incoming, encrypt_key=ENCRYPT_KEY)
        again, _ = await post_callback(callback_url(channel), incoming, encrypt_key=ENCRYPT_KEY)  # redelivery
        third, _ = await post_callback(callback_url(channel), incoming, encrypt_key=ENCRYPT_KEY)
    finally:
        await channel.stop()
    assert (first, again, third) == (500, 200, 200)  # not acknowledged until stored; then once
    assert delivered == ["keep me"]
