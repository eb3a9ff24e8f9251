//! Delivery-rate sampling, as Linux `net/ipv4/tcp_rate.c`.
//!
//! When a packet is sent, the sender records the connection's delivery state in it
//! ([`TxState`]): how much had been delivered (`delivered`), when that count last changed
//! (`delivered_mstamp`), and the start of the current send window (`first_tx_mstamp`). When an
//! ACK (S)ACKs packets, the sample is taken from the most recently *sent* of them: packets
//! delivered since it was sent, over an interval that is the longer of the send interval
//! (its send time minus its window start) and the ACK interval (now minus its
//! `delivered_mstamp`). Taking the longer interval guards against ACK compression. Samples whose
//! interval is shorter than min_rtt are discarded (their rate would be an overestimate), and a
//! sample inherits the app-limited mark of its packet so that bandwidth filters may ignore
//! samples that do not reflect the path.
//!
//! Deviation: Linux's clock never reads zero, and it uses `prior_mstamp == 0` to mean "no
//! sample"; a simulation starts at time 0, so an explicit flag carries that meaning here.

use super::rate_sample::{RateSample, TxState};
use super::sock::Sock;

/// Sender-side state of the rate sampler (the `tcp_sock` fields tcp_rate.c keeps).
#[derive(Debug, Clone, Copy, Default)]
pub struct RateSampler {
    /// Send time of the most recently delivered packet: start of the current send window (us).
    pub first_tx_us: u64,
    /// The last sample that was not app-limited (or beat one that was): what `tcp_info` reports
    /// as delivery rate.
    pub rate_delivered: u64,
    pub rate_interval_us: u64,
    pub rate_app_limited: bool,
}

/// Per-ACK accumulator: filled while the ACK's newly delivered packets are processed, then
/// turned into a [`RateSample`] by [`RateSampler::gen`].
#[derive(Debug, Clone, Copy, Default)]
pub struct AckRate {
    pub rs: RateSample,
    has_prior: bool,
    /// Send time (us) and end sequence of the packet the sample is currently taken from.
    last_tx_us: u64,
    last_end_seq: u64,
}

impl RateSampler {
    /// `tcp_rate_skb_sent`: the state to record in a packet sent now. `in_flight_after` is
    /// packets in flight including this skb (BBRv2/v3 `tx.in_flight`).
    pub fn on_sent(&mut self, tp: &mut Sock, now_us: u64, in_flight_after: u32) -> TxState {
        if tp.packets_out == 0 {
            // Start of a send window after idle: measure from now, not from the idle period.
            self.first_tx_us = now_us;
            tp.delivered_mstamp = tp.now;
        }
        TxState {
            sent_us: now_us,
            first_tx_us: self.first_tx_us,
            delivered_mstamp_us: tp.delivered_mstamp / 1000,
            delivered: tp.delivered,
            delivered_ce: tp.delivered_ce,
            lost: tp.lost,
            in_flight: in_flight_after,
            is_app_limited: tp.app_limited != 0,
        }
    }

    /// `tcp_rate_skb_delivered`: a packet sent at `tx.sent_us` ending at `end_seq` was just
    /// delivered (cumulatively ACKed or SACKed for the first time).
    pub fn on_delivered(
        &mut self,
        acc: &mut AckRate,
        tx: &TxState,
        end_seq: u64,
        is_retrans: bool,
    ) {
        let sent_after = tx.sent_us > acc.last_tx_us
            || (tx.sent_us == acc.last_tx_us && end_seq > acc.last_end_seq);
        if !acc.has_prior || acc.rs.prior_delivered == 0 || sent_after {
            acc.has_prior = true;
            acc.rs.prior_delivered = tx.delivered;
            acc.rs.prior_delivered_ce = tx.delivered_ce;
            acc.rs.prior_mstamp_us = tx.delivered_mstamp_us;
            acc.rs.prior_lost = tx.lost;
            acc.rs.tx_in_flight = tx.in_flight;
            acc.rs.is_app_limited = tx.is_app_limited;
            acc.rs.is_retrans = is_retrans;
            acc.last_tx_us = tx.sent_us;
            acc.last_end_seq = end_seq;
            // The send window of later samples starts at this packet's send time.
            self.first_tx_us = tx.sent_us;
            acc.rs.interval_us = tx.sent_us as i64 - tx.first_tx_us as i64;
        }
    }

    /// `tcp_rate_gen`: finish the sample of one ACK that delivered `delivered` packets and
    /// newly marked `lost` packets lost. `min_rtt_us` is the connection's windowed min RTT.
    pub fn gen(&mut self, tp: &mut Sock, acc: &AckRate, delivered: u32, lost: u32) -> RateSample {
        let mut rs = acc.rs;
        if tp.app_limited != 0 && tp.delivered > tp.app_limited {
            tp.app_limited = 0; // the app-limited phase has been ACKed past
        }
        if delivered > 0 {
            tp.delivered_mstamp = tp.now;
        }
        rs.acked_sacked = delivered;
        rs.losses = lost;
        rs.lost = tp.lost.saturating_sub(rs.prior_lost);
        if !acc.has_prior {
            rs.delivered = -1;
            rs.interval_us = -1;
            return rs;
        }
        rs.delivered = (tp.delivered - rs.prior_delivered) as i64;
        rs.delivered_ce = (tp.delivered_ce - rs.prior_delivered_ce) as i64;
        let snd_us = rs.interval_us;
        let ack_us = tp.now_us() as i64 - rs.prior_mstamp_us as i64;
        rs.interval_us = snd_us.max(ack_us);
        rs.snd_interval_us = snd_us.max(0) as u32;
        rs.rcv_interval_us = ack_us.max(0) as u32;
        // Shorter than min_rtt: an ACK-compression artefact, not a rate.
        if rs.interval_us < tp.min_rtt_us as i64 {
            rs.interval_us = -1;
            return rs;
        }
        // Keep the sample for tcp_info unless it is app-limited and slower than the last one.
        if !rs.is_app_limited
            || (rs.delivered as u64) * self.rate_interval_us
                >= self.rate_delivered * rs.interval_us as u64
        {
            self.rate_delivered = rs.delivered as u64;
            self.rate_interval_us = rs.interval_us as u64;
            self.rate_app_limited = rs.is_app_limited;
        }
        rs
    }

    /// `tcp_rate_check_app_limited`: the application has nothing more to send, the socket has
    /// no data queued below TCP, the window is open and nothing is lost: mark the flight as
    /// app-limited until it is delivered.
    pub fn check_app_limited(
        tp: &mut Sock,
        unsent_bytes: u64,
        wmem_below: u64,
        skb_min_truesize: u64,
    ) {
        if unsent_bytes < tp.mss_cache as u64
            && wmem_below < skb_min_truesize
            && tp.packets_in_flight() < tp.snd_cwnd
            && tp.lost_out == 0
        {
            let v = tp.delivered + tp.packets_in_flight() as u64;
            tp.app_limited = if v > 0 { v } else { 1 };
        }
    }

    /// Delivery rate in bytes per second of the last kept sample (tcp_info `delivery_rate`).
    pub fn delivery_rate_bytes(&self, mss: u32) -> u64 {
        (self.rate_delivered * mss as u64 * 1_000_000)
            .checked_div(self.rate_interval_us)
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000;

    /// Send `n` packets back to back at `t_us` (one skb each), as the sender would.
    fn send(r: &mut RateSampler, tp: &mut Sock, t_us: u64, n: u32) -> Vec<TxState> {
        tp.now = t_us * US;
        (0..n)
            .map(|_| {
                let tx = r.on_sent(tp, t_us, tp.packets_out + 1);
                tp.packets_out += 1;
                tx
            })
            .collect()
    }

    /// Deliver packets (seq, tx) at `t_us` as one ACK and return the sample.
    fn ack(r: &mut RateSampler, tp: &mut Sock, t_us: u64, pkts: &[(u64, TxState)]) -> RateSample {
        tp.now = t_us * US;
        let mut acc = AckRate::default();
        for (seq, tx) in pkts {
            r.on_delivered(&mut acc, tx, seq + 1, false);
            tp.delivered += 1;
            tp.packets_out -= 1;
        }
        r.gen(tp, &acc, pkts.len() as u32, 0)
    }

    #[test]
    fn in_order_acks_give_send_and_ack_intervals() {
        let mut tp = Sock::new(1448, 10);
        tp.min_rtt_us = 20_000;
        let mut r = RateSampler::default();
        // Two packets at t=1000 us, two at t=2000 us.
        let a = send(&mut r, &mut tp, 1000, 2);
        let b = send(&mut r, &mut tp, 2000, 2);
        // ACK of seq 0,1 at 21000: prior from packet 1 (sent 1000, window start 1000,
        // delivered 0 at mstamp 1000). send interval 0, ack interval 21000-1000 = 20000.
        let rs = ack(&mut r, &mut tp, 21_000, &[(0, a[0]), (1, a[1])]);
        assert_eq!((rs.delivered, rs.interval_us), (2, 20_000));
        assert_eq!((rs.snd_interval_us, rs.rcv_interval_us), (0, 20_000));
        // ACK of 2,3 at 22000: packets sent at 2000 with window start 1000 and delivered 0 at
        // 1000: send interval 1000, ack interval 21000 -> 4 delivered over 21000 us.
        let rs = ack(&mut r, &mut tp, 22_000, &[(2, b[0]), (3, b[1])]);
        assert_eq!((rs.delivered, rs.interval_us), (4, 21_000));
        assert_eq!((rs.snd_interval_us, rs.rcv_interval_us), (1_000, 21_000));
        assert_eq!(r.delivery_rate_bytes(1448), 4 * 1448 * 1_000_000 / 21_000);
    }

    #[test]
    fn sample_comes_from_most_recently_sent_packet_even_if_sacked_first() {
        let mut tp = Sock::new(1448, 10);
        tp.min_rtt_us = 10_000;
        let mut r = RateSampler::default();
        let first = send(&mut r, &mut tp, 0, 1);
        ack(&mut r, &mut tp, 10_000, &[(0, first[0])]); // delivered = 1 at t = 10000
        let a = send(&mut r, &mut tp, 10_000, 1); // seq 1: window restarts (nothing in flight)
        let b = send(&mut r, &mut tp, 10_500, 1); // seq 2
                                                  // One ACK covers seq 2 (SACK, processed first) and seq 1 (cumulative): the sample is
                                                  // taken from seq 2, the later-sent one. seq 2 recorded delivered 1 at mstamp 10000 and
                                                  // window start 10000: send interval 500, ACK interval 21000 - 10000 = 11000.
        let rs = ack(&mut r, &mut tp, 21_000, &[(2, b[0]), (1, a[0])]);
        assert_eq!(rs.prior_mstamp_us, 10_000);
        assert_eq!(
            (rs.delivered, rs.interval_us, rs.snd_interval_us),
            (2, 11_000, 500)
        );
        assert_eq!(r.first_tx_us, 10_500);
    }

    #[test]
    fn first_flight_quirk_prior_delivered_zero() {
        // Linux takes any packet while rs->prior_delivered is 0, so in the very first flight the
        // last one processed wins even if it was sent earlier.
        let mut tp = Sock::new(1448, 10);
        tp.min_rtt_us = 10_000;
        let mut r = RateSampler::default();
        let a = send(&mut r, &mut tp, 0, 1);
        let b = send(&mut r, &mut tp, 500, 1);
        let rs = ack(&mut r, &mut tp, 10_500, &[(1, b[0]), (0, a[0])]);
        assert_eq!(
            (rs.delivered, rs.interval_us, rs.snd_interval_us),
            (2, 10_500, 0)
        );
        assert_eq!(r.first_tx_us, 0);
    }

    #[test]
    fn no_sample_before_any_min_rtt() {
        // Like Linux, min_rtt starts at ~0U, so nothing passes the min_rtt check until the RTT
        // estimator has run (tcp_ack updates it before tcp_rate_gen).
        let mut tp = Sock::new(1448, 10);
        let mut r = RateSampler::default();
        let a = send(&mut r, &mut tp, 0, 1);
        assert_eq!(ack(&mut r, &mut tp, 50_000, &[(0, a[0])]).interval_us, -1);
    }

    #[test]
    fn samples_shorter_than_min_rtt_are_discarded() {
        let mut tp = Sock::new(1448, 10);
        let mut r = RateSampler::default();
        tp.min_rtt_us = 20_000;
        let a = send(&mut r, &mut tp, 0, 1);
        let rs = ack(&mut r, &mut tp, 15_000, &[(0, a[0])]);
        assert_eq!(rs.delivered, 1);
        assert_eq!(rs.interval_us, -1, "15 ms < min_rtt 20 ms");
        assert_eq!(r.rate_interval_us, 0, "tcp_info rate untouched");
    }

    #[test]
    fn ack_without_delivery_has_no_sample() {
        let mut tp = Sock::new(1448, 10);
        let mut r = RateSampler::default();
        let rs = r.gen(&mut tp, &AckRate::default(), 0, 1);
        assert_eq!((rs.delivered, rs.interval_us, rs.losses), (-1, -1, 1));
    }

    #[test]
    fn app_limited_marking_and_release() {
        let mut tp = Sock::new(1448, 10);
        let mut r = RateSampler::default();
        let a = send(&mut r, &mut tp, 0, 2);
        // Nothing more to send, nothing below TCP, cwnd 10 > 2 in flight, no loss:
        // app_limited = delivered (0) + in flight (2) = 2.
        RateSampler::check_app_limited(&mut tp, 0, 0, 1);
        assert_eq!(tp.app_limited, 2);
        let c = send(&mut r, &mut tp, 1_000, 1);
        assert!(c[0].is_app_limited && !a[0].is_app_limited);
        tp.min_rtt_us = 1;
        let rs = ack(&mut r, &mut tp, 20_000, &[(0, a[0]), (1, a[1])]);
        assert!(!rs.is_app_limited);
        assert_eq!(tp.app_limited, 2, "delivered 2 is not yet past 2");
        assert_eq!((r.rate_delivered, r.rate_interval_us), (2, 20_000));
        // Delivering the app-limited packet: sample is app-limited; delivered 3 > 2 ends it.
        // It was sent at 1000 with delivered 0 (mstamp 0, window start 0): 3 packets over
        // max(1000, 21000) us. 3/21000 beats the kept 2/20000 (3*20000 >= 2*21000), so even
        // app-limited it replaces the tcp_info rate.
        let rs = ack(&mut r, &mut tp, 21_000, &[(2, c[0])]);
        assert!(rs.is_app_limited);
        assert_eq!(tp.app_limited, 0);
        assert_eq!(
            (r.rate_delivered, r.rate_interval_us, r.rate_app_limited),
            (3, 21_000, true)
        );
        // A slower app-limited sample does not replace it: 1 packet over 30000 us.
        let d = send(&mut r, &mut tp, 25_000, 1);
        tp.app_limited = tp.delivered + 1;
        let mut acc = AckRate::default();
        let mut slow = d[0];
        slow.is_app_limited = true;
        slow.delivered = tp.delivered;
        slow.delivered_mstamp_us = 25_000;
        tp.now = 55_000 * US;
        r.on_delivered(&mut acc, &slow, 4, false);
        tp.delivered += 1;
        let rs = r.gen(&mut tp, &acc, 1, 0);
        assert_eq!(
            (rs.delivered, rs.interval_us, rs.is_app_limited),
            (1, 30_000, true)
        );
        assert_eq!((r.rate_delivered, r.rate_interval_us), (3, 21_000));
        // Not marked when data remains to send.
        tp.app_limited = 0;
        RateSampler::check_app_limited(&mut tp, 100_000, 0, 1);
        assert_eq!(tp.app_limited, 0);
    }
}
