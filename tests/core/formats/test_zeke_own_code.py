"""oxmem's ZEKE ranking against ZEKE's own ``MemoryStore.search`` (its code, verbatim in ``upstream/zeke/memory``),
both embedding through the same OpenAI-compatible endpoint: a loopback stub that gives each text a fixed
1536-value vector, reached by ZEKE's ``openai.AsyncOpenAI`` through ``OPENAI_BASE_URL`` and by oxmem through
``--embeddings-url``. ZEKE writes the file; oxmem must return ZEKE's ids, in ZEKE's order, with ZEKE's scores
(1e-5), for every query, scope and k tried — and never show, log or keep the key."""

from __future__ import annotations

import asyncio
import importlib
import json
import shutil
import sys
from datetime import datetime, timedelta
from pathlib import Path

import apsw
import blake3
import numpy as np
import pytest

from oxmem_gui.core.embeddings import endpoint
from oxmem_gui.core.memory import open_memory
from tests.cli._support import run
from tests.remote_server import StubServer, reply

UPSTREAM = Path(__file__).parent / "upstream" / "zeke" / "memory"
KEY = "sk-test-0123456789abcdefSECRET"
START = datetime(2026, 3, 2, 9, 0, 0)  # the memories' created_at: a fixed clock, never the machine's

MEMORIES = [
    ("persona:zeke", "Dana drinks oat-milk flat whites; order from Kaffeebar on Fridays.", ["coffee"]),
    ("persona:zeke", "Dana prefers bullet points over long paragraphs.", ["style"]),
    ("persona:zeke", "Dana lives in Berlin and works nine to five.", []),
    ("persona:zeke", "Dana is allergic to penicillin.", ["health"]),
    ("persona:dana", "Dana's daughter Mia has swimming lessons on Fridays.", ["family"]),
    ("task:inbox", "Reply to the landlord about the Berlin flat before Friday.", ["flat"]),
    ("task:inbox", "Order coffee beans for the office.", ["coffee", "office"]),
    ("task:travel", "Book the train to Hamburg for the offsite.", ["travel"]),
    ("ops:deploy", "Deploys are frozen on Fridays after 3 pm.", ["deploy"]),
    ("ops:deploy", "The staging key rotates every 90 days.", ["deploy", "key"]),
    ("notes", "Guest Wi-Fi password is on the fridge.", []),
    ("notes", "Bike lock code changed; ask Dana.", ["key"]),
    ("notes", "Dana's shakshuka: 6 eggs, 2 cans of tomatoes, cumin.", ["recipe"]),
    ("calendar:work", "Quarterly review with Jonas on Friday.", ["meetings"]),
    ("calendar:work", "Daily stand-up at 09:30 in the Berlin office.", ["meetings", "office"]),
]
QUERIES = ["coffee Dana", "Friday deploy", "Berlin flat", "key", "the office", "swimming", "zzz nothing"]
SCOPES = ["", "persona", "persona:zeke", "task", "notes", "ops:deploy"]


def vector(text: str) -> list[float]:
    """The stub's embedding of ``text``: 1536 values fixed by its BLAKE3 hash (unit length)."""
    rng = np.random.default_rng(int.from_bytes(blake3.blake3(text.encode()).digest()[:8], "little"))
    v = rng.standard_normal(1536)
    return (v / np.linalg.norm(v)).tolist()


def openai_stub(handler, body: bytes) -> None:
    asked = json.loads(body)
    texts = asked["input"] if isinstance(asked["input"], list) else [asked["input"]]
    data = [{"object": "embedding", "index": i, "embedding": vector(t)} for i, t in enumerate(texts)]
    answer = {"object": "list", "data": data, "model": asked["model"], "usage": {"prompt_tokens": 1, "total_tokens": 1}}
    reply(handler, 200, json.dumps(answer).encode(), "application/json")


@pytest.fixture
def stub():
    server = StubServer(openai_stub)
    yield server
    server.stop()


@pytest.fixture
def zeke(tmp_path, monkeypatch, stub):
    """ZEKE's memory package (its own three files) importable, its OpenAI client pointed at the stub."""
    pytest.importorskip("openai", reason="ZEKE's code calls OpenAI through the openai package (a test dependency)")
    package = tmp_path / "zeke_memory"
    shutil.copytree(UPSTREAM, package)
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("OPENAI_BASE_URL", f"{stub.url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    store_module = importlib.import_module("zeke_memory.memory_store")
    schemas = importlib.import_module("zeke_memory.schemas")
    yield store_module, schemas
    for name in [m for m in sys.modules if m.startswith("zeke_memory")]:
        del sys.modules[name]
    endpoint.configure(None)


async def written_by_zeke(zeke, path: Path):
    """ZEKE's ``MemoryStore`` at ``path`` holding :data:`MEMORIES`, each embedded by the stub through ZEKE's
    own OpenAI provider (one event loop for all of ZEKE's calls: its client belongs to the loop that made it)."""
    store_module, schemas = zeke
    store = store_module.MemoryStore(schemas.MemoryConfig(db_path=str(path)))
    for i, (scope, text, tags) in enumerate(MEMORIES):
        item = schemas.MemoryItem(id=f"mem-{i:02d}", text=text, scope=scope, tags=tags,
                                  created_at=START + timedelta(minutes=i))  # fmt: skip
        await store.upsert(item)
    return store


def test_oxmem_ranks_as_zekes_own_search_for_every_query_scope_and_k(zeke, stub, tmp_path):
    path = tmp_path / "memory.db"

    async def zekes():
        store = await written_by_zeke(zeke, path)
        found = {}
        for query in QUERIES:
            for scope in SCOPES:
                for k in (1, 3, 8):
                    hits = await store.search(query, scope or None, k)
                    found[query, scope, k] = [(r.item.id, r.score, r.match_type) for r in hits]
        store._conn.close()
        return found

    theirs = asyncio.run(zekes())
    asked_by_zeke = len(stub.seen)
    endpoint.configure(endpoint.endpoint_from(f"{stub.url}/v1", KEY))

    async def ours():
        out = {}
        async with await open_memory(path, read_only=True, embedding="deterministic") as m:
            assert m.format == "zeke"
            for query, scope, k in theirs:
                result = await m.search("zeke", scope, query, k)
                out[query, scope, k] = [(h.chunk_id, h.score, h.metadata["match_type"]) for h in result.hits]
        return out

    mine = asyncio.run(ours())
    compared = 0
    for case, expected in theirs.items():
        got = mine[case]
        assert [(i, t) for i, _, t in got] == [(i, t) for i, _, t in expected], case
        assert np.allclose([s for _, s, _ in got], [s for _, s, _ in expected], atol=1e-5), case
        compared += 1
    assert compared == len(QUERIES) * len(SCOPES) * 3 == 126
    assert any(len(v) == 8 for v in theirs.values()) and any(t == "hybrid" for v in theirs.values() for *_, t in v)
    # oxmem asked the endpoint once per distinct query (the other scopes and k came from its cache on disk)
    assert len(stub.seen) - asked_by_zeke == len(QUERIES)
    assert {h["Authorization"] for h in stub.seen[asked_by_zeke:]} == {f"Bearer {KEY}"}


def test_the_command_line_searches_and_re_embeds_through_the_endpoint_and_never_shows_the_key(
    zeke, stub, tmp_path, capsys, monkeypatch
):
    import os

    path = tmp_path / "memory.db"
    asyncio.run(written_by_zeke(zeke, path))._conn.close()
    url = f"{stub.url}/v1"
    code, out, err = run(capsys, "--db", str(path), "--embeddings-url", url, "search", "persona", "coffee Dana")
    assert code == 0 and "models text-embedding-3-small" in out and err == ""
    calls = len(stub.seen)
    code, out2, _ = run(capsys, "--db", str(path), "--embeddings-url", url, "search", "persona", "coffee Dana")
    assert len(stub.seen) == calls and out2 == out  # the query's vector came from the cache on disk
    # an edit re-embeds the memory as ZEKE would: its new text's vector, as float32
    code, _, err = run(capsys, "--db", str(path), "--embeddings-url", url, "--no-backup", "notes", "update",
                       "task:inbox", "mem-06", "Order decaf coffee beans for the office.")  # fmt: skip
    assert (code, err) == (0, "")
    blob = apsw.Connection(str(path)).execute("SELECT embedding FROM memories WHERE id = 'mem-06'").fetchall()[0][0]
    assert np.array_equal(np.frombuffer(blob, "<f4"), np.asarray(vector("Order decaf coffee beans for the office."),
                                                                  dtype="<f4"))  # fmt: skip
    # without the endpoint the edit says first what it leaves out
    code, _, err = run(capsys, "--db", str(path), "--no-backup", "notes", "update", "task:inbox", "mem-06", "Order tea")
    assert code == 0 and err.startswith("oxmem: notice: the memory is saved without a vector — oxmem cannot make")
    # the key: in no output, no log, no cache, no file oxmem wrote
    code, out3, err3 = run(capsys, "--db", str(path), "--embeddings-url", "http://127.0.0.1:9/v1", "search", "notes",
                           "anything new")  # fmt: skip
    assert code == 2 and "could not connect to 127.0.0.1:9" in err3
    places = [Path(os.environ["OXMEM_LOG_DIR"]), tmp_path / "cache"]
    files = [f for place in places for f in place.rglob("*") if f.is_file()]
    assert any(f.name == "embeddings.db" for f in files)
    for f in files:
        assert KEY.encode() not in f.read_bytes(), f
    for text in (out, out2, err, out3, err3):
        assert KEY not in text


def test_why_not_counts_zekes_own_candidates_at_that_k(zeke, stub, tmp_path):
    """ZEKE takes the best k×2 of each leg: why-not's "#r of N candidates" is the memory's place among exactly
    those (ZEKE's own ``_search_fts`` and ``_search_vector`` at k×2, merged as its ``search`` does), and a memory
    neither leg took at this k is "not among" them, with its place when every hit is asked for."""
    path = tmp_path / "memory.db"
    query, scope, k = "Dana Berlin office Friday", "persona", 1

    async def zekes():
        store = await written_by_zeke(zeke, path)
        embedding = await store._get_embedding_provider().embed(query)
        merged: dict[str, float] = {}
        for item, score in store._search_fts(query, scope, k * 2):
            merged[item.id] = merged.get(item.id, 0.0) + score * 0.4
        for item, score in store._search_vector(embedding, scope, k * 2):
            merged[item.id] = merged.get(item.id, 0.0) + score * 0.6
        every = await store.search(query, scope, 100)
        store._conn.close()
        return sorted(merged, key=lambda mid: merged[mid], reverse=True), [r.item.id for r in every]

    pool, every = asyncio.run(zekes())
    endpoint.configure(endpoint.endpoint_from(f"{stub.url}/v1", KEY))
    outside = next(mid for mid in every if mid not in pool)

    async def stories():
        async with await open_memory(path, read_only=True, embedding="deterministic") as m:
            return [await m.why_not("zeke", scope, query, mid, k) for mid in (pool[-1], outside)]

    taken, left = asyncio.run(stories())
    assert len(pool) <= 4 * k and (taken.rank, taken.of, taken.reason) == (len(pool), len(pool), "outranked")
    assert taken.lines()[0].startswith(f"Why not {pool[-1]}? #{len(pool)} of {len(pool)} candidates")
    assert (left.rank, left.of) == (None, len(pool))
    assert left.lines()[0].startswith(f"Why not {outside}? not among the {len(pool)} candidates")
    assert left.cut == (f"not among the {len(pool)} candidates ZEKE's hybrid recall takes at top {k}; asked for every "
                        f"hit, it is #{every.index(outside) + 1}")  # fmt: skip
