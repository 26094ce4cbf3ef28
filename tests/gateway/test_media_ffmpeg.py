"""ffmpeg where a transcription back-end needs WAV (``media.transcription.convertToWav``): a voice note in
OGG reaches a WAV-only server as WAV and is heard; ``tierclaw doctor`` checks ffmpeg only then. Uses the
machine's ffmpeg (Debian's; ``.ci/run`` installs it)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gateway.cli.doctor_checks import check_ffmpeg
from localservers.openai_server import OpenAIStub
from localservers.sample_media import speech_wav
from localservers.telegram_server import TelegramStub, check_html
from tests.support.media_gateway import attachments, telegram_config, telegram_gateway

pytestmark = [
    pytest.mark.filterwarnings("ignore:Deprecated since version v22.2:DeprecationWarning"),
    pytest.mark.usefixtures("close_stub_clients"),
    pytest.mark.skipif(
        shutil.which("ffmpeg") is None, reason="ffmpeg is not installed (apt-get install ffmpeg)"
    ),
]


def ogg_of(wav: bytes) -> bytes:
    """The WAV as lossless FLAC in an OGG container (what a voice note's container looks like)."""
    done = subprocess.run(
        ["ffmpeg", "-loglevel", "error", "-i", "pipe:0", "-c:a", "flac", "-f", "ogg", "pipe:1"],
        input=wav,
        capture_output=True,
        check=True,
    )
    return done.stdout


async def test_a_wav_only_server_gets_wav_converted_by_ffmpeg(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    model.audio.wav_only = True
    config = telegram_config(tmp_path, model, tg, media={"transcription": {"convertToWav": True}})
    async with telegram_gateway(config) as runtime:
        tg.push(tg.files.message(tg, "voice", ogg_of(speech_wav("heard through ffmpeg")), mime="audio/ogg"))
        (reply,) = await tg.wait_sent(1)
        [row] = await attachments(runtime)
    assert model.audio.requests[0]["file_name"].endswith(".wav")
    assert "heard through ffmpeg" in check_html(reply.params["text"])[0]
    assert row.transcription == "heard through ffmpeg" and row.mime == "audio/ogg"


async def test_without_conversion_a_wav_only_server_refuses_the_ogg_plainly(
    tmp_path: Path, model: OpenAIStub, tg: TelegramStub
) -> None:
    model.audio.wav_only = True
    async with telegram_gateway(telegram_config(tmp_path, model, tg)) as _:
        tg.push(tg.files.message(tg, "voice", ogg_of(speech_wav("not heard")), mime="audio/ogg"))
        (reply,) = await tg.wait_sent(1)
    assert check_html(reply.params["text"])[0].startswith("I couldn't listen to that voice note")


def test_doctor_finds_ffmpeg_and_says_how_to_get_it_when_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    found = check_ffmpeg()
    assert found.ok and found.detail.startswith(shutil.which("ffmpeg") or "")
    monkeypatch.setenv("PATH", "/nonexistent")
    missing = check_ffmpeg()
    assert not missing.ok and "apt-get install ffmpeg" in missing.fix
