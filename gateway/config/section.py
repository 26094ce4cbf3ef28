"""The base of every config section: camelCase in JSON, snake_case in Python, unknown keys refused, and
values of the wrong type refused rather than converted (pydantic's strict mode: ``"enabled": "yes"`` is
not true, ``"port": "8080"`` is not a number — the error names the field). The environment's values are
text; ``config/env.py`` turns a boolean or numeric variable into its type before validation."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class Section(BaseModel):
    """One section of the config file (gateway/config/__init__.py says why unknown keys are errors)."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", allow_inf_nan=False, strict=True
    )
