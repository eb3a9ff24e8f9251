//! The rate sample handed to `cong_control` (Linux `struct rate_sample`, include/net/tcp.h),
//! extended with what BBRv2/v3 read (`tx_in_flight`, `lost`, `delivered_ce`).

/// One delivery-rate sample, built per ACK by `tcp::rate`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RateSample {
    /// Send time (us) of the packet the sample was taken from (`prior_mstamp`).
    pub prior_mstamp_us: u64,
    /// `tp->delivered` when that packet was sent.
    pub prior_delivered: u64,
    /// `tp->delivered_ce` when that packet was sent.
    pub prior_delivered_ce: u64,
    /// Packets delivered over the interval; -1 when there is no valid sample.
    pub delivered: i64,
    /// CE-marked packets delivered over the interval.
    pub delivered_ce: i64,
    /// Interval length in microseconds: max(send interval, ACK interval); -1 when invalid.
    pub interval_us: i64,
    pub snd_interval_us: u32,
    pub rcv_interval_us: u32,
    /// RTT of the most recently sent packet this ACK covers (us), -1 if none.
    pub rtt_us: i64,
    /// Packets newly marked lost on this ACK.
    pub losses: u32,
    /// Packets newly ACKed or SACKed by this ACK.
    pub acked_sacked: u32,
    /// Packets in flight before this ACK.
    pub prior_in_flight: u32,
    /// Packets in flight when the sampled packet was sent (BBRv2/v3 `tx_in_flight`).
    pub tx_in_flight: u32,
    /// `tp->lost` when the sampled packet was sent, and lost since then (BBRv2/v3 `rs->lost`).
    pub prior_lost: u64,
    pub lost: u64,
    /// The sample was taken while application-limited.
    pub is_app_limited: bool,
    /// The sampled packet was a retransmission.
    pub is_retrans: bool,
    /// The ACK was delayed by the receiver.
    pub is_ack_delayed: bool,
    /// The ACK carried ECE.
    pub is_ece: bool,
}

/// What the sender remembers about each packet when it is (re)transmitted, as Linux keeps in
/// `TCP_SKB_CB(skb)->tx` (tcp_rate.c `tcp_rate_skb_sent`) plus BBRv2/v3's `tx.in_flight` and
/// `tx.lost`. Handed to `skb_marked_lost` when the packet is marked lost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxState {
    /// Send time of this packet (us).
    pub sent_us: u64,
    /// Start of the send window this packet belongs to (`first_tx_mstamp`, us).
    pub first_tx_us: u64,
    /// `tp->delivered_mstamp` when sent (us).
    pub delivered_mstamp_us: u64,
    /// `tp->delivered` when sent.
    pub delivered: u64,
    /// `tp->delivered_ce` when sent.
    pub delivered_ce: u64,
    /// `tp->lost` when sent.
    pub lost: u64,
    /// Packets in flight right after this one was sent.
    pub in_flight: u32,
    /// Sent while application-limited.
    pub is_app_limited: bool,
}
