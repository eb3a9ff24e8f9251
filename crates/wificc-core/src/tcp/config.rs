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
    /// `net.ipv4.tcp_limit_output_bytes` (1 MiB since Linux 5.0: 16 x 64 KiB; 256 KiB before).
    pub limit_output_bytes: Bytes,
    /// The cap of `limit_output_bytes` applies to paced sockets too (before 5.0).
    pub limit_caps_paced: bool,
    /// TSQ lets an skb through when the retransmit queue holds at most one skb (6.6+), not only
    /// when it is empty.
    pub tsq_single_skb: bool,
    /// EDT pacing (4.20+): each skb's departure time follows the previous one's; before, the
    /// hrtimer restarts from the moment an skb is sent.
    pub edt_pacing: bool,
    /// EDT's credit of up to half an skb's time for a late departure (4.20+).
    pub pacing_credit: bool,
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
    /// The egress device has no TSO: the kernel segments each multi-segment skb in software
    /// before the driver (`validate_xmit_skb` -> `skb_segment`) and `tcp_gso_segment` charges
    /// the socket each segment's truesize in place of the skb's
    /// ([`SkbLayout::segment_truesize`]). `Some(sg)`: whether the device has scatter-gather
    /// (without it every segment is copied into a buffer of its own).
    pub software_gso: Option<bool>,
    /// The egress device is virtual and orphans what it takes (TUN, veth: `stack.tx_orphan`):
    /// the qdisc holds each skb whole, charged its own truesize, and hands it over at once
    /// (`validate_xmit_skb` segments it after the dequeue and `dev_hard_start_xmit` passes every
    /// segment to `ndo_start_xmit`, which calls `skb_orphan`, in one loop), so an skb's whole
    /// charge is released as its first packet leaves the qdisc. Its first packet carries it.
    pub orphan_whole_skb: bool,
    /// The skb layout of the sender's kernel (segment truesizes).
    pub skb_layout: SkbLayout,
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
            limit_caps_paced: false,
            tsq_single_skb: true,
            edt_pacing: true,
            pacing_credit: true,
            pacing_ss_ratio: 200,
            pacing_ca_ratio: 120,
            tp: 1,
            fq_pacing: false,
            offloads: true,
            gso_max_size: GSO_LEGACY_MAX_SIZE,
            min_tso_segs: 2,
            tso_rtt_log: 9,
            skb_overhead: SKB + SHINFO + MAX_TCP_HEADER,
            software_gso: None,
            orphan_whole_skb: false,
            skb_layout: SkbLayout::WIFI_HOST,
            ecn: false,
            rto_min: 200 * NSEC_PER_MSEC,
            rto_max: 120 * NSEC_PER_SEC,
            rto_init: NSEC_PER_SEC,
            slow_start_after_idle: true,
            reordering: 3,
        }
    }
}

/// `GSO_LEGACY_MAX_SIZE` (include/linux/netdevice.h), bytes: the default `sk_gso_max_size`
/// and the largest skb the BBR engines budget for.
pub const GSO_LEGACY_MAX_SIZE: u32 = 65_536;

/// `MAX_TCP_HEADER` = L1_CACHE_ALIGN(128 + MAX_HEADER) bytes (include/net/tcp.h) for an x86-64
/// distribution kernel with Wi-Fi before 6.3: MAX_HEADER = LL_MAX_HEADER 128 (Wi-Fi with mesh)
/// plus 48 (IP tunnels) = 176, so 304 aligned to 64-byte cache lines. The layout of the
/// studies' kernels ([`SkbLayout::WIFI_HOST`]) and the header room of `bbr_tso_segs_goal`.
pub const MAX_TCP_HEADER: u32 = 320;

/// `SKB_DATA_ALIGN`: SMP_CACHE_BYTES (64 on x86-64).
const fn skb_data_align(x: u32) -> u32 {
    x.div_ceil(64) * 64
}

/// The kmalloc size class `__alloc_skb` rounds a request up to (`kmalloc_size_roundup`): the
/// kmalloc caches 8 .. 8192 bytes (with 96 and 192), whole pages (order-n) above.
pub const fn kmalloc_roundup(size: u32) -> u32 {
    if size <= 8 {
        return 8;
    }
    if size > 64 && size <= 96 {
        return 96;
    }
    if size > 128 && size <= 192 {
        return 192;
    }
    if size <= 8192 {
        return size.next_power_of_two();
    }
    size.div_ceil(4096).next_power_of_two() * 4096
}

/// `SKB_DATA_ALIGN(sizeof(struct skb_shared_info))` (320, MAX_SKB_FRAGS 17) and
/// `SKB_DATA_ALIGN(sizeof(struct sk_buff))` (224 -> 256) on x86-64.
const SHINFO: u32 = 320;
const SKB: u32 = 256;

/// How a kernel lays out skb heads, which sets the truesize TCP Small Queues charges for the
/// segments of a software-segmented skb (`skb_segment`, `__alloc_skb`, `kmalloc_reserve`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkbLayout {
    /// `MAX_TCP_HEADER` = L1_CACHE_ALIGN(128 + MAX_HEADER): the headroom TCP reserves; a
    /// segment's head holds it (the headers plus the headroom left in front of them).
    pub max_tcp_header: u32,
    /// `MAX_HEADER` (`GRO_MAX_HEAD` = MAX_HEADER + 128 sizes the small-head cache).
    pub max_header: u32,
    /// The `skbuff_small_head` cache (Linux 6.3+): heads that fit it take its size instead of
    /// a kmalloc class.
    pub small_head_cache: bool,
}

impl SkbLayout {
    /// An x86-64 distribution kernel with Wi-Fi (CONFIG_WLAN, mac80211 mesh and IP tunnels:
    /// MAX_HEADER 176, MAX_TCP_HEADER 320) before 6.3, as the studies ran (4.19 to 5.13).
    pub const WIFI_HOST: SkbLayout = SkbLayout {
        max_tcp_header: MAX_TCP_HEADER,
        max_header: 176,
        small_head_cache: false,
    };

    /// Bytes of a head allocation for `size` bytes of data.
    const fn head(&self, size: u32) -> u32 {
        let need = skb_data_align(size) + SHINFO;
        if self.small_head_cache {
            let gro_max_head = self.max_header + 128;
            let base = if self.max_tcp_header > gro_max_head {
                self.max_tcp_header
            } else {
                gro_max_head
            };
            let small = skb_data_align(base) + SHINFO;
            let small = if small.is_power_of_two() {
                small + 64
            } else {
                small
            };
            if need <= small {
                return small;
            }
        }
        kmalloc_roundup(need)
    }

    /// truesize of one segment of `payload` bytes that `skb_segment` produced: with
    /// scatter-gather the segment has a head for its headers (`__alloc_skb(headroom +
    /// headers)`) and references the payload (`truesize += data_len`); without it the payload
    /// is copied into the head (`__alloc_skb(headroom + headers + payload)`). truesize = the
    /// head's allocation + struct sk_buff (`SKB_TRUESIZE(size - shinfo)`).
    ///
    /// For the studies' kernels a full 1448-byte segment costs 4352 bytes without
    /// scatter-gather (320 + 1448 = 1768 -> 1792 + 320 = 2112 -> the 4096-byte class) and
    /// 2728 with it (640 -> the 1024-byte class, + 256 + 1448).
    pub const fn segment_truesize(&self, payload: u32, sg: bool) -> u32 {
        if sg {
            self.head(self.max_tcp_header) + SKB + payload
        } else {
            self.head(self.max_tcp_header + payload) + SKB
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kmalloc_classes() {
        assert_eq!(kmalloc_roundup(2112), 4096);
        assert_eq!(kmalloc_roundup(2048), 2048);
        assert_eq!(kmalloc_roundup(90), 96);
        assert_eq!(kmalloc_roundup(9000), 16384);
    }

    /// The layout of the kernel wificc was checked on (6.18.44 x86-64 without CONFIG_WLAN:
    /// MAX_HEADER 32, MAX_TCP_HEADER 192, skbuff_small_head 576) reproduces what
    /// `scripts/gso_charge/measure.sh` measured there with BPF on every segment.
    #[test]
    fn segment_truesize_matches_the_measured_kernel() {
        let vm = SkbLayout {
            max_tcp_header: 192,
            max_header: 32,
            small_head_cache: true,
        };
        // Scatter-gather: payload + 832.
        assert_eq!(vm.segment_truesize(1448, true), 2280);
        assert_eq!(vm.segment_truesize(260, true), 1092);
        assert_eq!(vm.segment_truesize(1052, true), 1884);
        // Without: the kmalloc class of the copied segment.
        assert_eq!(vm.segment_truesize(1448, false), 2304);
        assert_eq!(vm.segment_truesize(260, false), 1280);
        assert_eq!(vm.segment_truesize(656, false), 2304);
        assert_eq!(vm.segment_truesize(1312, false), 2304);
    }

    #[test]
    fn segment_truesize_on_the_studies_kernels() {
        let k = SkbLayout::WIFI_HOST;
        assert_eq!(k.segment_truesize(1448, false), 4352);
        // The largest payload in the 2048-byte class: 320 + 1408 = 1728 -> 1728 + 320.
        assert_eq!(k.segment_truesize(1408, false), 2304);
        assert_eq!(k.segment_truesize(1409, false), 4352);
        assert_eq!(k.segment_truesize(1448, true), 2728);
    }
}
