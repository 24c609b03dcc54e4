"""LangGraph's ``SqliteSaver`` checkpoints (``core/formats/langgraph_checkpoints.py``) on files written by LangGraph
itself: a ``StateGraph(MessagesState)`` whose nodes are plain deterministic functions (no model is called) — an
"agent" that answers or asks for a tool, a "tools" node that answers the call — run with a ``SqliteSaver`` over
several threads and steps. What oxmem shows is compared with what LangGraph's own API reads back (``get_state``,
``get_state_history``, ``SqliteSaver.list``); another program's damage (a corrupt blob, a ``pickle`` row, a deleted
checkpoint) is flagged, never fatal, never unpickled; and no read changes a byte of the file."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import pickle
import sqlite3
import subprocess
import sys
from typing import Annotated, TypedDict

import pytest

from oxmem_gui.core.api import NotFoundError, ReadOnlyError, check_store, open_memory
from oxmem_gui.core.formats.detect import LABELS
from oxmem_gui.core.formats.times import parse_when
from oxmem_gui.core.memory import inspect_database
from oxmem_gui.core.retrieval.scope import ALL_SESSIONS
from tests.core.formats.framework_files import another_program, digest, read, searched_from_every_door

pytest.importorskip("langgraph.graph", reason="LangGraph's own StateGraph and SqliteSaver write these files")
lg_sqlite = pytest.importorskip("langgraph.checkpoint.sqlite")
messages = pytest.importorskip("langchain_core.messages")
graph_mod = pytest.importorskip("langgraph.graph")

AIMessage, HumanMessage = messages.AIMessage, messages.HumanMessage
SystemMessage, ToolMessage = messages.SystemMessage, messages.ToolMessage


def agent(state):
    """Asks for the weather tool when the user asks about the weather, reports a tool's answer, else echoes."""
    history = state["messages"]
    last, n = history[-1], len(history)
    if isinstance(last, HumanMessage) and "weather" in last.content:
        call = {"id": f"call-{n}", "name": "get_weather", "args": {"city": "Lisbon", "units": "°C"}}
        return {"messages": [AIMessage("", id=f"ai-{n}", tool_calls=[call])]}
    if isinstance(last, ToolMessage):
        return {"messages": [AIMessage(f"It is {last.content} in Lisbon.", id=f"ai-{n}")]}
    return {"messages": [AIMessage([{"type": "text", "text": f"You said: {last.content}"}], id=f"ai-{n}")]}


def tools(state):
    call = state["messages"][-1].tool_calls[0]
    return {
        "messages": [ToolMessage("sunny, 21°C", tool_call_id=call["id"], name=call["name"], id=f"tool-{call['id']}")]
    }


def route(state):
    return "tools" if getattr(state["messages"][-1], "tool_calls", None) else graph_mod.END


def build(checkpointer):
    b = graph_mod.StateGraph(graph_mod.MessagesState)
    b.add_node("agent", agent)
    b.add_node("tools", tools)
    b.add_edge(graph_mod.START, "agent")
    b.add_conditional_edges("agent", route, ["tools", graph_mod.END])
    b.add_edge("tools", "agent")
    return b.compile(checkpointer=checkpointer)


def config(thread: str, checkpoint_id: str | None = None) -> dict:
    found = {"thread_id": thread}
    if checkpoint_id is not None:
        found.update(checkpoint_ns="", checkpoint_id=checkpoint_id)
    return {"configurable": found}


@contextlib.contextmanager
def langgraph(path):
    """LangGraph's graph on the file (its connection closed after: the file is whole, no WAL left beside it)."""
    conn = sqlite3.connect(str(path), check_same_thread=False)
    try:
        saver = lg_sqlite.SqliteSaver(conn)
        yield build(saver), saver
    finally:
        conn.close()


#: each thread's turns: what the user says (the weather thread opens with a system message)
THREADS = {
    "weather": [
        [SystemMessage("Be brief.", id="sys-1"), HumanMessage("What is the weather?", id="h-1")],
        [HumanMessage("Thanks! And tomorrow?")],  # no id: add_messages gives it one
    ],
    "chat-2": [[HumanMessage("hi", id="h-2")], [HumanMessage("hi again", id="h-3")]],
}


def write(path) -> None:
    with langgraph(path) as (graph, _):
        for thread, turns in THREADS.items():
            for turn in turns:
                graph.invoke({"messages": turn}, config(thread))


def shown(message) -> dict:
    """A LangChain message as LangGraph's serializer stores it (``model_dump()``: the fields oxmem shows)."""
    return message.model_dump()


@pytest.fixture
def lg_file(tmp_path):
    path = tmp_path / "checkpoints.sqlite"
    write(path)
    return path


def everything(m):
    async def go():
        sessions = await m.sessions_page(limit=100)
        events = {s.session_id: await m.events_page(s.session_id, None, 100) for s in sessions}
        return m.format, sessions, events

    return go()


def test_every_thread_is_a_session_whose_events_are_its_state_as_langgraph_reads_it(lg_file):
    fmt, sessions, events = read(lg_file, everything)
    assert fmt == "langgraph-checkpoints"
    assert sorted(s.session_id for s in sessions) == ["chat-2", "weather"]
    with langgraph(lg_file) as (graph, _):
        for thread in THREADS:
            state = graph.get_state(config(thread)).values["messages"]
            assert [e.payload["message"] for e in events[thread]] == [shown(m) for m in state]
            assert [e.sequence for e in events[thread]] == list(range(1, len(state) + 1))
    weather = [e.payload for e in events["weather"]]
    assert [(p["role"], p["content"]) for p in weather] == [
        ("system", "Be brief."),
        ("user", "What is the weather?"),
        ("assistant", ""),
        ("tool", "sunny, 21°C"),
        ("assistant", "It is sunny, 21°C in Lisbon."),
        ("user", "Thanks! And tomorrow?"),
        ("assistant", "You said: Thanks! And tomorrow?"),
    ]
    assert weather[2]["tool_calls"] == [
        {
            "id": "call-2",
            "name": "get_weather",
            "arguments": json.dumps({"city": "Lisbon", "units": "°C"}, ensure_ascii=False),
        }
    ]
    assert (weather[3]["tool_call_id"], weather[3]["name"]) == ("call-2", "get_weather")
    assert [p["message_class"] for p in weather[:4]] == [
        "langchain_core.messages.system.SystemMessage",
        "langchain_core.messages.human.HumanMessage",
        "langchain_core.messages.ai.AIMessage",
        "langchain_core.messages.tool.ToolMessage",
    ]
    assert isinstance(weather[5]["message"]["id"], str)  # the id add_messages gave it, as stored


def test_session_details_and_times_are_the_checkpoints(lg_file):
    _, sessions, events = read(lg_file, everything)
    with langgraph(lg_file) as (graph, saver):
        for s in sessions:
            history = list(saver.list(config(s.session_id)))
            latest, first = history[0], history[-1]
            assert s.updated_at == latest.checkpoint["ts"] and s.created_at == first.checkpoint["ts"]
            assert s.details["checkpoints"] == f"{len(history)} checkpoints"
            assert s.details["latest checkpoint"] == latest.config["configurable"]["checkpoint_id"]
            assert (s.details["step"], s.details["source"]) == (
                f"step {latest.metadata['step']}",
                latest.metadata["source"],
            )
            assert "problems" not in s.details
            # each message at the time of the first checkpoint that holds it
            for e in events[s.session_id]:
                holding = [t for t in history if any(m.id == e.payload["message"]["id"] for m in messages_of(t))]
                assert e.created_at == min(t.checkpoint["ts"] for t in holding)
    assert [s.session_id for s in sessions] == ["chat-2", "weather"]  # the latest written first


def messages_of(checkpoint_tuple) -> list:
    return checkpoint_tuple.checkpoint["channel_values"].get("messages", [])


def test_the_timeline_is_the_checkpointers_list_and_each_checkpoint_reads_as_get_state_of_it(lg_file):
    async def timelines(m):
        out = {}
        for thread in THREADS:
            found = await m.checkpoints(thread)
            out[thread] = [(c, await m.events_at(thread, c.checkpoint_id)) for c in found]
        return out

    found = read(lg_file, timelines)
    with langgraph(lg_file) as (graph, saver):
        for thread in THREADS:
            history = list(saver.list(config(thread)))
            assert [c.checkpoint_id for c, _ in found[thread]] == [
                t.config["configurable"]["checkpoint_id"] for t in history
            ]
            for (c, events), t in zip(found[thread], history, strict=True):
                parent = t.parent_config["configurable"]["checkpoint_id"] if t.parent_config else None
                assert (c.parent_id, c.metadata, c.ts) == (parent, t.metadata, t.checkpoint["ts"])
                assert (c.step, c.source) == (t.metadata["step"], t.metadata["source"])
                assert c.changed == t.checkpoint["updated_channels"]
                held = t.checkpoint["channel_values"].get("messages")
                assert c.messages == (None if held is None else len(held))
                assert [(w.task_id, w.channel) for w in c.writes] == [(task, ch) for task, ch, _ in t.pending_writes]
                for w, (_, _, value) in zip(c.writes, t.pending_writes, strict=True):
                    if w.channel == "messages":
                        assert [v["value"] for v in w.value] == [shown(m) for m in value]
                    else:
                        assert w.value == value
                assert c.problems == []
                state = graph.get_state(config(thread, c.checkpoint_id)).values.get("messages")
                if state is None:  # the input checkpoint: nothing in the messages channel yet
                    assert events == [] and c.messages is None
                else:
                    assert [e.payload["message"] for e in events] == [shown(m) for m in state]
    sources = [c.source for c, _ in reversed(found["weather"])]
    assert sources == ["input", "loop", "loop", "loop", "loop", "input", "loop", "loop"]


def test_a_fork_from_a_past_checkpoint_is_shown_and_the_later_checkpoints_stay(lg_file):
    """LangGraph's time travel: running from a past checkpoint writes new checkpoints whose parent is that one;
    nothing is deleted (why oxmem offers no rewind)."""
    with langgraph(lg_file) as (graph, saver):
        before = list(saver.list(config("chat-2")))
        past = next(t for t in before if t.metadata["step"] == 1)  # after the first answer
        past_id = past.config["configurable"]["checkpoint_id"]
        graph.invoke({"messages": [HumanMessage("a different question", id="h-9")]}, config("chat-2", past_id))
        after = list(saver.list(config("chat-2")))
        state = graph.get_state(config("chat-2")).values["messages"]
    assert len(after) == len(before) + 3  # the input, then the user's message and the answer: kept beside the old
    events = read(lg_file, lambda m: m.events_page("chat-2", None, 100))
    assert [e.payload["message"] for e in events] == [shown(m) for m in state]
    assert [e.payload["content"] for e in events] == [
        "hi",
        "You said: hi",
        "a different question",
        "You said: a different question",
    ]
    timeline = read(lg_file, lambda m: m.checkpoints("chat-2"))
    assert {c.checkpoint_id for c in timeline} == {t.config["configurable"]["checkpoint_id"] for t in after}
    fork = next(c for c in timeline if c.parent_id == past_id)
    assert (fork.source, fork.messages) == ("input", len(messages_of(past)))


def test_reads_change_no_byte_and_every_edit_is_refused(lg_file):
    before = digest(lg_file)

    async def reads(m):
        await m.info()
        for s in await m.sessions_page(limit=100):
            await m.events_page(s.session_id, None, 100)
            for c in await m.checkpoints(s.session_id):
                await m.events_at(s.session_id, c.checkpoint_id)
        await m.search("oxmem-keywords", ALL_SESSIONS, "weather Lisbon", 5)
        await m.tables()
        await m.table_page("checkpoints")
        caps = m.capabilities
        assert (caps.sessions_label, caps.session_noun, caps.has_notes, caps.editable) == (
            "Threads",
            "thread",
            False,
            False,
        )
        with pytest.raises(ReadOnlyError, match="forking from it, never by deleting"):
            await m.forget("weather")
        with pytest.raises(ReadOnlyError):
            await m.delete_turn("weather", 1)

    read(lg_file, reads)
    asyncio.run(check_store(lg_file))
    asyncio.run(inspect_database(lg_file))
    assert digest(lg_file) == before

    async def writable():
        return await open_memory(lg_file, read_only=False, embedding="deterministic")

    with pytest.raises(ReadOnlyError, match="LangGraph checkpoints file"):
        asyncio.run(writable())
    assert digest(lg_file) == before


def test_keyword_search_finds_messages_and_a_missing_thread_is_not_found(lg_file):
    result = read(lg_file, lambda m: m.search("oxmem-keywords", ALL_SESSIONS, "Lisbon", 5))
    assert [(h.session_id, h.sequence_start) for h in result.hits] == [("weather", 5), ("weather", 3)]
    with pytest.raises(NotFoundError, match="no thread 'nobody'"):
        read(lg_file, lambda m: m.events_page("nobody", None, 10))
    with pytest.raises(NotFoundError, match="no checkpoint 'nope'"):
        read(lg_file, lambda m: m.events_at("weather", "nope"))


def latest_id(path, thread: str) -> str:
    with langgraph(path) as (_, saver):
        return saver.get_tuple(config(thread)).config["configurable"]["checkpoint_id"]


def test_a_blob_that_does_not_decode_is_flagged_where_langgraph_raises(lg_file):
    with langgraph(lg_file) as (_, saver):
        tuples = list(saver.list(config("weather")))
    history = [t.config["configurable"]["checkpoint_id"] for t in tuples]
    latest, middle = history[0], history[3]
    another_program(
        lg_file,
        ("UPDATE checkpoints SET checkpoint = ? WHERE checkpoint_id = ?", (b"\xc1\xc1 not msgpack", latest)),
        ("UPDATE checkpoints SET checkpoint = ? WHERE checkpoint_id = ?", (b"\x92\x01", middle)),  # cut short
    )
    with langgraph(lg_file) as (graph, _), pytest.raises(ValueError):  # ormsgpack's MsgpackDecodeError
        graph.get_state(config("weather"))
    before = digest(lg_file)
    _, sessions, events = read(lg_file, everything)
    (flagged,) = events["weather"]
    assert flagged.payload["role"] == "system"
    assert flagged.payload["content"].startswith(
        f"⚠ checkpoint {latest} not shown: its blob does not decode as msgpack ("
    )
    weather = next(s for s in sessions if s.session_id == "weather")
    assert weather.details["problems"][0].startswith("the latest checkpoint: its blob does not decode as msgpack")
    # its time, unreadable, is the one in its id (a UUID 6 made with it): microseconds from its ts
    gap = parse_when(weather.updated_at) - parse_when(tuples[0].checkpoint["ts"])
    assert abs(gap.total_seconds()) < 0.01 and flagged.created_at == weather.updated_at
    timeline = read(lg_file, lambda m: m.checkpoints("weather"))
    bad = {c.checkpoint_id: c.problems for c in timeline if c.problems}
    assert set(bad) == {latest, middle}
    assert bad[middle][0].startswith("its blob does not decode as msgpack")
    info = asyncio.run(inspect_database(lg_file))
    assert any(m.startswith("⚠ 2 checkpoints whose blob does not decode") for m in info.markers)
    earlier = read(lg_file, lambda m: m.events_at("weather", history[1]))  # the others still read
    assert [e.payload["role"] for e in earlier] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert digest(lg_file) == before


class Trap:
    """Unpickling this would create a file: proof that nothing was unpickled."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (str(self.path), "w"))


def test_a_pickle_row_is_flagged_and_never_unpickled(lg_file, tmp_path):
    trap = tmp_path / "unpickled"
    latest = latest_id(lg_file, "chat-2")
    another_program(
        lg_file,
        (
            "UPDATE checkpoints SET type = 'pickle', checkpoint = ? WHERE checkpoint_id = ?",
            (pickle.dumps(Trap(trap)), latest),
        ),
        (
            "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, "
            "value) VALUES ('chat-2', '', ?, 'task-x', '', 0, 'messages', 'pickle', ?)",
            (latest, pickle.dumps(Trap(trap))),
        ),
    )
    with langgraph(lg_file) as (_, saver), pytest.raises(NotImplementedError, match="pickle"):
        saver.get_tuple(config("chat-2"))  # LangGraph's default serializer refuses it too
    events = read(lg_file, lambda m: m.events_page("chat-2", None, 10))
    (flagged,) = events
    assert "type 'pickle'" in flagged.payload["content"] and "oxmem never does" in flagged.payload["content"]
    timeline = read(lg_file, lambda m: m.checkpoints("chat-2"))
    (write,) = [w for w in timeline[0].writes if w.task_id == "task-x"]
    assert (write.type, write.value) == ("pickle", None) and "never does" in write.problem
    info = asyncio.run(inspect_database(lg_file))
    assert any(m.startswith("⚠ 1 checkpoint whose blob is of type 'pickle'") for m in info.markers)
    assert any(m.startswith("⚠ 1 write whose value is not decoded") for m in info.markers)
    asyncio.run(check_store(lg_file))
    assert not trap.exists()


def test_a_missing_parent_and_writes_of_a_deleted_checkpoint_are_flagged(lg_file):
    with langgraph(lg_file) as (_, saver):
        history = list(saver.list(config("weather")))
    gone = history[2]  # has a child, and writes of its own
    gone_id = gone.config["configurable"]["checkpoint_id"]
    child = history[1].config["configurable"]["checkpoint_id"]
    assert gone.pending_writes
    another_program(lg_file, ("DELETE FROM checkpoints WHERE checkpoint_id = ?", (gone_id,)))
    _, sessions, events = read(lg_file, everything)
    weather = next(s for s in sessions if s.session_id == "weather")
    assert weather.details["problems"] == [
        "1 checkpoint whose parent is not in the file",
        f"{len(gone.pending_writes)} writes of 1 checkpoint no longer in the file",
    ]
    assert len(events["weather"]) == 7  # the latest state reads as before
    timeline = read(lg_file, lambda m: m.checkpoints("weather"))
    (orphan,) = [c for c in timeline if c.problems]
    assert (orphan.checkpoint_id, orphan.problems) == (child, [f"its parent checkpoint {gone_id} is not in the file"])
    assert orphan.changed == history[1].checkpoint["updated_channels"]
    info = asyncio.run(inspect_database(lg_file))
    assert f"⚠ 1 checkpoint whose parent is not in the file: weather @ {child} (parent {gone_id})" in info.markers
    assert any(
        m.startswith(f"⚠ {len(gone.pending_writes)} writes of 1 checkpoint no longer in the file") for m in info.markers
    )
    found = {f.check: f for f in asyncio.run(check_store(lg_file)).findings}["checkpoints"]
    assert found.level == "warning" and "1 checkpoint whose parent is not in the file" in found.detail


def test_found_by_its_columns_beside_langgraphs_store_in_one_file(tmp_path):
    """A program may keep its checkpointer and its store in one file: the threads are shown, and info says the
    store's items are there (the table browser shows them)."""
    path = tmp_path / "agent-memory"  # no extension: the name says nothing
    write(path)
    store_mod = pytest.importorskip("langgraph.store.sqlite")
    with contextlib.closing(sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)) as conn:
        store = store_mod.SqliteStore(conn)
        store.setup()
        store.put(("users", "alice"), "tea", {"text": "likes green tea"})
    info = asyncio.run(inspect_database(path))
    assert (info.format, info.label) == ("langgraph-checkpoints", LABELS["langgraph-checkpoints"])
    with langgraph(path) as (_, saver):
        count = len(list(saver.list(None)))
        writes = saver.conn.execute("SELECT count(*) FROM writes").fetchone()[0]
    assert info.markers[:3] == [
        f"{count} checkpoints in 2 threads",
        f"checkpoint types: msgpack {count}",
        f"writes: {writes}",
    ]
    assert info.markers[-1] == (
        "this file also holds LangGraph's store (1 item): its threads are shown; the store's items only in the table "
        "browser"
    )
    assert read(path, lambda m: m.sessions_page(limit=10))[0].session_id == "chat-2"


def test_an_older_json_checkpoint_reads_as_langgraph_revives_it(lg_file):
    """Files from before msgpack hold ``json`` checkpoints with LangChain's ``lc`` objects: read without reviving
    them, the messages come out as LangGraph's reviver makes them."""
    from langchain_core.load import dumpd

    latest = latest_id(lg_file, "chat-2")
    with langgraph(lg_file) as (_, saver):
        found = saver.get_tuple(config("chat-2"))
        parent = saver.get_tuple(found.parent_config).checkpoint
    checkpoint = {k: v for k, v in found.checkpoint.items() if k != "updated_channels"} | {"v": 1}
    text = json.dumps(checkpoint, default=dumpd)
    another_program(
        lg_file,
        ("UPDATE checkpoints SET type = 'json', checkpoint = ? WHERE checkpoint_id = ?", (text.encode(), latest)),
    )
    with langgraph(lg_file) as (graph, _):
        state = graph.get_state(config("chat-2")).values["messages"]
    events = read(lg_file, lambda m: m.events_page("chat-2", None, 10))
    assert [(e.payload["role"], e.payload["content"]) for e in events] == [
        (r, m.text) for r, m in zip(["user", "assistant", "user", "assistant"], state, strict=True)
    ]
    assert [e.payload["message"]["id"] for e in events] == [m.id for m in state]
    assert events[1].payload["message_class"] == "langchain.schema.messages.AIMessage"
    # without updated_channels (v1), the channels changed are those whose version differs from the parent's
    (latest_info,) = [c for c in read(lg_file, lambda m: m.checkpoints("chat-2")) if c.checkpoint_id == latest]
    versions, before = checkpoint["channel_versions"], parent["channel_versions"]
    assert latest_info.changed == sorted(c for c, v in versions.items() if before.get(c) != v)
    assert latest_info.changed and latest_info.problems == []


def test_a_subgraphs_namespace_is_a_session_of_its_own(tmp_path):
    path = tmp_path / "subgraph.db"

    def inner(state):
        return {"messages": [AIMessage(f"the subgraph saw {len(state['messages'])} messages", id="sub-1")]}

    sub = graph_mod.StateGraph(graph_mod.MessagesState)
    sub.add_node("inner", inner)
    sub.add_edge(graph_mod.START, "inner")
    with contextlib.closing(sqlite3.connect(str(path), check_same_thread=False)) as conn:
        saver = lg_sqlite.SqliteSaver(conn)
        parent = graph_mod.StateGraph(graph_mod.MessagesState)
        parent.add_node("child", sub.compile(checkpointer=True))  # its own checkpoints, namespace "child"
        parent.add_edge(graph_mod.START, "child")
        parent.compile(checkpointer=saver).invoke({"messages": [HumanMessage("hi", id="h")]}, config("t"))
        wanted = {
            ns: [shown(m) for m in saver.get_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": ns}})
                 .checkpoint["channel_values"]["messages"]]
            for ns in ("", "child")
        }  # fmt: skip
    _, sessions, events = read(path, everything)
    assert sorted(s.session_id for s in sessions) == ["t", "t|child"]
    assert next(s for s in sessions if s.session_id == "t|child").details["namespace"] == "child"
    assert [e.payload["message"] for e in events["t"]] == wanted[""]
    assert [e.payload["message"] for e in events["t|child"]] == wanted["child"]


def test_a_graph_without_messages_shows_its_state_channels(tmp_path):
    Counter = TypedDict("Counter", {"count": int, "note": str})  # noqa: UP013 (a class here: its annotations unread)

    def bump(state):
        return {"count": state["count"] + 1, "note": f"bumped to {state['count'] + 1}"}

    b = graph_mod.StateGraph(Counter)
    b.add_node("bump", bump)
    b.add_edge(graph_mod.START, "bump")
    path = tmp_path / "counter.db"
    with contextlib.closing(sqlite3.connect(str(path), check_same_thread=False)) as conn:
        graph = b.compile(checkpointer=lg_sqlite.SqliteSaver(conn))
        graph.invoke({"count": 1, "note": ""}, config("c"))
        values = graph.get_state(config("c")).values
    events = read(path, lambda m: m.events_page("c", None, 10))
    assert {e.payload["channel"]: e.payload["value"] for e in events} == values == {"count": 2, "note": "bumped to 2"}
    assert [e.payload["content"] for e in events] == ["count = 2", "note = bumped to 2"]


def test_a_delta_channel_without_a_value_at_the_latest_checkpoint_is_flagged(tmp_path):
    """``DeltaChannel`` (beta) keeps the messages only every few steps; LangGraph rebuilds them in between by
    replaying the writes of earlier checkpoints, which oxmem does not: said, not guessed."""
    delta = pytest.importorskip("langgraph.channels.delta")
    from langgraph.graph.message import add_messages

    channel = delta.DeltaChannel(lambda s, ws: functools.reduce(add_messages, ws, s), snapshot_frequency=3)
    State = TypedDict("State", {"messages": Annotated[list, channel]})  # noqa: UP013 (as above)

    def answer(state):
        return {"messages": [AIMessage(f"n={len(state['messages'])}", id=f"a{len(state['messages'])}")]}

    b = graph_mod.StateGraph(State)
    b.add_node("answer", answer)
    b.add_edge(graph_mod.START, "answer")
    path = tmp_path / "delta.db"
    with contextlib.closing(sqlite3.connect(str(path), check_same_thread=False)) as conn:
        graph = b.compile(checkpointer=lg_sqlite.SqliteSaver(conn))
        for i in range(2):
            graph.invoke({"messages": [HumanMessage(f"q{i}", id=f"h{i}")]}, config("d"))
        assert len(graph.get_state(config("d")).values["messages"]) == 4
    (flagged,) = read(path, lambda m: m.events_page("d", None, 10))
    assert "is a DeltaChannel (beta) that holds no value at this checkpoint" in flagged.payload["content"]
    assert flagged.payload["content"].startswith("⚠ checkpoint ")


def test_metadata_that_is_not_json_and_an_encrypted_blob_are_flagged(lg_file):
    with langgraph(lg_file) as (_, saver):
        history = [t.config["configurable"]["checkpoint_id"] for t in saver.list(config("weather"))]
    another_program(
        lg_file,
        ("UPDATE checkpoints SET metadata = ? WHERE checkpoint_id = ?", (b"{not json", history[2])),
        ("UPDATE checkpoints SET type = 'msgpack+aes' WHERE checkpoint_id = ?", (history[4],)),
    )
    with langgraph(lg_file) as (_, saver), pytest.raises(ValueError):  # json.loads of the metadata
        list(saver.list(config("weather")))
    timeline = read(lg_file, lambda m: m.checkpoints("weather"))
    bad = {c.checkpoint_id: c.problems for c in timeline if c.problems}
    assert set(bad) == {history[2], history[4]}
    assert bad[history[2]][0].startswith("its metadata is not JSON (")
    assert bad[history[4]] == [
        "its blob is of type 'msgpack+aes', encrypted by the program's EncryptedSerializer, whose key is not in the "
        "file: not decoded"
    ]
    assert len(read(lg_file, lambda m: m.events_page("weather", None, 100))) == 7  # the latest reads as before
    markers = asyncio.run(inspect_database(lg_file)).markers
    assert any(m.startswith("⚠ 1 checkpoint whose blob is of type 'msgpack+aes'") for m in markers)
    assert any(m.startswith("⚠ 1 checkpoint whose metadata is not a JSON object") for m in markers)


def test_objects_are_decoded_without_importing_what_they_name(tmp_path, monkeypatch):
    """LangGraph's serializer rebuilds an extension by importing the module it names (its default allows any):
    oxmem's decoder imports nothing — each object is its class's name and the data it was built from."""
    import datetime as dt
    import decimal
    import uuid

    import ormsgpack
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    from oxmem_gui.core.formats.langgraph_checkpoints import decode, plain

    serde = JsonPlusSerializer()
    when = dt.datetime(2024, 5, 4, 6, 32, 42, 235444, tzinfo=dt.timezone.utc)
    value = {
        "when": when,
        "id": uuid.UUID("12345678-1234-5678-1234-567812345678"),
        "tags": {"b"},
        "price": decimal.Decimal("1.50"),
        "message": HumanMessage("hi", id="h"),
        7: "a key that is no text",
    }
    decoded, problem = decode(*serde.dumps_typed(value))
    assert problem is None
    assert plain(decoded) == {
        "when": {"__type__": "datetime.datetime", "value": when.isoformat(), "method": "fromisoformat"},
        "id": {"__type__": "uuid.UUID", "value": "12345678123456781234567812345678"},
        "tags": {"__type__": "builtins.set", "value": ["b"]},
        "price": {"__type__": "decimal.Decimal", "value": "1.50"},
        "message": {
            "__type__": "langchain_core.messages.human.HumanMessage",
            "value": shown(HumanMessage("hi", id="h")),
        },
        "7": "a key that is no text",
    }
    # an extension naming a module that runs code when imported
    (tmp_path / "oxmem_trap_module.py").write_text(
        f"open({str(tmp_path / 'imported')!r}, 'w').close()\nclass Boom:\n    def __init__(self, x): pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    blob = ormsgpack.packb(ormsgpack.Ext(0, ormsgpack.packb(("oxmem_trap_module", "Boom", 1))))
    decoded, problem = decode("msgpack", blob)
    assert (problem, plain(decoded)) == (None, {"__type__": "oxmem_trap_module.Boom", "value": 1})
    assert not (tmp_path / "imported").exists()
    serde.loads_typed(("msgpack", blob))  # LangGraph's own reader imports it
    assert (tmp_path / "imported").exists()
    sys.modules.pop("oxmem_trap_module", None)


_PEAK = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=300)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, done.returncode)
print(done.stdout[-2000:])
print(done.stderr[-2000:], file=sys.stderr)
"""


@pytest.mark.parametrize(
    "blob",
    [
        b"\xdd" + (8 << 20).to_bytes(4, "big") + b"\x80" * (8 << 20),  # msgpack: 8 Mi empty maps in one array
        b"[" + b"{}," * (3 << 20) + b"{}]",  # JSON: 3 Mi empty objects
    ],
    ids=["msgpack", "json"],
)
def test_a_small_blob_of_many_empty_values_is_flagged_not_decoded_into_gigabytes(lg_file, blob):
    """8 MB of empty maps decoded into 1.18 GB for ``oxmem events`` (1.7 GB for ``search --all``): a blob is decoded
    only when it holds at most a million values (``value_budget``); else it is flagged, in bounded memory."""
    latest = latest_id(lg_file, "weather")
    kind = "json" if blob.startswith(b"[") else "msgpack"
    another_program(
        lg_file, ("UPDATE checkpoints SET type = ?, checkpoint = ? WHERE checkpoint_id = ?", (kind, blob, latest))
    )
    cli = [sys.executable, "-c", "import sys; from oxmem_gui.cli import main; sys.exit(main())", "--db", str(lg_file)]
    for argv in (["events", "--json", "weather"], ["search", "--all", "weather"]):
        done = subprocess.run([sys.executable, "-c", _PEAK, *cli, *argv], capture_output=True, text=True, timeout=600)
        peak_mb, code = map(int, done.stdout.split("\n", 1)[0].split())
        assert code == 0 and peak_mb < 400, (argv, peak_mb, done.stderr)
        if argv[0] == "events":
            assert f"⚠ checkpoint {latest} not shown: its blob holds more than 1,000,000 values" in done.stdout


def test_a_search_with_a_hit_works_from_every_door(lg_file):
    searched_from_every_door(lg_file, "weather", "Lisbon")
