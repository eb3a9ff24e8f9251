"""The simulator benchmark: how fast the core runs one saturating flow on a fast path.

One cubic flow for LENGTH (30 s) of simulated time over a 1 Gbit/s wired bottleneck with a
10 ms base RTT and a pfifo buffer of one BDP (1.25 MB), no ping. At 1 Gbit/s the flow sends
about 81,000 full-size packets (1538 bytes on the wire) per simulated second, so the run
measures the per-packet cost of the event loop, links and TCP sender. The figures are
simulated seconds per wall-clock second and events per wall-clock second, as the core measures
them around its run loop; there is no pass or fail.
"""

from __future__ import annotations

from typing import Any

from wificc import api

# The benchmark path: 1 Gbit/s, 10 ms, one BDP of pfifo buffer.
BENCH_PATH: dict[str, Any] = {
    "kind": "wired",
    "rate": "1gbit",
    "rtt": "10ms",
    "buffer": "1bdp",
    "qdisc": {"kind": "pfifo"},
}
BENCH_CC = "cubic"
BENCH_LENGTH = "30s"


def scenario(length: str = BENCH_LENGTH, seed: int = 1) -> dict[str, Any]:
    """The benchmark scenario, ``length`` of simulated time."""
    return {"seed": seed, "duration": length, "path": dict(BENCH_PATH), "flows": [{"cc": BENCH_CC}]}


def run(length: str = BENCH_LENGTH, seed: int = 1) -> dict[str, float]:
    """Run the benchmark; return simulated and wall seconds, speed, events and event rate."""
    result = api.run(scenario(length, seed))
    s = result.summary
    return {
        "simulated_s": s["duration_s"],
        "wall_s": s["wall_s"],
        "speed": s["speed"],
        "events": s["events"],
        "events_per_s": s["events_per_s"],
        "goodput_bps": s["total_goodput_bps"],
    }
