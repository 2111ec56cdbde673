"""A shell tool starts at once: `--version` and `--help` import no command, a command imports only its own
modules, and the top-level help's summaries are each command's own (issue 18, item 8; the times are
`bench/cli_startup.py`'s)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer

from kafkaops.cli.app import app
from kafkaops.cli.lazy_group import LazyTyperGroup

HEAVY = ("kazoo", "rich", "yaml", "pyspark", "kafkaops.admin", "kafkaops.cluster.zk", "kafkaops.cluster.protocol")


def modules_after(*argv: str) -> set[str]:
    """The modules a `kafkaops` process has imported once `argv` ran (its exit caught)."""
    script = (
        "import sys\n"
        f"sys.argv = ['kafkaops', *{list(argv)!r}]\n"
        "from kafkaops.cli.launcher import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('\\n'.join(sys.modules), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True, timeout=120)
    return set(done.stderr.split())


@pytest.mark.parametrize("argv", [("--version",), ("--help",), ()])
def test_version_and_help_import_no_command(argv: tuple[str, ...]) -> None:
    loaded = modules_after(*argv)
    assert not {m for m in loaded if m.startswith(HEAVY) or m.startswith("kafkaops.cli.") and m.count(".") == 2} - {
        "kafkaops.cli.app",
        "kafkaops.cli.launcher",
        "kafkaops.cli.lazy_group",
    }


def test_version_answers_before_typer_is_imported() -> None:
    assert not {m for m in modules_after("--version") if m.split(".")[0] in ("typer", "click")}


def test_a_command_imports_its_own_modules_only() -> None:
    loaded = modules_after("topics", "--help")
    assert "kafkaops.cli.topics" in loaded
    assert (
        not {"kafkaops.cli.reassign_partitions", "kafkaops.admin.planner", "kafkaops.cli.state_change_log_merger"}
        & loaded
    )


def test_each_summary_is_the_first_paragraph_of_its_commands_help() -> None:
    group = typer.main.get_command(app)
    assert isinstance(group, LazyTyperGroup)
    context = typer.Context(group)
    for name, lazy in LazyTyperGroup.lazy_commands.items():
        command = group.get_command(context, name)
        assert command is not None and command.name == name
        assert (command.help or "").split("\n\n")[0] == lazy.summary, name


def test_help_lists_every_command_once_in_table_order() -> None:
    listed = typer.main.get_command(app).list_commands(typer.Context(typer.main.get_command(app)))
    assert listed == list(LazyTyperGroup.lazy_commands)
