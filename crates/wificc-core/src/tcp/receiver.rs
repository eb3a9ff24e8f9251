//! The TCP receiver: cumulative ACK, SACK blocks, delayed ACK and ECN echo, as Linux
//! `tcp_input.c` (`tcp_data_queue`, `__tcp_ack_snd_check`, `tcp_sack_new_ofo_skb`).
//!
//! In-order data advances `rcv_nxt` (and pulls any out-of-order segments that become
//! contiguous). An ACK goes out at once when: more than one full segment is unacknowledged
//! (ACK every 2 segments), the connection is in quick-ACK mode (the first
//! `TCP_MAX_QUICKACKS` = 16 segments, and again after duplicate data), a segment fills the last
//! hole or duplicates data, or it arrives while data is out of order and SACK compression
//! (below) does not hold the ACK back;
//! otherwise the delayed-ACK timer (`TCP_DELACK_MIN`, 40 ms) is armed. SACK blocks (at most 3
//! with timestamps, RFC 2018) list the most recently changed block first. ECN: in classic mode
//! (RFC 3168) ECE is set on every ACK from a CE mark until a CWR arrives; in DCTCP mode ECE mirrors
//! the CE mark of the data being acknowledged, and a change of CE state sends the delayed ACK for
//! the previous state at once (RFC 8257 section 3.2).
//!
//! **GRO.** A host whose NIC driver delivers received frames from a NAPI poll
//! (`ieee80211_rx_napi` with the driver's `napi`: ath10k, iwlwifi) hands them to GRO
//! (`napi_gro_receive`), which merges the in-order segments of one flow received in one poll
//! into one skb before TCP sees them (net/core/gro.c `dev_gro_receive`, net/ipv4/tcp_offload.c
//! `tcp_gro_receive`, net/core/gro.c `skb_gro_receive`); TCP then runs its receive path and
//! its ACK decision (`tcp_rcv_established` -> `__tcp_ack_snd_check`) once per skb. A batch
//! the driver delivers at one instant is merged by [`gro_merges`] and handed over by
//! [`TcpReceiver::on_gro_skb`]: one ACK per GRO skb of two or more segments (more than one
//! full segment unacknowledged), and a quick ACK uses up one of the `TCP_MAX_QUICKACKS` per
//! ACK, not per segment (`tcp_event_ack_sent` -> `tcp_dec_quickack_mode`, tcp_output.c).
//! ath9k hands frames to mac80211 without NAPI (`ieee80211_rx` from its RX tasklet ->
//! `netif_receive_skb_list`), so its host's TCP sees every segment alone.
//!
//! **SACK compression** (`__tcp_ack_snd_check`, 5d9f4262b7ea "tcp: add SACK compression",
//! 4.18; every kernel profile has it). While out-of-order data is queued, a segment that does
//! not fill the last hole, advance `rcv_nxt` by more than one full segment or come in quick-ACK
//! mode is not ACKed at once: after the first `TCP_FASTRETRANS_THRESH` (3) duplicate ACKs for
//! one `rcv_nxt` (86de5921a3d5 "tcp: defer SACK compression after DupThresh", then
//! `dup_ack_counter`), the receiver counts it and arms a timer of
//! min(`tcp_comp_sack_delay_ns` 1 ms, RTT / 20), whose expiry sends one SACK for all
//! (`tcp_compressed_ack_kick`); at `tcp_comp_sack_nr` (44) compressed it ACKs at once, and any
//! ACK sent ends the compression (`tcp_event_ack_sent`). The RTT is the smaller of the
//! receiver's timestamp estimate and its handshake's; the model takes the path's propagation
//! RTT, which both are at least (the connection is taken to be set up on an idle path, as a
//! test's connections are before its load starts): [`TcpReceiver::set_sack_compression`].
//! Assumptions: the hrtimer fires at its expiry (the kernel's 100 us slack, 5.11+, lets it fire
//! up to that much later), and the DupThresh deferral applies to every profile (the release
//! that took 86de5921a3d5 was not read here; 4.19 and 5.4 may compress from the first
//! duplicate ACK).
//!
//! **The application's reads and the window's right edge** (`stack.read_delay`). Linux ACKs
//! more than one full segment in the input path only when the window's right edge advances
//! (`__tcp_ack_snd_check`: `__tcp_select_window(sk) >= tp->rcv_wnd`). An autotuned receiver's
//! window is its free buffer space (`tcp_rcv_space_adjust` keeps `window_clamp` at the empty
//! queue's space, `tcp_grow_window` raises `rcv_ssthresh` to it), so a segment that arrives
//! while data is unread offers a smaller window than the last ACK did and is not ACKed there;
//! the reader's `tcp_recvmsg` -> `tcp_cleanup_rbuf` ACKs when more than one full segment is
//! unacknowledged. With a read delay `d` the receiver models that: in-order data wakes the
//! reader (`sk_data_ready`), which reads everything in order `d` later; the window stands below
//! the full one by the data unread when the last ACK went out (less where `tcp_select_window`
//! kept the right edge from moving back), and the input path ACKs two segments only when no
//! more is unread now. Quick-ACK mode, holes and duplicates still ACK at once. Without a read
//! delay (the default) data counts as read the instant it is in order, and every second segment
//! is ACKed in the input path. The kernel check `tsq-completion` measured the mechanism
//! (docs/fidelity.md): behind htb at 20 Mbit/s the kernel's receiver ACKed once per 3-segment
//! skb, 34.8 us (median) after its last segment, where reading on arrival ACKs every second
//! segment and holds each skb's odd third one for the next skb (1.8 ms), raising the srtt.
//! Not modelled: PSH (`tcp_measure_rcv_mss` sets `ICSK_ACK_PUSHED` for a full-sized PSH
//! segment, and a read that empties the queue then ACKs even one segment; here a lone segment
//! waits for the delayed-ACK timer); the ACK of a read that doubles a small window; the phase
//! while `rcv_ssthresh` still grows (the window then advances on every segment); window-scale
//! rounding; a busy reader's own cadence (it reads again at once when data came in during its
//! read); and the frames of one received batch reaching TCP one after another (a driver's RX
//! loop), without which a reader ACKs a whole A-MPDU once (docs/fidelity.md, wifi-download).

use std::collections::BTreeMap;

use crate::net::packet::{AckInfo, Ecn, Kind, Packet, PacketSink, SackBlock, TCP_IP_HEADER};
use crate::sim::Timer;
use crate::units::{Nanos, NSEC_PER_MSEC};

/// `TCP_MAX_QUICKACKS`.
pub const MAX_QUICKACKS: u32 = 16;
/// `net.ipv4.tcp_comp_sack_delay_ns` (1 ms).
pub const COMP_SACK_DELAY: Nanos = 1_000_000;
/// `net.ipv4.tcp_comp_sack_nr` (44).
pub const COMP_SACK_NR: u32 = 44;
/// `TCP_FASTRETRANS_THRESH`: duplicate ACKs sent at once before SACK compression starts.
const FASTRETRANS_THRESH: u32 = 3;
/// `TCP_DELACK_MIN` (HZ/25).
pub const DELACK: Nanos = 40 * NSEC_PER_MSEC;
/// Largest GRO skb, bytes: `GRO_LEGACY_MAX_SIZE` (65536), the default `gro_max_size`;
/// `skb_gro_receive` refuses a segment when the held skb's length plus the segment's payload
/// would reach it (net/core/gro.c). With 52 header bytes and 1448-byte payloads: 45 segments.
pub const GRO_MAX_SIZE: u32 = 65_536;

/// Whether GRO merges data segment `next` into a held GRO skb that starts with `first`, ends
/// with `last` and is `len` bytes long (first's header and every payload), as
/// `tcp_gro_receive` (net/ipv4/tcp_offload.c) and `inet_gro_receive` (af_inet.c) decide:
/// the next in sequence; the same TOS byte (the ECN field: a CE mark ends the skb) and the
/// same TCP options (the timestamp: Linux's TSval ticks in milliseconds of the sender's
/// clock, `tcp_skb_timestamp_ts`, so segments sent in different milliseconds are not merged);
/// no CWR flag; a payload at most the first one's, after a full-sized last one (a shorter
/// segment is merged and ends the skb); and the skb stays below [`GRO_MAX_SIZE`].
pub fn gro_merges(first: &Packet, last: &Packet, len: u32, next: &Packet) -> bool {
    next.seq == last.seq + 1
        && next.ecn() == first.ecn()
        && next.sent / NSEC_PER_MSEC == first.sent / NSEC_PER_MSEC
        && !next.cwr()
        && last.payload == first.payload
        && next.payload <= first.payload
        && len + next.payload < GRO_MAX_SIZE
}

/// How the receiver echoes congestion experienced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EcnEcho {
    #[default]
    Classic,
    Dctcp,
}

pub struct TcpReceiver {
    pub id: u32,
    /// Route the ACKs take back to the sender.
    pub route: u32,
    pub dscp: u8,
    pub rcv_nxt: u64,
    /// Out-of-order segments: seq -> payload.
    ooo: BTreeMap<u64, u32>,
    /// The same segments as maximal contiguous ranges: start -> end.
    ranges: BTreeMap<u64, u64>,
    /// SACK blocks, most recently changed first.
    sacks: Vec<SackBlock>,
    unacked: u32,
    quickacks: u32,
    ts_recent: Nanos,
    ecn: EcnEcho,
    ece: bool,
    ce_state: bool,
    delack: Timer,
    /// `rcv_nxt` when the last ACK was sent (`rcv_wup`).
    rcv_wup: u64,
    /// SACK compression: its timer, the SACKs held back, the `rcv_nxt` they are for and the
    /// duplicate ACKs sent at once for it, and the delay (0: no compression).
    comp: Timer,
    compressed: u32,
    compressed_rcv_nxt: u64,
    dup_acks: u32,
    comp_delay: Nanos,
    /// ACKs the compression held back (`TCPAckCompressed`).
    pub acks_compressed: u64,
    pub delayed_ack_enabled: bool,
    /// The host's NIC driver hands received frames to GRO (see the module documentation):
    /// the world merges what arrives at one instant with [`gro_merges`].
    pub gro: bool,
    /// In-order payload bytes delivered to the application.
    pub delivered_bytes: u64,
    pub acks_sent: u64,
    /// The application's reads (see the module documentation): `None`, data counts as read
    /// the instant it is in order; `Some(d)`, the reader wakes `d` after data becomes
    /// readable and reads all of it.
    pub read_delay: Option<Nanos>,
    /// The pending read.
    read: Timer,
    /// Segments up to which the application has read (`copied_seq`).
    copied: u64,
    /// How far the advertised window stands below the full (empty-queue) window, in segments:
    /// the unread data when the last ACK was sent, or less where the window could not shrink.
    window_deficit: u64,
}

/// The times at which a receiver's timer events (delayed ACK, SACK compression, read) must
/// be scheduled; each is one event the caller schedules.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wakeups([Option<Nanos>; 3]);

impl Wakeups {
    fn with(mut self, t: Option<Nanos>) -> Self {
        if let Some(t) = t {
            if let Some(slot) = self.0.iter_mut().find(|s| s.is_none() || **s == Some(t)) {
                *slot = Some(t);
            }
        }
        self
    }

    /// Each time at which one event is due (distinct times: their order does not matter).
    pub fn times(self) -> impl Iterator<Item = Nanos> {
        self.0.into_iter().flatten()
    }

    /// The earliest time, if any.
    pub fn first(self) -> Option<Nanos> {
        self.times().min()
    }
}

impl TcpReceiver {
    pub fn new(id: u32, route: u32, dscp: u8, ecn: EcnEcho) -> Self {
        TcpReceiver {
            id,
            route,
            dscp,
            rcv_nxt: 0,
            ooo: BTreeMap::new(),
            ranges: BTreeMap::new(),
            sacks: Vec::with_capacity(4),
            unacked: 0,
            quickacks: MAX_QUICKACKS,
            ts_recent: 0,
            ecn,
            ece: false,
            ce_state: false,
            delack: Timer::default(),
            rcv_wup: 0,
            comp: Timer::default(),
            compressed: 0,
            compressed_rcv_nxt: 0,
            dup_acks: 0,
            comp_delay: 0,
            acks_compressed: 0,
            delayed_ack_enabled: true,
            gro: false,
            delivered_bytes: 0,
            acks_sent: 0,
            read_delay: None,
            read: Timer::default(),
            copied: 0,
            window_deficit: 0,
        }
    }

    /// Compress SACKs on a path of propagation round-trip time `rtt` (see the module
    /// documentation): the timer is min(1 ms, rtt / 20), as `rtt * (NSEC_PER_USEC >> 3) / 20`
    /// of the kernel's rtt in us << 3.
    pub fn set_sack_compression(&mut self, rtt: Nanos) {
        let rtt_us8 = rtt / 1000 * 8;
        self.comp_delay = COMP_SACK_DELAY.min(rtt_us8 * (1000 >> 3) / 20).max(1);
    }

    /// A data segment arrived. ACKs to send go to `acks`; the timer events to schedule
    /// (delayed ACK, SACK compression, the application's read: all handled by
    /// [`TcpReceiver::on_delack_timer`]) are returned.
    pub fn on_data(&mut self, pkt: &Packet, now: Nanos, acks: &mut impl PacketSink) -> Wakeups {
        let mut immediate = self.receive(pkt, now, acks);
        if self.quickacks > 0 {
            self.quickacks -= 1;
            immediate = true;
        }
        let due = self.ack_check(immediate, now, acks);
        Wakeups::default().with(due).with(self.readable(now))
    }

    /// A GRO skb arrived: `segs`, in sequence, merged by [`gro_merges`] (one segment: as
    /// [`TcpReceiver::on_data`]). TCP takes in every segment, then decides once whether to ACK:
    /// a quick ACK uses up one quick ACK however many segments it covers.
    pub fn on_gro_skb(
        &mut self,
        segs: &[Packet],
        now: Nanos,
        acks: &mut impl PacketSink,
    ) -> Wakeups {
        let mut immediate = false;
        for pkt in segs {
            immediate |= self.receive(pkt, now, acks);
        }
        if self.quickacks > 0 {
            self.quickacks -= 1;
            immediate = true;
        }
        let due = self.ack_check(immediate, now, acks);
        Wakeups::default().with(due).with(self.readable(now))
    }

    /// `tcp_data_ready` -> `sk_data_ready`: in-order data waits to be read, so the reader is
    /// woken (its read is due `read_delay` later unless one is pending already). Without a
    /// read delay the data was read as it arrived.
    fn readable(&mut self, now: Nanos) -> Option<Nanos> {
        let d = self.read_delay?;
        if self.rcv_nxt > self.copied && !self.read.is_armed() {
            return self.read.arm(now + d);
        }
        None
    }

    /// The application reads all in-order data (`tcp_recvmsg`), then `tcp_cleanup_rbuf`
    /// ACKs when the input path left more than one full segment unacknowledged (it held the
    /// ACK because the window did not advance; see [`TcpReceiver::window_advances`]). The
    /// read that empties the queue after a PSH segment (`ICSK_ACK_PUSHED`) and the ACK of a
    /// read that doubles a small window are not modelled: a lone segment waits for the
    /// delayed-ACK timer.
    fn on_read(&mut self, now: Nanos, acks: &mut impl PacketSink) {
        self.copied = self.rcv_nxt;
        if self.unacked > 0 && self.rcv_nxt >= self.rcv_wup + 2 {
            self.send_ack(now, false, acks);
        }
    }

    /// `__tcp_ack_snd_check`'s "right edge of window advances": `__tcp_select_window(sk) >=
    /// tp->rcv_wnd`. An autotuned receiver's window is its free buffer space (DRS keeps
    /// `window_clamp` at the empty queue's space and `rcv_ssthresh` grows up to it), so the
    /// window offered now is the full window less the unread data, and it reaches the one
    /// last advertised only when no more is unread than then. Window-scale rounding (2^wscale
    /// bytes) and the phase while `rcv_ssthresh` still grows (when the window is
    /// `rcv_ssthresh` and advances on every segment) are not modelled. Always true when data
    /// counts as read on arrival.
    fn window_advances(&self) -> bool {
        self.rcv_nxt - self.copied <= self.window_deficit
    }

    /// Take in one data segment; whether it asks for an immediate ACK (`ICSK_ACK_NOW`: it
    /// filled the last hole, or duplicates data). Out-of-order data is left to
    /// [`TcpReceiver::ack_check`].
    fn receive(&mut self, pkt: &Packet, now: Nanos, acks: &mut impl PacketSink) -> bool {
        let ce = pkt.ecn() == Ecn::Ce;
        if self.ecn == EcnEcho::Dctcp && ce != self.ce_state {
            // Flush the pending delayed ACK with the old CE state first.
            if self.unacked > 0 {
                self.send_ack(now, false, acks);
            }
            self.ce_state = ce;
        }
        if pkt.cwr() {
            self.ece = false;
        }
        if ce {
            self.ece = true;
        }
        let had_holes = !self.ooo.is_empty();
        let mut immediate = false;
        if pkt.seq == self.rcv_nxt {
            self.ts_recent = pkt.sent;
            self.rcv_nxt += 1;
            self.delivered_bytes += pkt.payload as u64;
            if let Some(end) = self.ranges.remove(&self.rcv_nxt) {
                for seq in self.rcv_nxt..end {
                    self.delivered_bytes += self.ooo.remove(&seq).unwrap_or(0) as u64;
                }
                self.rcv_nxt = end;
            }
            if had_holes {
                // RFC 5681 4.2: ACK at once when the last hole is filled.
                immediate = self.ooo.is_empty();
                self.sacks.retain(|b| b.end > self.rcv_nxt);
            }
        } else if pkt.seq > self.rcv_nxt {
            if self.ooo.insert(pkt.seq, pkt.payload).is_none() {
                self.add_sack(pkt.seq);
            }
        } else {
            // Duplicate data (a retransmission of what arrived): ACK at once and re-enter
            // quick-ACK mode, as `tcp_data_queue` does for old data (`tcp_enter_quickack_mode`
            // with `TCP_MAX_QUICKACKS`: the sender is taken to have lost ACKs). DSACK is not
            // modelled.
            self.quickacks = self.quickacks.max(MAX_QUICKACKS);
            immediate = true;
        }
        self.unacked += 1;
        if self.read_delay.is_none() {
            self.copied = self.rcv_nxt;
        }
        immediate
    }

    /// `__tcp_ack_snd_check`: ACK now, or arm the delayed-ACK timer (returned).
    fn ack_check(
        &mut self,
        immediate: bool,
        now: Nanos,
        acks: &mut impl PacketSink,
    ) -> Option<Nanos> {
        // More than one full segment in order since the last ACK (rcv_nxt - rcv_wup > MSS),
        // and the window's right edge advances.
        let two_in_order = self.rcv_nxt >= self.rcv_wup + 2 && self.window_advances();
        if immediate || two_in_order || !self.delayed_ack_enabled {
            self.send_ack(now, false, acks);
            return None;
        }
        if self.ooo.is_empty() {
            return self.delack.arm(now + DELACK);
        }
        // Out-of-order data queued: ACK at once without SACK compression or at its limit.
        if self.comp_delay == 0 || self.compressed >= COMP_SACK_NR {
            self.send_ack(now, false, acks);
            return None;
        }
        if self.compressed_rcv_nxt != self.rcv_nxt {
            self.compressed_rcv_nxt = self.rcv_nxt;
            self.dup_acks = 0;
        }
        if self.dup_acks < FASTRETRANS_THRESH {
            self.dup_acks += 1;
            self.send_ack(now, false, acks);
            return None;
        }
        self.compressed += 1;
        if self.comp.is_armed() {
            return None;
        }
        self.comp.arm(now + self.comp_delay)
    }

    /// The delayed-ACK, SACK-compression or read timer fired (one event serves all: each
    /// timer ignores an event that is not its own). Returns the events to schedule again.
    pub fn on_delack_timer(&mut self, now: Nanos, acks: &mut impl PacketSink) -> Wakeups {
        let (read_due, read_again) = self.read.fire(now);
        if read_due {
            self.on_read(now, acks);
        }
        let (comp_expired, comp_again) = self.comp.fire(now);
        let (expired, again) = self.delack.fire(now);
        if comp_expired && self.compressed > 0 {
            // tcp_compressed_ack_kick: one of the held-back ACKs is sent.
            self.compressed -= 1;
            self.send_ack(now, false, acks);
        }
        if expired && self.unacked > 0 {
            self.send_ack(now, true, acks);
        }
        let comp_again = comp_again.filter(|_| self.comp.is_armed());
        let again = again.filter(|_| self.delack.is_armed());
        Wakeups::default()
            .with(read_again)
            .with(comp_again)
            .with(again)
    }

    /// `tcp_sack_new_ofo_skb`: merge `seq` into the out-of-order ranges (O(log n)) and move the
    /// block holding it to the front of the SACK list.
    fn add_sack(&mut self, seq: u64) {
        let mut start = seq;
        let mut end = seq + 1;
        if let Some((&s, &e)) = self.ranges.range(..seq).next_back() {
            if e == seq {
                start = s;
                self.ranges.remove(&s);
            }
        }
        if let Some(e) = self.ranges.remove(&end) {
            end = e;
        }
        self.ranges.insert(start, end);
        self.sacks.retain(|b| b.end < start || b.start > end);
        self.sacks.insert(0, SackBlock { start, end });
        self.sacks.truncate(4);
    }

    fn send_ack(&mut self, now: Nanos, delayed: bool, acks: &mut impl PacketSink) {
        let nsack = self.sacks.len().min(3);
        let mut info = AckInfo {
            cum: self.rcv_nxt,
            nsack: nsack as u8,
            ece: match self.ecn {
                EcnEcho::Classic => self.ece,
                EcnEcho::Dctcp => self.ce_state,
            },
            tsecr: self.ts_recent,
            delayed,
            ..AckInfo::default()
        };
        info.sack[..nsack].copy_from_slice(&self.sacks[..nsack]);
        // Options: timestamps are in TCP_IP_HEADER; SACK adds 2 + 8 per block, padded to 4.
        let sack_bytes = if nsack > 0 {
            (2 + 8 * nsack as u32).div_ceil(4) * 4
        } else {
            0
        };
        let mut p = Packet::new(
            Kind::Ack,
            self.id,
            self.route,
            TCP_IP_HEADER + sack_bytes,
            now,
        );
        p.dscp = self.dscp;
        p.set_ack(&info);
        acks.send(p);
        self.unacked = 0;
        // tcp_select_window: the window offered is the free space, but its right edge never
        // moves back (rcv_wup + rcv_wnd), so it stands below the full window by the unread
        // data at most, and by no more than before plus what this ACK covers.
        self.window_deficit =
            (self.rcv_nxt - self.copied).min(self.window_deficit + (self.rcv_nxt - self.rcv_wup));
        self.rcv_wup = self.rcv_nxt;
        self.acks_sent += 1;
        self.delack.cancel();
        // tcp_event_ack_sent: an ACK ends the compression.
        self.acks_compressed += self.compressed as u64;
        self.compressed = 0;
        self.comp.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    fn data(seq: u64) -> Packet {
        let mut p = Packet::new(Kind::Data, 0, 0, 1500, 0);
        p.seq = seq;
        p.payload = 1448;
        p
    }

    fn rx() -> TcpReceiver {
        let mut r = TcpReceiver::new(0, 1, 0, EcnEcho::Classic);
        r.quickacks = 0;
        r
    }

    /// A receiver whose application wakes 35 us after data becomes readable, past its quick
    /// ACKs.
    fn reader() -> TcpReceiver {
        let mut r = rx();
        r.read_delay = Some(35_000);
        r
    }

    #[test]
    fn a_burst_is_acked_once_at_the_read() {
        // Three segments 12 us apart (one 3-segment skb off a shaper): the second does not
        // advance the window (unread data), so nothing is sent in the input path; the read
        // 35 us after the first segment takes all three and ACKs them (3 > one segment).
        let mut r = reader();
        let mut acks = VecDeque::new();
        let mut due: Vec<Nanos> = r.on_data(&data(0), 0, &mut acks).times().collect();
        due.sort_unstable();
        assert_eq!(due, vec![35_000, DELACK]);
        assert_eq!(r.on_data(&data(1), 12_000, &mut acks).first(), None);
        assert_eq!(r.on_data(&data(2), 24_000, &mut acks).first(), None);
        assert!(acks.is_empty());
        // The read's event; the delayed-ACK event at 40 ms then finds nothing to do.
        assert_eq!(r.on_delack_timer(35_000, &mut acks).first(), None);
        assert_eq!((acks.len(), acks[0].ack().cum), (1, 3));
        assert_eq!(r.on_delack_timer(DELACK, &mut acks).first(), None);
        assert_eq!(acks.len(), 1);
    }

    #[test]
    fn spaced_segments_are_acked_at_the_read_of_the_second() {
        // Segments 600 us apart (20 Mbit/s): the first is read alone (one segment: no ACK);
        // the second makes two unacknowledged but is itself unread, so the ACK waits for its
        // read, 35 us later; a third alone waits for the delayed-ACK timer.
        let mut r = reader();
        let mut acks = VecDeque::new();
        r.on_data(&data(0), 0, &mut acks);
        r.on_delack_timer(35_000, &mut acks);
        assert!(acks.is_empty());
        assert_eq!(
            r.on_data(&data(1), 600_000, &mut acks).first(),
            Some(635_000)
        );
        assert!(acks.is_empty());
        r.on_delack_timer(635_000, &mut acks);
        assert_eq!((acks.len(), acks[0].ack().cum), (1, 2));
        r.on_data(&data(2), 1_200_000, &mut acks);
        r.on_delack_timer(1_235_000, &mut acks);
        assert_eq!(acks.len(), 1);
        // The delayed-ACK timer (armed by segment 2, 40 ms after it) sends it.
        r.on_delack_timer(1_200_000 + DELACK, &mut acks);
        assert_eq!(
            (acks.len(), acks[1].ack().cum, acks[1].ack().delayed),
            (2, 3, true)
        );
    }

    #[test]
    fn an_ack_sent_with_unread_data_leaves_the_window_short_by_it() {
        // In quick-ACK mode every segment is ACKed in the input path, unread or not. After
        // the 16th (two unread at that ACK: segments 14 and 15 arrive within 35 us), the window
        // stands two segments short...
        let mut r = TcpReceiver::new(0, 1, 0, EcnEcho::Classic);
        r.read_delay = Some(35_000);
        let mut acks = VecDeque::new();
        for s in 0..14 {
            r.on_data(&data(s), s * 100_000, &mut acks);
            r.on_delack_timer(s * 100_000 + 35_000, &mut acks);
        }
        r.on_data(&data(14), 2_000_000, &mut acks);
        r.on_data(&data(15), 2_010_000, &mut acks);
        assert_eq!((acks.len(), r.window_deficit), (16, 2));
        // ...with three unread the 17th... 18th: three unread > 2, no ACK in the input path.
        r.on_data(&data(16), 2_020_000, &mut acks);
        r.on_data(&data(17), 2_030_000, &mut acks);
        assert_eq!(acks.len(), 16);
        // The read (due 35 us after segment 14) takes all four and ACKs the two since.
        r.on_delack_timer(2_035_000, &mut acks);
        assert_eq!(
            (acks.len(), acks[16].ack().cum, r.window_deficit),
            (17, 18, 0)
        );
        // Past the quick ACKs, the next pair is ACKed at its read again, not in the input
        // path: the second one is unread when it arrives.
        assert_eq!(
            r.on_data(&data(18), 3_000_000, &mut acks).first(),
            Some(3_035_000)
        );
        r.on_delack_timer(3_035_000, &mut acks);
        r.on_data(&data(19), 3_100_000, &mut acks);
        assert_eq!(
            acks.len(),
            17,
            "segment 19 is unread: the window does not advance"
        );
    }

    #[test]
    fn duplicate_data_is_acked_at_once_and_restarts_quick_acks() {
        let mut r = rx();
        let mut acks = VecDeque::new();
        for seq in 0..4 {
            r.on_data(&data(seq), 1000 * seq, &mut acks).first();
        }
        assert_eq!(acks.len(), 2);
        // A spurious retransmission of segment 1: one ACK at once (cum 4), and 15 quick ACKs
        // left of the 16 it restored.
        assert_eq!(r.on_data(&data(1), 5000, &mut acks).first(), None);
        assert_eq!((acks.len(), acks[2].ack().cum, r.quickacks), (3, 4, 15));
        // So a lone segment after it is ACKed at once instead of waiting for the timer.
        assert_eq!(r.on_data(&data(4), 6000, &mut acks).first(), None);
        assert_eq!((acks.len(), acks[3].ack().cum, r.quickacks), (4, 5, 14));
    }

    #[test]
    fn acks_every_second_segment_and_delays_a_lone_one() {
        let mut r = rx();
        let mut acks = VecDeque::new();
        assert_eq!(
            r.on_data(&data(0), 1000, &mut acks).first(),
            Some(1000 + DELACK)
        );
        assert!(acks.is_empty());
        assert_eq!(r.on_data(&data(1), 2000, &mut acks).first(), None);
        assert_eq!(acks.len(), 1);
        assert_eq!(acks[0].ack().cum, 2);
        // A third segment waits. The first timer event (still pending at 1000 + DELACK) is
        // reused: it fires early and re-schedules itself at the new deadline, which sends the
        // ACK with the delayed flag.
        assert_eq!(r.on_data(&data(2), 3000, &mut acks).first(), None);
        assert_eq!(
            r.on_delack_timer(1000 + DELACK, &mut acks).first(),
            Some(3000 + DELACK)
        );
        assert_eq!(acks.len(), 1);
        assert_eq!(r.on_delack_timer(3000 + DELACK, &mut acks).first(), None);
        assert_eq!(
            (acks.len(), acks[1].ack().cum, acks[1].ack().delayed),
            (2, 3, true)
        );
    }

    /// Segment `seq`, full-sized, sent at `sent_ns`.
    fn sent_at(seq: u64, sent_ns: Nanos) -> Packet {
        let mut p = data(seq);
        p.sent = sent_ns;
        p
    }

    /// Split `pkts` into GRO skbs as the world does (each merges while `gro_merges` says so).
    fn gro_skbs(pkts: &[Packet]) -> Vec<Vec<Packet>> {
        let mut out: Vec<Vec<Packet>> = Vec::new();
        let mut len = 0;
        for p in pkts {
            if let Some(skb) = out.last_mut() {
                if gro_merges(&skb[0], &skb[skb.len() - 1], len, p) {
                    len += p.payload;
                    skb.push(*p);
                    continue;
                }
            }
            len = p.size;
            out.push(vec![*p]);
        }
        out
    }

    #[test]
    fn gro_merges_at_most_45_full_segments_of_one_millisecond() {
        // 52 + 45 x 1448 = 65212 < 65536; a 46th would make 66660.
        let batch: Vec<Packet> = (0..64).map(|s| sent_at(s, 5_000_000)).collect();
        let sizes: Vec<usize> = gro_skbs(&batch).iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![45, 19]);
        // Sent across a millisecond boundary (TSval ticks): 10 in ms 5, 22 in ms 6.
        let batch: Vec<Packet> = (0..32)
            .map(|s| sent_at(s, if s < 10 { 5_999_000 } else { 6_000_000 }))
            .collect();
        let sizes: Vec<usize> = gro_skbs(&batch).iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![10, 22]);
        // A gap in sequence, a CE mark and a short segment each end a skb (the short one is
        // merged first).
        let mut batch: Vec<Packet> = (0..8).map(|s| sent_at(s, 0)).collect();
        batch[3].seq = 10; // 0 1 2 | 10 | 4 5 6 7 (4 does not follow 10)
        batch[6].set_ecn(Ecn::Ce); // 4 5 | 6(CE) 7 -> 7 not CE: new skb
        batch[1].payload = 1000; // 0 1(short) | 2
        let sizes: Vec<usize> = gro_skbs(&batch).iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![2, 1, 1, 2, 1, 1]);
    }

    #[test]
    fn a_gro_skb_gets_one_ack() {
        // After the quick ACKs: an A-MPDU of 32 segments sent in one millisecond arrives in one
        // RX batch: one skb of 32 -> one ACK, sent at once (no timer), cumulative 32, echoing
        // the segments' send time.
        let mut r = rx();
        let mut acks = VecDeque::new();
        let batch: Vec<Packet> = (0..32).map(|s| sent_at(s, 1_000_000)).collect();
        for skb in gro_skbs(&batch) {
            assert_eq!(r.on_gro_skb(&skb, 7_000_000, &mut acks).first(), None);
        }
        assert_eq!(acks.len(), 1);
        assert_eq!((acks[0].ack().cum, acks[0].ack().tsecr), (32, 1_000_000));
        // 64 segments in one batch: 45 + 19 -> two ACKs (cum 77, 96).
        let batch: Vec<Packet> = (32..96).map(|s| sent_at(s, 2_000_000)).collect();
        for skb in gro_skbs(&batch) {
            r.on_gro_skb(&skb, 9_000_000, &mut acks).first();
        }
        let cums: Vec<u64> = acks.iter().map(|a| a.ack().cum).collect();
        assert_eq!(cums, vec![32, 77, 96]);
        // A lone segment is delayed, as without GRO; the next lone one is ACKed with it.
        assert_eq!(
            r.on_gro_skb(&[sent_at(96, 3_000_000)], 10_000_000, &mut acks)
                .first(),
            Some(10_000_000 + DELACK)
        );
        assert_eq!(
            r.on_gro_skb(&[sent_at(97, 3_000_000)], 10_000_100, &mut acks)
                .first(),
            None
        );
        assert_eq!((acks.len(), acks[3].ack().cum), (4, 98));
    }

    #[test]
    fn quick_acks_are_counted_per_gro_skb() {
        // 16 quick ACKs: with skbs of 4 segments, the first 16 skbs (64 segments) are each
        // ACKed at once; then skbs of 4 are still ACKed at once (more than one segment
        // unacknowledged), but a lone segment waits.
        let mut r = TcpReceiver::new(0, 1, 0, EcnEcho::Classic);
        let mut acks = VecDeque::new();
        for k in 0..MAX_QUICKACKS as u64 {
            let skb: Vec<Packet> = (4 * k..4 * k + 4).map(data).collect();
            assert_eq!(r.on_gro_skb(&skb, k, &mut acks).first(), None);
        }
        assert_eq!((acks.len(), r.quickacks), (16, 0));
        assert_eq!(acks[15].ack().cum, 64);
        assert_eq!(
            r.on_gro_skb(&[data(64)], 100, &mut acks).first(),
            Some(100 + DELACK)
        );
        // Without GRO the same 64 segments use the 16 quick ACKs on the first 16 segments.
        let mut r = TcpReceiver::new(0, 1, 0, EcnEcho::Classic);
        let mut acks = VecDeque::new();
        for s in 0..64 {
            r.on_data(&data(s), s, &mut acks).first();
        }
        assert_eq!(acks.len(), 16 + 24);
    }

    #[test]
    fn quickack_at_start() {
        let mut r = TcpReceiver::new(0, 1, 0, EcnEcho::Classic);
        let mut acks = VecDeque::new();
        for s in 0..MAX_QUICKACKS as u64 {
            r.on_data(&data(s), s, &mut acks).first();
        }
        assert_eq!(acks.len(), MAX_QUICKACKS as usize);
        r.on_data(&data(16), 100, &mut acks).first();
        assert_eq!(
            acks.len(),
            MAX_QUICKACKS as usize,
            "17th segment is delayed"
        );
    }

    #[test]
    fn out_of_order_gets_immediate_sack_most_recent_first() {
        let mut r = rx();
        let mut acks = VecDeque::new();
        r.on_data(&data(0), 0, &mut acks).first();
        r.on_data(&data(2), 1, &mut acks).first(); // hole at 1
        r.on_data(&data(5), 2, &mut acks).first(); // hole at 3,4
        r.on_data(&data(3), 3, &mut acks).first(); // extends block [2,4)
        let last = acks.back().unwrap().ack();
        assert_eq!(last.cum, 1);
        assert_eq!(last.nsack, 2);
        assert_eq!(last.sack[0], SackBlock { start: 2, end: 4 });
        assert_eq!(last.sack[1], SackBlock { start: 5, end: 6 });
        // Filling the first hole: cum jumps to 4, remaining block [5,6), immediate ACK.
        let n = acks.len();
        r.on_data(&data(1), 4, &mut acks).first();
        assert_eq!(acks.len(), n + 1);
        let last = acks.back().unwrap().ack();
        assert_eq!((last.cum, last.nsack), (4, 1));
        assert_eq!(last.sack[0], SackBlock { start: 5, end: 6 });
        assert_eq!(r.delivered_bytes, 4 * 1448);
    }

    /// SACK compression on a 10 ms path: timer min(1 ms, 10 ms / 20) = 500 us. With segment 1
    /// lost, segments 2..=4 each get a duplicate ACK at once (TCP_FASTRETRANS_THRESH), 5..=9 are
    /// held back under one timer, whose expiry sends one SACK for them all; the retransmitted
    /// segment 1 fills the hole (rcv_nxt moves past all): ACK at once.
    #[test]
    fn sacks_are_compressed_after_three_duplicate_acks() {
        let mut r = rx();
        r.set_sack_compression(10 * NSEC_PER_MSEC);
        assert_eq!(r.comp_delay, 500_000);
        let mut acks = VecDeque::new();
        // Segment 0 in order, alone: the delayed-ACK timer.
        assert_eq!(r.on_data(&data(0), 0, &mut acks).first(), Some(DELACK));
        for seq in 2..=4 {
            assert_eq!(r.on_data(&data(seq), seq * 1000, &mut acks).first(), None);
        }
        assert_eq!(acks.len(), 3);
        assert!(acks.iter().all(|a| a.ack().cum == 1));
        // The first held-back SACK arms the timer; the others wait under it.
        assert_eq!(r.on_data(&data(5), 5000, &mut acks).first(), Some(505_000));
        for seq in 6..=9 {
            assert_eq!(r.on_data(&data(seq), seq * 1000, &mut acks).first(), None);
        }
        assert_eq!((acks.len(), r.compressed), (3, 5));
        // The timer's event sends one SACK covering [2, 10) and nothing is rescheduled.
        assert_eq!(r.on_delack_timer(505_000, &mut acks).first(), None);
        assert_eq!(acks.len(), 4);
        let sack = acks.back().unwrap().ack();
        assert_eq!((sack.cum, sack.nsack), (1, 1));
        assert_eq!(sack.sack[0], SackBlock { start: 2, end: 10 });
        assert_eq!((r.compressed, r.acks_compressed), (0, 4));
        // The delayed-ACK timer of segment 0 was cancelled by the first ACK sent.
        assert_eq!(r.on_delack_timer(DELACK, &mut acks).first(), None);
        assert_eq!(acks.len(), 4);
        // Segment 1 arrives: the last hole is filled, ACK at once.
        assert_eq!(r.on_data(&data(1), 600_000, &mut acks).first(), None);
        assert_eq!((acks.len(), acks.back().unwrap().ack().cum), (5, 10));
    }

    /// `tcp_comp_sack_nr`: at 44 held back the next one is ACKed at once; a new `rcv_nxt`
    /// restarts the duplicate-ACK count; the timer is 1 ms at most (a 50 ms path: 2.5 ms).
    #[test]
    fn sack_compression_is_bounded() {
        let mut r = rx();
        r.set_sack_compression(50 * NSEC_PER_MSEC);
        assert_eq!(r.comp_delay, COMP_SACK_DELAY);
        let mut acks = VecDeque::new();
        // Segment 0 lost: 3 duplicate ACKs, then 44 held back, then the 45th goes at once.
        for seq in 1..=3 + COMP_SACK_NR as u64 {
            r.on_data(&data(seq), seq, &mut acks).first();
        }
        assert_eq!((acks.len(), r.compressed), (3, COMP_SACK_NR));
        r.on_data(&data(4 + COMP_SACK_NR as u64), 100, &mut acks)
            .first();
        assert_eq!((acks.len(), r.compressed, r.acks_compressed), (4, 0, 44));
        // Segment 0 arrives with 200 (lost) still missing further on: rcv_nxt moves by more
        // than a segment, ACK at once; the next out-of-order segments are duplicate ACKs again.
        r.on_data(&data(200), 200, &mut acks).first();
        r.on_data(&data(0), 300, &mut acks).first();
        assert_eq!(acks.back().unwrap().ack().cum, 5 + COMP_SACK_NR as u64);
        let n = acks.len();
        for seq in 201..=203 {
            r.on_data(&data(seq), seq, &mut acks).first();
        }
        assert_eq!(acks.len(), n + 3);
    }

    #[test]
    fn classic_ecn_echo_until_cwr() {
        let mut r = rx();
        let mut acks = VecDeque::new();
        let mut ce = data(0);
        ce.set_ecn(Ecn::Ce);
        r.on_data(&ce, 0, &mut acks).first();
        r.on_data(&data(1), 1, &mut acks).first();
        assert!(acks[0].ack().ece);
        let mut cwr = data(2);
        cwr.set_cwr(true);
        r.on_data(&cwr, 2, &mut acks).first();
        r.on_data(&data(3), 3, &mut acks).first();
        assert!(!acks[1].ack().ece);
    }

    #[test]
    fn dctcp_echo_flushes_on_ce_change() {
        let mut r = TcpReceiver::new(0, 1, 0, EcnEcho::Dctcp);
        r.quickacks = 0;
        let mut acks = VecDeque::new();
        r.on_data(&data(0), 0, &mut acks).first(); // delayed, CE state 0
        let mut ce = data(1);
        ce.set_ecn(Ecn::Ce);
        r.on_data(&ce, 1, &mut acks).first();
        // First an ACK for seq 0 without ECE, then (after seg 1 alone) nothing yet.
        assert_eq!(acks.len(), 1);
        assert_eq!((acks[0].ack().cum, acks[0].ack().ece), (1, false));
        let mut ce2 = data(2);
        ce2.set_ecn(Ecn::Ce);
        r.on_data(&ce2, 2, &mut acks).first();
        assert_eq!((acks[1].ack().cum, acks[1].ack().ece), (3, true));
    }
}
