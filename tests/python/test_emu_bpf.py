"""wificc's BPF congestion controls through the real-time emulator (issue 6 acceptance).

Each variant is built, loaded by the run that names it, carries a 30 s upload over the emulated
50 Mbit/s, 20 ms, 1-BDP pfifo path and is unloaded when the run ends; BPF ``wbbr`` is compared
with the kernel's built-in ``bbr``, and ``wbbrp`` with ``bbrp_pace=5`` (the scenario's
``cc_params``, set as the variant's knob) with ``wbbr``, on the same path. Root, TUN devices and
a kernel that loads BPF struct_ops are needed; the tests are skipped with the reason otherwise.
The whole file takes about four minutes (seven 30 s runs).
"""

from __future__ import annotations

import pytest
from test_emu import bpf_left, run_tag
from wificc import bpf, emu, scenarios
from wificc.result import Result

EMULATOR = emu.unavailable()
BPF = bpf.unavailable_reason()
pytestmark = [
    pytest.mark.skipif(EMULATOR is not None, reason=f"emulator unavailable: {EMULATOR}"),
    pytest.mark.skipif(BPF is not None, reason=f"BPF congestion controls unavailable: {BPF}"),
]

VARIANTS = ["wbbr", "wbbrp", "wbbrn", "wbbr_apg", "wbbr_pg"]
# The path's maximum goodput: 1448 payload bytes per 1538 bytes on the wire at 50 Mbit/s.
MAX_GOODPUT_BPS = 50e6 * 1448 / 1538
# Issue 6: BPF bbr against the kernel's bbr on the same emulated path.
GOODPUT_TOLERANCE = 0.05
PING_TOLERANCE = 0.10
_results: dict[str, Result] = {}


def upload(cc: str, cc_params: dict | None = None) -> Result:
    """A 30 s upload on ``cc`` with a ping every 200 ms, over the acceptance path."""
    scenario = scenarios.build(
        "tcp_upload",
        rate="50mbit",
        rtt="20ms",
        buffer="1bdp",
        qdisc="pfifo",
        cc=[cc],
        cc_params=cc_params,
        length="30s",
        delay="0s",
    )
    return emu.run_emulated(scenario, tag=run_tag())


@pytest.fixture(scope="module")
def built():
    """Every variant built, and none loaded before or after these tests."""
    objects = bpf.build()
    bpf.unload()
    yield objects
    bpf.unload()


@pytest.mark.parametrize("name", VARIANTS)
def test_variant_loads_carries_a_30s_flow_through_the_emulator_and_unloads(built, name):
    assert name not in bpf.available()
    result = upload(name)
    _results[name] = result
    flow = result.flows.iloc[0]
    # The sender's socket reported the variant as its congestion control (TCP_CONGESTION).
    assert flow["cc"] == name
    assert flow["goodput_bps"] >= 0.90 * MAX_GOODPUT_BPS, flow["goodput_bps"] / MAX_GOODPUT_BPS
    assert flow["goodput_bps"] <= MAX_GOODPUT_BPS * 1.001
    # The run loaded it, so the run unloaded it.
    assert bpf_left(name) == []


def assert_alike(name: str, result: Result, reference: str, base: Result) -> None:
    """Goodput within 5% and median ping within 10% of the reference run."""
    goodput, base_goodput = result.flows.iloc[0]["goodput_bps"], base.flows.iloc[0]["goodput_bps"]
    ping, base_ping = result.pings.iloc[0]["rtt_p50_ms"], base.pings.iloc[0]["rtt_p50_ms"]
    figures = (
        f"{name}: {goodput / 1e6:.2f} Mbit/s, {ping:.2f} ms; {reference}: {base_goodput / 1e6:.2f}, {base_ping:.2f}"
    )
    assert abs(goodput - base_goodput) <= GOODPUT_TOLERANCE * base_goodput, figures
    assert abs(ping - base_ping) <= PING_TOLERANCE * base_ping, figures


def test_wbbr_behaves_as_the_kernels_bbr_and_wbbrp_at_pace_5_as_wbbr(built):
    wbbr = _results.get("wbbr") or upload("wbbr")
    bbr = upload("bbr")
    assert bbr.flows.iloc[0]["cc"] == "bbr"
    assert_alike("wbbr", wbbr, "bbr", bbr)
    # The scenario's parameter becomes the knob of the variant the run loads (and unloads).
    wbbrp = upload("wbbrp", {"bbrp_pace": 5})
    assert "wbbrp" not in bpf.available()
    assert wbbrp.flows.iloc[0]["cc"] == "wbbrp"
    assert wbbrp.raw["emulator"]["bpf_knobs"] == {"wbbrp": {"extra_acked": "1", "bbrp_pace": "5"}}
    assert not any("cc_params" in note for note in wbbrp.raw["emulator"]["notes"])
    assert_alike("wbbrp bbrp_pace=5", wbbrp, "wbbr", wbbr)
    assert bpf_left("wbbrp") == []
