"""Sweeps: a base scenario, parameter lists and repetitions, run in parallel into one directory.

A grid is a TOML (or JSON) document::

    description = "TSQ and rate"         # free text
    test = "tcp_upload"                  # a catalog test (wificc.scenarios), or leave it out
    scenario = "base.toml"               # the base scenario: a file (relative to the grid
                                         # file) or an inline [scenario] table; with a test it
                                         # is the test's base, as `wificc run TEST --scenario`
    repetitions = 3                      # runs of every grid point; seed = base seed + r
    [options]                            # catalog options of the test (scenarios.build):
    length = "10s"                       # path, rate, rtt, buffer, qdisc, cc, tsq, tp, ...
    [grid]                               # the product of these lists
    cc = ["cubic", "bbr"]                # a catalog option (needs a test)
    "stack.tsq" = ["1ms", "4ms"]         # a scenario field by its dotted path
    "flows[0].cc_params.bbrp_pace" = [5, 6]
    [[zip]]                              # lists that vary together (equal lengths): one more
    "path.rate" = ["10mbit", "1gbit"]    # factor of the product
    "path.rtt" = ["50ms", "10ms"]

Each grid point is resolved in this order: the test is built from its options (the file's
``[options]`` overridden by the point's option values) over the base scenario, then the
point's dotted paths are set on the result; the core then validates the point and fills every
default in. A repetition ``r`` (0-based) sets the seed to the point's seed + ``r``. The run id
is a hash of this fully resolved scenario, so it names the simulation itself: two spellings
of one setting ("50mbit", "50000kbit") give one id, and a re-run recognises finished runs
whatever the order of the grid. A finished run counts only if the simulator that stored it is
this one (its row's ``model``, the fingerprint of the core's sources): runs of an older model
are run again and replaced, so a resumed study never mixes two versions of the simulator; a
run that a Dask worker of another build returns is reported as failed rather than stored.

Runs go to a local process pool (``workers``, default the CPU count; 1 runs them in this
process) or to a Dask cluster (``scheduler``: its address, or a ``distributed.Client``). Workers
only simulate and return the core's results document; this process writes every run with
:mod:`wificc.storage`, atomically, as soon as it finishes, so a killed sweep loses only the runs
in progress and the same command resumes it. ``runs.parquet`` gets one row per run: the run id,
the grid parameters (as written in the grid), the repetition and seed, then the summary
columns of :func:`summary_columns`.
"""

from __future__ import annotations

import copy
import ctypes
import functools
import hashlib
import inspect
import itertools
import json
import multiprocessing
import os
import re
import signal
import sys
import tomllib
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from rich.console import Console

from wificc import _core, api, flent, memory, scenarios, storage
from wificc.progress import SweepBar
from wificc.result import PEAK_FIELD, Result

GridLike = Mapping[str, Any] | str | os.PathLike[str]

# Keys of a grid document with what each holds (docs/sweep.md is generated from this table).
GRID_KEY_DOCS = {
    "description": "Free text, kept with the results.",
    "test": "A catalog test (`wificc tests`); its options go in `[options]` and may be grid keys.",
    "scenario": "The base scenario: a file path (relative to the grid file) or an inline `[scenario]` table; "
    "with a test it is the test's base, as `wificc run TEST --scenario FILE`.",
    "options": "Catalog options of the test (the table below), for every run.",
    "repetitions": "Runs of every grid point, at least 1 (default 1); repetition r uses the point's seed + r.",
    "flent": "true: also write each run's Flent data file, `runs/<id>/<flent test>.flent.gz`.",
    "grid": "Lists to cross: each key a catalog option (with a test) or a scenario field by its dotted path; "
    "the runs are the product of the lists.",
    "zip": "`[[zip]]` groups of lists of equal length that vary together: each group is one more factor of "
    "the product.",
}
GRID_KEYS = tuple(GRID_KEY_DOCS)
# Seed of a scenario that does not give one (the core's default).
DEFAULT_SEED = 1
# Hex digits of the run id (64 bits of SHA-256).
RUN_ID_DIGITS = 16
# Top-level fields of a scenario (crates/wificc-core/src/scenario.rs, struct Scenario).
SCENARIO_FIELDS = ("seed", "duration", "step", "warmup", "path", "stack", "flows", "pings")
# A catalog option whose name differs from its scenarios.build keyword (as on the command line).
OPTION_ALIASES = {"path": "path_kind"}
# Summary fields of a queue in runs.parquet, each as "<queue name>_<column>".
QUEUE_COLUMNS = {
    "drops": "dropped",
    "sojourn_p95_ms": "sojourn_p95_ms",
    "signal_delay_p95_ms": "signal_delay_p95_ms",
    "utilization": "utilization",
}
PING_PERCENTILES = ("p10", "p50", "p90", "p99")
# A-MPDU size fields of the sending Wi-Fi node, each a column of runs.parquet.
AMPDU_COLUMNS = ("ampdu_mean", "ampdu_p10", "ampdu_p50", "ampdu_p90")

# One step of a dotted path: a field name, or a list index.
_SEGMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[[0-9]+\])*)")
_INDEX = re.compile(r"\[([0-9]+)\]")
# A key that reads unquoted in messages, as in TOML.
_BARE_KEY = re.compile(r"[A-Za-z0-9_.-]+")


class SweepError(RuntimeError):
    """Some runs of a sweep failed; the finished ones are stored."""


@dataclass(frozen=True)
class Grid:
    """A parsed grid document."""

    test: str | None
    # The base scenario (None: the test's defaults).
    base: dict[str, Any] | None
    # Catalog options of the test, by scenarios.build keyword.
    options: dict[str, Any]
    # Factors of the product: each a list of points, each point a {key: value} assignment.
    factors: list[list[dict[str, Any]]]
    repetitions: int
    # Whether each run also gets a Flent data file (runs/<id>/<flent test>.flent.gz).
    flent: bool = False


@dataclass(frozen=True)
class Run:
    """One run of a sweep: a grid point, a repetition, and the scenario they resolve to."""

    id: str
    params: dict[str, Any]
    repetition: int
    seed: int
    scenario: dict[str, Any]

    def label(self) -> str:
        return describe(self.params, self.repetition)


def describe(params: Mapping[str, Any], repetition: int | None = None) -> str:
    """``path.rate=10mbit, cc=bbr, repetition 1``: a grid point in messages and progress."""
    parts = [f"{key}={json.dumps(value) if not isinstance(value, str) else value}" for key, value in params.items()]
    if repetition is not None:
        parts.append(f"repetition {repetition}")
    return ", ".join(parts) or "(base scenario)"


# ---- reading and expanding a grid ------------------------------------------------------------


def _grid_error(key: str, message: str) -> ValueError:
    return ValueError(f"grid.{key if _BARE_KEY.fullmatch(key) else json.dumps(key)}: {message}")


def load_grid(grid: GridLike) -> tuple[dict[str, Any], Path]:
    """The grid document and the directory its relative paths start from.

    A mapping is the document; a path (``os.PathLike``, or a string without a newline or ``=``)
    is read as JSON when it ends in ``.json``, else TOML; another string is TOML text.
    """
    if isinstance(grid, Mapping):
        return dict(grid), Path.cwd()
    if isinstance(grid, str) and ("\n" in grid or "=" in grid):
        try:
            return tomllib.loads(grid), Path.cwd()
        except tomllib.TOMLDecodeError as e:
            raise ValueError(f"(grid): invalid TOML: {e}") from e
    if not isinstance(grid, str | os.PathLike):
        raise TypeError(f"grid: got {type(grid).__name__}, expected a dict, a file path or TOML text")
    path = Path(grid)
    if not path.is_file():
        raise ValueError(f"grid: {str(path)!r} is not a file, expected a grid file (TOML or JSON)")
    return scenarios.load(path), path.parent


@functools.cache
def _option_hints() -> dict[str, Any]:
    """The keyword options of :func:`wificc.scenarios.build` with their type hints."""
    hints = typing.get_type_hints(scenarios.build)
    parameters = inspect.signature(scenarios.build).parameters
    return {
        name: hints.get(name, Any)
        for name, p in parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY and name != "base"
    }


def _option_name(key: str) -> str | None:
    """The scenarios.build keyword of a catalog option key, or None if it is not one."""
    name = OPTION_ALIASES.get(key, key)
    return name if name in _option_hints() else None


# Catalog option types as error messages say them.
_TYPE_NAMES = {
    str: "a string",
    int: "an integer",
    bool: "true or false",
    float: "a number",
    Path: "a file path",
}


def _is_union(hint: Any) -> bool:
    return isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union


def _is_list_of_str(origin: Any) -> bool:
    """A generic such as ``Iterable[str]`` or ``Sequence[str]``: a list in a grid."""
    return isinstance(origin, type) and issubclass(origin, Iterable) and not issubclass(origin, str | Mapping)


def _expected(hint: Any) -> str:
    """How a type hint reads in an error message."""
    if _is_union(hint):
        names = [n for a in typing.get_args(hint) if a is not type(None) for n in _expected(a).split(" or ")]
        return " or ".join(dict.fromkeys(names))
    origin = typing.get_origin(hint) or hint
    if origin in _TYPE_NAMES:
        return _TYPE_NAMES[origin]
    if isinstance(origin, type) and issubclass(origin, Mapping):
        return "a table"
    if _is_list_of_str(origin):
        return "a string or a list of strings"  # one string stands for a list of one
    return f"a {getattr(origin, '__name__', origin)}"


def _conforms(value: Any, hint: Any) -> bool:
    if hint is Any:
        return True
    if _is_union(hint):
        return any(_conforms(value, a) for a in typing.get_args(hint) if a is not type(None))
    origin = typing.get_origin(hint) or hint
    if origin in (int, float) and isinstance(value, bool):
        return False
    if origin is float:
        return isinstance(value, int | float)
    if isinstance(origin, type) and issubclass(origin, Mapping):
        return isinstance(value, Mapping)
    if _is_list_of_str(origin):
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return isinstance(value, origin)


def _option_value(key: str, name: str, value: Any, where: str) -> Any:
    """A catalog option's value checked against its type; one string stands for a list of one."""
    hint = _option_hints()[name]
    if isinstance(value, str) and _is_list_of_str(typing.get_origin(hint)):
        value = [value]
    if not _conforms(value, hint):
        raise ValueError(f"{where}{key}: got {json.dumps(value)}, expected {_expected(hint)}")
    return value


def parse_path(key: str) -> list[str | int]:
    """The steps of a dotted path: ``"flows[0].cc"`` -> ``["flows", 0, "cc"]``."""
    steps: list[str | int] = []
    for segment in key.split("."):
        match = _SEGMENT.fullmatch(segment)
        if match is None:
            raise _grid_error(
                key,
                'expected a catalog option or a dotted scenario path such as "path.rate" or "flows[0].cc"',
            )
        steps.append(match.group(1))
        steps.extend(int(i) for i in _INDEX.findall(match.group(2)))
    return steps


def _show(steps: list[str | int]) -> str:
    out = ""
    for step in steps:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out


def set_path(scenario: dict[str, Any], key: str, value: Any) -> None:
    """Set the field at dotted path ``key`` of ``scenario`` to a copy of ``value``.

    Missing tables on the way are created (the scenario leaves defaults out); a list index must
    exist.
    """
    steps = parse_path(key)
    node: Any = scenario
    for i, step in enumerate(steps):
        last = i == len(steps) - 1
        here = _show(steps[:i]) or "(scenario)"
        if isinstance(step, int):
            if not isinstance(node, list):
                raise _grid_error(key, f"{here} is {json.dumps(node)}, not a list to index")
            if step >= len(node):
                raise _grid_error(key, f"{here} has {len(node)} entries, so no index {step}")
        elif not isinstance(node, dict):
            raise _grid_error(key, f"{here} is {json.dumps(node)}, not a table with a field {step!r}")
        if last:
            node[step] = copy.deepcopy(value)
        else:
            if isinstance(step, str) and step not in node:
                if isinstance(steps[i + 1], int):
                    raise _grid_error(key, f"{_show(steps[: i + 1])} is not in the scenario, so it has no index")
                node[step] = {}
            node = node[step]


def _at_least_one(name: str, value: Any) -> int:
    """A count given by the user: an integer of at least 1."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name}: got {json.dumps(value)}, expected an integer of at least 1")
    return value


def _flat_keys(table: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted key, value) of a grid table; TOML's bare dotted keys arrive as nested tables."""
    for key, value in table.items():
        full = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping):
            yield from _flat_keys(value, full)
        else:
            yield full, value


def _values(key: str, value: Any) -> list[Any]:
    if not isinstance(value, list) or not value:
        raise _grid_error(
            key, f'got {json.dumps(value)}, expected a non-empty list of values such as ["10mbit", "50mbit"]'
        )
    return value


def _check_key(key: str, test: str | None) -> None:
    """A grid key is a catalog option (with a test) or a dotted scenario path."""
    if _option_name(key) is not None and test is not None:
        return
    if _option_name(key) is not None and key not in SCENARIO_FIELDS:
        raise _grid_error(
            key,
            f'{key!r} is a catalog option, which needs a test (test = "tcp_upload", ...); '
            'without one, name a scenario field such as "flows[0].cc"',
        )
    parse_path(key)


def parse_grid(document: Mapping[str, Any], root: Path = Path(".")) -> Grid:
    """Check a grid document and return its parts; errors name the key, the value and why."""
    for key in document:
        if key not in GRID_KEYS:
            raise ValueError(f"(grid): unknown key {key!r}, expected one of {', '.join(GRID_KEYS)}")
    test = document.get("test")
    if test is not None and test not in scenarios.TESTS:
        raise ValueError(f"test: got {json.dumps(test)}, expected one of {', '.join(scenarios.TESTS)}")
    base = document.get("scenario")
    if isinstance(base, str):
        if not (root / base).is_file():
            raise ValueError(f"scenario: {str(root / base)!r} is not a file, expected a scenario file")
        base = scenarios.load(root / base)
    elif base is not None and not isinstance(base, Mapping):
        raise ValueError(f"scenario: got {json.dumps(base)}, expected a table or a scenario file path")
    if base is None and test is None:
        raise ValueError(
            '(grid): give a base scenario (scenario = "file.toml" or a [scenario] table) '
            f"or a catalog test (test = one of {', '.join(scenarios.TESTS)})"
        )
    raw_options = document.get("options", {})
    if not isinstance(raw_options, Mapping):
        raise ValueError(f"options: got {json.dumps(raw_options)}, expected a table of catalog options")
    if raw_options and test is None:
        raise ValueError('options: catalog options need a test (test = "tcp_upload", ...)')
    options = {}
    for key, value in raw_options.items():
        name = _option_name(key)
        if name is None:
            keys = {name: key for key, name in OPTION_ALIASES.items()}
            names = ", ".join(keys.get(n, n) for n in _option_hints())
            raise ValueError(f"options.{key}: unknown catalog option, expected one of {names}")
        options[name] = _option_value(key, name, value, "options.")
    repetitions = _at_least_one("repetitions", document.get("repetitions", 1))
    flent_files = document.get("flent", False)
    if not isinstance(flent_files, bool):
        raise ValueError(f"flent: got {json.dumps(flent_files)}, expected true or false")

    seen: set[str] = set()
    factors: list[list[dict[str, Any]]] = []

    def claim(key: str) -> None:
        if key in seen:
            raise _grid_error(key, "given twice (in [grid] and [[zip]], or in two [[zip]] groups)")
        seen.add(key)
        _check_key(key, test)

    grid = document.get("grid", {})
    if not isinstance(grid, Mapping):
        raise ValueError(f"grid: got {json.dumps(grid)}, expected a table of parameter lists")
    for key, value in _flat_keys(grid):
        claim(key)
        factors.append([{key: v} for v in _values(key, value)])
    groups = document.get("zip", [])
    if not isinstance(groups, list) or not all(isinstance(g, Mapping) for g in groups):
        raise ValueError(f"zip: got {json.dumps(groups)}, expected [[zip]] tables of parameter lists")
    for n, group in enumerate(groups):
        columns = dict(_flat_keys(group))
        if not columns:
            raise ValueError(f"zip[{n}]: empty group, expected parameter lists that vary together")
        lengths = {key: len(_values(key, value)) for key, value in columns.items()}
        for key in columns:
            claim(key)
        if len(set(lengths.values())) > 1:
            shown = ", ".join(f"{k} has {v}" for k, v in lengths.items())
            raise ValueError(f"zip[{n}]: lists of one group must have equal lengths; {shown}")
        factors.append([dict(zip(columns, row, strict=True)) for row in zip(*columns.values(), strict=True)])
    return Grid(test, dict(base) if base is not None else None, options, factors, repetitions, flent_files)


def points(grid: Grid) -> list[dict[str, Any]]:
    """The grid points in order: the product of the factors, the last one varying fastest."""
    return [{k: v for part in combo for k, v in part.items()} for combo in itertools.product(*grid.factors)]


def resolve(grid: Grid, point: Mapping[str, Any]) -> dict[str, Any]:
    """The scenario of a grid point, before the core fills in its defaults."""
    where = f"grid point {describe(point)}: "
    paths = {k: v for k, v in point.items() if not (grid.test and _option_name(k))}
    if grid.test is not None:
        options = dict(grid.options)
        for key, value in point.items():
            if key not in paths:
                name = _option_name(key)
                options[name] = _option_value(key, name, value, where)
        try:
            scenario = scenarios.build(grid.test, base=grid.base, **options)
        except ValueError as e:
            raise ValueError(f"{where}{e}") from None
    else:
        scenario = copy.deepcopy(grid.base or {})
    for key, value in paths.items():
        set_path(scenario, key, value)
    return scenario


def run_id(scenario: Mapping[str, Any]) -> str:
    """The id of a fully resolved scenario: a hash of its canonical JSON."""
    text = json.dumps(scenario, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:RUN_ID_DIGITS]


def expand(grid: GridLike | Grid, repetitions: int | None = None) -> list[Run]:
    """Every run of a grid, in order (grid points, then repetitions), each with its id.

    ``repetitions`` overrides the grid's. Every point is validated by the core first, so a bad
    value is reported before anything runs.
    """
    if not isinstance(grid, Grid):
        grid = parse_grid(*load_grid(grid))
    repetitions = grid.repetitions if repetitions is None else _at_least_one("repetitions", repetitions)
    runs: list[Run] = []
    owner: dict[str, Run] = {}
    for point in points(grid):
        try:
            resolved = api.validate(resolve(grid, point))
        except ValueError as e:
            message = str(e)
            prefix = "" if message.startswith("grid") else f"grid point {describe(point)}: "
            raise ValueError(f"{prefix}{message}") from None
        base_seed = resolved.get("seed", DEFAULT_SEED)
        for repetition in range(repetitions):
            scenario = {**resolved, "seed": base_seed + repetition}
            run = Run(run_id(scenario), dict(point), repetition, base_seed + repetition, scenario)
            if run.id in owner:
                raise ValueError(
                    f"grid: {owner[run.id].label()} and {run.label()} are the same simulation "
                    f"(run {run.id}); give each grid value once"
                )
            owner[run.id] = run
            runs.append(run)
    return runs


# ---- the row of a run ------------------------------------------------------------------------


def summary_columns(result: Result) -> dict[str, Any]:
    """The summary columns of a run's row in runs.parquet.

    ``flow<i>_goodput_bps``, ``flow<i>_retrans`` and ``flow<i>_skb_segs_mean`` (segments per
    skb handed below TCP) per flow, ``total_goodput_bps``, ``jain``,
    ``retrans`` (all flows); ``ping_p10_ms`` .. ``ping_p99_ms`` of the first ping (Flent's ICMP
    ping) and ``ping<i>_p10_ms`` .. of any further ping ``i``; ``<queue>_drops``,
    ``<queue>_sojourn_p95_ms`` (per-packet queueing delay), ``<queue>_signal_delay_p95_ms``
    (trace links) and ``<queue>_utilization`` per watched queue; on a Wi-Fi path,
    ``ampdu_mean`` and ``ampdu_p10/p50/p90`` (MPDUs per A-MPDU) of the sending node
    (:func:`sending_wifi_node`); ``duration_s``, ``events``, ``wall_s`` and ``peak_rss_bytes``
    (the run's peak resident memory, :mod:`wificc.memory`) of the run, and the
    ``model`` fingerprint of the simulator that ran it.
    """
    raw = result.raw
    row: dict[str, Any] = {}
    for i, flow in enumerate(raw["flows"]):
        row[f"flow{i}_goodput_bps"] = flow["goodput_bps"]
        row[f"flow{i}_retrans"] = flow["retrans"]
        row[f"flow{i}_skb_segs_mean"] = flow["skb_segs_mean"]
    summary = raw["summary"]
    row["total_goodput_bps"] = summary["total_goodput_bps"]
    row["jain"] = summary["jain"]
    row["retrans"] = sum(flow["retrans"] for flow in raw["flows"])
    for i, ping in enumerate(raw["pings"]):
        prefix = "ping" if i == 0 else f"ping{i}"
        for p in PING_PERCENTILES:
            row[f"{prefix}_{p}_ms"] = ping[f"rtt_{p}_ms"]
    for queue in raw["queues"]:
        for column, field in QUEUE_COLUMNS.items():
            row[f"{queue['name']}_{column}"] = queue[field]
    node = sending_wifi_node(raw)
    if node is not None:
        for column in AMPDU_COLUMNS:
            row[column] = node[column]
    for key in ("duration_s", "events", "wall_s", PEAK_FIELD, "model"):
        row[key] = result.summary.get(key)
    return row


def sending_wifi_node(raw: Mapping[str, Any]) -> dict[str, Any] | None:
    """The Wi-Fi node that sends the first flow's data: the AP of the first BSS for a download,
    else the station of that BSS with the most airtime; None without Wi-Fi or flows."""
    nodes = [w for w in raw.get("wifi") or [] if w["bss"] == 0]
    if not nodes or not raw["flows"]:
        return None
    if raw["flows"][0]["direction"] == "down":
        return next((w for w in nodes if w["node"] == 0), None)
    stations = [w for w in nodes if w["node"] != 0]
    return max(stations, key=lambda w: w["airtime"]) if stations else None


def run_row(run: Run, result: Result) -> dict[str, Any]:
    """A run's row of runs.parquet: id, grid parameters, repetition, seed, summary columns."""
    return {
        "run_id": run.id,
        **run.params,
        "repetition": run.repetition,
        "seed": run.seed,
        **summary_columns(result),
    }


# ---- execution -------------------------------------------------------------------------------


def simulate(text: str) -> tuple[str, int]:
    """Run one scenario (JSON text) and return the core's results document and the run's peak
    resident bytes: the worker task. A run over the memory limit (the worker's
    ``WIFICC_MEMORY_LIMIT`` or half its memory) fails before it starts."""
    memory.check(json.loads(_core.validate(text, "json")))
    return memory.run_measured(text, "json")


class _Collector:
    """Stores each finished run as it arrives and keeps the failures (a failed run must not
    stop the others from being stored)."""

    def __init__(self, out: Path, flent_tests: Mapping[str, str] | None = None):
        self.out = out
        # The Flent test of each run that also gets a .flent.gz, by run id.
        self.flent_tests = flent_tests or {}
        self.failures: list[str] = []
        # Called with each stored run (the progress bar).
        self.stored: Callable[[Run], None] = lambda run: None
        # Ids of the runs stored.
        self.stored_ids: set[str] = set()

    def take(self, run: Run, results_document: Callable[[], tuple[str, int]]) -> None:
        try:
            text, peak = results_document()
        except Exception as e:
            self.failures.append(f"{run.id} ({run.label()}): {e}")
            return
        result = Result.from_json(text)
        result.summary[PEAK_FIELD] = peak
        model = result.summary.get("model")
        if model != _core.MODEL:
            # A Dask worker with another build: storing its run would mix two simulators.
            self.failures.append(
                f"{run.id} ({run.label()}): simulated by model {model}, not this one ({_core.MODEL}); "
                "install the same wificc build on every worker"
            )
            return
        test = self.flent_tests.get(run.id)

        def flent_file(directory: Path) -> None:
            flent.export(result, directory / f"{test}{flent.SUFFIX}", test=test)

        storage.write_run(self.out, run.id, result, run_row(run, result), flent_file if test else None)
        self.stored_ids.add(run.id)
        self.stored(run)


def _execute_local(todo: list[Run], workers: int, collector: _Collector) -> None:
    """Run in this process (one worker) or on a process pool."""
    if workers == 1:
        for run in todo:
            collector.take(run, lambda run=run: simulate(json.dumps(run.scenario)))
        return
    # Fork where the platform has it: workers start at once and a script needs no
    # `if __name__ == "__main__"` guard (the progress bar has no thread to fork, see wificc.progress).
    fork = "fork" in multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if fork else None)
    pool = ProcessPoolExecutor(
        max_workers=min(workers, len(todo)),
        mp_context=context,
        initializer=_worker_init,
        initargs=(os.getpid(),),
    )
    with pool:
        futures = {pool.submit(simulate, json.dumps(run.scenario)): run for run in todo}
        try:
            for future in as_completed(futures):
                collector.take(futures[future], future.result)
        except BaseException:
            # Interrupted (Ctrl-C, a failed write): the workers die now, mid-run, rather than
            # finish runs nobody stores; the queued runs are dropped.
            processes = list((getattr(pool, "_processes", None) or {}).values())
            for process in processes:
                process.kill()
            pool.shutdown(wait=False, cancel_futures=True)
            raise


# prctl(2) option: the signal a process gets when its parent dies (include/uapi/linux/prctl.h).
PR_SET_PDEATHSIG = 1


def _worker_init(parent: int) -> None:
    """Set up a pool worker: it dies with the sweep, however the sweep ends. The kernel sends it
    SIGKILL when its parent dies (PR_SET_PDEATHSIG, Linux); if the parent died before this ran,
    it exits now. Ctrl-C is the parent's to handle: the parent kills its workers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the parent's kill on interruption still applies
    if os.getppid() != parent:
        os._exit(1)


@contextmanager
def _dask_client(scheduler: Any) -> Iterator[Any]:
    """A client of the Dask cluster at ``scheduler`` (an address), or ``scheduler`` itself if it
    is a ``distributed.Client``; a client opened here is closed on exit."""
    from distributed import Client

    if isinstance(scheduler, Client):
        yield scheduler
        return
    try:
        client = Client(scheduler)
    except (OSError, ValueError, TypeError) as e:
        raise ValueError(f"scheduler: cannot connect to {scheduler!r}: {e}") from None
    with client:
        yield client


def _execute_dask(todo: list[Run], client: Any, collector: _Collector) -> None:
    """Run on a Dask cluster."""
    from distributed import as_completed as dask_completed

    futures = {client.submit(simulate, json.dumps(run.scenario), key=f"wificc-run-{run.id}"): run for run in todo}
    for future in dask_completed(list(futures)):
        collector.take(futures[future], future.result)
        future.release()


def _store_grid(out: Path, grid: GridLike) -> None:
    """Keep the grid in the results directory: a file as it is, a dict as JSON."""
    toml_file, json_file = storage.GRID_FILES
    if isinstance(grid, Mapping):
        storage.write_text(out / json_file, json.dumps(grid, indent=2) + "\n")
    elif isinstance(grid, str) and ("\n" in grid or "=" in grid):
        storage.write_text(out / toml_file, grid)
    else:
        path = Path(grid)
        storage.write_text(out / (json_file if path.suffix.lower() == ".json" else toml_file), path.read_text())


def flent_tests(runs: Iterable[Run]) -> dict[str, str]:
    """The Flent test of each run, by run id; a run whose traffic is no Flent test is an error
    naming it, raised before anything runs."""
    tests = {}
    for run in runs:
        try:
            tests[run.id] = flent.flent_test(types.SimpleNamespace(scenario=run.scenario))
        except ValueError as e:
            raise ValueError(f"flent: {run.label()}: {e}") from None
    return tests


def sweep(
    grid: GridLike,
    out: str | os.PathLike[str],
    *,
    workers: int | None = None,
    scheduler: Any = None,
    repetitions: int | None = None,
    progress: bool = True,
    console: Console | None = None,
    flent_files: bool | None = None,
    bar: SweepBar | None = None,
) -> pd.DataFrame:
    """Run every run of ``grid`` not yet in ``out``; return the grid's rows of runs.parquet.

    ``workers``: local processes (default the CPU count; 1 runs in this process).
    ``scheduler``: a Dask scheduler address or ``distributed.Client`` instead of the local
    pool. ``repetitions`` overrides the grid's. ``flent_files`` overrides the grid's ``flent``:
    every run gets its ``.flent.gz`` (runs stored earlier without one get it from their
    tables). Runs stored by another simulator model are run again and replaced (see the
    module's docstring). The progress bar (``progress``, on ``console`` or stderr) is this
    sweep's own, or ``bar``, one shared with other sweeps (:class:`wificc.progress.SweepBar`).
    Raises :class:`SweepError` after storing every other run if some runs failed.
    """
    if workers is not None:
        _at_least_one("workers", workers)
    if workers is not None and scheduler is not None:
        raise ValueError("workers: a Dask cluster has its own workers; give workers or scheduler, not both")
    parsed = grid if isinstance(grid, Grid) else parse_grid(*load_grid(grid))
    runs = expand(parsed, repetitions)
    wants_flent = parsed.flent if flent_files is None else flent_files
    tests = flent_tests(runs) if wants_flent else {}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with storage.locked(out):
        own = bar is None
        shown = bar if bar is not None else SweepBar(console=console, shown=progress)
        with shown if own else nullcontext(shown):
            return _sweep_locked(grid, out, runs, tests, scheduler, workers, shown)


def _sweep_locked(
    grid: GridLike,
    out: Path,
    runs: list[Run],
    tests: Mapping[str, str],
    scheduler: Any,
    workers: int | None,
    bar: SweepBar,
) -> pd.DataFrame:
    """:func:`sweep` once it holds the results directory's lock."""
    _store_grid(out, grid)
    order = [run.id for run in runs]
    intact, damaged = storage.verified_ids(out, storage.finished_ids(out))
    notes = []
    for run_id_, problem in sorted(damaged.items()):
        notes.append(f"{storage.runs_dir(out) / run_id_}: damaged ({problem}); running it again")
        storage.discard(out, run_id_)
    stale = storage.stale_ids(out, intact.intersection(order), _core.MODEL)
    done = intact - stale
    if done or damaged:
        storage.rebuild(out, order, intact)
    todo = [run for run in runs if run.id not in done]
    for run_id_ in done & tests.keys():
        stored = storage.runs_dir(out) / run_id_
        target = stored / f"{tests[run_id_]}{flent.SUFFIX}"
        if not target.exists():
            flent.export(stored, target, test=tests[run_id_])
    collector = _Collector(out, tests)
    # Connect before the progress bar shows: an unreachable scheduler is reported at once.
    cluster = _dask_client(scheduler) if scheduler is not None and todo else nullcontext()
    try:
        with cluster as client:
            for note in notes:
                bar.note(note)
            if stale:
                bar.note(
                    f"{len(stale)} stored runs come from another simulator model than this one "
                    f"({_core.MODEL}): running them again"
                )
            bar.begin(out.name, len(runs), len(runs) - len(todo))
            collector.stored = lambda run: bar.stored(run.label())
            if client is not None:
                _execute_dask(todo, client, collector)
            elif todo:
                _execute_local(todo, workers or os.cpu_count() or 1, collector)
    finally:
        storage.clean_staging(out)
        table = storage.rebuild(out, order, intact | collector.stored_ids)
    if collector.failures:
        failures = collector.failures
        raise SweepError(f"{len(failures)} of {len(todo)} runs failed: " + "; ".join(failures))
    ids = set(order)
    return table[table["run_id"].isin(ids)].reset_index(drop=True)


class _CallableModule(types.ModuleType):
    """This module's type: ``wificc.sweep(grid, out, ...)`` calls :func:`sweep` (the package's
    ``sweep`` attribute is this module once it is imported)."""

    def __call__(self, *args: Any, **kwargs: Any) -> pd.DataFrame:
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
