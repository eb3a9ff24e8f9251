"""Repeated cells of the kernel checks: storing each repetition, and one row out of N.

A kernel run through the emulator is one sample of a noisy measurement (the Verizon BBR-APG
cell's median ping was 287 ms in one kernel run and 351 ms in another), so a suite runs each
cell's kernel side N times and the simulator side over N seeds (repetition k runs the scenario
with seed k, on both sides: the seed also places the pings).

Layout of a cell::

    OUT/cells/<cell>/rep-<k>/    repetition k (1..N): its runs and its row.json, renamed into
                                 place when complete (validation.store_dir)
    OUT/cells/<cell>/row.json    the cell's row over repetitions 1..N, written when all are there

A cell is finished when its ``row.json`` says ``repetitions`` = N and repetitions 1..N are
stored. Asked for another N, a cell keeps what it has: more repetitions are run up to N
(extend), or its row is taken again over the first N (the others stay on disk, unused). A
cell stored before repetitions existed (its files and ``row.json`` directly in the cell's
directory, one kernel run and the simulator at the default seed 1) becomes repetition 1.

The row over N repetitions (:func:`aggregate`): every number is the median of the N values
(``statistics.median``: the middle value, the mean of the two middle ones for an even N) with
its range in ``<key>_min`` and ``<key>_max``; the differences are taken again between the
medians; a figure compared simulator against kernel agrees when the medians are within the
tolerance, or, when the kernel's own spread ((max - min) / median) exceeds the tolerance, when
the two ranges overlap (``<check>_spread`` then says so and the verdict is ``ok (spread)``).
A check of the kernel alone (a ``<check>_ok`` with no simulator figure) holds when it held in
every repetition. Lateness: the worst of the N runs (the lowest share within 100 us, the
highest p99) with the median beside it (``<key>_median``); ``punctual`` is the worst run's.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wificc import storage, validation
from wificc.result import staging_path

REP_PREFIX = "rep-"
# Lateness figures: the worst run is kept (lowest share on time, highest p99), and the median.
WORST_LOW = ("lateness_within_100us", "lateness_all_within_100us")
WORST_HIGH = ("lateness_p99_us",)


@dataclass(frozen=True)
class Compared:
    """A figure of both sides: row keys of the simulator's and the kernel's value and of their
    relative difference; with a check name and tolerance when it is judged (``<check>_ok``)."""

    sim: str
    kernel: str
    diff: str
    check: str | None = None
    tolerance: float | None = None


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def median_range(values: Sequence[Any]) -> tuple[float | None, float | None, float | None]:
    """(median, min, max) of the values present; Nones when there are none."""
    present = [v for v in values if v is not None and not (isinstance(v, float) and v != v)]
    if not present:
        return None, None, None
    return statistics.median(present), min(present), max(present)


def agreement(
    sim: tuple[Any, Any, Any], kernel: tuple[Any, Any, Any], tolerance: float
) -> tuple[float | None, bool | None, bool]:
    """(difference of the medians, agrees, by the ranges' overlap) of a figure's (median, min,
    max) on both sides: within the tolerance, or, when the kernel's spread exceeds it, ranges
    overlapping."""
    difference = validation.relative(sim[0], kernel[0])
    if difference is None:
        return None, None, False
    if abs(difference) <= tolerance:
        return difference, True, False
    spread = (kernel[2] - kernel[1]) / abs(kernel[0])
    overlap = sim[1] <= kernel[2] and kernel[1] <= sim[2]
    return difference, bool(spread > tolerance and overlap), bool(spread > tolerance and overlap)


def aggregate(rows: Sequence[dict[str, Any]], compared: Sequence[Compared]) -> dict[str, Any]:
    """One row out of the rows of N repetitions (module docstring); ``repetitions`` is N and
    ``wall_s`` the sum. The verdict is the caller's (:func:`wificc.kernelcheck.verdict`)."""
    if not rows:
        raise ValueError("aggregate: no repetitions")
    keys = list(dict.fromkeys(k for r in rows for k in r))
    derived = {c.diff for c in compared} | {f"{c.check}_ok" for c in compared if c.check}
    out: dict[str, Any] = {}
    for key in keys:
        values = [r.get(key) for r in rows]
        if key in derived or key in ("verdict", "repetition", "punctual"):
            continue
        if key == "wall_s":
            out[key] = round(sum(v for v in values if v is not None), 1)
        elif key in WORST_LOW or key in WORST_HIGH:
            present = [v for v in values if v is not None]
            pick = min if key in WORST_LOW else max
            out[key] = pick(present) if present else None
            out[f"{key}_median"] = statistics.median(present) if present else None
        elif key.endswith("_ok"):
            # A check of the kernel alone: it holds when it held every time.
            present = [v for v in values if v is not None]
            out[key] = all(present) if present else None
        elif any(_number(v) for v in values):
            out[key], out[f"{key}_min"], out[f"{key}_max"] = median_range(values)
        else:
            out[key] = next((v for v in values if v is not None), None)
    for c in compared:
        sim = (out.get(c.sim), out.get(f"{c.sim}_min"), out.get(f"{c.sim}_max"))
        kernel = (out.get(c.kernel), out.get(f"{c.kernel}_min"), out.get(f"{c.kernel}_max"))
        if c.check is None or c.tolerance is None:
            out[c.diff] = validation.relative(sim[0], kernel[0])
            continue
        out[c.diff], out[f"{c.check}_ok"], out[f"{c.check}_spread"] = agreement(sim, kernel, c.tolerance)
    if "lateness_within_100us" in out:
        worst = out["lateness_within_100us"]
        out["punctual"] = validation.is_punctual(worst)
    out["repetitions"] = len(rows)
    return out


def rep_dir(cell_dir: Path, k: int) -> Path:
    return cell_dir / f"{REP_PREFIX}{k}"


def stored(cell_dir: Path) -> set[int]:
    """The repetitions stored in a cell's directory (those with their row)."""
    if not cell_dir.is_dir():
        return set()
    out = set()
    for p in cell_dir.iterdir():
        number = p.name.removeprefix(REP_PREFIX)
        if p.name.startswith(REP_PREFIX) and number.isdigit() and (p / validation.ROW_FILE).is_file():
            out.add(int(number))
    return out


def read_row(directory: Path) -> dict[str, Any] | None:
    path = directory / validation.ROW_FILE
    return json.loads(path.read_text()) if path.is_file() else None


def adopt_single(cell_dir: Path) -> bool:
    """A cell stored before repetitions (its row without ``repetitions``, no ``rep-*``) becomes
    repetition 1: its files move into ``rep-1``. Returns whether it did."""
    row = read_row(cell_dir)
    if row is None or "repetitions" in row or stored(cell_dir):
        return False
    staging = staging_path(rep_dir(cell_dir, 1))
    staging.mkdir()
    for p in cell_dir.iterdir():
        if p != staging and not p.name.startswith("."):
            os.rename(p, staging / p.name)
    (staging / validation.ROW_FILE).write_text(json.dumps({**row, "repetition": 1}) + "\n")
    os.rename(staging, rep_dir(cell_dir, 1))
    return True


def finished(cell_dir: Path, repeat: int) -> bool:
    """Whether the cell's row is over ``repeat`` repetitions, all stored."""
    row = read_row(cell_dir)
    return row is not None and row.get("repetitions") == repeat and set(range(1, repeat + 1)) <= stored(cell_dir)


def run_repetitions(
    cell_dir: Path,
    cell_id: str,
    repeat: int,
    run: Callable[[Path, int], dict[str, Any]],
    combine: Callable[[list[dict[str, Any]]], dict[str, Any]],
    report: Callable[[str], None],
) -> dict[str, Any]:
    """Run the missing repetitions of a cell (``run(staging, k)`` saves repetition k's files and
    returns its row), each stored as it finishes, then write the cell's row ``combine``d out of
    repetitions 1..``repeat``. Returns that row."""
    if adopt_single(cell_dir):
        report(f"{cell_id}: the cell stored with one run is kept as its repetition 1")
    previous = read_row(cell_dir)
    have = stored(cell_dir)
    if previous is not None and previous.get("repetitions") != repeat:
        report(
            f"{cell_id}: stored with {previous.get('repetitions')} repetitions; "
            + (f"taking the first {repeat}" if repeat < len(have) else f"extending to {repeat}")
        )
    # Unfinished while its repetitions change: no row over another N stays beside them.
    (cell_dir / validation.ROW_FILE).unlink(missing_ok=True)
    for k in range(1, repeat + 1):
        if k in have:
            continue
        validation.store_dir(rep_dir(cell_dir, k), {"cell": cell_id, "repetition": k}, lambda s, k=k: run(s, k))
        report(f"{cell_id}: repetition {k} of {repeat} stored")
    rows = [read_row(rep_dir(cell_dir, k)) for k in range(1, repeat + 1)]
    row = combine([r for r in rows if r is not None])
    storage.write_text(cell_dir / validation.ROW_FILE, json.dumps(row) + "\n")
    return row
