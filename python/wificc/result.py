"""The results of one run as pandas DataFrames, and their Parquet files.

The core returns one JSON document per run (``crates/wificc-core/src/metrics/results.rs``
plus the normalised ``scenario``): a run summary, one summary record per flow, ping and
watched queue, and the series sampled every STEP. :class:`Result` turns the records into one
DataFrame row each and the series into long tables keyed by time and entity (``flow``,
``ping`` or ``queue`` id, with the entity's ``name``), the shape pandas groups and plots and
that concatenates across runs. ``model_series`` is the congestion control's internal model in
long form: ``name`` there is the model quantity (``bw``, ``min_rtt``, ...).

:meth:`Result.save` writes one Parquet file per table and ``scenario.json`` into a temporary
directory beside the target and renames it into place, so a reader sees either the old
directory or the complete new one, never a partial run.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

# Columns of the series tables with their dtypes.
FLOW_SERIES_COLUMNS: dict[str, str] = {
    "t": "float64",
    "flow": "int64",
    "name": "str",
    "goodput_bps": "float64",
    "srtt_ms": "float64",
    "cwnd": "int64",
    "ssthresh": "int64",
    "pacing_rate_bps": "float64",
    "delivery_rate_bps": "float64",
    "inflight": "int64",
    "tsq_bytes": "int64",
    "retrans": "int64",
}
MODEL_SERIES_COLUMNS: dict[str, str] = {
    "t": "float64",
    "flow": "int64",
    "name": "str",
    "value": "float64",
}
PING_SERIES_COLUMNS: dict[str, str] = {
    "t": "float64",
    "ping": "int64",
    "name": "str",
    "rtt_ms": "float64",
}
QUEUE_SERIES_COLUMNS: dict[str, str] = {
    "t": "float64",
    "queue": "int64",
    "name": "str",
    "packets": "int64",
    "bytes": "int64",
    "drops": "int64",
}
WIFI_SERIES_COLUMNS: dict[str, str] = {
    "t": "float64",
    "bss": "int64",
    "name": "str",
    "node": "int64",
    "ampdu_mean": "float64",
    "ampdu_p10": "float64",
    "ampdu_p50": "float64",
    "ampdu_p90": "float64",
    "airtime": "float64",
    "collisions": "int64",
    "mpdu_retries": "int64",
    "backlog": "int64",
}
# The flow series' fields that hold the model in long form: model_series column -> field.
MODEL_FIELDS = {"t": "model_t", "name": "model_name", "value": "model_value"}

# The run summary's field with the run's peak resident memory, bytes (wificc.memory).
PEAK_FIELD = "peak_rss_bytes"
# Summary fields that measure the host, not the model: they differ from run to run of the same
# scenario and seed, and every comparison of results leaves them out.
HOST_FIELDS = ("wall_s", "speed", "events_per_s", PEAK_FIELD)

# Files of a saved run, without scenario.json: table name -> file name.
TABLE_FILES = {
    name: f"{name}.parquet"
    for name in (
        "summary",
        "flows",
        "pings",
        "queues",
        "wifi",
        "flow_series",
        "model_series",
        "ping_series",
        "queue_series",
        "wifi_series",
    )
}
SCENARIO_FILE = "scenario.json"


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Scenario parameters as one flat record, keyed by the core's field paths.

    ``{"path": {"rate": "50mbit"}, "flows": [{"cc": "bbr"}]}`` gives ``{"path.rate":
    "50mbit", "flows[0].cc": "bbr"}``; lists of plain values become JSON text, so every
    value fits one table cell.
    """
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(value, list) and any(isinstance(item, Mapping) for item in value):
        out = {}
        for i, item in enumerate(value):
            out.update(flatten(item, f"{prefix}[{i}]"))
        return out
    if isinstance(value, list):
        return {prefix: json.dumps(value)}
    return {prefix: value}


def _records(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per record, id and name first; optional numbers (JSON null) become NaN floats."""
    frame = pd.DataFrame.from_records(rows)
    for column in frame.columns:
        values = frame[column]
        if values.dtype == object and all(v is None or isinstance(v, int | float) for v in values):
            frame[column] = values.astype("float64")
    keys = [c for c in ("id", "name") if c in frame]
    return frame[[*keys, *(c for c in frame.columns if c not in keys)]]


def _series(
    entities: list[dict[str, Any]],
    key: str,
    columns: Mapping[str, str],
    fields: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Long table of the series of several entities: their columns stacked, with id and name.

    ``fields`` maps a column to the entity's field that holds it when the names differ.
    """
    fields = fields or {}
    data: dict[str, list[Any]] = {c: [] for c in columns}
    for entity in entities:
        n = len(entity[fields.get("t", "t")])
        for column in columns:
            source = fields.get(column, column)
            if column == key:
                data[column].extend([entity["id"]] * n)
            elif source == "name":
                data[column].extend([entity["name"]] * n)
            else:
                data[column].extend(entity[source])
    frame = pd.DataFrame(data)
    for column, dtype in columns.items():
        frame[column] = frame[column].astype(dtype)
    return frame


class Result:
    """One run: summary dict, one-row-per-entity summaries and long series, as DataFrames."""

    def __init__(self, text: str):
        self._text = text
        self.raw: dict[str, Any] = json.loads(text)
        self.scenario: dict[str, Any] = self.raw["scenario"]
        self.summary: dict[str, Any] = dict(self.raw["summary"])
        self.flows = _records(self.raw["flows"])
        self.pings = _records(self.raw["pings"])
        self.queues = _records(self.raw["queues"])
        self.wifi = _records(self.raw.get("wifi", []))
        series = self.raw["series"]
        self.flow_series = _series(series["flows"], "flow", FLOW_SERIES_COLUMNS)
        self.model_series = _series(series["flows"], "flow", MODEL_SERIES_COLUMNS, MODEL_FIELDS)
        self.ping_series = _series(series["pings"], "ping", PING_SERIES_COLUMNS)
        self.queue_series = _series(series["queues"], "queue", QUEUE_SERIES_COLUMNS)
        self.wifi_series = _series(series.get("wifi", []), "bss", WIFI_SERIES_COLUMNS)

    @classmethod
    def from_json(cls, text: str) -> Result:
        """Rebuild a result from :meth:`to_json` (or from ``wificc._core.run``)."""
        return cls(text)

    def to_json(self) -> str:
        """The core's results document, with the normalised scenario under ``"scenario"``."""
        return self._text

    @property
    def parameters(self) -> dict[str, Any]:
        """The normalised scenario as one flat record (see :func:`flatten`)."""
        return flatten(self.scenario)

    def summary_row(self) -> dict[str, Any]:
        """Parameters and run summary in one record: the row of ``summary.parquet``."""
        return {**self.parameters, **self.summary}

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table of the run by name, in the order of :data:`TABLE_FILES`."""
        return {
            "summary": pd.DataFrame([self.summary_row()]),
            "flows": self.flows,
            "pings": self.pings,
            "queues": self.queues,
            "wifi": self.wifi,
            "flow_series": self.flow_series,
            "model_series": self.model_series,
            "ping_series": self.ping_series,
            "queue_series": self.queue_series,
            "wifi_series": self.wifi_series,
        }

    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write the run into ``directory`` (replacing it) as Parquet tables and scenario.json."""
        target = Path(directory)
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = staging_path(target)
        staging.mkdir()
        try:
            for name, frame in self.tables().items():
                frame.to_parquet(staging / TABLE_FILES[name], index=False)
            (staging / SCENARIO_FILE).write_text(json.dumps(self.scenario, indent=2) + "\n")
            sync_tree(staging)
            _replace_dir(staging, target)
            sync_dir(target.parent)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return target

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"<wificc.Result {len(self.flows)} flows, {len(self.pings)} pings, "
            f"{s['duration_s']:g} s simulated, total goodput {s['total_goodput_bps'] / 1e6:.2f} Mbit/s>"
        )


class SavedRun:
    """A run read back from its directory, with the attributes of the :class:`Result` that
    wrote it: ``scenario``, ``summary`` and one DataFrame per table of :data:`TABLE_FILES`
    (``flows``, ``flow_series``, ...), plus its ``directory``.

    ``summary`` is the run summary alone (``summary.parquet`` also holds the parameters). A
    table is read from its file when first used, so reading many runs for a few of their
    tables stays quick.
    """

    def __init__(self, directory: Path, scenario: dict[str, Any], summary: dict[str, Any]):
        self.directory = directory
        self.scenario = scenario
        self.summary = summary

    def __getattr__(self, name: str) -> pd.DataFrame:
        if name == "summary" or name not in TABLE_FILES:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        frame = pd.read_parquet(self.directory / TABLE_FILES[name])
        setattr(self, name, frame)
        return frame


def load(directory: str | os.PathLike[str]) -> SavedRun:
    """Read a run directory written by :meth:`Result.save`."""
    path = Path(directory)
    missing = [f for f in (SCENARIO_FILE, *TABLE_FILES.values()) if not (path / f).is_file()]
    if missing:
        raise ValueError(
            f"run: {str(path)!r} has no {missing[0]}; expected a run directory written by "
            "Result.save or `wificc run --out`"
        )
    scenario = json.loads((path / SCENARIO_FILE).read_text())
    parameters = flatten(scenario)
    row = pd.read_parquet(path / TABLE_FILES["summary"]).to_dict("records")[0]
    # The run summary repeats the scenario's seed; no other parameter is a summary field.
    summary = {k: v for k, v in row.items() if k not in parameters or k == "seed"}
    return SavedRun(path, scenario, summary)


RunLike = Result | SavedRun


def as_run(run: RunLike | str | os.PathLike[str]) -> RunLike:
    """``run`` itself when it is a result, else the run saved in that directory."""
    return run if isinstance(run, Result | SavedRun) else load(run)


def staging_path(target: Path) -> Path:
    """A fresh hidden name beside ``target``, for writing before the rename into place."""
    return target.parent / f".{target.name}.{os.getpid()}.{uuid.uuid4().hex}"


def sync_dir(directory: Path) -> None:
    """fsync a directory: the names created or renamed in it are on disk."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_file(path: Path) -> None:
    """fsync one file: its contents are on disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_tree(directory: Path) -> None:
    """fsync every file of ``directory`` (not below it), then the directory itself."""
    for entry in directory.iterdir():
        if entry.is_file():
            sync_file(entry)
    sync_dir(directory)


def write_file(target: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``target`` (creating its directory) through a file renamed into place."""
    path = Path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = staging_path(path)
    try:
        staging.write_bytes(data)
        os.replace(staging, path)
    except BaseException:
        staging.unlink(missing_ok=True)
        raise
    return path


def _replace_dir(staging: Path, target: Path) -> None:
    """Rename ``staging`` to ``target``; an existing ``target`` is moved aside, then removed."""
    if not target.exists():
        os.rename(staging, target)
        return
    old = staging_path(target)
    os.rename(target, old)
    try:
        os.rename(staging, target)
    except OSError:
        os.rename(old, target)
        raise
    shutil.rmtree(old)
