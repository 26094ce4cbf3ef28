"""``OpenAIMemoryModel``: the memory model on any OpenAI-compatible endpoint.

Each protocol method is ONE chat completion: a system message with the task's instructions
(``memory/prompts.py``), a user message with the data, ``response_format={"type": "json_object"}``,
``temperature=0.3`` and ``max_tokens``. The answer is parsed by ``memory/model_output.py``.

Retries and timeouts are the ``AsyncOpenAI`` client's own (``max_retries``, ``timeout``), set by whoever
builds the client. Once they are used up, every failure — HTTP error, timeout, connection error, a body
that is not a chat completion, unusable JSON — becomes ``MemoryModelError``, whose message names the
cause (status, error code, exception class) and never holds the API key, the server's error text or
the conversation. One ``[memory]`` log line per call; content is logged only at DEBUG.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from typing import Any, TypeVar

import openai

from memory.model import prompts
from memory.model.output import load_json_object, parse_extraction, parse_facts, parse_profile
from memory.model.protocol import Extraction, MemoryModelError, Turn
from memory.records import Event, Fact, Memory

log = logging.getLogger("tierclaw.memory")

TEMPERATURE = 0.3
T = TypeVar("T")
_SAFE_TOKEN = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


def hung_up(exc: BaseException) -> bool:
    """Whether a timeout error of the SDK (or of its HTTP library) is really aiohttp's connection error
    — refused, reset, the server gone — and not a timeout (``ServerTimeoutError`` and its kinds are
    timeouts): the SDK's aiohttp transport (gateway/model_http.py) reports every aiohttp connection error
    as a timeout. The cause chain is searched."""
    import aiohttp

    seen: BaseException | None = exc
    for _ in range(8):  # the chain is SDK error -> httpx's error -> aiohttp's; a bound, never a loop
        if seen is None:
            return False
        lost = isinstance(seen, aiohttp.ClientConnectionError)
        if lost and not isinstance(seen, aiohttp.ServerTimeoutError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def describe_openai_error(exc: BaseException) -> str:
    """A short, secret-free description of an openai SDK failure (never the server's message text)."""
    if isinstance(exc, openai.APITimeoutError):
        return "connection error" if hung_up(exc) else "request timed out"
    if isinstance(exc, openai.APIConnectionError):
        return "connection error"
    if isinstance(exc, openai.APIStatusError):
        parts = [f"HTTP {exc.status_code}", type(exc).__name__]
        code = getattr(exc, "code", None)
        if isinstance(code, str) and _SAFE_TOKEN.match(code):
            parts.append(f"code={code}")
        return " ".join(parts)
    if isinstance(exc, openai.APIResponseValidationError):
        return "response failed validation"
    return type(exc).__name__


def error_kind(exc: BaseException) -> str:
    """What an openai SDK failure asks of the operator: "auth", "not_found", "unreachable" or ""."""
    if isinstance(exc, openai.APIConnectionError):  # timeouts are connection errors too
        return "unreachable"
    if isinstance(exc, openai.APIStatusError):
        if exc.status_code in (401, 403):
            return "auth"
        if exc.status_code == 404:
            return "not_found"
    return ""


def completion_text(response: Any) -> tuple[str | None, str | None]:
    """``(content, finish_reason)`` of the first choice, tolerating malformed responses.

    The SDK hands back a plain ``str`` when the body is not ``application/json``, and a
    ``ChatCompletion`` with ``choices=None`` or ``[]`` for a JSON body of another shape; all of these
    yield ``(None, None)``.
    """
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        return None, None
    choice = choices[0]
    finish = getattr(choice, "finish_reason", None)
    content = getattr(getattr(choice, "message", None), "content", None)
    return (content if isinstance(content, str) else None), (finish if isinstance(finish, str) else None)


class OpenAIMemoryModel:
    """The ``MemoryModel`` protocol over ``openai.AsyncOpenAI`` chat completions in JSON-object mode.

    ``max_tokens`` is sent as ``max_tokens``: OpenAI's reasoning models (o1/o3 family, some gpt-5
    variants) reject it in favour of ``max_completion_tokens``; pick a model that accepts it (every
    OpenAI-compatible server does) or extend this class.
    """

    def __init__(self, client: openai.AsyncOpenAI, model: str, max_tokens: int = 2048) -> None:
        if not model:
            raise ValueError("model name must be non-empty")
        if max_tokens <= 0:
            raise ValueError("max_tokens must be positive")
        self._client = client
        self.model = model
        self.max_tokens = max_tokens

    @property
    def label(self) -> str:
        return f"openai:{self.model}"

    async def extract(self, turns: list[Turn]) -> Extraction:
        """Facts the user stated and a summary, from a batch of buffered turns."""
        if not turns:
            return Extraction()
        return await self._call(
            "extract",
            prompts.EXTRACTION_PROMPT,
            prompts.extraction_input(turns),
            len(turns),
            lambda text: parse_extraction(text, source="extraction"),
        )

    async def compress_events(self, events: list[Event]) -> list[Fact]:
        """A day's Tier 3 summaries distilled into Tier 2 facts (source "compression")."""
        if not events:
            return []
        return await self._call(
            "compress_events",
            prompts.DAILY_COMPRESS_PROMPT,
            prompts.daily_compress_input(events),
            len(events),
            lambda text: parse_facts(text, source="compression"),
        )

    async def merge_partition(self, memories: list[Memory]) -> list[Fact]:
        """One partition's entries merged; the result keeps that partition's project and topic.

        An empty answer for a non-empty partition is treated as invalid output (the caller would archive
        every entry and write nothing), so it raises ``MemoryModelError``.
        """
        if not memories:
            return []
        partitions = {(m.project, m.topic) for m in memories}

        def parse(text: str) -> list[Fact]:
            if len(partitions) != 1:
                facts = parse_facts(text, source="compression")
            else:
                ((project, topic),) = partitions
                facts = parse_facts(text, source="compression", default_project=project, default_topic=topic)
                for fact in facts:  # merging never moves information out of its partition
                    fact.project, fact.topic = project, topic
            if not facts:
                raise MemoryModelError("no facts for a non-empty partition")
            return facts

        return await self._call(
            "merge_partition",
            prompts.WEEKLY_MERGE_PROMPT,
            prompts.weekly_merge_input(memories),
            len(memories),
            parse,
        )

    async def refresh_profile(self, profile: list[Memory], important: list[Memory]) -> list[Fact]:
        """The new Tier 1 profile (tier 1, "_global"/"_profile", importance 1.0, source "compression").

        An empty answer while the current profile is not empty raises ``MemoryModelError`` (it would
        wipe the profile); with nothing to work from, no call is made and ``[]`` is returned.
        """
        if not profile and not important:
            return []

        def parse(text: str) -> list[Fact]:
            entries = parse_profile(text, source="compression")
            if profile and not entries:
                raise MemoryModelError("no entries for a non-empty profile")
            return entries

        return await self._call(
            "refresh_profile",
            prompts.PROFILE_PROMPT,
            prompts.profile_input(profile, important),
            len(profile) + len(important),
            parse,
        )

    async def update_scratchpad(self, current: str, turns: list[Turn]) -> str:
        """The whole new note (``{"scratchpad": "..."}``); no call without turns."""
        if not turns:
            return current

        def parse(text: str) -> str:
            value = load_json_object(text).get("scratchpad")
            if not isinstance(value, str):
                raise MemoryModelError('no "scratchpad" text in the model output')
            return value

        return await self._call(
            "update_scratchpad",
            prompts.SCRATCHPAD_PROMPT,
            prompts.scratchpad_input(current, turns),
            len(turns),
            parse,
        )

    # --- one call ------------------------------------------------------------------------------------

    async def _call(self, task: str, system: str, user: str, items: int, parse: Callable[[str], T]) -> T:
        """One JSON-object completion, parsed; exactly one log line; ``MemoryModelError`` on any failure."""
        started = time.monotonic()

        def fail(reason: str) -> MemoryModelError:
            log.warning(
                "[memory] model %s %s failed after %.2fs: %s",
                self.label,
                task,
                time.monotonic() - started,
                reason,
            )
            return MemoryModelError(f"memory model {self.label} {task} failed: {reason}")

        log.debug("[memory] model %s %s input: %s", self.label, task, user)
        try:
            response = await self._client.chat.completions.create(
                model=self.model,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                response_format={"type": "json_object"},
                temperature=TEMPERATURE,
                max_tokens=self.max_tokens,
            )
        except openai.OpenAIError as exc:
            raise fail(describe_openai_error(exc)) from None
        except ValueError:  # the SDK's json.loads of a 200 body that is not JSON
            raise fail("response body is not JSON") from None
        content, finish = completion_text(response)
        if content is None:
            raise fail("response has no message content")
        log.debug("[memory] model %s %s output: %s", self.label, task, content)
        try:
            result = parse(content)
        except MemoryModelError as exc:
            reason = f"invalid output: {exc}"
            if finish == "length":
                reason += f" (cut off at max_tokens={self.max_tokens})"
            raise fail(reason) from None
        log.info(
            "[memory] model %s %s ok: %d items in, %d chars out, %.2fs",
            self.label,
            task,
            items,
            len(content),
            time.monotonic() - started,
        )
        return result
