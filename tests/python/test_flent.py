"""Flent export: test inference, series names, values, metadata, files, and real Flent 2.3."""

import gzip
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer
import wificc
from typer.testing import CliRunner
from wificc import flent, scenarios

# One second... two seconds of TCP between 0.4 s of ping-only time: runs of 2.8 s, STEP 0.2 s.
SHORT = {"length": "2s", "delay": "0.4s"}
PATH = {"kind": "wired", "rate": "50mbit", "rtt": "20ms"}
# rrul.conf: four TCP flows each way marked CS0, CS1, CS5, EF; UDP pings EF, BK (CS1), BE.
RRUL_MARKS = ["BE", "CS1", "CS5", "EF"]
RRUL_UDP = ["EF", "CS1", "BE"]


def rrul_scenario(marks: list, udp: list) -> dict:
    flows = [
        {"cc": "cubic", "direction": d, "dscp": m, "start": "0.4s", "stop": "2.4s"}
        for d in ("up", "down")
        for m in marks
    ]
    pings = [{"kind": "icmp"}] + [{"kind": "udp", "dscp": m} for m in udp]
    return {"duration": "2.8s", "path": PATH, "flows": flows, "pings": pings}


SCENARIOS = {
    "tcp_upload": scenarios.build("tcp_upload", cc=["bbr"], **SHORT),
    "tcp_download": scenarios.build("tcp_download", cc=["cubic"], **SHORT),
    "tcp_nup": scenarios.build("tcp_nup", cc=["bbr"], flows=3, **SHORT),
    "tcp_ndown": scenarios.build("tcp_ndown", cc=["reno"], flows=2, **SHORT),
    "tcp_bidirectional": {
        "duration": "2.8s",
        "path": PATH,
        "flows": [
            {"cc": "cubic", "start": "0.4s", "stop": "2.4s"},
            {"cc": "bbr", "direction": "down", "start": "0.4s", "stop": "2.4s"},
        ],
        "pings": [{}],
    },
    "rrul": rrul_scenario(RRUL_MARKS, RRUL_UDP),
    "rrul_be": rrul_scenario(["BE"] * 4, ["BE"] * 3),
}
# The plot of each test besides totals and ping_cdf: a tcp_stats.inc plot or rrul's all_scaled.
THIRD_PLOT = {name: "all_scaled" if name.startswith("rrul") else "tcp_cwnd" for name in SCENARIOS}


@pytest.fixture(scope="module")
def results():
    return {name: wificc.run(s) for name, s in SCENARIOS.items()}


@pytest.fixture(scope="module")
def documents(results):
    return {name: flent.document(r) for name, r in results.items()}


def test_interpolation_takes_exact_values_joins_close_neighbours_and_stops_at_gaps():
    times = [1.0, 1.5, 2.0, 2.5, 5.0]
    values = [10.0, 20.0, None, 4.0, 8.0]
    xs = [0.5, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 3.0, 5.0, 5.5]
    # max gap 1 s: 1.5 -> 2.0 is close (but 2.0 has no value), 2.5 -> 5.0 is too far.
    assert flent.interpolate(times, values, xs, 1.0) == [
        None,
        10.0,
        15.0,
        20.0,
        None,
        None,
        None,
        4.0,
        None,
        8.0,
        None,
    ]
    # Times within a nanosecond of x are x.
    assert flent.interpolate([0.6000000000000001], [3.0], [0.6], 1.0) == [3.0]


def test_jain_index_as_flent_computes_it():
    assert flent.jain([1.0, 1.0]) == 1.0
    assert flent.jain([1.0, 0.0]) == 0.5
    assert flent.jain([3.0, 1.0]) == 16 / 20
    assert flent.jain([0.0, 0.0]) is None


def test_dscp_names_and_numbers():
    assert [flent.dscp_value("d", v) for v in ("BE", "ef", "cs1", "CS5", "AF41", 0, 63)] == [
        0,
        46,
        8,
        40,
        34,
        0,
        63,
    ]
    for bad in ("XX", 64, -1, True, None):
        with pytest.raises(ValueError, match=rf"^d: got {bad!r}, expected a DSCP value 0\.\.63 or a name"):
            flent.dscp_value("d", bad)


def test_the_flent_test_follows_from_the_flows(results):
    for name, result in results.items():
        assert flent.flent_test(result) == name
    # A given test must fit; tcp_nup also takes a single upload.
    assert flent.flent_test(results["tcp_upload"], "tcp_nup") == "tcp_nup"
    with pytest.raises(ValueError, match="^test: tcp_download does not fit a run of 1 upload and 0 download flows$"):
        flent.flent_test(results["tcp_upload"], "tcp_download")
    with pytest.raises(ValueError, match="^test: got 'rrul_up', expected one of tcp_upload, tcp_download, "):
        flent.flent_test(results["tcp_upload"], "rrul_up")
    mixed = wificc.run({"duration": "0.2s", "path": PATH, "flows": [{}, {}, {"direction": "down"}]})
    with pytest.raises(ValueError, match="^flows: a run of 2 upload and 1 download flows is no Flent test"):
        flent.flent_test(mixed)


def series_names(doc: dict) -> list[str]:
    return sorted(name for name in doc["results"] if "::tcp_" not in name)


def test_series_names_are_those_of_the_flent_test_definitions(documents):
    ping = ["Ping (ms) ICMP"]
    assert series_names(documents["tcp_upload"]) == ping + ["TCP upload"]
    assert series_names(documents["tcp_download"]) == ping + ["TCP download"]
    assert series_names(documents["tcp_bidirectional"]) == ping + ["TCP download", "TCP upload"]
    assert series_names(documents["tcp_nup"]) == ping + [
        "TCP upload avg",
        "TCP upload fairness",
        "TCP upload sum",
        "TCP upload::1",
        "TCP upload::2",
        "TCP upload::3",
    ]
    assert series_names(documents["tcp_ndown"]) == ping + [
        "TCP download avg",
        "TCP download fairness",
        "TCP download sum",
        "TCP download::1",
        "TCP download::2",
    ]
    computed = ["TCP download avg", "TCP download sum", "TCP totals", "TCP upload avg", "TCP upload sum"]
    assert series_names(documents["rrul"]) == sorted(
        [
            "Ping (ms) ICMP",
            "Ping (ms) UDP EF",
            "Ping (ms) UDP BK",
            "Ping (ms) UDP BE",
            "Ping (ms) avg",
            *computed,
        ]
        + [f"TCP {d} {m}" for d in ("upload", "download") for m in ("BE", "BK", "CS5", "EF")]
    )
    assert series_names(documents["rrul_be"]) == sorted(
        [
            "Ping (ms) ICMP",
            "Ping (ms) UDP BE1",
            "Ping (ms) UDP BE2",
            "Ping (ms) UDP BE3",
            "Ping (ms) avg",
            *computed,
        ]
        + [f"TCP {d} {m}" for d in ("upload", "download") for m in ("BE", "BE2", "BE3", "BE4")]
    )


def test_a_run_without_pings_has_no_ping_series(results):
    scenario = {**SCENARIOS["rrul"], "pings": []}
    doc = flent.document(wificc.run(scenario))
    assert not [name for name in doc["results"] if name.startswith("Ping")]
    lengths = {len(values) for values in doc["results"].values()}
    assert lengths == {len(doc["x_values"])}


def test_further_icmp_pings_are_flent_extra_hosts():
    pings = [{"name": "Ping (ms) ICMP 10ms"}, {"name": "Ping (ms) ICMP 50ms"}, {}]
    result = wificc.run({**SCENARIOS["tcp_bidirectional"], "pings": pings})
    names = [s.name for s in flent.streams(result, "tcp_bidirectional") if s.kind == "icmp"]
    assert names == ["Ping (ms) ICMP", "Ping (ms) ICMP 50ms (extra)", "Ping (ms) ICMP icmp-ping-2 (extra)"]


def test_flow_values_socket_statistics_and_the_bbr_model(results, documents):
    result, doc = results["tcp_upload"], documents["tcp_upload"]
    # 2.8 s every 0.2 s: x = 0, 0.2, ..., 2.8.
    assert doc["x_values"] == [round(0.2 * k, 9) for k in range(15)]
    flow = result.flow_series
    model = result.model_series
    raw = doc["raw_values"]["TCP upload"]
    assert [r["t"] for r in raw] == list(flow["t"])
    assert [r["val"] for r in raw] == list(flow["goodput_bps"] / 1e6)
    assert [r["tcp_cwnd"] for r in raw] == list(flow["cwnd"])
    assert [r["tcp_rtt"] for r in raw] == list(flow["srtt_ms"])
    assert [r["tcp_delivery_rate"] for r in raw] == list(flow["delivery_rate_bps"] / 1e6)
    assert [r["tcp_bbr_bw"] for r in raw] == list(model[model["name"] == "bw_bps"]["value"] / 1e6)
    assert all(r["dur"] == 0.2 for r in raw)
    # Samples fall on the x grid, so results hold them as they are; none before the flow.
    values = dict(zip(doc["x_values"], doc["results"]["TCP upload"], strict=True))
    for t, goodput in zip(flow["t"], flow["goodput_bps"], strict=True):
        assert values[round(t, 9)] == goodput / 1e6
    assert values[0.0] is None and values[0.4] is None
    cwnd = dict(zip(doc["x_values"], doc["results"]["TCP upload::tcp_cwnd"], strict=True))
    assert cwnd[round(flow["t"].iloc[2], 9)] == flow["cwnd"].iloc[2]
    # cubic has no bw model.
    assert not any(k.startswith("tcp_bbr") for r in documents["tcp_download"]["raw_values"]["TCP download"] for k in r)


def test_pings_are_raw_rtts_by_send_time_with_sequence_numbers(results, documents):
    result, doc = results["tcp_upload"], documents["tcp_upload"]
    raw = doc["raw_values"]["Ping (ms) ICMP"]
    pings = result.ping_series
    # Sent every 0.2 s from 0: sequence number = send time / 0.2.
    assert [(r["t"], r["val"], r["seq"]) for r in raw] == [
        (t, rtt, round(t / 0.2)) for t, rtt in zip(pings["t"], pings["rtt_ms"], strict=True)
    ]
    assert doc["results"]["Ping (ms) ICMP"][0] == pings["rtt_ms"].iloc[0]


def test_computed_series_follow_flent_runners(documents):
    doc = documents["tcp_nup"]
    r = doc["results"]
    members = [r[f"TCP upload::{i}"] for i in (1, 2, 3)]
    for k in range(len(doc["x_values"])):
        present = [m[k] for m in members if m[k] is not None]
        if not present:
            assert r["TCP upload sum"][k] is None and r["TCP upload fairness"][k] is None
            continue
        assert r["TCP upload sum"][k] == math.fsum(present)
        assert r["TCP upload avg"][k] == math.fsum(present) / len(present)
        assert r["TCP upload fairness"][k] == flent.jain(present)
    meta = doc["metadata"]["SERIES_META"]
    means = [meta[f"TCP upload::{i}"]["MEAN_VALUE"] for i in (1, 2, 3)]
    assert meta["TCP upload sum"] == {
        "RUNNER": "SumRunner",
        "COMPUTED_LATE": False,
        "UNITS": "Mbits/s",
        "MEAN_VALUE": math.fsum(means),
        "IDX": meta["TCP upload sum"]["IDX"],
    }
    rrul = documents["rrul"]
    pings = [rrul["results"][n] for n in ("Ping (ms) ICMP", "Ping (ms) UDP EF", "Ping (ms) UDP BK", "Ping (ms) UDP BE")]
    k = 5
    assert rrul["results"]["Ping (ms) avg"][k] == math.fsum(p[k] for p in pings) / 4
    totals = [rrul["results"][f"TCP {d} {m}"][k] for d in ("upload", "download") for m in ("BE", "BK", "CS5", "EF")]
    assert rrul["results"]["TCP totals"][k] == math.fsum(totals)


def test_metadata_names_the_test_its_timing_and_wificc(results, documents):
    doc = documents["tcp_nup"]
    m = doc["metadata"]
    assert doc["version"] == 4
    assert (m["NAME"], m["LENGTH"], m["DELAY"], m["TOTAL_LENGTH"], m["STEP_SIZE"]) == (
        "tcp_nup",
        2.0,
        0.4,
        2.8,
        0.2,
    )
    assert m["TEST_PARAMETERS"] == {"upload_streams": "3"}
    assert m["TIME"] == m["T0"] == "1970-01-01T00:00:00.000000Z"
    assert m["FLENT_VERSION"].startswith("wificc ")
    assert m["WIFICC_SCENARIO"] == results["tcp_nup"].scenario
    assert m["TITLE"] == "cc:bbr path:wired rate:50Mbit rtt:20ms tsq:default tp:1 seed:1"
    assert m["SERIES_META"]["TCP upload::2"] | {"IDX": 0} == {
        "RUNNER": "wificc",
        "UNITS": "Mbits/s",
        "MEAN_VALUE": results["tcp_nup"].flows["goodput_bps"].iloc[1] / 1e6,
        "CONG_CONTROL": "bbr",
        "DATA_TOS": 0,
        "TCP_MSS": 1448,
        "TCP_RETRANSMIT": int(results["tcp_nup"].flows["retrans"].iloc[1]),
        "IDX": 0,
    }
    rrul = documents["rrul"]["metadata"]
    assert rrul["SERIES_META"]["TCP upload EF"]["DATA_TOS"] == 46 << 2
    assert rrul["SERIES_META"]["Ping (ms) UDP BK"]["DATA_TOS"] == 8 << 2
    assert rrul["TEST_PARAMETERS"] == {}
    json.dumps(documents)  # no NaN anywhere: strict JSON


def test_export_is_atomic_reproducible_and_equal_from_a_result_or_its_directory(results, tmp_path):
    result = results["rrul"]
    a = flent.export(result, tmp_path / "a" / "run.flent.gz")
    run_dir = result.save(tmp_path / "run")
    b = flent.export(run_dir, tmp_path / "b" / "run.flent.gz")
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() == flent.export(result, a).read_bytes()
    assert sorted(os.listdir(tmp_path / "a")) == ["run.flent.gz"]
    with gzip.open(a, "rt") as f:
        assert json.load(f)["metadata"]["DATA_FILENAME"] == "run.flent.gz"
    for bad in ("run.json", "run.gz", ".flent.gz"):
        with pytest.raises(ValueError, match=rf"^path: got '.*{bad}', expected a file name ending in \.flent\.gz$"):
            flent.export(result, tmp_path / bad)


def cli_app() -> typer.Typer:
    """The command line that has the command."""
    from wificc.cli import app

    return app


def test_flent_command_exports_a_run_or_every_run_of_a_sweep(results, tmp_path):
    runner = CliRunner()
    run_dir = results["tcp_ndown"].save(tmp_path / "one")
    out = runner.invoke(cli_app(), ["flent", str(run_dir)])
    assert out.exit_code == 0, out.output
    assert out.stdout.startswith(f"wrote {run_dir / 'tcp_ndown.flent.gz'} (Flent test tcp_ndown)")
    custom = tmp_path / "custom.flent.gz"
    out = runner.invoke(cli_app(), ["flent", str(run_dir), "--out", str(custom), "--test", "tcp_ndown"])
    assert out.exit_code == 0 and custom.is_file()
    for name in ("tcp_upload", "rrul"):
        results[name].save(tmp_path / "sweep" / "runs" / name)
    out = runner.invoke(cli_app(), ["flent", str(tmp_path / "sweep")])
    assert out.exit_code == 0, out.output
    assert (tmp_path / "sweep" / "runs" / "rrul" / "rrul.flent.gz").is_file()
    assert (tmp_path / "sweep" / "runs" / "tcp_upload" / "tcp_upload.flent.gz").is_file()
    for args, message in (
        ([str(tmp_path)], f"error: RUN_DIR: '{tmp_path}' is neither a run directory"),
        ([str(tmp_path / "sweep"), "--out", str(custom)], "error: --out: "),
        (
            [str(run_dir), "--test", "rrul"],
            "error: test: rrul does not fit a run of 0 upload and 2 download flows",
        ),
    ):
        out = runner.invoke(cli_app(), ["flent", *args])
        assert out.exit_code == 2, out.output
        assert out.stderr.startswith(message) and out.stderr.count("\n") == 1
        assert "Traceback" not in out.output


# Runs Flent's own entry point (what the `flent` script calls) once per argument list, in one
# process, so 21 plots need one interpreter start; a marker line precedes each plot's output.
FLENT_LOOP = """
import sys
import flent
for i, argv in enumerate(sys.argv[1:]):
    print(f"=== plot {i}", flush=True)
    sys.argv = ["flent", *argv.split("\\t")]
    flent.run_flent()
    sys.stdout.flush()
    sys.stderr.flush()
"""


def run_flent(jobs: list[list[str]], *, script: bool = False) -> list[str]:
    """Flent 2.3's output for each argument list, headless: through the `flent` script
    (``script``), or through its entry point in one process for all."""
    env = {**os.environ, "MPLBACKEND": "Agg"}
    if script:
        flent_bin = shutil.which("flent", path=str(Path(sys.executable).parent))
        assert flent_bin, "flent is not installed in this environment: make setup installs it"
        commands = [[flent_bin, *argv] for argv in jobs]
    else:
        commands = [[sys.executable, "-u", "-c", FLENT_LOOP, *("\t".join(argv) for argv in jobs)]]
    outputs = []
    for command in commands:
        done = subprocess.run(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, timeout=300
        )
        assert done.returncode == 0, done.stdout
        outputs += done.stdout.split("=== plot ")[1:] if not script else [done.stdout]
    assert len(outputs) == len(jobs)
    return outputs


def assert_plotted(png: Path, output: str) -> None:
    # Flent exits 0 even when a plot fails, so its output and the file are what tell.
    assert "ERROR" not in output and "Traceback" not in output, output
    data = png.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000, (png, output)


def test_real_flent_plots_every_exported_test_type(results, tmp_path):
    jobs, pngs = [], []
    for name, result in results.items():
        data_file = flent.export(result, tmp_path / f"{name}.flent.gz")
        for plot in ("totals", "ping_cdf", THIRD_PLOT[name]):
            pngs.append(tmp_path / f"{name}-{plot}.png")
            jobs.append(["-i", str(data_file), "-p", plot, "-o", str(pngs[-1])])
    for png, output in zip(pngs, run_flent(jobs), strict=True):
        assert_plotted(png, output)
    # The `flent` command itself, as a user runs it.
    png = tmp_path / "script.png"
    (output,) = run_flent([["-i", str(tmp_path / "rrul.flent.gz"), "-p", "all_scaled", "-o", str(png)]], script=True)
    assert_plotted(png, output)
    # A plot Flent cannot draw is seen as failed.
    bad = tmp_path / "bad.png"
    (output,) = run_flent([["-i", str(tmp_path / "tcp_upload.flent.gz"), "-p", "all_scaled", "-o", str(bad)]])
    with pytest.raises(AssertionError):
        assert_plotted(bad, output)
