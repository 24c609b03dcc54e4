"""How the commands that report on a whole file or search print: ``info``, ``diff``, ``check``, a search's hits
with their score breakdown, a Why not…? story, a SQL result."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import sys
from typing import Any

from ..core.api import (
    CheckReport,
    DatabaseInfo,
    FileDiff,
    LegStats,
    NoteChange,
    QueryResult,
    Retriever,
    SqlResult,
    info_lines,
    shown_value,
    word_diff,
)
from .text import cell_csv, cell_json, num, preview, print_json, safe, text_table


def print_info(info: DatabaseInfo, as_json: bool) -> int:
    if as_json:
        print_json(info)
    else:
        print("\n".join(safe(line) for line in info_lines(info)))
    return 0


def _diff_words(old: str, new: str) -> str:
    """A changed text as ``[-removed-]{+added+}`` in its words (as ``git diff --word-diff=plain``), on one line."""
    marks = {"=": "{}", "-": "[-{}-]", "+": "{{+{}+}}"}
    return " ".join("".join(marks[op].format(text.strip()) + " " for op, text in word_diff(old, new)).split())


def print_diff(diff: FileDiff, as_json: bool) -> int:
    """The counts, then a line per change (a changed note's text as a word diff)."""
    if as_json:
        doc = dataclasses.asdict(diff)
        doc["counts"] = diff.counts()
        for change, entry in zip(diff.notes, doc["notes"], strict=True):
            entry.update(tags_added=change.tags_added, tags_removed=change.tags_removed)
            if change.text_changed and change.old is not None and change.new is not None:
                entry["words"] = [
                    {"op": op, "text": text} for op, text in word_diff(change.old.content, change.new.content)
                ]
        print_json(doc)
        return 0
    print(safe(f"{diff.old_path} → {diff.new_path} ({diff.format})"))
    if diff.empty:
        print("no changes")
        return 0
    print(", ".join(f"{what} {n:,}" for what, n in diff.counts().items()))
    for session in diff.sessions:
        print(safe(f"session {session.kind:<9} {session.session_id}  {session.events}"))
    for summary in diff.summaries:
        print(safe(f"summary changed  {summary.session_id}  {_diff_words(summary.old or '', summary.new or '')[:200]}"))
    for change in diff.notes:
        print(safe(_note_line(diff.note_noun, change)))
    for schedule in diff.schedules:
        fields = "; ".join(f"{f} {preview(str(a), 40)} → {preview(str(b), 40)}" for f, a, b in schedule.fields)
        print(
            safe(
                f"schedule {schedule.kind:<8} {schedule.schedule_id}  {schedule.name}"
                + (f"  {fields}" if fields else "")
            )
        )
    return 0


def _note_line(noun: str, c: NoteChange) -> str:
    """A note added or deleted, with its tags and text; a changed one with its tags' changes and its words'."""
    note = c.new or c.old
    assert note is not None  # a change has a side
    tags = " ".join([*(f"+#{t}" for t in c.tags_added), *(f"-#{t}" for t in c.tags_removed)])
    tags = tags if c.kind == "changed" else " ".join(f"#{t}" for t in note.tags)
    if c.text_changed and c.old is not None and c.new is not None:
        text = _diff_words(c.old.content, c.new.content)
    else:
        text = " ".join(note.content.split())
    line = f"{noun} {c.kind:<7} {c.group}/{c.note_id}" + (f"  {tags}" if tags else "")
    return f"{line}  {preview(text, 100) if c.kind != 'changed' or c.text_changed else ''}".rstrip()


def print_check(report: CheckReport, as_json: bool) -> int:
    """Exit status 0 when healthy (warnings allowed), 1 when a problem was found."""
    if as_json:
        print_json({**dataclasses.asdict(report), "ok": report.ok})
    else:
        journal = f", journal {report.journal_mode}" if report.journal_mode else ""
        pages = f"{journal}, {report.pages:,} pages" if report.pages is not None else ""
        print(safe(f"{report.path}: {report.format}{pages}"))
        print(text_table(["status", "check", "finding"], [(f.level, f.check, f.detail) for f in report.findings]))
        if report.counts:
            print("counts: " + ", ".join(f"{k} {v:,}" for k, v in report.counts.items()))
        print(report.verdict)
    return 0 if report.ok else 1


def why_json(story: Any) -> dict[str, Any]:
    """A why-not story as ``--json`` prints it: every field, the ranking's hits as ``search --json`` has them."""
    out = {f.name: getattr(story, f.name) for f in dataclasses.fields(story) if f.name != "result"}
    out["legs"] = {name: dataclasses.asdict(leg) for name, leg in story.legs.items()}
    out["changes"] = [dataclasses.asdict(c) for c in story.changes]
    out["above"] = [{"rank": r, "chunk_id": c, "score": s} for r, c, s in story.above]
    out["hits"] = query_json(story.result)["hits"] if story.result is not None else []
    return out


def query_json(result: QueryResult) -> dict[str, Any]:
    doc = dataclasses.asdict(result)
    doc.pop("ranking")  # the pool, ranked: ``pool`` and ``hits`` have it
    doc["vector_errors"] = [{"chunk_id": c, "error": e} for c, e in result.vector_errors]
    return doc


def print_query(result: QueryResult, ranking: Retriever) -> None:
    v, f = result.legs.get("vector", LegStats()), result.legs.get("fts", LegStats())

    def leg(name: str, stats: Any) -> str:
        if not stats.candidates:
            return f"{name}: no candidates"
        flag = "  (range collapsed: every score 1.0)" if stats.collapsed else ""
        span = f", raw {stats.min:.6g} … {stats.max:.6g}" if stats.min is not None and stats.max is not None else ""
        return f"{name}: {stats.candidates} candidates{span}{flag}"

    if ranking.tunable:
        print(
            safe(
                f"query {result.query!r}  weights vector {result.vector_weight:g} / fts {result.fts_weight:g}  "
                f"fts {result.fts_mode}: {result.fts_expression or '(no terms)'}"
            )
        )
    else:
        print(safe(f"query {result.query!r}  ranking {ranking.name}: {ranking.label}"))
        if result.fts_expression:
            print(safe(f"fts expression: {result.fts_expression}"))
    if result.dropped_terms:
        print(safe(f"stopwords dropped: {', '.join(result.dropped_terms)}"))
    for step in result.steps:
        print(safe(f"  · {step}"))
    print(leg("vector", v) + (f"  models {', '.join(result.models)}" if result.models else ""))
    print(leg("fts", f))
    for model, why in result.skipped_models.items():
        print(safe(f"skipped vectors of {model}: {why}"))
    if result.vector_errors:
        chunk, why = result.vector_errors[0]
        more = f" (and {len(result.vector_errors) - 1:,} more)" if len(result.vector_errors) > 1 else ""
        print(safe(f"left out: {len(result.vector_errors):,} stored vectors cannot be read — {chunk}: {why}{more}; "
                   "`oxmem check` lists them"))  # fmt: skip
    if not result.hits:
        print("no hits")
        return
    neighbours = bool(result.profile.get("neighbour_weight"))
    many = result.session_id is None  # a search of every session: each hit names its own
    rows = [
        (
            h.rank,
            f"{h.score:.4f}",
            f"{num(h.vector_raw)}→{h.vector_score:.3f}",
            f"{num(h.fts_raw)}→{h.fts_score:.3f}",
            *([f"+{h.context_score:.3f} (seq {h.context_sequence})" if h.context_sequence else "+0"] * neighbours),
            *([h.session_id] * many),
            h.sequence_end,
            preview(h.text, 60),
        )
        for h in result.hits
    ]
    headers = ["rank", "score", "vector raw→norm", "fts raw→norm", *(["neighbour"] * neighbours),
               *(["session"] * many), "seq", "text"]  # fmt: skip
    print(text_table(headers, rows))
    for name, ids in result.lists.items():
        print(safe(f"list {name}: {', '.join(ids) if ids else '(empty)'}"))
    for h in result.hits:
        for note in h.notes:
            print(safe(f"  #{h.rank} {note}"))


def print_sql(result: SqlResult, args: argparse.Namespace) -> None:
    if args.json:
        print_json(
            {"columns": result.columns, "rows": [[cell_json(v) for v in r] for r in result.rows], "more": result.more}
        )
        return
    if args.csv:
        out = csv.writer(sys.stdout, lineterminator="\n")
        out.writerow([safe(c, keep_newlines=True) for c in result.columns])
        out.writerows([[cell_csv(v) for v in r] for r in result.rows])
    elif result.columns:
        print(text_table(result.columns, [[shown_value(v, 40) for v in r] for r in result.rows]))
    more = f"; more with --limit {args.limit * 10}" if result.more else ""
    sys.stderr.write(f"{len(result.rows):,} row{'s' if len(result.rows) != 1 else ''}{more}\n")
