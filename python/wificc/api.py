"""The Python API: run or validate a scenario given as a dict, a file or TOML text.

The simulation itself is the Rust core (``wificc._core``, built by maturin from
``crates/wificc-py``): scenarios cross as JSON or TOML text, results come back as one JSON
document that :class:`wificc.result.Result` turns into DataFrames. The core releases the GIL
while it runs, so threads can run several scenarios at once. A scenario the core rejects
raises ``ValueError("field: message")`` naming the field, the value and what is expected.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wificc import _core
from wificc.result import Result

ScenarioLike = Mapping[str, Any] | str | os.PathLike[str]


def scenario_text(scenario: ScenarioLike) -> tuple[str, str]:
    """The text and format ("json" or "toml") of a scenario for the core.

    A mapping is sent as JSON. A path (``os.PathLike``, or a string without a newline or
    ``=``) is read, as JSON when it ends in ``.json`` and as TOML otherwise. Any other string
    is TOML text.
    """
    if isinstance(scenario, Mapping):
        try:
            return json.dumps(scenario), "json"
        except (TypeError, ValueError) as e:
            raise ValueError(f"(scenario): not JSON-serialisable: {e}") from e
    if isinstance(scenario, str) and ("\n" in scenario or "=" in scenario):
        return scenario, "toml"
    if not isinstance(scenario, str | os.PathLike):
        raise TypeError(f"scenario: got {type(scenario).__name__}, expected a dict, a file path or TOML text")
    path = Path(scenario)
    return path.read_text(), "json" if path.suffix.lower() == ".json" else "toml"


def run(scenario: ScenarioLike) -> Result:
    """Run a scenario to completion and return its :class:`Result`."""
    text, fmt = scenario_text(scenario)
    return Result.from_json(_core.run(text, fmt))


def validate(scenario: ScenarioLike) -> dict[str, Any]:
    """Check a scenario without running it; return it with every default filled in."""
    text, fmt = scenario_text(scenario)
    return json.loads(_core.validate(text, fmt))


def cc_list() -> list[dict[str, Any]]:
    """The registered congestion controls: name, summary, source and default parameters."""
    return json.loads(_core.cc_list())
