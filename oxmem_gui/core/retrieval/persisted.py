"""The search caches of a store kept on disk between processes, so the first query of a new process (every
``oxmem search``, every launch of the inspector) on a file opened before costs what changed, not a rebuild.

**Where.** Only in the user's cache folder (``~/.cache/oxmem/indexes``, or ``$OXMEM_CACHE_DIR``): one folder per
store file, named by a hash of its resolved path — never beside the file, and only for a file this process opened
and read (a remote memory's snapshot and an encrypted file keep nothing: that would be a decrypted copy). What is
kept: the vector matrices (:meth:`.vectors.VectorIndex.export`) and the BM25 row list, lengths, postings and
sessions (:meth:`.bm25.Bm25Index.export`), each array a ``.npy`` file; ``meta.json`` describes them, with the
file's identity (device and inode), this format's version, and each array's BLAKE3 hash.

**Never trusted.** On restore every array's hash is checked (a truncated, damaged or edited cache is dropped and
the caches are built afresh — a wrong answer is never given), then the caches are brought to the file's state now
exactly as another program's commits are followed in one process: the newest rows they were built to must still
be there under the same rowids, rows added since are read and appended (the cost of what changed), anything else
drops what it touches; a file replaced by another (another inode) drops everything. The vector matrices are used
memory-mapped, where they lie.

**Written** when a store closes, if the caches hold at least :data:`MIN_ROWS` vectors or BM25 rows (below that,
building them takes milliseconds) and differ from what was restored: into a new folder, then switched to at once
(``current`` names it; a process reading the old one keeps its mapping), so two processes saving at once never
mix their files. **Bounded**: at most ``$OXMEM_CACHE_MAX_MB`` (default :data:`DEFAULT_MAX_BYTES`) across files, the
least recently used files' caches removed first; 0 keeps nothing. :func:`clear_all` removes every file's.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw
import blake3
import numpy as np

from ..folders import cache_dir
from .vectors import Room

log = logging.getLogger(__name__)

#: the version of what is kept; another version's cache is dropped
FORMAT = 3
CACHE_ENV = "OXMEM_CACHE_DIR"
MAX_ENV = "OXMEM_CACHE_MAX_MB"
DEFAULT_MAX_BYTES = 4 << 30
#: fewer vectors and BM25 rows than this together are not worth keeping
MIN_ROWS = 20_000
#: the parts kept, each with its export/restore
PARTS = ("vectors", "bm25")


def cache_root() -> Path:
    """Where every file's caches are kept."""
    given = os.environ.get(CACHE_ENV)
    return Path(given).expanduser() if given else cache_dir() / "indexes"


def max_bytes() -> int:
    """The bound on all files' caches together (``$OXMEM_CACHE_MAX_MB``; 0: keep nothing)."""
    try:
        return max(0, int(os.environ.get(MAX_ENV, ""))) << 20
    except ValueError:
        return DEFAULT_MAX_BYTES


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def cached_bytes(root: Path | None = None) -> int:
    """How much the caches of every file take on disk."""
    root = cache_root() if root is None else root
    return folder_size(root) if root.is_dir() else 0


def clear_all(root: Path | None = None) -> int:
    """Remove every file's caches; returns the bytes freed."""
    root = cache_root() if root is None else root
    freed = cached_bytes(root)
    if root.is_dir():
        shutil.rmtree(root, ignore_errors=True)
    return freed


def _hash(path: Path) -> str:
    digest = blake3.blake3(max_threads=blake3.blake3.AUTO)
    digest.update_mmap(path)
    return digest.hexdigest()


@dataclass(frozen=True)
class Identity:
    """The store file as the cache knows it: its resolved path, device and inode (a file replaced by another of
    the same name has another inode)."""

    path: str
    device: int
    inode: int

    @classmethod
    def of(cls, path: Path) -> Identity:
        resolved = path.resolve()
        info = os.stat(resolved)
        return cls(str(resolved), info.st_dev, info.st_ino)


class DiskCache:
    """The kept caches of one store file (see the module's docstring)."""

    def __init__(self, db_path: Path, root: Path | None = None) -> None:
        self.root = cache_root() if root is None else root
        self.identity = Identity.of(db_path)
        self.folder = self.root / blake3.blake3(os.fsencode(self.identity.path)).hexdigest()[:32]
        #: what the last restore or save left (a fingerprint of the caches): saving the same again is skipped
        self.kept: object = None
        #: what the last restore did, in words (for tests, benchmarks and ``--verbose``)
        self.said = "nothing restored yet"

    # -- restoring -----------------------------------------------------------------------------------

    def restore(self, conn: apsw.Connection, parts: dict[str, Any], fingerprint: Callable[[], object]) -> bool:
        """Give each part (``vectors``, ``bm25``: objects with ``restore(conn, described, arrays)``) what was kept
        for it, checked and brought up to date; True when something was restored. Anything unexpected — no cache,
        another version, another file, a hash that does not match, arrays that do not fit — restores nothing."""
        try:
            described, files = self._read_meta()
        except (OSError, ValueError, KeyError, TypeError) as exc:
            self.said = f"nothing restored: {exc}"
            return False
        restored, dropped = False, []
        for name, part in parts.items():
            kept = described["parts"].get(name)
            if kept is None:
                continue
            try:
                arrays = {
                    key.removeprefix(f"{name}-"): self._array(files, key, expected)
                    for key, expected in kept["hashes"].items()
                }
                restored = bool(part.restore(conn, kept["described"], arrays)) or restored
            except (OSError, ValueError, KeyError, TypeError) as exc:
                dropped.append(f"{name} not restored: {exc}")
                log.info("the kept %s cache of %s was dropped: %s", name, self.identity.path, exc)
        self.said = "; ".join(dropped) or ("restored" if restored else "nothing restored: nothing left to follow")
        if restored:
            self.kept = fingerprint()
            os.utime(self.folder)  # used: the last to be removed when the caches outgrow their bound
        return restored

    def _read_meta(self) -> tuple[dict[str, Any], Path]:
        current = (self.folder / "current").read_text("utf-8").strip()
        if not current or "/" in current or current.startswith("."):
            raise ValueError("no current cache")
        files = self.folder / current
        described = json.loads((files / "meta.json").read_text("utf-8"))
        if described.get("format") != FORMAT:
            raise ValueError(f"kept by another version (format {described.get('format')!r})")
        if Identity(**described["identity"]) != self.identity:
            raise ValueError("kept for another file of that name")
        return described, files

    @staticmethod
    def _array(files: Path, key: str, expected: str) -> np.ndarray:
        path = files / f"{key}.npy"
        if _hash(path) != expected:
            raise ValueError(f"{key}.npy does not match its hash")
        big = path.stat().st_size > 1 << 20  # mapped copy-on-write: written to (rows appended), the file stays
        array: np.ndarray = np.load(path, mmap_mode="c" if big else None, allow_pickle=False)
        return array

    # -- saving --------------------------------------------------------------------------------------

    def save(self, parts: dict[str, Any], fingerprint: object, rows: int) -> bool:
        """Keep each part's export (``export()`` → ``(described, arrays)`` or None) when the caches hold at least
        :data:`MIN_ROWS` rows and changed since restored or saved; True when written. Never raises: a cache that
        cannot be written is only not kept."""
        bound = max_bytes()
        if rows < MIN_ROWS or fingerprint == self.kept or bound == 0:
            return False
        exported = {name: part.export() for name, part in parts.items()}
        if not any(exported.values()):
            return False
        token = f"{time.time_ns():x}-{secrets.token_hex(4)}"
        files = self.folder / token
        try:
            files.mkdir(parents=True)
            meta: dict[str, Any] = {"format": FORMAT, "identity": self.identity.__dict__, "parts": {}}
            for name, found in exported.items():
                if found is None:
                    continue
                described, arrays = found
                hashes = {}
                for key, array in arrays.items():
                    path = files / f"{name}-{key}.npy"
                    _write(path, array)
                    hashes[f"{name}-{key}"] = _hash(path)
                meta["parts"][name] = {"described": described, "hashes": hashes}
            (files / "meta.json").write_text(json.dumps(meta), "utf-8")
            pointer = self.folder / f".current-{token}"
            pointer.write_text(token, "utf-8")
            os.replace(pointer, self.folder / "current")
        except (OSError, TypeError, ValueError) as exc:
            log.info("the caches of %s were not kept: %s", self.identity.path, exc)
            shutil.rmtree(files, ignore_errors=True)
            return False
        for old in self.folder.iterdir():  # the folders no longer current (a reader keeps its mapping)
            if old.is_dir() and old.name != token:
                shutil.rmtree(old, ignore_errors=True)
        self.kept = fingerprint
        _bound(self.root, bound, keep=self.folder)
        return True


def _write(path: Path, array: np.ndarray | Room) -> None:
    """``array`` as a ``.npy`` file; a :class:`~.vectors.Room` with its zero rows after it, written through a map
    (no second copy of a large matrix in memory)."""
    if not isinstance(array, Room):
        np.save(path, np.ascontiguousarray(array), allow_pickle=False)
        return
    kept = array.array
    mapped = np.lib.format.open_memmap(
        path, mode="w+", dtype=kept.dtype, shape=(len(kept) + array.rows, *kept.shape[1:])
    )
    mapped[: len(kept)] = kept
    mapped[len(kept) :] = 0
    mapped.flush()
    del mapped


def _bound(root: Path, bound: int, keep: Path) -> None:
    """Remove the least recently used files' caches until all fit in ``bound`` (``keep`` last of all)."""
    folders = [f for f in root.iterdir() if f.is_dir()]
    sizes = {f: folder_size(f) for f in folders}
    total = sum(sizes.values())
    for folder in sorted(folders, key=lambda f: (f == keep, f.stat().st_mtime)):
        if total <= bound:
            break
        shutil.rmtree(folder, ignore_errors=True)
        total -= sizes[folder]
