"""BBR Startup: the gain that doubles the sending rate each round, and a simulation.

In Startup BBR paces at ``G * bw`` and grows its cwnd like slow start; G is chosen so
that the rate doubles every round trip, a binary search for the bottleneck rate in
log2(BDP) rounds (Cardwell et al., "BBR: Congestion-Based Congestion Control", ACM Queue
2016).

Why 2/ln 2. Measure time t in round trips and rates in packets per round trip. A rate
that doubles every round is p(t) = p0 2^t; over the next round [t, t+1] it carries
``integral p0 2^s ds = p0 2^t / ln 2``. What the sender observes at t is the delivery
rate of what it sent one round earlier, bw = p(t - 1) = p0 2^(t-1). Pacing at G bw for
that round carries G p0 2^(t-1), and equating the two gives ``G = 2 / ln 2 ~ 2.885``:
Linux tcp_bbr.c's bbr_high_gain (BBR_UNIT * 2885 / 1000 + 1 = 739/256).

Why 4 ln 2. A Linux delivery-rate sample is not instantaneous: tcp_rate.c divides the
data delivered over about one round trip by that interval, so at t the sample averages
what was sent during [t-2, t-1]: bw = p0 2^(t-2) / ln 2. Then G bw = p(t) needs
``G = 4 ln 2 ~ 2.773``, the value Google's BBRv3 uses (google/bbr v3 tcp_bbr.c,
bbr_startup_pacing_gain = BBR_UNIT * 277 / 100 + 1 = 710/256). Under this averaging a
gain G gives a growth of x per round with x^2 ln x / (x - 1) = G. Startup's cwnd grows
by the packets ACKed (tcp_bbr.c, bbr_set_cwnd), so the rate never more than doubles per
round: a gain above 4 ln 2 only adds pacing slack, and once the pipe is full it lets the
cwnd, and so the queue, grow larger.

The simulation (:func:`simulate`) plays Startup on a fluid, slotted model: ``m`` slots
per base round trip (min_rtt), rates in packets per min_rtt, a bottleneck serving
``bdp`` packets per min_rtt from an unlimited FIFO, and data served in slot k ACKed in
slot k + m (the base RTT follows the bottleneck, so queueing adds to it). Each slot, in
order:

1. ACKs arrive; the bw sample is the packets ACKed during the last m slots (one
   min_rtt), the estimator of Google's startup simulation (google/bbr
   Documentation/startup/gain/simulation); bw is their running maximum (tcp_bbr.c keeps
   the maximum of the last 10 rounds: the same while the samples rise or level off).
2. On ACKs, cwnd grows by the packets ACKed while cwnd < cwnd_gain * bw * min_rtt or
   fewer than TCP_INIT_CWND packets were delivered, with a floor of 4 (bbr_set_cwnd
   before the pipe is full); the pacing rate rises to gain * (1 - pacing_margin) * bw
   and never falls (bbr_set_pacing_rate).
3. The sender sends min(pacing / m, cwnd - inflight); the bottleneck serves up to
   bdp / m.

The pacing rate starts at gain * (1 - pacing_margin) * init_cwnd per min_rtt
(bbr_init_pacing_rate_from_rtt with srtt = min_rtt). After each round the full-pipe
check of bbr_check_full_bw_reached runs (bw below 1.25 x the last full_bw for 3 rounds);
the simulation marks the round but stays in Startup. Rounds here are min_rtt intervals,
not Linux's packet-timed rounds: the two agree until a queue builds. The cwnd budget for
TSO (bbr_quantization_budget) is left out, and the pacing margin defaults to 0 so that
the gain alone is compared (tcp_bbr.c paces bbr_pacing_margin_percent = 1 % lower; set
0.01).

In the doubling regime the slotted model sends s_k = 2^(k/m) per slot while the pacing
allowance is s_k G / (4 m (1 - 2^(-1/m))). So the rate doubles every round
(cwnd-limited, once the start-up transient has died out) exactly when
G >= 4 m (1 - 2^(-1/m)) (:func:`doubling_threshold`), which tends to 4 ln 2 as m grows.
Below it pacing limits and the growth X per round solves
G (X - 1) = m X^2 (1 - X^(-1/m)) (:func:`round_growth`).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure
from scipy.optimize import brentq

from wificc.models._common import distinct_numbers, integer, number, params_from, records, result, save_figure

# Gain that doubles the rate per round when the bw sample is instantaneous: 2/ln 2.
STARTUP_GAIN_V1 = 2 / math.log(2)
# tcp_bbr.c bbr_high_gain in BBR_UNIT = 256 fixed point: 256 * 2885 / 1000 + 1 = 739.
STARTUP_GAIN_V1_LINUX = 739 / 256
# Gain that doubles the rate per round when the bw sample averages a round: 4 ln 2.
STARTUP_GAIN_V3 = 4 * math.log(2)
# google/bbr v3 bbr_startup_pacing_gain: 256 * 277 / 100 + 1 = 710 (BBR_UNIT = 256).
STARTUP_GAIN_V3_LINUX = 710 / 256
# Initial congestion window, packets (include/net/tcp.h TCP_INIT_CWND).
TCP_INIT_CWND = 10
# Smallest cwnd BBR keeps, packets (tcp_bbr.c bbr_cwnd_min_target).
BBR_CWND_MIN_TARGET = 4
# Growth of bw per round that keeps Startup going (tcp_bbr.c bbr_full_bw_thresh).
BBR_FULL_BW_THRESH = 5 / 4
# Rounds without that growth after which the pipe is full (tcp_bbr.c bbr_full_bw_cnt).
BBR_FULL_BW_CNT = 3


@dataclass(frozen=True)
class StartupParams:
    """Startup simulation inputs: rates per min_rtt, windows and bdp in packets."""

    gains: tuple[float, ...] = (2.0, STARTUP_GAIN_V3_LINUX, STARTUP_GAIN_V1_LINUX)
    init_cwnd: float = float(TCP_INIT_CWND)
    bdp: float = 1000.0  # bottleneck rate x min_rtt, packets
    rounds: int = 14
    slots_per_round: int = 64
    # None: the pacing gain, as tcp_bbr.c's bbr_high_gain serves both.
    cwnd_gain: float | None = None
    # Fraction paced below gain x bw (tcp_bbr.c: 0.01).
    pacing_margin: float = 0.0

    def __post_init__(self) -> None:
        distinct_numbers("gains", self.gains, "startup gains > 1", lambda v: v > 1)
        number(
            "init_cwnd",
            self.init_cwnd,
            "an initial cwnd in packets > 0",
            lambda v: v > 0,
        )
        number("bdp", self.bdp, "a bandwidth-delay product in packets > 0", lambda v: v > 0)
        integer("rounds", self.rounds, "at least 1 round", 1)
        integer("slots_per_round", self.slots_per_round, "at least 1 slot per round", 1)
        if self.cwnd_gain is not None:
            number("cwnd_gain", self.cwnd_gain, "a cwnd gain > 0 or None", lambda v: v > 0)
        number(
            "pacing_margin",
            self.pacing_margin,
            "a fraction in [0, 1)",
            lambda v: 0 <= v < 1,
        )


def doubling_threshold(slots_per_round: int) -> float:
    """Smallest gain, 4 m (1 - 2^(-1/m)), that doubles the slotted model each round."""
    m = integer("slots_per_round", slots_per_round, "at least 1 slot per round", 1)
    return 4 * m * (1 - 2 ** (-1 / m))


def round_growth(gain: float, slots_per_round: int) -> float:
    """Long-run growth per round of the slotted model for an effective pacing gain.

    2 at or above :func:`doubling_threshold` (slow-start cwnd limits), else the root X
    in (1, 2) of G (X - 1) = m X^2 (1 - X^(-1/m)) (pacing limits).
    """
    g = number("gain", gain, "a gain > 1", lambda v: v > 1)
    m = integer("slots_per_round", slots_per_round, "at least 1 slot per round", 1)
    if g >= doubling_threshold(m):
        return 2.0
    return brentq(
        lambda x: g * (x - 1) - m * x * x * (1 - x ** (-1 / m)),
        1 + 1e-12,
        2.0,
        xtol=1e-15,
    )


def simulate(gain: float, p: StartupParams) -> pd.DataFrame:
    """Run Startup with ``gain`` for ``p.rounds`` rounds, a row per round (module doc).

    Columns: gain, round (1-based), delivery_per_rtt (packets ACKed in the round),
    pacing_per_rtt, bw_per_rtt (max bw sample), cwnd_pkts, inflight_pkts, queue_pkts
    (all at the end of the round) and full_bw_reached.
    """
    g = number("gain", gain, "a startup gain > 1", lambda v: v > 1)
    m = p.slots_per_round
    cwnd_gain = g if p.cwnd_gain is None else p.cwnd_gain
    pacing_gain = g * (1 - p.pacing_margin)
    service_per_slot = p.bdp / m
    served = [0.0] * m  # served[k % m]: packets served in slot k - m, ACKed in slot k
    acked = [0.0] * m  # acked[k % m]: packets ACKed in slot k, for the one-round window
    window = delivered = inflight = queue = bw = full_bw = 0.0
    cwnd = p.init_cwnd
    pacing = pacing_gain * p.init_cwnd
    full_bw_cnt = 0
    full_bw_reached = False
    rows = []
    for round_no in range(1, p.rounds + 1):
        round_delivered = 0.0
        for slot in range((round_no - 1) * m, round_no * m):
            i = slot % m
            newly_acked = served[i]
            window += newly_acked - acked[i]
            acked[i] = newly_acked
            delivered += newly_acked
            round_delivered += newly_acked
            inflight -= newly_acked
            if newly_acked > 0:
                bw = max(bw, window)
                if cwnd < cwnd_gain * bw or delivered < TCP_INIT_CWND:
                    cwnd += newly_acked
                cwnd = max(cwnd, BBR_CWND_MIN_TARGET)
                pacing = max(pacing, pacing_gain * bw)
            sent = max(0.0, min(pacing / m, cwnd - inflight))
            inflight += sent
            queue += sent
            served[i] = min(queue, service_per_slot)
            queue -= served[i]
        if not full_bw_reached:
            if bw >= full_bw * BBR_FULL_BW_THRESH:
                full_bw, full_bw_cnt = bw, 0
            else:
                full_bw_cnt += 1
                full_bw_reached = full_bw_cnt >= BBR_FULL_BW_CNT
        rows.append(
            {
                "gain": g,
                "round": round_no,
                "delivery_per_rtt": round_delivered,
                "pacing_per_rtt": pacing,
                "bw_per_rtt": bw,
                "cwnd_pkts": cwnd,
                "inflight_pkts": inflight,
                "queue_pkts": queue,
                "full_bw_reached": full_bw_reached,
            }
        )
    return pd.DataFrame(rows)


def table(p: StartupParams) -> pd.DataFrame:
    """:func:`simulate` for every gain of ``p.gains``, one after the other."""
    return pd.concat([simulate(g, p) for g in p.gains], ignore_index=True)


def summary(p: StartupParams, rounds: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per gain: long-run growth per round, the round the pipe counts as full, the queue
    then, and the largest queue (packets and BDPs). ``rounds``: :func:`table`'s output.
    """
    rounds = table(p) if rounds is None else rounds
    rows = []
    for gain, runs in rounds.groupby("gain", sort=False):
        full = runs[runs["full_bw_reached"]]
        full_round = int(full["round"].iloc[0]) if len(full) else None
        queue_at_full = float(full["queue_pkts"].iloc[0]) if len(full) else None
        rows.append(
            {
                "gain": float(gain),
                "growth_per_round": round_growth(gain * (1 - p.pacing_margin), p.slots_per_round),
                "full_bw_round": full_round,
                "queue_at_full_bw_pkts": queue_at_full,
                "max_queue_pkts": float(runs["queue_pkts"].max()),
                "max_queue_bdp": float(runs["queue_pkts"].max() / p.bdp),
            }
        )
    return pd.DataFrame(rows, dtype=object)


def figure(p: StartupParams, path_prefix: str | os.PathLike[str]) -> list[Path]:
    """Plot pacing and delivery rate (log scale) and queue per round for each gain."""
    rounds = table(p)
    fig = Figure(figsize=(11, 4.5), layout="constrained")
    rate_ax, queue_ax = fig.subplots(1, 2, sharex=True)
    for gain, runs in rounds.groupby("gain", sort=False):
        label = f"G = {gain:.4g}"
        (pacing_line,) = rate_ax.semilogy(runs["round"], runs["pacing_per_rtt"], label=label)
        color = pacing_line.get_color()
        # Nothing is delivered in round 1, which a log axis cannot show.
        delivered = runs["delivery_per_rtt"].where(runs["round"] > 1)
        rate_ax.semilogy(runs["round"], delivered, ":", color=color)
        queue_ax.plot(
            runs["round"],
            runs["queue_pkts"] / p.bdp,
            "-o",
            color=color,
            markersize=3,
            label=label,
        )
        full = runs[runs["full_bw_reached"]]
        if len(full):
            first = full.iloc[0]
            queue_ax.plot(
                first["round"],
                first["queue_pkts"] / p.bdp,
                "s",
                color=color,
                fillstyle="none",
            )
    rate_ax.axhline(p.bdp, color="grey", linewidth=0.8)
    rate_ax.set_xlabel("round (min_rtt)")
    rate_ax.set_ylabel("packets per min_rtt (solid: pacing, dotted: delivered)")
    rate_ax.legend()
    queue_ax.set_xlabel("round (min_rtt)")
    queue_ax.set_ylabel("bottleneck queue (BDP); square: pipe full")
    queue_ax.legend()
    title = f"BBR Startup: BDP = {p.bdp:g} packets, init cwnd = {p.init_cwnd:g}, {p.slots_per_round} slots per round"
    return save_figure(fig, title, path_prefix)


def run(**kwargs: Any) -> dict[str, Any]:
    """Simulate ``StartupParams(**kwargs)``; JSON-ready gains, threshold and tables."""
    p = params_from(StartupParams, kwargs, "startup")
    rounds = table(p)
    gains = {
        "2/ln2": STARTUP_GAIN_V1,
        "4ln2": STARTUP_GAIN_V3,
        "linux_bbr_high_gain": STARTUP_GAIN_V1_LINUX,
        "linux_bbr3_startup_pacing_gain": STARTUP_GAIN_V3_LINUX,
    }
    return result(
        "startup",
        p,
        gains=gains,
        doubling_threshold=doubling_threshold(p.slots_per_round),
        summary=records(summary(p, rounds)),
        rounds=records(rounds),
    )
