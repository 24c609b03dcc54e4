"""Opening any memory database through the one reader interface (see :mod:`.formats.base`).

:func:`open_memory` is how every front end opens a file: it detects the format from the file itself
(:mod:`.formats.detect`) and returns the reader for it — :class:`~oxmem_gui.core.store.MemoryStore` for the store's own
schema (this project's, Oxydra's, Oxydra's with libSQL's vector index), or a read-only
:class:`~.formats.base.ForeignReader` for Omega, ZEKE, aidaemon (plaintext, legacy, or encrypted with a key) and any
other SQLite file (a table browser). :func:`inspect_database` is ``oxmem info``.
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

from . import remote
from .contract import Memory
from .database import BUSY_TIMEOUT_MS, Database, database_path
from .errors import InvalidInputError, KeyRequiredError, ReadOnlyError, StoreOpenError
from .formats.agno import AgnoReader
from .formats.aidaemon import AidaemonReader
from .formats.base import Capabilities, ForeignReader, Retriever
from .formats.detect import LABELS, article, detect_schema, sniff_file
from .formats.encrypted import KEY_ENV, decrypt_to_memory, need_key_message
from .formats.info import DatabaseInfo, file_info
from .formats.langgraph_checkpoints import LangGraphCheckpointsReader
from .formats.langgraph_store import LangGraphStoreReader
from .formats.mem0_history import Mem0HistoryReader
from .formats.omega import OmegaReader
from .formats.openai_agents import OpenAIAgentsReader
from .formats.zeke import ZekeReader
from .memory_store import MemoryStore
from .remote import HranaClient, PullReport
from .retrieval import ranking_choice
from .retrieval.hybrid import FTS_MODES

#: formats read by the store itself (the tables of contract §3)
NATIVE_FORMATS = ("oxmem", "oxydra", "oxydra-libsql")
READERS: dict[str, type[ForeignReader]] = {
    "omega": OmegaReader,
    "zeke": ZekeReader,
    "aidaemon": AidaemonReader,
    "aidaemon-legacy": AidaemonReader,
    "openai-agents": OpenAIAgentsReader,
    "agno": AgnoReader,
    "mem0-history": Mem0HistoryReader,
    "langgraph-store": LangGraphStoreReader,
    "langgraph-checkpoints": LangGraphCheckpointsReader,
    "sqlite-unknown": ForeignReader,
}


def implementations(
    store: MemoryStore,
    table_browser: ForeignReader,
    omega: OmegaReader,
    zeke: ZekeReader,
    aidaemon: AidaemonReader,
    openai_agents: OpenAIAgentsReader,
    agno: AgnoReader,
    mem0_history: Mem0HistoryReader,
    langgraph_store: LangGraphStoreReader,
    langgraph_checkpoints: LangGraphCheckpointsReader,
) -> list[Memory]:
    """Every class :func:`open_memory` may return, one of each: the type checker holds each to
    :class:`~.contract.Memory` here (a new reader is added to these parameters)."""
    return [
        store,
        table_browser,
        omega,
        zeke,
        aidaemon,
        openai_agents,
        agno,
        mem0_history,
        langgraph_store,
        langgraph_checkpoints,
    ]


async def open_memory(
    path: str | os.PathLike[str],
    *,
    read_only: bool = True,
    create: bool = True,
    key: str | None = None,
    embedding: Any = "auto",
    model_path: str | os.PathLike[str] | None = None,
    busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    **store_options: Any,
) -> Memory:
    """Open ``path`` with the reader for its format.

    A missing or empty file is the store's own (created when ``create`` and not ``read_only``). Another agent's
    file opens read-write only when its reader makes some edits the way that agent does (``EDITS``); otherwise
    asking for read-write raises :class:`ReadOnlyError` saying why. An encrypted file needs ``key`` (else
    :class:`StoreOpenError` "encrypted — provide the key"); it opens as a decrypted snapshot, whose edits go into
    the encrypted file with that key.
    """
    p = database_path(path)
    options = dict(embedding=embedding, model_path=model_path, busy_timeout_ms=busy_timeout_ms, **store_options)
    sniffed = sniff_file(p)
    if sniffed == "encrypted":
        if not key:
            raise KeyRequiredError(need_key_message(p))
        db = await Database.adopt(lambda: decrypt_to_memory(p, key), p, notice=_snapshot_notice(p))
        return await _reader(db, read_only, options, key=key)
    if sniffed is not None or not p.is_file() or p.stat().st_size == 0:
        return await MemoryStore.open(p, read_only=read_only, create=create, **options)
    if not read_only and not os.access(p, os.W_OK):  # refused before any connection could leave files beside it
        raise ReadOnlyError(f"{p} is read-only; open it read-only or make it writable")
    db = await Database.open(p, read_only=True, create=False, busy_timeout_ms=busy_timeout_ms)
    return await _reader(db, read_only, options, create=create)


async def _reader(
    db: Database, read_only: bool, options: dict[str, Any], create: bool = False, key: str | None = None
) -> Memory:
    try:
        fmt = await db.read(detect_schema)
    except BaseException:
        db.close()
        raise
    if fmt in NATIVE_FORMATS and db.adopted is None:
        if not read_only:
            db.close()
            return await MemoryStore.open(db.path, read_only=False, create=create, **options)
        try:
            return await MemoryStore.open(db.path, read_only=True, database=db, **options)
        except BaseException:
            db.close()
            raise
    cls = READERS.get(fmt, ForeignReader)
    if not read_only and cls.EDITS and db.adopted is not None:  # edits go into the encrypted file with its key
        if not os.access(db.path, os.W_OK):
            db.close()
            raise ReadOnlyError(f"{db.path} is read-only; open it read-only or make it writable")
        return cls(db, fmt, key=key, writable=True)
    if not read_only and cls.EDITS:  # the edits its agent makes
        db.close()
        db = await Database.open(db.path, read_only=False, create=False, busy_timeout_ms=options["busy_timeout_ms"])
        return cls(db, fmt)
    reader = cls(db, fmt, key=key)
    if not read_only:
        db.close()
        raise ReadOnlyError(
            f"{db.path.name} is {article(LABELS[fmt])} {LABELS[fmt]} file: {reader.REASON}; nothing was changed"
        )
    return reader


async def open_remote(
    url: str,
    token: str | None = None,
    *,
    folder: str | os.PathLike[str] | None = None,
    progress: Any = None,
    stop: threading.Event | None = None,
    embedding: Any = "auto",
    model_path: str | os.PathLike[str] | None = None,
    **store_options: Any,
) -> Memory:
    """Open the memory on a libSQL server at ``url`` (``libsql://``, ``https://``, ``http://``) read-only: pull a
    snapshot into a private file in ``folder`` (default: :func:`.remote.cache_dir`) and open it with the reader
    for its format. The result's ``remote`` (:class:`.remote.RemoteSnapshot`) refreshes it; closing the memory
    removes the file. Errors are one line (:class:`.remote.RemoteError`, :class:`InvalidInputError` for a bad URL);
    a pull cut off leaves nothing behind."""
    client = HranaClient(url, token)
    where = Path(folder) if folder is not None else remote.cache_dir()
    try:
        await asyncio.to_thread(_private_folder, where)
        path = remote.copy_path(where, url)
        report = await asyncio.to_thread(remote.pull, client, path, progress=progress, stop=stop)
    except BaseException:
        client.close()
        raise
    snapshot = remote.RemoteSnapshot(client, path, report)
    try:
        db = await Database.open(path, read_only=True, create=False)
    except BaseException:
        snapshot.discard()
        raise
    snapshot.attach(db)
    options = dict(embedding=embedding, model_path=model_path, busy_timeout_ms=BUSY_TIMEOUT_MS, **store_options)
    memory = await _reader(db, True, options)  # closes db (and so removes the copy) when it fails
    if memory.format not in NATIVE_FORMATS:
        snapshot.describe(_not_memory(memory.format))
    memory.remote = snapshot
    return memory


def _not_memory(fmt: str) -> str:
    if fmt in READERS and fmt != "sqlite-unknown":
        return f"{article(LABELS[fmt])} {LABELS[fmt]}"
    return "not an agent's memory: its tables are shown"


def _private_folder(folder: Path) -> None:
    """The copies' folder, readable by the user only (a memory may hold anything); copies of ended processes
    are removed."""
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        folder.chmod(0o700)
    except OSError as exc:
        raise StoreOpenError(f"cannot make the folder for the snapshot, {folder}: {exc.strerror}") from None
    remote.sweep(folder)


async def describe_memory(memory: Memory) -> DatabaseInfo:
    """What ``oxmem info`` and *Help ▸ About This Database…* say of an open memory: for a remote one, the server's
    URL in place of the copy's path, and how its snapshot was read."""
    info = await memory.info()
    if memory.remote is not None:
        info.path = memory.remote.url
        info.markers.insert(0, memory.remote.summary())
    return info


async def refresh_remote(memory: Memory, progress: Any = None, stop: threading.Event | None = None) -> PullReport:
    """Bring a remote memory's copy up to date: only what changed is transferred (:func:`.remote.snapshot.refresh`)."""
    if memory.remote is None:
        raise InvalidInputError(f"{memory.path.name} is not a snapshot of a remote database")
    return await asyncio.to_thread(memory.remote.refresh, progress, stop)


def _snapshot_notice(path: Path) -> str:
    return f"{path.name} is encrypted: this is a decrypted snapshot in memory (open it again to see new writes)"


async def detect(path: str | os.PathLike[str], key: str | None = None) -> str:
    """The format name of a file (:mod:`.formats.detect`)."""
    return (await inspect_database(path, key)).format


async def inspect_database(path: str | os.PathLike[str], key: str | None = None) -> DatabaseInfo:
    """``oxmem info``: format, version markers, tables with row counts, journal mode, embeddings. Encrypted
    files without ``key`` and files that are not SQLite are described without being opened."""
    p = database_path(path)
    if not p.exists():
        raise StoreOpenError(f"{p} does not exist")
    sniffed = sniff_file(p)
    if p.stat().st_size == 0:
        info = file_info(p, "sqlite-unknown")
        info.markers = ["an empty file: SQLite reads it as a database without tables (`oxmem init` makes it a store)"]
        return info
    if sniffed == "not-sqlite":
        info = file_info(p, "not-sqlite")
        info.markers = ["its first bytes are not SQLite's header: nothing to open"]
        return info
    if sniffed == "encrypted" and not key:
        info = file_info(p, "encrypted")
        info.markers = [need_key_message(p)]
        return info
    memory = await open_memory(p, read_only=True, create=False, key=key, embedding="deterministic")
    async with memory:
        return await memory.info()


__all__ = [
    "KEY_ENV",
    "LABELS",
    "NATIVE_FORMATS",
    "Capabilities",
    "DatabaseInfo",
    "ForeignReader",
    "Memory",
    "Retriever",
    "describe_memory",
    "detect",
    "inspect_database",
    "open_memory",
]


async def default_ranking(store: Memory, session_id: str | None = None) -> tuple[Retriever, str]:
    """``(ranking, why)``: what a search of ``session_id`` runs when none is named — the ranking chosen for that
    session (``why`` = ``"session"``) or for the file (``"file"``) in :mod:`.ranking_choice`, else the first over
    sessions (``"built-in"``: the tuned profile for the store's own files, the agent's own for another agent's)."""
    ranking, why, _ = await default_search(store, session_id)
    return ranking, why


async def default_search(store: Memory, session_id: str | None = None) -> tuple[Retriever, str, dict[str, Any]]:
    """:func:`default_ranking` with the tuning chosen with it (``vector_weight``, ``fts_mode``; empty when none
    was, or the ranking is not tunable)."""
    found = [r for r in store.retrievers() if r.scope == "session"]
    if not found:
        raise InvalidInputError(f"{store.path.name} ({store.capabilities.label}) has no search over sessions")
    choice = await asyncio.to_thread(ranking_choice.chosen, store.path, session_id)
    for r in found:
        if choice and r.name == choice.name:
            return r, choice.where, choice.tuning if r.tunable else {}
    return found[0], "built-in", {}


async def choose_ranking(
    store: Memory, name: str | None, session_id: str | None = None, tuning: dict[str, Any] | None = None
) -> None:
    """Make ``name`` the default ranking of ``session_id`` (None: of every session of the file), with ``tuning``
    (``vector_weight`` in [0, 1] and ``fts_mode``: only for a tunable ranking); None forgets it. Only oxmem's
    configuration is written, never the file."""
    found = {r.name: r for r in store.retrievers() if r.scope == "session"}
    if name is not None and name not in found:
        raise InvalidInputError(f"no ranking {name!r} for this file (known: {', '.join(found) or 'none'})")
    if tuning:
        if name is None or not found[name].tunable:
            raise InvalidInputError(f"ranking {name!r} is fixed: it is chosen without weights or mode")
        if ranking_choice.tuning_of(tuning) != tuning:
            modes = ", ".join(FTS_MODES)
            raise InvalidInputError(f"tuning {tuning!r} is not a vector weight in [0, 1] and an FTS mode ({modes})")
    await asyncio.to_thread(ranking_choice.choose, store.path, name, session_id, tuning)
