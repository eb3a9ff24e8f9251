//! EDCA: access categories, their contention parameters, and the DSCP mapping.
//!
//! Each node runs one EDCA function (EDCAF) per access category. An EDCAF with a frame to send
//! waits until the medium has been idle for its AIFS = SIFS + AIFSN x slot, then counts its
//! backoff down by one per idle slot and transmits when it reaches zero. A busy medium freezes
//! the countdown; when the medium is idle again the EDCAF waits AIFS afresh and resumes from
//! where it stopped. The backoff is drawn uniformly from [0, CW]; CW starts at CWmin, becomes
//! 2 CW + 1 (at most CWmax) after every failed transmission and returns to CWmin after a
//! success or a discard (802.11-2020 clause 10, EDCA). After every transmission the EDCAF draws
//! a new backoff even with nothing left to send (post-backoff), so a frame that arrives later waits
//! out whatever remains of it; a frame that arrives at an EDCAF with no backoff pending is sent
//! as soon as the medium has been idle for AIFS, unless the medium is busy at that moment, in
//! which case a backoff is drawn first.
//!
//! Parameters are the default EDCA parameter set of 802.11-2020 for the OFDM PHY (aCWmin 15,
//! aCWmax 1023): AC_BK AIFSN 7, CW 15..1023; AC_BE AIFSN 3, CW 15..1023; AC_VI AIFSN 2, CW
//! 7..15; AC_VO AIFSN 2, CW 3..7.
//!
//! With WMM, a packet's access category follows its DSCP as the hosts' kernel maps it
//! ([`DscpMap`], chosen by the kernel profile): before Linux 6.8 by the precedence bits (EF and
//! CS5 to AC_VI, CS1 to AC_BK, CS6/CS7 to AC_VO), from 6.8 with the RFC 8325 overrides (EF to
//! AC_VO). Without WMM everything is AC_BE.

use schemars::JsonSchema;
use serde::Serialize;

use super::phy::{SIFS, SLOT};
use crate::units::Nanos;

/// How the kernel maps a packet's DSCP to an 802.11 user priority (`cfg80211_classify8021d`,
/// net/wireless/util.c); the user priority gives the access category (`ieee802_1d_to_ac`:
/// UP 1-2 BK, 0 and 3 BE, 4-5 VI, 6-7 VO).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DscpMap {
    /// UP = the precedence bits, DSCP >> 3 (Linux up to 6.7): EF (46) -> UP 5 -> AC_VI.
    Precedence,
    /// The RFC 8325 overrides of 6fdb8b8781d5 (6.8) and a68b22e2905b (6.12): AF1x and CS2 ->
    /// UP 0, AF2x -> 3, CS3 and AF3x -> 4, VA (44) and EF (46) -> 6, CS6 -> 7; the rest by
    /// precedence.
    Rfc8325,
}

impl DscpMap {
    /// The user priority of `dscp`.
    pub fn user_priority(self, dscp: u8) -> u8 {
        let precedence = (dscp >> 3) & 7;
        match self {
            DscpMap::Precedence => precedence,
            DscpMap::Rfc8325 => match dscp {
                10 | 12 | 14 | 16 => 0,
                18 | 20 | 22 => 3,
                24 | 26 | 28 | 30 => 4,
                44 | 46 => 6,
                48 => 7,
                _ => precedence,
            },
        }
    }

    /// The access category of a packet marked `dscp`.
    pub fn ac(self, dscp: u8) -> Ac {
        match self.user_priority(dscp) {
            1 | 2 => Ac::Bk,
            4 | 5 => Ac::Vi,
            6 | 7 => Ac::Vo,
            _ => Ac::Be,
        }
    }
}

/// Access category, in increasing priority (the order internal collisions are resolved in).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ac {
    Bk = 0,
    Be = 1,
    Vi = 2,
    Vo = 3,
}

/// Number of access categories.
pub const ACS: usize = 4;

/// DiffServ codepoints the mapping names (RFC 2474, RFC 3246).
pub const DSCP_CS1: u8 = 8;
pub const DSCP_CS5: u8 = 40;
pub const DSCP_EF: u8 = 46;

impl Ac {
    pub const ALL: [Ac; ACS] = [Ac::Bk, Ac::Be, Ac::Vi, Ac::Vo];

    /// The access category of a packet marked `dscp` (WMM on) on the newest kernels.
    pub fn from_dscp(dscp: u8) -> Ac {
        DscpMap::Rfc8325.ac(dscp)
    }

    pub fn name(self) -> &'static str {
        match self {
            Ac::Bk => "BK",
            Ac::Be => "BE",
            Ac::Vi => "VI",
            Ac::Vo => "VO",
        }
    }

    /// AIFSN, slots after SIFS.
    /// Default EDCA TXOP limit (IEEE 802.11-2020, default EDCA parameter set for the OFDM-based
    /// PHYs): VO 1.504 ms, VI 3.008 ms; 0 for BE and BK, meaning one frame exchange (one PPDU and
    /// its Block Ack). A TXOP holds the whole exchange: PPDU, SIFS and Block Ack.
    pub fn txop_limit(self) -> Nanos {
        match self {
            Ac::Vo => 1_504_000,
            Ac::Vi => 3_008_000,
            Ac::Be | Ac::Bk => 0,
        }
    }

    pub fn aifsn(self) -> u64 {
        match self {
            Ac::Bk => 7,
            Ac::Be => 3,
            Ac::Vi | Ac::Vo => 2,
        }
    }

    /// AIFS = SIFS + AIFSN x slot.
    pub fn aifs(self) -> Nanos {
        SIFS + self.aifsn() * SLOT
    }

    pub fn cw_min(self) -> u32 {
        match self {
            Ac::Bk | Ac::Be => 15,
            Ac::Vi => 7,
            Ac::Vo => 3,
        }
    }

    pub fn cw_max(self) -> u32 {
        match self {
            Ac::Bk | Ac::Be => 1023,
            Ac::Vi => 15,
            Ac::Vo => 7,
        }
    }
}

/// The EDCA parameters of one access category at one node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EdcaParams {
    pub aifsn: u64,
    pub cw_min: u32,
    pub cw_max: u32,
}

impl EdcaParams {
    /// A station's: the default EDCA parameter set, which hostapd also advertises in its
    /// beacons' WMM parameter element (`wmm_ac_*` defaults in hostapd.conf).
    pub fn station(ac: Ac) -> EdcaParams {
        EdcaParams {
            aifsn: ac.aifsn(),
            cw_min: ac.cw_min(),
            cw_max: ac.cw_max(),
        }
    }

    /// An access point's as hostapd configures it (`tx_queue_data0..3` defaults in
    /// hostapd.conf): VO AIFSN 1 CW 3..7, VI AIFSN 1 CW 7..15, BE AIFSN 3 CW 15..63, BK AIFSN 7
    /// CW 15..1023.
    pub fn hostapd_ap(ac: Ac) -> EdcaParams {
        let (aifsn, cw_min, cw_max) = match ac {
            Ac::Vo => (1, 3, 7),
            Ac::Vi => (1, 7, 15),
            Ac::Be => (3, 15, 63),
            Ac::Bk => (7, 15, 1023),
        };
        EdcaParams {
            aifsn,
            cw_min,
            cw_max,
        }
    }

    /// AIFS = SIFS + AIFSN x slot.
    pub fn aifs(&self) -> Nanos {
        SIFS + self.aifsn * SLOT
    }
}

/// The contention state of one EDCAF.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub ac: Ac,
    pub params: EdcaParams,
    /// Contention window.
    pub cw: u32,
    /// Backoff slots left when the countdown (re)starts, AIFS after the medium became idle.
    pub slots: u32,
}

impl Backoff {
    /// A station's EDCAF of `ac`.
    pub fn new(ac: Ac) -> Self {
        Backoff::with(ac, EdcaParams::station(ac))
    }

    pub fn with(ac: Ac, params: EdcaParams) -> Self {
        Backoff {
            ac,
            params,
            cw: params.cw_min,
            slots: 0,
        }
    }

    /// When the backoff reaches zero if the medium stays idle from `idle_since`.
    pub fn expiry(&self, idle_since: Nanos) -> Nanos {
        idle_since + self.params.aifs() + self.slots as Nanos * SLOT
    }

    /// The medium turns busy at `t` after being idle since `idle_since`: keep the slots not yet
    /// counted. Slots count only once AIFS has passed, and only whole slots.
    pub fn freeze(&mut self, idle_since: Nanos, t: Nanos) {
        let start = idle_since + self.params.aifs();
        if t > start {
            let counted = ((t - start) / SLOT).min(u32::MAX as Nanos) as u32;
            self.slots = self.slots.saturating_sub(counted);
        }
    }

    /// A transmission failed: CW = min(2 CW + 1, CWmax).
    pub fn fail(&mut self) {
        self.cw = (2 * self.cw + 1).min(self.params.cw_max);
    }

    /// A transmission succeeded or its frame was discarded: CW = CWmin.
    pub fn reset(&mut self) {
        self.cw = self.params.cw_min;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aifs_and_windows_per_access_category() {
        // SIFS 16 us + AIFSN x 9 us.
        assert_eq!(Ac::Bk.aifs(), 79_000);
        assert_eq!(Ac::Be.aifs(), 43_000);
        assert_eq!(Ac::Vi.aifs(), 34_000);
        assert_eq!(Ac::Vo.aifs(), 34_000);
        assert_eq!((Ac::Vo.cw_min(), Ac::Vo.cw_max()), (3, 7));
        assert_eq!((Ac::Vi.cw_min(), Ac::Vi.cw_max()), (7, 15));
    }

    #[test]
    fn dscp_mapping() {
        assert_eq!(Ac::from_dscp(46), Ac::Vo);
        assert_eq!(Ac::from_dscp(40), Ac::Vi);
        assert_eq!(Ac::from_dscp(8), Ac::Bk);
        assert_eq!(Ac::from_dscp(0), Ac::Be);
        // AF41 (34): precedence 4 -> UP 4 -> VI; CS6 -> VO; AF11 -> BE (not BK).
        assert_eq!(Ac::from_dscp(34), Ac::Vi);
        assert_eq!(Ac::from_dscp(48), Ac::Vo);
        assert_eq!(Ac::from_dscp(10), Ac::Be);
        // Before 6.8, the precedence bits alone: EF and CS5 are both UP 5, AC_VI.
        let old = DscpMap::Precedence;
        assert_eq!((old.user_priority(DSCP_EF), old.ac(DSCP_EF)), (5, Ac::Vi));
        assert_eq!(old.ac(DSCP_CS5), Ac::Vi);
        assert_eq!(old.ac(DSCP_CS1), Ac::Bk);
        assert_eq!(old.ac(10), Ac::Bk);
        assert_eq!(old.ac(56), Ac::Vo);
    }

    #[test]
    fn window_doubles_to_its_maximum_and_resets() {
        let mut b = Backoff::new(Ac::Be);
        let mut seen = vec![b.cw];
        for _ in 0..8 {
            b.fail();
            seen.push(b.cw);
        }
        assert_eq!(seen, vec![15, 31, 63, 127, 255, 511, 1023, 1023, 1023]);
        b.reset();
        assert_eq!(b.cw, 15);
        let mut vo = Backoff::new(Ac::Vo);
        vo.fail();
        vo.fail();
        assert_eq!(vo.cw, 7);
    }

    #[test]
    fn countdown_freezes_on_whole_slots_after_aifs() {
        // BE, 10 slots, idle since 1000 us: counting starts at 1043 us, expiry 1133 us.
        let mut b = Backoff::new(Ac::Be);
        b.slots = 10;
        assert_eq!(b.expiry(1_000_000), 1_133_000);
        // Busy during AIFS: nothing counted.
        let mut early = b;
        early.freeze(1_000_000, 1_040_000);
        assert_eq!(early.slots, 10);
        // Busy at 1043 + 4 x 9 + 5 us: 4 whole slots counted, 6 left.
        b.freeze(1_000_000, 1_084_000);
        assert_eq!(b.slots, 6);
        // Resume after the next idle start at 2000 us: expiry 2000 + 43 + 54 us.
        assert_eq!(b.expiry(2_000_000), 2_097_000);
    }
}
