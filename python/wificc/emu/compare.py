"""The simulator beside the kernel: the scenario on one congestion control, and one row of
the two runs' figures side by side (``wificc validate``)."""

from __future__ import annotations

from typing import Any

from wificc.result import Result

# The congestion controls `wificc validate` compares by default (each in the kernel and the
# simulator).
VALIDATE_CCS = ("cubic", "reno", "bbr")


def with_cc(scenario: dict[str, Any], cc: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """The scenario with every flow on congestion control ``cc`` with ``params`` (default: its
    defaults)."""
    return {**scenario, "flows": [{**f, "cc": cc, "cc_params": dict(params or {})} for f in scenario["flows"]]}


def compare_row(cc: str, sim: Result, kernel: Result) -> dict[str, Any]:
    """Goodput, ping percentiles, retransmissions, mean cwnd and, on a Wi-Fi path, the AP's mean
    A-MPDU size of both runs (first flow and first ping; goodput summed over the flows)."""

    def pick(result: Result) -> dict[str, Any]:
        raw = result.raw
        flows, ping = raw["flows"], (raw["pings"] or [{}])[0]
        ap = next((w for w in raw.get("wifi") or [] if w["node"] == 0), {})
        return {
            "goodput_bps": raw["summary"]["total_goodput_bps"],
            "ping_p50_ms": ping.get("rtt_p50_ms"),
            "ping_p90_ms": ping.get("rtt_p90_ms"),
            "retrans": sum(f["retrans"] for f in flows),
            "cwnd_mean": sum(f["cwnd_mean"] for f in flows) / max(len(flows), 1),
            "ap_ampdu_mean": ap.get("ampdu_mean"),
        }

    a, b = pick(sim), pick(kernel)
    row: dict[str, Any] = {"cc": cc}
    for key in a:
        row[f"sim_{key}"] = a[key]
        row[f"kernel_{key}"] = b[key]
    return row
