"""wificc reproduce: the studies' declarations, --quick sizes, and one quick reproduction end to end."""

import json

import pandas as pd
import pytest
import wificc
from typer.testing import CliRunner
from wificc import papers, reproduce, scenarios
from wificc.reproduce import STUDIES, grid_of, runs_of
from wificc.result import Result
from wificc.sweep import AMPDU_COLUMNS, expand, run_row

# One delivery opportunity per millisecond: 12 Mbit/s of 1500-byte packets.
TRACE_LINE = "1\n"

# Runs of each experiment with the full grids and 10 repetitions, computed by hand from SPEC 8:
# the product of the grid lists (CCAs x TSQ x chipsets, ...) x 10.
FULL_RUNS = {
    "bbrp": {
        "upload": 5 * 4 * 3 * 10,
        "upload_wired100": 5 * 4 * 3 * 10,
        "download": 5 * 2 * 10,
        "download_bbr_no_extra_acked": 2 * 10,
        "rrul": 5 * 10,
        "nflows": 3 * 5 * 10,
        "bottleneck_curve": 9 * 10,
        "ampdu": 3 * 6 * 10,
    },
    "bbrn": {"upload": 7 * 2 * 10, "nflows": 4 * 2 * 10, "rrul": 4 * 10},
    # 1 packet, then 32 .. 2048 in steps of 32: 65 limits.
    "wifi6": {
        "bottleneck_curve": 2 * 65 * 10,
        "upload": 2 * 6 * 6 * 10,
        "tp": 3 * 2 * 10,
        "rrul_tsq": 2 * 10,
        "rrul_tp": 3 * 10,
    },
    "apg": {"constant": 2 * 10, "step": 2 * 10, "verizon_lte": 2 * 10, "tmobile_lte": 2 * 10},
    "pg": {
        "buffer": 4 * 10 * 10,
        "rtt_ratio": 4 * 4 * 10,
        "vs_cubic": 3 * 3 * 2 * 10,
        "retrans": 4 * 2 * 5 * 10,
        "wifi": 3 * 10,
    },
}
# With --quick: 2 repetitions of at most 2 x 2 settings (the quick tables, else 2 values a list).
QUICK_RUNS = {
    "bbrp": {
        "upload": 8,
        "upload_wired100": 8,
        "download": 4,
        "download_bbr_no_extra_acked": 2,
        "rrul": 4,
        "nflows": 8,
        "bottleneck_curve": 4,
        "ampdu": 8,
    },
    "bbrn": {"upload": 8, "nflows": 8, "rrul": 4},
    "wifi6": {"bottleneck_curve": 8, "upload": 8, "tp": 8, "rrul_tsq": 4, "rrul_tp": 4},
    "apg": {"constant": 4, "step": 4, "verizon_lte": 4, "tmobile_lte": 4},
    "pg": {"buffer": 8, "rtt_ratio": 8, "vs_cubic": 8, "retrans": 8, "wifi": 4},
}


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    """A directory with every trace file the studies name, each a constant 12 Mbit/s."""
    directory = tmp_path_factory.mktemp("traces")
    for study in STUDIES.values():
        for experiment in study.experiments:
            for name in experiment.traces.values():
                (directory / name).write_text(TRACE_LINE)
    return directory


def app():
    from wificc.cli import app as wificc_app

    return wificc_app


@pytest.mark.parametrize("name", list(STUDIES))
def test_every_study_expands_to_valid_scenarios(name, traces):
    runs = runs_of(name, traces=traces)
    assert {k: len(v) for k, v in runs.items()} == FULL_RUNS[name]
    for experiment, found in runs.items():
        seeds = {run.seed for run in found}
        assert seeds == set(range(1, 11)), experiment
        for run in found:
            if run.repetition == 0:
                # The core accepts the point as it is and fills nothing else in.
                assert wificc.validate(run.scenario) == run.scenario


@pytest.mark.parametrize("name", list(STUDIES))
def test_quick_runs_two_repetitions_of_small_grids_of_short_runs(name, traces):
    runs = runs_of(name, quick=True, traces=traces)
    assert {k: len(v) for k, v in runs.items()} == QUICK_RUNS[name]
    for found in runs.values():
        assert {run.repetition for run in found} == {0, 1}
        for run in found:
            # 5 s of TCP between 1 s of idle pings before and after.
            assert scenarios.duration_ns("duration", run.scenario["duration"]) == 7_000_000_000
            for flow in run.scenario["flows"]:
                start = scenarios.duration_ns("start", flow["start"])
                stop = scenarios.duration_ns("stop", flow["stop"])
                assert (start, stop - start) == (1_000_000_000, 5_000_000_000)


def test_quick_keeps_the_named_values_else_the_first_two():
    upload = STUDIES["bbrp"].experiments[0]
    assert grid_of(upload, quick=True)["grid"] == {"chipset": ["ath9k"], "cc": ["bbr", "cubic"], "tsq": ["1ms", "8ms"]}
    nflows = next(e for e in STUDIES["bbrn"].experiments if e.name == "nflows")
    quick = grid_of(nflows, quick=True)
    assert quick["grid"] == {"flows": [1, 4], "cc": ["bbrn", "bbr2"]}
    # --quick shortens the runs; the study's own length (40 s) is replaced, the grid is not touched.
    assert quick["options"] == {"path": "wifi", "rtt": "2ms", "chipset": "qca9377", "length": "5s", "delay": "1s"}
    assert nflows.grid["options"]["length"] == "40s"
    assert grid_of(nflows)["grid"]["flows"] == [1, 4, 8, 12]


def test_trace_experiments_read_their_files_from_the_trace_directory(traces):
    verizon = next(e for e in STUDIES["apg"].experiments if e.name == "verizon_lte")
    options = grid_of(verizon, traces=traces)["options"]
    assert options == {
        "trace_up": str(traces / "Verizon-LTE-short.up"),
        "trace_down": str(traces / "Verizon-LTE-short.down"),
        # The paper's capacities are the uplink files' over their 140 s (reproduce.APG_TRACE_RUN).
        "direction": "up",
        "length": "140s",
    }


def test_apg_runs_its_data_over_the_uplink_trace_whose_mean_is_the_papers_capacity():
    traces = reproduce.trace_dir()
    if traces is None:
        pytest.skip("the LTE traces are not on this machine (see reproduce.trace_dir)")

    # Tables 1-2 of the BBR-APG paper: "BW Mbps" 5.96 (Verizon) and 13.35 (T-Mobile). Mahimahi
    # delivers one 1504-byte opportunity per line of a trace; the mean over the file's 140 s is the
    # capacity mm-throughput-graph reports.
    def capacity_mbit(name: str) -> float:
        stamps = [int(line) for line in (traces / name).read_text().split()]
        return len(stamps) * 1504 * 8 / (stamps[-1] / 1000) / 1e6

    assert round(capacity_mbit("Verizon-LTE-short.up"), 2) == 5.96
    assert round(capacity_mbit("TMobile-LTE-short.up"), 2) == 13.35
    assert abs(capacity_mbit("Verizon-LTE-short.down") - 5.96) > 0.5
    for name in ("verizon_lte", "tmobile_lte"):
        experiment = next(e for e in STUDIES["apg"].experiments if e.name == name)
        assert experiment.grid["options"]["direction"] == "up"
        assert experiment.grid["options"]["length"] == "140s"


def test_missing_traces_leave_out_the_trace_experiments(tmp_path):
    assert list(runs_of("apg", quick=True, traces=tmp_path)) == ["constant", "step"]
    with pytest.raises(ValueError, match=r"apg: nothing to run; verizon_lte: trace files Verizon-LTE-short.up"):
        reproduce.reproduce("apg", tmp_path / "out", quick=True, traces=tmp_path, experiments=["verizon_lte"])


def test_bad_input_names_the_field_and_what_is_expected(tmp_path):
    result = CliRunner().invoke(app(), ["reproduce", "nope", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "error: NAME: got 'nope', expected one of bbrp, bbrn, wifi6, apg, pg" in result.output
    result = CliRunner().invoke(app(), ["reproduce", "apg", "--traces", str(tmp_path / "none"), "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "--traces: " in result.output and "expected the directory of the LTE traces" in result.output
    with pytest.raises(ValueError, match=r"experiments: got 'x', expected one of constant, step, verizon_lte"):
        reproduce.reproduce("apg", tmp_path, experiments=["x"])
    result = CliRunner().invoke(app(), ["reproduce", "apg", "-e", "constant", "-e", "x", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "error: experiments: got 'x', expected one of constant, step, verizon_lte" in result.output
    assert not (tmp_path / "constant").exists()
    result = CliRunner().invoke(app(), ["reproduce", "apg", "--repetitions", "0", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "repetitions: got 0, expected an integer of at least 1" in result.output


def test_sweep_rows_carry_the_sending_wifi_nodes_ampdu_sizes():
    for test, node in (("tcp_upload", "wifi-sta1"), ("tcp_download", "wifi-ap")):
        scenario = scenarios.build(test, path_kind="wifi", length="1s", delay="0.2s")
        result = wificc.run(scenario)
        sender = next(w for w in result.raw["wifi"] if w["name"] == node)
        other = next(w for w in result.raw["wifi"] if w["name"] != node)
        run = expand({"test": test, "options": {"path": "wifi", "length": "1s", "delay": "0.2s"}})[0]
        row = run_row(run, Result.from_json(json.dumps(result.raw)))
        assert {c: row[c] for c in AMPDU_COLUMNS} == {c: sender[c] for c in AMPDU_COLUMNS}
        # The data sender aggregates more than the node that only returns ACKs.
        assert sender["ampdu_mean"] > other["ampdu_mean"]
    wired = wificc.run(scenarios.build("tcp_upload", length="1s", delay="0.2s"))
    assert not set(AMPDU_COLUMNS) & set(run_row(run, wired))


def test_quick_apg_without_traces_writes_sweeps_figures_report_and_headline(tmp_path, monkeypatch):
    # No trace directory anywhere: the schedule experiments run, the trace ones are skipped.
    monkeypatch.setenv("WIFICC_TRACES", str(tmp_path / "no-traces"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "no-data"))
    out = tmp_path / "apg"
    result = CliRunner().invoke(app(), ["reproduce", "apg", "--quick", "--out", str(out), "--workers", "2"])
    assert result.exit_code == 0, result.output
    for name in ("constant", "step"):
        table = pd.read_parquet(out / name / "runs.parquet")
        assert sorted(table["cc"]) == ["bbr", "bbr", "bbr_apg", "bbr_apg"]
        assert sorted(table["repetition"]) == [0, 0, 1, 1]
        for stem in ("goodput_ping", "ping_cdf"):
            assert (out / "figures" / name / f"{stem}.png").is_file()
            assert (out / "figures" / name / f"{stem}.svg").is_file()
        assert list((out / "figures" / name).glob("series-*.png"))
    assert not (out / "verizon_lte").exists() and not (out / "tmobile_lte").exists()
    html = (out / "report.html").read_text()
    assert html.count("data:image/png;base64,") >= 8
    assert "<h2>constant (sweep)</h2>" in html and "<h2>step (sweep)</h2>" in html
    # The progress bar went to stderr; the tables are on stdout.
    lines = result.stdout.splitlines()
    where = tmp_path / "no-traces"
    assert (
        "skipped: verizon_lte: trace files Verizon-LTE-short.up, Verizon-LTE-short.down not found "
        f"(looked in {where} or {tmp_path / 'no-data' / 'wificc' / 'traces'}; put Mahimahi's traces "
        "(https://github.com/ravinet/mahimahi/tree/master/traces) there, or give --traces DIR or "
        "WIFICC_TRACES=DIR)" in result.stdout
    )
    assert "experiment 2/2 step: done " in result.stderr
    header = next(line for line in lines if "experiment" in line)
    assert header.split() == ["experiment", "setting", "runs", "goodput", "Mbit/s", "ping", "p50", "ms"]
    rows = [line.split() for line in lines if line.split()[:1] in (["constant"], ["step"])]
    assert [row[:3] for row in rows] == [
        ["constant", "cc=bbr", "2"],
        ["constant", "cc=bbr_apg", "2"],
        ["step", "cc=bbr", "2"],
        ["step", "cc=bbr_apg", "2"],
    ]
    table = pd.read_parquet(out / "constant" / "runs.parquet")
    bbr = table[table["cc"] == "bbr"]
    # The headline is the median over the repetitions, in Mbit/s, of runs.parquet's columns.
    assert float(rows[0][3]) == pytest.approx(bbr["total_goodput_bps"].median() / 1e6, abs=0.005)
    assert float(rows[0][4]) == pytest.approx(bbr["ping_p50_ms"].median(), abs=0.05)
    # A constant 12 Mbit/s link: goodput below it, pings at least the 100 ms base RTT.
    for row in rows[:2]:
        assert 8 < float(row[3]) < 12 and float(row[4]) >= 100
    assert f"report {out / 'report.html'}" in result.output
    # The headline table is kept beside the sweeps, as CSV and as Markdown.
    saved = pd.read_csv(out / reproduce.HEADLINE_CSV)
    assert saved["setting"].tolist()[:2] == ["cc=bbr", "cc=bbr_apg"]
    assert saved["goodput_mbit"].tolist()[0] == pytest.approx(float(rows[0][3]), abs=0.005)
    markdown = (out / reproduce.HEADLINE_MD).read_text().splitlines()
    assert markdown[0] == f"# {reproduce.study('apg').title}"
    assert markdown[4] == f"| constant | cc=bbr | 2 | {rows[0][3]} | {rows[0][4]} |"
    # Beside it, the paper's figures for the same rows (the report gives only shapes for these two).
    comparison = pd.read_csv(out / papers.COMPARISON_CSV, keep_default_na=False, dtype=str)
    assert comparison[["experiment", "setting", "how", "agrees"]].values.tolist() == [
        ["constant", "cc=bbr", "shape", "n/a"],
        ["constant", "cc=bbr_apg", "shape", "n/a"],
        ["step", "cc=bbr", "shape", "n/a"],
        ["step", "cc=bbr_apg", "shape", "n/a"],
    ]
    assert comparison["wificc"].tolist()[0] == rows[0][3]
    assert f"beside the paper {out / papers.COMPARISON_MD}" in result.output
    # Resumable: the same command finds every run done and runs nothing more.
    again = CliRunner().invoke(app(), ["reproduce", "apg", "--quick", "--out", str(out), "--workers", "2"])
    assert again.exit_code == 0, again.output
    assert len(pd.read_parquet(out / "step" / "runs.parquet")) == 4
    assert [line.split() for line in again.output.splitlines() if line.split()[:1] == ["constant"]] == rows[:2]
    # One experiment on its own: only its sweep is run and reported.
    alone = CliRunner().invoke(app(), ["reproduce", "apg", "--quick", "--out", str(tmp_path / "alone"), "-e", "step"])
    assert alone.exit_code == 0, alone.output
    assert sorted(p.name for p in (tmp_path / "alone").iterdir() if p.is_dir()) == ["figures", "step"]
    assert not [line for line in alone.output.splitlines() if line.split()[:1] == ["constant"]]
    # One experiment again in the full directory: the headline and comparison keep the others.
    one = CliRunner().invoke(app(), ["reproduce", "apg", "--quick", "--out", str(out), "-e", "step"])
    assert one.exit_code == 0, one.output
    assert markdown[4] in (out / reproduce.HEADLINE_MD).read_text().splitlines()
    assert "constant" in pd.read_csv(out / papers.COMPARISON_CSV)["experiment"].tolist()


def test_anova_compares_the_congestion_controls_per_other_setting(tmp_path):
    # Per TSQ setting: bbr gives 1 and 3, cubic 5 and 7 (means 2 and 6, grand mean 4):
    # between-groups SS 2*4 + 2*4 = 16 on 1 df, within SS 4 on 2 df, so F = 16 / (4 / 2) = 8.
    rows = [
        {"run_id": f"r{i}", "cc": cc, "tsq": tsq, "total_goodput_bps": value + offset}
        for i, (cc, value, tsq, offset) in enumerate(
            (cc, value, tsq, offset)
            for tsq, offset in (("1ms", 0.0), ("4ms", 10.0))
            for cc, value in (("bbr", 1.0), ("bbr", 3.0), ("cubic", 5.0), ("cubic", 7.0))
        )
    ]
    pd.DataFrame(rows).to_parquet(tmp_path / "runs.parquet")
    (tmp_path / "grid.json").write_text(json.dumps({"test": "tcp_upload", "grid": {"cc": [], "tsq": []}}))
    table = reproduce.anova_table(tmp_path, ["total_goodput_bps"])
    assert list(table["tsq"]) == ["1ms", "4ms"]
    assert list(table["F"]) == pytest.approx([8.0, 8.0])
    assert list(table["df_within"]) == [2, 2]
    one_cc = tmp_path / "one"
    one_cc.mkdir()
    pd.DataFrame(rows).assign(cc="bbr").to_parquet(one_cc / "runs.parquet")
    assert reproduce.anova_table(one_cc, ["total_goodput_bps"]).empty


def test_study_models_draw_their_figures(tmp_path):
    assert STUDIES["bbrn"].models == ("startup_gain",)
    for study in STUDIES.values():
        for model in study.models:
            _, draw = reproduce.MODELS[model]
            files = draw(tmp_path / model)
            assert sorted(p.name for p in files) == [f"{model}.png", f"{model}.svg"]
            assert all(p.stat().st_size > 0 for p in files)
