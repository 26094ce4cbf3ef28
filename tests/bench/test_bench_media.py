"""bench.media's inputs, without running the gateway (the bench itself takes a minute or two): every
attachment of the set becomes a file the stand-ins understand as the set says, the hold-out asks name
attachments that exist, each bad input is what its name says, and the stand-in model's tool calls."""

from __future__ import annotations

import json

from bench.media_cases import HOLDOUT, ToolModel, bad_inputs, load_cases
from gateway.media.documents import Unreadable, read_text, sniff
from localservers.openai_audio import describe_image, heard_in_wav


def test_the_set_is_72_attachments_half_per_language_and_kind_mixed() -> None:
    cases = load_cases()
    assert len(cases) == 72 and sum(c.lang == "en" for c in cases) == 36
    assert {c.kind for c in cases} == {"photo", "voice", "document"}
    assert {c.channel for c in cases} == {"telegram", "feishu"}
    assert len({c.ask for c in cases}) == 72


def test_each_file_holds_what_the_set_says() -> None:
    for case in load_cases():
        if case.kind == "voice":
            assert heard_in_wav(case.data) == case.content
        elif case.kind == "photo":
            assert describe_image(case.data) == case.content
        else:
            text = read_text(case.data, sniff(case.data, case.mime, case.name)).text
            assert " ".join(case.content.split()) in " ".join(text.split()), case.id


def test_the_holdout_asks_name_attachments_of_the_set_in_both_languages() -> None:
    asks = json.loads(HOLDOUT.read_text(encoding="utf-8"))["asks"]
    ids = {c.id for c in load_cases()}
    assert set(asks) <= ids and sum(k.startswith("zh") for k in asks) == 18 == sum(
        k.startswith("en") for k in asks
    )
    held = load_cases(holdout=True)
    assert {c.id for c in held if c.ask} == set(asks)


def test_bad_inputs_are_what_they_say() -> None:
    items = {item.name: item for item in bad_inputs(20 * 1024 * 1024)}
    assert len(items) == 9 and items["zero bytes"].data == b""
    assert items["21 MB"].size == 21 * 1024 * 1024
    for name, reason in (
        ("encrypted pdf", "encrypted"),
        ("image-only pdf", "no_text"),
        ("docx zip bomb", "zip_bomb"),
    ):
        item = items[name]
        try:
            read_text(item.data, sniff(item.data, item.mime, item.file_name))
        except Unreadable as exc:
            assert exc.reason == reason
        else:
            raise AssertionError(f"{name} was read")


def test_the_stand_in_model_searches_with_the_ask_and_sends_the_top_hit() -> None:
    model = ToolModel({"send the cat photo"})
    first = model({"messages": [{"role": "user", "content": "send the cat photo"}], "tools": [{}]})
    assert first.tool_calls == [("attachment_search", json.dumps({"query": "send the cat photo"}))]
    found = {"role": "tool", "content": json.dumps({"results": [{"id": 7}, {"id": 3}]})}
    second = model({"messages": [{"role": "user", "content": "send the cat photo"}, found]})
    assert second.tool_calls == [("attachment_send", json.dumps({"id": 7}))]
    assert model.found == {"send the cat photo": [7, 3]} and model.sends == {"send the cat photo": 7}
    assert model({"messages": [{"role": "user", "content": "hello"}]}) is None
