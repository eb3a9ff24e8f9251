"""The figures of wificc's experiments (matplotlib; PNG and SVG, reproducible bytes).

Each figure is ``fig_xxx(data, path_prefix) -> list[Path]``: it writes ``<prefix>.png`` and
``<prefix>.svg`` (atomically, the SVG free of dates and random ids: see
:func:`wificc.models._common.save_figure`) and returns both paths. Figures are drawn on
``matplotlib.figure.Figure`` objects, never through pyplot, so they render with the Agg and
SVG canvases whatever backend the process has. What a figure draws is computed first by a
function that returns a DataFrame (``goodput_ping_table``, ``cdf_table``, ...), so the numbers
can be checked apart from the pixels.

Two kinds of input:

* a *runs table*: one row per run, with parameter columns and summary columns, the shape of a
  sweep's ``runs.parquet`` (``total_goodput_bps``, ``ping_p50_ms``, ``jain``,
  ``flow0_goodput_bps``, ...). :func:`run_row` computes these columns from one run, and
  :func:`load_sweep` reads a sweep directory, filling in from ``runs/<id>/`` any column
  ``runs.parquet`` lacks;
* *runs*: a :class:`wificc.Result`, a run directory, or a mapping of labels to either.

The studies summarise repetitions as candlesticks: the 10th, 50th and 90th percentiles
(numpy's linear interpolation) of a metric over the runs of one setting. A *setting* is one
combination of the parameters that vary across the table (:func:`setting_columns`).

The figures: goodput versus ping candlesticks per congestion control and TSQ (the studies'
signature figure), ping RTT CDFs, pacing rate against the congestion control's bandwidth
model with cwnd over time, A-MPDU size versus TSQ, the bottleneck curve over the analytic
hybrid model (:mod:`wificc.models.hybrid`), Jain's fairness index per setting, and RRUL's
upload, download and ping per setting. :func:`plot` draws every figure that fits a run, a
sweep, or each experiment of a directory of them (:func:`experiments`).
"""

from __future__ import annotations

import json
import math
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from wificc import stats
from wificc.flent import jain, load_window, run_directories
from wificc.models import hybrid
from wificc.models._common import save_figure
from wificc.result import SCENARIO_FILE, RunLike, SavedRun, as_run, flatten, load

BITS_PER_MBIT = 1e6
# Most rows of a legend before it takes another column.
LEGEND_ROWS = 9
# Size of a single-panel figure, inches.
FIGSIZE = (7.0, 4.5)
# Columns that name a run rather than a setting.
RUN_KEY_COLUMNS = ("id", "run_id", "run", "seed", "repetition", "rep")
# A numeric column whose name matches this holds a measurement, not a parameter.
METRIC_NAME = re.compile(
    r"(_bps|_ms|_s|_pkts|_bytes|_rate|_count|_mean|_min|_max|_p\d+|jain|retrans|drops|events|speed|utilization)$"
)
# Columns that may name the congestion control and the TSQ setting, in order of preference.
CC_COLUMNS = ("cc", "flows[0].cc")
TSQ_COLUMNS = ("tsq", "stack.tsq")
# A static TSQ limit of N packets, as the scenario writes it (crates/wificc-core scenario.rs).
STATIC_TSQ = re.compile(r"static:(\d+)p")
# Markers of the TSQ settings, in order.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
# The series figures a sweep gets: the first run of at most this many settings.
MAX_SERIES_FIGURES = 8
RUNS_FILE = "runs.parquet"
# The grid file a sweep keeps in its directory, as `wificc sweep` writes it.
GRID_FILES = ("grid.toml", "grid.json")


# ---------------------------------------------------------------------------------------------
# Tables


def percentile_table(frame: pd.DataFrame, by: Sequence[str], values: Mapping[str, str]) -> pd.DataFrame:
    """Candlesticks per group of ``by``, groups in order of first appearance.

    ``values`` maps a name to a column. Columns out: ``by``, ``n`` (rows in the group), and
    per name ``<name>_p10``, ``<name>_p50``, ``<name>_p90``: the percentiles of the column's
    values present in the group (NaN when it has none).
    """
    _require(frame, [*by, *values.values()])
    keys = list(by)
    if keys:
        parts = [frame.groupby(keys, sort=False, dropna=False).size().reset_index(name="n")]
    else:
        parts = [pd.DataFrame({"n": [len(frame)]})]
    percentiles = [f"p{p}" for p in stats.CANDLE_PERCENTILES]
    for name, column in values.items():
        candles = stats.candlesticks(frame, column, keys or None)[percentiles]
        parts.append(candles.rename(columns={p: f"{name}_{p}" for p in percentiles}).reset_index(drop=True))
    return pd.concat(parts, axis=1)


def _require(frame: pd.DataFrame, columns: Sequence[str]) -> None:
    for column in columns:
        if column not in frame.columns:
            raise ValueError(f"{column}: no such column in the runs table; it has {', '.join(map(str, frame.columns))}")


def setting_columns(runs: pd.DataFrame, grid_keys: Sequence[str] = ()) -> list[str]:
    """The parameter columns that vary across ``runs``: the grid's keys when given and present.

    Without grid keys: every column with more than one distinct value except those naming a
    run (id, seed, repetition) and numeric columns named like a measurement
    (``*_bps``, ``*_ms``, ``jain``, ...; :data:`METRIC_NAME`).
    """
    present = [k for k in grid_keys if k in runs.columns]
    if present:
        return present
    out = []
    for column in runs.columns:
        values = runs[column]
        if column in RUN_KEY_COLUMNS or values.astype(str).nunique() < 2:
            continue
        if pd.api.types.is_numeric_dtype(values) and METRIC_NAME.search(str(column)):
            continue
        out.append(column)
    return out


def short_name(column: str) -> str:
    """The last part of a dotted parameter path: ``stack.tsq`` -> ``tsq``."""
    return re.split(r"[.\]]", column.rstrip("]"))[-1].replace("[", "")


def setting_labels(runs: pd.DataFrame, columns: Sequence[str]) -> pd.Series:
    """One label per row: ``tsq=4ms, cc=bbr`` from the setting columns (``all`` without any).

    Columns are named by :func:`short_name` unless two share it (``flows[0].cc`` and
    ``flows[1].cc`` keep their full names).
    """
    if not columns:
        return pd.Series(["all"] * len(runs), index=runs.index)
    shorts = [short_name(c) for c in columns]
    names = [short if shorts.count(short) == 1 else c for c, short in zip(columns, shorts, strict=True)]
    parts = [name + "=" + runs[c].astype(str) for name, c in zip(names, columns, strict=True)]
    label = parts[0]
    for part in parts[1:]:
        label = label + ", " + part
    return label


def _first(frame: pd.DataFrame, names: Sequence[str], given: str | None) -> str | None:
    """``given`` (checked), else the first of ``names`` that is a column, else None."""
    if given is not None:
        _require(frame, [given])
        return given
    return next((n for n in names if n in frame.columns), None)


def goodput_ping_table(
    runs: pd.DataFrame,
    *,
    cc: str | None = None,
    tsq: str | None = None,
    goodput: str = "total_goodput_bps",
    ping: str = "ping_p50_ms",
) -> pd.DataFrame:
    """Candlesticks of goodput (Mbit/s) and ping (ms) per congestion control and TSQ setting.

    Columns: the cc and tsq columns (those found or given), ``n``, ``goodput_p10/p50/p90``
    and ``ping_p10/p50/p90``, one row per setting in order of first appearance.
    """
    cc_column = _first(runs, CC_COLUMNS, cc)
    tsq_column = _first(runs, TSQ_COLUMNS, tsq)
    by = [c for c in (cc_column, tsq_column) if c is not None]
    _require(runs, [goodput, ping])
    frame = runs.assign(**{goodput: runs[goodput] / BITS_PER_MBIT})
    table = percentile_table(frame, by, {"goodput": goodput, "ping": ping})
    if table[["goodput_p50", "ping_p50"]].isna().any(axis=1).all():
        raise ValueError(f"{goodput}, {ping}: no run has both values")
    return table


def _runs_of(data: Any) -> dict[str, RunLike]:
    """Labelled runs: a mapping as given, one run under its own name (empty label)."""
    if isinstance(data, Mapping):
        return {str(label): as_run(run) for label, run in data.items()}
    return {"": as_run(data)}


def ping_samples(data: Any, *, window: str = "load") -> pd.DataFrame:
    """Ping RTTs (ms) with a ``label``: per run (the mapping's key) and ping stream.

    ``data``: a run, a run directory, a mapping of labels to either, or a DataFrame with
    ``label`` and ``rtt_ms`` columns (returned as it is). ``window="load"`` keeps the pings
    sent while the TCP flows run (Flent's ping_cdf cutoff of DELAY at both ends), ``"all"``
    every ping.
    """
    if isinstance(data, pd.DataFrame):
        _require(data, ["label", "rtt_ms"])
        return data[["label", "rtt_ms"]]
    if window not in ("load", "all"):
        raise ValueError(f"window: got {window!r}, expected 'load' or 'all'")
    frames = []
    for label, run in _runs_of(data).items():
        series = run.ping_series
        if window == "load":
            lo, hi = load_window(run)
            series = series[(series["t"] >= lo) & (series["t"] <= hi)]
        several = run.ping_series["ping"].nunique() > 1
        for name, group in series.groupby("name", sort=False):
            text = f"{label} {name}" if label and several else (label or name)
            frames.append(pd.DataFrame({"label": text, "rtt_ms": group["rtt_ms"].to_numpy()}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["label", "rtt_ms"])


def cdf_table(samples: pd.DataFrame) -> pd.DataFrame:
    """Empirical CDF per label (:func:`wificc.stats.ecdf`): each distinct ``rtt_ms`` with ``p``,
    the fraction of the label's samples at most that value."""
    if samples["rtt_ms"].dropna().empty:
        return pd.DataFrame(columns=["label", "rtt_ms", "p"])
    table = stats.ecdf(samples, "rtt_ms", by="label")
    return table.rename(columns={"value": "rtt_ms", "cdf": "p"})[["label", "rtt_ms", "p"]]


def rate_series(run: RunLike | str | os.PathLike[str]) -> pd.DataFrame:
    """Per flow and sample: pacing and delivery rate, the CCA's bw model (Mbit/s), cwnd.

    ``bw_model_mbps`` is the model value ``bw_bps`` of the BBR family; NaN for the others.
    """
    run = as_run(run)
    series = run.flow_series[["t", "flow", "name", "pacing_rate_bps", "delivery_rate_bps", "cwnd"]]
    model = run.model_series[run.model_series["name"] == "bw_bps"][["t", "flow", "value"]]
    table = series.merge(model, on=["t", "flow"], how="left", sort=False)
    return pd.DataFrame(
        {
            "t": table["t"],
            "flow": table["flow"],
            "name": table["name"],
            "pacing_mbps": table["pacing_rate_bps"] / BITS_PER_MBIT,
            "delivery_mbps": table["delivery_rate_bps"] / BITS_PER_MBIT,
            "bw_model_mbps": table["value"] / BITS_PER_MBIT,
            "cwnd": table["cwnd"],
        }
    )


def _order(values: Sequence[Any]) -> list[Any]:
    """Distinct values: by their leading number when all have one ("2ms" < "16ms"), else as met."""
    distinct = list(dict.fromkeys(values))
    numbers = [re.match(r"\D*?(\d+(?:\.\d+)?)", str(v)) for v in distinct]
    if all(numbers):
        return [v for _, v in sorted(zip([float(m.group(1)) for m in numbers], distinct, strict=True))]
    return distinct


def ampdu_table(frame: pd.DataFrame, *, by: str | None = None) -> pd.DataFrame:
    """A-MPDU size per TSQ setting (and ``by``): the mean over rows of mean, p10 and p90.

    Input columns: ``tsq``, ``ampdu_mean``, ``ampdu_p10``, ``ampdu_p90`` (MPDUs per A-MPDU),
    one row per run. Rows come out by ``by`` in order of appearance, then in TSQ order
    (:func:`_order`).
    """
    keys = [c for c in (by, "tsq") if c is not None]
    _require(frame, [*keys, "ampdu_mean", "ampdu_p10", "ampdu_p90"])
    table = frame.groupby(keys, sort=False)[["ampdu_mean", "ampdu_p10", "ampdu_p90"]].mean().reset_index()
    rank = {v: i for i, v in enumerate(_order(list(table["tsq"])))}
    group = {v: i for i, v in enumerate(dict.fromkeys(table[by]))} if by else {}
    ranks = {"_group": table[by].map(group) if by else 0, "_rank": table["tsq"].map(rank)}
    table = table.assign(**ranks).sort_values(["_group", "_rank"], kind="stable")
    return table.drop(columns=["_group", "_rank"]).reset_index(drop=True)


def static_packets(value: Any) -> int | None:
    """N of a static TSQ limit ``"static:Np"``, else None."""
    m = STATIC_TSQ.fullmatch(str(value))
    return int(m.group(1)) if m else None


def bottleneck_table(
    runs: pd.DataFrame,
    *,
    tsq: str | None = None,
    goodput: str = "total_goodput_bps",
    rtt: str = "ping_p50_ms",
    by: str | None = None,
) -> pd.DataFrame:
    """Measured points of the bottleneck curve: per static TSQ limit k (and ``by``), candlesticks.

    k comes from the TSQ column (``static:Np``). Columns: ``by``, ``k``, ``n``,
    ``goodput_p10/p50/p90`` (Mbit/s) and ``rtt_p10/p50/p90`` (ms), by increasing k.
    """
    tsq_column = _first(runs, TSQ_COLUMNS, tsq)
    if tsq_column is None:
        raise ValueError(f"tsq: the runs table has none of the columns {', '.join(TSQ_COLUMNS)}")
    k = runs[tsq_column].map(static_packets)
    if k.isna().any():
        bad = runs[tsq_column][k.isna()].iloc[0]
        raise ValueError(f"{tsq_column}: got {bad!r}, expected a static TSQ limit such as 'static:64p'")
    keys = [c for c in (by, "k") if c is not None]
    frame = runs.assign(k=k.astype(int), **{goodput: runs[goodput] / BITS_PER_MBIT})
    table = percentile_table(frame, keys, {"goodput": goodput, "rtt": rtt})
    return table.sort_values(keys, kind="stable").reset_index(drop=True)


def flow_goodput_columns(runs: pd.DataFrame) -> list[str]:
    """The ``flow<i>_goodput_bps`` columns, by i."""
    found = [(int(m.group(1)), c) for c in runs.columns if (m := re.fullmatch(r"flow(\d+)_goodput_bps", str(c)))]
    return [c for _, c in sorted(found)]


def fairness_table(runs: pd.DataFrame, *, by: Sequence[str] | None = None) -> pd.DataFrame:
    """Jain's index candlesticks per setting (``label``); from ``jain`` or the flow goodputs."""
    if "jain" in runs.columns:
        index = runs["jain"].astype(float)
    else:
        columns = flow_goodput_columns(runs)
        if not columns:
            raise ValueError("jain: the runs table has neither a jain column nor flow<i>_goodput_bps columns")
        # Flows a run does not have are missing (NaN) in its row.
        index = runs[columns].apply(lambda row: jain([v for v in row if pd.notna(v)]), axis=1).astype(float)
    by = setting_columns(runs) if by is None else list(by)
    frame = pd.DataFrame({"label": setting_labels(runs, by), "jain": index})
    return percentile_table(frame, ["label"], {"jain": "jain"})


def rrul_table(runs: pd.DataFrame, *, by: Sequence[str] | None = None) -> pd.DataFrame:
    """RRUL per setting (``label``): medians and 10/90th percentiles of upload and download
    goodput (Mbit/s, the sums of each direction's flows) and of the ping median (ms)."""
    _require(runs, ["upload_goodput_bps", "download_goodput_bps", "ping_p50_ms"])
    by = setting_columns(runs) if by is None else list(by)
    frame = runs.assign(
        label=setting_labels(runs, by),
        upload=runs["upload_goodput_bps"] / BITS_PER_MBIT,
        download=runs["download_goodput_bps"] / BITS_PER_MBIT,
    )
    return percentile_table(frame, ["label"], {"upload": "upload", "download": "download", "ping": "ping_p50_ms"})


# ---------------------------------------------------------------------------------------------
# One run's row of a runs table


def _main_ping(run: RunLike) -> pd.Series | None:
    """The summary of the run's first ICMP ping, else of its first ping, else None."""
    pings = run.pings
    if pings.empty:
        return None
    icmp = pings[pings["kind"] == "icmp"]
    return (icmp if not icmp.empty else pings).iloc[0]


def run_row(run: RunLike | str | os.PathLike[str]) -> dict[str, Any]:
    """The summary columns of one run, as a sweep's runs table names them.

    ``total_goodput_bps``, ``jain``, ``flow<i>_goodput_bps``, ``upload_goodput_bps`` and
    ``download_goodput_bps`` (sums per direction), ``ping_p10/p50/p90/p99_ms`` (the first ICMP
    ping, or the first ping), ``retrans`` (all flows).
    """
    run = as_run(run)
    flows = run.flows
    directions = [f["direction"] for f in run.scenario["flows"]]
    row: dict[str, Any] = {
        "total_goodput_bps": float(flows["goodput_bps"].sum()),
        "jain": run.summary.get("jain"),
        "upload_goodput_bps": float(sum(g for g, d in zip(flows["goodput_bps"], directions, strict=True) if d == "up")),
        "download_goodput_bps": float(
            sum(g for g, d in zip(flows["goodput_bps"], directions, strict=True) if d == "down")
        ),
        "retrans": int(flows["retrans"].sum()) if len(flows) else 0,
    }
    row |= {f"flow{i}_goodput_bps": float(g) for i, g in enumerate(flows["goodput_bps"])}
    ping = _main_ping(run)
    for p in ("p10", "p50", "p90", "p99"):
        row[f"ping_{p}_ms"] = math.nan if ping is None else float(ping[f"rtt_{p}_ms"])
    return row


def run_id_column(runs: pd.DataFrame) -> str | None:
    return next((c for c in ("run_id", "id") if c in runs.columns), None)


@dataclass(frozen=True)
class Sweep:
    """A sweep read back: its runs table, each row's run, and the setting columns."""

    directory: Path
    table: pd.DataFrame
    runs: list[SavedRun]
    settings: list[str]


def load_sweep(sweep: str | os.PathLike[str]) -> Sweep:
    """Read a sweep directory: its runs table, every run (once) and its settings.

    The table is ``runs.parquet`` when there is one (rows matched to ``runs/<id>/`` by its
    ``run_id`` or ``id`` column), completed with any :func:`run_row` column it lacks; without
    it, one row per ``runs/*/``: the run's parameters (:func:`wificc.result.flatten`) and
    :func:`run_row`. The settings are :func:`setting_columns`, from ``grid.toml`` if it has
    them.
    """
    path = Path(sweep)
    runs_file = path / RUNS_FILE
    if runs_file.is_file():
        table = pd.read_parquet(runs_file)
        id_column = run_id_column(table)
        if id_column is None:
            raise ValueError(f"{runs_file}: no run_id or id column to find each run's directory")
        runs = [load(path / "runs" / str(i)) for i in table[id_column]]
        if not runs:
            raise ValueError(f"{runs_file}: no runs")
    else:
        runs = [load(d) for d in run_directories(path)]
        table = pd.DataFrame([{"run_id": r.directory.name, **flatten(r.scenario)} for r in runs])
    rows = pd.DataFrame([run_row(r) for r in runs], index=table.index)
    table = pd.concat([table, rows[[c for c in rows.columns if c not in table.columns]]], axis=1)
    return Sweep(path, table, runs, setting_columns(table, grid_keys(path)))


def grid_keys(sweep: str | os.PathLike[str]) -> list[str]:
    """The parameter names of a sweep's grid (``grid.toml`` or ``grid.json``): its ``grid`` keys
    and the keys of its ``zip`` groups; none without a grid file."""
    for name in GRID_FILES:
        grid_file = Path(sweep) / name
        if grid_file.is_file():
            break
    else:
        return []
    text = grid_file.read_text()
    try:
        doc = json.loads(text) if grid_file.suffix == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as e:
        raise ValueError(f"{grid_file}: {e}") from e
    keys = list(doc.get("grid", {}))
    for group in doc.get("zip", []):
        keys += list(group)
    return keys


# ---------------------------------------------------------------------------------------------
# Drawing


def _whiskers(table: pd.DataFrame, prefix: str) -> np.ndarray:
    """Error-bar lengths below and above the middle from the p10/p50/p90 columns.

    A middle that is a mean (A-MPDU bars) may lie a hair outside [p10, p90] (a few frames far
    below the rest); that whisker is drawn with length 0.
    """
    mid = table[f"{prefix}p50"].to_numpy(dtype=float)
    below = mid - table[f"{prefix}p10"].to_numpy(dtype=float)
    above = table[f"{prefix}p90"].to_numpy(dtype=float) - mid
    return np.maximum(np.vstack([below, above]), 0.0)


def _color(index: int) -> str:
    return f"C{index % 10}"


def fig_goodput_ping(
    runs: pd.DataFrame,
    path_prefix: str | os.PathLike[str],
    *,
    cc: str | None = None,
    tsq: str | None = None,
    goodput: str = "total_goodput_bps",
    ping: str = "ping_p50_ms",
    title: str = "Goodput versus ping (10th/50th/90th percentiles over runs)",
) -> list[Path]:
    """Goodput (y) against median ping (x), one candlestick cross per congestion control (colour)
    and TSQ setting (marker), whiskers from the 10th to the 90th percentile over repetitions."""
    table = goodput_ping_table(runs, cc=cc, tsq=tsq, goodput=goodput, ping=ping)
    cc_column, tsq_column = (
        _first(runs, CC_COLUMNS, cc),
        _first(runs, TSQ_COLUMNS, tsq),
    )
    ccs = list(dict.fromkeys(table[cc_column])) if cc_column else [None]
    tsqs = _order(list(table[tsq_column])) if tsq_column else [None]
    fig = Figure(figsize=FIGSIZE, layout="constrained")
    ax = fig.subplots()
    for _, row in table.iterrows():
        i = ccs.index(row[cc_column]) if cc_column else 0
        j = tsqs.index(row[tsq_column]) if tsq_column else 0
        label = ", ".join(str(row[c]) for c in (cc_column, tsq_column) if c is not None) or "all"
        one = table.loc[[row.name]]
        ax.errorbar(
            one["ping_p50"],
            one["goodput_p50"],
            xerr=_whiskers(one, "ping_"),
            yerr=_whiskers(one, "goodput_"),
            fmt=MARKERS[j % len(MARKERS)],
            color=_color(i),
            capsize=3,
            label=label,
        )
    ax.set_xlabel(f"ping RTT (ms): {ping}")
    ax.set_ylabel("goodput (Mbit/s)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize="small", loc="best")
    return save_figure(fig, title, path_prefix)


def fig_ping_cdf(
    data: Any,
    path_prefix: str | os.PathLike[str],
    *,
    window: str = "load",
    title: str = "Ping RTT under load (CDF)",
) -> list[Path]:
    """Empirical CDF of ping RTTs, one line per label (see :func:`ping_samples`)."""
    table = cdf_table(ping_samples(data, window=window))
    if table.empty:
        raise ValueError("data: no ping RTT samples to plot")
    fig = Figure(figsize=FIGSIZE, layout="constrained")
    ax = fig.subplots()
    for i, (label, group) in enumerate(table.groupby("label", sort=False)):
        ax.step(group["rtt_ms"], group["p"], where="post", color=_color(i), label=str(label))
    ax.set_xlabel("ping RTT (ms)")
    ax.set_ylabel("cumulative probability")
    ax.set_ylim(0, 1)
    ax.legend(fontsize="small", loc="lower right")
    return save_figure(fig, title, path_prefix)


def fig_pacing_cwnd(
    run: RunLike | str | os.PathLike[str],
    path_prefix: str | os.PathLike[str],
    *,
    title: str = "Pacing rate, bandwidth model and cwnd",
) -> list[Path]:
    """Over time, per flow: pacing rate (solid) against the CCA's bw model (dashed, BBR family)
    and delivery rate (dotted); below, cwnd in packets."""
    table = rate_series(run)
    if table.empty:
        raise ValueError("run: no flow samples to plot")
    fig = Figure(figsize=(FIGSIZE[0], 6.0), layout="constrained")
    rate_ax, cwnd_ax = fig.subplots(2, 1, sharex=True)
    for i, (name, group) in enumerate(table.groupby("name", sort=False)):
        rate_ax.plot(group["t"], group["pacing_mbps"], color=_color(i), label=f"{name} pacing rate")
        if group["bw_model_mbps"].notna().any():
            rate_ax.plot(group["t"], group["bw_model_mbps"], "--", color=_color(i), label=f"{name} bw model")
        rate_ax.plot(group["t"], group["delivery_mbps"], ":", color=_color(i), label=f"{name} delivery rate")
        cwnd_ax.plot(group["t"], group["cwnd"], color=_color(i), label=str(name))
    rate_ax.set_ylabel("rate (Mbit/s)")
    rate_ax.set_ylim(bottom=0)
    # The rate panel's legend names the line styles, the cwnd panel's the flows (their colours,
    # in columns of at most LEGEND_ROWS), so the legends stay small with many flows.
    styles = [("-", "pacing rate"), ("--", "bw model"), (":", "delivery rate")]
    if table["bw_model_mbps"].isna().all():
        styles.remove(("--", "bw model"))
    handles = [Line2D([], [], linestyle=style, color="black", label=label) for style, label in styles]
    rate_ax.legend(handles=handles, fontsize="x-small", loc="best")
    flows = len(cwnd_ax.get_lines())
    cwnd_ax.legend(fontsize="x-small", loc="best", ncols=math.ceil(flows / LEGEND_ROWS))
    cwnd_ax.set_ylabel("cwnd (packets)")
    cwnd_ax.set_xlabel("time (s)")
    cwnd_ax.set_ylim(bottom=0)
    return save_figure(fig, title, path_prefix)


def _bars(labels: Sequence[str], groups: Sequence[tuple[str, pd.DataFrame, str, Any]]) -> None:
    """Grouped bars of p50 with 10/90 whiskers: one group per label, one bar per series.

    A series is (name, table, column prefix, axes); the first series' axes get the labels.
    """
    width = 0.8 / len(groups)
    x = np.arange(len(labels))
    for i, (name, table, prefix, ax) in enumerate(groups):
        ax.bar(
            x + (i - (len(groups) - 1) / 2) * width,
            table[f"{prefix}p50"],
            width,
            yerr=_whiskers(table, prefix),
            capsize=3,
            color=_color(i),
            label=name,
        )
    slanted = len(labels) > 4
    groups[0][3].set_xticks(x, labels, rotation=30 if slanted else 0, ha="right" if slanted else "center")


def fig_ampdu_tsq(
    frame: pd.DataFrame,
    path_prefix: str | os.PathLike[str],
    *,
    by: str | None = None,
    title: str = "A-MPDU size versus TSQ",
) -> list[Path]:
    """Mean A-MPDU size (bars) with 10th-90th percentile whiskers per TSQ setting (and ``by``)."""
    table = ampdu_table(frame, by=by)
    # The bar is the mean, which _bars reads as the middle value.
    table = table.rename(columns={"ampdu_mean": "ampdu_p50"})
    tsqs = _order(list(table["tsq"]))
    groups = list(dict.fromkeys(table[by])) if by else [None]
    fig = Figure(figsize=FIGSIZE, layout="constrained")
    ax = fig.subplots()
    series = []
    for group in groups:
        part = table if group is None else table[table[by] == group]
        part = part.set_index("tsq").reindex(tsqs).reset_index()
        series.append((str(group) if group is not None else "A-MPDU", part, "ampdu_", ax))
    _bars([str(t) for t in tsqs], series)
    ax.set_xlabel("TSQ")
    ax.set_ylabel("MPDUs per A-MPDU")
    if by:
        ax.legend(fontsize="small")
    return save_figure(fig, title, path_prefix)


def fig_bottleneck_curve(
    runs: pd.DataFrame,
    path_prefix: str | os.PathLike[str],
    *,
    params: hybrid.HybridParams = hybrid.REFERENCE,
    tsq: str | None = None,
    goodput: str = "total_goodput_bps",
    rtt: str = "ping_p50_ms",
    by: str | None = None,
    title: str | None = None,
) -> list[Path]:
    """Goodput and RTT against the static TSQ limit k, over the hybrid model's BW(k), RTT(k)."""
    table = bottleneck_table(runs, tsq=tsq, goodput=goodput, rtt=rtt, by=by)
    k_max = max(int(table["k"].max()), 2)
    ks = np.arange(1, k_max + 1)
    fig = Figure(figsize=(FIGSIZE[0], 6.0), layout="constrained")
    rate_ax, rtt_ax = fig.subplots(2, 1, sharex=True)
    rate_ax.plot(ks, hybrid.bw(ks, params) / BITS_PER_MBIT, color="grey", label="model BW(k)")
    rtt_ax.plot(ks, hybrid.rtt(ks, params) * 1e3, color="grey", label="model RTT(k)")
    groups = list(dict.fromkeys(table[by])) if by else [None]
    for i, group in enumerate(groups):
        part = table if group is None else table[table[by] == group]
        label = "measured" if group is None else str(group)
        rate_ax.errorbar(
            part["k"],
            part["goodput_p50"],
            yerr=_whiskers(part, "goodput_"),
            fmt="o",
            color=_color(i),
            label=label,
        )
        rtt_ax.errorbar(part["k"], part["rtt_p50"], yerr=_whiskers(part, "rtt_"), fmt="o", color=_color(i), label=label)
    rate_ax.set_ylabel("goodput (Mbit/s)")
    rate_ax.set_ylim(bottom=0)
    rate_ax.legend(fontsize="small")
    rtt_ax.set_ylabel("RTT (ms)")
    rtt_ax.set_xlabel("static TSQ limit k (packets)")
    rtt_ax.legend(fontsize="small")
    if title is None:
        title = f"Bottleneck curve over the hybrid model (k_bar = {hybrid.k_bar(params):.1f})"
    return save_figure(fig, title, path_prefix)


def fig_fairness(
    runs: pd.DataFrame,
    path_prefix: str | os.PathLike[str],
    *,
    by: Sequence[str] | None = None,
    title: str = "Jain's fairness index per setting",
) -> list[Path]:
    """Median Jain index per setting (bars) with 10th-90th percentile whiskers."""
    table = fairness_table(runs, by=by)
    fig = Figure(figsize=FIGSIZE, layout="constrained")
    ax = fig.subplots()
    _bars(list(table["label"]), [("Jain index", table, "jain_", ax)])
    ax.set_ylabel("Jain's index")
    ax.set_ylim(0, 1.05)
    return save_figure(fig, title, path_prefix)


def fig_rrul(
    runs: pd.DataFrame,
    path_prefix: str | os.PathLike[str],
    *,
    by: Sequence[str] | None = None,
    title: str = "RRUL: upload, download and ping per setting",
) -> list[Path]:
    """Per setting: upload and download goodput bars (left axis) and ping bars (right axis)."""
    table = rrul_table(runs, by=by)
    fig = Figure(figsize=FIGSIZE, layout="constrained")
    ax = fig.subplots()
    ping_ax = ax.twinx()
    series = [
        ("upload", table, "upload_", ax),
        ("download", table, "download_", ax),
        ("ping", table, "ping_", ping_ax),
    ]
    _bars(list(table["label"]), series)
    ax.set_ylabel("goodput (Mbit/s)")
    ping_ax.set_ylabel("ping RTT (ms)")
    # The legend of both axes goes on the twin, which is drawn over the first.
    handles = ax.get_legend_handles_labels()
    ping_handles = ping_ax.get_legend_handles_labels()
    ping_ax.legend(handles[0] + ping_handles[0], handles[1] + ping_handles[1], fontsize="small", loc="upper left")
    return save_figure(fig, title, path_prefix)


# ---------------------------------------------------------------------------------------------
# Every figure of a directory

# A written figure: its caption and its files (PNG, SVG).
Drawn = tuple[str, list[Path]]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.=+-]+", "_", text).strip("_") or "all"


def _named(settings: Sequence[str], names: Sequence[str]) -> str | None:
    return next((c for c in settings if short_name(c) in names), None)


def plot_run(run: RunLike | str | os.PathLike[str], out: str | os.PathLike[str]) -> list[Drawn]:
    """The figures of one run into ``out``: series, ping CDF, and RRUL bars for two directions."""
    run = as_run(run)
    out = Path(out)
    drawn: list[Drawn] = []
    if not run.flow_series.empty:
        drawn.append(("Pacing rate, bw model and cwnd per flow", fig_pacing_cwnd(run, out / "series")))
    if not run.ping_series.empty:
        drawn.append(("Ping RTT CDF while the flows run", fig_ping_cdf(run, out / "ping_cdf")))
    row = run_row(run)
    if row["upload_goodput_bps"] > 0 and row["download_goodput_bps"] > 0:
        drawn.append(("RRUL: upload, download, ping", fig_rrul(pd.DataFrame([row]), out / "rrul", by=[])))
    return drawn


def plot_sweep(sweep: Sweep | str | os.PathLike[str], out: str | os.PathLike[str]) -> list[Drawn]:
    """The figures of a sweep into ``out``, each where the runs table supports it.

    Settings other than the congestion control and TSQ split the goodput-ping and CDF figures
    into one figure per combination (as the studies draw one per chipset). The series figures
    show the first run of each of the first :data:`MAX_SERIES_FIGURES` settings.
    """
    sweep = sweep if isinstance(sweep, Sweep) else load_sweep(sweep)
    out = Path(out)
    table, settings = sweep.table, sweep.settings
    cc = _named(settings, ("cc",))
    tsq = _named(settings, ("tsq",))
    others = [c for c in settings if c not in (cc, tsq)]
    drawn: list[Drawn] = []
    panels = setting_labels(table, others)
    lines = setting_labels(table, [c for c in (cc, tsq) if c])
    for panel in dict.fromkeys(panels):
        rows = table[panels == panel]
        if rows["ping_p50_ms"].isna().all():
            continue
        suffix = "" if not others else f"-{_slug(panel)}"
        where = "" if not others else f" ({panel})"
        pairs = fig_goodput_ping(rows, out / f"goodput_ping{suffix}", cc=cc, tsq=tsq)
        drawn.append((f"Goodput versus ping{where}", pairs))
        samples = pd.concat(
            [
                ping_samples(run).assign(label=lines[i])
                for i, run in zip(table.index, sweep.runs, strict=True)
                if i in rows.index
            ],
            ignore_index=True,
        )
        drawn.append((f"Ping RTT CDF{where}", fig_ping_cdf(samples, out / f"ping_cdf{suffix}")))
    if flow_goodput_columns(table)[1:] and table["jain"].notna().any():
        drawn.append(("Jain's fairness index", fig_fairness(table, out / "fairness", by=settings)))
    if (table["upload_goodput_bps"] > 0).all() and (table["download_goodput_bps"] > 0).all():
        drawn.append(("RRUL: upload, download, ping", fig_rrul(table, out / "rrul", by=settings)))
    if tsq and table[tsq].map(static_packets).notna().all():
        curve = fig_bottleneck_curve(table, out / "bottleneck_curve", tsq=tsq, by=cc)
        drawn.append(("Bottleneck curve over the hybrid model", curve))
    if tsq and "ampdu_mean" in table.columns:
        bars = fig_ampdu_tsq(table.assign(tsq=table[tsq]), out / "ampdu_tsq", by=cc)
        drawn.append(("A-MPDU size versus TSQ", bars))
    labels = list(setting_labels(table, settings))
    for label in list(dict.fromkeys(labels))[:MAX_SERIES_FIGURES]:
        run = sweep.runs[labels.index(label)]
        if run.flow_series.empty:
            continue
        drawn.append((f"Series of one run ({label})", fig_pacing_cwnd(run, out / f"series-{_slug(label)}")))
    return drawn


def kind_of(directory: str | os.PathLike[str]) -> str | None:
    """``"sweep"`` (``runs.parquet`` or ``runs/*/``), ``"run"`` (``scenario.json``) or None."""
    path = Path(directory)
    if (path / RUNS_FILE).is_file() or any(p.is_dir() for p in (path / "runs").glob("*")):
        return "sweep"
    return "run" if (path / SCENARIO_FILE).is_file() else None


def experiments(directory: str | os.PathLike[str]) -> list[tuple[str, Path]]:
    """The experiments of ``directory``: itself when it is a run or a sweep, else its children
    that are (in name order, the layout ``wificc reproduce`` writes)."""
    path = Path(directory)
    if not path.is_dir():
        raise ValueError(f"DIR: {str(path)!r} is not a directory")
    if kind_of(path):
        return [(path.name, path)]
    found = [(child.name, child) for child in sorted(path.iterdir()) if child.is_dir() and kind_of(child)]
    if not found:
        raise ValueError(
            f"DIR: {str(path)!r} holds no run ({SCENARIO_FILE}) or sweep ({RUNS_FILE}, runs/*/), "
            "directly or in its subdirectories"
        )
    return found


def plot(directory: str | os.PathLike[str], out: str | os.PathLike[str] | None = None) -> list[Drawn]:
    """Every figure that fits each experiment of ``directory`` (:func:`experiments`), into
    ``out`` (default DIR/figures), in a subdirectory per experiment when there are several."""
    path = Path(directory)
    target = path / "figures" if out is None else Path(out)
    found = experiments(path)
    drawn: list[Drawn] = []
    for name, experiment in found:
        where = target if len(found) == 1 and experiment == path else target / name
        kind = kind_of(experiment)
        drawn += plot_sweep(experiment, where) if kind == "sweep" else plot_run(experiment, where)
    return drawn
