"""Export a run as a Flent data file (``.flent.gz``) that Flent 2.3 loads and plots.

Flent (Høiland-Jørgensen et al., https://flent.org) keeps a test run as gzipped JSON, data
format version 4 (``flent/resultset.py``):

* ``metadata``: the settings of the run. ``NAME`` is the test, whose ``flent/tests/NAME.conf``
  Flent re-reads to know the series and the plots; ``LENGTH``, ``TOTAL_LENGTH``,
  ``STEP_SIZE``, ``DELAY`` (which Flent applies when it loads the file, for the plots'
  ``cutoff``), ``TIME`` and ``T0`` (start of the data), ``HOST(S)``, ``TEST_PARAMETERS``
  (``tcp_nup`` needs ``upload_streams``) and ``SERIES_META`` (units and summary per series);
* ``x_values``: seconds from T0, every STEP_SIZE;
* ``results``: every series on x_values, ``null`` where it has no data;
* ``raw_values``: every series' measurements as records with an absolute time ``t`` and the
  value ``val``. TCP series also carry what Flent's ``ss`` runner records per socket
  (``tcp_cwnd`` packets, ``tcp_rtt`` ms, ``tcp_pacing_rate`` and ``tcp_delivery_rate``
  Mbit/s, and for the BBR family ``tcp_bbr_bw`` Mbit/s, ``tcp_bbr_mrtt`` ms and the gains),
  which the ``tcp_*`` plots of ``flent/tests/tcp_stats.inc`` draw; ``results`` has them too
  as ``<series>::tcp_cwnd`` and so on.

The Flent test follows from the traffic (or is given): one upload is ``tcp_upload``, one
download ``tcp_download``, one of each ``tcp_bidirectional``, N uploads ``tcp_nup`` (series
``TCP upload::1`` .. ``::N``), N downloads ``tcp_ndown``, four uploads and four downloads
marked CS0, CS1, CS5 and EF ``rrul`` (``TCP upload BE``, ``BK``, ``CS5``, ``EF``; UDP pings
``Ping (ms) UDP EF``, ``BK``, ``BE``), the same all unmarked ``rrul_be`` (``TCP upload BE``,
``BE2`` ..; ``Ping (ms) UDP BE1`` ..). The first ICMP ping is ``Ping (ms) ICMP``, further ones
``Ping (ms) ICMP <host> (extra)`` as in ``ping.inc``, <host> being the ping's name less a leading
``Ping (ms) ICMP`` (the catalog names rtt_fairness's pings ``Ping (ms) ICMP 50ms``). Every test
of our catalog has one of
these shapes. The computed series of the test definitions (``TCP upload sum``, ``avg``,
``fairness``, ``TCP totals``, ``Ping (ms) avg``) are written as Flent computes them: per x
value, the sum, mean or Jain index of the member series that have a value there.

Values on x_values are interpolated as Flent's ``TimeseriesAggregator`` does: a measurement
at x is taken as it is; between two measurements at most five steps apart the value is
linear between them; elsewhere (before the first, after the last, across a longer gap) there
is none. A ping's time is when it was sent.

A simulation has no wall clock: TIME and T0 default to the Unix epoch, so raw times are the
simulated seconds, and the gzip header carries no name or date, so a run always gives the
same bytes. The file says it comes from wificc: ``FLENT_VERSION`` is ``wificc <version>``
and ``WIFICC_SCENARIO`` / ``WIFICC_SUMMARY`` hold the scenario and the run summary.
"""

from __future__ import annotations

import bisect
import gzip
import json
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

from wificc import stats
from wificc.result import SCENARIO_FILE, RunLike, as_run, write_file
from wificc.scenarios import NSEC_PER_SEC, duration_ns

SUFFIX = ".flent.gz"
# Data format written by Flent 2.x (FILEFORMAT_VERSION in flent/resultset.py).
FILE_FORMAT_VERSION = 4
# The Flent tests a run can be exported as.
TESTS = ("tcp_upload", "tcp_download", "tcp_bidirectional", "tcp_nup", "tcp_ndown", "rrul", "rrul_be")
# Flent's time format for TIME and T0 (UTC, flent/util.py format_date).
TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Flent's TimeseriesAggregator interpolates between measurements at most this many steps apart.
MAX_GAP_STEPS = 5.0
# Two times closer than this (s) are the same instant (sample times come from integer ns).
SAME_TIME_S = 1e-9
# Flent's name of the ICMP ping data set (ping.inc, rrul.conf).
ICMP_SERIES = "Ping (ms) ICMP"
# Host names in the metadata: a simulation has none of its own.
SERVER_HOST = "wificc-server"
CLIENT_HOST = "wificc-client"
# Labels of the DSCP markings of rrul.conf: CS0 is BE, CS1 is BK (RFC 2474, 4594 values).
RRUL_LABELS = {0: "BE", 8: "BK", 40: "CS5", 46: "EF"}
# The TCP markings of one direction of rrul (CS0, CS1, CS5, EF) and of rrul_be.
RRUL_MARKS = (0, 8, 40, 46)
RRUL_BE_MARKS = (0, 0, 0, 0)
# DSCP names a scenario may use, and their codepoints (RFC 2474, 2597, 3246).
DSCP_NAMES = {"BE": 0, "EF": 46}
DSCP_NAMES |= {f"CS{n}": 8 * n for n in range(8)}
DSCP_NAMES |= {f"AF{c}{p}": 8 * c + 2 * p for c in range(1, 5) for p in range(1, 4)}
MBIT = 1e6
USEC_PER_MSEC = 1e3
DIRECTION_WORDS = {"up": "upload", "down": "download"}
# The model values of the BBR family and the socket statistic Flent's ss runner names them.
BBR_STATS: dict[str, tuple[str, float]] = {
    "bw_bps": ("tcp_bbr_bw", MBIT),
    "min_rtt_us": ("tcp_bbr_mrtt", USEC_PER_MSEC),
    "pacing_gain": ("tcp_bbr_pacing_gain", 1.0),
    "cwnd_gain": ("tcp_bbr_cwnd_gain", 1.0),
}
# Flow series columns and the socket statistic each is, with its divisor to Flent's unit.
SOCKET_STATS: dict[str, tuple[str, float]] = {
    "cwnd": ("tcp_cwnd", 1.0),
    "srtt_ms": ("tcp_rtt", 1.0),
    "pacing_rate_bps": ("tcp_pacing_rate", MBIT),
    "delivery_rate_bps": ("tcp_delivery_rate", MBIT),
}


def dscp_value(field: str, value: Any) -> int:
    """The codepoint of a scenario's DSCP: a number 0..63 or a name such as ``"EF"``."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 63:
        return value
    if isinstance(value, str) and value.upper() in DSCP_NAMES:
        return DSCP_NAMES[value.upper()]
    raise ValueError(f"{field}: got {value!r}, expected a DSCP value 0..63 or a name such as 'EF'")


def seconds(field: str, text: Any) -> float:
    """Seconds of a normalised scenario duration such as ``"200000000ns"``."""
    return duration_ns(field, str(text)) / NSEC_PER_SEC


def load_window(run: RunLike) -> tuple[float, float]:
    """The span (s) from the first flow's start to the last flow's stop; the run without flows."""
    s = run.scenario
    duration = seconds("duration", s["duration"])
    if not s["flows"]:
        return 0.0, duration
    starts = [seconds(f"flows[{i}].start", f["start"]) for i, f in enumerate(s["flows"])]
    stops = [
        duration if f["stop"] is None else seconds(f"flows[{i}].stop", f["stop"]) for i, f in enumerate(s["flows"])
    ]
    return min(starts), min(max(stops), duration)


@dataclass(frozen=True)
class Stream:
    """One flow or ping of a run as Flent sees it: its series name, kind and marking."""

    name: str
    # The flow's or ping's index in the scenario.
    index: int
    kind: str  # "tcp", "icmp" or "udp"
    dscp: int


def flent_test(run: RunLike, test: str | None = None) -> str:
    """The Flent test of ``run``: ``test`` when given and it fits the traffic, else inferred."""
    flows = _flows(run)
    ups = [f["dscp"] for f in flows if f["direction"] == "up"]
    downs = [f["dscp"] for f in flows if f["direction"] == "down"]
    shape = f"{len(ups)} upload and {len(downs)} download flows"
    fits = {
        "tcp_upload": (len(ups), len(downs)) == (1, 0),
        "tcp_download": (len(ups), len(downs)) == (0, 1),
        "tcp_bidirectional": (len(ups), len(downs)) == (1, 1),
        "tcp_nup": len(ups) >= 1 and not downs,
        "tcp_ndown": len(downs) >= 1 and not ups,
        "rrul": sorted(ups) == sorted(downs) == list(RRUL_MARKS),
        "rrul_be": ups == downs == list(RRUL_BE_MARKS),
    }
    if test is not None:
        if test not in TESTS:
            raise ValueError(f"test: got {test!r}, expected one of {', '.join(TESTS)}")
        if not fits[test]:
            raise ValueError(f"test: {test} does not fit a run of {shape}")
        return test
    for name in TESTS:
        if fits[name]:
            return name
    raise ValueError(
        f"flows: a run of {shape} is no Flent test; expected 1 or N flows in one direction, "
        "1 + 1, or rrul's 4 + 4 (marked CS0, CS1, CS5, EF, or all unmarked)"
    )


def _flows(run: RunLike) -> list[dict[str, Any]]:
    """The scenario's flows with their DSCP as a codepoint."""
    flows = run.scenario["flows"]
    return [{**f, "dscp": dscp_value(f"flows[{i}].dscp", f["dscp"])} for i, f in enumerate(flows)]


def _numbered(labels: Sequence[str]) -> list[str]:
    """Make repeated labels distinct as rrul_be.conf does: BE, BE2, BE3, ..."""
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(f"{label}{seen[label]}" if seen[label] > 1 else label)
    return out


def _label(dscp: int) -> str:
    return RRUL_LABELS.get(dscp, f"DSCP{dscp}")


def streams(run: RunLike, test: str) -> list[Stream]:
    """Every flow and ping of ``run`` with its series name in the Flent test ``test``."""
    flows = _flows(run)
    out: list[Stream] = []
    for direction, word in DIRECTION_WORDS.items():
        members = [(i, f) for i, f in enumerate(flows) if f["direction"] == direction]
        if test in ("rrul", "rrul_be"):
            suffixes = _numbered([_label(f["dscp"]) for _, f in members])
            names = [f"TCP {word} {s}" for s in suffixes]
        elif test in ("tcp_nup", "tcp_ndown"):
            names = [f"TCP {word}::{k + 1}" for k in range(len(members))]
        else:
            names = [f"TCP {word}"] * len(members)
        out += [Stream(n, i, "tcp", f["dscp"]) for n, (i, f) in zip(names, members, strict=True)]
    pings = list(enumerate(run.scenario["pings"]))
    icmp = [(i, p) for i, p in pings if p["kind"] == "icmp"]
    for k, (i, p) in enumerate(icmp):
        # Further ICMP pings as ping.inc's extra hosts, named by what their name adds.
        host = str(run.pings["name"][i]).removeprefix(ICMP_SERIES).strip()
        name = ICMP_SERIES if k == 0 else f"{ICMP_SERIES} {host} (extra)"
        out.append(Stream(name, i, "icmp", dscp_value(f"pings[{i}].dscp", p["dscp"])))
    udp = [(i, p, dscp_value(f"pings[{i}].dscp", p["dscp"])) for i, p in pings if p["kind"] == "udp"]
    if test == "rrul_be":
        labels = [f"BE{k + 1}" for k in range(len(udp))]
    else:
        labels = _numbered([_label(d) for _, _, d in udp])
    out += [Stream(f"Ping (ms) UDP {s}", i, "udp", d) for s, (i, _, d) in zip(labels, udp, strict=True)]
    return out


def computed_series(test: str, names: Iterable[str]) -> list[tuple[str, str, list[str]]]:
    """The computed series of ``test`` as (name, Flent runner, member series), in .conf order.

    A series without members (rrul without pings) is left out.
    """
    names = list(names)

    def tcp(word: str) -> list[str]:
        return [n for n in names if n.startswith(f"TCP {word}")]

    pings = [n for n in names if n.startswith("Ping (ms)")]
    series: list[tuple[str, str, list[str]]] = []
    if test in ("tcp_nup", "tcp_ndown"):
        word = "upload" if test == "tcp_nup" else "download"
        series = [
            (f"TCP {word} avg", "AverageRunner", tcp(word)),
            (f"TCP {word} sum", "SumRunner", tcp(word)),
            (f"TCP {word} fairness", "FairnessRunner", tcp(word)),
        ]
    if test in ("rrul", "rrul_be"):
        series = [
            ("TCP upload avg", "AverageRunner", tcp("upload")),
            ("TCP upload sum", "SumRunner", tcp("upload")),
            ("TCP download avg", "AverageRunner", tcp("download")),
            ("TCP download sum", "SumRunner", tcp("download")),
            ("TCP totals", "SumRunner", tcp("upload") + tcp("download")),
            ("Ping (ms) avg", "AverageRunner", pings),
        ]
    return [(name, runner, members) for name, runner, members in series if members]


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def jain(values: Sequence[float]) -> float | None:
    """Jain's index (:func:`wificc.stats.jain_index`), None when every value is 0 (as Flent's)."""
    index = stats.jain_index(values)
    return None if math.isnan(index) else index


COMPUTE: dict[str, Callable[[Sequence[float]], float | None]] = {
    "AverageRunner": _mean,
    "SumRunner": math.fsum,
    "FairnessRunner": jain,
}


def interpolate(
    times: Sequence[float], values: Sequence[float | None], xs: Sequence[float], max_gap: float
) -> list[float | None]:
    """Values at ``xs`` of measurements (sorted ``times``): exact, linear or None (module doc)."""
    out: list[float | None] = []
    for x in xs:
        i = bisect.bisect_left(times, x - SAME_TIME_S)
        if i < len(times) and abs(times[i] - x) <= SAME_TIME_S:
            out.append(values[i])
        elif 0 < i < len(times) and times[i] - times[i - 1] <= max_gap:
            v0, v1 = values[i - 1], values[i]
            if v0 is None or v1 is None:
                out.append(None)
            else:
                out.append(v0 + (v1 - v0) * (x - times[i - 1]) / (times[i] - times[i - 1]))
        else:
            out.append(None)
    return out


def _plain(value: Any) -> Any:
    """``value`` as JSON-ready Python: numpy scalars unboxed, NaN and infinities as None."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _number(value: Any) -> float | None:
    value = _plain(value)
    return None if value is None else float(value)


def _tcp_records(run: RunLike, stream: Stream, t0: float, step: float) -> list[dict[str, Any]]:
    """Flent raw records of a flow: goodput (Mbit/s) and socket statistics per sample."""
    series = run.flow_series[run.flow_series["flow"] == stream.index]
    records: dict[float, dict[str, Any]] = {}
    for row in series.itertuples(index=False):
        record: dict[str, Any] = {"t": t0 + row.t, "dur": step, "val": _number(row.goodput_bps / MBIT)}
        for column, (key, divisor) in SOCKET_STATS.items():
            value = _number(getattr(row, column) / divisor)
            if value is not None:
                record[key] = value
        records[row.t] = record
    model = run.model_series[
        (run.model_series["flow"] == stream.index) & run.model_series["name"].isin(list(BBR_STATS))
    ]
    for row in model.itertuples(index=False):
        key, divisor = BBR_STATS[row.name]
        value = _number(row.value / divisor)
        if value is not None and row.t in records:
            records[row.t][key] = value
    return list(records.values())


def _ping_records(run: RunLike, stream: Stream, t0: float) -> list[dict[str, Any]]:
    """Flent raw records of a ping: RTT (ms) by send time, with the sequence number."""
    spec = run.scenario["pings"][stream.index]
    start = seconds(f"pings[{stream.index}].start", spec["start"])
    interval = seconds(f"pings[{stream.index}].interval", spec["interval"])
    series = run.ping_series[run.ping_series["ping"] == stream.index]
    return [
        {"t": t0 + t, "val": _number(rtt), "seq": round((t - start) / interval)}
        for t, rtt in zip(series["t"], series["rtt_ms"], strict=True)
    ]


def _series_meta(run: RunLike, stream: Stream, mss: int) -> dict[str, Any]:
    if stream.kind == "tcp":
        flow = run.flows.iloc[stream.index]
        return {
            "RUNNER": "wificc",
            "UNITS": "Mbits/s",
            "MEAN_VALUE": _number(flow["goodput_bps"] / MBIT),
            "CONG_CONTROL": flow["cc"],
            "DATA_TOS": stream.dscp << 2,
            "TCP_MSS": mss,
            "TCP_RETRANSMIT": _plain(flow["retrans"]),
        }
    ping = run.pings.iloc[stream.index]
    return {
        "RUNNER": "wificc",
        "UNITS": "ms",
        "MEAN_VALUE": _number(ping["rtt_mean_ms"]),
        "PACKETS_SENT": _plain(ping["sent"]),
        "PACKETS_RECEIVED": _plain(ping["received"]),
        "DATA_TOS": stream.dscp << 2,
    }


def _text(value: str) -> str:
    """A normalised quantity in a short form: "50000000bit" -> "50Mbit", "20000000ns" -> "20ms"."""
    m = re.fullmatch(r"(\d+)(bit|ns)", value)
    if m is None:
        return value
    number = int(m.group(1))
    units = ((1e9, "G"), (1e6, "M"), (1e3, "k"), (1, "")) if m.group(2) == "bit" else ()
    for scale, prefix in units:
        if number >= scale:
            return f"{number / scale:g}{prefix}bit"
    if m.group(2) == "ns":
        return f"{number / 1e6:g}ms"
    return value


def default_title(run: RunLike) -> str:
    """Flent-style ``key:value`` title: the congestion controls, the path and the stack."""
    s = run.scenario
    ccs = "+".join(dict.fromkeys(f["cc"] for f in s["flows"]))
    parts = [f"cc:{ccs}", f"path:{s['path'].get('kind')}"]
    for key in ("chipset", "rate", "rtt"):
        if isinstance(s["path"].get(key), str):
            parts.append(f"{key}:{_text(s['path'][key])}")
    parts += [f"tsq:{s['stack']['tsq']}", f"tp:{s['stack']['tp']}", f"seed:{s['seed']}"]
    return " ".join(parts)


def wificc_version() -> str:
    try:
        return importlib_metadata.version("wificc")
    except importlib_metadata.PackageNotFoundError:
        return "unknown"


def document(
    run: RunLike | str | os.PathLike[str],
    *,
    test: str | None = None,
    title: str | None = None,
    time: datetime = EPOCH,
    filename: str | None = None,
) -> dict[str, Any]:
    """The Flent data document of ``run`` (a result or a run directory), ready for JSON."""
    run = as_run(run)
    test = flent_test(run, test)
    s = run.scenario
    step = seconds("step", s["step"])
    duration = seconds("duration", s["duration"])
    delay, end = load_window(run)
    t0 = time.timestamp()
    xs = [round(k * step, 9) for k in range(math.floor(duration / step + SAME_TIME_S) + 1)]
    max_gap = MAX_GAP_STEPS * step
    results: dict[str, list[float | None]] = {}
    raw: dict[str, list[dict[str, Any]]] = {}
    meta: dict[str, dict[str, Any]] = {}
    for stream in streams(run, test):
        if stream.kind == "tcp":
            records = _tcp_records(run, stream, t0, step)
        else:
            records = _ping_records(run, stream, t0)
        raw[stream.name] = records
        times = [r["t"] - t0 for r in records]
        keys = ["val", *dict.fromkeys(k for r in records for k in r if k.startswith("tcp_"))]
        for key in keys:
            name = stream.name if key == "val" else f"{stream.name}::{key}"
            results[name] = interpolate(times, [r.get(key) for r in records], xs, max_gap)
            meta[name] = _series_meta(run, stream, s["stack"]["mss"]) if key == "val" else {"RUNNER": "wificc"}
    for name, runner, members in computed_series(test, list(raw)):
        compute = COMPUTE[runner]
        results[name] = [
            compute(present) if (present := [v for v in column if v is not None]) else None
            for column in zip(*(results[m] for m in members), strict=True)
        ]
        means = [meta[m]["MEAN_VALUE"] for m in members if meta[m].get("MEAN_VALUE") is not None]
        units = {meta[m]["UNITS"] for m in members}
        meta[name] = {
            "RUNNER": runner,
            "COMPUTED_LATE": False,
            "UNITS": units.pop() if len(units) == 1 else sorted(units),
            "MEAN_VALUE": compute(means) if means else None,
        }
        raw[name] = []
    for idx, name in enumerate(meta):
        meta[name]["IDX"] = idx
    stamp = time.astimezone(UTC).strftime(TIME_FORMAT)
    version = wificc_version()
    parameters = {"tcp_nup": "upload_streams", "tcp_ndown": "download_streams"}
    test_parameters = {parameters[test]: str(len(s["flows"]))} if test in parameters else {}
    metadata = {
        "NAME": test,
        "TITLE": default_title(run) if title is None else title,
        "NOTE": f"simulated by wificc {version}",
        "TIME": stamp,
        "T0": stamp,
        "LENGTH": end - delay,
        "DELAY": delay,
        "TOTAL_LENGTH": duration,
        "STEP_SIZE": step,
        "HOST": SERVER_HOST,
        "HOSTS": [SERVER_HOST],
        "LOCAL_HOST": CLIENT_HOST,
        "IP_VERSION": 4,
        "TEST_PARAMETERS": test_parameters,
        "FLENT_VERSION": f"wificc {version}",
        "KERNEL_NAME": "wificc",
        "KERNEL_RELEASE": version,
        "DATA_FILENAME": filename,
        "FAILED_RUNNERS": 0,
        "BATCH_NAME": None,
        "BATCH_TIME": None,
        "BATCH_TITLE": None,
        "BATCH_UUID": None,
        "HTTP_GETTER_URLLIST": None,
        "HTTP_GETTER_DNS": None,
        "HTTP_GETTER_WORKERS": None,
        "SERIES_META": meta,
        "WIFICC_SCENARIO": s,
        "WIFICC_SUMMARY": run.summary,
    }
    return _plain(
        {
            "metadata": metadata,
            "version": FILE_FORMAT_VERSION,
            "x_values": xs,
            "results": results,
            "raw_values": raw,
        }
    )


def export(
    run: RunLike | str | os.PathLike[str],
    path: str | os.PathLike[str],
    *,
    test: str | None = None,
    title: str | None = None,
    time: datetime = EPOCH,
) -> Path:
    """Write ``run`` (a result or a run directory) to ``path`` (``*.flent.gz``) atomically."""
    target = Path(path)
    if not target.name.endswith(SUFFIX) or target.name == SUFFIX:
        raise ValueError(f"path: got {str(target)!r}, expected a file name ending in {SUFFIX}")
    doc = document(run, test=test, title=title, time=time, filename=target.name)
    data = json.dumps(doc, indent=2, sort_keys=True).encode()
    # gzip.compress writes no file name and, with mtime 0, no date.
    return write_file(target, gzip.compress(data, mtime=0))


def run_directories(directory: str | os.PathLike[str]) -> list[Path]:
    """The run directories of ``directory``: itself, or a sweep's ``runs/*`` in name order."""
    path = Path(directory)
    if (path / SCENARIO_FILE).is_file():
        return [path]
    runs = sorted(p for p in (path / "runs").glob("*") if (p / SCENARIO_FILE).is_file())
    if not runs:
        raise ValueError(f"RUN_DIR: {str(path)!r} is neither a run directory (scenario.json) nor a sweep (runs/*/)")
    return runs
