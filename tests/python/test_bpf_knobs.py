"""Scenario parameters as knobs of the BPF variants: the mapping from the simulator's
parameters, checked against the programs' sources, and its errors. Needs neither root nor a
BPF-capable kernel; `test_bpf.py` applies knobs to loaded variants."""

from __future__ import annotations

import re

import pytest
import wificc
from typer.testing import CliRunner
from wificc import bpf, cli, emu

# X(name, default, min, max, scale) entries of a variant's WBBR_KNOBS (bpf/wbbr.h).
KNOB_ENTRY = re.compile(r"X\((\w+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+)\)")


def source_knobs(name: str) -> dict[str, bpf.Knob]:
    """The knobs a variant's source declares, at their defaults, with the common ones."""
    texts = [(bpf.source_dir() / "wbbr.h").read_text(), (bpf.source_dir() / f"{name}.bpf.c").read_text()]
    common = re.search(r"#define WBBR_COMMON_KNOBS\(X\) (.*)", texts[0]).group(1)
    own = re.search(r"#define WBBR_KNOBS\(X\)((?:.*\\\n)*.*)", texts[1]).group(1)
    entries = KNOB_ENTRY.findall(common) + KNOB_ENTRY.findall(own)
    return {n: bpf.Knob(n, int(d), int(lo), int(hi), int(s)) for n, d, lo, hi, s in entries}


def simulator_defaults(algorithm: str) -> dict:
    return next(c["params"] for c in wificc.cc_list() if c["name"] == algorithm)


@pytest.mark.parametrize("name", sorted(bpf.PARAM_KNOBS))
def test_every_knob_has_a_parameter_and_the_simulators_default_is_the_knobs(name):
    assert name in bpf.variants()
    declared = source_knobs(name)
    table = bpf.PARAM_KNOBS[name]
    assert sorted(knob for knob, _ in table.values()) == sorted(declared)
    defaults = simulator_defaults(name.removeprefix("w"))
    for param, (knob, convert) in table.items():
        assert param in defaults, f"{name}: the simulator's {name[1:]} has no parameter {param}"
        assert declared[knob].parse(convert(defaults[param])) == declared[knob].raw, (name, param)


def test_values_are_converted_to_the_knobs_units():
    got = bpf.knob_assignments(
        "wbbrn",
        {"send_quantum_interval": "2ms", "probe_bw_up_gain": 1.4, "send_quantum_max": "64kib", "extra_acked": False},
    )
    assert got == [
        "send_quantum_interval_us=2000",
        "probe_bw_up_gain=1.4",
        "send_quantum_max_bytes=65536",
        "extra_acked=0",
    ]
    assert bpf.knob_assignments("wbbr_pg", {"pg_probe_rtt_interval_min": "2s", "pg_gamma_max": 2}) == [
        "pg_probe_rtt_min_ms=2000",
        "pg_gamma_max=2.0",
    ]
    assert bpf.knob_assignments("wbbr_apg", {"apg_eval": "every_cwnd_update"}) == ["apg_eval=1"]
    knob = source_knobs("wbbrn")["probe_bw_up_gain"]
    assert knob.parse("1.4") == 358  # 1.4 x 256 = 358.4: the nearest 1/256 step, as the simulator


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("wbbrp", {"cwnd_gain": 2.5}, "cc_params.cwnd_gain: the BPF variant wbbrp has no knob for it"),
        ("wbbrp", {"bbrp_pace": 5.5}, "cc_params.bbrp_pace = 5.5: expected an integer"),
        ("wbbrp", {"extra_acked": 1}, "cc_params.extra_acked = 1: expected true or false"),
        ("wbbrn", {"send_quantum_interval": "1500ns"}, "expected a whole number of microseconds"),
        ("wbbrn", {"send_quantum_max": "lots"}, "cc_params.send_quantum_max = 'lots': value: got 'lots'"),
        ("wbbr_apg", {"apg_eval": "sometimes"}, "expected one of once_per_cycle, every_cwnd_update"),
        ("wcubic", {}, "wcubic: not a wificc BPF variant"),
    ],
)
def test_parameters_without_a_knob_and_bad_values_are_named(name, params, message):
    with pytest.raises(bpf.BpfError, match=re.escape(message)):
        bpf.knob_assignments(name, params)


def scenario(*flows):
    return {"flows": [{"cc": cc, "cc_params": params} for cc, params in flows]}


def test_flows_on_one_variant_must_ask_for_the_same_knobs():
    assert emu.variant_knobs(scenario(("wbbrp", {"bbrp_pace": 5}), ("wbbrp", {"bbrp_pace": 5}))) == {
        "wbbrp": ["bbrp_pace=5"]
    }
    # Kernel built-ins keep their note instead; flows without parameters ask for nothing.
    assert emu.variant_knobs(scenario(("cubic", {"beta": 0.5}), ("wbbr", {}))) == {}
    with pytest.raises(ValueError, match=r"flows\[2\]\.cc_params: flows 0 and 2 both run wbbrp with different"):
        emu.variant_knobs(scenario(("wbbrp", {"bbrp_pace": 5}), ("wbbr", {}), ("wbbrp", {"bbrp_pace": 7})))
    with pytest.raises(ValueError, match=r"flows\[0\]\.cc_params\.high_gain: the BPF variant wbbr has no knob"):
        emu.variant_knobs(scenario(("wbbr", {"high_gain": 3.0})))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--cc", "wbbrp", "--cc", "cubic", "--cc-param", "bbrp_pace=5"],
            "--cc-param: cubic is a kernel built-in, whose parameters wificc cannot set",
        ),
        (["--cc", "wbbr", "--cc-param", "bbrp_pace=5"], "flows[0].cc_params: parameter bbrp_pace = 5: not a parameter"),
        (["--cc", "wbbr", "--cc-param", "cwnd_gain=2.5"], "cc_params.cwnd_gain: the BPF variant wbbr has no knob"),
    ],
)
def test_validate_takes_parameters_for_variants_only_and_checks_them_before_running(args, message):
    # Refused before anything runs, so neither root nor an emulator is needed.
    runner = CliRunner()
    done = runner.invoke(cli.app, ["validate", "--rate", "10mbit", *args])
    assert done.exit_code == 2, done.output
    assert message in done.output
