//! Run a scenario file (TOML or JSON) and print its summary as JSON, without the Python front
//! end: `cargo run --release --example run_scenario -- scenario.toml [--series]`.
//!
//! Built with the `ack-log` feature, `--ack-log [SEED]` prints instead the senders' per-ACK log
//! as CSV, in the columns of `scripts/bbr_state`'s probe (`tcp::ack_log`):
//! `cargo run --release -p wificc-core --features ack-log --example run_scenario -- scenario.json
//! --ack-log 1 > sim.csv`.

use std::process::ExitCode;

use wificc_core::scenario::{self, Format, Scenario};

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: run_scenario FILE.toml|FILE.json [--series | --ack-log [SEED]]");
        return ExitCode::from(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::from(2);
        }
    };
    let format = if path.ends_with(".json") {
        Format::Json
    } else {
        Format::Toml
    };
    let args: Vec<String> = std::env::args().skip(2).collect();
    if let Some(i) = args.iter().position(|a| a == "--ack-log") {
        return ack_log::run(&path, &text, format, args.get(i + 1));
    }
    let result = Scenario::parse(&text, format).and_then(|s| scenario::run(&s));
    match result {
        Ok(r) => {
            let mut out = serde_json::json!({"summary": r.summary, "flows": r.flows, "pings": r.pings, "queues": r.queues, "wifi": r.wifi});
            if std::env::args().any(|a| a == "--series") {
                out["series"] = serde_json::to_value(&r.series).unwrap_or_default();
            }
            println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{path}: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(not(feature = "ack-log"))]
mod ack_log {
    use std::process::ExitCode;

    use wificc_core::scenario::Format;

    pub fn run(_path: &str, _text: &str, _format: Format, _seed: Option<&String>) -> ExitCode {
        eprintln!("--ack-log: this build has no per-ACK log; build with --features ack-log");
        ExitCode::from(2)
    }
}

#[cfg(feature = "ack-log")]
mod ack_log {
    use std::io::{BufWriter, Write};
    use std::process::ExitCode;

    use wificc_core::scenario::{Format, Scenario};
    use wificc_core::tcp::ack_log::{self, AckEv};
    use wificc_core::topology;

    /// The CSV columns; BBR's from its model values (`bw_bps` in bit/s, `pacing_gain` in units
    /// of 1/256), sequence numbers in segments, times in ns or us as named.
    const HEADER: &str = "kind,sk,ts_ns,snd_una,snd_nxt,packets_out,sacked_out,lost_out,\
        retrans_out,lost,delivered,delivered_mstamp_us,wstamp_ns,cwnd,srtt_us,ca_state,\
        min_rtt_us,bw_bps,pacing_gain,cycle_idx,mode,lt_use_bw,rack_rtt_us,rack_mstamp_us,\
        reordering,seq,end_seq";

    fn cc(e: &AckEv, name: &str) -> f64 {
        e.cc.iter()
            .find(|(n, _)| *n == name)
            .map_or(f64::NAN, |(_, v)| *v)
    }

    pub fn run(path: &str, text: &str, format: Format, seed: Option<&String>) -> ExitCode {
        let mut sc = match Scenario::parse(text, format) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{path}: {e}");
                return ExitCode::FAILURE;
            }
        };
        if let Some(seed) = seed {
            match seed.parse() {
                Ok(v) => sc.seed = v,
                Err(_) => {
                    eprintln!("SEED: expected an unsigned integer, got {seed:?}");
                    return ExitCode::from(2);
                }
            }
        }
        ack_log::start();
        if let Err(e) = topology::run(&sc) {
            eprintln!("{path}: {e}");
            return ExitCode::FAILURE;
        }
        let mut w = BufWriter::new(std::io::stdout().lock());
        let mut rows = vec![HEADER.to_string()];
        for e in &ack_log::take() {
            let gain = (cc(e, "pacing_gain") * 256.0).round();
            rows.push(format!(
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                e.kind,
                e.flow,
                e.ts_ns,
                e.snd_una,
                e.snd_nxt,
                e.packets_out,
                e.sacked_out,
                e.lost_out,
                e.retrans_out,
                e.lost,
                e.delivered,
                e.delivered_mstamp_us,
                e.wstamp_ns,
                e.cwnd,
                e.srtt_us,
                e.ca_state,
                cc(e, "min_rtt_us"),
                cc(e, "bw_bps"),
                gain,
                cc(e, "cycle_idx"),
                cc(e, "mode"),
                cc(e, "lt_use_bw"),
                e.rack_rtt_us,
                e.rack_mstamp_us,
                e.reordering,
                e.seq,
                e.end_seq
            ));
        }
        for row in rows {
            if writeln!(w, "{row}").is_err() {
                return ExitCode::FAILURE;
            }
        }
        ExitCode::SUCCESS
    }
}
