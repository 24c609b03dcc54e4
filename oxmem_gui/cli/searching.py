"""What a search is run with: the ranking (asked for, chosen for the file, or the agent's own), its options from
the flags, a query by example (``--like``), and Why not…? over notes."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..core.api import (
    ALL_SESSIONS,
    NOTES_PREFIX,
    InvalidInputError,
    Memory,
    OxmemError,
    Retriever,
    SearchOptions,
    default_search,
)
from .arguments import FTS_WEIGHT, VECTOR_WEIGHT, like_option, search_options, text_arg
from .reports import print_query, query_json, why_json
from .text import print_json, safe


def _weights(args: argparse.Namespace) -> tuple[float, float]:
    vw, fw = args.vector_weight, args.fts_weight
    if vw is None and fw is None:
        return VECTOR_WEIGHT, FTS_WEIGHT
    if vw is None:
        return 1.0 - fw, fw
    if fw is None:
        return vw, 1.0 - vw
    return vw, fw


def search_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    vw, fw = _weights(args)
    return dict(
        vector_weight=vw, fts_weight=fw, fts_mode=args.fts_mode or "terms", tags=args.tags, tag_mode=args.tag_mode
    )


def _tuning_flags(args: argparse.Namespace) -> list[str]:
    """The hybrid's tuning options given on the command line (weights and mode; tags are a filter)."""
    given = (("--vector-weight", args.vector_weight), ("--fts-weight", args.fts_weight), ("--fts-mode", args.fts_mode))
    return [flag for flag, value in given if value is not None]


async def pick_ranking(store: Memory, args: argparse.Namespace, scope: str, session: str | None = None) -> Retriever:
    """The ranking asked for; else, over sessions, the tunable hybrid when tuning options are given, or the
    default chosen for the session or file (``oxmem rankings --use``, or the GUI's *Make default*, which keeps the
    tunable hybrid's weight and mode too: they go into ``args``); else the first over ``scope``."""
    found = store.retrievers()
    if not found:
        raise OxmemError(f"{store.path.name} ({store.capabilities.label}) has no ranking to search with")
    if args.ranking is None and any(r.scope == scope == "session" for r in found):
        tunable = next((r for r in found if r.scope == scope and r.tunable), None)
        if tunable is not None and _tuning_flags(args):
            return tunable
        ranking, _, tuning = await default_search(store, session)
        if tuning:  # the weights and mode chosen with it (no tuning flag was given)
            args.vector_weight, args.fts_mode = tuning["vector_weight"], tuning["fts_mode"]
        return ranking
    if args.ranking is None:
        return next((r for r in found if r.scope == scope), found[0])
    for r in found:
        if r.name == args.ranking:
            return r
    raise OxmemError(f"no ranking {args.ranking!r} here (known: {', '.join(r.name for r in found)})")


def ranking_kwargs(ranking: Retriever, args: argparse.Namespace) -> dict[str, Any]:
    """The hybrid's options for a tunable ranking; an agent's own ranking takes none (saying so if some were given)."""
    if ranking.tunable:
        return search_kwargs(args)
    given = _tuning_flags(args) + (["--tag"] if args.tags and not ranking.tag_filter else [])
    if given:
        what = "a fixed profile" if ranking.tag_filter else "the agent's own and fixed"
        raise OxmemError(
            f"ranking {ranking.name!r} is {what}: {', '.join(given)} do not apply to it"
            + (" (--ranking oxmem is the tunable hybrid)" if ranking.tag_filter else "")
        )
    return {"tags": args.tags, "tag_mode": args.tag_mode} if ranking.tag_filter and args.tags else {}


async def like_options(store: Memory, args: argparse.Namespace) -> dict[str, Any]:
    """``--like ID``: the search options of a query by example (:mod:`.core.embeddings.example`), said on stderr;
    the QUERY defaults to ID's words. Without it, a QUERY is required."""
    if args.like is None:
        if args.query is None:
            raise InvalidInputError("give the QUERY to search for (or --like ID: more like that memory)")
        return {}
    example = await store.example(args.like)
    if args.query is None:
        args.query = example.text
    sys.stderr.write(safe(f"oxmem: notice: {example.said()}") + "\n")
    return example.options()


async def why_note(store: Memory, args: argparse.Namespace, like: dict[str, Any]) -> None:
    """``notes search USER QUERY --why ID``: the agent's own ranking of notes where it has one (ZEKE's), else the
    store's hybrid over the user's notes (``memory:USER``); ``like``: a query by example's options."""
    if any(r.scope == "notes" for r in store.retrievers()):
        ranking = await pick_ranking(store, args, "notes")
        story = await store.why_not(
            ranking.name,
            args.user,
            args.query,
            args.why,
            args.top_k,
            SearchOptions(**ranking_kwargs(ranking, args), **like),
        )
    else:
        story = await store.why_not(
            "oxmem",
            f"{NOTES_PREFIX}{args.user}",
            args.query,
            args.why,
            args.top_k,
            SearchOptions(**search_kwargs(args), **like),
        )
    print_json(why_json(story)) if args.json else print(safe("\n".join(story.lines()), keep_newlines=True))


def search_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "session",
        type=text_arg,
        nargs="?",
        help="the session's id (`oxmem sessions` lists them; default: none, with --all)",
    )
    p.add_argument("query", type=text_arg, nargs="?", help="what to search for (default with --like: its words)")
    p.add_argument(
        "--all",
        action="store_true",
        dest="all_sessions",
        help="search every session at once, in one ranking (give no SESSION); each hit names its session",
    )
    p.add_argument(
        "--why",
        type=text_arg,
        default=None,
        metavar="ID",
        help="why this memory (a chunk id, an event's sequence number, a note id; an agent's message or memory id) "
        "is not in the top k: where it ranked, the step that cut it, and what would bring it back (default: the "
        "hits themselves)",
    )
    like_option(p)
    search_options(p)


async def search(store: Memory, args: argparse.Namespace) -> int:
    if args.query is None and args.session is not None and (args.all_sessions or args.like is None):
        args.session, args.query = None, args.session  # one word is the QUERY, unless --like gives it
    like = await like_options(store, args)
    if args.all_sessions == (args.session is not None):
        raise OxmemError("give a SESSION or --all (every session), not both" if args.all_sessions
                         else "give the SESSION to search, or --all to search every session")  # fmt: skip
    ranking = await pick_ranking(store, args, "session", args.session)
    scope = ALL_SESSIONS if args.all_sessions else args.session
    options = SearchOptions(**ranking_kwargs(ranking, args), **like)
    if args.why is not None:
        if args.all_sessions:
            raise OxmemError("--why explains a miss in one SESSION: give the session, not --all")
        story = await store.why_not(ranking.name, args.session, args.query, args.why, args.top_k, options)
        print_json(why_json(story)) if args.json else print(safe("\n".join(story.lines()), keep_newlines=True))
        return 0
    result = await store.search(ranking.name, scope, args.query, args.top_k, options)
    if args.json:
        print_json({**query_json(result), **({"like": args.like} if args.like else {})})
    else:
        print_query(result, ranking)
    return 0
