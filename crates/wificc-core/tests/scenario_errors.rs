//! Scenario loading end to end.
//!
//! 1. Invalid scenarios, one mistake each, are refused with an error that names the field path,
//!    the value given and what is expected; the table pins every message exactly.
//! 2. No input makes loading or running panic: a property test feeds `Scenario::from_value`
//!    random documents (the valid base scenario with random fields set to random values of
//!    random types and nesting, or arbitrary JSON), and runs every one that validates for a few
//!    simulated milliseconds.
//! 3. A run is a function of its scenario and seed: the same seed gives byte-identical results
//!    (wall-clock fields aside), and another seed gives other results where something random
//!    is drawn (BBR's ProbeBW phase, PIE's drops).
//!
//! `cargo test -p wificc-core --test scenario_errors` (with `--release` in CI).

use std::panic::{catch_unwind, AssertUnwindSafe};

use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{json, Map, Value};
use wificc_core::api;
use wificc_core::cc;
use wificc_core::parse::{Dur, RATE_UNITS_SHOWN};
use wificc_core::scenario::{Dscp, Format, Scenario};
use wificc_core::units::NSEC_PER_MSEC;

// ---------------------------------------------------------------------------------------------
// The valid scenario each invalid case changes in one place.

/// A 2 s run over one 50 Mbit/s, 20 ms wired bottleneck with one client; `path_fields` go into
/// the `[path]` table.
fn with_path(path_fields: &str) -> String {
    format!(
        "duration = \"2s\"\n[path]\nkind = \"wired\"\nrate = \"50mbit\"\nrtt = \"20ms\"\n\
         {path_fields}\n"
    )
}

/// A Wi-Fi path with every radio default.
const WIFI: &str = "duration = \"2s\"\n[path]\nkind = \"wifi\"\nrtt = \"10ms\"\n";

/// The base with top-level fields.
fn with_top(fields: &str) -> String {
    format!("{fields}\n{}", with_path(""))
}

/// The base with a `[stack]` table.
fn with_stack(fields: &str) -> String {
    format!("{}[stack]\n{fields}\n", with_path(""))
}

/// The base with one flow.
fn with_flow(fields: &str) -> String {
    format!("{}[[flows]]\n{fields}\n", with_path(""))
}

/// The base with one ping.
fn with_ping(fields: &str) -> String {
    format!("{}[[pings]]\n{fields}\n", with_path(""))
}

/// The base with its bottleneck rate written as `rate` (a TOML value).
fn with_rate(rate: &str) -> String {
    with_path("").replace("\"50mbit\"", rate)
}

fn error_of(text: &str, format: Format) -> String {
    match Scenario::parse(text, format) {
        Ok(_) => format!("(accepted: {text})"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_base_scenarios_are_valid() {
    // Each invalid case below differs from one of these in the one field it names.
    let valid = [
        with_path(""),
        with_path("buffer = \"10p\"\nqdisc = { kind = \"codel\", target = \"5ms\" }"),
        with_top("warmup = \"1s\"\nstep = \"100ms\""),
        with_stack("tsq = \"4ms\"\ntp = 3\nmss = 1448\nhost_qdisc = { kind = \"fq_codel\" }"),
        with_flow("cc = \"bbr\"\ncc_params = { cwnd_gain = 2.5 }\nstart = \"1s\"\nstop = \"1.5s\""),
        with_flow("dscp = 63"),
        with_ping("interval = \"1ms\"\nkind = \"udp\"\ndscp = \"af41\""),
        with_rate("\"18446744073709551615\""),
    ];
    for text in valid {
        assert!(
            Scenario::parse(&text, Format::Toml).is_ok(),
            "{text}: {}",
            error_of(&text, Format::Toml)
        );
    }
}

#[test]
fn invalid_scenarios_name_the_field_the_value_and_what_is_expected() {
    let cc_names = cc::names().join(", ");
    let qdisc_kinds = "`pfifo`, `bfifo`, `pfifo_fast`, `codel`, `fq_codel`, `pie`, `ecn_step`";
    let dscp = "expected a DSCP value 0..63 or a name (BE, EF, CS0..CS7, AF11..AF43)";
    let toml = |text: String, expected: &str| (text, Format::Toml, expected.to_string());
    let json = |text: &str, expected: &str| (text.to_string(), Format::Json, expected.to_string());
    let cases = [
        // Rates.
        toml(
            with_rate("\"0mbit\""),
            "path.rate: got 0 bit/s, expected a positive rate such as \"50mbit\"",
        ),
        toml(
            with_rate("\"-5mbit\""),
            "path.rate: got \"-5mbit\", expected a non-negative rate",
        ),
        toml(
            with_rate("\"fast\""),
            "path.rate: got \"fast\", expected a rate such as \"50mbit\" or \"1gbit\"",
        ),
        toml(
            with_rate("\"1e30gbit\""),
            "path.rate: got \"1e30gbit\", expected at most 18446744073709551615 bit/s",
        ),
        toml(
            with_rate("true"),
            "path.rate: invalid type: boolean `true`, expected a rate such as \"50mbit\"",
        ),
        toml(
            with_path("access_rate = 0"),
            "path.access_rate: got 0 bit/s, expected a positive rate",
        ),
        // Congestion controls and their parameters.
        toml(
            with_flow("cc = \"tahoe\""),
            &format!(
                "flows[0].cc: unknown congestion control \"tahoe\"; expected one of {cc_names}"
            ),
        ),
        toml(
            with_flow("cc = \"reno\"\ncc_params = { beta = 0.7 }"),
            "flows[0].cc_params: parameter beta = 0.7: unknown field `beta`, there are no fields",
        ),
        toml(
            with_flow("cc = \"cubic\"\ncc_params = { beta = \"high\" }"),
            "flows[0].cc_params: parameter beta = \"high\": invalid type: string \"high\", \
             expected u32",
        ),
        toml(
            with_flow("cc = \"bbr\"\ncc_params = { cwnd_gain = -1 }"),
            "flows[0].cc_params: parameter cwnd_gain = -1: expected a number from at least \
             1/256 to 64",
        ),
        toml(
            with_flow("cc = \"bbr\"\ncc_params = 3"),
            "flows[0].cc_params: invalid type: integer `3`, expected a map",
        ),
        // Qdiscs: kinds, fields, values, and what only the path decides.
        toml(
            with_path("qdisc = { kind = \"sfq\" }"),
            &format!("path.qdisc.kind: unknown variant `sfq`, expected one of {qdisc_kinds}"),
        ),
        toml(
            with_path("qdisc = { kind = \"fq_codel\", quantom = 300 }"),
            "path.qdisc.quantom: unknown field `quantom`, expected one of `limit`, `flows`, \
             `quantum`, `target`, `interval`, `ecn`, `ce_threshold`, `memory_limit`, \
             `drop_batch_size`, `control_law`",
        ),
        toml(
            with_path("qdisc = { kind = \"codel\", target = \"5 parsecs\" }"),
            "path.qdisc.target: got \"5 parsecs\", expected a duration unit of ns, us, ms, s or \
             min",
        ),
        toml(
            with_path("qdisc = \"fq_codel\""),
            "path.qdisc: got \"fq_codel\", expected a qdisc table such as {kind = \"fq_codel\"}",
        ),
        toml(
            with_path("qdisc = { kind = \"codel\", target = \"100ms\" }"),
            "path.qdisc: target = \"100ms\": expected less than interval = \"100ms\"",
        ),
        toml(
            with_path("qdisc = { kind = \"bfifo\", limit = \"1000b\" }"),
            "path.qdisc: limit = \"1000b\": expected at least the MTU (1500 bytes)",
        ),
        toml(
            with_path("buffer = \"10p\"\nqdisc = { kind = \"ecn_step\" }"),
            "path.buffer: got \"10p\", refused by the ecn_step qdisc: k = 20: expected fewer \
             than limit (10 packets), or nothing is ever marked",
        ),
        toml(
            with_stack("host_qdisc = { kind = \"codel\", interval = \"-1ms\" }"),
            "stack.host_qdisc.interval: got \"-1ms\", expected a non-negative duration",
        ),
        toml(
            with_stack("host_qdisc = { kind = \"ecn_step\", limit = \"100bdp\" }"),
            "stack.host_qdisc.limit: got \"100bdp\", expected packets or bytes such as \"1000p\" \
             or \"1500kb\" (a host NIC has no path BDP)",
        ),
        toml(
            with_stack("host_qdisc = { kind = \"fq_codel\", quantum = 1000 }"),
            "stack.host_qdisc: quantum = \"1000b\": expected at least the MTU (1500 bytes)",
        ),
        // Buffers.
        toml(
            with_path("buffer = \"0p\""),
            "path.buffer: got \"0p\", expected a buffer of at least 1 packet",
        ),
        toml(
            with_path("buffer = \"1.5p\""),
            "path.buffer: got \"1.5p\", expected a whole number of packets",
        ),
        // The stack.
        toml(
            with_stack("mss = 1500"),
            "stack.mss: got 1500, expected 48..=1448 (MTU 1500 less 52 bytes of IP, TCP and \
             timestamp headers)",
        ),
        toml(
            with_stack("mss = 4294967295"),
            "stack.mss: got 4294967295, expected 48..=1448 (MTU 1500 less 52 bytes of IP, TCP \
             and timestamp headers)",
        ),
        toml(
            with_stack("mss = 40"),
            "stack.mss: got 40, expected 48..=1448 (MTU 1500 less 52 bytes of IP, TCP and \
             timestamp headers)",
        ),
        toml(
            with_stack("mtu = 100"),
            "stack.mtu: got 100, expected an MTU from 576 to 65535 bytes",
        ),
        toml(
            with_stack("tsq = \"3ms\""),
            "stack.tsq: got \"3ms\", expected a power of two of milliseconds from 1ms to 1024ms \
             (sk_pacing_shift = 10 - log2 N), \"off\" or \"static:<N>p\"",
        ),
        toml(
            with_stack("tsq = \"static:0p\""),
            "stack.tsq: got \"static:0p\", expected a static limit of at least 1 packet",
        ),
        toml(
            with_stack("tsq = \"static:1bdp\""),
            "stack.tsq: got \"static:1bdp\", expected a static limit in packets or bytes, not \
             BDPs",
        ),
        toml(
            with_stack("tp = 0"),
            "stack.tp: got 0, expected a pacing multiplier from 1 to 10",
        ),
        toml(
            with_stack("tp = \"2p\""),
            "stack.tp: invalid type: string \"2p\", expected u32",
        ),
        toml(
            with_stack("init_cwnd = 1000000"),
            "stack.init_cwnd: got 1000000, expected 1..=741523 packets (at most the largest TCP \
             window, 65535 << 14 bytes, in packets of the MSS)",
        ),
        toml(
            with_stack("init_cwnd = 0"),
            "stack.init_cwnd: got 0, expected 1..=741523 packets (at most the largest TCP \
             window, 65535 << 14 bytes, in packets of the MSS)",
        ),
        toml(
            with_stack("tso_rtt_log = 32"),
            "stack.tso_rtt_log: got 32, expected 0 (off) to 31 (Linux: 9)",
        ),
        toml(
            with_stack("rto_min = \"0ms\""),
            "stack.rto_min: got \"0s\", expected a positive duration (Linux: 200ms)",
        ),
        toml(
            with_stack("host_shaper = { rate = \"0mbit\" }"),
            "stack.host_shaper.rate: got 0 bit/s, expected a positive rate such as \"20mbit\"",
        ),
        toml(
            with_stack("host_shaper = { rate = \"20mbit\", burst = \"0b\" }"),
            "stack.host_shaper.burst: got 0 bytes, expected 1 byte to 1024 MB",
        ),
        toml(
            with_stack("host_shaper = { rate = \"20mbit\", overhead = 70000 }"),
            "stack.host_shaper.overhead: got 70000, expected 0 to 65535 bytes",
        ),
        toml(
            with_stack("read_delay = \"2s\""),
            "stack.read_delay: got \"2s\", expected 0s to 1s, or null (data read on arrival)",
        ),
        toml(
            with_stack("tsq2 = \"1ms\""),
            "stack.tsq2: unknown field `tsq2`, expected one of `kernel`, `tsq`, `tp`, `offloads`, \
             `fq_pacing`, `host_qdisc`, `host_shaper`, `tx_orphan`, `edt_pacing`, `limit_output_bytes`, `init_cwnd`, `min_tso_segs`, \
             `tso_rtt_log`, `mtu`, `mss`, `ecn`, `rto_min`, `delayed_ack`, `read_delay`, `skb_overhead`",
        ),
        // The path.
        toml(
            "duration = \"2s\"\n".to_string(),
            "(scenario): missing field `path`",
        ),
        toml(
            "[path]\nkind = \"satellite\"\n".to_string(),
            "path.kind: unknown variant `satellite`, expected one of `wired`, `trace`, `wifi`",
        ),
        toml(
            "[path]\nkind = \"wired\"\nrtt = \"20ms\"\n".to_string(),
            "path: missing field `rate`",
        ),
        toml(
            with_path("rat = \"50mbit\""),
            "path.rat: unknown field `rat`, expected one of `rate`, `rtt`, `buffer`, `qdisc`, \
             `clients`, `client_rtt`, `access_rate`, `l2_overhead`, `loss`",
        ),
        toml(
            "duration = \"2s\"\npath = \"wired\"\n".to_string(),
            "path: got \"wired\", expected a table such as {kind = \"wired\", rate = \"50mbit\", \
             rtt = \"20ms\"}",
        ),
        toml(
            with_path("clients = 2\nclient_rtt = [\"10ms\"]"),
            "path.client_rtt: got 1 entry, expected one per client (2)",
        ),
        toml(
            with_path("clients = 5000"),
            "path.clients: got 5000, expected 1 to 1024 client hosts",
        ),
        toml(
            with_path("l2_overhead = -1"),
            "path.l2_overhead: invalid value: integer `-1`, expected u32",
        ),
        toml(
            with_path("l2_overhead = 100000"),
            "path.l2_overhead: got 100000, expected 0 to 65535 bytes (Ethernet: 38)",
        ),
        // Durations and times.
        toml(
            with_path("").replace("\"20ms\"", "\"20 parsecs\""),
            "path.rtt: got \"20 parsecs\", expected a duration unit of ns, us, ms, s or min",
        ),
        toml(
            with_path("").replace("\"2s\"", "\"-1s\""),
            "duration: got \"-1s\", expected a non-negative duration",
        ),
        toml(
            with_path("").replace("\"2s\"", "0"),
            "duration: got \"0s\", expected a positive duration",
        ),
        toml(
            with_path("").replace("\"2s\"", "\"1e9s\""),
            "duration: got \"1e9s\", expected at most 1000000s (11.6 days)",
        ),
        toml(
            with_top("step = \"1us\""),
            "step: got 0.000001s for a run of 2s: 2000000 samples per series, expected at most \
             1000000 (a step of at least 0.000002s)",
        ),
        toml(
            with_top("warmup = \"2s\""),
            "warmup: got 2s, expected less than the duration 2s",
        ),
        toml(
            with_top("sed = 3"),
            "sed: unknown field `sed`, expected one of `seed`, `duration`, `step`, `warmup`, \
             `path`, `stack`, `flows`, `pings`",
        ),
        // Flows.
        toml(
            with_flow("client = 1"),
            "flows[0].client: got 1, expected a client index below 1",
        ),
        toml(
            with_flow("start = \"1s\"\nstop = \"500ms\""),
            "flows[0].stop: got 0.5s, expected after the start (1s)",
        ),
        toml(
            with_flow("start = \"3s\""),
            "flows[0].start: got 3s, expected before the end of the run (2s)",
        ),
        toml(
            with_flow("bytes = 0"),
            "flows[0].bytes: got 0, expected a positive size, or no value for an unlimited \
             transfer",
        ),
        toml(
            with_flow("direction = \"sideways\""),
            "flows[0].direction: unknown variant `sideways`, expected `up` or `down`",
        ),
        toml(
            with_flow("dscp = 64"),
            &format!("flows[0].dscp: got 64, {dscp}"),
        ),
        toml(
            with_flow("dscp = -1"),
            &format!("flows[0].dscp: got -1, {dscp}"),
        ),
        toml(
            with_flow("dscp = \"XX\""),
            &format!("flows[0].dscp: got \"XX\", {dscp}"),
        ),
        toml(
            with_flow("dscp = true"),
            &format!("flows[0].dscp: invalid type: boolean `true`, {dscp}"),
        ),
        toml(
            format!("flows = 3\n{}", with_path("")),
            "flows: invalid type: integer `3`, expected a sequence",
        ),
        // Pings.
        toml(
            with_ping("interval = \"0ms\""),
            "pings[0].interval: got 0s, expected at least 1ms",
        ),
        toml(
            with_ping("kind = \"tcp\""),
            "pings[0].kind: unknown variant `tcp`, expected `icmp` or `udp`",
        ),
        toml(
            with_ping("client = 3"),
            "pings[0].client: got 3, expected a client index below 1",
        ),
        toml(
            with_ping("start = \"1s\"\nstop = \"1s\""),
            "pings[0].stop: got 1s, expected after the start (1s)",
        ),
        toml(
            format!("step = \"1s\"\n{}", with_ping("interval = \"1ms\""))
                .replace("\"2s\"", "\"1000000s\""),
            "pings[0].interval: got 0.001s for 1000000s of pings: 1000000000 samples, expected \
             at most 1000000 (an interval of at least 1s)",
        ),
        toml(
            with_ping("dscp = 300"),
            &format!("pings[0].dscp: got 300, {dscp}"),
        ),
        // Syntax and document shape.
        toml(
            "duration = \"2s\"\n[path\nkind = \"wired\"\n".to_string(),
            "(document): invalid TOML at line 2, column 6: invalid table header, expected `.`, \
             `]`",
        ),
        json(
            r#"{"path": "#,
            "(document): invalid JSON: EOF while parsing a value at line 1 column 9",
        ),
        json(
            r#"{"path": {"kind": "wired", "rate": "1mbit", "rtt": "1ms", "clients": "two"}}"#,
            "path.clients: invalid type: string \"two\", expected u32",
        ),
        json(
            r#"{"seed": -1, "path": {"kind": "wired", "rate": "1mbit", "rtt": "1ms"}}"#,
            "seed: invalid value: integer `-1`, expected u64",
        ),
        json(
            r#"{"path": null}"#,
            "path: got null, expected a table such as {kind = \"wired\", rate = \"50mbit\", \
             rtt = \"20ms\"}",
        ),
        json(
            "[1, 2]",
            "(scenario): got [1,2], expected a table (TOML) or object (JSON) of scenario fields",
        ),
        // Rates follow tc: "bps" is bytes/s; ambiguous spellings are refused with the list.
        toml(
            with_rate("\"50MB/s\""),
            &format!("path.rate: got \"50MB/s\", expected a rate unit of {RATE_UNITS_SHOWN}"),
        ),
        toml(
            with_rate("\"300k\""),
            &format!("path.rate: got \"300k\", expected a rate unit of {RATE_UNITS_SHOWN}"),
        ),
        // Tables only from tables: serde's positional (sequence) form of a struct is refused.
        toml(
            format!("flows = [[\"myname\", \"bbr\", {{}}, \"down\"]]\n{}", with_path("")),
            "flows[0]: got an array, expected a table of named fields (the positional form of \
             a table is not accepted)",
        ),
        toml(
            format!("stack = [\"6.1\", \"2ms\"]\n{}", with_path("")),
            "stack: got an array, expected a table of named fields (the positional form of a \
             table is not accepted)",
        ),
        toml(
            WIFI.replace("rtt = \"10ms\"", "rtt = \"10ms\"\nbackhaul_qdisc = [1, 2]"),
            "path.backhaul_qdisc: got an array, expected a table of named fields (the \
             positional form of a table is not accepted)",
        ),
        // Unknown keys everywhere, inside the MAC's table too.
        toml(
            format!("{WIFI}[path.radio.mac]\nkind = \"edca\"\nt_oh = \"5ms\"\nbogus = 1\n"),
            "path.radio.mac.bogus: unknown field, expected one of: kind",
        ),
        // Numbers TOML can write and no field takes; nesting without end.
        toml(
            with_path("loss = nan"),
            "path.loss: got NaN, expected a finite number",
        ),
        toml(
            with_flow("cc = \"bbr\"\ncc_params = { cwnd_gain = -inf }"),
            "flows[0].cc_params.cwnd_gain: got -inf, expected a finite number",
        ),
        json(
            &format!(
                r#"{{"path": {{"kind": "wired", "rate": "1mbit", "rtt": "1ms"}}, "flows": [{{"cc_params": {{"a": {}1{}}}}}]}}"#,
                "[".repeat(40),
                "]".repeat(40)
            ),
            &format!(
                "flows[0].cc_params.a{}: nested more than 32 tables or arrays deep, expected a \
                 scenario",
                "[0]".repeat(28)
            ),
        ),
    ];
    assert!(cases.len() >= 30);
    for (text, format, expected) in cases {
        assert_eq!(error_of(&text, format), expected, "scenario:\n{text}");
    }
}

#[test]
fn the_api_reports_the_same_error_and_round_trips_the_normalised_scenario() {
    let bad = with_stack("tp = 0");
    assert_eq!(
        api::validate(&bad, Format::Toml).unwrap_err(),
        "stack.tp: got 0, expected a pacing multiplier from 1 to 10"
    );
    // Flows and pings without a DSCP, by number and by name: the normalised scenario (every
    // default filled in) serialises and reads back to itself.
    let text = format!(
        "{}[[flows]]\ncc = \"cubic\"\ndscp = 10\n[[flows]]\ncc = \"bbr\"\ndscp = \"cs5\"\n\
         [[pings]]\nkind = \"udp\"\n",
        with_flow("")
    );
    let normalised = api::validate(&text, Format::Toml).unwrap();
    assert_eq!(normalised["flows"][0]["dscp"], json!(0));
    assert_eq!(normalised["flows"][1]["dscp"], json!(10));
    assert_eq!(normalised["flows"][2]["dscp"], json!("CS5"));
    assert_eq!(normalised["pings"][0]["dscp"], json!(0));
    let again = api::validate(&normalised.to_string(), Format::Json).unwrap();
    assert_eq!(again, normalised);
}

#[test]
fn dscp_names_read_in_any_case_and_map_to_their_codepoints() {
    // RFC 2474 class selectors (8 x class), RFC 2597 AFxy = 8x + 2y, RFC 3246 EF = 46.
    let expected = [
        ("be", 0),
        ("EF", 46),
        ("ef", 46),
        ("CS1", 8),
        ("cs5", 40),
        ("Cs7", 56),
        ("AF11", 10),
        ("af23", 22),
        ("AF32", 28),
        ("af43", 38),
    ];
    for (name, value) in expected {
        let s = Scenario::parse(&with_flow(&format!("dscp = \"{name}\"")), Format::Toml).unwrap();
        assert_eq!(s.flows[0].dscp.value(), value, "{name}");
        assert!(matches!(s.flows[0].dscp, Dscp::Name(_)), "{name}");
    }
}

// ---------------------------------------------------------------------------------------------
// No input panics.

/// Simulated time each generated scenario that validates is run for.
const RUN_NS: u64 = 20 * NSEC_PER_MSEC;

/// The generator's starting point: valid, small, and with every kind of component.
fn base_document() -> Value {
    json!({
        "seed": 3,
        "duration": "20ms",
        "step": "5ms",
        "path": {"kind": "wired", "rate": "20mbit", "rtt": "4ms", "buffer": "1bdp",
                 "qdisc": {"kind": "fq_codel"}},
        "stack": {"tsq": "4ms"},
        "flows": [{"cc": "cubic"}, {"cc": "bbr", "direction": "down", "dscp": "EF"}],
        "pings": [{"interval": "2ms", "kind": "udp"}],
    })
}

/// What a field holds, so that most generated values are plausible for it (and the valid
/// scenarios reach the simulator with extreme but accepted values).
#[derive(Debug, Clone, Copy)]
enum Kind {
    Time,
    Rate,
    Size,
    Buffer,
    Count,
    Flag,
    Word,
    Cc,
    Tsq,
    Dscp,
    Table,
}

/// Fields the generator writes to (`.`-separated, array indices as numbers): every field of
/// the schema, and a few that do not exist. Each comes with values it accepts, as JSON text,
/// chosen at the edges of what validation lets through.
const FIELDS: &[(&str, Kind, &[&str])] = {
    use Kind::*;
    const FLAGS: &[&str] = &["true", "false"];
    const QDISC_BUFFERS: &[&str] = &[r#""1p""#, r#""0.01bdp""#, r#""1e300bdp""#, r#""1500b""#];
    &[
        ("seed", Count, &["0", "18446744073709551615"]),
        ("duration", Time, &[r#""1ns""#, r#""1ms""#, r#""1000000s""#]),
        ("step", Time, &[r#""100us""#, r#""1s""#, r#""1000000s""#]),
        ("warmup", Time, &[r#""0s""#, r#""10ms""#, r#""19999999ns""#]),
        (
            "path",
            Table,
            &[r#"{"kind": "wired", "rate": "1bit", "rtt": "0s"}"#],
        ),
        (
            "path",
            Table,
            &[r#"{"kind": "wifi", "rtt": "1ms", "radio": {"chipset": "ath9k"}}"#],
        ),
        (
            "path.radio.chipset",
            Word,
            &[r#""ath10k""#, r#""ax201""#, r#""ath9k-htc""#],
        ),
        ("path.radio.hw_queue_depth", Count, &["1", "1024"]),
        ("path.radio.mcs", Count, &["0", "7"]),
        ("path.radio.station_mcs", Table, &["[]", "[0]"]),
        ("path.radio.station_mcs.0", Count, &["0", "7"]),
        (
            "path.radio.driver",
            Word,
            &[
                r#""generic""#,
                r#""iwlwifi""#,
                r#"{"kind": "ath10k", "ring": 1}"#,
            ],
        ),
        (
            "path.radio.driver.kind",
            Word,
            &[r#""ath9k""#, r#""ath9k_htc""#],
        ),
        (
            "path.radio.driver.aggregation",
            Word,
            &[r#""host""#, r#""firmware""#],
        ),
        (
            "path.radio.driver.wake",
            Word,
            &[r#""per_frame""#, r#""per_burst""#],
        ),
        ("path.radio.driver.ring", Count, &["1", "65536"]),
        ("path.radio.driver.max_subframes", Count, &["0", "1024"]),
        ("path.radio.driver.tso", Flag, FLAGS),
        (
            "path.radio.ap_driver",
            Word,
            &[r#""firmware""#, r#"{"kind": "generic"}"#],
        ),
        ("path.radio.ap_driver.ring", Count, &["1", "65536"]),
        (
            "path.radio.ap_edca",
            Word,
            &[r#""hostapd""#, r#""station""#],
        ),
        ("path.radio.driver.sg", Flag, FLAGS),
        (
            "path.radio.driver.tx_status.delay",
            Time,
            &[r#""0s""#, r#""100ms""#],
        ),
        (
            "path.radio.driver.tx_status.first",
            Time,
            &[r#""1ns""#, r#""2ms""#],
        ),
        (
            "path.radio.driver.rx.last",
            Time,
            &[r#""1us""#, r#""100ms""#],
        ),
        ("path.radio.driver.rx.first", Time, &[r#""0s""#]),
        ("stack", Table, &["{}"]),
        ("flows", Table, &["[]", r#"[{}, {}, {}, {}]"#]),
        ("pings", Table, &["[]", r#"[{"interval": "1ms"}]"#]),
        ("colour", Word, &[]),
        ("path.kind", Word, &[r#""wired""#]),
        (
            "path.rate",
            Rate,
            &[
                r#""1bit""#,
                r#""9kbit""#,
                r#""1gbit""#,
                r#""18446744073709551615""#,
            ],
        ),
        (
            "path.rtt",
            Time,
            &[
                r#""0s""#,
                r#""1ns""#,
                r#""1us""#,
                r#""300ms""#,
                r#""1000000s""#,
            ],
        ),
        (
            "path.buffer",
            Buffer,
            &[
                r#""1p""#,
                r#""0.01bdp""#,
                r#""1e300bdp""#,
                r#""4294967295p""#,
                "null",
            ],
        ),
        (
            "path.qdisc",
            Table,
            &[
                r#"{"kind": "pfifo", "head_drop": true}"#,
                r#"{"kind": "bfifo"}"#,
                r#"{"kind": "pfifo_fast"}"#,
                r#"{"kind": "codel", "ecn": true}"#,
                r#"{"kind": "pie", "ecn": true, "bytemode": true}"#,
                r#"{"kind": "ecn_step", "k": 1}"#,
            ],
        ),
        ("path.clients", Count, &["2", "1024"]),
        ("path.client_rtt", Table, &["[]", r#"["1ms"]"#]),
        ("path.client_rtt.0", Time, &[r#""0s""#, r#""100ms""#]),
        (
            "path.access_rate",
            Rate,
            &[r#""1bit""#, r#""1mbit""#, r#""18446744073709551615""#],
        ),
        ("path.l2_overhead", Count, &["0", "65535"]),
        ("path.mtu", Count, &[]),
        (
            "path.qdisc.kind",
            Word,
            &[
                r#""pfifo""#,
                r#""bfifo""#,
                r#""pfifo_fast""#,
                r#""codel""#,
                r#""pie""#,
                r#""ecn_step""#,
            ],
        ),
        ("path.qdisc.limit", Buffer, QDISC_BUFFERS),
        (
            "path.qdisc.target",
            Time,
            &[r#""0s""#, r#""1ns""#, r#""99ms""#],
        ),
        (
            "path.qdisc.interval",
            Time,
            &[r#""6ms""#, r#""4294967295us""#],
        ),
        ("path.qdisc.ecn", Flag, FLAGS),
        ("path.qdisc.flows", Count, &["1", "65536"]),
        (
            "path.qdisc.quantum",
            Size,
            &[r#""1500b""#, r#""4294967295b""#],
        ),
        (
            "path.qdisc.memory_limit",
            Size,
            &[r#""1500b""#, r#""18446744073709551615b""#],
        ),
        ("path.qdisc.drop_batch_size", Count, &["1", "4294967295"]),
        ("path.qdisc.ce_threshold", Time, &[r#""0s""#, r#""1ms""#]),
        (
            "path.qdisc.control_law",
            Word,
            &[r#""linux""#, r#""exact""#],
        ),
        ("path.qdisc.head_drop", Flag, FLAGS),
        (
            "path.qdisc.tupdate",
            Time,
            &[r#""1ms""#, r#""4294967295us""#],
        ),
        ("path.qdisc.alpha", Count, &["0", "32"]),
        ("path.qdisc.beta", Count, &["0", "32"]),
        ("path.qdisc.k", Count, &["1", "999"]),
        ("path.qdisc.bytemode", Flag, FLAGS),
        ("path.qdisc.dq_rate_estimator", Flag, FLAGS),
        (
            "stack.tsq",
            Tsq,
            &[
                r#""1ms""#,
                r#""1024ms""#,
                r#""off""#,
                r#""static:1p""#,
                r#""static:4294967295p""#,
                r#""static:1b""#,
                r#""static:18446744073709551615b""#,
            ],
        ),
        ("stack.tp", Count, &["1", "10"]),
        (
            "stack.kernel",
            Word,
            &[r#""4.19""#, r#""5.4""#, r#""6.12""#],
        ),
        ("stack.edt_pacing", Flag, FLAGS),
        ("stack.offloads", Flag, FLAGS),
        ("stack.fq_pacing", Flag, FLAGS),
        (
            "stack.host_qdisc",
            Table,
            &[
                r#"{"kind": "fq_codel", "flows": 1}"#,
                r#"{"kind": "pie"}"#,
                r#"{"kind": "pfifo", "limit": "1p"}"#,
            ],
        ),
        (
            "stack.host_qdisc.kind",
            Word,
            &[r#""codel""#, r#""bfifo""#, r#""ecn_step""#],
        ),
        ("stack.host_qdisc.limit", Buffer, QDISC_BUFFERS),
        ("stack.host_qdisc.quantum", Size, &[r#""1500b""#]),
        (
            "stack.limit_output_bytes",
            Size,
            &[r#""0b""#, r#""1b""#, r#""18446744073709551615b""#],
        ),
        ("stack.init_cwnd", Count, &["1", "65535", "741523"]),
        ("stack.min_tso_segs", Count, &["1", "64"]),
        ("stack.tso_rtt_log", Count, &["0", "31"]),
        ("stack.mtu", Count, &["1500", "9000", "65535"]),
        ("stack.mss", Count, &["48", "536", "1448"]),
        ("stack.ecn", Flag, FLAGS),
        ("stack.rto_min", Time, &[r#""1ns""#, r#""1000000s""#]),
        ("stack.delayed_ack", Flag, FLAGS),
        (
            "stack.read_delay",
            Time,
            &[r#""0s""#, r#""35us""#, r#""1s""#, "null"],
        ),
        ("stack.skb_overhead", Count, &["0", "4294967295"]),
        (
            "flows.0",
            Table,
            &[
                "{}",
                r#"{"cc": "reno", "direction": "down", "bytes": "1b"}"#,
            ],
        ),
        ("flows.2", Table, &["{}", r#"{"cc": "dctcp", "dscp": 63}"#]),
        ("flows.0.cc", Cc, &[]),
        ("flows.1.cc", Cc, &[]),
        ("flows.0.cc_params", Table, &["{}"]),
        ("flows.0.direction", Word, &[r#""up""#, r#""down""#]),
        ("flows.0.client", Count, &["0", "1"]),
        ("flows.1.client", Count, &["0", "1"]),
        ("flows.0.start", Time, &[r#""1ns""#, r#""19ms""#]),
        (
            "flows.1.stop",
            Time,
            &[r#""1ns""#, r#""20ms""#, r#""1000000s""#],
        ),
        (
            "flows.0.bytes",
            Size,
            &[
                r#""1b""#,
                r#""1448b""#,
                r#""18446744073709551615b""#,
                "null",
            ],
        ),
        ("flows.0.dscp", Dscp, &["0", "63", r#""af11""#]),
        ("flows.0.name", Word, &[r#""""#, r#""x""#]),
        ("flows.0.rate", Rate, &[]),
        ("pings.0", Table, &["{}"]),
        (
            "pings.1",
            Table,
            &["{}", r#"{"kind": "icmp", "interval": "1ms"}"#],
        ),
        ("pings.0.kind", Word, &[r#""icmp""#, r#""udp""#]),
        ("pings.0.client", Count, &["0", "1"]),
        ("pings.0.interval", Time, &[r#""1ms""#, r#""1000000s""#]),
        ("pings.0.start", Time, &[r#""1ns""#, r#""19ms""#]),
        ("pings.0.stop", Time, &[r#""1ms""#, r#""1000000s""#]),
        ("pings.0.dscp", Dscp, &["46", r#""CS7""#]),
    ]
};

const TIMES: &[&str] = &[
    "0s",
    "1ns",
    "1us",
    "500us",
    "1ms",
    "2ms",
    "5ms",
    "20ms",
    "100ms",
    "1s",
    "1.5",
    "-1ms",
    "1e30s",
    "999999s",
    "5 parsecs",
    "nan",
];
const RATES: &[&str] = &[
    "0bit",
    "1bit",
    "9kbit",
    "1mbit",
    "50mbit",
    "1gbit",
    "10gbit",
    "1e30gbit",
    "-1mbit",
    "18446744073709551615",
    "fast",
];
const SIZES: &[&str] = &["0b", "1b", "1500b", "64kb", "1kib", "1e30b", "-1b", "1e3"];
const BUFFERS: &[&str] = &[
    "0p", "1p", "2p", "10p", "1000p", "1e12p", "1.5p", "0.5bdp", "1bdp", "0bdp", "100bdp",
    "1e300bdp", "1500b", "64kb",
];
const TSQS: &[&str] = &[
    "1ms",
    "2ms",
    "3ms",
    "32ms",
    "1024ms",
    "2048ms",
    "off",
    "static:1p",
    "static:0p",
    "static:64kb",
    "static:1bdp",
    "static:",
    "fast",
];
const DSCPS: &[&str] = &["EF", "cs5", "af41", "be", "XX"];
/// Names of every kind of thing, and near misses.
const WORDS: &[&str] = &[
    "",
    "cubic",
    "reno",
    "bbr",
    "bbrp",
    "bbrn",
    "bbr_apg",
    "bbr_pg",
    "dctcp",
    "vegas",
    "nv",
    "yeah",
    "veno",
    "highspeed",
    "tahoe",
    "pfifo",
    "bfifo",
    "pfifo_fast",
    "codel",
    "fq_codel",
    "pie",
    "ecn_step",
    "sfq",
    "up",
    "down",
    "sideways",
    "icmp",
    "udp",
    "wired",
    "wifi",
    "ath9k",
    "ath10k",
    "iwlwifi",
    "generic",
    "host",
    "firmware",
    "per_frame",
    "linux",
    "exact",
];

/// Integers at the edges of every integer type a scenario uses.
const INTS: &[i64] = &[
    0,
    1,
    2,
    3,
    7,
    10,
    31,
    32,
    63,
    64,
    255,
    256,
    1000,
    1448,
    65_535,
    65_536,
    -1,
    i32::MAX as i64,
    u32::MAX as i64,
    u32::MAX as i64 + 1,
    i64::MAX,
    i64::MIN,
];

const FLOATS: &[f64] = &[0.0, -0.0, 0.5, 1.5, 2.885, -1.0, 1e-300, 1e300, 64.0];

fn words(list: &'static [&'static str]) -> BoxedStrategy<Value> {
    select(list).prop_map(|w| json!(w)).boxed()
}

/// A value a field of `kind` could plausibly hold, valid or not.
fn plausible(kind: Kind) -> BoxedStrategy<Value> {
    let ints = select(INTS).prop_map(|i| json!(i));
    match kind {
        Kind::Time => prop_oneof![4 => words(TIMES), 1 => ints].boxed(),
        Kind::Rate => prop_oneof![4 => words(RATES), 1 => ints].boxed(),
        Kind::Size => prop_oneof![4 => words(SIZES), 1 => ints].boxed(),
        Kind::Buffer => prop_oneof![4 => words(BUFFERS), 1 => ints].boxed(),
        Kind::Count => ints.boxed(),
        Kind::Flag => any::<bool>().prop_map(Value::Bool).boxed(),
        Kind::Word => words(WORDS),
        Kind::Cc => prop_oneof![
            4 => select(cc::names()).prop_map(|name| json!(name)),
            1 => Just(json!("tahoe")),
        ]
        .boxed(),
        Kind::Tsq => words(TSQS),
        Kind::Dscp => prop_oneof![words(DSCPS), ints].boxed(),
        Kind::Table => prop_oneof![Just(json!({})), any_value()].boxed(),
    }
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        select(INTS).prop_map(|i| json!(i)),
        any::<u64>().prop_map(|i| json!(i)),
        select(FLOATS).prop_map(|f| json!(f)),
        words(WORDS),
        words(TIMES),
        words(BUFFERS),
        "[a-z0-9.:_ -]{0,10}".prop_map(Value::String),
    ]
}

/// Any JSON value, nested up to three levels, with keys that are sometimes real field names.
fn any_value() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        select(FIELDS).prop_map(|(f, _, _)| f.rsplit('.').next().unwrap_or(f).to_string()),
        "[a-z_]{1,6}",
    ];
    leaf().prop_recursive(3, 24, 4, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// One change to the base document.
#[derive(Debug, Clone)]
enum Edit {
    Set(&'static str, Value),
    Remove(&'static str),
    /// Give flow `flow` the congestion control `cc` with its parameter `param` set to a value.
    CcParam {
        flow: usize,
        cc: &'static str,
        param: String,
        value: Value,
    },
}

/// Every (algorithm, parameter, default) of the registry.
fn cc_params() -> Vec<(&'static str, String, Value)> {
    cc::registry::all()
        .iter()
        .flat_map(|info| {
            let defaults = (info.defaults)();
            let params = defaults.as_object().cloned().unwrap_or_default();
            params.into_iter().map(move |(p, v)| (info.name, p, v))
        })
        .collect()
}

/// A parameter value near its default: the default scaled, negated, flipped or replaced.
fn near(default: Value) -> impl Strategy<Value = Value> {
    let scaled = default.as_f64().unwrap_or(1.0);
    let flipped = default.as_bool().map_or(Value::Null, |b| json!(!b));
    prop_oneof![
        Just(default),
        select(vec![0.0, 0.5, 1.5, 2.0, 1e6, -1.0]).prop_map(move |k| json!(scaled * k)),
        Just(flipped),
        leaf(),
    ]
}

fn edit() -> impl Strategy<Value = Edit> {
    let params = cc_params();
    let cc_edit = (0..2usize, select(params)).prop_flat_map(|(flow, (cc, param, default))| {
        near(default).prop_map(move |value| Edit::CcParam {
            flow,
            cc,
            param: param.clone(),
            value,
        })
    });
    let set = select(FIELDS).prop_flat_map(|(field, kind, accepted)| {
        let accepted: Vec<Value> = accepted
            .iter()
            .map(|text| serde_json::from_str(text).unwrap())
            .collect();
        let valid = if accepted.is_empty() {
            plausible(kind)
        } else {
            select(accepted).boxed()
        };
        prop_oneof![4 => valid, 3 => plausible(kind), 1 => leaf(), 1 => any_value()]
            .prop_map(move |v| Edit::Set(field, v))
    });
    prop_oneof![
        7 => set,
        1 => select(FIELDS).prop_map(|(field, _, _)| Edit::Remove(field)),
        2 => cc_edit,
    ]
}

/// The value at `path` in `doc`, creating tables and appending array elements on the way; None
/// where the path runs into a value that is neither (the edit is then skipped).
fn slot<'a>(doc: &'a mut Value, path: &[&str]) -> Option<&'a mut Value> {
    let Some((first, rest)) = path.split_first() else {
        return Some(doc);
    };
    let next = match doc {
        Value::Object(m) => m.entry(first.to_string()).or_insert(json!({})),
        Value::Array(a) => {
            let i: usize = first.parse().ok()?;
            if i == a.len() {
                a.push(json!({}));
            }
            a.get_mut(i)?
        }
        _ => return None,
    };
    slot(next, rest)
}

fn apply(doc: &mut Value, edit: Edit) {
    match edit {
        Edit::Set(field, value) => {
            let path: Vec<&str> = field.split('.').collect();
            if let Some(v) = slot(doc, &path) {
                *v = value;
            }
        }
        Edit::Remove(field) => {
            let path: Vec<&str> = field.split('.').collect();
            let (last, parent) = path.split_last().unwrap_or((&"", &[]));
            if let Some(Value::Object(m)) = slot(doc, parent) {
                m.remove(*last);
            }
        }
        Edit::CcParam {
            flow,
            cc,
            param,
            value,
        } => {
            let flow = flow.to_string();
            if let Some(v) = slot(doc, &["flows", &flow, "cc"]) {
                *v = json!(cc);
            }
            if let Some(v) = slot(doc, &["flows", &flow, "cc_params"]) {
                *v = Value::Object(Map::from_iter([(param, value)]));
            }
        }
    }
}

fn document() -> impl Strategy<Value = Value> {
    prop_oneof![
        9 => prop_oneof![prop::collection::vec(edit(), 0..3), prop::collection::vec(edit(), 3..9)]
            .prop_map(|edits| {
            let mut doc = base_document();
            for e in edits {
                apply(&mut doc, e);
            }
            doc
        }),
        1 => any_value(),
    ]
}

/// Load `doc`; if it is valid, check that its normalised form reads back to itself, and run it
/// for [`RUN_NS`] (when it is still valid with that duration). Errors are fine; panics are not.
fn load_and_run(doc: Value) -> Result<(), String> {
    let Ok(s) = Scenario::from_value(doc) else {
        return Ok(());
    };
    let normalised = serde_json::to_value(&s).map_err(|e| format!("serialise: {e}"))?;
    let back = Scenario::from_value(normalised.clone()).map_err(|e| format!("reload: {e}"))?;
    let again = serde_json::to_value(&back).map_err(|e| format!("serialise again: {e}"))?;
    if again != normalised {
        return Err(format!("round trip changed {normalised} into {again}"));
    }
    let short = Scenario {
        duration: Dur(s.duration.0.min(RUN_NS)),
        ..s
    };
    if short.validate().is_ok() {
        api::run(&short).map_err(|e| format!("a validated scenario failed to run: {e}"))?;
    }
    Ok(())
}

/// Documents tried per run: 6000, or `PROPTEST_CASES`. `make test` fixes the random seed
/// (`PROPTEST_RNG_SEED`) so that CI is repeatable; `make fuzz` searches with fresh seeds.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6000)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn no_document_makes_loading_or_running_panic(doc in document()) {
        let shown = doc.to_string();
        let outcome = catch_unwind(AssertUnwindSafe(|| load_and_run(doc)));
        match outcome {
            Ok(result) => prop_assert!(result.is_ok(), "{}: {}", shown, result.unwrap_err()),
            Err(_) => prop_assert!(false, "panicked on {}", shown),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Determinism.

/// Results of a run as JSON text, without the fields that measure the host (wall time, speed).
fn results_without_wall_clock(text: &str) -> Value {
    let mut v = api::run_text(text, Format::Toml).unwrap();
    let summary = v["summary"].as_object_mut().unwrap();
    for wall_clock in ["wall_s", "speed", "events_per_s"] {
        assert!(summary.remove(wall_clock).is_some(), "{wall_clock}");
    }
    v
}

/// Two BBR flows (random ProbeBW start phase) with pings over a pfifo bottleneck, and two
/// cubic flows with pings through PIE (random drops), each with seed `seed`.
fn random_runs(seed: u64) -> [String; 2] {
    let common = |qdisc: &str, cc: &str| {
        format!(
            "seed = {seed}\nduration = \"3s\"\n[path]\nkind = \"wired\"\nrate = \"20mbit\"\n\
             rtt = \"30ms\"\nbuffer = \"2bdp\"\nqdisc = {{ kind = \"{qdisc}\" }}\n\
             [[flows]]\ncc = \"{cc}\"\n[[flows]]\ncc = \"{cc}\"\nstart = \"200ms\"\n\
             [[pings]]\ninterval = \"50ms\"\n"
        )
    };
    [common("pfifo", "bbr"), common("pie", "cubic")]
}

#[test]
fn the_same_seed_gives_identical_results_and_another_seed_other_results() {
    for (a, (b, c)) in random_runs(1)
        .iter()
        .zip(random_runs(1).iter().zip(random_runs(2).iter()))
    {
        let first = results_without_wall_clock(a);
        let second = results_without_wall_clock(b);
        assert_eq!(
            serde_json::to_string(&first).unwrap(),
            serde_json::to_string(&second).unwrap(),
            "{a}"
        );
        // Seeds differ in the echoed scenario and summary; compare what the run produced.
        let other = results_without_wall_clock(c);
        for part in ["flows", "pings", "series"] {
            assert_ne!(first[part], other[part], "{part} of {a}");
        }
    }
}
