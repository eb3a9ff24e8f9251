"""Figures: the tables they draw (hand-computed), what they draw, their files, and `wificc plot`."""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import wificc
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from typer.testing import CliRunner
from wificc import figures, result, scenarios
from wificc.models import hybrid

# Short runs: one second of TCP between 0.4 s of ping-only time, at 20 Mbit/s.
SHORT = {"length": "1s", "delay": "0.4s", "rate": "20mbit"}
MBIT = 1e6


def assert_rows(table: pd.DataFrame, rows: list[list]) -> None:
    """``table`` has these rows (numbers to 1e-12 relative)."""
    expected = pd.DataFrame(rows, columns=table.columns)
    pd.testing.assert_frame_equal(table, expected, check_dtype=False, rtol=1e-12)


def write_sweep(directory: Path, runs: list[tuple[dict, wificc.Result]], *, parquet: bool = True) -> Path:
    """A sweep directory as the sweep command writes it: runs/<id>/ and runs.parquet.

    runs.parquet holds the grid parameters, run_id, seed and the summary columns, without
    the per-direction sums, which the figures must then compute from runs/<id>/.
    """
    rows = []
    for i, (params, run) in enumerate(runs):
        run_id = f"r{i:02d}"
        run.save(directory / "runs" / run_id)
        row = {"run_id": run_id, **params, "seed": run.summary["seed"], **figures.run_row(run)}
        rows.append({k: v for k, v in row.items() if k not in ("upload_goodput_bps", "download_goodput_bps")})
    if parquet:
        pd.DataFrame(rows).to_parquet(directory / figures.RUNS_FILE)
    return directory


def grid_runs(ccs=("cubic", "bbr"), tsqs=("1ms", "4ms"), seeds=(1, 2)) -> list[tuple[dict, wificc.Result]]:
    return [
        (
            {"cc": cc, "tsq": tsq},
            wificc.run(scenarios.build("tcp_upload", cc=[cc], tsq=tsq, seed=seed, **SHORT)),
        )
        for cc in ccs
        for tsq in tsqs
        for seed in seeds
    ]


@pytest.fixture(scope="module")
def upload():
    return wificc.run(scenarios.build("tcp_upload", cc=["bbr"], **SHORT))


@pytest.fixture(scope="module")
def bidirectional():
    flows = [
        {"cc": "cubic", "start": "0.4s", "stop": "1.4s"},
        {"cc": "reno", "direction": "down", "start": "0.4s", "stop": "1.4s"},
        {"cc": "bbr", "direction": "down", "start": "0.4s", "stop": "1.4s"},
    ]
    path = {"kind": "wired", "rate": "20mbit", "rtt": "20ms"}
    return wificc.run({"duration": "1.8s", "path": path, "flows": flows, "pings": [{}, {"kind": "udp"}]})


@pytest.fixture
def drawn(monkeypatch):
    """The figures drawn, captured instead of written: (Figure, title) each."""
    captured = []

    def capture(fig, title, prefix):
        captured.append((fig, title))
        return [Path(f"{prefix}.png"), Path(f"{prefix}.svg")]

    monkeypatch.setattr(figures, "save_figure", capture)
    return captured


def test_a_saved_run_reads_back_as_the_result_that_wrote_it(upload, tmp_path):
    saved = result.load(upload.save(tmp_path / "run"))
    assert saved.scenario == upload.scenario
    assert saved.summary == upload.summary
    # Tables are read when first used.
    assert "flow_series" not in vars(saved)
    for name in result.TABLE_FILES:
        if name != "summary":
            pd.testing.assert_frame_equal(getattr(saved, name), getattr(upload, name))
    assert "flow_series" in vars(saved)
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        getattr(saved, "nothing")  # noqa: B009
    (tmp_path / "run" / "pings.parquet").unlink()
    with pytest.raises(ValueError, match=f"^run: '{tmp_path / 'run'}' has no pings.parquet; expected a run"):
        result.load(tmp_path / "run")
    assert result.as_run(upload) is upload


def test_percentiles_per_group_in_order_of_appearance():
    frame = pd.DataFrame(
        {
            "g": ["b", "a", "a", "a", "a", "a", "b", "c"],
            "v": [1.0, 10.0, 20.0, 30.0, 40.0, 50.0, 3.0, math.nan],
        }
    ).assign(w=lambda f: 2 * f["v"])
    table = figures.percentile_table(frame, ["g"], {"v": "v", "twice": "w"})
    # b: 1, 3: p10 = 1 + 0.1 x 2 = 1.2, p90 = 2.8.
    # a: 10..50, numpy linear: p10 = 10 + 0.4 x 10 = 14, p90 = 40 + 0.6 x 10 = 46.
    # c has no value: NaN.
    nan = math.nan
    assert_rows(
        table,
        [
            ["b", 2, 1.2, 2.0, 2.8, 2.4, 4.0, 5.6],
            ["a", 5, 14.0, 30.0, 46.0, 28.0, 60.0, 92.0],
            ["c", 1, nan, nan, nan, nan, nan, nan],
        ],
    )
    assert list(table.columns[3:]) == ["v_p50", "v_p90", "twice_p10", "twice_p50", "twice_p90"]
    whole = figures.percentile_table(frame, [], {"v": "v"})
    assert whole["n"].tolist() == [8]
    with pytest.raises(ValueError, match=r"^x: no such column in the runs table; it has g, v, w$"):
        figures.percentile_table(frame, ["g"], {"v": "x"})


def test_settings_are_the_varying_parameters():
    runs = pd.DataFrame(
        {
            "run_id": ["a", "b", "c", "d"],
            "seed": [1, 2, 1, 2],
            "flows[0].cc": ["bbr", "bbr", "cubic", "cubic"],
            "stack.tsq": ["1ms", "1ms", "1ms", "1ms"],
            "stack.tp": [1, 2, 1, 2],
            "total_goodput_bps": [1.0, 2.0, 3.0, 4.0],
            "ping_p50_ms": [1.0, 2.0, 3.0, 4.0],
            "jain": [1.0, 0.5, 1.0, 0.9],
        }
    )
    assert figures.setting_columns(runs) == ["flows[0].cc", "stack.tp"]
    # A column per flow keeps its full name in labels.
    two = pd.DataFrame({"flows[0].cc": ["bbr", "bbr_pg"], "flows[1].cc": ["cubic", "cubic"]})
    assert list(figures.setting_labels(two, list(two.columns))) == [
        "flows[0].cc=bbr, flows[1].cc=cubic",
        "flows[0].cc=bbr_pg, flows[1].cc=cubic",
    ]
    # Summary columns of a Wi-Fi sweep are measurements too.
    wifi = runs.assign(ampdu_mean=[1.0, 2.0, 3.0, 4.0], ampdu_p10=[1.0, 1.0, 2.0, 2.0])
    assert figures.setting_columns(wifi) == ["flows[0].cc", "stack.tp"]
    assert figures.setting_columns(runs, ["stack.tsq", "missing"]) == ["stack.tsq"]
    assert [figures.short_name(c) for c in ("flows[0].cc", "stack.tsq", "seed")] == ["cc", "tsq", "seed"]
    labels = figures.setting_labels(runs, ["flows[0].cc", "stack.tp"])
    assert list(labels) == ["cc=bbr, tp=1", "cc=bbr, tp=2", "cc=cubic, tp=1", "cc=cubic, tp=2"]
    assert list(figures.setting_labels(runs, [])) == ["all"] * 4


def test_grid_keys_from_the_sweeps_grid_file(tmp_path):
    assert figures.grid_keys(tmp_path) == []
    (tmp_path / "grid.toml").write_text(
        'test = "tcp_upload"\n[grid]\ncc = ["bbr"]\n"stack.tsq" = ["1ms"]\n'
        '[[zip]]\n"path.rate" = ["1mbit"]\n"path.rtt" = ["10ms"]\n'
    )
    assert figures.grid_keys(tmp_path) == ["cc", "stack.tsq", "path.rate", "path.rtt"]
    (tmp_path / "grid.toml").write_text("[grid\n")
    with pytest.raises(ValueError, match=f"^{tmp_path / 'grid.toml'}: "):
        figures.grid_keys(tmp_path)
    (tmp_path / "grid.toml").unlink()
    (tmp_path / "grid.json").write_text('{"grid": {"cc": ["bbr"]}, "zip": [{"path.rtt": ["1ms"]}]}')
    assert figures.grid_keys(tmp_path) == ["cc", "path.rtt"]


def candle_runs() -> pd.DataFrame:
    """Five repetitions of bbr and cubic at TSQ 4 ms and 1 ms (4 ms met first)."""
    rows = []
    for cc, base in (("bbr", 10.0), ("cubic", 20.0)):
        for tsq, ping in (("4ms", 50.0), ("1ms", 5.0)):
            for rep in range(5):
                rows.append(
                    {
                        "flows[0].cc": cc,
                        "stack.tsq": tsq,
                        "total_goodput_bps": (base + 10 * rep) * MBIT,
                        "ping_p50_ms": ping + rep,
                    }
                )
    return pd.DataFrame(rows)


def test_goodput_ping_candlesticks(drawn):
    runs = candle_runs()
    table = figures.goodput_ping_table(runs)
    assert table[["flows[0].cc", "stack.tsq", "n"]].values.tolist() == [
        ["bbr", "4ms", 5],
        ["bbr", "1ms", 5],
        ["cubic", "4ms", 5],
        ["cubic", "1ms", 5],
    ]
    # bbr goodputs 10, 20, .., 50 Mbit/s: p10 14, p50 30, p90 46; pings 50..54: 50.4, 52, 53.6.
    assert table.iloc[0][["goodput_p10", "goodput_p50", "goodput_p90"]].tolist() == pytest.approx([14, 30, 46])
    assert table.iloc[0][["ping_p10", "ping_p50", "ping_p90"]].tolist() == pytest.approx([50.4, 52, 53.6])
    assert table.iloc[3][["goodput_p50", "ping_p50"]].tolist() == pytest.approx([40, 7])

    figures.fig_goodput_ping(runs, "unused")
    (fig, title), *_ = drawn
    ax = fig.axes[0]
    # Every grid key in the label, in human units.
    assert ax.get_legend_handles_labels()[1] == ["bbr, 4 ms", "bbr, 1 ms", "cubic, 4 ms", "cubic, 1 ms"]
    points = [(c[0].get_xdata()[0], c[0].get_ydata()[0]) for c in ax.containers]
    assert np.allclose(points, [(52, 30), (7, 30), (52, 40), (7, 40)], rtol=1e-12)
    colors = [c[0].get_color() for c in ax.containers]
    markers = [c[0].get_marker() for c in ax.containers]
    # Each setting its own colour and its own marker.
    assert colors == ["C0", "C1", "C2", "C3"]
    assert markers == ["o", "s", "^", "D"]
    assert figures.clipped_points(drawn[0][0]) == []
    # Series of other columns: one cross per (cc, tp), grouped as asked.
    figures.fig_goodput_ping(runs.assign(tp=[1, 2] * 10), "unused", by=["flows[0].cc", "tp"])
    labels = drawn[1][0].axes[0].get_legend_handles_labels()[1]
    assert labels == ["bbr, tp 1", "bbr, tp 2", "cubic, tp 1", "cubic, tp 2"]
    with pytest.raises(ValueError, match="^ping_p90_ms: no such column"):
        figures.goodput_ping_table(runs, ping="ping_p90_ms")


def test_ping_samples_keep_the_load_period_and_cdf_steps(upload, tmp_path):
    # Pings every 0.2 s from 0 over 1.8 s; the flow runs from 0.4 s to 1.4 s: 6 of 9 pings.
    all_pings = figures.ping_samples(upload, window="all")
    under_load = figures.ping_samples(upload)
    assert len(all_pings) == 9 and len(under_load) == 6
    times = upload.ping_series["t"]
    assert under_load["rtt_ms"].tolist() == upload.ping_series["rtt_ms"][(times >= 0.4) & (times <= 1.4)].tolist()
    assert set(under_load["label"]) == {"icmp-ping-0"}
    labelled = figures.ping_samples({"a": upload, "b": upload.save(tmp_path / "run")})
    assert labelled["label"].tolist() == ["a"] * 6 + ["b"] * 6
    with pytest.raises(ValueError, match="^window: got 'idle', expected 'load' or 'all'$"):
        figures.ping_samples(upload, window="idle")
    cdf = figures.cdf_table(pd.DataFrame({"label": ["x", "x", "x", "y"], "rtt_ms": [3.0, 1.0, 2.0, 7.0]}))
    assert cdf.values.tolist() == [["x", 1.0, 1 / 3], ["x", 2.0, 2 / 3], ["x", 3.0, 1.0], ["y", 7.0, 1.0]]


def test_ping_cdf_draws_one_step_line_per_label(drawn):
    samples = pd.DataFrame({"label": ["x", "x", "y"], "rtt_ms": [2.0, 1.0, 5.0]})
    figures.fig_ping_cdf(samples, "unused")
    ax = drawn[0][0].axes[0]
    assert [line.get_label() for line in ax.lines] == ["x", "y"]
    assert ax.lines[0].get_xdata().tolist() == [1.0, 2.0]
    assert ax.lines[0].get_ydata().tolist() == [0.5, 1.0]
    with pytest.raises(ValueError, match="^data: no ping RTT samples to plot$"):
        figures.fig_ping_cdf(samples.iloc[:0], "unused")


def test_rate_series_and_the_bw_model(upload, bidirectional, drawn):
    series = figures.rate_series(upload)
    model = upload.model_series[upload.model_series["name"] == "bw_bps"]
    assert series["t"].tolist() == upload.flow_series["t"].tolist()
    assert series["bw_model_mbps"].tolist() == (model["value"] / MBIT).tolist()
    assert series["pacing_mbps"].tolist() == (upload.flow_series["pacing_rate_bps"] / MBIT).tolist()
    assert series["cwnd"].tolist() == upload.flow_series["cwnd"].tolist()
    figures.fig_pacing_cwnd(upload, "unused")
    figures.fig_pacing_cwnd(bidirectional, "unused")
    bbr_rate = drawn[0][0].axes[0]
    assert [line.get_label() for line in bbr_rate.lines] == [
        "bbr-up-0 pacing rate",
        "bbr-up-0 bw model",
        "bbr-up-0 delivery rate",
    ]
    # Open samples only: the one after the flow's stop is left out of the figure.
    assert series["open"].tolist() == [True] * (len(series) - 1) + [False]
    assert bbr_rate.lines[1].get_ydata().tolist() == series["bw_model_mbps"][series["open"]].tolist()
    # The legends: line styles above, flows below.
    assert [t.get_text() for t in bbr_rate.get_legend().get_texts()] == ["pacing rate", "bw model", "delivery rate"]
    assert [t.get_text() for t in drawn[0][0].axes[1].get_legend().get_texts()] == ["bbr-up-0"]
    # cubic and reno have no bw model: pacing and delivery rate only.
    mixed_rate, mixed_cwnd = drawn[1][0].axes
    assert len(mixed_rate.lines) == 2 + 2 + 3
    assert [line.get_label() for line in mixed_cwnd.lines] == ["cubic-up-0", "reno-down-1", "bbr-down-2"]
    assert [t.get_text() for t in mixed_cwnd.get_legend().get_texts()] == ["cubic-up-0", "reno-down-1", "bbr-down-2"]


def test_ampdu_size_per_tsq(drawn):
    frame = pd.DataFrame(
        {
            "chipset": ["ath9k", "ath9k", "ath9k", "ath9k", "ath10k"],
            "tsq": ["8ms", "1ms", "2ms", "1ms", "1ms"],
            "ampdu_mean": [30.0, 4.0, 9.0, 6.0, 12.0],
            "ampdu_p10": [20.0, 2.0, 5.0, 4.0, 8.0],
            "ampdu_p90": [40.0, 6.0, 12.0, 10.0, 16.0],
        }
    )
    table = figures.ampdu_table(frame, by="chipset")
    assert table.values.tolist() == [
        ["ath9k", "1ms", 5.0, 3.0, 8.0],
        ["ath9k", "2ms", 9.0, 5.0, 12.0],
        ["ath9k", "8ms", 30.0, 20.0, 40.0],
        ["ath10k", "1ms", 12.0, 8.0, 16.0],
    ]
    figures.fig_ampdu_tsq(frame, "unused", by="chipset")
    ax = drawn[0][0].axes[0]
    ath9k, ath10k = ax.containers[1::2]  # each bar series comes with its error bars
    assert [bar.get_height() for bar in ath9k] == [5.0, 9.0, 30.0]
    assert [bar.get_height() for bar in ath10k][0] == 12.0
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1 ms", "2 ms", "8 ms"]
    with pytest.raises(ValueError, match="^ampdu_p90: no such column"):
        figures.ampdu_table(frame.drop(columns="ampdu_p90"))


def test_bottleneck_curve_points_over_the_model(drawn):
    runs = pd.DataFrame(
        {
            "stack.tsq": ["static:256p", "static:64p", "static:64p", "static:16p"],
            "total_goodput_bps": [900 * MBIT, 700 * MBIT, 800 * MBIT, 300 * MBIT],
            "ping_p50_ms": [9.0, 4.0, 6.0, 3.0],
        }
    )
    table = figures.bottleneck_table(runs)
    assert_rows(
        table,
        [
            [16, 1, 300, 300, 300, 3, 3, 3],
            [64, 2, 710, 750, 790, 4.2, 5, 5.8],
            [256, 1, 900, 900, 900, 9, 9, 9],
        ],
    )
    assert list(table.columns[:2]) == ["k", "n"]
    figures.fig_bottleneck_curve(runs, "unused")
    fig, title = drawn[0]
    rate_ax, rtt_ax = fig.axes
    ks = np.arange(1, 257)
    assert rate_ax.lines[0].get_ydata().tolist() == pytest.approx((hybrid.bw(ks) / MBIT).tolist())
    assert rtt_ax.lines[0].get_ydata().tolist() == pytest.approx((hybrid.rtt(ks) * 1e3).tolist())
    assert title == f"Bottleneck curve over the hybrid model (k_bar = {hybrid.k_bar():.1f})"
    with pytest.raises(ValueError, match="^stack.tsq: got '4ms', expected a static TSQ limit such as 'static:64p'$"):
        figures.bottleneck_table(runs.assign(**{"stack.tsq": ["4ms"] * 4}))


def test_fairness_from_jain_or_from_flow_goodputs(drawn):
    runs = pd.DataFrame(
        {
            "cc": ["bbr", "bbr", "cubic"],
            "flow0_goodput_bps": [10.0, 30.0, 5.0],
            "flow1_goodput_bps": [10.0, 10.0, 0.0],
        }
    )
    # Jain: (10, 10) -> 1; (30, 10) -> 40^2 / (2 x 1000) = 0.8; (5, 0) -> 0.5.
    table = figures.fairness_table(runs)
    assert_rows(table, [["bbr", 2, 0.82, 0.9, 0.98], ["cubic", 1, 0.5, 0.5, 0.5]])
    given = figures.fairness_table(runs.assign(jain=[0.1, 0.3, 0.2]), by=["cc"])
    assert given["jain_p50"].tolist() == pytest.approx([0.2, 0.2])
    nan_flow = figures.fairness_table(runs.assign(flow2_goodput_bps=[math.nan, math.nan, 0.0]), by=["cc"])
    assert nan_flow["jain_p50"].tolist() == pytest.approx([0.9, 0.5 * 2 / 3])
    figures.fig_fairness(runs, "unused")
    ax = drawn[0][0].axes[0]
    bars = next(c for c in ax.containers if isinstance(c, BarContainer))
    assert [bar.get_width() for bar in bars] == pytest.approx([0.9, 0.5])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["bbr", "cubic"]
    with pytest.raises(ValueError, match="^jain: the runs table has neither a jain column nor flow"):
        figures.fairness_table(runs[["cc"]])


def test_rrul_bars_and_a_runs_row(bidirectional, drawn):
    row = figures.run_row(bidirectional)
    goodput = bidirectional.flows["goodput_bps"].tolist()
    assert row["upload_goodput_bps"] == goodput[0]
    assert row["download_goodput_bps"] == goodput[1] + goodput[2]
    assert row["total_goodput_bps"] == sum(goodput)
    assert [row[f"flow{i}_goodput_bps"] for i in range(3)] == goodput
    # The ICMP ping, not the UDP one.
    icmp = bidirectional.pings[bidirectional.pings["kind"] == "icmp"].iloc[0]
    assert row["ping_p50_ms"] == icmp["rtt_p50_ms"]
    assert row["jain"] == bidirectional.summary["jain"]
    runs = pd.DataFrame(
        {
            "tsq": ["1ms", "1ms", "4ms"],
            "upload_goodput_bps": [10 * MBIT, 20 * MBIT, 5 * MBIT],
            "download_goodput_bps": [30 * MBIT, 30 * MBIT, 6 * MBIT],
            "ping_p50_ms": [4.0, 8.0, 40.0],
        }
    )
    table = figures.rrul_table(runs)
    assert table["label"].tolist() == ["1 ms", "4 ms"]
    assert table[["upload_p50", "download_p50", "ping_p50"]].values.tolist() == [[15, 30, 6], [5, 6, 40]]
    figures.fig_rrul(runs, "unused")
    fig = drawn[0][0]
    ax, ping_ax = fig.axes
    assert [t.get_text() for t in ping_ax.get_legend().get_texts()] == ["upload", "download", "ping"]
    assert [bar.get_height() for bar in ping_ax.containers[1]] == [6, 40]


def test_figure_files_are_png_and_svg_and_reproducible(tmp_path):
    runs = candle_runs()
    first = figures.fig_goodput_ping(runs, tmp_path / "a" / "fig")
    second = figures.fig_goodput_ping(runs, tmp_path / "b" / "fig")
    assert [p.name for p in first] == ["fig.png", "fig.svg"]
    assert first[0].read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert first[1].read_text().startswith("<?xml")
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes()


def test_plot_draws_what_fits_a_run_or_a_sweep(upload, bidirectional, tmp_path, drawn):
    run_dir = upload.save(tmp_path / "run")
    captions = [caption for caption, _ in figures.plot(run_dir)]
    assert captions == [
        "Pacing rate, bw model and cwnd per flow",
        "Ping RTT CDF while the flows run",
        "Goodput over time",
        "Ping RTT over time",
    ]
    assert figures.plot(run_dir)[0][1] == [
        run_dir / "figures" / "series.png",
        run_dir / "figures" / "series.svg",
    ]
    captions = [caption for caption, _ in figures.plot_run(bidirectional, tmp_path / "out")]
    assert captions[-1] == "RRUL: upload, download, ping"

    sweep = write_sweep(tmp_path / "sweep", grid_runs())
    loaded = figures.load_sweep(sweep)
    assert loaded.settings == ["cc", "tsq"]
    assert loaded.table["upload_goodput_bps"].tolist() == loaded.table["total_goodput_bps"].tolist()
    assert [r.directory.name for r in loaded.runs] == [f"r{i:02d}" for i in range(8)]
    drawn.clear()
    captions = [caption for caption, _ in figures.plot(sweep, tmp_path / "figs")]
    assert captions == [
        "Goodput versus ping",
        "Ping RTT CDF",
        "Goodput over time",
        "Ping RTT over time",
        "Series of one run (cubic, 1 ms)",
        "Series of one run (cubic, 4 ms)",
        "Series of one run (bbr, 1 ms)",
        "Series of one run (bbr, 4 ms)",
    ]
    # Each series figure has its own title.
    titles = [title for _, title in drawn[4:]]
    assert titles[0] == "Pacing rate, bw model and cwnd: cubic, 1 ms, seed 1"
    assert len(set(titles)) == 4
    for fig, _ in drawn:
        assert figures.clipped_points(fig) == []
    cdf_ax = drawn[1][0].axes[0]
    # Both repetitions' pings under load pooled per setting: 2 x 6 samples, so the CDF steps
    # in multiples of 1/12 up to 1 at the largest RTT.
    assert len(cdf_ax.lines) == 4
    for line in cdf_ax.lines:
        twelfths = np.asarray(line.get_ydata()) * 12
        assert twelfths[-1] == pytest.approx(12) and np.allclose(twelfths, np.round(twelfths))

    # Without runs.parquet: the runs' own parameters; the rate is a series, two flows each.
    nup = [
        ({}, wificc.run(scenarios.build("tcp_nup", flows=2, **{**SHORT, "rate": rate})))
        for rate in ("20mbit", "50mbit")
    ]
    bare = write_sweep(tmp_path / "bare", nup, parquet=False)
    loaded = figures.load_sweep(bare)
    assert loaded.settings == ["path.rate"]
    captions = [caption for caption, _ in figures.plot(bare, tmp_path / "figs2")]
    assert captions == [
        "Goodput versus ping",
        "Ping RTT CDF",
        "Goodput over time",
        "Ping RTT over time",
        "Jain's fairness index",
        "Series of one run (rate 20 Mbit/s)",
        "Series of one run (rate 50 Mbit/s)",
    ]


def test_plot_command(upload, tmp_path):
    from wificc.cli import app

    runner = CliRunner()
    run_dir = upload.save(tmp_path / "run")
    out = runner.invoke(app, ["plot", str(run_dir), "--out", str(tmp_path / "f")])
    assert out.exit_code == 0, out.output
    f = tmp_path / "f"
    assert out.stdout.splitlines() == [
        f"Pacing rate, bw model and cwnd per flow: {f / 'series.png'}, {f / 'series.svg'}",
        f"Ping RTT CDF while the flows run: {f / 'ping_cdf.png'}, {f / 'ping_cdf.svg'}",
        f"Goodput over time: {f / 'goodput_time.png'}, {f / 'goodput_time.svg'}",
        f"Ping RTT over time: {f / 'ping_time.png'}, {f / 'ping_time.svg'}",
    ]
    assert (tmp_path / "f" / "ping_cdf.svg").is_file()
    (tmp_path / "empty").mkdir()
    out = runner.invoke(app, ["plot", str(tmp_path / "empty")])
    assert out.exit_code == 2
    assert out.stderr == (
        f"error: DIR: '{tmp_path / 'empty'}' holds no run (scenario.json) or sweep (runs.parquet, runs/*/), "
        "directly or in its subdirectories\n"
    )
    assert "Traceback" not in out.output


def test_parameter_values_in_human_units():
    cases = {
        "20000000000ns": "20 s",
        "1000000ns": "1 ms",
        "1500000ns": "1.5 ms",
        "250000ns": "250 us",
        "0ns": "0 s",
        "4ms": "4 ms",
        "100000000bit": "100 Mbit/s",
        "1gbit": "1 Gbit/s",
        "5960000bit": "5.96 Mbit/s",
        "64000b": "64 kB",
        "100p": "100 packets",
        "1bdp": "1 BDP",
        "0.5bdp": "0.5 BDP",
        "static:64p": "static 64 packets",
        "cubic": "cubic",
        # A 16-digit fingerprint ending in b is no size.
        "1234567890123456b": "1234567890123456b",
    }
    assert {text: figures.human_value(text) for text in cases} == cases
    assert [figures.human_value(v) for v in (3, 0.123456, 12345.6, None, math.nan, True)] == [
        "3",
        "0.1235",
        "12,346",
        "-",
        "-",
        "true",
    ]
    runs = pd.DataFrame({"cc": ["cubic", "bbr"], "tsq": ["1ms", "off"], "flows": [4, 1], "stack.rate": ["2mbit"] * 2})
    assert list(figures.series_labels(runs, ["cc", "tsq", "flows", "stack.rate"])) == [
        "cubic, 1 ms, flows 4, rate 2 Mbit/s",
        "bbr, tsq off, flows 1, rate 2 Mbit/s",
    ]
    assert list(figures.series_labels(runs, [])) == ["all", "all"]


def test_series_styles_differ_in_colour_and_in_marker_or_line():
    styles = [figures.series_style(i) for i in range(90)]
    pairs = {(s["color"], s["marker"]) for s in styles}
    assert len(pairs) == 90
    assert len({(s["color"], str(s["linestyle"])) for s in styles[:70]}) == 70
    # Up to 9 series every two differ in colour and in marker; up to 7 in line style too.
    for key in ("color", "marker"):
        assert len({str(s[key]) for s in styles[:9]}) == 9
    assert len({str(s["linestyle"]) for s in styles[:7]}) == 7
    assert figures.series_style(630) == figures.series_style(0)
    assert figures.series_style(90)["marker"] == "o" and figures.series_style(90)["color"] == "C0"


def test_fairness_labels_do_not_overlap(drawn):
    # Twelve settings with long labels: the grid of the BBR-n study's flow counts.
    runs = pd.DataFrame(
        {
            "flows": [n for n in (1, 4, 8, 12) for _ in range(3)],
            "cc": ["bbrn", "bbr2", "cubic"] * 4,
            "chipset": ["qca9377-long-name"] * 12,
            "jain": np.linspace(0.5, 1.0, 12),
        }
    )
    figures.fig_fairness(runs, "unused", by=["flows", "cc", "chipset"])
    fig = drawn[0][0]
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels[:2] == ["flows 1, bbrn, chipset qca9377-long-name", "flows 1, bbr2, chipset qca9377-long-name"]
    assert figures.overlapping_text(fig) == []
    assert figures.clipped_points(fig) == []
    # The check sees overlaps: the same labels side by side under vertical bars.
    crowded = Figure(figsize=figures.FIGSIZE, layout="constrained")
    ax = crowded.subplots()
    ax.bar(range(12), np.ones(12))
    ax.set_xticks(range(12), labels)
    pairs = figures.overlapping_text(crowded)
    assert (labels[0], labels[1]) in pairs
    # Grouped bars turn their labels until they fit.
    figures.fig_rrul(
        runs.assign(upload_goodput_bps=1e6, download_goodput_bps=2e6, ping_p50_ms=5.0), "unused", by=["flows", "cc"]
    )
    rrul = drawn[1][0]
    assert figures.overlapping_text(rrul) == []
    assert rrul.axes[0].get_xticklabels()[0].get_rotation() > 0


def test_clipped_points_are_seen():
    fig = Figure(figsize=figures.FIGSIZE, layout="constrained")
    ax = fig.subplots()
    ax.plot([0, 1, 2], [0.0, 5.0, 3.0], "o-", label="points")
    assert figures.clipped_points(fig) == []
    # A forced floor at 0 cuts the marker at 0 in half.
    ax.set_ylim(bottom=0)
    assert figures.clipped_points(fig) == ["axes 0, points: (0, 0) outside x -0.1..2.1, y 0..5.25"]


def test_flow_samples_after_the_stop_stay_in_the_data_not_in_figures(upload, drawn):
    stop = float(upload.flows["stop_s"].iloc[0])
    series = upload.flow_series
    open_ = figures.open_samples(upload)
    # The core's sample in the step after the stop (t = stop + step) is the only closed one.
    assert series["t"][~open_].tolist() == pytest.approx([stop + 0.2])
    figures.fig_pacing_cwnd(upload, "unused")
    cwnd_ax = drawn[0][0].axes[1]
    assert cwnd_ax.lines[0].get_xdata().max() == pytest.approx(stop)
    assert cwnd_ax.lines[0].get_ydata().tolist() == series["cwnd"][open_].tolist()
    assert figures.clipped_points(drawn[0][0]) == []
    goodput = figures.goodput_over_time(upload)
    assert goodput["t"].tolist() == series["t"][open_].tolist()
    assert goodput["value"].tolist() == (series["goodput_bps"][open_] / MBIT).tolist()


def test_ping_over_time_is_the_median_per_step(upload):
    table = figures.ping_over_time(upload)
    pings = upload.ping_series
    # One probe every 0.2 s, the step: each step's median is its one probe, at the step's end.
    assert table["t"].tolist() == pytest.approx((pings["t"] + 0.2).tolist())
    assert table["value"].tolist() == pings["rtt_ms"].tolist()


def test_over_time_percentiles_across_runs(drawn):
    runs = {
        "a": [
            pd.DataFrame({"t": [0.2, 0.4], "value": [1.0, 10.0]}),
            pd.DataFrame({"t": [0.2, 0.4], "value": [3.0, 20.0]}),
            pd.DataFrame({"t": [0.4], "value": [30.0]}),
        ],
        "b": [pd.DataFrame({"t": [0.4, 0.2], "value": [7.0, 5.0]})],
    }
    table = figures.over_time_table(runs, lambda frame: frame)
    # a at 0.2: 1, 3 -> p10 1.2, p50 2, p90 2.8; at 0.4: 10, 20, 30 -> 12, 20, 28.
    assert_rows(
        table,
        [
            ["a", 0.2, 2, 1.2, 2.0, 2.8],
            ["a", 0.4, 3, 12.0, 20.0, 28.0],
            ["b", 0.2, 1, 5.0, 5.0, 5.0],
            ["b", 0.4, 1, 7.0, 7.0, 7.0],
        ],
    )
    figures.fig_over_time(table, "unused", ylabel="x", title="t", window=(0.2, 0.4))
    ax = drawn[0][0].axes[0]
    assert [line.get_label() for line in ax.lines if not line.get_label().startswith("_")] == ["a", "b"]
    assert ax.lines[0].get_ydata().tolist() == [2.0, 20.0]
    assert figures.clipped_points(drawn[0][0]) == []
    assert figures.over_time_table({"a": []}, lambda frame: frame).empty
