"""What every command group shares: the application, its consoles, how a rejected input and an
interruption are reported, and the formatting of figures and tables.

Only light modules are imported here (typer, rich, the standard library): a command imports
the simulator, pandas or matplotlib when it runs, so ``wificc --help`` and ``wificc cc list``
start quickly.
"""

from __future__ import annotations

import csv
import os
import shlex
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from wificc.result import Result

# Exit code of a rejected scenario, option or file (as for a command-line usage error).
EXIT_USER_ERROR = 2
# Exit code of a command interrupted by Ctrl-C (128 + SIGINT, as a shell reports it).
EXIT_INTERRUPTED = 130
# Name of the bottleneck queue of the wired path (crates/wificc-core/src/scenario.rs).
BOTTLENECK_QUEUE = "bottleneck"

app = typer.Typer(
    help="wificc: TCP congestion control over Wi-Fi, simulated.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

out_console = Console(highlight=False, markup=False)
err_console = Console(stderr=True, highlight=False, markup=False)


def one_line(error: BaseException) -> str:
    """An error's message as one line (a multi-line one, the TOML parser's, joined with "; ")."""
    return "; ".join(line.strip() for line in str(error).splitlines() if line.strip())


@contextmanager
def user_errors() -> Iterator[None]:
    """Report a rejected input (ValueError, OSError) as one line and exit with code 2."""
    try:
        yield
    except (ValueError, OSError) as e:
        typer.echo(f"error: {one_line(e)}", err=True)
        raise typer.Exit(EXIT_USER_ERROR) from None


def resume_command() -> str:
    """The command line this process was started with, quoted for a shell: running it again
    resumes what it stored."""
    return shlex.join(["wificc", *sys.argv[1:]])


def interrupted(kept: str, again: str = "resume with") -> typer.Exit:
    """Report a Ctrl-C: what was kept and the command that resumes (``again``: how the command
    is introduced); the exit to raise (130)."""
    typer.echo(f"\ninterrupted: {kept}", err=True)
    typer.echo(f"{again}: {resume_command()}", err=True)
    return typer.Exit(EXIT_INTERRUPTED)


def mbit(bps: float | None) -> str:
    return "-" if bps is None else f"{bps / 1e6:.2f}"


def ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def num(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def table(title: str, columns: list[str], rows: list[list[str]], numbers: bool = True) -> Table:
    """A table whose first column names the row; the others are right-aligned ``numbers``."""
    shown = Table(title=title, title_justify="left")
    for i, column in enumerate(columns):
        shown.add_column(column, justify="right" if numbers and i > 0 else "left")
    for row in rows:
        shown.add_row(*row)
    return shown


def summary_tables(result: Result) -> list[Table]:
    """Per flow goodput, retransmissions and RTOs; per ping p50/p90; per queue drops, sojourn;
    per Wi-Fi node A-MPDU sizes, airtime, collisions and retries."""
    raw = result.raw
    tables = [
        table(
            "Flows",
            ["flow", "cc", "goodput Mbit/s", "retrans", "RTOs"],
            [
                [f["name"], f["cc"], mbit(f["goodput_bps"]), str(f["retrans"]), str(f["rto_count"])]
                for f in raw["flows"]
            ],
        ),
        table(
            "Pings",
            ["ping", "p50 ms", "p90 ms"],
            [[p["name"], ms(p["rtt_p50_ms"]), ms(p["rtt_p90_ms"])] for p in raw["pings"]],
        ),
        table(
            "Queues",
            ["queue", "drops", "p95 sojourn ms", "utilisation"],
            [[q["name"], str(q["dropped"]), ms(q["sojourn_p95_ms"]), percent(q["utilization"])] for q in raw["queues"]],
        ),
    ]
    if raw.get("wifi"):
        tables.append(
            table(
                "Wi-Fi nodes",
                ["node", "A-MPDU mean", "A-MPDU p50", "airtime", "collisions", "MPDU retries"],
                [
                    [
                        w["name"],
                        num(w["ampdu_mean"]),
                        num(w["ampdu_p50"]),
                        percent(w["airtime"]),
                        str(w["collisions"]),
                        str(w["mpdu_retries"]),
                    ]
                    for w in raw["wifi"]
                ],
            )
        )
    return tables


def run_report(test: str | None, result: Result, out: Path | None) -> dict[str, Any]:
    """The ``--json`` object of a run: parameters, summaries, and where it was written."""
    raw = result.raw
    return {
        "test": test,
        "parameters": result.parameters,
        "summary": raw["summary"],
        "flows": raw["flows"],
        "pings": raw["pings"],
        "queues": raw["queues"],
        "wifi": raw.get("wifi", []),
        "profile": raw.get("profile"),
        "out": None if out is None else str(out),
    }


def scenario_of(test: str | None, scenario_file: Path | None, options: dict[str, Any]) -> Any:
    """The scenario a run command runs: TEST with options over the file (or the defaults), or
    the file as written."""
    from wificc import scenarios

    if test is not None:
        base = scenarios.load(scenario_file) if scenario_file is not None else None
        return scenarios.build(test, base=base, **options)
    if scenario_file is None:
        raise ValueError(f"TEST: give a test ({', '.join(scenarios.TESTS)}) or --scenario FILE")
    if options:
        key = next(iter(options))
        flag = "cc-param" if key == "cc_params" else key.replace("_", "-")
        raise ValueError(f"--{flag}: needs a TEST; a scenario file without a test runs as written")
    return scenario_file


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write rows (the union of their keys as columns) to ``path`` atomically."""
    from wificc.result import staging_path

    columns = list(dict.fromkeys(key for row in rows for key in row))
    staging = staging_path(path)
    try:
        with open(staging, "x", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=columns)
            writer.writeheader()
            writer.writerows(rows)
        os.replace(staging, path)
    except BaseException:
        staging.unlink(missing_ok=True)
        raise
