"""Why a hit ranked where it did: flags, the derivation in words and numbers, and what moved between settings."""

from __future__ import annotations

from dataclasses import dataclass

from .hybrid import COLLAPSE_EPSILON, Hit, LegStats, QueryResult, recency

#: A leg whose raw scores span less than this (but more than the collapse threshold) was stretched to 0…1
#: from differences that may mean nothing.
NEAR_ZERO_RANGE = 1e-3

LEG_NAMES = {"vector": "vector", "fts": "FTS"}


def leg_flags(name: str, stats: LegStats) -> list[str]:
    if not stats.candidates:
        return [f"{LEG_NAMES[name]} leg had no candidates"]
    spread = stats.max - stats.min
    if stats.collapsed:
        what = "one candidate" if stats.candidates == 1 else f"all {stats.candidates} candidates scored the same"
        return [f"{LEG_NAMES[name]} range collapsed ({what}): every {LEG_NAMES[name]} score is 1.0"]
    if spread < NEAR_ZERO_RANGE:
        return [f"{LEG_NAMES[name]} range is only {spread:.2g} wide: tiny raw differences were stretched to 0…1"]
    return []


def hit_flags(result: QueryResult, hit: Hit) -> list[str]:
    """Short warnings for the results table."""
    flags = []
    if hit.vector_raw is None and "vector" in result.legs:  # (a ranking without vectors: nothing to say)
        flags.append("not in vector candidates")
    if hit.fts_raw is None and result.fts_expression is not None:
        flags.append("not in FTS candidates")
    for leg, raw in (("vector", hit.vector_raw), ("fts", hit.fts_raw)):
        if raw is not None:
            flags += leg_flags(leg, result.legs[leg])
    if hit.update_of is not None:
        flags.append(f"updates sequence {hit.update_of}")
    if hit.updated_by is not None:
        flags.append(f"updated by sequence {hit.updated_by}")
    return flags


def contributions(result: QueryResult, hit: Hit) -> tuple[float, float]:
    """The two terms of the score: ``vector_weight × vector_score`` and ``fts_weight × fts_score``."""
    return result.vector_weight * hit.vector_score, result.fts_weight * hit.fts_score


def _leg_line(result: QueryResult, hit: Hit, leg: str) -> str:
    stats = result.legs[leg]
    raw = hit.vector_raw if leg == "vector" else hit.fts_raw
    rank = hit.vector_rank if leg == "vector" else hit.fts_rank
    norm = hit.vector_score if leg == "vector" else hit.fts_score
    weight = result.vector_weight if leg == "vector" else result.fts_weight
    label = "cosine" if leg == "vector" else "−bm25"
    if raw is None:
        return f"{LEG_NAMES[leg]}: not among the leg's {stats.candidates} candidates → contributes 0 (× {weight:g} = 0)"
    if stats.collapsed:
        how = f"range collapsed (max − min ≤ {COLLAPSE_EPSILON:g}) → 1.0"
    else:
        how = f"normalized ({raw:.6g} − {stats.min:.6g}) / ({stats.max:.6g} − {stats.min:.6g}) = {norm:.6f}"
    return (
        f"{LEG_NAMES[leg]}: {label} {raw:.6g}, rank {rank} of {stats.candidates}; {how}; "
        f"× {weight:g} = {weight * norm:.6f}"
    )


def _neighbour_line(result: QueryResult, hit: Hit) -> str:
    """A profile's neighbour step for one hit: which neighbouring turn lent it what."""
    weight = result.profile["neighbour_weight"]
    if hit.context_sequence is None:
        return "neighbour context: no candidate of the turn before or after (sequence ± 1) scored above 0 → + 0"
    lent = hit.context_score / weight
    return (
        f"neighbour context: the turn at sequence {hit.context_sequence} weighted {lent:.6f} (the best of sequence "
        f"± 1) → + {weight:g} × {lent:.6f} = {hit.context_score:.6f}"
    )


def _update_lines(result: QueryResult, hit: Hit) -> list[str]:
    """A profile's update step for one hit: which older statement it restates, and which newer one restates it."""
    lines = []
    if hit.update_of is not None:
        lifted = (
            f"lifted level with it: + {hit.update_score:.6f}"
            if hit.update_score
            else "it already scores at least as much: + 0"
        )
        lines.append(
            f"update: restates the statement at sequence {hit.update_of} (one role, the same query words matched, "
            f"{hit.update_overlap:.0%} of their words shared ≥ {result.profile['update_overlap']:.0%}) and is newer; "
            f"{lifted}"
        )
    if hit.updated_by is not None:
        lines.append(f"updated by the statement at sequence {hit.updated_by}, which ranks at least level with this")
    return lines or ["update: restates no older candidate of its session → + 0"]


def tie_break(result: QueryResult, hit: Hit) -> str | None:
    """How the order against a neighbour with the same score was decided, if one has it."""
    i = hit.rank - 1
    for other in (result.hits[i - 1] if i > 0 else None, result.hits[i + 1] if i + 1 < len(result.hits) else None):
        if other is None or other.score != hit.score:
            continue
        first, second = (other, hit) if other.rank < hit.rank else (hit, other)
        if recency(first) != recency(second):
            return (
                f"tied at {hit.score:.6f} with rank {other.rank}: the newer one (sequence {recency(first)} > "
                f"{recency(second)}) ranks first"
            )
        return (
            f"tied at {hit.score:.6f} with rank {other.rank}, same recency ({recency(hit)}): chunk id order "
            f"decides ({first.chunk_id} < {second.chunk_id})"
        )
    return None


def explain(result: QueryResult, hit: Hit) -> str:
    """The whole derivation of one hit's rank, in words and numbers."""
    if hit.notes:  # another agent's ranking explains itself step by step
        return explain_agent(result, hit)
    v, f = contributions(result, hit)
    weighted = f"{result.vector_weight:g} × {hit.vector_score:.6f} + {result.fts_weight:g} × {hit.fts_score:.6f} = "
    lines = [
        f"Rank {hit.rank} of {len(result.hits)} — score {hit.score:.6f}",
        _leg_line(result, hit, "vector"),
        _leg_line(result, hit, "fts"),
    ]
    if result.profile.get("neighbour_weight") or result.profile.get("update_overlap"):
        lines += [f"weighted = {weighted}{v:.6f} + {f:.6f} = {v + f:.6f}"]
        parts = [f"{v + f:.6f}"]
        if result.profile.get("neighbour_weight"):
            lines.append(_neighbour_line(result, hit))
            parts.append(f"{hit.context_score:.6f}")
        if result.profile.get("update_overlap"):
            lines += _update_lines(result, hit)
            if hit.update_of is not None:
                parts.append(f"{hit.update_score:.6f}")
        lines.append(f"score = {' + '.join(parts)} = {hit.score:.6f}")
    else:
        lines.append(f"score = {weighted}{v:.6f} + {f:.6f} = {hit.score:.6f}")
    decided = tie_break(result, hit)
    if decided:
        lines.append(f"Tie-break: {decided}")
    lines.append("")
    lines.append(f"FTS expression ({result.fts_mode} mode): {result.fts_expression or '(no terms: the leg is empty)'}")
    if result.dropped_terms:
        lines.append(f"stopwords dropped from the query: {', '.join(result.dropped_terms)}")
    for leg in ("vector", "fts"):
        stats = result.legs[leg]
        span = f", raw {stats.min:.6g} … {stats.max:.6g}" if stats.candidates else ""
        lines.append(f"{LEG_NAMES[leg]} leg: {stats.candidates} candidates{span}")
        lines += [f"  ⚠ {flag}" for flag in leg_flags(leg, stats) if stats.candidates]
    if hit.embedding_model:
        lines.append(f"vector from {hit.embedding_model}")
    if result.skipped_models:
        lines += [f"skipped vectors of {m}: {why}" for m, why in result.skipped_models.items()]
    if result.steps:
        lines += ["", f"Ranking {result.retriever}:"] + [f"  · {step}" for step in result.steps]
    return "\n".join(lines)


def explain_agent(result: QueryResult, hit: Hit) -> str:
    """Another agent's ranking of one hit: its steps, the hit's numbers per leg, and the notes of each step."""
    lines = [f"Rank {hit.rank} of {len(result.hits)} — score {hit.score:.6f} ({result.retriever})"]
    for leg, raw, score, rank in (
        ("vector", hit.vector_raw, hit.vector_score, hit.vector_rank),
        ("fts", hit.fts_raw, hit.fts_score, hit.fts_rank),
    ):
        if raw is not None:
            lines.append(f"{LEG_NAMES[leg]}: raw {raw:.6f} → {score:.6f} (rank {rank} in its leg)")
    lines += [f"  · {note}" for note in hit.notes]
    for name, ids in result.lists.items():
        if hit.chunk_id in ids:
            lines.append(f"in list {name} at position {ids.index(hit.chunk_id) + 1}")
    lines.append("")
    if result.fts_expression:
        lines.append(f"FTS expression: {result.fts_expression}")
    lines += [f"  · {step}" for step in result.steps]
    if result.skipped_models:
        lines += [f"skipped vectors of {m}: {why}" for m, why in result.skipped_models.items()]
    return "\n".join(lines)


@dataclass
class Move:
    chunk_id: str
    before: int | None  # rank under A (None: not in A's top k)
    after: int | None  # rank under B

    @property
    def label(self) -> str:
        if self.before is None:
            return "new"
        if self.after is None:
            return "dropped"
        if self.after < self.before:
            return f"↑{self.before - self.after}"
        if self.after > self.before:
            return f"↓{self.after - self.before}"
        return "="


def moves(before: QueryResult, after: QueryResult) -> list[Move]:
    """Every chunk in either top k, by its rank under ``after`` (dropped ones last, by their old rank)."""
    old = {h.chunk_id: h.rank for h in before.hits}
    new = {h.chunk_id: h.rank for h in after.hits}
    out = [Move(h.chunk_id, old.get(h.chunk_id), h.rank) for h in after.hits]
    out += [Move(cid, rank, None) for cid, rank in sorted(old.items(), key=lambda kv: kv[1]) if cid not in new]
    return out


def setting_text(vector_weight: float, fts_mode: str) -> str:
    """A setting of the tunable hybrid in words: ``vector 0.4 / FTS 0.6, terms mode``."""
    return f"vector {vector_weight:g} / FTS {round(1 - vector_weight, 10):g}, {fts_mode} mode"


def describe_settings(result: QueryResult) -> str:
    models = ", ".join(result.models) or "no vectors"
    return (
        f"vector {result.vector_weight:g} / FTS {result.fts_weight:g}, {result.fts_mode} mode, "
        f"top {result.top_k}, {models}"
    )
