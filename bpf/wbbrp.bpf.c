// SPDX-License-Identifier: GPL-2.0-only
/*
 * wbbrp: BBRp, BBRv1 with a stronger probing phase for Wi-Fi, registered as "wbbrp".
 *
 * On Wi-Fi the sender's own stack (TSQ, pacing) keeps too little data queued below TCP for the
 * access point or station to build large A-MPDU aggregates, so BBR's 5/4 probing phase rarely
 * finds more bandwidth. BBRp raises the pacing gain of the first PROBE_BW phase to
 * bbrp_pace / 4 and changes nothing else: the phase still lasts at least min_rtt and until
 * inflight reaches that gain times the BDP (or a loss), the draining phase stays at 3/4, and
 * the two extra segments of the quantization budget still go to phase 0.
 *
 * Knobs: bbrp_pace (default 6, a gain of 1.5, the paper's value; 5 is Linux BBR exactly; at
 * most 63, a gain of 15.75, the largest the state holds) and extra_acked.
 *
 * Source: C. A. Grazia et al., "BBRp: Improving TCP BBR Performance over WLAN", IEEE Access 8,
 * 2020; engine: Linux net/ipv4/tcp_bbr.c.
 */
#define WBBR_NAME wbbrp
#define WBBR_KNOBS(X) WBBR_COMMON_KNOBS(X) X(bbrp_pace, 6, 1, 63, 1)

#include "wbbr.h"

/* bbrp_pace quarters: pace / 4 in 1/256 units. */
#define WBBR_UP_GAIN(sk, bbr, rs) (KNOB(bbrp_pace) * (BBR_UNIT / 4))

#include "wbbr_core.h"
