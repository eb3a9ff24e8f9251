//! A per-ACK log of the senders' state, for comparing the model with the kernel's BBR ACK by
//! ACK (`scripts/bbr_state`): compiled only with the `ack-log` feature, so that the simulator
//! built without it does no work for it. The record is the state `tcp_probe` shows the kernel
//! probe: taken as an ACK arrives, before it is processed (so after the previous ACK and the
//! sends it allowed); a retransmitted segment is recorded after it was sent.
//! `examples/run_scenario.rs --ack-log` runs a scenario and writes the log as CSV with the
//! probe's columns.

use std::cell::RefCell;

use super::sender::TcpSender;
use crate::units::Nanos;

/// One record: an ACK (`kind` 0), a retransmission (`kind` 1, `seq`/`end_seq` in segments) or
/// a data segment dropped in the network (`kind` 2, `seq`; the sender's state left at zero).
#[derive(Debug, Clone, Default)]
pub struct AckEv {
    pub kind: u8,
    pub flow: u32,
    pub ts_ns: Nanos,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub packets_out: u32,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    pub lost: u64,
    pub delivered: u64,
    pub delivered_mstamp_us: u64,
    pub wstamp_ns: Nanos,
    pub cwnd: u32,
    pub srtt_us: u32,
    pub ca_state: u8,
    pub rack_rtt_us: u64,
    pub rack_mstamp_us: u64,
    pub reordering: u32,
    pub seq: u64,
    pub end_seq: u64,
    /// The congestion control's model values (`CongestionControl::model`).
    pub cc: Vec<(&'static str, f64)>,
}

thread_local! {
    static LOG: RefCell<Option<Vec<AckEv>>> = const { RefCell::new(None) };
}

/// Start recording on this thread (a previous log is dropped).
pub fn start() {
    LOG.with(|l| *l.borrow_mut() = Some(Vec::new()));
}

/// Stop recording and return what was recorded.
pub fn take() -> Vec<AckEv> {
    LOG.with(|l| l.borrow_mut().take()).unwrap_or_default()
}

/// Record that data segment `seq` of `flow` was dropped at `now` (called from the world).
pub(crate) fn record_drop(flow: u32, seq: u64, now: Nanos) {
    LOG.with(|l| {
        if let Some(log) = l.borrow_mut().as_mut() {
            log.push(AckEv {
                kind: 2,
                flow,
                ts_ns: now,
                seq,
                end_seq: seq + 1,
                ..AckEv::default()
            });
        }
    });
}

/// Record one event of `s` (called from the sender).
pub(crate) fn record(s: &TcpSender, kind: u8, seq: u64, end_seq: u64, rack: (u64, u64, u32)) {
    LOG.with(|l| {
        if let Some(log) = l.borrow_mut().as_mut() {
            let tp = &s.tp;
            log.push(AckEv {
                kind,
                flow: s.id,
                ts_ns: tp.now,
                snd_una: tp.snd_una,
                snd_nxt: tp.snd_nxt,
                packets_out: tp.packets_out,
                sacked_out: tp.sacked_out,
                lost_out: tp.lost_out,
                retrans_out: tp.retrans_out,
                lost: tp.lost,
                delivered: tp.delivered,
                delivered_mstamp_us: tp.delivered_mstamp / 1000,
                wstamp_ns: tp.tcp_wstamp_ns,
                cwnd: tp.snd_cwnd,
                srtt_us: tp.srtt_us >> 3,
                ca_state: tp.ca_state as u8,
                rack_rtt_us: rack.0,
                rack_mstamp_us: rack.1,
                reordering: rack.2,
                seq,
                end_seq,
                cc: s.cc.model(),
            });
        }
    });
}
