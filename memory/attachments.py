"""The attachment memory ("sensory memory"): the voice notes, photos and files a person sent, with what was
heard, seen or read in them, kept per owner and found again by what they hold ("send me that cat photo
again", "把上次那份合同发我"; README.md, "Voice notes, photos and files").

Each attachment is indexed the Chinese-correct way memories and turns are (jieba search mode + stemming,
``memory/text/tokenizer.py``) over its file name, caption, description, transcription, tags and extracted
text — the whole text, however long. A search ranks the full-text candidates by the share of the ask's
words (everyday relations included: ``retrieval/relations.py``) each holds, then prefers the kind the ask
names (a photo, a voice note, a file) and the time it names ("last week", "上周"); words that only ask for
something back ("send", "again", "发我") are not searched for. An ask that names a kind or a time and no
content ("send me the last photo") gets the newest attachments of that kind or time.

The bytes are kept in the database beside the row (``store/attachments.py``), up to the size the gateway
allows (``media.maxBytes``), so every replica can send the file back and ``tierclaw memory copy`` carries
it; ``forget`` deletes the row and the bytes.
"""

from __future__ import annotations

import builtins
import hashlib
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from memory.clock import to_db, utcnow
from memory.retrieval.relations import expand
from memory.store.attachments import AttachmentRow, NewAttachment, UnderstoodRow
from memory.store.protocol import MemoryStore
from memory.text import tokenizer
from memory.text.script import to_simplified
from memory.text.timeref import find_window
from memory.writes import check_owner

__all__ = ["AttachmentHit", "AttachmentLog", "NewAttachment", "Understanding", "kinds_named", "search_text"]

# What an ask calls each kind of attachment, in both languages (general vocabulary, not a test set's).
KIND_WORDS: dict[str, tuple[str, ...]] = {
    "photo": (
        "photo",
        "picture",
        "pic",
        "image",
        "screenshot",
        "snapshot",
        "selfie",
        "照片",
        "图片",
        "相片",
        "截图",
        "图",
        "自拍",
    ),
    "voice": ("voice", "voice note", "voice message", "recording", "audio", "memo", "语音", "录音", "音频"),
    "document": (
        "file",
        "document",
        "doc",
        "pdf",
        "docx",
        "spreadsheet",
        "attachment",
        "文件",
        "文档",
        "附件",
        "表格",
    ),
    "video": ("video", "clip", "视频", "录像"),
}
# The kinds each family covers (Telegram's and Feishu's names).
KIND_FAMILIES = {
    "photo": frozenset({"photo", "image"}),
    "voice": frozenset({"voice", "audio", "video_note"}),
    "document": frozenset({"document", "file"}),
    "video": frozenset({"video", "video_note"}),
}
# Words that only ask for something back: not searched for.
_REQUEST_WORDS = re.compile(
    r"\b(?:send|resend|forward|share|show|give|find|get|again|back|please|me|that|the|one|last|latest|"
    r"recent|earlier|previous|from|my)\b|再发|重发|发给我|发我|发一下|给我|找一下|找到|那张|那份|那个|那段|"
    r"上次|之前|刚才|最近|一下|再|请",
    re.I,
)
_ENGLISH_KIND = {w: k for k, ws in KIND_WORDS.items() for w in ws if w.isascii()}
_CHINESE_KIND = {w: k for k, ws in KIND_WORDS.items() for w in ws if not w.isascii()}
_WORD = re.compile(r"[a-z]+")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_KIND_PHRASES = re.compile(
    "|".join(sorted((re.escape(w) for ws in KIND_WORDS.values() for w in ws), key=len, reverse=True)), re.I
)
LANGUAGE_BONUS = 0.05  # the attachment's words are in the ask's language
CANDIDATES = 40
KIND_BONUS = 0.3  # the ask names this attachment's kind
WINDOW_BONUS = 0.3  # it was kept in the time the ask names
RECENCY_WEIGHT = 0.05  # the newest candidate gets this much more than the oldest


def kinds_named(text: str) -> frozenset[str]:
    """The attachment kinds (families: photo, voice, document, video) ``text`` names."""
    lowered = text.lower()
    words = set(_WORD.findall(lowered))
    found = {k for w, k in _ENGLISH_KIND.items() if (w in words if " " not in w else w in lowered)}
    found |= {k for w, k in _CHINESE_KIND.items() if w in text}
    if "photo" in found and "图" in text and any(w in text for w in ("文件", "表格")):
        found.discard("photo")  # 图表 of a file is not a photo
    return frozenset(found)


def search_text(name: str, caption: str, *parts: str) -> str:
    """The indexed text of an attachment from its name, caption, description, transcription and extracted
    text (a name's separators split its words: "rent_contract-2026.pdf"). The Han characters of the short
    fields are indexed one by one as well: an ask names a thing by one character as often as by the word
    the text uses ("猫" for "橘猫", "票" for "罚单"), and jieba keeps a two-character word whole."""
    short = " ".join([re.sub(r"[_\-.]+", " ", name), caption, *parts[:2]])
    words = " ".join(p for p in (short, *parts[2:]) if p)
    singles = dict.fromkeys(_HAN.findall(to_simplified(short)))
    return " ".join(t for t in (tokenizer.index_text(words), " ".join(singles)) if t)


@dataclass(slots=True)
class Understanding:
    """What understanding made of an attachment; ``status``: "understood" (heard, seen or read), "kept"
    (kept without being understood: no model for it), "failed" (it could not be fetched or read)."""

    status: str
    description: str = ""
    transcription: str = ""
    extracted_text: str = ""
    mime: str = ""
    data: bytes | None = None  # the bytes to keep (None: not kept)


@dataclass(slots=True)
class AttachmentHit:
    """One attachment found by a search, with its score (higher is better)."""

    row: AttachmentRow
    score: float


class AttachmentLog:
    """Keeps, finds, sends back and forgets a person's attachments (``engine.attachments``)."""

    def __init__(self, store: MemoryStore) -> None:
        self._rows = store.attachments

    async def keep(self, owner: str, new: NewAttachment, now: datetime | None = None) -> tuple[int, bool]:
        """Keep an attachment as it arrives (before it is understood); (id, whether it is new). The same
        part of a message kept again (answered again after a crash) is the same row."""
        check_owner(owner)
        if not new.search_text:
            new.search_text = search_text(new.file_name, new.caption)
        return await self._rows.add(owner, new, to_db(now or utcnow()))

    async def understood(self, owner: str, row: AttachmentRow, found: Understanding) -> None:
        """Record what was heard, seen or read (indexed in full) and keep the bytes when given."""
        data = found.data
        size = len(data) if data is not None else row.size
        digest = hashlib.sha256(data).hexdigest() if data is not None else row.sha256
        indexed = search_text(
            row.file_name, row.caption, found.description, found.transcription, found.extracted_text
        )
        stored = UnderstoodRow(
            found.description,
            found.transcription,
            found.extracted_text,
            found.status,
            indexed,
            size,
            found.mime or row.mime,
            digest,
        )
        await self._rows.understood(owner, row.id, stored)
        if data:
            await self._rows.put_bytes(row.id, data)

    async def get(self, owner: str, attachment_id: int) -> AttachmentRow | None:
        """One of the owner's attachments (another owner's id is None)."""
        return await self._rows.get(owner, attachment_id)

    async def file_bytes(self, owner: str, attachment_id: int) -> bytes | None:
        """The kept bytes of one of the owner's attachments."""
        return await self._rows.get_bytes(owner, attachment_id)

    async def has_bytes(self, owner: str, ids: builtins.list[int]) -> set[int]:
        """Which of these attachments have their bytes kept."""
        return await self._rows.kept_bytes(owner, ids)

    async def full_text(self, owner: str, attachment_id: int) -> str:
        """The whole extracted text of one attachment."""
        return await self._rows.full_text(owner, attachment_id)

    async def set_file_key(self, owner: str, attachment_id: int, file_key: str) -> None:
        """The platform's newer id of the file (Telegram: an upload's file_id)."""
        await self._rows.set_file_key(owner, attachment_id, file_key)

    async def link_memories(self, owner: str, attachment_id: int, memory_ids: builtins.list[int]) -> None:
        """Memories the attachment gave rise to."""
        await self._rows.link_memories(owner, attachment_id, memory_ids)

    async def list(
        self,
        owner: str,
        *,
        kind: str | None = None,
        direction: str | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> builtins.list[AttachmentRow]:
        """The owner's attachments, newest first."""
        check_owner(owner)
        return await self._rows.list(
            owner, kind=kind, direction=direction, since=since, until=until, limit=limit, offset=offset
        )

    async def count(self, owner: str | None = None) -> int:
        """How many attachments one owner (or everyone) has."""
        return await self._rows.count(owner)

    async def forget(self, owner: str, attachment_id: int) -> bool:
        """Delete one attachment and its bytes for good; False when the owner has no such attachment."""
        check_owner(owner)
        return await self._rows.delete(owner, attachment_id)

    async def search(
        self, owner: str, query: str, *, k: int = 5, now: datetime | None = None, direction: str = "in"
    ) -> builtins.list[AttachmentHit]:
        """The owner's attachments an ask means, best first (see the module doc)."""
        check_owner(owner)
        now = now or utcnow()
        window, rest = find_window(query, now)
        families = kinds_named(rest)
        content = _KIND_PHRASES.sub(" ", _REQUEST_WORDS.sub(" ", rest))
        terms = tuple(t for t in tokenizer.query_terms(content) if not _is_kind_word(t))
        chinese = tokenizer.is_mostly_chinese(query)
        groups = expand(content.lower(), terms)
        searched = list(dict.fromkeys(t for group in groups for t in group))
        rows = {
            row.id: (row, score, indexed)
            for row, score, indexed in await self._rows.matches(owner, searched, limit=CANDIDATES)
        }
        if not searched or len(rows) < k:  # "the last photo": the newest of that kind or time
            since, until = _bounds(window)
            newest = await self._rows.list(
                owner, direction=direction, since=since, until=until, limit=CANDIDATES
            )
            for row in newest:
                rows.setdefault(row.id, (row, 0.0, search_text(row.file_name, row.caption, row.description)))
        hits = [
            AttachmentHit(row, _score(row, indexed, groups, families, window, chinese))
            for row, _bm25, indexed in rows.values()
            if row.direction == direction
        ]
        _add_recency(hits)
        hits.sort(key=lambda h: (-h.score, -h.row.id))
        return [h for h in hits if h.score > 0][:k]


def _is_kind_word(term: str) -> bool:
    return (
        term in _ENGLISH_KIND
        or term in _CHINESE_KIND
        or tokenizer.stem(term) in {tokenizer.stem(w) for w in _ENGLISH_KIND}
    )


def _bounds(window: object) -> tuple[str | None, str | None]:
    if window is None:
        return None, None
    start, end = window.start, window.end  # type: ignore[attr-defined]
    return to_db(datetime(start.year, start.month, start.day)), to_db(
        datetime(end.year, end.month, end.day) + timedelta(days=1)
    )


def _score(
    row: AttachmentRow,
    indexed: str,
    groups: tuple[tuple[str, ...], ...],
    families: frozenset[str],
    window: object,
    chinese: bool,
) -> float:
    """The share of the ask's word groups the attachment holds, plus the kind and time it names, and a
    little for being in the ask's language (a cross-language match counts, the same-language one first)."""
    words = set(indexed.split())
    coverage = sum(1 for group in groups if any(t in words for t in group)) / len(groups) if groups else 0.0
    kind_named = bool(families) and any(row.kind in KIND_FAMILIES[f] for f in families)
    since, until = _bounds(window)
    in_window = bool(since and until and since <= row.created_at < until)
    if coverage == 0 and not kind_named and not in_window:
        return 0.0  # nothing of what was asked
    if coverage == 0 and ((families and not kind_named) or (since and not in_window)):
        return 0.0  # only the kind or the time was asked, and this is another
    score = coverage + (KIND_BONUS if kind_named else 0.0) + (WINDOW_BONUS if in_window else 0.0)
    text = row.transcription or row.description or row.caption or row.file_name
    if text and tokenizer.is_mostly_chinese(text) == chinese:
        score += LANGUAGE_BONUS
    return score


def _add_recency(hits: builtins.list[AttachmentHit]) -> None:
    """A little more for newer attachments, so the latest of equals comes first ("上次那份")."""
    if len(hits) < 2:
        return
    order = sorted(hits, key=lambda h: (h.row.created_at, h.row.id))
    for rank, hit in enumerate(order):
        if hit.score > 0:
            hit.score += RECENCY_WEIGHT * rank / (len(order) - 1)
