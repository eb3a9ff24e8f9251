"""A self-contained HTML report (``report.html``) of a run, a sweep, or a set of experiments.

An *experiment* is a run directory (written by ``wificc run --out`` or
:meth:`wificc.Result.save`) or a sweep directory (``runs.parquet`` and ``runs/<id>/``). The
report of a directory that is neither has one section per experiment among its
subdirectories, in name order (the layout ``wificc reproduce`` writes).

The report opens with what was run (the study, the grid or the run; the testbed as the
scenarios set it: path, chipset, driver, kernel profile; for a reproduction the study's testbed
from ``study.json``), the wificc version and the simulator model fingerprint of the results
(``summary.model``) against this build's, when the results were written and the report
rendered, the machine, and the wall time. A reproduction's ``headline.md`` and
``comparison.md`` follow as tables. Each experiment's section then holds:

* what it varies and how often, and the testbed its scenarios set;
* for a sweep, the headline table per setting in Mbit/s and ms: runs, median, 10th and 90th
  percentiles and the mean with its 95% Student-t confidence interval
  (:func:`wificc.stats.mean_ci`) of goodput and ping (and Jain's index with several flows),
  and, with several congestion controls, their one-way ANOVA per setting of the other
  parameters (:func:`wificc.stats.anova`);
* its figures (:func:`wificc.figures.plot_run` / :func:`~wificc.figures.plot_sweep`), drawn into
  a temporary directory and embedded as base64 PNG ``data:`` URIs (the file needs nothing
  beside it), each with a caption saying what is plotted, in which units, over how many
  repetitions, and which part of the run (Flent's loaded window);
* the runs, and the parameters of every run (shared ones once, then those that differ), in
  human units (durations as "20 s", rates as "100 Mbit/s").

Apart from the line that says when and where the report was rendered (``now`` and
``machine`` of :func:`render` pin it), the same directory gives the same bytes.
"""

from __future__ import annotations

import base64
import html
import json
import os
import platform
import re
import tempfile
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

from wificc import _core, figures, reference, stats
from wificc.flent import load_window
from wificc.result import SavedRun, flatten, load, write_file

REPORT_FILE = "report.html"
# Written by `wificc reproduce` into its results directory: the study, testbed and kernel.
STUDY_FILE = "study.json"
# The tables a reproduction writes beside its sweeps (wificc.reproduce, wificc.papers).
STUDY_TABLES = (("Headline", "headline.md"), ("Beside the paper", "comparison.md"))
BITS_PER_MBIT = 1e6
# Numbers at least this large are printed whole with thousands separators, smaller ones with
# SIGNIFICANT_DIGITS significant digits.
LARGE_NUMBER = 1e5
SIGNIFICANT_DIGITS = 4
# The confidence of the headline table's interval of the mean.
CONFIDENCE = 0.95
# Scenario fields that describe the testbed, by their flattened names, with their label.
TESTBED_FIELDS = (
    ("path.kind", "path"),
    ("path.radio.chipset", "chipset"),
    ("path.radio.driver.kind", "driver"),
    ("path.radio.driver", "driver"),
    ("stack.kernel", "kernel profile"),
    ("path.rate", "rate"),
    ("path.backhaul", "backhaul"),
    ("path.rtt", "RTT"),
    ("path.buffer", "buffer"),
    ("path.qdisc.kind", "qdisc"),
)
# What each figure shows, by the stem of its file (before any "-<panel>"); {runs}, {window}
# and {step} are filled in per experiment.
CAPTIONS = {
    "goodput_ping": "Total goodput of each run (Mbit/s, summed over its flows' measurement windows) against "
    "its median ICMP ping RTT under load (ms): per setting the median over {runs} (marker), whiskers the "
    "10th and 90th percentiles.",
    "ping_cdf": "The empirical CDF of the ICMP ping RTTs (ms) of the probes sent while the flows run ({window}, "
    "Flent's loaded-window cut), pooled over the setting's {runs}.",
    "goodput_time": "Total goodput (Mbit/s) over each {step} step: the median over the setting's {runs} "
    "(line) and the band from the 10th to the 90th percentile; dashed: the loaded window ({window}). "
    "Samples after a flow's stop are left out.",
    "ping_time": "ICMP ping RTT (ms) per {step} step (each run's median of the probes sent in the step): the "
    "median over the setting's {runs} (line) and the band from the 10th to the 90th percentile; dashed: "
    "the loaded window ({window}).",
    "fairness": "Per setting, the index of the flows' goodputs: the median over {runs} (bar), whiskers the "
    "10th and 90th percentiles.",
    "rrul": "Per setting: upload and download goodput (Mbit/s, each the sum of that direction's flows; "
    "left axis) and median ping RTT under load (ms; right axis): the median over {runs}, whiskers the 10th "
    "and 90th percentiles.",
    "bottleneck_curve": "Goodput (Mbit/s) and median ping RTT under load (ms) against the static TSQ limit k "
    "(packets): the median over {runs}, whiskers the 10th and 90th percentiles, over the analytic hybrid "
    "model's BW(k) and RTT(k) (grey).",
    "ampdu_tsq": "MPDUs per A-MPDU of the sending Wi-Fi node per TSQ setting: the mean over {runs} of each "
    "run's mean (bar), whiskers the means of the runs' 10th and 90th percentiles.",
    "series": "One run: pacing rate, the congestion control's bandwidth model (BBR family) and latest "
    "delivery-rate sample (Mbit/s), and cwnd (packets), every {step} while each flow is open (the sample "
    "the simulator takes after a flow's stop is left out).",
}
STYLE = """
body { font-family: sans-serif; margin: 2em; color: #222; max-width: 80em; }
h1 { font-size: 1.6em; } h2 { font-size: 1.3em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05em; } h4 { font-size: 1em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; }
th { background: #f0f0f0; } td:first-child, th:first-child { text-align: left; }
table.about td, table.text td, table.text th { text-align: left; }
table.about th { text-align: left; vertical-align: top; }
.scroll { overflow-x: auto; }
figure { margin: 1.5em 0; } figure img { max-width: 100%; height: auto; }
figcaption { font-size: 0.9em; color: #444; max-width: 60em; }
nav li { margin: 0.2em 0; }
"""


def _format(value: Any) -> str:
    """A table cell: whole large numbers, a few significant digits for small ones, '-' for none,
    scenario quantities in human units (:func:`wificc.figures.human_value`)."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "-"
    if isinstance(value, str):
        return figures.human_value(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if abs(value) >= LARGE_NUMBER:
        return f"{value:,.0f}"
    return f"{value:.{SIGNIFICANT_DIGITS}g}" if isinstance(value, float) else str(value)


def table_html(frame: pd.DataFrame) -> str:
    """``frame`` as an escaped HTML table (no index), cells formatted by :func:`_format`."""
    cells = frame.astype(object).map(_format) if not frame.empty else frame
    return '<div class="scroll">' + cells.to_html(index=False, escape=True, border=0) + "</div>"


def in_units(frame: pd.DataFrame) -> pd.DataFrame:
    """A results table with its unit in each column's name: ``*_bps`` in Mbit/s
    (``goodput (Mbit/s)``), ``*_ms``, ``*_s`` and ``*_bytes`` named with their unit."""
    columns = {}
    for column in frame.columns:
        name = str(column)
        values = frame[column]
        for suffix, unit, scale in (("_bps", "Mbit/s", BITS_PER_MBIT), ("_ms", "ms", 1), ("_s", "s", 1)):
            if name.endswith(suffix) and pd.api.types.is_numeric_dtype(values):
                name, values = f"{name.removesuffix(suffix)} ({unit})", values / scale
                break
        else:
            if name.endswith("_bytes"):
                name = f"{name.removesuffix('_bytes')} (bytes)"
        columns[name] = values
    return pd.DataFrame(columns, index=frame.index)


def _parameters(record: dict[str, Any]) -> pd.DataFrame:
    return pd.DataFrame({"parameter": list(record), "value": [_format(v) for v in record.values()]})


def _plural(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _window_text(run: SavedRun) -> str:
    lo, hi = load_window(run)
    return f"from {figures.seconds_text(lo)} to {figures.seconds_text(hi)}"


def _step_text(run: SavedRun) -> str:
    return figures.human_value(run.scenario["step"])


def caption_of(caption: str, paths: list[Path], runs: str, run: SavedRun) -> str:
    """A figure's caption: its title, then what :data:`CAPTIONS` says its file shows."""
    stem = paths[0].stem.split("-")[0]
    about = CAPTIONS.get(stem)
    if about is None:
        return caption
    return f"{caption}. " + about.format(runs=runs, window=_window_text(run), step=_step_text(run))


def figures_html(drawn: list[figures.Drawn], runs: str, run: SavedRun) -> str:
    """Each figure's PNG embedded as a data URI, with its caption (:func:`caption_of`)."""
    parts = []
    for caption, paths in drawn:
        png = next(p for p in paths if p.suffix == ".png")
        data = base64.b64encode(png.read_bytes()).decode("ascii")
        text = html.escape(caption_of(caption, paths, runs, run))
        image = f'<img src="data:image/png;base64,{data}" alt="{html.escape(caption)}">'
        parts.append(f"<figure>{image}<figcaption>{text}</figcaption></figure>")
    return "\n".join(parts)


def testbed(runs: list[SavedRun]) -> str:
    """The testbed the runs' scenarios set (:data:`TESTBED_FIELDS`), in human units, with the
    kernel profile they ran (``summary.kernel``) and, where the scenario leaves the Wi-Fi driver
    to the chipset, the chipset preset's driver (:func:`wificc.reference.catalogs`); a field
    that differs between runs lists its values."""
    drivers = {c["name"]: c["driver"] for c in reference.catalogs()["chipsets"]}
    flat = []
    for run in runs:
        fields = flatten(run.scenario)
        chipset = fields.get("path.radio.chipset")
        if isinstance(chipset, str) and fields.get("path.radio.driver.kind", fields.get("path.radio.driver")) is None:
            fields["path.radio.driver"] = f"{drivers.get(chipset, '-')} (the chipset's)"
        fields["stack.kernel"] = run.summary.get("kernel")
        flat.append(fields)
    parts = []
    labels_done = set()
    for key, label in TESTBED_FIELDS:
        present = [v for f in flat if (v := f.get(key)) is not None and not isinstance(v, dict)]
        if not present or label in labels_done:
            continue
        labels_done.add(label)
        distinct = list(dict.fromkeys(figures.human_value(v) for v in present))
        parts.append(f"{label} {' | '.join(distinct)}")
    return ", ".join(parts)


def run_section(directory: Path, scratch: Path) -> str:
    """What the run is, its figures, summary tables and parameters."""
    run = load(directory)
    flows = ", ".join(f"{f['cc']} {f['direction']}" for f in run.scenario["flows"]) or "no flows"
    about = (
        f"<p>One run of {figures.human_value(run.scenario['duration'])} (seed {run.scenario['seed']}): "
        f"{html.escape(flows)}; {_plural(len(run.scenario['pings']), 'ping')}. Testbed: "
        f"{html.escape(testbed([run]))}. Summaries count the flows from "
        f"{figures.seconds_text(load_window(run)[0])}, the pings {html.escape(_window_text(run))}.</p>"
    )
    summary = pd.DataFrame([run.summary])
    parts = [
        about,
        figures_html(figures.plot_run(run, scratch), "1 run", run),
        "<h3>Run summary</h3>",
        table_html(_parameters(in_units(summary).iloc[0].to_dict()).rename(columns={"parameter": "quantity"})),
    ]
    for title, frame in (("Flows", run.flows), ("Pings", run.pings), ("Queues", run.queues)):
        if not frame.empty:
            parts += [f"<h3>{title}</h3>", table_html(in_units(frame))]
    parts += ["<h3>Parameters</h3>", table_html(_parameters(flatten(run.scenario)))]
    return "\n".join(parts)


def settings_summary(table: pd.DataFrame, settings: list[str]) -> pd.DataFrame:
    """Per setting: runs, and the 10/50/90th percentiles of goodput (Mbit/s), ping, Jain."""
    frame = table.copy()
    if "total_goodput_bps" in frame.columns:
        frame["goodput_mbps"] = frame["total_goodput_bps"] / BITS_PER_MBIT
    values = {c: c for c in ("goodput_mbps", "ping_p50_ms", "jain") if c in frame.columns and frame[c].notna().any()}
    return figures.percentile_table(frame, settings, values)


def _interval(mean: float, low: float, high: float) -> str:
    if pd.isna(mean):
        return "-"
    if pd.isna(low):
        return f"{_format(mean)} (one run)"
    return f"{_format(mean)} [{_format(low)}, {_format(high)}]"


def headline_table(table: pd.DataFrame, settings: list[str]) -> pd.DataFrame:
    """Per setting (:func:`wificc.figures.series_labels`): runs, then for goodput (Mbit/s),
    ping under load (ms; each run's median) and, with several flows, Jain's index: the median,
    10th and 90th percentiles over the runs and the mean with its 95% confidence interval."""
    frame = table.assign(
        setting=list(figures.series_labels(table, settings)),
        goodput=table["total_goodput_bps"] / BITS_PER_MBIT,
    )
    metrics = [("goodput", "goodput Mbit/s"), ("ping_p50_ms", "ping ms")]
    if figures.flow_goodput_columns(table)[1:] and frame["jain"].notna().any():
        metrics.append(("jain", "Jain"))
    out = pd.DataFrame({"setting": list(dict.fromkeys(frame["setting"]))})
    out["runs"] = frame.groupby("setting", sort=False).size().to_numpy()
    for column, name in metrics:
        values = frame.assign(**{column: pd.to_numeric(frame[column], errors="coerce")})
        candles = stats.candlesticks(values, column, "setting")
        ci = stats.mean_ci(values, column, "setting", CONFIDENCE)
        out[f"{name} median"] = candles["p50"].to_numpy()
        out[f"{name} p10"] = candles["p10"].to_numpy()
        out[f"{name} p90"] = candles["p90"].to_numpy()
        out[f"{name} mean [{CONFIDENCE:.0%} CI]"] = [
            _interval(m, lo, hi) for m, lo, hi in zip(ci["mean"], ci["ci_low"], ci["ci_high"], strict=True)
        ]
    return out


def anova_of(table: pd.DataFrame, settings: list[str]) -> pd.DataFrame:
    """One-way ANOVA of goodput and ping across the congestion controls, per setting of the
    other parameters (:func:`wificc.stats.anova`); empty with fewer than two congestion controls."""
    cc = next((c for c in settings if figures.short_name(c) == "cc"), None)
    if cc is None or table[cc].nunique() < 2:
        return pd.DataFrame()
    others = [c for c in settings if c != cc]
    frame = table.assign(
        goodput=table["total_goodput_bps"] / BITS_PER_MBIT,
        setting=list(figures.series_labels(table, others)),
    )
    parts = []
    for column, name in (("goodput", "goodput (Mbit/s)"), ("ping_p50_ms", "ping under load (ms)")):
        result = stats.anova(frame, column, cc, "setting" if others else None)
        if not others:
            result.insert(0, "setting", "all")
        parts.append(result.assign(metric=name))
    out = pd.concat(parts, ignore_index=True)
    out = out.rename(columns={"groups": "CCAs (k)", "n": "runs (N)", "df_between": "df k-1", "df_within": "df N-k"})
    out["p"] = [f"{p:.3g}" if pd.notna(p) else "-" for p in out["p"]]
    return out[["metric", "setting", "CCAs (k)", "runs (N)", "F", "p", "df k-1", "df N-k"]]


def _grid_text(table: pd.DataFrame, settings: list[str]) -> str:
    if not settings:
        return "one setting"
    lists = [
        f"{figures.short_name(c)} {{{', '.join(figures.human_value(v) for v in dict.fromkeys(table[c]))}}}"
        for c in settings
    ]
    return " &times; ".join(html.escape(text) for text in lists)


def sweep_section(directory: Path, scratch: Path, about: str = "") -> str:
    """What the sweep varies, its headline table and ANOVA, figures, runs and parameters."""
    sweep = figures.load_sweep(directory)
    table, settings = sweep.table, sweep.settings
    id_column = figures.run_id_column(table)
    counts = table.groupby(list(settings), sort=False).size() if settings else pd.Series([len(table)])
    reps = (
        _plural(int(counts.iloc[0]), "repetition")
        if counts.nunique() == 1
        else f"{counts.min()} to {counts.max()} repetitions"
    )
    first = sweep.runs[0]
    description = (
        f"<p>{html.escape(about) + '. ' if about else ''}Grid: {_grid_text(table, settings)}; {reps} of each "
        f"setting ({_plural(len(table), 'run')}) of {figures.human_value(first.scenario['duration'])}. "
        f"Testbed: {html.escape(testbed(sweep.runs))}. Summaries count the flows "
        f"from {figures.seconds_text(load_window(first)[0])}, the pings {html.escape(_window_text(first))} "
        "(Flent's loaded window).</p>"
    )
    metrics = [c for c in ("total_goodput_bps", "ping_p50_ms", "ping_p90_ms", "jain", "retrans") if c not in settings]
    per_run = table[[id_column, *(c for c in settings if c != id_column), "seed", *metrics]]
    scenarios = [flatten(run.scenario) for run in sweep.runs]
    keys = list(dict.fromkeys(k for s in scenarios for k in s))
    first_flat = scenarios[0]
    shared = {k: first_flat.get(k) for k in keys if all(s.get(k) == first_flat.get(k) for s in scenarios)}
    varying = [k for k in keys if k not in shared]
    parameters = pd.DataFrame(
        [
            {id_column: run.directory.name} | {k: s.get(k) for k in varying}
            for run, s in zip(sweep.runs, scenarios, strict=True)
        ]
    )
    anova = anova_of(table, settings)
    parts = [
        description,
        f"<h3>Per setting ({len(table)} runs)</h3>",
        table_html(headline_table(table, settings)),
    ]
    if not anova.empty:
        parts += [
            "<h3>One-way ANOVA across the congestion controls</h3>",
            "<p>Per setting of the other parameters: F and p of the runs' goodput and median ping, "
            "k congestion controls, N runs.</p>",
            table_html(anova),
        ]
    parts += [
        "<h3>Figures</h3>",
        figures_html(figures.plot_sweep(sweep, scratch), reps, first),
        "<h3>Runs</h3>",
        table_html(in_units(per_run)),
        "<h3>Parameters shared by every run</h3>",
        table_html(_parameters(shared)),
        "<h3>Parameters that differ between runs</h3>",
        table_html(parameters),
    ]
    return "\n".join(parts)


def markdown_html(text: str) -> str:
    """The Markdown that wificc writes (headings, paragraphs, pipe tables, `code`) as HTML;
    headings go two levels down, under the report's own."""
    out: list[str] = []
    rows: list[list[str]] = []

    def inline(line: str) -> str:
        text = re.sub(r"`([^`]*)`", r"<code>\1</code>", html.escape(line.replace("\\|", "|")))
        return re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", text)

    def flush() -> None:
        if rows:
            head, *body = rows
            cells = "".join(f"<th>{inline(c)}</th>" for c in head)
            lines = "".join("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in row) + "</tr>" for row in body)
            table = f'<table class="text"><thead><tr>{cells}</tr></thead><tbody>{lines}</tbody></table>'
            out.append(f'<div class="scroll">{table}</div>')
            rows.clear()

    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("|"):
            # A cell's own "|" is written "\|".
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", stripped[1:].removesuffix("|"))]
            if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                rows.append(cells)
            continue
        flush()
        if m := re.match(r"(#+)\s+(.*)", stripped):
            level = min(len(m.group(1)) + 2, 6)
            out.append(f"<h{level}>{inline(m.group(2))}</h{level}>")
        elif stripped:
            out.append(f"<p>{inline(stripped)}</p>")
    flush()
    return "\n".join(out)


def this_machine() -> str:
    """The machine rendering the report: host name, system, architecture, CPUs."""
    return f"{platform.node()} ({platform.system()} {platform.release()}, {platform.machine()}, {os.cpu_count()} CPUs)"


def _version() -> str:
    try:
        return metadata.version("wificc")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def _utc(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes else f"{seconds:.1f} s"


def _runs_of(path: Path, kind: str | None) -> list[SavedRun]:
    return figures.load_sweep(path).runs if kind == "sweep" else [load(path)]


def about_table(
    found: list[tuple[str, Path]], runs: list[SavedRun], study: dict[str, Any], now: datetime, machine: str
) -> str:
    """The report's opening table: what was run, where, by which version, when, how long."""
    rows: list[tuple[str, str]] = []
    names = ", ".join(name for name, _ in found)
    if study:
        what = f"{study['title']} (wificc reproduce {study['study']}"
        what += ", --quick" if study.get("quick") else ""
        rows.append(("What was run", f"{what}): {_plural(len(found), 'experiment')} ({names})"))
        rows.append(("Testbed (study)", f"{study['testbed']}. Kernel profile: {study['kernel']}."))
    elif len(found) == 1 and figures.kind_of(found[0][1]) == "sweep":
        rows.append(("What was run", f"a sweep of {_plural(len(runs), 'run')} ({found[0][0]})"))
    elif len(found) == 1:
        rows.append(("What was run", f"one run ({found[0][0]})"))
    else:
        rows.append(("What was run", f"{_plural(len(found), 'experiment')}: {names}"))
    rows.append(("Testbed (scenarios)", testbed(runs)))
    models = list(dict.fromkeys(str(r.summary.get("model")) for r in runs))
    same = "this build's" if models == [_core.MODEL] else f"this build is {_core.MODEL}"
    rows.append(("wificc", f"version {_version()}; simulator model of the results {', '.join(models)} ({same})"))
    stamps = [r.directory / "summary.parquet" for r in runs]
    times = [p.stat().st_mtime for p in stamps if p.is_file()]
    if times:
        rows.append(("Results written", f"{_utc(min(times))} to {_utc(max(times))}"))
    if study.get("started"):
        rows.append(
            (
                "Reproduction",
                f"started {study['started']} on {study.get('machine', 'an unrecorded machine')}, "
                f"took {_duration(study['wall_s'])} (sweeps, figures and tables, before this report)",
            )
        )
    wall = sum(float(r.summary.get("wall_s") or 0.0) for r in runs)
    simulated = sum(float(r.summary.get("duration_s") or 0.0) for r in runs)
    rows.append(
        (
            "Simulation",
            f"{_plural(len(runs), 'run')}, {_duration(simulated)} simulated in "
            f"{_duration(wall)} of wall time summed over the runs (host measurement)",
        )
    )
    rows.append(("Report rendered", f"{now.astimezone(UTC).strftime('%Y-%m-%d %H:%M UTC')} on {machine}"))
    body = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in rows)
    return f'<table class="about">{body}</table>'


def _experiment_about(study: dict[str, Any]) -> dict[str, str]:
    """The description of each experiment of the reproduced study, by name."""
    from wificc import reproduce

    spec = reproduce.STUDIES.get(study.get("study", ""))
    return {e.name: e.about for e in spec.experiments} if spec else {}


def render(directory: str | os.PathLike[str], *, now: datetime | None = None, machine: str | None = None) -> str:
    """The report of ``directory`` as HTML text; ``now`` and ``machine`` say when and where it
    was rendered (default: the clock and :func:`this_machine`)."""
    path = Path(directory)
    found = figures.experiments(path)
    study_file = path / STUDY_FILE
    study = json.loads(study_file.read_text()) if study_file.is_file() else {}
    abouts = _experiment_about(study) if study else {}
    sections = []
    runs: list[SavedRun] = []
    with tempfile.TemporaryDirectory(prefix="wificc-report-") as tmp:
        for i, (name, experiment) in enumerate(found):
            scratch = Path(tmp) / str(i)
            kind = figures.kind_of(experiment)
            runs += _runs_of(experiment, kind)
            if kind == "sweep":
                body = sweep_section(experiment, scratch, abouts.get(name, ""))
            else:
                body = run_section(experiment, scratch)
            sections.append(f'<section id="e{i}"><h2>{html.escape(name)} ({kind})</h2>\n{body}\n</section>')
    heading = study.get("title") or (f"{found[0][1].resolve().name}" if len(found) == 1 else path.resolve().name)
    title = html.escape(f"wificc report: {heading}")
    tables = []
    for caption, name in STUDY_TABLES if study else ():
        if (path / name).is_file():
            tables.append(f"<h2>{caption} ({name})</h2>\n" + markdown_html((path / name).read_text()))
    nav = "".join(f'<li><a href="#e{i}">{html.escape(name)}</a></li>' for i, (name, _) in enumerate(found))
    about = about_table(found, runs, study, now or datetime.now(UTC), machine or this_machine())
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{STYLE}</style></head>\n<body>\n<h1>{title}</h1>\n{about}\n"
        + "\n".join(tables)
        + f"\n<nav><ul>{nav}</ul></nav>\n"
        + "\n".join(sections)
        + "\n</body></html>\n"
    )


def write(
    directory: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    now: datetime | None = None,
    machine: str | None = None,
) -> Path:
    """Write the report of ``directory`` to ``out`` (default DIR/report.html) atomically."""
    target = Path(directory) / REPORT_FILE if out is None else Path(out)
    return write_file(target, render(directory, now=now, machine=machine).encode("utf-8"))
