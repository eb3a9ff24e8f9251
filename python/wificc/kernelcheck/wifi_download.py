"""The ``wifi-download`` suite: Wi-Fi downloads with the kernel as sender and receiver.

Each cell is the catalog's ``tcp_download`` on a chipset preset (ath9k, ath10k) with one
congestion control (cubic, bbr, and the BPF ``wbbr`` when this kernel can load it), run twice:
in the simulator, and through the emulator with the kernel's TCP at both ends (the server
sends over the wired backhaul into the simulator's BSS; the station's kernel receives, with GRO
on its TUN device when its driver delivers through NAPI, see ``crates/wificc-emu/src/tun.rs``).
``wbbr`` runs in the kernel against the simulator's ``bbr``, the algorithm it implements.

A row holds both runs' goodput, median ping under load, the AP's mean A-MPDU size and the
receiver's ACK count (the simulator's receiver counts its own; the emulator counts the pure ACKs
the kernel's receiver wrote, ``tcp_acks``), the relative differences ``(sim - kernel) / kernel``,
the emulator's lateness and the packets the kernels' TUN devices dropped before the emulator
read them (losses outside the emulated path, when it was late). Agreement targets: goodput
10%, median ping 15% (the wired grid's, ``wificc.validation``). A kernel run with fewer than
99% of its packets delivered within 100 us of their time is run once more and the more
punctual one kept; the lateness is in every row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from .. import api, bpf, emu, kernelcheck, scenarios, validation
from ..kernelcheck.repetitions import Compared
from ..result import Result

CHIPSETS = ("ath9k", "ath10k")
CCS = ("cubic", "bbr", "wbbr")
LENGTH = "15s"
DELAY = "5s"
SMOKE_LENGTH = "4s"
SMOKE_DELAY = "1s"
ATTEMPTS = 2


@dataclass(frozen=True)
class Cell:
    """One download: a chipset preset and a congestion control (kernel name)."""

    chipset: str
    cc: str

    @property
    def id(self) -> str:
        return f"{self.chipset}-{self.cc}"

    @property
    def params(self) -> dict[str, Any]:
        return {"chipset": self.chipset, "cc": self.cc}

    def scenario(self, length: str, delay: str, seed: int = 1) -> dict[str, Any]:
        """The cell's normalised scenario with the kernel's congestion control (a BPF variant
        checked as the simulator's algorithm it implements), at the repetition's seed."""
        built = scenarios.build(
            "tcp_download",
            seed=seed,
            path_kind="wifi",
            chipset=self.chipset,
            cc=[emu.simulator_cc(self.cc)],
            length=length,
            delay=delay,
        )
        return emu.with_cc(emu.validated(built), self.cc)


def wbbr_loadable() -> str | None:
    """Why ``wbbr`` cannot run here, or None when it can."""
    try:
        reason = bpf.unavailable_reason()
        if reason is None and not bpf.object_path("wbbr").is_file():
            reason = f"{bpf.object_path('wbbr')} is not built (make -C bpf)"
    except bpf.BpfError as e:
        reason = str(e)
    return reason


def cells(smoke: bool) -> list[Cell]:
    """The suite's cells: one short cubic download on ath9k for ``smoke``."""
    if smoke:
        return [Cell("ath9k", "cubic")]
    ccs = [cc for cc in CCS if cc != "wbbr" or wbbr_loadable() is None]
    return [Cell(chipset, cc) for chipset in CHIPSETS for cc in ccs]


def _figures(result: Result) -> dict[str, Any]:
    raw = result.raw
    flows, ping = raw["flows"], (raw["pings"] or [{}])[0]
    ap = next((w for w in raw.get("wifi") or [] if w["node"] == 0), {})
    acks = [f.get("acks_sent") for f in flows]
    return {
        "goodput_mbit": raw["summary"]["total_goodput_bps"] / 1e6,
        "ping_p50_ms": ping.get("rtt_p50_ms"),
        "ap_ampdu_mean": ap.get("ampdu_mean"),
        "acks": None if None in acks else sum(acks),
        "segs": sum(f["segs_sent"] for f in flows),
    }


def _within(difference: float | None, tolerance: float) -> bool:
    return difference is not None and abs(difference) <= tolerance


def row(cell: Cell, sim: Result, kernel: Result, attempts: int) -> dict[str, Any]:
    """The cell's row: both runs' figures, their relative differences and the lateness."""
    a, b = _figures(sim), _figures(kernel)
    out: dict[str, Any] = {
        "cell": cell.id,
        "cc": cell.cc,
        "sim_cc": emu.simulator_cc(cell.cc),
        "chipset": cell.chipset,
        "driver": next((w.get("driver") for w in sim.raw.get("wifi") or [] if w["node"] != 0), None),
    }
    for key in a:
        out[f"sim_{key}"] = a[key]
        out[f"kernel_{key}"] = b[key]
    for key in ("goodput_mbit", "ping_p50_ms", "ap_ampdu_mean", "acks"):
        out[f"{key}_diff"] = validation.relative(a[key], b[key])
    out["goodput_ok"] = _within(out["goodput_mbit_diff"], validation.GOODPUT_TOLERANCE)
    out["ping_ok"] = _within(out["ping_p50_ms_diff"], validation.PING_TOLERANCE)
    s = kernel.summary
    out.update(emu.on_time(s))
    out["punctual"] = validation.punctual(kernel)
    drops = kernel.raw.get("emulator", {}).get("tun_drops") or []
    out["kernel_tun_tx_dropped"] = sum(d.get("tx_dropped") or 0 for d in drops)
    out["kernel_attempts"] = attempts
    out["kernel"] = s.get("kernel")
    return out


def run_cell(
    cell: Cell, length: str, delay: str, attempts: int = ATTEMPTS, seed: int = 1
) -> tuple[Result, Result, int]:
    """The simulator's run and the most punctual of up to ``attempts`` kernel runs, at ``seed``."""
    scenario = cell.scenario(length, delay, seed)
    sim = api.run(emu.with_cc(scenario, emu.simulator_cc(cell.cc)))
    best: Result | None = None
    made = 0
    for _ in range(attempts):
        kernel = emu.run_emulated(scenario)
        made += 1
        if best is None or validation.on_time_share(kernel) > validation.on_time_share(best):
            best = kernel
        if validation.punctual(kernel):
            break
    assert best is not None
    return sim, best, made


def run(
    out: Path, *, smoke: bool, report: Callable[[str], None], repeat: int = 1, only: Sequence[str] | None = None
) -> pd.DataFrame:
    """Run the suite's cells, ``repeat`` repetitions each (every repetition's two runs stored
    under ``out/cells/<cell>/rep-<k>``; what is stored is not run again, see
    :mod:`wificc.kernelcheck.repetitions`) and return one row per cell."""
    reason = emu.unavailable()
    if reason is not None:
        raise OSError(f"wifi-download needs the emulator: {reason}")
    length, delay = (SMOKE_LENGTH, SMOKE_DELAY) if smoke else (LENGTH, DELAY)
    chosen = cells(smoke)
    if not smoke and wbbr_loadable() is not None:
        report(f"wifi-download: wbbr left out: {wbbr_loadable()}")

    def run_one(cell: Any, staging: Path, seed: int) -> dict[str, Any]:
        sim, kernel, made = run_cell(cell, length, delay, seed=seed)
        sim.save(staging / "sim")
        kernel.save(staging / "kernel")
        return row(cell, sim, kernel, made)

    return kernelcheck.run_cells(
        out, chosen, run_one, render, report, repeat=repeat, compared=COMPARED, judge=verdict, only=only
    )


COMPARED = (
    Compared("sim_goodput_mbit", "kernel_goodput_mbit", "goodput_mbit_diff", "goodput", validation.GOODPUT_TOLERANCE),
    Compared("sim_ping_p50_ms", "kernel_ping_p50_ms", "ping_p50_ms_diff", "ping", validation.PING_TOLERANCE),
    Compared("sim_ap_ampdu_mean", "kernel_ap_ampdu_mean", "ap_ampdu_mean_diff"),
    Compared("sim_acks", "kernel_acks", "acks_diff"),
)


def render(rows: list[dict[str, Any]]) -> str:
    return markdown(pd.DataFrame([{**r, "verdict": verdict(r)} for r in rows]))


def write_tables(out: Path, chosen: list[Cell]) -> pd.DataFrame:
    """The stored rows of the cells ``chosen``, each with its verdict, written as
    ``out/table.{csv,parquet,md}``; returns them."""
    ids = {c.id for c in chosen}
    rows = [{**r, "verdict": verdict(r)} for r in validation.read_rows(out, chosen) if r["cell"] in ids]
    frame = pd.DataFrame(rows)
    validation.write_table_files(out, rows, markdown(frame))
    return frame


def verdict(r: dict[str, Any]) -> str:
    """ "ok" for a cell within the targets on a punctual emulator ("ok (spread)" when a figure
    agreed only by the ranges' overlap of repetitions); else what is not: "goodput", "ping",
    "late" (fewer than 99% of the packets within 100 us in the worst repetition), "N lost at
    TUN" (the most of a repetition)."""
    failed = [name for name, ok in (("goodput", r["goodput_ok"]), ("ping", r["ping_ok"])) if not ok]
    if not r["punctual"]:
        failed.append("late")
    lost = r.get("kernel_tun_tx_dropped_max", r.get("kernel_tun_tx_dropped"))
    if lost:
        failed.append(f"{lost:.0f} lost at TUN")
    if not failed and (r.get("goodput_spread") or r.get("ping_spread")):
        return "ok (spread)"
    return ", ".join(failed) or "ok"


def _num(value: Any, digits: int = 1) -> str:
    return "-" if value is None or pd.isna(value) else f"{value:.{digits}f}"


def _pct(value: Any) -> str:
    return "-" if value is None or pd.isna(value) else f"{100 * value:+.1f}%"


def _fig(r: dict[str, Any], key: str, digits: int = 1) -> str:
    """A figure, with its range (min-max) when the row is over several repetitions."""
    shown = _num(r.get(key), digits)
    low, high = r.get(f"{key}_min"), r.get(f"{key}_max")
    if (r.get("repetitions") or 1) > 1 and not (low is None or pd.isna(low) or high is None or pd.isna(high)):
        shown += f" ({_num(low, digits)}-{_num(high, digits)})"
    return shown


def markdown(frame: pd.DataFrame) -> str:
    """The suite's table in markdown, with a count of the cells within the targets."""
    head = (
        "| chipset (driver) | cc (sim) | goodput sim / kernel Mbit/s | diff | ping p50 sim / kernel ms | diff "
        "| AP A-MPDU sim / kernel | ACKs sim / kernel | diff | reps | lateness <=100us, p99 (worst) | verdict |"
    )
    lines = [head, "|" + "---|" * 12]
    for r in frame.to_dict("records"):
        lines.append(
            f"| {r['chipset']} ({r['driver']}) | {r['cc']} ({r['sim_cc']}) "
            f"| {_fig(r, 'sim_goodput_mbit')} / {_fig(r, 'kernel_goodput_mbit')} | {_pct(r['goodput_mbit_diff'])} "
            f"| {_fig(r, 'sim_ping_p50_ms')} / {_fig(r, 'kernel_ping_p50_ms')} | {_pct(r['ping_p50_ms_diff'])} "
            f"| {_fig(r, 'sim_ap_ampdu_mean')} / {_fig(r, 'kernel_ap_ampdu_mean')} "
            f"| {_fig(r, 'sim_acks', 0)} / {_fig(r, 'kernel_acks', 0)} | {_pct(r['acks_diff'])} "
            f"| {_num(r.get('repetitions') or 1, 0)} "
            f"| {100 * (r['lateness_within_100us'] or 0):.1f}%, {_num(r['lateness_p99_us'], 0)} us | {verdict(r)} |"
        )
    within = sum(bool(r["goodput_ok"]) and bool(r["ping_ok"]) for r in frame.to_dict("records"))
    lines.append("")
    lines.append(
        f"{within} of {len(frame)} cells within the targets (goodput "
        f"{100 * validation.GOODPUT_TOLERANCE:.0f}%, median ping {100 * validation.PING_TOLERANCE:.0f}%; "
        "differences are (simulator - kernel) / kernel)." + kernelcheck.REPEATED
    )
    return "\n".join(lines) + "\n"
