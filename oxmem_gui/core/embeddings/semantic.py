"""The semantic embedding backend: fastembed running all-MiniLM-L6-v2 from a local folder.

fastembed is given the folder with ``specific_model_path`` and so never contacts a model hub. The ONNX
session is created on first use (importing fastembed and loading the model takes about a second), so opening a
store to list sessions stays fast. Mean pooling and L2 normalization are fastembed's, for this model.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import EmbeddingError
from .model_files import MODEL_DIMS, MODEL_NAME

DEFAULT_BATCH = 32


class SemanticEmbedding:
    """fastembed ``TextEmbedding`` over a prepared model folder; thread-safe, loaded lazily."""

    model_name = MODEL_NAME
    dimensions = MODEL_DIMS

    def __init__(self, model_dir: Path, batch_size: int = DEFAULT_BATCH, threads: int | None = None) -> None:
        self.model_dir = Path(model_dir)
        self.batch_size = batch_size
        self.threads = threads
        self._model: Any = None
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its folder and settings (for a writer in another process); the model loads there lazily."""
        return (SemanticEmbedding, (self.model_dir, self.batch_size, self.threads))

    def _load(self) -> Any:
        if self._model is None:
            try:
                import onnxruntime
                from fastembed import TextEmbedding

                onnxruntime.set_default_logger_severity(3)  # the graph optimizer's shape notes are not errors
                self._model = TextEmbedding(
                    model_name=MODEL_NAME, specific_model_path=str(self.model_dir), threads=self.threads
                )
            except Exception as exc:  # fastembed/onnxruntime raise many types for a bad folder
                raise EmbeddingError(f"cannot load the semantic model from {self.model_dir}: {exc}") from exc
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, MODEL_DIMS), dtype=np.float32)
        with self._lock:
            model = self._load()
            vectors = list(model.embed(list(texts), batch_size=self.batch_size))
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), MODEL_DIMS)
