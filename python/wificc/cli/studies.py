"""``wificc sweep``, ``reproduce``, ``plot``, ``report`` and ``flent``: many runs, stored, and
what is drawn and exported from them.

A sweep or a reproduction shows one bar on stderr: "experiment k/n", runs done of the total and
an ETA (:class:`wificc.progress.SweepBar`). Ctrl-C stops it within about a second: the runs
stored so far stay (each is complete and checksummed), the message says how many and prints the
command that resumes, and the exit code is 130.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from wificc.cli.common import app, interrupted, user_errors

# What the help texts name without importing the modules (pandas, matplotlib): wificc.reproduce's
# STUDIES, wificc.flent's TESTS and SUFFIX, wificc.report's REPORT_FILE (a test checks them).
STUDIES = ("bbrp", "bbrn", "wifi6", "apg", "pg")
FLENT_TESTS = ("tcp_upload", "tcp_download", "tcp_bidirectional", "tcp_nup", "tcp_ndown", "rrul", "rrul_be")
FLENT_SUFFIX = ".flent.gz"
REPORT_FILE = "report.html"


def _stored(directories: list[Path]) -> int:
    from wificc import storage

    return sum(len(storage.finished_ids(d)) for d in directories)


@app.command("sweep")
def sweep_command(
    grid: Annotated[Path, typer.Argument(help="Grid file (TOML or JSON).", show_default=False)],
    out: Annotated[Path | None, typer.Option(help="Results directory (default results/<grid file name>).")] = None,
    workers: Annotated[int | None, typer.Option(help="Local worker processes (default: CPU count).")] = None,
    scheduler: Annotated[
        str | None,
        typer.Option(help="Dask scheduler address (e.g. tcp://host:8786) instead of local workers."),
    ] = None,
    repetitions: Annotated[
        int | None, typer.Option(help="Runs of every grid point (overrides the grid's 'repetitions').")
    ] = None,
    flent_files: Annotated[
        bool | None,
        typer.Option("--flent/--no-flent", help="Write each run's .flent.gz (default: the grid's 'flent')."),
    ] = None,
    memory_limit: Annotated[
        str | None,
        typer.Option(help="Refuse runs estimated to need more memory (e.g. 4000mb; default half the RAM)."),
    ] = None,
) -> None:
    """Run a parameter sweep from a TOML grid; a re-run skips finished runs."""
    from wificc import memory, storage
    from wificc.sweep import SweepError, sweep

    target = out if out is not None else Path("results") / grid.stem
    with user_errors():
        if memory_limit is not None:
            # Read by every local worker (forked from here) before each run.
            os.environ[memory.ENV_LIMIT] = str(memory.limit(memory_limit))
        try:
            table = sweep(
                grid, target, workers=workers, scheduler=scheduler, repetitions=repetitions, flent_files=flent_files
            )
        except SweepError as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            raise interrupted(f"{_stored([target])} runs are stored in {storage.runs_dir(target)}/") from None
    typer.echo(f"{len(table)} runs in {target / storage.RUNS_TABLE} (per-run tables in {target / storage.RUNS_DIR}/)")


@app.command("reproduce")
def reproduce_cmd(
    name: Annotated[str, typer.Argument(help=f"The study: {', '.join(STUDIES)}.", show_default=False)],
    quick: Annotated[bool, typer.Option(help="Fewer repetitions, shorter runs, a subset of each grid (CI).")] = False,
    out: Annotated[Path | None, typer.Option(help="Results directory (default results/<NAME>[-quick]).")] = None,
    workers: Annotated[int | None, typer.Option(help="Local worker processes (default: CPU count).")] = None,
    repetitions: Annotated[
        int | None, typer.Option(help="Runs of every grid point (default 10; 2 with --quick).")
    ] = None,
    traces: Annotated[
        Path | None,
        typer.Option(
            help="Directory of the LTE traces (default $WIFICC_TRACES, then traces/ in the user data "
            "directory, ~/.local/share/wificc/traces)."
        ),
    ] = None,
    flent_files: Annotated[bool, typer.Option("--flent", help="Write each run's .flent.gz beside its tables.")] = False,
    experiment: Annotated[
        list[str] | None,
        typer.Option("--experiment", "-e", help="Run only this experiment of the study (repeatable)."),
    ] = None,
    kernel: Annotated[
        str | None,
        typer.Option(help="Kernel profile of every run (default: the study's testbed kernel)."),
    ] = None,
    compare_only: Annotated[
        bool,
        typer.Option(
            "--compare-only",
            help="Run nothing: rebuild comparison.md/.csv (wificc beside the paper) from the sweeps in --out.",
        ),
    ] = False,
) -> None:
    """Reproduce a published study: its sweeps, figures, report.html, headline table and the
    side-by-side comparison with the paper's figures."""
    from wificc import papers
    from wificc.reproduce import HEADLINE_MD, format_headline, reproduce, study, write_comparison
    from wificc.sweep import SweepError

    target = out if out is not None else Path("results") / (f"{name}-quick" if quick else name)
    if compare_only:
        with user_errors():
            study(name)
            frame = write_comparison(name, target)
        counts = frame["agrees"].value_counts()
        typer.echo(
            f"{len(frame)} lines ({counts.get('yes', 0)} agree, {counts.get('no', 0)} disagree), "
            f"{target / papers.COMPARISON_MD} and {target / papers.COMPARISON_CSV}"
        )
        return
    with user_errors():
        try:
            done = reproduce(
                name,
                target,
                quick=quick,
                workers=workers,
                repetitions=repetitions,
                traces=traces,
                flent_files=flent_files,
                experiments=experiment,
                kernel=kernel,
            )
        except SweepError as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            sweeps = sorted(p for p in target.iterdir() if p.is_dir()) if target.is_dir() else []
            raise interrupted(f"{_stored(sweeps)} runs are stored in {target}/<experiment>/runs/") from None
    spec = study(name)
    typer.echo(f"{spec.title}\ntestbed: {spec.described()} (kernel profile {kernel or spec.kernel})\n")
    typer.echo(format_headline(done.headline))
    for experiment_name, frame in done.anova.items():
        typer.echo(f"\nANOVA across congestion controls, {experiment_name} ({target / experiment_name / 'anova.csv'}):")
        typer.echo(frame.to_string(index=False))
    for note in done.skipped:
        typer.echo(f"skipped: {note}")
    typer.echo(
        f"\nsweeps in {target}/<experiment>/, figures in {target / 'figures'}/, report {done.report}, "
        f"headline table {target / HEADLINE_MD}, beside the paper {target / papers.COMPARISON_MD}"
    )
    typer.echo(f"took {done.wall_s:.0f} s")


@app.command("plot")
def plot_cmd(
    directory: Annotated[
        Path, typer.Argument(help="A run directory (wificc run --out), a sweep, or a directory of them.")
    ],
    out: Annotated[Path | None, typer.Option(help="Directory of the figures; default DIR/figures.")] = None,
) -> None:
    """Draw the figures of a run or a sweep (PNG and SVG)."""
    from wificc import figures

    with user_errors():
        drawn = figures.plot(directory, out)
    for caption, paths in drawn:
        typer.echo(f"{caption}: {', '.join(str(p) for p in paths)}")


@app.command("report")
def report_cmd(
    directory: Annotated[Path, typer.Argument(help="A run, a sweep, or a directory of them.")],
    out: Annotated[Path | None, typer.Option(help=f"File to write; default DIR/{REPORT_FILE}.")] = None,
) -> None:
    """Write a self-contained HTML report: figures, tables, the parameters of every run."""
    from wificc import report

    with user_errors():
        path = report.write(directory, out)
    typer.echo(f"wrote {path}")


@app.command("flent")
def flent_cmd(
    run_dir: Annotated[Path, typer.Argument(help="A run directory (wificc run --out DIR), or a sweep's.")],
    out: Annotated[
        Path | None, typer.Option(help=f"File to write (one run); default RUN_DIR/<test>{FLENT_SUFFIX}.")
    ] = None,
    test: Annotated[
        str | None, typer.Option(help=f"Flent test: {', '.join(FLENT_TESTS)}; default from the flows.")
    ] = None,
    title: Annotated[str | None, typer.Option(help="Flent TITLE; default: cc, path and stack settings.")] = None,
) -> None:
    """Export runs as Flent data files: plot them with flent -i FILE -p totals -o plot.png."""
    from wificc import flent
    from wificc.result import as_run

    with user_errors():
        runs = flent.run_directories(run_dir)
        if out is not None and len(runs) != 1:
            raise ValueError(f"--out: {run_dir} holds {len(runs)} runs; --out names the file of one run")
        written = []
        for directory in runs:
            run = as_run(directory)
            name = flent.flent_test(run, test)
            target = out or directory / f"{name}{flent.SUFFIX}"
            written.append((flent.export(run, target, test=name, title=title), name))
    for path, name in written:
        typer.echo(f"wrote {path} (Flent test {name}): flent -i {path} -p totals -o {name}.png")
