//! The TCP socket state a congestion control reads and writes: the subset of Linux's
//! `struct tcp_sock` / `inet_connection_sock` that the `tcp_congestion_ops` callbacks touch,
//! with the same names and units (packets for windows, microseconds for RTTs, bytes per second
//! for pacing rates), so algorithms port from the kernel line by line.

use crate::units::Nanos;

/// Linux `tcp_ca_state` (include/net/tcp.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum CaState {
    #[default]
    Open,
    Disorder,
    Cwr,
    Recovery,
    Loss,
}

/// Linux `tcp_ca_event`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmit when no packets in flight.
    TxStart,
    /// Congestion window restart after idle.
    CwndRestart,
    /// End of congestion recovery.
    CompleteCwr,
    /// Loss timeout.
    Loss,
    /// ECN CE observed: non-CE to CE transition.
    EcnNoCe,
    /// ECN CE observed: CE to non-CE transition.
    EcnIsCe,
}

/// `in_ack_event` flags (Linux CA_ACK_*).
pub const CA_ACK_SLOWPATH: u32 = 1 << 0;
pub const CA_ACK_WIN_UPDATE: u32 = 1 << 1;
pub const CA_ACK_ECE: u32 = 1 << 2;

/// Linux `sk_pacing_status`: whether pacing is enforced by TCP itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PacingStatus {
    #[default]
    None,
    Needed,
}

/// Per-ACK sample passed to `pkts_acked` (Linux `struct ack_sample`).
#[derive(Debug, Clone, Copy, Default)]
pub struct AckSample {
    pub pkts_acked: u32,
    /// RTT of this ACK in microseconds, or negative when there is no valid sample.
    pub rtt_us: i64,
    pub in_flight: u32,
}

/// Socket state shared between the TCP engine and its congestion control.
#[derive(Debug, Clone)]
pub struct Sock {
    /// Current time (Linux `tp->tcp_mstamp`, here in ns; see [`Sock::now_us`]).
    pub now: Nanos,
    pub mss_cache: u32,
    pub snd_cwnd: u32,
    pub snd_ssthresh: u32,
    /// Linear increase counter (`snd_cwnd_cnt`).
    pub snd_cwnd_cnt: u32,
    pub snd_cwnd_clamp: u32,
    /// Time of the last cwnd change (ns).
    pub snd_cwnd_stamp: Nanos,
    pub prior_cwnd: u32,
    pub prior_ssthresh: u32,
    /// Smoothed RTT in microseconds <<3, as Linux stores it.
    pub srtt_us: u32,
    pub mdev_us: u32,
    /// Windowed minimum RTT (Linux `tcp_min_rtt`), microseconds; u32::MAX if none.
    pub min_rtt_us: u32,
    /// Latest RTT sample in microseconds (0 if none yet).
    pub last_rtt_us: u32,
    pub packets_out: u32,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    /// Cumulative segments delivered (ACKed or SACKed).
    pub delivered: u64,
    /// Cumulative delivered segments that were ECN CE-marked.
    pub delivered_ce: u64,
    /// Cumulative segments marked lost.
    pub lost: u64,
    /// Time `delivered` was last updated (ns).
    pub delivered_mstamp: Nanos,
    /// Non-zero while application-limited: the `delivered` value at which that ends.
    pub app_limited: u64,
    /// Whether the flow used its whole cwnd in the last round (Linux `is_cwnd_limited`).
    pub is_cwnd_limited: bool,
    /// Largest packets_out seen since the last cwnd-limited check (`max_packets_out`).
    pub max_packets_out: u32,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Highest sequence sent when recovery began.
    pub high_seq: u64,
    pub ca_state: CaState,
    /// Pacing rate in bytes per second (`sk->sk_pacing_rate`).
    pub pacing_rate: u64,
    pub max_pacing_rate: u64,
    pub pacing_status: PacingStatus,
    /// log2 of the pacing-rate divisor for TSQ and TSO sizing (`sk_pacing_shift`).
    pub pacing_shift: u8,
    /// Global pacing multiplier ("TP rate" 1p/2p/3p): scales tcp_pacing_ss/ca_ratio and the BBR
    /// family's own pacing rate. 1 = Linux default.
    pub pacing_tp: u32,
    /// Send-buffer size in bytes (`sk_sndbuf`), which BBR/Reno expand.
    pub sndbuf: u64,
    /// ECN negotiated on this connection.
    pub ecn_ok: bool,
    /// Time of the last data transmission (`lsndtime`, ns).
    pub lsndtime: Nanos,
    /// Earliest departure time of the next packet under pacing (Linux `tcp_wstamp_ns`, the
    /// EDT `next_tx_time`, ns); 0 or a past time when nothing waits. BBR estimates what is
    /// still in the network at that time.
    pub wstamp_ns: Nanos,
}

impl Sock {
    pub fn new(mss: u32, init_cwnd: u32) -> Self {
        Sock {
            now: 0,
            mss_cache: mss,
            snd_cwnd: init_cwnd,
            snd_ssthresh: TCP_INFINITE_SSTHRESH,
            snd_cwnd_cnt: 0,
            snd_cwnd_clamp: u32::MAX,
            snd_cwnd_stamp: 0,
            prior_cwnd: 0,
            prior_ssthresh: 0,
            srtt_us: 0,
            mdev_us: 0,
            min_rtt_us: u32::MAX,
            last_rtt_us: 0,
            packets_out: 0,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            delivered: 0,
            delivered_ce: 0,
            lost: 0,
            delivered_mstamp: 0,
            app_limited: 0,
            is_cwnd_limited: false,
            max_packets_out: 0,
            snd_una: 0,
            snd_nxt: 0,
            high_seq: 0,
            ca_state: CaState::Open,
            pacing_rate: 0,
            max_pacing_rate: u64::MAX,
            pacing_status: PacingStatus::None,
            pacing_shift: 10,
            pacing_tp: 1,
            sndbuf: 4 * 1024 * 1024,
            ecn_ok: false,
            lsndtime: 0,
            wstamp_ns: 0,
        }
    }

    /// `tcp_stamp_us`: now in microseconds.
    #[inline]
    pub fn now_us(&self) -> u64 {
        self.now / 1000
    }

    /// `tcp_jiffies32` at HZ=1000: now in milliseconds.
    #[inline]
    pub fn jiffies(&self) -> u32 {
        (self.now / 1_000_000) as u32
    }

    /// `tcp_packets_in_flight`: packets_out - left_out + retrans_out.
    #[inline]
    pub fn packets_in_flight(&self) -> u32 {
        (self.packets_out + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }

    /// `tcp_in_slow_start`.
    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.snd_cwnd < self.snd_ssthresh
    }

    /// `tcp_is_cwnd_limited`: in slow start, cwnd is "limited" if we use more than half of it.
    #[inline]
    pub fn is_cwnd_limited(&self) -> bool {
        if self.in_slow_start() {
            return self.snd_cwnd < 2 * self.max_packets_out;
        }
        self.is_cwnd_limited
    }

    /// `tcp_snd_cwnd_set`: clamp to at least 1.
    #[inline]
    pub fn set_cwnd(&mut self, cwnd: u32) {
        self.snd_cwnd = cwnd.max(1);
    }

    /// Smoothed RTT in microseconds (unscaled), or 0 before the first sample.
    #[inline]
    pub fn srtt(&self) -> u32 {
        self.srtt_us >> 3
    }

    /// `tcp_slow_start`: grow cwnd by `acked` up to ssthresh; return the leftover acked count.
    pub fn slow_start(&mut self, acked: u32) -> u32 {
        let cwnd = (self.snd_cwnd + acked).min(self.snd_ssthresh);
        let left = acked - (cwnd - self.snd_cwnd).min(acked);
        self.snd_cwnd = cwnd.min(self.snd_cwnd_clamp);
        left
    }

    /// `tcp_cong_avoid_ai`: increase cwnd by 1 for every `w` packets acked.
    pub fn cong_avoid_ai(&mut self, w: u32, acked: u32) {
        let w = w.max(1);
        if self.snd_cwnd_cnt >= w {
            self.snd_cwnd_cnt = 0;
            self.snd_cwnd += 1;
        }
        self.snd_cwnd_cnt += acked;
        if self.snd_cwnd_cnt >= w {
            let delta = self.snd_cwnd_cnt / w;
            self.snd_cwnd_cnt -= delta * w;
            self.snd_cwnd += delta;
        }
        self.snd_cwnd = self.snd_cwnd.min(self.snd_cwnd_clamp);
    }
}

/// Linux `TCP_INFINITE_SSTHRESH`.
pub const TCP_INFINITE_SSTHRESH: u32 = 0x7fff_ffff;
/// Linux `TCP_INIT_CWND` (RFC 6928).
pub const TCP_INIT_CWND: u32 = 10;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_stops_at_ssthresh_and_returns_leftover() {
        let mut s = Sock::new(1448, 10);
        s.snd_ssthresh = 14;
        assert_eq!(s.slow_start(6), 2);
        assert_eq!(s.snd_cwnd, 14);
    }

    #[test]
    fn additive_increase_one_per_window() {
        let mut s = Sock::new(1448, 10);
        for _ in 0..10 {
            s.cong_avoid_ai(10, 1);
        }
        assert_eq!(s.snd_cwnd, 11);
        assert_eq!(s.snd_cwnd_cnt, 0);
        // A stretch ACK for 25 packets with w = 11 adds 2 and keeps 3.
        s.cong_avoid_ai(11, 25);
        assert_eq!((s.snd_cwnd, s.snd_cwnd_cnt), (13, 3));
    }
}
