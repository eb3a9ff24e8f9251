"""The wificc command line: run, validate, cc, bench, demo, and how bad input is reported."""

import csv
import json
import os

import pytest
import wificc
from typer.testing import CliRunner
from wificc import api, bench, cli
from wificc.cli import runs
from wificc.result import SCENARIO_FILE, TABLE_FILES

# Short runs: one second of TCP, 0.2 s of ping-only time before and after.
SHORT = ["--length", "1s", "--delay", "0.2s"]
SCENARIO_TOML = """
duration = "0.6s"
[path]
kind = "wired"
rate = "10mbit"
rtt = "20ms"
[[flows]]
cc = "reno"
"""

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(cli.app, list(args))


def assert_user_error(result, message: str) -> None:
    """Exit code 2, one line on stderr starting with the message, no traceback."""
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: {message}"), result.stderr
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.output
    assert result.stdout == ""


@pytest.fixture
def scenario_file(tmp_path):
    path = tmp_path / "scenario.toml"
    path.write_text(SCENARIO_TOML)
    return path


def test_run_prints_the_summary_tables():
    result = invoke("run", "tcp_upload", *SHORT, "--cc", "reno")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith("tcp_upload: 1.4 s simulated")
    for heading in ("Flows", "goodput Mbit/s", "RTOs", "Pings", "p50 ms", "p90 ms", "Queues", "p95 sojourn"):
        assert heading in out
    assert "reno-up-0" in out
    assert "icmp-ping-0" in out
    assert "bottleneck" in out


def test_run_json_is_one_object_with_parameters_and_summaries():
    result = invoke("run", "tcp_nup", *SHORT, "--flows", "2", "--cc-param", "beta=717", "--tsq", "4ms", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report) == {"test", "parameters", "summary", "flows", "pings", "queues", "wifi", "profile", "out"}
    assert report["test"] == "tcp_nup"
    assert report["parameters"]["flows[1].cc_params.beta"] == 717
    assert report["parameters"]["stack.tsq"] == "4ms"
    # TCP from 0.2 s to 1.2 s, run 1.4 s.
    assert report["parameters"]["flows[0].start"] == "200000000ns"
    assert report["summary"]["duration_s"] == 1.4
    assert [f["name"] for f in report["flows"]] == ["cubic-up-0", "cubic-up-1"]
    assert all(f["goodput_bps"] > 0 and "retrans" in f for f in report["flows"])
    assert report["pings"][0]["rtt_p50_ms"] > 0
    assert report["pings"][0]["rtt_p90_ms"] >= report["pings"][0]["rtt_p50_ms"]
    assert report["out"] is None


def test_run_out_writes_the_run(tmp_path):
    out = tmp_path / "runs" / "one"
    result = invoke("run", "tcp_download", *SHORT, "--no-ping", "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["out"] == str(out)
    assert report["pings"] == []
    assert sorted(os.listdir(out)) == sorted([*TABLE_FILES.values(), SCENARIO_FILE])
    scenario = json.loads((out / SCENARIO_FILE).read_text())
    assert scenario["flows"][0]["direction"] == "down"


def test_run_a_scenario_file_as_written(scenario_file):
    result = invoke("run", "--scenario", str(scenario_file), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["test"] is None
    assert [f["cc"] for f in report["flows"]] == ["reno"]
    assert report["pings"] == []
    assert report["summary"]["duration_s"] == 0.6


def test_run_a_test_over_a_scenario_file(scenario_file):
    result = invoke("run", "tcp_upload", "--scenario", str(scenario_file), *SHORT, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["parameters"]["path.rate"] == "10000000bit"
    assert report["parameters"]["flows[0].cc"] == "cubic"
    assert len(report["pings"]) == 1


def test_bad_input_exits_2_with_the_core_message_naming_the_field(scenario_file, tmp_path):
    assert_user_error(
        invoke("run", "tcp_upload", "--rate", "0mbit"),
        'path.rate: got 0 bit/s, expected a positive rate such as "50mbit"',
    )
    assert_user_error(invoke("run", "tcp_upload", "--cc", "nope"), 'flows[0].cc: unknown congestion control "nope"')
    assert_user_error(invoke("run", "tcp_upload", "--cc-param", "no_such=1"), "flows[0].cc_params: ")
    assert_user_error(invoke("run", "tcp_upload", "--tsq", "3ms"), 'stack.tsq: got "3ms"')
    assert_user_error(invoke("run", "tcp_upload", "--cc-param", "beta"), "--cc-param: got 'beta'")
    assert_user_error(invoke("run", "tcp_nup"), "--flows: tcp_nup needs the number of flows")
    assert_user_error(invoke("run"), "TEST: give a test")
    assert_user_error(invoke("run", "--scenario", str(scenario_file), "--rate", "1mbit"), "--rate: needs a TEST")
    assert_user_error(invoke("run", "--scenario", str(tmp_path / "missing.toml")), "[Errno 2]")
    broken = tmp_path / "broken.toml"
    broken.write_text('duration = "1s"\npath = { kind = "wired", rate = "1mbit", rtt = "1ms", colour = 1 }\n')
    assert_user_error(invoke("run", "--scenario", str(broken)), "path.colour: unknown field `colour`")
    broken.write_text("duration = \n")
    assert_user_error(invoke("run", "--scenario", str(broken)), "(document): invalid TOML")
    assert_user_error(invoke("run", "tcp_upload", "--scenario", str(broken)), f"(document): {broken}: ")


def test_validate_prints_the_normalised_scenario(scenario_file, tmp_path):
    result = invoke("check", str(scenario_file))
    assert result.exit_code == 0, result.output
    normalised = json.loads(result.stdout)
    assert normalised == wificc.validate(scenario_file)
    assert normalised["duration"] == "600000000ns"
    assert normalised["stack"]["tsq"] == "default"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"path": {"kind": "wired", "rate": "1mbit", "rtt": "1ms"}, "stack": {"tp": 0}}))
    assert_user_error(invoke("check", str(bad)), "stack.tp: got 0, expected a pacing multiplier from 1 to 10")
    assert_user_error(invoke("check", str(tmp_path / "missing.toml")), "[Errno 2]")


def test_cc_list_and_show():
    listed = invoke("cc", "list")
    assert listed.exit_code == 0, listed.output
    for entry in wificc.cc_list():
        assert entry["name"] in listed.stdout
    shown = invoke("cc", "show", "cubic")
    assert shown.exit_code == 0, shown.output
    cubic = next(e for e in wificc.cc_list() if e["name"] == "cubic")
    assert shown.stdout.startswith(f"cubic: {cubic['summary'][:30]}")
    assert "source: Linux net/ipv4/tcp_cubic.c" in shown.stdout
    for name, default in cubic["params"].items():
        assert name in shown.stdout
        assert json.dumps(default) in shown.stdout
    assert_user_error(invoke("cc", "show", "nope"), "cc: unknown congestion control 'nope'; expected one of reno")


def test_bench_prints_speed_and_event_rate():
    result = invoke("bench", "--length", "0.2s")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("bench: one cubic flow, 1gbit, 10ms RTT, 1bdp pfifo")
    assert "simulated s / wall s" in result.stdout
    assert "events / wall s" in result.stdout
    assert "0.2 s" in result.stdout
    assert_user_error(invoke("bench", "--length", "0s"), 'duration: got "0s"')


def test_bench_scenario_is_the_documented_path():
    s = wificc.validate(bench.scenario("1s"))
    assert s["path"]["rate"] == "1000000000bit"
    assert s["path"]["rtt"] == "10000000ns"
    assert s["path"]["buffer"] == "1bdp"
    assert s["path"]["qdisc"]["kind"] == "pfifo"
    assert [f["cc"] for f in s["flows"]] == ["cubic"]
    assert s["pings"] == []


def _demo_rows(out):
    with open(out / "summary.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_demo_compares_the_available_ccas(tmp_path):
    out = tmp_path / "demo"
    result = invoke("demo", "--out", str(out), "--length", "1s", "--delay", "0.2s")
    assert result.exit_code == 0, result.output
    expected = [cc for cc in runs.DEMO_CCS if cc in {e["name"] for e in wificc.cc_list()}]
    assert expected[:2] == ["cubic", "reno"]
    rows = _demo_rows(out)
    assert [r["cc"] for r in rows] == expected
    assert all(r["flows[0].cc"] == r["cc"] for r in rows)
    assert {r["path.rate"] for r in rows} == {"50000000bit"}
    assert {r["path.buffer"] for r in rows} == {"1bdp"}
    assert {r["duration_s"] for r in rows} == {"1.4"}
    assert sorted(os.listdir(out)) == sorted([*expected, "summary.csv"])
    for cc in expected:
        assert sorted(os.listdir(out / cc)) == sorted([*TABLE_FILES.values(), SCENARIO_FILE])
        assert f"wrote {out / cc}/" in result.stdout
    assert f"wrote {out / 'summary.csv'}" in result.stdout
    assert result.stdout.startswith("tcp_upload: 50mbit, 20ms, 1bdp, pfifo, 1s of TCP")
    for header in ("goodput", "ping p50", "sojourn p95"):
        assert header in result.stdout


def test_demo_skips_a_missing_cca_with_a_note(tmp_path, monkeypatch):
    registry = [e for e in wificc.cc_list() if e["name"] != "reno"]
    monkeypatch.setattr(api, "cc_list", lambda: registry)
    out = tmp_path / "demo"
    result = invoke("demo", "--out", str(out), "--length", "0.5s", "--delay", "0s")
    assert result.exit_code == 0, result.output
    assert "note: reno is not in this build's registry; skipped" in result.stderr
    assert "reno" not in [r["cc"] for r in _demo_rows(out)]
    assert not (out / "reno").exists()


def test_demo_bad_length_exits_2(tmp_path):
    assert_user_error(invoke("demo", "--out", str(tmp_path), "--length", "long"), "--length: got 'long'")
