//! Wi-Fi drivers: how frames leave mac80211's TXQs for the hardware, who builds the A-MPDUs,
//! and when the host learns that a frame was sent (which is when TCP Small Queues releases it).
//!
//! Two families, after the Linux drivers of the studies' chipsets:
//!
//! - **Host aggregation** (ath9k, and the `generic` model): the driver keeps a few aggregates in
//!   the hardware queue of each access category and builds each one from what the TXQ holds at
//!   that instant. ath9k forms an aggregate whenever fewer than `ATH_AGGR_MIN_QDEPTH` (2) are in
//!   the hardware queue (`ath_tx_sched_aggr`, drivers/net/wireless/ath/ath9k/xmit.c), and it is
//!   asked to as each frame reaches mac80211: `ieee80211_queue_skb` -> `drv_wake_tx_queue` ->
//!   `ath9k_wake_tx_queue` -> `ath_txq_schedule`, synchronously, per frame (ath9k has no TSO, so
//!   the frames are the segments of a software-segmented skb, handed over one by one). A paced
//!   trickle therefore leaves as PPDUs of one or two MPDUs whenever the hardware queue has room.
//!   A hardware-queue slot is freed when the driver processes the aggregate's TX status
//!   (`ath_tx_processq` -> `ath_tx_complete_aggr`, in the TX tasklet after the TX interrupt),
//!   not at the Block Ack itself, and the driver then builds the next aggregate
//!   (`ath_txq_schedule` at the end of `ath_tx_processq`).
//! - **Firmware aggregation** (ath10k, iwlwifi, ath9k_htc's target): the host pushes frames into
//!   a deep descriptor ring as long as the ring has room (ath10k `ath10k_mac_tx_push_txq` while
//!   `ath10k_htt_tx_inc_pending` allows; iwlwifi's TFD queues; ath9k_htc over USB to the
//!   target), and the firmware builds the A-MPDU when it wins the medium, from everything of the
//!   destination it holds. Ring entries are freed, and TCP Small Queues released, only when the
//!   host processes the TX completion, which arrives late and in batches (ath10k HTT
//!   `TX_COMPL_IND` messages; iwlwifi's compressed Block Ack notification on the RX path,
//!   behind the device's interrupt coalescing; ath9k_htc's WMI TX-status events).
//!
//! Interrupt moderation delays both directions. A status or a received frame is *posted* by the
//! hardware `delay` after the event that causes it (the Block Ack's end, the PPDU's end); the
//! interrupt that hands posted items to the host fires `last` after the latest posting, or
//! `first` after the first pending one, whichever is earlier (ath9k's RX/TX interrupt
//! mitigation timers `AR_RIMT`/`AR_TIMT`, "last" and "first"); a zero timer is not used, and
//! with both zero each posting interrupts at once.
//!
//! Every default below names its source; a value nobody publishes is marked "assumption" with
//! its reason, and every value can be changed in a scenario (`path.radio.driver`).

use serde::{Deserialize, Serialize};

use super::phy::{preset, ChipsetSpec};
use crate::parse::Dur;
use crate::units::{Nanos, NSEC_PER_USEC};

const US: Nanos = NSEC_PER_USEC;

/// Longest interrupt delay or moderation timer accepted: 100 ms.
const MAX_IRQ: Nanos = 100_000 * US;
/// Largest firmware ring accepted, frames.
const MAX_RING: u32 = 1 << 16;
/// Most aggregates a hardware queue may be given.
pub const MAX_HW_QUEUE_DEPTH: u32 = 1024;

/// A driver family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DriverKind {
    /// The original wificc model: a 2-aggregate hardware queue filled after each burst of
    /// frames, TX status at the Block Ack's end, no interrupt moderation. Kept for comparison.
    Generic,
    /// ath9k (AR92xx/AR93xx PCIe): host aggregation, per-frame wake-ups.
    Ath9k,
    /// ath9k_htc (AR9271 USB): aggregation on the target, completions as WMI events.
    Ath9kHtc,
    /// ath10k (QCA988x, QCA9377): firmware aggregation behind the HTT descriptor ring.
    Ath10k,
    /// iwlwifi (Intel AX201): firmware aggregation behind the TFD queues, Block Ack
    /// notifications behind the interrupt coalescing timer.
    Iwlwifi,
    /// A firmware-aggregating access point whose driver publishes nothing of its completion
    /// path (the Wi-Fi 6 study's ASUS RT-AX92U runs Broadcom's closed driver): no interrupt
    /// moderation, a 1024-frame ring (assumptions).
    Firmware,
}

impl DriverKind {
    pub fn name(self) -> &'static str {
        match self {
            DriverKind::Generic => "generic",
            DriverKind::Ath9k => "ath9k",
            DriverKind::Ath9kHtc => "ath9k_htc",
            DriverKind::Ath10k => "ath10k",
            DriverKind::Iwlwifi => "iwlwifi",
            DriverKind::Firmware => "firmware",
        }
    }
}

/// Who builds the A-MPDUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Aggregation {
    /// The host driver, from the TXQ, into a hardware queue of `hw_queue_depth` aggregates.
    Host,
    /// The firmware, at transmit time, from a ring of `ring` frames the host filled.
    Firmware,
}

/// When the host driver is asked to build aggregates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Wake {
    /// As each frame reaches mac80211 (ath9k: `drv_wake_tx_queue` runs `ath_txq_schedule`).
    PerFrame,
    /// Once a burst of frames arriving at one instant (the segments of one skb) is queued.
    PerBurst,
}

/// Interrupt moderation: postings `delay` after their event; the interrupt fires `last` after
/// the latest posting or `first` after the first pending one (0: that timer is off).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Irq {
    #[serde(default)]
    pub delay: Dur,
    #[serde(default)]
    pub last: Dur,
    #[serde(default)]
    pub first: Dur,
}

impl Irq {
    const fn us(delay: u64, last: u64, first: u64) -> Irq {
        Irq {
            delay: Dur(delay * US),
            last: Dur(last * US),
            first: Dur(first * US),
        }
    }

    /// Items are handed over as soon as they happen.
    pub fn is_immediate(&self) -> bool {
        self.delay.0 == 0 && self.last.0 == 0 && self.first.0 == 0
    }

    /// When the interrupt fires for postings at the times `posted` (non-decreasing, the first
    /// one pending), and how many of them it takes.
    pub fn fire(&self, posted: impl Iterator<Item = Nanos>) -> Option<(Nanos, usize)> {
        let (last, first) = (self.last.0, self.first.0);
        let mut n = 0;
        let (mut p0, mut latest) = (0, 0);
        for p in posted {
            if n == 0 {
                (p0, latest) = (p, p);
            } else {
                let fire = deadline(p0, latest, last, first);
                if p > fire {
                    return Some((fire, n));
                }
                latest = p;
            }
            n += 1;
        }
        (n > 0).then(|| (deadline(p0, latest, last, first), n))
    }

    fn validate(&self, field: &str) -> Result<(), String> {
        for (name, d) in [
            ("delay", self.delay),
            ("last", self.last),
            ("first", self.first),
        ] {
            if d.0 > MAX_IRQ {
                return Err(format!(
                    "driver.{field}.{name} = \"{}ns\": expected at most 100 ms",
                    d.0
                ));
            }
        }
        Ok(())
    }
}

fn deadline(p0: Nanos, latest: Nanos, last: Nanos, first: Nanos) -> Nanos {
    match (last, first) {
        (0, 0) => latest,
        (0, f) => p0 + f,
        (l, 0) => latest + l,
        (l, f) => (latest + l).min(p0 + f),
    }
}

/// A resolved driver: every number the BSS uses.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Driver {
    pub kind: DriverKind,
    pub aggregation: Aggregation,
    pub wake: Wake,
    /// Host aggregation: aggregates per hardware queue, counting those whose TX status the
    /// host has not yet processed.
    pub hw_queue_depth: u32,
    /// Firmware aggregation: frames per node handed to the firmware and not yet completed.
    pub ring: u32,
    /// Most MPDUs in one A-MPDU (besides the Block Ack window); 0: no such limit.
    pub max_subframes: u32,
    /// TX status (completion) interrupts.
    pub tx_status: Irq,
    /// RX interrupts: when received frames reach the host's stack.
    pub rx: Irq,
    /// The NIC segments TCP skbs itself (TSO). Without it the kernel segments them in
    /// software and TCP Small Queues charges each segment's own truesize.
    pub tso: bool,
    /// The NIC takes scatter-gather buffers (NETIF_F_SG); without it software segmentation
    /// copies each segment into a buffer of its own, which costs more truesize.
    pub sg: bool,
    /// The driver hands received frames to mac80211 from a NAPI poll (`ieee80211_rx_napi`
    /// with its `napi`), so GRO merges a batch's in-order TCP segments and the host's TCP
    /// ACKs once per merged skb (see `tcp::receiver`).
    pub gro: bool,
}

impl Driver {
    /// The defaults of a driver family.
    pub fn defaults(kind: DriverKind) -> Driver {
        match kind {
            DriverKind::Generic => Driver {
                kind,
                aggregation: Aggregation::Host,
                wake: Wake::PerBurst,
                hw_queue_depth: 2,
                ring: 0,
                max_subframes: 0,
                tx_status: Irq::default(),
                rx: Irq::default(),
                tso: true,
                sg: true,
                // The original model: every segment reaches TCP alone.
                gro: false,
            },
            DriverKind::Ath9k => Driver {
                kind,
                aggregation: Aggregation::Host,
                wake: Wake::PerFrame,
                // ATH_AGGR_MIN_QDEPTH (ath9k.h).
                hw_queue_depth: 2,
                ring: 0,
                // ath_tx_form_aggr stops at half the Block Ack window: h_baw = baw_size / 2,
                // baw_size = IEEE80211_MIN_AMPDU_BUF << ampdu_factor = 64 (xmit.c, main.c).
                max_subframes: 32,
                // ath9k never enables TX interrupt mitigation (`tx_intr_mitigation` is never
                // set, so the TX-OK interrupt is unmoderated): the TX tasklet follows the Block
                // Ack at once.
                tx_status: Irq::default(),
                // RX interrupt mitigation, on by default (`rx_intr_mitigation = true`), with
                // AR9300-family timers (the studies' AR938x/AR9382): rimt_last 500 us,
                // rimt_first 2000 us (hw.c ath9k_hw_init_config; AR9280 and older: 250/700).
                rx: Irq::us(0, 500, 2000),
                // ath9k sets no `hw->netdev_features`: no TSO, no scatter-gather (init.c).
                tso: false,
                sg: false,
                // The RX tasklet hands each frame to `ieee80211_rx` (no NAPI: mac80211 passes
                // the frames on with `netif_receive_skb_list`, recv.c ath_rx_tasklet,
                // mac80211 rx.c ieee80211_rx_napi with napi NULL): no GRO.
                gro: false,
            },
            DriverKind::Ath9kHtc => Driver {
                kind,
                aggregation: Aggregation::Firmware,
                wake: Wake::PerFrame,
                hw_queue_depth: 1,
                // The host stops mac80211's queues when ATH9K_HTC_TX_THRESHOLD frames are
                // pending on the target: MAX_TX_BUF_NUM (256) - ATH9K_HTC_TX_RESERVE (10) =
                // 246 (htc_drv_txrx.c, ath9k_htc_check_stop_queues).
                ring: 246,
                // The target firmware aggregates (the host sets ampdu_subframes = 0xff and
                // ampdu_limit = 0xffff, htc_drv_main.c); it keeps ath9k's half-window rule
                // (open-ath9k-htc firmware), an assumption since its source is not in Linux.
                max_subframes: 32,
                // Completions come back as WMI TX-status events over USB, up to
                // HTC_MAX_TX_STATUS (12) per event (ath9k_htc_txstatus). Their latency is not
                // published: assumption 250 us, two USB 2.0 high-speed microframes of 125 us
                // (the event is queued in one and crosses in the next). Changeable.
                tx_status: Irq::us(250, 0, 0),
                // The AR9271's RX mitigation timers (pre-AR9300: rimt_last 250 us, rimt_first
                // 700 us, ath9k_hw_init_config), plus one microframe for the bulk-in transfer
                // (assumption, as above).
                rx: Irq::us(125, 250, 700),
                // No netdev features either (htc_drv_init.c).
                tso: false,
                sg: false,
                // `ieee80211_rx` from the RX tasklet (htc_drv_txrx.c ath9k_rx_tasklet): no GRO.
                gro: false,
            },
            DriverKind::Ath10k => Driver {
                kind,
                aggregation: Aggregation::Firmware,
                wake: Wake::PerFrame,
                hw_queue_depth: 1,
                // TARGET_10X_NUM_MSDU_DESC = 1024 + 400 descriptors: max_num_pending_tx; the
                // host locks its queues when they are all pending (hw.h,
                // ath10k_htt_tx_inc_pending). Push mode, the default (HTT_TX_MODE_SWITCH_PUSH).
                ring: 1424,
                max_subframes: 0,
                // HTT_T2H_MSG_TYPE_TX_COMPL_IND carries a batch of MSDU ids, drained by the
                // NAPI poll (ath10k_htt_rx_tx_compl_ind, ath10k_htt_txrx_compl_task). Its
                // latency after the Block Ack is not published: assumption 250 us (the
                // firmware's processing of the Block Ack plus one copy-engine interrupt and
                // NAPI poll), changeable.
                tx_status: Irq::us(250, 0, 0),
                // Received frames come through the same copy-engine interrupt and NAPI poll;
                // no moderation timer is set by the driver.
                rx: Irq::default(),
                // `hw->netdev_features = NETIF_F_HW_CSUM` only (mac.c): no TSO, no SG.
                tso: false,
                sg: false,
                // Received MSDUs go to `ieee80211_rx_napi(ar->hw, NULL, skb, &ar->napi)` from the
                // NAPI poll (htt_rx.c ath10k_htt_rx_h_deliver / ath10k_process_rx): GRO.
                gro: true,
            },
            DriverKind::Firmware => Driver {
                kind,
                aggregation: Aggregation::Firmware,
                wake: Wake::PerFrame,
                hw_queue_depth: 1,
                // Assumption: a ring as deep as the HE Block Ack window (1024), the least that
                // lets a firmware fill one HE A-MPDU.
                ring: 1024,
                max_subframes: 0,
                // Assumption: no moderation; nothing published.
                tx_status: Irq::default(),
                rx: Irq::default(),
                tso: true,
                sg: true,
                // An access point forwards what it receives; its GRO is not modelled.
                gro: false,
            },
            DriverKind::Iwlwifi => Driver {
                kind,
                aggregation: Aggregation::Firmware,
                wake: Wake::PerFrame,
                hw_queue_depth: 1,
                // A TFD queue of 256 entries per RA/TID (IWL_DEFAULT_QUEUE_SIZE, fw/api/txq.h),
                // stopped while fewer than n/8 = 32 entries are free (iwl_queue_init
                // high_mark): 224 frames. HE stations get 1024 entries (896) from 6.1: the
                // scenario builder sets the ring from the kernel profile.
                ring: 224,
                max_subframes: 0,
                // Aggregated frames are freed by the compressed Block Ack notification
                // (iwl_mvm_rx_ba_notif -> iwl_mvm_tx_reclaim), which reaches the host through
                // the RX queue behind the interrupt coalescing timer: CSR_INT_COALESCING =
                // IWL_HOST_INT_TIMEOUT_DEF, 0x40 x 32 us = 2048 us (iwl-csr.h; written in
                // iwl_pcie_rx_mq_hw_init and iwl_pcie_gen2_rx_init). Whether the hardware
                // applies it under MSI-X is not documented: see docs/fidelity.md.
                tx_status: Irq::us(0, 0, 2048),
                rx: Irq::us(0, 0, 2048),
                // The 22000 family (AX201) has TSO (IWL_TX_CSUM_NETIF_FLAGS), but the Wi-Fi 6
                // study switched every offload off (its section VI): its testbed segments in
                // software. Scatter-gather stays (NETIF_F_SG with max_skb_frags).
                tso: false,
                sg: true,
                // `ieee80211_rx_napi(mvm->hw, sta, skb, napi)` from the RX queue's NAPI poll
                // (mvm/rxmq.c iwl_mvm_pass_packet_to_mac80211): GRO.
                gro: true,
            },
        }
    }

    /// The access point a BSS of stations running `kind` has by default: the same driver, but
    /// for a client-only chip (iwlwifi) an unknown firmware-aggregating AP.
    pub fn ap_for(kind: DriverKind) -> DriverKind {
        match kind {
            DriverKind::Iwlwifi => DriverKind::Firmware,
            k => k,
        }
    }

    /// The driver a chipset preset runs; a custom PHY runs the generic model.
    pub fn for_chipset(chipset: &ChipsetSpec) -> DriverKind {
        match chipset {
            ChipsetSpec::Preset(name) => preset(name).map_or(DriverKind::Generic, |p| p.driver),
            ChipsetSpec::Custom(_) => DriverKind::Generic,
        }
    }
}

/// A driver as a scenario writes it: a family's name, or a table with `kind` (default: the
/// chipset's driver) and any value to change.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriverSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<DriverKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregation: Option<Aggregation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wake: Option<Wake>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ring: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_subframes: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx_status: Option<Irq>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx: Option<Irq>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tso: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sg: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gro: Option<bool>,
}

impl DriverSpec {
    /// The driver for `chipset`, with this spec's overrides and the radio's hardware-queue
    /// depth, checked. Errors name the field, the value and what is expected.
    pub fn resolve(
        &self,
        chipset: &ChipsetSpec,
        hw_queue_depth: Option<u32>,
    ) -> Result<Driver, String> {
        let kind = self.kind.unwrap_or_else(|| Driver::for_chipset(chipset));
        let mut d = Driver::defaults(kind);
        if let Some(a) = self.aggregation {
            d.aggregation = a;
        }
        if let Some(w) = self.wake {
            d.wake = w;
        }
        if let Some(r) = self.ring {
            if r == 0 || r > MAX_RING {
                return Err(format!(
                    "driver.ring = {r}: expected 1 to {MAX_RING} frames"
                ));
            }
            d.ring = r;
        }
        if d.aggregation == Aggregation::Firmware && d.ring == 0 {
            // A host-aggregation family switched to firmware aggregation: a ring as deep as
            // the Block Ack window (assumption: the least a firmware needs to fill one A-MPDU).
            d.ring = 1024;
        }
        if let Some(m) = self.max_subframes {
            if m > super::txq::MAX_BA_WINDOW {
                return Err(format!(
                    "driver.max_subframes = {m}: expected 0 (no limit) to {} MPDUs",
                    super::txq::MAX_BA_WINDOW
                ));
            }
            d.max_subframes = m;
        }
        if let Some(irq) = self.tx_status {
            irq.validate("tx_status")?;
            d.tx_status = irq;
        }
        if let Some(irq) = self.rx {
            irq.validate("rx")?;
            d.rx = irq;
        }
        if let Some(t) = self.tso {
            d.tso = t;
        }
        if let Some(sg) = self.sg {
            d.sg = sg;
        }
        if let Some(gro) = self.gro {
            d.gro = gro;
        }
        if let Some(depth) = hw_queue_depth {
            if depth == 0 || depth > MAX_HW_QUEUE_DEPTH {
                return Err(format!(
                    "hw_queue_depth = {depth}: expected 1 to {MAX_HW_QUEUE_DEPTH} aggregates"
                ));
            }
            d.hw_queue_depth = depth;
        }
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interrupt_fires_at_the_earlier_of_its_two_timers() {
        let irq = Irq::us(0, 500, 2000);
        // One posting: 500 us later.
        assert_eq!(irq.fire([100 * US].into_iter()), Some((600 * US, 1)));
        // Postings 400 us apart keep pushing the last timer until the first one (2000 us
        // after the first posting) fires: postings at 0, 400, ..., 2000 are taken.
        let posted: Vec<Nanos> = (0..10).map(|i| i * 400 * US).collect();
        assert_eq!(irq.fire(posted.iter().copied()), Some((2000 * US, 6)));
        // A gap longer than `last` ends the batch.
        assert_eq!(
            irq.fire([0, 100 * US, 700 * US].into_iter()),
            Some((600 * US, 2))
        );
        // No moderation: each posting alone, at once.
        assert_eq!(Irq::default().fire([5, 5, 9].into_iter()), Some((5, 2)));
        // First timer only (iwlwifi's coalescing): everything within 2048 us of the first.
        let c = Irq::us(0, 0, 2048);
        assert_eq!(
            c.fire([0, 1000 * US, 2048 * US, 2049 * US].into_iter()),
            Some((2048 * US, 3))
        );
        assert_eq!(c.fire(std::iter::empty()), None);
    }

    #[test]
    fn chipsets_choose_their_drivers_and_overrides_apply() {
        let p = |n: &str| ChipsetSpec::Preset(n.into());
        let spec = DriverSpec::default();
        assert_eq!(
            spec.resolve(&p("ath9k"), None).unwrap().kind,
            DriverKind::Ath9k
        );
        assert_eq!(
            spec.resolve(&p("ath9k-htc"), None).unwrap().kind,
            DriverKind::Ath9kHtc
        );
        assert_eq!(
            spec.resolve(&p("qca9377"), None).unwrap().kind,
            DriverKind::Ath10k
        );
        assert_eq!(
            spec.resolve(&p("ax201"), None).unwrap().kind,
            DriverKind::Iwlwifi
        );
        let d = spec.resolve(&p("ath9k"), Some(3)).unwrap();
        assert_eq!(
            (d.hw_queue_depth, d.max_subframes, d.wake),
            (3, 32, Wake::PerFrame)
        );
        let spec = DriverSpec {
            kind: Some(DriverKind::Ath10k),
            ring: Some(64),
            tx_status: Some(Irq::us(0, 0, 0)),
            ..DriverSpec::default()
        };
        let d = spec.resolve(&p("ath9k"), None).unwrap();
        assert_eq!((d.ring, d.tx_status.is_immediate()), (64, true));
        let switched = DriverSpec {
            aggregation: Some(Aggregation::Firmware),
            ..DriverSpec::default()
        };
        assert_eq!(switched.resolve(&p("ath9k"), None).unwrap().ring, 1024);
    }

    #[test]
    fn napi_drivers_deliver_through_gro() {
        let gro = |k| Driver::defaults(k).gro;
        assert!(gro(DriverKind::Ath10k) && gro(DriverKind::Iwlwifi));
        assert!(!gro(DriverKind::Ath9k) && !gro(DriverKind::Ath9kHtc));
        assert!(!gro(DriverKind::Generic) && !gro(DriverKind::Firmware));
        let off: DriverSpec = serde_json::from_str(r#"{"gro": false}"#).unwrap();
        let p = ChipsetSpec::Preset("ath10k".into());
        assert!(!off.resolve(&p, None).unwrap().gro);
    }

    #[test]
    fn bad_values_name_the_field() {
        let p = ChipsetSpec::Preset("ath9k".into());
        let bad = |spec: DriverSpec| spec.resolve(&p, None).unwrap_err();
        assert_eq!(
            bad(DriverSpec {
                ring: Some(0),
                ..Default::default()
            }),
            "driver.ring = 0: expected 1 to 65536 frames"
        );
        assert_eq!(
            bad(DriverSpec {
                max_subframes: Some(5000),
                ..Default::default()
            }),
            "driver.max_subframes = 5000: expected 0 (no limit) to 1024 MPDUs"
        );
        assert_eq!(
            bad(DriverSpec {
                rx: Some(Irq {
                    first: Dur(200_000_000),
                    ..Irq::default()
                }),
                ..Default::default()
            }),
            "driver.rx.first = \"200000000ns\": expected at most 100 ms"
        );
        assert_eq!(
            DriverSpec::default().resolve(&p, Some(0)).unwrap_err(),
            "hw_queue_depth = 0: expected 1 to 1024 aggregates"
        );
    }
}
