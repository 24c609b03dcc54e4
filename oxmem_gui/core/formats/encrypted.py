"""SQLCipher-encrypted databases (aidaemon's default): opened with a key through the optional ``sqlcipher3``
binding, as a decrypted snapshot held in memory, and edited in the encrypted file itself.

APSW cannot decrypt, and ``sqlcipher3`` cannot hand over its pages, so the file is decrypted with
``sqlcipher_export`` into a private folder (``/dev/shm`` when there is one: memory, not disk), read into an
in-memory APSW database and deleted at once. The encrypted file is opened ``mode=ro`` for that: nothing of it
changes. The snapshot does not follow the agent's later writes; open the file again to refresh.

An edit (:func:`write_through`) runs on a ``sqlcipher3`` connection to the encrypted file, keyed, in one
transaction — no plaintext of it ever reaches a disk — and the snapshot is then taken again. A backup
(:func:`encrypted_backup`) is an encrypted copy under the same key. Only one SQLite library has the file open at a
time: the snapshot holds no handle on it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import apsw

from ..database import discard_wal_files
from ..errors import KeyRequiredError, StoreOpenError
from ..redaction import remember

KEY_ENV = "OXMEM_DB_KEY"
T = TypeVar("T")


def need_key_message(path: Path) -> str:
    return (
        f"{path.name} is encrypted — provide the key (--key, or the {KEY_ENV} environment variable); it looks like "
        "a SQLCipher database, such as aidaemon keeps"
    )


def _binding(path: Path) -> Any:
    try:
        import sqlcipher3
    except ImportError as exc:
        raise StoreOpenError(
            f"{path.name} is encrypted: opening it needs the optional SQLCipher binding "
            "(pip install 'oxmem-gui[sqlcipher]', or pip install sqlcipher3)"
        ) from exc
    return sqlcipher3


def _keyed(path: Path, key: str, *, read_only: bool) -> Any:
    """A ``sqlcipher3`` connection to ``path`` with ``key`` applied and checked (autocommit; foreign keys on and a
    busy timeout for writes, as the agent sets them)."""
    sqlcipher3 = _binding(path)
    remember(key)
    if not key or "\x00" in key:
        raise KeyRequiredError(need_key_message(path))
    mode = "ro" if read_only else "rw"
    conn = sqlcipher3.connect(f"file:{_quote(path)}?mode={mode}", uri=True, isolation_level=None, timeout=5.0)
    try:
        conn.execute("PRAGMA cipher_log_level = NONE")  # a wrong key is our one line, not SQLCipher's log
        conn.execute("PRAGMA key = '" + key.replace("'", "''") + "'")
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
        except sqlcipher3.DatabaseError as exc:
            raise KeyRequiredError(f"wrong key for {path.name}: SQLCipher could not decrypt it ({exc})") from exc
        if not read_only:
            conn.execute("PRAGMA foreign_keys = ON")
    except BaseException:
        conn.close()
        raise
    return conn


def _export(path: Path, key: str, target: Path, target_key: str) -> None:
    """``sqlcipher_export`` of ``path`` into a new file ``target`` (plaintext when ``target_key`` is empty)."""
    sidecars = [Path(f"{path}-wal"), Path(f"{path}-shm")]
    existed = any(f.exists() for f in sidecars)
    source = _keyed(path, key, read_only=True)
    try:
        source.execute("ATTACH DATABASE ? AS oxmem_copy KEY ?", (str(target), target_key))
        source.execute("SELECT sqlcipher_export('oxmem_copy')")
        source.execute("DETACH DATABASE oxmem_copy")
    finally:
        source.close()
        if not existed:  # a read-only open of a WAL file creates them; nothing of the agent's is in them
            discard_wal_files(path)


def _decrypted(path: Path, key: str) -> bytes:
    shm = Path("/dev/shm")
    folder = Path(tempfile.mkdtemp(prefix="oxmem-", dir=shm if shm.is_dir() and os.access(shm, os.W_OK) else None))
    try:
        plain = folder / "plain.db"
        _export(path, key, plain, "")
        return plain.read_bytes()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def decrypt_to_memory(path: Path, key: str) -> apsw.Connection:
    """An in-memory APSW connection holding the decrypted database; :class:`StoreOpenError` when the binding is
    missing or the key is wrong. ``key`` is the passphrase, or ``x'…'`` hex as SQLCipher takes raw keys."""
    data = _decrypted(path, key)
    conn = apsw.Connection(":memory:")
    conn.deserialize("main", data)
    return conn


def write_through(snapshot: apsw.Connection, path: Path, key: str, fn: Callable[..., T], *args: Any) -> T:
    """``fn(conn, *args)`` on a keyed read-write connection to the encrypted file (``fn`` makes its own
    transaction), then ``snapshot`` taken again from the file — after a refused edit too, which may have met the
    agent's newer rows (the conflict then shows what the refreshed views show)."""
    conn = _keyed(path, key, read_only=False)
    try:
        return fn(conn, *args)
    finally:
        conn.close()
        snapshot.deserialize("main", _decrypted(path, key))


def encrypted_backup(path: Path, key: str, target: Path) -> Path:
    """A consistent copy of the encrypted file at ``target``, encrypted with the same key (mode 0600)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    _export(path, key, target, key)
    target.chmod(0o600)
    return target


def _quote(path: Path) -> str:
    from urllib.parse import quote

    return quote(os.fsencode(path.resolve()))
