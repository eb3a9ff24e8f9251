//! A single-bottleneck path that drives a congestion control through its trait, for tests.
//!
//! The sender transmits one MSS-sized packet whenever cwnd allows and the pacing clock
//! (`tcp_wstamp_ns`, advanced by `mss / pacing_rate` per packet) has come; the bottleneck
//! serialises 1500-byte frames FIFO at a fixed rate with an unbounded buffer; every packet is
//! ACKed one base RTT after it leaves the bottleneck. Each ACK carries a rate sample built as
//! Linux `tcp_rate.c` builds it (delivered since the packet was sent, over the longer of the
//! send and ACK intervals, discarded when shorter than min_rtt). No loss, no delayed ACKs.

use std::collections::VecDeque;

use crate::cc::CongestionControl;
use crate::sim::Rng;
use crate::tcp::rate_sample::RateSample;
use crate::tcp::sock::{CaEvent, Sock, TCP_INIT_CWND};
use crate::units::{tx_time, Nanos, NSEC_PER_SEC, NSEC_PER_USEC};

const MSS: u32 = 1448;
const FRAME_BYTES: u64 = 1500;

/// What the sender remembers of a packet until its ACK.
struct Sent {
    ack_at: Nanos,
    sent: Nanos,
    delivered: u64,
    delivered_mstamp: Nanos,
    first_tx: Nanos,
    app_limited: bool,
}

pub struct Path {
    pub tp: Sock,
    pub rng: Rng,
    rate_bps: u64,
    base_rtt: Nanos,
    link_free: Nanos,
    first_tx: Nanos,
    sent: VecDeque<Sent>,
}

impl Path {
    pub fn new(rate_bps: u64, base_rtt: Nanos, seed: u64) -> Self {
        Path {
            tp: Sock::new(MSS, TCP_INIT_CWND),
            rng: Rng::new(seed, 1),
            rate_bps,
            base_rtt,
            link_free: 0,
            first_tx: 0,
            sent: VecDeque::new(),
        }
    }

    pub fn start(&mut self, cc: &mut dyn CongestionControl) {
        cc.init(&mut self.tp, &mut self.rng);
    }

    /// Run until `until`, calling `on_ack` after every ACK has been processed.
    pub fn run(
        &mut self,
        cc: &mut dyn CongestionControl,
        until: Nanos,
        mut on_ack: impl FnMut(&Sock, &dyn CongestionControl),
    ) {
        loop {
            let send_at = (self.tp.packets_out < self.tp.snd_cwnd)
                .then(|| self.tp.now.max(self.tp.tcp_wstamp_ns));
            let ack_at = self.sent.front().map(|s| s.ack_at);
            let send_first = match (send_at, ack_at) {
                (Some(s), Some(a)) => s < a,
                (Some(_), None) => true,
                (None, _) => false,
            };
            match (send_at, ack_at) {
                (Some(s), _) if send_first => {
                    if s > until {
                        return;
                    }
                    self.send(cc, s);
                }
                (_, Some(a)) => {
                    if a > until {
                        return;
                    }
                    self.ack(cc, a);
                    on_ack(&self.tp, &*cc);
                }
                _ => return,
            }
        }
    }

    fn send(&mut self, cc: &mut dyn CongestionControl, now: Nanos) {
        let tp = &mut self.tp;
        tp.now = now;
        if tp.packets_out == 0 {
            cc.cwnd_event(tp, CaEvent::TxStart);
            self.first_tx = now;
            tp.delivered_mstamp = now;
        }
        let finish = self.link_free.max(now) + tx_time(FRAME_BYTES, self.rate_bps);
        self.link_free = finish;
        self.sent.push_back(Sent {
            ack_at: finish + self.base_rtt,
            sent: now,
            delivered: tp.delivered,
            delivered_mstamp: tp.delivered_mstamp,
            first_tx: self.first_tx,
            app_limited: tp.app_limited != 0,
        });
        tp.packets_out += 1;
        tp.snd_nxt += 1;
        if let Some(gap) = (u64::from(MSS) * NSEC_PER_SEC).checked_div(tp.pacing_rate) {
            tp.tcp_wstamp_ns = tp.tcp_wstamp_ns.max(now) + gap;
        }
    }

    fn ack(&mut self, cc: &mut dyn CongestionControl, now: Nanos) {
        let Some(p) = self.sent.pop_front() else {
            return;
        };
        let tp = &mut self.tp;
        tp.now = now;
        let prior_in_flight = tp.packets_in_flight();
        tp.packets_out -= 1;
        tp.snd_una += 1;
        tp.delivered += 1;
        tp.delivered_mstamp = now;
        if tp.app_limited != 0 && tp.delivered > tp.app_limited {
            tp.app_limited = 0;
        }
        let rtt_us = ((now - p.sent) / NSEC_PER_USEC) as u32;
        tp.srtt_us = if tp.srtt_us == 0 {
            rtt_us << 3
        } else {
            tp.srtt_us - (tp.srtt_us >> 3) + rtt_us
        };
        tp.min_rtt_us = tp.min_rtt_us.min(rtt_us);
        tp.last_rtt_us = rtt_us;
        let snd_us = (p.sent - p.first_tx) / NSEC_PER_USEC;
        let ack_us = (now - p.delivered_mstamp) / NSEC_PER_USEC;
        self.first_tx = p.sent;
        let interval = snd_us.max(ack_us);
        let rs = RateSample {
            prior_mstamp_us: p.sent / NSEC_PER_USEC,
            prior_delivered: p.delivered,
            delivered: (tp.delivered - p.delivered) as i64,
            interval_us: if interval < u64::from(tp.min_rtt_us) {
                -1
            } else {
                interval as i64
            },
            snd_interval_us: snd_us as u32,
            rcv_interval_us: ack_us as u32,
            rtt_us: i64::from(rtt_us),
            acked_sacked: 1,
            prior_in_flight,
            is_app_limited: p.app_limited,
            ..RateSample::default()
        };
        cc.cong_control(tp, &rs, &mut self.rng);
    }
}
