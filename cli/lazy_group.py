"""Commands imported on first use: `kafkaops --version` and `--help` import none of them, and
`kafkaops topics …` imports only what `topics` needs (not the planner, the Kafka client or Spark's glue).

Typer builds each command from its function when the command is asked for; the top-level help lists the
commands from the summaries in the table, which `tests/unit/test_cli_startup.py` checks against each
command's own help, so they cannot drift apart.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

Command = Any
"""A click command as Typer builds it (Typer vendors click in a private module, not named here)."""


@dataclass(frozen=True)
class LazyCommand:
    """`module:attribute` is the command's function (or, with `is_group`, a `typer.Typer` of subcommands);
    `summary` is the first paragraph of its help, as the top-level help shows it; `settings` are what
    `Typer.command` takes (`context_settings`; `cls` as "module:Class", imported with the command)."""

    module: str
    attribute: str
    summary: str
    settings: dict[str, Any] = field(default_factory=dict)
    is_group: bool = False

    def load(self, name: str) -> Command:
        target = getattr(importlib.import_module(self.module), self.attribute)
        if self.is_group:
            command = typer.main.get_command(target)
        else:
            settings = dict(self.settings)
            if isinstance(settings.get("cls"), str):  # "module:Class", imported with the command
                module, _, attribute = settings["cls"].partition(":")
                settings["cls"] = getattr(importlib.import_module(module), attribute)
            single = typer.Typer(add_completion=False, rich_markup_mode=None)
            single.command(name, **settings)(target)
            command = typer.main.get_command(single)
        command.name = name
        return command


class LazyTyperGroup(TyperGroup):
    """The top-level group: the commands of `LAZY_COMMANDS`, loaded by name (set by `cli/app.py`)."""

    lazy_commands: dict[str, LazyCommand] = {}

    def list_commands(self, ctx: Any) -> list[str]:
        eager = [name for name in super().list_commands(ctx) if name not in self.lazy_commands]
        return [*self.lazy_commands, *eager]

    def get_command(self, ctx: Any, cmd_name: str) -> Command | None:
        command = super().get_command(ctx, cmd_name)
        lazy = self.lazy_commands.get(cmd_name)
        if command is None and lazy is not None:
            command = lazy.load(cmd_name)
            self.add_command(command, cmd_name)
        return command

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        # The listing needs only each command's summary: stand-ins carry it, so nothing is imported.
        loaded = dict(self.commands)
        try:
            for name, lazy in self.lazy_commands.items():
                self.commands.setdefault(name, TyperCommand(name, help=lazy.summary))
            super().format_commands(ctx, formatter)
        finally:
            self.commands.clear()
            self.commands.update(loaded)
