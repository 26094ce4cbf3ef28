"""The main model: what one reply request holds, and the models that answer it.

``ChatRequest`` is assembled by the process loop (system prompt, Tier 0 history, the user's words, the
retrieved memories); a ``ChatModel`` turns it into a reply. ``OpenAIChatModel`` speaks to any
OpenAI-compatible endpoint through ``AsyncOpenAI``; ``OfflineChatModel`` (``gateway/offline_chat.py``) is
the labelled local stand-in used without an API key.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import ssl
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from gateway.model_turn import StreamedTurn, StreamFailed, TextSink, Turn, read_stream, turn_of
from gateway.request_json import body_bytes
from memory.records import Retrieved

if TYPE_CHECKING:
    import openai

log = logging.getLogger("tierclaw.gateway")


class ModelError(RuntimeError):
    """The main model could not produce a reply (after the client's own retries).

    ``kind`` says what the person running tierclaw has to do: "auth" (the API key was refused: fix it),
    "not_found" (no such model at that address: fix the name or the URL), "unreachable" (the endpoint did
    not answer: network, address, or an outage), or "" for anything else.
    """

    def __init__(self, message: str, kind: str = "") -> None:
        super().__init__(message)
        self.kind = kind


class ToolBox(Protocol):
    """Tools the main model may call while making one reply (``gateway/memory_tools.py``).

    ``call`` never raises for a bad call: it returns the error as the tool's result.
    """

    max_rounds: int

    def schemas(self) -> list[dict[str, Any]]: ...
    async def call(self, name: str, arguments: str) -> str: ...


@dataclass(slots=True)
class ChatRequest:
    """Everything the main model sees for one reply."""

    system: str
    history: list[tuple[str, str]] = field(default_factory=list)  # (role, content), oldest first
    user_text: str = ""
    memories: list[Retrieved] = field(default_factory=list)
    memory_block: str = ""  # the delimited data block sent with the user message ("" when none)
    tools: ToolBox | None = None  # None: injection only (no tool support, or agent.tools = false)
    images: list[str] = field(default_factory=list)  # data URLs of the message's photos (gateway/media/)
    documents: str = ""  # the text of the message's files, delimited ("" when none)
    # The reply's text so far goes here while the model writes it (gateway/streaming.py); None: whole.
    on_text: TextSink | None = None

    def messages(self) -> list[dict[str, Any]]:
        """Chat-completions messages: system, history, then the user turn with its memory block (and
        its documents' text; its photos as image parts)."""
        out: list[dict[str, Any]] = [{"role": "system", "content": self.system}]
        out.extend({"role": role, "content": content} for role, content in self.history)
        blocks = [block for block in (self.memory_block, self.documents) if block]
        user = "\n\n".join([*blocks, self.user_text])
        if self.images:
            parts = [{"type": "image_url", "image_url": {"url": url}} for url in self.images]
            out.append({"role": "user", "content": [{"type": "text", "text": user}, *parts]})
        else:
            out.append({"role": "user", "content": user})
        return out


class ChatModel(Protocol):
    """Answers one ``ChatRequest``; raises ``ModelError`` when it cannot.

    A model whose ``stand_in`` attribute is true (the offline stand-in) answers with notices, not
    conversation: its replies are shown but never enter history or the extraction buffer.
    """

    @property
    def label(self) -> str:
        """Human-readable name for logs and ``tierclaw status``."""
        ...

    async def reply(self, request: ChatRequest) -> str:
        """The assistant's reply text."""
        ...


def what_to_check(kind: str, url: str, model: str) -> str | None:
    """For the operator's log: what failed and which setting to check, by ``ModelError.kind``."""
    return {
        "auth": f"the API key was refused by {url} — check provider.apiKey",
        "not_found": f"model {model!r} not found at {url} — check agent.model and provider.baseUrl",
        "unreachable": f"couldn't reach {url} — check provider.baseUrl",
        "timeout": f"no answer from {url} for model {model!r} — check that server, provider.timeoutSeconds "
        "and agent.replyDeadline",
    }.get(kind)


class OpenAIChatModel:
    """The main model on any OpenAI-compatible endpoint, through ``openai.AsyncOpenAI``.

    One chat completion per reply (one per round of tool calls; streamed when ``request.on_text`` is
    set): ``request.messages()`` (system, history, user turn with its memory
    block), ``temperature`` and ``max_tokens``. Retries and timeouts are the client's own settings. Any
    SDK error, a malformed response or an empty reply raises ``ModelError``, whose message names the
    cause (status, error code, exception class) but never the API key, the server's error text or the
    conversation. ``openai`` is imported on first use, so importing this module stays cheap.
    """

    def __init__(
        self, client: openai.AsyncOpenAI, model: str, max_tokens: int = 1024, temperature: float = 0.7
    ) -> None:
        if not model:
            raise ValueError("model name must be non-empty")
        if max_tokens <= 0:
            raise ValueError("max_tokens must be positive")
        self._client = client
        self._url: tuple[object, str] | None = None  # (the client's base_url, the endpoint's absolute URL)
        self.model = model
        self.max_tokens = max_tokens
        self.temperature = temperature

    @property
    def label(self) -> str:
        return f"openai:{self.model}"

    async def reply(self, request: ChatRequest) -> str:
        started = time.monotonic()
        messages: list[dict[str, Any]] = list(request.messages())
        tools = request.tools
        rounds = 0
        while True:
            extra: dict[str, Any] = {}
            if tools is not None:
                extra["tools"] = tools.schemas()
                if rounds >= tools.max_rounds:  # the last word: no more calls
                    extra["tool_choice"] = "none"
            turn = await self._turn(messages, extra, request.on_text, started)
            if not turn.tool_calls or tools is None or rounds >= tools.max_rounds:
                break
            rounds += 1
            messages.append(turn.assistant_message())
            calls = turn.tool_calls
            results = await asyncio.gather(*(tools.call(name, arguments) for _, name, arguments in calls))
            messages.extend(
                {"role": "tool", "tool_call_id": call_id, "content": result}
                for (call_id, _, _), result in zip(calls, results, strict=True)
            )
        text = (turn.content or "").strip()
        if not text:
            reason = "empty reply" if turn.content is not None else "response has no message content"
            if turn.finish_reason and turn.finish_reason != "stop":
                reason += f" (finish_reason={turn.finish_reason})"
            raise self._failure(started, reason)
        log.info(
            "[gateway] model %s reply ok: %d messages in, %d tool rounds, %d chars out, %.2fs",
            self.label,
            len(messages),
            rounds,
            len(text),
            time.monotonic() - started,
        )
        return text

    async def _turn(
        self,
        messages: list[dict[str, Any]],
        extra: dict[str, Any],
        on_text: TextSink | None,
        started: float,
    ) -> Turn:
        """One call of the model; streamed (``stream=True``, each delta to ``on_text``) when the reply is
        shown while it is made (gateway/streaming.py). Any failure — midway through a stream too, which
        the SDK raises as a connection or timeout error — raises ``ModelError``."""
        import openai

        from memory.model.openai_model import describe_openai_error, error_kind, hung_up

        try:
            if on_text is None:
                return turn_of(await self._whole(messages, extra))
            # Streamed, the body is asked for with ``client.post`` (the SDK's documented way to make a request
            # it does not type): it still makes the request, retries, and raises its errors for a refused
            # one, but neither rebuilds the request body through the typed parameters (``create`` does:
            # ~4.6 ms for a reply's messages) nor decodes each event into a ``ServerSentEvent`` and a
            # ``json.loads``, four generators deep (~40 µs an event, 12 ms a reply). The events are read
            # from the response's bytes (the stream's public ``response``), which is stable: the format
            # is the W3C's server-sent events, as the API documents (gateway/model_turn.py).
            stream = await self._client.post(
                self._completions_url(),
                cast_to=object,
                content=body_bytes(self._body(messages, extra, stream=True)),
                stream=True,
                stream_cls=openai.AsyncStream[object],
            )
            try:
                return await _read_body(stream.response, on_text)
            finally:  # also when the reply is cancelled midway: the connection is let go cleanly
                await stream.close()
        except openai.OpenAIError as exc:
            if isinstance(exc, openai.APITimeoutError) and hung_up(exc):  # refused or reset, not late
                raise self._failure(started, "connection error", "unreachable") from None
            kind = "timeout" if isinstance(exc, openai.APITimeoutError) else error_kind(exc)
            raise self._failure(started, describe_openai_error(exc), kind) from None
        except ValueError:  # the SDK's json.loads of a 200 body (or of an event) that is not JSON
            raise self._failure(started, "response body is not JSON") from None
        except StreamFailed as exc:  # an error event midway (what the server said is not logged)
            raise self._failure(started, str(exc)) from None

    async def _whole(self, messages: list[dict[str, Any]], extra: dict[str, Any]) -> object:
        """The decoded JSON body of one whole (not streamed) completion; raises the SDK's errors.

        Asked with ``client.post`` as a streamed one is (``_turn`` says why), the JSON taken as it came
        (``cast_to=object``): ``chat.completions.create`` rebuilt the messages through the SDK's typed
        parameters, walking each history message's TypedDicts — the largest share of the gateway's own
        CPU in bench.gateway_throughput (bench/README.md, "Gateway CPU") — then built a ``ChatCompletion``
        to read two fields of. The same body is sent, with the bearer key alone, as ``create`` sends it —
        as the bytes the SDK would encode it to, the tool definitions encoded once (gateway/request_json.py).
        """
        return await self._client.post(
            self._completions_url(),
            cast_to=object,
            content=body_bytes(self._body(messages, extra)),
            options={"security": {"bearer_auth": True}},
        )

    def _completions_url(self) -> str:
        """The chat-completions endpoint as an absolute URL (the client's ``base_url`` and
        ``chat/completions``), made once per base URL: given the path, the SDK parses it and joins it to
        ``base_url`` on every request (``_prepare_url``: ~35–120 µs of the event loop's CPU a request on
        the loaded 2-core machine of bench/README.md's "Gateway CPU", stop 51); an absolute URL it takes
        as it is — the same URL (tests/gateway/test_openai_chat_model.py)."""
        base = self._client.base_url
        if self._url is None or self._url[0] is not base:
            # As the SDK joins them (base_url's raw path, which it keeps ending in "/", + the path).
            self._url = (base, str(base.copy_with(raw_path=base.raw_path + b"chat/completions")))
        return self._url[1]

    def _body(
        self, messages: list[dict[str, Any]], extra: dict[str, Any], stream: bool = False
    ) -> dict[str, Any]:
        """The request body of one completion, whole or streamed (``stream`` only when streamed)."""
        body = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if stream:
            body["stream"] = True
        return {**body, **extra}

    def _failure(self, started: float, reason: str, kind: str = "") -> ModelError:
        """The ``ModelError`` for a failed reply: what failed, after how long, and what to check."""
        elapsed = time.monotonic() - started
        # The caller (Assistant) logs the failure once at ERROR; this adds the timing at DEBUG.
        log.debug("[gateway] model %s reply failed after %.2fs: %s", self.label, elapsed, reason)
        what = what_to_check(kind, str(self._client.base_url), self.model)
        detail = f"{what} ({reason})" if what else reason
        return ModelError(f"main model {self.label} failed after {elapsed:.1f}s: {detail}", kind)


async def _read_body(response: Any, on_text: TextSink) -> Turn:
    """The turn streamed in ``response`` (the HTTP response); a connection that fails or times out
    midway raises the SDK's own ``APIConnectionError`` / ``APITimeoutError``, as its stream would."""
    import openai

    from memory.model.openai_model import hung_up

    # The SDK's HTTP library (httpx, or httpx2 since openai 3) raises its own errors from the body.
    library = importlib.import_module(type(response).__module__.partition(".")[0])
    try:
        return await read_stream(response.aiter_bytes(), StreamedTurn(), on_text)
    except library.TimeoutException as exc:
        if hung_up(exc):  # the aiohttp transport's name for a connection lost midway (model_http.py)
            raise openai.APIConnectionError(request=response.request) from None
        raise openai.APITimeoutError(request=response.request) from None
    except (library.RequestError, ssl.SSLError):
        raise openai.APIConnectionError(request=response.request) from None
