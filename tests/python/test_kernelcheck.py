"""The kernel checks' pure parts (wificc.kernelcheck): the registry, the resumable cells, the
tables, and each suite's computations on hand-made inputs."""

from __future__ import annotations

import json
import os
import socket
import struct
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner
from wificc import _core, kernelcheck
from wificc.cli import app
from wificc.kernelcheck import Cell, Column, gso, probe, segments, tsq, variants, wired

RUNNER = CliRunner()


def test_the_registry_names_every_suite_of_the_issue():
    assert list(kernelcheck.SUITES) == [
        "wired",
        "tsq-completion",
        "gso-charge",
        "segments",
        "wifi-download",
        "trace",
        "fairness",
    ]
    assert all(s.needs_root for s in kernelcheck.SUITES.values())
    with pytest.raises(ValueError, match="--suite: got 'nope', expected one of wired, tsq-completion"):
        kernelcheck.suite("nope")


def test_the_simulator_runs_the_running_kernels_profile():
    assert list(_core.kernels())[-2:] == ["6.12", "6.18"]
    assert kernelcheck.running_kernel("6.18.44-fc-v669") == "6.18"
    assert kernelcheck.running_kernel("6.17.1") == "6.12"
    assert kernelcheck.running_kernel("5.12.0") == "5.10"
    assert kernelcheck.running_kernel("3.10.0") == "4.19"
    assert kernelcheck.running_kernel("7.2.0") == "6.18"


def test_a_smoke_run_has_a_directory_of_its_own():
    assert kernelcheck.suite_dir("out", "segments", False) == Path("out/segments")
    assert kernelcheck.suite_dir("out", "segments", True) == Path("out/segments-smoke")


def test_cli_smoke_needs_a_suite_and_the_suite_must_exist(tmp_path):
    result = RUNNER.invoke(app, ["validate-grid", str(tmp_path), "--smoke"])
    assert result.exit_code == 2
    assert "--smoke: needs --suite NAME" in result.output
    result = RUNNER.invoke(app, ["validate-grid", str(tmp_path), "--suite", "nope"])
    assert result.exit_code == 2
    assert "--suite: got 'nope'" in result.output


def test_columns_format_each_kind_and_missing_values():
    row = {"a": 12_345_678.0, "b": 0.0512, "c": None, "d": float("nan"), "e": True, "f": 0.9951, "g": 3.0}
    shown = [
        Column("a", "a", "mbit").show(row),
        Column("b", "b", "diff").show(row),
        Column("c", "c", "ms").show(row),
        Column("d", "d", "num").show(row),
        Column("e", "e", "bool").show(row),
        Column("f", "f", "share").show(row),
        Column("g", "g", "int").show(row),
    ]
    assert shown == ["12.35", "+5.1%", "-", "-", "yes", "99.5%", "3"]
    with pytest.raises(ValueError, match="unknown kind 'x'"):
        Column("a", "a", "x").show(row)
    text = kernelcheck.markdown_table([{"k": "v"}], [Column("K", "k")], "end")
    assert text == "| K |\n|---|\n| v |\n\nend\n"


def test_verdict_names_failed_checks_and_a_late_emulator():
    assert kernelcheck.verdict({"goodput_ok": True, "ping_ok": None, "punctual": True}, ("goodput", "ping")) == "ok"
    row = {"goodput_ok": False, "ping_ok": True, "punctual": False}
    assert kernelcheck.verdict(row, ("goodput", "ping")) == "goodput, late"
    agreement = kernelcheck.goodput_ping_agreement(
        {"sim_goodput_bps": 110.0, "kernel_goodput_bps": 100.0, "sim_ping_p50_ms": 20.0, "kernel_ping_p50_ms": 16.0}
    )
    assert agreement["goodput_diff"] == pytest.approx(0.10)
    assert agreement["goodput_ok"] is True
    assert agreement["ping_p50_diff"] == pytest.approx(0.25)
    assert agreement["ping_ok"] is False
    assert kernelcheck.lateness({"lateness_within_100us": 0.985, "lateness_p99_us": 130.0})["punctual"] is False


def test_footer_counts_agreeing_cells_and_those_on_a_punctual_emulator():
    rows = [
        {"goodput_ok": True, "ping_ok": True, "punctual": True},
        {"goodput_ok": True, "ping_ok": None, "punctual": False},
        {"goodput_ok": False, "ping_ok": True, "punctual": True},
    ]
    assert kernelcheck.footer(rows, ("goodput", "ping"), "goodput 10%") == (
        "2 of 3 cells within tolerance (goodput 10%), 1 of them measured "
        "on a punctual emulator (at least 99% of the packets within 100 us; the worst repetition)."
        + kernelcheck.REPEATED
    )


def test_cells_resume_and_a_failed_cell_leaves_nothing(tmp_path):
    calls = []

    def run_cell(cell, staging, seed):
        assert seed == 1
        calls.append(cell.id)
        if cell.params.get("fail"):
            raise RuntimeError("boom")
        (staging / "kept.txt").write_text(cell.id)
        return {"x": cell.params["x"], "verdict": "ok"}

    def render(rows):
        return "".join(f"{r['cell']}={r['x']}\n" for r in rows)

    grid = [Cell("a", {"x": 1}), Cell("b", {"x": 2, "fail": True}), Cell("c", {"x": 3})]
    with pytest.raises(RuntimeError, match="boom"):
        kernelcheck.run_cells(tmp_path, grid, run_cell, render, lambda _: None)
    assert calls == ["a", "b"]
    assert (tmp_path / "cells" / "a" / "row.json").is_file()
    assert not list((tmp_path / "cells" / "b").iterdir())  # no repetition, no row
    assert (tmp_path / "table.md").read_text() == "a=1\n"
    grid[1] = Cell("b", {"x": 2})
    frame = kernelcheck.run_cells(tmp_path, grid, run_cell, render, lambda _: None)
    assert calls == ["a", "b", "b", "c"]
    assert list(frame["cell"]) == ["a", "b", "c"]
    assert (tmp_path / "table.md").read_text() == "a=1\nb=2\nc=3\n"
    row = json.loads((tmp_path / "cells" / "c" / "row.json").read_text())
    assert row["x"] == 3 and row["cell"] == "c" and "wall_s" in row and row["repetitions"] == 1
    assert (tmp_path / "cells" / "c" / "rep-1" / "kept.txt").read_text() == "c"
    assert (tmp_path / "table.csv").exists() and (tmp_path / "table.parquet").exists()


def test_probe_kinds_are_checked_before_the_loader_runs():
    with pytest.raises(ValueError, match=r"kinds \['QUEUE', 'SLAB'\]: expected a non-empty list of QUEUE, DEQ"):
        with probe.recording(probe.Probe(Path("/nonexistent")), 5001, kinds=("QUEUE", "SLAB")):
            pass
    with pytest.raises(ValueError, match="non-empty"):
        with probe.recording(probe.Probe(Path("/nonexistent")), 5001, kinds=()):
            pass
    # every check reads only kinds the loader has
    assert set(tsq.SKB_KINDS) <= set(probe.KINDS)
    assert set(segments.SEGMENTATION_KINDS) <= set(probe.KINDS)


def test_probe_constants_and_events_parse(tmp_path):
    assert probe.parse_constants("sk_buff=224\nkmalloc=64 8 192\nbad\n") == {"sk_buff": 224, "kmalloc": [8, 64, 192]}
    line = "XMIT,20,1,ffff,2304,1514,1514,1448,0,0,0,1728,64,1000,32,5000,-1,0,0,"
    (tmp_path / "e.csv").write_text(line.replace("XMIT,20", "XMIT,30") + "\n" + line + "\nshort,line\n")
    events = probe.parse_events(tmp_path / "e.csv")
    assert [e["ts"] for e in events] == [20, 30]
    assert events[0]["truesize"] == 2304 and events[0]["skb"] == "ffff" and events[0]["wmem"] == 5000


def test_scratch_directories_of_dead_processes_are_removed(tmp_path):
    dead = tmp_path / "wificc-probe-999999999-run-abc"
    dead.mkdir()
    alive = tmp_path / f"wificc-probe-{os.getppid()}-run-abc"
    alive.mkdir()
    other = tmp_path / "wificc-probe-x"
    other.mkdir()
    fresh = probe.scratch("build", tmp_path)
    assert fresh.name.startswith(f"wificc-probe-{os.getpid()}-build-")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([alive.name, other.name, fresh.name])


def segmentation(seq0=1000, payloads=(1448, 1448, 500), truesizes=(2304, 2304, 1280), gaps_ns=(9000, 12000)):
    """Events of one GSO skb (QUEUE, GSOFREE) and its segments at the driver (XMIT)."""
    payload = sum(payloads)
    queue = {
        "kind": "QUEUE", "ts": 100, "skb": "s1", "truesize": payload + 832, "len": payload + 66,
        "payload": payload, "gso_size": 1448, "headroom": 126, "seq": seq0, "wmem": 10_000,
    }  # fmt: skip
    wmem_after = 10_000 + sum(truesizes) - queue["truesize"]
    free = {**queue, "kind": "GSOFREE", "ts": 200, "wmem": wmem_after, "stackid": -1}
    xmit = []
    t = 300
    for k, (p, ts) in enumerate(zip(payloads, truesizes, strict=True)):
        xmit.append({"kind": "XMIT", "ts": t, "skb": f"x{k}", "truesize": ts, "payload": p, "seq": seq0 + 1448 * k})
        t += gaps_ns[k] if k < len(gaps_ns) else 0
    return [queue, free, *xmit]


def test_gso_charge_is_checked_segment_by_segment_against_the_simulator():
    # MAX_TCP_HEADER = headroom 126 + headers 66 = 192, no scatter-gather, small-head cache:
    # 1448 -> SKB_DATA_ALIGN(192 + 1448) + 320 = 1984 -> kmalloc 2048 + 256 = 2304;
    # 500 -> 704 + 320 = 1024 -> kmalloc 1024 + 256 = 1280.
    assert gso.simulator_charge(1448, False, 192, True) == 2304
    assert gso.simulator_charge(500, False, 192, True) == 1280
    checked = gso.compare(segmentation(), {}, sg=False, small_head_cache=True)
    assert checked["segmentations"] == 1
    assert (checked["segments_checked"], checked["segments_exact"], checked["partial_segments"]) == (3, 3, 1)
    assert checked["max_tcp_header"] == 192
    assert (checked["full_truesize_kernel"], checked["full_truesize_sim"]) == (2304, 2304)
    assert (checked["wmem_delta_exact"], checked["wmem_delta_checked"]) == (1, 1)
    assert checked["charge_ok"] is True
    # A kernel charging 64 bytes more for the last segment is caught.
    off = gso.compare(segmentation(truesizes=(2304, 2304, 1344)), {}, sg=False, small_head_cache=True)
    assert off["segments_exact"] == 2 and off["charge_ok"] is False
    assert off["mismatches"] == "[(500, 1344, 1280)]"
    # A segment the probe missed: nothing to check.
    missed = gso.compare(segmentation()[:-1], {}, sg=False, small_head_cache=True)
    assert missed["not_all_seen"] == 1 and missed["segments_checked"] == 0 and missed["charge_ok"] is False


def test_segment_truesize_binding_is_the_simulators_rule():
    # crates/wificc-core/src/tcp/config.rs: the studies' kernels (MAX_TCP_HEADER 320, no
    # small-head cache) and the measured 6.18 VM.
    assert _core.segment_truesize(1448, False, 320, 176, False) == 4352
    assert _core.segment_truesize(1448, True, 320, 176, False) == 2728
    assert _core.segment_truesize(1448, True, 192, 32, True) == 2280


def test_segment_gaps_and_the_per_frame_wake_verdict():
    gap_us, counts, spans = segments.gaps(segmentation(gaps_ns=(9000, 50000)))
    assert gap_us == [9.0, 50.0]
    assert counts == [3] and spans == [59.0]
    summary = segments.summarise(gap_us, counts, spans)
    assert summary["below_aifs_share"] == 0.5
    assert summary["gap_p50_us"] == 9.0 and summary["gap_max_us"] == 50.0
    assert summary["wake_ok"] is False
    assert segments.summarise([10.0] * 99 + [44.0], [2], [10.0])["wake_ok"] is True
    assert segments.summarise([10.0] * 98 + [44.0, 44.0], [2], [10.0])["wake_ok"] is False
    assert segments.AIFS_BE_US == 43


def diag_reply(dport: int, wmem: int, info: bool = True) -> bytes:
    """One inet_diag_msg for a socket to ``dport`` with its tcp_info (srtt 23456 us, cwnd 60,
    pacing rate 4.5 MB/s, as struct tcp_info of Linux 6.x lays them out, 248 bytes) and its
    SKMEMINFO, then NLMSG_DONE."""
    msg = bytearray(tsq.DIAG_MSG_LEN)
    msg[0] = socket.AF_INET
    struct.pack_into("!H", msg, tsq.DIAG_DPORT_OFFSET, dport)
    tcp_info = bytearray(248)
    struct.pack_into("=I", tcp_info, 68, 23456)
    struct.pack_into("=I", tcp_info, 80, 60)
    struct.pack_into("=Q", tcp_info, 104, 4_500_000)
    meminfo = struct.pack("=9I", 0, 131072, wmem, 87040, 0, 0, 0, 0, 0)
    attrs = [(tsq.INET_DIAG_INFO, bytes(tcp_info))] if info else []
    attrs.append((tsq.INET_DIAG_SKMEMINFO, meminfo))
    body = bytes(msg) + b"".join(tsq.RTATTR.pack(tsq.RTATTR.size + len(v), kind) + v for kind, v in attrs)
    first = tsq.NLMSG_HEADER.pack(tsq.NLMSG_HEADER.size + len(body), tsq.SOCK_DIAG_BY_FAMILY, 2, 1, 0) + body
    done = tsq.NLMSG_HEADER.pack(tsq.NLMSG_HEADER.size + 4, tsq.NLMSG_DONE, 2, 1, 0) + bytes(4)
    return first + done


def test_sock_diag_request_and_reply():
    request = tsq.diag_request(7)
    assert len(request) == 16 + 56
    length, kind, flags, seq, _ = tsq.NLMSG_HEADER.unpack_from(request)
    assert (length, kind, flags, seq) == (72, 20, 0x301, 7)
    # family AF_INET, protocol TCP, ext bits of INET_DIAG_SKMEMINFO (7) and INET_DIAG_INFO (2),
    # states ESTABLISHED.
    assert request[16:24] == bytes([2, 6, 64 | 2, 0]) + struct.pack("=I", 2)
    sample = {"wmem": 54321, "rtt_us": 23456, "cwnd": 60, "pacing_bps": 36_000_000}
    assert tsq.parse_diag(diag_reply(20000, 54321), 20000) == ([sample], True)
    assert tsq.parse_diag(diag_reply(20000, 54321, info=False), 20000) == ([{"wmem": 54321}], True)
    assert tsq.parse_diag(diag_reply(20001, 54321), 20000) == ([], True)


def test_tsq_cells_limits_and_scenarios():
    assert tsq.limit_bytes(100, 4) == 50_000
    assert tsq.limit_bytes(20, 1) == 2500
    assert len(tsq.cells(False)) == 24 and [c.id for c in tsq.cells(True)] == ["100mbit-4ms-cubic"]
    assert "20mbit-nocap-cubic" in [c.id for c in tsq.cells(False)]
    assert tsq.limit_bytes(20, None) is None
    kernel, _ = tsq.scenarios_of({"rate_mbit": 20, "tsq_ms": None, "cc": "cubic", "length": "4s"})
    assert "limit_output_bytes" not in kernel["stack"]
    kernel, sim = tsq.scenarios_of({"rate_mbit": 20, "tsq_ms": 16, "cc": "bbr", "length": "4s"})
    assert kernel["stack"]["limit_output_bytes"] == sim["stack"]["limit_output_bytes"] == "40000b"
    # Both sides: htb at the rate with tc's default burst in front of the emulator's NIC.
    assert kernel["path"]["access_rate"] == sim["path"]["access_rate"] == "10000000000bit"
    shaper = {"rate": "20000000bit", "burst": "1600b", "overhead": 0}
    assert kernel["stack"]["host_shaper"] == sim["stack"]["host_shaper"] == shaper
    assert kernel["path"]["rate"] == sim["path"]["rate"] == "1000000000bit"
    assert kernel["path"]["l2_overhead"] == sim["path"]["l2_overhead"] == 0
    # TUN orphans the skbs htb hands it: the simulator's NIC releases TSQ as a packet starts.
    assert sim["stack"]["tx_orphan"] and not kernel["stack"]["tx_orphan"]
    # The simulator's receiver reads when the check's reading thread does (35 us, measured);
    # the kernel's reads are its own.
    assert sim["stack"]["read_delay"] == "35000ns" and kernel["stack"]["read_delay"] is None


def test_fairness_shares_and_trace_files(tmp_path, monkeypatch):
    assert variants.shares([30.0, 10.0]) == [0.75, 0.25]
    assert variants.shares([0.0, 0.0]) == [None, None]
    monkeypatch.setenv(variants.TRACE_DIR_ENV, str(tmp_path))
    with pytest.raises(kernelcheck.Unavailable, match="Verizon-LTE-short.up not found"):
        variants.trace_files("verizon")
    (tmp_path / "Verizon-LTE-short.up").write_text("1\n")
    (tmp_path / "Verizon-LTE-short.down").write_text("1\n")
    assert variants.trace_files("verizon")[1] == tmp_path / "Verizon-LTE-short.down"
    scenario = variants.fairness_scenario({"buffer": "5bdp", "cc": "wbbr_pg", "length": "5s", "delay": "1s"})
    assert [f["cc"] for f in scenario["flows"]] == ["wbbr_pg", "wbbr_pg"]
    assert scenario["path"]["rtt"] == "10000000ns"
    assert scenario["path"]["client_rtt"] == ["0ns", "40000000ns"]


def test_wifi_download_writes_its_tables_with_a_verdict_per_cell(tmp_path):
    from wificc.kernelcheck import wifi_download

    base = {
        "sim_cc": "bbr", "driver": "ath9k", "sim_goodput_mbit": 194.4, "kernel_goodput_mbit": 196.3,
        "sim_ping_p50_ms": 11.6, "kernel_ping_p50_ms": 12.3, "sim_ap_ampdu_mean": 30.4,
        "kernel_ap_ampdu_mean": 30.6, "sim_acks": 100, "kernel_acks": 90, "goodput_mbit_diff": -0.01,
        "ping_p50_ms_diff": -0.05, "acks_diff": 0.11, "lateness_within_100us": 0.995,
        "lateness_p99_us": 80.0, "kernel_tun_tx_dropped": 0,
    }  # fmt: skip
    stored = {
        "ath9k-cubic": {"goodput_ok": True, "ping_ok": True, "punctual": True},
        "ath9k-bbr": {"goodput_ok": True, "ping_ok": False, "punctual": False},
        "ath10k-cubic": {"goodput_ok": False, "ping_ok": True, "punctual": True, "kernel_tun_tx_dropped": 76},
    }
    chosen = []
    for cell_id, extra in stored.items():
        chipset, cc = cell_id.split("-")
        chosen.append(wifi_download.Cell(chipset, cc))
        d = tmp_path / "cells" / cell_id
        d.mkdir(parents=True)
        (d / "row.json").write_text(json.dumps({**base, "cell": cell_id, "chipset": chipset, "cc": cc, **extra}))
    frame = wifi_download.write_tables(tmp_path, chosen[:2])  # the third is not a chosen cell
    assert list(frame["verdict"]) == ["ok", "ping, late"]
    assert wifi_download.verdict({**base, **stored["ath10k-cubic"]}) == "goodput, 76 lost at TUN"
    text = (tmp_path / "table.md").read_text()
    assert "| ping, late |" in text and "1 of 2 cells within the targets" in text
    assert pd.read_parquet(tmp_path / "table.parquet")["verdict"].tolist() == ["ok", "ping, late"]
    assert (tmp_path / "table.csv").read_text().count("\n") == 3


def repetition_rows(sim_ping, kernel_ping, charge=(True, True, True)):
    """Three repetitions of a cell: goodput Mbit/s sim 95, 93, 97 against kernel 100, 96, 104."""
    rows = []
    for k, (sg, kg, sp, kp, late, p99, ok) in enumerate(
        zip(
            (95e6, 93e6, 97e6),
            (100e6, 96e6, 104e6),
            sim_ping,
            kernel_ping,
            (0.995, 0.992, 0.999),
            (60.0, 90.0, 40.0),
            charge,
            strict=True,
        ),
        1,
    ):
        row = {"cell": "c", "repetition": k, "cc": "bbr", "sim_goodput_bps": sg, "kernel_goodput_bps": kg}
        row |= {"sim_ping_p50_ms": sp, "kernel_ping_p50_ms": kp, "charge_ok": ok, "wall_s": 10.0 + k}
        row |= kernelcheck.lateness({"lateness_within_100us": late, "lateness_p99_us": p99})
        row |= kernelcheck.goodput_ping_agreement(row)
        row["verdict"] = kernelcheck.verdict(row, ("goodput", "ping"))
        rows.append(row)
    return rows


def test_repetitions_keep_medians_ranges_and_the_worst_lateness():
    rows = repetition_rows((240.0, 250.0, 290.0), (287.0, 351.0, 300.0))
    row = kernelcheck.repetitions.aggregate(rows, kernelcheck.GOODPUT_PING_COMPARED)
    assert row["repetitions"] == 3 and row["cc"] == "bbr" and "repetition" not in row
    assert (row["kernel_goodput_bps"], row["kernel_goodput_bps_min"], row["kernel_goodput_bps_max"]) == (
        100e6,
        96e6,
        104e6,
    )
    # Goodput: medians 95 against 100, -5%, within 10%.
    assert row["goodput_diff"] == pytest.approx(-0.05)
    assert row["goodput_ok"] is True and row["goodput_spread"] is False
    # Ping: medians 250 against 300, -16.7%, beyond 15%; the kernel's spread (351 - 287) / 300 =
    # 21.3% exceeds 15% and the ranges 240-290 and 287-351 overlap: agreement by spread.
    assert row["ping_p50_diff"] == pytest.approx(-50 / 300)
    assert row["ping_ok"] is True and row["ping_spread"] is True
    # Lateness: the worst run (lowest share, highest p99) and the median.
    assert (row["lateness_within_100us"], row["lateness_within_100us_median"]) == (0.992, 0.995)
    assert (row["lateness_p99_us"], row["lateness_p99_us_median"]) == (90.0, 60.0)
    assert row["punctual"] is True
    assert row["wall_s"] == 36.0
    assert row["charge_ok"] is True
    assert kernelcheck.verdict(row, ("goodput", "ping")) == "ok (spread)"
    assert kernelcheck.Column("k", "kernel_goodput_bps", "mbit").show(row) == "100.00 (96.00-104.00)"
    assert kernelcheck.Column("d", "ping_p50_diff", "diff").show(row) == "-16.7%"
    # One repetition shows no range.
    one = kernelcheck.repetitions.aggregate(rows[:1], kernelcheck.GOODPUT_PING_COMPARED)
    assert kernelcheck.Column("k", "kernel_goodput_bps", "mbit").show(one) == "100.00"
    # Neither does a parameter of the cell, nor a figure equal in every repetition as shown.
    assert (
        kernelcheck.Column("r", "rate_mbit", "int").show(
            {"rate_mbit": 20, "rate_mbit_min": 20, "rate_mbit_max": 20, "repetitions": 3}
        )
        == "20"
    )
    same = {"g": 19.2401e6, "g_min": 19.2399e6, "g_max": 19.2402e6, "repetitions": 2}
    assert kernelcheck.Column("g", "g", "mbit").show(same) == "19.24"
    assert one["ping_p50_diff"] == pytest.approx(-47 / 287) and one["ping_ok"] is False


def test_repetitions_fail_without_spread_or_without_overlap_and_kernel_checks_must_always_hold():
    compared = kernelcheck.GOODPUT_PING_COMPARED
    # The kernel's spread (310 - 290) / 300 = 6.7% is within 15%: the medians decide, -16.7%.
    narrow = kernelcheck.repetitions.aggregate(repetition_rows((240.0, 250.0, 290.0), (290.0, 300.0, 310.0)), compared)
    assert narrow["ping_ok"] is False and narrow["ping_spread"] is False
    assert kernelcheck.verdict(narrow, ("goodput", "ping")) == "ping"
    # Wide spread but the ranges 200-280 and 287-351 apart.
    apart = kernelcheck.repetitions.aggregate(repetition_rows((200.0, 250.0, 280.0), (287.0, 351.0, 300.0)), compared)
    assert apart["ping_ok"] is False
    # A check of the kernel alone holds only when it held every time.
    rows = repetition_rows((250.0,) * 3, (250.0,) * 3, charge=(True, False, True))
    assert kernelcheck.repetitions.aggregate(rows, compared)["charge_ok"] is False
    rows[1]["lateness_within_100us"] = 0.985
    late = kernelcheck.repetitions.aggregate(rows, compared)
    assert late["punctual"] is False and kernelcheck.verdict(late, ("goodput", "ping")) == "late"
    with pytest.raises(ValueError, match="--repeat: got 0, expected a whole number of repetitions >= 1"):
        kernelcheck.check_repeat(0)


def test_only_the_chosen_cells_run_and_the_table_keeps_the_others(tmp_path):
    calls = []
    repeated_suite(tmp_path, 2, calls)
    assert calls == [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
    calls.clear()
    # Extend one cell to 4 repetitions: only its two missing ones run.
    frame = repeated_suite(tmp_path, 4, calls, only=["b*"])
    assert calls == [("b", 3), ("b", 4)]
    assert (tmp_path / "table.md").read_text() == "a=15.0/2\nb=25.0/4\n"
    assert list(frame["cell"]) == ["a", "b"]
    with pytest.raises(ValueError, match=r"--cell 'c\*': matches no cell of this suite; expected one of .*: a, b"):
        repeated_suite(tmp_path, 4, calls, only=["a", "c*"])
    assert calls == [("b", 3), ("b", 4)]
    with pytest.raises(ValueError, match="--cell: not with --smoke"):
        kernelcheck.run_suite("tsq-completion", tmp_path, smoke=True, only=["x"])
    result = RUNNER.invoke(app, ["validate-grid", str(tmp_path), "--cell", "a"])
    assert result.exit_code == 2 and "--cell: needs --suite NAME" in result.output
    with pytest.raises(ValueError, match="--cell: the wired suite runs its grid"):
        wired.run(tmp_path, smoke=False, report=print, only=["x"])


def repeated_suite(tmp_path, repeat, calls, fail=(), only=None):
    """run_cells of two cells ``repeat`` times; repetition k of a cell returns x = 10 * k (and
    fails when (cell, k) is in ``fail``)."""

    def run_cell(cell, staging, seed):
        calls.append((cell.id, seed))
        if (cell.id, seed) in fail:
            raise RuntimeError("interrupted")
        (staging / "kept.txt").write_text(f"{cell.id} {seed}")
        return {"x": 10.0 * seed, "x_ok": True, "verdict": "ok"}

    def render(rows):
        return "".join(f"{r['cell']}={r['x']}/{r['repetitions']}\n" for r in rows)

    grid = [Cell("a", {}), Cell("b", {})]
    return kernelcheck.run_cells(tmp_path, grid, run_cell, render, lambda _: None, repeat=repeat, only=only)


def test_an_interrupted_cell_resumes_with_its_next_missing_repetition(tmp_path):
    calls = []
    with pytest.raises(RuntimeError, match="interrupted"):
        repeated_suite(tmp_path, 3, calls, fail={("a", 2)})
    assert calls == [("a", 1), ("a", 2)]
    cell = tmp_path / "cells" / "a"
    assert sorted(p.name for p in cell.iterdir()) == ["rep-1"]  # no row: not finished
    assert (cell / "rep-1" / "kept.txt").read_text() == "a 1"
    assert json.loads((cell / "rep-1" / "row.json").read_text())["repetition"] == 1
    frame = repeated_suite(tmp_path, 3, calls)
    assert calls[2:] == [("a", 2), ("a", 3), ("b", 1), ("b", 2), ("b", 3)]
    assert list(frame["x"]) == [20.0, 20.0] and list(frame["x_min"]) == [10.0, 10.0]
    assert list(frame["x_max"]) == [30.0, 30.0] and list(frame["repetitions"]) == [3, 3]
    assert (tmp_path / "table.md").read_text() == "a=20.0/3\nb=20.0/3\n"
    # Finished: nothing runs again.
    repeated_suite(tmp_path, 3, calls)
    assert len(calls) == 7


def test_a_cell_stored_with_another_count_is_taken_again_or_extended(tmp_path):
    calls = []
    repeated_suite(tmp_path, 3, calls)
    # Fewer asked: the first 2 of the 3 stored, nothing run, the third kept on disk.
    frame = repeated_suite(tmp_path, 2, calls)
    assert len(calls) == 6
    assert list(frame["x"]) == [15.0, 15.0] and list(frame["repetitions"]) == [2, 2]
    assert (tmp_path / "cells" / "a" / "rep-3" / "row.json").is_file()
    # More asked: only the missing repetition 4 runs, then the row is over 1..4.
    frame = repeated_suite(tmp_path, 4, calls)
    assert calls[6:] == [("a", 4), ("b", 4)]
    assert list(frame["x"]) == [25.0, 25.0] and list(frame["x_max"]) == [40.0, 40.0]
    # A cell stored before repetitions is its repetition 1; the extension runs 2 only.
    old = tmp_path / "old"
    legacy = old / "cells" / "a"
    legacy.mkdir(parents=True)
    (legacy / "kept.txt").write_text("single run")
    (legacy / "row.json").write_text(json.dumps({"cell": "a", "x": 5.0, "x_ok": False, "verdict": "x"}))
    calls = []
    frame = repeated_suite(old, 2, calls)
    assert calls == [("a", 2), ("b", 1), ("b", 2)]
    assert (legacy / "rep-1" / "kept.txt").read_text() == "single run"
    assert json.loads((legacy / "rep-1" / "row.json").read_text())["repetition"] == 1
    row = frame.iloc[0]
    assert (row["x"], row["x_min"], row["x_max"], row["x_ok"]) == (12.5, 5.0, 20.0, False)


def test_repeat_is_checked_and_a_smoke_run_is_one_repetition(tmp_path):
    result = RUNNER.invoke(app, ["validate-grid", str(tmp_path), "--suite", "trace", "--repeat", "0"])
    assert result.exit_code == 2
    assert "--repeat: got 0, expected a whole number of repetitions >= 1" in result.output
    result = RUNNER.invoke(app, ["validate-grid", str(tmp_path), "--repeat", "2"])
    assert result.exit_code == 2 and "--repeat: needs --suite NAME" in result.output
    with pytest.raises(ValueError, match="--repeat: got 3 with --smoke, expected 1"):
        kernelcheck.run_suite("trace", tmp_path, smoke=True, repeat=3)
    from wificc.kernelcheck import wired

    with pytest.raises(ValueError, match="--repeat: got 2 for the wired suite, expected 1"):
        wired.run(tmp_path, smoke=False, report=print, repeat=2)
    defaults = {name: s.repeat for name, s in kernelcheck.SUITES.items()}
    assert defaults == {
        "wired": 1,
        "tsq-completion": 3,
        "gso-charge": 1,
        "segments": 1,
        "wifi-download": 3,
        "trace": 3,
        "fairness": 3,
    }


def test_a_label_column_shows_numbers_as_integers_and_words_as_they_are():
    column = Column("TSQ ms", "tsq_ms", "label")
    assert [column.show({"tsq_ms": v}) for v in (4, 4.0, "none", None)] == ["4", "4", "none", "-"]


def test_the_kernel_samples_are_taken_in_the_flows_window():
    class Sampler:
        samples = [(1100, 5), (1150, 7), (1300, 9)]
        tcp = [(1100, 60, 23000, 10), (1150, 61, 23000, 20), (1300, 62, 23000, 30)]

    keep = {"origin_ns": 1000, "sampler": Sampler}
    # Scenario ns [100, 200): the first two samples (the third is at 300).
    assert tsq.kernel_below_tcp(keep, (100, 200)) == 5.0
    assert tsq.kernel_pacing(keep, (100, 200)) == (10.0, 60.0)
    assert tsq.kernel_pacing(keep, (400, 500)) == (None, None)
