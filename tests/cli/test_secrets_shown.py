"""What the programs print never holds a secret: the key an embeddings endpoint repeats back (in any encoding, on
stdout, stderr and in the log file, with ``--verbose``), the value of a variable named like a secret that a path on
the command line holds (in an error line, a usage error, an uncaught exception's traceback — of ``oxmem`` and of
``oxmem-gui``); and an ``--embeddings-url`` no request could be made to is one line, its control characters shown
escaped. The programs run in-process where a test needs their output only, and as real processes where what
Python itself prints (a traceback) is what is tested."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from oxmem_gui.core import redaction
from oxmem_gui.core.embeddings import endpoint
from oxmem_gui.logs import LOG_NAME, setup_logging
from tests.cli._support import RAW_CONTROL, assert_one_error_line, run
from tests.core.formats.fixtures import make_zeke
from tests.secret_forms import forms, leaks, random_key

ROOT = Path(__file__).resolve().parents[2]
SECRET = "hunter2-secret-value"
MISSING = f"/x/gui-{SECRET}/none.db"


@pytest.fixture(scope="module")
def zeke(tmp_path_factory) -> Path:
    """A ZEKE file of 1536-value vectors: its searches embed the query at the endpoint named."""
    return make_zeke(tmp_path_factory.mktemp("zeke") / "memory.db")


@pytest.fixture
def log_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("OXMEM_LOG_DIR", str(tmp_path / "log"))
    yield tmp_path / "log"
    setup_logging("pytest")  # the next test's handlers, not this folder's


@pytest.fixture
def endpoint_reset(monkeypatch):
    """The endpoint the command line configures, and the keys it remembers, kept to this test."""
    monkeypatch.setattr(redaction, "_given", set(redaction._given))
    yield
    endpoint.configure(None)


# -- the key an endpoint repeats back ------------------------------------------------------------------------------


def test_a_key_repeated_back_by_the_endpoint_reaches_no_output_and_no_log(
    zeke, log_folder, endpoint_reset, capsys, monkeypatch
):
    from tests.core.embeddings.test_endpoint_hostile import STATUSES, Serving, hostile

    rng = random.Random(11)
    server = Serving(lambda handler, _: None)
    codes = []
    try:
        for run_number in range(15):
            key, status = random_key(rng), STATUSES[run_number % len(STATUSES)]
            monkeypatch.setenv("OPENAI_API_KEY", key)
            server.answer = hostile(rng, status)
            code, out, err = run(
                capsys, "--verbose", "--db", str(zeke), "--embeddings-url", f"{server.url}/v1", "search", "notes",
                "bike lock",
            )  # fmt: skip
            logged = (log_folder / LOG_NAME).read_text(encoding="utf-8")
            for name, text in (("stdout", out), ("stderr", err), ("log", logged)):
                assert leaks(key, text) == [], (run_number, status, key, name, text[-2000:])
            assert server.seen[-1]["Authorization"] == f"Bearer {key}"  # it was sent, and repeated back
            assert "HTTP Request: POST" in logged  # (the log holds httpx's lines, reason phrase included)
            codes.append(code)
    finally:
        server.stop()
    assert codes == [2, 2, 2, 2, 0] * 3  # a refusal stops the search; an answer that is no list leaves out its vectors


# -- --embeddings-url ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://local\x1bhost/v1", "'http://local\\x1bhost/v1'"),
        ("http://localhost/v1\x7f", "'http://localhost/v1\\x7f'"),
    ],
)
def test_an_embeddings_url_with_a_control_character_is_one_line_with_it_escaped(
    zeke, endpoint_reset, capsys, url, shown
):
    code, out, err = run(capsys, "--db", str(zeke), "--embeddings-url", url, "search", "notes", "bike lock")
    assert_one_error_line(code, out, err, f"not an embeddings URL: {shown} holds a control character or a space")
    assert not RAW_CONTROL.search(err) and "\x7f" not in err


# -- a secret of the environment in a path ---------------------------------------------------------------------------


def program(code: str, *argv: str, **env: str) -> subprocess.CompletedProcess:
    """``python -c code argv…`` in the checkout, with ``DB_PASSWORD`` set to the secret (and ``env``)."""
    return subprocess.run(
        [sys.executable, "-c", code, *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DB_PASSWORD": SECRET, "OXMEM_EMBEDDING": "deterministic", **env},
    )


OXMEM = "import sys; from oxmem_gui.cli import main; sys.exit(main())"
#: ``oxmem`` with a bug that repeats its path: an exception nobody catches, as Python prints it
OXMEM_WITH_A_BUG = """
import sys
from oxmem_gui.cli import program

async def run(args):
    raise RuntimeError(f"could not read {args.db}")

program.run = run
sys.exit(program.main())
"""


def test_the_command_lines_error_line_hides_a_secret_of_the_environment_in_a_path():
    done = program(OXMEM, "--db", MISSING, "sessions")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "oxmem: error: /x/gui-[hidden]/none.db does not exist\n"


def test_an_uncaught_exception_of_the_command_line_is_printed_with_the_secret_hidden():
    done = program(OXMEM_WITH_A_BUG, "--db", MISSING, "sessions")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("Traceback (most recent call last):\n")
    assert done.stderr.endswith("RuntimeError: could not read /x/gui-[hidden]/none.db\n")
    assert SECRET not in done.stderr


def test_a_usage_error_of_the_command_line_hides_a_secret_it_repeats():
    done = program(OXMEM, "--db", "x.db", "--embedding", SECRET, "sessions")
    assert (done.returncode, done.stdout) == (2, "")
    assert "[hidden]" in done.stderr and SECRET not in done.stderr, done.stderr


def test_the_inspectors_error_line_and_usage_error_hide_a_secret_of_the_environment():
    pytest.importorskip("PySide6")
    pytest.importorskip("qasync")
    gui = "import sys; from oxmem_gui.app import main; sys.exit(main())"
    done = program(gui, MISSING, "--screenshot", "s.png", QT_QPA_PLATFORM="offscreen")
    assert done.returncode == 2 and SECRET not in done.stdout + done.stderr
    assert "oxmem-gui: error: /x/gui-[hidden]/none.db does not exist\n" in done.stderr
    assert not (ROOT / "s.png").exists()
    done = program(gui, "--size", SECRET)
    assert done.returncode == 2 and SECRET not in done.stdout + done.stderr
    assert "argument --size: '[hidden]' is not a size like 1024x640" in done.stderr


def test_the_forms_a_test_looks_for_are_the_encodings_named():
    """(The helper itself: each encoding of a key with ``&`` differs from the key, so each is really looked for.)"""
    found = forms("a&b<c>d\"e'f%g+h/i=j;k,l)m]n\\o")
    assert found["url"] == "a%26b%3Cc%3Ed%22e%27f%25g%2Bh%2Fi%3Dj%3Bk%2Cl%29m%5Dn%5Co"
    assert found["go"] == "a\\u0026b\\u003cc\\u003ed\\\"e'f%g+h/i=j;k,l)m]n\\\\o"
    assert found["json"] == "a&b<c>d\\\"e'f%g+h/i=j;k,l)m]n\\\\o"
    assert found["bearer-b64"] == "QmVhcmVyIGEmYjxjPmQiZSdmJWcraC9pPWo7ayxsKW1dblxv"
    assert json.loads(f'"{found["go"]}"') == "a&b<c>d\"e'f%g+h/i=j;k,l)m]n\\o"
