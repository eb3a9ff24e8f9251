"""A scenario run through the emulator with the kernel's TCP, and what a run's output adds."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from wificc import api
from wificc.emu.kernel import bpf_variants_loaded, knobs_in_use, validated, variant_knobs
from wificc.emu.process import TRAFFIC_RT_PRIORITY, Emulator, real_time, unavailable
from wificc.emu.traffic import result_document, run_traffic
from wificc.result import Result


def run_emulated(
    scenario: api.ScenarioLike,
    *,
    tag: str | None = None,
    spin_us: int | None = None,
    rt_priority: int | None = None,
    traffic_priority: int = TRAFFIC_RT_PRIORITY,
    during: Callable[[Emulator], AbstractContextManager[Any]] | None = None,
    drop_log: str | os.PathLike[str] | None = None,
) -> Result:
    """Run a scenario through the emulator with the kernel's TCP; the simulator's result format.

    A flow may name any congestion control of the kernel, or one of wificc's BPF variants
    (wbbr, wbbrp, ...): those not loaded yet are loaded for the run and unloaded after it,
    unless another run still holds a lease on them. A flow's ``cc_params`` on a variant set its
    knobs (:func:`variant_knobs`); on a kernel built-in they are not applied, and the result's
    notes say so.
    The traffic generator's threads run at ``SCHED_FIFO`` ``traffic_priority`` (0: the normal
    scheduler): a receiver preempted by other work on a busy machine would hold back its ACKs
    and turn them into stretch ACKs and bursts the path never caused.

    ``during``, given the running emulator, returns a context entered once the hosts exist and
    left before the emulator stops (a kernel check's set-up in a host's namespace, or a probe
    recording while the traffic runs); whatever it creates must be gone when it is left.
    ``drop_log``: a CSV file of every TCP segment the emulated queues dropped (:class:`Emulator`)."""
    reason = unavailable()
    if reason is not None:
        raise OSError(f"emulator unavailable: {reason}")
    normalised = validated(scenario)
    knob_sets = variant_knobs(normalised)
    with (
        bpf_variants_loaded((f["cc"] for f in normalised["flows"]), knob_sets),
        Emulator(normalised, tag=tag, spin_us=spin_us, rt_priority=rt_priority, drop_log=drop_log) as emu,
    ):
        knobs = knobs_in_use(normalised)
        with during(emu) if during is not None else nullcontext(), real_time(traffic_priority):
            flows, pings, wall_s = run_traffic(normalised, emu)
        report = emu.stop()
    return Result.from_json(json.dumps(result_document(normalised, emu, flows, pings, report, wall_s, knobs)))


def on_time(summary: Any) -> dict[str, float | None]:
    """The lateness figures that judge a kernel run: the emulator's own (``lateness_own_*``: a
    packet's wait for the write of the packet before it to the same host left out, as a real
    host takes its packets one at a time; see wificc-emu's ``clock.rs``), or, in a result from
    before that was measured, every packet's; and every packet's share beside it."""

    def get(key: str) -> float | None:
        value = summary.get(key)
        return None if value is None or value != value else float(value)

    own = get("lateness_own_within_100us")
    return {
        "lateness_within_100us": get("lateness_within_100us") if own is None else own,
        "lateness_p99_us": get("lateness_p99_us") if own is None else get("lateness_own_p99_us"),
        "lateness_all_within_100us": get("lateness_within_100us"),
    }


def host_label(host: int) -> str:
    """The emulator's host index as a reader knows it: 0 the server, then the clients."""
    return "server" if host == 0 else f"client {host - 1}"


def emulator_lines(result: Result) -> list[str]:
    """What the emulator adds to a run's output: timing quality and what is not reproduced."""
    s = result.summary
    within = s["lateness_within_100us"]
    lines = [
        f"emulator ({s['scheduler']}, kernel {s['kernel']}): delivery lateness p50 "
        f"{s['lateness_p50_us'] or 0:.1f} us, p99 {s['lateness_p99_us'] or 0:.1f} us, max "
        f"{s['lateness_max_us'] or 0:.1f} us, {100 * (within or 0):.2f}% within 100 us; "
        f"first packet of each batch due at one instant: p99 {s['lateness_batch_p99_us'] or 0:.1f} us, "
        f"{100 * (s['lateness_batch_within_100us'] or 0):.2f}% within 100 us"
    ]
    if s.get("lateness_own_within_100us") is not None:
        lines.append(
            f"emulator's own lateness (a packet's wait for its host's previous packet left out): p99 "
            f"{s['lateness_own_p99_us'] or 0:.1f} us, {100 * s['lateness_own_within_100us']:.2f}% within 100 us"
        )
    writes = result.raw["emulator"].get("writes") or []
    if writes and s.get("write_share") is not None:
        per_host = "; ".join(
            f"{host_label(w['host'])} p50 {w['p50_us'] or 0:.1f} us, p99 {w['p99_us'] or 0:.1f} us" for w in writes
        )
        share = 100 * s["write_share"]
        lines.append(f"writes to the hosts (their kernels' input path) took {share:.1f}% of the run: {per_host}")
    for name, knobs in result.raw["emulator"].get("bpf_knobs", {}).items():
        lines.append(f"{name} knobs: " + ", ".join(f"{k}={v}" for k, v in knobs.items()))
    lines += [f"note: {n}" for n in result.raw["emulator"]["notes"]]
    return lines
