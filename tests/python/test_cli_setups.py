"""Every study setup from the command line: stations and flows per station, the Wi-Fi TXQ,
per-flow congestion-control parameters, and the resolved scenario printed as TOML."""

from __future__ import annotations

import json
import tomllib

import pytest
from typer.testing import CliRunner
from wificc import api, cli, scenarios

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(cli.app, list(args))


def printed(*args: str) -> dict:
    result = invoke("run", *args, "--print-scenario")
    assert result.exit_code == 0, result.output
    return tomllib.loads(result.output)


def test_four_stations_one_flow_each_all_carry_goodput():
    # The reproducer: tcp_ndown with 4 stations and 4 flows put every flow on station 1.
    result = invoke(
        "run",
        "tcp_ndown",
        "--path",
        "wifi",
        "--stations",
        "4",
        "--flows",
        "4",
        "--length",
        "3s",
        "--delay",
        "1s",
        "--json",
    )
    assert result.exit_code == 0, result.output
    flows = json.loads(result.output)["flows"]
    assert len(flows) == 4
    assert all(f["goodput_bps"] > 1e6 for f in flows), [f["goodput_bps"] for f in flows]
    resolved = printed("tcp_ndown", "--path", "wifi", "--stations", "4", "--flows", "4")
    assert [f["client"] for f in resolved["flows"]] == [0, 1, 2, 3]


def test_flows_per_station_gives_each_station_its_share_in_turn():
    resolved = printed("tcp_nup", "--path", "wifi", "--stations", "3", "--flows-per-station", "2")
    assert [f["client"] for f in resolved["flows"]] == [0, 1, 2, 0, 1, 2]
    for args, message in (
        (("tcp_nup", "--path", "wifi", "--flows", "2", "--flows-per-station", "2"), "not both"),
        (("tcp_upload", "--path", "wifi", "--flows-per-station", "2"), "use tcp_nup or tcp_ndown"),
        (("tcp_nup", "--path", "wifi", "--flows-per-station", "0"), "expected a whole number >= 1"),
    ):
        result = invoke("run", *args, "--print-scenario")
        assert result.exit_code != 0 and message in result.output, result.output


def test_txq_option_sets_the_wifi_nodes_txq():
    assert printed("tcp_upload", "--path", "wifi")["path"]["radio"]["txq"]["kind"] == "fq_codel"
    txq = printed("tcp_upload", "--path", "wifi", "--txq", "pfifo:256")["path"]["radio"]["txq"]
    assert txq == {"kind": "pfifo", "limit": 256}
    assert printed("tcp_upload", "--path", "wifi", "--txq", "pfifo")["path"]["radio"]["txq"] == {
        "kind": "pfifo",
        "limit": 1000,
    }
    for value, message in (("sfq", "expected one of fq_codel, pfifo"), ("pfifo:x", "expected a limit in packets")):
        result = invoke("run", "tcp_upload", "--path", "wifi", "--txq", value)
        assert result.exit_code != 0 and message in result.output, result.output
    result = invoke("run", "tcp_upload", "--txq", "pfifo")
    assert result.exit_code != 0 and "needs the Wi-Fi path" in result.output


def test_ap_txq_option_sets_the_access_point_s_txq_alone():
    radio = printed("tcp_download", "--path", "wifi", "--ap-txq", "pfifo:64")["path"]["radio"]
    assert radio["ap_txq"] == {"kind": "pfifo", "limit": 64}
    assert radio["txq"]["kind"] == "fq_codel"
    assert "ap_txq" not in printed("tcp_download", "--path", "wifi")["path"]["radio"]
    result = invoke("run", "tcp_download", "--path", "wifi", "--ap-txq", "sfq")
    assert result.exit_code != 0 and "--ap-txq: got 'sfq', expected one of fq_codel, pfifo" in result.output
    # In a run the AP's small pfifo overflows under a download; the station's queue is untouched.
    result = invoke("run", "tcp_download", "--path", "wifi", "--ap-txq", "pfifo:8", "--length", "2s", "--json")
    assert result.exit_code == 0, result.output
    wifi = {n["node"]: n for n in json.loads(result.output)["wifi"]}
    assert wifi[0]["drops"] > 0 and wifi[1]["drops"] == 0


def test_cc_params_apply_to_every_flow_to_one_cca_or_to_one_flow():
    assert scenarios.flow_cc_params({"a": 1}, ["bbr", "cubic"]) == [{"a": 1}, {"a": 1}]
    assert scenarios.flow_cc_params({"bbr.high_gain": 3, "cubic.beta": 800}, ["bbr", "cubic", "bbr"]) == [
        {"high_gain": 3},
        {"beta": 800},
        {"high_gain": 3},
    ]
    # A flow's own value overrides its CCA's, which overrides the shared one.
    assert scenarios.flow_cc_params({"x": 1, "bbr.x": 2, "2:x": 3}, ["bbr", "bbr"]) == [{"x": 2}, {"x": 3}]
    # A test's competing flow keeps its defaults unless named.
    assert scenarios.flow_cc_params({"x": 1, "cubic.y": 2}, ["bbr", "cubic"], [False, True]) == [{"x": 1}, {"y": 2}]
    with pytest.raises(ValueError, match="expected N:KEY with N from 1 to 2"):
        scenarios.flow_cc_params({"3:x": 1}, ["bbr", "cubic"])
    with pytest.raises(ValueError, match="but the flows run bbr, cubic"):
        scenarios.flow_cc_params({"reno.x": 1}, ["bbr", "cubic"])
    # The reproducer: a bbr parameter given to a bbr and cubic run failed for the cubic flow.
    flows = printed(
        "tcp_nup", "--cc", "bbr", "--cc", "cubic", "--cc-param", "bbr.high_gain=3", "--cc-param", "2:beta=800"
    )["flows"]
    assert [f["cc_params"] for f in flows] == [{"high_gain": 3}, {"beta": 800}]


@pytest.mark.parametrize(
    "args",
    [
        ("tcp_upload", "--path", "wifi", "--kernel", "4.19", "--tsq", "4ms"),
        ("rrul", "--path", "wifi", "--chipset", "ath10k"),
        ("tcp_nup", "--path", "wifi", "--stations", "2", "--flows-per-station", "2", "--mcs", "7,3"),
        ("rtt_fairness", "--rtts", "10ms,50ms", "--buffer", "5bdp", "--rate", "1gbit"),
    ],
)
def test_printed_scenario_runs_as_the_same_scenario(args):
    result = invoke("run", *args, "--print-scenario")
    assert result.exit_code == 0, result.output
    text = result.output
    # Human units, and the same scenario when read back.
    assert "000000000ns" not in text
    built = scenarios.build(args[0], **_keywords(args[1:]))
    assert api.validate(tomllib.loads(text)) == api.validate(built)


def _keywords(args: tuple[str, ...]) -> dict:
    names = {"--path": "path_kind", "--flows-per-station": "flows_per_station", "--stations": "stations"}
    out: dict = {}
    for flag, value in zip(args[::2], args[1::2], strict=True):
        key = names.get(flag, flag.removeprefix("--").replace("-", "_"))
        out[key] = int(value) if key in ("stations", "flows_per_station") else value
    return out
