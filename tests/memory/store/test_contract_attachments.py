"""The store contract, attachments: keeping one (once per message part), what understanding made of it,
its bytes, full-text search in English and Chinese, listing, forgetting, and the inbox's media column —
against both stores (``store`` fixture); and the engine's ``AttachmentLog`` search over them."""

from __future__ import annotations

from datetime import datetime

from memory.attachments import AttachmentLog, Understanding
from memory.store.attachments import NewAttachment, UnderstoodRow
from memory.store.protocol import MemoryStore
from memory.text import tokenizer

T0 = "2026-01-02 03:04:05"
T1 = "2026-01-09 10:00:00"


def _new(message_id: str, kind: str = "photo", **kw: object) -> NewAttachment:
    return NewAttachment("in", "telegram", "42", message_id, 0, kind, **kw)  # type: ignore[arg-type]


async def test_an_attachment_is_kept_once_per_message_part_and_owner(store: MemoryStore) -> None:
    first, new = await store.attachments.add("alice", _new("7", mime="image/jpeg", file_key="f1"), T0)
    again, new_again = await store.attachments.add("alice", _new("7"), T1)
    other, _ = await store.attachments.add("alice", _new("8"), T1)
    assert new and not new_again and again == first and other != first
    row = await store.attachments.get("alice", first)
    assert row is not None and (row.kind, row.mime, row.file_key, row.created_at) == (
        "photo",
        "image/jpeg",
        "f1",
        T0,
    )
    assert await store.attachments.get("bob", first) is None
    assert await store.attachments.count("alice") == 2 and await store.attachments.count(None) == 2


async def test_understanding_bytes_and_forgetting(store: MemoryStore) -> None:
    aid, _ = await store.attachments.add("alice", _new("1", kind="document", file_name="lease.pdf"), T0)
    long_text = "clause " * 2000
    indexed = tokenizer.index_text("lease pdf A lease " + long_text)
    done = UnderstoodRow("A lease", "", long_text, "understood", indexed, 5, "application/pdf", "abc")
    await store.attachments.understood("alice", aid, done)
    await store.attachments.put_bytes(aid, b"%PDF-")
    row = await store.attachments.get("alice", aid)
    assert row is not None and row.status == "understood" and row.size == 5
    assert len(row.extracted_text) == 2000  # listed rows carry a preview
    assert await store.attachments.full_text("alice", aid) == long_text
    assert await store.attachments.get_bytes("alice", aid) == b"%PDF-"
    assert await store.attachments.get_bytes("bob", aid) is None
    assert await store.attachments.kept_bytes("alice", [aid, aid + 100]) == {aid}
    await store.attachments.link_memories("alice", aid, [3, 1])
    row = await store.attachments.get("alice", aid)
    assert row is not None and row.memory_ids == [1, 3]
    assert not await store.attachments.delete("bob", aid)
    assert await store.attachments.delete("alice", aid)
    assert await store.attachments.get("alice", aid) is None
    assert await store.attachments.get_bytes("alice", aid) is None


async def test_full_text_finds_english_and_chinese_per_owner(store: MemoryStore) -> None:
    log = AttachmentLog(store)
    texts = {
        "1": ("photo", "", "A grey cat asleep on a windowsill"),
        "2": ("document", "租房合同.pdf", "甲方与乙方签订的房屋租赁合同，租期一年"),
        "3": ("voice", "", "Remember to call the plumber about the kitchen sink"),
    }
    for message_id, (kind, name, text) in texts.items():
        aid, _ = await log.keep("alice", _new(message_id, kind=kind, file_name=name))
        row = await log.get("alice", aid)
        assert row is not None
        await log.understood("alice", row, Understanding("understood", description=text))
    await log.keep("bob", NewAttachment("in", "telegram", "9", "1", 0, "photo", caption="my cat"))
    now = datetime(2026, 12, 1)
    cat = await log.search("alice", "send me that cat photo again", now=now)
    assert cat and cat[0].row.message_id == "1"
    contract = await log.search("alice", "把上次那份合同发我", now=now)
    assert contract and contract[0].row.message_id == "2"
    plumber = await log.search("alice", "what did I say about the plumber in my voice note?", now=now)
    assert plumber and plumber[0].row.message_id == "3"
    newest_photo = await log.search("alice", "send me the last photo", now=now)
    assert [h.row.message_id for h in newest_photo][:1] == ["1"]
    assert all(h.row.owner == "alice" for h in cat + contract + plumber)


async def test_the_inbox_keeps_media_references_in_their_column(store: MemoryStore) -> None:
    media = '[{"kind": "voice", "file_id": "v1"}]'
    inbox_id = await store.inbox.add("telegram", "42", "u1", '{"text": ""}', T0, media)
    await store.inbox.add("telegram", "42", "u2", '{"text": "hi"}', T0)
    assert await store.inbox.pending() == [
        (inbox_id, '{"text": ""}', media),
        (inbox_id + 1, '{"text": "hi"}', ""),
    ]
    assert await store.inbox.with_media(answered=False) == 1
