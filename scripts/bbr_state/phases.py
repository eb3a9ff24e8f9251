"""Per-ACK logs of BBR, kernel (``bbr_state SECONDS SPLIT_US EVENTS.csv``) or simulator
(``run_scenario SCENARIO.json --ack-log`` built with the ``ack-log`` feature), summarised per
flow: the PROBE_BW 1.25 phases (length on the delivered clock, whether the ACK that ended one
reported a loss, when its first loss was marked), time in each TCP congestion state, and the
short flow's share of the segments delivered in a few windows.

    python scripts/bbr_state/phases.py EVENTS.csv [EVENTS2.csv ...]

A row is the state before an ACK is processed (tcp_probe), so row i+1 is the state after ACK i;
the ACK that ended a phase is the one between the last row at gain 1.25 and the next. Flows
that marked nothing lost (the receivers' sockets, other connections) are left out.
"""

from __future__ import annotations

import sys

import pandas as pd

PROBE_BW = 2
UP = 320  # pacing gain 1.25 in BBR_UNIT
RECOVERY = 3
STATES = ("Open", "Disorder", "CWR", "Recovery", "Loss")
WINDOWS_S = ((0, 3), (0, 10), (10, 30))


def flows(df: pd.DataFrame) -> list[pd.DataFrame]:
    """The ACK rows of each flow that marked a segment lost and lasted at least half as long as
    the longest (a shorter one is another program's connection: the probe sees every bbr socket
    of the machine), shortest min_rtt first."""
    acks = df[df["kind"] == 0]
    out = []
    for _, g in acks.groupby("sk"):
        if g["lost"].iloc[-1] == g["lost"].iloc[0]:
            continue
        out.append(g.sort_values("ts_ns", kind="stable").reset_index(drop=True))
    span = [g["ts_ns"].iloc[-1] - g["ts_ns"].iloc[0] for g in out]
    out = [g for g, s in zip(out, span, strict=True) if 2 * s >= max(span)]
    return sorted(out, key=lambda g: g["min_rtt_us"].median())


def probe_phases(g: pd.DataFrame) -> pd.DataFrame:
    """One row per complete 1.25 phase of PROBE_BW: its length on the delivered clock (ms, the
    clock `bbr_is_next_cycle_phase` uses), whether the ACK that ended it marked a loss, when its
    first loss was marked (ms after the phase began; NaN if none) and the losses marked in it."""
    up = (g["pacing_gain"] == UP) & (g["mode"] == PROBE_BW)
    rows = []
    i, n = 0, len(g)
    while i < n:
        if not up.iloc[i] or i == 0 or up.iloc[i - 1]:
            i += 1
            continue
        end = i
        while end + 1 < n and up.iloc[end + 1]:
            end += 1
        if end + 1 >= n:
            break
        lost0 = g["lost"].iloc[i]
        marked = g.index[(g.index >= i) & (g.index <= end) & (g["lost"] > lost0)]
        first_loss_ms = (g["ts_ns"].iloc[marked[0]] - g["ts_ns"].iloc[i]) / 1e6 if len(marked) else float("nan")
        rows.append(
            {
                "ms": (g["delivered_mstamp_us"].iloc[end + 1] - g["delivered_mstamp_us"].iloc[i]) / 1000,
                "loss_end": bool(g["lost"].iloc[end + 1] > g["lost"].iloc[end]),
                "first_loss_ms": first_loss_ms,
                "lost": int(g["lost"].iloc[end + 1] - lost0),
            }
        )
        i = end + 1
    return pd.DataFrame(rows, columns=["ms", "loss_end", "first_loss_ms", "lost"])


def state_shares(g: pd.DataFrame) -> dict[str, float]:
    """Share of the flow's time in each TCP congestion state (ca_state after each ACK)."""
    dur = g["ts_ns"].diff().shift(-1).fillna(0)
    total = dur.sum() or 1
    return {name: float(dur[g["ca_state"] == s].sum() / total) for s, name in enumerate(STATES)}


def short_share(fs: list[pd.DataFrame], start_s: float, end_s: float) -> float:
    """The first flow's share of the segments the first two delivered between start_s and end_s
    after the first ACK of either."""
    t0 = min(g["ts_ns"].iloc[0] for g in fs[:2])

    def delivered(g: pd.DataFrame) -> int:
        w = g[(g["ts_ns"] >= t0 + start_s * 1e9) & (g["ts_ns"] < t0 + end_s * 1e9)]
        return int(w["delivered"].iloc[-1] - w["delivered"].iloc[0]) if len(w) else 0

    a, b = delivered(fs[0]), delivered(fs[1])
    return a / (a + b) if a + b else float("nan")


def main() -> None:
    for path in sys.argv[1:]:
        fs = flows(pd.read_csv(path))
        print(path)
        for g in fs:
            ph = probe_phases(g)
            states = ", ".join(f"{k} {100 * v:.1f}%" for k, v in state_shares(g).items() if v > 0)
            lost = int(g["lost"].iloc[-1] - g["lost"].iloc[0])
            print(f"  flow min_rtt {g['min_rtt_us'].median() / 1000:.1f} ms: {lost} marked lost; {states}")
            if len(ph):
                print(
                    f"    {len(ph)} phases at 1.25: length median {ph['ms'].median():.1f} ms, "
                    f"mean {ph['ms'].mean():.1f}, max {ph['ms'].max():.1f}; "
                    f"ended by an ACK that marked a loss {100 * ph['loss_end'].mean():.0f}%; "
                    f"first loss marked after a median {ph['first_loss_ms'].median():.1f} ms"
                )
        if len(fs) >= 2:
            shares = ", ".join(f"{a}-{b} s {100 * short_share(fs, a, b):.1f}%" for a, b in WINDOWS_S)
            print(f"  short flow's share of delivered segments: {shares}")


if __name__ == "__main__":
    main()
