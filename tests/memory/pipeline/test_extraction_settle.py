"""``ExtractionService.settle``: an extraction made due is done when it returns; one not due is left alone.

``bench/conversation_recall.py`` calls it after every message so two runs see the same memories.
"""

from __future__ import annotations

from memory.engine import MemoryEngine
from memory.pipeline.buffer import ExtractionBuffer
from memory.pipeline.extraction import ExtractionService, ExtractionSettings
from tests.memory.pipeline.test_extraction import OWNER, ScriptedModel, _record


def _service(engine: MemoryEngine, model: ScriptedModel) -> ExtractionService:
    # A poll interval far beyond the test: only ``settle`` (or a due time set by this process) starts work.
    settings = ExtractionSettings(quiet_gap=3600, poll_interval=3600)
    return ExtractionService(engine, ExtractionBuffer(engine.store.buffer), model, settings)


async def test_settle_extracts_an_owner_due_now_before_it_returns(engine: MemoryEngine) -> None:
    model = ScriptedModel()
    service = _service(engine, model)
    try:
        await _record(service, "user", "My sister lives in Valencia")
        await _record(service, "assistant", "Nice.")
        # Due now on the store's clock, set behind this process's back (another replica's budget, say):
        # the poll would only see it at its next interval.
        assert await engine.store.extraction_due.push(OWNER, 0, 3600)
        await service.settle()
        assert len(model.calls) == 1
        assert (await engine.stats())["buffered_turns"] == 0
        assert [m.content for m in await engine.list(OWNER)] == ["My sister lives in Valencia"]
    finally:
        await service.close()


async def test_settle_leaves_an_owner_inside_the_quiet_gap(engine: MemoryEngine) -> None:
    model = ScriptedModel()
    service = _service(engine, model)
    try:
        await _record(service, "user", "I play five-a-side on Thursdays")
        await service.settle()
        assert model.calls == []
        assert (await engine.stats())["buffered_turns"] == 1
    finally:
        await service.close()
