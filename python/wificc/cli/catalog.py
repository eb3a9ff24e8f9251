"""``wificc cc list|show``, ``tests``, ``schema`` and ``reference``: what the simulator offers,
described from the code (the congestion controls' parameters with their meaning, unit and
kernel name; the test catalog; the scenario schema; the generated reference pages)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Annotated, Any

import typer

from wificc.cli.common import app, out_console, table, user_errors

# Width of `cc show`'s wrapped parameter meanings (a terminal's).
SHOW_WIDTH = 100

cc_app = typer.Typer(help="The congestion controls and their parameters.", no_args_is_help=True)
app.add_typer(cc_app, name="cc")


def _registry() -> dict[str, dict[str, Any]]:
    from wificc import api

    return {entry["name"]: entry for entry in api.cc_list()}


@cc_app.command("list")
def cc_list() -> None:
    """List the congestion controls."""
    rows = [[e["name"], e["summary"]] for e in _registry().values()]
    out_console.print(table("Congestion controls", ["name", "summary"], rows, numbers=False))


@cc_app.command("show")
def cc_show(name: Annotated[str, typer.Argument(help="Congestion control, e.g. cubic.")]) -> None:
    """Show a congestion control: summary, source, parameters with their defaults."""
    from wificc import reference

    registry = _registry()
    with user_errors():
        if name not in registry:
            raise ValueError(f"cc: unknown congestion control {name!r}; expected one of {', '.join(registry)}")
    entry = registry[name]
    typer.echo(f"{entry['name']}: {entry['summary']}")
    typer.echo(f"source: {entry['source']}")
    params = reference.cc_parameters(entry)
    if not params:
        typer.echo("no parameters")
        return
    typer.echo("parameters (--cc-param KEY=VALUE), each with its default, unit and kernel name:")
    for p in params:
        about = ", ".join(x for x in (p["unit"], f"kernel {p['kernel']}" if p["kernel"] else "") if x)
        typer.echo(f"  {p['parameter']} = {p['default']}" + (f"  ({about})" if about else ""))
        typer.echo(textwrap.fill(p["meaning"], width=SHOW_WIDTH, initial_indent=" " * 6, subsequent_indent=" " * 6))


@app.command("schema")
def schema_command(
    markdown: Annotated[
        bool, typer.Option("--markdown/--json", help="The reference page (docs/scenario.md) or the JSON Schema.")
    ] = False,
) -> None:
    """Print the scenario schema: every field with its type, unit, default and range."""
    from wificc import reference

    if markdown:
        typer.echo(reference.scenario_markdown(), nl=False)
    else:
        print(json.dumps(reference.scenario_schema(), indent=2))


@app.command("reference")
def reference_command(
    out: Annotated[Path, typer.Option(help="Directory of the pages.")] = Path("docs"),
) -> None:
    """Write the reference pages generated from the code: scenario.md, results.md, catalog.md, sweep.md."""
    from wificc import reference

    with user_errors():
        written = reference.write(out)
    for path in written:
        typer.echo(f"wrote {path}")


@app.command("tests")
def tests_command(
    name: Annotated[str | None, typer.Argument(help="Test to describe in full.")] = None,
) -> None:
    """List the test catalog, or describe one test: flows, series, pings, path and options."""
    from wificc import scenarios

    with user_errors():
        text = scenarios.describe(name) if name is not None else None
    if text is not None:
        typer.echo(text)
        return
    rows = [[test, description] for test, description in scenarios.catalog()]
    out_console.print(table("Tests", ["test", "description"], rows, numbers=False))
