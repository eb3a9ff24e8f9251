/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BBR_STATE_H
#define BBR_STATE_H
struct lt_key {
	__u8 cls, prev, next, rtt_cnt;
};
struct gain_key {
	__u32 cls, gain;
};
struct gain_val {
	__u64 ns, acks, phases_left;
};
/* One ACK of a bbr socket, the state tcp_probe sees before tcp_ack runs (so the state after the
 * previous ACK and the sends it allowed), or one retransmitted skb (kind 1). */
struct ack_ev {
	__u64 sk, ts_ns, wstamp_ns, delivered_mstamp_us, cycle_mstamp_us, rack_mstamp_us, skb_mstamp_ns;
	__u32 kind, snd_una, snd_nxt, packets_out, sacked_out, lost_out, retrans_out, lost;
	__u32 delivered, cwnd, srtt_us, min_rtt_us, rack_rtt_us, reordering, reord_seen, seq, end_seq;
	__u32 bw, pacing_gain, cycle_idx, mode, ca_state, lt_use_bw, rack_reo_wnd_steps;
};
#endif
