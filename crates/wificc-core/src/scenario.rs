//! Declarative scenarios (TOML or JSON) and their translation into a [`World`].
//!
//! A scenario names a path (topology preset), the Linux stack settings of every host, the TCP
//! flows and the pings. Loading goes through `serde_path_to_error`, so a malformed value is
//! reported with its field path; [`Scenario::validate`] then checks values that are well-typed
//! but inconsistent (a zero rate, a flow on a client that does not exist, a TSQ of 3 ms where
//! only powers of two map to a pacing shift). Every error names the field, the value and what
//! is expected; nothing on this path panics.
//!
//! serde cannot follow a field path into a table tagged by `kind` (the path, a qdisc), so an
//! error there is located again by reading the table's fields on their own. Validation also
//! builds the qdiscs as the run will (limits resolved against the BDP and the MTU), so that a
//! scenario that validates also builds, and it bounds what would otherwise exhaust memory or
//! overflow the nanosecond clock: samples per series ([`MAX_SAMPLES`]), client hosts
//! ([`MAX_CLIENTS`]), per-packet L2 bytes ([`MAX_L2_OVERHEAD`]), the initial window (the
//! largest TCP window, [`MAX_WINDOW_BYTES`]) and, in [`crate::parse`], every duration.
//!
//! The paths (`wired`, `trace`) are described with the code that builds them, in
//! [`crate::topology`]. "up" flows send from a client to the server, "down" flows from the
//! server to a client.

use schemars::JsonSchema;
use serde::{de, Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::cc;
use crate::kernel::{Kernel, Profile};
use crate::net::link::{Shaper, ETHERNET_OVERHEAD};
use crate::net::packet::TCP_IP_HEADER;
use crate::net::qdisc::{AnyQdisc, QdiscSpec};
use crate::net::trace::TraceLinkSpec;
use crate::net::wifi::WifiSpec;
use crate::parse::{show_secs, Buf, Buffer, Dur, Rate, Size};
use crate::sim::Rng;
use crate::tcp::config::{SenderConfig, TsqMode};
use crate::units::{Bytes, NSEC_PER_MSEC, NSEC_PER_SEC};

pub use crate::topology::{build, build_network, run, run_reporting, Net};

/// A scenario error: the field path, and what is wrong with its value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ScenarioError {
    pub field: String,
    pub message: String,
}

pub(crate) fn err(field: impl Into<String>, message: impl Into<String>) -> ScenarioError {
    ScenarioError {
        field: field.into(),
        message: message.into(),
    }
}

fn d(ms: u64) -> Dur {
    Dur(ms * NSEC_PER_MSEC)
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
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
    /// The topology: a table whose `kind` is "wired", "trace" or "wifi" (required).
    pub path: PathSpec,
    /// Linux sender-stack settings of every host.
    #[serde(default)]
    pub stack: StackSpec,
    /// The TCP flows (bulk transfers), each from its start to its stop.
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
    /// The latency probes (ICMP or UDP request/response, Flent's ping and UDP RR).
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
// A scenario holds one path, parsed once per run: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum PathSpec {
    Wired(WiredSpec),
    Trace(TracePathSpec),
    Wifi(WifiPathSpec),
}

/// A Wi-Fi path: stations (the client hosts) and an AP in one BSS, the AP wired to the server
/// through a backhaul link (rate, half the base RTT each way, a queue). With a backhaul slower
/// than the Wi-Fi link's capacity this is the hybrid bottleneck of the Wi-Fi 6 study.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WifiPathSpec {
    /// The radio: chipset, TXQs, A-MPDU limits, EDCA or analytic MAC.
    #[serde(default)]
    pub radio: WifiSpec,
    /// Number of stations (client hosts 0..stations-1 are stations 1..stations).
    #[serde(default = "default_clients")]
    #[schemars(range(min = 1, max = MAX_STATIONS), extend("x-unit" = "stations"))]
    pub stations: u32,
    /// Base round-trip propagation delay of the wired part (AP <-> server).
    pub rtt: Dur,
    /// AP <-> server rate, each direction.
    #[serde(default = "default_access_rate")]
    pub backhaul: Rate,
    /// Backhaul buffer (packets, bytes or BDPs of backhaul rate x rtt); default: the qdisc's.
    #[serde(default)]
    pub backhaul_buffer: Option<Buf>,
    /// Backhaul qdisc, at the AP's and the server's wired egress (default pfifo).
    #[serde(default = "default_bottleneck_qdisc")]
    pub backhaul_qdisc: QdiscSpec,
    /// Rate of the server's NIC.
    #[serde(default = "default_access_rate")]
    pub access_rate: Rate,
    /// Per-packet L2 bytes on the wired links (Ethernet: 38).
    #[serde(default = "default_l2")]
    #[schemars(range(max = MAX_L2_OVERHEAD), extend("x-unit" = "bytes"))]
    pub l2_overhead: u32,
}

/// A trace-driven path, as `mm-delay RTT/2 mm-link UP DOWN`: each client's NIC feeds the uplink
/// (client -> server), the server's NIC the downlink; each direction adds half the base RTT of
/// propagation delay to its own `delay`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TracePathSpec {
    /// Base round-trip propagation delay.
    pub rtt: Dur,
    /// The client -> server direction (mm-link's uplink trace).
    pub uplink: TraceLinkSpec,
    /// The server -> client direction (mm-link's downlink trace).
    pub downlink: TraceLinkSpec,
    /// Number of client hosts, all behind the same trace link.
    #[serde(default = "default_clients")]
    #[schemars(range(min = 1, max = MAX_CLIENTS), extend("x-unit" = "hosts"))]
    pub clients: u32,
    /// Rate of every host's NIC and access link.
    #[serde(default = "default_access_rate")]
    pub access_rate: Rate,
    /// Per-packet L2 bytes on the wired access links (Ethernet: 38); the trace link carries
    /// IP packets, as Mahimahi's.
    #[serde(default = "default_l2")]
    #[schemars(range(max = MAX_L2_OVERHEAD), extend("x-unit" = "bytes"))]
    pub l2_overhead: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
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
    #[schemars(range(min = 1, max = MAX_CLIENTS), extend("x-unit" = "hosts"))]
    pub clients: u32,
    /// Extra RTT of each client (one entry per client, or empty for none).
    #[serde(default)]
    pub client_rtt: Vec<Dur>,
    /// Rate of every host's NIC and access link.
    #[serde(default = "default_access_rate")]
    pub access_rate: Rate,
    /// Per-packet L2 bytes on the wire (Ethernet: 38).
    #[serde(default = "default_l2")]
    #[schemars(range(max = MAX_L2_OVERHEAD), extend("x-unit" = "bytes"))]
    pub l2_overhead: u32,
    /// Independent random loss probability on the bottleneck, each direction, in [0, 1).
    #[serde(default)]
    #[schemars(range(min = 0), extend("exclusiveMaximum" = 1))]
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
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StackSpec {
    /// The hosts' Linux release: "4.19", "5.4", "5.10", "5.13", "5.15", "6.1", "6.6", "6.12"
    /// (default) or "6.18". Its profile (`kernel::Kernel::profile`) sets every version-dependent
    /// behaviour this table leaves open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<Kernel>,
    /// TCP Small Queues: "default" (the socket's own 1 ms, or on a Wi-Fi host mac80211's
    /// `sk_pacing_shift`: 4 ms on 4.19, 8 ms from 5.0), "1ms" .. "1024ms" (powers of two: shift
    /// = 10 - log2 N), "off", "static:<N>p" or "static:<size>" (e.g. "static:64kb").
    #[serde(default = "default_tsq")]
    pub tsq: String,
    /// Global pacing multiplier ("TP rate"): 1, 2 or 3 (any integer 1..=10).
    #[serde(default = "default_tp")]
    #[schemars(range(min = 1, max = MAX_TP), extend("x-unit" = "x"))]
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
    /// A token-bucket shaper (`tc qdisc add dev DEV root handle 1: htb default 1; tc class add
    /// dev DEV parent 1: classid 1:1 htb rate R ceil R burst B cburst B`) at the root of every
    /// host's wired NIC, with `host_qdisc` as its leaf: it releases whole skbs at `rate` as its
    /// tokens allow, and the NIC behind it sends at its own rate. Default none. The emulator
    /// installs it with tc on each host's TUN device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_shaper: Option<ShaperSpec>,
    /// The hosts' wired NICs are virtual devices that orphan each skb when they take it from
    /// the qdisc (`skb_orphan` in the `ndo_start_xmit` of TUN, veth, and virtio_net without TX
    /// NAPI; drivers/net/tun.c `tun_net_xmit`), so TCP Small Queues releases an skb when its
    /// transmission starts instead of at its end (a physical NIC's TX-completion interrupt), and
    /// releases it whole: the qdisc holds the skb unsegmented and the device is handed all its
    /// segments at once. Default false. Wi-Fi radios report their own completions.
    #[serde(default)]
    pub tx_orphan: bool,
    /// Earliest-departure-time pacing with its credit (Linux 4.20+); false: the hrtimer
    /// pacing of 4.13-4.19, which restarts from the moment an skb is sent. Default the
    /// kernel's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edt_pacing: Option<bool>,
    /// net.ipv4.tcp_limit_output_bytes; default the kernel's (256 KB before 5.0, 1 MB after).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_output_bytes: Option<Size>,
    /// Initial congestion window, packets (Linux `TCP_INIT_CWND`, RFC 6928); at most the largest
    /// TCP window (65535 << 14 bytes) in segments of the MSS.
    #[serde(default = "default_init_cwnd")]
    #[schemars(range(min = 1), extend("x-unit" = "packets"))]
    pub init_cwnd: u32,
    /// net.ipv4.tcp_min_tso_segs: fewest segments per TSO skb a CCA without its own
    /// `min_tso_segs` gets.
    #[serde(default = "default_min_tso")]
    #[schemars(range(min = 1, max = MAX_MIN_TSO_SEGS), extend("x-unit" = "segments"))]
    pub min_tso_segs: u32,
    /// net.ipv4.tcp_tso_rtt_log; default the kernel's (9 from 5.18, absent before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = MAX_TSO_RTT_LOG))]
    pub tso_rtt_log: Option<u8>,
    /// IP MTU of every interface, bytes.
    #[serde(default = "default_mtu")]
    #[schemars(range(min = MIN_MTU, max = MAX_MTU), extend("x-unit" = "bytes"))]
    pub mtu: u32,
    /// TCP payload bytes per segment (1448: a 1500-byte MTU less 40 bytes of TCP/IP headers and
    /// 12 of timestamps); at most the MTU less those 52 bytes.
    #[serde(default = "default_mss")]
    #[schemars(range(min = TCP_MIN_SND_MSS), extend("x-unit" = "bytes"))]
    pub mss: u32,
    /// Negotiate ECN on every connection (DCTCP flows always do).
    #[serde(default)]
    pub ecn: bool,
    /// Smallest retransmission timeout (Linux `TCP_RTO_MIN`, 200 ms).
    #[serde(default = "default_rto_min")]
    pub rto_min: Dur,
    /// Receivers delay ACKs (every second segment, quick-ACK for the first 16, 40 ms timer);
    /// off: every segment is ACKed at once.
    #[serde(default = "yes")]
    pub delayed_ack: bool,
    /// The receiving application's wake-up: it reads all in-order data this long after the
    /// data becomes readable (`sk_data_ready` to the reader's `recvmsg`). With reads, the
    /// receiver's window is its free buffer space, so a segment that arrives while data is
    /// unread does not advance it and its ACK waits for the read (`__tcp_ack_snd_check`,
    /// `tcp_cleanup_rbuf`). null, the default: data counts as read the instant it is in order
    /// (every second segment is ACKed in the input path); the studies' hosts did not report
    /// their reader's wake-up (the kernel check tsq-completion measured 35 us for its own, see
    /// docs/fidelity.md), and a received A-MPDU's frames reach TCP at one instant here, so a
    /// reader would ACK each A-MPDU once.
    #[serde(default)]
    pub read_delay: Option<Dur>,
    /// Per-skb truesize overhead in bytes; default the kernel's (1280 before 6.3, 896 after).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-unit" = "bytes"))]
    pub skb_overhead: Option<u32>,
}

/// A host's token-bucket shaper (`stack.host_shaper`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShaperSpec {
    /// The shaped rate (htb's `rate` and `ceil`).
    pub rate: Rate,
    /// The bucket's depth (htb's `burst` and `cburst`; tc's default, 1600 bytes plus the rate's
    /// bytes per timer tick, is 1600 bytes on a kernel with high-resolution timers).
    #[serde(default = "default_shaper_burst")]
    pub burst: Size,
    /// Bytes added to each packet's IP length before it is charged (tc's `overhead`): 0 on an
    /// L3 device (TUN), 14 for the Ethernet header htb sees on an Ethernet device.
    #[serde(default)]
    #[schemars(range(max = MAX_L2_OVERHEAD), extend("x-unit" = "bytes"))]
    pub overhead: u32,
}

fn default_shaper_burst() -> Size {
    Size(1600)
}

impl ShaperSpec {
    fn validate(&self) -> Result<(), ScenarioError> {
        if self.rate.0 == 0 {
            return Err(err(
                "stack.host_shaper.rate",
                "got 0 bit/s, expected a positive rate such as \"20mbit\"",
            ));
        }
        if self.burst.0 == 0 || self.burst.0 > MAX_SHAPER_BURST {
            return Err(err(
                "stack.host_shaper.burst",
                format!(
                    "got {} bytes, expected 1 byte to {} MB",
                    self.burst.0,
                    MAX_SHAPER_BURST >> 20
                ),
            ));
        }
        if self.overhead > MAX_L2_OVERHEAD {
            return Err(err(
                "stack.host_shaper.overhead",
                format!(
                    "got {}, expected 0 to {MAX_L2_OVERHEAD} bytes",
                    self.overhead
                ),
            ));
        }
        Ok(())
    }

    /// The shaper a host NIC runs.
    pub fn build(&self) -> Shaper {
        Shaper::new(self.rate.0, self.burst.0, self.overhead)
    }
}

impl Default for StackSpec {
    fn default() -> Self {
        serde_json::from_value(Value::Object(Map::new())).expect("every stack field has a default")
    }
}

fn default_tsq() -> String {
    "default".into()
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
fn default_init_cwnd() -> u32 {
    10
}
fn default_min_tso() -> u32 {
    2
}
fn default_mtu() -> u32 {
    1500
}
fn default_mss() -> u32 {
    1448
}
/// Longest `stack.read_delay`.
const MAX_READ_DELAY: u64 = NSEC_PER_SEC;
fn default_rto_min() -> Dur {
    d(200)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    #[default]
    Up,
    Down,
}

impl Direction {
    /// The scenario's spelling: "up" or "down".
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Up => "up",
            Direction::Down => "down",
        }
    }
}

/// A DSCP value given as a number (0..63) or a name (BE, EF, CS0..CS7, AF11..AF43, in any case).
/// Serialised as the name when given by name, else as the number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dscp {
    /// Unmarked (0).
    #[default]
    Default,
    Value(u8),
    Name(DscpName),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DscpName {
    BE,
    EF,
    CS0,
    CS1,
    CS2,
    CS3,
    CS4,
    CS5,
    CS6,
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

/// Every DSCP name with its 6-bit codepoint (RFC 2474 class selectors, RFC 2597 assured
/// forwarding, RFC 3246 expedited forwarding, BE = default forwarding), in the order of
/// [`DscpName`]'s variants.
const DSCP_NAMES: [(&str, DscpName, u8); 22] = {
    use DscpName::*;
    [
        ("BE", BE, 0),
        ("EF", EF, 46),
        ("CS0", CS0, 0),
        ("CS1", CS1, 8),
        ("CS2", CS2, 16),
        ("CS3", CS3, 24),
        ("CS4", CS4, 32),
        ("CS5", CS5, 40),
        ("CS6", CS6, 48),
        ("CS7", CS7, 56),
        ("AF11", AF11, 10),
        ("AF12", AF12, 12),
        ("AF13", AF13, 14),
        ("AF21", AF21, 18),
        ("AF22", AF22, 20),
        ("AF23", AF23, 22),
        ("AF31", AF31, 26),
        ("AF32", AF32, 28),
        ("AF33", AF33, 30),
        ("AF41", AF41, 34),
        ("AF42", AF42, 36),
        ("AF43", AF43, 38),
    ]
};

/// Every DSCP name a scenario may write, in capitals.
pub fn dscp_names() -> impl Iterator<Item = &'static str> {
    DSCP_NAMES.iter().map(|e| e.0)
}

/// Largest DSCP codepoint: the field is 6 bits.
const DSCP_MAX: u8 = 63;

const DSCP_EXPECTED: &str = "a DSCP value 0..63 or a name (BE, EF, CS0..CS7, AF11..AF43)";

fn bad_dscp(given: impl std::fmt::Display) -> String {
    format!("got {given}, expected {DSCP_EXPECTED}")
}

impl DscpName {
    /// Its row of [`DSCP_NAMES`], which lists the names in declaration order.
    fn entry(self) -> &'static (&'static str, DscpName, u8) {
        &DSCP_NAMES[self as usize]
    }

    /// The name, in capitals.
    pub fn name(self) -> &'static str {
        self.entry().0
    }

    /// The name written in any case.
    pub fn parse(name: &str) -> Option<DscpName> {
        DSCP_NAMES
            .iter()
            .find(|e| e.0.eq_ignore_ascii_case(name.trim()))
            .map(|e| e.1)
    }
}

impl Dscp {
    /// The 6-bit codepoint.
    pub fn value(self) -> u8 {
        match self {
            Dscp::Default => 0,
            Dscp::Value(v) => v,
            Dscp::Name(n) => n.entry().2,
        }
    }
}

impl Serialize for Dscp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Dscp::Name(n) => s.serialize_str(n.name()),
            _ => s.serialize_u8(self.value()),
        }
    }
}

impl<'de> Deserialize<'de> for Dscp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = Dscp;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(DSCP_EXPECTED)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Dscp, E> {
                u8::try_from(v)
                    .map(Dscp::Value)
                    .map_err(|_| E::custom(bad_dscp(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Dscp, E> {
                u8::try_from(v)
                    .map(Dscp::Value)
                    .map_err(|_| E::custom(bad_dscp(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Dscp, E> {
                DscpName::parse(v)
                    .map(Dscp::Name)
                    .ok_or_else(|| E::custom(bad_dscp(format!("{v:?}"))))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// The flow's name in results; default "<cc>-<direction>-<i>" (`i` its index in `flows`).
    #[serde(default)]
    pub name: Option<String>,
    /// Congestion control: a name of `wificc cc list` (reno, cubic, bbr, bbrp, ...).
    #[serde(default = "default_cc")]
    pub cc: String,
    /// The congestion control's parameters to change, KEY = VALUE (`wificc cc show NAME` lists
    /// them with their defaults); unknown keys are refused.
    #[serde(default)]
    pub cc_params: Map<String, Value>,
    /// "up": the client sends to the server; "down": the server sends to the client.
    #[serde(default)]
    pub direction: Direction,
    /// Client host index (0 .. the path's clients or stations - 1).
    #[serde(default)]
    pub client: u32,
    /// When the connection opens and starts sending (before the end of the run).
    #[serde(default = "zero")]
    pub start: Dur,
    /// When the application stops sending (default: end of run).
    #[serde(default)]
    pub stop: Option<Dur>,
    /// Bytes to transfer (default: unlimited).
    #[serde(default)]
    pub bytes: Option<Size>,
    /// DSCP of the flow's packets (both directions): on Wi-Fi it picks the access category.
    #[serde(default)]
    pub dscp: Dscp,
}

fn default_cc() -> String {
    "cubic".into()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PingKindSpec {
    #[default]
    Icmp,
    Udp,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PingSpec {
    /// The ping's name in results; default "<kind>-ping-<i>" (`i` its index in `pings`).
    #[serde(default)]
    pub name: Option<String>,
    /// "icmp" (echo request/reply, as `ping`) or "udp" (a UDP request/response, Flent's UDP RR).
    #[serde(default)]
    pub kind: PingKindSpec,
    /// Client host index the probe runs between it and the server.
    #[serde(default)]
    pub client: u32,
    /// Time between probes; at least 1 ms.
    #[serde(default = "default_step")]
    pub interval: Dur,
    /// When the first probe is sent.
    #[serde(default = "zero")]
    pub start: Dur,
    /// When probing stops (default: end of run).
    #[serde(default)]
    pub stop: Option<Dur>,
    /// DSCP of the probes (Flent's RRUL marks EF, CS1, ...).
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
                let t: toml::Value = toml::from_str(text).map_err(|e| toml_error(text, &e))?;
                check_toml_numbers(&t, "")?;
                serde_json::to_value(t).map_err(|e| err("(document)", e.to_string()))?
            }
        };
        Self::from_value(value)
    }

    /// Build from a JSON value (used by the Python bindings).
    pub fn from_value(value: Value) -> Result<Scenario, ScenarioError> {
        if !value.is_object() {
            return Err(err(
                "(scenario)",
                format!(
                    "got {}, expected a table (TOML) or object (JSON) of scenario fields",
                    shown(&value)
                ),
            ));
        }
        check_depth(&value)?;
        let s: Scenario = serde_path_to_error::deserialize(&value).map_err(|e| {
            let path = e.path().to_string();
            locate(&value, &path, e.into_inner().to_string())
        })?;
        // What serde lets through: a struct read positionally from an array, keys that a
        // tagged table's unit variant (mac = {kind = "edca"}) ignores. Every table and key
        // given must be one the normalised scenario has.
        let read = serde_json::to_value(&s).map_err(|e| err("(scenario)", e.to_string()))?;
        check_shape(&value, &read, "")?;
        s.validate()?;
        Ok(s)
    }

    /// Check consistency beyond types.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        self.validate_times()?;
        let clients = match &self.path {
            PathSpec::Wired(w) => {
                w.validate()?;
                self.stack.validate()?;
                self.validate_queues(w)?;
                w.clients
            }
            PathSpec::Trace(t) => {
                t.validate()?;
                self.stack.validate()?;
                t.clients
            }
            PathSpec::Wifi(w) => {
                w.validate()?;
                self.stack.validate()?;
                let (bdp, mtu) = (w.bdp_bytes(), self.stack.mtu);
                let q = match w.backhaul_buffer {
                    Some(b) => w.backhaul_qdisc.clone().with_limit(b),
                    None => w.backhaul_qdisc.clone(),
                };
                q.build(bdp, mtu, Rng::new(self.seed, 0))
                    .map_err(|m| err("path.backhaul_qdisc", m))?;
                w.stations
            }
        };
        for (i, f) in self.flows.iter().enumerate() {
            let at = |k: &str| format!("flows[{i}].{k}");
            check_client(at("client"), f.client, clients)?;
            if let Err(e) = cc::build(&f.cc, &f.cc_params) {
                let field = match e {
                    cc::CcError::Unknown(..) => at("cc"),
                    cc::CcError::BadParam(_) => at("cc_params"),
                };
                return Err(err(field, e.to_string()));
            }
            self.check_window(at, f.start, f.stop)?;
            if f.bytes.is_some_and(|b| b.0 == 0) {
                return Err(err(
                    at("bytes"),
                    "got 0, expected a positive size, or no value for an unlimited transfer",
                ));
            }
            check_dscp(at("dscp"), f.dscp)?;
        }
        for (i, p) in self.pings.iter().enumerate() {
            let at = |k: &str| format!("pings[{i}].{k}");
            check_client(at("client"), p.client, clients)?;
            if p.interval.0 < NSEC_PER_MSEC {
                return Err(err(
                    at("interval"),
                    format!("got {}, expected at least 1ms", show_secs(p.interval.0)),
                ));
            }
            self.check_window(at, p.start, p.stop)?;
            let span = p.stop.map_or(self.duration.0, |s| s.0.min(self.duration.0)) - p.start.0;
            if span / p.interval.0 > MAX_SAMPLES {
                return Err(err(
                    at("interval"),
                    format!(
                        "got {} for {} of pings: {} samples, expected at most {MAX_SAMPLES} \
                         (an interval of at least {})",
                        show_secs(p.interval.0),
                        show_secs(span),
                        span / p.interval.0,
                        show_secs(span.div_ceil(MAX_SAMPLES))
                    ),
                ));
            }
            check_dscp(at("dscp"), p.dscp)?;
        }
        Ok(())
    }

    /// The run's duration, its sampling step and its warmup.
    fn validate_times(&self) -> Result<(), ScenarioError> {
        if self.duration.0 == 0 {
            return Err(err("duration", "got \"0s\", expected a positive duration"));
        }
        if self.step.0 == 0 {
            return Err(err(
                "step",
                "got \"0s\", expected a positive sampling interval",
            ));
        }
        let samples = self.duration.0 / self.step.0;
        if samples > MAX_SAMPLES {
            return Err(err(
                "step",
                format!(
                    "got {} for a run of {}: {samples} samples per series, expected at most \
                     {MAX_SAMPLES} (a step of at least {})",
                    show_secs(self.step.0),
                    show_secs(self.duration.0),
                    show_secs(self.duration.0.div_ceil(MAX_SAMPLES))
                ),
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
        Ok(())
    }

    /// The qdiscs built as the run builds them (limits resolved against the BDP and the MTU):
    /// what [`QdiscSpec::validate`] cannot check alone.
    fn validate_queues(&self, w: &WiredSpec) -> Result<(), ScenarioError> {
        let (bdp, mtu) = (w.bdp_bytes(), self.stack.mtu);
        let check = |spec: &QdiscSpec| spec.build(bdp, mtu, Rng::new(self.seed, 0)).map(drop);
        check(&w.qdisc).map_err(|m| err("path.qdisc", m))?;
        if let Some(b) = w.buffer {
            check(&w.qdisc.clone().with_limit(b)).map_err(|m| {
                err(
                    "path.buffer",
                    format!(
                        "got \"{}\", refused by the {} qdisc: {m}",
                        b.0,
                        w.qdisc.name()
                    ),
                )
            })?;
        }
        Ok(())
    }

    /// A flow's or a ping's start and stop times.
    fn check_window(
        &self,
        at: impl Fn(&str) -> String,
        start: Dur,
        stop: Option<Dur>,
    ) -> Result<(), ScenarioError> {
        if start.0 >= self.duration.0 {
            return Err(err(
                at("start"),
                format!(
                    "got {}, expected before the end of the run ({})",
                    show_secs(start.0),
                    show_secs(self.duration.0)
                ),
            ));
        }
        let stop = stop.map_or(self.duration.0, |s| s.0);
        if stop <= start.0 {
            return Err(err(
                at("stop"),
                format!(
                    "got {}, expected after the start ({})",
                    show_secs(stop),
                    show_secs(start.0)
                ),
            ));
        }
        Ok(())
    }
}

/// Most samples one series may hold (duration / step): far more points than a figure shows,
/// and a bound on the memory of a run's series (tens of MB per flow).
pub const MAX_SAMPLES: u64 = 1_000_000;

/// Most client hosts a wired path may have: each is a NIC, an access link and their queues;
/// the studies use a few dozen at most.
pub const MAX_CLIENTS: u32 = 1024;
/// Largest number of stations in one BSS (nodes are numbered in 16 bits; a BSS has at most 2007
/// association IDs, far above what a contention simulation is meaningful for).
pub const MAX_STATIONS: u32 = 255;

/// Largest per-packet L2 overhead, bytes: the largest IP packet. Real headers are tens of
/// bytes (Ethernet 38); the bound keeps the serialisation time of any frame finite at 1 bit/s.
pub const MAX_L2_OVERHEAD: u32 = 65_535;

/// Largest bucket of a host shaper (`stack.host_shaper.burst`), bytes: far above any real
/// shaper's, and small enough that its time at 1 bit/s stays finite.
pub const MAX_SHAPER_BURST: u64 = 1 << 30;

/// Largest global pacing multiplier (`stack.tp`).
pub const MAX_TP: u32 = 10;
/// Smallest MTU: the least every IPv4 host must accept (RFC 791).
pub const MIN_MTU: u32 = 576;
/// Largest MTU: the largest IP packet.
pub const MAX_MTU: u32 = 65_535;
/// Largest `stack.min_tso_segs`.
pub const MAX_MIN_TSO_SEGS: u32 = 64;

/// Smallest MSS Linux sends with (`TCP_MIN_SND_MSS`, include/net/tcp.h).
pub const TCP_MIN_SND_MSS: u32 = 48;

/// The largest TCP window, bytes: 65535 scaled by the largest window shift, 14 (RFC 7323,
/// section 2.3). No initial window can be larger; the simulated sender has no send buffer that
/// would otherwise bound its first flight.
pub const MAX_WINDOW_BYTES: u32 = 65_535 << 14;

/// Largest `tcp_tso_rtt_log`: min_rtt is a u32 of microseconds, so a shift of 32 or more has
/// nothing left to shift.
pub const MAX_TSO_RTT_LOG: u8 = 31;

fn check_client(field: String, client: u32, clients: u32) -> Result<(), ScenarioError> {
    if client >= clients {
        return Err(err(
            field,
            format!("got {client}, expected a client index below {clients}"),
        ));
    }
    Ok(())
}

fn check_dscp(field: String, dscp: Dscp) -> Result<(), ScenarioError> {
    if dscp.value() > DSCP_MAX {
        return Err(err(field, bad_dscp(dscp.value())));
    }
    Ok(())
}

/// Deepest nesting of tables and arrays a scenario may have. A scenario's own structure is 5
/// levels deep (path.radio.driver...); cc parameters are flat. The bound makes a deeply nested
/// document an error with a name instead of a stack overflow in whatever walks it.
pub const MAX_DEPTH: usize = 32;

/// `at`'s child `key`, as serde_path_to_error writes field paths.
fn child(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_string()
    } else {
        format!("{at}.{key}")
    }
}

fn field_or_scenario(at: &str) -> &str {
    if at.is_empty() {
        "(scenario)"
    } else {
        at
    }
}

/// Refuse documents nested deeper than [`MAX_DEPTH`] (iteratively: no recursion to overflow).
fn check_depth(doc: &Value) -> Result<(), ScenarioError> {
    let mut stack = vec![(doc, String::new(), 0usize)];
    while let Some((v, at, depth)) = stack.pop() {
        let children: Vec<(&Value, String)> = match v {
            Value::Object(m) => m.iter().map(|(k, v)| (v, child(&at, k))).collect(),
            Value::Array(a) => a
                .iter()
                .enumerate()
                .map(|(i, v)| (v, format!("{at}[{i}]")))
                .collect(),
            _ => continue,
        };
        if depth >= MAX_DEPTH {
            return Err(err(
                field_or_scenario(&at),
                format!("nested more than {MAX_DEPTH} tables or arrays deep, expected a scenario"),
            ));
        }
        stack.extend(children.into_iter().map(|(v, at)| (v, at, depth + 1)));
    }
    Ok(())
}

/// TOML can write `nan` and `inf`, which JSON (and every scenario field) has no place for.
fn check_toml_numbers(v: &toml::Value, at: &str) -> Result<(), ScenarioError> {
    match v {
        toml::Value::Float(x) if !x.is_finite() => Err(err(
            field_or_scenario(at),
            format!("got {x}, expected a finite number"),
        )),
        toml::Value::Table(t) => t
            .iter()
            .try_for_each(|(k, v)| check_toml_numbers(v, &child(at, k))),
        toml::Value::Array(a) => a
            .iter()
            .enumerate()
            .try_for_each(|(i, v)| check_toml_numbers(v, &format!("{at}[{i}]"))),
        _ => Ok(()),
    }
}

/// Compare the document as `given` with the scenario as `read` back from it: an array where a
/// table was read is serde's sequence form of a struct (`flows = [["f", "bbr"]]` read by
/// position), and a key of a table that the normalised table lacks was ignored. Both are
/// refused. Keys given as null or `[]` may be absent from the normalised table: they are
/// defaults that it leaves out.
fn check_shape(given: &Value, read: &Value, at: &str) -> Result<(), ScenarioError> {
    match (given, read) {
        (Value::Array(_), Value::Object(_)) => Err(err(
            field_or_scenario(at),
            "got an array, expected a table of named fields (the positional form of a table \
             is not accepted)",
        )),
        (Value::Array(g), Value::Array(r)) => g
            .iter()
            .zip(r)
            .enumerate()
            .try_for_each(|(i, (g, r))| check_shape(g, r, &format!("{at}[{i}]"))),
        (Value::Object(g), Value::Object(r)) => g.iter().try_for_each(|(k, v)| match r.get(k) {
            Some(rv) => check_shape(v, rv, &child(at, k)),
            None if v.is_null() || v.as_array().is_some_and(Vec::is_empty) => Ok(()),
            None => {
                let mut known: Vec<&str> = r.keys().map(String::as_str).collect();
                known.sort_unstable();
                Err(err(
                    child(at, k),
                    format!("unknown field, expected one of: {}", known.join(", ")),
                ))
            }
        }),
        _ => Ok(()),
    }
}

/// A value for "got ..." messages: as written when short, else what it is.
fn shown(v: &Value) -> String {
    const MAX_SHOWN_CHARS: usize = 40;
    let text = v.to_string();
    if text.chars().count() <= MAX_SHOWN_CHARS {
        return text;
    }
    match v {
        Value::String(_) => "a long string",
        Value::Array(_) => "an array",
        Value::Object(_) => "a table",
        _ => "a number",
    }
    .to_string()
}

/// A TOML syntax error, with its line and column (from 1) and the parser's message on one line.
fn toml_error(text: &str, e: &toml::de::Error) -> ScenarioError {
    let at = e.span().map_or(String::new(), |span| {
        let before = text.get(..span.start).unwrap_or(text);
        let line = before.matches('\n').count() + 1;
        let column = before.chars().rev().take_while(|&c| c != '\n').count() + 1;
        format!(" at line {line}, column {column}")
    });
    let message: Vec<&str> = e.message().lines().map(str::trim).collect();
    err(
        "(document)",
        format!("invalid TOML{at}: {}", message.join(", ")),
    )
}

/// Name the field of a deserialization error at `field` of `doc`. serde reads a table tagged
/// by `kind` (the path, a qdisc) whole before it knows which fields to expect, so an error
/// inside one carries only the table's path; the table is read again, part by part, to find
/// the field at fault.
fn locate(doc: &Value, field: &str, message: String) -> ScenarioError {
    match field {
        "." => err("(scenario)", message),
        "path" => locate_path(doc.get("path"), message),
        "stack.host_qdisc" => locate_qdisc(
            field,
            doc.get("stack").and_then(|s| s.get("host_qdisc")),
            message,
        ),
        _ => err(field, message),
    }
}

/// The path table: its fields are those of the variant its `kind` names.
fn locate_path(table: Option<&Value>, message: String) -> ScenarioError {
    let table = match table {
        Some(Value::Object(table)) => table,
        Some(other) => {
            return err(
                "path",
                format!(
                    "got {}, expected a table such as {{kind = \"wired\", rate = \"50mbit\", \
                     rtt = \"20ms\"}}",
                    shown(other)
                ),
            )
        }
        None => return err("path", message),
    };
    let mut fields = table.clone();
    let kind = fields.remove("kind");
    let fields = Value::Object(fields);
    let inner = match kind.as_ref().and_then(Value::as_str) {
        Some("wired") => serde_path_to_error::deserialize::<_, WiredSpec>(&fields).err(),
        Some("trace") => serde_path_to_error::deserialize::<_, TracePathSpec>(&fields).err(),
        Some("wifi") => serde_path_to_error::deserialize::<_, WifiPathSpec>(&fields).err(),
        _ => None,
    };
    let Some(e) = inner else {
        return err("path", message);
    };
    let at = e.path().to_string();
    let message = e.into_inner().to_string();
    match at.as_str() {
        "." => err("path", message),
        "qdisc" => locate_qdisc("path.qdisc", fields.get("qdisc"), message),
        _ => err(format!("path.{at}"), message),
    }
}

/// A qdisc table: every parameter has a default, so each one can be read alone with the kind.
fn locate_qdisc(field: &str, table: Option<&Value>, message: String) -> ScenarioError {
    let table = match table {
        Some(Value::Object(table)) => table,
        Some(other) => {
            return err(
                field,
                format!(
                    "got {}, expected a qdisc table such as {{kind = \"fq_codel\"}}",
                    shown(other)
                ),
            )
        }
        None => return err(field, message),
    };
    let Some(kind) = table.get("kind") else {
        return err(field, message);
    };
    let alone = |entry: Option<(&String, &Value)>| {
        let mut one = Map::new();
        one.insert("kind".to_string(), kind.clone());
        if let Some((k, v)) = entry {
            one.insert(k.clone(), v.clone());
        }
        QdiscSpec::deserialize(&Value::Object(one)).err()
    };
    if let Some(e) = alone(None) {
        return err(format!("{field}.kind"), e.to_string());
    }
    table
        .iter()
        .filter(|(k, _)| k.as_str() != "kind")
        .find_map(|(k, v)| alone(Some((k, v))).map(|e| err(format!("{field}.{k}"), e.to_string())))
        .unwrap_or_else(|| err(field, message))
}

impl WiredSpec {
    /// Bandwidth-delay product of the bottleneck at the base RTT, bytes (saturating).
    pub fn bdp_bytes(&self) -> Bytes {
        u64::try_from(self.rate.0 as u128 * self.rtt.0 as u128 / (8 * NSEC_PER_SEC as u128))
            .unwrap_or(Bytes::MAX)
    }

    fn validate(&self) -> Result<(), ScenarioError> {
        if self.rate.0 == 0 {
            return Err(err(
                "path.rate",
                "got 0 bit/s, expected a positive rate such as \"50mbit\"",
            ));
        }
        if self.access_rate.0 == 0 {
            return Err(err(
                "path.access_rate",
                "got 0 bit/s, expected a positive rate",
            ));
        }
        if let Some(b) = self.buffer {
            if b.0.is_zero() {
                return Err(err(
                    "path.buffer",
                    format!("got \"{}\", expected a buffer of at least 1 packet", b.0),
                ));
            }
        }
        if self.clients == 0 || self.clients > MAX_CLIENTS {
            return Err(err(
                "path.clients",
                format!(
                    "got {}, expected 1 to {MAX_CLIENTS} client hosts",
                    self.clients
                ),
            ));
        }
        if !self.client_rtt.is_empty() && self.client_rtt.len() != self.clients as usize {
            return Err(err(
                "path.client_rtt",
                format!(
                    "got {} {}, expected one per client ({})",
                    self.client_rtt.len(),
                    if self.client_rtt.len() == 1 {
                        "entry"
                    } else {
                        "entries"
                    },
                    self.clients
                ),
            ));
        }
        if self.l2_overhead > MAX_L2_OVERHEAD {
            return Err(err(
                "path.l2_overhead",
                format!(
                    "got {}, expected 0 to {MAX_L2_OVERHEAD} bytes (Ethernet: 38)",
                    self.l2_overhead
                ),
            ));
        }
        if !(0.0..1.0).contains(&self.loss) {
            return Err(err(
                "path.loss",
                format!("got {}, expected a probability in [0, 1)", self.loss),
            ));
        }
        self.qdisc.validate().map_err(|m| err("path.qdisc", m))
    }
}

impl WifiPathSpec {
    /// Bandwidth-delay product of the backhaul at the base RTT, bytes (saturating).
    pub fn bdp_bytes(&self) -> Bytes {
        u64::try_from(self.backhaul.0 as u128 * self.rtt.0 as u128 / (8 * NSEC_PER_SEC as u128))
            .unwrap_or(Bytes::MAX)
    }

    fn validate(&self) -> Result<(), ScenarioError> {
        self.radio.validate().map_err(|m| err("path.radio", m))?;
        if self.stations == 0 || self.stations > MAX_STATIONS {
            return Err(err(
                "path.stations",
                format!(
                    "got {}, expected 1 to {MAX_STATIONS} stations",
                    self.stations
                ),
            ));
        }
        for (field, r) in [
            ("path.backhaul", self.backhaul.0),
            ("path.access_rate", self.access_rate.0),
        ] {
            if r == 0 {
                return Err(err(field, "got 0 bit/s, expected a positive rate"));
            }
        }
        if let Some(b) = self.backhaul_buffer {
            if b.0.is_zero() {
                return Err(err(
                    "path.backhaul_buffer",
                    format!("got \"{}\", expected a buffer of at least 1 packet", b.0),
                ));
            }
        }
        if self.l2_overhead > MAX_L2_OVERHEAD {
            return Err(err(
                "path.l2_overhead",
                format!(
                    "got {}, expected 0 to {MAX_L2_OVERHEAD} bytes (Ethernet: 38)",
                    self.l2_overhead
                ),
            ));
        }
        self.backhaul_qdisc
            .validate()
            .map_err(|m| err("path.backhaul_qdisc", m))
    }
}

impl TracePathSpec {
    fn validate(&self) -> Result<(), ScenarioError> {
        self.uplink.validate().map_err(|m| err("path.uplink", m))?;
        self.downlink
            .validate()
            .map_err(|m| err("path.downlink", m))?;
        if self.clients == 0 || self.clients > MAX_CLIENTS {
            return Err(err(
                "path.clients",
                format!(
                    "got {}, expected 1 to {MAX_CLIENTS} client hosts",
                    self.clients
                ),
            ));
        }
        if self.access_rate.0 == 0 {
            return Err(err(
                "path.access_rate",
                "got 0 bit/s, expected a positive rate",
            ));
        }
        if self.l2_overhead > MAX_L2_OVERHEAD {
            return Err(err(
                "path.l2_overhead",
                format!(
                    "got {}, expected 0 to {MAX_L2_OVERHEAD} bytes (Ethernet: 38)",
                    self.l2_overhead
                ),
            ));
        }
        Ok(())
    }
}

impl StackSpec {
    fn validate(&self) -> Result<(), ScenarioError> {
        self.tsq_mode()?;
        if !(1..=MAX_TP).contains(&self.tp) {
            return Err(err(
                "stack.tp",
                format!(
                    "got {}, expected a pacing multiplier from 1 to {MAX_TP}",
                    self.tp
                ),
            ));
        }
        if !(MIN_MTU..=MAX_MTU).contains(&self.mtu) {
            return Err(err(
                "stack.mtu",
                format!(
                    "got {}, expected an MTU from {MIN_MTU} to {MAX_MTU} bytes",
                    self.mtu
                ),
            ));
        }
        let max_mss = self.mtu - TCP_IP_HEADER;
        if !(TCP_MIN_SND_MSS..=max_mss).contains(&self.mss) {
            return Err(err(
                "stack.mss",
                format!(
                    "got {}, expected {TCP_MIN_SND_MSS}..={max_mss} (MTU {} less {TCP_IP_HEADER} \
                     bytes of IP, TCP and timestamp headers)",
                    self.mss, self.mtu
                ),
            ));
        }
        let max_init_cwnd = MAX_WINDOW_BYTES / self.mss;
        if self.init_cwnd == 0 || self.init_cwnd > max_init_cwnd {
            return Err(err(
                "stack.init_cwnd",
                format!(
                    "got {}, expected 1..={max_init_cwnd} packets (at most the largest TCP \
                     window, 65535 << 14 bytes, in packets of the MSS)",
                    self.init_cwnd
                ),
            ));
        }
        if self.min_tso_segs == 0 || self.min_tso_segs > MAX_MIN_TSO_SEGS {
            return Err(err(
                "stack.min_tso_segs",
                format!("got {}, expected 1..{MAX_MIN_TSO_SEGS}", self.min_tso_segs),
            ));
        }
        if let Some(log) = self.tso_rtt_log.filter(|&l| l > MAX_TSO_RTT_LOG) {
            return Err(err(
                "stack.tso_rtt_log",
                format!("got {log}, expected 0 (off) to {MAX_TSO_RTT_LOG} (Linux: 9)"),
            ));
        }
        if self.rto_min.0 == 0 {
            return Err(err(
                "stack.rto_min",
                "got \"0s\", expected a positive duration (Linux: 200ms)",
            ));
        }
        if let Some(Dur(t)) = self.read_delay.filter(|d| d.0 > MAX_READ_DELAY) {
            return Err(err(
                "stack.read_delay",
                format!(
                    "got \"{}\", expected 0s to 1s, or null (data read on arrival)",
                    show_secs(t)
                ),
            ));
        }
        if let Some(shaper) = &self.host_shaper {
            shaper.validate()?;
        }
        self.host_qdisc(Rng::new(0, 0)).map(drop)
    }

    /// The host qdisc as every host NIC runs it, `rng` its own random stream. A NIC's qdisc has
    /// no path to measure a BDP against, so its limit is in packets or bytes.
    pub fn host_qdisc(&self, rng: Rng) -> Result<AnyQdisc, ScenarioError> {
        let field = "stack.host_qdisc";
        if let Buf(Buffer::Bdp(_)) = self.host_qdisc.limit() {
            return Err(err(
                format!("{field}.limit"),
                format!(
                    "got \"{}\", expected packets or bytes such as \"1000p\" or \"1500kb\" \
                     (a host NIC has no path BDP)",
                    self.host_qdisc.limit().0
                ),
            ));
        }
        self.host_qdisc
            .build(0, self.mtu, rng)
            .map_err(|m| err(field, m))
    }

    /// The kernel profile in force.
    pub fn profile(&self) -> Profile {
        self.kernel.unwrap_or(Kernel::NEWEST).profile()
    }

    /// Parse `tsq` into a mode and the socket's pacing shift ("default": the socket's own, 10).
    pub fn tsq_mode(&self) -> Result<(TsqMode, u8), ScenarioError> {
        self.tsq_mode_for(false)
    }

    /// `tsq_mode` for a socket of a host whose egress is Wi-Fi (`wifi_host`): there "default"
    /// is mac80211's pacing shift.
    pub fn tsq_mode_for(&self, wifi_host: bool) -> Result<(TsqMode, u8), ScenarioError> {
        let s = self.tsq.trim().to_ascii_lowercase();
        if s == "default" {
            let shift = if wifi_host {
                self.profile().mac80211_pacing_shift
            } else {
                10
            };
            return Ok((TsqMode::Rate, shift));
        }
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
                crate::parse::Buffer::Packets(_) if self.tx_orphan && !wifi_host => Err(bad(
                    "a static limit in bytes (\"static:<size>\"): with stack.tx_orphan the NIC releases whole skbs, not packets",
                )),
                crate::parse::Buffer::Packets(n) => Ok((TsqMode::StaticPackets(n), 10)),
                crate::parse::Buffer::Bytes(b) => Ok((TsqMode::StaticBytes(b), 10)),
                crate::parse::Buffer::Bdp(_) => {
                    Err(bad("a static limit in packets or bytes, not BDPs"))
                }
            };
        }
        let ns = crate::parse::duration(&s).map_err(|_| {
            bad("\"default\", \"off\", \"<N>ms\" with N a power of two from 1 to 1024, or \"static:<N>p\"")
        })?;
        let ms = ns / NSEC_PER_MSEC;
        if ns % NSEC_PER_MSEC != 0 || ms == 0 || !ms.is_power_of_two() || ms > 1024 {
            return Err(bad("a power of two of milliseconds from 1ms to 1024ms (sk_pacing_shift = 10 - log2 N), \"off\" or \"static:<N>p\""));
        }
        Ok((TsqMode::Rate, 10 - ms.trailing_zeros() as u8))
    }

    /// The resolved sender configuration for a flow (`wifi_host`: its host's egress is Wi-Fi),
    /// every value the scenario leaves open from the kernel profile.
    pub fn sender_config(&self, cc_name: &str, wifi_host: bool) -> SenderConfig {
        let profile = self.profile();
        let (tsq, shift) = self.tsq_mode_for(wifi_host).unwrap_or((TsqMode::Rate, 10));
        SenderConfig {
            mss: self.mss,
            init_cwnd: self.init_cwnd,
            tsq,
            pacing_shift: shift,
            limit_output_bytes: self
                .limit_output_bytes
                .map_or(profile.limit_output_bytes, |s| s.0),
            limit_caps_paced: profile.limit_caps_paced,
            tsq_single_skb: profile.tsq_single_skb,
            edt_pacing: self.edt_pacing.unwrap_or(profile.edt_pacing),
            pacing_credit: self.edt_pacing.unwrap_or(profile.pacing_credit),
            tp: self.tp,
            fq_pacing: self.fq_pacing,
            offloads: self.offloads,
            min_tso_segs: self.min_tso_segs,
            tso_rtt_log: self.tso_rtt_log.unwrap_or(profile.tso_rtt_log),
            skb_overhead: self.skb_overhead.unwrap_or(profile.skb_overhead),
            skb_layout: profile.skb_layout,
            ecn: self.ecn || cc_name == "dctcp",
            rto_min: self.rto_min.0,
            orphan_whole_skb: self.tx_orphan && !wifi_host,
            ..SenderConfig::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dscp_table_lists_every_name_in_declaration_order() {
        // `DscpName::entry` indexes the table by the variant's discriminant.
        assert_eq!(DscpName::AF43 as usize + 1, DSCP_NAMES.len());
        for (i, &(name, n, _)) in DSCP_NAMES.iter().enumerate() {
            assert_eq!(n as usize, i, "{name}");
            assert_eq!(n.name(), name);
            assert_eq!(DscpName::parse(&name.to_lowercase()), Some(n));
        }
        assert_eq!(DscpName::parse("AF44"), None);
    }
}
