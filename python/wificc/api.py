"""The Python API: run or validate a scenario given as a dict, a file or TOML text.

The simulation itself is the Rust core (``wificc._core``, built by maturin from
``crates/wificc-py``): scenarios cross as JSON or TOML text, results come back as one JSON
document that :class:`wificc.result.Result` turns into DataFrames. The core releases the GIL
while it runs, so threads can run several scenarios at once. A scenario the core rejects
raises ``ValueError("field: message")`` naming the field, the value and what is expected.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wificc import _core, memory

if TYPE_CHECKING:
    from wificc.result import Result

ScenarioLike = Mapping[str, Any] | str | os.PathLike[str]


# Deepest nesting of tables and lists a scenario may have (the core's scenario::MAX_DEPTH).
MAX_DEPTH = 32


def _check_tree(scenario: Mapping[str, Any]) -> None:
    """Refuse what JSON cannot carry or the core would refuse anyway, naming the field: a NaN or
    infinite float, and nesting deeper than :data:`MAX_DEPTH` (walked without recursion, so a
    document 2000 levels deep is a ValueError rather than a RecursionError)."""
    stack: list[tuple[Any, str, int]] = [(scenario, "", 0)]
    while stack:
        value, at, depth = stack.pop()
        field = at or "(scenario)"
        if isinstance(value, float) and not math.isfinite(value):
            shown = "NaN" if math.isnan(value) else ("inf" if value > 0 else "-inf")
            raise ValueError(f"{field}: got {shown}, expected a finite number")
        if isinstance(value, Mapping):
            children = [(v, f"{at}.{k}" if at else str(k)) for k, v in value.items()]
        elif isinstance(value, list | tuple):
            children = [(v, f"{at}[{i}]") for i, v in enumerate(value)]
        else:
            continue
        if depth >= MAX_DEPTH:
            raise ValueError(f"{field}: nested more than {MAX_DEPTH} tables or arrays deep, expected a scenario")
        stack.extend((v, k, depth + 1) for v, k in children)


def scenario_text(scenario: ScenarioLike) -> tuple[str, str]:
    """The text and format ("json" or "toml") of a scenario for the core.

    A mapping is sent as JSON. A path (``os.PathLike``, or a one-line string that names an
    existing file or has no ``=``) is read, as JSON when it ends in ``.json`` and as TOML
    otherwise. A string that starts with ``{`` is JSON text; any other string is TOML text.
    """
    if isinstance(scenario, Mapping):
        _check_tree(scenario)
        try:
            return json.dumps(scenario, allow_nan=False), "json"
        except (TypeError, ValueError) as e:
            raise ValueError(f"(scenario): not JSON-serialisable: {e}") from e
    if isinstance(scenario, str) and scenario.lstrip().startswith("{"):
        return scenario, "json"
    if isinstance(scenario, str) and ("\n" in scenario or ("=" in scenario and not Path(scenario.strip()).exists())):
        # TOML text: several lines, or one line with '=' that names no file (a path such as
        # runs/cc=bbr/s.toml is a path).
        return scenario, "toml"
    if not isinstance(scenario, str | os.PathLike):
        raise TypeError(f"scenario: got {type(scenario).__name__}, expected a dict, a file path or TOML text")
    if isinstance(scenario, str) and not scenario.strip():
        raise ValueError("scenario: got an empty string, expected a dict, a file path or TOML text")
    path = Path(scenario)
    try:
        if path.is_dir():
            raise ValueError(f"scenario: {str(path)!r} is a directory, expected a scenario file (TOML or JSON)")
        text = path.read_text()
    except FileNotFoundError:
        raise
    except OSError as e:
        expected = "expected a scenario file (TOML or JSON)"
        raise ValueError(f"scenario: cannot read {str(path)!r} ({e.strerror}), {expected}") from e
    return text, "json" if path.suffix.lower() == ".json" else "toml"


def run(
    scenario: ScenarioLike,
    *,
    memory_limit: int | str | None = None,
    progress: Callable[[int, int], None] = memory.no_progress,
) -> Result:
    """Run a scenario to completion and return its :class:`Result`.

    A run estimated to need more memory than ``memory_limit`` (bytes or a size such as
    ``"4000mb"``; default :func:`wificc.memory.limit`) raises
    :class:`wificc.memory.MemoryLimitError` before it starts. The run's peak resident memory
    is ``result.summary["peak_rss_bytes"]`` (a host measurement, as ``wall_s``).
    ``progress(done_ns, total_ns)`` is called every 100 ms of simulated time (simulated time
    reached, the scenario's duration); an exception it raises, or Ctrl-C, ends the run and is
    raised here.
    """
    # Imported here: listing or validating does not need pandas.
    from wificc.result import PEAK_FIELD, Result

    text, fmt = scenario_text(scenario)
    memory.check(json.loads(_core.validate(text, fmt)), memory_limit)
    memory.reset_peak()
    result = Result.from_json(_core.run(text, fmt, progress))
    result.summary[PEAK_FIELD] = memory.peak()
    return result


def validate(scenario: ScenarioLike) -> dict[str, Any]:
    """Check a scenario without running it; return it with every default filled in."""
    text, fmt = scenario_text(scenario)
    return json.loads(_core.validate(text, fmt))


def cc_list() -> list[dict[str, Any]]:
    """The registered congestion controls: name, summary, source and default parameters."""
    return json.loads(_core.cc_list())
