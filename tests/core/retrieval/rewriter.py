"""Another program rewriting chunks' text in place — ``UPDATE chunks SET chunk_text = …`` under the same rowid, as a
user's ``sqlite3`` or a tool may do (the store's triggers keep ``chunks_fts`` in step) — run as its own process, in
one transaction:

* ``python -m tests.core.retrieval.rewriter DB ROWID TEXT [ROWID TEXT …]``: those rows get those texts;
* ``python -m tests.core.retrieval.rewriter DB --random SEED``: a chunk chosen by SEED is rewritten one of four ways
  (a word dropped, a word doubled, a word swapped for one of another chunk, words added); prints what it did.

Only the standard library's ``sqlite3`` is imported: it starts in milliseconds."""

from __future__ import annotations

import json
import random
import sqlite3
import sys


def rewritten(rng: random.Random, text: str, other: str) -> tuple[str, str]:
    """``text`` changed one way ``rng`` picks (``other``: another chunk's text, for words to bring in)."""
    words, extra = text.split() or ["empty"], other.split() or ["empty"]
    at = rng.randrange(len(words))
    how = rng.choice(["drop", "double", "swap", "add"] if len(words) > 1 else ["double", "swap", "add"])
    if how == "drop":
        del words[at]
    elif how == "double":
        words.insert(at, words[at])
    elif how == "swap":
        words[at] = rng.choice(extra)
    else:
        words += rng.sample(extra, min(len(extra), rng.randint(1, 3)))
    return how, " ".join(words)


def main(db: str, *args: str) -> None:
    conn = sqlite3.connect(db, timeout=60)
    try:
        with conn:
            if args[0] == "--random":
                rng = random.Random(int(args[1]))
                rows = conn.execute("SELECT rowid, chunk_text FROM chunks ORDER BY rowid").fetchall()
                (rowid, text), (_, other) = rng.choice(rows), rng.choice(rows)
                how, new = rewritten(rng, text, other)
                conn.execute("UPDATE chunks SET chunk_text = ? WHERE rowid = ?", (new, rowid))
                print(json.dumps({"rowid": rowid, "how": how, "from": text, "to": new}))
            else:
                for rowid, text in zip(args[::2], args[1::2], strict=True):
                    assert conn.execute("UPDATE chunks SET chunk_text = ? WHERE rowid = ?", (text, int(rowid))).rowcount
    finally:
        conn.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
