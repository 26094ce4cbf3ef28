"""A long document → the few sentences memory keeps of it (the memory model; the whole text stays
searchable). One plain completion; any failure leaves the document's first lines as its summary
(``service.MediaService._summary``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openai import AsyncOpenAI

PROMPT = (
    "Summarise this document in at most three sentences for its owner's memory: what it is, who and what "
    "it concerns, and any dates, amounts or names that matter. Write in {language}. No preamble.\n\n{text}"
)
INPUT_CHARS = 12_000  # of the document the summary is made from
MAX_SUMMARY = 600


@dataclass
class Summariser:
    """The memory model, summarising."""

    client: AsyncOpenAI
    model: str

    async def summarise(self, text: str, chinese: bool) -> str:
        response = await self.client.chat.completions.create(
            model=self.model,
            messages=[
                {
                    "role": "user",
                    "content": PROMPT.format(
                        language="Chinese" if chinese else "English", text=text[:INPUT_CHARS]
                    ),
                }
            ],
            max_tokens=300,
            temperature=0.2,
        )
        choices = getattr(response, "choices", None) or []
        content = getattr(getattr(choices[0], "message", None), "content", "") if choices else ""
        return " ".join(str(content or "").split())[:MAX_SUMMARY]
