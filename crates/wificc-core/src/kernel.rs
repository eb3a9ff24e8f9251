//! Kernel-version profiles: every behaviour wificc models that changed between the Linux
//! releases the studies ran (4.19 to 6.12), and 6.18 (the kernel the emulator's checks ran on),
//! with the commit that changed it.
//!
//! A scenario names its kernel (`stack.kernel`, `--kernel`; default 6.12, the newest the
//! studies' settings were compared on); the profile
//! fills every setting the scenario leaves open, and an explicit scenario value always wins.
//! Sources: the Debian 5.10.223, 6.1.192 and 6.12.117 trees (read), and for the versions in
//! between the commits named below with the release that first shipped them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::net::wifi::edca::DscpMap;
use crate::tcp::config::SkbLayout;

/// A Linux release with a profile.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
pub enum Kernel {
    #[serde(rename = "4.19")]
    V4_19,
    #[serde(rename = "5.4")]
    V5_4,
    #[serde(rename = "5.10")]
    V5_10,
    #[serde(rename = "5.13")]
    V5_13,
    #[serde(rename = "5.15")]
    V5_15,
    #[serde(rename = "6.1")]
    V6_1,
    #[serde(rename = "6.6")]
    V6_6,
    #[serde(rename = "6.12")]
    V6_12,
    #[serde(rename = "6.18")]
    V6_18,
}

impl Kernel {
    pub const ALL: [Kernel; 9] = [
        Kernel::V4_19,
        Kernel::V5_4,
        Kernel::V5_10,
        Kernel::V5_13,
        Kernel::V5_15,
        Kernel::V6_1,
        Kernel::V6_6,
        Kernel::V6_12,
        Kernel::V6_18,
    ];
    /// The default (6.12): the release every study's comparison and table was made with;
    /// 6.18 is newer (the running kernel of the emulator checks) and chosen explicitly.
    pub const NEWEST: Kernel = Kernel::V6_12;

    pub fn name(self) -> &'static str {
        match self {
            Kernel::V4_19 => "4.19",
            Kernel::V5_4 => "5.4",
            Kernel::V5_10 => "5.10",
            Kernel::V5_13 => "5.13",
            Kernel::V5_15 => "5.15",
            Kernel::V6_1 => "6.1",
            Kernel::V6_6 => "6.6",
            Kernel::V6_12 => "6.12",
            Kernel::V6_18 => "6.18",
        }
    }

    /// (major, minor).
    fn version(self) -> (u32, u32) {
        let (a, b) = self.name().split_once('.').unwrap_or(("0", "0"));
        (a.parse().unwrap_or(0), b.parse().unwrap_or(0))
    }

    fn at_least(self, major: u32, minor: u32) -> bool {
        self.version() >= (major, minor)
    }

    /// Every version-dependent behaviour of this release.
    pub fn profile(self) -> Profile {
        let at = |a, b| self.at_least(a, b);
        // bf9f1baa279f "net: add dedicated kmem_cache for typical/small skb->head" (6.3).
        let skb_layout = SkbLayout {
            small_head_cache: at(6, 3),
            ..SkbLayout::WIFI_HOST
        };
        Profile {
            kernel: self,
            // 256 KB since c39c4c6abb89 (4.2); 1 MB with c73e5807e4f6 "tcp: tsq: no longer use
            // limit_output_bytes for paced flows" (5.0); 4 MB with 9ea3bfa61b09 "tcp: increase
            // tcp_limit_output_bytes default value to 4MB" (6.16).
            limit_output_bytes: if at(6, 16) {
                4 << 20
            } else if at(5, 0) {
                1 << 20
            } else {
                256 << 10
            },
            // c73e5807e4f6 (5.0): the cap applies only to sockets with SK_PACING_NONE, until
            // c4221a8cc3a7 "tcp: always use tcp_limit_output_bytes limitation" (6.16) applies
            // it to every socket again. Found by the tsq-completion kernel check on 6.18: the
            // kernel's bbr kept about one skb below TCP with the sysctl at 1 ms of the rate and
            // two with it at 4 ms.
            limit_caps_paced: !at(5, 0) || at(6, 16),
            // f921a4a5bffa "tcp: tsq: relax tcp_small_queue_check() when rtx queue contains a
            // single skb" (6.6, backported to later 5.10.y/6.1.y stable releases): before it,
            // since 75c119afe14f (4.15), only an empty retransmit queue lets an skb through.
            tsq_single_skb: at(6, 6),
            // mac80211 sets the pacing shift of the TCP sockets it transmits for: 8 since
            // 36148c2bbfbe "mac80211: Adjust TSQ pacing shift" (4.16); `hw->tx_sk_pacing_shift`
            // (70e53669c4c4, 4.20) defaults to 7 since 5c14a4d05f68 (5.0). No mainline driver
            // overrides it.
            mac80211_pacing_shift: if at(5, 0) { 7 } else { 8 },
            // ab408b6dc744 "tcp: switch tcp and sch_fq to new earliest departure time model"
            // (4.20); before, the hrtimer internal pacing of 218af599fa63 (4.13) restarts from
            // the moment an skb is sent.
            edt_pacing: at(4, 20),
            // a7a2563064e9 "tcp: mitigate scheduling jitter in EDT pacing model" (4.20).
            pacing_credit: at(4, 20),
            // 78dc70ebaa38 "tcp_bbr: adapt cwnd based on ack aggregation estimation" (5.1).
            bbr_extra_acked: at(5, 1),
            // 65466904b015 "tcp: adjust TSO packet sizes based on min_rtt" (5.18): 9.
            tso_rtt_log: if at(5, 18) { 9 } else { 0 },
            // 6fdb8b8781d5 "wifi: cfg80211: Update the default DSCP-to-UP mapping" (6.8), with
            // a68b22e2905b (AF3x to UP 4, 6.12); before, UP = DSCP >> 3.
            dscp_map: if at(6, 12) {
                DscpMap::Rfc8325
            } else {
                DscpMap::Precedence
            },
            // iwlwifi's TFD queue for an HE station: IWL_DEFAULT_QUEUE_SIZE_HE (1024) is in
            // 6.1 (read) and absent from 5.10 (read: 256); the commit in between was not
            // found, so 5.13 and 5.15 keep 256 (uncertain).
            iwlwifi_he_queue: if at(6, 1) { 1024 } else { 256 },
            // truesize of a TCP skb = payload + this (`tcp_stream_alloc_skb`: an fclone of
            // MAX_TCP_HEADER bytes of head, the payload in page fragments): the head's
            // allocation plus struct sk_buff. 1280 bytes before 6.3 (640 -> the 1024-byte
            // kmalloc class), 896 with the small-head cache.
            skb_overhead: skb_layout.segment_truesize(0, true),
            skb_layout,
        }
    }
}

/// The version-dependent behaviours of one release (see [`Kernel::profile`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct Profile {
    /// The release.
    pub kernel: Kernel,
    /// `net.ipv4.tcp_limit_output_bytes`.
    pub limit_output_bytes: u64,
    /// TSQ's limit is capped at `tcp_limit_output_bytes` for paced sockets too.
    pub limit_caps_paced: bool,
    /// TSQ lets an skb through when the retransmit queue holds one skb (not only when empty).
    pub tsq_single_skb: bool,
    /// `sk_pacing_shift` mac80211 gives the TCP sockets of a Wi-Fi host (7: 8 ms, 8: 4 ms).
    pub mac80211_pacing_shift: u8,
    /// EDT pacing (the next departure time carries over); else the next skb may leave one
    /// skb's time after the moment the last one was sent.
    pub edt_pacing: bool,
    /// EDT's credit for late departures (up to half an skb's time).
    pub pacing_credit: bool,
    /// BBR's ACK-aggregation allowance.
    pub bbr_extra_acked: bool,
    /// `net.ipv4.tcp_tso_rtt_log` (0: absent).
    pub tso_rtt_log: u8,
    /// DSCP to 802.11 user priority (`cfg80211_classify8021d`).
    pub dscp_map: DscpMap,
    /// Entries of iwlwifi's TFD queue for an HE station.
    pub iwlwifi_he_queue: u32,
    /// truesize of a TCP skb beyond its payload.
    pub skb_overhead: u32,
    /// skb head allocation (TSQ charges of software-GSO segments).
    #[serde(skip)]
    pub skb_layout: SkbLayout,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_follow_the_commits() {
        let p = Kernel::V4_19.profile();
        assert_eq!(p.limit_output_bytes, 262_144);
        assert!(p.limit_caps_paced && !p.edt_pacing && !p.pacing_credit && !p.bbr_extra_acked);
        assert_eq!((p.mac80211_pacing_shift, p.tso_rtt_log), (8, 0));
        assert_eq!(p.dscp_map, DscpMap::Precedence);
        assert_eq!(p.skb_overhead, 1280);
        assert!(!p.tsq_single_skb);
        let p = Kernel::V5_4.profile();
        assert_eq!(p.limit_output_bytes, 1 << 20);
        assert!(!p.limit_caps_paced && p.edt_pacing && p.bbr_extra_acked);
        assert_eq!((p.mac80211_pacing_shift, p.tso_rtt_log), (7, 0));
        assert_eq!(Kernel::V5_15.profile().tso_rtt_log, 0);
        assert_eq!(Kernel::V6_1.profile().tso_rtt_log, 9);
        assert_eq!(Kernel::V6_1.profile().skb_overhead, 1280);
        let p = Kernel::V6_6.profile();
        assert_eq!((p.skb_overhead, p.tsq_single_skb), (896, true));
        assert_eq!(p.dscp_map, DscpMap::Precedence);
        assert_eq!(Kernel::V6_12.profile().dscp_map, DscpMap::Rfc8325);
        assert_eq!(Kernel::V5_4.profile().iwlwifi_he_queue, 256);
        assert_eq!(Kernel::V6_1.profile().iwlwifi_he_queue, 1024);
        assert_eq!(Kernel::NEWEST, Kernel::V6_12);
    }

    #[test]
    fn from_6_16_the_sysctl_is_4_mb_and_caps_paced_sockets_again() {
        let p = Kernel::V6_12.profile();
        assert_eq!(p.limit_output_bytes, 1 << 20);
        assert!(!p.limit_caps_paced);
        let p = Kernel::V6_18.profile();
        assert_eq!(p.limit_output_bytes, 4_194_304);
        assert!(p.limit_caps_paced && p.tsq_single_skb && p.edt_pacing);
        assert_eq!(p.skb_overhead, Kernel::V6_12.profile().skb_overhead);
    }

    #[test]
    fn names_round_trip() {
        for k in Kernel::ALL {
            let text = serde_json::to_string(&k).unwrap();
            assert_eq!(text, format!("\"{}\"", k.name()));
            assert_eq!(serde_json::from_str::<Kernel>(&text).unwrap(), k);
        }
        assert!(serde_json::from_str::<Kernel>("\"5.5\"").is_err());
    }
}
