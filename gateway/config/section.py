"""The base of every config section: camelCase in JSON, snake_case in Python, unknown keys refused."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class Section(BaseModel):
    """One section of the config file (gateway/config/__init__.py says why unknown keys are errors)."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", allow_inf_nan=False
    )
