"""The agent's own embedding model, found where the agent's library keeps it, never downloaded.

A file names the model that made its vectors (``chunks_vec.embedding_model``); to embed a query the way the agent
does, oxmem needs that model. The agents' libraries keep their downloads in the Hugging Face hub cache layout
(``models--ORG--NAME/snapshots/REVISION/``): model2vec-rs and model2vec under ``$HF_HUB_CACHE``,
``$HF_HOME/hub`` or ``~/.cache/huggingface/hub``; fastembed (Python and Rust) under ``$FASTEMBED_CACHE_PATH``, a
``.fastembed_cache`` folder in the agent's working folder (fastembed-rs's default) or ``fastembed_cache`` in the
temporary folder (fastembed's). :func:`find` looks there — and in a folder given as ``--model-path NAME=DIR`` —
for the repositories :data:`RECIPES` names for the model (the model's own name otherwise).

What is found is verified before it is used: the hub cache names each file's content (a symbolic link to
``blobs/SHA256`` for a large file, ``blobs/GIT-SHA1`` for a small one), so every file is hashed and compared
with the name it is stored under; a mismatch refuses the folder. A folder given by hand has no such record and
is used as *unverified*, said so.

Two kinds of model run here, each as the agent's library runs it:

* **model2vec static models** (Oxydra's ``minishlab/potion-base-8M`` / ``-32M``, through model2vec-rs): the
  ``model2vec`` package's ``StaticModel`` from the folder — token vectors, their mean, normalized when the
  model's ``config.json`` says so;
* **BERT-style ONNX models** (fastembed's ``BAAI/bge-small-en-v1.5``, older Oxydra's ``fastembed-default``):
  fastembed's own ``TextEmbedding`` on the folder, with the pooling and normalization the model's files declare
  (``1_Pooling/config.json``, ``modules.json``: CLS for BGE, mean for MiniLM) or, for a model of
  :data:`RECIPES` whose folder lacks them, the ones its library uses.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import EmbeddingError

MODEL2VEC = "model2vec"
BERT_ONNX = "bert-onnx"


@dataclass(frozen=True)
class Recipe:
    """How an agent's model name is run: the kind, the hub repositories its libraries download it from (in the
    order looked for), and for an ONNX model the pooling and normalization its library applies."""

    kind: str
    repos: tuple[str, ...]
    pooling: str | None = None
    normalize: bool = True
    who: str = ""


#: model names the agents write, and how each agent's library runs them (Oxydra: ``crates/memory/src/indexing.rs``
#: at 677951e, model2vec-rs ``StaticModel::from_pretrained(model_id)`` then ``encode``)
RECIPES: dict[str, Recipe] = {
    "minishlab/potion-base-8M": Recipe(MODEL2VEC, ("minishlab/potion-base-8M",), who="Oxydra (model2vec-rs)"),
    "minishlab/potion-base-32M": Recipe(MODEL2VEC, ("minishlab/potion-base-32M",), who="Oxydra (model2vec-rs)"),
    "fastembed-default": Recipe(
        BERT_ONNX,
        ("Qdrant/bge-small-en-v1.5-onnx-Q", "Xenova/bge-small-en-v1.5", "BAAI/bge-small-en-v1.5"),
        pooling="cls",
        who="older Oxydra (fastembed, BGE-small-en-v1.5)",
    ),
    "BAAI/bge-small-en-v1.5": Recipe(
        BERT_ONNX,
        ("Qdrant/bge-small-en-v1.5-onnx-Q", "Xenova/bge-small-en-v1.5", "BAAI/bge-small-en-v1.5"),
        pooling="cls",
        who="fastembed",
    ),
}

#: models that run only behind their maker's API (ZEKE's default): never on this machine
API_MODELS = {
    "text-embedding-3-small": "OpenAI",
    "text-embedding-3-large": "OpenAI",
    "text-embedding-ada-002": "OpenAI",
}

_explicit: dict[str, Path] = {}


def set_model_paths(paths: Mapping[str, str | os.PathLike[str]]) -> None:
    """Folders given by hand (``--model-path NAME=DIR``), for the whole process."""
    _explicit.clear()
    _explicit.update({name: Path(folder).expanduser() for name, folder in paths.items()})
    _found.clear()


def cache_roots(beside: Path | None = None) -> list[Path]:
    """Where the agents' libraries keep downloaded models, in the order looked in."""
    roots: list[Path] = []
    env = os.environ
    if env.get("HF_HUB_CACHE"):
        roots.append(Path(env["HF_HUB_CACHE"]))
    if env.get("HF_HOME"):
        roots.append(Path(env["HF_HOME"]) / "hub")
    roots.append(Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "huggingface" / "hub")
    if env.get("FASTEMBED_CACHE_PATH"):
        roots.append(Path(env["FASTEMBED_CACHE_PATH"]))
    if beside is not None:
        roots.append(beside.parent / ".fastembed_cache")
    roots.append(Path.cwd() / ".fastembed_cache")
    roots.append(Path(tempfile.gettempdir()) / "fastembed_cache")
    unique: list[Path] = []
    for root in (r.expanduser() for r in roots):
        if root not in unique:
            unique.append(root)
    return unique


def snapshot(root: Path, repo: str) -> Path | None:
    """The folder of ``repo`` in a hub-layout cache ``root``: the revision ``refs/main`` names, else the newest
    snapshot (repository names compared without case, as the hub does)."""
    wanted = "models--" + repo.replace("/", "--")
    try:
        folder = next((d for d in root.iterdir() if d.name.lower() == wanted.lower() and d.is_dir()), None)
    except OSError:
        return None
    if folder is None:
        return None
    snapshots = folder / "snapshots"
    ref = folder / "refs" / "main"
    try:
        if ref.is_file():
            named = snapshots / ref.read_text().strip()
            if named.is_dir():
                return named
        found = [d for d in snapshots.iterdir() if d.is_dir()]
    except OSError:
        return None
    return max(found, key=lambda d: d.stat().st_mtime) if found else None


def verify(folder: Path) -> tuple[bool, str]:
    """Every file of a hub snapshot against the content address it is stored under (``blobs/SHA256`` or the git
    blob SHA-1): (all match, what was checked). A folder that is not a hub snapshot: (True, "unverified")."""
    checked = 0
    for path in sorted(folder.rglob("*")):
        if not path.is_symlink() or not path.is_file():
            continue
        name = Path(os.readlink(path)).name
        data_hash = _content_hash(path, len(name))
        if data_hash is None:
            continue
        if data_hash != name:
            return False, f"{path.relative_to(folder)} does not match the hub cache's record of it ({name[:12]}…)"
        checked += 1
    if not checked:
        return True, "unverified: not a hub snapshot, no record of its files to check"
    return True, f"verified: {checked} files match the hub cache's SHA-256/SHA-1 records"


def _content_hash(path: Path, length: int) -> str | None:
    if length == 64:
        digest: Any = hashlib.sha256()
    elif length == 40:
        digest = hashlib.sha1(f"blob {path.stat().st_size}\0".encode(), usedforsecurity=False)
    else:
        return None
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return str(digest.hexdigest())


@dataclass(frozen=True)
class LocalModel:
    """A model found on this machine: its name in the file, the kind, the folder, the hub repository it is a
    snapshot of (its name when given by hand), and what the verification said."""

    name: str
    kind: str
    folder: Path
    repo: str
    verified: str


def _kind(folder: Path) -> str | None:
    if (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file():
        config = _json(folder / "config.json")
        if "model_type" not in config or config.get("model_type") == MODEL2VEC or not _onnx_file(folder):
            return MODEL2VEC
    return BERT_ONNX if _onnx_file(folder) else None


def _onnx_file(folder: Path) -> str | None:
    for name in ("model.onnx", "onnx/model.onnx", "model_optimized.onnx"):
        if (folder / name).is_file():
            return name
    return None


def _json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


#: model name → what :func:`find` answered (a model, or why not), per process
_found: dict[tuple[str, Path | None], LocalModel | str] = {}
_lock = threading.Lock()


def find(name: str, beside: Path | None = None) -> LocalModel | str:
    """The model ``name`` on this machine (see the module's note), or one line saying where oxmem looked."""
    key = (name, beside)
    with _lock:
        if key not in _found:
            _found[key] = _find(name, beside)
        return _found[key]


def _find(name: str, beside: Path | None) -> LocalModel | str:
    recipe = RECIPES.get(name)
    if name in API_MODELS and name not in _explicit:
        return f"the vectors were made by {name}, {API_MODELS[name]}'s embedding API model, which runs only there"
    if name in _explicit:
        folder = _explicit[name]
        kind = _kind(folder) if folder.is_dir() else None
        if kind is None:
            return f"--model-path {name}={folder}: no model2vec or ONNX model there"
        return LocalModel(name, kind, folder, name, "unverified: a folder given by hand")
    repos = recipe.repos if recipe else (name,)
    roots = cache_roots(beside)
    for repo in repos:
        for root in roots:
            folder = snapshot(root, repo)
            kind = _kind(folder) if folder else None
            if folder is None or kind is None:
                continue
            ok, said = verify(folder)
            if not ok:
                return f"{name} found in {root} but not used: {said}"
            return LocalModel(name, kind, folder, repo, said)
    looked = ", ".join(str(r) for r in roots)
    return (
        f"the vectors were made by {name}, which is not on this machine (looked for "
        f"{' or '.join(repos)} in {looked}; --model-path {name}=DIR names another folder)"
    )


class Model2VecBackend:
    """A model2vec static model, run by the ``model2vec`` package from its folder (loaded on first use)."""

    def __init__(self, model: LocalModel) -> None:
        self.model_name = model.name
        self.local = model
        self._model: Any = None
        self._lock = threading.Lock()
        config = _json(model.folder / "config.json")
        self.dimensions = int(config.get("hidden_dim") or _safetensors_dims(model.folder / "model.safetensors"))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Model2VecBackend, (self.local,))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            if self._model is None:
                try:
                    from model2vec import StaticModel

                    self._model = StaticModel.from_pretrained(str(self.local.folder))
                except Exception as exc:  # a broken folder: many kinds
                    raise EmbeddingError(f"cannot load {self.model_name} from {self.local.folder}: {exc}") from exc
            out = self._model.encode(list(texts), show_progress_bar=False)
        return np.asarray(out, dtype=np.float32).reshape(len(texts), -1)


def _safetensors_dims(path: Path) -> int:
    with open(path, "rb") as fh:
        length = int.from_bytes(fh.read(8), "little")
        header = json.loads(fh.read(length))
    return int(header["embeddings"]["shape"][1])


class OnnxBertBackend:
    """A BERT-style ONNX model run by fastembed from its folder, pooled and normalized as its files say."""

    def __init__(self, model: LocalModel) -> None:
        self.model_name = model.name
        self.local = model
        self.pooling, self.normalize = _pooling(model)
        self.model_file = _onnx_file(model.folder) or "model.onnx"
        config = _json(model.folder / "config.json")
        self.dimensions = int(config.get("hidden_size") or 0)
        if not self.dimensions:
            raise EmbeddingError(f"{model.folder}: no hidden_size in config.json")
        self._model: Any = None
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[Any, ...]:
        return (OnnxBertBackend, (self.local,))

    def _load(self) -> Any:
        import onnxruntime
        from fastembed import TextEmbedding
        from fastembed.common.model_description import ModelSource, PoolingType

        onnxruntime.set_default_logger_severity(3)
        # fastembed's registry is per process: one name per folder and settings
        setting = f"{self.local.folder.resolve()}|{self.pooling}|{self.normalize}|{self.model_file}"
        registered = f"oxmem-local/{hashlib.sha256(setting.encode()).hexdigest()[:16]}"
        known = {m["model"] for m in TextEmbedding.list_supported_models()}
        if registered not in known:
            TextEmbedding.add_custom_model(
                model=registered,
                pooling=PoolingType.CLS if self.pooling == "cls" else PoolingType.MEAN,
                normalization=self.normalize,
                sources=ModelSource(hf=self.local.repo),
                dim=self.dimensions,
                model_file=self.model_file,
            )
        return TextEmbedding(model_name=registered, specific_model_path=str(self.local.folder), local_files_only=True)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            if self._model is None:
                try:
                    self._model = self._load()
                except Exception as exc:
                    raise EmbeddingError(f"cannot load {self.model_name} from {self.local.folder}: {exc}") from exc
            out = list(self._model.embed(list(texts)))
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dimensions)


def _pooling(model: LocalModel) -> tuple[str, bool]:
    """The pooling (``cls`` or ``mean``) and normalization the model's sentence-transformers files declare; for
    a model of :data:`RECIPES` without them, its library's."""
    pooling_config = _json(model.folder / "1_Pooling" / "config.json")
    modules = (model.folder / "modules.json").read_text() if (model.folder / "modules.json").is_file() else ""
    if pooling_config:
        pooling = "cls" if pooling_config.get("pooling_mode_cls_token") else "mean"
        return pooling, "Normalize" in modules
    recipe = RECIPES.get(model.name)
    if recipe and recipe.pooling:
        return recipe.pooling, recipe.normalize
    raise EmbeddingError(
        f"{model.folder}: no 1_Pooling/config.json saying how {model.name} pools its tokens; not guessed"
    )


def backend(name: str, beside: Path | None = None) -> Any:
    """An embedding backend for the model ``name``: found on this machine, else at the embeddings endpoint the
    user named (:mod:`.endpoint`); :class:`EmbeddingError` saying where oxmem looked otherwise."""
    found = find(name, beside)
    if not isinstance(found, str):
        return Model2VecBackend(found) if found.kind == MODEL2VEC else OnnxBertBackend(found)
    from . import endpoint

    remote = endpoint.backend(name)
    if remote is not None:
        return remote
    hint = f" (--embeddings-url names an endpoint that serves {name})" if name in API_MODELS else ""
    raise EmbeddingError(found + hint)
