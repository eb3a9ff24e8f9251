"""The results directory of a sweep (SPEC section 10), written so that nothing finished is lost.

Layout::

    OUT/grid.toml          the grid as given (grid.json for a grid given as JSON or a dict)
    OUT/runs/<id>/         one finished run: Result.save's Parquet tables and scenario.json,
                           plus row.json, its row of runs.parquet
    OUT/runs.parquet       one row per finished run, rebuilt from runs/*/row.json

Every write is atomic. A run is staged under a hidden name beside ``runs/<id>`` and renamed into
place only once its tables and ``row.json`` are complete, so ``runs/<id>`` either does not exist
or holds the whole run; a killed sweep leaves at most hidden staging entries, which
:func:`clean_staging` removes. ``runs.parquet`` and ``grid.toml`` are written to a staging file
and renamed over the old one. The directory itself is the record of what is done: a run is
finished exactly when ``runs/<id>/`` exists, so a re-run skips it and ``runs.parquet`` can always
be rebuilt from the run directories.

A run's row records the ``model`` of the simulator that ran it (the fingerprint of its sources,
``wificc._core.MODEL``). A run stored by another model is stale: :func:`stale_ids` names it, a
sweep runs it again, and :func:`write_run` replaces it.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from wificc.result import Result, staging_path

RUNS_DIR = "runs"
RUNS_TABLE = "runs.parquet"
# A run's row of runs.parquet, stored with its tables so the table can be rebuilt.
ROW_FILE = "row.json"
# Grid files kept in the results directory.
GRID_FILES = ("grid.toml", "grid.json")
# Name prefixes of staging files beside the files of the results directory (see staging_path).
STAGED_FILES = tuple(f".{name}." for name in (RUNS_TABLE, *GRID_FILES))


def runs_dir(out: Path) -> Path:
    return out / RUNS_DIR


def _write_atomic(path: Path, write: Any) -> None:
    """Call ``write(staging)`` for a staging file beside ``path``, then rename it over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = staging_path(path)
    try:
        write(staging)
        os.replace(staging, path)
    except BaseException:
        staging.unlink(missing_ok=True)
        raise


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    _write_atomic(path, lambda staging: staging.write_text(text))


def write_run(
    out: Path,
    run_id: str,
    result: Result,
    row: Mapping[str, Any],
    extras: Callable[[Path], None] | None = None,
) -> Path:
    """Store a finished run as ``runs/<run_id>/`` with its row; return the directory.

    ``extras``, if given, writes further files of the run (a ``.flent.gz``) into the directory
    it is called with, before the run is renamed into place.

    If another writer finished the same run first, its directory is kept and this copy is
    dropped: both hold the same deterministic run.
    A stored run of another ``model`` than ``row``'s is replaced: it is renamed to a hidden
    name (which :func:`clean_staging` removes if the process dies here) and deleted once the new
    run is in place.
    """
    target = runs_dir(out) / run_id
    staging = staging_path(target)
    try:
        result.save(staging)
        (staging / ROW_FILE).write_text(json.dumps(dict(row)) + "\n")
        if extras is not None:
            extras(staging)
        stale = None
        if (target / ROW_FILE).is_file() and read_row(out, run_id).get("model") != row.get("model"):
            stale = staging_path(target)
            os.rename(target, stale)
        os.rename(staging, target)
        if stale is not None:
            shutil.rmtree(stale, ignore_errors=True)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not (target / ROW_FILE).exists():
            raise
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def finished_ids(out: Path) -> set[str]:
    """Ids of the runs stored under ``out`` (staging entries are hidden and not counted)."""
    directory = runs_dir(out)
    if not directory.is_dir():
        return set()
    return {p.name for p in directory.iterdir() if not p.name.startswith(".") and (p / ROW_FILE).is_file()}


def stale_ids(out: Path, ids: Iterable[str], model: str) -> set[str]:
    """Those of the finished runs ``ids`` whose row names another model than ``model`` (or
    none: stored before rows recorded it)."""
    return {i for i in ids if read_row(out, i).get("model") != model}


def read_row(out: Path, run_id: str) -> dict[str, Any]:
    return json.loads((runs_dir(out) / run_id / ROW_FILE).read_text())


def clean_staging(out: Path) -> None:
    """Remove the hidden staging entries an interrupted writer left in ``runs/`` and beside
    ``runs.parquet`` and the grid file."""
    directory = runs_dir(out)
    entries = [e for e in directory.iterdir() if e.name.startswith(".")] if directory.is_dir() else []
    entries += [e for e in out.iterdir() if e.name.startswith(STAGED_FILES)]
    for entry in entries:
        if entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def _cell(value: Any) -> Any:
    """A value that fits one Parquet cell: tables and lists become JSON text."""
    return json.dumps(value) if isinstance(value, Mapping | list) else value


def table(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Rows as a DataFrame Parquet can store.

    A column mixing text and numbers becomes text; a column with no values at all (a trace
    link's signal delay on a wired path) is a float column of NaN.
    """
    frame = pd.DataFrame.from_records([{k: _cell(v) for k, v in row.items()} for row in rows])
    for column in frame.columns:
        values = frame[column]
        if values.dtype == object:
            present = values.dropna()
            if present.empty:
                frame[column] = values.astype("float64")
            elif present.map(type).nunique() > 1:
                frame[column] = values.map(lambda v: v if v is None or pd.isna(v) else str(v))
    return frame


def rebuild(out: Path, order: Iterable[str] = ()) -> pd.DataFrame:
    """Write ``runs.parquet`` from every stored run and return it.

    Runs named in ``order`` come first, in that order; the others (from earlier grids in the
    same directory) follow sorted by id.
    """
    done = finished_ids(out)
    first = [i for i in dict.fromkeys(order) if i in done]
    ids = first + sorted(done.difference(first))
    frame = table(read_row(out, i) for i in ids)
    _write_atomic(out / RUNS_TABLE, lambda staging: frame.to_parquet(staging, index=False))
    return frame
