//! `wificc-emu`: the command line of the real-time emulator (see the library documentation).
//!
//! ```text
//! wificc-emu run SCENARIO [--tag TAG] [--spin-us N] [--rt-priority N] [--stdin-control]
//!                         [--drop-log FILE]
//! wificc-emu cleanup [--prefix wcc-...]
//! ```
//! `run` builds the namespaces of the scenario's path (TOML, or JSON for a `.json`
//! file), prints a JSON "ready" line, forwards packets until SIGINT/SIGTERM/SIGHUP (or, with
//! `--stdin-control`, until standard input delivers a line or ends), then removes the
//! namespaces and prints a JSON "stats" line. `cleanup` removes what a killed run left. Exit
//! codes: 0 done, 1 a failure while running, 2 a bad command line or scenario.

use std::path::Path;
use std::process::ExitCode;

use wificc_core::scenario::{Format, Scenario};
use wificc_emu::emulator::{self, Options, DEFAULT_RT_PRIORITY, DEFAULT_SPIN_US};
use wificc_emu::netns::{self, PREFIX};
use wificc_emu::signals;

const USAGE: &str = "usage:
  wificc-emu run SCENARIO [--tag TAG] [--spin-us N] [--rt-priority N] [--stdin-control]
                          [--drop-log FILE]
  wificc-emu cleanup [--prefix PREFIX]

run      emulate the scenario's path (wired, trace or wifi) between network namespaces until
         SIGINT/SIGTERM (or, with --stdin-control, until standard input gives a line or ends)
         --tag TAG          names are wcc-TAG-s (server), wcc-TAG-c<i> (clients); default
                            from the process id; 1 to 6 lowercase letters or digits
         --spin-us N        spin this long before each delivery instead of sleeping (default 100)
         --rt-priority N    SCHED_FIFO priority, 0 for the normal scheduler (default 60)
         --drop-log FILE    when the run stops, write every dropped TCP segment and every SYN
                            read to FILE as CSV (kind,t_ns,src,src_port,dst,dst_port,seq,
                            payload; kind drop or syn; t_ns in model time)
cleanup  remove namespaces and devices whose names start with PREFIX (default wcc-)";

/// A command-line or scenario error (exit code 2).
struct Usage(String);

fn value<'a>(args: &mut impl Iterator<Item = &'a String>, flag: &str) -> Result<&'a str, Usage> {
    args.next()
        .map(String::as_str)
        .ok_or_else(|| Usage(format!("{flag}: expected a value")))
}

fn number<T: std::str::FromStr>(text: &str, flag: &str, what: &str) -> Result<T, Usage> {
    text.parse()
        .map_err(|_| Usage(format!("{flag} {text:?}: expected {what}")))
}

/// The default run tag: the process id in base 36 (at most 5 characters for Linux's largest
/// pid, 2^22).
fn default_tag() -> String {
    let mut n = std::process::id();
    let mut digits = Vec::new();
    loop {
        digits.push(char::from_digit(n % 36, 36).unwrap_or('0'));
        n /= 36;
        if n == 0 {
            break;
        }
    }
    digits.iter().rev().collect()
}

fn load(file: &str) -> Result<Scenario, Usage> {
    let text =
        std::fs::read_to_string(file).map_err(|e| Usage(format!("{file}: cannot read: {e}")))?;
    // JSON by the file's extension, or by its first character: a file without a name (the
    // front end's anonymous /proc/self/fd/N) is JSON when it starts with `{`, which no TOML
    // document does.
    let json = Path::new(file)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        || text.trim_start().starts_with('{');
    let format = if json { Format::Json } else { Format::Toml };
    Scenario::parse(&text, format).map_err(|e| Usage(format!("{file}: {e}")))
}

fn parse_run(args: &[String]) -> Result<(Scenario, Options), Usage> {
    let mut file = None;
    let mut opts = Options {
        tag: default_tag(),
        spin: DEFAULT_SPIN_US * 1000,
        rt_priority: DEFAULT_RT_PRIORITY,
        stdin_control: false,
        drop_log: None,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--tag" => opts.tag = value(&mut it, arg)?.to_string(),
            "--spin-us" => {
                let us: u64 = number(value(&mut it, arg)?, arg, "microseconds (0 or more)")?;
                opts.spin = us * 1000;
            }
            "--rt-priority" => {
                let text = value(&mut it, arg)?;
                let p: i32 = number(text, arg, "0 (normal scheduler) to 99")?;
                if !(0..=99).contains(&p) {
                    return Err(Usage(format!(
                        "--rt-priority {p}: expected 0 (normal scheduler) to 99"
                    )));
                }
                opts.rt_priority = p;
            }
            "--stdin-control" => opts.stdin_control = true,
            "--drop-log" => opts.drop_log = Some(value(&mut it, arg)?.into()),
            flag if flag.starts_with('-') => {
                return Err(Usage(format!("unknown option {flag:?}")));
            }
            path if file.is_none() => file = Some(path),
            extra => return Err(Usage(format!("unexpected argument {extra:?}"))),
        }
    }
    netns::check_tag(&opts.tag).map_err(Usage)?;
    let file = file.ok_or_else(|| Usage("run: expected a SCENARIO file".to_string()))?;
    Ok((load(file)?, opts))
}

fn parse_cleanup(args: &[String]) -> Result<String, Usage> {
    let mut prefix = PREFIX.to_string();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--prefix" => prefix = value(&mut it, arg)?.to_string(),
            other => return Err(Usage(format!("unexpected argument {other:?}"))),
        }
    }
    Ok(prefix)
}

fn fail(message: impl std::fmt::Display, code: u8) -> ExitCode {
    eprintln!("wificc-emu: error: {message}");
    ExitCode::from(code)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(command) = args.first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    match command.as_str() {
        "run" => {
            let (scenario, opts) = match parse_run(&args[1..]) {
                Ok(parsed) => parsed,
                Err(Usage(m)) => return fail(m, 2),
            };
            if let Err(e) = signals::install() {
                return fail(format!("installing signal handlers: {e}"), 1);
            }
            match emulator::run(&scenario, &opts, &mut std::io::stdout().lock()) {
                Ok(_) => ExitCode::SUCCESS,
                Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => fail(e, 2),
                Err(e) => fail(e, 1),
            }
        }
        "cleanup" => {
            let prefix = match parse_cleanup(&args[1..]) {
                Ok(p) => p,
                Err(Usage(m)) => return fail(m, 2),
            };
            match netns::cleanup(&prefix) {
                Ok(removed) => {
                    for name in removed {
                        println!("removed {name}");
                    }
                    ExitCode::SUCCESS
                }
                Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => fail(e, 2),
                Err(e) => fail(e, 1),
            }
        }
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        other => fail(format!("unknown command {other:?}\n{USAGE}"), 2),
    }
}
