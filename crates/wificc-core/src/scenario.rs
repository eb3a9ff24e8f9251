//! Declarative scenarios (TOML or JSON) and their translation into a [`World`].
//!
//! A scenario names a path (topology preset), the Linux stack settings of every host, the TCP
//! flows and the pings. Loading goes through `serde_path_to_error`, so a malformed value is
//! reported with its field path; [`Scenario::validate`] then checks values that are well-typed
//! but inconsistent (a zero rate, a flow on a client that does not exist, a TSQ of 3 ms where
//! only powers of two map to a pacing shift). Every error names the field, the value and what
//! is expected; nothing on this path panics.
//!
//! The `wired` path is a dumbbell: each client host's NIC (host qdisc, `access_rate`, TSQ
//! completion at the end of serialisation) feeds router R1; R1 -> R2 is the bottleneck (rate,
//! half the base RTT, the bottleneck qdisc and buffer) and R2 -> R1 its reverse direction (same
//! settings); the server's NIC feeds R2. The far side of each direction delivers straight to the
//! receiving host: an ingress port faster than the bottleneck adds no queue, only a
//! serialisation time below a microsecond at 10 Gbit/s, so it is not modelled. A client's extra
//! RTT (`client_rtt`) is propagation delay on its NIC link, which every packet it sends and so
//! every round trip it takes part in crosses once. "up" flows send from a client to the server,
//! "down" flows from the server to a client.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::cc;
use crate::metrics::results::{
    jain_index, FlowSummary, PingSummary, RunResult, RunSeries, RunSummary, SeriesOf,
};
use crate::net::link::{Link, ETHERNET_OVERHEAD};
use crate::net::packet::TCP_IP_HEADER;
use crate::net::qdisc::QdiscSpec;
use crate::net::trace::TraceLinkSpec;
use crate::parse::{show_secs, Buf, Dur, Rate, Size};
use crate::sim::Rng;
use crate::tcp::config::{SenderConfig, TsqMode};
use crate::tcp::receiver::{EcnEcho, TcpReceiver};
use crate::tcp::sender::TcpSender;
use crate::units::{secs, NSEC_PER_MSEC, NSEC_PER_SEC};
use crate::world::{Hop, PingKind, QueueRef, World};

/// A scenario error: the field path, and what is wrong with its value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ScenarioError {
    pub field: String,
    pub message: String,
}

fn err(field: impl Into<String>, message: impl Into<String>) -> ScenarioError {
    ScenarioError {
        field: field.into(),
        message: message.into(),
    }
}

fn d(ms: u64) -> Dur {
    Dur(ms * NSEC_PER_MSEC)
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Seed of every random stream in the run.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Simulated time to run.
    #[serde(default = "default_duration")]
    pub duration: Dur,
    /// Sampling interval of the series (Flent's STEP).
    #[serde(default = "default_step")]
    pub step: Dur,
    /// Summary statistics (goodput, percentiles, utilisation) ignore the time before this.
    #[serde(default = "zero")]
    pub warmup: Dur,
    pub path: PathSpec,
    #[serde(default)]
    pub stack: StackSpec,
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
    #[serde(default)]
    pub pings: Vec<PingSpec>,
}

fn default_seed() -> u64 {
    1
}
fn default_duration() -> Dur {
    Dur(30 * NSEC_PER_SEC)
}
fn default_step() -> Dur {
    d(200)
}
fn zero() -> Dur {
    Dur(0)
}

/// The topology.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum PathSpec {
    Wired(WiredSpec),
    Trace(TracePathSpec),
}

/// A trace-driven path, as `mm-delay RTT/2 mm-link UP DOWN`: each client's NIC feeds the uplink
/// (client -> server), the server's NIC the downlink; each direction adds half the base RTT of
/// propagation delay to its own `delay`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TracePathSpec {
    /// Base round-trip propagation delay.
    pub rtt: Dur,
    pub uplink: TraceLinkSpec,
    pub downlink: TraceLinkSpec,
    #[serde(default = "default_clients")]
    pub clients: u32,
    #[serde(default = "default_access_rate")]
    pub access_rate: Rate,
    #[serde(default = "default_l2")]
    pub l2_overhead: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WiredSpec {
    /// Bottleneck rate (both directions).
    pub rate: Rate,
    /// Base round-trip propagation delay (without any client's extra RTT).
    pub rtt: Dur,
    /// Bottleneck buffer: packets, bytes or multiples of the BDP (rate x rtt). Overrides the
    /// qdisc's own limit; without it the qdisc's default limit applies.
    #[serde(default)]
    pub buffer: Option<Buf>,
    /// Bottleneck qdisc (default pfifo).
    #[serde(default = "default_bottleneck_qdisc")]
    pub qdisc: QdiscSpec,
    /// Number of client hosts.
    #[serde(default = "default_clients")]
    pub clients: u32,
    /// Extra RTT of each client (one entry per client, or empty for none).
    #[serde(default)]
    pub client_rtt: Vec<Dur>,
    /// Rate of every host's NIC and access link.
    #[serde(default = "default_access_rate")]
    pub access_rate: Rate,
    /// Per-packet L2 bytes on the wire (Ethernet: 38).
    #[serde(default = "default_l2")]
    pub l2_overhead: u32,
    /// Independent random loss probability on the bottleneck, each direction (0..1).
    #[serde(default)]
    pub loss: f64,
}

fn default_bottleneck_qdisc() -> QdiscSpec {
    QdiscSpec::default_pfifo()
}
fn default_clients() -> u32 {
    1
}
fn default_access_rate() -> Rate {
    Rate(10_000_000_000)
}
fn default_l2() -> u32 {
    ETHERNET_OVERHEAD
}

/// Linux sender-stack settings shared by every host.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StackSpec {
    /// TCP Small Queues: "1ms" (Linux default), "2ms" .. "1024ms" (powers of two: shift = 10 -
    /// log2 N), "off", "static:<N>p" or "static:<size>" (e.g. "static:64kb").
    #[serde(default = "default_tsq")]
    pub tsq: String,
    /// Global pacing multiplier ("TP rate"): 1, 2 or 3 (any integer 1..=10).
    #[serde(default = "default_tp")]
    pub tp: u32,
    /// TSO/GSO offloads.
    #[serde(default = "yes")]
    pub offloads: bool,
    /// The host qdisc is fq: it paces every flow.
    #[serde(default)]
    pub fq_pacing: bool,
    /// Host egress qdisc on every NIC (default pfifo_fast, the kernel default).
    #[serde(default = "default_host_qdisc")]
    pub host_qdisc: QdiscSpec,
    /// net.ipv4.tcp_limit_output_bytes.
    #[serde(default = "default_lob")]
    pub limit_output_bytes: Size,
    #[serde(default = "default_init_cwnd")]
    pub init_cwnd: u32,
    #[serde(default = "default_min_tso")]
    pub min_tso_segs: u32,
    #[serde(default = "default_tso_rtt_log")]
    pub tso_rtt_log: u8,
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    #[serde(default = "default_mss")]
    pub mss: u32,
    /// Negotiate ECN on every connection (DCTCP flows always do).
    #[serde(default)]
    pub ecn: bool,
    #[serde(default = "default_rto_min")]
    pub rto_min: Dur,
    #[serde(default = "yes")]
    pub delayed_ack: bool,
    /// Per-skb truesize overhead in bytes.
    #[serde(default = "default_skb_overhead")]
    pub skb_overhead: u32,
}

impl Default for StackSpec {
    fn default() -> Self {
        serde_json::from_value(Value::Object(Map::new())).expect("every stack field has a default")
    }
}

fn default_tsq() -> String {
    "1ms".into()
}
fn default_tp() -> u32 {
    1
}
fn yes() -> bool {
    true
}
fn default_host_qdisc() -> QdiscSpec {
    QdiscSpec::default_pfifo_fast()
}
fn default_lob() -> Size {
    Size(1 << 20)
}
fn default_init_cwnd() -> u32 {
    10
}
fn default_min_tso() -> u32 {
    2
}
fn default_tso_rtt_log() -> u8 {
    9
}
fn default_mtu() -> u32 {
    1500
}
fn default_mss() -> u32 {
    1448
}
fn default_rto_min() -> Dur {
    d(200)
}
fn default_skb_overhead() -> u32 {
    896
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    #[default]
    Up,
    Down,
}

/// A DSCP value given as a number (0..63) or a name (BE, EF, CS0..CS7, AF11..AF43).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(untagged)]
pub enum Dscp {
    #[default]
    #[serde(skip_deserializing, serialize_with = "unmarked_as_zero")]
    Default,
    Value(u8),
    Name(DscpName),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DscpName {
    #[serde(alias = "be")]
    BE,
    #[serde(alias = "ef")]
    EF,
    #[serde(alias = "cs0")]
    CS0,
    #[serde(alias = "cs1")]
    CS1,
    #[serde(alias = "cs2")]
    CS2,
    #[serde(alias = "cs3")]
    CS3,
    #[serde(alias = "cs4")]
    CS4,
    #[serde(alias = "cs5")]
    CS5,
    #[serde(alias = "cs6")]
    CS6,
    #[serde(alias = "cs7")]
    CS7,
    AF11,
    AF12,
    AF13,
    AF21,
    AF22,
    AF23,
    AF31,
    AF32,
    AF33,
    AF41,
    AF42,
    AF43,
}

/// An unmarked flow or ping serialises as DSCP 0 (best effort), so a normalised scenario
/// parses back to the same marking.
fn unmarked_as_zero<S: serde::Serializer>(s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u8(0)
}

impl Dscp {
    /// The 6-bit codepoint (RFC 2474 / 4594 values).
    pub fn value(self) -> u8 {
        use DscpName::*;
        match self {
            Dscp::Default => 0,
            Dscp::Value(v) => v,
            Dscp::Name(n) => match n {
                BE | CS0 => 0,
                CS1 => 8,
                CS2 => 16,
                CS3 => 24,
                CS4 => 32,
                CS5 => 40,
                CS6 => 48,
                CS7 => 56,
                EF => 46,
                AF11 => 10,
                AF12 => 12,
                AF13 => 14,
                AF21 => 18,
                AF22 => 20,
                AF23 => 22,
                AF31 => 26,
                AF32 => 28,
                AF33 => 30,
                AF41 => 34,
                AF42 => 36,
                AF43 => 38,
            },
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default = "default_cc")]
    pub cc: String,
    #[serde(default)]
    pub cc_params: Map<String, Value>,
    #[serde(default)]
    pub direction: Direction,
    /// Client host index.
    #[serde(default)]
    pub client: u32,
    #[serde(default = "zero")]
    pub start: Dur,
    /// When the application stops sending (default: end of run).
    #[serde(default)]
    pub stop: Option<Dur>,
    /// Bytes to transfer (default: unlimited).
    #[serde(default)]
    pub bytes: Option<Size>,
    #[serde(default)]
    pub dscp: Dscp,
}

fn default_cc() -> String {
    "cubic".into()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum PingKindSpec {
    #[default]
    Icmp,
    Udp,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PingSpec {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub kind: PingKindSpec,
    #[serde(default)]
    pub client: u32,
    #[serde(default = "default_step")]
    pub interval: Dur,
    #[serde(default = "zero")]
    pub start: Dur,
    #[serde(default)]
    pub stop: Option<Dur>,
    #[serde(default)]
    pub dscp: Dscp,
}

/// Accepted formats of scenario text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Toml,
    Json,
}

impl Scenario {
    /// Parse a scenario, naming the field of any malformed value.
    pub fn parse(text: &str, format: Format) -> Result<Scenario, ScenarioError> {
        let value: Value = match format {
            Format::Json => serde_json::from_str(text)
                .map_err(|e| err("(document)", format!("invalid JSON: {e}")))?,
            Format::Toml => {
                let t: toml::Value = toml::from_str(text)
                    .map_err(|e| err("(document)", format!("invalid TOML: {}", e.message())))?;
                serde_json::to_value(t).map_err(|e| err("(document)", e.to_string()))?
            }
        };
        Self::from_value(value)
    }

    /// Build from a JSON value (used by the Python bindings).
    pub fn from_value(value: Value) -> Result<Scenario, ScenarioError> {
        let s: Scenario = serde_path_to_error::deserialize(&value).map_err(|e| {
            let path = e.path().to_string();
            let msg = e.into_inner().to_string();
            let field = if path == "." {
                "(scenario)".to_string()
            } else {
                path
            };
            err(field, msg)
        })?;
        s.validate()?;
        Ok(s)
    }

    /// Check consistency beyond types.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        if self.duration.0 == 0 {
            return Err(err("duration", "got \"0s\", expected a positive duration"));
        }
        if self.step.0 == 0 {
            return Err(err(
                "step",
                "got \"0s\", expected a positive sampling interval",
            ));
        }
        if self.warmup.0 >= self.duration.0 {
            return Err(err(
                "warmup",
                format!(
                    "got {}, expected less than the duration {}",
                    show_secs(self.warmup.0),
                    show_secs(self.duration.0)
                ),
            ));
        }
        let clients = match &self.path {
            PathSpec::Wired(w) => {
                if w.rate.0 == 0 {
                    return Err(err(
                        "path.rate",
                        "got 0 bit/s, expected a positive rate such as \"50mbit\"",
                    ));
                }
                if w.access_rate.0 == 0 {
                    return Err(err(
                        "path.access_rate",
                        "got 0 bit/s, expected a positive rate",
                    ));
                }
                if let Some(b) = w.buffer {
                    if b.0.is_zero() {
                        return Err(err(
                            "path.buffer",
                            "got 0, expected a buffer of at least 1 packet",
                        ));
                    }
                }
                if !(0.0..1.0).contains(&w.loss) {
                    return Err(err(
                        "path.loss",
                        format!("got {}, expected a probability in [0, 1)", w.loss),
                    ));
                }
                if w.clients == 0 {
                    return Err(err(
                        "path.clients",
                        "got 0, expected at least 1 client host",
                    ));
                }
                if !w.client_rtt.is_empty() && w.client_rtt.len() != w.clients as usize {
                    return Err(err(
                        "path.client_rtt",
                        format!(
                            "got {} entries, expected one per client ({})",
                            w.client_rtt.len(),
                            w.clients
                        ),
                    ));
                }
                w.qdisc.validate().map_err(|m| err("path.qdisc", m))?;
                w.clients
            }
            PathSpec::Trace(t) => {
                t.uplink.validate().map_err(|m| err("path.uplink", m))?;
                t.downlink.validate().map_err(|m| err("path.downlink", m))?;
                if t.clients == 0 {
                    return Err(err(
                        "path.clients",
                        "got 0, expected at least 1 client host",
                    ));
                }
                if t.access_rate.0 == 0 {
                    return Err(err(
                        "path.access_rate",
                        "got 0 bit/s, expected a positive rate",
                    ));
                }
                t.clients
            }
        };
        self.stack.validate()?;
        for (i, f) in self.flows.iter().enumerate() {
            let at = |k: &str| format!("flows[{i}].{k}");
            if f.client >= clients {
                return Err(err(
                    at("client"),
                    format!("got {}, expected a client index below {clients}", f.client),
                ));
            }
            if let Err(e) = cc::build(&f.cc, &f.cc_params) {
                let field = match e {
                    cc::CcError::Unknown(..) => at("cc"),
                    cc::CcError::BadParam(_) => at("cc_params"),
                };
                return Err(err(field, e.to_string()));
            }
            let stop = f.stop.map_or(self.duration.0, |s| s.0);
            if f.start.0 >= self.duration.0 {
                return Err(err(
                    at("start"),
                    format!(
                        "got {}, expected before the end of the run ({})",
                        show_secs(f.start.0),
                        show_secs(self.duration.0)
                    ),
                ));
            }
            if stop <= f.start.0 {
                return Err(err(
                    at("stop"),
                    format!(
                        "got {}, expected after the flow's start ({})",
                        show_secs(stop),
                        show_secs(f.start.0)
                    ),
                ));
            }
            if f.bytes.is_some_and(|b| b.0 == 0) {
                return Err(err(
                    at("bytes"),
                    "got 0, expected a positive size, or no value for an unlimited transfer",
                ));
            }
            if let Dscp::Value(v) = f.dscp {
                if v > 63 {
                    return Err(err(
                        at("dscp"),
                        format!("got {v}, expected a DSCP value 0..63 or a name such as \"EF\""),
                    ));
                }
            }
        }
        for (i, p) in self.pings.iter().enumerate() {
            let at = |k: &str| format!("pings[{i}].{k}");
            if p.client >= clients {
                return Err(err(
                    at("client"),
                    format!("got {}, expected a client index below {clients}", p.client),
                ));
            }
            if p.interval.0 < NSEC_PER_MSEC {
                return Err(err(
                    at("interval"),
                    format!("got {}, expected at least 1ms", show_secs(p.interval.0)),
                ));
            }
            if let Dscp::Value(v) = p.dscp {
                if v > 63 {
                    return Err(err(
                        at("dscp"),
                        format!("got {v}, expected a DSCP value 0..63 or a name such as \"EF\""),
                    ));
                }
            }
        }
        Ok(())
    }
}

impl StackSpec {
    fn validate(&self) -> Result<(), ScenarioError> {
        self.tsq_mode()?;
        if !(1..=10).contains(&self.tp) {
            return Err(err(
                "stack.tp",
                format!("got {}, expected a pacing multiplier from 1 to 10", self.tp),
            ));
        }
        if self.mtu < 576 || self.mtu > 65_535 {
            return Err(err(
                "stack.mtu",
                format!("got {}, expected an MTU from 576 to 65535 bytes", self.mtu),
            ));
        }
        if self.mss == 0 || self.mss + TCP_IP_HEADER > self.mtu {
            return Err(err("stack.mss", format!("got {}, expected 1..={} (MTU {} less {} bytes of IP, TCP and timestamp headers)", self.mss, self.mtu.saturating_sub(TCP_IP_HEADER), self.mtu, TCP_IP_HEADER)));
        }
        if self.init_cwnd == 0 {
            return Err(err("stack.init_cwnd", "got 0, expected at least 1 packet"));
        }
        if self.min_tso_segs == 0 || self.min_tso_segs > 64 {
            return Err(err(
                "stack.min_tso_segs",
                format!("got {}, expected 1..64", self.min_tso_segs),
            ));
        }
        if self.rto_min.0 == 0 {
            return Err(err(
                "stack.rto_min",
                "got \"0s\", expected a positive duration (Linux: 200ms)",
            ));
        }
        self.host_qdisc
            .validate()
            .map_err(|m| err("stack.host_qdisc", m))?;
        Ok(())
    }

    /// Parse `tsq` into a mode and the socket's pacing shift.
    pub fn tsq_mode(&self) -> Result<(TsqMode, u8), ScenarioError> {
        let s = self.tsq.trim().to_ascii_lowercase();
        let bad = |what: &str| err("stack.tsq", format!("got {:?}, expected {what}", self.tsq));
        if s == "off" {
            return Ok((TsqMode::Off, 10));
        }
        if let Some(rest) = s.strip_prefix("static:") {
            let buf = crate::parse::buffer(rest).map_err(|_| bad("\"static:<N>p\" or \"static:<size>\" such as \"static:64p\" or \"static:100kb\""))?;
            return match buf {
                crate::parse::Buffer::Packets(0) | crate::parse::Buffer::Bytes(0) => {
                    Err(bad("a static limit of at least 1 packet"))
                }
                crate::parse::Buffer::Packets(n) => Ok((TsqMode::StaticPackets(n), 10)),
                crate::parse::Buffer::Bytes(b) => Ok((TsqMode::StaticBytes(b), 10)),
                crate::parse::Buffer::Bdp(_) => {
                    Err(bad("a static limit in packets or bytes, not BDPs"))
                }
            };
        }
        let ns = crate::parse::duration(&s).map_err(|_| {
            bad("\"off\", \"<N>ms\" with N a power of two from 1 to 1024, or \"static:<N>p\"")
        })?;
        let ms = ns / NSEC_PER_MSEC;
        if ns % NSEC_PER_MSEC != 0 || ms == 0 || !ms.is_power_of_two() || ms > 1024 {
            return Err(bad("a power of two of milliseconds from 1ms to 1024ms (sk_pacing_shift = 10 - log2 N), \"off\" or \"static:<N>p\""));
        }
        Ok((TsqMode::Rate, 10 - ms.trailing_zeros() as u8))
    }

    /// The resolved sender configuration for a flow.
    pub fn sender_config(&self, cc_name: &str) -> SenderConfig {
        let (tsq, shift) = self.tsq_mode().unwrap_or((TsqMode::Rate, 10));
        SenderConfig {
            mss: self.mss,
            init_cwnd: self.init_cwnd,
            tsq,
            pacing_shift: shift,
            limit_output_bytes: self.limit_output_bytes.0,
            tp: self.tp,
            fq_pacing: self.fq_pacing,
            offloads: self.offloads,
            min_tso_segs: self.min_tso_segs,
            tso_rtt_log: self.tso_rtt_log,
            skb_overhead: self.skb_overhead,
            ecn: self.ecn || cc_name == "dctcp",
            rto_min: self.rto_min.0,
            ..SenderConfig::default()
        }
    }
}

/// A built path: for each client, the hops from it to the server (`up`) and back (`down`).
pub struct Net {
    pub up: Vec<Vec<Hop>>,
    pub down: Vec<Vec<Hop>>,
}

/// A host NIC: the host qdisc in front of a serialiser whose end is TX completion for TSQ.
fn host_nic(
    s: &Scenario,
    name: String,
    rate: u64,
    delay: u64,
    l2: u32,
    stream: u64,
) -> Result<Link, ScenarioError> {
    let q = s
        .stack
        .host_qdisc
        .build(0, s.stack.mtu, Rng::new(s.seed, stream))
        .map_err(|m| err("stack.host_qdisc", m))?;
    let mut nic = Link::new(name, rate, delay, l2, q);
    nic.reports_tx_completion = true;
    Ok(nic)
}

fn build_wired(s: &Scenario, w: &WiredSpec, world: &mut World) -> Result<Net, ScenarioError> {
    let mtu = s.stack.mtu;
    let bdp = (w.rate.0 as u128 * w.rtt.0 as u128 / (8 * NSEC_PER_SEC as u128)) as u64;
    let mut stream = 100u64;
    let mut qdisc = |spec: &QdiscSpec, field: &str| {
        stream += 1;
        spec.build(bdp, mtu, Rng::new(s.seed, stream))
            .map_err(|m| err(field, m))
    };
    let bottleneck_spec = match w.buffer {
        Some(b) => w.qdisc.clone().with_limit(b),
        None => w.qdisc.clone(),
    };
    let mut client_nic = Vec::new();
    for c in 0..w.clients {
        let extra = w.client_rtt.get(c as usize).map_or(0, |d| d.0);
        let nic = host_nic(
            s,
            format!("client{c}-nic"),
            w.access_rate.0,
            extra,
            w.l2_overhead,
            300 + c as u64,
        )?;
        client_nic.push(world.add_link(nic));
    }
    let half = w.rtt.0 / 2;
    let mut fwd = Link::new(
        "bottleneck",
        w.rate.0,
        half,
        w.l2_overhead,
        qdisc(&bottleneck_spec, "path.qdisc")?,
    );
    fwd.set_loss(w.loss, Rng::new(s.seed, 200));
    let bottleneck = world.add_link(fwd);
    let mut rev = Link::new(
        "bottleneck-rev",
        w.rate.0,
        w.rtt.0 - half,
        w.l2_overhead,
        qdisc(&bottleneck_spec, "path.qdisc")?,
    );
    rev.set_loss(w.loss, Rng::new(s.seed, 201));
    let reverse = world.add_link(rev);
    let server_nic = world.add_link(host_nic(
        s,
        "server-nic".into(),
        w.access_rate.0,
        0,
        w.l2_overhead,
        299,
    )?);
    world.watch(QueueRef::Link(bottleneck));
    world.watch(QueueRef::Link(reverse));
    for &l in client_nic.iter().chain([&server_nic]) {
        world.watch(QueueRef::Link(l));
    }
    Ok(Net {
        up: client_nic
            .iter()
            .map(|&c| vec![Hop::Link(c), Hop::Link(bottleneck)])
            .collect(),
        down: client_nic
            .iter()
            .map(|_| vec![Hop::Link(server_nic), Hop::Link(reverse)])
            .collect(),
    })
}

fn build_trace(s: &Scenario, t: &TracePathSpec, world: &mut World) -> Result<Net, ScenarioError> {
    let mtu = s.stack.mtu;
    let half = t.rtt.0 / 2;
    let mut direction = |spec: &TraceLinkSpec,
                         field: &str,
                         name: &str,
                         delay: u64,
                         stream: u64|
     -> Result<u32, ScenarioError> {
        let opportunities = spec.opportunities().map_err(|m| err(field, m))?;
        // BDP at the link's mean rate over its first 10 s (one trace period or more).
        let mean_bytes_per_s = opportunities.capacity_bytes(0, 10 * NSEC_PER_SEC) / 10;
        let bdp = (mean_bytes_per_s as u128 * t.rtt.0 as u128 / NSEC_PER_SEC as u128) as u64;
        let mut spec = spec.clone();
        spec.delay.0 += delay;
        let link = spec
            .build(
                name,
                opportunities,
                bdp,
                mtu,
                Rng::new(s.seed, stream),
                Rng::new(s.seed, stream + 1),
            )
            .map_err(|m| err(field, m))?;
        let id = world.add_trace(link);
        world.watch(QueueRef::Trace(id));
        Ok(id)
    };
    let up = direction(&t.uplink, "path.uplink", "uplink", half, 400)?;
    let down = direction(
        &t.downlink,
        "path.downlink",
        "downlink",
        t.rtt.0 - half,
        402,
    )?;
    let mut client_nic = Vec::new();
    for c in 0..t.clients {
        let nic = host_nic(
            s,
            format!("client{c}-nic"),
            t.access_rate.0,
            0,
            t.l2_overhead,
            300 + c as u64,
        )?;
        client_nic.push(world.add_link(nic));
    }
    let server_nic = world.add_link(host_nic(
        s,
        "server-nic".into(),
        t.access_rate.0,
        0,
        t.l2_overhead,
        299,
    )?);
    for &l in client_nic.iter().chain([&server_nic]) {
        world.watch(QueueRef::Link(l));
    }
    Ok(Net {
        up: client_nic
            .iter()
            .map(|&c| vec![Hop::Link(c), Hop::Trace(up)])
            .collect(),
        down: client_nic
            .iter()
            .map(|_| vec![Hop::Link(server_nic), Hop::Trace(down)])
            .collect(),
    })
}

/// Add the links of a (validated) scenario's path to `world` and watch their queues, as for a
/// simulation; the real-time emulator (`crates/wificc-emu`) drives the same links with the
/// wall clock.
pub fn build_network(s: &Scenario, world: &mut World) -> Result<Net, ScenarioError> {
    match &s.path {
        PathSpec::Wired(w) => build_wired(s, w, world),
        PathSpec::Trace(t) => build_trace(s, t, world),
    }
}

/// Build the world a scenario describes.
pub fn build(s: &Scenario) -> Result<World, ScenarioError> {
    s.validate()?;
    let mut world = World::new(s.step.0, s.warmup.0);
    let net = build_network(s, &mut world)?;
    for (i, f) in s.flows.iter().enumerate() {
        let id = i as u32;
        let c = f.client as usize;
        let (fwd, back) = match f.direction {
            Direction::Up => (&net.up[c], &net.down[c]),
            Direction::Down => (&net.down[c], &net.up[c]),
        };
        let data_route = world.add_route(fwd.iter().copied().chain([Hop::Receiver(id)]).collect());
        let ack_route = world.add_route(back.iter().copied().chain([Hop::Sender(id)]).collect());
        let cc = cc::build(&f.cc, &f.cc_params)
            .map_err(|e| err(format!("flows[{i}].cc"), e.to_string()))?;
        let cfg = s.stack.sender_config(&f.cc);
        let ecn = if f.cc == "dctcp" {
            EcnEcho::Dctcp
        } else {
            EcnEcho::Classic
        };
        let dscp = f.dscp.value();
        let sender = TcpSender::new(
            id,
            data_route,
            dscp,
            cfg,
            cc,
            Rng::new(s.seed, 1000 + i as u64),
            f.bytes.map(|b| b.0),
        );
        let mut receiver = TcpReceiver::new(id, ack_route, dscp, ecn);
        receiver.delayed_ack_enabled = s.stack.delayed_ack;
        let name = f.name.clone().unwrap_or_else(|| {
            format!(
                "{}-{}-{i}",
                f.cc,
                match f.direction {
                    Direction::Up => "up",
                    Direction::Down => "down",
                }
            )
        });
        let stop = f.stop.map_or(s.duration.0, |d| d.0.min(s.duration.0));
        world.add_flow(name, sender, receiver, f.start.0, stop);
    }
    for (i, p) in s.pings.iter().enumerate() {
        let c = p.client as usize;
        let id = i as u32;
        let out = world.add_route(
            net.up[c]
                .iter()
                .copied()
                .chain([Hop::PingEcho(id)])
                .collect(),
        );
        let back = world.add_route(
            net.down[c]
                .iter()
                .copied()
                .chain([Hop::PingOrigin(id)])
                .collect(),
        );
        let kind = match p.kind {
            PingKindSpec::Icmp => PingKind::Icmp,
            PingKindSpec::Udp => PingKind::Udp,
        };
        let name = p.name.clone().unwrap_or_else(|| {
            format!(
                "{}-ping-{i}",
                match kind {
                    PingKind::Icmp => "icmp",
                    PingKind::Udp => "udp",
                }
            )
        });
        let stop = p.stop.map_or(s.duration.0, |d| d.0);
        world.add_ping(
            name,
            kind,
            p.dscp.value(),
            out,
            back,
            p.interval.0,
            p.start.0,
            stop,
        );
    }
    Ok(world)
}

/// Run a scenario to completion and summarise it.
pub fn run(s: &Scenario) -> Result<RunResult, ScenarioError> {
    let mut world = build(s)?;
    let wall = std::time::Instant::now();
    world.run(s.duration.0);
    let wall_s = wall.elapsed().as_secs_f64();
    Ok(summarise(s, &world, wall_s))
}

fn ms(ns: Option<f64>) -> Option<f64> {
    ns.map(|v| v / 1e6)
}

fn summarise(s: &Scenario, world: &World, wall_s: f64) -> RunResult {
    let horizon = s.duration.0;
    let flows: Vec<FlowSummary> = world
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let from = f.start.max(s.warmup.0);
            let span = f.stop.saturating_sub(from).max(1);
            let delivered = f.delivered_in_window();
            let st = &f.sender.stats;
            let n = f.series.t.len().max(1) as f64;
            FlowSummary {
                id: i as u32,
                name: f.name.clone(),
                cc: f.sender.cc.name().to_string(),
                start_s: secs(f.start),
                stop_s: secs(f.stop),
                goodput_bps: delivered as f64 * 8.0 / secs(span),
                bytes_delivered: f.receiver.delivered_bytes,
                segs_sent: st.segs_sent,
                retrans: st.retrans,
                retrans_rate: if st.segs_sent > 0 {
                    st.retrans as f64 / st.segs_sent as f64
                } else {
                    0.0
                },
                drops: f.drops,
                rto_count: st.rto_count,
                recoveries: st.recoveries,
                srtt_mean_ms: f.series.srtt_ms.iter().sum::<f64>() / n,
                cwnd_mean: f.series.cwnd.iter().map(|&c| c as f64).sum::<f64>() / n,
                tsq_throttled: st.tsq_throttled,
                max_tsq_bytes: st.max_below_bytes,
                tsq_exceptions: st.tsq_exceptions,
                tsq_max_excess: st.tsq_max_excess,
            }
        })
        .collect();
    let pings = world
        .pings
        .iter()
        .enumerate()
        .map(|(i, p)| PingSummary {
            id: i as u32,
            name: p.name.clone(),
            kind: match p.kind {
                PingKind::Icmp => "icmp".into(),
                PingKind::Udp => "udp".into(),
            },
            dscp: p.dscp,
            sent: p.sent,
            received: p.received,
            rtt_p10_ms: ms(p.rtt.quantile(0.10)),
            rtt_p50_ms: ms(p.rtt.quantile(0.50)),
            rtt_p90_ms: ms(p.rtt.quantile(0.90)),
            rtt_p99_ms: ms(p.rtt.quantile(0.99)),
            rtt_mean_ms: ms(p.rtt.mean()),
        })
        .collect();
    let (queues, queue_series) = world.queue_results(horizon);
    let goodputs: Vec<f64> = flows.iter().map(|f: &FlowSummary| f.goodput_bps).collect();
    let events = world.events_processed();
    let series = RunSeries {
        flows: world
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| SeriesOf {
                id: i as u32,
                name: f.name.clone(),
                series: f.series.clone(),
            })
            .collect(),
        pings: world
            .pings
            .iter()
            .enumerate()
            .map(|(i, p)| SeriesOf {
                id: i as u32,
                name: p.name.clone(),
                series: p.series.clone(),
            })
            .collect(),
        queues: queue_series,
    };
    RunResult {
        summary: RunSummary {
            duration_s: secs(horizon),
            warmup_s: secs(s.warmup.0),
            seed: s.seed,
            events,
            wall_s,
            speed: if wall_s > 0.0 {
                secs(horizon) / wall_s
            } else {
                f64::INFINITY
            },
            events_per_s: if wall_s > 0.0 {
                events as f64 / wall_s
            } else {
                f64::INFINITY
            },
            total_goodput_bps: goodputs.iter().sum(),
            jain: jain_index(&goodputs),
        },
        flows,
        pings,
        queues,
        series,
    }
}
