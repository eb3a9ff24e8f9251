"""Wired, Wi-Fi and hybrid bottleneck model against hand-computed values."""

import json
import math
import re

import numpy as np
import pytest
from wificc.models import hybrid
from wificc.models.hybrid import REFERENCE, HybridParams

EXACT = 1e-12


def test_txtw_of_one_packet():
    # (1500 + 48) * 8 / 2.4e9 + 0.5e-3 = 12384 / 2.4e9 + 5e-4 = 5.16e-6 + 5e-4 s
    assert hybrid.txtw(1) == pytest.approx(5.0516e-4, rel=EXACT)


def test_thr_of_64_packets():
    # TxTw(64) = (64 * 1500 + 48) * 8 / 2.4e9 + 5e-4 = 768384 / 2.4e9 + 5e-4
    #          = 8.2016e-4 s
    # Thr(64) = 64 * 1500 * 8 / 8.2016e-4 = 768000 / 8.2016e-4 = 936402653.1408... bit/s
    assert hybrid.thr(64) == pytest.approx(936_402_653.140_850_5, rel=EXACT)


def test_txte_counts_the_ethernet_overhead():
    # 10 * (1500 + 38) * 8 / 1e9 = 123040 / 1e9 s
    assert hybrid.txte(10) == pytest.approx(1.2304e-4, rel=EXACT)


def test_k_bar_closed_form_for_the_reference():
    # r_wired (8 l_oh / r + t_oh) = 1e9 * (384 / 2.4e9 + 5e-4) = 160 + 500000 = 500160
    # 8 l (1 - r_wired / r) = 12000 * (1 - 1 / 2.4) = 12000 - 5000 = 7000
    assert hybrid.k_bar() == pytest.approx(500160 / 7000, rel=EXACT)
    assert hybrid.thr(hybrid.k_bar()) == pytest.approx(1e9, rel=EXACT)


def test_k_bar_in_whole_packets_is_the_first_k_reaching_the_wire():
    # Thr(71) = 852000 / 8.5516e-4 = 996.3e6 < 1e9 <= Thr(72) = 864000 / 8.6016e-4
    assert hybrid.k_bar_packets() == 72
    assert hybrid.thr(71) < 1e9 <= hybrid.thr(72)


def test_k_bar_on_a_whole_number_is_not_rounded_past_it():
    # l_oh = 0, t_oh = 7e-4: k_bar = 1e9 * 7e-4 / 7000 = 100 (float: 100.00000000000001)
    assert hybrid.k_bar_packets(HybridParams(l_oh=0.0, t_oh=7e-4)) == 100


def test_rtt_and_bw_below_k_bar():
    # TxTw(10) = (15000 + 48) * 8 / 2.4e9 + 5e-4 = 5.016e-5 + 5e-4 = 5.5016e-4 s
    # RTT(10) = 2.5e-3 + 2 * 5.5016e-4 = 3.60032e-3 s; BW(10) = 120000 / 5.5016e-4
    assert hybrid.rtt(10) == pytest.approx(3.60032e-3, rel=EXACT)
    assert hybrid.bw(10) == pytest.approx(120000 / 5.5016e-4, rel=EXACT)


def test_rtt_and_bw_above_k_bar():
    # TxTw(k_bar) = k_bar * 12000 / 1e9 since Thr(k_bar) = r_wired: 8.574171428571e-4 s
    # TxTe(200 - k_bar) = 128.5485714285714 * 12304 / 1e9 = 1.5816616228571e-3 s
    # RTT(200) = 2.5e-3 + 2 * 8.574171428571e-4 + 1.5816616228571e-3
    #          = 5.7964959085714e-3 s
    assert hybrid.rtt(200) == pytest.approx(5.7964959085714e-3, rel=1e-11)
    assert hybrid.bw(200) == pytest.approx(1e9, rel=EXACT)


def test_hybrid_curves_are_continuous_at_k_bar():
    kb = hybrid.k_bar()
    below, above = hybrid.rtt(kb * (1 - 1e-12)), hybrid.rtt(kb * (1 + 1e-12))
    assert above == pytest.approx(below, rel=1e-10)
    assert hybrid.bw(kb * (1 + 1e-12)) == pytest.approx(hybrid.bw(kb), rel=1e-10)


def test_curves_are_monotone():
    frame = hybrid.table(REFERENCE, np.arange(1, 2049))
    for column in ("hybrid_rtt_s", "wifi_rtt_s", "wired_rtt_s"):
        assert np.all(np.diff(frame[column]) >= 0), column
    assert np.all(np.diff(frame["hybrid_rtt_s"]) > 0)
    for column in ("hybrid_bw_bps", "wifi_bw_bps", "wired_bw_bps", "thr_bps"):
        assert np.all(np.diff(frame[column]) >= 0), column
    above = frame[frame["k"] >= hybrid.k_bar()]
    assert np.allclose(above["hybrid_bw_bps"], 1e9, rtol=EXACT, atol=0)


def test_wired_model():
    # k_X = 2.5e-3 / (1538 * 8 / 1e9) = 2.5e-3 / 1.2304e-5 = 203.18595578673602 packets
    assert hybrid.wired_bdp() == pytest.approx(2.5e-3 / 1.2304e-5, rel=EXACT)
    # below k_X: window-limited, 100 * 12000 / 2.5e-3 = 4.8e8 bit/s, RTT = 2.5e-3 s
    assert hybrid.wired_bw(100) == pytest.approx(4.8e8, rel=EXACT)
    assert hybrid.wired_rtt(100) == pytest.approx(2.5e-3, rel=EXACT)
    # above k_X: 12000 / 1.2304e-5 = 975292587.77 bit/s and RTT = k TxTe(1)
    # = 300 * 1.2304e-5 = 3.6912e-3 s, because k_X TxTe(1) = rtt_base
    assert hybrid.wired_bw(300) == pytest.approx(12000 / 1.2304e-5, rel=EXACT)
    assert hybrid.wired_rtt(300) == pytest.approx(3.6912e-3, rel=EXACT)


def test_wifi_model_beyond_the_largest_aggregate():
    # TxTw(800) = (1.2e6 + 48) * 8 / 2.4e9 + 5e-4 = 4.00016e-3 + 5e-4 = 4.50016e-3 s
    # RTT(1000) = 2.5e-3 + 2 * 4.50016e-3 + 200 * 4.50016e-3 / 800 = 1.262536e-2 s
    assert hybrid.wifi_rtt(1000) == pytest.approx(1.262536e-2, rel=EXACT)
    assert hybrid.wifi_bw(1000) == pytest.approx(9.6e6 / 4.50016e-3, rel=EXACT)
    assert hybrid.wifi_bw(1000) == hybrid.wifi_bw(800)


def test_wifi_power_optimum():
    # a = 12000 / 2.4e9 = 5e-6; c = 384 / 2.4e9 + 5e-4 = 5.0016e-4;
    # d = 2.5e-3 + 2c = 3.50032e-3; c d / 2 = 8.753600256e-7; k_B = sqrt(.) / a = 187.12
    k_b = hybrid.wifi_power_optimum()
    assert k_b == pytest.approx(math.sqrt(8.753600256e-7) / 5e-6, rel=EXACT)
    ks = np.array([k_b - 1, k_b, k_b + 1])
    power = hybrid.wifi_bw(ks) / hybrid.wifi_rtt(ks)
    assert power[1] > power[0]
    assert power[1] > power[2]


def test_operating_points():
    points = {(q.model, q.name): q for q in hybrid.operating_points()}
    kx, kb = hybrid.wired_bdp(), hybrid.k_bar()
    expected_k = {
        ("wired", "X"): kx,
        ("wired", "Y"): kx + 1000,
        ("wifi", "A"): 1,
        ("wifi", "B"): hybrid.wifi_power_optimum(),
        ("wifi", "C"): 800,
        ("wifi", "D"): 1800,
        ("hybrid", "L"): kb,
        ("hybrid", "M"): 800,
        ("hybrid", "N"): kb + 1000,
    }
    assert {key: q.k for key, q in points.items()} == pytest.approx(expected_k)
    # M: 2.5e-3 + 2 TxTw(k_bar) + TxTe(800 - k_bar), all terms as in the test above
    m_rtt = 2.5e-3 + 2 * kb * 12000 / 1e9 + (800 - kb) * 12304 / 1e9
    assert points["hybrid", "M"].rtt_s == pytest.approx(m_rtt, rel=EXACT)
    assert points["hybrid", "L"].bw_bps == pytest.approx(1e9, rel=EXACT)
    assert points["wifi", "A"].rtt_s == pytest.approx(2.5e-3 + 2 * 5.0516e-4, rel=EXACT)


def test_vectorised_and_scalar_forms_agree():
    ks = np.array([1.0, 64.0, 500.0])
    values = hybrid.rtt(ks)
    assert isinstance(values, np.ndarray)
    assert isinstance(hybrid.rtt(64), float)
    assert values.tolist() == [hybrid.rtt(1), hybrid.rtt(64), hybrid.rtt(500)]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"r": -1.0}, "r: expected a PHY rate in bit/s > 0, got -1.0"),
        ({"mxg": 0}, "mxg: expected a largest aggregate of at least 1 packet, got 0"),
        ({"rtt_base": math.inf}, "rtt_base: expected a base RTT in s > 0, got inf"),
        ({"l": True}, "l: expected a packet size in bytes > 0, got True"),
        ({"buffer": 2.5}, "buffer: expected a queue capacity of at least 0 packets"),
    ],
)
def test_bad_parameters_are_named(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        HybridParams(**kwargs)


def test_no_hybrid_bottleneck_is_reported():
    slow_wifi = HybridParams(r=0.9e9)
    assert hybrid.k_bar(slow_wifi) == math.inf
    with pytest.raises(ValueError, match=r"not a hybrid bottleneck.*k_bar = inf"):
        hybrid.rtt(10, slow_wifi)
    with pytest.raises(ValueError, match="mxg = 50"):
        hybrid.bw(10, HybridParams(mxg=50))


@pytest.mark.parametrize("k", [0.5, "many", math.nan, [1, 2, -3]])
def test_bad_k_is_reported(k):
    with pytest.raises(ValueError, match="k: expected packets in flight >= 1"):
        hybrid.txtw(k)


def test_run_returns_json_ready_tables():
    result = hybrid.run(k_max=100, k_step=3)
    json.dumps(result, allow_nan=False)
    assert result["k_bar"] == pytest.approx(500160 / 7000, rel=EXACT)
    assert result["k_bar_packets"] == 72
    assert [row["k"] for row in result["curves"]] == list(range(1, 101, 3))
    assert len(result["operating_points"]) == 9
    assert result["params"]["r"] == 2.4e9


def test_run_rejects_unknown_parameters():
    with pytest.raises(ValueError, match=r"unknown parameter 'rate'.*l_oh.*k_step"):
        hybrid.run(rate=1e9)
    with pytest.raises(ValueError, match=r"k_max: expected .* got 0"):
        hybrid.run(k_max=0)


def test_figure_writes_png_and_svg(tmp_path):
    paths = hybrid.figure(REFERENCE, tmp_path / "sub" / "hybrid")
    assert [p.name for p in paths] == ["hybrid.png", "hybrid.svg"]
    assert paths[0].read_bytes().startswith(b"\x89PNG")
    assert b"<svg" in paths[1].read_bytes()
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == [
        "hybrid.png",
        "hybrid.svg",
    ]
