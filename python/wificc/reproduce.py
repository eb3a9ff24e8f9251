"""``wificc reproduce NAME``: the published studies (docs/reproductions.md) as data, run by one runner.

A study is a list of :class:`Experiment`; an experiment is a sweep grid (a catalog test, its
options, the lists of its grid) and the figures the study draws from it. :func:`reproduce`
runs each experiment as a sweep into ``OUT/<experiment>/`` (resumable: a re-run skips finished
runs), draws the figures of every experiment (:func:`wificc.figures.plot`, into
``OUT/figures/<experiment>/``), writes ``OUT/report.html`` (:func:`wificc.report.write`) and
returns the headline table: median goodput and median ping per setting of each experiment.

``quick`` makes a study small enough for CI: :data:`QUICK_REPETITIONS` repetitions, flows of
:data:`QUICK_LENGTH` between :data:`QUICK_DELAY` of idle pings, and of each grid list the values
the experiment names in its ``quick`` table, or else its first :data:`QUICK_VALUES` values.

Experiments that replay the LTE traces (``traces``) read them from a directory: the one given,
else ``$WIFICC_TRACES``, else ``traces`` in the user data directory
(:func:`wificc.userdirs.trace_dir`); without the files those experiments are skipped and said
so, with where to get them.
"""

from __future__ import annotations

import copy
import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from wificc import figures, papers, report, stats, storage, userdirs
from wificc.models import startup
from wificc.progress import SweepBar
from wificc.sweep import Run, expand, sweep

# Repetitions of every grid point, and with --quick.
REPETITIONS = 10
QUICK_REPETITIONS = 2
# TCP time and idle ping time before and after it, with --quick.
QUICK_LENGTH = "5s"
QUICK_DELAY = "1s"
# Values kept of a grid list that the experiment's quick table does not name.
QUICK_VALUES = 2
BITS_PER_MBIT = 1e6
# The headline table a reproduction writes beside its sweeps.
HEADLINE_CSV = "headline.csv"
HEADLINE_MD = "headline.md"
HEADLINE_COLUMNS = ["experiment", "setting", "runs", "goodput_mbit", "ping_p50_ms"]

# A static TSQ limit of every 32 packets up to 2048 (the Wi-Fi 6 study's bottleneck curve).
WIFI6_STATIC_TSQ = ["static:1p", *(f"static:{k}p" for k in range(32, 2049, 32))]
# A grid list of TSQ settings, "1ms" .. "32ms".
TSQ_1_TO_32 = ["1ms", "2ms", "4ms", "8ms", "16ms", "32ms"]
BBRP_CCS = ["bbr", "bbrp", "nv", "cubic", "reno"]
BBRN_CCS = ["bbr2", "bbrn", "bbr", "cubic", "reno", "dctcp", "veno"]
WIFI6_CCS = ["cubic", "bbr2", "nv", "yeah", "reno", "highspeed"]
# BBR-APG's trace runs: the capacities its Tables 1-2 give (5.96 and 13.35 Mbit/s) are the mean
# capacities of the *uplink* trace files (Verizon-LTE-short.up, TMobile-LTE-short.up) over their
# whole 140 s, counting Mahimahi's 1504-byte opportunities (the downlink files give 5.04 and
# 16.75 Mbit/s; the uplinks' first 30 s 7.57 and 3.90): the data crossed mm-link's uplink, from
# the client inside the shell, for at least the trace's length.
APG_TRACE_RUN = {"direction": "up", "length": "140s"}
PG_CCS = ["bbr", "bbr3", "bbr_pg", "cubic"]
PG_BUFFERS = ["0.1bdp", "0.2bdp", "0.5bdp", "1bdp", "2bdp", "5bdp", "10bdp", "20bdp", "50bdp", "100bdp"]


@dataclass(frozen=True)
class Experiment:
    """One sweep of a study.

    ``grid``: a sweep grid document (:mod:`wificc.sweep`) without ``repetitions``.
    ``figures``: the figure files (names without suffix, as :func:`wificc.figures.plot_sweep`
    writes them) the study draws from it. ``quick``: the values of grid lists kept with
    --quick (lists not named keep their first QUICK_VALUES). ``traces``: catalog options that
    name a trace file, option -> file name in the trace directory. ``anova``: metrics
    (runs.parquet columns) whose one-way ANOVA across the congestion controls, per other
    setting, the study reports (``<experiment>/anova.csv``).
    """

    name: str
    about: str
    grid: Mapping[str, Any]
    figures: tuple[str, ...]
    quick: Mapping[str, list[Any]] = field(default_factory=dict)
    traces: Mapping[str, str] = field(default_factory=dict)
    anova: tuple[str, ...] = ()


@dataclass(frozen=True)
class Study:
    """A study: its experiments, the analytic models it draws (keys of :data:`MODELS`), and
    its testbed as its paper describes it: ``kernel`` is the kernel profile its runs use
    (``stack.kernel``, overridden by ``reproduce --kernel``), ``testbed`` the description the
    report states."""

    title: str
    experiments: tuple[Experiment, ...]
    models: tuple[str, ...] = ()
    kernel: str = "6.12"
    testbed: str = ""
    # The base RTT of the wired part behind the access point (the Wi-Fi path's ``rtt``) that
    # every Wi-Fi experiment of the study sets, and where the value comes from.
    wired_rtt: str = ""
    wired_rtt_source: str = ""

    def described(self) -> str:
        """The testbed as the report states it: the description and the wired RTT's source."""
        if not self.wired_rtt:
            return self.testbed
        return f"{self.testbed}; wired RTT behind the AP {self.wired_rtt}: {self.wired_rtt_source}"


# Analytic models a study may draw beside its sweeps: name -> (caption, draw(prefix) -> files).
MODELS = {
    "startup_gain": (
        "BBR Startup: rate and queue per round for each startup gain",
        lambda prefix: startup.figure(startup.StartupParams(), prefix),
    ),
}


def _grid(test: str, options: Mapping[str, Any], grid: Mapping[str, list[Any]], **more: Any) -> dict[str, Any]:
    return {"test": test, "options": dict(options), "grid": dict(grid), **more}


# The wired RTT behind the access point of each Wi-Fi study (Study.wired_rtt; docs/reproductions.md).
# BBRp and BBR-n: neither paper states a base RTT or any added delay; their server is wired to
# the AP over Gigabit Ethernet, whose propagation is microseconds, so the value stands for the
# path's latency outside the Wi-Fi model (end hosts, the AP's forwarding). Assumption: the
# presets' 2 ms, which puts wificc's idle ping near the 2.5 ms base RTT that the same group
# (Grazia) reports for its client-AP-wired-server testbed in the Wi-Fi 6 study (Table 1).
LAN_RTT = "2ms"
LAN_RTT_SOURCE = (
    "assumption: the paper states no base RTT and no added delay, only a server wired to the AP "
    "over Gigabit Ethernet ({where}); the presets' 2 ms stands for the latency outside the Wi-Fi model, "
    "near the 2.5 ms base RTT that the Wi-Fi 6 study (Table 1; Grazia, an author of BBRp) reports for its "
    "client-AP-wired-server testbed"
)
# The Wi-Fi 6 study's base RTT (Table 1 RT_prop; section VII-B "the base RTT of our network of
# 2.5 ms"); its model adds the Wi-Fi hop's 2 x TxTw(k) on top (Eq. 6), as wificc's Wi-Fi hop does.
WIFI6_RTT = "2.5ms"
# BBR-PG's Wi-Fi tests reach a cloud server: "The servers have a latency of approximately 50 ms
# and 230 ms" (section 4.1); the Wi-Fi RTT-fairness test "chose the Beijing node" (section 4.3).
PG_WIFI_RTT = "50ms"

WIFI = {"path": "wifi", "rtt": LAN_RTT}
HYBRID = {"path": "hybrid", "rtt": WIFI6_RTT}

STUDIES: dict[str, Study] = {
    "bbrp": Study(
        "BBRp (IEEE Access 2020): BBR's pacing and TSQ on 802.11n/ac",
        (
            Experiment(
                "upload",
                "1 upload per CCA, TSQ and chipset, 30 s",
                _grid(
                    "tcp_upload",
                    WIFI,
                    {
                        "chipset": ["ath9k-htc", "ath9k", "ath10k-1x1"],
                        "cc": BBRP_CCS,
                        "tsq": ["1ms", "2ms", "4ms", "8ms"],
                    },
                ),
                ("goodput_ping", "ping_cdf", "ampdu_tsq"),
                quick={"chipset": ["ath9k"], "cc": ["bbr", "cubic"], "tsq": ["1ms", "8ms"]},
            ),
            Experiment(
                "upload_wired100",
                "the same behind a 100 Mbit/s wired bottleneck (the AP's backhaul)",
                _grid(
                    "tcp_upload",
                    {**WIFI, "rate": "100mbit"},
                    {
                        "chipset": ["ath9k-htc", "ath9k", "ath10k-1x1"],
                        "cc": BBRP_CCS,
                        "tsq": ["1ms", "2ms", "4ms", "8ms"],
                    },
                ),
                ("goodput_ping", "ping_cdf"),
                quick={"chipset": ["ath10k-1x1"], "cc": ["bbr", "bbrp"], "tsq": ["1ms", "4ms"]},
            ),
            Experiment(
                "download",
                "1 download per CCA and chipset; pfifo_fast (the hosts' default qdisc) at the AP",
                _grid("tcp_download", WIFI, {"chipset": ["ath9k", "ath10k"], "cc": BBRP_CCS}),
                ("goodput_ping", "ping_cdf"),
                quick={"chipset": ["ath9k"], "cc": ["bbr", "cubic"]},
            ),
            Experiment(
                "download_bbr_no_extra_acked",
                "1 BBR download without the ACK-aggregation allowance (extra_acked off)",
                _grid(
                    "tcp_download",
                    {**WIFI, "cc": "bbr", "cc_params": {"extra_acked": False}},
                    {"chipset": ["ath9k", "ath10k"]},
                ),
                ("goodput_ping", "ping_cdf"),
                quick={"chipset": ["ath9k"]},
            ),
            Experiment(
                "rrul",
                "RRUL on ath9k with 4 ms TSQ",
                _grid("rrul", {**WIFI, "chipset": "ath9k", "tsq": "4ms"}, {"cc": BBRP_CCS}),
                ("goodput_ping", "rrul"),
                quick={"cc": ["bbr", "cubic"]},
            ),
            Experiment(
                "nflows",
                "1, 4 and 8 uploads on ath9k with TSQ off",
                _grid("nflows", {**WIFI, "chipset": "ath9k", "tsq": "off"}, {"flows": [1, 4, 8], "cc": BBRP_CCS}),
                ("goodput_ping", "fairness"),
                quick={"flows": [1, 4], "cc": ["bbr", "cubic"]},
            ),
            Experiment(
                "bottleneck_curve",
                "reno upload on ath10k under a static TSQ of 1 .. 256 packets",
                _grid(
                    "tcp_upload",
                    {**WIFI, "chipset": "ath10k", "cc": "reno"},
                    {"stack.tsq": [f"static:{k}p" for k in (1, 2, 4, 8, 16, 32, 64, 128, 256)]},
                ),
                ("bottleneck_curve",),
                quick={"stack.tsq": ["static:4p", "static:64p"]},
            ),
            Experiment(
                "ampdu",
                "A-MPDU size versus TSQ on ath9k",
                _grid("tcp_upload", {**WIFI, "chipset": "ath9k"}, {"cc": ["bbr", "bbrp", "cubic"], "tsq": TSQ_1_TO_32}),
                ("ampdu_tsq", "goodput_ping"),
                quick={"cc": ["bbr", "bbrp"], "tsq": ["1ms", "8ms"]},
            ),
        ),
        kernel="4.19",
        testbed="Linux 4.19-lts on every node (Arch Linux); a wireless client, an access point and a "
        "wired server; ath9k-htc (AR9271 USB), ath9k (AR9382) and ath10k (QCA6178 1x1, QCA9880v2 2x2) chipsets; "
        "FQ-CoDel on the client, pfifo_fast at the AP for downloads; Flent, 10 repetitions (paper "
        "section V, Table 2)",
        wired_rtt=LAN_RTT,
        wired_rtt_source=LAN_RTT_SOURCE.format(where="section V, Fig. 4; section VI-C"),
    ),
    "bbrn": Study(
        "BBR-n (PLoS ONE 2023): BBR on 802.11ac 1x1 (qca9377)",
        (
            Experiment(
                "upload",
                "1 upload per CCA at TSQ 1 ms and 4 ms, 40 s",
                _grid(
                    "tcp_upload",
                    {**WIFI, "chipset": "qca9377", "length": "40s"},
                    {"cc": BBRN_CCS, "tsq": ["1ms", "4ms"]},
                ),
                ("goodput_ping", "ping_cdf", "series"),
                quick={"cc": ["bbrn", "bbr2"]},
                anova=("total_goodput_bps", "ping_p50_ms"),
            ),
            Experiment(
                "nflows",
                "1, 4, 8 and 12 uploads, bbrn against bbr2",
                _grid(
                    "nflows",
                    {**WIFI, "chipset": "qca9377", "length": "40s"},
                    {"flows": [1, 4, 8, 12], "cc": ["bbrn", "bbr2"]},
                ),
                ("goodput_ping", "fairness"),
                anova=("total_goodput_bps", "ping_p50_ms"),
            ),
            Experiment(
                "rrul",
                "RRUL per CCA",
                _grid(
                    "rrul", {**WIFI, "chipset": "qca9377", "length": "40s"}, {"cc": ["bbrn", "bbr2", "bbr", "cubic"]}
                ),
                ("goodput_ping", "rrul"),
            ),
        ),
        models=("startup_gain",),
        kernel="5.13",
        testbed="Linux 5.13.12 (also 5.15.72 with BBRv2 as a module) on a Wi-Fi 5 client (QCA9377 1x1, "
        "ath10k) and a wired server; TSQ and TSO at the kernel's defaults unless swept; Flent (paper "
        "sections 3-4)",
        wired_rtt=LAN_RTT,
        wired_rtt_source=LAN_RTT_SOURCE.format(where="section 4, Fig. 7: a TP-Link Archer C6 router"),
    ),
    "wifi6": Study(
        "The future of TCP on Wi-Fi 6 (2021): ax201 behind a 1 Gbit/s backhaul",
        (
            Experiment(
                "bottleneck_curve",
                "static TSQ of 1 .. 2048 packets in steps of 32, cubic and bbr2, against the analytic model",
                _grid("tcp_upload", HYBRID, {"cc": ["cubic", "bbr2"], "stack.tsq": WIFI6_STATIC_TSQ}),
                ("bottleneck_curve",),
                quick={"cc": ["cubic", "bbr2"], "stack.tsq": ["static:32p", "static:512p"]},
            ),
            Experiment(
                "upload",
                "1 and 4 uploads per CCA and TSQ 1 .. 32 ms",
                _grid("nflows", HYBRID, {"flows": [1, 4], "cc": WIFI6_CCS, "tsq": TSQ_1_TO_32}),
                ("goodput_ping", "fairness"),
                quick={"flows": [4], "cc": ["cubic", "bbr2"], "tsq": ["1ms", "32ms"]},
            ),
            Experiment(
                "tp",
                "bbr upload, TP 1p, 2p, 3p at TSQ 1 ms and 4 ms",
                _grid("tcp_upload", {**HYBRID, "cc": "bbr"}, {"tp": [1, 2, 3], "tsq": ["1ms", "4ms"]}),
                ("goodput_ping",),
            ),
            Experiment(
                "rrul_tsq",
                "RRUL at TSQ 1 ms and 32 ms",
                _grid("rrul", HYBRID, {"tsq": ["1ms", "32ms"]}),
                ("goodput_ping", "rrul"),
            ),
            Experiment(
                "rrul_tp",
                "RRUL at TSQ 32 ms, TP 1p, 2p, 3p",
                _grid("rrul", {**HYBRID, "tsq": "32ms"}, {"tp": [1, 2, 3]}),
                ("goodput_ping", "rrul"),
                quick={"tp": [1, 3]},
            ),
        ),
        kernel="5.4",
        testbed="Linux 5.4-lts (Arch Linux), an Intel AX201 2x2 client (iwlwifi), an ASUS RT-AX92U 4x4 "
        "access point and a 1 Gbit/s wired server; base RTT 2.5 ms; offloads (TSO/GSO/GRO) off; "
        "FQ-CoDel; Flent (paper section VI, Table 2)",
        wired_rtt=WIFI6_RTT,
        wired_rtt_source="stated: Table 1 (RT_prop 2.5 ms, to which Eq. 6 adds the Wi-Fi hop's 2 x TxTw(k)) "
        "and section VII-B ('the base RTT of our network of 2.5 ms')",
    ),
    "apg": Study(
        "BBR-APG (2023): 100 ms base RTT, unbounded queue, rate schedules and LTE traces",
        (
            Experiment(
                "constant",
                "constant 12 Mbit/s",
                _grid("step", {"rates": "12mbit"}, {"cc": ["bbr", "bbr_apg"]}),
                ("goodput_ping", "ping_cdf", "series"),
            ),
            Experiment(
                "step",
                "12 -> 24 Mbit/s at 3 s",
                _grid("step", {"rates": "12mbit,24mbit", "step_at": "3s"}, {"cc": ["bbr", "bbr_apg"]}),
                ("goodput_ping", "ping_cdf", "series"),
            ),
            Experiment(
                "verizon_lte",
                "the Verizon LTE trace (Mahimahi), data on its uplink trace for its 140 s",
                _grid("trace", APG_TRACE_RUN, {"cc": ["bbr", "bbr_apg"]}),
                ("goodput_ping", "ping_cdf", "series"),
                traces={"trace_up": "Verizon-LTE-short.up", "trace_down": "Verizon-LTE-short.down"},
            ),
            Experiment(
                "tmobile_lte",
                "the T-Mobile LTE trace (Mahimahi), data on its uplink trace for its 140 s",
                _grid("trace", APG_TRACE_RUN, {"cc": ["bbr", "bbr_apg"]}),
                ("goodput_ping", "ping_cdf", "series"),
                traces={"trace_up": "TMobile-LTE-short.up", "trace_down": "TMobile-LTE-short.down"},
            ),
        ),
        kernel="4.19",
        testbed="Ubuntu on a cloud VM with Linux 4.15.0-gcp and Mahimahi (paper section 4); the 4.19 "
        "profile is the nearest: both predate EDT pacing (4.20) and the 1 MB TSQ cap (5.0)",
    ),
    "pg": Study(
        "BBR-PG (Future Internet 2024): RTT fairness on a 1 Gbit/s dumbbell and on Wi-Fi",
        (
            Experiment(
                "buffer",
                "10 ms and 50 ms flows of one CCA, buffer 0.1 .. 100 BDP",
                _grid("rtt_fairness", {"rate": "1gbit"}, {"cc": PG_CCS, "buffer": PG_BUFFERS}),
                ("goodput_ping", "fairness"),
                quick={"cc": ["bbr", "bbr_pg"], "buffer": ["0.1bdp", "10bdp"]},
            ),
            Experiment(
                "rtt_ratio",
                "a 10 ms flow against one of 1.5x .. 10x its RTT, 5 BDP buffer (the paper's Fig. 8 caption)",
                _grid(
                    "rtt_fairness",
                    {"rate": "1gbit", "buffer": "5bdp"},
                    {"cc": PG_CCS, "rtts": ["10ms,15ms", "10ms,20ms", "10ms,50ms", "10ms,100ms"]},
                ),
                ("goodput_ping", "fairness"),
                quick={"cc": ["bbr", "bbr_pg"], "rtts": ["10ms,20ms", "10ms,100ms"]},
            ),
            Experiment(
                "vs_cubic",
                "each variant against cubic, bottleneck 100 Mbit/s .. 1 Gbit/s, small and large buffers",
                _grid(
                    "inter_protocol",
                    {"rtt": "10ms", "against": "cubic"},
                    {
                        "cc": ["bbr", "bbr3", "bbr_pg"],
                        "rate": ["100mbit", "500mbit", "1gbit"],
                        "buffer": ["0.1bdp", "10bdp"],
                    },
                ),
                ("goodput_ping", "fairness"),
                quick={"cc": ["bbr", "bbr_pg"], "rate": ["100mbit"], "buffer": ["0.1bdp", "10bdp"]},
            ),
            Experiment(
                "retrans",
                "retransmissions versus number of flows at 0.1 and 1 BDP",
                _grid(
                    "nflows",
                    {"rate": "1gbit", "rtt": "10ms"},
                    {"cc": PG_CCS, "buffer": ["0.1bdp", "1bdp"], "flows": [1, 2, 4, 8, 16]},
                ),
                ("goodput_ping", "fairness"),
                quick={"cc": ["bbr", "bbr_pg"], "buffer": ["0.1bdp", "1bdp"], "flows": [2]},
            ),
            Experiment(
                "wifi",
                "each variant against cubic on a Wi-Fi bottleneck (ath10k)",
                _grid(
                    "inter_protocol",
                    {**WIFI, "rtt": PG_WIFI_RTT, "chipset": "ath10k", "against": "cubic"},
                    {"cc": ["bbr", "bbr3", "bbr_pg"]},
                ),
                ("goodput_ping", "fairness"),
            ),
        ),
        kernel="6.12",
        testbed="NS3 simulations plus 5G and Wi-Fi testbeds whose kernels the paper does not give "
        "(paper section 5); the newest profile",
        wired_rtt=PG_WIFI_RTT,
        wired_rtt_source="stated for the Wi-Fi tests' server: 'The servers have a latency of approximately 50 ms "
        "and 230 ms' (section 4.1), the Wi-Fi RTT-fairness test 'chose the Beijing node' (50 ms, section 4.3); "
        "assumption: the inter-protocol test (Fig. 11), which names no node, used the same server, and the "
        "'latency' is a round-trip time",
    ),
}


def study(name: str) -> Study:
    if name not in STUDIES:
        raise ValueError(f"NAME: got {name!r}, expected one of {', '.join(STUDIES)}")
    return STUDIES[name]


def trace_dir(given: str | os.PathLike[str] | None = None) -> Path | None:
    """The LTE trace directory: ``given`` (which must exist), else the default one that exists
    (:func:`wificc.userdirs.trace_dir`)."""
    return userdirs.trace_dir(given)


def missing_traces(experiment: Experiment, traces: Path | None) -> list[str]:
    """The trace files of ``experiment`` not found in ``traces``."""
    return [name for name in experiment.traces.values() if traces is None or not (traces / name).is_file()]


def grid_of(
    experiment: Experiment, *, quick: bool = False, traces: Path | None = None, kernel: str | None = None
) -> dict[str, Any]:
    """The sweep grid of ``experiment`` (full or quick), its trace options pointing into
    ``traces``, its runs on the ``kernel`` profile (when given and the grid does not sweep it)."""
    grid = copy.deepcopy(dict(experiment.grid))
    options = grid.setdefault("options", {})
    if kernel is not None and "kernel" not in grid.get("grid", {}):
        options["kernel"] = kernel
    for option, name in experiment.traces.items():
        options[option] = str(((traces or Path(".")) / name).resolve())
    if quick:
        options["length"] = QUICK_LENGTH
        options["delay"] = QUICK_DELAY
        grid["grid"] = {
            key: list(experiment.quick.get(key, values[:QUICK_VALUES])) for key, values in grid["grid"].items()
        }
    return grid


def runs_of(
    name: str, *, quick: bool = False, traces: Path | None = None, repetitions: int | None = None
) -> dict[str, list[Run]]:
    """Every run of study ``name`` per experiment, each point validated by the core (experiments
    whose traces are missing are left out)."""
    reps = repetitions if repetitions is not None else (QUICK_REPETITIONS if quick else REPETITIONS)
    spec = study(name)
    return {
        e.name: expand(grid_of(e, quick=quick, traces=traces, kernel=spec.kernel), reps)
        for e in spec.experiments
        if not missing_traces(e, traces)
    }


def anova_table(directory: Path, metrics: Sequence[str]) -> pd.DataFrame:
    """One-way ANOVA of each metric across the congestion controls of a sweep, per setting of
    its other grid parameters (stats.anova); empty when the sweep has one congestion control."""
    table = pd.read_parquet(directory / storage.RUNS_TABLE)
    settings = figures.setting_columns(table, figures.grid_keys(directory))
    if "cc" not in settings:
        return pd.DataFrame()
    others = [c for c in settings if c != "cc"] or None
    parts = [stats.anova(table, metric, "cc", others).assign(metric=metric) for metric in metrics]
    frame = pd.concat(parts, ignore_index=True)
    return frame[["metric", *(c for c in frame.columns if c != "metric")]]


def headline(directory: Path, extra: Sequence[str] = ()) -> pd.DataFrame:
    """Median goodput (Mbit/s) and median ping (ms) per setting of one experiment's sweep, and
    the median of each ``extra`` runs.parquet column (NaN where the runs lack it)."""
    table = pd.read_parquet(directory / storage.RUNS_TABLE)
    present = [c for c in extra if c in table.columns]
    table = table.assign(**{c: pd.to_numeric(table[c], errors="coerce") for c in present})
    settings = figures.setting_columns(table, figures.grid_keys(directory))
    keys = settings or None
    grouped = table.assign(_all="all").groupby(keys or ["_all"], sort=False, dropna=False)
    out = grouped.agg(
        runs=("run_id", "size"),
        goodput_mbit=("total_goodput_bps", "median"),
        ping_p50_ms=("ping_p50_ms", "median"),
        **{c: (c, "median") for c in present},
    ).reset_index()
    out["goodput_mbit"] = out["goodput_mbit"] / BITS_PER_MBIT
    setting = figures.setting_labels(out, settings) if settings else pd.Series(["all"] * len(out))
    frame = pd.DataFrame(
        {
            "experiment": directory.name,
            "setting": list(setting),
            "runs": out["runs"],
            "goodput_mbit": out["goodput_mbit"],
            "ping_p50_ms": out["ping_p50_ms"],
        }
    )
    for column in extra:
        frame[column] = out[column].to_numpy() if column in present else float("nan")
    return frame


def metrics_table(name: str, root: Path) -> pd.DataFrame:
    """The headline rows of every experiment of study ``name`` found in ``root`` (those with a
    runs table), with the medians of :data:`wificc.papers.EXTRA_METRICS` beside them."""
    parts = [
        headline(root / e.name, papers.EXTRA_METRICS)
        for e in study(name).experiments
        if (root / e.name / storage.RUNS_TABLE).is_file()
    ]
    if not parts:
        raise ValueError(f"--out: {str(root)!r} holds no sweep of {name} (expected <experiment>/runs.parquet)")
    return pd.concat(parts, ignore_index=True)


def grid_settings(name: str) -> dict[str, dict[str, list[Any]]]:
    """Each experiment of study ``name``: its full grid's lists by their short setting names
    (as headline settings name them: ``stack.tsq`` -> ``tsq``)."""
    return {
        e.name: {figures.short_name(k): list(v) for k, v in e.grid.get("grid", {}).items()}
        for e in study(name).experiments
    }


def write_comparison(name: str, root: Path, table: pd.DataFrame | None = None) -> pd.DataFrame:
    """``comparison.csv`` and ``comparison.md`` in ``root``: wificc's headline rows of study
    ``name`` beside its paper's figures (:mod:`wificc.papers`); ``table`` is the metrics table
    (default: rebuilt from the sweeps in ``root``)."""
    paper = papers.load(name)
    papers.check(paper, grid_settings(name))
    frame = papers.compare(metrics_table(name, root) if table is None else table, paper)
    storage.write_text(root / papers.COMPARISON_CSV, frame.to_csv(index=False))
    storage.write_text(root / papers.COMPARISON_MD, papers.comparison_markdown(frame, paper, study(name).title))
    return frame


@dataclass
class Reproduction:
    """What a reproduction wrote."""

    out: Path
    headline: pd.DataFrame
    # ANOVA tables by experiment (those that declare metrics).
    anova: dict[str, pd.DataFrame]
    figures: dict[str, list[Path]]
    skipped: list[str]
    report: Path
    wall_s: float
    # The side-by-side table with the paper (comparison.csv).
    comparison: pd.DataFrame


def reproduce(
    name: str,
    out: str | os.PathLike[str],
    *,
    quick: bool = False,
    workers: int | None = None,
    repetitions: int | None = None,
    traces: str | os.PathLike[str] | None = None,
    progress: bool = True,
    experiments: Sequence[str] | None = None,
    flent_files: bool = False,
    kernel: str | None = None,
) -> Reproduction:
    """Run study ``name`` into ``out``: a sweep per experiment, figures, report, headline.

    ``experiments`` limits the run to those experiments (by name). ``flent_files`` writes
    each run's ``.flent.gz`` beside its tables. ``kernel``: the kernel profile of every run in
    place of the study's testbed kernel.
    """
    spec = study(name)
    names = [e.name for e in spec.experiments]
    for wanted in experiments or ():
        if wanted not in names:
            raise ValueError(f"experiments: got {wanted!r}, expected one of {', '.join(names)}")
    chosen = [e for e in spec.experiments if experiments is None or e.name in experiments]
    folder = trace_dir(traces)
    reps = repetitions if repetitions is not None else (QUICK_REPETITIONS if quick else REPETITIONS)
    started = time.monotonic()
    started_at = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    root = Path(out)
    skipped: list[str] = []
    done: list[Experiment] = []
    grids = {}
    for experiment in chosen:
        missing = missing_traces(experiment, folder)
        if missing:
            where = f"in {folder}" if folder else f"({userdirs.where_traces()})"
            skipped.append(f"{experiment.name}: trace files {', '.join(missing)} not found {where}")
            continue
        grids[experiment.name] = grid_of(experiment, quick=quick, traces=folder, kernel=kernel or spec.kernel)
    # Expand every grid first: a bad point is reported before anything runs, and the bar
    # knows every run.
    total = sum(len(expand(grid, reps)) for grid in grids.values())
    with SweepBar(runs=total, sweeps=len(grids), shown=progress) as bar:
        for experiment in chosen:
            if experiment.name in grids:
                sweep(
                    grids[experiment.name],
                    root / experiment.name,
                    workers=workers,
                    repetitions=reps,
                    flent_files=flent_files,
                    bar=bar,
                )
                done.append(experiment)
    if not done:
        raise ValueError(f"{name}: nothing to run; " + "; ".join(skipped))
    drawn = figures.plot(root)
    by_experiment: dict[str, list[Path]] = {}
    for _, paths in drawn:
        for path in paths:
            by_experiment.setdefault(path.parent.name, []).append(path)
    for experiment in done:
        stems = {p.stem.split("-")[0] for p in by_experiment.get(experiment.name, [])}
        lacking = [f for f in experiment.figures if f not in stems]
        if lacking:
            skipped.append(f"{experiment.name}: figures not drawn (the runs lack their data): {', '.join(lacking)}")
    for model in spec.models:
        _, draw = MODELS[model]
        by_experiment[model] = draw(root / "figures" / model)
    anovas = {}
    for experiment in done:
        if experiment.anova:
            anovas[experiment.name] = anova_table(root / experiment.name, experiment.anova)
            anovas[experiment.name].to_csv(root / experiment.name / "anova.csv", index=False)
    # Every experiment stored in ROOT, not only those run now: `-e NAME` re-runs one experiment
    # and keeps the others' rows in the headline and the comparison.
    measured = metrics_table(name, root)
    table = measured[HEADLINE_COLUMNS]
    storage.write_text(root / HEADLINE_CSV, table.to_csv(index=False))
    storage.write_text(root / HEADLINE_MD, headline_markdown(table, spec.title))
    comparison = write_comparison(name, root, measured)
    # What the report states of this reproduction; written last, it includes the tables above.
    about = {
        "study": name,
        "title": spec.title,
        "testbed": spec.described(),
        "kernel": kernel or spec.kernel,
        "quick": quick,
        "repetitions": reps,
        "started": started_at,
        "machine": report.this_machine(),
        "wall_s": time.monotonic() - started,
    }
    storage.write_text(root / report.STUDY_FILE, json.dumps(about))
    written = report.write(root)
    return Reproduction(root, table, anovas, by_experiment, skipped, written, time.monotonic() - started, comparison)


def _shown(table: pd.DataFrame) -> pd.DataFrame:
    """The headline table's values as printed: goodput to 0.01 Mbit/s, ping to 0.1 ms or "-"."""
    return table.assign(
        goodput_mbit=table["goodput_mbit"].map(lambda v: f"{v:.2f}"),
        ping_p50_ms=table["ping_p50_ms"].map(lambda v: "-" if pd.isna(v) else f"{v:.1f}"),
    ).rename(columns={"goodput_mbit": "goodput Mbit/s", "ping_p50_ms": "ping p50 ms"})


def headline_markdown(table: pd.DataFrame, title: str) -> str:
    """The headline table as a Markdown document (``headline.md`` of a reproduction)."""
    shown = _shown(table)
    lines = [f"# {title}", "", "| " + " | ".join(shown.columns) + " |", "|---" * len(shown.columns) + "|"]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in shown.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def format_headline(table: pd.DataFrame) -> str:
    """The headline table as aligned text."""
    return "(no runs)" if table.empty else _shown(table).to_string(index=False)
