import typer

app = typer.Typer(help="Run a local cluster.", no_args_is_help=True)


@app.command("status")
def status() -> None:
    """(being written)"""
