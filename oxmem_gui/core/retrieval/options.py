"""The settings of one search, as one typed value: :class:`SearchOptions`.

Every front end builds one (the command line from its flags, the inspector from its controls, a query by example
from a stored vector) and hands it to ``search``, ``why_not`` or ``search_notes`` of any memory (:mod:`..api`).
Its defaults are the store's hybrid's (contract §6): a test holds :func:`.hybrid.hybrid_query`'s to them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any


@dataclass(frozen=True, eq=False)
class SearchOptions:
    """How to search. The hybrid's tuning (``vector_weight``, ``fts_weight``, ``fts_mode``) applies to a tunable
    ranking only; ``tags``/``tag_mode`` to a ranking that filters by tags; ``models`` limits the vector leg to
    those embedding models' vectors; ``query_embedding`` (with the model it is from) replaces embedding the query
    text. An agent's own ranking takes only the query embedding (its own settings are fixed)."""

    vector_weight: float = 0.7
    fts_weight: float = 0.3
    fts_mode: str = "terms"
    tags: tuple[str, ...] = ()
    tag_mode: str = "any"
    models: tuple[str, ...] | None = None
    query_embedding: Sequence[float] | None = field(default=None, repr=False)
    query_embedding_model: str | None = None

    def __post_init__(self) -> None:
        # lists given by callers are kept as tuples: an options value is never changed by whoever it is passed to
        object.__setattr__(self, "tags", tuple(self.tags))
        if self.models is not None:
            object.__setattr__(self, "models", tuple(self.models))

    def given(self) -> dict[str, Any]:
        """The settings that differ from the defaults, by name, as the rankings take them as keywords (tags and
        models as lists)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.default is None:
                if value is not None:
                    out[f.name] = list(value) if f.name == "models" else value
            elif value != f.default:
                out[f.name] = list(value) if f.name == "tags" else value
        return out

    def is_default(self) -> bool:
        return not self.given()

    @classmethod
    def of(cls, given: SearchOptions | dict[str, Any] | None) -> SearchOptions:
        """``given`` as options: None is the defaults; a mapping names some of the fields (a stray name is a
        TypeError, as a misspelt keyword is)."""
        if given is None:
            return DEFAULTS
        if isinstance(given, SearchOptions):
            return given
        return cls(**given)


#: the store's hybrid's own settings (contract §6)
DEFAULTS = SearchOptions()
