"""The deletions from a file's libSQL vector index that oxmem's writers made, kept between processes
(:mod:`.vector_index` says why and how they are used): one small file per agent's file in oxmem's cache folder,
``vector-deletions/<BLAKE3 of the file's resolved path>``, a line ``ROWID HASH`` each — never a vector, never text.

It is untrusted when read back: only a regular file of the user's is opened, never through a link and never
blocking on a FIFO (``O_NOFOLLOW | O_NONBLOCK``, then ``fstat``; the folder is opened the same way), one larger than
:data:`MAX_DELETIONS_BYTES` is not read, every line is checked, and on any doubt the whole file is ignored. It is
written atomically (a new file of mode 0600 in the folder, made 0700, then ``os.replace``, which replaces a link or a
FIFO there and never writes through it); a full disk or a folder that cannot be written only means nothing is kept.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
from collections.abc import Sequence
from pathlib import Path

import blake3

from . import folders

#: the deletions kept per file, the newest; and the most a file of them may be (its first line, then one
#: ``ROWID HASH`` line each at most 85 bytes)
MAX_DELETIONS = 10_000
DELETIONS_HEADER = b"oxmem vector deletions 1\n"
MAX_DELETIONS_BYTES = len(DELETIONS_HEADER) + MAX_DELETIONS * 85

_LINE = re.compile(rb"([1-9][0-9]{0,18}) ([0-9a-f]{64})")
_ROWID_MAX = (1 << 63) - 1


def deletions_file(db_path: str | os.PathLike[str]) -> Path:
    """Where the deletions from the file at ``db_path`` are kept: named by the BLAKE3 hash of its resolved path."""
    return folders.vector_deletions_dir() / blake3.blake3(os.fsencode(Path(db_path).resolve())).hexdigest()


def deletions_stat(db_path: str | os.PathLike[str]) -> tuple[int, ...] | None:
    """What tells that the deletions kept for the file at ``db_path`` changed (the entry itself, never followed)."""
    try:
        st = os.stat(deletions_file(db_path), follow_symlinks=False)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode)


def read_deletions(db_path: str | os.PathLike[str]) -> list[tuple[int, str]]:
    """The deletions kept for the file at ``db_path`` — ``[]`` when there are none, and on any doubt about what is
    there (see the module's docstring). Never raises, never blocks."""
    where = deletions_file(db_path)
    try:
        folder = os.open(where.parent, folders.OPEN_FOLDER)
        try:
            if (
                hasattr(os, "getuid")
                and os.stat(where.name, dir_fd=folder, follow_symlinks=False).st_uid != os.getuid()
            ):
                return []
            data = folders.read_kept(where.name, folder, MAX_DELETIONS_BYTES)
        finally:
            os.close(folder)
    except (OSError, ValueError):
        return []
    return _parsed(data)


def _parsed(data: bytes) -> list[tuple[int, str]]:
    """The entries of a deletions file's content, or ``[]`` for all of it at the first doubt."""
    if len(data) > MAX_DELETIONS_BYTES or not data.startswith(DELETIONS_HEADER) or not data.endswith(b"\n"):
        return []
    lines = data[len(DELETIONS_HEADER) : -1].split(b"\n") if len(data) > len(DELETIONS_HEADER) else []
    if len(lines) > MAX_DELETIONS:
        return []
    entries: dict[tuple[int, str], None] = {}
    for line in lines:
        found = _LINE.fullmatch(line)
        if found is None or int(found[1]) > _ROWID_MAX:
            return []
        entries[(int(found[1]), found[2].decode("ascii"))] = None
    return list(entries)


def write_deletions(db_path: str | os.PathLike[str], entries: Sequence[tuple[int, str]]) -> bool:
    """Keep ``entries`` (the newest :data:`MAX_DELETIONS`) for the file at ``db_path``, replacing what was kept; none
    removes the file. True when done; never raises (a full disk, a folder that cannot be written: nothing kept)."""
    where = deletions_file(db_path)
    lines = [f"{int(rowid)} {h}\n" for rowid, h in entries[-MAX_DELETIONS:]]
    if not all(_LINE.fullmatch(line[:-1].encode()) for line in lines):
        return False
    data = DELETIONS_HEADER + "".join(lines).encode("ascii")
    try:
        where.parent.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.mkdir(where.parent, 0o700)
        folder = os.open(where.parent, folders.OPEN_FOLDER)
    except (OSError, ValueError):
        return False
    try:
        st = os.fstat(folder)
        if not stat.S_ISDIR(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
            return False
        if stat.S_IMODE(st.st_mode) & 0o077:
            os.fchmod(folder, 0o700)
        if not entries:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(where.name, dir_fd=folder)
            return True
        temporary = f".{where.name}.{secrets.token_hex(8)}"
        fd = os.open(temporary, folders.OPEN_NEW, 0o600, dir_fd=folder)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(temporary, where.name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=folder)
            raise
        return True
    except (OSError, ValueError):
        return False
    finally:
        os.close(folder)
