"""The category of a memory written without one: ``tierclaw memory add`` and ``import``, ``/remember``, the
memory page, the model's ``memory_save`` tool (issue 35, round 2).

Extraction files each fact with the learned head when the shipped embedder is configured
(``memory/model/keeper.py``); a memory written by hand goes the same way, so that "我女儿叫小雨" fades
the same whichever path kept it. A secret's whereabouts is ``credential`` first (a rule can know that);
without the head's embedder, or when it fails, the keyword rule (``memory/text/category.py``) answers.
The one passage vector this costs is the one the write path stores (the embedder's content-hash cache
serves it again).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from memory.head.model import load_head
from memory.model.keeper import head_usable
from memory.text.category import CREDENTIAL, category_for

if TYPE_CHECKING:
    from memory.vectors.usage import MemoryEmbedder

log = logging.getLogger("tierclaw.memory")


async def file_category(text: str, embedder: MemoryEmbedder | None) -> str:
    """Where ``text`` is filed (one of ``memory/text/category.py``'s categories)."""
    keyword = category_for(text)
    if keyword == CREDENTIAL or embedder is None or not head_usable(embedder):
        return keyword
    try:
        vectors = await embedder.embed_passages([text])
    except Exception as exc:  # an embedder failure costs the head, never the write
        log.warning("[memory] the head could not file a memory (%s); keyword rule", type(exc).__name__)
        return keyword
    return load_head().categories(vectors)[0]
