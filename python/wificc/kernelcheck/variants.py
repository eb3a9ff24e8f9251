"""The ``trace`` and ``fairness`` suites: wificc's BPF variants in the kernel beside the
simulator's congestion controls they implement.

``trace`` (BBR-APG): kernel ``wbbr_apg`` and ``bbr`` downloading over the Verizon and T-Mobile
LTE Mahimahi traces through the emulator (the catalog's ``trace`` test: mm-delay + mm-link with
an unbounded queue, pings every 0.2 s), beside the simulator's ``bbr_apg`` and ``bbr`` on the
same scenario: goodput, median ping and the 95th percentile of the queueing delay (ping RTT minus
the path's base RTT, over the flow's span).

``fairness`` (BBR-PG): two uploads of one congestion control from two clients, 10 ms and 50 ms
base RTT, sharing a 100 Mbit/s bottleneck with a pfifo of 1 or 5 BDP (the catalog's
``rtt_fairness``: the BDP is of the shorter RTT), kernel ``wbbr_pg`` and ``bbr`` beside the
simulator's ``bbr_pg`` and ``bbr``: each flow's goodput, the 10 ms flow's share and Jain's index.

Both sides run the running kernel's profile (:func:`wificc.kernelcheck.running_kernel`). The
trace files are looked up as a reproduction's are: ``$WIFICC_TRACES``, else ``traces`` in the
user data directory (:func:`wificc.userdirs.trace_dir`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from wificc import api, emu, scenarios, userdirs
from wificc.kernelcheck import (
    CLOSING_COLUMNS,
    DIFFERENCES,
    GOODPUT_PING_COLUMNS,
    GOODPUT_PING_COMPARED,
    GOODPUT_TOLERANCE,
    Cell,
    Column,
    Compared,
    Unavailable,
    footer,
    goodput_ping_agreement,
    lateness,
    markdown_table,
    relative,
    run_cells,
    running_kernel,
    verdict,
    within,
)
from wificc.stats import jain_index

TRACE_DIR_ENV = userdirs.TRACES_ENV
TRACES = {"verizon": "Verizon-LTE-short", "tmobile": "TMobile-LTE-short"}
TRACE_CCS = ("wbbr_apg", "bbr")
FAIRNESS_CCS = ("wbbr_pg", "bbr")
FAIRNESS_RATE = "100mbit"
FAIRNESS_RTTS = "10ms,50ms"
FAIRNESS_BUFFERS = ("1bdp", "5bdp")
LENGTH = "30s"
SMOKE_LENGTH = "5s"
DELAY = "2s"
SMOKE_DELAY = "1s"


def trace_files(name: str) -> tuple[Path, Path]:
    """(uplink, downlink) files of trace ``name``; :class:`Unavailable` when missing."""
    folder = userdirs.trace_dir()
    if folder is None:
        raise Unavailable(f"the LTE traces are not on this machine ({userdirs.where_traces()})")
    base = folder / TRACES[name]
    up, down = Path(f"{base}.up"), Path(f"{base}.down")
    for f in (up, down):
        if not f.is_file():
            raise Unavailable(f"trace file {f} not found ({userdirs.where_traces()})")
    return up, down


def flow_window_s(scenario: dict[str, Any]) -> tuple[float, float]:
    """Earliest start and latest stop of the scenario's flows, seconds."""
    starts = [emu._parse_ns(f["start"]) for f in scenario["flows"]]
    stops = [
        emu._parse_ns(f["stop"]) if f.get("stop") is not None else emu._parse_ns(scenario["duration"])
        for f in scenario["flows"]
    ]
    return min(starts) / 1e9, max(stops) / 1e9


def ping_rtts(result: Any, window: tuple[float, float], ping: int = 0) -> list[float]:
    """RTTs (ms) of ping ``ping`` sent in the window."""
    s = result.ping_series
    picked = s[(s["ping"] == ping) & (s["t"] >= window[0]) & (s["t"] < window[1])]
    return [float(v) for v in picked["rtt_ms"] if v == v]


def queueing_p95_ms(result: Any, scenario: dict[str, Any]) -> float | None:
    """95th percentile (nearest rank) of ping RTT minus the base RTT over the flows' span."""
    rtts = ping_rtts(result, flow_window_s(scenario))
    p95 = emu.nearest_rank(rtts, 0.95)
    return None if p95 is None else p95 - emu._parse_ns(scenario["path"]["rtt"]) / 1e6


def _compare(sim: Any, kernel: Any, scenario: dict[str, Any]) -> dict[str, Any]:
    window = flow_window_s(scenario)
    row: dict[str, Any] = {
        "sim_goodput_bps": float(sim.flows["goodput_bps"].sum()),
        "kernel_goodput_bps": float(kernel.flows["goodput_bps"].sum()),
        "sim_ping_p50_ms": emu.nearest_rank(ping_rtts(sim, window), 0.5),
        "kernel_ping_p50_ms": emu.nearest_rank(ping_rtts(kernel, window), 0.5),
        **lateness(kernel.summary),
    }
    return {**row, **goodput_ping_agreement(row)}


def _runs(scenario: dict[str, Any], staging: Path) -> tuple[Any, Any]:
    """The simulator's run (the variant's simulator cc) and the kernel's, both saved."""
    sim_scenario = {**scenario, "flows": [{**f, "cc": emu.simulator_cc(f["cc"])} for f in scenario["flows"]]}
    sim = api.run(sim_scenario)
    kernel = emu.run_emulated(scenario)
    sim.save(staging / "sim")
    kernel.save(staging / "kernel")
    return sim, kernel


def built(test: str, params: dict[str, Any], seed: int, **options: Any) -> dict[str, Any]:
    """A catalog test on the cell's congestion control, length and delay, with the running
    kernel's profile and the repetition's seed, normalised (the BPF variants kept as the
    kernel's names)."""
    return emu.validated(
        scenarios.build(
            test,
            cc=[params["cc"]],
            length=params["length"],
            delay=params["delay"],
            kernel=running_kernel(),
            seed=seed,
            **options,
        )
    )


def trace_scenario(params: dict[str, Any], seed: int = 1) -> dict[str, Any]:
    up, down = trace_files(params["trace"])
    return built("trace", params, seed, trace_up=up, trace_down=down)


def trace_cells(smoke: bool) -> list[Cell]:
    if smoke:
        return [
            Cell(
                "verizon-wbbr_apg", {"trace": "verizon", "cc": "wbbr_apg", "length": SMOKE_LENGTH, "delay": SMOKE_DELAY}
            )
        ]
    return [
        Cell(f"{t}-{c}", {"trace": t, "cc": c, "length": LENGTH, "delay": DELAY}) for t in TRACES for c in TRACE_CCS
    ]


def run_trace(
    out: Path, *, smoke: bool, report: Callable[[str], None], repeat: int = 1, only: Sequence[str] | None = None
) -> pd.DataFrame:
    grid = trace_cells(smoke)
    for c in grid:
        trace_scenario(c.params)  # every trace present before anything runs

    def run_cell(cell: Cell, staging: Path, seed: int) -> dict[str, Any]:
        scenario = trace_scenario(cell.params, seed)
        sim, kernel = _runs(scenario, staging)
        row = {
            "trace": cell.params["trace"],
            "cc": cell.params["cc"],
            "sim_cc": emu.simulator_cc(cell.params["cc"]),
            **_compare(sim, kernel, scenario),
            "sim_qdelay_p95_ms": queueing_p95_ms(sim, scenario),
            "kernel_qdelay_p95_ms": queueing_p95_ms(kernel, scenario),
        }
        row["qdelay_p95_diff"] = relative(row["sim_qdelay_p95_ms"], row["kernel_qdelay_p95_ms"])
        row["verdict"] = verdict(row, ("goodput", "ping"))
        return row

    return run_cells(out, grid, run_cell, trace_markdown, report, repeat=repeat, only=only, **TRACE_JUDGED)


def shares(goodputs: Sequence[float]) -> list[float | None]:
    """Each flow's share of the total goodput."""
    total = sum(goodputs)
    return [g / total if total > 0 else None for g in goodputs]


def fairness_scenario(params: dict[str, Any], seed: int = 1) -> dict[str, Any]:
    return built("rtt_fairness", params, seed, rate=FAIRNESS_RATE, rtts=FAIRNESS_RTTS, buffer=params["buffer"])


def fairness_cells(smoke: bool) -> list[Cell]:
    if smoke:
        return [Cell("1bdp-wbbr_pg", {"buffer": "1bdp", "cc": "wbbr_pg", "length": SMOKE_LENGTH, "delay": SMOKE_DELAY})]
    return [
        Cell(f"{b}-{c}", {"buffer": b, "cc": c, "length": LENGTH, "delay": DELAY})
        for b in FAIRNESS_BUFFERS
        for c in FAIRNESS_CCS
    ]


def run_fairness(
    out: Path, *, smoke: bool, report: Callable[[str], None], repeat: int = 1, only: Sequence[str] | None = None
) -> pd.DataFrame:
    def run_cell(cell: Cell, staging: Path, seed: int) -> dict[str, Any]:
        scenario = fairness_scenario(cell.params, seed)
        sim, kernel = _runs(scenario, staging)
        sim_g = [float(g) for g in sim.flows.sort_values("id")["goodput_bps"]]
        kernel_g = [float(g) for g in kernel.flows.sort_values("id")["goodput_bps"]]
        row: dict[str, Any] = {
            "buffer": cell.params["buffer"],
            "cc": cell.params["cc"],
            "sim_cc": emu.simulator_cc(cell.params["cc"]),
            **_compare(sim, kernel, scenario),
            "sim_short_bps": sim_g[0],
            "kernel_short_bps": kernel_g[0],
            "sim_long_bps": sim_g[1],
            "kernel_long_bps": kernel_g[1],
            "sim_short_share": shares(sim_g)[0],
            "kernel_short_share": shares(kernel_g)[0],
            "sim_jain": jain_index(sim_g),
            "kernel_jain": jain_index(kernel_g),
        }
        row["short_diff"] = relative(row["sim_short_bps"], row["kernel_short_bps"])
        row["long_diff"] = relative(row["sim_long_bps"], row["kernel_long_bps"])
        row["short_ok"] = within(row["short_diff"], GOODPUT_TOLERANCE)
        row["long_ok"] = within(row["long_diff"], GOODPUT_TOLERANCE)
        row["verdict"] = verdict(row, ("goodput", "short", "long"))
        return row

    return run_cells(
        out, fairness_cells(smoke), run_cell, fairness_markdown, report, repeat=repeat, only=only, **FAIRNESS_JUDGED
    )


# How a cell's repetitions are compared and judged (run_cells' compared and checks).
TRACE_JUDGED: dict[str, Any] = {
    "compared": (
        *GOODPUT_PING_COMPARED,
        Compared("sim_qdelay_p95_ms", "kernel_qdelay_p95_ms", "qdelay_p95_diff"),
    ),
    "checks": ("goodput", "ping"),
}
FAIRNESS_JUDGED: dict[str, Any] = {
    "compared": (
        *GOODPUT_PING_COMPARED,
        Compared("sim_short_bps", "kernel_short_bps", "short_diff", "short", GOODPUT_TOLERANCE),
        Compared("sim_long_bps", "kernel_long_bps", "long_diff", "long", GOODPUT_TOLERANCE),
    ),
    "checks": ("goodput", "short", "long"),
}

TRACE_COLUMNS = (
    Column("trace", "trace"),
    Column("kernel cc", "cc"),
    Column("sim cc", "sim_cc"),
    *GOODPUT_PING_COLUMNS,
    Column("qdelay p95 sim ms", "sim_qdelay_p95_ms", "ms"),
    Column("qdelay p95 kernel ms", "kernel_qdelay_p95_ms", "ms"),
    Column("diff", "qdelay_p95_diff", "diff"),
    *CLOSING_COLUMNS,
)

FAIRNESS_COLUMNS = (
    Column("buffer", "buffer"),
    Column("kernel cc", "cc"),
    Column("sim cc", "sim_cc"),
    Column("10 ms flow sim", "sim_short_bps", "mbit"),
    Column("10 ms flow kernel", "kernel_short_bps", "mbit"),
    Column("50 ms flow sim", "sim_long_bps", "mbit"),
    Column("50 ms flow kernel", "kernel_long_bps", "mbit"),
    Column("10 ms share sim", "sim_short_share", "share"),
    Column("10 ms share kernel", "kernel_short_share", "share"),
    Column("Jain sim", "sim_jain", "num"),
    Column("Jain kernel", "kernel_jain", "num"),
    Column("ping p50 sim ms", "sim_ping_p50_ms", "ms"),
    Column("ping p50 kernel ms", "kernel_ping_p50_ms", "ms"),
    *CLOSING_COLUMNS,
)


def trace_markdown(rows: list[dict[str, Any]]) -> str:
    return markdown_table(
        rows,
        TRACE_COLUMNS,
        footer(rows, TRACE_JUDGED["checks"], "goodput 10%, median ping of the flow's span 15%" + DIFFERENCES),
    )


def fairness_markdown(rows: list[dict[str, Any]]) -> str:
    return markdown_table(
        rows,
        FAIRNESS_COLUMNS,
        footer(
            rows,
            FAIRNESS_JUDGED["checks"],
            "total and each flow's goodput 10%; the ping of client 0 shown" + DIFFERENCES,
        ),
    )
