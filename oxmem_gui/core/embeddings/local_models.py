"""The agent's own embedding model, found where the agent's library keeps it, never downloaded.

A file names the model that made its vectors (``chunks_vec.embedding_model``); to embed a query the way the agent
does, oxmem needs that model. The agents' libraries keep their downloads in the Hugging Face hub cache layout
(``models--ORG--NAME/snapshots/REVISION/``): model2vec-rs and model2vec under ``$HF_HUB_CACHE``,
``$HF_HOME/hub`` or ``~/.cache/huggingface/hub``; fastembed (Python and Rust) under ``$FASTEMBED_CACHE_PATH``, a
``.fastembed_cache`` folder in the agent's working folder (fastembed-rs's default) or ``fastembed_cache`` in the
temporary folder (fastembed's). :func:`find` looks there — and in a folder given as ``--model-path NAME=DIR`` —
for the repositories :data:`RECIPES` names for the model (the model's own name otherwise).

What is found is verified before it is used, and again each time a file of it is read: the hub cache names each
file's content (a symbolic link to ``blobs/SHA256`` for a large file, ``blobs/GIT-SHA1`` for a small one), so a
file is read from the blob its link resolves to — which must lie in the repository's own ``blobs/`` — and the
bytes read are hashed and compared with that name before they are parsed or handed to a library (:class:`Files`);
what is checked is what is used. A snapshot file that is not such a link (a plain file put in place of one, a link
elsewhere) has no record to check it by, so the snapshot is refused, as is a ``refs/main`` that does not name one
of the repository's ``snapshots/`` folders by a plain name; a mismatch refuses the folder. A folder given by hand
has no such record and is used as *unverified*, said so.

Every file is read as :mod:`.model_files` reads a model's files — only a regular file, opened without blocking,
refused by its size before it is read when larger than its kind may be (a few MiB of JSON, 64 MiB of
``tokenizer.json``, 2 GiB of weights) — and the values used are checked (``hidden_dim`` and ``hidden_size``
whole numbers from 1 to 65536, the tensors there with their shapes, inside the file). A library that fails on a
file — a panic of the Rust ``tokenizers`` library is a ``BaseException`` — is caught (but an interrupt or an exit
passes). So a broken or hostile folder ends in one :class:`EmbeddingError` line naming the file and what is wrong
(a path's control characters escaped), never a traceback or a hang, and nothing in it is ever written.

Two kinds of model run here, each as the agent's library runs it:

* **model2vec static models** (Oxydra's ``minishlab/potion-base-8M`` / ``-32M``, through model2vec-rs): the
  ``model2vec`` package's ``StaticModel`` made from the bytes read and checked here (``model.safetensors``'
  ``embeddings`` — and ``weights``/``mapping`` when the model has them —, ``tokenizer.json``, ``config.json``'s
  ``normalize`` and ``max_length``): token vectors, their mean, normalized when the model's ``config.json`` says
  so. (Not ``StaticModel.from_pretrained``: given a folder that is not there, it downloads.) A model whose
  ``config.json`` gives no ``hidden_dim`` is loaded when its backend is made, its dimensions being its tensor's;
* **BERT-style ONNX models** (fastembed's ``BAAI/bge-small-en-v1.5``, older Oxydra's ``fastembed-default``):
  fastembed's own ``TextEmbedding``, with the pooling and normalization the model's files declare
  (``1_Pooling/config.json``, ``modules.json``: CLS for BGE, mean for MiniLM) or, for a model of
  :data:`RECIPES` whose folder lacks them, the ones its library uses. fastembed reads its files by path, so it
  is given a private copy of the checked bytes (the ONNX file, the tokenizer and its configuration files) in a
  temporary folder, removed once the model is loaded; an ONNX file that keeps its weights in separate external
  data files is therefore not supported.

Where nothing else decides: a ``refs/main`` naming no snapshot of its repository refuses the repository (the
newest snapshot is taken only when there is no ``refs/main``: the reference says which revision the agent
uses); a snapshot refused stops the search with its line, as a mismatch always did; a hub snapshot holding more
than 10,000 entries is refused rather than walked.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..errors import EmbeddingError
from .bert_onnx import parse_safetensors
from .model_files import (
    JSON_LIMIT,
    MAX_DIMENSIONS,
    TOKENIZER_LIMIT,
    WEIGHTS_LIMIT,
    limit_for,
    one_line,
    parse_json,
    read_file,
    shown,
    whole_number,
)

T = TypeVar("T")

MODEL2VEC = "model2vec"
BERT_ONNX = "bert-onnx"

#: what a library call may raise that is not about the file: passed on, never turned into a message
_PASSED_ON = (KeyboardInterrupt, SystemExit, GeneratorExit, asyncio.CancelledError)
#: a content address in a hub cache: a SHA-256 (large files) or a git blob SHA-1 (small ones)
_ADDRESS = re.compile(r"[0-9a-f]{64}|[0-9a-f]{40}")
#: a revision's folder name under ``snapshots/`` (a commit hash, in practice)
_REVISION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,254}")
#: the most entries of a hub snapshot walked to verify it
_MOST_ENTRIES = 10_000
#: the files fastembed reads from an ONNX model's folder besides the ONNX file: required ones first
_FASTEMBED_FILES = ("tokenizer.json", "tokenizer_config.json", "config.json", "special_tokens_map.json")


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
    """The folder of ``repo`` in a hub-layout cache ``root``: the revision ``refs/main`` names, else (no
    ``refs/main``) the newest snapshot (repository names compared without case, as the hub does); None when the
    repository is not there. A ``refs/main`` that names no folder of ``snapshots/`` by a plain name (a path, a
    link to a folder elsewhere, a missing revision) is :class:`EmbeddingError`."""
    wanted = "models--" + repo.replace("/", "--")
    try:
        folder = next((d for d in root.iterdir() if d.name.lower() == wanted.lower() and d.is_dir()), None)
    except OSError:
        return None
    if folder is None:
        return None
    snapshots = folder / "snapshots"
    ref = folder / "refs" / "main"
    if os.path.lexists(ref):
        named = read_file(ref, 4096, "reference", "its refs/main").decode("utf-8", "replace").strip()
        if not _REVISION.fullmatch(named) or not _plain_folder(snapshots / named):
            raise EmbeddingError(f"its refs/main names {_quoted(named)}, not one of its snapshots")
        return snapshots / named
    try:
        found = [(d.lstat().st_mtime, d) for d in snapshots.iterdir() if _plain_folder(d)]
    except OSError:
        return None
    return max(found)[1] if found else None


def _plain_folder(path: Path) -> bool:
    """Whether ``path`` is a folder itself, not a link to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _quoted(text: str) -> str:
    return json.dumps(text[:200])


def verify(folder: Path) -> tuple[bool, str]:
    """Every file of a hub snapshot read as :class:`Files` reads it — from the blob its link names, which must
    be in the repository's ``blobs/``, and hashed against that name — : (all match, what was checked or the
    first problem). A folder outside a hub cache's layout: (True, "unverified: …")."""
    if not _hub_layout(folder):
        return True, "unverified: not a hub snapshot, no record of its files to check"
    files = Files(folder, hub=True)
    checked = 0
    try:
        for name in _entries(folder):
            files.read(name, *limit_for(name))
            checked += 1
    except EmbeddingError as exc:
        return False, str(exc)
    if not checked:
        return True, "unverified: not a hub snapshot, no record of its files to check"
    return True, f"verified: {checked} files match the hub cache's SHA-256/SHA-1 records"


def _hub_layout(folder: Path) -> bool:
    return folder.parent.name == "snapshots" and folder.parent.parent.name.startswith("models--")


def _entries(folder: Path) -> list[str]:
    """Every entry of ``folder`` but its folders (links included, not followed), as relative names."""
    names: list[str] = []
    for parent, dirs, files in os.walk(folder, followlinks=False):
        here = Path(parent).relative_to(folder)
        links = [d for d in dirs if os.path.islink(os.path.join(parent, d))]
        dirs[:] = [d for d in dirs if d not in links]
        names.extend((here / name).as_posix() for name in [*files, *links])
        if len(names) > _MOST_ENTRIES:
            raise EmbeddingError(f"the snapshot holds more than {_MOST_ENTRIES:,} files")
    return sorted(names)


class Files:
    """The files of one model folder, read the one way the modules read them: regular files only, bounded
    (:mod:`.model_files`). In a hub snapshot (``hub``) each is read from the blob its link resolves to — refused
    when it is not a link, or links outside the repository's ``blobs/`` or to a name that is no content address —
    and the bytes read are hashed and compared with the blob's name before they are returned. Every problem is an
    :class:`EmbeddingError` naming the file by its name in the folder. Nothing is ever written."""

    def __init__(self, folder: Path, hub: bool) -> None:
        self.folder = folder
        self.hub = hub

    @classmethod
    def of(cls, model: LocalModel) -> Files:
        return cls(model.folder, model.hub)

    def has(self, name: str) -> bool:
        """Whether the folder has an entry ``name`` of any kind (reading it says what is wrong with it)."""
        return os.path.lexists(self.folder / name)

    def read(self, name: str, limit: int, what: str) -> bytes:
        """The bytes of the file ``name`` (at most ``limit``: a ``what`` larger than that is refused unread)."""
        label = shown(name)
        if not self.hub:
            return read_file(self.folder / name, limit, what, label)
        blob = self._blob(name)
        data = read_file(blob, limit, what, label, follow=False)
        if len(blob.name) == 64:
            digest = hashlib.sha256(data)
        else:
            digest = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
            digest.update(data)
        if digest.hexdigest() != blob.name:
            raise EmbeddingError(f"{label} does not match the hub cache's record of it ({blob.name[:12]}…)")
        return data

    def json(self, name: str) -> dict[str, Any]:
        """The JSON object in the file ``name``; ``{}`` when there is no such file."""
        if not self.has(name):
            return {}
        return parse_json(self.read(name, JSON_LIMIT, "JSON file"), shown(name))

    def _blob(self, name: str) -> Path:
        label = shown(name)
        link = self.folder / name
        try:
            mode = os.lstat(link).st_mode
        except FileNotFoundError:
            raise EmbeddingError(f"{label} is missing") from None
        except OSError as exc:
            raise EmbeddingError(f"{label} cannot be read ({one_line(exc.strerror or exc)})") from None
        if not stat.S_ISLNK(mode):
            kind = "a plain file" if stat.S_ISREG(mode) else "a folder" if stat.S_ISDIR(mode) else "a special file"
            raise EmbeddingError(
                f"{label} is {kind}, not the hub cache's link to a blob, so nothing records what it should hold"
            )
        target = Path(os.path.realpath(link))
        if str(target.parent) != os.path.realpath(self.folder.parent.parent / "blobs"):
            raise EmbeddingError(f"{label} links outside the repository's blobs/ folder")
        if not _ADDRESS.fullmatch(target.name):
            raise EmbeddingError(f"{label} links to a blob whose name is no SHA-256 or SHA-1 of a content")
        return target


@dataclass(frozen=True)
class LocalModel:
    """A model found on this machine: its name in the file, the kind, the folder, the hub repository it is a
    snapshot of (its name when given by hand), what the verification said, and whether the folder is a hub
    snapshot (its files then checked each time they are read, :class:`Files`)."""

    name: str
    kind: str
    folder: Path
    repo: str
    verified: str
    hub: bool = False


def _kind(files: Files) -> str | None:
    onnx = _onnx_file(files)
    if files.has("model.safetensors") and files.has("tokenizer.json"):
        config = files.json("config.json")
        if "model_type" not in config or config.get("model_type") == MODEL2VEC or not onnx:
            return MODEL2VEC
    return BERT_ONNX if onnx else None


def _onnx_file(files: Files) -> str | None:
    for name in ("model.onnx", "onnx/model.onnx", "model_optimized.onnx"):
        if files.has(name):
            return name
    return None


#: model name → what :func:`find` answered (a model, or why not), per process
_found: dict[tuple[str, Path | None], LocalModel | str] = {}
_lock = threading.Lock()


def find(name: str, beside: Path | None = None) -> LocalModel | str:
    """The model ``name`` on this machine (see the module's note), or one line saying where oxmem looked or why
    what it found is not used. (Kept per process; its files are checked again each time they are read.)"""
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
        given = f"--model-path {shown(name)}={shown(folder)}"
        try:
            kind = _kind(Files(folder, hub=False)) if folder.is_dir() else None
        except EmbeddingError as exc:
            return f"{given}: {exc}"
        if kind is None:
            return f"{given}: no model2vec or ONNX model there"
        return LocalModel(name, kind, folder, name, "unverified: a folder given by hand")
    repos = recipe.repos if recipe else (name,)
    roots = cache_roots(beside)
    for repo in repos:
        for root in roots:
            found = _in_cache(name, repo, root)
            if found is not None:
                return found
    looked = ", ".join(shown(r) for r in roots)
    return (
        f"the vectors were made by {shown(name)}, which is not on this machine (looked for "
        f"{' or '.join(shown(r) for r in repos)} in {looked}; --model-path {shown(name)}=DIR names another folder)"
    )


def _in_cache(name: str, repo: str, root: Path) -> LocalModel | str | None:
    """``repo``'s snapshot in the cache ``root`` as the model ``name``, verified; why it is not used; or None
    when the cache holds no model of it."""
    refused = f"{shown(name)} found in {shown(root)} but not used"
    try:
        folder = snapshot(root, repo)
        kind = _kind(Files(folder, hub=True)) if folder is not None else None
        if folder is None or kind is None:
            return None
        ok, said = verify(folder)
    except EmbeddingError as exc:
        return f"{refused}: {exc}"
    return LocalModel(name, kind, folder, repo, said, hub=True) if ok else f"{refused}: {said}"


@contextmanager
def _loading(model: LocalModel) -> Iterator[None]:
    """Any problem met while loading ``model`` as one line: ``cannot load NAME from FOLDER: …``."""
    cannot = f"cannot load {shown(model.name)} from {shown(model.folder)}"
    try:
        yield
    except EmbeddingError as exc:
        raise EmbeddingError(f"{cannot}: {exc}") from exc
    except MemoryError:
        raise EmbeddingError(f"{cannot}: there is not enough memory for it") from None


def _call(what: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)``, with whatever it raises — a Rust panic included — as one :class:`EmbeddingError`
    line ``WHAT (its message)``; an interrupt, an exit or a cancellation passes on."""
    try:
        return fn(*args, **kwargs)
    except _PASSED_ON:
        raise
    except EmbeddingError:
        raise
    except BaseException as exc:  # noqa: BLE001 - pyo3_runtime.PanicException is a BaseException
        raise EmbeddingError(f"{what} ({one_line(exc) or type(exc).__name__})") from exc


class Model2VecBackend:
    """A model2vec static model, made by the ``model2vec`` package from the checked bytes of its folder's files
    (loaded on first use, or when made if ``config.json`` gives no ``hidden_dim``)."""

    def __init__(self, model: LocalModel) -> None:
        self.model_name = model.name
        self.local = model
        self._model: Any = None
        self._lock = threading.Lock()
        with _loading(model):
            dimensions = whole_number(Files.of(model).json("config.json"), "hidden_dim", "config.json")
            if dimensions is None:  # the model's own table says
                self._model = self._load()
                dimensions = int(self._model.embedding.shape[1])
        self.dimensions = dimensions

    def __reduce__(self) -> tuple[Any, ...]:
        return (Model2VecBackend, (self.local,))

    def _load(self) -> Any:
        from model2vec import StaticModel
        from tokenizers import Tokenizer

        files = Files.of(self.local)
        config = files.json("config.json")
        options: dict[str, Any] = {}
        if "normalize" in config:
            if not isinstance(config["normalize"], bool):
                raise EmbeddingError("config.json: normalize is not true or false")
            options["normalize"] = config["normalize"]
        if "max_length" in config:
            options["max_length"] = whole_number(config, "max_length", "config.json", 1 << 30)
        tensors = parse_safetensors(files.read("model.safetensors", WEIGHTS_LIMIT, "weights file"), "model.safetensors")
        vectors, weights, mapping = (tensors.get(k) for k in ("embeddings", "weights", "mapping"))
        if vectors is None:
            raise EmbeddingError('model.safetensors has no "embeddings" tensor')
        if vectors.ndim != 2 or not len(vectors) or not 1 <= vectors.shape[1] <= MAX_DIMENSIONS:
            raise EmbeddingError(f"model.safetensors: its embeddings are of shape {list(vectors.shape)}, not a table")
        if vectors.dtype.kind not in "fi":
            raise EmbeddingError(f"model.safetensors: its embeddings are {vectors.dtype}, not numbers")
        expected = whole_number(config, "hidden_dim", "config.json")
        if expected is not None and expected != vectors.shape[1]:
            raise EmbeddingError(
                f"config.json gives hidden_dim {expected}, but the embeddings of model.safetensors have "
                f"{vectors.shape[1]} values each"
            )
        if weights is not None and (weights.ndim != 1 or weights.dtype.kind != "f"):
            raise EmbeddingError("model.safetensors: its weights tensor is not a list of numbers")
        if mapping is not None and (
            mapping.ndim != 1
            or mapping.dtype.kind not in "iu"
            or (mapping.size and not 0 <= mapping.min() <= mapping.max() < len(vectors))
        ):
            raise EmbeddingError("model.safetensors: its mapping tensor does not index its embeddings")
        text = files.read("tokenizer.json", TOKENIZER_LIMIT, "tokenizer")
        tokenizer = _call(
            "tokenizer.json cannot be read by the tokenizers library", lambda: Tokenizer.from_str(text.decode("utf-8"))
        )
        model = _call(
            "model2vec cannot make a model of these files",
            StaticModel,
            vectors=vectors,
            tokenizer=tokenizer,
            config=config,
            weights=weights,
            token_mapping=mapping,
            **options,
        )
        _call("the model fails on a first text", model.encode, ["a first text"], show_progress_bar=False)
        return model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._lock:
            if self._model is None:
                with _loading(self.local):
                    self._model = self._load()
            out = _call(
                f"{shown(self.model_name)} cannot embed the text",
                self._model.encode,
                list(texts),
                show_progress_bar=False,
            )
        return np.asarray(out, dtype=np.float32).reshape(len(texts), -1)


class OnnxBertBackend:
    """A BERT-style ONNX model run by fastembed from a private copy of its folder's checked files, pooled and
    normalized as its files say (loaded on first use)."""

    def __init__(self, model: LocalModel) -> None:
        self.model_name = model.name
        self.local = model
        with _loading(model):
            files = Files.of(model)
            self.pooling, self.normalize = _pooling(model, files)
            self.model_file = _onnx_file(files) or "model.onnx"
            dimensions = whole_number(files.json("config.json"), "hidden_size", "config.json")
            if dimensions is None:
                raise EmbeddingError("config.json gives no hidden_size")
        self.dimensions = dimensions
        self._model: Any = None
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[Any, ...]:
        return (OnnxBertBackend, (self.local,))

    def _load(self) -> Any:
        files = Files.of(self.local)
        try:
            with tempfile.TemporaryDirectory(prefix="oxmem-model-", ignore_cleanup_errors=True) as private:
                for name in (self.model_file, *_FASTEMBED_FILES):
                    if name in (self.model_file, *_FASTEMBED_FILES[:2]) or files.has(name):
                        data = files.read(name, *limit_for(name))
                        if name.endswith(".json") and name != "tokenizer.json":
                            parse_json(data, shown(name))  # read by fastembed with json.load
                        _write_new(Path(private) / name, data)
                return _call("fastembed cannot load the model", self._fastembed, private)
        except OSError as exc:  # the temporary folder: none, or full
            raise EmbeddingError(
                f"no private copy of it can be made in the temporary folder ({one_line(exc.strerror or exc)})"
            ) from None

    def _fastembed(self, folder: str) -> Any:
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
        return TextEmbedding(model_name=registered, specific_model_path=folder, cache_dir=folder, local_files_only=True)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._lock:
            if self._model is None:
                with _loading(self.local):
                    self._model = self._load()
            out = _call(f"{shown(self.model_name)} cannot embed the text", lambda: list(self._model.embed(list(texts))))
        try:
            return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dimensions)
        except ValueError:
            raise EmbeddingError(
                f"{shown(self.model_name)} gives vectors of another size than the {self.dimensions} of its config.json"
            ) from None


def _write_new(path: Path, data: bytes) -> None:
    """``data`` as the new file ``path``, readable by this user only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def _pooling(model: LocalModel, files: Files) -> tuple[str, bool]:
    """The pooling (``cls`` or ``mean``) and normalization the model's sentence-transformers files declare; for
    a model of :data:`RECIPES` without them, its library's."""
    pooling_config = files.json("1_Pooling/config.json")
    modules = files.read("modules.json", *limit_for("modules.json")) if files.has("modules.json") else b""
    if pooling_config:
        pooling = "cls" if pooling_config.get("pooling_mode_cls_token") else "mean"
        return pooling, b"Normalize" in modules
    recipe = RECIPES.get(model.name)
    if recipe and recipe.pooling:
        return recipe.pooling, recipe.normalize
    raise EmbeddingError(f"no 1_Pooling/config.json says how {shown(model.name)} pools its tokens; not guessed")


def backend(name: str, beside: Path | None = None) -> Any:
    """An embedding backend for the model ``name``: found on this machine, else at the embeddings endpoint the
    user named (:mod:`.endpoint`); :class:`EmbeddingError` saying where oxmem looked otherwise (or what is wrong
    with the model found)."""
    found = find(name, beside)
    if not isinstance(found, str):
        return Model2VecBackend(found) if found.kind == MODEL2VEC else OnnxBertBackend(found)
    from . import endpoint

    remote = endpoint.backend(name)
    if remote is not None:
        return remote
    hint = f" (--embeddings-url names an endpoint that serves {name})" if name in API_MODELS else ""
    raise EmbeddingError(found + hint)
