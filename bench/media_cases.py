"""What ``bench.media`` sends: the attachments of ``bench/data/media.json`` made into real files (a PNG that
shows its description to the local vision stand-in, a WAV that says its words to the local transcriber, a
PDF / DOCX / text file holding its text), the bad inputs of issue 33 item 5, and the stand-in model that
calls the attachment tools the way a real model would (search with the person's ask, send the top hit)."""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localservers.openai_server import OpenAIStub, StubReply, default_reply, is_json_request
from localservers.sample_media import described_png, docx_bomb, docx_bytes, pdf_bytes, speech_wav

DATA = Path(__file__).resolve().parent / "data" / "media.json"
HOLDOUT = Path(__file__).resolve().parent / "data" / "media_holdout.json"
MB = 1024 * 1024
MIMES = {
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "txt": "text/plain",
    "md": "text/markdown",
    "csv": "text/csv",
}


@dataclass
class Case:
    """One attachment of the set, as a file, and where it went."""

    id: str
    lang: str
    kind: str  # photo, voice, document
    content: str
    caption: str
    ask: str
    name: str = ""
    mime: str = ""
    data: bytes = b""
    channel: str = "telegram"
    file_key: str = ""  # the platform's id of the file as sent
    message_id: str = ""

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def load_cases(path: Path = DATA, holdout: bool = False) -> list[Case]:
    """The set's attachments made into files; every other one goes through Feishu, the rest Telegram.
    ``holdout``: each attachment's ask is the second one of ``media_holdout.json`` ("" when it has none)."""
    raw = json.loads(path.read_text(encoding="utf-8"))["attachments"]
    second = json.loads(HOLDOUT.read_text(encoding="utf-8"))["asks"] if holdout else {}
    cases = []
    for index, item in enumerate(raw):
        ask = second.get(item["id"], "") if holdout else item["ask"]
        case = Case(item["id"], item["lang"], item["kind"], item["content"], item["caption"], ask)
        case.channel = "feishu" if index % 2 else "telegram"
        if case.kind == "photo":
            case.data, case.mime = described_png(case.content), "image/png"
        elif case.kind == "voice":
            case.data, case.mime = speech_wav(case.content), "audio/ogg"
        else:
            fmt = item["format"]
            case.name, case.mime = item["name"], MIMES[fmt]
            if fmt == "pdf":
                case.data = pdf_bytes(case.content)
            elif fmt == "docx":
                case.data = docx_bytes(case.content.splitlines())
            else:
                case.data = case.content.encode("utf-8")
        cases.append(case)
    return cases


@dataclass
class BadInput:
    """One bad input of issue 33 item 5 and the start of the reply it must get."""

    name: str
    kind: str
    data: bytes
    mime: str = ""
    file_name: str = ""
    size: int | None = None
    expected: str = ""
    refuse: bool = False  # the transcriber refuses this audio
    slow: bool = False  # the transcription times out


def bad_inputs(limit: int) -> list[BadInput]:
    from gateway.media.words import say, size_text

    return [
        BadInput(
            "zero bytes",
            "document",
            b"",
            "text/plain",
            "empty.txt",
            expected=say("empty", False, kind="file"),
        ),
        BadInput(
            "corrupt ogg",
            "voice",
            b"OggS\x00\x02" + b"\x13" * 400,
            "audio/ogg",
            expected=say("bad_audio", False, kind="voice note"),
        ),
        BadInput(
            "refused audio",
            "voice",
            speech_wav("refused"),
            "audio/ogg",
            refuse=True,
            expected=say("bad_audio", False, kind="voice note"),
        ),
        BadInput(
            "21 MB",
            "document",
            b"x",
            "video/quicktime",
            "big.mov",
            size=21 * MB,
            expected=say("too_big", False, kind="file", size="21.0 MB", limit=size_text(limit)),
        ),
        BadInput(
            "encrypted pdf",
            "document",
            pdf_bytes("secret", password="pw"),
            "application/pdf",
            "tax.pdf",
            expected=say("encrypted", False, name="tax.pdf"),
        ),
        BadInput(
            "image-only pdf",
            "document",
            pdf_bytes("", pages=2),
            "application/pdf",
            "scan.pdf",
            expected=say("no_text", False, name="scan.pdf"),
        ),
        BadInput(
            "docx zip bomb",
            "document",
            docx_bomb(200),
            MIMES["docx"],
            "bomb.docx",
            expected=say("zip_bomb", False, name="bomb.docx"),
        ),
        BadInput(
            "wrong mime",
            "document",
            described_png("a ticket"),
            "application/pdf",
            "ticket.pdf",
            expected=say(
                "wrong_type", False, name="ticket.pdf", claimed="application/pdf", actual="image/png"
            ),
        ),
        BadInput(
            "transcription timeout",
            "voice",
            speech_wav("slow"),
            "audio/ogg",
            slow=True,
            expected=say("hear_timeout", False, kind="voice note"),
        ),
    ]


@dataclass
class ToolModel:
    """The stand-in model's tool use: an ask is searched with the person's words, the top hit sent back.
    ``found`` keeps each ask's result ids (best first) for the recall count."""

    asks: set[str]
    found: dict[str, list[int]] = field(default_factory=dict)
    sends: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, body: dict) -> StubReply | str | None:
        if is_json_request(body):
            return default_reply(body)
        messages = body.get("messages") or []
        last = messages[-1] if messages else {}
        ask = _last_user(messages)
        if last.get("role") == "user" and ask in self.asks and body.get("tools"):
            return StubReply(
                tool_calls=[("attachment_search", json.dumps({"query": ask}, ensure_ascii=False))]
            )
        if last.get("role") == "tool" and ask in self.asks:
            result: dict[str, Any] = json.loads(last.get("content") or "{}")
            if "results" in result:
                ids = [int(r["id"]) for r in result["results"]]
                with self.lock:
                    self.found[ask] = ids
                if ids:
                    with self.lock:
                        self.sends[ask] = ids[0]
                    return StubReply(tool_calls=[("attachment_send", json.dumps({"id": ids[0]}))])
                return "I could not find it."
            return "Here it is."
        return None


def _last_user(messages: list[dict]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else ""
    return ""


def model_server(asks: set[str]) -> tuple[OpenAIStub, ToolModel]:
    """The zero-latency model, transcriber and vision stand-in (this process's threads)."""
    tools = ToolModel(asks)
    return OpenAIStub(responder=tools).start(), tools
