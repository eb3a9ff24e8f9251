"""A run's memory: estimated from its scenario before it runs, measured while it runs.

A run's memory grows with its series: every sample of every flow, queue and Wi-Fi node is a
record of the core's results document, then a Python object, then a DataFrame row. The
simulator's own state (packets in flight, queues) is small beside it. :func:`estimate` counts
the samples of a normalised scenario and prices them at the figures below, measured on this
build (peak RSS of ``wificc.run`` for one 1 s run at a 20 us step, 50,000 samples per series;
``resource.getrusage`` before and after, see docs/architecture.md): a wired bbr flow 4.7 KB per
sample, a second flow 3.6 KB more, a Wi-Fi station 0.5 KB, a ping sample next to nothing. The
prices are rounded up; the estimate is a guard against runs that cannot fit, not a forecast.

:func:`check` refuses a run whose estimate exceeds the limit before anything is simulated,
with a :class:`MemoryLimitError` naming the estimate, the limit and how to change it. The limit
is ``memory_limit`` where the API takes it, else ``WIFICC_MEMORY_LIMIT`` (a size such as
``"4000mb"`` or ``"4096mib"``), else half of the machine's physical memory: an assumption that
leaves room for a second worker and the system.

The peak of a run is the process's resident high-water mark (``VmHWM``), reset before the run
(``/proc/self/clear_refs``, Linux) and read after it, so that in a pool worker each run gets its
own peak: :func:`wificc.run` measures the core's run and the DataFrames built from its document,
a sweep's worker (:func:`run_measured`) the core's run (the DataFrames are built by the parent).
The peak depends on the host and the allocator: it is stored with the run as ``peak_rss_bytes``
beside ``wall_s``, and like ``wall_s`` it is left out of every comparison of results
(:data:`wificc.result.HOST_FIELDS`).
"""

from __future__ import annotations

import os
import resource
from collections.abc import Mapping
from typing import Any

from wificc import _core
from wificc.scenarios import duration_ns, size_bytes

# Bytes per sample of each series (see the module's docstring), and the interpreter's own
# footprint with numpy, pandas and pyarrow loaded (measured: 178 MB).
FLOW_SAMPLE_BYTES = 5_000
NODE_SAMPLE_BYTES = 500
QUEUE_SAMPLE_BYTES = 500
PING_SAMPLE_BYTES = 500
BASE_BYTES = 200_000_000
# Queues sampled per path besides the Wi-Fi nodes: the bottleneck both ways.
PATH_QUEUES = 2

ENV_LIMIT = "WIFICC_MEMORY_LIMIT"


class MemoryLimitError(ValueError):
    """A run whose estimated memory exceeds the limit."""


def estimate(scenario: Mapping[str, Any]) -> int:
    """Bytes a run of the normalised ``scenario`` (``wificc.validate``'s output) needs at peak."""
    duration = duration_ns("duration", scenario["duration"])
    samples = duration // max(1, duration_ns("step", scenario["step"]))
    path = scenario["path"]
    nodes = path.get("stations", 0) + 1 if path["kind"] == "wifi" else 0
    per_sample = (
        len(scenario.get("flows", [])) * FLOW_SAMPLE_BYTES
        + nodes * NODE_SAMPLE_BYTES
        + (PATH_QUEUES + nodes) * QUEUE_SAMPLE_BYTES
    )
    pings = 0
    for ping in scenario.get("pings", []):
        stop = duration if ping.get("stop") is None else min(duration, duration_ns("stop", ping["stop"]))
        span = max(0, stop - duration_ns("start", ping["start"]))
        pings += span // max(1, duration_ns("interval", ping["interval"]))
    return BASE_BYTES + samples * per_sample + pings * PING_SAMPLE_BYTES


def default_limit() -> int:
    """Half of the physical memory (an assumption, see the module's docstring)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    except (ValueError, OSError):
        return 8 << 30


def limit(given: int | str | None = None) -> int:
    """The limit in bytes: ``given`` (bytes, or a size string), else the environment's, else
    :func:`default_limit`."""
    value: int | str | None = given if given is not None else os.environ.get(ENV_LIMIT)
    if value is None:
        return default_limit()
    where = "memory_limit" if given is not None else ENV_LIMIT
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"{where}: got {value!r}, expected a size such as '4000mb' or a number of bytes")
    bytes_ = value if isinstance(value, int) else size_bytes(where, value)
    if bytes_ <= 0:
        raise ValueError(f"{where}: got {value!r}, expected a positive size")
    return bytes_


def _mb(n: int) -> str:
    return f"{n / 1e6:.0f} MB"


def check(scenario: Mapping[str, Any], memory_limit: int | str | None = None) -> int:
    """Raise :class:`MemoryLimitError` if a run of the normalised ``scenario`` is estimated to
    need more than the limit; return the estimate."""
    need = estimate(scenario)
    bound = limit(memory_limit)
    if need > bound:
        seconds = {k: f"{duration_ns(k, scenario[k]) / 1e9:g} s" for k in ("duration", "step")}
        flows = len(scenario.get("flows", []))
        raise MemoryLimitError(
            f"(scenario): a run of {seconds['duration']} sampled every {seconds['step']} with "
            f"{flows} flow{'' if flows == 1 else 's'} is estimated to need {_mb(need)}, more than the "
            f"memory limit of {_mb(bound)}; expected a longer step or a shorter run, or a higher "
            f"limit (memory_limit, {ENV_LIMIT} or --memory-limit)"
        )
    return need


def peak() -> int:
    """The process's resident high-water mark (Linux ``VmHWM``; elsewhere ``ru_maxrss``), bytes."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def reset_peak() -> None:
    """Reset ``VmHWM`` to the current RSS (``echo 5 > /proc/self/clear_refs``), so that
    :func:`peak` then measures what follows; where that is not possible it measures the
    process's peak so far."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def no_progress(done_ns: int, total_ns: int) -> None:
    """A run's progress callback that shows nothing: given to the core, it still lets a run in
    the main thread notice Ctrl-C (``KeyboardInterrupt``) every 100 ms of simulated time."""


def run_measured(text: str, fmt: str) -> tuple[str, int]:
    """``_core.run(text, fmt)`` and the peak resident bytes of the process during it."""
    reset_peak()
    document = _core.run(text, fmt, no_progress)
    return document, peak()
