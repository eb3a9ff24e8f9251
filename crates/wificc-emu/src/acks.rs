//! The receivers' ACK policy as seen on the wire: for every TCP connection direction, the data
//! segments its sender wrote into the emulated path and the pure ACKs the other side wrote back
//! (counted when the emulator reads them from the TUN devices, i.e. when the kernel sent them),
//! how many data segments each ACK newly acknowledged (acknowledged bytes over the largest
//! payload seen on the connection, rounded to the nearest segment) and the time between
//! successive ACKs. This is what the simulator's receiver is compared with: one ACK per two
//! segments, per GRO batch, quick ACKs, stretch ACKs from a socket backlog.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use serde::Serialize;
use wificc_core::units::{Nanos, NSEC_PER_USEC};

use crate::ip::{Ipv4Info, PROTO_TCP};

/// Histogram bins of segments per ACK: 0, 1, ..., `SEGS_BINS - 1` (the last bin holds more).
pub const SEGS_BINS: usize = 65;
/// Histogram bins of ACK gaps: bin `i` holds gaps of [2^(i-1), 2^i) us (bin 0: under 1 us).
pub const GAP_BINS: usize = 24;

/// A connection direction: (source, source port, destination, destination port) of its data.
type Key = (Ipv4Addr, u16, Ipv4Addr, u16);

#[derive(Debug, Default)]
struct Conn {
    data_segments: u64,
    max_payload: u32,
    acks: u64,
    last_ack: Option<u32>,
    last_ack_at: Option<Nanos>,
    segs_per_ack: Vec<u64>,
    gap_us_log2: Vec<u64>,
}

/// The figures of one connection direction.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct AckPolicy {
    /// The data sender's address and port, and the receiver's.
    pub src: String,
    pub src_port: u16,
    pub dst: String,
    pub dst_port: u16,
    /// Data segments (TCP with payload) the sender wrote.
    pub data_segments: u64,
    /// Pure ACKs the receiver wrote.
    pub acks: u64,
    /// Largest payload seen, bytes (the segment size the histograms count in).
    pub mss: u32,
    /// ACKs by the segments each newly acknowledged (index = segments; the last bin: more).
    pub segs_per_ack: Vec<u64>,
    /// ACKs by the time since the previous ACK: bin i holds [2^(i-1), 2^i) us, bin 0 < 1 us.
    pub gap_us_log2: Vec<u64>,
}

/// Collects [`AckPolicy`] figures for every TCP connection direction.
#[derive(Debug, Default)]
pub struct AckTracker {
    conns: BTreeMap<Key, Conn>,
}

impl AckTracker {
    /// A datagram was read at `now`.
    pub fn record(&mut self, info: &Ipv4Info, now: Nanos) {
        if info.proto != PROTO_TCP {
            return;
        }
        let (sport, dport) = info.ports;
        if info.tcp_payload > 0 {
            let c = self
                .conns
                .entry((info.src, sport, info.dst, dport))
                .or_default();
            c.data_segments += 1;
            c.max_payload = c.max_payload.max(info.tcp_payload);
            return;
        }
        // A pure ACK acknowledges the data flowing the other way.
        let c = self
            .conns
            .entry((info.dst, dport, info.src, sport))
            .or_default();
        let acked = match c.last_ack {
            Some(prev) => info.tcp_ack.wrapping_sub(prev),
            None => 0,
        };
        // Only ACKs that move the cumulative ACK forward (by less than 2^31) count; a
        // duplicate or window update is an ACK with 0 segments.
        if c.last_ack.is_some() && acked >= 1 << 31 {
            return;
        }
        c.last_ack = Some(info.tcp_ack);
        if c.data_segments == 0 {
            return; // the handshake, before any data
        }
        c.acks += 1;
        if c.segs_per_ack.is_empty() {
            c.segs_per_ack = vec![0; SEGS_BINS];
            c.gap_us_log2 = vec![0; GAP_BINS];
        }
        let mss = c.max_payload.max(1);
        let segs = ((acked + mss / 2) / mss) as usize;
        c.segs_per_ack[segs.min(SEGS_BINS - 1)] += 1;
        if let Some(prev) = c.last_ack_at {
            let us = now.saturating_sub(prev) / NSEC_PER_USEC;
            let bin = (u64::BITS - us.leading_zeros()) as usize;
            c.gap_us_log2[bin.min(GAP_BINS - 1)] += 1;
        }
        c.last_ack_at = Some(now);
    }

    /// The figures of every connection direction that carried data.
    pub fn report(&self) -> Vec<AckPolicy> {
        self.conns
            .iter()
            .filter(|(_, c)| c.data_segments > 0)
            .map(|(&(src, src_port, dst, dst_port), c)| AckPolicy {
                src: src.to_string(),
                src_port,
                dst: dst.to_string(),
                dst_port,
                data_segments: c.data_segments,
                acks: c.acks,
                mss: c.max_payload,
                segs_per_ack: c.segs_per_ack.clone(),
                gap_us_log2: c.gap_us_log2.clone(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ip::{parse, tests::tcp_datagram};

    fn with_ack(mut d: Vec<u8>, ack: u32) -> Vec<u8> {
        d[28..32].copy_from_slice(&ack.to_be_bytes());
        d
    }

    #[test]
    fn counts_segments_per_ack_and_gaps() {
        let mut t = AckTracker::default();
        let data = parse(&tcp_datagram(1448, 0)).unwrap();
        // The reverse direction: swap addresses and ports.
        let mut ack = parse(&with_ack(tcp_datagram(0, 0), 1000)).unwrap();
        (ack.src, ack.dst, ack.ports) = (data.dst, data.src, (data.ports.1, data.ports.0));
        t.record(&ack, 0); // before any data: sets the reference only
        for _ in 0..5 {
            t.record(&data, 10);
        }
        ack.tcp_ack = 1000 + 2 * 1448;
        t.record(&ack, 20_000);
        ack.tcp_ack = 1000 + 5 * 1448;
        t.record(&ack, 23_000); // 3 us later: bin 2 ([2, 4) us)
        ack.tcp_ack = 1000 + 4 * 1448; // old: ignored
        t.record(&ack, 24_000);
        let r = t.report();
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].data_segments, r[0].acks, r[0].mss), (5, 2, 1448));
        assert_eq!((r[0].segs_per_ack[2], r[0].segs_per_ack[3]), (1, 1));
        assert_eq!(r[0].gap_us_log2[2], 1);
        assert_eq!(r[0].gap_us_log2.iter().sum::<u64>(), 1);
    }
}
