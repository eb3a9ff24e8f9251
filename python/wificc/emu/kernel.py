"""What the running kernel has and which of its congestion controls are wificc's BPF variants:
the simulator's algorithm each implements, their knobs from a scenario's ``cc_params``, and
leases that load them for a run and unload them after it."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from wificc import api, bpf

BPF_PREFIX = "w"
# Waits for its standard input to end, then ends the run's lease (argument 1) on the BPF
# variants named after it, unloading those the runs loaded once no run uses them: this happens
# even when the run is killed (its end of the pipe closes then).
RELEASE_GUARD = "import sys; from wificc import bpf; sys.stdin.read(); bpf.release(sys.argv[1], sys.argv[2:])"
# Time the guard gets to unload (bpftool, and the kernel's asynchronous release).
UNLOAD_TIMEOUT_S = 60.0


def available_ccs() -> str:
    return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().strip()


def simulator_cc(cc: str) -> str:
    """The simulator's congestion control that kernel congestion control ``cc`` implements: the
    BPF variant wNAME is NAME; any other name is its own (all are, without the BPF sources)."""
    if not cc.startswith(BPF_PREFIX):
        return cc
    try:
        variants = bpf.variants()
    except bpf.BpfError:
        return cc
    return cc.removeprefix(BPF_PREFIX) if cc in variants else cc


def is_variant(cc: str) -> bool:
    """Whether kernel congestion control ``cc`` is one of wificc's BPF variants."""
    return simulator_cc(cc) != cc


def validated(scenario: api.ScenarioLike) -> dict[str, Any]:
    """The scenario with every default filled in, its flows on the kernel congestion controls it
    names: a flow on a BPF variant (wbbr, ...) is checked as a flow on the simulator's
    algorithm it implements, then runs on the variant."""
    text, fmt = api.scenario_text(scenario)
    try:
        raw = json.loads(text) if fmt == "json" else tomllib.loads(text)
    except ValueError as e:
        raise ValueError(f"(scenario): {e}") from None
    flows = raw.get("flows")
    if not isinstance(flows, list):
        return api.validate(raw)
    kernel = [f.get("cc") if isinstance(f, dict) else None for f in flows]
    renamed = [{**f, "cc": simulator_cc(cc)} if isinstance(cc, str) else f for f, cc in zip(flows, kernel, strict=True)]
    normalised = api.validate({**raw, "flows": renamed})
    for f, cc in zip(normalised["flows"], kernel, strict=True):
        if isinstance(cc, str):
            f["cc"] = cc
    return normalised


def variant_knobs(scenario: dict[str, Any]) -> dict[str, list[str]]:
    """The knob assignments of each BPF variant that flows of the normalised ``scenario`` give
    ``cc_params`` (:func:`wificc.bpf.knob_assignments`). Flows on one variant share its knobs,
    so they must ask for the same values; a ``ValueError`` names the field otherwise."""
    sets: dict[str, tuple[int, list[str]]] = {}
    for i, flow in enumerate(scenario["flows"]):
        cc, params = flow["cc"], flow.get("cc_params") or {}
        if not is_variant(cc) or not params:
            continue
        try:
            assignments = bpf.knob_assignments(cc, params, f"flows[{i}].cc_params")
        except bpf.BpfError as e:
            raise ValueError(str(e)) from None
        first, earlier = sets.setdefault(cc, (i, assignments))
        if sorted(earlier) != sorted(assignments):
            raise ValueError(
                f"flows[{i}].cc_params: flows {first} and {i} both run {cc} with different parameters "
                f"({', '.join(earlier)} against {', '.join(assignments)}); a loaded variant has one set "
                "of knobs for all its connections"
            )
    return {cc: assignments for cc, (_, assignments) in sets.items()}


@contextmanager
def bpf_variants_loaded(ccs: Iterable[str], knob_sets: dict[str, list[str]] | None = None) -> Iterator[list[str]]:
    """Hold a lease on the BPF variants among ``ccs`` for the block (:func:`wificc.bpf.acquire`),
    loading those the kernel does not have yet, with the knobs of ``knob_sets``
    (:func:`variant_knobs`); yields the names this run loaded. When the block
    ends, however it ends, the lease ends, and a variant that runs loaded is unloaded once no
    other run holds it.

    The release is done by a guard process in a session of its own that waits for its standard
    input to end: when the block ends it is closed and waited for; if this process is killed,
    the kernel closes it, and the guard still releases.
    """
    wanted = sorted({cc for cc in ccs if is_variant(cc)})
    if not wanted:
        yield []
        return
    token = bpf.lease_token()
    guard = subprocess.Popen(
        [sys.executable, "-c", RELEASE_GUARD, token, *wanted], stdin=subprocess.PIPE, start_new_session=True
    )
    try:
        try:
            loaded = bpf.acquire(token, wanted, knob_sets)
        except bpf.BpfError as e:
            raise OSError(f"loading {', '.join(wanted)}: {e}") from None
        yield loaded
    finally:
        assert guard.stdin is not None
        guard.stdin.close()
        guard.wait(UNLOAD_TIMEOUT_S)


def knobs_in_use(scenario: dict[str, Any]) -> dict[str, dict[str, str]]:
    """The knobs of each BPF variant the scenario's flows run, as now set (a variant loaded
    without wificc's pins has none to show)."""
    out = {}
    for cc in sorted({f["cc"] for f in scenario["flows"] if is_variant(f["cc"])}):
        try:
            out[cc] = {k.name: k.show() for k in bpf.knobs(cc)}
        except bpf.BpfError:
            continue
    return out
