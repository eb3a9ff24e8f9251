"""wificc.run / validate, the Result tables and files, and the test catalog."""

import json
import os

import pandas as pd
import pytest
import wificc
from wificc import scenarios
from wificc.result import (
    FLOW_SERIES_COLUMNS,
    HOST_FIELDS,
    MODEL_SERIES_COLUMNS,
    PEAK_FIELD,
    PING_SERIES_COLUMNS,
    QUEUE_SERIES_COLUMNS,
    SCENARIO_FILE,
    TABLE_FILES,
    Result,
    flatten,
)

# Short runs: one second of TCP, 0.4 s of ping-only time before and after.
SHORT = {"length": "1s", "delay": "0.4s"}
# The same two-flow scenario as a dict and as TOML text.
TWO_FLOWS = {
    "duration": "1s",
    "path": {"kind": "wired", "rate": "20mbit", "rtt": "10ms", "buffer": "1bdp"},
    "flows": [{"cc": "cubic"}, {"cc": "reno", "start": "0.2s"}],
    "pings": [{}],
}
TWO_FLOWS_TOML = """
duration = "1s"
path = { kind = "wired", rate = "20mbit", rtt = "10ms", buffer = "1bdp" }
flows = [{ cc = "cubic" }, { cc = "reno", start = "0.2s" }]
pings = [{}]
"""
# Wall-clock figures and the peak memory: the only fields that differ between two runs of one
# scenario.
WALL_FIELDS = HOST_FIELDS


@pytest.fixture(scope="module")
def upload() -> Result:
    return wificc.run(scenarios.build("tcp_upload", **SHORT))


def _deterministic(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k not in WALL_FIELDS}


def test_run_accepts_a_dict_toml_text_and_files_alike(tmp_path):
    toml_file = tmp_path / "s.toml"
    toml_file.write_text(TWO_FLOWS_TOML)
    json_file = tmp_path / "s.json"
    json_file.write_text(json.dumps(TWO_FLOWS))
    runs = [wificc.run(s) for s in (TWO_FLOWS, TWO_FLOWS_TOML, toml_file, str(json_file))]
    first = runs[0]
    assert len(first.flows) == 2
    for other in runs[1:]:
        assert other.scenario == first.scenario
        assert _deterministic(other.summary) == _deterministic(first.summary)
        pd.testing.assert_frame_equal(other.flow_series, first.flow_series)
        pd.testing.assert_frame_equal(other.ping_series, first.ping_series)


def test_one_row_per_flow_ping_and_queue(upload):
    assert list(upload.flows["name"]) == ["cubic-up-0"]
    assert list(upload.flows["cc"]) == ["cubic"]
    assert list(upload.pings["name"]) == ["icmp-ping-0"]
    assert list(upload.queues["name"][:2]) == ["bottleneck", "bottleneck-rev"]
    assert list(upload.flows.columns[:2]) == ["id", "name"]
    # Flent timing: 1 s of TCP from 0.4 s; the run lasts 1 + 2 x 0.4 = 1.8 s and the ping,
    # every 0.2 s from 0, is sent at 0, 0.2, ..., 1.6: 9 pings.
    assert upload.flows.loc[0, "start_s"] == 0.4
    assert upload.flows.loc[0, "stop_s"] == 1.4
    assert upload.summary["duration_s"] == 1.8
    assert upload.pings.loc[0, "sent"] == 9
    assert upload.flows["goodput_bps"].dtype == "float64"
    assert upload.pings["rtt_p50_ms"].dtype == "float64"


def test_series_are_long_tables_with_the_documented_columns(upload):
    expected = {
        "flow_series": FLOW_SERIES_COLUMNS,
        "model_series": MODEL_SERIES_COLUMNS,
        "ping_series": PING_SERIES_COLUMNS,
        "queue_series": QUEUE_SERIES_COLUMNS,
    }
    for attribute, columns in expected.items():
        frame = getattr(upload, attribute)
        assert list(frame.columns) == list(columns), attribute
        assert len(frame) > 0, attribute
        for column, dtype in columns.items():
            assert frame[column].dtype == dtype, (attribute, column)
    assert list(FLOW_SERIES_COLUMNS) == [
        "t",
        "flow",
        "name",
        "goodput_bps",
        "srtt_ms",
        "cwnd",
        "ssthresh",
        "pacing_rate_bps",
        "delivery_rate_bps",
        "inflight",
        "tsq_bytes",
        "retrans",
    ]
    assert set(upload.flow_series["name"]) == {"cubic-up-0"}
    assert (upload.flow_series["t"] > 0.4).all()
    # One RTT sample per reply, keyed by the send time: 0, 0.2, ..., 1.6.
    assert upload.ping_series["t"].round(6).tolist() == [round(0.2 * i, 6) for i in range(9)]
    assert len(upload.ping_series) == upload.pings.loc[0, "received"]
    # The model series names the model's quantities, not the flow.
    assert "cubic-up-0" not in set(upload.model_series["name"])
    assert set(upload.model_series["flow"]) == {0}
    assert set(upload.queue_series["name"]) >= {"bottleneck", "bottleneck-rev"}


def test_series_of_several_flows_are_stacked_by_flow():
    r = wificc.run(TWO_FLOWS)
    by_flow = r.flow_series.groupby("flow")["name"].unique()
    assert {k: list(v) for k, v in by_flow.items()} == {0: ["cubic-up-0"], 1: ["reno-up-1"]}
    two_cubic = wificc.run({**TWO_FLOWS, "flows": [{"cc": "cubic"}, {"cc": "cubic"}], "pings": []})
    per_flow = two_cubic.model_series.groupby("flow")["name"].unique()
    assert sorted(per_flow[0]) == sorted(per_flow[1])
    assert list(per_flow.index) == [0, 1]
    # Without pings the ping tables are empty, the series one still has its typed columns.
    assert two_cubic.pings.empty
    assert list(two_cubic.ping_series.columns) == list(PING_SERIES_COLUMNS)
    assert len(two_cubic.ping_series) == 0
    assert two_cubic.ping_series["rtt_ms"].dtype == "float64"


def test_json_round_trip_rebuilds_the_same_tables(upload):
    again = Result.from_json(upload.to_json())
    # The document is the core's: the peak memory the front end measured is not in it.
    assert again.summary == {k: v for k, v in upload.summary.items() if k != PEAK_FIELD}
    assert again.scenario == upload.scenario
    for name, frame in upload.tables().items():
        pd.testing.assert_frame_equal(again.tables()[name], frame.drop(columns=PEAK_FIELD, errors="ignore"))
    assert json.loads(upload.to_json())["scenario"] == upload.scenario


def test_flatten_names_fields_as_the_core_does():
    nested = {
        "seed": 3,
        "path": {"rate": "50mbit", "qdisc": {"kind": "pfifo"}, "client_rtt": ["10ms", "20ms"]},
        "flows": [{"cc": "bbr", "cc_params": {"high_gain": 2.0}}, {"cc": "cubic", "cc_params": {}}],
        "pings": [],
    }
    assert flatten(nested) == {
        "seed": 3,
        "path.rate": "50mbit",
        "path.qdisc.kind": "pfifo",
        "path.client_rtt": '["10ms", "20ms"]',
        "flows[0].cc": "bbr",
        "flows[0].cc_params.high_gain": 2.0,
        "flows[1].cc": "cubic",
        "pings": "[]",
    }


def test_summary_row_is_parameters_and_summary(upload):
    row = upload.summary_row()
    assert row["path.rate"] == "50000000bit"
    assert row["flows[0].cc"] == "cubic"
    assert row["stack.tsq"] == "default"
    assert row["kernel"] == "6.12"
    assert row["duration_s"] == 1.8
    assert row["total_goodput_bps"] == upload.summary["total_goodput_bps"]


def test_save_writes_every_table_and_the_scenario(upload, tmp_path):
    target = upload.save(tmp_path / "run")
    assert target == tmp_path / "run"
    assert sorted(os.listdir(target)) == sorted([*TABLE_FILES.values(), SCENARIO_FILE])
    for name, frame in upload.tables().items():
        pd.testing.assert_frame_equal(pd.read_parquet(target / TABLE_FILES[name]), frame, check_dtype=False)
    summary = pd.read_parquet(target / "summary.parquet")
    assert len(summary) == 1
    assert summary.loc[0, "flows[0].cc"] == "cubic"
    assert summary.loc[0, "events"] == upload.summary["events"]
    assert json.loads((target / SCENARIO_FILE).read_text()) == upload.scenario
    assert os.listdir(tmp_path) == ["run"]


@pytest.fixture
def earlier_run(tmp_path):
    """A directory an earlier save left, with a file the new run does not have."""
    target = tmp_path / "run"
    target.mkdir()
    (target / "old.txt").write_text("from an earlier run")
    return target


def test_save_replaces_an_existing_directory_whole(upload, earlier_run):
    upload.save(earlier_run)
    assert "old.txt" not in os.listdir(earlier_run)
    assert (earlier_run / "flows.parquet").exists()
    assert os.listdir(earlier_run.parent) == ["run"]


def _failing_on_call(function, n):
    calls = []

    def wrapper(*args, **kwargs):
        calls.append(args)
        if len(calls) == n:
            raise OSError("injected failure")
        return function(*args, **kwargs)

    return wrapper


@pytest.mark.parametrize(
    ("owner", "attribute", "n"),
    [
        # The third table write fails while staging.
        (pd.DataFrame, "to_parquet", 3),
        # The second rename (staging -> target, once the earlier run is moved aside) fails.
        (os, "rename", 2),
    ],
)
def test_a_failed_save_leaves_the_earlier_run_and_no_staging(upload, earlier_run, monkeypatch, owner, attribute, n):
    monkeypatch.setattr(owner, attribute, _failing_on_call(getattr(owner, attribute), n))
    with pytest.raises(OSError, match="injected failure"):
        upload.save(earlier_run)
    assert os.listdir(earlier_run.parent) == ["run"]
    assert os.listdir(earlier_run) == ["old.txt"]


def test_validate_fills_defaults_and_reports_the_field():
    normalised = wificc.validate(TWO_FLOWS)
    assert normalised["stack"]["tsq"] == "default"
    assert normalised["path"]["qdisc"]["kind"] == "pfifo"
    assert wificc.validate(normalised) == normalised
    with pytest.raises(ValueError, match=r'^path\.rate: got 0 bit/s, expected a positive rate such as "50mbit"$'):
        wificc.validate({**TWO_FLOWS, "path": {**TWO_FLOWS["path"], "rate": "0mbit"}})
    with pytest.raises(ValueError, match=r"^flows\[1\]\.cc: unknown congestion control \"nope\""):
        wificc.run({**TWO_FLOWS, "flows": [{"cc": "cubic"}, {"cc": "nope"}]})


def test_bad_scenario_arguments():
    with pytest.raises(FileNotFoundError):
        wificc.run("no-such-scenario.toml")
    with pytest.raises(TypeError, match="scenario: got int"):
        wificc.run(3)
    with pytest.raises(ValueError, match=r"^\(scenario\): not JSON-serialisable"):
        wificc.run({"seed": object()})


def test_cc_list_has_the_baselines():
    names = [entry["name"] for entry in wificc.cc_list()]
    assert {"reno", "cubic"} <= set(names)
    cubic = next(e for e in wificc.cc_list() if e["name"] == "cubic")
    assert "tcp_cubic.c" in cubic["source"]


# --- the test catalog -------------------------------------------------------------------


def test_tcp_upload_has_flent_timing():
    s = scenarios.build("tcp_upload")
    # LENGTH 30 s, DELAY 5 s: 40 s in all, TCP from 5 s to 35 s, ping every 0.2 s throughout.
    assert s["duration"] == "40000000000ns"
    assert s["flows"] == [
        {"cc": "cubic", "cc_params": {}, "direction": "up", "start": "5000000000ns", "stop": "35000000000ns"}
    ]
    assert s["pings"] == [{"kind": "icmp", "interval": "200000000ns"}]
    assert s["path"] == {"kind": "wired", "rate": "50mbit", "rtt": "20ms"}
    assert wificc.validate(s)["duration"] == "40000000000ns"


def test_n_flow_tests_take_their_count_and_direction():
    s = scenarios.build("tcp_ndown", flows=3, cc=["bbr"], cc_params={"high_gain": 2.5}, ping=False)
    assert [(f["cc"], f["direction"], f["cc_params"]) for f in s["flows"]] == [("bbr", "down", {"high_gain": 2.5})] * 3
    assert s["pings"] == []
    mixed = scenarios.build("tcp_nup", cc=["cubic", "reno"])
    assert [f["cc"] for f in mixed["flows"]] == ["cubic", "reno"]
    assert scenarios.build("tcp_download")["flows"][0]["direction"] == "down"
    assert scenarios.build("tcp_upload", direction="down")["flows"][0]["direction"] == "down"


def test_path_stack_and_run_options_land_in_their_fields():
    s = scenarios.build(
        "tcp_upload",
        rate="100mbit",
        rtt="40ms",
        buffer="2bdp",
        qdisc="fq_codel",
        tsq="4ms",
        tp=2,
        seed=7,
        warmup="2s",
        step="100ms",
        length="10s",
        delay="1s",
    )
    assert s["path"] == {
        "kind": "wired",
        "rate": "100mbit",
        "rtt": "40ms",
        "buffer": "2bdp",
        "qdisc": {"kind": "fq_codel"},
    }
    assert s["stack"] == {"tsq": "4ms", "tp": 2}
    assert (s["seed"], s["warmup"], s["step"]) == (7, "2s", "100ms")
    # 10 s + 2 x 1 s; the ping follows the sampling step.
    assert s["duration"] == "12000000000ns"
    assert s["pings"][0]["interval"] == "100000000ns"
    assert wificc.validate(s)["stack"]["tsq"] == "4ms"


def test_a_base_scenario_keeps_its_setup_and_loses_its_traffic(tmp_path):
    base_file = tmp_path / "base.toml"
    base_file.write_text(
        'seed = 9\nstep = "0.5s"\n'
        '[path]\nkind = "wired"\nrate = "10mbit"\nrtt = "50ms"\nqdisc = { kind = "codel" }\n'
        '[stack]\ntsq = "8ms"\n[[flows]]\ncc = "reno"\n'
    )
    s = scenarios.build("tcp_upload", base=scenarios.load(base_file), rate="20mbit")
    assert s["path"] == {"kind": "wired", "rate": "20mbit", "rtt": "50ms", "qdisc": {"kind": "codel"}}
    assert (s["seed"], s["stack"]) == (9, {"tsq": "8ms"})
    assert [f["cc"] for f in s["flows"]] == ["cubic"]
    assert s["pings"][0]["interval"] == "500000000ns"


@pytest.mark.parametrize(
    ("test", "options", "message"),
    [
        ("tcp_sideways", {}, "test: got 'tcp_sideways', expected one of tcp_upload, tcp_download"),
        ("tcp_nup", {}, "--flows: tcp_nup needs the number of flows"),
        ("tcp_upload", {"flows": 2}, "--flows: tcp_upload runs 1 flow"),
        ("tcp_nup", {"flows": 0}, "--flows: got 0, expected at least 1 flow"),
        ("tcp_nup", {"flows": 3, "cc": ["cubic", "reno"]}, "--flows: got 3, but --cc names 2"),
        ("tcp_upload", {"direction": "left"}, "--direction: got 'left', expected 'up' or 'down'"),
        ("tcp_upload", {"length": "0s"}, "--length: got '0s', expected a positive duration"),
        ("tcp_upload", {"length": "3 fortnights"}, "--length: got '3 fortnights', expected a duration unit"),
        ("tcp_upload", {"delay": "-1s"}, "--delay: got '-1s', expected a non-negative duration"),
        ("tcp_upload", {"step": "soon"}, "--step: got 'soon', expected a duration such as"),
    ],
)
def test_bad_options_name_the_option(test, options, message):
    with pytest.raises(ValueError) as caught:
        scenarios.build(test, **options)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize("text", ["30s", "200ms", "1.5", "250us", "7ns", "1min", "2m", "1e-3s", "0.3333333s"])
def test_duration_parsing_agrees_with_the_core(text):
    normalised = wificc.validate({"duration": text, "path": {"kind": "wired", "rate": "1mbit", "rtt": "1ms"}})
    assert normalised["duration"] == f"{scenarios.duration_ns('--length', text)}ns"


def test_duration_values_by_hand():
    # 1.5 s = 1,500,000,000 ns; 1 min = 60 s; 0.3333333 s rounds to 333,333,300 ns.
    assert scenarios.duration_ns("x", "1.5") == 1_500_000_000
    assert scenarios.duration_ns("x", "1min") == 60_000_000_000
    assert scenarios.duration_ns("x", " 0.3333333s ") == 333_333_300


def test_cc_param_values_are_typed():
    assert scenarios.parse_cc_params(["a=1", "b=0.5", "c=true", "d=False", "e=bbr", "f=1e3", "g = 2"]) == {
        "a": 1,
        "b": 0.5,
        "c": True,
        "d": False,
        "e": "bbr",
        "f": 1000.0,
        "g": 2,
    }
    with pytest.raises(ValueError, match="^--cc-param: got 'beta', expected KEY=VALUE"):
        scenarios.parse_cc_params(["beta"])
    with pytest.raises(ValueError, match="^--cc-param: got '=1', expected KEY=VALUE"):
        scenarios.parse_cc_params(["=1"])


def test_summaries_cover_the_loaded_period_as_flent_cuts_it():
    # tcp_upload with 10 s of load between 5 s of pings alone (Flent's DELAY): the ping
    # percentiles, the queue's utilisation and the Wi-Fi airtime count the 10 s of load only;
    # the whole run stays available as *_all.
    r = wificc.run(
        scenarios.build(
            "tcp_upload", path_kind="wired", rate="50mbit", rtt="20ms", buffer="1bdp", cc=["cubic"], length="10s"
        )
    )
    ping = r.pings.iloc[0]
    assert ping["rtt_p50_ms"] >= 1.4 * 20
    assert ping["rtt_all_p50_ms"] < ping["rtt_p50_ms"]
    assert ping["rtt_all_p10_ms"] < 21
    bottleneck = r.queues.set_index("name").loc["bottleneck"]
    assert bottleneck["utilization"] > 0.9
    assert 0.4 < bottleneck["utilization_all"] < 0.55


def test_a_path_with_an_equals_sign_is_a_path_not_toml_text(tmp_path):
    folder = tmp_path / "cc=bbr"
    folder.mkdir()
    scenario = folder / "s.toml"
    scenario.write_text(
        'duration = "1s"\n[path]\nkind = "wired"\nrate = "10mbit"\nrtt = "10ms"\n[[flows]]\ncc = "bbr"\n'
    )
    assert wificc.api.scenario_text(str(scenario)) == (scenario.read_text(), "toml")
    # One line of TOML is still TOML text.
    assert wificc.api.scenario_text('duration = "1s"') == ('duration = "1s"', "toml")


def test_json_text_is_json_and_an_unreadable_path_is_a_named_error(tmp_path):
    text = json.dumps({"duration": "1s", "path": {"kind": "wired", "rate": "10mbit", "rtt": "10ms"}})
    assert wificc.api.scenario_text(text) == (text, "json")
    assert wificc.api.run(" " + text).summary["duration_s"] == 1.0
    with pytest.raises(ValueError, match=r"scenario: cannot read .*expected a scenario file"):
        wificc.api.scenario_text("x" * 300)
    with pytest.raises(FileNotFoundError):
        wificc.api.scenario_text(str(tmp_path / "missing.toml"))
