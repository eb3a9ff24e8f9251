"""BBR Startup gain and slotted Startup simulation against hand-computed values."""

import json
import math
import re

import pytest
from scipy.integrate import quad
from wificc.models import startup
from wificc.models.startup import StartupParams

EXACT = 1e-12
G1 = startup.STARTUP_GAIN_V1


def rounds_of(gain, **kwargs):
    return startup.simulate(gain, StartupParams(**kwargs)).set_index("round")


def test_startup_gains():
    assert G1 == pytest.approx(2.885390081777927, rel=EXACT)
    assert round(G1, 4) == 2.8854
    assert startup.STARTUP_GAIN_V3 == pytest.approx(2.772588722239781, rel=EXACT)
    # Linux fixed point, BBR_UNIT = 256: 256 * 2885 // 1000 + 1 = 739 and
    # 256 * 277 // 100 + 1 = 710
    assert startup.STARTUP_GAIN_V1_LINUX == 2.88671875
    assert startup.STARTUP_GAIN_V3_LINUX == 2.7734375


def test_derivation_of_2_over_ln2():
    # Next round of a doubling rate 2^s carries integral_t^(t+1) 2^s ds; the sender sees
    # bw = 2^(t-1): the ratio is 2 / ln 2 whatever t.
    for t in (0.0, 3.0, 7.5):
        volume, _ = quad(lambda s: 2**s, t, t + 1)
        assert volume / 2 ** (t - 1) == pytest.approx(G1, rel=1e-10)


def test_derivation_of_4_ln2():
    # A sample averaging the round [t-2, t-1] is integral 2^s ds over it; G bw = 2^t.
    for t in (0.0, 3.0, 7.5):
        bw, _ = quad(lambda s: 2**s, t - 2, t - 1)
        assert 2**t / bw == pytest.approx(startup.STARTUP_GAIN_V3, rel=1e-10)


def test_doubling_threshold():
    # m = 1: 4 (1 - 1/2) = 2; m = 64: 256 (1 - 2^(-1/64)); large m: 4 ln 2
    assert startup.doubling_threshold(1) == 2.0
    assert startup.doubling_threshold(64) == pytest.approx(256 * (1 - 2 ** (-1 / 64)), rel=EXACT)
    assert startup.doubling_threshold(10**7) == pytest.approx(startup.STARTUP_GAIN_V3, rel=1e-7)


def test_round_growth():
    assert startup.round_growth(G1, 64) == 2.0
    # m = 1, pacing-limited: G (X - 1) = X^2 (1 - 1/X) = X (X - 1), so X = G
    assert startup.round_growth(1.5, 1) == pytest.approx(1.5, rel=EXACT)
    x = startup.round_growth(2.0, 64)
    assert 1 < x < 2
    assert 2.0 * (x - 1) == pytest.approx(64 * x * x * (1 - x ** (-1 / 64)), rel=1e-12)


def test_one_slot_per_round_is_slow_start():
    # m = 1, no bottleneck, G = 2/ln 2, init cwnd 10:
    # round 1: pacing 10 G = 28.854; the 10 packets go out, nothing is ACKed yet.
    # round 2: 10 ACKed, bw 10, cwnd 10 < 10 G -> 20; send min(28.854, 20) = 20.
    # round 3: 20 ACKed, bw 20, cwnd 40, pacing 20 G = 57.708; send min(57.708, 40).
    # round 4: 40 ACKed, bw 40, cwnd 80, pacing 115.415; inflight 80.
    rows = rounds_of(G1, slots_per_round=1, bdp=1e9, rounds=4)
    assert rows["delivery_per_rtt"].tolist() == [0, 10, 20, 40]
    assert rows["cwnd_pkts"].tolist() == [10, 20, 40, 80]
    assert rows["inflight_pkts"].tolist() == [10, 20, 40, 80]
    assert rows["pacing_per_rtt"].tolist() == pytest.approx([10 * G1, 10 * G1, 20 * G1, 40 * G1], rel=EXACT)
    assert rows["queue_pkts"].tolist() == [0, 0, 0, 0]


def test_queue_builds_once_the_pipe_is_full():
    # m = 1, bdp = 10 packets per round, G = 2/ln 2 (10 G = 28.854):
    # round 1: send 10, all served.              delivered 0, inflight 10, queue 0
    # round 2: ACK 10, bw 10, cwnd 20, send 20, serve 10.       inflight 20, queue 10
    # round 3: ACK 10, cwnd 20 < 28.854 -> 30, send 20, serve 10. inflight 30, queue 20
    # round 4: ACK 10, cwnd 30 >= 28.854 stays, send 10, serve 10. inflight 30, queue 20
    # full bw: bw 0, 10, 10, 10, 10; 10 < 1.25 * 10 from round 3, the third time in
    # round 5
    rows = rounds_of(G1, slots_per_round=1, bdp=10.0, rounds=6)
    assert rows["delivery_per_rtt"].tolist() == [0, 10, 10, 10, 10, 10]
    assert rows["cwnd_pkts"].tolist() == [10, 20, 30, 30, 30, 30]
    assert rows["inflight_pkts"].tolist() == [10, 20, 30, 30, 30, 30]
    assert rows["queue_pkts"].tolist() == [0, 10, 20, 20, 20, 20]
    assert rows["full_bw_reached"].tolist() == [False] * 4 + [True] * 2


def test_pacing_rate_never_falls_in_startup():
    # m = 2, G = 1.5, init cwnd 10, pacing 15 per round = 7.5 per slot:
    # slot 0: send 7.5.  slot 1: send min(7.5, 10 - 7.5) = 2.5.   round 1: inflight 10
    # slot 2: ACK 7.5, bw 7.5, cwnd 17.5; 1.5 * 7.5 = 11.25 < 15 so pacing stays 15;
    #         send min(7.5, 17.5 - 2.5) = 7.5, inflight 10
    # slot 3: ACK 2.5, bw 10, cwnd 17.5 >= 15 stays; send min(7.5, 17.5 - 7.5) = 7.5
    rows = rounds_of(1.5, slots_per_round=2, bdp=1e9, rounds=2)
    assert rows["pacing_per_rtt"].tolist() == [15, 15]
    assert rows["bw_per_rtt"].tolist() == [0, 10]
    assert rows["cwnd_pkts"].tolist() == [10, 17.5]
    assert rows["inflight_pkts"].tolist() == [10, 15]


def test_cwnd_floor_applies_when_acks_arrive():
    # m = 1, init cwnd 1 (below bbr_cwnd_min_target 4), G = 2/ln 2:
    # round 1: no ACK, cwnd stays 1, send min(G, 1) = 1.
    # round 2: ACK 1, delivered 1 < 10 so cwnd 1 + 1 = 2, raised to the floor 4;
    #          pacing G * 1 = 2.885, send min(2.885, 4) = 2.885
    rows = rounds_of(G1, slots_per_round=1, init_cwnd=1.0, rounds=2)
    assert rows["cwnd_pkts"].tolist() == [1, 4]
    assert rows["inflight_pkts"].tolist() == pytest.approx([1, G1], rel=EXACT)


def test_pacing_margin_lowers_the_initial_rate():
    # G (1 - 0.01) * init_cwnd = 2/ln2 * 0.99 * 10
    rows = rounds_of(G1, slots_per_round=1, rounds=1, pacing_margin=0.01)
    assert rows.loc[1, "pacing_per_rtt"] == pytest.approx(G1 * 0.99 * 10, rel=EXACT)


@pytest.mark.parametrize("gain", [G1, startup.STARTUP_GAIN_V1_LINUX])
def test_2_over_ln2_doubles_every_round(gain):
    rows = rounds_of(gain, bdp=1e12, rounds=20)
    ratios = rows["delivery_per_rtt"] / rows["delivery_per_rtt"].shift(1)
    pacing = rows["pacing_per_rtt"] / rows["pacing_per_rtt"].shift(1)
    assert ratios.loc[8:].tolist() == pytest.approx([2.0] * 13, rel=1e-9)
    assert pacing.loc[8:].tolist() == pytest.approx([2.0] * 13, rel=1e-9)


def test_growth_below_and_above_the_threshold():
    threshold = startup.doubling_threshold(64)  # 2.7576 for 64 slots
    for gain in (2.0, threshold - 0.05, threshold + 0.05, startup.STARTUP_GAIN_V3):
        rows = rounds_of(gain, bdp=1e15, rounds=40)
        late = rows.loc[40, "delivery_per_rtt"] / rows.loc[39, "delivery_per_rtt"]
        assert late == pytest.approx(startup.round_growth(gain, 64), rel=1e-4), gain
    assert startup.round_growth(threshold - 0.05, 64) < 1.99


def test_pipe_full_steady_state():
    # With the pipe full: delivery = bdp per round, pacing = G bdp, inflight = cwnd and
    # the queue holds cwnd - bdp; cwnd passes its target G bdp by one slot of ACKs at
    # most.
    gain, bdp = startup.STARTUP_GAIN_V1_LINUX, 1000.0
    last = rounds_of(gain, bdp=bdp, rounds=20).loc[20]
    assert last["delivery_per_rtt"] == pytest.approx(bdp, rel=EXACT)
    assert last["pacing_per_rtt"] == pytest.approx(gain * bdp, rel=EXACT)
    assert last["inflight_pkts"] == pytest.approx(last["cwnd_pkts"], rel=EXACT)
    assert last["queue_pkts"] == pytest.approx(last["cwnd_pkts"] - bdp, rel=1e-9)
    assert gain * bdp <= last["cwnd_pkts"] <= gain * bdp + bdp / 64
    assert bool(last["full_bw_reached"])


def test_higher_gain_builds_a_larger_queue():
    summary = startup.summary(StartupParams()).set_index("gain")
    v3, v1 = startup.STARTUP_GAIN_V3_LINUX, startup.STARTUP_GAIN_V1_LINUX
    assert summary.loc[v1, "max_queue_pkts"] > summary.loc[v3, "max_queue_pkts"]
    assert summary.loc[v1, "growth_per_round"] == summary.loc[v3, "growth_per_round"] == 2
    assert summary.loc[2.0, "growth_per_round"] < 2
    assert summary.loc[2.0, "full_bw_round"] is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"gains": (1.0,)}, "gains: expected startup gains > 1, got 1.0"),
        ({"gains": ()}, "gains: expected a non-empty list"),
        ({"gains": (2.0, 2.0)}, "gains: expected distinct startup gains"),
        ({"rounds": 0}, "rounds: expected at least 1 round, got 0"),
        ({"slots_per_round": 1.5}, "slots_per_round: expected at least 1 slot"),
        ({"pacing_margin": 1.0}, "pacing_margin: expected a fraction in"),
        ({"bdp": -1.0}, "bdp: expected a bandwidth-delay product in packets > 0"),
        ({"cwnd_gain": 0.0}, "cwnd_gain: expected a cwnd gain > 0 or None, got 0.0"),
    ],
)
def test_bad_parameters_are_named(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        StartupParams(**kwargs)


def test_run_returns_json_ready_tables():
    result = startup.run(gains=[2.0, 2.5], rounds=5, bdp=50.0)
    json.dumps(result, allow_nan=False)
    assert result["params"]["gains"] == [2.0, 2.5]
    assert [(row["gain"], row["round"]) for row in result["rounds"]] == [
        (g, n) for g in (2.0, 2.5) for n in range(1, 6)
    ]
    assert result["gains"]["2/ln2"] == G1
    assert result["doubling_threshold"] == startup.doubling_threshold(64)
    with pytest.raises(ValueError, match=r"unknown parameter 'gain'.*gains"):
        startup.run(gain=2.0)


def test_figure_writes_png_and_svg(tmp_path):
    paths = startup.figure(StartupParams(), tmp_path / "startup")
    assert paths[0].read_bytes().startswith(b"\x89PNG")
    assert b"<svg" in paths[1].read_bytes()
    assert all(p.stat().st_size > 1000 for p in paths)


def test_summary_reports_where_the_pipe_fills():
    summary = startup.summary(StartupParams(gains=(G1,), bdp=10.0, slots_per_round=1))
    row = summary.iloc[0]
    # the hand-traced run above: pipe full in round 5 with 20 packets queued (2 BDP)
    assert row["full_bw_round"] == 5
    assert row["queue_at_full_bw_pkts"] == 20
    assert row["max_queue_bdp"] == 2
    assert math.isfinite(row["growth_per_round"])
