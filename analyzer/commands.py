"""The registry of ``untrace`` subcommands (`COMMANDS`, filled by `command` / `register`)
and what every subcommand shares: exit codes, `UsageError`, writing to stdout. Apart
from the `cli` module, so that a subcommand in a module of its own registers without
importing the command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130

Arguments = Callable[[argparse.ArgumentParser], None]
Handler = Callable[[argparse.Namespace], int]


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    arguments: Arguments | str  # or "module:attribute", imported when this command runs
    run: Handler | str
    description: str | None = None


COMMANDS: dict[str, Command] = {}


def register(cmd: Command) -> Command:
    COMMANDS[cmd.name] = cmd
    return cmd


def command(name: str, help: str, arguments: Arguments | str, description: str | None = None):
    """Register ``run(args) -> int`` as the subcommand ``name``."""

    def decorate(run: Handler) -> Handler:
        register(Command(name, help, arguments, run, description))
        return run

    return decorate


class UsageError(Exception):
    """A mistake on the command line: reported in one line, exit code 2."""


def stdout_write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()
