"""Property tests over the core's public API: only the core's own errors may escape.

Whatever a caller passes — lone surrogates, NUL, FTS5 syntax, NaN, integers of any size, nesting of any depth,
values that are not JSON at all — a call either raises :class:`OxmemError` (and, for a write, writes nothing) or
succeeds with a result that keeps the documented invariants. Any other exception (``ValueError``,
``UnicodeEncodeError``, ``OverflowError``, ``RecursionError``, an apsw error, …) is a bug of the core.

Calls are drawn mostly valid, with a few arguments (often none) replaced by wild values, so that both the
refusals and the successful paths are exercised. Every store is built once per test function and reused across
examples; ``derandomize=True`` and no example database keep CI runs identical.
"""

from __future__ import annotations

import contextlib
import json
import math
import string
import zoneinfo
from datetime import datetime, timedelta, timezone

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from oxmem_gui.core import OxmemError
from oxmem_gui.core.schedules.cadence import (
    MAX_INTERVAL_SECS,
    MIN_INTERVAL_SECS,
    CronCadence,
    IntervalCadence,
    OnceCadence,
    cadence_json,
    cadence_warnings,
    describe,
    next_runs,
    parse_cadence,
    validate_cadence,
)
from oxmem_gui.core.store.inputs import INT64_MAX, INT64_MIN
from oxmem_gui.core.store.jsonl import Record, parse_record
from tests.conftest import open_sync, user


def fast(max_examples: int):
    """Reproducible settings: the same examples on every run, no deadline (CI machines are slow)."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
        # one failure shrunk per test, not every distinct one: a run with bugs stays quick
        report_multiple_bugs=False,
    )


@st.composite
def calls(draw, valid: dict, wild: dict) -> dict:
    """Keyword arguments drawn from ``valid``, except a few (often none) drawn from ``wild`` instead."""
    replaced = draw(
        st.one_of(st.just([]), st.lists(st.sampled_from(sorted(wild)), min_size=1, max_size=3, unique=True))
    )
    return {name: draw(wild[name] if name in replaced else valid[name]) for name in valid}


# -- building blocks ----------------------------------------------------------------------------------------

#: Any code point, lone surrogates (U+D800–U+DFFF) included.
any_text = st.text(st.characters(codec=None), max_size=40)
#: Any text UTF-8 can encode (NUL and control characters included).
utf8_text = st.text(st.characters(codec="utf-8"), max_size=40)
SPECIAL_TEXTS = [
    "",
    " ",
    "\t\n",
    "\x00",
    "a\x00b",
    "\ud800",
    "ok \udfff",
    "\x1c",
    "\x1f\x1e",
    "\u2028",
    "\u0085",
    "İstanbul",
    "ß",
    "ǅ",
    '"',
    '""',
    "*",
    "alpha*",
    "NEAR(alpha beta)",
    "NEAR(",
    "alpha AND beta",
    "OR",
    "NOT alpha",
    "-alpha",
    "^alpha",
    "content:alpha",
    "col:",
    ":",
    "(",
    ")",
    "{alpha}",
    "'",
    "\\",
    "%",
    "alpha\x00beta",
]


def long_text(words: list[str], most: int):
    """One of ``words`` repeated up to ``most`` times. Words that match stored chunks are kept to 600 repeats:
    FTS5 ranks an OR of n matching terms in time quadratic in n (4,000 repeats take seconds)."""
    return st.builds(lambda word, n: word * n, st.sampled_from(words), st.integers(1, most))


#: Text that is hard for the core: arbitrary code points, the specials above, FTS5 operators, very long runs.
nasty_text = st.one_of(
    any_text,
    st.sampled_from(SPECIAL_TEXTS),
    st.lists(st.sampled_from(SPECIAL_TEXTS + ["alpha", "beta", "gamma", " "]), max_size=8).map(" ".join),
    long_text(["x", '"', "NEAR(", "\ud800", "é ", "zz "], 5000),
    long_text(["alpha ", "gamma "], 600),
)
#: The same, without lone surrogates: text a caller may legitimately pass.
hard_text = st.one_of(
    utf8_text,
    st.sampled_from([t for t in SPECIAL_TEXTS if "\ud800" not in t and "\udfff" not in t]),
    st.lists(st.sampled_from(["alpha", "beta", "gamma", " ", '"', "NEAR(", "*", "\x00", "-", ":"]), max_size=8).map(
        " ".join
    ),
    long_text(["x", '"', "NEAR(", "é ", "zz "], 5000),
    long_text(["alpha ", "gamma "], 600),
)

#: Every integer draw is bounded: Hypothesis itself fails to print a drawn integer beyond 4,300 digits, so the
#: huge ones come only from ``power_of_ten``.
ints = st.integers(-(2**128), 2**128)
BIG_INTS = [2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64, 2**70, -(2**70)]


def power_of_ten(digits: int, negative: bool) -> int:
    """±10**digits, built by a named function so Hypothesis can print the call (the number's repr fails)."""
    return -(10**digits) if negative else 10**digits


#: 4,300 digits is Python's conversion limit (10**4299 has 4,300 digits, 10**4300 has 4,301).
huge_ints = st.builds(power_of_ten, st.sampled_from([4299, 4300, 5000]), st.booleans())
any_int = st.one_of(ints, st.integers(-5, 5), st.sampled_from(BIG_INTS), huge_ints)
#: Weights are numbers, and integers are numbers: 2**1024 is beyond every float.
huge_weights = st.one_of(huge_ints, st.sampled_from([2**1024, -(2**1024)]))
odd_floats = st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 1e308, 5e-324])
int64 = st.integers(INT64_MIN, INT64_MAX)


def nested(value, depth: int, as_dict: bool = False):
    """``value`` inside ``depth`` lists (or one-key objects), built without recursion."""
    for _ in range(depth):
        value = {"k": value} if as_dict else [value]
    return value


#: Not even numbers, and hard to print in a message: a huge integer in a list, nesting deeper than repr goes.
odd_values = st.one_of(
    st.lists(huge_ints, min_size=1, max_size=2), st.builds(nested, st.just(0), st.integers(900, 5000))
)


def expected_tags(tags) -> list[str]:
    """contract §7, written out again: strip, drop empties, lowercase, cut to 64, dedupe in first order, keep 16."""
    out: list[str] = []
    for tag in tags:
        tag = tag.strip()
        if not tag:
            continue
        tag = tag.lower()[:64]
        if tag not in out:
            out.append(tag)
    return out[:16]


def count(store, table: str) -> int:
    return store.sql(f"SELECT count(*) FROM {table}")[0][0]


def written(store) -> tuple[int, ...]:
    """Row counts of every table a write touches; unchanged after a refused write."""
    return tuple(count(store, t) for t in ("sessions", "conversation_events", "session_state", "chunks", "chunks_vec"))


def json_text(value, ensure_ascii: bool = True) -> str:
    """``value`` as JSON text the way Python writes it (``NaN``/``Infinity`` included); values Python cannot
    write (a 5,000-digit integer, a tuple key) become a fixed object instead — raw text lines cover those."""
    try:
        return json.dumps(value, ensure_ascii=ensure_ascii)
    except (TypeError, ValueError, RecursionError):
        return '{"unserializable": true}'


# -- JSON values --------------------------------------------------------------------------------------------

json_leaf = st.one_of(st.none(), st.booleans(), any_int, st.floats(), odd_floats, any_text)
json_values = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(any_text, inner, max_size=4),
        st.dictionaries(st.one_of(any_int, st.none(), st.booleans(), st.floats()), inner, max_size=3),
    ),
    max_leaves=12,
)
#: JSON an agent would write: finite floats, 64-bit-ish integers (and a few wider), UTF-8 text.
clean_json = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        int64,
        st.sampled_from(BIG_INTS),
        st.floats(allow_nan=False, allow_infinity=False),
        utf8_text,
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(utf8_text, inner, max_size=4)),
    max_leaves=12,
)
not_json = st.one_of(
    st.sets(ints, max_size=3),
    st.frozensets(ints, max_size=3),
    st.binary(max_size=8),
    st.builds(complex, st.floats(), st.floats()),
    st.just(object()),
    st.dictionaries(st.tuples(ints), ints, min_size=1, max_size=2),
    st.lists(st.sets(ints), min_size=1, max_size=2),
)
deep = st.builds(
    nested,
    json_leaf,
    st.one_of(st.integers(250, 260), st.integers(300, 2000), st.sampled_from([255, 256, 257, 998, 999, 1000, 1001])),
    st.booleans(),
)
ROLES = ["user", "assistant", "tool", "system"]


def message_dicts(text, values, extra):
    return st.fixed_dictionaries(
        {"role": st.sampled_from(ROLES + ["bogus"])},
        optional={
            "content": st.one_of(text, values),
            "tool_calls": st.one_of(
                st.lists(
                    st.fixed_dictionaries(
                        {"name": st.one_of(text, ints)}, optional={"arguments": st.one_of(values, extra)}
                    ),
                    max_size=2,
                ),
                values,
            ),
            "tool_call_id": st.one_of(text, values),
            "extra": st.one_of(values, extra),
        },
    )


#: Payloads an agent writes (indexed or not).
clean_payloads = st.one_of(
    message_dicts(hard_text, clean_json, st.builds(nested, clean_json, st.integers(0, 240))),
    st.builds(user, hard_text),
    clean_json,
)
#: Anything at all.
wild_payloads = st.one_of(
    message_dicts(nasty_text, json_values, st.one_of(deep, not_json)),
    json_values,
    deep,
    not_json,
    st.builds(user, nasty_text),
)


# -- 1. hybrid_query ------------------------------------------------------------------------------------------

SESSIONS = ["s1", "s2", "memory:alice"]
TAGS = ["work", "Home", "  urgent ", "x" * 70]


def seed_query_store(store) -> None:
    texts = [
        "alpha beta gamma",
        'he said "alpha" NEAR(beta) AND gamma',
        "alpha* ^beta -gamma content:delta",
        "ünïcödé İstanbul straße",
        "\x1c",  # kept by normalization, a zero vector: its cosine must not be NaN
        "a\x00b alpha",
        "alpha " * 300,  # several chunks
        "alpha beta gamma",  # the same chunk again: deduplicated, its range grows
    ]
    for seq, text in enumerate(texts, 1):
        store.store("s1", seq, user(text))
    store.store("s1", 20, {"role": "assistant", "content": None, "tool_calls": [{"name": "search", "arguments": {}}]})
    store.store("s2", 1, {"role": "tool", "content": "beta only", "tool_call_id": "t1"})
    store.store("s2", 2, user("gamma delta"))
    store.store("unindexed", 1, ["not", "a", "message"])
    store.save_note("alice", "alpha at work", ["Work", "urgent"])
    store.save_note("alice", "beta at home", ["home"])
    store.save_note("alice", "gamma everywhere", TAGS)


query_calls = calls(
    valid={
        "session": st.sampled_from(SESSIONS),
        "query": st.one_of(hard_text.filter(str.strip), st.sampled_from(["alpha", "beta gamma", "work", "x" * 700])),
        "top_k": st.integers(1, 12),
        "weights": st.one_of(
            st.floats(0, 1).map(lambda w: (w, 1 - w)),
            st.sampled_from([(0.7, 0.3), (1, 0), (0, 1), (1.0, 0.0), (0.5, 0.5), (0.1, 0.9)]),
        ),
        "fts_mode": st.sampled_from(["terms", "phrase"]),
        "tags": st.one_of(st.just([]), st.lists(st.sampled_from(TAGS + ["WORK", "nope", " "]), max_size=3)),
        "tag_mode": st.sampled_from(["any", "all"]),
    },
    wild={
        "session": st.one_of(st.sampled_from(["unindexed", "", " ", "\ud800", "s1\x00"]), any_text, ints, st.none()),
        "query": st.one_of(nasty_text, ints, st.none()),
        "top_k": st.one_of(
            st.sampled_from([0, -1, 1000, 1001, 2**63, 2**70, -(2**70), True]),
            any_int,
            st.floats(),
            st.none(),
            odd_values,
        ),
        "weights": st.tuples(
            st.one_of(st.floats(), odd_floats, st.integers(-2, 2), any_int, huge_weights, st.booleans(), st.none()),
            st.one_of(st.floats(), odd_floats, st.integers(-2, 2), any_int, huge_weights, st.text(max_size=2)),
        ),
        "fts_mode": st.one_of(any_text, st.sampled_from(["TERMS", "phrase ", ""]), st.none()),
        "tags": st.one_of(
            st.lists(st.one_of(any_text, any_int, st.none()), max_size=4),
            st.lists(huge_ints, min_size=1, max_size=1),
            st.just("work"),
            st.none(),
        ),
        "tag_mode": st.one_of(any_text, st.sampled_from(["ANY", "none", ""]), st.none()),
    },
)


def test_hybrid_query_refuses_or_ranks(tmp_path, loop):
    store = open_sync(loop, tmp_path / "query.db")
    try:
        seed_query_store(store)

        @fast(300)
        @given(args=query_calls)
        def check(args):
            vw, fw = args["weights"]
            try:
                r = store.hybrid_query(
                    args["session"],
                    args["query"],
                    args["top_k"],
                    vector_weight=vw,
                    fts_weight=fw,
                    fts_mode=args["fts_mode"],
                    tags=args["tags"],
                    tag_mode=args["tag_mode"],
                )
            except OxmemError as exc:
                event(f"refused: {type(exc).__name__}")
                return
            event("answered" if r.hits else "answered, no hits")
            hits = r.hits
            assert len(hits) <= args["top_k"]
            assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
            scores = [h.score for h in hits]
            assert scores == sorted(scores, reverse=True)
            wanted = set(r.tags)
            for h in hits:
                assert h.session_id == args["session"]
                assert 0.0 <= h.vector_score <= 1.0 and 0.0 <= h.fts_score <= 1.0
                assert abs(h.score - (vw * h.vector_score + fw * h.fts_score)) <= 1e-12
                if wanted:
                    have = set(h.metadata.get("tags", [])) if isinstance(h.metadata, dict) else set()
                    assert (have & wanted) if args["tag_mode"] == "any" else wanted <= have

        check()
    finally:
        store.aclose()


# -- 2. store -----------------------------------------------------------------------------------------------

store_calls = calls(
    valid={
        "session": st.text(st.characters(codec="utf-8"), min_size=1, max_size=20).filter(str.strip),
        "fresh": st.just(True),
        "sequence": st.one_of(int64, st.sampled_from([INT64_MIN, INT64_MAX, 0, 1])),
        "payload": clean_payloads,
    },
    wild={
        "session": st.one_of(
            any_text, st.sampled_from(["s", "", " ", "\ud800", "a\x00b", "x" * 2000]), ints, st.none()
        ),
        "fresh": st.booleans(),
        "sequence": st.one_of(any_int, st.booleans(), st.floats(), st.text(max_size=3), odd_values),
        "payload": wild_payloads,
    },
)


def test_store_refuses_cleanly_or_round_trips(tmp_path, loop):
    store = open_sync(loop, tmp_path / "events.db")
    unique = iter(range(10**9))
    try:

        @fast(400)
        @given(args=store_calls)
        def check(args):
            session, sequence, payload = args["session"], args["sequence"], args["payload"]
            if args["fresh"] and isinstance(session, str):
                session = f"{session}#{next(unique)}"  # a new session, so any sequence can be stored
            before = written(store)
            try:
                result = store.store(session, sequence, payload)
            except OxmemError as exc:
                event(f"refused: {type(exc).__name__}")
                assert written(store) == before, "a refused store wrote rows"
                return
            event("stored" if result.indexed else "stored, not indexed")
            assert (result.session_id, result.sequence) == (session, sequence)
            assert count(store, "conversation_events") == before[1] + 1
            (stored,) = [e for e in store.recall(session) if e.sequence == sequence]
            assert stored.payload == json.loads(json.dumps(payload))

        check()
    finally:
        store.aclose()


# -- 3. notes -----------------------------------------------------------------------------------------------

note_calls = calls(
    valid={
        "who": st.one_of(
            st.just("alice"), st.text(st.characters(codec="utf-8"), min_size=1, max_size=20).filter(str.strip)
        ),
        "content": hard_text.filter(str.strip),
        "tags": st.one_of(
            st.lists(utf8_text, max_size=20),
            st.lists(st.sampled_from(TAGS + ["WORK", "work ", "", "  ", "İ" * 70, "a" * 64 + " b", "ẞ"]), max_size=24),
            st.lists(st.text(string.ascii_letters, min_size=1, max_size=3), min_size=15, max_size=30),
        ),
    },
    wild={
        "who": st.one_of(any_text, st.sampled_from(["", " ", "\ud800", "a\x00b"]), ints, st.none()),
        "content": st.one_of(nasty_text, ints, st.none(), st.just(["alpha"])),
        "tags": st.one_of(
            st.lists(nasty_text, max_size=20),
            st.just("work"),
            st.lists(st.one_of(any_int, st.none()), min_size=1, max_size=2),
            st.lists(huge_ints, min_size=1, max_size=1),
        ),
    },
)


def test_save_note_refuses_cleanly_or_lists_it(tmp_path, loop):
    store = open_sync(loop, tmp_path / "notes.db")
    try:

        @fast(250)
        @given(args=note_calls)
        def check(args):
            who, content, tags = args["who"], args["content"], args["tags"]
            before = written(store)
            try:
                note = store.save_note(who, content, tags)
            except OxmemError as exc:
                event(f"refused: {type(exc).__name__}")
                assert written(store) == before, "a refused note wrote rows"
                return
            event("saved")
            want = expected_tags(tags)
            assert (note.user, note.content, note.tags) == (who, content, want)
            listed = {n.note_id: n for n in store.list_notes(who)}
            assert (listed[note.note_id].content, listed[note.note_id].tags) == (content, want)

        check()
    finally:
        store.aclose()


# -- 4. cadences --------------------------------------------------------------------------------------------

DAY_NAMES = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
MONTH_NAMES = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
cron_value = st.one_of(st.integers(0, 99).map(str), st.sampled_from(DAY_NAMES + MONTH_NAMES + ["foo", "MON", "Jan"]))
cron_base = st.one_of(
    st.just("*"),
    cron_value,
    st.builds(lambda a, b: f"{a}-{b}", cron_value, cron_value),  # wrapping ranges (22-2) included
    st.builds(lambda a, b: f"{a}-{b}", st.integers(0, 23), st.integers(0, 23)),
)
cron_atom = st.one_of(
    cron_base,
    st.builds(lambda base, n: f"{base}/{n}", cron_base, st.integers(0, 99)),
    st.sampled_from(["L", "W", "#", "?", "15W", "LW", "5L", "5#3", "mon#2", "1#6", "L-2", "*/", "-", "/5", "1-", "**"]),
)
cron_field = st.lists(cron_atom, min_size=1, max_size=3).map(",".join)


def cron_position(low: int, high: int, names: list[str] = (), specials: list[str] = ()):
    """One field for one position, in range: values, names, ranges (wrapping ones too), steps, lists, ``*``."""
    value = st.integers(low, high).map(str)
    if names:
        value = st.one_of(value, st.sampled_from(names))
    atom = st.one_of(
        st.just("*"),
        value,
        st.builds(lambda a, b: f"{a}-{b}", value, value),
        st.builds(lambda base, n: f"{base}/{n}", st.one_of(st.just("*"), value), st.integers(1, high)),
    )
    if specials:
        atom = st.one_of(atom, st.sampled_from(specials))
    return st.lists(atom, min_size=1, max_size=3).map(",".join)


#: Expressions whose every field is in range for its position: most parse, so describing and scheduling run.
positional_cron = st.tuples(
    cron_position(0, 59),
    cron_position(0, 23),
    cron_position(1, 31, specials=["L", "15W", "LW"]),
    cron_position(1, 12, MONTH_NAMES),
    cron_position(0, 7, DAY_NAMES, specials=["5#3", "mon#2", "5L"]),
).map(" ".join)
#: Known hard cases: a ``*`` inside a list, days no month has, leap days, wrapping ranges, steps that do not
#: divide, L/W/# forms.
edge_crons = st.sampled_from(
    ["* * * *,1 *", "* * * * *,0", "* *,1 * * *", "*,1 * * * *", "0 0 31 *,2 *", "0 0 30 feb,* *", "0 *,0 * * 0"]
    + ["0 0 30 2 *", "0 0 31 4,6,9,11 *", "0 0 29 2 *", "0 0 L 2 *", "0 22-2 * * *", "*/45 * * * *", "0 9 1 * mon"]
    + ["0 0 * * 5#5", "0 0 15W * *", "59 23 31 12 *", "0 0 1 1 *", "30 2 * * *", "0 8 * * 1-5", "0 0 * * 7"]
)
cron_expression = st.one_of(
    positional_cron,
    edge_crons,
    st.lists(cron_field, min_size=5, max_size=5).map(" ".join),
    st.lists(cron_field, min_size=5, max_size=5).map("\t ".join),
    st.lists(cron_field, min_size=0, max_size=7).map(" ".join),
)
real_zones = st.sampled_from(sorted(zoneinfo.available_timezones()))
zones = st.one_of(
    real_zones,
    st.sampled_from(
        ["UTC", "Europe", "America", "America/", "Europe/", "../x", "/etc/passwd", "", " ", "\x00", "UTC\x00"]
        + ["x" * 65, "Europe/" + "a" * 300, "\ud800", "Asia/Kolkata ", "Etc/GMT+14", "Pacific/Kiritimati"]
    ),
    any_text,
    ints,
    st.none(),
)


def rfc3339(moment: datetime, offset_minutes: int, style: int) -> str:
    text = moment.isoformat()
    if style == 0:
        return text + "Z"
    if style == 1:
        return text  # no offset: refused
    sign = "-" if offset_minutes < 0 else "+"
    hours, minutes = divmod(abs(offset_minutes), 60)
    return f"{text}{sign}{hours:02d}:{minutes:02d}"


rfc3339_times = st.builds(
    rfc3339,
    st.one_of(
        st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59, 999999)),
        st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2100, 1, 1)),
        st.sampled_from(
            [datetime(1970, 1, 1), datetime(9998, 12, 31, 23, 59), datetime(9999, 1, 1), datetime(1, 1, 1)]
        ),
    ),
    st.integers(-(23 * 60 + 59), 23 * 60 + 59),
    st.integers(0, 3),
)
cron_objects = calls(
    valid={
        "type": st.just("cron"),
        "expression": st.one_of(positional_cron, positional_cron, edge_crons),
        "timezone": st.one_of(real_zones, st.just("UTC")),
    },
    wild={"expression": cron_expression, "timezone": zones},
)
other_cadence_objects = st.one_of(
    st.fixed_dictionaries(
        {
            "type": st.just("interval"),
            "every_secs": st.one_of(
                st.integers(MIN_INTERVAL_SECS, MAX_INTERVAL_SECS),
                st.sampled_from([59, 60, MAX_INTERVAL_SECS, MAX_INTERVAL_SECS + 1, 0, -60]),
                any_int,
                st.floats(),
                st.booleans(),
                st.text(max_size=3),
            ),
        }
    ),
    st.fixed_dictionaries({"type": st.just("once"), "at": st.one_of(rfc3339_times, rfc3339_times, nasty_text, ints)}),
    st.fixed_dictionaries(
        {"type": st.one_of(st.sampled_from(["cron", "interval", "once", "CRON", ""]), json_values, deep)},
        optional={"expression": json_values, "every_secs": json_values, "at": json_values, "timezone": json_values},
    ),
)
cadence_objects = st.one_of(cron_objects, other_cadence_objects)
#: Cadences as text (the stored and CLI form): JSON of the objects above, and text that is not a cadence at all.
cadence_texts = st.one_of(
    cadence_objects.map(json_text),
    nasty_text,
    json_values.map(json_text),
    st.sampled_from(
        ["1" * 5000, "[" * 100_000, "-" + "9" * 4301, "1e999", "NaN", '{"type": "cron"}', '{"type": "interval"}']
        + ['{"type": "interval", "every_secs": -' + "9" * 4301 + "}", '{"type": ' + "7" * 4400 + "}", "{" * 5000]
    ),
)
instants = st.one_of(
    st.sampled_from(
        [
            datetime(2026, 3, 8, 6, 59, tzinfo=timezone.utc),  # New York spring-forward
            datetime(2026, 11, 1, 5, 30, tzinfo=timezone.utc),  # New York fall-back
            datetime(1970, 1, 1, tzinfo=timezone.utc),
            datetime(9998, 12, 31, 23, 59, tzinfo=timezone.utc),  # the next fires run into the year 9999
            datetime(9999, 12, 30, tzinfo=timezone.utc),  # ... and off the calendar's end
        ]
    ),
    st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(9999, 12, 31), timezones=st.just(timezone.utc)),
    st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(timezone.utc)),
    st.datetimes(
        min_value=datetime(1971, 1, 1),
        max_value=datetime(9998, 1, 1),
        timezones=st.sampled_from([timezone.utc, timezone(timedelta(hours=14)), timezone(timedelta(hours=-12))]),
    ),
)


def check_cadence(value, now: datetime) -> None:
    """``parse_cadence(value)`` refuses with :class:`OxmemError`, or gives a cadence that can be described,
    serialized and parsed back, validated, and scheduled (fires sorted, strictly after ``now``, aware)."""
    try:
        c = parse_cadence(value)
    except OxmemError:
        event("refused")
        return
    event(f"parsed {c.type}")
    assert isinstance(c, (CronCadence, IntervalCadence, OnceCadence))
    words = describe(c)
    assert isinstance(words, str) and words.strip()
    warnings = cadence_warnings(c)
    assert isinstance(warnings, list) and all(isinstance(w, str) for w in warnings)
    assert parse_cadence(cadence_json(c)) == c
    with contextlib.suppress(OxmemError):
        validate_cadence(c, now)
    try:
        runs = next_runs(c, now, 3)
    except OxmemError:
        event(f"{c.type}: no next runs")
        return
    event(f"{c.type}: scheduled")
    assert all(isinstance(r, datetime) and r.utcoffset() is not None for r in runs)
    assert all(r > now for r in runs)
    assert runs == sorted(runs)
    assert len(runs) <= 1 if isinstance(c, OnceCadence) else len(runs) == 3


def test_cron_cadences_refuse_or_describe_and_schedule():
    @fast(400)
    @given(value=cron_objects, now=instants)
    def check(value, now):
        check_cadence(value, now)

    check()


def test_cron_fires_near_the_end_of_the_calendar():
    """Fires searched from the last days datetime can hold: refused with OxmemError, never a ValueError."""

    @fast(150)
    @given(
        expression=st.one_of(positional_cron, edge_crons),
        tz=st.one_of(real_zones, st.just("UTC")),
        now=st.datetimes(
            min_value=datetime(9998, 11, 1), max_value=datetime(9999, 12, 31, 23, 59), timezones=st.just(timezone.utc)
        ),
    )
    def check(expression, tz, now):
        check_cadence({"type": "cron", "expression": expression, "timezone": tz}, now)

    check()


def test_other_cadence_objects_refuse_or_describe_and_schedule():
    @fast(300)
    @given(value=other_cadence_objects, now=instants)
    def check(value, now):
        check_cadence(value, now)

    check()


def test_cadence_texts_refuse_or_describe_and_schedule():
    @fast(300)
    @given(value=cadence_texts, now=instants)
    def check(value, now):
        check_cadence(value, now)

    check()


# -- 5. JSON Lines records ----------------------------------------------------------------------------------

#: JSON text for one value, including what Python's encoder cannot write.
json_fragments = st.one_of(
    json_values.map(json_text),
    json_values.map(lambda v: json_text(v, ensure_ascii=False)),
    clean_payloads.map(json_text),
    st.sampled_from(
        ["1" + "0" * 4299, "1" + "0" * 4300, "-" + "9" * 5000, "1e999", "-1e999", "NaN", "Infinity", "1.5", "true"]
        + ['"\\ud800"', '"\\udfff x"', '"a\\u0000b"', '"s"', '" "', '""', "null", "{}", "[]"]
        + ["[" * n + "]" * n for n in (255, 256, 257, 1000, 3000)]
        + ['{"k":' * n + "1" + "}" * n for n in (256, 257)]
    ),
)


def record_line(fields: dict) -> str:
    """A JSON Lines record written by hand from JSON text per field, leaving out the one named ``missing``."""
    return "{" + ", ".join(f'"{k}": {v}' for k, v in fields.items() if k not in ("missing", fields["missing"])) + "}"


record_lines = calls(
    valid={
        "session_id": st.one_of(
            st.sampled_from(['"s1"', '"a b"', '"\\u00e9"']), utf8_text.filter(str.strip).map(json_text)
        ),
        "sequence": int64.map(str),
        "payload": clean_payloads.map(json_text),
        "missing": st.none(),
    },
    wild={
        "session_id": json_fragments,
        "sequence": json_fragments,
        "payload": json_fragments,
        "missing": st.sampled_from(["session_id", "sequence", "payload"]),
    },
).map(record_line)


jsonl_lines = st.one_of(
    record_lines,
    record_lines,
    any_text,
    nasty_text,
    json_fragments,
    st.sampled_from(["[" * 100_000, "{" * 100_000, '{"session_id": "s", "sequence": 1, "payload": {}', "{,}"]),
)


def test_parse_record_refuses_or_returns_a_valid_record():
    @fast(500)
    @given(line=jsonl_lines)
    def check(line):
        try:
            record = parse_record(line, 1)
        except OxmemError as exc:
            event("refused")
            assert str(exc).startswith("line 1: ")
            return
        event("parsed")
        assert isinstance(record, Record) and record.line == 1
        assert isinstance(record.session_id, str) and record.session_id.strip()
        record.session_id.encode("utf-8")
        assert type(record.sequence) is int and INT64_MIN <= record.sequence <= INT64_MAX
        assert record.payload == json.loads(line)["payload"]
        json.dumps(record.payload, allow_nan=False).encode("utf-8")

    check()
