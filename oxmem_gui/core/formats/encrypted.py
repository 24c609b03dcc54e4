"""SQLCipher-encrypted databases (aidaemon's default): opened with a key through the optional ``sqlcipher3``
binding, as a decrypted read-only snapshot held in memory.

APSW cannot decrypt, and ``sqlcipher3`` cannot hand over its pages, so the file is decrypted with
``sqlcipher_export`` into a private folder (``/dev/shm`` when there is one: memory, not disk), read into an
in-memory APSW database and deleted at once. The encrypted file is opened ``mode=ro``: nothing of it changes.
The snapshot does not follow the agent's later writes; open the file again to refresh.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import apsw

from ..database import discard_wal_files
from ..errors import KeyRequiredError, StoreOpenError

KEY_ENV = "OXMEM_DB_KEY"


def need_key_message(path: Path) -> str:
    return (
        f"{path.name} is encrypted — provide the key (--key, or the {KEY_ENV} environment variable); it looks like "
        "a SQLCipher database, such as aidaemon keeps"
    )


def decrypt_to_memory(path: Path, key: str) -> apsw.Connection:
    """An in-memory APSW connection holding the decrypted database; :class:`StoreOpenError` when the binding is
    missing or the key is wrong. ``key`` is the passphrase, or ``x'…'`` hex as SQLCipher takes raw keys."""
    try:
        import sqlcipher3
    except ImportError as exc:
        raise StoreOpenError(
            f"{path.name} is encrypted: opening it needs the optional SQLCipher binding "
            "(pip install 'oxmem-gui[sqlcipher]', or pip install sqlcipher3)"
        ) from exc
    if not key or "\x00" in key:
        raise KeyRequiredError(need_key_message(path))
    shm = Path("/dev/shm")
    folder = Path(tempfile.mkdtemp(prefix="oxmem-", dir=shm if shm.is_dir() and os.access(shm, os.W_OK) else None))
    plain = folder / "plain.db"
    sidecars = [Path(f"{path}-wal"), Path(f"{path}-shm")]
    existed = any(f.exists() for f in sidecars)
    try:
        source = sqlcipher3.connect(f"file:{_quote(path)}?mode=ro", uri=True)
        try:
            source.execute("PRAGMA cipher_log_level = NONE")  # a wrong key is our one line, not SQLCipher's log
            source.execute("PRAGMA key = '" + key.replace("'", "''") + "'")
            try:
                source.execute("SELECT count(*) FROM sqlite_master").fetchall()
            except sqlcipher3.DatabaseError as exc:
                raise KeyRequiredError(f"wrong key for {path.name}: SQLCipher could not decrypt it ({exc})") from exc
            source.execute("ATTACH DATABASE ? AS plain KEY ''", (str(plain),))
            source.execute("SELECT sqlcipher_export('plain')")
            source.execute("DETACH DATABASE plain")
        finally:
            source.close()
            if not existed:  # a read-only open of a WAL file creates them; nothing of the agent's is in them
                discard_wal_files(path)
        data = plain.read_bytes()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    conn = apsw.Connection(":memory:")
    conn.deserialize("main", data)
    return conn


def _quote(path: Path) -> str:
    from urllib.parse import quote

    return quote(os.fsencode(path.resolve()))
