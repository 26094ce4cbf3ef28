"""Photos → a description memory keeps, and whether the main model sees the photo itself.

``provider.vision``: "on" sends images to the main model; "off" never does; "auto" (the default) tries,
and a model that refuses images (HTTP 400 to a request with an image part) is remembered as blind for the
rest of the process, so no later photo waits on that refusal. The description comes from the main model
when it sees, else from ``media.describeModel`` (default: the memory model) when that one sees; without
either the photo is kept undescribed ("kept", found by its caption, name and date).
"""

from __future__ import annotations

import base64
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openai import AsyncOpenAI

log = logging.getLogger("tierclaw.gateway")

DESCRIBE_PROMPT = (
    "Describe this image in one or two plain sentences for the sender's memory, so it can be found again "
    "by what it shows: the main subject, the setting, and any text, names, amounts or dates visible. "
    "Write in {language}. No preamble."
)
MAX_DESCRIPTION = 600


class SeeingError(RuntimeError):
    """A description failed: ``reason`` "blind" (the model refused images), "unreachable" (may pass)."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


def data_url(data: bytes, mime: str) -> str:
    """An image as a ``data:`` URL for an ``image_url`` content part."""
    kind = mime if mime.startswith("image/") and mime != "image/*" else "image/jpeg"
    return f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}"


@dataclass
class Eye:
    """One model that may see: its client, model name and setting ("auto", "on", "off")."""

    client: AsyncOpenAI
    model: str
    setting: str = "auto"

    @property
    def label(self) -> str:
        return f"{self.model} at {self.client.base_url}"


@dataclass
class Vision:
    """The main model's eye and the describing model's, and which models were found blind."""

    main: Eye | None
    describer: Eye | None
    blind: set[str] = field(default_factory=set)  # labels of models that refused an image

    def main_sees(self) -> bool:
        """Whether images go to the main model with the message (after a description proved it)."""
        eye = self.main
        return eye is not None and eye.setting != "off" and eye.label not in self.blind

    async def describe(self, data: bytes, mime: str, chinese: bool) -> tuple[str, bool]:
        """A description of the image and whether the main model made it; ``("", False)`` when no model
        here sees. ``SeeingError("unreachable")`` when the one that should have answered did not."""
        language = "Chinese" if chinese else "English"
        for eye, is_main in ((self.main, True), (self.describer, False)):
            if eye is None or eye.setting == "off" or eye.label in self.blind:
                continue
            if not is_main and self.main is not None and eye.label == self.main.label:
                continue  # the same model refused already
            try:
                return await self._ask(eye, data, mime, language), is_main
            except SeeingError as exc:
                if exc.reason != "blind":
                    raise
                if eye.setting == "on":
                    log.warning("[gateway] %s refused an image although provider.vision is on", eye.label)
                else:
                    log.info("[gateway] %s does not take images; not sending it any more", eye.label)
                self.blind.add(eye.label)
        return "", False

    async def _ask(self, eye: Eye, data: bytes, mime: str, language: str) -> str:
        import openai

        content: list[dict[str, Any]] = [
            {"type": "text", "text": DESCRIBE_PROMPT.format(language=language)},
            {"type": "image_url", "image_url": {"url": data_url(data, mime)}},
        ]
        try:
            response = await eye.client.chat.completions.create(
                model=eye.model,
                messages=[{"role": "user", "content": content}],  # type: ignore[list-item,misc]
                max_tokens=300,
                temperature=0.2,
            )
        except openai.BadRequestError as exc:
            raise SeeingError("blind", f"HTTP {exc.status_code}") from None
        except openai.NotFoundError as exc:
            raise SeeingError("blind", f"HTTP {exc.status_code} (no such model)") from None
        except openai.OpenAIError as exc:
            raise SeeingError("unreachable", type(exc).__name__) from None
        choices = getattr(response, "choices", None) or []
        text = (getattr(getattr(choices[0], "message", None), "content", "") or "") if choices else ""
        return " ".join(str(text).split())[:MAX_DESCRIPTION]
