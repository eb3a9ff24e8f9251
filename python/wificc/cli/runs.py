"""``wificc run``, ``check``, ``demo``, ``bench`` and ``model``: single runs and what prints them.

``run`` builds a scenario from a test of the catalog (:mod:`wificc.scenarios`) and options, or
reads one from ``--scenario FILE``, runs it with a progress bar of its simulated time (on
stderr) and prints summary tables (``--json``: one JSON object); with ``--out`` it writes the
run's Parquet files. Ctrl-C stops the run within 100 ms of simulated time, says that nothing was
stored and exits with 130.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from wificc import models, scenarios
from wificc.cli.common import (
    BOTTLENECK_QUEUE,
    app,
    cell,
    err_console,
    interrupted,
    mbit,
    ms,
    out_console,
    percent,
    run_report,
    scenario_of,
    summary_tables,
    table,
    user_errors,
    write_csv,
)

if TYPE_CHECKING:
    from wificc.result import Result

# Congestion controls the demo compares, those the registry has, in this order.
DEMO_CCS = ("cubic", "reno", "bbr")
DEMO_TEST = "tcp_upload"
DEMO_OPTIONS: dict[str, Any] = {"rate": "50mbit", "rtt": "20ms", "buffer": "1bdp", "qdisc": "pfifo"}
DEMO_OUT = Path("results/demo-wired")
# The benchmark's default simulated time (wificc.bench.BENCH_LENGTH; a test checks they agree).
BENCH_LENGTH = "30s"


@app.command(epilog="Tests: " + ", ".join(scenarios.TESTS) + ". See 'wificc tests NAME'.")
def run(
    test: Annotated[
        str | None, typer.Argument(help=f"Test to run: {', '.join(scenarios.TESTS)}.", show_default=False)
    ] = None,
    scenario_file: Annotated[
        Path | None,
        typer.Option("--scenario", help="Scenario file (TOML/JSON): run as written, or the base of TEST."),
    ] = None,
    path: Annotated[str | None, typer.Option("--path", help="Path preset: wired, wifi, hybrid or trace.")] = None,
    chipset: Annotated[
        str | None,
        typer.Option(help="Wi-Fi chipset preset: ath9k-htc, ath9k, ath10k-1x1, ath10k, qca9377, ax201."),
    ] = None,
    backhaul: Annotated[str | None, typer.Option(help="Wi-Fi path: AP <-> server wired rate.")] = None,
    stations: Annotated[int | None, typer.Option(help="Wi-Fi path: number of stations.")] = None,
    driver: Annotated[
        str | None,
        typer.Option(help="Wi-Fi driver model: ath9k, ath9k_htc, ath10k, iwlwifi or generic (default: the chipset's)."),
    ] = None,
    driver_param: Annotated[
        list[str] | None,
        typer.Option(
            "--driver-param",
            help="KEY=VALUE of the Wi-Fi driver, e.g. tx_status.delay=0, rx.last=0, ring=64, tso=true, wake=per_burst.",
        ),
    ] = None,
    mcs: Annotated[
        str | None, typer.Option(help="Wi-Fi MCS per stream of every link (7), or of each station's (7,3).")
    ] = None,
    rate: Annotated[str | None, typer.Option(help="Bottleneck rate, e.g. 50mbit.")] = None,
    rtt: Annotated[str | None, typer.Option(help="Base round-trip time, e.g. 20ms.")] = None,
    buffer: Annotated[str | None, typer.Option(help="Bottleneck buffer: 100p, 64kb or 1bdp.")] = None,
    qdisc: Annotated[str | None, typer.Option(help="Bottleneck qdisc: pfifo, fq_codel, ...")] = None,
    cc: Annotated[list[str] | None, typer.Option("--cc", help="Congestion control; repeat for one flow each.")] = None,
    cc_param: Annotated[
        list[str] | None,
        typer.Option(
            "--cc-param",
            help="KEY=VALUE for every flow's congestion control; CC.KEY=VALUE for the flows running CC "
            "(cubic.beta=0.8); N:KEY=VALUE for flow N, from 1 (2:high_gain=3).",
        ),
    ] = None,
    flows: Annotated[int | None, typer.Option(help="Number of flows (tcp_nup, tcp_ndown).")] = None,
    flows_per_station: Annotated[
        int | None,
        typer.Option(
            help="tcp_nup, tcp_ndown on Wi-Fi: M flows from each station (N x M, station by station in turn)."
        ),
    ] = None,
    txq: Annotated[
        str | None,
        typer.Option(help="Wi-Fi path: the mac80211 TXQ of the AP and every station, fq_codel or pfifo[:LIMIT]."),
    ] = None,
    ap_txq: Annotated[
        str | None,
        typer.Option(help="Wi-Fi path: the AP's mac80211 TXQ when it differs from --txq, fq_codel or pfifo[:LIMIT]."),
    ] = None,
    print_scenario: Annotated[
        bool, typer.Option("--print-scenario", help="Print the resolved scenario (TOML) and exit without running.")
    ] = False,
    tsq: Annotated[
        str | None,
        typer.Option(
            help="TCP Small Queues: default (1 ms; on a Wi-Fi station mac80211's 4 or 8 ms), "
            "1ms..1024ms, off, static:<N>p."
        ),
    ] = None,
    tp: Annotated[int | None, typer.Option(help="Pacing multiplier (TP rate) 1..10.")] = None,
    kernel: Annotated[
        str | None,
        typer.Option(help="Linux release the hosts run: 4.19, 5.4, 5.10, 5.13, 5.15, 6.1, 6.6, 6.12 (default), 6.18."),
    ] = None,
    length: Annotated[str | None, typer.Option(help="TCP time (Flent LENGTH), default 30s.")] = None,
    delay: Annotated[
        str | None, typer.Option(help="Ping-only time before and after (Flent DELAY), default 5s.")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="Seed of every random stream.")] = None,
    warmup: Annotated[str | None, typer.Option(help="Time the summaries ignore at the start.")] = None,
    step: Annotated[str | None, typer.Option(help="Sampling and ping interval, default 200ms.")] = None,
    ping: Annotated[bool | None, typer.Option("--ping/--no-ping", help="ICMP ping for the whole test.")] = None,
    direction: Annotated[str | None, typer.Option(help="Direction of the TCP flows: up or down.")] = None,
    tsq_packets: Annotated[int | None, typer.Option(help="bottleneck_curve: static TSQ limit, packets.")] = None,
    rtts: Annotated[str | None, typer.Option(help="rtt_fairness: each flow's base RTT, e.g. 10ms,50ms.")] = None,
    against: Annotated[str | None, typer.Option(help="inter_protocol: the competing CCA (cubic).")] = None,
    trace_up: Annotated[Path | None, typer.Option(help="Trace path: Mahimahi trace of the uplink.")] = None,
    trace_down: Annotated[Path | None, typer.Option(help="Trace path: Mahimahi trace of the downlink.")] = None,
    rates: Annotated[str | None, typer.Option(help="Trace path: rate schedule, e.g. 12mbit,24mbit.")] = None,
    step_at: Annotated[str | None, typer.Option(help="Trace path: when the later rates start, e.g. 3s.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")] = False,
    out: Annotated[Path | None, typer.Option(help="Write the run's Parquet files into this directory.")] = None,
    memory_limit: Annotated[
        str | None,
        typer.Option(help="Refuse a run estimated to need more memory (e.g. 4000mb; default half the RAM)."),
    ] = None,
) -> None:
    """Run a test (tcp_upload, tcp_download, tcp_nup, tcp_ndown) or a scenario file."""
    from wificc import api, storage
    from wificc.progress import run_bar

    with user_errors():
        options = {
            **scenarios.path_options(path, chipset, backhaul, stations, rate, rtt, buffer, qdisc, length, delay),
            "driver": driver,
            "mcs": mcs,
            "driver_params": scenarios.parse_cc_params(driver_param, "--driver-param") if driver_param else None,
            "cc": cc,
            "cc_params": scenarios.parse_cc_params(cc_param) if cc_param else None,
            "flows": flows,
            "flows_per_station": flows_per_station,
            "txq": txq,
            "ap_txq": ap_txq,
            "tsq": tsq,
            "tp": tp,
            "kernel": kernel,
            "seed": seed,
            "warmup": warmup,
            "step": step,
            "ping": ping,
            "direction": direction,
            "tsq_packets": tsq_packets,
            "rtts": rtts,
            "against": against,
            "trace_up": trace_up,
            "trace_down": trace_down,
            "rates": rates,
            "step_at": step_at,
        }
        scenario = scenario_of(test, scenario_file, {k: v for k, v in options.items() if v is not None})
        if print_scenario:
            typer.echo(scenarios.to_toml(api.validate(scenario)), nl=False)
            return
        # One writer per --out directory, from before the run until its files are stored.
        with storage.locked(out) if out is not None else nullcontext():
            try:
                with run_bar(f"{test or scenario_file}", err_console) as progress:
                    result = api.run(scenario, memory_limit=memory_limit, progress=progress)
            except KeyboardInterrupt:
                raise interrupted(
                    "the run was stopped before its end; nothing was stored", "run it again with"
                ) from None
            if out is not None:
                result.save(out)
    if json_output:
        print(json.dumps(run_report(test, result, out)))
        return
    s = result.summary
    typer.echo(
        f"{test or scenario_file}: {s['duration_s']:g} s simulated in {s['wall_s']:.3g} s "
        f"({s['events']} events), total goodput {mbit(s['total_goodput_bps'])} Mbit/s"
    )
    for shown in summary_tables(result):
        out_console.print(shown)
    if out is not None:
        typer.echo(f"wrote {out}")


@app.command("check")
def check(file: Annotated[Path, typer.Argument(help="Scenario file (TOML or JSON).")]) -> None:
    """Check a scenario file and print it with every default filled in (JSON)."""
    from wificc import api

    with user_errors():
        normalised = api.validate(file)
    print(json.dumps(normalised, indent=2))


@app.command("bench")
def bench_command(
    length: Annotated[str, typer.Option(help="Simulated time.")] = BENCH_LENGTH,
    seed: Annotated[int, typer.Option(help="Seed of every random stream.")] = 1,
) -> None:
    """Measure the simulator: one cubic flow, 1 Gbit/s, 10 ms RTT, 1 BDP pfifo."""
    from wificc import bench

    with user_errors():
        figures = bench.run(length, seed)
    rows = [
        ["simulated", f"{figures['simulated_s']:g} s"],
        ["wall clock", f"{figures['wall_s']:.3f} s"],
        ["simulated s / wall s", f"{figures['speed']:.2f}"],
        ["events", f"{figures['events']:,}"],
        ["events / wall s", f"{figures['events_per_s']:,.0f}"],
        ["goodput", f"{mbit(figures['goodput_bps'])} Mbit/s"],
    ]
    p = bench.BENCH_PATH
    typer.echo(f"bench: one {bench.BENCH_CC} flow, {p['rate']}, {p['rtt']} RTT, {p['buffer']} {p['qdisc']['kind']}")
    out_console.print(table("", ["figure", "value"], rows))


def run_all(scenario_list: list[Any], label: Callable[[int], str]) -> list[Result]:
    """Run several scenarios on a thread pool (the core releases the GIL), with a progress bar."""
    from concurrent.futures import ThreadPoolExecutor, as_completed

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from wificc import api

    results: dict[int, Result] = {}
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err_console, transient=True) as progress:
        task = progress.add_task("running", total=len(scenario_list))
        with ThreadPoolExecutor(max_workers=max(1, min(len(scenario_list), os.cpu_count() or 1))) as pool:
            futures = {pool.submit(api.run, s): i for i, s in enumerate(scenario_list)}
            for future in as_completed(futures):
                i = futures[future]
                results[i] = future.result()
                progress.update(task, advance=1, description=f"done {label(i)}")
    return [results[i] for i in range(len(scenario_list))]


def demo_row(cc: str, result: Result) -> dict[str, Any]:
    """The comparison figures of one demo run."""
    raw = result.raw
    flow = raw["flows"][0]
    ping = raw["pings"][0]
    queue = next(q for q in raw["queues"] if q["name"] == BOTTLENECK_QUEUE)
    return {
        "cc": cc,
        "goodput_bps": flow["goodput_bps"],
        "retrans": flow["retrans"],
        "rto_count": flow["rto_count"],
        "ping_p50_ms": ping["rtt_p50_ms"],
        "ping_p90_ms": ping["rtt_p90_ms"],
        "bottleneck_drops": queue["dropped"],
        "bottleneck_sojourn_p95_ms": queue["sojourn_p95_ms"],
        "bottleneck_utilization": queue["utilization"],
    }


@app.command()
def demo(
    out: Annotated[Path, typer.Option(help="Directory of the results.")] = DEMO_OUT,
    length: Annotated[str, typer.Option(help="TCP time of each run.")] = scenarios.DEFAULT_LENGTH,
    delay: Annotated[str, typer.Option(help="Ping-only time before and after.")] = scenarios.DEFAULT_DELAY,
) -> None:
    """Compare cubic, reno and bbr: one upload + ping each, 50 Mbit/s, 20 ms RTT, 1 BDP pfifo."""
    from wificc import api

    registry = {entry["name"] for entry in api.cc_list()}
    ccs = [cc for cc in DEMO_CCS if cc in registry]
    for cc in DEMO_CCS:
        if cc not in registry:
            typer.echo(f"note: {cc} is not in this build's registry; skipped", err=True)
    with user_errors():
        scenario_list = [scenarios.build(DEMO_TEST, cc=[cc], length=length, delay=delay, **DEMO_OPTIONS) for cc in ccs]
        results = run_all(scenario_list, lambda i: ccs[i])
        out.mkdir(parents=True, exist_ok=True)
        rows = []
        paths = []
        for cc, result in zip(ccs, results, strict=True):
            paths.append(result.save(out / cc))
            rows.append({**demo_row(cc, result), **result.summary_row()})
        summary_csv = out / "summary.csv"
        write_csv(summary_csv, rows)
    setup = ", ".join(DEMO_OPTIONS.values())
    typer.echo(f"{DEMO_TEST}: {setup}, {length} of TCP (goodput Mbit/s, times ms)")
    shown = table(
        "",
        ["cc", "goodput", "retrans", "RTOs", "ping p50", "ping p90", "sojourn p95", "util"],
        [
            [
                r["cc"],
                mbit(r["goodput_bps"]),
                str(r["retrans"]),
                str(r["rto_count"]),
                ms(r["ping_p50_ms"]),
                ms(r["ping_p90_ms"]),
                ms(r["bottleneck_sojourn_p95_ms"]),
                percent(r["bottleneck_utilization"]),
            ]
            for r in rows
        ],
    )
    out_console.print(shown)
    for path in paths:
        typer.echo(f"wrote {path}/ (Parquet tables, scenario.json)")
    typer.echo(f"wrote {summary_csv}")


@app.command("model")
def model_command(
    name: Annotated[str, typer.Argument(help=f"Analytic model: {', '.join(models.NAMES)}.")],
    json_output: Annotated[bool, typer.Option("--json", help="Print the tables as JSON.")] = False,
    out: Annotated[Path | None, typer.Option(help="Write the model's figures (PNG, SVG) here.")] = None,
) -> None:
    """Analytic models: the Wi-Fi 6 hybrid bottleneck (Grazia 2021), BBR startup gains, BBR-PG fluid shares."""
    with user_errors():
        if name not in models.NAMES:
            raise ValueError(f"model: got {name!r}, expected one of {', '.join(models.NAMES)}")
        result = models.MODELS[name]()
        written = models.FIGURES[name](Path(out) / name) if out is not None else []
    if json_output:
        print(json.dumps(result))
        return
    tables = {k: v for k, v in result.items() if isinstance(v, list) and v and isinstance(v[0], dict)}
    for table_name, rows in tables.items():
        columns = list(rows[0])
        shown = rows if len(rows) <= 40 else rows[:: max(1, len(rows) // 40)]
        body = [[cell(row[c]) for c in columns] for row in shown]
        out_console.print(table(f"{name}: {table_name}", columns, body))
    for path in written:
        typer.echo(f"wrote {path}")
