//! Linux sender-stack settings: the sysctls and socket attributes that shape how much a TCP
//! socket puts below itself (TSQ), how it sizes TSO/GSO units, and how it paces.

use crate::units::{Bytes, Nanos, NSEC_PER_MSEC, NSEC_PER_SEC};

/// TCP Small Queues: how many bytes of a socket may sit below TCP (qdisc, driver, NIC) before
/// the socket stops sending until TX completions free room (`tcp_small_queue_check`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TsqMode {
    /// No limit: only cwnd and pacing bound the data below TCP.
    Off,
    /// Linux: limit = max(2 x truesize(skb), pacing_rate >> sk_pacing_shift), capped at
    /// `tcp_limit_output_bytes` when the socket is not paced. "N ms TSQ" is shift 10 - log2 N.
    Rate,
    /// A static limit in packets below TCP, independent of rate (bottleneck-curve sweeps).
    StaticPackets(u32),
    /// A static limit in bytes of truesize below TCP.
    StaticBytes(Bytes),
}

/// Resolved sender settings (the scenario's `[stack]` table after validation).
#[derive(Debug, Clone)]
pub struct SenderConfig {
    /// Maximum segment size (payload bytes per packet): 1448 with timestamps on a 1500 MTU.
    pub mss: u32,
    /// Initial congestion window in packets (`TCP_INIT_CWND`, RFC 6928).
    pub init_cwnd: u32,
    pub tsq: TsqMode,
    /// `sk_pacing_shift`: 10 = 1 ms of data at the pacing rate (TSQ and TSO sizing).
    pub pacing_shift: u8,
    /// `net.ipv4.tcp_limit_output_bytes` (1 MiB since Linux 5.x: 16 x 64 KiB).
    pub limit_output_bytes: Bytes,
    /// `net.ipv4.tcp_pacing_ss_ratio` (200%) and `tcp_pacing_ca_ratio` (120%).
    pub pacing_ss_ratio: u32,
    pub pacing_ca_ratio: u32,
    /// Global pacing multiplier ("TP rate" 1p/2p/3p).
    pub tp: u32,
    /// The host qdisc is `fq`: it paces every socket (EDT), whatever the CCA.
    pub fq_pacing: bool,
    /// TSO/GSO on: skbs of several segments. Off: one segment per skb.
    pub offloads: bool,
    /// `sk_gso_max_size` (64 KiB: GSO_LEGACY_MAX_SIZE).
    pub gso_max_size: u32,
    /// `net.ipv4.tcp_min_tso_segs` (2), used when the CCA has no `min_tso_segs`.
    pub min_tso_segs: u32,
    /// `net.ipv4.tcp_tso_rtt_log` (9, Linux >= 5.18): on paths with min_rtt below 2^9 us, TSO
    /// units grow by gso_max_size >> (min_rtt >> 9). 0 disables.
    pub tso_rtt_log: u8,
    /// truesize(skb) = payload + this: struct sk_buff (256 aligned) + skb_shared_info (320
    /// aligned) + header room for MAX_TCP_HEADER (320) on x86-64 = 896 bytes.
    pub skb_overhead: u32,
    /// Negotiate ECN (RFC 3168; DCTCP always negotiates it).
    pub ecn: bool,
    /// RTO bounds: `TCP_RTO_MIN` 200 ms, `TCP_RTO_MAX` 120 s, `TCP_TIMEOUT_INIT` 1 s.
    pub rto_min: Nanos,
    pub rto_max: Nanos,
    pub rto_init: Nanos,
    /// `net.ipv4.tcp_slow_start_after_idle` (1).
    pub slow_start_after_idle: bool,
    /// `net.ipv4.tcp_reordering` (3): the duplicate-ACK threshold.
    pub reordering: u32,
}

impl Default for SenderConfig {
    fn default() -> Self {
        SenderConfig {
            mss: 1448,
            init_cwnd: 10,
            tsq: TsqMode::Rate,
            pacing_shift: 10,
            limit_output_bytes: 1 << 20,
            pacing_ss_ratio: 200,
            pacing_ca_ratio: 120,
            tp: 1,
            fq_pacing: false,
            offloads: true,
            gso_max_size: 65_536,
            min_tso_segs: 2,
            tso_rtt_log: 9,
            skb_overhead: 896,
            ecn: false,
            rto_min: 200 * NSEC_PER_MSEC,
            rto_max: 120 * NSEC_PER_SEC,
            rto_init: NSEC_PER_SEC,
            slow_start_after_idle: true,
            reordering: 3,
        }
    }
}
