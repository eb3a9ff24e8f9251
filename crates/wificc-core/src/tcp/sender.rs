//! The TCP sender: Linux's output engine and ACK processing for one connection.
//!
//! Output (`write_xmit`, after `tcp_write_xmit` and `tcp_xmit_retransmit_queue`) runs on
//! application data, ACK arrival, the pacing timer and TSQ completion. Lost segments are
//! retransmitted first, then new data, one skb at a time. Before each skb: stop if pacing is
//! enforced and its earliest departure time (EDT, `tcp_wstamp_ns`) is in the future (arm the
//! pacing timer); stop if packets in flight >= cwnd; size the skb (TSO autosizing from the
//! pacing rate, at most half the cwnd, at least the CCA's `min_tso_segs`); stop if TSQ says too
//! much of this socket is queued below TCP; send. After an skb of L bytes,
//! `tcp_wstamp_ns = max(now, tcp_wstamp_ns) + L / pacing_rate` (less half the credit of a late
//! timer), as `tcp_update_skb_after_send`.
//!
//! ACK processing (`tcp_ack`): SACK blocks and the cumulative ACK update a scoreboard indexed by
//! segment number (O(1) per segment; no walk over the flight), the RTT estimator
//! (`tcp_rtt_estimator`, RFC 6298 with Linux's mdev/rttvar and 200 ms floor) and the rate
//! sampler (`tcp::rate`); RACK (`tcp_recovery.c`) marks segments lost by time, walking only a
//! send-ordered list of unSACKed segments that stops at the first one sent after the most
//! recently delivered one; the recovery state machine enters Recovery on loss (ssthresh from the
//! CCA, PRR `tcp_cwnd_reduction` for CCAs without `cong_control`), CWR on ECN echo, and Loss on
//! RTO (all outstanding marked lost, cwnd 1, exponential backoff). `on_ack` runs these as the
//! kernel's steps, each a method of its own, in the model's order: `sacktag`
//! (`tcp_sacktag_write_queue`), `clean_rtx_queue`, `ack_update_rtt`, the CCA's `pkts_acked`
//! and `in_ack_event` hooks, `fastretrans_alert` (RACK, then the state machine) and
//! `cong_control`; `sender/tests.rs` tests them against hand-worked Linux behaviour.
//!
//! Sequence numbers count segments; each carries `mss` payload bytes except possibly the last
//! of a finite transfer. Not modelled: TLP (tail loss probes), undo on DSACK or timestamps,
//! DSACK-driven growth of RACK's reordering window, loss detection from duplicate ACKs without
//! SACK blocks (the receiver always sends them), `tcp_tso_should_defer`, cwnd restart after
//! idle, receive-window limits (the receiver never limits). Timers are exact: the RTO and the
//! RACK reorder timer are not rounded to jiffies, the reorder timer has no `TCP_TIMEOUT_MIN`
//! added and is a timer of its own (Linux shares one with the RTO). The RTO is re-armed at the
//! head segment's last transmission + RTO, where Linux's `tcp_rearm_rto` arms now + RTO (it
//! offsets from the head only when a reorder or probe timer held the timer).

use std::collections::VecDeque;

use super::config::{SenderConfig, TsqMode};
use super::rate::{AckRate, RateSampler};
use super::rate_sample::{RateSample, TxState};
use super::sock::{
    AckSample, CaEvent, CaState, PacingStatus, Sock, CA_ACK_ECE, CA_ACK_SLOWPATH, CA_ACK_WIN_UPDATE,
};
use crate::cc::CongestionControl;
use crate::net::packet::{
    AckInfo, Ecn, Emit, Kind, Packet, PacketRef, PacketSink, Packets, TCP_IP_HEADER,
};
use crate::sim::{Rng, Timer};
use crate::units::{Nanos, NSEC_PER_SEC, NSEC_PER_USEC};

const SACKED: u8 = 1;
const LOST: u8 = 2;
/// Retransmitted and not yet known lost again (counted in retrans_out).
const RETRANS: u8 = 4;
const EVER_RETRANS: u8 = 8;
const NIL: u64 = u64::MAX;

/// A segment in flight (sent, not cumulatively ACKed).
#[derive(Debug, Clone, Copy)]
struct Seg {
    payload: u32,
    /// Time of the latest (re)transmission.
    sent: Nanos,
    tx: TxState,
    /// The skb this segment was sent in (TSQ's one-skb exception).
    skb: u64,
    flags: u8,
    /// Neighbours in send-time order (RACK's `tsorted_sent_queue`), by sequence number.
    ts_prev: u64,
    ts_next: u64,
}

/// TSQ's verdict on the next skb.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tsq {
    /// Within the limit.
    Send,
    /// Over the limit, but at most one skb is unacknowledged.
    Excepted,
    /// Over the limit: wait for TX completions.
    Stop,
    /// No limit applies (TSQ off, or an RTO retransmission).
    Unlimited,
}

/// What one ACK did, gathered by each step of `tcp_ack` for the steps after it (Linux passes
/// the same between them as `flag`, `struct tcp_sacktag_state` and `struct rate_sample`).
#[derive(Debug, Default)]
struct AckState {
    /// The rate sample being built (`tcp_rate_skb_delivered` on each delivered segment).
    acc: AckRate,
    prior_una: u64,
    prior_delivered: u64,
    prior_lost: u64,
    /// Send times of the newest and oldest newly SACKed and newly ACKed segments that were
    /// never retransmitted (the RTT sources).
    newest_sacked: Option<Nanos>,
    oldest_sacked: Option<Nanos>,
    newest_acked: Option<Nanos>,
    oldest_acked: Option<Nanos>,
    /// A cumulatively ACKed segment had been retransmitted (`FLAG_RETRANS_DATA_ACKED`).
    retrans_acked: bool,
    /// Segments and payload bytes cumulatively ACKed.
    acked_pkts: u32,
    acked_payload: u64,
    /// snd_una moved (`FLAG_SND_UNA_ADVANCED`).
    una_advanced: bool,
    /// Segments newly ACKed or SACKed (`newly_acked_sacked`).
    delivered: u32,
}

impl AckState {
    fn new(tp: &Sock) -> Self {
        let mut st = AckState {
            prior_una: tp.snd_una,
            prior_delivered: tp.delivered,
            prior_lost: tp.lost,
            ..AckState::default()
        };
        st.acc.rs.prior_in_flight = tp.packets_in_flight();
        st
    }
}

/// Timers a sender asks the event loop for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SenderTimer {
    Pacing,
    Rto,
    Reorder,
}

/// Where a sender's actions go: packets to transmit and timers to schedule.
pub struct Out<'a> {
    pub now: Nanos,
    pub pkts: Emit<'a>,
    pub timers: &'a mut Vec<(Nanos, SenderTimer)>,
}

impl<'a> Out<'a> {
    /// Packets go into `pkts` with their references onto `work`; timers onto `timers`.
    pub fn new(
        now: Nanos,
        pkts: &'a mut Packets,
        work: &'a mut VecDeque<PacketRef>,
        timers: &'a mut Vec<(Nanos, SenderTimer)>,
    ) -> Self {
        Out {
            now,
            pkts: Emit { pkts, work },
            timers,
        }
    }
}

/// Counters for the run summary.
#[derive(Debug, Clone, Copy, Default)]
pub struct SenderStats {
    pub segs_sent: u64,
    pub data_bytes_sent: u64,
    pub retrans: u64,
    pub rto_count: u64,
    pub recoveries: u64,
    pub skbs_sent: u64,
    pub tsq_throttled: u64,
    /// Sends allowed over the TSQ limit by the one-skb exception.
    pub tsq_exceptions: u64,
    /// Largest excess over the TSQ limit after a send not covered by the exception (<= 0 when
    /// the limit always held; see `note_tsq_excess`).
    pub tsq_max_excess: i64,
    pub max_below_bytes: u64,
}

pub struct TcpSender {
    pub id: u32,
    pub route: u32,
    pub dscp: u8,
    pub tp: Sock,
    pub cc: Box<dyn CongestionControl>,
    cfg: SenderConfig,
    rng: Rng,
    // application
    /// Bytes the application still has to hand over (None: unlimited).
    app_remaining: Option<u64>,
    app_open: bool,
    started: bool,
    // scoreboard: segs[i] is segment snd_una + i
    segs: VecDeque<Seg>,
    ts_head: u64,
    ts_tail: u64,
    /// Lowest sequence that may be lost and not yet retransmitted.
    rtx_hint: u64,
    next_skb: u64,
    /// (MSS, the truesize software GSO charges for a segment of it).
    full_segment: (u32, u32),
    prev_sack: [(u64, u64); 3],
    // rate sampling, RTT
    pub rate: RateSampler,
    rttvar_us: u32,
    mdev_max_us: u32,
    rtt_seq: u64,
    rto: Nanos,
    backoff: u32,
    /// RTO retransmissions since snd_una last advanced (`icsk_retransmits`).
    retransmits: u32,
    min_rtt_stamp: Nanos,
    // RACK
    rack_sent: Nanos,
    rack_end_seq: u64,
    rack_rtt_us: u64,
    rack_valid: bool,
    // recovery
    prr_delivered: u32,
    prr_out: u32,
    cwr_pending: bool,
    cwnd_usage_seq: u64,
    // pacing, TSQ
    wstamp: Nanos,
    pub below_bytes: u64,
    /// Charged packets below TCP, each released once (with `orphan_whole_skb`, skbs).
    pub below_packets: u64,
    tsq_throttled: bool,
    timers: [Timer; 3],
    pub last_rs: RateSample,
    pub stats: SenderStats,
}

impl TcpSender {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        id: u32,
        route: u32,
        dscp: u8,
        cfg: SenderConfig,
        cc: Box<dyn CongestionControl>,
        rng: Rng,
        app_bytes: Option<u64>,
    ) -> Self {
        let mut tp = Sock::new(cfg.mss, cfg.init_cwnd);
        tp.pacing_shift = cfg.pacing_shift;
        tp.pacing_tp = cfg.tp;
        tp.ecn_ok = cfg.ecn;
        let rto = cfg.rto_init;
        let full_segment = (
            cfg.mss,
            cfg.skb_layout
                .segment_truesize(cfg.mss, cfg.software_gso.unwrap_or(true)),
        );
        TcpSender {
            full_segment,
            id,
            route,
            dscp,
            tp,
            cc,
            cfg,
            rng,
            app_remaining: app_bytes,
            app_open: false,
            started: false,
            segs: VecDeque::new(),
            ts_head: NIL,
            ts_tail: NIL,
            rtx_hint: NIL,
            next_skb: 0,
            prev_sack: [(0, 0); 3],
            rate: RateSampler::default(),
            rttvar_us: 0,
            mdev_max_us: 0,
            rtt_seq: 0,
            rto,
            backoff: 0,
            retransmits: 0,
            min_rtt_stamp: 0,
            rack_sent: 0,
            rack_end_seq: 0,
            rack_rtt_us: 0,
            rack_valid: false,
            prr_delivered: 0,
            prr_out: 0,
            cwr_pending: false,
            cwnd_usage_seq: 0,
            wstamp: 0,
            below_bytes: 0,
            below_packets: 0,
            tsq_throttled: false,
            timers: [Timer::default(); 3],
            last_rs: RateSample::default(),
            stats: SenderStats::default(),
        }
    }

    /// Is TCP itself enforcing pacing (`tcp_needs_internal_pacing`, or an `fq` qdisc)?
    pub fn pacing_enforced(&self) -> bool {
        self.tp.pacing_status == PacingStatus::Needed || self.cfg.fq_pacing
    }

    /// The application starts sending: initialise the CCA and send.
    pub fn start(&mut self, out: &mut Out) {
        self.tp.now = out.now;
        if !self.started {
            self.started = true;
            if self.cc.wants_pacing() {
                self.tp.pacing_status = PacingStatus::Needed;
            }
            self.tp.snd_cwnd_stamp = out.now;
            self.cc.init(&mut self.tp, &mut self.rng);
            if !self.cc.has_cong_control() {
                self.update_pacing_rate();
            }
        }
        self.app_open = true;
        self.write_xmit(out);
    }

    /// The application stops handing over data (flows already in the network drain).
    pub fn stop(&mut self) {
        self.app_open = false;
    }

    /// All data the application handed over has been acknowledged.
    pub fn is_done(&self) -> bool {
        !self.has_new_data() && self.segs.is_empty()
    }

    fn has_new_data(&self) -> bool {
        self.app_open && self.app_remaining != Some(0)
    }

    fn seg(&self, seq: u64) -> &Seg {
        &self.segs[(seq - self.tp.snd_una) as usize]
    }

    fn seg_mut(&mut self, seq: u64) -> &mut Seg {
        let i = (seq - self.tp.snd_una) as usize;
        &mut self.segs[i]
    }

    fn truesize(&self, payload: u64) -> u64 {
        payload + self.cfg.skb_overhead as u64
    }

    /// truesize of a software-GSO segment of `payload` bytes (see `SkbLayout`); a full one
    /// is computed once.
    fn segment_truesize(&self, payload: u32) -> u32 {
        if payload == self.full_segment.0 {
            return self.full_segment.1;
        }
        let sg = self.cfg.software_gso.unwrap_or(true);
        self.cfg.skb_layout.segment_truesize(payload, sg)
    }

    /// What software GSO charges for segments of these payloads.
    #[cold]
    #[inline(never)]
    fn segments_truesize(&self, payloads: &[u32]) -> u64 {
        payloads
            .iter()
            .map(|&p| self.segment_truesize(p) as u64)
            .sum()
    }

    // ----- send-time ordered list (RACK) -----

    fn ts_unlink(&mut self, seq: u64) {
        let (prev, next) = {
            let s = self.seg(seq);
            (s.ts_prev, s.ts_next)
        };
        if prev == NIL && next == NIL && self.ts_head != seq {
            return; // not linked
        }
        if prev != NIL {
            self.seg_mut(prev).ts_next = next;
        } else {
            self.ts_head = next;
        }
        if next != NIL {
            self.seg_mut(next).ts_prev = prev;
        } else {
            self.ts_tail = prev;
        }
        let s = self.seg_mut(seq);
        s.ts_prev = NIL;
        s.ts_next = NIL;
    }

    fn ts_push_tail(&mut self, seq: u64) {
        let tail = self.ts_tail;
        {
            let s = self.seg_mut(seq);
            s.ts_prev = tail;
            s.ts_next = NIL;
        }
        if tail != NIL {
            self.seg_mut(tail).ts_next = seq;
        } else {
            self.ts_head = seq;
        }
        self.ts_tail = seq;
    }

    // ----- timers -----

    fn arm(&mut self, which: SenderTimer, at: Nanos, out: &mut Out) {
        if let Some(t) = self.timers[which as usize].arm(at) {
            out.timers.push((t, which));
        }
    }

    /// A timer event fired.
    pub fn on_timer(&mut self, which: SenderTimer, out: &mut Out) {
        self.tp.now = out.now;
        let (expired, again) = self.timers[which as usize].fire(out.now);
        if let Some(t) = again {
            out.timers.push((t, which));
        }
        if !expired {
            return;
        }
        match which {
            SenderTimer::Pacing => self.write_xmit(out),
            SenderTimer::Rto => self.retransmit_timeout(out),
            SenderTimer::Reorder => self.reorder_timeout(out),
        }
    }

    /// `tcp_rearm_rto`: the RTO runs from the head segment's last transmission.
    fn rearm_rto(&mut self, out: &mut Out) {
        if self.tp.packets_out == 0 {
            self.timers[SenderTimer::Rto as usize].cancel();
            return;
        }
        let head_sent = self.segs.front().map_or(out.now, |s| s.sent);
        let at = (head_sent + self.rto).max(out.now + NSEC_PER_USEC);
        self.arm(SenderTimer::Rto, at, out);
    }

    // ----- output -----

    /// `tcp_update_pacing_rate` for CCAs that do not set the pacing rate themselves.
    fn update_pacing_rate(&mut self) {
        let tp = &mut self.tp;
        let ratio = if tp.snd_cwnd < tp.snd_ssthresh / 2 {
            self.cfg.pacing_ss_ratio
        } else {
            self.cfg.pacing_ca_ratio
        } as u128
            * self.cfg.tp as u128;
        // mss * ratio% * max(cwnd, packets_out) / srtt, in bytes per second; u64 unless that
        // would overflow (a window of tens of millions of packets).
        let num = (tp.mss_cache as u128)
            * ((1_000_000u128 / 100) << 3)
            * ratio
            * tp.snd_cwnd.max(tp.packets_out) as u128;
        let rate = match (u64::try_from(num), tp.srtt_us) {
            (Ok(n), 0) => n as u128,
            (Ok(n), srtt) => (n / srtt as u64) as u128,
            (Err(_), 0) => num,
            (Err(_), srtt) => num / srtt as u128,
        };
        tp.pacing_rate = rate.min(tp.max_pacing_rate as u128) as u64;
    }

    /// `tcp_tso_segs` / `tcp_tso_autosize`: segments per skb for the current pacing rate.
    fn tso_segs(&self) -> u32 {
        if !self.cfg.offloads {
            return 1;
        }
        let max_segs = (self.cfg.gso_max_size / self.tp.mss_cache).max(1);
        // A static TSQ limit of N packets (or bytes) below TCP also bounds the skb: the sweep of
        // the bottleneck curve holds exactly N packets in the radio.
        let max_segs = match self.cfg.tsq {
            TsqMode::StaticPackets(n) => max_segs.min(n.max(1)),
            TsqMode::StaticBytes(b) => {
                let room =
                    b.saturating_sub(self.cfg.skb_overhead as u64) / self.tp.mss_cache as u64;
                max_segs.min(room.clamp(1, u32::MAX as u64) as u32)
            }
            _ => max_segs,
        };
        if let Some(segs) = self.cc.tso_segs(&self.tp) {
            return segs.clamp(1, max_segs);
        }
        let min_tso = self
            .cc
            .min_tso_segs(&self.tp)
            .unwrap_or(self.cfg.min_tso_segs);
        let mut bytes = self.tp.pacing_rate >> self.tp.pacing_shift;
        if self.cfg.tso_rtt_log > 0 && self.tp.min_rtt_us != u32::MAX {
            let r = self.tp.min_rtt_us >> self.cfg.tso_rtt_log;
            if r < 32 {
                bytes += (self.cfg.gso_max_size >> r) as u64;
            }
        }
        let bytes = bytes.min(self.cfg.gso_max_size as u64);
        ((bytes / self.tp.mss_cache as u64) as u32)
            .max(min_tso)
            .min(max_segs)
    }

    /// The TSQ limit in force now, in bytes (rate and static-bytes modes) or packets (static
    /// packets), for an skb of `truesize`; `factor` 1 doubles it (retransmissions).
    fn tsq_limit(&self, truesize: u64, factor: u32) -> Option<u64> {
        match self.cfg.tsq {
            TsqMode::Off => None,
            TsqMode::Rate => {
                let mut limit = (2 * truesize).max(self.tp.pacing_rate >> self.tp.pacing_shift);
                if !self.pacing_enforced() || self.cfg.limit_caps_paced {
                    limit = limit.min(self.cfg.limit_output_bytes);
                }
                Some(limit << factor)
            }
            TsqMode::StaticPackets(n) => Some((n as u64) << factor),
            TsqMode::StaticBytes(b) => Some(b << factor),
        }
    }

    /// `tcp_small_queue_check`: would sending an skb of `truesize` (`segs` segments) put too much
    /// below TCP? Rate mode, as Linux: stop once more than the limit is already below (so one
    /// skb may cross it), where Linux's count is `sk_wmem_alloc`, which starts at 1 (`sk_alloc`:
    /// `refcount_set(&sk->sk_wmem_alloc, 1)`, the socket's own reference) and is compared with
    /// `refcount_read(&sk->sk_wmem_alloc) > limit`: bytes below TCP + 1 > limit, so skbs that
    /// fill the limit exactly (two of the truesize that sets it) stop the next one. Static
    /// modes: stop before the skb would cross it.
    fn tsq_check(&mut self, truesize: u64, segs: u32, factor: u32) -> Tsq {
        let Some(limit) = self.tsq_limit(truesize, factor) else {
            return Tsq::Unlimited;
        };
        let over = match self.cfg.tsq {
            TsqMode::Rate => self.below_bytes + 1 > limit,
            TsqMode::StaticPackets(_) => self.below_packets + segs as u64 > limit,
            _ => self.below_bytes + truesize > limit,
        };
        if !over {
            return Tsq::Send;
        }
        // Always allow a send when the retransmit queue is empty, or (6.6+) holds one skb.
        let single_skb = self
            .segs
            .front()
            .is_none_or(|f| f.skb + u64::from(self.cfg.tsq_single_skb) >= self.next_skb);
        if single_skb || self.below_packets == 0 {
            self.stats.tsq_exceptions += 1;
            return Tsq::Excepted;
        }
        if !self.tsq_throttled {
            self.stats.tsq_throttled += 1;
        }
        self.tsq_throttled = true;
        Tsq::Stop
    }

    /// After an skb went below TCP: how far the bytes (or packets) below TCP exceed what the TSQ
    /// mode allows (rate mode: limit + this skb; static modes: the limit), for the invariant
    /// checks of the tests and the run summary.
    fn note_tsq_excess(&mut self, truesize: u64, factor: u32) {
        let Some(limit) = self.tsq_limit(truesize, factor) else {
            return;
        };
        let excess = match self.cfg.tsq {
            TsqMode::Rate => self.below_bytes as i64 - (limit + truesize) as i64,
            TsqMode::StaticPackets(_) => self.below_packets as i64 - limit as i64,
            _ => self.below_bytes as i64 - limit as i64,
        };
        self.stats.tsq_max_excess = self.stats.tsq_max_excess.max(excess);
    }

    /// `tcp_pacing_check`: is the next departure in the future? Then arm the pacing timer.
    fn pacing_blocks(&mut self, out: &mut Out) -> bool {
        if !self.pacing_enforced() || self.wstamp <= out.now {
            return false;
        }
        let at = self.wstamp;
        self.arm(SenderTimer::Pacing, at, out);
        true
    }

    /// `tcp_cwnd_test`: how many segments the cwnd allows in the next skb.
    fn cwnd_quota(&self) -> u32 {
        let in_flight = self.tp.packets_in_flight();
        let cwnd = self.tp.snd_cwnd;
        if in_flight >= cwnd {
            return 0;
        }
        (cwnd >> 1).max(1).min(cwnd - in_flight)
    }

    /// Send what cwnd, pacing and TSQ allow: retransmissions first, then new data.
    pub fn write_xmit(&mut self, out: &mut Out) {
        self.tp.now = out.now;
        let mut sent_any = false;
        let mut cwnd_limited = false;
        // Retransmit queue (tcp_xmit_retransmit_queue).
        while let Some(seq) = self.next_lost() {
            if self.pacing_blocks(out) {
                return self.cwnd_validate(sent_any, cwnd_limited);
            }
            if self.tp.packets_in_flight() >= self.tp.snd_cwnd {
                cwnd_limited = true;
                break;
            }
            let payload = self.seg(seq).payload as u64;
            let tsq = self.tsq_check(self.truesize(payload), 1, 1);
            if tsq == Tsq::Stop {
                return self.cwnd_validate(sent_any, cwnd_limited);
            }
            self.transmit(seq, 1, true, tsq, out);
            sent_any = true;
        }
        // New data (tcp_write_xmit).
        while self.has_new_data() && !cwnd_limited {
            if self.pacing_blocks(out) {
                break;
            }
            let quota = self.cwnd_quota();
            if quota == 0 {
                cwnd_limited = true;
                break;
            }
            let mut segs = self.tso_segs().min(quota);
            // Under a static limit, an skb fills exactly the room left below TCP.
            let room = match self.cfg.tsq {
                TsqMode::StaticPackets(n) => (n as u64).saturating_sub(self.below_packets),
                TsqMode::StaticBytes(b) => {
                    (b.saturating_sub(self.below_bytes + self.cfg.skb_overhead as u64))
                        / self.tp.mss_cache as u64
                }
                _ => u64::MAX,
            };
            if room > 0 {
                segs = segs.min(room.min(u32::MAX as u64) as u32);
            }
            let bytes_avail = self.app_remaining.unwrap_or(u64::MAX);
            let segs_avail = bytes_avail.div_ceil(self.tp.mss_cache as u64);
            segs = segs.min(segs_avail.min(u32::MAX as u64) as u32);
            let payload = (segs as u64 * self.tp.mss_cache as u64).min(bytes_avail);
            let tsq = self.tsq_check(self.truesize(payload), segs, 0);
            if tsq == Tsq::Stop {
                break;
            }
            let seq = self.tp.snd_nxt;
            self.transmit(seq, segs, false, tsq, out);
            sent_any = true;
            if self.tp.packets_in_flight() >= self.tp.snd_cwnd {
                cwnd_limited = true;
            }
        }
        if !self.has_new_data() && self.started {
            let min_truesize = self.truesize(1);
            RateSampler::check_app_limited(&mut self.tp, 0, self.below_bytes, min_truesize);
        }
        self.cwnd_validate(sent_any, cwnd_limited);
    }

    /// `tcp_cwnd_validate`: track whether the flow is cwnd-limited (for CCAs' growth).
    fn cwnd_validate(&mut self, sent_any: bool, cwnd_limited: bool) {
        if !sent_any && !cwnd_limited {
            return;
        }
        let tp = &mut self.tp;
        if tp.snd_una >= self.cwnd_usage_seq
            || cwnd_limited
            || (!tp.is_cwnd_limited && tp.packets_out > tp.max_packets_out)
        {
            tp.is_cwnd_limited = cwnd_limited;
            tp.max_packets_out = tp.packets_out;
            self.cwnd_usage_seq = tp.snd_nxt;
        }
    }

    /// Lowest segment marked lost and not retransmitted since.
    fn next_lost(&mut self) -> Option<u64> {
        if self.tp.lost_out == 0 || self.rtx_hint == NIL {
            return None;
        }
        let mut seq = self.rtx_hint.max(self.tp.snd_una);
        while seq < self.tp.snd_nxt {
            let f = self.seg(seq).flags;
            if f & LOST != 0 && f & (SACKED | RETRANS) == 0 {
                self.rtx_hint = seq;
                return Some(seq);
            }
            seq += 1;
        }
        self.rtx_hint = NIL;
        None
    }

    /// Put `segs` segments starting at `seq` on the wire as one skb.
    fn transmit(&mut self, seq: u64, segs: u32, retrans: bool, tsq: Tsq, out: &mut Out) {
        let now = out.now;
        let now_us = now / 1000;
        if self.tp.packets_in_flight() == 0 {
            self.cc.cwnd_event(&mut self.tp, CaEvent::TxStart);
        }
        let skb = self.next_skb;
        self.next_skb += 1;
        let in_flight_after = self.tp.packets_in_flight() + segs;
        let mut skb_bytes = 0u64;
        let mut payloads = [0u32; 64];
        for (i, slot) in payloads.iter_mut().enumerate().take(segs as usize) {
            let s = seq + i as u64;
            let tx = self.rate.on_sent(&mut self.tp, now_us, in_flight_after);
            let payload = if retrans {
                let sg = self.seg_mut(s);
                sg.flags |= RETRANS | EVER_RETRANS;
                sg.sent = now;
                sg.tx = tx;
                sg.skb = skb;
                sg.payload
            } else {
                let payload = match self.app_remaining.as_mut() {
                    Some(rem) => {
                        let p = (*rem).min(self.tp.mss_cache as u64) as u32;
                        *rem -= p as u64;
                        p
                    }
                    None => self.tp.mss_cache,
                };
                self.segs.push_back(Seg {
                    payload,
                    sent: now,
                    tx,
                    skb,
                    flags: 0,
                    ts_prev: NIL,
                    ts_next: NIL,
                });
                self.tp.snd_nxt += 1;
                self.tp.packets_out += 1;
                payload
            };
            if retrans {
                self.ts_unlink(s);
                self.tp.retrans_out += 1;
                self.stats.retrans += 1;
                #[cfg(feature = "ack-log")]
                self.log_event(1, s, s + 1);
            }
            self.ts_push_tail(s);
            *slot = payload;
            skb_bytes += payload as u64;
        }
        // What the socket is charged: the skb's truesize, or after software GSO for a device
        // without TSO and scatter-gather, each segment's own (`tcp_gso_segment` adds the
        // difference to sk_wmem_alloc). An skb of one segment is not segmented. A device that
        // orphans what it takes releases the whole skb as it leaves the qdisc, before the
        // segments' own charges would count (`SenderConfig::orphan_whole_skb`).
        let whole = self.cfg.orphan_whole_skb;
        let segmented = !whole && self.cfg.software_gso.is_some() && segs > 1;
        let truesize = if segmented {
            self.segments_truesize(&payloads[..segs as usize])
        } else {
            self.truesize(skb_bytes)
        };
        for (i, &payload) in payloads.iter().enumerate().take(segs as usize) {
            let mut p = Packet::new(
                Kind::Data,
                self.id,
                self.route,
                payload + TCP_IP_HEADER,
                now,
            );
            p.seq = seq + i as u64;
            p.payload = payload;
            p.dscp = self.dscp;
            p.set_retrans(retrans);
            p.set_skb_more(i + 1 < segs as usize);
            p.set_ecn(if self.tp.ecn_ok {
                Ecn::Ect0
            } else {
                Ecn::NotEct
            });
            p.set_cwr(std::mem::take(&mut self.cwr_pending));
            // Each segment carries what its TX completion releases: its own truesize, or its
            // share of the skb's, or (orphaned whole) the first segment all of it.
            p.truesize = if whole {
                u32::from(i == 0) * truesize as u32
            } else if segmented {
                self.segment_truesize(payload)
            } else {
                (truesize / segs as u64) as u32
                    + u32::from(i == 0) * (truesize % segs as u64) as u32
            };
            out.pkts.send(p);
            self.stats.segs_sent += 1;
            self.stats.data_bytes_sent += payload as u64;
        }
        self.below_bytes += truesize;
        // Charged packets: each releases once (orphaned whole, an skb is one).
        self.below_packets += if whole { 1 } else { segs as u64 };
        if let Tsq::Send = tsq {
            self.note_tsq_excess(truesize, u32::from(retrans));
        }
        self.stats.max_below_bytes = self.stats.max_below_bytes.max(self.below_bytes);
        self.stats.skbs_sent += 1;
        if matches!(self.tp.ca_state, CaState::Recovery | CaState::Cwr) {
            self.prr_out += segs;
        }
        self.tp.lsndtime = now;
        // EDT: the next skb may leave once this one has been paced out.
        if self.pacing_enforced() {
            let rate = self.tp.pacing_rate;
            let prior = self.wstamp;
            self.wstamp = self.wstamp.max(now);
            if rate != 0 && rate != u64::MAX && self.stats.segs_sent >= 10 {
                let len_ns = (skb_bytes as u128 * NSEC_PER_SEC as u128 / rate as u128) as u64;
                if !self.cfg.edt_pacing {
                    // 4.13-4.19: the pacing hrtimer is armed one skb's time after now.
                    self.wstamp = now + len_ns;
                } else if self.cfg.pacing_credit {
                    let credit = self.wstamp - prior.min(self.wstamp);
                    self.wstamp += len_ns - (len_ns / 2).min(credit);
                } else {
                    self.wstamp += len_ns;
                }
            }
            self.tp.tcp_wstamp_ns = self.wstamp;
        }
        if !self.timers[SenderTimer::Rto as usize].is_armed() || retrans {
            self.rearm_rto(out);
        }
    }

    #[cfg(feature = "ack-log")]
    fn log_event(&self, kind: u8, seq: u64, end_seq: u64) {
        let rack = (self.rack_rtt_us, self.rack_sent / 1000, self.cfg.reordering);
        super::ack_log::record(self, kind, seq, end_seq, rack);
    }

    /// A packet of this socket left the host (TX completion): release its TSQ charge.
    pub fn on_tx_complete(&mut self, truesize: u32, out: &mut Out) {
        if self.release_tx(truesize) {
            self.tsq_handler(out);
        }
    }

    /// `tcp_wfree`: release one packet's TSQ charge. True when TSQ had throttled the socket,
    /// so that its handler must now run: once for a batch of completions freed together (a
    /// Block Ack), as the kernel's TSQ tasklet runs after the driver has freed the batch.
    pub fn release_tx(&mut self, truesize: u32) -> bool {
        self.below_bytes = self.below_bytes.saturating_sub(truesize as u64);
        self.below_packets = self.below_packets.saturating_sub(1);
        std::mem::take(&mut self.tsq_throttled)
    }

    /// `tcp_tsq_handler`: send what TSQ held back.
    pub fn tsq_handler(&mut self, out: &mut Out) {
        self.write_xmit(out);
    }

    // ----- ACK processing -----

    /// `tcp_ack`, in the kernel's steps, each a method of its own (inlined: called as
    /// functions, passing the ACK's state through memory, they cost the 1 Gbit/s wired
    /// benchmark about 7%): `sacktag`
    /// (`tcp_sacktag_write_queue`), `clean_rtx_queue` (`tcp_clean_rtx_queue`), `ack_update_rtt`
    /// (`tcp_ack_update_rtt`), the CCA's per-ACK hooks (`ca_ack_hooks`), `fastretrans_alert`
    /// (`tcp_fastretrans_alert`) and `cong_control` (`tcp_cong_control`); then the reorder and
    /// retransmission timers and the output loop.
    pub fn on_ack(&mut self, ack: &Packet, out: &mut Out) {
        self.tp.now = out.now;
        #[cfg(feature = "ack-log")]
        self.log_event(0, 0, 0);
        let info = ack.ack();
        if info.cum < self.tp.snd_una || info.cum > self.tp.snd_nxt {
            return; // old or invalid
        }
        let mut st = AckState::new(&self.tp);
        self.sacktag(&info, &mut st);
        self.clean_rtx_queue(&info, &mut st);
        if st.una_advanced {
            self.retransmits = 0; // tcp_ack: the ACK acknowledged something new
        }
        self.ack_update_rtt(&info, &mut st);
        self.ca_ack_hooks(&info, &mut st);
        let reo_timeout = self.fastretrans_alert(info.ece);
        self.cong_control(&st);
        if reo_timeout > 0 {
            let at = out.now + reo_timeout * NSEC_PER_USEC;
            self.arm(SenderTimer::Reorder, at, out);
        }
        if st.una_advanced {
            self.rearm_rto(out);
        }
        self.write_xmit(out);
    }

    /// `tcp_sacktag_write_queue`: mark SACKed the segments the ACK's blocks cover, skipping what
    /// the previous ACK's blocks already covered, and remember the blocks.
    #[inline(always)]
    fn sacktag(&mut self, info: &AckInfo, st: &mut AckState) {
        for b in info.sack.iter().take(info.nsack as usize) {
            let start = b.start.max(self.tp.snd_una);
            let end = b.end.min(self.tp.snd_nxt);
            let mut seq = start;
            while seq < end {
                if let Some(&(_, pe)) = self
                    .prev_sack
                    .iter()
                    .find(|(ps, pe)| *ps <= seq && seq < *pe)
                {
                    seq = pe;
                    continue;
                }
                let s = *self.seg(seq);
                if s.flags & SACKED == 0 {
                    self.sack_one(seq, &s, &mut st.acc);
                    if s.flags & EVER_RETRANS == 0 {
                        st.newest_sacked = Some(st.newest_sacked.map_or(s.sent, |t| t.max(s.sent)));
                        st.oldest_sacked = Some(st.oldest_sacked.map_or(s.sent, |t| t.min(s.sent)));
                    }
                }
                seq += 1;
            }
        }
        for (i, b) in info.sack.iter().enumerate() {
            self.prev_sack[i] = if i < info.nsack as usize {
                (b.start, b.end)
            } else {
                (0, 0)
            };
        }
    }

    /// `tcp_clean_rtx_queue`: remove the cumulatively ACKed segments from the scoreboard,
    /// delivering those not SACKed before.
    #[inline(always)]
    fn clean_rtx_queue(&mut self, info: &AckInfo, st: &mut AckState) {
        while self.tp.snd_una < info.cum {
            let seq = self.tp.snd_una;
            let s = *self.seg(seq);
            self.ts_unlink(seq);
            if s.flags & SACKED != 0 {
                self.tp.sacked_out -= 1;
            } else {
                self.rate
                    .on_delivered(&mut st.acc, &s.tx, seq + 1, s.flags & EVER_RETRANS != 0);
                self.rack_advance(&s, seq + 1);
                self.tp.delivered += 1;
                if info.ece {
                    self.tp.delivered_ce += 1;
                }
                if s.flags & LOST != 0 {
                    self.tp.lost_out -= 1;
                }
                if s.flags & RETRANS != 0 {
                    self.tp.retrans_out -= 1;
                }
                if s.flags & EVER_RETRANS != 0 {
                    st.retrans_acked = true;
                } else {
                    st.newest_acked = Some(st.newest_acked.map_or(s.sent, |t| t.max(s.sent)));
                    st.oldest_acked = Some(st.oldest_acked.map_or(s.sent, |t| t.min(s.sent)));
                }
            }
            self.tp.packets_out -= 1;
            st.acked_pkts += 1;
            st.acked_payload += s.payload as u64;
            self.segs.pop_front();
            self.tp.snd_una += 1;
        }
        st.una_advanced = self.tp.snd_una > st.prior_una;
        st.delivered = (self.tp.delivered - st.prior_delivered) as u32;
    }

    /// `tcp_ack_update_rtt`: the sequence RTT (RTO estimator) from the oldest newly ACKed
    /// segment, falling back to the oldest newly SACKed; the CA RTT (rate sample, min_rtt) from
    /// the newest. None from a retransmitted segment (Karn); the TSecr covers that case. A
    /// sample resets the RTO backoff.
    #[inline(always)]
    fn ack_update_rtt(&mut self, info: &AckInfo, st: &mut AckState) {
        let now = self.tp.now;
        let us = |t: Nanos| ((now - t) / 1000) as i64;
        let mut seq_rtt = if st.retrans_acked {
            None
        } else {
            st.oldest_acked.map(us)
        };
        let mut ca_rtt = if st.retrans_acked {
            None
        } else {
            st.newest_acked.map(us)
        };
        if seq_rtt.is_none() {
            seq_rtt = st.oldest_sacked.map(us);
        }
        if ca_rtt.is_none() {
            ca_rtt = st.newest_sacked.map(us);
        }
        if seq_rtt.is_none() && st.una_advanced && info.tsecr > 0 && info.tsecr <= now {
            seq_rtt = Some(us(info.tsecr));
            ca_rtt = seq_rtt;
        }
        st.acc.rs.rtt_us = ca_rtt.unwrap_or(-1);
        if let (Some(seq_rtt), Some(ca_rtt)) = (seq_rtt, ca_rtt) {
            self.update_min_rtt(ca_rtt.max(1) as u32, now);
            self.rtt_estimator(seq_rtt.max(1) as u32);
            self.tp.last_rtt_us = ca_rtt.max(1) as u32;
            self.backoff = 0;
        }
    }

    /// The CCA's per-ACK hooks: `pkts_acked` (end of `tcp_clean_rtx_queue`) with the ACK's RTT
    /// sample, and `in_ack_event` (`tcp_in_ack_event`); the ACK-delay and ECE marks of the rate
    /// sample.
    #[inline(always)]
    fn ca_ack_hooks(&mut self, info: &AckInfo, st: &mut AckState) {
        if st.acked_pkts > 0 {
            let sample = AckSample {
                pkts_acked: st.acked_pkts,
                rtt_us: st.acc.rs.rtt_us,
                in_flight: (self.tp.mss_cache as u64
                    * (self.tp.delivered - st.acc.rs.prior_delivered.min(self.tp.delivered)))
                    as u32,
            };
            self.cc.pkts_acked(&mut self.tp, &sample);
        }
        // ACK-delay heuristic (FLAG_ACK_MAYBE_DELAYED): a lone runt segment ACKed.
        st.acc.rs.is_ack_delayed =
            st.acked_pkts == 1 && st.acked_payload < self.tp.mss_cache as u64 && st.delivered == 1;
        st.acc.rs.is_ece = info.ece;

        let mut ack_flags = CA_ACK_SLOWPATH;
        if st.una_advanced {
            ack_flags |= CA_ACK_WIN_UPDATE;
        }
        if info.ece {
            ack_flags |= CA_ACK_ECE;
        }
        self.cc.in_ack_event(&mut self.tp, ack_flags);
    }

    /// `tcp_fastretrans_alert`: RACK's loss detection (`tcp_rack_mark_lost`), then the recovery
    /// state machine. Returns the reorder timeout still to wait (us; 0 if none).
    #[inline(always)]
    fn fastretrans_alert(&mut self, ece: bool) -> u64 {
        let mut reo_timeout = 0;
        if self.rack_valid {
            reo_timeout = self.rack_detect_loss(self.tp.now);
        }
        self.recovery_state(ece);
        reo_timeout
    }

    /// `tcp_cong_control`: the rate sample (`tcp_rate_gen`), then the CCA's `cong_control`, or
    /// PRR in CWR and Recovery, `cong_avoid` otherwise, and `tcp_update_pacing_rate`.
    #[inline(always)]
    fn cong_control(&mut self, st: &AckState) {
        let lost = (self.tp.lost - st.prior_lost) as u32;
        let rs = self.rate.gen(&mut self.tp, &st.acc, st.delivered, lost);
        self.last_rs = rs;
        if self.cc.has_cong_control() {
            self.cc.cong_control(&mut self.tp, &rs, &mut self.rng);
        } else {
            if matches!(self.tp.ca_state, CaState::Recovery | CaState::Cwr) {
                self.cwnd_reduction(st.delivered, lost, st.una_advanced);
            } else if st.una_advanced {
                self.cc.cong_avoid(&mut self.tp, st.delivered);
            }
            self.update_pacing_rate();
        }
    }

    fn sack_one(&mut self, seq: u64, s: &Seg, acc: &mut AckRate) {
        self.rate
            .on_delivered(acc, &s.tx, seq + 1, s.flags & EVER_RETRANS != 0);
        self.rack_advance(s, seq + 1);
        self.ts_unlink(seq);
        let tp = &mut self.tp;
        if s.flags & LOST != 0 {
            tp.lost_out -= 1;
        }
        if s.flags & RETRANS != 0 {
            tp.retrans_out -= 1;
        }
        tp.sacked_out += 1;
        tp.delivered += 1;
        let sg = self.seg_mut(seq);
        sg.flags = (sg.flags | SACKED) & !(LOST | RETRANS);
    }

    /// `tcp_rack_advance`: remember the most recently sent delivered segment.
    fn rack_advance(&mut self, s: &Seg, end_seq: u64) {
        let rtt_us = (self.tp.now - s.sent) / 1000;
        if s.flags & EVER_RETRANS != 0 && rtt_us < self.tp.min_rtt_us as u64 {
            return; // probably the original's ACK: ambiguous
        }
        self.rack_valid = true;
        self.rack_rtt_us = rtt_us;
        if !self.rack_valid_sent_after(s.sent, end_seq) {
            return;
        }
        self.rack_sent = s.sent;
        self.rack_end_seq = end_seq;
    }

    fn rack_valid_sent_after(&self, t: Nanos, end_seq: u64) -> bool {
        t > self.rack_sent || (t == self.rack_sent && end_seq > self.rack_end_seq)
    }

    /// `tcp_rack_reo_wnd`: zero once in recovery or past the duplicate-ACK threshold (no
    /// reordering is ever observed on our paths); else min_rtt/4 capped at srtt.
    fn rack_reo_wnd_us(&self) -> u64 {
        if self.tp.ca_state >= CaState::Recovery || self.tp.sacked_out >= self.cfg.reordering {
            return 0;
        }
        if self.tp.min_rtt_us == u32::MAX {
            return 0;
        }
        ((self.tp.min_rtt_us >> 2) as u64).min(self.tp.srtt() as u64)
    }

    /// `tcp_rack_detect_loss`: mark lost every segment sent before the most recently delivered
    /// one and outstanding for longer than rack.rtt + reo_wnd. Returns the reorder timeout (us)
    /// still to wait for the others (0 if none).
    fn rack_detect_loss(&mut self, now: Nanos) -> u64 {
        let reo_wnd = self.rack_reo_wnd_us();
        let mut timeout = 0u64;
        let mut seq = self.ts_head;
        while seq != NIL {
            let s = *self.seg(seq);
            let next = s.ts_next;
            if !(self.rack_sent > s.sent
                || (self.rack_sent == s.sent && self.rack_end_seq > seq + 1))
            {
                break;
            }
            let waited_us = (now - s.sent) / 1000;
            let deadline = self.rack_rtt_us + reo_wnd;
            if waited_us >= deadline {
                self.mark_lost(seq);
                self.ts_unlink(seq);
            } else {
                timeout = timeout.max(deadline - waited_us);
            }
            seq = next;
        }
        timeout
    }

    /// `tcp_mark_skb_lost`.
    fn mark_lost(&mut self, seq: u64) {
        let s = *self.seg(seq);
        if s.flags & SACKED != 0 {
            return;
        }
        if s.flags & LOST == 0 {
            self.tp.lost_out += 1;
            self.tp.lost += 1;
        } else if s.flags & RETRANS != 0 {
            self.tp.lost += 1; // a retransmission lost again
        }
        if s.flags & RETRANS != 0 {
            self.tp.retrans_out -= 1;
        }
        let sg = self.seg_mut(seq);
        sg.flags = (sg.flags | LOST) & !RETRANS;
        self.rtx_hint = if self.rtx_hint == NIL {
            seq
        } else {
            self.rtx_hint.min(seq)
        };
        self.cc.skb_marked_lost(&mut self.tp, &s.tx);
    }

    fn set_ca_state(&mut self, state: CaState) {
        if self.tp.ca_state != state {
            self.cc.set_state(&mut self.tp, state);
            self.tp.ca_state = state;
        }
    }

    /// `tcp_init_cwnd_reduction`.
    fn init_cwnd_reduction(&mut self) {
        self.tp.high_seq = self.tp.snd_nxt;
        self.tp.snd_cwnd_cnt = 0;
        self.tp.prior_cwnd = self.tp.snd_cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
        if self.tp.ecn_ok {
            self.cwr_pending = true;
        }
    }

    /// `tcp_end_cwnd_reduction`.
    fn end_cwnd_reduction(&mut self) {
        if !self.cc.has_cong_control() && self.tp.snd_ssthresh < super::sock::TCP_INFINITE_SSTHRESH
        {
            self.tp.snd_cwnd = self.tp.snd_ssthresh;
            self.tp.snd_cwnd_stamp = self.tp.now;
        }
        self.cc.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
    }

    /// The part of `tcp_fastretrans_alert` that moves between Open, Disorder, CWR, Recovery and
    /// Loss.
    fn recovery_state(&mut self, ece: bool) {
        let tp = &self.tp;
        match tp.ca_state {
            CaState::Recovery | CaState::Cwr if tp.snd_una >= tp.high_seq => {
                self.end_cwnd_reduction();
                self.set_ca_state(CaState::Open);
            }
            CaState::Loss if tp.snd_una >= tp.high_seq => {
                self.set_ca_state(CaState::Open);
            }
            _ => {}
        }
        if self.tp.lost_out > 0 && self.tp.ca_state < CaState::Recovery {
            // tcp_enter_recovery
            self.tp.prior_ssthresh = 0;
            if self.tp.ca_state != CaState::Cwr {
                if !ece {
                    self.tp.prior_ssthresh = self.tp.snd_ssthresh.max(self.tp.snd_cwnd * 3 / 4);
                }
                self.init_cwnd_reduction();
            }
            self.stats.recoveries += 1;
            self.set_ca_state(CaState::Recovery);
            return;
        }
        if ece && self.tp.ecn_ok && self.tp.ca_state < CaState::Cwr && !self.cc.has_cong_control() {
            // tcp_enter_cwr
            self.init_cwnd_reduction();
            self.set_ca_state(CaState::Cwr);
            return;
        }
        if matches!(self.tp.ca_state, CaState::Open | CaState::Disorder) {
            let next = if self.tp.sacked_out > 0 || self.tp.retrans_out > 0 {
                CaState::Disorder
            } else {
                CaState::Open
            };
            self.set_ca_state(next);
        }
    }

    /// `tcp_cwnd_reduction`: Proportional Rate Reduction (RFC 6937).
    fn cwnd_reduction(&mut self, newly_acked_sacked: u32, newly_lost: u32, una_advanced: bool) {
        if newly_acked_sacked == 0 {
            return;
        }
        let tp = &mut self.tp;
        self.prr_delivered += newly_acked_sacked;
        let in_flight = tp.packets_in_flight() as i64;
        let delta = tp.snd_ssthresh as i64 - in_flight;
        let mut sndcnt: i64 = if delta < 0 {
            let dividend = tp.snd_ssthresh as u64 * self.prr_delivered as u64
                + tp.prior_cwnd.max(1) as u64
                - 1;
            (dividend / tp.prior_cwnd.max(1) as u64) as i64 - self.prr_out as i64
        } else {
            let mut s =
                (self.prr_delivered as i64 - self.prr_out as i64).max(newly_acked_sacked as i64);
            if una_advanced && newly_lost == 0 {
                s += 1;
            }
            s.min(delta)
        };
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        tp.set_cwnd((in_flight + sndcnt) as u32);
    }

    /// `tcp_rtt_estimator` and `tcp_set_rto`.
    fn rtt_estimator(&mut self, mrtt_us: u32) {
        let rto_min_us = (self.cfg.rto_min / 1000) as u32;
        let tp = &mut self.tp;
        let mut m = mrtt_us as i64;
        let mut srtt = tp.srtt_us as i64;
        if srtt != 0 {
            m -= srtt >> 3;
            srtt += m;
            let mut mdev = tp.mdev_us as i64;
            if m < 0 {
                m = -m;
                m -= mdev >> 2;
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= mdev >> 2;
            }
            mdev += m;
            tp.mdev_us = mdev.max(0) as u32;
            if tp.mdev_us > self.mdev_max_us {
                self.mdev_max_us = tp.mdev_us;
                if self.mdev_max_us > self.rttvar_us {
                    self.rttvar_us = self.mdev_max_us;
                }
            }
            if tp.snd_una > self.rtt_seq {
                if self.mdev_max_us < self.rttvar_us {
                    self.rttvar_us -= (self.rttvar_us - self.mdev_max_us) >> 2;
                }
                self.rtt_seq = tp.snd_nxt;
                self.mdev_max_us = rto_min_us;
            }
        } else {
            srtt = m << 3;
            tp.mdev_us = (m << 1) as u32;
            self.rttvar_us = tp.mdev_us.max(rto_min_us);
            self.mdev_max_us = self.rttvar_us;
            self.rtt_seq = tp.snd_nxt;
        }
        tp.srtt_us = srtt.max(1) as u32;
        let rto_us = (tp.srtt_us >> 3) as u64 + self.rttvar_us as u64;
        self.rto = (rto_us * 1000).min(self.cfg.rto_max);
    }

    /// `tcp_update_rtt_min`: windowed min over `tcp_min_rtt_wlen` (300 s); a sample older than
    /// the window is replaced by the current one.
    fn update_min_rtt(&mut self, rtt_us: u32, now: Nanos) {
        const WLEN: Nanos = 300 * NSEC_PER_SEC;
        if rtt_us <= self.tp.min_rtt_us || now - self.min_rtt_stamp > WLEN {
            self.tp.min_rtt_us = rtt_us;
            self.min_rtt_stamp = now;
        }
    }

    /// Current retransmission timeout with backoff.
    pub fn rto(&self) -> Nanos {
        self.rto
    }

    /// The retransmission timer fired (`tcp_retransmit_timer` / `tcp_enter_loss`). ssthresh is
    /// reduced once per window: not again on a further expiry in Loss before an ACK advanced
    /// snd_una (`icsk_retransmits` != 0).
    fn retransmit_timeout(&mut self, out: &mut Out) {
        if self.tp.packets_out == 0 {
            return;
        }
        self.stats.rto_count += 1;
        let tp = &self.tp;
        if tp.ca_state <= CaState::Disorder
            || tp.snd_una >= tp.high_seq
            || (tp.ca_state == CaState::Loss && self.retransmits == 0)
        {
            self.tp.prior_ssthresh = self.tp.snd_ssthresh.max(self.tp.snd_cwnd * 3 / 4);
            self.tp.prior_cwnd = self.tp.snd_cwnd;
            self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
            self.cc.cwnd_event(&mut self.tp, CaEvent::Loss);
        }
        // tcp_timeout_mark_lost: everything not SACKed is lost; retransmissions too.
        let mut seq = self.tp.snd_una;
        while seq < self.tp.snd_nxt {
            let f = self.seg(seq).flags;
            if f & SACKED == 0 {
                self.mark_lost(seq);
                self.ts_unlink(seq);
            }
            seq += 1;
        }
        self.tp.snd_cwnd = self.tp.packets_in_flight() + 1;
        self.tp.snd_cwnd_cnt = 0;
        self.tp.snd_cwnd_stamp = out.now;
        self.set_ca_state(CaState::Loss);
        self.tp.high_seq = self.tp.snd_nxt;
        self.rack_valid = false;
        self.backoff += 1;
        self.rto = (self.rto * 2).min(self.cfg.rto_max);
        // Retransmit the head now, ignoring pacing (tcp_retransmit_skb from the timer).
        let head = self.tp.snd_una;
        self.transmit(head, 1, true, Tsq::Unlimited, out);
        self.retransmits += 1;
        let at = out.now + self.rto;
        self.arm(SenderTimer::Rto, at, out);
    }

    /// The RACK reordering timer fired (`tcp_rack_reo_timeout`).
    fn reorder_timeout(&mut self, out: &mut Out) {
        let prior_in_flight = self.tp.packets_in_flight();
        let timeout = self.rack_detect_loss(out.now);
        if self.tp.packets_in_flight() != prior_in_flight {
            if self.tp.ca_state != CaState::Recovery {
                self.recovery_state(false);
                if !self.cc.has_cong_control() {
                    self.cwnd_reduction(1, 0, false);
                }
            }
            self.write_xmit(out);
        }
        if timeout > 0 {
            let at = out.now + timeout * NSEC_PER_USEC;
            self.arm(SenderTimer::Reorder, at, out);
        }
    }

    /// Segments cumulatively acknowledged so far.
    pub fn segments_acked(&self) -> u64 {
        self.tp.snd_una
    }

    /// The delivery rate tcp_info would report (bits per second).
    pub fn delivery_rate_bps(&self) -> u64 {
        self.rate.delivery_rate_bytes(self.tp.mss_cache) * 8
    }
}

#[cfg(test)]
mod tests;
