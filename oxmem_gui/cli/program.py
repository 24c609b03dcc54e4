"""``main``: the program ``oxmem`` — what it does with a closed output, an interrupt, a full disk or a closed
pipe, each in one line. Whatever it prints about an error — its error line, a usage error (which may repeat an
argument), an uncaught exception's traceback (:func:`..core.redaction.excepthook`) — has every secret hidden."""

from __future__ import annotations

import argparse
import asyncio
import errno
import os
import sys
from collections.abc import Sequence

from ..core.api import OxmemError, excepthook, redact, stderr_redacted
from ..logs import setup_logging
from .arguments import EXIT_ERROR, Parser
from .commands import NOTHING_WRITTEN, command_of
from .parser import build_parser
from .running import run
from .text import safe

#: what writing the output meets when it cannot go anywhere (`> /dev/full`, a quota, a disk gone)
_OUTPUT_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO}


def _any_encoding() -> None:
    """Output in any terminal encoding: what it cannot show is written as ``\\uXXXX`` (still valid JSON), never a
    ``UnicodeEncodeError``."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def parsed(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line's arguments; what the parser prints on standard error (a usage error) through
    :func:`redact`."""
    with stderr_redacted():
        return build_parser().parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    sys.excepthook = excepthook
    if sys.stderr is None:  # started with its stderr closed (`2>&-`)
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - for the life of the process
    if sys.stdout is None:  # `>&-`: refused before anything runs, so a change is never made unseen
        sys.stderr.write("oxmem: error: the output cannot be written (standard output is closed); nothing was done\n")
        return EXIT_ERROR
    _any_encoding()
    Parser.argv = list(sys.argv[1:] if argv is None else argv)
    args = parsed(argv)
    setup_logging("oxmem", args.verbose)
    try:
        code = asyncio.run(run(args))
        sys.stdout.flush()  # a full disk or a closed pipe shows here, not in the interpreter's exit
        return code
    except OxmemError as exc:
        sys.stderr.write(f"oxmem: error: {safe(redact(str(exc)))}\n")
        return EXIT_ERROR
    except BrokenPipeError:  # `oxmem … | head`: the reader left; that is not an error
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps the interpreter's final flush quiet
        return 0
    except OSError as exc:
        if exc.errno not in _OUTPUT_ERRORS:
            raise
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - nothing more can reach it
        sys.stderr.write(
            f"oxmem: error: the output could not be written ({exc.strerror}); any change the command made is saved\n"
        )
        return EXIT_ERROR
    except KeyboardInterrupt:
        sys.stderr.write(f"oxmem: interrupted; {command_of(args).interrupted or NOTHING_WRITTEN}\n")
        return 130
