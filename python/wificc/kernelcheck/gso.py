"""The ``gso-charge`` suite: the truesize TCP Small Queues is charged per software-GSO segment,
measured on the running kernel, against the simulator's rule
(``SkbLayout::segment_truesize``, ``crates/wificc-core/src/tcp/config.rs``).

Each cell is one variant of ``scripts/gso_charge/measure.sh`` (two namespaces joined by a veth
pair, offloads off on the sender as on a Wi-Fi driver without TSO, an htb or tbf qdisc that
holds the packets, one iperf3 cubic flow, BTF tracepoint programs recording every GSO skb and
every frame reaching the driver). Every segmentation whose segments were all seen at the driver
is checked segment by segment: the truesize the kernel charged must equal
``segment_truesize(payload, sg)`` for the running kernel's skb head layout, which the
measurement itself gives (``MAX_TCP_HEADER`` is the headroom plus headers TCP reserved; the
``skbuff_small_head`` cache exists or not). ``MAX_HEADER`` only sizes ``GRO_MAX_HEAD`` =
MAX_HEADER + 128, which never exceeds MAX_TCP_HEADER = L1_CACHE_ALIGN(128 + MAX_HEADER), so it
does not change the result; it is passed as MAX_TCP_HEADER - 128. No emulator runs here (veth,
no lateness figure).
"""

from __future__ import annotations

import collections
import contextlib
import importlib.util
import io
import re
import shutil
import signal
import subprocess
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pandas as pd

from wificc import _core
from wificc.kernelcheck import Cell, Column, markdown_table, run_cells, verdict
from wificc.kernelcheck.probe import MEASURE, SCRIPT_DIR, _die_with_parent

# measure.sh variants: DEV-QDISC[-app] (sg: tso/gso off; nosg: sg off too; -app: an
# application-limited flow, so GSO skbs end in partial segments).
VARIANTS = ("sg-htb", "nosg-htb", "sg-tbf", "nosg-tbf", "sg-htb-app", "nosg-htb-app")
SMOKE_VARIANTS = ("nosg-htb-app",)
SECONDS = 5
SMOKE_SECONDS = 2
# Bytes TCP reserves in front of its headers and the headers' own length add up to
# MAX_TCP_HEADER = L1_CACHE_ALIGN(128 + MAX_HEADER).
MAX_TCP_HEADER_BASE = 128
KEPT = re.compile(r"^raw events kept in (\S+)$", re.M)


@cache
def analyzer() -> ModuleType:
    """``scripts/gso_charge/analyze.py`` as a module (its event parsing and matching)."""
    spec = importlib.util.spec_from_file_location("gso_charge_analyze", SCRIPT_DIR / "analyze.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def simulator_charge(payload: int, sg: bool, max_tcp_header: int, small_head_cache: bool) -> int:
    """The simulator's per-segment truesize for the given kernel layout."""
    return int(
        _core.segment_truesize(
            payload, sg, max_tcp_header, max(0, max_tcp_header - MAX_TCP_HEADER_BASE), small_head_cache
        )
    )


def compare(
    events: list[dict[str, Any]],
    stacks: dict[int, list[str]],
    sg: bool,
    small_head_cache: bool,
    charge: Callable[[int, bool, int, bool], int] = simulator_charge,
) -> dict[str, Any]:
    """Check every fully seen segmentation: each segment's truesize against ``charge`` and
    sk_wmem_alloc's change against sum(segment truesize) - GSO truesize."""
    by: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for e in events:
        by[e["kind"]].append(e)
    checked = exact = partial = segmentations = unseen = wmem_exact = wmem_checked = 0
    full: collections.Counter[tuple[int, int]] = collections.Counter()
    mismatches: list[tuple[int, int, int]] = []
    reserve = None
    for g, _site, segs, before in analyzer().segmentations(by, stacks):
        segmentations += 1
        if len(segs) != -(-g["payload"] // g["gso_size"]) or before is None:
            unseen += 1
            continue
        reserve = before["headroom"] + before["len"] - before["payload"]
        for s in segs:
            predicted = charge(s["payload"], sg, reserve, small_head_cache)
            checked += 1
            if predicted == s["truesize"]:
                exact += 1
            elif len(mismatches) < 5:
                mismatches.append((s["payload"], s["truesize"], predicted))
            if s["payload"] == g["gso_size"]:
                full[(s["truesize"], predicted)] += 1
            else:
                partial += 1
        wmem_checked += 1
        wmem_exact += sum(s["truesize"] for s in segs) - g["truesize"] == g["wmem"] - before["wmem"]
    (full_kernel, full_sim), _ = full.most_common(1)[0] if full else ((None, None), 0)
    return {
        "segmentations": segmentations,
        "not_all_seen": unseen,
        "segments_checked": checked,
        "segments_exact": exact,
        "partial_segments": partial,
        "max_tcp_header": reserve,
        "full_truesize_kernel": full_kernel,
        "full_truesize_sim": full_sim,
        "wmem_delta_exact": wmem_exact,
        "wmem_delta_checked": wmem_checked,
        "mismatches": repr(mismatches) if mismatches else None,
        "charge_ok": checked > 0 and exact == checked,
    }


def measure(variant: str, seconds: int, staging: Path) -> Path:
    """Run measure.sh on one variant keeping its events; returns their directory. The script's
    output goes to ``staging/measure.log`` (a file: a killed front end leaves it running to its
    own clean-up, and it also gets SIGTERM through PR_SET_PDEATHSIG)."""
    log = staging / "measure.log"
    with open(log, "w") as f:
        proc = subprocess.Popen(
            ["bash", str(MEASURE), "-k", "-t", str(seconds), variant],
            stdout=f,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent,
        )
        try:
            code = proc.wait()
        except BaseException:
            proc.send_signal(signal.SIGTERM)
            proc.wait()
            raise
    text = log.read_text()
    kept = KEPT.search(text)
    if code != 0 or kept is None:
        if kept is not None:
            shutil.rmtree(kept.group(1), ignore_errors=True)
        raise OSError(f"{MEASURE} {variant} failed (exit {code}): {text.strip()[-2000:]}")
    return Path(kept.group(1))


def run_variant(cell: Cell, staging: Path, seed: int = 1) -> dict[str, Any]:
    """One measurement of a variant (no simulator run: ``seed`` is only the repetition's number)."""
    variant, seconds = cell.params["variant"], cell.params["seconds"]
    work = measure(variant, seconds, staging)
    try:
        a = analyzer()
        events = a.load_events(str(work / f"{variant}.csv"))
        stacks = a.load_stacks(str(work / f"{variant}.stacks.txt"))
        features = (work / f"{variant}.features").read_text()
        constants = a.load_constants(str(work / "constants"))
        sg = "scatter-gather: on" in features
        summary = io.StringIO()
        with contextlib.redirect_stdout(summary):
            a.analyze(str(work), variant)
        (staging / "analysis.txt").write_text(summary.getvalue())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    row = {
        "variant": variant,
        "sg": sg,
        "seconds": seconds,
        "small_head": constants.get("small_head", 0),
        **compare(events, stacks, sg, constants.get("small_head", 0) > 0),
    }
    row["verdict"] = verdict(row, ("charge",))
    return row


def cells(smoke: bool) -> list[Cell]:
    variants, seconds = (SMOKE_VARIANTS, SMOKE_SECONDS) if smoke else (VARIANTS, SECONDS)
    return [Cell(v, {"variant": v, "seconds": seconds}) for v in variants]


def run(
    out: Path, *, smoke: bool, report: Callable[[str], None], repeat: int = 1, only: Sequence[str] | None = None
) -> pd.DataFrame:
    return run_cells(out, cells(smoke), run_variant, markdown, report, repeat=repeat, checks=("charge",), only=only)


COLUMNS = (
    Column("variant", "variant"),
    Column("SG", "sg", "bool"),
    Column("segmentations", "segmentations", "int"),
    Column("segments checked", "segments_checked", "int"),
    Column("segments exact", "segments_exact", "int"),
    Column("partial segments", "partial_segments", "int"),
    Column("MAX_TCP_HEADER", "max_tcp_header", "int"),
    Column("full segment kernel B", "full_truesize_kernel", "int"),
    Column("full segment sim B", "full_truesize_sim", "int"),
    Column("wmem delta exact", "wmem_delta_exact", "int"),
    Column("of", "wmem_delta_checked", "int"),
    Column("reps", "repetitions", "int"),
    Column("verdict", "verdict"),
)


def markdown(rows: list[dict[str, Any]]) -> str:
    exact = sum(1 for r in rows if r.get("charge_ok"))
    return markdown_table(
        rows,
        COLUMNS,
        f"{exact} of {len(rows)} variants with every checked segment's charge exactly the simulator's "
        "(segment_truesize with the running kernel's skb head layout); no emulator (veth).",
    )
