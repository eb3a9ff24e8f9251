"""``wificc emu run|cleanup``, ``validate`` and ``validate-grid``: the kernel's own TCP through
the simulator's link models (:mod:`wificc.emu`, :mod:`wificc.validation`), alone or beside the
simulator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from wificc import scenarios
from wificc.cli.common import (
    app,
    mbit,
    ms,
    num,
    out_console,
    percent,
    run_report,
    scenario_of,
    summary_tables,
    table,
    user_errors,
    write_csv,
)

# What the help texts name without importing the emulator's modules (a test checks they agree):
# wificc.emu's NAME_PREFIX, VALIDATE_CCS and TRAFFIC_RT_PRIORITY, wificc.validation's
# DEFAULT_ATTEMPTS.
NAME_PREFIX = "wcc-"
VALIDATE_CCS = ("cubic", "reno", "bbr")
TRAFFIC_RT_PRIORITY = 50
DEFAULT_ATTEMPTS = 2

emu_app = typer.Typer(
    help="Real-time emulator: the kernel's own TCP through the simulator's link models.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(emu_app, name="emu")


# Options shared by `emu run` and `validate` (the CLI-style scenario options of `wificc run`).
ScenarioArg = Annotated[
    Path | None, typer.Argument(help="Scenario file (TOML/JSON); without options it runs as written.")
]
TestOpt = Annotated[str | None, typer.Option(help=f"Test for the options: {', '.join(scenarios.TESTS)} (tcp_upload).")]
PathOpt = Annotated[str | None, typer.Option("--path", help="Path preset: wired, wifi, hybrid or trace.")]
ChipsetOpt = Annotated[
    str | None,
    typer.Option(help="Wi-Fi chipset preset: ath9k-htc, ath9k, ath10k-1x1, ath10k, qca9377, ax201."),
]
BackhaulOpt = Annotated[str | None, typer.Option(help="Wi-Fi path: AP <-> server wired rate.")]
StationsOpt = Annotated[int | None, typer.Option(help="Wi-Fi path: number of stations.")]
RateOpt = Annotated[str | None, typer.Option(help="Bottleneck rate, e.g. 50mbit.")]
RttOpt = Annotated[str | None, typer.Option(help="Base round-trip time, e.g. 20ms.")]
BufferOpt = Annotated[str | None, typer.Option(help="Bottleneck buffer: 100p, 64kb or 1bdp.")]
QdiscOpt = Annotated[str | None, typer.Option(help="Bottleneck qdisc: pfifo, fq_codel, ...")]
LengthOpt = Annotated[str | None, typer.Option(help="TCP time (Flent LENGTH), default 30s.")]
DelayOpt = Annotated[str | None, typer.Option(help="Ping-only time before and after, default 5s.")]
OutOpt = Annotated[Path | None, typer.Option(help="Write the run's Parquet files into this directory.")]


def scenario_from(scenario_file: Path | None, test: str | None, options: dict[str, Any]) -> dict[str, Any] | Path:
    """The scenario to run: the file as written, or TEST (default tcp_upload) with the options
    over the file."""
    given = {k: v for k, v in options.items() if v is not None}
    if scenario_file is not None and not given and test is None:
        return scenario_file
    return scenario_of(test or "tcp_upload", scenario_file, given)


@emu_app.command("run")
def run_cmd(
    scenario_file: ScenarioArg = None,
    test: TestOpt = None,
    path: PathOpt = None,
    chipset: ChipsetOpt = None,
    backhaul: BackhaulOpt = None,
    stations: StationsOpt = None,
    rate: RateOpt = None,
    rtt: RttOpt = None,
    buffer: BufferOpt = None,
    qdisc: QdiscOpt = None,
    cc: Annotated[
        list[str] | None, typer.Option("--cc", help="Kernel congestion control; repeat for one flow each.")
    ] = None,
    cc_param: Annotated[
        list[str] | None,
        typer.Option("--cc-param", help="KEY=VALUE for every flow's congestion control (a BPF variant's knobs)."),
    ] = None,
    length: LengthOpt = None,
    delay: DelayOpt = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")] = False,
    out: OutOpt = None,
    tag: Annotated[
        str | None,
        typer.Option(help="Run tag: namespaces are wcc-TAG-s, wcc-TAG-c<i> (default from the pid)."),
    ] = None,
    spin_us: Annotated[int | None, typer.Option(help="Emulator spin window before each event, us.")] = None,
    rt_priority: Annotated[int | None, typer.Option(help="Emulator SCHED_FIFO priority (0: normal).")] = None,
    drop_log: Annotated[
        Path | None,
        typer.Option(help="Write every TCP segment the emulated queues dropped to this CSV file (model time)."),
    ] = None,
) -> None:
    """Run a scenario's traffic with the kernel's TCP through the emulated path."""
    from wificc.emu import emulator_lines, run_emulated

    with user_errors():
        options = {
            **scenarios.path_options(path, chipset, backhaul, stations, rate, rtt, buffer, qdisc, length, delay),
            "cc": cc,
            "cc_params": scenarios.parse_cc_params(cc_param) if cc_param else None,
        }
        scenario = scenario_from(scenario_file, test, options)
        result = run_emulated(scenario, tag=tag, spin_us=spin_us, rt_priority=rt_priority, drop_log=drop_log)
        if out is not None:
            result.save(out)
    if json_output:
        print(json.dumps({**run_report(test, result, out), "emulator": result.raw["emulator"]}))
        return
    s = result.summary
    typer.echo(
        f"{test or scenario_file or 'tcp_upload'}: {s['duration_s']:g} s emulated in {s['wall_s']:.3g} s, "
        f"total goodput {s['total_goodput_bps'] / 1e6:.2f} Mbit/s"
    )
    for shown in summary_tables(result):
        out_console.print(shown)
    for line in emulator_lines(result):
        typer.echo(line)
    if out is not None:
        typer.echo(f"wrote {out}")


@emu_app.command("cleanup")
def cleanup_cmd(
    prefix: Annotated[str, typer.Option(help="Name prefix of what to remove.")] = NAME_PREFIX,
) -> None:
    """Remove namespaces and TUN devices that an interrupted run left behind."""
    from wificc.emu import cleanup

    with user_errors():
        removed = cleanup(prefix)
    typer.echo("\n".join(f"removed {name}" for name in removed) if removed else "nothing to remove")


def comparison_lines(row: dict[str, Any]) -> list[list[str]]:
    """The table lines of one congestion control: simulator, kernel, and their difference."""

    def run(side: str) -> list[str]:
        return [
            mbit(row[f"{side}_goodput_bps"]),
            ms(row[f"{side}_ping_p50_ms"]),
            ms(row[f"{side}_ping_p90_ms"]),
            str(row[f"{side}_retrans"]),
            f"{row[f'{side}_cwnd_mean']:.1f}",
            num(row[f"{side}_ap_ampdu_mean"]),
        ]

    def change(key: str) -> str:
        x, y = row[f"sim_{key}"], row[f"kernel_{key}"]
        return percent((y - x) / x if x and y is not None else None)

    keys = ("goodput_bps", "ping_p50_ms", "ping_p90_ms")
    difference = [
        *(change(k) for k in keys),
        f"{row['kernel_retrans'] - row['sim_retrans']:+d}",
        change("cwnd_mean"),
        change("ap_ampdu_mean"),
    ]
    return [
        [row["cc"], "simulator", *run("sim")],
        ["", "kernel", *run("kernel")],
        ["", "kernel - simulator", *difference],
    ]


@app.command("validate")
def validate_cmd(
    scenario_file: ScenarioArg = None,
    test: TestOpt = None,
    path: PathOpt = None,
    chipset: ChipsetOpt = None,
    backhaul: BackhaulOpt = None,
    stations: StationsOpt = None,
    rate: RateOpt = None,
    rtt: RttOpt = None,
    buffer: BufferOpt = None,
    qdisc: QdiscOpt = None,
    cc: Annotated[
        list[str] | None,
        typer.Option(
            "--cc", help=f"Congestion controls to compare (default {', '.join(VALIDATE_CCS)}); wbbr, ... BPF."
        ),
    ] = None,
    cc_param: Annotated[
        list[str] | None,
        typer.Option(
            "--cc-param",
            help="KEY=VALUE for every compared cc: the simulator's parameter and the BPF variant's knob.",
        ),
    ] = None,
    length: LengthOpt = None,
    delay: DelayOpt = None,
    out: Annotated[Path | None, typer.Option(help="Write both runs of each cc and comparison.csv here.")] = None,
) -> None:
    """Run a scenario in the simulator and with the kernel's TCP through the emulator, per
    congestion control, and print them side by side (a BPF variant, e.g. wbbr, runs in the
    kernel against the simulator's algorithm it implements, bbr). With --cc-param, both runs of
    each cc get the parameters: the simulator's algorithm as parameters, the BPF variant as
    knobs; the kernel's built-ins cannot take them."""
    from wificc import api
    from wificc.emu import compare_row, is_variant, run_emulated, simulator_cc, validated, variant_knobs, with_cc

    with user_errors():
        options = scenarios.path_options(path, chipset, backhaul, stations, rate, rtt, buffer, qdisc, length, delay)
        base = validated(scenario_from(scenario_file, test, options))
        params = scenarios.parse_cc_params(cc_param) if cc_param else {}
        names = cc or VALIDATE_CCS
        for name in names:
            if params and not is_variant(name):
                raise ValueError(
                    f"--cc-param: {name} is a kernel built-in, whose parameters wificc cannot set (they are "
                    "module-wide); compare it without --cc-param, or compare BPF variants (wbbr, wbbrp, ...)"
                )
            checked = validated(with_cc(base, name, params))
            variant_knobs(checked)
        rows = []
        notes: dict[str, None] = {}
        for name in names:
            sim = api.run(with_cc(base, simulator_cc(name), params))
            kernel = run_emulated(with_cc(base, name, params))
            rows.append(compare_row(name, sim, kernel))
            notes.update(dict.fromkeys(kernel.raw["emulator"]["notes"]))
            if out is not None:
                sim.save(out / name / "sim")
                kernel.save(out / name / "kernel")
        if out is not None:
            write_csv(out / "comparison.csv", rows)
    shown = table(
        "simulator and kernel",
        ["cc", "run", "goodput Mbit/s", "ping p50 ms", "ping p90 ms", "retrans", "mean cwnd", "AP A-MPDU"],
        [line for r in rows for line in comparison_lines(r)],
    )
    out_console.print(shown)
    for note in notes:
        typer.echo(f"note: {note}")
    if out is not None:
        typer.echo(f"wrote {out}")


@app.command("validate-grid")
def grid_cmd(
    out: Annotated[Path, typer.Argument(help="Directory of the cells and tables (resumed if present).")],
    rate: Annotated[list[str] | None, typer.Option(help="Rates (repeat); default 10mbit, 50mbit.")] = None,
    rtt: Annotated[list[str] | None, typer.Option(help="Base RTTs (repeat); default 20ms, 100ms.")] = None,
    buffer: Annotated[
        list[str] | None, typer.Option(help="pfifo buffers (repeat); default 0.25bdp, 1bdp, 5bdp.")
    ] = None,
    cc: Annotated[
        list[str] | None, typer.Option(help="Congestion controls (repeat); default cubic, reno, bbr.")
    ] = None,
    length: Annotated[str, typer.Option(help="TCP time of each run.")] = scenarios.DEFAULT_LENGTH,
    delay: Annotated[str, typer.Option(help="Ping-only time before and after.")] = scenarios.DEFAULT_DELAY,
    attempts: Annotated[
        int, typer.Option(help="Kernel runs of a cell at most while the emulator is late.")
    ] = DEFAULT_ATTEMPTS,
    tag_prefix: Annotated[
        str | None, typer.Option(help="Start of the emulator's run tags (1-2 lowercase letters/digits).")
    ] = None,
    traffic_priority: Annotated[
        int, typer.Option(help="SCHED_FIFO priority of the kernel runs' traffic threads (0: normal).")
    ] = TRAFFIC_RT_PRIORITY,
    suite: Annotated[
        str | None,
        typer.Option(
            help="Run one kernel-check suite into OUT/<suite>/ instead of the wired grid: wired, "
            "tsq-completion, gso-charge, segments, wifi-download, trace, fairness (the other options "
            "are the wired grid's)."
        ),
    ] = None,
    smoke: Annotated[bool, typer.Option(help="With --suite: a one-cell smoke run of the suite.")] = False,
    repeat: Annotated[
        int | None,
        typer.Option(
            help="With --suite: kernel runs of each cell, beside the simulator over seeds 1..N; the row keeps "
            "medians and ranges. Default: 1 for gso-charge, segments and wired, 3 for the others."
        ),
    ] = None,
    cell: Annotated[
        list[str] | None,
        typer.Option(
            help="With --suite: run only the cells whose id matches this shell pattern (repeat for more; "
            "e.g. '100mbit-16ms-cubic' with --repeat 5 to extend one cell); the table keeps every stored cell."
        ),
    ] = None,
) -> None:
    """Simulator versus kernel on wired paths: every cell of rate x RTT x buffer x cc, one
    tcp_upload each in the simulator and through the emulator; writes table.csv/.parquet/.md.
    With --suite, one of the kernel checks (wificc.kernelcheck) instead."""
    if suite is not None or smoke or repeat is not None or cell:
        _suite_cmd(out, suite, smoke, repeat, cell)
        return
    from wificc import validation

    def chosen(values: list[str] | None, default: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(values) if values else default

    with user_errors():
        grid = validation.cells(
            chosen(rate, validation.GRID_RATES),
            chosen(rtt, validation.GRID_RTTS),
            chosen(buffer, validation.GRID_BUFFERS),
            chosen(cc, validation.GRID_CCS),
        )
        frame = validation.run_grid(
            out,
            grid,
            length=length,
            delay=delay,
            attempts=attempts,
            tag_prefix=tag_prefix,
            traffic_priority=traffic_priority,
            report=typer.echo,
        )
    agree = int((frame["goodput_ok"] & frame["ping_ok"]).sum())
    typer.echo(f"{agree} of {len(frame)} cells within tolerance; wrote {out}/table.md")


def _suite_cmd(out: Path, name: str | None, smoke: bool, repeat: int | None, cells: list[str] | None) -> None:
    from wificc import kernelcheck

    with user_errors():
        if name is None:
            flag = "--smoke" if smoke else "--repeat" if repeat is not None else "--cell"
            raise ValueError(f"{flag}: needs --suite NAME")
        try:
            frame = kernelcheck.run_suite(name, out, smoke=smoke, repeat=repeat, report=typer.echo, only=cells or None)
        except kernelcheck.Unavailable as e:
            typer.echo(str(e))
            raise typer.Exit(0) from None
    ok = int(frame["verdict"].isin(["ok", "ok (spread)"]).sum()) if "verdict" in frame else 0
    typer.echo(f"{ok} of {len(frame)} cells ok; wrote {kernelcheck.suite_dir(out, name, smoke)}/table.md")
