"""The local servers' streaming parts as the real clients meet them: python-telegram-bot against drafts,
edits and per-chat limits (localservers/telegram_streaming.py), lark-oapi against CardKit and its error
codes (localservers/feishu_cardkit.py), the openai SDK against server-sent events
(localservers/openai_sse.py)."""

from __future__ import annotations

import json

import lark_oapi as lark
import openai
import pytest
from lark_oapi.api.cardkit.v1 import Card as CardEntity
from lark_oapi.api.cardkit.v1 import (
    ContentCardElementRequest,
    ContentCardElementRequestBody,
    CreateCardRequest,
    CreateCardRequestBody,
    SettingsCardRequest,
    SettingsCardRequestBody,
    UpdateCardRequest,
    UpdateCardRequestBody,
)
from lark_oapi.api.im.v1 import CreateMessageRequest, CreateMessageRequestBody
from telegram import Bot
from telegram.error import BadRequest, RetryAfter

from channels.telegram.failures import retry_after
from localservers.feishu_cardkit import SCOPE_MISSING
from localservers.feishu_server import FeishuStub
from localservers.openai_server import OpenAIStub, StubReply
from localservers.openai_sse import StreamPace, tokens_of
from localservers.telegram_server import TelegramStub

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2:DeprecationWarning")


@pytest.fixture
async def bot(tg: TelegramStub) -> Bot:
    async with Bot(tg.token, base_url=tg.base_url) as bot:
        yield bot


# ------------------------------------------------------------------------------- Telegram


async def test_drafts_are_for_private_chats_with_a_draft_id(tg: TelegramStub, bot: Bot) -> None:
    assert await bot.send_message_draft(42, 7, "<b>half</b> of it", parse_mode="HTML") is True
    assert tg.writes.draft_texts(42) == ["half of it"]
    with pytest.raises(BadRequest, match="Textdraft_peer_invalid"):
        await bot.send_message_draft(-1001, 7, "in a group")
    with pytest.raises(BadRequest, match="Draft_id must be non-zero"):
        await bot.send_message_draft(42, 0, "no id")
    with pytest.raises(BadRequest, match="Can't parse entities"):
        await bot.send_message_draft(42, 7, "<b>unclosed", parse_mode="HTML")


async def test_an_edit_changes_the_bots_message_and_says_when_nothing_changed(
    tg: TelegramStub, bot: Bot
) -> None:
    tg.writes.limits = False
    message = await bot.send_message(-1001, "first words")
    await bot.edit_message_text("first words and more", -1001, message.message_id)
    assert tg.writes.reply_of(-1001, message.message_id) == "first words and more"
    with pytest.raises(BadRequest, match="Message is not modified"):
        await bot.edit_message_text("first words and more", -1001, message.message_id)
    with pytest.raises(BadRequest, match="Message to edit not found"):
        await bot.edit_message_text("elsewhere", -1001, 999_999)
    assert await bot.delete_message(-1001, message.message_id) is True
    assert tg.writes.reply_of(-1001, message.message_id) == ""


async def test_a_chat_over_its_limit_gets_429_with_retry_after(tg: TelegramStub, bot: Bot) -> None:
    for n in range(tg.writes.burst):  # a burst is let through …
        await bot.send_message(42, f"message {n}")
    with pytest.raises(RetryAfter) as caught:  # … then one a second
        await bot.send_message(42, "one too many")
    assert retry_after(caught.value) >= 1
    await bot.send_message(43, "another chat is not held up")
    assert tg.writes.rate_limited == 1


async def test_a_group_gets_twenty_writes_a_minute(tg: TelegramStub, bot: Bot) -> None:
    tg.writes.burst, tg.writes.per_second = 100, 100.0  # only the per-minute limit applies
    for n in range(20):
        await bot.send_message(-1001, f"message {n}")
    with pytest.raises(RetryAfter):
        await bot.send_message(-1001, "the 21st")


# ------------------------------------------------------------------------------- Feishu CardKit


def _client(feishu: FeishuStub, app_id: str) -> lark.Client:
    return lark.Client.builder().app_id(app_id).app_secret("s").domain(feishu.domain).timeout(5).build()


def _create(client: lark.Client, card: dict) -> lark.BaseResponse:
    body = CreateCardRequestBody.builder().type("card_json").data(json.dumps(card)).build()
    return client.cardkit.v1.card.create(CreateCardRequest.builder().request_body(body).build())


def _content(client: lark.Client, card_id: str, text: str, sequence: int) -> lark.BaseResponse:
    body = ContentCardElementRequestBody.builder().content(text).sequence(sequence).build()
    request = (
        ContentCardElementRequest.builder().card_id(card_id).element_id("reply").request_body(body).build()
    )
    return client.cardkit.v1.card_element.content(request)


def _settings(client: lark.Client, card_id: str, settings: dict, sequence: int) -> lark.BaseResponse:
    body = SettingsCardRequestBody.builder().settings(json.dumps(settings)).sequence(sequence).build()
    return client.cardkit.v1.card.settings(
        SettingsCardRequest.builder().card_id(card_id).request_body(body).build()
    )


def _update(client: lark.Client, card_id: str, card: dict, sequence: int) -> lark.BaseResponse:
    entity = CardEntity.builder().type("card_json").data(json.dumps(card)).build()
    body = UpdateCardRequestBody.builder().card(entity).sequence(sequence).build()
    request = UpdateCardRequest.builder().card_id(card_id).request_body(body).build()
    return client.cardkit.v1.card.update(request)


def _send(client: lark.Client, content: dict | str) -> lark.BaseResponse:
    text = content if isinstance(content, str) else json.dumps(content)
    body = CreateMessageRequestBody.builder().receive_id("oc_1").msg_type("interactive").content(text).build()
    request = CreateMessageRequest.builder().receive_id_type("chat_id").request_body(body).build()
    return client.im.v1.message.create(request)


STREAMING_CARD = {
    "schema": "2.0",
    "config": {"streaming_mode": True, "update_multi": True},
    "body": {"elements": [{"tag": "markdown", "element_id": "reply", "content": "Hel"}]},
}


def test_a_streaming_card_is_created_sent_updated_and_closed(feishu: FeishuStub) -> None:
    client = _client(feishu, "cli_cards_ok")
    card_id = _create(client, STREAMING_CARD).data.card_id
    assert _send(client, {"type": "card", "data": {"card_id": card_id}}).success()
    assert _content(client, card_id, "Hello", 1).success()
    assert _content(client, card_id, "Hello world", 2).success()
    assert _settings(client, card_id, {"config": {"streaming_mode": False}}, 3).success()
    card = feishu.cardkit.cards[card_id]
    assert card.text == "Hello world" and not card.streaming
    assert [text for _, text in card.history] == ["Hel", "Hello", "Hello world"]
    assert feishu.sent[0].card is card


def test_cardkit_refuses_what_feishu_refuses_with_its_codes(feishu: FeishuStub) -> None:
    client = _client(feishu, "cli_cards_codes")
    card_id = _create(client, STREAMING_CARD).data.card_id
    assert _send(client, card_id).code == 200621  # a bare card id
    assert _send(client, {"card_id": card_id}).code == 200621  # not {"type": "card", "data": …}
    assert _content(client, card_id, "Hello", 5).success()
    assert _content(client, card_id, "Hello again", 5).code == 300317  # the sequence must rise
    assert _content(client, card_id, "Hello", 6).success()
    assert _settings(client, card_id, {"streaming_mode": False}, 7).code == 300309  # not under config
    assert feishu.cardkit.cards[card_id].streaming  # so still "generating…"
    assert _settings(client, card_id, {"config": {"streaming_mode": False}}, 8).success()
    assert _content(client, card_id, "too late", 9).code == 300309  # streaming closed
    assert _content(client, "7000000000000000001", "no such card", 10).code == 200740
    not_multi = {**STREAMING_CARD, "config": {"streaming_mode": True, "update_multi": False}}
    assert _create(client, not_multi).code == 300302


def test_a_full_update_replaces_the_card_and_its_streaming_mode(feishu: FeishuStub) -> None:
    client = _client(feishu, "cli_cards_full")
    card_id = _create(client, STREAMING_CARD).data.card_id
    assert _content(client, card_id, "Hello", 5).success()
    final = {**STREAMING_CARD, "config": {"streaming_mode": False, "update_multi": True}}
    final["body"] = {"elements": [{"tag": "markdown", "element_id": "reply", "content": "Hello world"}]}
    assert _update(client, card_id, final, 5).code == 300317  # the sequence must rise here too
    assert _update(client, card_id, {"schema": "1.0"}, 6).code == 200220  # card JSON 2.0 only
    assert _update(client, "7000000000000000001", final, 7).code == 200740
    assert _update(client, card_id, final, 8).success()
    card = feishu.cardkit.cards[card_id]
    assert card.text == "Hello world" and not card.streaming and card.closed_at is not None
    assert [text for _, text in card.history] == ["Hel", "Hello", "Hello world"]
    assert _content(client, card_id, "too late", 9).code == 300309  # streaming closed by the update


def test_an_app_without_the_card_scope_is_refused(feishu: FeishuStub) -> None:
    feishu.cardkit.refuse_code = SCOPE_MISSING
    resp = _create(_client(feishu, "cli_cards_scope"), STREAMING_CARD)
    assert resp.code == SCOPE_MISSING and "cardkit:card:write" in resp.msg


def test_a_card_updated_more_than_ten_times_a_second_is_rate_limited(feishu: FeishuStub) -> None:
    client = _client(feishu, "cli_cards_rate")
    card_id = _create(client, STREAMING_CARD).data.card_id
    codes = [_content(client, card_id, f"text {n}", n + 1).code for n in range(12)]
    assert 99991400 in codes and feishu.cardkit.rate_limited >= 1


# ------------------------------------------------------------------------------- OpenAI SSE


async def test_a_streamed_reply_is_server_sent_events_the_sdk_reads() -> None:
    with OpenAIStub(pace=StreamPace(tokens_per_second=1000)) as stub:
        stub.script(StubReply(content="Hello world, 你好", tool_calls=[("memory_search", "{}")]))
        async with openai.AsyncOpenAI(base_url=stub.base_url, api_key="sk-test", max_retries=0) as client:
            stream = await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}], stream=True
            )
            chunks = [chunk async for chunk in stream]
    deltas = [c.choices[0].delta for c in chunks]
    assert deltas[0].role == "assistant"
    assert "".join(d.content or "" for d in deltas) == "Hello world, 你好"
    assert [d.content for d in deltas if d.content] == tokens_of("Hello world, 你好")
    assert deltas[-2].tool_calls[0].function.name == "memory_search"
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
