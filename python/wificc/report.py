"""A self-contained HTML report (``report.html``) of a run, a sweep, or a set of experiments.

An *experiment* is a run directory (written by ``wificc run --out`` or
:meth:`wificc.Result.save`) or a sweep directory (``runs.parquet`` and ``runs/<id>/``). The
report of a directory that is neither has one section per experiment among its
subdirectories, in name order (the layout ``wificc reproduce`` writes).

Each section holds:

* the experiment's figures (:func:`wificc.figures.plot_run` / :func:`~wificc.figures.plot_sweep`),
  drawn into a temporary directory and embedded as base64 PNG ``data:`` URIs, so the file
  needs nothing beside it;
* its summary tables: for a run, the run summary and the flows, pings and queues tables; for a
  sweep, per setting the number of runs and the 10th/50th/90th percentiles of goodput, ping and
  Jain's index, then one row per run;
* the parameters of every run: all of a run's scenario fields (as
  :func:`wificc.result.flatten` names them); for a sweep, the fields every run shares once, then
  per run the fields that differ.

The same directory gives the same bytes: nothing in the report depends on the clock.
"""

from __future__ import annotations

import base64
import html
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from wificc import figures
from wificc.result import flatten, load, write_file

REPORT_FILE = "report.html"
# Written by `wificc reproduce` into its results directory: the study, testbed and kernel.
STUDY_FILE = "study.json"
BITS_PER_MBIT = 1e6
# Numbers at least this large are printed whole with thousands separators, smaller ones with
# SIGNIFICANT_DIGITS significant digits.
LARGE_NUMBER = 1e5
SIGNIFICANT_DIGITS = 4
STYLE = """
body { font-family: sans-serif; margin: 2em; color: #222; max-width: 80em; }
h1 { font-size: 1.6em; } h2 { font-size: 1.3em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; }
th { background: #f0f0f0; } td:first-child, th:first-child { text-align: left; }
.scroll { overflow-x: auto; }
figure { margin: 1em 0; } figure img { max-width: 100%; height: auto; }
figcaption { font-size: 0.9em; color: #555; }
nav li { margin: 0.2em 0; }
"""


def _format(value: Any) -> str:
    """A table cell: whole large numbers, a few significant digits for small ones, '-' for none."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "-"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if abs(value) >= LARGE_NUMBER:
        return f"{value:,.0f}"
    return f"{value:.{SIGNIFICANT_DIGITS}g}" if isinstance(value, float) else str(value)


def table_html(frame: pd.DataFrame) -> str:
    """``frame`` as an escaped HTML table (no index), cells formatted by :func:`_format`."""
    cells = frame.astype(object).map(_format) if not frame.empty else frame
    return '<div class="scroll">' + cells.to_html(index=False, escape=True, border=0) + "</div>"


def _parameters(record: dict[str, Any]) -> pd.DataFrame:
    return pd.DataFrame({"parameter": list(record), "value": [_format(v) for v in record.values()]})


def figures_html(drawn: list[figures.Drawn]) -> str:
    """Each figure's PNG embedded as a data URI, with its caption."""
    parts = []
    for caption, paths in drawn:
        png = next(p for p in paths if p.suffix == ".png")
        data = base64.b64encode(png.read_bytes()).decode("ascii")
        text = html.escape(caption)
        image = f'<img src="data:image/png;base64,{data}" alt="{text}">'
        parts.append(f"<figure>{image}<figcaption>{text}</figcaption></figure>")
    return "\n".join(parts)


def run_section(directory: Path, scratch: Path) -> str:
    """Figures, summary tables and parameters of one run directory."""
    run = load(directory)
    summary = {**run.summary, "total_goodput_mbps": run.summary["total_goodput_bps"] / BITS_PER_MBIT}
    parts = [
        figures_html(figures.plot_run(run, scratch)),
        "<h3>Run summary</h3>",
        table_html(_parameters(summary).rename(columns={"parameter": "quantity"})),
    ]
    for title, frame in (("Flows", run.flows), ("Pings", run.pings), ("Queues", run.queues)):
        if not frame.empty:
            parts += [f"<h3>{title}</h3>", table_html(frame)]
    parts += ["<h3>Parameters</h3>", table_html(_parameters(flatten(run.scenario)))]
    return "\n".join(parts)


def settings_summary(table: pd.DataFrame, settings: list[str]) -> pd.DataFrame:
    """Per setting: runs, and the 10/50/90th percentiles of goodput (Mbit/s), ping, Jain."""
    frame = table.copy()
    if "total_goodput_bps" in frame.columns:
        frame["goodput_mbps"] = frame["total_goodput_bps"] / BITS_PER_MBIT
    values = {c: c for c in ("goodput_mbps", "ping_p50_ms", "jain") if c in frame.columns and frame[c].notna().any()}
    return figures.percentile_table(frame, settings, values)


def sweep_section(directory: Path, scratch: Path) -> str:
    """Figures, per-setting and per-run tables, and the parameters of every run of a sweep."""
    sweep = figures.load_sweep(directory)
    table, settings = sweep.table, sweep.settings
    id_column = figures.run_id_column(table)
    metrics = [c for c in ("total_goodput_bps", "ping_p50_ms", "ping_p90_ms", "jain", "retrans") if c not in settings]
    per_run = table[[id_column, *(c for c in settings if c != id_column), *metrics]]
    scenarios = [flatten(run.scenario) for run in sweep.runs]
    keys = list(dict.fromkeys(k for s in scenarios for k in s))
    first = scenarios[0]
    shared = {k: first.get(k) for k in keys if all(s.get(k) == first.get(k) for s in scenarios)}
    varying = [k for k in keys if k not in shared]
    parameters = pd.DataFrame(
        [
            {id_column: run.directory.name} | {k: s.get(k) for k in varying}
            for run, s in zip(sweep.runs, scenarios, strict=True)
        ]
    )
    return "\n".join(
        [
            figures_html(figures.plot_sweep(sweep, scratch)),
            f"<h3>Per setting ({len(table)} runs)</h3>",
            table_html(settings_summary(table, settings)),
            "<h3>Runs</h3>",
            table_html(per_run),
            "<h3>Parameters shared by every run</h3>",
            table_html(_parameters(shared)),
            "<h3>Parameters that differ between runs</h3>",
            table_html(parameters),
        ]
    )


def render(directory: str | os.PathLike[str]) -> str:
    """The report of ``directory`` as HTML text."""
    path = Path(directory)
    found = figures.experiments(path)
    sections = []
    with tempfile.TemporaryDirectory(prefix="wificc-report-") as tmp:
        for i, (name, experiment) in enumerate(found):
            scratch = Path(tmp) / str(i)
            kind = figures.kind_of(experiment)
            body = sweep_section(experiment, scratch) if kind == "sweep" else run_section(experiment, scratch)
            sections.append(f'<section id="e{i}"><h2>{html.escape(name)} ({kind})</h2>\n{body}\n</section>')
    title = html.escape(f"wificc report: {path.resolve().name}")
    about = ""
    study_file = path / STUDY_FILE
    if study_file.is_file():
        # A reproduction: what was reproduced, on which testbed and kernel profile.
        study = json.loads(study_file.read_text())
        about = (
            f"<p><b>{html.escape(study['title'])}</b></p>\n"
            f"<p>Testbed: {html.escape(study['testbed'])}. Kernel profile: {html.escape(study['kernel'])}.</p>\n"
        )
    nav = "".join(f'<li><a href="#e{i}">{html.escape(name)}</a></li>' for i, (name, _) in enumerate(found))
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{STYLE}</style></head>\n<body>\n<h1>{title}</h1>\n{about}"
        f"<nav><ul>{nav}</ul></nav>\n" + "\n".join(sections) + "\n</body></html>\n"
    )


def write(directory: str | os.PathLike[str], out: str | os.PathLike[str] | None = None) -> Path:
    """Write the report of ``directory`` to ``out`` (default DIR/report.html) atomically."""
    target = Path(directory) / REPORT_FILE if out is None else Path(out)
    return write_file(target, render(directory).encode("utf-8"))
