"""Bad media gets a clear reply in the person's language, one log line, no traceback, and is answered once
(issue 33, item 5): a 0-byte file, a corrupt OGG, an audio the transcriber refuses, a 21 MB file, an
encrypted PDF, an image-only PDF, a DOCX zip bomb, a wrong MIME type, a transcription that times out —
each through the real gateway, python-telegram-bot and the local servers. The attachment is still kept
(findable by its caption, name and date) and its message marked answered."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from gateway.media.words import say, size_text
from localservers.openai_server import OpenAIStub, StubReply
from localservers.sample_media import described_png, docx_bomb, pdf_bytes, speech_wav
from localservers.telegram_server import TelegramStub, check_html
from tests.support.media_gateway import attachments, telegram_config, telegram_gateway

pytestmark = [
    pytest.mark.filterwarnings("ignore:Deprecated since version v22.2:DeprecationWarning"),
    pytest.mark.usefixtures("close_stub_clients"),
]
MB = 1024 * 1024
Setup = Callable[[TelegramStub, OpenAIStub], dict]


def _refused_audio(tg: TelegramStub, model: OpenAIStub) -> dict:
    wav = speech_wav("this one is refused")
    model.audio.refuse.add(hashlib.sha256(wav).hexdigest())
    return tg.files.message(tg, "voice", wav, mime="audio/ogg")


def _slow_transcriber(tg: TelegramStub, model: OpenAIStub) -> dict:
    model.audio.script(StubReply(delay=3600), StubReply(delay=3600))  # both tries outlast the 0.5 s timeout
    return tg.files.message(tg, "voice", speech_wav("too slow"), mime="audio/ogg")


CASES: dict[str, tuple[Setup, str]] = {
    "zero bytes": (
        lambda tg, _m: tg.files.message(tg, "document", b"", name="empty.txt", mime="text/plain"),
        say("empty", False, kind="file"),
    ),
    "corrupt ogg": (
        lambda tg, _m: tg.files.message(tg, "voice", b"OggS\x00\x02" + b"\x13" * 500, mime="audio/ogg"),
        say("bad_audio", False, kind="voice note"),
    ),
    "refused audio": (_refused_audio, say("bad_audio", False, kind="voice note")),
    "21 MB": (
        lambda tg, _m: tg.files.message(tg, "document", b"x", name="video.mov", size=21 * MB),
        say("too_big", False, kind="file", size="21.0 MB", limit=size_text(20 * MB)),
    ),
    "encrypted pdf": (
        lambda tg, _m: tg.files.message(tg, "document", pdf_bytes("secret", password="pw"), name="tax.pdf"),
        say("encrypted", False, name="tax.pdf"),
    ),
    "image-only pdf": (
        lambda tg, _m: tg.files.message(tg, "document", pdf_bytes("", pages=2), name="scan.pdf"),
        say("no_text", False, name="scan.pdf"),
    ),
    "docx zip bomb": (
        lambda tg, _m: tg.files.message(tg, "document", docx_bomb(200), name="bomb.docx"),
        say("zip_bomb", False, name="bomb.docx"),
    ),
    "wrong mime": (
        lambda tg, _m: tg.files.message(
            tg, "document", described_png("a parking ticket"), name="ticket.pdf", mime="application/pdf"
        ),
        say("wrong_type", False, name="ticket.pdf", claimed="application/pdf", actual="image/png"),
    ),
    "transcription timeout": (_slow_transcriber, say("hear_timeout", False, kind="voice note")),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_bad_media_is_answered_once_clearly_and_kept(
    case: str, tmp_path: Path, model: OpenAIStub, tg: TelegramStub, caplog: pytest.LogCaptureFixture
) -> None:
    setup, expected = CASES[case]
    config = telegram_config(tmp_path, model, tg, media={"transcription": {"timeoutSeconds": 0.5}})
    caplog.set_level(logging.INFO)
    async with telegram_gateway(config) as runtime:
        message = setup(tg, model)
        message["caption"] = "for the record"
        tg.push(message)
        (first,) = await tg.wait_sent(1)
        await tg.wait_until(lambda: runtime.loop.pending == 0, what="the message answered")
        unanswered = await runtime.engine.store.inbox.count(answered=False)
        rows = await attachments(runtime)
    shown, _ = check_html(first.params["text"])
    assert shown.startswith(expected)
    assert len(tg.sent()) == 1 and unanswered == 0
    assert len(rows) == 1 and rows[0].caption == "for the record"
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
    problems = [r for r in caplog.records if r.levelno >= logging.WARNING and r.name.startswith("tierclaw")]
    assert len(problems) == 1, [r.getMessage() for r in problems]


async def test_a_chinese_speaker_is_told_in_chinese(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    async with telegram_gateway(telegram_config(tmp_path, model, tg)) as _:
        tg.push(tg.files.message(tg, "document", b"", name="空.txt", caption="这是报销单"))
        (reply,) = await tg.wait_sent(1)
    shown, _ = check_html(reply.params["text"])
    assert shown.startswith(say("empty", True, kind="文件"))


async def test_a_download_that_fails_for_a_while_is_tried_again(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    tg.files.fail_downloads(502)  # the first try fails, the second works (media.attempts: 2)
    async with telegram_gateway(telegram_config(tmp_path, model, tg)) as runtime:
        tg.push(tg.files.message(tg, "voice", speech_wav("second time lucky"), mime="audio/ogg"))
        (reply,) = await tg.wait_sent(1)
        [row] = await attachments(runtime)
    assert len(tg.files.downloads) == 2 and row.transcription == "second time lucky"
    assert "second time lucky" in check_html(reply.params["text"])[0]
