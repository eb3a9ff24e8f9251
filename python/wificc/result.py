"""The results of one run as pandas DataFrames, and their Parquet files.

The core returns one JSON document per run (``crates/wificc-core/src/metrics/results.rs``
plus the normalised ``scenario``): a run summary, one summary record per flow, ping and
watched queue, and the series sampled every STEP. :class:`Result` turns the records into one
DataFrame row each and the series into long tables keyed by time and entity (``flow``,
``ping`` or ``queue`` id, with the entity's ``name``), the shape pandas groups and plots and
that concatenates across runs. ``model_series`` is the congestion control's internal model in
long form: ``name`` there is the model quantity (``bw_bps``, ``min_rtt_us``, ...), and ``label``
names the value of a coded quantity (BBR's ``mode`` 2 is ``PROBE_BW``). :data:`COLUMNS` gives
every column of every table its unit and meaning (``docs/results.md`` is generated from it).

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
from functools import cache
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
    "label": "str",
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
# model_series' column that names a coded quantity's value (computed here, not by the core).
LABEL_COLUMN = "label"


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

# What each table holds: one sentence per table of TABLE_FILES, in that order (docs/results.md).
TABLE_ABOUT: dict[str, str] = {
    "summary": "One row: the run summary, and every scenario field flattened to a column.",
    "flows": "One row per TCP flow, over its measurement window [start + warmup, stop].",
    "pings": "One row per latency probe stream.",
    "queues": "One row per watched queue (each link's qdisc, a trace link's queue).",
    "wifi": "One row per Wi-Fi node (the access point is node 0, then the stations), after the warm-up.",
    "flow_series": "Each flow's state every `step` while it is active (long form: one row per flow and sample).",
    "model_series": "Each flow's congestion-control model every `step` (long form: one row per flow, sample "
    "and quantity). The quantities are the algorithm's own (`wificc cc show NAME`).",
    "ping_series": "One row per ping reply.",
    "queue_series": "Each watched queue's backlog every `step`.",
    "wifi_series": "Each Wi-Fi node's aggregation and airtime every `step`, over the step ending at `t`.",
}
# A column of the summary table that is a scenario field: its entry in COLUMNS["summary"].
PARAMETER_COLUMNS = "<scenario field>"
# Every column of every table, with its unit and meaning: the one definition docs/results.md is
# generated from (wificc.reference), and the tests check each table a run writes against it.
COLUMNS: dict[str, dict[str, tuple[str, str]]] = {
    "summary": {
        PARAMETER_COLUMNS: (
            "as written",
            "Each scenario field by its dotted path (`path.rate`, `flows[0].cc`, `stack.tsq`), "
            "with every default filled in; lists of plain values as JSON text (docs/scenario.md).",
        ),
        "model": ("", "Fingerprint of the simulator's sources that ran it (16 hex digits)."),
        "kernel": ("", "The kernel profile the hosts ran (`stack.kernel`, default the newest)."),
        "duration_s": ("s", "Simulated time."),
        "warmup_s": ("s", "Time the summaries ignore at the start."),
        "events": ("count", "Events the simulator processed."),
        "wall_s": ("s", "Wall-clock time of the run (host measurement)."),
        "speed": ("s / s", "Simulated seconds per wall-clock second (host measurement)."),
        "events_per_s": ("1/s", "Events per wall-clock second (host measurement)."),
        "total_goodput_bps": ("bit/s", "Sum of the flows' goodputs."),
        "jain": ("0..1", "Jain's fairness index of the flows' goodputs; empty without flows."),
        PEAK_FIELD: ("bytes", "Peak resident memory of the process during the run (host measurement)."),
    },
    "flows": {
        "id": ("", "The flow's index in the scenario's `flows`."),
        "name": ("", "The flow's name (scenario `name`, default `<cc>-<direction>-<i>`)."),
        "cc": ("", "Congestion control."),
        "direction": ("", "`up` (client to server) or `down`."),
        "dscp": ("0..63", "DiffServ codepoint of the flow's packets."),
        "start_s": ("s", "When the flow started."),
        "stop_s": ("s", "When the application stopped sending."),
        "goodput_bps": ("bit/s", "Payload delivered in order to the receiver over [start + warmup, stop]."),
        "bytes_delivered": ("bytes", "Payload delivered in order over the whole run."),
        "segs_sent": ("segments", "Segments sent, retransmissions included."),
        "retrans": ("segments", "Segments retransmitted."),
        "retrans_rate": ("0..1", "Retransmitted segments / segments sent."),
        "drops": ("packets", "The flow's packets (data and ACKs) dropped anywhere on the path."),
        "rto_count": ("count", "Retransmission timeouts."),
        "recoveries": ("count", "Entries into fast recovery."),
        "srtt_mean_ms": ("ms", "Mean smoothed RTT of the flow's samples in its measurement window."),
        "cwnd_mean": ("packets", "Mean congestion window of the flow's samples in its measurement window."),
        "tsq_throttled": ("count", "Times TCP Small Queues stopped the socket from sending."),
        "max_tsq_bytes": ("bytes", "Largest amount of the socket's data below TCP (what TSQ limits)."),
        "tsq_exceptions": ("count", "Sends let over the TSQ limit by the one-skb exception."),
        "tsq_max_excess": ("bytes", "Largest excess over the TSQ limit after any other send (<= 0: the limit held)."),
        "skbs_sent": ("skbs", "Skbs handed below TCP (each GSO-segmented), retransmissions included."),
        "skb_segs_mean": (
            "segments",
            "Mean segments per skb: how much each send hands to the qdisc and radio at once.",
        ),
        "acks_sent": (
            "count",
            "ACKs the flow's receiver sent over the whole run (one per GRO skb on a NAPI driver's station).",
        ),
    },
    "pings": {
        "id": ("", "The ping's index in the scenario's `pings`."),
        "name": ("", "The ping's name (scenario `name`, default `<kind>-ping-<i>`)."),
        "kind": ("", "`icmp` or `udp` (request/response)."),
        "dscp": ("0..63", "DiffServ codepoint of the probes."),
        "sent": ("count", "Probes sent."),
        "received": ("count", "Replies received."),
        "rtt_p10_ms": (
            "ms",
            "10th percentile RTT of the probes sent in the measurement window: from the "
            "first flow's start (not before the warm-up) to the last flow's stop, as Flent "
            "cuts; every probe after the warm-up when there is no flow.",
        ),
        "rtt_p50_ms": ("ms", "Median RTT, same window."),
        "rtt_p90_ms": ("ms", "90th percentile RTT, same window."),
        "rtt_p99_ms": ("ms", "99th percentile RTT, same window."),
        "rtt_mean_ms": ("ms", "Mean RTT, same window."),
        "rtt_all_p10_ms": ("ms", "10th percentile RTT of every probe sent after the warm-up (idle periods included)."),
        "rtt_all_p50_ms": ("ms", "Median RTT after the warm-up."),
        "rtt_all_p90_ms": ("ms", "90th percentile RTT after the warm-up."),
        "rtt_all_p99_ms": ("ms", "99th percentile RTT after the warm-up."),
        "rtt_all_mean_ms": ("ms", "Mean RTT after the warm-up."),
    },
    "queues": {
        "name": (
            "",
            "The queue: `bottleneck`, a host's NIC, a Wi-Fi backhaul, a trace link (`uplink`, `downlink`), ...",
        ),
        "enqueued": ("packets", "Packets that entered the queue."),
        "dropped": ("packets", "Packets the qdisc dropped (tail, head or AQM drops)."),
        "random_losses": ("packets", "Packets lost to the link's random loss (not in `dropped`)."),
        "ecn_marked": ("packets", "Packets CE-marked."),
        "tx_packets": ("packets", "Packets sent on the link."),
        "utilization": ("0..1", "Busy time / length of the measurement window (the flows' span, as Flent cuts)."),
        "utilization_all": ("0..1", "Busy time / (duration - warmup)."),
        "max_backlog_pkts": ("packets", "Largest backlog."),
        "sojourn_p50_ms": ("ms", "Median time a packet spent in the queue."),
        "sojourn_p95_ms": ("ms", "95th percentile queueing time."),
        "sojourn_p99_ms": ("ms", "99th percentile queueing time."),
        "signal_delay_p95_ms": (
            "ms",
            "Mahimahi's signal delay, p95 over the milliseconds of the run (trace links only).",
        ),
    },
    "wifi": {
        "bss": ("", "Index of the BSS."),
        "node": ("", "Node of the BSS: 0 the access point, 1.. the stations."),
        "name": ("", "The node's name (`<bss>-ap`, `<bss>-sta<n>`)."),
        "ppdus": ("count", "PPDUs the node sent."),
        "ampdu_mean": ("MPDUs", "Mean MPDUs per A-MPDU sent."),
        "ampdu_p10": ("MPDUs", "10th percentile of MPDUs per A-MPDU."),
        "ampdu_p50": ("MPDUs", "Median MPDUs per A-MPDU."),
        "ampdu_p90": ("MPDUs", "90th percentile of MPDUs per A-MPDU."),
        "airtime": ("0..1", "Airtime used / length of the measurement window (the flows' span)."),
        "airtime_all": ("0..1", "Airtime used / (duration - warmup)."),
        "collisions": ("count", "Transmissions lost to collisions."),
        "mpdu_retries": ("MPDUs", "MPDU retransmissions."),
        "drops": ("packets", "Packets the node dropped (TXQ limits, retry limit)."),
        "txq_sojourn_p50_ms": ("ms", "Median time a packet spent in the node's TXQs."),
        "txq_sojourn_p95_ms": ("ms", "95th percentile TXQ time."),
        "driver": ("", "The radio's driver family (`ath9k`, `iwlwifi`, ...)."),
        "mcs_p50": ("MCS", "Median MCS (per stream) of the PPDUs sent."),
        "mcs_min": ("MCS", "Lowest MCS of the PPDUs sent."),
        "mcs_max": ("MCS", "Highest MCS of the PPDUs sent."),
        "tx_completion_p50_ms": (
            "ms",
            "Median TX-completion latency: from a packet's arrival at the radio to the "
            "host's processing of its TX status (what releases TCP Small Queues).",
        ),
        "tx_completion_p90_ms": ("ms", "90th percentile TX-completion latency."),
        "tx_interrupts": ("count", "TX-status interrupts processed (each runs the TSQ handlers once)."),
    },
    "flow_series": {
        "t": ("s", "Sample time (the end of the step)."),
        "flow": ("", "The flow's `id`."),
        "name": ("", "The flow's name."),
        "goodput_bps": ("bit/s", "Payload delivered in order during the step ending at `t`."),
        "srtt_ms": ("ms", "Smoothed RTT."),
        "cwnd": ("packets", "Congestion window."),
        "ssthresh": ("packets", "Slow-start threshold (2147483647, TCP_INFINITE_SSTHRESH, until the first reduction)."),
        "pacing_rate_bps": ("bit/s", "Pacing rate (`sk_pacing_rate`); empty while unset."),
        "delivery_rate_bps": ("bit/s", "Latest delivery-rate sample (tcp_rate.c)."),
        "inflight": ("packets", "Packets in flight (`tcp_packets_in_flight`)."),
        "tsq_bytes": ("bytes", "The socket's data below TCP (qdisc, NIC, radio): what TSQ limits."),
        "retrans": ("segments", "Segments retransmitted so far (cumulative)."),
    },
    "model_series": {
        "t": ("s", "Sample time."),
        "flow": ("", "The flow's `id`."),
        "name": (
            "",
            "The model quantity (`bw_bps`, `min_rtt_us`, `mode`, `w_max`, ...; the unit is in its name's suffix).",
        ),
        "value": ("as named", "The quantity's value; NaN while undefined."),
        LABEL_COLUMN: (
            "",
            "The name of a coded quantity's value (BBR's `mode` 2 is `PROBE_BW`); empty for the others.",
        ),
    },
    "ping_series": {
        "t": ("s", "When the probe was sent."),
        "ping": ("", "The ping's `id`."),
        "name": ("", "The ping's name."),
        "rtt_ms": ("ms", "Round-trip time of the reply."),
    },
    "queue_series": {
        "t": ("s", "Sample time."),
        "queue": ("", "The queue's index among the watched queues."),
        "name": ("", "The queue's name."),
        "packets": ("packets", "Backlog."),
        "bytes": ("bytes", "Backlog."),
        "drops": ("packets", "Packets the qdisc dropped so far (cumulative; take differences for a rate)."),
    },
    "wifi_series": {
        "t": ("s", "Sample time (the end of the step)."),
        "bss": ("", "Index of the BSS."),
        "name": ("", "The BSS's name."),
        "node": ("", "Node: 0 the access point, 1.. the stations."),
        "ampdu_mean": ("MPDUs", "Mean MPDUs per A-MPDU sent in the step; NaN when none was sent."),
        "ampdu_p10": ("MPDUs", "10th percentile of MPDUs per A-MPDU in the step."),
        "ampdu_p50": ("MPDUs", "Median MPDUs per A-MPDU in the step."),
        "ampdu_p90": ("MPDUs", "90th percentile of MPDUs per A-MPDU in the step."),
        "airtime": ("0..1", "Share of the step this node spent transmitting."),
        "collisions": ("count", "Collisions in the step."),
        "mpdu_retries": ("MPDUs", "MPDU retransmissions in the step."),
        "backlog": ("packets", "Packets in the node's TXQs at `t`."),
    },
}


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


@cache
def model_codes() -> dict[tuple[str, str], dict[float, str]]:
    """(congestion control, model quantity) -> {code: name} of the coded model quantities."""
    from wificc import reference

    return {
        (cc, entry["quantity"]): {float(code): name for code, name in entry["codes"].items()}
        for entry in reference.catalogs()["model_codes"]
        for cc in entry["cc"]
    }


def _model_series(series: list[dict[str, Any]], flows: list[dict[str, Any]]) -> pd.DataFrame:
    """The model in long form, with the name of each coded value in ``label``."""
    columns = {k: v for k, v in MODEL_SERIES_COLUMNS.items() if k != LABEL_COLUMN}
    frame = _series(series, "flow", columns, MODEL_FIELDS)
    labels = pd.Series("", index=frame.index, dtype=MODEL_SERIES_COLUMNS[LABEL_COLUMN])
    # A document without flow ids or congestion controls (the emulator's) gets no labels.
    cc = frame["flow"].map({f["id"]: f["cc"] for f in flows if "id" in f and "cc" in f})
    for (cc_name, quantity), names in model_codes().items():
        rows = (cc == cc_name) & (frame["name"] == quantity)
        if rows.any():
            labels[rows] = frame.loc[rows, "value"].map(names).fillna("")
    frame[LABEL_COLUMN] = labels
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
        self.model_series = _model_series(series["flows"], self.raw["flows"])
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
