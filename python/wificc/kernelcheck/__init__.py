"""Kernel checks: the simulator's sender-stack and Wi-Fi mechanisms against the running kernel
(``wificc validate-grid --suite NAME [--smoke] OUT``).

Each suite is a list of cells run one at a time, each ``--repeat N`` times (the kernel side N
times, the simulator over seeds 1..N; :mod:`wificc.kernelcheck.repetitions`): every repetition
is stored under ``OUT/<suite>/cells/<cell>/rep-<k>/`` as it finishes (its ``row.json`` plus
whatever runs it keeps), the cell's ``row.json`` (medians and ranges over the N) when all are,
and an interrupted suite resumes with the next missing repetition. The suite's table is
written after every cell to ``OUT/<suite>/table.{csv,parquet,md}``. A smoke run (one short
cell, once) goes to ``OUT/<suite>-smoke/``.

Suites (:data:`SUITES`):

- ``wired``: the wired validation grid (:mod:`wificc.validation`); ``--smoke`` runs one cell.
- ``tsq-completion``: TCP Small Queues with skbs held below TCP in an htb qdisc on the sender's
  device (:mod:`wificc.kernelcheck.tsq`).
- ``gso-charge``: the truesize charged per software-GSO segment (:mod:`wificc.kernelcheck.gso`).
- ``segments``: arrival times at the TUN device of the segments of one skb
  (:mod:`wificc.kernelcheck.segments`).
- ``wifi-download``: Wi-Fi downloads with a kernel receiver (:mod:`wificc.kernelcheck.wifi_download`).
- ``trace``, ``fairness``: the BPF variants BBR-APG over LTE traces and BBR-PG on a two-RTT
  dumbbell (:mod:`wificc.kernelcheck.variants`).

Agreement, simulator against kernel (``(simulator - kernel) / kernel``, between the medians of
the repetitions): goodput within 10%, median ping within 15%, median bytes below TCP within 15%,
per-segment charge exact; or, when the kernel's own spread exceeds the tolerance, the two
ranges overlapping (``ok (spread)``). Every kernel run through the emulator keeps the
emulator's lateness (share of packets within 100 us of their time) beside its row (over
repetitions, the worst and the median): a check on a late emulator is no check.
"""

from __future__ import annotations

import fnmatch
import importlib
import os
import platform
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from wificc import _core, emu, storage, validation
from wificc.kernelcheck import repetitions
from wificc.kernelcheck.repetitions import Compared

# Agreement targets of issue 15: |simulator - kernel| / kernel at most this.
GOODPUT_TOLERANCE = validation.GOODPUT_TOLERANCE
PING_TOLERANCE = validation.PING_TOLERANCE
BELOW_TCP_TOLERANCE = 0.15
# A kernel run through the emulator is punctual when this share of its packets was on time.
LATENESS_MIN_WITHIN_100US = validation.LATENESS_MIN_WITHIN_100US

Report = Callable[[str], None]


class Unavailable(OSError):
    """A suite cannot run on this machine or in this build; the message says why."""


@dataclass(frozen=True)
class Column:
    """One column of a suite's Markdown table: header, row key and how to show the value
    (``text``, ``int``, ``label`` (a number as an integer, anything else as text), ``mbit``
    (bit/s as Mbit/s), ``ms``, ``us``, ``diff`` (signed percent), ``share`` (a fraction as
    percent), ``num`` (two decimals), ``bool`` (yes/no)). A row over
    several repetitions shows a figure's range after its median: ``93.10 (91.80-94.00)``."""

    header: str
    key: str
    kind: str = "text"

    def show(self, row: dict[str, Any]) -> str:
        value = row.get(self.key)
        if value is None or (isinstance(value, float) and value != value):
            return "-"
        if self.kind not in FORMATS:
            raise ValueError(f"column {self.header!r}: unknown kind {self.kind!r}")
        shown = FORMATS[self.kind](value)
        low, high = row.get(f"{self.key}_min"), row.get(f"{self.key}_max")
        if (row.get("repetitions") or 1) > 1 and low is not None and high is not None:
            low, high = FORMATS[self.kind](low), FORMATS[self.kind](high)
            # A cell's parameters, and figures the same in every repetition to the digits
            # shown, have no range to show.
            if low != high:
                shown += f" ({low}-{high})"
        return shown


FORMATS: dict[str, Callable[[Any], str]] = {
    "text": str,
    "int": lambda v: str(int(v)),
    "label": lambda v: str(int(v)) if isinstance(v, int | float) else str(v),
    "bool": lambda v: "yes" if v else "no",
    "mbit": lambda v: f"{v / 1e6:.2f}",
    "ms": lambda v: f"{v:.1f}",
    "us": lambda v: f"{v:.1f}",
    "diff": lambda v: f"{100 * v:+.1f}%",
    "share": lambda v: f"{100 * v:.1f}%",
    "num": lambda v: f"{v:.2f}",
}

# The goodput and median-ping comparison every emulator suite shows, and the closing columns.
GOODPUT_PING_COLUMNS = (
    Column("goodput sim", "sim_goodput_bps", "mbit"),
    Column("goodput kernel", "kernel_goodput_bps", "mbit"),
    Column("diff", "goodput_diff", "diff"),
    Column("ping p50 sim ms", "sim_ping_p50_ms", "ms"),
    Column("ping p50 kernel ms", "kernel_ping_p50_ms", "ms"),
    Column("diff", "ping_p50_diff", "diff"),
)
# How the differences of the tables are taken.
DIFFERENCES = "; differences (simulator - kernel) / kernel"
CLOSING_COLUMNS = (
    Column("reps", "repetitions", "int"),
    Column("lateness <=100us worst", "lateness_within_100us", "share"),
    Column("median", "lateness_within_100us_median", "share"),
    Column("verdict", "verdict"),
)
# The goodput and median ping of both sides, judged against the tolerances.
GOODPUT_PING_COMPARED = (
    Compared("sim_goodput_bps", "kernel_goodput_bps", "goodput_diff", "goodput", GOODPUT_TOLERANCE),
    Compared("sim_ping_p50_ms", "kernel_ping_p50_ms", "ping_p50_diff", "ping", PING_TOLERANCE),
)


def markdown_table(rows: Sequence[dict[str, Any]], columns: Sequence[Column], footer: str = "") -> str:
    """Rows as a Markdown table of ``columns``, with an optional line after it."""
    lines = ["| " + " | ".join(c.header for c in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(c.show(r) for c in columns) + " |" for r in rows]
    if footer:
        lines += ["", footer]
    return "\n".join(lines) + "\n"


def _version(text: str) -> tuple[int, int] | None:
    match = re.match(r"(\d+)\.(\d+)", text)
    return None if match is None else (int(match[1]), int(match[2]))


def running_kernel(release: str | None = None) -> str:
    """The simulator's kernel profile for the running kernel (or ``release``): the newest
    profile not newer than it, else the oldest. Both sides of a check then run the same
    version-dependent behaviour (and the emulator sets the profile's sysctls)."""
    version = _version(release if release is not None else platform.release())
    names = list(_core.kernels())
    fitting = [n for n in names if version is not None and _version(n) <= version]
    return max(fitting, key=_version) if fitting else names[0]


def plain(value: Any) -> Any:
    """A row value JSON can store: NumPy scalars as Python numbers, NaN as None."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    return value


def relative(sim: float | None, kernel: float | None) -> float | None:
    """``(sim - kernel) / kernel``; None when either is missing or the kernel's is 0."""
    return validation.relative(sim, kernel)


def within(difference: float | None, tolerance: float) -> bool | None:
    """Whether a relative difference is within the tolerance; None when there is none."""
    return None if difference is None else bool(abs(difference) <= tolerance)


def verdict(row: dict[str, Any], checks: Sequence[str]) -> str:
    """``ok``, or the names of the failed checks (``<name>_ok`` keys that are False) and ``late``
    for a kernel run whose emulator was late; checks without a value are not counted. ``ok
    (spread)`` when a check held only by the ranges' overlap (``<name>_spread``, a row over
    repetitions: :mod:`wificc.kernelcheck.repetitions`)."""
    failed = [name for name in checks if row.get(f"{name}_ok") is False]
    if row.get("punctual") is False:
        failed.append("late")
    if failed:
        return ", ".join(failed)
    return "ok (spread)" if any(row.get(f"{name}_spread") for name in checks) else "ok"


def goodput_ping_agreement(row: dict[str, Any]) -> dict[str, Any]:
    """The relative differences and verdicts of a row's ``sim_``/``kernel_`` goodput and
    median ping."""
    goodput = relative(row["sim_goodput_bps"], row["kernel_goodput_bps"])
    ping = relative(row["sim_ping_p50_ms"], row["kernel_ping_p50_ms"])
    return {
        "goodput_diff": goodput,
        "ping_p50_diff": ping,
        "goodput_ok": within(goodput, GOODPUT_TOLERANCE),
        "ping_ok": within(ping, PING_TOLERANCE),
    }


def footer(rows: Sequence[dict[str, Any]], checks: Sequence[str], tolerances: str) -> str:
    """The line under a suite's table: how many cells meet every check, and how many of those
    were measured on a punctual emulator."""
    agree = [r for r in rows if all(r.get(f"{c}_ok") is not False for c in checks)]
    punctual = sum(1 for r in agree if r.get("punctual") is not False)
    return (
        f"{len(agree)} of {len(rows)} cells within tolerance ({tolerances}), "
        f"{punctual} of them measured on a punctual emulator (at least "
        f"{LATENESS_MIN_WITHIN_100US:.0%} of the packets within 100 us; the worst repetition)." + REPEATED
    )


# How a row over repetitions is shown and judged (the tables' closing line).
REPEATED = (
    " Figures over repetitions: median (min-max), the median alone when every repetition gave the same"
    " to the digits shown; a figure agrees when the medians are within "
    "the tolerance, or, when the kernel's own spread exceeds it, when the ranges overlap (ok (spread))."
)


def lateness(kernel_summary: dict[str, Any]) -> dict[str, Any]:
    """The emulator's lateness figures of a kernel run, for its row."""
    figures = emu.on_time(kernel_summary)
    return {**figures, "punctual": validation.is_punctual(figures["lateness_within_100us"])}


@dataclass(frozen=True)
class Cell:
    """One cell of a suite: its id (the directory name) and what it runs."""

    id: str
    params: dict[str, Any]


def check_repeat(repeat: int) -> int:
    """``repeat`` when it is a whole number of repetitions (at least 1)."""
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"--repeat: got {repeat!r}, expected a whole number of repetitions >= 1")
    return repeat


def run_cells(
    out: Path,
    cells: Sequence[Cell],
    run_cell: Callable[[Cell, Path, int], dict[str, Any]],
    render: Callable[[list[dict[str, Any]]], str],
    report: Report,
    *,
    repeat: int = 1,
    compared: Sequence[Compared] = (),
    checks: Sequence[str] = (),
    judge: Callable[[dict[str, Any]], str] | None = None,
    only: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Run every unfinished cell into ``out``, one at a time, ``repeat`` times each (with
    ``only``, the cells whose id matches one of its shell patterns; the tables keep every stored
    cell):
    ``run_cell(cell, staging, seed)`` runs repetition ``seed`` (1..repeat, the simulator's seed),
    saves what it keeps into ``staging`` and returns its row. Each repetition is stored as it
    finishes; the cell's row is :func:`repetitions.aggregate` of its repetitions over
    ``compared``, its verdict ``judge(row)`` (default: :func:`verdict` of ``checks``). The
    tables are written after each cell; returns the table of ``cells``."""
    check_repeat(repeat)
    chosen = chosen_cells(cells, only)
    out.mkdir(parents=True, exist_ok=True)
    todo = [c for c in chosen if not repetitions.finished(out / validation.CELLS_DIR / c.id, repeat)]
    report(f"{len(chosen) - len(todo)} of {len(chosen)} cells finished, {len(todo)} to run ({repeat} repetitions each)")
    for n, cell in enumerate(todo, 1):

        def run(staging: Path, seed: int, cell: Cell = cell) -> dict[str, Any]:
            started = time.monotonic()
            row = {k: plain(v) for k, v in run_cell(cell, staging, seed).items()}
            return {**row, "wall_s": round(time.monotonic() - started, 1)}

        def combine(rows: list[dict[str, Any]]) -> dict[str, Any]:
            row = {k: plain(v) for k, v in repetitions.aggregate(rows, compared).items()}
            row["verdict"] = judge(row) if judge is not None else verdict(row, checks)
            return row

        row = repetitions.run_repetitions(out / validation.CELLS_DIR / cell.id, cell.id, repeat, run, combine, report)
        report(f"[{n}/{len(todo)}] {cell.id}: {row.get('verdict', '-')} ({row['wall_s']:.0f} s)")
        write_tables(out, cells, render)
    rows = write_tables(out, cells, render)
    ids = {c.id for c in cells}
    return storage.table(r for r in rows if r["cell"] in ids)


def chosen_cells(cells: Sequence[Cell], only: Sequence[str] | None) -> list[Cell]:
    """The cells whose id matches one of the shell patterns ``only`` (every cell without it); a
    pattern that matches none is an error naming the cells there are."""
    if only is None:
        return list(cells)
    for pattern in only:
        if not any(fnmatch.fnmatchcase(c.id, pattern) for c in cells):
            ids = ", ".join(c.id for c in cells)
            raise ValueError(
                f"--cell {pattern!r}: matches no cell of this suite; expected one of (or a pattern for): {ids}"
            )
    return [c for c in cells if any(fnmatch.fnmatchcase(c.id, p) for p in only)]


def write_tables(
    out: Path, cells: Sequence[Cell], render: Callable[[list[dict[str, Any]]], str]
) -> list[dict[str, Any]]:
    """table.csv/.parquet/.md of every stored cell with a row, ``cells`` first in order."""
    rows = validation.read_rows(out, cells)
    validation.write_table_files(out, rows, render(rows))
    return rows


@dataclass(frozen=True)
class Suite:
    """A kernel check: its name, whether it needs root, what it checks, how to run it
    (``run(out, smoke=..., report=..., repeat=...)`` -> its table), how to render its rows and
    how many repetitions a cell gets unless told (1 where the figures are exact)."""

    name: str
    needs_root: bool
    description: str
    run: Callable[..., pd.DataFrame]
    markdown: Callable[[list[dict[str, Any]]], str]
    repeat: int = 3


def _lazy(module: str, attribute: str) -> Callable[..., Any]:
    """A function of a module imported when first called (the emulator's suites import what
    they need only when they run)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(f"wificc.kernelcheck.{module}"), attribute)(*args, **kwargs)

    return call


SUITES: dict[str, Suite] = {
    s.name: s
    for s in (
        Suite(
            "wired",
            True,
            "Simulator vs kernel on wired paths: rate x RTT x pfifo buffer x cc (tcp_upload)",
            _lazy("wired", "run"),
            _lazy("wired", "markdown"),
            repeat=1,
        ),
        Suite(
            "tsq-completion",
            True,
            "TCP Small Queues with skbs held below TCP by an htb qdisc on the sender's device: "
            "rate x tcp_limit_output_bytes x cc",
            _lazy("tsq", "run"),
            _lazy("tsq", "markdown"),
        ),
        Suite(
            "gso-charge",
            True,
            "truesize charged per software-GSO segment (BPF), against the simulator's segment_truesize",
            _lazy("gso", "run"),
            _lazy("gso", "markdown"),
            repeat=1,
        ),
        Suite(
            "segments",
            True,
            "Arrival times at the TUN device of the segments of one skb (offloads off), against "
            "the ath9k model's per-frame wake-up",
            _lazy("segments", "run"),
            _lazy("segments", "markdown"),
            repeat=1,
        ),
        Suite(
            "wifi-download",
            True,
            "Wi-Fi downloads, kernel sender and receiver through the emulator's AP",
            _lazy("wifi_download", "run"),
            _lazy("wifi_download", "markdown"),
        ),
        Suite(
            "trace",
            True,
            "BBR-APG: kernel wbbr_apg and bbr over the Verizon and T-Mobile LTE traces",
            _lazy("variants", "run_trace"),
            _lazy("variants", "trace_markdown"),
        ),
        Suite(
            "fairness",
            True,
            "BBR-PG: kernel wbbr_pg and bbr on a 10 ms / 50 ms two-RTT dumbbell, 1 and 5 BDP",
            _lazy("variants", "run_fairness"),
            _lazy("variants", "fairness_markdown"),
        ),
    )
}


def suite(name: str) -> Suite:
    """The suite called ``name``; the error lists those there are."""
    try:
        return SUITES[name]
    except KeyError:
        raise ValueError(f"--suite: got {name!r}, expected one of {', '.join(SUITES)}") from None


def suite_dir(out: str | os.PathLike[str], name: str, smoke: bool) -> Path:
    """Where a suite's cells and tables go: ``OUT/<name>/``, a smoke run's ``OUT/<name>-smoke/``
    (its shorter cells must not count as finished cells of the full suite)."""
    return Path(out) / (f"{name}-smoke" if smoke else name)


def run_suite(
    name: str,
    out: str | os.PathLike[str],
    *,
    smoke: bool = False,
    repeat: int | None = None,
    report: Report = print,
    only: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Run suite ``name`` into :func:`suite_dir` (resuming it), ``repeat`` repetitions per cell
    (default: the suite's; a smoke run's one cell once), only the cells matching ``only`` when
    given (:func:`chosen_cells`); returns its table."""
    s = suite(name)
    if repeat is not None:
        check_repeat(repeat)
    if smoke and only:
        raise ValueError("--cell: not with --smoke (a smoke run is its one cell)")
    if smoke and repeat not in (None, 1):
        raise ValueError(f"--repeat: got {repeat} with --smoke, expected 1 (a smoke run is one cell run once)")
    if s.needs_root:
        reason = emu.unavailable()
        if reason is not None:
            raise OSError(f"suite {name}: {reason}")
    count = 1 if smoke else (s.repeat if repeat is None else repeat)
    return s.run(suite_dir(out, name, smoke), smoke=smoke, report=report, repeat=count, only=only)
