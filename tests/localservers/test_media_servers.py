"""The local servers' media endpoints by hand: ``POST /local/send-file`` on the Telegram and Feishu servers
(a file from disk becomes a message: a voice note, a photo or a document), and what the stand-in
transcriber and vision make of the sample media."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

from localservers.feishu_server import FeishuStub
from localservers.openai_audio import describe_image, heard_in_wav
from localservers.sample_media import described_png, speech_wav
from localservers.telegram_server import TelegramStub
from tests.support.waiting import PROCESS_CEILING


def post(url: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=PROCESS_CEILING) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_telegram_send_file_puts_a_voice_note_from_disk_in_the_updates(tmp_path: Path) -> None:
    note = tmp_path / "note.wav"
    note.write_bytes(speech_wav("hello from disk"))
    with TelegramStub() as tg:
        root = tg.base_url.removesuffix("/bot")
        status, answer = post(f"{root}/local/send-file", {"path": str(note), "caption": "by hand"})
        assert status == 200 and answer["kind"] == "voice"
        [update] = tg._updates
        voice = update["message"]["voice"]
        assert tg.files.get(voice["file_id"]).data == note.read_bytes()
        assert update["message"]["caption"] == "by hand"
        assert post(f"{root}/local/send-file", {"path": str(tmp_path / "missing.png")})[0] == 400


def test_feishu_send_file_needs_a_connected_gateway(tmp_path: Path) -> None:
    photo = tmp_path / "cat.png"
    photo.write_bytes(described_png("a cat"))
    with FeishuStub() as feishu:
        status, answer = post(f"{feishu.domain}/local/send-file", {"path": str(photo)})
    assert status == 409 and "no websocket client" in answer["msg"]


def test_the_stand_ins_hear_and_see_the_sample_media() -> None:
    assert heard_in_wav(speech_wav("一二三 go")) == "一二三 go"
    assert describe_image(described_png("a red bicycle")) == "a red bicycle"
    assert describe_image(described_png("一辆红色自行车")) == "一辆红色自行车"
