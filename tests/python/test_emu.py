"""The real-time emulator with the kernel's TCP: the helpers of wificc.emu, then real runs
through network namespaces (root and a TUN device needed; skipped otherwise, with the reason)."""

import json
import os
import signal
import struct
import subprocess
import sys
import time

import pandas as pd
import pytest
from typer.testing import CliRunner
from wificc import api, bpf, emu, scenarios
from wificc.cli import app
from wificc.cli.kernel import comparison_lines, scenario_from

RUNNER = CliRunner()
REASON = emu.unavailable()
needs_emulator = pytest.mark.skipif(REASON is not None, reason=f"emulator unavailable: {REASON}")
BPF_REASON = bpf.unavailable_reason()
needs_bpf = pytest.mark.skipif(BPF_REASON is not None, reason=f"BPF congestion controls unavailable: {BPF_REASON}")
# Acceptance path (SPEC 9, issue 6): 50 Mbit/s, 20 ms RTT, 1 BDP pfifo.
RATE_BPS = 50e6
BASE_RTT_MS = 20.0
# Goodput ceiling: a 1500-byte packet carries 1448 payload bytes and takes 1538 bytes on the
# wire with Ethernet framing, the emulator's default l2_overhead.
MAX_GOODPUT_BPS = RATE_BPS * 1448 / 1538


def test_icmp_checksum_of_a_hand_computed_header():
    # Echo request, id 0x1234, seq 1, no data: words 0x0800 + 0x0000 + 0x1234 + 0x0001 = 0x1a35,
    # one's complement 0xe5ca.
    header = struct.pack("!BBHHH", 8, 0, 0, 0x1234, 1)
    assert emu.icmp_checksum(header) == 0xE5CA
    request = emu.echo_request(0x1234, 1)
    assert len(request) == 8 + emu.ICMP_DATA_BYTES
    # A correct checksum makes the whole message sum to 0.
    assert emu.icmp_checksum(request) == 0


def test_nearest_rank_is_the_simulators_rule():
    # 10 values: p50 is the 5th, p90 the 9th, p99 the 10th, p10 the 1st.
    values = [float(v) for v in range(10, 0, -1)]
    assert emu.nearest_rank(values, 0.5) == 5.0
    assert emu.nearest_rank(values, 0.9) == 9.0
    assert emu.nearest_rank(values, 0.99) == 10.0
    assert emu.nearest_rank(values, 0.1) == 1.0
    assert emu.nearest_rank([], 0.5) is None


def test_timeline_orders_warmup_samples_and_stops():
    flow = emu.FlowRun(
        id=0, name="f", cc="cubic", start_ns=0, stop_ns=400, limit=None, dscp=0,
        sender_ns="a", receiver_ns="b", receiver_addr="198.18.0.1", notsent_lowat=1,
    )  # fmt: skip
    actions = emu._timeline(duration_ns=600, step_ns=200, warmup_ns=200, flows=[flow])
    # Samples at 200, 400, 600; the warm-up snapshot before the sample at 200, the flow's stop
    # after the sample at 400.
    assert [(t, a) for t, _, a, _ in actions] == [
        (200, "warmup"),
        (200, "sample"),
        (400, "sample"),
        (400, "stop"),
        (600, "sample"),
    ]


def test_rates_tags_and_sizes():
    assert emu._path_rate_bps({"rate": "50mbit"}) == 50e6
    assert emu._path_rate_bps({"rate": "1gbit"}) == 1e9
    assert emu._path_rate_bps({"kind": "trace"}) == 0.0
    assert emu._bytes("1048576b") == 1048576
    tag = emu.new_tag()
    assert emu.TAG_PATTERN.fullmatch(tag), tag
    assert emu.new_tag() != tag
    with pytest.raises(ValueError, match="--tag: got 'Bad-Tag'"):
        emu.Emulator({}, tag="Bad-Tag")


def test_a_run_is_judged_by_the_emulators_own_lateness_where_it_was_measured():
    measured = {
        "lateness_within_100us": 0.78,
        "lateness_p99_us": 250.0,
        "lateness_own_within_100us": 0.9999,
        "lateness_own_p99_us": 1.5,
    }
    assert emu.on_time(measured) == {
        "lateness_within_100us": 0.9999,
        "lateness_p99_us": 1.5,
        "lateness_all_within_100us": 0.78,
    }
    # A result stored before the own lateness was measured (missing, or NaN from a table).
    before = {"lateness_within_100us": 0.9, "lateness_p99_us": 120.0}
    for older in (before, {**before, "lateness_own_within_100us": float("nan")}):
        assert emu.on_time(older) == {
            "lateness_within_100us": 0.9,
            "lateness_p99_us": 120.0,
            "lateness_all_within_100us": 0.9,
        }
    assert emu.on_time({})["lateness_within_100us"] is None


def test_comparison_lines_show_both_runs_and_their_difference():
    class Fake:
        def __init__(self, goodput, p50, retrans, cwnd, ampdu=None):
            self.raw = {
                "summary": {"total_goodput_bps": goodput},
                "flows": [{"retrans": retrans, "cwnd_mean": cwnd}],
                "pings": [{"rtt_p50_ms": p50, "rtt_p90_ms": p50 + 1}],
            }
            if ampdu is not None:
                self.raw["wifi"] = [{"node": 1, "ampdu_mean": 2.0}, {"node": 0, "ampdu_mean": ampdu}]

    row = emu.compare_row("cubic", Fake(40e6, 20.0, 5, 100.0), Fake(44e6, 23.0, 7, 90.0))
    assert (row["sim_retrans"], row["kernel_retrans"]) == (5, 7)
    assert (row["sim_cwnd_mean"], row["kernel_cwnd_mean"]) == (100.0, 90.0)
    sim, kernel, difference = comparison_lines(row)
    assert sim == ["cubic", "simulator", "40.00", "20.0", "21.0", "5", "100.0", "-"]
    assert kernel == ["", "kernel", "44.00", "23.0", "24.0", "7", "90.0", "-"]
    # (44 - 40) / 40 = 10%; (23 - 20) / 20 = 15%; (24 - 21) / 21 = 14.3%; 7 - 5; (90 - 100) / 100;
    # no Wi-Fi.
    assert difference == ["", "kernel - simulator", "10.0%", "15.0%", "14.3%", "+2", "-10.0%", "-"]
    # On a Wi-Fi path the AP's (node 0) mean A-MPDU size: (27 - 30) / 30 = -10%.
    row = emu.compare_row("cubic", Fake(40e6, 20.0, 5, 100.0, 30.0), Fake(44e6, 23.0, 7, 90.0, 27.0))
    assert (row["sim_ap_ampdu_mean"], row["kernel_ap_ampdu_mean"]) == (30.0, 27.0)
    sim, kernel, difference = comparison_lines(row)
    assert (sim[-1], kernel[-1], difference[-1]) == ("30.0", "27.0", "-10.0%")


def test_bpf_variants_are_checked_as_the_simulators_algorithm_and_run_as_themselves(monkeypatch, tmp_path):
    assert [emu.simulator_cc(cc) for cc in ("wbbr", "wbbrp", "wbbrn", "wbbr_apg", "wbbr_pg")] == [
        "bbr", "bbrp", "bbrn", "bbr_apg", "bbr_pg",
    ]  # fmt: skip
    # Names that are not variants are their own, even with the prefix; without the BPF sources
    # every name is.
    assert [emu.simulator_cc(cc) for cc in ("cubic", "westwood", "wbbr2")] == ["cubic", "westwood", "wbbr2"]
    monkeypatch.setenv("WIFICC_BPF_DIR", str(tmp_path))
    assert emu.simulator_cc("wbbr") == "wbbr"
    monkeypatch.delenv("WIFICC_BPF_DIR")
    toml = '[path]\nkind = "wired"\nrate = "10mbit"\nrtt = "20ms"\n[[flows]]\ncc = "wbbrp"\n[[flows]]\ncc = "cubic"\n'
    normalised = emu.validated(toml)
    assert [f["cc"] for f in normalised["flows"]] == ["wbbrp", "cubic"]
    # Every other default is filled in as for the simulator's bbrp.
    assert normalised["flows"][0]["direction"] == api.validate(toml.replace("wbbrp", "bbrp"))["flows"][0]["direction"]
    # Parameters are checked against the algorithm the variant implements.
    with pytest.raises(ValueError, match="flows\\[0\\].cc"):
        emu.validated({**normalised, "flows": [{"cc": "wbbrp", "cc_params": {"pace": 5}}]})
    with pytest.raises(ValueError, match='unknown congestion control "wcubic"'):
        emu.validated({**normalised, "flows": [{"cc": "wcubic"}]})


def test_with_cc_replaces_every_flows_controller():
    base = {"flows": [{"cc": "reno", "cc_params": {"beta": 1}}, {"cc": "bbr"}], "seed": 3}
    out = emu.with_cc(base, "cubic")
    assert [f["cc"] for f in out["flows"]] == ["cubic", "cubic"]
    assert all(f["cc_params"] == {} for f in out["flows"])
    assert base["flows"][0]["cc"] == "reno", "the base is not modified"


def test_scenario_from_runs_a_file_as_written_or_a_test_with_options(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('[path]\nkind = "wired"\nrate = "10mbit"\nrtt = "40ms"\n')
    assert scenario_from(path, None, {"rate": None}) == path
    built = scenario_from(path, None, {"cc": ["reno"], "length": "2s", "delay": "1s"})
    assert built["path"]["rtt"] == "40ms"
    assert [f["cc"] for f in built["flows"]] == ["reno"]
    assert built["duration"] == f"{4 * 10**9}ns"


def run_tag() -> str:
    """A run tag of these tests: 'e' and five characters of a fresh tag (pid and counter)."""
    return "e" + emu.new_tag()[-5:]


@pytest.fixture(scope="module")
def binary():
    """The emulator binary, built in release mode if it is not there yet."""
    try:
        return emu.emulator_binary()
    except ValueError:
        subprocess.run(["cargo", "build", "--release", "-p", "wificc-emu"], cwd=emu.REPO_ROOT, check=True, timeout=1200)
        return emu.emulator_binary()


def leftovers(tag: str) -> list[str]:
    """Namespaces and root-namespace devices of run ``tag`` that still exist."""
    prefix = f"{emu.NAME_PREFIX}{tag}-"
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, check=True).stdout
    names = [line.split()[0] for line in netns.splitlines() if line.strip()]
    names += [line.split(": ")[1].split("@")[0] for line in links.splitlines()]
    return [n for n in names if n.startswith(prefix)]


@needs_emulator
def test_acceptance_saturated_cubic_idle_ping_and_timing(binary):
    # 2 s of idle pings, 10 s of one cubic upload, 2 s of idle pings again.
    scenario = scenarios.build(
        "tcp_upload", rate="50mbit", rtt="20ms", buffer="1bdp", qdisc="pfifo", cc=["cubic"],
        length="10s", delay="2s",
    )  # fmt: skip
    # Delivery timing, and the sender's own pace, depend on what else the machine runs: a
    # second run is allowed when the first misses a figure (both runs' figures are in the
    # failure message).
    figures = []
    for _ in range(2):
        tag = run_tag()
        result = emu.run_emulated(scenario, tag=tag)
        s = result.summary
        flow = result.flows.iloc[0]
        figures.append(
            {
                "goodput_share": flow["goodput_bps"] / MAX_GOODPUT_BPS,
                **{k: s[k] for k in ("lateness_p50_us", "lateness_p99_us", "lateness_within_100us")},
            }
        )
        if s["lateness_within_100us"] >= 0.99 and flow["goodput_bps"] >= 0.97 * MAX_GOODPUT_BPS:
            break
    assert s["lateness_within_100us"] >= 0.99, figures
    assert flow["cc"] == "cubic"
    assert flow["goodput_bps"] >= 0.97 * MAX_GOODPUT_BPS, figures
    assert flow["goodput_bps"] <= MAX_GOODPUT_BPS * 1.001
    # Idle pings (sent before the flow starts): 20 ms plus two 122-byte serialisations at
    # 50 Mbit/s (2 x 19.5 us), within 0.5 ms.
    pings = result.ping_series
    idle = pings[pings["t"] < 2.0]["rtt_ms"]
    assert len(idle) >= 9
    assert abs(idle.median() - BASE_RTT_MS) <= 0.5, idle.describe()
    assert s["emulated"] is True
    # Every written packet's write time is counted, per host (the server receives the data,
    # the client the ACKs), and the writes took part of the run, not all of it.
    writes = result.raw["emulator"]["writes"]
    assert [w["host"] for w in writes] == [0, 1]
    assert sum(w["packets"] for w in writes) == result.raw["emulator"]["lateness"]["packets"]
    assert all(0 < w["p50_us"] <= w["p99_us"] <= w["max_us"] for w in writes), writes
    assert 0 < s["write_share"] < 0.5
    # The emulator's own lateness leaves out waits behind the same host's writes: never more
    # late than every packet's.
    assert s["lateness_own_within_100us"] >= s["lateness_within_100us"]
    assert s["lateness_own_p99_us"] <= s["lateness_p99_us"]
    # The queue report is the simulator's: the bottleneck was busy, and never held more than
    # its 1-BDP buffer (50e6 x 0.02 / 8 = 125000 bytes, 84 packets of 1500 bytes).
    bottleneck = result.queues.set_index("name").loc["bottleneck"]
    assert bottleneck["max_backlog_pkts"] <= 84
    assert bottleneck["tx_packets"] > 0
    assert "tsq" in s["notes"] and "not reproduced" in s["notes"]
    assert set(result.flow_series["cwnd"]) != {0}
    assert leftovers(tag) == []


@needs_emulator
def test_the_drop_log_lists_every_dropped_segment_after_its_connections_syn(binary, tmp_path):
    # A quarter-BDP buffer: cubic's slow start overflows it.
    scenario = scenarios.build(
        "tcp_upload", rate="50mbit", rtt="20ms", buffer="0.25bdp", qdisc="pfifo", cc=["cubic"],
        length="3s", delay="0.5s",
    )  # fmt: skip
    log = tmp_path / "drops.csv"
    tag = run_tag()
    result = emu.run_emulated(scenario, tag=tag, drop_log=log)
    rows = pd.read_csv(log)
    assert set(rows["kind"]) == {"syn", "drop"}
    drops = rows[rows["kind"] == "drop"]
    flow = result.flows.iloc[0]
    assert flow["drops"] > 0
    assert len(drops) == flow["drops"]
    # Every drop is a full data segment of a connection whose SYN was read before it, at a
    # whole number of segments past the initial sequence number.
    syns = rows[rows["kind"] == "syn"].set_index(["src", "src_port", "dst", "dst_port"])
    for d in drops.itertuples():
        syn = syns.loc[(d.src, d.src_port, d.dst, d.dst_port)]
        assert syn["t_ns"] < d.t_ns
        assert d.payload == 1448
        assert ((d.seq - syn["seq"] - 1) % 2**32) % 1448 == 0
    assert drops["t_ns"].is_monotonic_increasing
    assert leftovers(tag) == []


@needs_emulator
def test_trace_path_delivers_at_its_opportunities(binary):
    # A constant 12 Mbit/s schedule: one 1504-byte opportunity (a 1500-byte packet and its TUN
    # header) every 1 ms, so a saturated flow gets at most 1000 x 1448 x 8 = 11.584 Mbit/s.
    scenario = {
        "duration": "4s",
        "path": {
            "kind": "trace",
            "rtt": "20ms",
            "uplink": {
                "schedule": [{"at": "0s", "rate": "12mbit"}],
                "queue": {"kind": "pfifo", "limit": "60p"},
            },
            "downlink": {"schedule": [{"at": "0s", "rate": "12mbit"}]},
        },
        "warmup": "1s",
        "flows": [{"cc": "cubic"}],
        "pings": [{}],
    }
    tag = run_tag()
    result = emu.run_emulated(scenario, tag=tag)
    goodput = result.flows.iloc[0]["goodput_bps"]
    assert 0.9 * 11.584e6 <= goodput <= 11.584e6 * 1.01, goodput
    assert list(result.queues["name"][:2]) == ["uplink", "downlink"]
    assert leftovers(tag) == []


# The emulated Wi-Fi download against the simulator's: within 10%, the tolerance issue 6 sets for
# simulator against kernel on wired paths.
WIFI_GOODPUT_TOLERANCE = 0.10


@needs_emulator
def test_wifi_download_is_aggregated_at_the_ap_as_in_the_simulator(binary):
    # A 10 s cubic download from the server to one ath9k station (HT40 2x2, 300 Mbit/s PHY)
    # over the default 2 ms base RTT: the AP's TXQ fills and it sends A-MPDUs of ~30 MPDUs, the
    # simulator's figure for the same scenario.
    options = {"path_kind": "wifi", "chipset": "ath9k", "cc": ["cubic"], "length": "10s", "delay": "1s"}
    scenario = scenario_from(None, "tcp_download", options)
    sim = api.run(scenario)
    args = ["run", "--test", "tcp_download", "--path", "wifi", "--chipset", "ath9k", "--cc", "cubic"]
    args += ["--length", "10s", "--delay", "1s", "--tag", run_tag(), "--json"]
    done = RUNNER.invoke(app, ["emu", *args])
    assert done.exit_code == 0, done.output
    kernel = json.loads(done.stdout)
    goodput, sim_goodput = kernel["flows"][0]["goodput_bps"], sim.flows.iloc[0]["goodput_bps"]
    assert abs(goodput - sim_goodput) <= WIFI_GOODPUT_TOLERANCE * sim_goodput, (goodput, sim_goodput)
    nodes = {w["name"]: w for w in kernel["wifi"]}
    assert set(nodes) == {"wifi-ap", "wifi-sta1"}
    assert nodes["wifi-ap"]["ampdu_mean"] > 4, nodes["wifi-ap"]
    assert nodes["wifi-ap"]["ppdus"] > 0 and nodes["wifi-sta1"]["ppdus"] > 0
    notes = kernel["emulator"]["notes"]
    assert any(n.startswith("path.kind = wifi: uploads cross the station's radio") for n in notes), notes
    assert [q["name"] for q in kernel["queues"]] == ["backhaul", "backhaul-rev", "server-nic"]
    # A-MPDUs reach the station as batches of packets due at one instant.
    lateness = kernel["emulator"]["lateness"]
    assert 0 < lateness["batches"] < lateness["packets"] / 2, lateness
    assert lateness["batch_within_100us"] is not None and lateness["batch_p99_us"] is not None


def start_run(tag: str, cc: str = "cubic") -> subprocess.Popen:
    """``wificc emu run`` of a long upload on ``cc`` in a child process, once its namespaces
    exist (and its congestion control is loaded)."""
    code = "import sys; from wificc.cli import app; app(sys.argv[1:])"
    args = [
        "emu",
        "run",
        "--rate",
        "20mbit",
        "--rtt",
        "10ms",
        "--length",
        "30s",
        "--delay",
        "0s",
        "--tag",
        tag,
        "--cc",
        cc,
    ]
    child = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while len(leftovers(tag)) < 2:
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "the run did not start"
        time.sleep(0.1)
    time.sleep(1.0)  # traffic is flowing
    return child


def wait_clean(tag: str, seconds: float = 15.0) -> list[str]:
    deadline = time.monotonic() + seconds
    while leftovers(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    return leftovers(tag)


def bpf_left(name: str, seconds: float = 15.0) -> list[str]:
    """What is left of BPF variant ``name`` once the kernel had time to release it."""
    deadline = time.monotonic() + seconds
    while True:
        left = [
            *(["available"] if name in bpf.available() else []),
            *(["registered"] if bpf.registered(name) is not None else []),
            *(["pinned"] if bpf.pin_dir(name).exists() else []),
        ]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


@needs_emulator
@pytest.mark.parametrize(
    "cc", ["cubic", pytest.param("wbbr", marks=needs_bpf)], ids=["kernel-cc", "bpf-variant-loaded-by-the-run"]
)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_killing_a_run_part_way_leaves_nothing_behind(binary, sig, cc):
    # SIGINT stops the front end through its clean-up path; SIGKILL gives it none, and the
    # emulator cleans up on its own (parent-death signal, end of its standard input), as does
    # the guard that unloads the BPF variant the run loaded (end of its standard input).
    if cc != "cubic":
        bpf.build()
        bpf.unload([cc])
    tag = run_tag()
    child = start_run(tag, cc)
    try:
        if cc != "cubic":
            assert cc in bpf.available(), "the run loaded the variant"
        os.kill(child.pid, sig)
        child.communicate(timeout=30)
        assert wait_clean(tag) == []
        if cc != "cubic":
            assert bpf_left(cc) == []
    finally:
        child.kill()


@needs_emulator
def test_terminating_the_emulator_itself_leaves_nothing_behind(binary):
    tag = run_tag()
    child = start_run(tag)
    try:
        # The emulator is the run's child process.
        emulators = subprocess.run(["pgrep", "-P", str(child.pid)], capture_output=True, text=True).stdout.split()
        assert emulators, "no emulator process"
        for pid in emulators:
            os.kill(int(pid), signal.SIGTERM)
        assert wait_clean(tag) == []
        child.communicate(timeout=60)
        assert child.returncode != 0, "the run reports that its emulator went away"
    finally:
        child.kill()


@needs_emulator
def test_cleanup_command_removes_leftovers_by_prefix(binary):
    subprocess.run(["ip", "netns", "add", "wcc-zz9-s"], check=True)
    try:
        result = RUNNER.invoke(app, ["emu", "cleanup", "--prefix", "wcc-zz9-"])
        assert result.exit_code == 0, result.output
        assert "removed wcc-zz9-s" in result.stdout
        assert leftovers("zz9") == []
        again = RUNNER.invoke(app, ["emu", "cleanup", "--prefix", "wcc-zz9-"])
        assert again.stdout.strip() == "nothing to remove"
        refused = RUNNER.invoke(app, ["emu", "cleanup", "--prefix", "eth"])
        assert refused.exit_code == 2
        assert '--prefix "eth": expected a prefix starting with "wcc-"' in refused.stderr
    finally:
        subprocess.run(["ip", "netns", "del", "wcc-zz9-s"], capture_output=True)
