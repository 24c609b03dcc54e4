"""Embedding backends (contract §5) and the on-disk vector format.

A backend turns texts into float32 vectors and names its model; the store keeps the name beside every vector
so that a query is only ever compared with vectors of the model that embedded it. The semantic backend
(fastembed, local model files) implements the same :class:`EmbeddingBackend` protocol.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

import blake3
import numpy as np

from ..errors import EmbeddingError
from .model_files import MODEL_NAME

DETERMINISTIC_MODEL = "deterministic-hash-v1"
DETERMINISTIC_DIMS = 64
_F32_EPS = np.finfo(np.float32).eps


@runtime_checkable
class EmbeddingBackend(Protocol):
    """What the store needs of an embedding model."""

    model_name: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return a ``(len(texts), dimensions)`` float32 array, one row per text, in order."""
        ...


def deterministic_vector(text: str) -> np.ndarray:
    """The 64-value BLAKE3 vector of ``text``: bit-exact with the agent's ``deterministic-hash-v1``.

    ``seed = blake3(text)``; each seed byte ``b`` gives ``b / 127.5 - 1`` (float32); after 32 values the
    seed is re-hashed; the result is L2-normalized in float32 when its norm exceeds float32 epsilon.
    A text that is empty after stripping gives zeros.
    """
    if not text.strip():
        return np.zeros(DETERMINISTIC_DIMS, dtype=np.float32)
    seed = blake3.blake3(text.encode("utf-8")).digest()
    raw = bytearray()
    while len(raw) < DETERMINISTIC_DIMS:
        raw += seed
        seed = blake3.blake3(seed).digest()
    # float32 arithmetic throughout, and a sequential sum of squares (cumsum), as the agent's Rust code does.
    values = np.frombuffer(bytes(raw[:DETERMINISTIC_DIMS]), dtype=np.uint8).astype(np.float32)
    values = values / np.float32(127.5) - np.float32(1.0)
    norm = np.sqrt(np.cumsum(values * values, dtype=np.float32)[-1])
    if norm > _F32_EPS:
        values = values / norm
    return values


class DeterministicEmbedding:
    """Hash-based vectors with no meaning: fast, dependency-free, reproducible everywhere."""

    model_name = DETERMINISTIC_MODEL
    dimensions = DETERMINISTIC_DIMS

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), DETERMINISTIC_DIMS), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i] = deterministic_vector(text)
        return out


def to_blob(vector: np.ndarray) -> bytes:
    """Raw little-endian float32, no header."""
    return np.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes, dimensions: int | None = None) -> np.ndarray:
    """Read a stored vector; with ``dimensions``, accept longer zero-padded vectors by their leading values.

    Raises :class:`EmbeddingError` for a value that is not bytes (text written into the column), a blob whose size
    is not a whole number of float32 values, one that is shorter than ``dimensions``, or one whose extra values are
    not all zero.
    """
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise EmbeddingError(f"vector stored as {type(blob).__name__}, not bytes")
    if len(blob) % 4:
        raise EmbeddingError(f"vector of {len(blob)} bytes is not a whole number of float32 values")
    vector = np.frombuffer(blob, dtype="<f4")
    if dimensions is None or len(vector) == dimensions:
        return vector
    if len(vector) > dimensions and not np.any(vector[dimensions:]):
        return vector[:dimensions]
    raise EmbeddingError(f"vector has {len(vector)} values where the model gives {dimensions}")


class ModelBackends(dict[str, EmbeddingBackend]):
    """The backends able to embed a query for each model's vectors, by model name. A model not loaded is looked
    up once on this machine (:mod:`.local_models`: the agent's own model where its library keeps it); why it
    could not be found is kept in :meth:`reason`. Looking up does file I/O: ask off a GUI thread."""

    def __init__(self, loaded: Mapping[str, EmbeddingBackend], beside: os.PathLike[str] | str | None = None) -> None:
        super().__init__(loaded)
        self.beside = None if beside is None else Path(beside)
        self._reasons: dict[str, str] = {}

    def __contains__(self, model: object) -> bool:
        if not isinstance(model, str) or super().__contains__(model):
            return super().__contains__(model)
        if model in self._reasons:
            return False
        from . import local_models

        try:
            self[model] = local_models.backend(model, self.beside)
        except EmbeddingError as exc:
            self._reasons[model] = str(exc)
            return False
        return True

    def get(self, model: str, default: EmbeddingBackend | None = None) -> EmbeddingBackend | None:  # type: ignore[override]
        return self[model] if model in self else default  # noqa: SIM401 - dict.get would not look the model up

    def reason(self, model: str) -> str:
        """Why ``model`` has no backend here (after a lookup)."""
        return self._reasons.get(model, "no embedding backend for this model is loaded")


BACKEND_NAMES = ("auto", "deterministic", "semantic")


@dataclass
class BackendChoice:
    """The backend that embeds new chunks and queries, every backend available for searching stored
    vectors (by model name), and a notice when the configuration could not be honoured as asked."""

    backend: EmbeddingBackend
    available: dict[str, EmbeddingBackend]
    notice: str | None = None


def choose_backend(name: str = "auto", model_path: str | os.PathLike[str] | None = None) -> BackendChoice:
    """Resolve a configured backend name.

    ``semantic`` needs the model (else :class:`EmbeddingError` saying how to install it); ``auto`` takes it
    when present and falls back to ``deterministic`` with a notice; ``deterministic`` always works. The
    deterministic backend and a prepared semantic model are always available for searching stored vectors.
    Does file I/O (locating, maybe preparing the model): call it off a GUI thread.
    """
    from .model_files import locate_model
    from .semantic import SemanticEmbedding

    if name not in BACKEND_NAMES:
        raise EmbeddingError(f"unknown embedding backend {name!r} (choose {', '.join(BACKEND_NAMES)})")
    deterministic = DeterministicEmbedding()
    available: dict[str, EmbeddingBackend] = {deterministic.model_name: deterministic}
    location = locate_model(model_path, prepare=name != "deterministic")
    semantic = SemanticEmbedding(location.path) if location.path else None
    if semantic:
        available[semantic.model_name] = semantic
    if name == "deterministic":
        return BackendChoice(deterministic, available)
    if semantic:
        return BackendChoice(semantic, available)
    if name == "semantic" or model_path:
        raise EmbeddingError(location.reason)
    notice = f"using deterministic-hash-v1 embeddings (no meaning): {location.reason}"
    return BackendChoice(deterministic, available, notice)


def backend_for(
    available: Mapping[str, EmbeddingBackend], default: EmbeddingBackend, model: str | None
) -> EmbeddingBackend:
    """The backend of ``model`` — a backend name (``semantic``, ``deterministic``) or a model name — among
    ``available``; ``default`` when None. :class:`EmbeddingError` names the ones there are."""
    if model is None:
        return default
    by_alias = {"deterministic": DETERMINISTIC_MODEL, "semantic": MODEL_NAME}
    name = by_alias.get(model, model)
    if name not in available:
        known = ", ".join(sorted(available))
        raise EmbeddingError(f"no embedding backend for model {model!r} here (available: {known})")
    return available[name]
