"""scripts/bbr_state/phases.py: the per-ACK summaries used for the RTT-fairness comparison
(docs/fidelity.md, fairness), on hand-built logs."""

import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "bbr_state"))
import phases  # noqa: E402


def log(sk, min_rtt_us, gains, delivered_mstamp_us, lost, ts_ms, delivered=None, ca_state=None, mode=2):
    n = len(gains)
    return pd.DataFrame(
        {
            "kind": [0] * n,
            "sk": [sk] * n,
            "ts_ns": [int(t * 1e6) for t in ts_ms],
            "pacing_gain": gains,
            "mode": [mode] * n,
            "delivered_mstamp_us": delivered_mstamp_us,
            "lost": lost,
            "min_rtt_us": [min_rtt_us] * n,
            "delivered": delivered if delivered is not None else list(range(n)),
            "ca_state": ca_state if ca_state is not None else [0] * n,
        }
    )


def test_a_probe_phase_is_measured_on_the_delivered_clock_up_to_the_ack_that_ended_it():
    # Rows are the state before each ACK: the phase shows from row 1 to row 3, so the ACK that
    # ended it is the one between rows 3 and 4, and its delivered_mstamp is row 4's.
    g = log(
        7,
        50_000,
        gains=[256, 320, 320, 320, 256, 256, 320, 320],
        delivered_mstamp_us=[0, 1_000, 20_000, 40_000, 52_000, 60_000, 70_000, 80_000],
        lost=[0, 0, 2, 2, 5, 5, 5, 6],
        ts_ms=[0, 1, 20, 40, 52, 60, 70, 80],
    )
    ph = phases.probe_phases(g)
    # The second phase (rows 6-7) has no ending ACK in the log and is left out.
    assert len(ph) == 1
    row = ph.iloc[0]
    assert row["ms"] == pytest.approx(51.0)  # 52 000 - 1 000 us
    assert bool(row["loss_end"])  # lost 2 -> 5 on the ending ACK
    assert row["first_loss_ms"] == pytest.approx(19.0)  # row 2 (20 ms) - row 1 (1 ms)
    assert row["lost"] == 5


def test_a_phase_outside_probe_bw_or_ended_without_a_loss():
    g = log(7, 50_000, [256, 320, 320, 256], [0, 10_000, 30_000, 61_000], [3, 3, 3, 3], [0, 10, 30, 61])
    ph = phases.probe_phases(g)
    assert ph["ms"].tolist() == [51.0]
    assert not bool(ph["loss_end"].iloc[0])
    assert ph["first_loss_ms"].isna().all()
    startup = log(7, 50_000, [256, 320, 320, 256], [0, 10_000, 30_000, 61_000], [3, 3, 3, 3], [0, 10, 30, 61], mode=0)
    assert phases.probe_phases(startup).empty


def test_time_in_each_state_and_the_short_flows_share():
    short = log(
        1,
        10_000,
        [256] * 4,
        [0] * 4,
        [0, 1, 1, 1],
        [0, 1000, 2000, 4000],
        delivered=[0, 30, 60, 100],
        ca_state=[0, 3, 3, 0],
    )
    long_ = log(2, 50_000, [256] * 4, [0] * 4, [0, 0, 1, 1], [500, 1500, 2500, 3500], delivered=[0, 10, 20, 30])
    # The short flow: Open for the first 1000 ms, Recovery for the next 3000 ms.
    shares = phases.state_shares(short)
    assert shares["Open"] == pytest.approx(0.25)
    assert shares["Recovery"] == pytest.approx(0.75)
    # Another program's connection, 1.5 s of the 4 s: left out.
    other = log(3, 5_000, [256] * 2, [0] * 2, [0, 4], [1000, 2500])
    fs = phases.flows(pd.concat([long_, short, other]))
    assert [int(g["sk"].iloc[0]) for g in fs] == [1, 2]  # shortest min_rtt first
    # 0-3 s: the short flow's rows at 0, 1, 2 s delivered 60, the long flow's at 0.5-2.5 s 20.
    assert phases.short_share(fs, 0, 3) == pytest.approx(60 / 80)
