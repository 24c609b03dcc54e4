"""The search caches of a store kept on disk between processes, so the first query of a new process (every
``oxmem search``, every launch of the inspector) on a file opened before costs what changed, not a rebuild.

**Where.** Only in the user's cache folder (``~/.cache/oxmem/indexes``, or ``$OXMEM_CACHE_DIR`` — which may be a
folder other programs share, ``~/.cache`` itself): one folder per store file, named by a hash of its resolved path
— never beside the file, and only for a file this process opened and read (a remote memory's snapshot and an
encrypted file keep nothing: that would be a decrypted copy). What is kept: the vector matrices
(:meth:`.vectors.VectorIndex.export`) and the BM25 row list, lengths, postings and sessions
(:meth:`.bm25.Bm25Index.export`), each array a ``.npy`` file; ``meta.json`` describes them, with the file's identity
(path, device and inode), what proves its content (below), this format's version, and each array's size and BLAKE3
hash. They hold the memory's words: the folders and files are the user's alone (modes 0700 and 0600).

**Only oxmem's own folders.** A file's folder holds a marker, ``.oxmem-cache``, of a fixed content
(:data:`MARKER_TEXT`), written when oxmem made the folder. Nothing else is ever read, written into or removed — not
by the size bound, not by :func:`clear_all` (the inspector's *Remove All*), not by a save clearing its earlier
folders — and no folder inside the cache folder is followed through a symbolic link (a link in one of oxmem's
folders is removed with it, never followed). Whatever else is there — other programs' folders, links, a folder of
a file's name that oxmem did not make (it is then not kept at all) — is left as it is and counted nowhere; the cache
folder itself is never removed. (The unmarked folders of versions before the marker have other names — a file's
folder is now named by a hash of ``oxmem search cache`` and its path — and are left to be removed by hand.)

**Never trusted.** A cache is data anyone may have changed. Only regular files are opened — never through a link
(``O_NOFOLLOW``), never blocking on a FIFO (``O_NONBLOCK``, checked on the open file) — and every read is bounded:
``current`` by 256 bytes, ``meta.json`` by :data:`MAX_META`, each array by the size ``meta.json`` gives, checked on
the open file before it is read (into memory up to :data:`SMALL`, else mapped). Every field of ``meta.json`` is
checked; ``current`` holds the hash of the whole ``meta.json``, so an edit to any of it (BM25's tokens, say) drops
the cache; each array's hash is checked. Then what the cache claims of the file is checked against the file, in the
reader's snapshot: its identity (a file replaced by another — another inode — drops everything); and, as recorded at
the save through the store's connection, SQLite's schema cookie unchanged, its change counter (header bytes 24–27)
and size not gone back (a copy of an older state written over the file), as many rows of ``chunks`` and of
``chunks_vec`` up to the newest ones (rows deleted since — a forget — cost a rebuild); and a sample of the rows the
caches hold — every row of a few dozen, else the first, the last and :data:`SAMPLE_EVEN` evenly spaced ones (a
stretch of more than a 47th of them replaced is always hit) and :data:`SAMPLE_RANDOM` random ones — must hold in the
file what the caches hold: for a vector, the same chunk id, model and vector, of a session of its matrix's scope;
for a BM25 row, as many of each token the postings are kept of (its text tokenized as FTS5 does, through the
connection), the same length, and a session of each scope it is listed in. Only then are the caches brought to the
file's state now, exactly as another program's commits are followed in one process: the newest rows they were built
to must still be there under the same rowids, rows added since are read and appended (the cost of what changed),
anything else drops what it touches. Any doubt, of any kind (whatever a malformed cache makes a part raise), drops
that part or all — the caches are built afresh, a wrong answer is never given, and restoring never raises. The
vector matrices are used memory-mapped (copy-on-write: rows appended after a restore go into the map, never the
file), where they lie.

**Written** when a store closes, if the caches hold at least :data:`MIN_ROWS` vectors or BM25 rows (below that,
building them takes milliseconds) and differ from what was restored: into a new folder, with ordinary writes of at
most a MiB each (never through a memory map, which on a full disk would kill the process with SIGBUS), then
switched to at once (``current`` names it, with ``meta.json``'s hash; a process reading the old one keeps its
mapping), so two processes saving at once never mix their files. Any failure — a full disk, a read-only folder —
removes only that new folder and keeps nothing; what a restore records (the folder's time, for the bound) is
best-effort. Nothing is synced to disk: a cache cut short by a crash fails its hashes and is rebuilt. **Bounded**:
at most ``$OXMEM_CACHE_MAX_MB`` (default :data:`DEFAULT_MAX_BYTES`) across oxmem's own folders, the least recently
used files' caches removed first; 0 keeps nothing. :func:`clear_all` removes every file's — oxmem's folders only.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import math
import os
import re
import secrets
import shutil
import stat
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw
import blake3
import numpy as np

from ..embeddings.backends import from_blob
from ..folders import OPEN_FOLDER, OPEN_NEW, cache_dir, open_kept, read_kept
from .scope import admits, scope_of
from .vectors import NONE, Room

log = logging.getLogger(__name__)

#: the version of what is kept; another version's cache is dropped
FORMAT = 4
CACHE_ENV = "OXMEM_CACHE_DIR"
MAX_ENV = "OXMEM_CACHE_MAX_MB"
DEFAULT_MAX_BYTES = 4 << 30
#: fewer vectors and BM25 rows than this together are not worth keeping
MIN_ROWS = 20_000
#: the parts kept, each with its export/restore
PARTS = ("vectors", "bm25")
#: the file that marks a file's folder as one oxmem made, and all it ever holds
MARKER = ".oxmem-cache"
MARKER_TEXT = b"oxmem search cache\n"
#: the most of ``meta.json`` read
MAX_META = 64 << 20
#: arrays up to this size are read into memory, larger ones mapped
SMALL = 1 << 20
#: the rows of each matrix and of the BM25 row list checked against the file: evenly spaced ones (the first and
#: the last among them) and random ones; all of them when there are no more than both together
SAMPLE_EVEN, SAMPLE_RANDOM = 48, 16
#: the file's tables whose rows up to the newest seen are counted
TABLES = ("chunks", "chunks_vec")

_FOLDER = re.compile(r"[0-9a-f]{32}")
_TOKEN = re.compile(r"[0-9a-f]{1,16}-[0-9a-f]{8}")
_KEY = re.compile(r"[A-Za-z0-9_]{1,64}")
_HASH = re.compile(r"[0-9a-f]{64}")
_CHUNK = 1 << 20


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
    """The bytes of the regular files in ``folder`` and below; no link followed or counted."""
    total = 0
    with contextlib.suppress(OSError):  # (a folder gone: nothing)
        for _top, _dirs, files, top_fd in os.fwalk(folder):
            for name in files:
                with contextlib.suppress(OSError):
                    info = os.stat(name, dir_fd=top_fd, follow_symlinks=False)
                    total += info.st_size if stat.S_ISREG(info.st_mode) else 0
    return total


def cached_bytes(root: Path | None = None) -> int:
    """How much the caches of every file take on disk (oxmem's own folders only)."""
    root = cache_root() if root is None else root
    return sum(folder_size(root / name) for name in _own_folders(root))


def clear_all(root: Path | None = None) -> int:
    """Remove every file's caches — the folders oxmem made, with all they hold; nothing else, never ``root``
    itself; returns the bytes freed."""
    root = cache_root() if root is None else root
    freed = 0
    for name in _own_folders(root):
        size = folder_size(root / name)
        _remove(root, name)
        freed += size - folder_size(root / name)
    return freed


def _own_folders(root: Path) -> Iterator[str]:
    """The names of the folders in ``root`` oxmem made for a file (named so, real folders, marked)."""
    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        fd = _open_own(root / name) if _FOLDER.fullmatch(name) else None
        if fd is not None:
            os.close(fd)
            yield name


def _open_own(folder: Path) -> int | None:
    """A descriptor of ``folder`` when it is one oxmem made: a real folder (not a link) holding the marker."""
    try:
        fd = os.open(folder, OPEN_FOLDER)
    except OSError:
        return None
    try:
        if read_kept(MARKER, fd, len(MARKER_TEXT)) == MARKER_TEXT:
            return fd
    except (OSError, ValueError):
        pass
    os.close(fd)
    return None


def _remove(parent: Path, name: str) -> None:
    """Remove ``parent / name``, a folder oxmem made, with all it holds — the marker last, so a folder only partly
    removed is still known as oxmem's; links are removed, never followed. What cannot be removed is left."""
    fd = _open_own(parent / name)
    if fd is None:
        return
    try:
        for entry in os.listdir(fd):
            if entry != MARKER:
                _delete(fd, parent / name, entry)
        os.unlink(MARKER, dir_fd=fd)
        os.rmdir(parent / name)
    except OSError:
        pass
    finally:
        os.close(fd)


def _delete(folder_fd: int, folder: Path, name: str) -> None:
    """Remove the entry ``name`` of ``folder`` (open as ``folder_fd``): a real folder with all it holds, anything
    else (a file, a link) unlinked. Errors are ignored."""
    with contextlib.suppress(OSError):
        if not stat.S_ISDIR(os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_mode):
            os.unlink(name, dir_fd=folder_fd)
        elif sys.version_info >= (3, 11) and shutil.rmtree.avoids_symlink_attacks:
            shutil.rmtree(name, dir_fd=folder_fd)
        else:  # (rmtree refuses a link, and never follows one inside)
            shutil.rmtree(folder / name)


def _bound(root: Path, bound: int, keep: Path) -> None:
    """Remove the least recently used files' caches until all of oxmem's fit in ``bound`` (``keep`` last of all)."""
    folders = list(_own_folders(root))
    sizes = {name: folder_size(root / name) for name in folders}
    total = sum(sizes.values())

    def used(name: str) -> float:
        try:
            return os.stat(root / name, follow_symlinks=False).st_mtime
        except OSError:
            return 0.0

    for name in sorted(folders, key=lambda name: (root / name == keep, used(name))):
        if total <= bound:
            break
        _remove(root, name)
        total -= sizes[name] - folder_size(root / name)


# -- reading and writing, bounded ------------------------------------------------------------------------------


def _write(folder_fd: int, name: str, data: bytes) -> None:
    """A new file ``name`` holding ``data``."""
    with os.fdopen(os.open(name, OPEN_NEW, 0o600, dir_fd=folder_fd), "wb") as out:
        out.write(data)


def _write_array(folder_fd: int, name: str, array: np.ndarray | Room) -> list[Any]:
    """``array`` as a new ``.npy`` file ``name`` — a :class:`~.vectors.Room` with its zero rows after it — written
    with ordinary writes of at most a MiB (no second copy of a large matrix in memory, and never through a memory
    map: a full disk fails a write, it does not kill the process); its size and BLAKE3 hash."""
    room = array.rows if isinstance(array, Room) else 0
    data = np.ascontiguousarray(array.array if isinstance(array, Room) else array)
    if data.dtype.hasobject or data.dtype.fields is not None:
        raise TypeError(f"{name}: not an array of plain values")
    header = np.lib.format.header_data_from_array_1_0(data)
    if room:
        header["shape"] = (len(data) + room, *data.shape[1:])
    head = io.BytesIO()
    np.lib.format.write_array_header_2_0(head, header)
    zeros = room * math.prod(data.shape[1:]) * data.dtype.itemsize
    digest, size = blake3.blake3(), 0
    with os.fdopen(os.open(name, OPEN_NEW, 0o600, dir_fd=folder_fd), "wb") as out:

        def put(chunk: Any) -> None:
            nonlocal size
            out.write(chunk)
            digest.update(chunk)
            size += len(chunk)

        put(head.getvalue())
        flat = data.reshape(-1).view(np.uint8)
        for start in range(0, len(flat), _CHUNK):
            put(flat[start : start + _CHUNK])
        block = memoryview(bytes(min(zeros, _CHUNK)))
        while zeros:
            put(block[: min(zeros, _CHUNK)])
            zeros -= min(zeros, _CHUNK)
    return [size, digest.hexdigest()]


def _load(folder_fd: int, name: str, size: int, digest: str) -> np.ndarray:
    """The array kept in ``name``: a regular file (:func:`.folders.open_kept`) of the size and hash ``meta.json`` gives,
    a ``.npy`` of plain values filling it exactly; up to :data:`SMALL` read into memory, else mapped copy-on-write."""
    with os.fdopen(open_kept(name, folder_fd), "rb") as f:
        if os.fstat(f.fileno()).st_size != size:
            raise ValueError(f"{name} is not of the size kept")
        if size <= SMALL:
            data = bytearray(size)
            if f.readinto(data) != size or blake3.blake3(data).hexdigest() != digest:
                raise ValueError(f"{name} does not match its hash")
            shape, dtype, offset = _npy_header(io.BytesIO(data), name, size)
            return np.frombuffer(data, dtype=dtype, count=math.prod(shape), offset=offset).reshape(shape)
        shape, dtype, offset = _npy_header(f, name, size)
        mapped = np.memmap(f, dtype=dtype, mode="c", offset=offset, shape=shape)
        hashed = blake3.blake3(os.pread(f.fileno(), offset, 0), max_threads=blake3.blake3.AUTO)
        hashed.update(mapped.reshape(-1).view(np.uint8).data)
        if hashed.hexdigest() != digest:
            raise ValueError(f"{name} does not match its hash")
        return mapped


def _npy_header(f: Any, name: str, size: int) -> tuple[tuple[int, ...], np.dtype[Any], int]:
    """The shape, type and data offset of the ``.npy`` file ``f`` of ``size`` bytes (ValueError: not one of plain
    values that fills it exactly)."""
    version = np.lib.format.read_magic(f)
    if version not in ((1, 0), (2, 0)):
        raise ValueError(f"{name} is not an array file")
    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, fortran, dtype = read(f)
    offset = int(f.tell())
    if fortran or dtype.hasobject or dtype.fields is not None or offset + math.prod(shape) * dtype.itemsize != size:
        raise ValueError(f"{name} is not an array of plain values of its size")
    return tuple(shape), dtype, offset


# -- what proves a cache is of the file's content ---------------------------------------------------------------


def _sample(n: int) -> list[int]:
    """Which of ``n`` rows to check (see :data:`SAMPLE_EVEN`)."""
    if n <= SAMPLE_EVEN + SAMPLE_RANDOM:
        return list(range(n))
    even = {round(i * (n - 1) / (SAMPLE_EVEN - 1)) for i in range(SAMPLE_EVEN)}
    return sorted(even | {secrets.randbelow(n) for _ in range(SAMPLE_RANDOM)})


def _header(identity: Identity) -> tuple[int, int]:
    """The SQLite change counter and size of the store file, read from the file the cache is of (ValueError:
    another file is there now)."""
    fd = os.open(identity.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino) != (identity.device, identity.inode):
            raise ValueError("kept for another file of that name")
        head = os.pread(fd, 100, 0)
    finally:
        os.close(fd)
    if len(head) < 100 or not head.startswith(b"SQLite format 3\0"):
        raise ValueError("the file is not an SQLite database")
    return int.from_bytes(head[24:28], "big"), info.st_size


def _one(conn: apsw.Connection, sql: str, *args: Any) -> int:
    return int(conn.execute(sql, args).fetchall()[0][0] or 0)


def _file_state(conn: apsw.Connection, identity: Identity) -> dict[str, Any]:
    """What proves the content of the file (in the connection's snapshot) the caches are saved with."""
    counter, size = _header(identity)
    rows = {t: [_one(conn, f"SELECT max(rowid) FROM {t}"), _one(conn, f"SELECT count(*) FROM {t}")] for t in TABLES}
    return {"counter": counter, "size": size, "cookie": _one(conn, "PRAGMA schema_version"), "rows": rows}


def _changed(conn: apsw.Connection, identity: Identity, kept: dict[str, Any]) -> str | None:
    """How the file is not the one the caches were saved of, or None (see the module's docstring)."""
    counter, size = _header(identity)
    if _one(conn, "PRAGMA schema_version") != kept["cookie"]:
        return "the file's schema changed"
    if counter < kept["counter"] or size < kept["size"]:
        return "the file went back to an earlier content"
    for table, (newest, count) in kept["rows"].items():  # (all rows, through the smallest index, less those added)
        added = _one(conn, f"SELECT count(*) FROM {table} WHERE rowid > ?", newest)
        if _one(conn, f"SELECT count(*) FROM {table}") - added != count:
            return f"rows of {table} were deleted or replaced"
    return None


def _check_vectors(conn: apsw.Connection, described: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """A sample of each matrix's rows must be in the file as the matrix holds them: under its vector rowid, the
    same chunk id, model and vector, of a session of the matrix's scope (else ValueError)."""
    for about in described["entries"]:
        at, dims, model, scope = about["at"], int(about["dims"]), str(about["model"]), scope_of(about["scope"])
        matrix, rowids, ids, ends = (arrays[f"{name}{at}"] for name in ("matrix", "numbers", "ids", "ends"))
        for row in _sample(int(about["n"])):
            rowid = int(rowids[2][row])
            if rowid == NONE:  # (added by the process that saved them, and never read back: nothing to look up)
                continue
            chunk_id = bytes(ids[int(ends[row - 1]) + 1 if row else 0 : int(ends[row])]).decode("utf-8")
            found = conn.execute(
                "SELECT v.chunk_id, v.embedding_model, c.session_id, v.embedding_blob FROM chunks_vec v "
                "JOIN chunks c ON c.chunk_id = v.chunk_id WHERE v.rowid = ?",
                (rowid,),
            ).fetchall()
            *about_row, session_id, blob = found[0] if found else (None, None, None, None)
            if (
                about_row != [chunk_id, model]
                or not isinstance(session_id, str)
                or not admits(scope, session_id)
                or not isinstance(blob, bytes)
                or from_blob(blob, dims).astype("<f4").tobytes() != matrix[row].astype("<f4").tobytes()
            ):
                raise ValueError(f"the vector of rowid {rowid} is not the one kept")


def _check_bm25(conn: apsw.Connection, described: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """A sample of the live rows must be in the file as the postings hold them: the row's text, tokenized as FTS5
    does, holds as many of each token postings are kept of (a ``word*``: of the tokens it starts), as many tokens in
    all as its length, and it is of a session of each scope it is listed in, and of no other (else ValueError)."""
    rowids, lengths, alive = arrays["rowids"], arrays["lengths"], arrays["alive"]
    live = np.flatnonzero(alive)
    rows = live[_sample(len(live))]
    sampled = np.zeros(len(rowids), dtype=bool)
    sampled[rows] = True

    def among(positions: np.ndarray) -> np.ndarray:
        """Which of ``positions`` (dense row positions: each indexes the row list) are sampled."""
        if len(positions) and int(positions.min()) < 0:
            raise ValueError("a posting names no row")
        hit: np.ndarray = sampled[positions]
        return hit

    tokens = [str(t) for t in described["tokens"]]
    held: dict[int, dict[str, float]] = {int(row): {} for row in rows}
    for i, token in enumerate(tokens):
        positions, freqs = arrays[f"positions{i}"], arrays[f"freqs{i}"]
        hit = among(positions)
        for at, freq in zip(positions[hit].tolist(), freqs[hit].tolist(), strict=True):
            held[int(at)][token] = float(freq)
    scopes = []
    for j, kept in enumerate(described["scopes"]):
        positions = arrays[f"session{j}"]
        scopes.append((scope_of(kept), set(positions[among(positions)].tolist())))
    tokenizer = conn.fts5_tokenizer("unicode61", [])
    for row in held:
        rowid = int(rowids[row])
        found = conn.execute("SELECT session_id, chunk_text FROM chunks WHERE rowid = ?", (rowid,)).fetchall()
        session_id, text = found[0] if found else (None, None)
        if not isinstance(session_id, str) or not isinstance(text, str):
            raise ValueError(f"the row of rowid {rowid} is not the one kept")
        tokenized: Iterable[Any] = tokenizer(text.encode("utf-8"), apsw.FTS5_TOKENIZE_DOCUMENT, None)
        counts = Counter(str(t[2]) for t in tokenized)
        for token in tokens:
            if token.endswith("*"):
                count = sum(n for t, n in counts.items() if t.startswith(token[:-1]))
            else:
                count = counts.get(token, 0)
            if count != held[row].get(token, 0.0):
                raise ValueError(f"the row of rowid {rowid} does not hold the words kept")
        if sum(counts.values()) != float(lengths[row]) or any(
            (row in members) != admits(scope, session_id) for scope, members in scopes
        ):
            raise ValueError(f"the row of rowid {rowid} is not the one kept")


#: each part's check of its arrays against the file
_CHECKS: dict[str, Callable[[apsw.Connection, dict[str, Any], dict[str, np.ndarray]], None]] = {
    "vectors": _check_vectors,
    "bm25": _check_bm25,
}


#: the shape of ``meta.json``: a dict of exactly these keys; ``(key, item)``, a dict of any keys matching ``key``,
#: each an ``item``; a list of that length; a type (exactly it); a pattern, a string matching it
_META: dict[str, Any] = {
    "format": int,
    "identity": {"path": str, "device": int, "inode": int},
    "file": {"counter": int, "size": int, "cookie": int, "rows": {table: [int, int] for table in TABLES}},
    "parts": (re.compile("|".join(PARTS)), {"described": dict, "arrays": (_KEY, [int, _HASH])}),
}


def _fits(value: object, shape: Any) -> bool:
    """Whether ``value`` has ``shape`` (see :data:`_META`)."""
    if isinstance(shape, type):
        return type(value) is shape
    if isinstance(shape, re.Pattern):
        return isinstance(value, str) and shape.fullmatch(value) is not None
    if isinstance(shape, list):
        return isinstance(value, list) and len(value) == len(shape) and all(map(_fits, value, shape))
    if isinstance(shape, tuple):
        return isinstance(value, dict) and all(_fits(k, shape[0]) and _fits(v, shape[1]) for k, v in value.items())
    return isinstance(value, dict) and set(value) == set(shape) and all(_fits(value[k], s) for k, s in shape.items())


def _checked(meta: object) -> dict[str, Any]:
    """``meta`` when it has the shape :meth:`DiskCache.save` writes, every field of its type; else ValueError."""
    found = meta.get("format") if isinstance(meta, dict) else None
    if found != FORMAT:
        raise ValueError(f"kept by another version (format {found!r})")
    if not _fits(meta, _META):
        raise ValueError("meta.json is not of the shape kept")
    assert isinstance(meta, dict)
    return meta


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
        named = blake3.blake3(b"oxmem search cache\0" + os.fsencode(self.identity.path)).hexdigest()[:32]
        self.folder = self.root / named
        #: what the last restore or save left (a fingerprint of the caches): saving the same again is skipped
        self.kept: object = None
        #: what the last restore did, in words (for tests, benchmarks and ``--verbose``)
        self.said = "nothing restored yet"
        #: the store's connection, as the caches were restored in it: a save reads the file's state through it
        self._conn: apsw.Connection | None = None

    # -- restoring -----------------------------------------------------------------------------------

    def restore(self, conn: apsw.Connection, parts: dict[str, Any], fingerprint: Callable[[], object]) -> bool:
        """Give each part (``vectors``, ``bm25``: objects with ``restore(conn, described, arrays)`` and ``clear()``)
        what was kept for it, checked against the file (in ``conn``'s read transaction) and brought up to date;
        True when something was restored. Anything unexpected — no cache, another version, another file or
        content, a hash that does not match, arrays that do not fit, a file that is not a regular one — restores
        nothing of what it touches. Never raises."""
        self._conn = conn
        if max_bytes() == 0:  # keep nothing: what was kept before is neither used nor left (see :meth:`save`)
            self.said = f"nothing restored: ${MAX_ENV} is 0"
            return False
        with contextlib.ExitStack() as opened:
            try:
                meta, folder_fd, files_fd = self._read_meta(conn, opened)
            except Exception as exc:  # (whatever a cache anyone may have written makes happen)
                self.said = f"nothing restored: {exc}"
                return False
            restored, dropped = False, []
            for name, part in parts.items():
                kept = meta["parts"].get(name)
                if kept is None:
                    continue
                try:
                    arrays = {
                        key: _load(files_fd, f"{name}-{key}.npy", *found) for key, found in kept["arrays"].items()
                    }
                    _CHECKS[name](conn, kept["described"], arrays)
                    restored = bool(part.restore(conn, kept["described"], arrays)) or restored
                except Exception as exc:
                    with contextlib.suppress(Exception):
                        part.clear()
                    dropped.append(f"{name} not restored: {exc}")
                    log.info("the kept %s cache of %s was dropped: %s", name, self.identity.path, exc)
            self.said = "; ".join(dropped) or ("restored" if restored else "nothing restored: nothing left to follow")
            if restored:
                self.kept = fingerprint()
                with contextlib.suppress(OSError, NotImplementedError):  # (read-only: the bound may remove it sooner)
                    os.utime(folder_fd)  # used: the last to be removed when the caches outgrow their bound
        return restored

    def _read_meta(self, conn: apsw.Connection, opened: contextlib.ExitStack) -> tuple[dict[str, Any], int, int]:
        """``meta.json`` of the current cache, checked, and the file's folder and the cache's folder, open."""
        folder_fd = _open_own(self.folder)
        if folder_fd is None:
            raise ValueError("no cache kept for this file")
        opened.callback(os.close, folder_fd)
        pointer = read_kept("current", folder_fd, 256).decode("ascii").split()
        if len(pointer) != 2 or not _TOKEN.fullmatch(pointer[0]) or not _HASH.fullmatch(pointer[1]):
            raise ValueError("no current cache")
        files_fd = os.open(pointer[0], OPEN_FOLDER, dir_fd=folder_fd)
        opened.callback(os.close, files_fd)
        data = read_kept("meta.json", files_fd, MAX_META)
        if blake3.blake3(data).hexdigest() != pointer[1]:
            raise ValueError("meta.json does not match its hash")
        meta = _checked(json.loads(data))
        if Identity(**meta["identity"]) != self.identity:
            raise ValueError("kept for another file of that name")
        changed = _changed(conn, self.identity, meta["file"])
        if changed:
            raise ValueError(changed)
        return meta, folder_fd, files_fd

    # -- saving --------------------------------------------------------------------------------------

    def save(self, parts: dict[str, Any], fingerprint: object, rows: int, conn: apsw.Connection | None = None) -> bool:
        """Keep each part's export (``export()`` → ``(described, arrays)`` or None) when the caches hold at least
        :data:`MIN_ROWS` rows and changed since restored or saved; True when written. ``conn``: the store's
        connection, in a read transaction (by default the one the caches were restored in), through which the
        file's state is recorded. Never raises: a cache that cannot be written is only not kept (and logged)."""
        bound = max_bytes()
        conn = self._conn if conn is None else conn
        if bound == 0:  # keep nothing: every cache oxmem kept goes (its marked folders only)
            with contextlib.suppress(OSError):
                _bound(self.root, 0, keep=self.folder)
            return False
        if rows < MIN_ROWS or fingerprint == self.kept or conn is None:
            return False
        try:
            if not self._save(conn, parts):
                return False
        except Exception as exc:
            log.info("the caches of %s were not kept: %s", self.identity.path, exc)
            return False
        self.kept = fingerprint
        with contextlib.suppress(OSError):
            _bound(self.root, bound, keep=self.folder)
        return True

    def _save(self, conn: apsw.Connection, parts: dict[str, Any]) -> bool:
        exported = {name: found for name, part in parts.items() if (found := part.export()) is not None}
        if not exported:
            return False
        meta: dict[str, Any] = {
            "format": FORMAT,
            "identity": self.identity.__dict__,
            "file": _file_state(conn, self.identity),
            "parts": {},
        }
        token = f"{time.time_ns():x}-{secrets.token_hex(4)}"
        pointer = f".current-{token}"
        with contextlib.ExitStack() as opened:
            folder_fd = self._own_folder()
            opened.callback(os.close, folder_fd)
            os.mkdir(token, 0o700, dir_fd=folder_fd)
            try:
                files_fd = os.open(token, OPEN_FOLDER, dir_fd=folder_fd)
                opened.callback(os.close, files_fd)
                for name, (described, arrays) in exported.items():
                    if not all(_KEY.fullmatch(key) for key in arrays):
                        raise ValueError(f"arrays of {name} named {sorted(arrays)}")
                    written = {key: _write_array(files_fd, f"{name}-{key}.npy", a) for key, a in arrays.items()}
                    meta["parts"][name] = {"described": described, "arrays": written}
                data = json.dumps(meta).encode("utf-8")
                _write(files_fd, "meta.json", data)
                _write(folder_fd, pointer, f"{token} {blake3.blake3(data).hexdigest()}\n".encode())
                os.replace(pointer, "current", src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
            except BaseException:  # nothing of this save is kept
                for name in (pointer, token):
                    _delete(folder_fd, self.folder, name)
                raise
            for name in os.listdir(folder_fd):  # earlier saves' folders and pointers (a reader keeps its mapping)
                earlier = name.removeprefix(".current-")
                if earlier != token and _TOKEN.fullmatch(earlier):
                    _delete(folder_fd, self.folder, name)
        return True

    def _own_folder(self) -> int:
        """This file's folder, open — made and marked when there is none; ValueError when there is one oxmem did
        not make (or a link), which is left as it is."""
        self.root.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(self.folder, 0o700)
        except FileExistsError:
            fd = _open_own(self.folder)
            if fd is None:
                raise ValueError(f"{self.folder} was not made by oxmem (no {MARKER}): left as it is") from None
            return fd
        try:
            fd = os.open(self.folder, OPEN_FOLDER)
        except OSError:
            with contextlib.suppress(OSError):
                os.rmdir(self.folder)
            raise
        try:
            _write(fd, MARKER, MARKER_TEXT)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(self.folder / MARKER)
            with contextlib.suppress(OSError):
                os.rmdir(self.folder)
            raise
        return fd
