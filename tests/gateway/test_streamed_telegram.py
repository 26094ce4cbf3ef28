"""Streamed replies on Telegram, end to end: the real gateway (loop, assistant, memory) →
python-telegram-bot → the local Bot API server, with a streaming model on the local OpenAI server
(channels/telegram/streaming.py).

The model is held after a few tokens (``StubReply.hold``) until the test has seen the partial reply on
the platform, so what is shown while the reply is written is checked without timing guesses.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from channels.telegram.streaming import TelegramStreams
from gateway.app import Runtime
from gateway.cli.run import enabled_channels
from gateway.config import Config, load_config
from localservers.openai_server import OpenAIStub, StubReply
from localservers.openai_sse import StreamPace
from localservers.sample_media import speech_wav
from localservers.telegram_server import TelegramStub, check_html, rate_limited
from localservers.telegram_streaming import STOPPED, stopped

pytestmark = [
    pytest.mark.filterwarnings("ignore:Deprecated since version v22.2:DeprecationWarning"),
    pytest.mark.usefixtures("close_stub_clients"),
]

ANSWER = "The **plan** is simple: pack the bags, check the tickets, and leave before noon."
GROUP = -1001


def telegram_config(
    tmp_path: Path,
    model: OpenAIStub,
    tg: TelegramStub,
    memory_url: str = "",
    replica: str = "",
    stream: bool = True,
    **telegram: object,
) -> Config:
    raw = {
        "provider": {
            "apiKey": "sk-test-0000",
            "baseUrl": model.base_url,
            "maxRetries": 0,
            "timeoutSeconds": 60,
        },
        "agent": {"model": "main-model", "workspace": str(tmp_path / "ws"), "stream": stream},
        "memory": {
            "dbPath": str(tmp_path / "memory.db"),
            "databaseUrl": memory_url,
            "extraction": {"quietGap": "1h"},
            "embedding": {"provider": "none"},
        },
        "channels": {
            "telegram": {
                "enabled": True,
                "token": tg.token,
                "allowFrom": ["42"],
                "baseUrl": tg.base_url,
                "timeoutSeconds": 30,
                "groupPolicy": "open",
                "streamEvery": "0.5s",
                **telegram,
            }
        },
        "gateway": {"replicaId": replica},
        "timezone": "UTC",
    }
    path = tmp_path / f"config{replica}.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return load_config(path, env={})


@asynccontextmanager
async def gateway(config: Config) -> AsyncIterator[Runtime]:
    runtime = await Runtime.open(config, enabled_channels(config))
    try:
        await runtime.start(schedule=False)
        yield runtime
    finally:
        await runtime.close()


def visible(html: str) -> str:
    text, error = check_html(html)
    assert error == "", error
    return text


def held(content: str, after: int) -> tuple[StubReply, threading.Event]:
    """A streamed reply that stops after ``after`` tokens until the event is set."""
    go_on = threading.Event()
    return StubReply(content=content, hold=(after, go_on)), go_on


@pytest.fixture
def model() -> OpenAIStub:
    with OpenAIStub(pace=StreamPace(tokens_per_second=200)) as stub:
        yield stub


async def assistant_turns(runtime: Runtime, chat_key: str) -> list[str]:
    """The chat's assistant turns in history, once every reply of the loop is sent."""
    async with asyncio.timeout(60):
        while runtime.loop.pending:
            await asyncio.sleep(0.02)
    history = await runtime.assistant.sessions.history(chat_key, 50)
    return [content for role, content in history if role == "assistant"]


@pytest.mark.both_stores
async def test_a_private_reply_is_a_draft_while_written_then_one_message(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub, memory_url: str
) -> None:
    reply, go_on = held(ANSWER, after=4)
    model.script(reply)
    async with gateway(telegram_config(tmp_path, model, tg, memory_url)) as runtime:
        message_id = tg.push(tg.message("what is the plan?"))
        await tg.wait_until(
            lambda: any("The plan is" in t for t in tg.writes.draft_texts(42)), what="a draft"
        )
        assert tg.sent() == []  # nothing sent yet: a draft is not a message
        go_on.set()
        (final,) = await tg.wait_sent(1)
        turns = await assistant_turns(runtime, "telegram:42")
    drafts = tg.requests("sendMessageDraft")
    assert {d.params["draft_id"] for d in drafts} == {drafts[0].params["draft_id"]}  # one draft per reply
    assert all(d.status == 200 and d.params["can_stop"] == "true" for d in drafts)
    assert (
        visible(final.params["text"])
        == "The plan is simple: pack the bags, check the tickets, and leave before noon."
    )
    assert final.json("reply_parameters")["message_id"] == message_id
    assert drafts[-1].at < final.at
    assert turns == [ANSWER]  # only the final text is history
    assert model.chat_requests()[0]["stream"] is True


async def test_while_the_draft_shows_the_chat_gets_no_typing_sign(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    reply, go_on = held(" ".join(f"word{n}" for n in range(30)), after=5)  # the draft shows until set
    model.script(reply)
    config = telegram_config(tmp_path, model, tg, draftEvery="0.2s")
    async with gateway(config) as runtime:
        (channel,) = runtime.channels
        channel.typing_every_seconds = 0.1  # type: ignore[attr-defined]
        looks = _count_looks(channel.streams)  # type: ignore[attr-defined]
        tg.push(tg.message("count for me"))
        await tg.wait_until(lambda: any("word4" in t for t in tg.writes.draft_texts(42)), what="a draft")
        # The sign's task saw the draft once: a sign it sent before that has been answered (one call at a
        # time), so every sign from now on would be one sent while the draft shows.
        await tg.wait_until(lambda: looks.count(True) >= 1, what="the sign's task sees the draft")
        typed = len(tg.requests("sendChatAction"))
        await tg.wait_until(lambda: looks.count(True) >= 11, what="ten more turns of the sign's task")
        assert len(tg.requests("sendChatAction")) == typed  # ten signs' time: the draft's words say it
        go_on.set()
        await tg.wait_sent(1)


def _count_looks(streams: TelegramStreams) -> list[bool]:
    """What each look of the "typing…" task at ``streams.shown`` answered (it looks before each sign, every
    ``typing_every_seconds``): a test then knows the task ran while a draft showed, and did not merely not
    come round to it. The real method answers; this only keeps its answers."""
    answers: list[bool] = []
    shown = streams.shown

    def counted(chat_id: str) -> bool:
        answers.append(shown(chat_id))
        return answers[-1]

    streams.shown = counted  # type: ignore[method-assign]
    return answers


async def test_once_replies_are_streamed_the_typing_sign_waits_for_the_first_words(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    late, go_on = held("Late answer.", after=0)  # no words until the test says
    model.script("First answer.", "Second answer.", late)
    async with gateway(telegram_config(tmp_path, model, tg)) as runtime:
        (channel,) = runtime.channels
        channel.typing_grace_seconds = 3600.0  # the words always come first
        tg.push(tg.message("one"))
        await tg.wait_sent(1)
        await runtime.loop.drain()
        typed = len(tg.requests("sendChatAction"))  # before any stream: the sign at once
        tg.push(tg.message("two"))
        await tg.wait_sent(2)
        await runtime.loop.drain()
        assert len(tg.requests("sendChatAction")) == typed  # its words came first: no sign at all
        channel.typing_grace_seconds = 0.05
        tg.push(tg.message("three"))
        await tg.wait_until(lambda: len(tg.requests("sendChatAction")) > typed, what="the sign, late")
        go_on.set()
        await tg.wait_sent(3)
    assert typed >= 1
    assert tg.writes.draft_texts(42)  # the replies were streamed


async def test_with_agent_stream_off_the_reply_comes_whole(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    model.script(ANSWER, "Another answer.")
    async with gateway(telegram_config(tmp_path, model, tg, stream=False)) as _:
        tg.push(tg.message("what is the plan?"))
        tg.push(tg.message("and in the group?", chat=tg.group(GROUP)))
        sent = await tg.wait_sent(2)
    assert tg.requests("sendMessageDraft") == [] and tg.requests("editMessageText") == []
    plan = "The plan is simple: pack the bags, check the tickets, and leave before noon."
    assert {visible(c.params["text"]) for c in sent} == {plan, "Another answer."}  # each whole, once
    assert [r.get("stream") for r in model.chat_requests()] == [None, None]  # asked whole


@pytest.mark.both_stores
async def test_a_voice_notes_reply_streams_after_what_was_heard(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub, memory_url: str
) -> None:
    reply, go_on = held(ANSWER, after=4)
    model.script(reply)
    heard = "🎤 I heard: “What is the plan for Friday”"
    async with gateway(telegram_config(tmp_path, model, tg, memory_url)) as runtime:
        voice = speech_wav("What is the plan for Friday")
        tg.push(tg.files.message(tg, "voice", voice, mime="audio/ogg"))
        await tg.wait_until(
            lambda: any(t.startswith(f"{heard}\n\nThe plan is") for t in tg.writes.draft_texts(42)),
            what="a draft after what was heard",
        )
        go_on.set()
        (final,) = await tg.wait_sent(1)
        turns = await assistant_turns(runtime, "telegram:42")
    plan = "The plan is simple: pack the bags, check the tickets, and leave before noon."
    assert visible(final.params["text"]) == f"{heard}\n\n{plan}"
    assert model.chat_requests()[0]["messages"][-1]["content"] == "What is the plan for Friday"
    assert turns == [ANSWER]  # the model's words only: what was heard is the person's turn


@pytest.mark.both_stores
async def test_a_group_reply_is_one_message_edited_no_faster_than_stream_every(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub, memory_url: str
) -> None:
    tokens = [f"word{n}" for n in range(40)]
    words = " ".join(tokens)
    model.pace.tokens_per_second = 20  # between the holds the words come faster than streamEvery's 0.5 s
    stops = [3, 14, 26]  # the model holds after that many words until the test lets it go on
    gates = [threading.Event() for _ in stops]
    model.script(StubReply(content=words, holds=tuple(zip(stops, gates, strict=True))))
    async with gateway(telegram_config(tmp_path, model, tg, memory_url)) as runtime:
        incoming = tg.push(tg.message("count for me", chat=tg.group(GROUP)))
        (first,) = await tg.wait_sent(1)
        assert "word0 word1 word2".startswith(visible(first.params["text"]))  # the first words, at once
        message_id = first.result["message_id"]
        for go_on, until in zip(gates, [*stops[1:], len(tokens)], strict=True):  # step by step
            go_on.set()
            so_far = " ".join(tokens[:until])  # the model holds here: the message comes to show it
            await tg.wait_until(
                lambda so_far=so_far: tg.writes.reply_of(GROUP, message_id) == so_far, what=so_far[-6:]
            )
        turns = await assistant_turns(runtime, f"telegram:{GROUP}")
    assert len(tg.sent()) == 1 and first.json("reply_parameters")["message_id"] == incoming
    edits = [c for c in tg.requests("editMessageText") if c.status == 200]
    assert len(edits) >= 3  # one for each step at least
    writes = [first.at] + [e.at for e in edits]
    gaps = [b - a for a, b in itertools.pairwise(writes[:-1])]  # the final edit is not paced
    assert all(gap >= 0.45 for gap in gaps), gaps
    assert turns == [words]


async def test_partial_markdown_is_always_accepted_and_unclosed_marks_show_plain(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    answer = (
        "Use **bold words** and `some code` here, see [the docs](https://example.com/x) and\n"
        "```python\nprint(1)\n```"
    )
    partials = {  # what the message shows while the model waits after that many tokens
        2: "Use **bold",
        5: "Use bold words and `some",
        9: "Use bold words and some code here, see [the",
        13: "print(1)",  # inside the code fence: shown as code
    }
    async with gateway(telegram_config(tmp_path, model, tg)) as _:
        for n, (cut, partial) in enumerate(partials.items(), start=1):
            reply, go_on = held(answer, after=cut)
            model.script(reply)
            tg.push(tg.message(f"show me {cut}", chat=tg.group(GROUP)))
            message_id = (await tg.wait_sent(n))[-1].result["message_id"]
            await _shows(tg, message_id, lambda text, partial=partial: partial in text)
            go_on.set()
            await _shows(
                tg, message_id, lambda text: text.startswith("Use bold") and text.endswith("print(1)")
            )
    writes = tg.requests("sendMessage") + tg.requests("editMessageText")
    assert writes and all(c.status in (200, 429) for c in writes)  # never "can't parse entities"


async def _shows(tg: TelegramStub, message_id: int, wanted: Callable[[str], bool]) -> None:
    """Wait until the bot's message ``message_id`` in the group shows what ``wanted`` accepts."""
    await tg.wait_until(lambda: wanted(tg.writes.reply_of(GROUP, message_id)), what=f"message {message_id}")


@pytest.mark.both_stores
async def test_a_rate_limited_edit_pauses_the_chat_and_the_final_text_waits_it_out(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub, memory_url: str
) -> None:
    reply, go_on = held(ANSWER, after=3)
    model.script(reply)
    tg.fail("editMessageText", rate_limited(2))
    async with gateway(telegram_config(tmp_path, model, tg, memory_url)) as runtime:
        tg.push(tg.message("plan?", chat=tg.group(GROUP)))
        (first,) = await tg.wait_sent(1)
        go_on.set()
        message_id = first.result["message_id"]
        await tg.wait_until(
            lambda: "noon." in tg.writes.reply_of(GROUP, message_id), what="final", timeout=60
        )
        turns = await assistant_turns(runtime, f"telegram:{GROUP}")
    (refused, *later) = tg.requests("editMessageText")
    assert refused.status == 429
    assert later and all(c.at >= refused.at + 2.0 for c in later)  # the whole chat waited
    assert len(tg.sent()) == 1 and turns == [ANSWER]  # the 429 never reached the person


async def test_a_long_reply_continues_in_a_new_message(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    paragraphs = [f"Part {i}. " + "word " * 500 for i in range(2)]  # ~2,500 characters each
    answer = "\n\n".join(p.strip() for p in paragraphs)
    model.pace.tokens_per_second = 2000
    model.script(answer)
    async with gateway(telegram_config(tmp_path, model, tg)) as _:
        tg.push(tg.message("tell me everything", chat=tg.group(GROUP)))
        sent = await tg.wait_sent(2)
        ids = [c.result["message_id"] for c in sent]
        await tg.wait_until(
            lambda: [tg.writes.reply_of(GROUP, i) for i in ids] == [p.strip() for p in paragraphs]
        )
    assert len(tg.sent()) == 2


@pytest.mark.both_stores
async def test_where_drafts_are_refused_the_reply_is_edited_in(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub, memory_url: str
) -> None:
    tg.writes.refuse_drafts = True  # a Bot API server without sendMessageDraft
    reply, go_on = held(ANSWER, after=4)
    model.script(reply)
    async with gateway(telegram_config(tmp_path, model, tg, memory_url)) as _:
        tg.push(tg.message("plan?"))
        (first,) = await tg.wait_sent(1)
        go_on.set()
        await tg.wait_until(
            lambda: "noon." in tg.writes.reply_of(42, first.result["message_id"]), what="final"
        )
    assert len(tg.sent()) == 1 and tg.requests("sendMessageDraft")[0].status == 404


@pytest.mark.both_stores
async def test_stop_on_a_draft_cancels_the_reply_and_the_chat_goes_on(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub, memory_url: str
) -> None:
    reply, go_on = held(ANSWER, after=4)
    model.script(reply, "second answer")
    async with gateway(telegram_config(tmp_path, model, tg, memory_url)) as runtime:
        tg.push(tg.message("what is the plan?"))
        await tg.wait_until(lambda: bool(tg.writes.draft_texts(42)), what="a draft")
        draft_id = int(tg.requests("sendMessageDraft")[0].params["draft_id"])
        tg.push_update(tg.update(stopped(42, draft_id), STOPPED))  # the person taps stop
        await tg.wait_until(lambda: not runtime.loop.pending, what="the stopped reply ended")
        go_on.set()
        tg.push(tg.message("and now?"))
        (answered,) = await tg.wait_sent(1)
        turns = await assistant_turns(runtime, "telegram:42")
        unanswered = await runtime.inbox.unanswered()
    assert visible(answered.params["text"]) == "second answer"  # the stopped reply was never sent
    assert turns == ["second answer"] and unanswered == []


@pytest.mark.both_stores
async def test_a_group_reply_half_written_at_a_crash_is_completed_not_sent_twice(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub, memory_url: str
) -> None:
    reply, go_on = held(ANSWER, after=3)
    model.script(reply)
    config = telegram_config(tmp_path, model, tg, memory_url)
    runtime = await Runtime.open(config, enabled_channels(config))
    try:
        await runtime.start(schedule=False)
        incoming = tg.push(tg.message("plan?", chat=tg.group(GROUP)))
        (first,) = await tg.wait_sent(1)
        (stored,) = await runtime.inbox.unanswered()
        async with asyncio.timeout(30):
            while not await runtime.inbox.reply_handle(stored):  # kept before the stream goes on
                await asyncio.sleep(0.02)
        await asyncio.wait_for(runtime.loop.stop(hand_over=False), 60)  # as if the process died mid-stream
    finally:
        await runtime.close()
        go_on.set()
    message_id = first.result["message_id"]
    assert "noon" not in tg.writes.reply_of(GROUP, message_id)
    model.script("The whole answer, written again after the restart.")
    async with gateway(config) as restarted:
        await tg.wait_until(lambda: "after the restart" in tg.writes.reply_of(GROUP, message_id))
        await tg.wait_until(lambda: not restarted.loop.pending)
        turns = await assistant_turns(restarted, f"telegram:{GROUP}")
        unanswered = await restarted.inbox.unanswered()
    assert [c.json("reply_parameters")["message_id"] for c in tg.sent()] == [incoming]  # one message
    assert unanswered == [] and turns == ["The whole answer, written again after the restart."]


async def test_a_reply_half_written_by_one_gateway_is_completed_by_another(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub, postgres_url: str
) -> None:
    reply, go_on = held(ANSWER, after=3)
    model.script(reply, "Finished by the other gateway.")
    first_gateway = telegram_config(tmp_path, model, tg, postgres_url, replica="a")
    runtime = await Runtime.open(first_gateway, enabled_channels(first_gateway))
    try:
        await runtime.start(schedule=False)
        incoming = tg.push(tg.message("plan?", chat=tg.group(GROUP)))
        (first,) = await tg.wait_sent(1)
        (stored,) = await runtime.inbox.unanswered()
        async with asyncio.timeout(30):
            while not await runtime.inbox.reply_handle(stored):
                await asyncio.sleep(0.02)
        await asyncio.wait_for(runtime.loop.stop(hand_over=False), 60)  # gateway a goes away mid-stream
    finally:
        await runtime.close()
        go_on.set()
    message_id = first.result["message_id"]
    async with gateway(telegram_config(tmp_path, model, tg, postgres_url, replica="b")) as other:
        await tg.wait_until(lambda: tg.writes.reply_of(GROUP, message_id) == "Finished by the other gateway.")
        await tg.wait_until(lambda: not other.loop.pending)
        unanswered = await other.inbox.unanswered()
    assert [c.json("reply_parameters")["message_id"] for c in tg.sent()] == [incoming] and unanswered == []
