"""The results directory of a sweep, written so that nothing finished is lost.

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

Guarantees beyond atomic renames:

- One writer per results directory: a writer holds an advisory lock (``lockf`` on
  ``.<name>.lock`` beside the directory, :func:`locked`) for as long as it writes; a second
  sweep, or ``wificc run --out`` into the same directory, is refused with the holder's PID and
  host. The lock is the kernel's: it ends with its process, however that dies.
- Staging entries are named after their writer's PID; :func:`clean_staging` removes only its
  own and those of processes that no longer exist.
- A run counts as stored only once it is on disk: every file and the staging directory are
  fsynced before the rename, and ``runs/`` after it.
- Every run carries ``manifest.json``, written last: the size and SHA-256 of each of its files.
  :func:`verify` checks a stored run against it; a sweep resuming into the directory reports a
  run that fails (by path and reason), removes it and runs it again. A run without a manifest
  (stored before manifests existed) is not trusted either.
- Nothing is written before it is needed: the grid file, ``runs.parquet`` and the lock's note
  are written only when they change, so a complete sweep resumes on a full (or read-only) disk.

An embedded database (SQLite, DuckDB) for the run index was considered: it would make the index
transactional, but the Parquet files beside it would still need their own fsync and checksums,
the index would be a second record to keep in step with the directory, and readers (pandas,
``wificc plot``) would need it too. The directory with per-run manifests keeps one record, the
files themselves, checkable with ``sha256sum``.

A run's row records the ``model`` of the simulator that ran it (the fingerprint of its sources,
``wificc._core.MODEL``). A run stored by another model is stale: :func:`stale_ids` names it, a
sweep runs it again, and :func:`write_run` replaces it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import socket
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from wificc.result import Result, staging_path, sync_dir, sync_file, sync_tree

RUNS_DIR = "runs"
RUNS_TABLE = "runs.parquet"
# A run's row of runs.parquet, stored with its tables so the table can be rebuilt.
ROW_FILE = "row.json"
# Grid files kept in the results directory.
GRID_FILES = ("grid.toml", "grid.json")
# Name prefixes of staging files beside the files of the results directory (see staging_path).
STAGED_FILES = tuple(f".{name}." for name in (RUNS_TABLE, *GRID_FILES))
# A run's sizes and checksums, written last.
MANIFEST_FILE = "manifest.json"
# The writer's PID in a staging name (".<name>.<pid>.<uuid hex>", see staging_path).
_STAGING_PID = re.compile(r"\.(\d+)\.[0-9a-f]{32}$")


class DirectoryLocked(OSError):
    """Another process writes into the results directory."""


def lock_path(directory: Path) -> Path:
    """The lock file of a results directory: ``.<name>.lock`` beside it (the directory itself
    may be replaced whole, as ``wificc run --out`` does)."""
    directory = Path(os.path.abspath(directory))
    return directory.parent / f".{directory.name}.lock"


@contextmanager
def locked(directory: str | os.PathLike[str]) -> Iterator[None]:
    """Hold the results directory's advisory lock, or raise :class:`DirectoryLocked` naming its
    holder. A POSIX record lock (``lockf``): held by this process only, not by forked pool
    workers, and released by the kernel when the process ends."""
    path = lock_path(Path(directory))
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError:
        # A read-only directory: nothing can be written into it, so no writer to exclude.
        yield
        return
    try:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 256, 0).decode(errors="replace").strip() or "another process"
            raise DirectoryLocked(
                f"{directory}: in use by another writer ({holder}); wait for it to finish or "
                "write into another directory"
            ) from None
        note = f"pid {os.getpid()} on {socket.gethostname()}".encode()
        try:
            if os.pread(fd, 256, 0) != note:
                os.ftruncate(fd, 0)
                os.pwrite(fd, note, 0)
        except OSError:
            pass  # a full disk: the lock holds without its note
        yield
    finally:
        os.close(fd)


def runs_dir(out: Path) -> Path:
    return out / RUNS_DIR


def _write_atomic(path: Path, write: Any) -> None:
    """Call ``write(staging)`` for a staging file beside ``path``, then rename it over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = staging_path(path)
    try:
        write(staging)
        sync_file(staging)
        os.replace(staging, path)
        sync_dir(path.parent)
    except BaseException:
        staging.unlink(missing_ok=True)
        raise


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, unless it already holds ``text``."""
    try:
        if path.read_text() == text:
            return
    except (OSError, UnicodeDecodeError):
        pass
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
        write_manifest(staging)
        sync_tree(staging)
        stale = None
        if (target / ROW_FILE).is_file() and read_row(out, run_id).get("model") != row.get("model"):
            stale = staging_path(target)
            os.rename(target, stale)
        os.rename(staging, target)
        sync_dir(target.parent)
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


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def write_manifest(directory: Path) -> None:
    """Write ``manifest.json``: size and SHA-256 of every other file of the run directory."""
    files = {
        p.name: {"bytes": p.stat().st_size, "sha256": _sha256(p)}
        for p in sorted(directory.iterdir())
        if p.is_file() and p.name != MANIFEST_FILE
    }
    (directory / MANIFEST_FILE).write_text(json.dumps({"files": files}, indent=1) + "\n")


def verify(directory: Path) -> str | None:
    """What is wrong with the stored run in ``directory`` (a file missing, of another size or
    checksum than its manifest says, an unreadable manifest), or None if it is intact."""
    try:
        files = json.loads((directory / MANIFEST_FILE).read_text())["files"]
        listed = {str(name): (int(f["bytes"]), str(f["sha256"])) for name, f in files.items()}
    except FileNotFoundError:
        return f"no {MANIFEST_FILE}"
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as e:
        return f"{MANIFEST_FILE} unreadable ({type(e).__name__})"
    for required in (ROW_FILE, "scenario.json"):
        if required not in listed:
            return f"{MANIFEST_FILE} lists no {required}"
    for name, (size, digest) in listed.items():
        path = directory / name
        if "/" in name or not path.is_file():
            return f"{name} missing"
        if path.stat().st_size != size:
            return f"{name} has {path.stat().st_size} bytes, expected {size}"
        if _sha256(path) != digest:
            return f"{name} does not match its checksum"
    return None


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


def verified_ids(out: Path, ids: Iterable[str]) -> tuple[set[str], dict[str, str]]:
    """Those of the stored runs ``ids`` that are intact, and what is wrong with each other one."""
    intact, damaged = set(), {}
    for run_id in ids:
        problem = verify(runs_dir(out) / run_id)
        if problem is None:
            intact.add(run_id)
        else:
            damaged[run_id] = problem
    return intact, damaged


def discard(out: Path, run_id: str) -> None:
    """Remove a stored run (a damaged one, to be run again): renamed to a staging name of this
    process first, so that a kill midway leaves nothing that looks finished."""
    target = runs_dir(out) / run_id
    doomed = staging_path(target)
    os.rename(target, doomed)
    shutil.rmtree(doomed, ignore_errors=True)


def _owner_gone(name: str) -> bool:
    """Whether the staging entry ``name`` is this process's or a dead process's."""
    match = _STAGING_PID.search(name)
    if match is None:
        return True
    pid = int(match.group(1))
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def clean_staging(out: Path) -> None:
    """Remove the hidden staging entries in ``runs/`` and beside ``runs.parquet`` and the grid
    file that this process or a process no longer running left behind."""
    directory = runs_dir(out)
    entries = [e for e in directory.iterdir() if e.name.startswith(".")] if directory.is_dir() else []
    entries += [e for e in out.iterdir() if e.name.startswith(STAGED_FILES)] if out.is_dir() else []
    for entry in (e for e in entries if _owner_gone(e.name)):
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


def rebuild(out: Path, order: Iterable[str] = (), done: Iterable[str] | None = None) -> pd.DataFrame:
    """Write ``runs.parquet`` from the stored runs ``done`` (default every one) and return it;
    a file that already holds that table is left alone.

    Runs named in ``order`` come first, in that order; the others (from earlier grids in the
    same directory) follow sorted by id.
    """
    done = finished_ids(out) if done is None else set(done)
    first = [i for i in dict.fromkeys(order) if i in done]
    ids = first + sorted(done.difference(first))
    frame = table(read_row(out, i) for i in ids)
    try:
        unchanged = pd.read_parquet(out / RUNS_TABLE).equals(frame)
    except (OSError, ValueError):
        unchanged = False
    if not unchanged:
        _write_atomic(out / RUNS_TABLE, lambda staging: frame.to_parquet(staging, index=False))
    return frame
