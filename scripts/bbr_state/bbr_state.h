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
#endif
