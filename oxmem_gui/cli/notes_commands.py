"""``oxmem notes``: a user's saved notes (an agent's facts or memories) listed, added, changed, deleted and
searched, the way the file's agent does. Each action is its arguments and its handler."""

from __future__ import annotations

import argparse
import contextlib
import sys

from ..core.api import InvalidInputError, Memory, Note, NotFoundError, SearchOptions, note_cursor
from . import paging
from .arguments import KEEP, like_option, search_options, tag_filter, text_arg, ttl_arg
from .searching import like_options, pick_ranking, ranking_kwargs, search_kwargs, why_note
from .text import preview, print_json, safe, text_table

TAG_HELP = "a tag of the note; repeat for more tags (default: no tags)"


def user_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("user", type=text_arg)


def list_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("user", type=text_arg)
    tag_filter(p, "note", "every note")
    p.add_argument(
        "--contains", type=text_arg, default=None, help="only notes whose text contains this (default: any text)"
    )
    paging.page_options(
        p,
        "note",
        paging.note_cursor_arg,
        "the notes after this one: the cursor `more:` printed, the last shown note's '[\"UPDATED_AT\",SEQUENCE]' "
        "(default: from the most recently updated)",
    )


async def list_notes(store: Memory, args: argparse.Namespace) -> int:
    notes, more = await paging.page(
        lambda after, n: store.notes_page(args.user, after, n, args.tags, args.tag_mode, args.contains),
        note_cursor,
        args.after,
        args.offset,
        paging.limit_of(args),
    )
    if args.json:
        print_json(notes)
    else:
        print(
            text_table(
                ["note", "updated", "tags", "text"],
                [(n.note_id, n.updated_at, ",".join(n.tags), preview(n.content, 60)) for n in notes],
            )
        )
    paging.say_more(more)
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("user", type=text_arg)
    p.add_argument("text", type=text_arg)
    p.add_argument("--tag", action="append", type=text_arg, default=[], dest="tags", metavar="T", help=TAG_HELP)


def update_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("user", type=text_arg)
    p.add_argument("note_id", type=text_arg)
    p.add_argument("text", type=text_arg)
    tags = p.add_mutually_exclusive_group()
    tags.add_argument(
        "--tag", action="append", type=text_arg, dest="tags", metavar="T", help=f"{TAG_HELP} (default: they stay)"
    )
    tags.add_argument("--no-tags", action="store_true", help="remove the note's tags")
    p.add_argument(
        "--scope", type=text_arg, default=KEEP, metavar="S", help="ZEKE: move the memory to scope S (default: stays)"
    )
    p.add_argument(
        "--ttl",
        type=ttl_arg,
        default=KEEP,
        metavar="SECONDS",
        help="ZEKE: the memory's time to live, or 'none' (default: stays as it is)",
    )


async def add_or_update(store: Memory, args: argparse.Namespace) -> int:
    notice = getattr(store, "vector_notice", None)  # what the edit leaves the agent's vector search without
    said = await notice() if notice else None
    if args.notes_command == "add":
        note = await store.save_note(args.user, args.text, args.tags)
    else:
        given = {k: v for k, v in (("scope", args.scope), ("ttl", args.ttl)) if v is not KEEP}
        lacking = [k for k in given if k not in store.capabilities.note_fields]
        if lacking:
            raise InvalidInputError(
                f"{store.capabilities.label} files' notes have no {' or '.join(lacking)} to change "
                f"({' and '.join('--' + k for k in lacking)}: for ZEKE's memories)"
            )
        fields = {("ttl_seconds" if k == "ttl" else k): v for k, v in given.items()}
        expected: Note | None = None
        tags = [] if args.no_tags else args.tags
        if tags is None:  # an update changes only what it is given: the tags as they are, unless changed since
            with contextlib.suppress(NotFoundError):  # (the edit itself then says why: no such note, a damaged file)
                expected = await store.get_note(args.user, args.note_id)
            tags = list(expected.tags) if expected is not None else []
        note = await store.update_note(args.user, args.note_id, args.text, tags, expected=expected, **fields)
    if said:  # (after the edit: a refused one stays one line)
        sys.stderr.write(safe(f"oxmem: notice: {said}") + "\n")
    print_json({"note_id": note.note_id}) if args.json else print(safe(note.note_id))
    return 0


def delete_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("user", type=text_arg)
    p.add_argument("note_id", type=text_arg)


async def delete(store: Memory, args: argparse.Namespace) -> int:
    await store.delete_note(args.user, args.note_id)
    print_json({"deleted": args.note_id}) if args.json else print(safe(f"deleted {args.note_id}"))
    return 0


def search_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("user", type=text_arg)
    p.add_argument("query", type=text_arg, nargs="?", help="what to search for (default with --like: its words)")
    p.add_argument(
        "--why",
        type=text_arg,
        default=None,
        metavar="ID",
        help="why this note (its id; an agent's memory or fact id) is not in the top k: where it ranked, the step "
        "that cut it, and what would bring it back (default: the hits themselves)",
    )
    like_option(p)
    search_options(p)


async def search(store: Memory, args: argparse.Namespace) -> int:
    like = await like_options(store, args)
    if args.why is not None:
        await why_note(store, args, like)
        return 0
    if args.ranking is None and any(r.scope == "notes" for r in store.retrievers()):
        kwargs = ranking_kwargs(await pick_ranking(store, args, "notes"), args)
    else:
        kwargs = search_kwargs(args)
    hits = await store.search_notes(args.user, args.query, args.top_k, SearchOptions(**kwargs, **like))
    if args.json:  # (a list, as before: what was left out goes to stderr, one line per model)
        print_json(hits)
        for model, why in getattr(hits, "skipped_models", {}).items():
            sys.stderr.write(safe(f"oxmem: notice: skipped vectors of {model}: {why}") + "\n")
        return 0
    print(
        text_table(
            ["score", "note", "tags", "text"],
            [(f"{h.score:.4f}", h.note_id, ",".join(h.tags), preview(h.text, 60)) for h in hits],
        )
    )
    for model, why in getattr(hits, "skipped_models", {}).items():
        print(safe(f"skipped vectors of {model}: {why}"))
    return 0
