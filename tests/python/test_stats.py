"""wificc.stats against hand-computed values."""

import math

import numpy as np
import pandas as pd
import pytest
from wificc import stats


def test_candlesticks_percentiles_min_max_mean_per_group_in_order_of_appearance():
    frame = pd.DataFrame(
        {"cc": ["bbr"] * 10 + ["cubic"] * 5, "goodput": [*range(10, 0, -1), 2.0, 4.0, np.nan, 6.0, 8.0]}
    )
    table = stats.candlesticks(frame, "goodput", by="cc")
    assert list(table.columns) == ["cc", "n", "min", "p10", "p50", "p90", "max", "mean"]
    bbr, cubic = table.to_dict("records")
    # 1..10: rank 1 + 0.1 * 9 = 1.9 -> 1.9; rank 5.5 -> 5.5; rank 9.1 -> 9.1.
    assert bbr == {
        "cc": "bbr",
        "n": 10,
        "min": 1.0,
        "p10": 1.9,
        "p50": 5.5,
        "p90": 9.1,
        "max": 10.0,
        "mean": 5.5,
    }
    # 2, 4, 6, 8 (NaN left out): p10 at rank 1.3 -> 2 + 0.3 * 2 = 2.6; p50 5; p90 rank 3.7 -> 7.4.
    assert cubic["n"] == 4
    assert cubic["p10"] == pytest.approx(2.6)
    assert cubic["p50"] == pytest.approx(5.0)
    assert cubic["p90"] == pytest.approx(7.4)
    assert (cubic["min"], cubic["max"], cubic["mean"]) == (2.0, 8.0, 5.0)


def test_candlesticks_of_a_whole_table_and_of_a_group_without_values():
    whole = stats.candlesticks(pd.DataFrame({"x": [3.0, 1.0]}), "x")
    assert whole.to_dict("records") == [
        {"n": 2, "min": 1.0, "p10": 1.2, "p50": 2.0, "p90": 2.8, "max": 3.0, "mean": 2.0}
    ]
    empty = stats.candlesticks(pd.DataFrame({"g": ["a"], "x": [np.nan]}), "x", by=["g"])
    assert empty.loc[0, "n"] == 0 and math.isnan(empty.loc[0, "p50"])


def test_ecdf_one_row_per_distinct_value():
    frame = pd.DataFrame({"g": ["a", "a", "a", "a", "b"], "rtt": [3.0, 1.0, 2.0, 2.0, 5.0]})
    table = stats.ecdf(frame, "rtt", by="g")
    assert table.to_dict("records") == [
        {"g": "a", "value": 1.0, "n": 4, "cdf": 0.25},
        {"g": "a", "value": 2.0, "n": 4, "cdf": 0.75},
        {"g": "a", "value": 3.0, "n": 4, "cdf": 1.0},
        {"g": "b", "value": 5.0, "n": 1, "cdf": 1.0},
    ]


def test_mean_ci_student_t():
    frame = pd.DataFrame({"x": [2, 4, 4, 4, 5, 5, 7, 9]})
    row = stats.mean_ci(frame, "x").iloc[0]
    # mean 5; s^2 = 32 / 7; t(0.975, 7) = 2.364624 (t table); half = t * s / sqrt(8).
    half = 2.364624 * math.sqrt(32 / 7) / math.sqrt(8)
    assert row["n"] == 8 and row["mean"] == 5.0
    assert row["std"] == pytest.approx(math.sqrt(32 / 7))
    assert row["ci_low"] == pytest.approx(5 - half, abs=1e-5)
    assert row["ci_high"] == pytest.approx(5 + half, abs=1e-5)
    # 90%: t(0.95, 7) = 1.894579.
    row90 = stats.mean_ci(frame, "x", confidence=0.9).iloc[0]
    assert row90["ci_high"] - 5 == pytest.approx(1.894579 * math.sqrt(32 / 7) / math.sqrt(8), abs=1e-5)
    one = stats.mean_ci(pd.DataFrame({"x": [3.0]}), "x").iloc[0]
    assert one["mean"] == 3.0 and math.isnan(one["ci_low"]) and math.isnan(one["std"])


def test_anova_textbook_example():
    # Three groups of six: means 5, 9, 10, grand mean 8. SSB = 6 (9 + 1 + 4) = 84 on 2 dof,
    # SSW = 16 + 24 + 28 = 68 on 15 dof, F = 42 / (68 / 15) = 630 / 68.
    frame = pd.DataFrame(
        {
            "cc": ["a"] * 6 + ["b"] * 6 + ["c"] * 6,
            "goodput": [6, 8, 4, 5, 3, 4, 8, 12, 9, 11, 6, 8, 13, 9, 11, 8, 7, 12],
        }
    )
    row = stats.anova(frame, "goodput", "cc").iloc[0]
    f = 630 / 68
    assert (row["groups"], row["n"], row["df_between"], row["df_within"]) == (3, 18, 2, 15)
    assert row["F"] == pytest.approx(f)
    # With 2 numerator dof the F tail is closed-form: P(F > f) = (d2 / (d2 + 2 f)) ** (d2 / 2).
    assert row["p"] == pytest.approx((15 / (15 + 2 * f)) ** 7.5)
    assert row["p"] == pytest.approx(0.0024, abs=1e-4)


def test_anova_per_setting_and_with_too_few_groups():
    frame = pd.DataFrame(
        {
            "tsq": ["1ms"] * 4 + ["4ms"] * 2,
            "cc": ["a", "a", "b", "b", "a", "a"],
            "x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        }
    )
    table = stats.anova(frame, "x", "cc", by="tsq")
    one, four = table.to_dict("records")
    # 1ms: means 1.5, 3.5; SSB = 2 * 1 + 2 * 1 = 4 (1 dof), SSW = 4 * 0.25 = 1 (2 dof): F = 8.
    assert one["tsq"] == "1ms" and one["F"] == pytest.approx(8.0)
    # F(1, 2) is T^2 for T ~ t(2), whose CDF is 1/2 + t / (2 sqrt(2 + t^2)), so
    # P(F > f) = P(|T| > sqrt f) = 1 - sqrt(f / (2 + f)).
    assert one["p"] == pytest.approx(1 - math.sqrt(8 / 10))
    assert four["groups"] == 1 and math.isnan(four["F"]) and math.isnan(four["p"])


def test_jain_index_and_per_group():
    assert stats.jain_index([10.0, 20.0]) == pytest.approx(0.9)  # 900 / (2 * 500)
    assert stats.jain_index([5.0, 0.0, 0.0, 0.0]) == 0.25
    assert stats.jain_index([3.0, 3.0, 3.0]) == 1.0
    assert math.isnan(stats.jain_index([])) and math.isnan(stats.jain_index([0.0, 0.0]))
    flows = pd.DataFrame({"run": [1, 1, 2, 2, 2], "goodput_bps": [10.0, 20.0, 1.0, 1.0, 4.0]})
    table = stats.jain(flows, "goodput_bps", by="run")
    # run 2: 36 / (3 * 18) = 2/3.
    assert table["n"].tolist() == [2, 3]
    assert table["jain"].tolist() == pytest.approx([0.9, 2 / 3])


def test_signal_delay_follows_mm_throughput_graph():
    # (departure, delay): arrivals at 8, 8, 11, 15 ms. Least delay per arrival ms: 8 -> 2,
    # 11 -> 1, 15 -> 5; the empty ms take the next one's + 1: 10 -> 2, 9 -> 3, 14 -> 6, 13 -> 7,
    # 12 -> 8.
    departure = np.array([10.0, 11.0, 12.0, 20.0])
    delay = np.array([2.0, 3.0, 1.0, 5.0])
    signal = stats.signal_delays(departure, delay)
    assert signal.index.tolist() == list(range(8, 16))
    assert signal.tolist() == [2.0, 3.0, 2.0, 1.0, 8.0, 7.0, 6.0, 5.0]
    row = stats.mahimahi_delays(pd.DataFrame({"departure_ms": departure, "delay_ms": delay})).iloc[0]
    # Mahimahi's p95: sorted[floor(0.95 n)]: delays [1, 2, 3, 5][3] = 5; signal (8 ms)[7] = 8.
    assert (row["packets"], row["queueing_delay_p95_ms"], row["signal_delay_p95_ms"]) == (4, 5.0, 8.0)


def test_mahimahi_p95_index_and_fractional_times():
    # 21 packets with delays 1..21 ms: index floor(0.95 * 21) = 19 -> 20 ms, not the maximum.
    delays = np.arange(1.0, 22.0)
    packets = pd.DataFrame({"run": "a", "departure_ms": 100.0 + delays, "delay_ms": delays})
    table = stats.mahimahi_delays(packets, by="run")
    assert table.loc[0, "queueing_delay_p95_ms"] == 20.0
    # Every packet arrived at 100 ms, so one millisecond of signal delay: the least, 1 ms.
    assert table.loc[0, "signal_delay_p95_ms"] == 1.0
    # A packet that entered at 8.3 ms and left at 10.5 ms: 2.5 ms from the start of ms 8.
    assert stats.signal_delays(np.array([10.5]), np.array([2.2])).tolist() == [pytest.approx(2.5)]


def test_queue_delays_from_run_summaries():
    runs = pd.DataFrame(
        {
            "cc": ["bbr", "bbr", "bbr_apg"],
            "downlink_sojourn_p95_ms": [10.0, 20.0, 5.0],
            "downlink_signal_delay_p95_ms": [30.0, 50.0, 7.0],
        }
    )
    table = stats.queue_delays(runs, "downlink", by="cc")
    assert table.to_dict("records") == [
        {"cc": "bbr", "n": 2, "queueing_delay_p95_ms": 15.0, "signal_delay_p95_ms": 40.0},
        {"cc": "bbr_apg", "n": 1, "queueing_delay_p95_ms": 5.0, "signal_delay_p95_ms": 7.0},
    ]


def test_errors_name_the_argument_the_value_and_what_is_expected():
    frame = pd.DataFrame({"cc": ["a"], "x": [1.0]})
    with pytest.raises(ValueError, match=r"^metric: got 'y', expected a column of the table \(cc, x\)$"):
        stats.candlesticks(frame, "y")
    with pytest.raises(ValueError, match=r"^metric: column 'cc' holds non-numeric values, expected numbers$"):
        stats.ecdf(frame, "cc")
    with pytest.raises(ValueError, match=r"^by: got 'tsq', expected a column of the table \(cc, x\)$"):
        stats.mean_ci(frame, "x", by=["tsq"])
    with pytest.raises(ValueError, match=r"^confidence: got 95, expected a probability between 0 and 1$"):
        stats.mean_ci(frame, "x", confidence=95)
    with pytest.raises(ValueError, match=r"^group: got 'ccx', expected a column"):
        stats.anova(frame, "x", "ccx")
    with pytest.raises(ValueError, match=r"^queue: got 'up', expected a queue of the runs \(\)$"):
        stats.queue_delays(frame, "up")
    bad = pd.DataFrame({"departure_ms": [1.0], "delay_ms": [2.0]})
    with pytest.raises(ValueError, match=r"^delay_ms: got 2 at departure_ms 1, expected a delay between 0"):
        stats.mahimahi_delays(bad)
