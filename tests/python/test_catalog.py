"""The test catalog beyond the four TCP tests: rrul, rrul_be and our own tests.

Each test's scenario dict is pinned for given options (timing by hand: with LENGTH 2 s and
DELAY 0.5 s the flows run from 0.5 s to 2.5 s of a 3 s run), bad options are refused with a
message naming the option, and each test runs once, briefly, through wificc.run.
"""

import pytest
import wificc
from wificc import scenarios

# Two seconds of TCP after half a second of ping-only time, half a second after.
SHORT = {"length": "2s", "delay": "0.5s"}
START, STOP, DURATION = "500000000ns", "2500000000ns", "3000000000ns"
PING_EVERY = "200000000ns"
# A Mahimahi trace with one 1500-byte opportunity per millisecond: 1500 x 8 x 1000 = 12 Mbit/s.
TRACE_12MBIT = "".join(f"{ms}\n" for ms in range(1, 11))
# TCP payload per 1500-byte IP packet (MSS 1448 with timestamps).
PAYLOAD_SHARE = 1448 / 1500


@pytest.fixture(scope="module")
def trace_files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("traces")
    up, down = directory / "12mbit.up", directory / "12mbit.down"
    up.write_text(TRACE_12MBIT)
    down.write_text(TRACE_12MBIT)
    return up, down


def flow(name, cc="cubic", direction="up", **extra):
    return {
        "name": name,
        "cc": cc,
        "cc_params": extra.pop("cc_params", {}),
        "direction": direction,
        "start": START,
        "stop": STOP,
        **extra,
    }


def icmp(name="Ping (ms) ICMP", **extra):
    return {"name": name, "kind": "icmp", **extra, "interval": PING_EVERY}


def udp(name, dscp):
    return {"name": name, "kind": "udp", "dscp": dscp, "interval": PING_EVERY}


def phaseless(pings):
    """The pings without their start phases (each pinger's own, drawn from the seed)."""
    return [{k: v for k, v in p.items() if k != "start"} for p in pings]


# --- scenario dicts ------------------------------------------------------------------------


def test_rrul_is_flents_four_classes_both_ways_with_four_pings():
    s = scenarios.build("rrul", cc=["bbr"], **SHORT)
    # Independent pingers, as Flent runs them: each starts at its own phase within the
    # interval, drawn from the seed.
    starts = [scenarios.duration_ns("start", p.pop("start")) for p in s["pings"]]
    interval = scenarios.duration_ns("interval", s["pings"][0]["interval"])
    assert len(set(starts)) == 4 and all(0 <= t < interval for t in starts)
    again = scenarios.build("rrul", cc=["bbr"], **SHORT)
    assert [p["start"] for p in again["pings"]] == [f"{t}ns" for t in starts]
    other = scenarios.build("rrul", cc=["bbr"], seed=2, **SHORT)
    assert [p["start"] for p in other["pings"]] != [f"{t}ns" for t in starts]
    assert s == {
        "path": {"kind": "wired", "rate": "50mbit", "rtt": "20ms"},
        "stack": {},
        "duration": DURATION,
        "flows": [
            flow("TCP upload BE", "bbr", dscp="CS0"),
            flow("TCP upload BK", "bbr", dscp="CS1"),
            flow("TCP upload CS5", "bbr", dscp="CS5"),
            flow("TCP upload EF", "bbr", dscp="EF"),
            flow("TCP download BE", "bbr", "down", dscp="CS0"),
            flow("TCP download BK", "bbr", "down", dscp="CS1"),
            flow("TCP download CS5", "bbr", "down", dscp="CS5"),
            flow("TCP download EF", "bbr", "down", dscp="EF"),
        ],
        "pings": [
            icmp(),
            udp("Ping (ms) UDP EF", "EF"),
            udp("Ping (ms) UDP BK", "CS1"),
            udp("Ping (ms) UDP BE", "CS0"),
        ],
    }


def test_rrul_takes_one_cc_per_flow_and_rrul_be_marks_everything_best_effort():
    ccs = ["cubic", "reno", "bbr", "bbr3", "vegas", "nv", "dctcp", "yeah"]
    assert [f["cc"] for f in scenarios.build("rrul", cc=ccs)["flows"]] == ccs
    s = scenarios.build("rrul_be", ping=False, **SHORT)
    assert [(f["name"], f["direction"], f["dscp"]) for f in s["flows"]] == [
        ("TCP upload BE", "up", "CS0"),
        ("TCP upload BE2", "up", "CS0"),
        ("TCP upload BE3", "up", "CS0"),
        ("TCP upload BE4", "up", "CS0"),
        ("TCP download BE", "down", "CS0"),
        ("TCP download BE2", "down", "CS0"),
        ("TCP download BE3", "down", "CS0"),
        ("TCP download BE4", "down", "CS0"),
    ]
    # --no-ping drops the ICMP ping only: the UDP pings are the test.
    assert phaseless(s["pings"]) == [udp(f"Ping (ms) UDP BE{i}", "CS0") for i in (1, 2, 3)]


def test_bottleneck_curve_is_one_upload_under_a_static_packet_tsq():
    s = scenarios.build("bottleneck_curve", tsq_packets=64, cc=["reno"], rate="100mbit", **SHORT)
    assert s == {
        "path": {"kind": "wired", "rate": "100mbit", "rtt": "20ms"},
        "stack": {"tsq": "static:64p"},
        "duration": DURATION,
        "flows": [flow("TCP upload", "reno")],
        "pings": [icmp()],
    }


def test_rtt_fairness_puts_each_rtt_on_its_own_client():
    s = scenarios.build("rtt_fairness", rtts="50ms, 10ms,30ms", cc=["bbr", "cubic", "bbr_pg"], **SHORT)
    # path.rtt is the shortest RTT; each client adds the difference: 40, 0 and 20 ms.
    assert s["path"] == {
        "kind": "wired",
        "rate": "50mbit",
        "rtt": "10ms",
        "clients": 3,
        "client_rtt": ["40000000ns", "0ns", "20000000ns"],
    }
    assert s["flows"] == [
        flow("TCP upload 50ms", "bbr", client=0),
        flow("TCP upload 10ms", "cubic", client=1),
        flow("TCP upload 30ms", "bbr_pg", client=2),
    ]
    assert phaseless(s["pings"]) == [
        icmp("Ping (ms) ICMP 50ms", client=0),
        icmp("Ping (ms) ICMP 10ms", client=1),
        icmp("Ping (ms) ICMP 30ms", client=2),
    ]
    # The default is the BBR-PG study's 10 ms against 50 ms, from a list as a sweep grid gives it.
    default = scenarios.build("rtt_fairness", direction="down", buffer="1bdp")
    assert default["path"]["client_rtt"] == ["0ns", "40000000ns"]
    assert default["path"]["buffer"] == "1bdp"
    assert [f["name"] for f in default["flows"]] == ["TCP download 10ms", "TCP download 50ms"]
    assert scenarios.build("rtt_fairness", rtts=["10ms", "50ms"])["flows"][1]["name"] == "TCP upload 50ms"


def test_inter_protocol_runs_cc_against_cubic_with_params_on_cc_only():
    s = scenarios.build("inter_protocol", cc=["bbr_pg"], cc_params={"gamma_cap": 2.0}, **SHORT)
    assert s["flows"] == [
        flow("TCP upload bbr_pg", "bbr_pg", cc_params={"gamma_cap": 2.0}),
        flow("TCP upload cubic", "cubic"),
    ]
    assert s["pings"] == [icmp()]
    against = scenarios.build("inter_protocol", cc=["bbr"], against="reno", direction="down")
    assert [(f["cc"], f["direction"]) for f in against["flows"]] == [("bbr", "down"), ("reno", "down")]


def test_nflows_names_n_flows_as_flent_duplicates():
    s = scenarios.build("nflows", flows=3, cc=["bbr"], **SHORT)
    assert s["flows"] == [flow(f"TCP upload::{i}", "bbr") for i in (1, 2, 3)]
    assert s["pings"] == [icmp()]


def test_trace_replays_both_files_over_100ms_by_default(trace_files):
    up, down = trace_files
    s = scenarios.build("trace", trace_up=str(up), trace_down=down, cc=["bbr"], **SHORT)
    assert s == {
        "path": {
            "kind": "trace",
            "rtt": "100ms",
            "uplink": {"trace": str(up.resolve())},
            "downlink": {"trace": str(down.resolve())},
        },
        "stack": {},
        "duration": DURATION,
        "flows": [flow("TCP download", "bbr", "down")],
        "pings": [icmp()],
    }
    # A droptail queue both ways, another base RTT.
    queued = scenarios.build("trace", trace_up=up, trace_down=down, rtt="40ms", buffer="100p")
    assert queued["path"]["rtt"] == "40ms"
    assert queued["path"]["uplink"]["queue"] == {"kind": "pfifo", "limit": "100p"}
    assert queued["path"]["downlink"]["queue"] == {"kind": "pfifo", "limit": "100p"}


def test_step_counts_its_step_from_the_start_of_the_flows():
    # Default: 12 Mbit/s, 24 Mbit/s from 3 s into the TCP flows = 5 s + 3 s of the run.
    s = scenarios.build("step")
    schedule = [{"at": "0s", "rate": "12mbit"}, {"at": "8000000000ns", "rate": "24mbit"}]
    assert s["path"] == {
        "kind": "trace",
        "rtt": "100ms",
        "uplink": {"schedule": schedule},
        "downlink": {"schedule": schedule},
    }
    assert s["flows"][0]["direction"] == "down"
    # One time T steps every T: 0.5 s + 0.5 s and 0.5 s + 1 s; a list gives each step.
    every = scenarios.build("step", rates="6mbit,12mbit,24mbit", step_at="0.5s", **SHORT)
    assert [(x["at"], x["rate"]) for x in every["path"]["downlink"]["schedule"]] == [
        ("0s", "6mbit"),
        ("1000000000ns", "12mbit"),
        ("1500000000ns", "24mbit"),
    ]
    listed = scenarios.build("step", rates=["6mbit", "12mbit", "24mbit"], step_at="0.2s,1.9s", **SHORT)
    assert [x["at"] for x in listed["path"]["uplink"]["schedule"]] == ["0s", "700000000ns", "2400000000ns"]
    # One rate: a constant link, the default step time unused.
    constant = scenarios.build("step", rates="12mbit", **SHORT)
    assert constant["path"]["downlink"] == {"schedule": [{"at": "0s", "rate": "12mbit"}]}


def test_any_test_runs_on_the_trace_path_with_path_trace(trace_files):
    s = scenarios.build("rrul", path_kind="trace", rates="20mbit", qdisc="codel", rtt="60ms")
    constant = {"schedule": [{"at": "0s", "rate": "20mbit"}], "queue": {"kind": "codel"}}
    assert s["path"] == {"kind": "trace", "rtt": "60ms", "uplink": constant, "downlink": constant}
    up, down = trace_files
    base = {
        "path": {
            "kind": "trace",
            "rtt": "30ms",
            "uplink": {"trace": str(up)},
            "downlink": {"trace": str(down)},
        }
    }
    # A trace base keeps its traces; --rates replaces them; --trace-down replaces one direction.
    assert scenarios.build("tcp_upload", base=base)["path"] == base["path"]
    assert scenarios.build("nflows", flows=2, base=base, rates="5mbit")["path"]["uplink"] == {
        "schedule": [{"at": "0s", "rate": "5mbit"}]
    }
    both = scenarios.build("inter_protocol", cc=["bbr"], base=base, trace_down=up)
    assert both["path"]["downlink"] == {"trace": str(up.resolve())}
    # The trace tests replace a wired base's path with the trace path.
    assert (
        scenarios.build("step", base={"path": {"kind": "wired", "rate": "1mbit", "rtt": "1ms"}})["path"]["kind"]
        == "trace"
    )


def test_every_catalog_entry_validates_in_the_core(trace_files):
    up, down = trace_files
    required = {
        "tcp_nup": {"flows": 2},
        "tcp_ndown": {"flows": 2},
        "bottleneck_curve": {"tsq_packets": 16},
        "inter_protocol": {"cc": ["bbr"]},
        "nflows": {"flows": 2},
        "trace": {"trace_up": up, "trace_down": down},
    }
    for test in scenarios.TESTS:
        s = scenarios.build(test, **required.get(test, {}))
        normalised = wificc.validate(s)
        assert len(normalised["flows"]) == len(s["flows"]), test


# --- bad options ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("test", "options", "message"),
    [
        (
            "rrul",
            {"flows": 4},
            "--flows: rrul sets its flows itself (4 uploads and 4 downloads marked BE (CS0)",
        ),
        ("rrul", {"direction": "down"}, "--direction: rrul runs flows both ways; got 'down'"),
        (
            "rrul",
            {"cc": ["bbr", "cubic"]},
            "--cc: got 2, expected one for every flow or one each for the 8 flows",
        ),
        (
            "tcp_upload",
            {"tsq_packets": 4},
            "--tsq-packets: tcp_upload does not take it; it is an option of bottleneck_curve",
        ),
        ("bottleneck_curve", {}, "--tsq-packets: bottleneck_curve needs the static TSQ limit"),
        (
            "bottleneck_curve",
            {"tsq_packets": 0},
            "--tsq-packets: got 0, expected a whole number of packets >= 1",
        ),
        (
            "bottleneck_curve",
            {"tsq_packets": 4, "tsq": "2ms"},
            "--tsq: bottleneck_curve sets the TSQ with --tsq-packets",
        ),
        (
            "bottleneck_curve",
            {"tsq_packets": 4, "cc": ["bbr", "reno"]},
            "--cc: got 2 congestion controls, but bottleneck_curve runs 1 upload of one",
        ),
        ("bottleneck_curve", {"tsq_packets": 4, "flows": 2}, "--flows: bottleneck_curve runs 1 flow"),
        ("rtt_fairness", {"rtts": "10ms"}, "--rtts: got '10ms', expected at least two RTTs"),
        ("rtt_fairness", {"rtts": "10ms,0.01s"}, "--rtts: got '10ms,0.01s', expected distinct RTTs"),
        ("rtt_fairness", {"rtts": "10ms,,50ms"}, "--rtts: got '10ms,,50ms', expected a comma-separated list"),
        ("rtt_fairness", {"rtts": "10ms,soon"}, "--rtts: got 'soon', expected a duration such as"),
        ("rtt_fairness", {"rtt": "20ms"}, "--rtt: rtt_fairness sets each flow's RTT with --rtts"),
        (
            "rtt_fairness",
            {"path_kind": "trace"},
            "--path: got 'trace', but rtt_fairness runs on the wired path",
        ),
        (
            "rtt_fairness",
            {"cc": ["a", "b", "c"]},
            "--cc: got 3, expected one for every flow or one each for the 2 RTTs",
        ),
        ("rtt_fairness", {"rates": "1mbit"}, "--rates: rtt_fairness does not take it"),
        (
            "inter_protocol",
            {},
            "--cc: inter_protocol needs one congestion control to run against cubic, got 0",
        ),
        ("inter_protocol", {"cc": ["cubic"]}, "--against: got 'cubic', the same as --cc"),
        ("inter_protocol", {"cc": ["bbr"], "flows": 3}, "--flows: inter_protocol sets its flows itself"),
        ("nflows", {"cc": ["bbr"]}, "--flows: nflows needs the number of flows, such as --flows 4"),
        (
            "nflows",
            {"flows": 2, "cc": ["bbr", "reno"]},
            "--cc: got 2 congestion controls, but nflows runs N uploads",
        ),
        ("trace", {}, "--trace-up: the trace path needs a trace file each way"),
        (
            "trace",
            {"trace_up": "/no/such/trace"},
            "--trace-up: got '/no/such/trace', expected a Mahimahi trace file",
        ),
        ("trace", {"rates": "12mbit"}, "--rates: trace does not take it; it is an option of tcp_upload"),
        ("trace", {"path_kind": "wired"}, "--path: got 'wired', but trace runs on the trace path"),
        ("step", {"rate": "10mbit"}, "--rate: the trace path's capacity comes from its traces or --rates"),
        ("step", {"trace_up": "x"}, "--trace-up: step does not take it; it is an option of tcp_upload"),
        (
            "step",
            {"rates": "12mbit,fast"},
            "--rates: got 'fast', expected a rate such as '50mbit' or '1gbit'",
        ),
        (
            "step",
            {"rates": "12mbit,3fast"},
            "--rates: got '3fast', expected a rate unit of bit, kbit, mbit, gbit (bit/s; also written kbit/s, "
            "Mbit/s, Gbit/s) or bps, kbps, mbps, gbps (bytes/s, as in tc)",
        ),
        ("step", {"rates": "12mbit,-1mbit"}, "--rates: got '-1mbit', expected a non-negative rate"),
        ("step", {"rates": "12mbit,0"}, "--rates: got '12mbit,0', expected a positive last rate"),
        (
            "step",
            {"rates": "12mbit", "step_at": "1s"},
            "--step-at: got '1s', but --rates has one rate (no step)",
        ),
        (
            "step",
            {"step_at": "1s,2s"},
            "--step-at: got '1s,2s', expected 1 times (one per rate after the first)",
        ),
        ("step", {"step_at": "0s"}, "--step-at: got '0s', expected increasing times after 0s"),
        (
            "step",
            {"rates": "1mbit,2mbit,3mbit", "step_at": "2s,1s"},
            "--step-at: got '2s,1s', expected increasing",
        ),
        ("step", {"length": "3s"}, "--step-at: got '3s', expected steps within the 3s of TCP (--length)"),
        (
            "tcp_upload",
            {"trace_down": "x"},
            "--trace-down: needs the trace path (--path trace, or the trace and step",
        ),
        ("tcp_upload", {"path_kind": "trace"}, "--trace-up: the trace path needs a trace file each way"),
        (
            "tcp_upload",
            {"path_kind": "trace", "rates": "1mbit,2mbit"},
            "--step-at: --rates has 2 rates; say when",
        ),
        (
            "tcp_upload",
            {"path_kind": "trace", "step_at": "1s", "trace_up": "u", "trace_down": "d"},
            "--step-at: needs --rates",
        ),
    ],
)
def test_bad_options_name_the_option(test, options, message):
    with pytest.raises(ValueError) as caught:
        scenarios.build(test, **options)
    assert str(caught.value).startswith(message)


def test_trace_files_and_a_schedule_exclude_each_other(trace_files):
    up, down = trace_files
    with pytest.raises(ValueError, match="^--rates: a trace path replays trace files"):
        scenarios.build("tcp_download", path_kind="trace", trace_up=up, trace_down=down, rates="1mbit")


def test_rate_parsing_agrees_with_the_core():
    # tc's units: "bit" forms are bit/s (also "Mbit/s"), "bps" forms bytes/s; a bare number is bit/s.
    assert scenarios.rate_bps("x", "2.5gbps") == 20_000_000_000
    assert scenarios.rate_bps("x", "12Mbit/s") == 12_000_000
    assert scenarios.rate_bps("x", "3kbps") == 24_000
    assert scenarios.rate_bps("x", "1500") == 1500
    for text in ("2.5gbps", "12Mbit/s", "3kbps", "1500", "1e3kbit", "7bps"):
        path = {"kind": "wired", "rate": text, "rtt": "1ms"}
        # The core normalises a rate to "<bit/s>bit".
        assert wificc.validate({"path": path})["path"]["rate"] == f"{scenarios.rate_bps('x', text)}bit"
    # Spellings whose unit is ambiguous are refused by both, with the same list.
    for text in ("50MB/s", "300k", "50mb", "1g"):
        with pytest.raises(ValueError) as front:
            scenarios.rate_bps("path.rate", text)
        with pytest.raises(ValueError) as core:
            wificc.validate({"path": {"kind": "wired", "rate": text, "rtt": "1ms"}})
        want = (
            f'path.rate: got "{text}", expected a rate unit of bit, kbit, mbit, gbit (bit/s; also written '
            "kbit/s, Mbit/s, Gbit/s) or bps, kbps, mbps, gbps (bytes/s, as in tc)"
        )
        assert str(core.value) == want
        assert str(front.value) == want.replace(f'"{text}"', repr(text))


# --- describe ------------------------------------------------------------------------------


def test_describe_documents_every_test_and_its_own_options():
    assert [name for name, _ in scenarios.catalog()] == list(scenarios.TESTS)
    for name, spec in scenarios.TESTS.items():
        text = scenarios.describe(name)
        assert text.startswith(f"{name}: {spec.description}\n")
        for option in spec.options:
            if option not in scenarios.TRACE_OPTIONS or spec.path == "trace":
                assert f"--{option.replace('_', '-')}: " in text, (name, option)
    rrul = scenarios.describe("rrul").splitlines()
    assert [line for line in rrul if line.startswith("  series:")] == [
        "  series:  TCP upload BE, TCP upload BK, TCP upload CS5, TCP upload EF, TCP download BE, "
        "TCP download BK, TCP download CS5, TCP download EF"
    ]
    assert [line for line in rrul if line.startswith("  pings:")] == [
        "  pings:   Ping (ms) ICMP, Ping (ms) UDP EF (EF), Ping (ms) UDP BK (CS1), Ping (ms) UDP BE (CS0), "
        "every STEP (200ms) for LENGTH + 2 x DELAY"
    ]
    step = scenarios.describe("step").splitlines()
    assert step[-2:] == [
        "  --rates: rates of a schedule on both trace directions, such as '12mbit,24mbit' (default 12mbit,24mbit)",
        "  --step-at: when each later rate starts, after the start of the TCP flows: one time per rate after "
        "the first, or one time T for a step every T (default 3s)",
    ]
    assert "  --tsq-packets: static TSQ limit in packets: stack.tsq = 'static:<N>p' (required)" in (
        scenarios.describe("bottleneck_curve").splitlines()
    )
    with pytest.raises(ValueError, match="^test: got 'tcp_sideways', expected one of tcp_upload"):
        scenarios.describe("tcp_sideways")


# --- one short run of each test ------------------------------------------------------------


def names(frame):
    return list(dict.fromkeys(frame["name"]))


def test_rrul_runs_eight_marked_flows_and_four_pings():
    r = wificc.run(scenarios.build("rrul", **SHORT))
    flows = r.flows
    assert list(zip(flows["name"], flows["direction"], flows["dscp"], strict=True)) == [
        ("TCP upload BE", "up", 0),
        ("TCP upload BK", "up", 8),
        ("TCP upload CS5", "up", 40),
        ("TCP upload EF", "up", 46),
        ("TCP download BE", "down", 0),
        ("TCP download BK", "down", 8),
        ("TCP download CS5", "down", 40),
        ("TCP download EF", "down", 46),
    ]
    assert list(zip(r.pings["name"], r.pings["kind"], r.pings["dscp"], strict=True)) == [
        ("Ping (ms) ICMP", "icmp", 0),
        ("Ping (ms) UDP EF", "udp", 46),
        ("Ping (ms) UDP BK", "udp", 8),
        ("Ping (ms) UDP BE", "udp", 0),
    ]
    # A ping every 0.2 s for 3 s: 15 sent by each.
    assert list(r.pings["sent"]) == [15] * 4
    assert names(r.flow_series) == list(flows["name"])
    assert names(r.ping_series) == list(r.pings["name"])
    assert r.summary["total_goodput_bps"] > 0
    assert (flows["goodput_bps"] > 0).all()


def test_rrul_be_runs_best_effort_only():
    r = wificc.run(scenarios.build("rrul_be", **SHORT))
    assert list(r.flows["dscp"]) == [0] * 8
    assert names(r.ping_series) == [
        "Ping (ms) ICMP",
        "Ping (ms) UDP BE1",
        "Ping (ms) UDP BE2",
        "Ping (ms) UDP BE3",
    ]
    assert r.summary["total_goodput_bps"] > 0


def test_bottleneck_curve_holds_the_static_limit():
    r = wificc.run(scenarios.build("bottleneck_curve", tsq_packets=1, **SHORT))
    (f,) = r.raw["flows"]
    assert (f["name"], r.scenario["stack"]["tsq"]) == ("TCP upload", "static:1p")
    # One packet below TCP at a time: TSQ throttles, and never lets more through (the one-skb
    # exception aside).
    assert f["tsq_throttled"] > 0
    assert f["tsq_max_excess"] <= 0
    assert f["goodput_bps"] > 0
    assert names(r.flow_series) == ["TCP upload"]


def test_rtt_fairness_clients_see_their_base_rtts():
    r = wificc.run(scenarios.build("rtt_fairness", **SHORT))
    assert names(r.flow_series) == ["TCP upload 10ms", "TCP upload 50ms"]
    idle = r.ping_series.groupby("name", sort=False)["rtt_ms"].min()
    # The first ping leaves an idle path: base RTT plus under a millisecond of serialisation.
    assert 10.0 <= idle["Ping (ms) ICMP 10ms"] < 11.0
    assert 50.0 <= idle["Ping (ms) ICMP 50ms"] < 51.0
    assert (r.flows["goodput_bps"] > 0).all()


def test_inter_protocol_runs_both_congestion_controls():
    r = wificc.run(scenarios.build("inter_protocol", cc=["bbr"], **SHORT))
    assert list(zip(r.flows["name"], r.flows["cc"], strict=True)) == [
        ("TCP upload bbr", "bbr"),
        ("TCP upload cubic", "cubic"),
    ]
    assert (r.flows["goodput_bps"] > 0).all()
    assert 0.5 <= r.summary["jain"] <= 1.0


def test_nflows_reports_retransmissions_per_flow():
    r = wificc.run(scenarios.build("nflows", flows=3, buffer="10p", **SHORT))
    assert names(r.flow_series) == ["TCP upload::1", "TCP upload::2", "TCP upload::3"]
    # Three cubic flows into a 10-packet buffer must lose packets and retransmit them.
    assert r.flows["retrans"].sum() > 0


def test_trace_goodput_stays_under_the_traces_rate(trace_files):
    up, down = trace_files
    r = wificc.run(scenarios.build("trace", trace_up=up, trace_down=down, **SHORT))
    (f,) = r.raw["flows"]
    assert (f["name"], f["direction"]) == ("TCP download", "down")
    assert 0 < f["goodput_bps"] <= 12e6 * PAYLOAD_SHARE
    assert {"uplink", "downlink"} <= set(r.queues["name"])
    # Idle path: 100 ms of mm-delay plus at most a millisecond waiting for an opportunity each way.
    first = r.ping_series["rtt_ms"].iloc[0]
    assert 100.0 <= first <= 102.0 + 1e-9


def test_step_uses_the_capacity_after_the_step():
    options = {"length": "4s", "delay": "0.5s", "rtt": "20ms", "step_at": "1s", "cc": ["cubic"]}
    stepped = wificc.run(scenarios.build("step", **options))
    (f,) = stepped.raw["flows"]
    # Over 4 s with 12 Mbit/s for the first second, then 24: at most (12 + 3 x 24) / 4 = 21 Mbit/s
    # of IP; more than the 12 Mbit/s link could carry, so the flow took the new capacity.
    assert 12e6 * PAYLOAD_SHARE < f["goodput_bps"] <= 21e6 * PAYLOAD_SHARE
    assert names(stepped.flow_series) == ["TCP download"]


def test_flows_are_spread_over_the_stations_in_turn():
    s = scenarios.build("tcp_ndown", path_kind="wifi", stations=4, flows=4, length="2s", delay="0s")
    assert [f["client"] for f in s["flows"]] == [0, 1, 2, 3]
    r = wificc.run(s)
    assert (r.flows["goodput_bps"] > 1e6).all()
    stations = r.wifi[r.wifi["node"] > 0]
    assert (stations["ppdus"] > 0).all()
    # One station: no client field (the default).
    one = scenarios.build("tcp_nup", path_kind="wifi", flows=2, length="2s")
    assert all("client" not in f for f in one["flows"])
