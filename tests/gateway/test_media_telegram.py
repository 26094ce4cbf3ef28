"""Voice notes, photos and files on Telegram, end to end: the real gateway → python-telegram-bot → the local
Bot API server (getFile, file downloads, sendPhoto/sendDocument), the model, the transcriber and the
vision stand-in on the local OpenAI server; the attachment memory on both stores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localservers.openai_server import OpenAIStub, StubReply
from localservers.sample_media import described_png, pdf_bytes, speech_wav
from localservers.telegram_server import TelegramStub, check_html
from tests.support.media_gateway import attachments, telegram_config, telegram_gateway

pytestmark = [
    pytest.mark.filterwarnings("ignore:Deprecated since version v22.2:DeprecationWarning"),
    pytest.mark.usefixtures("close_stub_clients"),
]


def visible(text: str) -> str:
    shown, error = check_html(text)
    assert error == ""
    return shown


@pytest.mark.both_stores
async def test_a_voice_note_is_heard_answered_and_kept(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub, memory_url: str
) -> None:
    wav = speech_wav("Remind me to water the tomatoes on Friday")
    async with telegram_gateway(telegram_config(tmp_path, model, tg, memory_url)) as runtime:
        tg.push(tg.files.message(tg, "voice", wav, mime="audio/ogg"))
        (reply,) = await tg.wait_sent(1)
        rows = await attachments(runtime)
        kept = await runtime.engine.attachments.file_bytes("telegram:42", rows[0].id)
    text = visible(reply.params["text"])
    assert text.startswith("🎤 I heard: “Remind me to water the tomatoes on Friday”")
    assert "stub reply: Remind me to water the tomatoes on Friday" in text
    assert model.chat_requests()[0]["messages"][-1]["content"] == "Remind me to water the tomatoes on Friday"
    assert model.audio.requests[0]["model"] == "whisper-1"
    [row] = rows
    assert (row.kind, row.status, row.transcription) == (
        "voice",
        "understood",
        "Remind me to water the tomatoes on Friday",
    )
    assert kept == wav and row.size == len(wav)


async def test_a_photo_goes_to_a_model_that_sees_and_its_description_is_kept(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    png = described_png("a grey cat asleep on a windowsill")
    async with telegram_gateway(telegram_config(tmp_path, model, tg)) as runtime:
        tg.push(tg.files.message(tg, "photo", png, caption="look at Miso"))
        (reply,) = await tg.wait_sent(1)
        rows = await attachments(runtime)
    describe, answer = model.chat_requests()
    assert describe["messages"][0]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    user = answer["messages"][-1]["content"]
    assert user[0]["text"] == "[photo: a grey cat asleep on a windowsill]\nlook at Miso"
    assert user[1]["type"] == "image_url"
    assert rows[0].description == "a grey cat asleep on a windowsill" and rows[0].caption == "look at Miso"
    assert visible(reply.params["text"]) == "a grey cat asleep on a windowsill"  # what the stand-in saw


async def test_a_model_that_cannot_see_is_asked_once_and_the_memory_model_describes(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    model.audio.vision = False  # the main model (and here the memory model too: same server) refuses images
    async with telegram_gateway(telegram_config(tmp_path, model, tg)) as runtime:
        for n in range(2):
            tg.push(tg.files.message(tg, "photo", described_png(f"receipt {n}")))
            await tg.wait_sent(n + 1)
        rows = await attachments(runtime)
    assert model.audio.refused_images == 2  # main model once, memory model once; the second photo: nobody
    assert all(r.status == "kept" for r in rows)
    assert "none of my models can look at images" in visible(tg.sent()[-1].params["text"])


async def test_a_pdf_is_read_and_the_model_gets_its_text(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    pdf = pdf_bytes("Lease agreement between Ann and Bob\nRent 1200 EUR per month")
    async with telegram_gateway(telegram_config(tmp_path, model, tg)) as runtime:
        tg.push(tg.files.message(tg, "document", pdf, name="lease.pdf", mime="application/pdf"))
        await tg.wait_sent(1)
        rows = await attachments(runtime)
    user = model.chat_requests()[-1]["messages"][-1]["content"]
    assert '<document name="lease.pdf">' in user and "Rent 1200 EUR per month" in user
    assert rows[0].extracted_text.startswith("Lease agreement") and rows[0].status == "understood"


async def test_asking_for_a_photo_again_sends_it_back_by_its_file_id(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    def responder(body: dict) -> StubReply | None:
        last = body["messages"][-1]
        if last["role"] == "user" and "again" in str(last["content"]):
            return StubReply(tool_calls=[("attachment_search", json.dumps({"query": last["content"]}))])
        if last["role"] == "tool" and "results" in last["content"]:
            found = json.loads(last["content"])["results"]
            return StubReply(tool_calls=[("attachment_send", json.dumps({"id": found[0]["id"]}))])
        if last["role"] == "tool":
            return StubReply(content="Here it is.")
        return None

    model.responder = responder
    async with telegram_gateway(telegram_config(tmp_path, model, tg)) as runtime:
        tg.push(tg.files.message(tg, "photo", described_png("a grey cat asleep on a windowsill")))
        tg.push(tg.files.message(tg, "document", pdf_bytes("Invoice 42"), name="invoice.pdf"))
        await tg.wait_sent(2)
        tg.push(tg.message("send me that cat photo again"))
        await tg.wait_sent(3)
        rows = await runtime.engine.attachments.list("telegram:42")
    [sent] = tg.files.sent
    assert sent.kind == "photo" and not sent.uploaded and sent.file.data.startswith(b"\x89PNG")
    assert visible(tg.sent()[-1].params["text"]) == "Here it is."
    assert [r.direction for r in rows].count("out") == 1


async def test_a_file_telegram_forgot_is_uploaded_again_from_the_kept_bytes(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    pdf = pdf_bytes("Boarding pass LH 123")
    async with telegram_gateway(telegram_config(tmp_path, model, tg, tools=False, offline=True)) as runtime:
        message = tg.files.message(tg, "document", pdf, name="boarding.pdf", mime="application/pdf")
        tg.push(message)
        await tg.wait_sent(1)
        tg.files.forget(message["document"]["file_id"])
        tg.push(tg.message("send me the boarding pass file again"))
        await tg.wait_sent(2)
        [row] = await runtime.engine.attachments.list("telegram:42", direction="in")
    [sent] = tg.files.sent
    assert sent.uploaded and sent.file.data == pdf and sent.file.name == "boarding.pdf"
    assert row.file_key == sent.file.file_id  # the new id is used next time
    assert "Here is boarding.pdf" in visible(tg.sent()[-1].params["text"])


async def test_media_stored_before_a_crash_is_fetched_and_answered_after_the_restart(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    from telegram import Message

    from channels.base import InboundMessage
    from channels.telegram.media import media_refs
    from gateway.inbox import DurableInbox
    from memory.engine import MemoryEngine

    config = telegram_config(tmp_path, model, tg)
    message = tg.files.message(tg, "voice", speech_wav("kept across the crash"), mime="audio/ogg")
    refs = media_refs(Message.de_json(message, None))
    engine = await MemoryEngine.open(config.memory_target())  # the gateway stored it, then died
    inbox = DurableInbox(engine.store)
    await inbox.accept(
        InboundMessage("telegram", "42", "42", "", str(message["message_id"]), delivery_id="u1", media=refs)
    )
    await engine.close()
    async with telegram_gateway(config) as runtime:
        (reply,) = await tg.wait_sent(1)
        [row] = await attachments(runtime)
    assert "kept across the crash" in visible(reply.params["text"])
    assert row.transcription == "kept across the crash"


async def test_a_memory_saved_while_answering_a_photo_is_linked_to_it(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    def responder(body: dict) -> StubReply | None:
        last = body["messages"][-1]
        if last["role"] == "user" and isinstance(last["content"], list) and body.get("tools"):
            save = json.dumps({"content": "Miso is a grey tabby cat"})
            return StubReply(tool_calls=[("memory_save", save)])
        return "Saved." if last["role"] == "tool" else None

    model.responder = responder
    async with telegram_gateway(telegram_config(tmp_path, model, tg)) as runtime:
        tg.push(tg.files.message(tg, "photo", described_png("a grey tabby cat"), caption="this is Miso"))
        await tg.wait_sent(1)
        [row] = await attachments(runtime)
        [memory] = await runtime.engine.list("telegram:42")
    assert row.memory_ids == [memory.id] and memory.content == "Miso is a grey tabby cat"
