"""The wifi-download suite (wificc.kernelcheck.wifi_download): its table, its cells, the
receiver's GRO in the simulator, and (as root, with the emulator) its 1-cell smoke run."""

import math

import pandas as pd
import pytest
from wificc import api, emu, scenarios
from wificc.kernelcheck import wifi_download

REASON = emu.unavailable()
needs_emulator = pytest.mark.skipif(REASON is not None, reason=f"emulator unavailable: {REASON}")


def _download(chipset: str, gro: bool | None) -> dict:
    built = scenarios.build("tcp_download", path_kind="wifi", chipset=chipset, cc=["cubic"], length="3s", delay="1s")
    scenario = api.validate(built)
    if gro is not None:
        driver = scenario["path"]["radio"].get("driver") or {}
        scenario["path"]["radio"]["driver"] = {**driver, "gro": gro}
    return api.run(scenario).raw["flows"][0]


def test_an_ath10k_station_acks_once_per_gro_skb_and_ath9k_every_second_segment():
    # ath9k has no NAPI: about one ACK per two segments (16 quick ACKs, then every second
    # segment; a little more than two while SACK compression holds back the SACKs of
    # out-of-order data), and its driver default equals gro off.
    ath9k = _download("ath9k", None)
    assert ath9k == _download("ath9k", False)
    assert 1.9 < ath9k["segs_sent"] / ath9k["acks_sent"] <= 2.2
    # ath10k's GRO merges each A-MPDU's segments (up to 45, split at the sender's millisecond
    # ticks): many segments per ACK; switched off, every second segment again.
    on, off = _download("ath10k", None), _download("ath10k", False)
    assert on["segs_sent"] / on["acks_sent"] > 10
    assert 1.9 < off["segs_sent"] / off["acks_sent"] <= 2.2


def test_cells_and_markdown():
    smoke = wifi_download.cells(smoke=True)
    assert [c.id for c in smoke] == ["ath9k-cubic"]
    full = {c.id for c in wifi_download.cells(smoke=False)}
    assert {"ath9k-cubic", "ath9k-bbr", "ath10k-cubic", "ath10k-bbr"} <= full
    assert full <= {f"{ch}-{cc}" for ch in ("ath9k", "ath10k") for cc in ("cubic", "bbr", "wbbr")}
    row = {
        "cell": "ath9k-bbr",
        "cc": "wbbr",
        "sim_cc": "bbr",
        "chipset": "ath9k",
        "driver": "ath9k",
        "sim_goodput_mbit": 110.0,
        "kernel_goodput_mbit": 100.0,
        "goodput_mbit_diff": 0.1,
        "sim_ping_p50_ms": 12.0,
        "kernel_ping_p50_ms": 10.0,
        "ping_p50_ms_diff": 0.2,
        "sim_ap_ampdu_mean": 30.0,
        "kernel_ap_ampdu_mean": math.nan,
        "sim_acks": 10,
        "kernel_acks": 5,
        "acks_diff": 1.0,
        "goodput_ok": True,
        "ping_ok": False,
        "lateness_within_100us": 0.995,
        "lateness_p99_us": 80.0,
        "punctual": True,
    }
    text = wifi_download.markdown(pd.DataFrame([row]))
    line = text.splitlines()[2]
    assert line == (
        "| ath9k (ath9k) | wbbr (bbr) | 110.0 / 100.0 | +10.0% | 12.0 / 10.0 | +20.0% | 30.0 / - "
        "| 10 / 5 | +100.0% | 1 | 99.5%, 80 us | ping |"
    )
    assert "0 of 1 cells within the targets" in text


@needs_emulator
def test_smoke_cell_runs_and_leaves_nothing(tmp_path):
    messages = []
    frame = wifi_download.run(tmp_path, smoke=True, report=messages.append)
    assert list(frame["cell"]) == ["ath9k-cubic"]
    r = frame.iloc[0]
    assert r["sim_goodput_mbit"] > 50 and r["kernel_goodput_mbit"] > 50
    assert r["kernel_acks"] > 0 and r["sim_acks"] > 0
    assert 0 < r["lateness_within_100us"] <= 1
    assert (tmp_path / "cells" / "ath9k-cubic" / "rep-1" / "kernel").is_dir()
    assert messages[0] == "0 of 1 cells finished, 1 to run (1 repetitions each)"
    # Stored cells are not run again.
    again = wifi_download.run(tmp_path, smoke=True, report=messages.append)
    assert messages[-1] == "1 of 1 cells finished, 0 to run (1 repetitions each)"
    assert again.equals(frame)
