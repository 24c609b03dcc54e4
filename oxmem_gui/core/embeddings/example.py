"""Query by example: a memory's own stored vector as the query of the vector leg.

Exact and offline for every model — nothing is embedded, so it works for vectors oxmem cannot make (an API
model's, a model not on this machine) — and the keyword leg searches the memory's own words unless other words
are given. The result's vector leg then ranks what the agent's own model placed nearest to that memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Example:
    """A memory's stored vector, the model that made it, and its text."""

    item_id: str
    model: str
    vector: np.ndarray
    text: str

    def options(self) -> dict[str, Any]:
        """The search options that make its vector the query's (``query_embedding`` and its model), the vector leg
        limited to that model's vectors (the only ones it can be compared with)."""
        return {"query_embedding": self.vector.tolist(), "query_embedding_model": self.model, "models": [self.model]}

    def said(self) -> str:
        return f"query by example: the stored vector of {self.item_id} ({self.model}, {self.vector.size} values)"
