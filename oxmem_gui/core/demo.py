"""A realistic demo store: conversations with tool calls, notes with tags, a rolling summary, schedules with runs.

Used by ``oxmem demo`` and ``oxmem-gui --demo`` so a newcomer sees real content at once.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from .memory_store import MemoryStore
from .schedules.cadence import parse_time, to_rfc3339, utc_now


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def _assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _call(call_id: str, name: str, arguments: Any, text: str | None = None) -> dict[str, Any]:
    return {"role": "assistant", "content": text, "tool_calls": [{"id": call_id, "name": name, "arguments": arguments}]}


def _tool(call_id: str, output: Any) -> dict[str, Any]:
    content = output if isinstance(output, str) else json.dumps(output, sort_keys=True)
    return {"role": "tool", "content": content, "tool_call_id": call_id}


_PYTEST_LOG = (
    "============================= test session starts ==============================\n"
    "collected 48 items\n\n"
    "tests/test_invoice.py ........F.....                                      [ 31%]\n"
    "tests/test_tax.py ...................                                     [ 70%]\n"
    "tests/test_export.py ..............                                       [100%]\n\n"
    "=================================== FAILURES ===================================\n"
    "___________________________ test_rounding_half_even ____________________________\n\n"
    "    def test_rounding_half_even():\n"
    "        invoice = Invoice(lines=[Line('Consulting', Decimal('2.675'), 1)])\n"
    ">       assert invoice.total() == Decimal('2.68')\n"
    "E       AssertionError: assert Decimal('2.67') == Decimal('2.68')\n"
    "E        +  where Decimal('2.67') = <Invoice 2 lines>.total()\n\n"
    "tests/test_invoice.py:88: AssertionError\n"
    "=========================== short test summary info ============================\n"
    "FAILED tests/test_invoice.py::test_rounding_half_even - AssertionError: assert Decimal('2.67') == "
    "Decimal('2.68')\n"
    "========================= 1 failed, 47 passed in 1.92s ========================="
)

SESSIONS: dict[str, list[dict[str, Any]]] = {
    "telegram:alice:lisbon-trip": [
        {"role": "system", "content": "You are Ada, Alice's travel and scheduling assistant. Be concise."},
        _user("I want to go to Lisbon for a long weekend in March. Can you find flights from Berlin?"),
        _call("call_f1", "search_flights", {"from": "BER", "to": "LIS", "month": "2027-03", "max_stops": 0}),
        _tool(
            "call_f1",
            {
                "results": [
                    {"carrier": "TAP", "depart": "2027-03-12T07:05", "return": "2027-03-15T19:40", "price_eur": 214},
                    {
                        "carrier": "easyJet",
                        "depart": "2027-03-12T11:30",
                        "return": "2027-03-15T21:10",
                        "price_eur": 168,
                    },
                ]
            },
        ),
        _assistant(
            "Two direct options for 12–15 March: easyJet at €168 (11:30 out, 21:10 back) or TAP at €214 "
            "(07:05 out, 19:40 back). easyJet is cheaper; TAP gives you a full first day."
        ),
        _user("Take the easyJet one. I prefer aisle seats, and remember I'm vegetarian for the hotel breakfast."),
        _call("call_f2", "book_flight", {"offer": "easyJet-2027-03-12-1130", "seat_preference": "aisle"}),
        _tool("call_f2", {"status": "confirmed", "booking_ref": "EZY7Q2K", "seats": ["14C", "14C"]}),
        _call(
            "call_m1",
            "memory_save",
            {"content": "Alice prefers aisle seats on flights", "tags": ["travel"]},
            "Booked. I'll remember your seat preference.",
        ),
        _assistant("Booked easyJet EZY7Q2K, seat 14C both ways. Shall I look for a hotel in Alfama or Baixa?"),
        _user("Alfama, something quiet, under 150 a night."),
        _call(
            "call_h1",
            "search_hotels",
            {
                "city": "Lisbon",
                "area": "Alfama",
                "max_price_eur": 150,
                "check_in": "2027-03-12",
                "check_out": "2027-03-15",
            },
        ),
        _tool(
            "call_h1",
            {
                "results": [
                    {"name": "Casa do Castelo", "price_eur": 132, "rating": 9.1, "quiet": True},
                    {"name": "Alfama Patio", "price_eur": 118, "rating": 8.4, "quiet": False},
                ]
            },
        ),
        _assistant(
            "Casa do Castelo (€132/night, rated 9.1) is on a quiet lane below the castle; Alfama Patio is "
            "cheaper but on a busy street. I'd take Casa do Castelo."
        ),
        _user("Book Casa do Castelo."),
    ],
    "cli:alice:invoice-rounding": [
        {"role": "system", "content": "You are a careful coding agent working in the repository ~/src/ledger."},
        _user("The invoice tests started failing after the Decimal refactor. Can you look?"),
        _call("call_t1", "run_command", {"cmd": "pytest -q tests/test_invoice.py"}),
        _tool("call_t1", _PYTEST_LOG),
        _call("call_r1", "read_file", {"path": "ledger/invoice.py", "lines": "40-62"}),
        _tool(
            "call_r1",
            "def total(self) -> Decimal:\n    amount = sum(l.price * l.qty for l in self.lines)\n"
            "    return amount.quantize(Decimal('0.01'), rounding=ROUND_HALF_EVEN)",
        ),
        _assistant(
            "The test expects commercial rounding (half up) but total() uses ROUND_HALF_EVEN, so 2.675 "
            "rounds to 2.67. Your invoices are legally required to round half up — switch to ROUND_HALF_UP?"
        ),
        _user("Yes, half up everywhere in invoices. Tax calculations stay banker's rounding."),
        _call(
            "call_e1", "edit_file", {"path": "ledger/invoice.py", "replace": "ROUND_HALF_EVEN", "with": "ROUND_HALF_UP"}
        ),
        _tool("call_e1", "1 replacement in ledger/invoice.py"),
        _call("call_t2", "run_command", {"cmd": "pytest -q"}),
        _tool("call_t2", "48 passed in 1.88s"),
        _assistant("Fixed: invoices round half up, tax keeps half-even. All 48 tests pass."),
    ],
    "slack:bob:weekly-metrics": [
        {"role": "system", "content": "You are the analytics assistant of the growth team."},
        _user("Give me last week's signups and churn, compared with the week before."),
        _call(
            "call_q1",
            "query_warehouse",
            {"sql": "select week, signups, churned from weekly_kpis order by week desc limit 2"},
        ),
        _tool("call_q1", {"rows": [["2026-W46", 1843, 212], ["2026-W45", 1620, 240]]}),
        _assistant("Week 46: 1,843 signups (+13.8% vs week 45) and 212 churned (−11.7%). Net growth 1,631."),
        _user("Post that in #growth every Monday at 9, Berlin time."),
        _call(
            "call_s1",
            "schedule_create",
            {"cron": "0 9 * * 1", "timezone": "Europe/Berlin", "goal": "Post weekly signups and churn to #growth"},
        ),
        _tool("call_s1", {"schedule_id": "sched-weekly-kpis", "next_run": "2026-11-23T08:00:00+00:00"}),
        _assistant("Done — the weekly KPI post runs Mondays at 09:00 Europe/Berlin, first on 23 November."),
    ],
    "telegram:alice:tomatoes": [
        _user("My tomato leaves have yellow spots with brown rings. What is it?"),
        _assistant(
            "Brown rings inside yellow spots on lower leaves usually mean early blight (Alternaria). Remove "
            "affected leaves, water at the base in the morning, and mulch so soil doesn't splash up."
        ),
        _user("Should I spray anything?"),
        _assistant("A copper fungicide slows it; apply every 7–10 days in wet weather. Rotate beds next year."),
    ],
}

NOTES: dict[str, list[tuple[str, list[str]]]] = {
    "alice": [
        ("Alice prefers aisle seats on flights.", ["travel", "preferences"]),
        ("Alice is vegetarian; ask hotels for vegetarian breakfast.", ["travel", "food", "preferences"]),
        ("Lisbon trip 12–15 March 2027: easyJet EZY7Q2K, Casa do Castelo in Alfama.", ["travel", "bookings"]),
        ("In the ledger repo invoices round half up (ROUND_HALF_UP); tax stays banker's rounding.", ["code", "ledger"]),
        ("Alice's tomatoes had early blight in 2026; rotate the beds in spring.", ["garden"]),
        ("Alice likes dark mode in every editor and terminal.", ["preferences", "ui"]),
    ],
    "bob": [
        ("Bob wants the weekly KPI post in #growth on Mondays at 09:00 Berlin time.", ["reports", "schedule"]),
        ("Growth KPIs live in the warehouse table weekly_kpis (week, signups, churned).", ["data"]),
        ("Bob reads numbers with thousands separators and percentages to one decimal.", ["preferences"]),
    ],
}


#: (created, updated) this long ago, note by note
NOTE_AGES = [
    (timedelta(days=400), timedelta(days=380)),
    (timedelta(days=21), timedelta(days=2)),
    (timedelta(days=9), timedelta(days=9)),
    (timedelta(days=120), timedelta(days=45)),
    (timedelta(days=200), timedelta(days=200)),
    (timedelta(hours=5), timedelta(hours=1)),
]


@dataclass
class DemoCounts:
    sessions: int
    events: int
    notes: int
    summaries: int
    schedules: int
    runs: int


@dataclass
class _DemoSchedule:
    user: str
    name: str
    goal: str
    cadence: dict[str, Any]
    age: timedelta  # created this long ago
    outcome: Callable[[int], tuple[str, str]]  # run number -> (status, summary)
    paused: bool = False


def _always(summary: str) -> Callable[[int], tuple[str, str]]:
    return lambda i: ("success", summary.format(i=i))


def _briefing(i: int) -> tuple[str, str]:
    if i in (3, 9):
        return "failed", "Calendar API timed out after 30 s; briefing not sent"
    return "success", f"Sent briefing #{i + 1}: 3 meetings, 14°C and sunny, no flight changes"


def _inbox(i: int) -> tuple[str, str]:
    if i == 17:
        return "cancelled", "Cancelled: the previous check was still running"
    return "success", f"{(i * 7) % 5} new messages, none urgent"


SCHEDULES = [
    _DemoSchedule(
        "bob",
        "Weekly KPI post",
        "Post last week's signups and churn to #growth",
        {"type": "cron", "expression": "0 9 * * 1", "timezone": "Europe/Berlin"},
        timedelta(days=43),
        _always("Posted week {i}: signups and churn with week-over-week change"),
    ),
    _DemoSchedule(
        "alice",
        "Morning briefing",
        "Summarize today's calendar, weather and travel changes",
        {"type": "cron", "expression": "30 7 * * 1-5", "timezone": "Europe/Lisbon"},
        timedelta(days=21),
        _briefing,
    ),
    _DemoSchedule(
        "alice",
        "Inbox watch",
        "Check the inbox and flag anything urgent",
        {"type": "interval", "every_secs": 3600},
        timedelta(days=2),
        _inbox,
    ),
    _DemoSchedule(
        "alice",
        "Lisbon fare tracker",
        "Alert if the EZY7Q2K fare class drops below €150",
        {"type": "interval", "every_secs": 21600},
        timedelta(days=3),
        lambda i: ("failed", "Airline site answered 503 Service Unavailable"),
    ),
    _DemoSchedule(
        "alice",
        "Passport renewal reminder",
        "Remind Alice to book a passport appointment",
        {"type": "once", "at": "+2d"},
        timedelta(days=10),
        _always("Reminder delivered on Telegram"),
    ),
    _DemoSchedule(
        "alice",
        "Check-in reminder",
        "Remind Alice to check in for EZY7Q2K",
        {"type": "once", "at": "+40d"},
        timedelta(days=1),
        _always(""),
    ),
    _DemoSchedule(
        "alice",
        "Water the tomatoes",
        "Remind Alice to water the tomatoes",
        {"type": "cron", "expression": "0 7 * * *", "timezone": "Europe/Berlin"},
        timedelta(days=30),
        _always("Reminder sent"),
        paused=True,
    ),
]


async def _fill_schedules(store: MemoryStore, now: datetime) -> tuple[int, int]:
    """Create the demo schedules in the past and play their runs forward to ``now``, as a scheduler would."""
    runs = 0
    for spec in SCHEDULES:
        created = now - spec.age
        cadence = dict(spec.cadence)
        if str(cadence.get("at", "")).startswith("+"):  # a one-shot N days after it was made ("+2d": it has run)
            days = int(cadence["at"][1:-1])
            cadence["at"] = to_rfc3339((created + timedelta(days=days)).replace(second=0, microsecond=0))
        schedule = await store.schedules.create(spec.user, spec.goal, cadence, name=spec.name, now=created)
        i = 0
        while not spec.paused and schedule.status == "active" and schedule.next_run_at:
            fire = parse_time(schedule.next_run_at)
            if fire > now:
                break
            status, summary = spec.outcome(i)
            finished = fire + timedelta(seconds=20 + (i * 13) % 90)
            _, schedule = await store.schedules.record_run(
                schedule.schedule_id,
                started_at=fire,
                finished_at=finished,
                status=status,
                output_summary=summary,
                output=f"{summary}\n\n(full transcript of run {i + 1})",
                turn_count=2 + i % 4,
                cost=round(0.002 + 0.0007 * (i % 5), 4),
                notified=status == "success",
                now=finished,
            )
            i += 1
            runs += 1
        if spec.paused:
            await store.schedules.update(schedule.schedule_id, {"status": "paused"}, now=now)
    return len(SCHEDULES), runs


async def fill_demo(store: MemoryStore, now: datetime | None = None) -> DemoCounts:
    """Add the demo content to ``store`` (sessions that already exist get their events appended); schedules
    are created in the past and their runs played forward to ``now``."""
    existing = {s.session_id: s.last_sequence or 0 for s in await store.list_sessions()}
    records = [
        (sid, existing.get(sid, 0) + i, payload)
        for sid, payloads in SESSIONS.items()
        for i, payload in enumerate(payloads, 1)
    ]
    results = await store.store_many(records)
    notes = 0
    now = now or utc_now()
    saved = []
    for user, items in NOTES.items():
        for content, tags in items:
            saved.append(await store.save_note(user, content, tags))
            notes += 1
    # notes written over the past year, some edited since, so their ages differ as a real user's do
    await store.restore_notes(
        [
            replace(
                note,
                created_at=to_rfc3339(now - NOTE_AGES[i % len(NOTE_AGES)][0]),
                updated_at=to_rfc3339(now - NOTE_AGES[i % len(NOTE_AGES)][1]),
            )
            for i, note in enumerate(saved)
        ]
    )
    outcome = await store.summarize("telegram:alice:lisbon-trip", budget_tokens=480)
    schedules, runs = await _fill_schedules(store, now)
    return DemoCounts(
        sessions=len(SESSIONS) + len(NOTES),
        events=len(results) + notes,
        notes=notes,
        summaries=int(outcome.triggered),
        schedules=schedules,
        runs=runs,
    )
