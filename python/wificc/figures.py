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
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from wificc import reference, scenarios, stats
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
# The styles of a figure's series: series i takes COLORS[i % 10], MARKERS[i % 9] and
# LINESTYLES[i % 7]. The lengths are coprime with 10, so two series differ in colour and marker
# (and in colour and line style) unless they are 90 (70) apart; up to 9 series every two differ
# in colour and in marker, up to 7 in line style too.
COLORS = tuple(f"C{i}" for i in range(10))
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<")
LINESTYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 3)), (0, (8, 2)))
# The series figures a sweep gets: the first run of at most this many settings.
MAX_SERIES_FIGURES = 8
# Setting columns that split a sweep's figures into one figure each (the studies draw one per
# chipset); every other setting column is part of the series.
PANEL_NAMES = ("chipset",)
# Setting columns whose value alone names it in a series label ("cubic, 1 ms").
BARE_NAMES = ("cc",)
# The fraction of the data's span added beyond it on each side of an axis (matplotlib's default
# margin), so no point or whisker lies on the frame.
PAD = 0.05
RUNS_FILE = "runs.parquet"
# The grid file a sweep keeps in its directory, as `wificc sweep` writes it.
GRID_FILES = ("grid.toml", "grid.json")


# ---------------------------------------------------------------------------------------------
# Human units

# A scenario quantity as the core writes it back ("20000000000ns", "20000000bit", "1500b",
# "100p", "1bdp") or as a grid spells it ("1ms", "100mbit"), or a static TSQ limit
# ("static:64p"): the number and its unit.
_QUANTITY = re.compile(r"(static:)?([0-9]+(?:\.[0-9]+)?)(ns|us|ms|s|bit|kbit|mbit|gbit|b|kb|mb|kib|mib|p|pkt|bdp)")


def number_text(value: float) -> str:
    """A number for people: whole numbers with thousands separators, others to 4 significant
    digits (no exponent below 1e4)."""
    if not math.isfinite(value):
        return "-"
    if value == round(value) or abs(value) >= 1e4:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def seconds_text(value: float) -> str:
    """A duration in seconds as :func:`wificc.reference.human_duration` shows it: 20 s, 1 ms."""
    return reference.human_duration(round(value * scenarios.NSEC_PER_SEC))


def human_value(value: Any) -> str:
    """A parameter value for people: scenario quantities in their units as the reference shows
    them (:mod:`wificc.reference`: "20000000000ns" -> "20 s", "100000000bit" -> "100 Mbit/s",
    "64000b" -> "64 kB", "100p" -> "100 packets", "1bdp" -> "1 BDP"; "static:64p" -> "static
    64 packets"), numbers by :func:`number_text`, None and NaN as "-", anything else as
    written."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float | np.integer | np.floating):
        return number_text(float(value))
    text = str(value)
    m = _QUANTITY.fullmatch(text.strip().lower())
    if m is None:
        return text
    static, number, unit = m.groups()
    if unit == "b" and len(number) > 12:
        # Not a size (more than a terabyte): a hex fingerprint that happens to end in "b".
        return text
    if unit in ("p", "pkt", "bdp"):
        shown = reference.human_buffer(number + unit.removesuffix("kt"))
    elif unit in ("ns", "us", "ms", "s"):
        shown = reference.human_duration(scenarios.duration_ns("value", number + unit))
    elif unit.endswith("bit"):
        shown = reference.human_rate(scenarios.rate_bps("value", number + unit))
    else:
        shown = reference.human_size(scenarios.size_bytes("value", number + unit))
    return f"static {shown}" if static else shown


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


def series_labels(runs: pd.DataFrame, columns: Sequence[str]) -> pd.Series:
    """One label per row for a figure's legend, in human units: ``cubic, 1 ms, flows 4``.

    A congestion control (:data:`BARE_NAMES`) and a TSQ duration stand alone; every other
    column is ``name value``, named as in :func:`setting_labels` (``all`` without columns).
    """
    if not columns:
        return pd.Series(["all"] * len(runs), index=runs.index)
    shorts = [short_name(c) for c in columns]
    names = [short if shorts.count(short) == 1 else c for c, short in zip(columns, shorts, strict=True)]

    def part(name: str, value: Any) -> str:
        shown = human_value(value)
        alone = short_name(name) in BARE_NAMES or (
            short_name(name) == "tsq" and re.search(r" (s|ms|us|ns)$", shown) is not None
        )
        return shown if alone else f"{name} {shown}"

    rows = zip(*(runs[c] for c in columns), strict=True)
    return pd.Series([", ".join(map(part, names, row)) for row in rows], index=runs.index, dtype=object)


def _first(frame: pd.DataFrame, names: Sequence[str], given: str | None) -> str | None:
    """``given`` (checked), else the first of ``names`` that is a column, else None."""
    if given is not None:
        _require(frame, [given])
        return given
    return next((n for n in names if n in frame.columns), None)


def goodput_ping_table(
    runs: pd.DataFrame,
    *,
    by: Sequence[str] | None = None,
    cc: str | None = None,
    tsq: str | None = None,
    goodput: str = "total_goodput_bps",
    ping: str = "ping_p50_ms",
) -> pd.DataFrame:
    """Candlesticks of goodput (Mbit/s) and ping (ms) per setting: of the columns ``by``, or
    else of the congestion control and TSQ columns (those found or given).

    Columns: the setting columns, ``n``, ``goodput_p10/p50/p90`` and ``ping_p10/p50/p90``, one
    row per setting in order of first appearance.
    """
    if by is None:
        by = [c for c in (_first(runs, CC_COLUMNS, cc), _first(runs, TSQ_COLUMNS, tsq)) if c is not None]
    _require(runs, [goodput, ping])
    frame = runs.assign(**{goodput: runs[goodput] / BITS_PER_MBIT})
    table = percentile_table(frame, list(by), {"goodput": goodput, "ping": ping})
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


def open_samples(run: RunLike) -> pd.Series:
    """Per row of ``run.flow_series``: whether the flow was open at the sample, i.e. the sample
    is not after the flow's stop (``flows.stop_s``).

    The core takes one more sample in the step after a flow's stop (world.rs ``sample``:
    ``now <= stop + step``) so the data it delivers then is counted; the sender no longer
    sends and its state is no longer that of a running flow. Figures leave these samples out;
    the tables keep them.
    """
    series = run.flow_series
    stops = dict(zip(run.flows["id"], run.flows["stop_s"], strict=True))
    # Sample times are whole steps printed as seconds: a tolerance of a nanosecond.
    return series["t"] <= series["flow"].map(stops) + 1e-9


def rate_series(run: RunLike | str | os.PathLike[str]) -> pd.DataFrame:
    """Per flow and sample: pacing and delivery rate, the CCA's bw model (Mbit/s), cwnd, and
    ``open`` (:func:`open_samples`).

    ``bw_model_mbps`` is the model value ``bw_bps`` of the BBR family; NaN for the others.
    """
    run = as_run(run)
    series = run.flow_series[["t", "flow", "name", "pacing_rate_bps", "delivery_rate_bps", "cwnd"]]
    series = series.assign(open=open_samples(run))
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
            "open": table["open"],
        }
    )


def goodput_over_time(run: RunLike | str | os.PathLike[str]) -> pd.DataFrame:
    """The run's goodput over time: per sample time ``t`` (s, the end of each step), ``value``,
    the sum of its open flows' goodput over the step (Mbit/s)."""
    run = as_run(run)
    series = run.flow_series[open_samples(run)]
    total = series.groupby("t", sort=True)["goodput_bps"].sum() / BITS_PER_MBIT
    return pd.DataFrame({"t": total.index.to_numpy(dtype=float), "value": total.to_numpy(dtype=float)})


def ping_over_time(run: RunLike | str | os.PathLike[str]) -> pd.DataFrame:
    """The run's ping RTT over time: per step of the scenario (``t``, its end, s), ``value``,
    the median RTT (ms) of the replies to the probes of its main ping (the first ICMP ping, as
    ``ping_p50_ms``) sent in the step; steps without a reply are left out."""
    run = as_run(run)
    ping = _main_ping(run)
    if ping is None:
        return pd.DataFrame({"t": [], "value": []})
    series = run.ping_series[run.ping_series["ping"] == ping["id"]].dropna(subset=["rtt_ms"])
    step = scenarios.duration_ns("step", str(run.scenario["step"]))
    # The step a probe was sent in, by integer nanoseconds: (t_ns // step + 1) steps end it.
    ends = (np.round(series["t"].to_numpy(dtype=float) * scenarios.NSEC_PER_SEC).astype("int64") // step + 1) * step
    median = series.groupby(ends, sort=True)["rtt_ms"].median()
    return pd.DataFrame(
        {"t": median.index.to_numpy(dtype=float) / scenarios.NSEC_PER_SEC, "value": median.to_numpy(dtype=float)}
    )


def over_time_table(groups: Mapping[str, Sequence[RunLike]], quantity: Any) -> pd.DataFrame:
    """Per label and time: ``n`` (runs with a value then) and the 10th, 50th and 90th
    percentiles across the label's runs of ``quantity(run)`` (:func:`goodput_over_time`,
    :func:`ping_over_time`). Labels in the order given, times increasing."""
    frames = [quantity(run).assign(label=label) for label, runs in groups.items() for run in runs]
    frames = [f for f in frames if not f.empty]
    columns = ["label", "t", "n", "p10", "p50", "p90"]
    if not frames:
        return pd.DataFrame(columns=columns)
    table = stats.candlesticks(pd.concat(frames, ignore_index=True), "value", ["label", "t"])
    rank = {label: i for i, label in enumerate(groups)}
    table = table.assign(_rank=table["label"].map(rank)).sort_values(["_rank", "t"], kind="stable")
    return table[columns].reset_index(drop=True)


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
    frame = pd.DataFrame({"label": series_labels(runs, by), "jain": index})
    return percentile_table(frame, ["label"], {"jain": "jain"})


def rrul_table(runs: pd.DataFrame, *, by: Sequence[str] | None = None) -> pd.DataFrame:
    """RRUL per setting (``label``): medians and 10/90th percentiles of upload and download
    goodput (Mbit/s, the sums of each direction's flows) and of the ping median (ms)."""
    _require(runs, ["upload_goodput_bps", "download_goodput_bps", "ping_p50_ms"])
    by = setting_columns(runs) if by is None else list(by)
    frame = runs.assign(
        label=series_labels(runs, by),
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
    return COLORS[index % len(COLORS)]


def series_style(index: int) -> dict[str, Any]:
    """Colour, marker and line style of a figure's series ``index`` (see :data:`COLORS`)."""
    return {
        "color": _color(index),
        "marker": MARKERS[index % len(MARKERS)],
        "linestyle": LINESTYLES[index % len(LINESTYLES)],
    }


def _legend_outside(ax: Any, entries: int, **kwargs: Any) -> None:
    """The legend right of the axes, in columns of at most LEGEND_ROWS entries, so it hides
    no data (constrained layout makes room for it)."""
    ax.legend(
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        fontsize="small",
        ncols=max(1, math.ceil(entries / LEGEND_ROWS)),
        **kwargs,
    )


def fig_goodput_ping(
    runs: pd.DataFrame,
    path_prefix: str | os.PathLike[str],
    *,
    by: Sequence[str] | None = None,
    cc: str | None = None,
    tsq: str | None = None,
    goodput: str = "total_goodput_bps",
    ping: str = "ping_p50_ms",
    title: str = "Goodput versus ping (10th/50th/90th percentiles over runs)",
) -> list[Path]:
    """Goodput (y) against median ping (x), one candlestick cross per setting of ``by`` (default
    the congestion control and TSQ columns), whiskers from the 10th to the 90th percentile over
    repetitions; each setting its own colour and marker (:func:`series_style`)."""
    if by is None:
        by = [c for c in (_first(runs, CC_COLUMNS, cc), _first(runs, TSQ_COLUMNS, tsq)) if c is not None]
    table = goodput_ping_table(runs, by=by, goodput=goodput, ping=ping)
    labels = list(series_labels(table, by))
    fig = Figure(figsize=FIGSIZE, layout="constrained")
    ax = fig.subplots()
    for i, label in enumerate(labels):
        one = table.iloc[[i]]
        style = series_style(i)
        ax.errorbar(
            one["ping_p50"],
            one["goodput_p50"],
            xerr=_whiskers(one, "ping_"),
            yerr=_whiskers(one, "goodput_"),
            fmt=style["marker"],
            color=style["color"],
            capsize=3,
            label=label,
        )
    ax.set_xlabel("median ping RTT under load (ms)" if ping == "ping_p50_ms" else f"ping RTT (ms): {ping}")
    ax.set_ylabel("goodput (Mbit/s)")
    _legend_outside(ax, len(labels))
    return save_figure(fig, title, path_prefix)


def fig_ping_cdf(
    data: Any,
    path_prefix: str | os.PathLike[str],
    *,
    window: str = "load",
    title: str = "Ping RTT under load (CDF)",
) -> list[Path]:
    """Empirical CDF of ping RTTs, one line per label (see :func:`ping_samples`), each in its
    own colour and line style."""
    table = cdf_table(ping_samples(data, window=window))
    if table.empty:
        raise ValueError("data: no ping RTT samples to plot")
    fig = Figure(figsize=FIGSIZE, layout="constrained")
    ax = fig.subplots()
    groups = list(table.groupby("label", sort=False))
    for i, (label, group) in enumerate(groups):
        style = series_style(i)
        ax.step(
            group["rtt_ms"],
            group["p"],
            where="post",
            color=style["color"],
            linestyle=style["linestyle"],
            label=str(label),
        )
    ax.set_xlabel("ping RTT (ms)")
    ax.set_ylabel("cumulative probability")
    _legend_outside(ax, len(groups))
    return save_figure(fig, title, path_prefix)


def fig_pacing_cwnd(
    run: RunLike | str | os.PathLike[str],
    path_prefix: str | os.PathLike[str],
    *,
    title: str = "Pacing rate, bandwidth model and cwnd",
) -> list[Path]:
    """Over time, per flow while it is open (:func:`open_samples`): pacing rate (solid) against
    the CCA's bw model (dashed, BBR family) and delivery rate (dotted); below, cwnd in packets."""
    table = rate_series(run)
    table = table[table["open"]]
    if table.empty:
        raise ValueError("run: no flow samples to plot")
    fig = Figure(figsize=(FIGSIZE[0], 6.0), layout="constrained")
    rate_ax, cwnd_ax = fig.subplots(2, 1, sharex=True)
    for i, (name, group) in enumerate(table.groupby("name", sort=False)):
        rate_ax.plot(group["t"], group["pacing_mbps"], color=_color(i), label=f"{name} pacing rate")
        if group["bw_model_mbps"].notna().any():
            rate_ax.plot(group["t"], group["bw_model_mbps"], "--", color=_color(i), label=f"{name} bw model")
        rate_ax.plot(group["t"], group["delivery_mbps"], ":", color=_color(i), label=f"{name} delivery rate")
        cwnd_ax.plot(
            group["t"], group["cwnd"], color=_color(i), linestyle=LINESTYLES[i % len(LINESTYLES)], label=str(name)
        )
    rate_ax.set_ylabel("rate (Mbit/s)")
    # The rate panel's legend names the line styles, the cwnd panel's the flows (their colours,
    # in columns of at most LEGEND_ROWS), so the legends stay small with many flows.
    styles = [("-", "pacing rate"), ("--", "bw model"), (":", "delivery rate")]
    if table["bw_model_mbps"].isna().all():
        styles.remove(("--", "bw model"))
    handles = [Line2D([], [], linestyle=style, color="black", label=label) for style, label in styles]
    _legend_outside(rate_ax, len(handles), handles=handles)
    _legend_outside(cwnd_ax, len(cwnd_ax.get_lines()))
    cwnd_ax.set_ylabel("cwnd (packets)")
    cwnd_ax.set_xlabel("time (s)")
    return save_figure(fig, title, path_prefix)


def fig_over_time(
    table: pd.DataFrame,
    path_prefix: str | os.PathLike[str],
    *,
    ylabel: str,
    title: str,
    window: tuple[float, float] | None = None,
) -> list[Path]:
    """An :func:`over_time_table`: per label the median across runs (line, in the label's
    colour and line style) and the band from the 10th to the 90th percentile; ``window`` (s)
    marks the span the summaries count (Flent's loaded window) with dashed grey lines."""
    if table.empty:
        raise ValueError("table: no samples to plot")
    fig = Figure(figsize=FIGSIZE, layout="constrained")
    ax = fig.subplots()
    labels = list(dict.fromkeys(table["label"]))
    for i, label in enumerate(labels):
        part = table[table["label"] == label]
        style = series_style(i)
        ax.fill_between(part["t"], part["p10"], part["p90"], color=style["color"], alpha=0.2, linewidth=0)
        ax.plot(part["t"], part["p50"], color=style["color"], linestyle=style["linestyle"], label=str(label))
    if window is not None:
        for edge in window:
            ax.axvline(edge, color="grey", linestyle="--", linewidth=0.8)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    _legend_outside(ax, len(labels))
    return save_figure(fig, title, path_prefix)


def _bars(labels: Sequence[str], groups: Sequence[tuple[str, pd.DataFrame, str, Any]]) -> None:
    """Grouped bars of p50 with 10/90 whiskers: one group per label, one bar per series.

    A series is (name, table, column prefix, axes); the first series' axes get the labels,
    turned so they do not overlap (:func:`_fit_tick_labels`).
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
            hatch=(None, "//", "..", "xx")[i % 4],
            label=name,
        )
    groups[0][3].set_xticks(x, labels)
    _fit_tick_labels(groups[0][3])


def _fit_tick_labels(ax: Any) -> None:
    """Turn the x tick labels of ``ax`` by 30, then 60, then 90 degrees until no two overlap
    (:func:`overlapping_text`, after a layout)."""
    for angle in (0, 30, 60, 90):
        for label in ax.get_xticklabels():
            label.set_rotation(angle)
            label.set_horizontalalignment("center" if angle in (0, 90) else "right")
            label.set_rotation_mode("anchor" if angle not in (0, 90) else "default")
        if not overlapping_text(ax.figure):
            return


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
        series.append((human_value(group) if group is not None else "A-MPDU", part, "ampdu_", ax))
    _bars([human_value(t) for t in tsqs], series)
    ax.set_xlabel("TSQ")
    ax.set_ylabel("MPDUs per A-MPDU")
    if by:
        _legend_outside(ax, len(groups))
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
        label = "measured" if group is None else human_value(group)
        style = series_style(i)
        for ax, prefix in ((rate_ax, "goodput_"), (rtt_ax, "rtt_")):
            ax.errorbar(
                part["k"],
                part[f"{prefix}p50"],
                yerr=_whiskers(part, prefix),
                fmt=style["marker"],
                color=style["color"],
                capsize=3,
                label=label,
            )
    rate_ax.set_ylabel("goodput (Mbit/s)")
    _legend_outside(rate_ax, len(groups) + 1)
    rtt_ax.set_ylabel("RTT (ms)")
    rtt_ax.set_xlabel("static TSQ limit k (packets)")
    _legend_outside(rtt_ax, len(groups) + 1)
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
    """Median Jain index per setting (horizontal bars, one row per setting so no two labels
    meet) with 10th-90th percentile whiskers."""
    table = fairness_table(runs, by=by)
    rows = len(table)
    # 0.3 inch per setting's row (a small label is about 0.15 inch high) and 1.5 inch for the
    # title and the axis.
    fig = Figure(figsize=(FIGSIZE[0], 1.5 + 0.3 * max(rows, 3)), layout="constrained")
    ax = fig.subplots()
    y = np.arange(rows)
    ax.barh(
        y,
        table["jain_p50"],
        xerr=_whiskers(table, "jain_"),
        capsize=3,
        color=[_color(i) for i in range(rows)],
    )
    ax.set_yticks(y, list(table["label"]))
    ax.invert_yaxis()
    ax.set_xlabel("Jain's index")
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
    ping_ax.legend(
        handles[0] + ping_handles[0],
        handles[1] + ping_handles[1],
        fontsize="small",
        loc="upper left",
        bbox_to_anchor=(1.12, 1.0),
    )
    return save_figure(fig, title, path_prefix)


# ---------------------------------------------------------------------------------------------
# Checks of a drawn figure


def _renderer(fig: Figure) -> Any:
    """A renderer of ``fig`` after a full layout (an Agg canvas, whatever the backend)."""
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def overlapping_text(fig: Figure) -> list[tuple[str, str]]:
    """Pairs of texts of ``fig`` whose boxes overlap by more than a pixel each way: among the
    tick labels of each axis of each axes, and between the texts placed on an axes
    (annotations) and those labels."""
    renderer = _renderer(fig)
    found = []
    for ax in fig.axes:
        # A twin axes hides its shared axis (matplotlib's twinx: xaxis.set_visible(False)).
        groups = [axis.get_ticklabels() for axis in (ax.xaxis, ax.yaxis) if axis.get_visible()]
        placed = [t for t in ax.texts if t.get_visible() and t.get_text()]
        for labels in groups:
            shown = [t for t in labels if t.get_visible() and t.get_text()] + placed
            boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in shown]
            for i, (a, box_a) in enumerate(boxes):
                for b, box_b in boxes[i + 1 :]:
                    width = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
                    height = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
                    if width > 1 and height > 1:
                        found.append((a, b))
    return list(dict.fromkeys(found))


def clipped_points(fig: Figure) -> list[str]:
    """What ``fig`` draws outside its axes' limits: a data point of a line (a marked point on
    the limit counts, as half of its marker is cut), or any artist's data beyond the limits."""
    _renderer(fig)
    found = []
    for n, ax in enumerate(fig.axes):
        (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
        for line in ax.get_lines():
            if line.get_transform() != ax.transData:
                continue
            x = np.asarray(line.get_xdata(), dtype=float)
            y = np.asarray(line.get_ydata(), dtype=float)
            keep = np.isfinite(x) & np.isfinite(y)
            x, y = x[keep], y[keep]
            if line.get_marker() not in (None, "None", "", " "):
                outside = (x <= x0) | (x >= x1) | (y <= y0) | (y >= y1)
            else:
                outside = (x < x0) | (x > x1) | (y < y0) | (y > y1)
            if outside.any():
                i = int(np.argmax(outside))
                found.append(
                    f"axes {n}, {line.get_label()}: ({x[i]:g}, {y[i]:g}) outside x {x0:g}..{x1:g}, y {y0:g}..{y1:g}"
                )
        data = ax.dataLim
        if np.isfinite(data.bounds).all() and (data.x0 < x0 or data.x1 > x1 or data.y0 < y0 or data.y1 > y1):
            found.append(
                f"axes {n}: data {data.x0:g}..{data.x1:g} x {data.y0:g}..{data.y1:g} "
                f"beyond x {x0:g}..{x1:g}, y {y0:g}..{y1:g}"
            )
    return found


# ---------------------------------------------------------------------------------------------
# Every figure of a directory

# A written figure: its caption and its files (PNG, SVG).
Drawn = tuple[str, list[Path]]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.=+-]+", "_", text).strip("_") or "all"


def _named(settings: Sequence[str], names: Sequence[str]) -> str | None:
    return next((c for c in settings if short_name(c) in names), None)


def plot_run(run: RunLike | str | os.PathLike[str], out: str | os.PathLike[str]) -> list[Drawn]:
    """The figures of one run into ``out``: series, ping CDF, goodput and ping over time, and
    RRUL bars for two directions."""
    run = as_run(run)
    out = Path(out)
    drawn: list[Drawn] = []
    window = load_window(run)
    if not run.flow_series.empty:
        drawn.append(("Pacing rate, bw model and cwnd per flow", fig_pacing_cwnd(run, out / "series")))
    if not run.ping_series.empty:
        drawn.append(("Ping RTT CDF while the flows run", fig_ping_cdf(run, out / "ping_cdf")))
    for caption, stem, quantity, unit in OVER_TIME:
        table = over_time_table({"run": [run]}, quantity)
        if not table.empty:
            drawn.append((caption, fig_over_time(table, out / stem, ylabel=unit, title=caption, window=window)))
    row = run_row(run)
    if row["upload_goodput_bps"] > 0 and row["download_goodput_bps"] > 0:
        drawn.append(("RRUL: upload, download, ping", fig_rrul(pd.DataFrame([row]), out / "rrul", by=[])))
    return drawn


# The figures over time of a run or of each setting: caption, file stem, the quantity per run,
# the y axis label.
OVER_TIME = (
    ("Goodput over time", "goodput_time", goodput_over_time, "goodput (Mbit/s)"),
    ("Ping RTT over time", "ping_time", ping_over_time, "ping RTT (ms)"),
)


def plot_sweep(sweep: Sweep | str | os.PathLike[str], out: str | os.PathLike[str]) -> list[Drawn]:
    """The figures of a sweep into ``out``, each where the runs table supports it.

    Setting columns named in :data:`PANEL_NAMES` (the chipset) split the per-setting figures
    into one figure per value, as the studies draw one per chipset; in each, every other
    setting column is part of the series (labels by :func:`series_labels`). Per panel: goodput
    versus ping, the ping CDF, and goodput and ping over time (median across repetitions with
    the 10th-90th percentile band). The series figures show the first run of each of the first
    :data:`MAX_SERIES_FIGURES` settings.
    """
    sweep = sweep if isinstance(sweep, Sweep) else load_sweep(sweep)
    out = Path(out)
    table, settings = sweep.table, sweep.settings
    cc = _named(settings, ("cc",))
    tsq = _named(settings, ("tsq",))
    panel_columns = [c for c in settings if short_name(c) in PANEL_NAMES]
    series_columns = [c for c in settings if c not in panel_columns]
    drawn: list[Drawn] = []
    panels = series_labels(table, panel_columns)
    lines = series_labels(table, series_columns)
    for panel in dict.fromkeys(panels):
        rows = table[panels == panel]
        suffix = "" if not panel_columns else f"-{_slug(panel)}"
        where = "" if not panel_columns else f" ({panel})"
        groups: dict[str, list[SavedRun]] = {}
        for i, run in zip(table.index, sweep.runs, strict=True):
            if i in rows.index:
                groups.setdefault(lines[i], []).append(run)
        if not rows["ping_p50_ms"].isna().all():
            title = f"Goodput versus ping{where}: 10th/50th/90th percentiles over runs"
            pairs = fig_goodput_ping(rows, out / f"goodput_ping{suffix}", by=series_columns, title=title)
            drawn.append((f"Goodput versus ping{where}", pairs))
            samples = pd.concat(
                [ping_samples(run).assign(label=label) for label, runs in groups.items() for run in runs],
                ignore_index=True,
            )
            cdf = fig_ping_cdf(samples, out / f"ping_cdf{suffix}", title=f"Ping RTT under load (CDF){where}")
            drawn.append((f"Ping RTT CDF{where}", cdf))
        window = load_window(next(iter(groups.values()))[0])
        for caption, stem, quantity, unit in OVER_TIME:
            over_time = over_time_table(groups, quantity)
            if not over_time.empty:
                title = f"{caption}{where}: median and 10th-90th percentiles over runs"
                figure = fig_over_time(over_time, out / f"{stem}{suffix}", ylabel=unit, title=title, window=window)
                drawn.append((f"{caption}{where}", figure))
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
    labels = list(series_labels(table, settings))
    for label in list(dict.fromkeys(labels))[:MAX_SERIES_FIGURES]:
        first = labels.index(label)
        run = sweep.runs[first]
        if run.flow_series.empty:
            continue
        title = f"Pacing rate, bw model and cwnd: {label}, seed {run.scenario['seed']}"
        series = fig_pacing_cwnd(run, out / f"series-{_slug(label)}", title=title)
        drawn.append((f"Series of one run ({label})", series))
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
