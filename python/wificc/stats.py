"""Statistics across runs, in the style of the published Wi-Fi congestion-control studies.

Every function takes a DataFrame (``runs.parquet`` of a sweep, a run's ``flows`` table, the
concatenation of several) and returns a DataFrame with one row per group of ``by`` (a column
name or a list of them; none for one row over the whole table), groups in order of first
appearance. Missing values (NaN, e.g. the percentiles of a ping that got no reply) are left
out and the number of values used is reported as ``n``.

- :func:`candlesticks`: 10th/50th/90th percentiles plus min, max and mean, the whiskers of the
  studies' goodput-versus-latency figures. Percentiles interpolate linearly between order
  statistics (numpy's default, Hyndman and Fan type 7).
- :func:`ecdf`: the empirical CDF, one row per distinct value: the fraction of values <= it.
- :func:`mean_ci`: mean with a Student-t confidence interval, mean +- t(1 - (1 - c)/2, n - 1)
  s / sqrt(n), s the sample standard deviation.
- :func:`anova`: one-way ANOVA (``scipy.stats.f_oneway``) of a metric across the groups of a
  column (e.g. the CCAs), as in the BBR-n study's tables: F, p and the degrees of freedom
  (k - 1 between, N - k within).
- :func:`jain`: Jain's fairness index (sum x)^2 / (n sum x^2) of the values of each group.
- :func:`mahimahi_delays`: Mahimahi's p95 per-packet queueing delay and p95 signal delay from
  per-packet records (departure time and queueing delay, as in an mm-link log), computed as
  ``mm-throughput-graph`` does.
- :func:`queue_delays`: the same two figures of one queue, read from the summary columns the
  simulator computes per run (``<queue>_sojourn_p95_ms``, ``<queue>_signal_delay_p95_ms``),
  averaged over the runs of each group.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

# Percentiles of a candlestick (the studies' whiskers and median).
CANDLE_PERCENTILES = (10, 50, 90)
# Mahimahi's quantile of both delay figures.
MAHIMAHI_QUANTILE = 0.95
# Mahimahi bins signal delay by the millisecond a packet entered the link.
MAHIMAHI_BIN_MS = 1.0

By = str | Sequence[str] | None


def _keys(frame: pd.DataFrame, by: By, role: str = "by") -> list[str]:
    keys = [] if by is None else [by] if isinstance(by, str) else list(by)
    for key in keys:
        if key not in frame.columns:
            raise ValueError(f"{role}: got {key!r}, expected a column of the table ({', '.join(map(str, frame))})")
    return keys


def _numbers(frame: pd.DataFrame, column: str, role: str = "metric") -> pd.Series:
    """The non-missing values of a numeric column; an error names a missing or text column."""
    if column not in frame.columns:
        raise ValueError(f"{role}: got {column!r}, expected a column of the table ({', '.join(map(str, frame))})")
    values = frame[column]
    if not (pd.api.types.is_numeric_dtype(values) or values.isna().all()):
        raise ValueError(f"{role}: column {column!r} holds non-numeric values, expected numbers")
    return values.dropna().astype("float64")


def _per_group(frame: pd.DataFrame, by: By, compute: Callable[[pd.DataFrame], list[dict[str, Any]]]) -> pd.DataFrame:
    """Rows of ``compute(group)`` for each group, prefixed by the group's key columns."""
    keys = _keys(frame, by)
    rows: list[dict[str, Any]] = []
    if not keys:
        rows = compute(frame)
    else:
        for key, group in frame.groupby(keys, sort=False, dropna=False):
            values = dict(zip(keys, key, strict=True))
            rows.extend({**values, **row} for row in compute(group))
    return pd.DataFrame.from_records(rows)


def candlesticks(frame: pd.DataFrame, metric: str, by: By = None) -> pd.DataFrame:
    """Per group: n, min, p10, p50, p90, max and mean of ``metric``."""
    _numbers(frame, metric)

    names = ["min", *(f"p{q}" for q in CANDLE_PERCENTILES), "max", "mean"]

    def compute(group: pd.DataFrame) -> list[dict[str, Any]]:
        x = _numbers(group, metric).to_numpy()
        if x.size == 0:
            return [{"n": 0, **dict.fromkeys(names, math.nan)}]
        values = [x.min(), *np.percentile(x, CANDLE_PERCENTILES), x.max(), x.mean()]
        return [{"n": int(x.size), **{k: float(v) for k, v in zip(names, values, strict=True)}}]

    return _per_group(frame, by, compute)


def ecdf(frame: pd.DataFrame, metric: str, by: By = None) -> pd.DataFrame:
    """Per group, one row per distinct value: ``value``, ``n`` (values of the group), ``cdf``."""
    _numbers(frame, metric)

    def compute(group: pd.DataFrame) -> list[dict[str, Any]]:
        x = _numbers(group, metric).to_numpy()
        distinct, counts = np.unique(x, return_counts=True)
        at_most = np.cumsum(counts)
        return [
            {"value": float(v), "n": int(x.size), "cdf": float(c) / x.size}
            for v, c in zip(distinct, at_most, strict=True)
        ]

    return _per_group(frame, by, compute)


def mean_ci(frame: pd.DataFrame, metric: str, by: By = None, confidence: float = 0.95) -> pd.DataFrame:
    """Per group: n, mean, std (n - 1), ci_low, ci_high of a Student-t interval at ``confidence``.

    One value gives a NaN interval (no spread to estimate).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence: got {confidence!r}, expected a probability between 0 and 1")
    _numbers(frame, metric)

    def compute(group: pd.DataFrame) -> list[dict[str, Any]]:
        x = _numbers(group, metric).to_numpy()
        n = int(x.size)
        mean = float(x.mean()) if n else math.nan
        std = float(x.std(ddof=1)) if n > 1 else math.nan
        half = float(sps.t.ppf(0.5 + confidence / 2, n - 1)) * std / math.sqrt(n) if n > 1 else math.nan
        return [{"n": n, "mean": mean, "std": std, "ci_low": mean - half, "ci_high": mean + half}]

    return _per_group(frame, by, compute)


def anova(frame: pd.DataFrame, metric: str, group: str, by: By = None) -> pd.DataFrame:
    """One-way ANOVA of ``metric`` across the values of column ``group``, per group of ``by``.

    Columns: groups (k), n (N), F, p, df_between (k - 1), df_within (N - k). Needs at least two
    groups with values and more values than groups; otherwise F and p are NaN.
    """
    _numbers(frame, metric)
    _keys(frame, group, "group")

    def compute(sub: pd.DataFrame) -> list[dict[str, Any]]:
        samples = [x for _, part in sub.groupby(group, sort=False, dropna=False) if (x := _numbers(part, metric)).size]
        k = len(samples)
        n = sum(len(x) for x in samples)
        f, p = (math.nan, math.nan)
        if k >= 2 and n > k:
            result = sps.f_oneway(*samples)
            f, p = float(result.statistic), float(result.pvalue)
        return [{"groups": k, "n": n, "F": f, "p": p, "df_between": k - 1, "df_within": n - k}]

    return _per_group(frame, by, compute)


def jain_index(values: Sequence[float] | np.ndarray) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2): 1 for equal shares, 1/n for one taker.

    NaN for no values or all zero (the core reports None there).
    """
    x = [float(v) for v in values]
    # Exact sums (math.fsum), as Flent's FairnessRunner.
    squares = math.fsum(v * v for v in x)
    return math.fsum(x) ** 2 / (len(x) * squares) if x and squares > 0 else math.nan


def jain(frame: pd.DataFrame, metric: str, by: By = None) -> pd.DataFrame:
    """Per group: n and Jain's index of ``metric`` (e.g. goodput_bps of the flows of each run)."""
    _numbers(frame, metric)

    def compute(group: pd.DataFrame) -> list[dict[str, Any]]:
        x = _numbers(group, metric).to_numpy()
        return [{"n": int(x.size), "jain": jain_index(x)}]

    return _per_group(frame, by, compute)


def _mahimahi_quantile(values: np.ndarray) -> float:
    """Mahimahi's percentile: the sorted value at index floor(0.95 n)."""
    ordered = np.sort(values)
    return float(ordered[int(MAHIMAHI_QUANTILE * ordered.size)]) if ordered.size else math.nan


def signal_delays(departure_ms: np.ndarray, delay_ms: np.ndarray) -> pd.Series:
    """Mahimahi's signal delay of every millisecond, indexed by millisecond.

    The signal delay of millisecond b is the least time any packet that entered the link during
    b took to leave it, counted from the start of b (for mm-link's integer-millisecond logs:
    the least queueing delay of a packet that arrived at b). A millisecond in which no
    delivered packet arrived takes the value of the next one plus 1 ms: a message created then
    waits until that millisecond, then as long as its best packet.
    """
    arrival_bin = np.floor((departure_ms - delay_ms) / MAHIMAHI_BIN_MS).astype("int64")
    since_bin = departure_ms - arrival_bin * MAHIMAHI_BIN_MS
    best = pd.Series(since_bin).groupby(arrival_bin).min()
    bins = np.arange(best.index.min(), best.index.max() + 1)
    # value + bin is constant while filling backwards by +1 ms per millisecond.
    shifted = (best + best.index * MAHIMAHI_BIN_MS).reindex(bins).bfill()
    return shifted - bins * MAHIMAHI_BIN_MS


def mahimahi_delays(
    packets: pd.DataFrame, by: By = None, departure: str = "departure_ms", delay: str = "delay_ms"
) -> pd.DataFrame:
    """Per group: packets, queueing_delay_p95_ms and signal_delay_p95_ms, as mm-throughput-graph.

    ``packets`` has one row per delivered packet: its departure time and its queueing delay in
    milliseconds (the ``-`` lines of an mm-link log). Both percentiles are Mahimahi's: the
    sorted value at index floor(0.95 n), over packets for the queueing delay and over the
    milliseconds from the first to the last packet arrival for the signal delay.
    """
    _numbers(packets, departure, "departure")
    _numbers(packets, delay, "delay")

    def compute(group: pd.DataFrame) -> list[dict[str, Any]]:
        rows = group[[departure, delay]].dropna().astype("float64")
        if (rows[delay] < 0).any() or (rows[departure] < rows[delay]).any():
            bad = rows[(rows[delay] < 0) | (rows[departure] < rows[delay])].iloc[0]
            raise ValueError(
                f"{delay}: got {bad[delay]:g} at {departure} {bad[departure]:g}, expected a delay "
                "between 0 and the departure time"
            )
        dep = rows[departure].to_numpy()
        d = rows[delay].to_numpy()
        signal = signal_delays(dep, d).to_numpy() if dep.size else np.array([])
        return [
            {
                "packets": int(dep.size),
                "queueing_delay_p95_ms": _mahimahi_quantile(d),
                "signal_delay_p95_ms": _mahimahi_quantile(signal),
            }
        ]

    return _per_group(packets, by, compute)


def queue_delays(runs: pd.DataFrame, queue: str, by: By = None) -> pd.DataFrame:
    """Per group of runs: n and the mean over runs of one queue's p95 delays.

    ``queueing_delay_p95_ms`` (the column ``<queue>_sojourn_p95_ms``) and
    ``signal_delay_p95_ms`` (``<queue>_signal_delay_p95_ms``, NaN for a queue that is not a
    trace link), from the summary columns of ``runs.parquet``.
    """
    columns = {
        "queueing_delay_p95_ms": f"{queue}_sojourn_p95_ms",
        "signal_delay_p95_ms": f"{queue}_signal_delay_p95_ms",
    }
    for column in columns.values():
        if column not in runs.columns:
            queues = sorted(c.removesuffix("_sojourn_p95_ms") for c in runs if c.endswith("_sojourn_p95_ms"))
            raise ValueError(f"queue: got {queue!r}, expected a queue of the runs ({', '.join(queues)})")

    def compute(group: pd.DataFrame) -> list[dict[str, Any]]:
        row: dict[str, Any] = {"n": len(group)}
        for name, column in columns.items():
            x = _numbers(group, column)
            row[name] = float(x.mean()) if x.size else math.nan
        return [row]

    return _per_group(runs, by, compute)
