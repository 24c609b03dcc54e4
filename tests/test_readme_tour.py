"""README.md and docs/: the command-line tour (docs/command-line.md) is what the commands print now, and every
link stays inside the repository."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import unquote

from oxmem_gui.core.schedules import cadence
from oxmem_gui.core.store import notes
from tests import readme_tour

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
TOUR = DOCS / "command-line.md"

#: the only addresses outside the repository that README.md links to, and why each is needed
EXTERNAL = {
    "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2": "the semantic model's origin and its license",
    "https://github.com/shantanugoel/oxydra": "the Oxydra agent, whose memory tables oxmem's store shares",
    "https://github.com/omgagi/omega": "the Omega agent, whose files oxmem reads and edits",
    "https://github.com/Johnsonbros/Zeke": "the ZEKE agent, whose files oxmem reads and edits",
    "https://github.com/davo20019/aidaemon": "the aidaemon agent, whose files oxmem reads and edits",
    "https://github.com/openai/openai-agents-python": "the OpenAI Agents SDK, whose session files oxmem reads",
    "https://github.com/agno-agi/agno": "Agno, whose SqliteDb files oxmem reads and edits",
    "https://github.com/langchain-ai/langgraph": "LangGraph, whose checkpoint and store files oxmem reads",
    "https://github.com/mem0ai/mem0": "mem0, whose history.db oxmem reads",
    "https://www.python-httpx.org/": "the HTTP library the remote memories' client is built on",
}
CONTRACT = ROOT / "docs" / "contract.md"


def _tour(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tests.readme_tour", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_the_readme_tour_is_what_the_commands_print_now():
    done = _tour("--check")
    assert done.returncode == 0, f"the command-line tour is out of date; `./run docs` rewrites it:\n{done.stdout}"
    assert done.stdout == f"{TOUR}: tour is current\n"
    text = TOUR.read_text(encoding="utf-8")
    tour = text[text.index(readme_tour.BEGIN) : text.index(readme_tour.END)]
    assert "$ oxmem search telegram:alice:lisbon-trip" in tour and "$ oxmem schedules list" in tour


SAMPLE = """# Sample

```console
$ oxmem outside the tour: left alone
```

<!-- tour:begin -->
Prose inside the tour stays.

```console
$ export OXMEM_DB=/tmp/tour/m.db OXMEM_EMBEDDING=deterministic
$ oxmem init
stale line
$ oxmem notes add alice "Prefers aisle seats" --tag travel
$ oxmem notes list alice
$ oxmem schedules add --user alice --goal "Stretch" --every 3600
$ printf 'made by bash in %s\\n' "$PWD"
$ oxmem notes list alice | head -n 1
```

```sh
$ oxmem sessions
not a console block: left alone
```
<!-- tour:end -->
"""

#: SAMPLE's tour as the commands print it: the folder shown as /tmp/tour, the clock at 2026-11-20 08:15 UTC and
#: one second later after each command, ids from the seeded generator
SAMPLE_WRITTEN = SAMPLE.replace(
    """$ oxmem init
stale line
$ oxmem notes add alice "Prefers aisle seats" --tag travel
$ oxmem notes list alice
$ oxmem schedules add --user alice --goal "Stretch" --every 3600
$ printf 'made by bash in %s\\n' "$PWD"
$ oxmem notes list alice | head -n 1
""",
    """$ oxmem init
/tmp/tour/m.db: applied 0001_initial
$ oxmem notes add alice "Prefers aisle seats" --tag travel
note-e8d79f49-af6d-414c-8a6f-188a424e617b
$ oxmem notes list alice
note                                       updated                           tags    text
note-e8d79f49-af6d-414c-8a6f-188a424e617b  2026-11-20T08:15:01.000000+00:00  travel  Prefers aisle seats
$ oxmem schedules add --user alice --goal "Stretch" --every 3600
e3d6e4b9-d96e-482d-8d50-2d42af1ffe0d: every hour; next run 2026-11-20T09:15:03.000000+00:00
$ printf 'made by bash in %s\\n' "$PWD"
made by bash in /tmp/tour
$ oxmem notes list alice | head -n 1
note                                       updated                           tags    text
""",
)


def test_check_prints_the_difference_and_write_rewrites_only_the_console_blocks_of_the_tour(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(SAMPLE, encoding="utf-8")
    done = _tour("--check", "--readme", str(readme))
    assert done.returncode == 1
    assert "-stale line\n+/tmp/tour/m.db: applied 0001_initial\n" in done.stdout
    assert "+made by bash in /tmp/tour\n" in done.stdout
    assert done.stdout.endswith(f"{readme}: tour is out of date; `./run docs` rewrites it\n")
    assert readme.read_text(encoding="utf-8") == SAMPLE  # --check writes nothing

    done = _tour("--write", "--readme", str(readme))
    assert (done.returncode, done.stdout) == (0, f"{readme}: tour rewritten\n")
    assert readme.read_text(encoding="utf-8") == SAMPLE_WRITTEN
    # the same output on every run: the written file is current
    done = _tour("--check", "--readme", str(readme))
    assert (done.returncode, done.stdout) == (0, f"{readme}: tour is current\n")


def test_a_readme_without_a_tour_is_an_error(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# Nothing to run\n", encoding="utf-8")
    done = _tour("--check", "--readme", str(readme))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "readme_tour: the README has no tour: <!-- tour:begin --> … <!-- tour:end --> not found\n"


def test_render_in_process_gives_the_clock_ids_environment_and_folder_back(monkeypatch):
    monkeypatch.setenv("OXMEM_DB", "/nowhere/else.db")
    before_env, before_cwd = dict(os.environ), os.getcwd()
    text = (
        "<!-- tour:begin -->\n```console\n$ export OXMEM_EMBEDDING=deterministic\n"
        "$ oxmem --db /tmp/tour/x.db notes add bob Hi\n```\n<!-- tour:end -->\n"
    )
    assert readme_tour.render(text) == text.replace(
        "notes add bob Hi\n",
        "notes add bob Hi\nnote-e8d79f49-af6d-414c-8a6f-188a424e617b\n"
        "oxmem: notice: /tmp/tour/x.db did not exist: a new store was created there\n",
    )
    assert (dict(os.environ), os.getcwd()) == (before_env, before_cwd)
    assert uuid.uuid4() != uuid.uuid4()
    now = datetime.now(timezone.utc)
    assert abs(cadence.utc_now() - now) < timedelta(minutes=1)
    assert abs(datetime.fromisoformat(notes.utc_now_text()) - now) < timedelta(minutes=1)


# -- links ----------------------------------------------------------------------------------------------------

_FENCED = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.S | re.M)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_LINK = re.compile(r"(?<!!)\[(?:[^\[\]]|!\[[^\]]*\]\([^)]*\))*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)", re.M)
_HTML = re.compile(r"<(?:a|img|source)\b[^>]*?\b(?:href|src|srcset)\s*=\s*[\"']([^\"']+)", re.I)
_AUTOLINK = re.compile(r"<([a-z][a-z0-9+.-]*:[^>\s]+)>", re.I)
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def _prose(text: str) -> str:
    """The text with fenced blocks blanked (a link-like line in a console block is not a link)."""
    return _FENCED.sub(lambda m: " " * len(m.group()), text)


def _anchors(text: str) -> set[str]:
    """The ids GitHub gives the headings: lower case, punctuation dropped, spaces as hyphens, -1, -2 … for repeats."""
    anchors: set[str] = set()
    repeats: dict[str, int] = {}
    for heading in _HEADING.findall(_prose(text)):
        plain = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
        slug = re.sub(r"[^\w\- ]", "", plain).replace(" ", "-")
        n = repeats.get(slug, 0)
        anchors.add(f"{slug}-{n}" if n else slug)
        repeats[slug] = n + 1
    return anchors


def link_targets(text: str) -> list[str]:
    """Every link and image target of a markdown text, in order: inline, reference definitions, HTML and
    autolinks; none from code."""
    prose = _CODE_SPAN.sub(lambda m: " " * len(m.group()), _prose(text))
    found = [(m.start(), m.group(1)) for p in (_IMAGE, _LINK, _REFERENCE, _HTML, _AUTOLINK) for m in p.finditer(prose)]
    return [target for _, target in sorted(found)]


def problems(text: str, root: Path, folder: Path | None = None) -> list[str]:
    """What in a markdown text in ``folder`` (default: ``root``, the repository's) points outside the repository
    or at nothing, a heading of another markdown file included."""
    found = []
    folder = folder or root
    anchors = _anchors(text)
    for target in link_targets(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):
            if target not in EXTERNAL:
                found.append(f"{target}: an address outside the repository (list it in EXTERNAL if it is needed)")
            continue
        path, _, anchor = target.partition("#")
        if not path:
            if anchor not in anchors:
                found.append(f"{target}: no heading with this anchor")
            continue
        resolved = (folder / unquote(path.split("?")[0])).resolve()
        if not resolved.is_relative_to(root.resolve()):
            found.append(f"{target}: outside the repository")
        elif not resolved.exists():
            found.append(f"{target}: no such file in the repository")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved.read_text(encoding="utf-8")):
            found.append(f"{target}: no heading with this anchor in {path}")
    for span in _CODE_SPAN.findall(_prose(text)):
        if span.strip("`").startswith("../"):
            found.append(f"{span}: a path outside the repository")
    return found


def test_readme_links_only_files_inside_the_repository_and_the_listed_addresses():
    text = README.read_text(encoding="utf-8")
    targets = link_targets(text)
    # the parser sees README's links (the screenshots, the reference pages, the agents' pages)
    assert {"resources/screenshots/sessions.png", "docs/embeddings.md", "docs/reliability.md"} <= set(targets)
    assert problems(text, ROOT) == []
    # every listed address is still used: one that is not should leave the list
    everywhere = set(targets)
    for page in sorted(DOCS.glob("*.md")):
        everywhere |= set(link_targets(page.read_text(encoding="utf-8")))
    assert set(EXTERNAL) <= everywhere


def test_every_reference_page_is_linked_from_the_readme_and_its_links_hold():
    linked = set(link_targets(README.read_text(encoding="utf-8")))
    for page in sorted(DOCS.glob("*.md")):
        assert f"docs/{page.name}" in linked, page.name
        text = page.read_text(encoding="utf-8")
        assert problems(text, ROOT, DOCS) == [], page.name
        assert [line for line in text.splitlines() if line.startswith("# ")] == [text.splitlines()[0]], page.name


def test_the_contract_is_linked_and_its_links_hold():
    """docs/contract.md, which the README and the docstrings cite ("contract §6"), links only what exists."""
    text = CONTRACT.read_text(encoding="utf-8")
    assert "docs/contract.md" in link_targets(README.read_text(encoding="utf-8"))
    assert "choices.md" in link_targets(text)
    assert problems(text, ROOT, CONTRACT.parent) == []
    sections = re.findall(r"^## (\d+)\. ", text, re.M)
    assert sections == [str(n) for n in range(1, 12)]


def test_the_link_check_reports_each_kind_of_bad_link(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "here.md").write_text("x")
    text = """# Title

## Where it's *from*

See [the spec](../shared/SPEC.md), [here](docs/here.md#part), [gone](docs/gone.md), [top](#title),
[from](#where-its-from), [nowhere](#nowhere), ![logo](img/logo.png "Logo"), <https://example.com/a>,
[![badge](docs/here.md)](http://example.org/b), <img src="../up.png">, and the contract `../shared/SPEC.md`.

[ref]: ../../etc/passwd

```console
$ cat [not a link](../inside/code.md)
```
"""
    assert link_targets(text) == [
        "../shared/SPEC.md",
        "docs/here.md#part",
        "docs/gone.md",
        "#title",
        "#where-its-from",
        "#nowhere",
        "img/logo.png",
        "https://example.com/a",
        "http://example.org/b",
        "docs/here.md",
        "../up.png",
        "../../etc/passwd",
    ]
    assert problems(text, tmp_path) == [
        "../shared/SPEC.md: outside the repository",
        "docs/here.md#part: no heading with this anchor in docs/here.md",
        "docs/gone.md: no such file in the repository",
        "#nowhere: no heading with this anchor",
        "img/logo.png: no such file in the repository",
        "https://example.com/a: an address outside the repository (list it in EXTERNAL if it is needed)",
        "http://example.org/b: an address outside the repository (list it in EXTERNAL if it is needed)",
        "../up.png: outside the repository",
        "../../etc/passwd: outside the repository",
        "`../shared/SPEC.md`: a path outside the repository",
    ]
