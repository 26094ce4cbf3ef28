"""Voice notes, photos and files on Feishu, end to end: the real gateway → lark-oapi (websocket events,
``im.v1.message_resource.get``, ``im.v1.image.create`` / ``im.v1.file.create``) → the local Feishu server,
with the transcriber and the vision stand-in on the local OpenAI server; the attachment memory on both
stores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localservers.feishu_server import FeishuStub, message_event
from localservers.openai_server import OpenAIStub, StubReply
from localservers.sample_media import described_png, docx_bytes, speech_wav
from tests.support.media_gateway import attachments, feishu_config, feishu_gateway

pytestmark = pytest.mark.usefixtures("close_stub_clients")
ALICE = "feishu:ou_alice"


@pytest.mark.both_stores
async def test_an_audio_message_is_fetched_as_its_message_resource_and_heard(
    tmp_path: Path, model: OpenAIStub, feishu: FeishuStub, memory_url: str
) -> None:
    event = feishu.media.event("audio", speech_wav("明天下午三点去牙医那里复查"), duration_ms=4000)
    async with feishu_gateway(feishu_config(tmp_path, model, feishu, memory_url)) as runtime:
        await feishu.push_event(event)
        [sent] = await feishu.wait_for_sent(1)
        [row] = await attachments(runtime, ALICE)
    message_id = event["event"]["message"]["message_id"]
    key = json.loads(event["event"]["message"]["content"])["file_key"]
    assert feishu.media.fetched == [(message_id, key, "file")]
    assert sent.text.startswith("🎤 我听到的是：“明天下午三点去牙医那里复查”")
    assert (row.kind, row.transcription) == ("voice", "明天下午三点去牙医那里复查")


async def test_images_inside_a_post_and_a_docx_are_understood(
    tmp_path: Path, model: OpenAIStub, feishu: FeishuStub
) -> None:
    post = feishu.media.event("post", described_png("a whiteboard with the Q3 roadmap"), text="今天的白板")
    docx = feishu.media.event(
        "file", docx_bytes(["租房合同", "甲方：张三，乙方：李四", "租金每月三千元"]), name="租房合同.docx"
    )
    async with feishu_gateway(feishu_config(tmp_path, model, feishu)) as runtime:
        await feishu.push_event(post)
        await feishu.wait_for_sent(1)
        await feishu.push_event(docx)
        await feishu.wait_for_sent(2)
        rows = await attachments(runtime, ALICE)
    assert [(r.kind, r.status) for r in rows] == [("image", "understood"), ("file", "understood")]
    assert rows[0].description == "a whiteboard with the Q3 roadmap" and rows[0].caption == "今天的白板"
    assert "租金每月三千元" in rows[1].extracted_text
    assert [kind for _, _, kind in feishu.media.fetched] == ["image", "file"]


async def test_asking_for_the_contract_uploads_it_and_sends_it_as_a_file(
    tmp_path: Path, model: OpenAIStub, feishu: FeishuStub
) -> None:
    def responder(body: dict) -> StubReply | None:
        last = body["messages"][-1]
        if last["role"] == "user" and "发我" in str(last["content"]):
            return StubReply(tool_calls=[("attachment_search", json.dumps({"query": last["content"]}))])
        if last["role"] == "tool" and "results" in last["content"]:
            found = json.loads(last["content"])["results"]
            return StubReply(tool_calls=[("attachment_send", json.dumps({"id": found[0]["id"]}))])
        return "好的，发给你了。" if last["role"] == "tool" else None

    model.responder = responder
    contract = docx_bytes(["房屋租赁合同", "租期一年"])
    async with feishu_gateway(feishu_config(tmp_path, model, feishu)) as _:
        await feishu.push_event(feishu.media.event("image", described_png("a receipt from the bakery")))
        await feishu.push_event(feishu.media.event("file", contract, name="租房合同.docx"))
        await feishu.wait_for_sent(2)
        await feishu.push_event(message_event("把上次那份合同发我"))
        await feishu.wait_for(lambda s: any(m.msg_type == "file" for m in s.sent))
    [upload] = feishu.media.uploads
    assert upload.data == contract and upload.file_type == "doc" and upload.name == "租房合同.docx"
    [file_message] = [m for m in feishu.sent if m.msg_type == "file"]
    assert file_message.content == {"file_key": upload.key}
