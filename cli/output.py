"""What every command shares: the output modes and the one mapping from errors to stderr and exit codes."""

from __future__ import annotations

import enum
import functools
import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from typer._click.core import ParameterSource  # Typer vendors click

from kafkaops.cluster.common.errors import KafkaOpsError, UsageError, UserError

F = TypeVar("F", bound=Callable[..., Any])


class OutputFormat(enum.StrEnum):
    text = "text"
    json = "json"


def print_json(document: Any) -> None:
    """One JSON document on stdout, for scripts (beyond Kafka)."""
    sys.stdout.write(json.dumps(document, indent=2, sort_keys=False) + "\n")


def print_lines(lines: list[str]) -> None:
    for line in lines:
        sys.stdout.write(line + "\n")


def fail(message: str, *, usage: str | None = None) -> typer.Exit:
    """Print `message` (and the usage text, as Kafka's printUsageAndDie does) to stderr; exit 1."""
    sys.stderr.write(message + "\n")
    if usage:
        sys.stderr.write(usage.rstrip("\n") + "\n")
    return typer.Exit(code=1)


def usage_text(ctx: typer.Context) -> str:
    """What follows a usage error's message: the whole help when the command was given nothing (as Kafka
    prints it), else the usage line and where the help is, so that Kafka's one-line message stays
    visible (the whole help, which Kafka's printUsageAndDie prints, buries it under a hundred lines)."""
    if all(ctx.get_parameter_source(name) in (ParameterSource.DEFAULT, None) for name in ctx.params):
        return ctx.get_help()
    return f"{ctx.get_usage()}\nTry '{ctx.command_path} --help' for help."


def kafka_errors(prefix: str = "", json_key: str = "error") -> Callable[[F], F]:
    """Map kafkaops errors raised by a command to Kafka's text on stderr and exit code 1.

    `prefix` is the command's own lead-in (Kafka's TopicCommand prints
    `Error while executing topic command : <message>`). A user error never shows a traceback; an
    unexpected KafkaOpsError (a malformed znode, say) is still reported in one line, since it is a
    fact about the cluster, not a bug in the command.
    """

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return command(*args, **kwargs)
            except UsageError as error:
                ctx = kwargs.get("ctx")  # commands that print their usage on errors take `ctx: typer.Context`
                raise fail(str(error), usage=usage_text(ctx) if ctx is not None else None) from None
            except (UserError, KafkaOpsError) as error:
                if kwargs.get("output") == OutputFormat.json:
                    sys.stdout.write(json.dumps({json_key: str(error)}) + "\n")
                raise fail(prefix + str(error)) from None

        return wrapper  # type: ignore[return-value]

    return decorate
