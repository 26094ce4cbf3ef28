"""OpenAIMemoryModel against the local stub with the real AsyncOpenAI client; model_output repairs."""

from __future__ import annotations

import json
import logging
from types import SimpleNamespace

import httpx
import openai
import pytest

from localservers.openai_server import OpenAIStub, StubReply
from memory.model import prompts
from memory.model.openai_model import OpenAIMemoryModel, completion_text, describe_openai_error
from memory.model.output import load_json_object, parse_extraction, parse_fact, parse_facts, parse_profile
from memory.model.protocol import MemoryModelError, Turn
from memory.records import Event, Memory
from memory.retrieval.decay import CATEGORIES
from tests.support.stub_clients import client_for

SECRET_KEY = "sk-secret-KEY-0123456789abcdef"

pytestmark = pytest.mark.usefixtures("close_stub_clients")


def make_model(
    stub: OpenAIStub, *, max_retries: int = 0, timeout: float = 60.0, **kwargs
) -> OpenAIMemoryModel:
    client = client_for(stub, api_key=SECRET_KEY, max_retries=max_retries, timeout=timeout)
    return OpenAIMemoryModel(client, "mem-model", **kwargs)


def turns() -> list[Turn]:
    return [
        Turn("user", "I moved to Lisbon last month.\nAlso: I prefer tea over coffee.", "2024-06-03 09:00:00"),
        Turn("assistant", "Noted! Lisbon is lovely.", "2024-06-03 09:00:05"),
    ]


def event(i: int, summary: str, date: str = "2024-06-02") -> Event:
    return Event(i, "alice", date, "telegram", "42", summary, 100, False, f"{date} 10:00:00")


def memory(
    i: int, content: str, *, tier: int = 2, project: str = "tierclaw", topic: str = "deploy"
) -> Memory:
    stamp = "2024-06-01 10:00:00"
    return Memory(
        i, "alice", tier, project, topic, "decision", content, 0.8, "extraction", None, None, None,
        stamp, stamp, stamp, 0, False, None,
    )  # fmt: skip


def facts_json(*facts: dict, summary: str | None = None) -> str:
    obj: dict = {"facts": list(facts)}
    if summary is not None:
        obj["summary"] = summary
    return json.dumps(obj, ensure_ascii=False)


# --- extract -------------------------------------------------------------------------------------------


async def test_extract_returns_facts_and_summary_and_sends_the_right_request() -> None:
    with OpenAIStub() as stub:
        stub.script(
            facts_json(
                {
                    "content": "The user lives in Lisbon.",
                    "project": "_global",
                    "topic": "home",
                    "category": "identity",
                    "importance": 1.0,
                },
                {"content": "The user prefers tea.", "category": "identity", "importance": 0.9},
                summary="User moved to Lisbon; prefers tea.",
            )
        )
        model = make_model(stub, max_tokens=777)
        result = await model.extract(turns())

        assert [f.content for f in result.facts] == ["The user lives in Lisbon.", "The user prefers tea."]
        assert result.facts[0].topic == "home"
        assert result.facts[1].project == "_global" and result.facts[1].topic == "_general"
        assert all(f.source == "extraction" and f.tier == 2 for f in result.facts)
        assert result.summary == "User moved to Lisbon; prefers tea."

        assert len(stub.requests) == 1
        body = stub.json_requests()[0]
        assert body["model"] == "mem-model"
        assert body["response_format"] == {"type": "json_object"}
        assert body["temperature"] == 0.3
        assert body["max_tokens"] == 777
        assert [m["role"] for m in body["messages"]] == ["system", "user"]
        assert body["messages"][0]["content"] == prompts.EXTRACTION_PROMPT
        user = body["messages"][1]["content"]
        assert "[2024-06-03 09:00:00] user: I moved to Lisbon last month." in user
        assert "\n  Also: I prefer tea over coffee." in user  # continuation lines are indented
        assert "[2024-06-03 09:00:05] assistant: Noted! Lisbon is lovely." in user


async def test_label_and_default_max_tokens() -> None:
    with OpenAIStub() as stub:
        model = make_model(stub)
        assert model.label == "openai:mem-model"
        await model.extract(turns())
        assert stub.requests[0]["max_tokens"] == 2048


async def test_extract_of_nothing_makes_no_call() -> None:
    with OpenAIStub() as stub:
        model = make_model(stub)
        result = await model.extract([])
        assert result.facts == [] and result.summary == ""
        assert await model.compress_events([]) == []
        assert await model.merge_partition([]) == []
        assert await model.refresh_profile([], []) == []
        assert stub.requests == []


async def test_extract_default_stub_reply_is_an_empty_extraction() -> None:
    with OpenAIStub() as stub:
        result = await make_model(stub).extract(turns())
        assert result.facts == [] and result.summary == ""
        assert len(stub.json_requests()) == 1


async def test_chinese_content_round_trips() -> None:
    zh_turns = [Turn("user", "我叫杨洋，是全栈工程师，回复请用中文。", "2024-06-03 09:00:00")]
    with OpenAIStub() as stub:
        stub.script(
            facts_json(
                {"content": "用户名叫杨洋，是全栈工程师", "category": "identity", "importance": 1.0},
                {"content": "用户希望回复使用中文", "topic": "偏好", "category": "config", "importance": 0.9},
                summary="用户介绍了自己并要求用中文回复",
            )
        )
        result = await make_model(stub).extract(zh_turns)
        assert [f.content for f in result.facts] == ["用户名叫杨洋，是全栈工程师", "用户希望回复使用中文"]
        assert result.facts[1].topic == "偏好"
        assert result.summary == "用户介绍了自己并要求用中文回复"
        assert "我叫杨洋，是全栈工程师，回复请用中文。" in stub.requests[0]["messages"][1]["content"]


@pytest.mark.parametrize(
    ("reply", "cause"),
    [
        (StubReply(content="this is not json"), "not valid JSON"),
        (StubReply(content='["a", "b"]'), "not an object"),
        (StubReply(content='{"summary": "no facts key"}'), '"facts"'),
        (StubReply(content='{"facts": "a string", "summary": ""}'), "not a list"),
        (StubReply(content=None), "no message content"),
        (StubReply(content=""), "empty"),
        (StubReply(raw_body="<html>oops</html>"), "not JSON"),
        (
            StubReply(raw_body="<html>oops</html>", headers={"content-type": "text/html"}),
            "no message content",
        ),
        (StubReply(raw_body='{"unexpected": true}'), "no message content"),
        (StubReply(status=500), "HTTP 500"),
        (StubReply(status=429), "HTTP 429"),
        (StubReply(status=400), "BadRequestError"),
    ],
)
async def test_extract_failures_raise_memory_model_error(reply: StubReply, cause: str) -> None:
    with OpenAIStub() as stub:
        stub.script(reply)
        with pytest.raises(MemoryModelError) as info:
            await make_model(stub).extract(turns())
        message = str(info.value)
        assert cause in message
        assert "openai:mem-model" in message and "extract" in message
        assert "Lisbon" not in message and "tea" not in message  # never the conversation
        assert len(stub.requests) == 1  # max_retries=0


async def test_truncated_output_names_max_tokens() -> None:
    body = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "mem-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": '{"facts": [{"content": "The us'},
                "finish_reason": "length",
            }
        ],
    }
    with OpenAIStub() as stub:
        stub.script(StubReply(raw_body=json.dumps(body)))
        with pytest.raises(MemoryModelError, match="max_tokens=99"):
            await make_model(stub, max_tokens=99).extract(turns())


async def test_rate_limit_then_success_uses_the_clients_retry() -> None:
    with OpenAIStub() as stub:
        stub.script(
            StubReply(status=429, headers={"retry-after": "0"}),
            facts_json({"content": "The user lives in Lisbon.", "category": "identity"}, summary="s"),
        )
        result = await make_model(stub, max_retries=1).extract(turns())
        assert [f.content for f in result.facts] == ["The user lives in Lisbon."]
        assert len(stub.requests) == 2
        assert [h["x-stainless-retry-count"] for h in stub.request_headers] == ["0", "1"]


async def test_persistent_rate_limit_fails_after_the_clients_retries() -> None:
    with OpenAIStub(lambda body: StubReply(status=429, headers={"retry-after": "0"})) as stub:
        with pytest.raises(MemoryModelError, match="HTTP 429"):
            await make_model(stub, max_retries=2).extract(turns())
        assert len(stub.requests) == 3


async def test_timeout_raises_memory_model_error() -> None:
    with OpenAIStub() as stub:
        stub.script(StubReply(content='{"facts": []}', delay=3600))
        with pytest.raises(MemoryModelError, match="timed out"):
            await make_model(stub, timeout=0.2).extract(turns())


async def test_connection_refused_raises_memory_model_error() -> None:
    stub = OpenAIStub().start()
    model = make_model(stub)
    stub.stop()
    with pytest.raises(MemoryModelError, match="connection error"):
        await model.extract(turns())


async def test_error_message_never_holds_the_api_key_or_server_text() -> None:
    with OpenAIStub() as stub:
        stub.script(StubReply(status=401, content=f"Incorrect API key provided: {SECRET_KEY}"))
        with pytest.raises(MemoryModelError) as info:
            await make_model(stub).extract(turns())
        assert stub.request_headers[0]["authorization"] == f"Bearer {SECRET_KEY}"  # the key was sent
        err = info.value
        assert "HTTP 401" in str(err)
        assert SECRET_KEY not in str(err) and SECRET_KEY not in repr(err)
        assert "Incorrect API key" not in str(err)
        assert err.__cause__ is None and err.__suppress_context__  # no chained SDK error either


async def test_one_log_line_per_call_without_content_above_debug(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="tierclaw.memory")
    with OpenAIStub() as stub:
        stub.script(
            facts_json({"content": "The user lives in Lisbon."}, summary="Lisbon"), StubReply(status=500)
        )
        model = make_model(stub)
        await model.extract(turns())
        with pytest.raises(MemoryModelError):
            await model.extract(turns())
    records = [r for r in caplog.records if r.name == "tierclaw.memory" and r.levelno >= logging.INFO]
    assert [r.levelno for r in records] == [logging.INFO, logging.WARNING]
    for record in records:
        text = record.getMessage()
        assert text.startswith("[memory]")
        assert "Lisbon" not in text and "tea" not in text
        assert SECRET_KEY not in text
    assert any("Lisbon" in r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG)


# --- compression ---------------------------------------------------------------------------------------


async def test_compress_events_parses_facts_and_sends_the_day() -> None:
    with OpenAIStub() as stub:
        stub.script(
            facts_json(
                {
                    "content": "On 2024-06-02 the user chose Caddy.",
                    "project": "tierclaw",
                    "category": "decision",
                },
                {"content": "", "category": "event"},  # dropped
            )
        )
        facts = await make_model(stub).compress_events(
            [event(1, "Chose Caddy as the reverse proxy."), event(2, "Talked about\nweekend plans.")]
        )
        assert [f.content for f in facts] == ["On 2024-06-02 the user chose Caddy."]
        assert facts[0].source == "compression" and facts[0].project == "tierclaw"
        body = stub.json_requests()[0]
        assert body["messages"][0]["content"] == prompts.DAILY_COMPRESS_PROMPT
        user = body["messages"][1]["content"]
        assert "[2024-06-02 telegram] Chose Caddy as the reverse proxy." in user
        assert "Talked about\n  weekend plans." in user
        assert body["response_format"] == {"type": "json_object"} and body["temperature"] == 0.3


async def test_compress_events_missing_facts_is_an_error() -> None:
    with OpenAIStub() as stub:
        stub.script('{"entries": []}')
        with pytest.raises(MemoryModelError, match="facts"):
            await make_model(stub).compress_events([event(1, "x")])


async def test_merge_partition_keeps_the_partition_and_sends_ids() -> None:
    entries = [memory(11, "Deploy with Docker."), memory(12, "Deploys use docker compose.")]
    with OpenAIStub() as stub:
        stub.script(
            facts_json(
                {
                    "content": "Deploys use Docker Compose.",
                    "project": "other",
                    "topic": "misc",
                    "category": "decision",
                    "importance": 0.8,
                }
            )
        )
        facts = await make_model(stub).merge_partition(entries)
        assert len(facts) == 1
        assert (facts[0].project, facts[0].topic) == ("tierclaw", "deploy")
        assert facts[0].source == "compression" and facts[0].importance == 0.8
        body = stub.json_requests()[0]
        assert body["messages"][0]["content"] == prompts.WEEKLY_MERGE_PROMPT
        user = body["messages"][1]["content"]
        assert "project=tierclaw topic=deploy" in user
        assert "#11 [decision, importance 0.80, 2024-06-01] Deploy with Docker." in user
        assert "#12 " in user


async def test_merge_partition_returning_nothing_is_an_error() -> None:
    with OpenAIStub() as stub:
        stub.script('{"facts": []}')
        with pytest.raises(MemoryModelError, match="no facts"):
            await make_model(stub).merge_partition([memory(1, "a fact")])


async def test_refresh_profile_parses_entries() -> None:
    profile = [memory(1, "The user is called Alice.", tier=1, project="_global", topic="_profile")]
    important = [memory(2, "The user's main editor is Helix.")]
    with OpenAIStub() as stub:
        stub.script(
            json.dumps(
                {
                    "entries": [
                        {"content": "The user is called Alice.", "category": "identity"},
                        {"content": "Main editor: Helix.", "category": "config"},
                        {"content": "Uses 1Password for keys.", "category": "decision"},
                    ]
                }
            )
        )
        entries = await make_model(stub).refresh_profile(profile, important)
        assert [e.content for e in entries] == [
            "The user is called Alice.",
            "Main editor: Helix.",
            "Uses 1Password for keys.",
        ]
        assert [e.category for e in entries] == ["identity", "config", "identity"]
        assert all(
            (e.tier, e.project, e.topic, e.importance, e.source)
            == (1, "_global", "_profile", 1.0, "compression")
            for e in entries
        )
        body = stub.json_requests()[0]
        assert body["messages"][0]["content"] == prompts.PROFILE_PROMPT
        user = body["messages"][1]["content"]
        assert user.index("The user is called Alice.") < user.index("<knowledge_facts>")
        assert user.index("<knowledge_facts>") < user.index("Helix")


async def test_refresh_profile_that_would_wipe_the_profile_is_an_error() -> None:
    profile = [memory(1, "The user is called Alice.", tier=1)]
    with OpenAIStub() as stub:
        stub.script('{"entries": []}', '{"facts": []}')
        model = make_model(stub)
        with pytest.raises(MemoryModelError, match="no entries"):
            await model.refresh_profile(profile, [])
        with pytest.raises(MemoryModelError, match='"entries"'):
            await model.refresh_profile(profile, [])


async def test_refresh_profile_from_facts_only_may_be_empty() -> None:
    with OpenAIStub() as stub:
        stub.script('{"entries": []}')
        assert await make_model(stub).refresh_profile([], [memory(2, "Chose Caddy.")]) == []
        assert len(stub.requests) == 1


# --- helpers -------------------------------------------------------------------------------------------


def test_completion_text_tolerates_malformed_responses() -> None:
    assert completion_text("<html>") == (None, None)
    assert completion_text(object()) == (None, None)

    message = SimpleNamespace(content="hi")
    response = SimpleNamespace(choices=[SimpleNamespace(message=message, finish_reason="length")])
    assert completion_text(response) == ("hi", "length")
    assert completion_text(SimpleNamespace(choices=[])) == (None, None)


def test_describe_openai_error_is_short_and_secret_free() -> None:
    # A real request: openai 3.60 reads its headers when the error is made (request=None no longer works).
    url = "http://127.0.0.1:9/v1/chat/completions"
    request = httpx.Request("POST", url, headers={"Authorization": f"Bearer {SECRET_KEY}"})
    error = openai.APIConnectionError(request=request)
    assert describe_openai_error(error) == "connection error"  # the key the request carried is not in it
    assert describe_openai_error(RuntimeError(SECRET_KEY)) == "RuntimeError"


def test_a_refused_connection_the_aiohttp_transport_calls_a_timeout_is_described_as_one() -> None:
    # The SDK's aiohttp transport (gateway/model_http.py) raises APITimeoutError for every connection
    # error: the memory model's log line still says what happened.
    import aiohttp
    import httpx2 as httpx

    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")

    def timeout_from(cause: BaseException) -> openai.APITimeoutError:
        try:
            try:
                raise cause
            except Exception as inner:
                raise openai.APITimeoutError(request=request) from inner
        except openai.APITimeoutError as outer:
            return outer

    assert describe_openai_error(timeout_from(aiohttp.ServerDisconnectedError())) == "connection error"
    assert describe_openai_error(timeout_from(aiohttp.ServerTimeoutError("late"))) == "request timed out"


# --- model_output --------------------------------------------------------------------------------------


def test_load_json_object_accepts_fences_and_surrounding_prose() -> None:
    assert load_json_object('```json\n{"facts": []}\n```') == {"facts": []}
    assert load_json_object('```\n{"a": 1}\n```') == {"a": 1}
    assert load_json_object('Here it is:\n```json\n{"a": 2}\n```\nDone.') == {"a": 2}
    assert load_json_object('Sure! {"a": 3} hope that helps') == {"a": 3}
    assert load_json_object('  \ufeff{"a": 4}  ') == {"a": 4}


@pytest.mark.parametrize("text", ["", "   ", "nope", "[1, 2]", '"a string"', "{broken", None, 42])
def test_load_json_object_rejects_non_objects(text: object) -> None:
    with pytest.raises(MemoryModelError):
        load_json_object(text)  # type: ignore[arg-type]


def test_parse_fact_repairs_and_defaults() -> None:
    fact = parse_fact(
        {"content": "  The user\n uses  Helix.  ", "category": "Decision", "importance": "0.75"}, source="x"
    )
    assert fact is not None
    assert fact.content == "The user uses Helix."
    assert (fact.project, fact.topic, fact.category, fact.importance) == (
        "_global",
        "_general",
        "decision",
        0.75,
    )
    assert fact.source == "x" and fact.tier == 2

    def fact_of(**fields) -> object:
        return parse_fact({"content": "c", **fields})

    assert fact_of(category="gossip").category == "event"
    assert fact_of(category=None).category == "event"
    assert fact_of(importance=1.7).importance == 1.0
    assert fact_of(importance=-3).importance == 0.0
    assert fact_of(importance="high").importance == 0.5
    assert fact_of(importance=True).importance == 0.5
    assert fact_of(importance=[1]).importance == 0.5
    assert fact_of(importance=float("nan")).importance == 0.5
    assert fact_of(project="", topic="  ").project == "_global"
    assert fact_of(project="", topic="  ").topic == "_general"
    assert fact_of(project=7).project == "_global"
    assert fact_of(subject="user", predicate="lives_in").predicate == "lives_in"
    assert len(parse_fact({"content": "x" * 900}).content) == 500  # type: ignore[union-attr]
    assert parse_fact("a bare string fact").content == "a bare string fact"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "item", [{"content": ""}, {"content": "   "}, {"content": 12}, {"x": "y"}, None, 5, []]
)
def test_parse_fact_drops_unusable_items(item: object) -> None:
    assert parse_fact(item) is None


def test_parse_facts_survives_bad_items_and_uses_source() -> None:
    text = json.dumps(
        {
            "facts": [
                {"content": "good one", "category": "solution", "importance": 0.7},
                {"content": None},
                "bare",
                17,
                {"content": "GOOD ONE"},  # a repeat
                {"content": "NaN importance", "importance": "NaN"},
            ]
        }
    )
    facts = parse_facts(text)
    assert [f.content for f in facts] == ["good one", "bare", "NaN importance"]
    assert all(f.source == "compression" for f in facts)
    assert facts[2].importance == 0.5
    assert parse_facts('{"items": [{"content": "a"}]}', key="items", source="s")[0].source == "s"
    with pytest.raises(MemoryModelError):
        parse_facts('{"facts": {"content": "a"}}')
    with pytest.raises(MemoryModelError):
        parse_facts('{"summary": "x"}')


def test_parse_extraction_summary_rules() -> None:
    assert parse_extraction('{"facts": []}').summary == ""
    assert parse_extraction('{"facts": [], "summary": 5}').summary == ""
    assert parse_extraction('{"facts": [], "summary": " s \\n t "}').summary == "s t"
    extraction = parse_extraction('```json\n{"facts": [{"content": "a"}], "summary": "b"}\n```')
    assert [f.source for f in extraction.facts] == ["extraction"]
    with pytest.raises(MemoryModelError):
        parse_extraction('{"summary": "only"}')


def test_parse_profile_defaults_and_limits() -> None:
    entries = [{"content": f"entry {i}", "category": "config"} for i in range(130)]
    entries[0] = {"content": "weird", "category": "event", "importance": 0.4}
    facts = parse_profile(json.dumps({"entries": entries}))
    assert len(facts) == 100
    assert (facts[0].category, facts[0].importance) == ("identity", 0.4)
    assert all(
        (f.tier, f.project, f.topic, f.source) == (1, "_global", "_profile", "compression") for f in facts
    )
    assert facts[1].importance == 1.0 and facts[1].category == "config"
    with pytest.raises(MemoryModelError):
        parse_profile('{"facts": []}')


def test_prompts_name_every_category_and_the_language_rule() -> None:
    for category in CATEGORIES:
        assert category in prompts.EXTRACTION_PROMPT
        assert category in prompts.DAILY_COMPRESS_PROMPT
    assert "Chinese" in prompts.EXTRACTION_PROMPT
    assert "USER stated or confirmed" in prompts.EXTRACTION_PROMPT
    assert '"summary"' in prompts.EXTRACTION_PROMPT and '"facts"' in prompts.WEEKLY_MERGE_PROMPT
    assert '"entries"' in prompts.PROFILE_PROMPT and "identity, config, credential" in prompts.PROFILE_PROMPT
    for prompt in (prompts.EXTRACTION_PROMPT, prompts.DAILY_COMPRESS_PROMPT, prompts.WEEKLY_MERGE_PROMPT):
        assert "%s" not in prompt and "{}" not in prompt


def test_an_extraction_with_nothing_usable_is_a_failure_not_a_silent_drop() -> None:
    with pytest.raises(MemoryModelError, match="none of the 2 facts"):
        parse_extraction('{"facts": [{"content": ""}, 42], "summary": ""}')
    # Said plainly: nothing to remember.
    assert parse_extraction('{"facts": [], "summary": ""}').facts == []
    # Something usable survives the bad items.
    kept = parse_extraction('{"facts": [{"content": ""}], "summary": "talked about the weather"}')
    assert kept.facts == [] and kept.summary == "talked about the weather"
