// SPDX-License-Identifier: GPL-2.0-only
/*
 * wbbr: Linux BBR version 1 as a BPF congestion control, registered as "wbbr" so that it can
 * run next to the kernel's built-in "bbr" and be compared with it on the same path.
 *
 * The algorithm is tcp_bbr.c's, step for step (wbbr_core.h, with no hook changed). Its one
 * knob is extra_acked: 1 adds the ACK-aggregation allowance as Linux has done since 5.1; 0
 * models the kernels 4.9 to 5.0 (the "bbr without extra_acked" of the BBRp study).
 *
 * Source: Linux net/ipv4/tcp_bbr.c (v6.x).
 */
#define WBBR_NAME wbbr
#define WBBR_KNOBS(X) WBBR_COMMON_KNOBS(X)

#include "wbbr.h"
#include "wbbr_core.h"
