"""``oxmem``'s argument parser, built from the table of commands (:mod:`.commands`): the global options on the
program and on every command (so they may come before or after it), then each command, a group's actions under
it."""

from __future__ import annotations

import argparse
from typing import Any

from .arguments import Parser, global_options
from .commands import COMMANDS, GROUPS


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="oxmem", description="Inspect and edit an AI agent's memory store.")
    global_options(parser, suppress=False)
    top = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    groups: dict[str, Any] = {}

    def add(parent: Any, name: str, help_text: str) -> argparse.ArgumentParser:
        sub: argparse.ArgumentParser = parent.add_parser(name, help=help_text, description=help_text)
        global_options(sub, suppress=True)
        return sub

    for command in COMMANDS:
        group, _, action = command.name.rpartition(" ")
        if group and group not in groups:
            groups[group] = add(top, group, GROUPS[group]).add_subparsers(
                dest=f"{group}_command", required=True, metavar="ACTION", parser_class=Parser
            )
        command.arguments(add(groups[group] if group else top, action, command.help))
    return parser
