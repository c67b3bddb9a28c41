"""What every model shares: the frozen base and the tier type."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["SNIPPET_MAX", "Tier", "_Model"]

Tier = Literal[1, 2, 3, 4]
SNIPPET_MAX = 200


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
