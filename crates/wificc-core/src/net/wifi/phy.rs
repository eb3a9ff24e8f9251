//! The Wi-Fi PHY: data rates derived from the MCS tables, PPDU and Block Ack durations, and the
//! chipset presets.
//!
//! A data rate is never a calibrated number: it is the number of data bits one OFDM symbol
//! carries, `N_DBPS = N_SD x N_BPSCS x R x N_SS` (data subcarriers of the channel width, coded
//! bits per subcarrier of the modulation, coding rate, spatial streams), divided by the symbol
//! time `3.2 us + GI` (HT, VHT) or `12.8 us + GI` (HE). These are the quantities of the MCS
//! tables of IEEE 802.11-2020 (HT: clause 19, VHT: clause 21) and IEEE 802.11ax-2021 (HE:
//! clause 27). HE tables list `N_DBPS` rounded down to whole bits (1024-QAM 5/6 on 1960 tones
//! is 16333 bits per stream), and so do we; VHT leaves out the width/MCS/stream combinations
//! whose `N_DBPS` is not a whole number (VHT20 MCS9 with one stream), and so do we.
//!
//! A PPDU lasts its preamble plus its data symbols. The preamble is the legacy part (L-STF 8 us,
//! L-LTF 8 us, L-SIG 4 us) followed by the format's own fields: HT mixed format HT-SIG 8 us,
//! HT-STF 4 us and one 4 us HT-LTF per needed training symbol (1, 2, 4, 4 for 1 to 4 streams);
//! VHT SIG-A 8 us, STF 4 us, 4 us VHT-LTFs (1, 2, 4, 4, 6, 6, 8, 8) and SIG-B 4 us; HE SU
//! RL-SIG 4 us, SIG-A 8 us, STF 4 us and HE-LTFs of 2x type (6.4 us + GI) with a 0.8 or 1.6 us
//! GI, 4x type (12.8 us + 3.2 us) with a 3.2 us GI. The data field carries the 16-bit SERVICE
//! field, the PSDU and, for the BCC coding that HT and VHT describe, 6 tail bits (one encoder);
//! HE is LDPC coded (no tail bits), and its packet extension is taken as 0 us. With a short
//! guard interval, HT and VHT round the data field up to a whole number of 4 us long symbols
//! (the TXTIME equations of clauses 19 and 21) so that legacy stations can defer correctly.
//!
//! The PSDU is an A-MPDU: per MPDU a 4-byte delimiter, the MPDU (MAC header with QoS Control
//! 26 bytes, LLC/SNAP 8 bytes, the IP datagram, FCS 4 bytes) and padding to a multiple of
//! 4 bytes, except after the last subframe. Security encapsulation (CCMP would add 16 bytes per
//! MPDU) is not counted.
//!
//! The Block Ack answering an A-MPDU is a compressed Block Ack frame (frame control 2, duration
//! 2, RA 6, TA 6, BA control 2, starting sequence control 2, bitmap, FCS 4 bytes) with the
//! smallest bitmap that covers the Block Ack window (8 bytes for 64 MPDUs, 32 bytes for 256),
//! sent as a non-HT OFDM frame at 24 Mbit/s: the highest mandatory rate of the basic rate set,
//! which a control response uses when the soliciting frame was sent faster (802.11-2020
//! clause 10, rules for control response rates). A non-HT OFDM frame lasts 20 us (preamble
//! 16 us + SIGNAL 4 us) plus 4 us symbols of 96 data bits at 24 Mbit/s, carrying SERVICE
//! (16 bits), the frame and 6 tail bits (clause 17). Slot, SIFS and these durations are those
//! of the 5 GHz OFDM PHY (slot 9 us, SIFS 16 us).

use schemars::JsonSchema;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

use super::driver::DriverKind;
use crate::parse::Dur;
use crate::units::{BitsPerSec, Bytes, Nanos, NSEC_PER_SEC, NSEC_PER_USEC};

const US: Nanos = NSEC_PER_USEC;

/// Short interframe space, OFDM PHY at 5 GHz (aSIFSTime, 802.11-2020 clause 17).
pub const SIFS: Nanos = 16 * US;
/// Slot time, OFDM PHY at 5 GHz (aSlotTime, 802.11-2020 clause 17).
pub const SLOT: Nanos = 9 * US;

/// MAC header of a QoS Data frame: frame control 2, duration 2, three addresses 18, sequence
/// control 2, QoS control 2 (802.11-2020 clause 9, QoS Data frame).
pub const MAC_HEADER_BYTES: u32 = 26;
/// LLC/SNAP header in front of the IP datagram (RFC 1042 encapsulation).
pub const LLC_SNAP_BYTES: u32 = 8;
/// Frame check sequence (802.11-2020 clause 9).
pub const FCS_BYTES: u32 = 4;
/// MPDU delimiter in front of each A-MPDU subframe (802.11-2020 clause 9, A-MPDU format).
pub const DELIMITER_BYTES: u32 = 4;
/// Bytes an MPDU adds to the IP datagram it carries.
pub const MPDU_OVERHEAD_BYTES: u32 = MAC_HEADER_BYTES + LLC_SNAP_BYTES + FCS_BYTES;

/// Compressed Block Ack frame without its bitmap: frame control 2, duration 2, RA 6, TA 6,
/// BA control 2, starting sequence control 2, FCS 4 (802.11-2020 clause 9, BlockAck frame).
pub const BLOCK_ACK_FIXED_BYTES: u32 = 24;
/// Ack frame: frame control 2, duration 2, RA 6, FCS 4 (802.11-2020 clause 9, Ack frame).
pub const ACK_BYTES: u32 = 14;
/// Non-HT rate of the Block Ack, Mbit/s: 24 Mbit/s, 16-QAM 1/2 (802.11-2020 clause 17,
/// rate-dependent parameters).
pub const BASIC_RATE_MBPS: u32 = 24;
/// Data bits per 4 us symbol at 24 Mbit/s (802.11-2020 clause 17 rate-dependent parameters).
const BASIC_RATE_DBPS: u64 = 96;
/// Non-HT preamble (16 us) plus SIGNAL (4 us) (802.11-2020 clause 17 TXTIME).
const NON_HT_HEADER: Nanos = 20 * US;
/// Non-HT and HT/VHT long-GI OFDM symbol.
const LONG_SYMBOL: Nanos = 4 * US;
/// SERVICE field in front of every PSDU, bits.
const SERVICE_BITS: u64 = 16;
/// Tail bits of one BCC encoder.
const TAIL_BITS: u64 = 6;
/// Legacy part of every HT/VHT/HE preamble: L-STF 8 + L-LTF 8 + L-SIG 4 us.
const LEGACY_PREAMBLE: Nanos = 20 * US;

/// The PHY generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Standard {
    /// 802.11n, High Throughput.
    #[serde(alias = "11n")]
    Ht,
    /// 802.11ac, Very High Throughput.
    #[serde(alias = "11ac")]
    Vht,
    /// 802.11ax, High Efficiency.
    #[serde(alias = "11ax")]
    He,
}

impl Standard {
    pub fn name(self) -> &'static str {
        match self {
            Standard::Ht => "ht",
            Standard::Vht => "vht",
            Standard::He => "he",
        }
    }

    /// Block Ack window, MPDUs: 64 for HT and VHT (802.11-2020 clause 10, Block Ack), 256
    /// for HE (802.11ax-2021 clause 26).
    pub fn ba_window(self) -> u32 {
        match self {
            Standard::Ht | Standard::Vht => 64,
            Standard::He => 256,
        }
    }

    /// Longest A-MPDU a receiver may advertise, bytes: HT 65,535 (2^16 - 1), VHT 1,048,575
    /// (2^20 - 1), HE 6,500,631 (the Maximum A-MPDU Length Exponent of the HT, VHT and HE
    /// Capabilities elements).
    pub fn max_ampdu_len(self) -> Bytes {
        match self {
            Standard::Ht => 65_535,
            Standard::Vht => 1_048_575,
            Standard::He => 6_500_631,
        }
    }

    /// Data subcarriers N_SD of a channel width, if the standard has that width: HT 52 / 108
    /// (clause 19), VHT 52 / 108 / 234 / 468 (clause 21), HE 234 / 468 / 980 / 1960 (clause 27).
    fn data_subcarriers(self, width_mhz: u32) -> Option<u64> {
        match (self, width_mhz) {
            (Standard::Ht | Standard::Vht, 20) => Some(52),
            (Standard::Ht | Standard::Vht, 40) => Some(108),
            (Standard::Vht, 80) => Some(234),
            (Standard::Vht, 160) => Some(468),
            (Standard::He, 20) => Some(234),
            (Standard::He, 40) => Some(468),
            (Standard::He, 80) => Some(980),
            (Standard::He, 160) => Some(1960),
            _ => None,
        }
    }

    fn widths(self) -> &'static str {
        match self {
            Standard::Ht => "20 or 40",
            Standard::Vht | Standard::He => "20, 40, 80 or 160",
        }
    }

    fn max_streams(self) -> u32 {
        match self {
            Standard::Ht => 4,
            Standard::Vht | Standard::He => 8,
        }
    }

    /// Highest MCS per stream: HT 7 (MCS 0-7 of each stream count), VHT 9, HE 11.
    fn max_mcs(self) -> u32 {
        match self {
            Standard::Ht => 7,
            Standard::Vht => 9,
            Standard::He => 11,
        }
    }

    /// Guard intervals the standard defines, ns.
    fn guard_intervals(self) -> &'static [Nanos] {
        match self {
            Standard::Ht | Standard::Vht => &[400, 800],
            Standard::He => &[800, 1600, 3200],
        }
    }

    /// Training symbols for `streams` spatial streams: HT-LTFs 1, 2, 4, 4 (clause 19);
    /// VHT-LTFs and HE-LTFs 1, 2, 4, 4, 6, 6, 8, 8 (clauses 21 and 27).
    fn training_symbols(self, streams: u32) -> u64 {
        match streams {
            1 => 1,
            2 => 2,
            3 | 4 => 4,
            5 | 6 => 6,
            _ => 8,
        }
    }

    /// Preamble duration for `streams` streams and guard interval `gi`.
    fn preamble(self, streams: u32, gi: Nanos) -> Nanos {
        let ltfs = self.training_symbols(streams);
        match self {
            // HT-SIG 8 + HT-STF 4 + HT-LTFs.
            Standard::Ht => LEGACY_PREAMBLE + 8 * US + 4 * US + ltfs * 4 * US,
            // VHT-SIG-A 8 + VHT-STF 4 + VHT-LTFs + VHT-SIG-B 4.
            Standard::Vht => LEGACY_PREAMBLE + 8 * US + 4 * US + ltfs * 4 * US + 4 * US,
            // RL-SIG 4 + HE-SIG-A 8 + HE-STF 4 + HE-LTFs (2x with 0.8/1.6 us GI, 4x with 3.2).
            Standard::He => {
                let ltf_symbol = if gi >= 3200 { 12_800 + gi } else { 6_400 + gi };
                LEGACY_PREAMBLE + 4 * US + 8 * US + 4 * US + ltfs * ltf_symbol
            }
        }
    }

    /// OFDM symbol duration with guard interval `gi`: 3.2 us + GI (HT, VHT), 12.8 us + GI (HE).
    fn symbol(self, gi: Nanos) -> Nanos {
        match self {
            Standard::Ht | Standard::Vht => 3_200 + gi,
            Standard::He => 12_800 + gi,
        }
    }
}

/// Modulation and coding of MCS 0..=11 per stream: (coded bits per subcarrier, coding rate
/// numerator, denominator). BPSK 1/2, QPSK 1/2, QPSK 3/4, 16-QAM 1/2, 16-QAM 3/4, 64-QAM 2/3,
/// 64-QAM 3/4, 64-QAM 5/6, 256-QAM 3/4, 256-QAM 5/6, 1024-QAM 3/4, 1024-QAM 5/6 (HT MCS 0-7 of
/// each stream count, VHT-MCS 0-9, HE-MCS 0-11).
const MCS: [(u64, u64, u64); 12] = [
    (1, 1, 2),
    (2, 1, 2),
    (2, 3, 4),
    (4, 1, 2),
    (4, 3, 4),
    (6, 2, 3),
    (6, 3, 4),
    (6, 5, 6),
    (8, 3, 4),
    (8, 5, 6),
    (10, 3, 4),
    (10, 5, 6),
];

fn default_guard_interval() -> Dur {
    Dur(800)
}

/// A PHY configuration as a scenario writes it (a custom chipset).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhySpec {
    /// "ht" ("11n"), "vht" ("11ac") or "he" ("11ax").
    pub standard: Standard,
    /// Channel width, MHz.
    #[schemars(extend("x-unit" = "MHz"))]
    pub width_mhz: u32,
    /// Spatial streams.
    #[schemars(extend("x-unit" = "streams"))]
    pub streams: u32,
    /// MCS per stream (HT: 0-7, so HT MCS15 is `streams = 2, mcs = 7`; VHT 0-9; HE 0-11).
    pub mcs: u32,
    /// Guard interval: "0.4us" or "0.8us" for HT/VHT, "0.8us", "1.6us" or "3.2us" for HE.
    /// Default 0.8 us.
    #[serde(default = "default_guard_interval")]
    pub guard_interval: Dur,
}

/// A resolved PHY: everything the durations need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Phy {
    pub standard: Standard,
    pub width_mhz: u32,
    pub streams: u32,
    pub mcs: u32,
    /// Guard interval, ns.
    pub gi: Nanos,
    /// Data bits per OFDM symbol, all streams.
    pub n_dbps: u64,
    /// OFDM symbol duration, ns.
    pub symbol: Nanos,
    /// Preamble duration, ns.
    pub preamble: Nanos,
}

impl PhySpec {
    /// Check the combination and derive the PHY. Errors name the field (`chipset.<field>`),
    /// the value and what the standard allows.
    pub fn resolve(&self) -> Result<Phy, String> {
        let std = self.standard;
        let name = std.name().to_uppercase();
        let n_sd = std.data_subcarriers(self.width_mhz).ok_or_else(|| {
            format!(
                "chipset.width_mhz = {}: expected {} MHz for {name}",
                self.width_mhz,
                std.widths()
            )
        })?;
        if self.streams == 0 || self.streams > std.max_streams() {
            return Err(format!(
                "chipset.streams = {}: expected 1 to {} spatial streams for {name}",
                self.streams,
                std.max_streams()
            ));
        }
        if self.mcs > std.max_mcs() {
            return Err(format!(
                "chipset.mcs = {}: expected an MCS of 0 to {} per stream for {name}",
                self.mcs,
                std.max_mcs()
            ));
        }
        let gi = self.guard_interval.0;
        if !std.guard_intervals().contains(&gi) {
            let allowed: Vec<String> = std
                .guard_intervals()
                .iter()
                .map(|g| format!("\"{}us\"", *g as f64 / 1000.0))
                .collect();
            return Err(format!(
                "chipset.guard_interval = \"{}us\": expected {} for {name}",
                gi as f64 / 1000.0,
                allowed.join(" or ")
            ));
        }
        let (bits, num, den) = MCS[self.mcs as usize];
        let coded = n_sd * bits * self.streams as u64 * num;
        if std == Standard::Vht && !coded.is_multiple_of(den) {
            return Err(format!(
                "chipset.mcs = {}: VHT-MCS {} is not defined for {} MHz with {} stream(s) \
                 (N_DBPS not a whole number of bits); expected another MCS",
                self.mcs, self.mcs, self.width_mhz, self.streams
            ));
        }
        Ok(Phy {
            standard: std,
            width_mhz: self.width_mhz,
            streams: self.streams,
            mcs: self.mcs,
            gi,
            n_dbps: coded / den,
            symbol: std.symbol(gi),
            preamble: std.preamble(self.streams, gi),
        })
    }
}

impl Phy {
    /// PHY data rate, bit/s, rounded down: N_DBPS / symbol time.
    pub fn rate(&self) -> BitsPerSec {
        self.n_dbps * NSEC_PER_SEC / self.symbol
    }

    /// Duration of the data field carrying a PSDU of `psdu` bytes.
    pub fn data_time(&self, psdu: Bytes) -> Nanos {
        let tail = match self.standard {
            Standard::Ht | Standard::Vht => TAIL_BITS,
            Standard::He => 0,
        };
        let symbols = (SERVICE_BITS + 8 * psdu + tail).div_ceil(self.n_dbps);
        match self.standard {
            Standard::Ht | Standard::Vht if self.gi < 800 => {
                LONG_SYMBOL * (self.symbol * symbols).div_ceil(LONG_SYMBOL)
            }
            _ => self.symbol * symbols,
        }
    }

    /// Duration of a PPDU carrying a PSDU of `psdu` bytes: preamble + data field.
    pub fn ppdu_time(&self, psdu: Bytes) -> Nanos {
        self.preamble + self.data_time(psdu)
    }
}

/// Bytes of an A-MPDU subframe carrying an IP datagram of `ip_bytes`, before padding:
/// delimiter + MAC header + LLC/SNAP + datagram + FCS.
pub fn subframe_bytes(ip_bytes: u32) -> Bytes {
    (DELIMITER_BYTES + MPDU_OVERHEAD_BYTES + ip_bytes) as Bytes
}

/// Padding that brings a subframe of `bytes` to a multiple of 4 bytes.
pub fn subframe_pad(bytes: Bytes) -> Bytes {
    (4 - bytes % 4) % 4
}

/// Bitmap bytes of a compressed Block Ack covering `window` MPDUs: the smallest of 8, 16, 32,
/// 64 and 128 bytes (64 to 1024 bits) that covers it.
pub fn block_ack_bitmap_bytes(window: u32) -> u32 {
    let mut bytes = 8;
    while bytes * 8 < window && bytes < 128 {
        bytes *= 2;
    }
    bytes
}

/// Duration of a control frame of `bytes` at the 24 Mbit/s basic rate (non-HT TXTIME).
fn control_frame_time(bytes: u32) -> Nanos {
    let symbols = (SERVICE_BITS + 8 * bytes as u64 + TAIL_BITS).div_ceil(BASIC_RATE_DBPS);
    NON_HT_HEADER + symbols * LONG_SYMBOL
}

/// Duration of a compressed Block Ack for `window` MPDUs at the 24 Mbit/s basic rate.
pub fn block_ack_time(window: u32) -> Nanos {
    control_frame_time(BLOCK_ACK_FIXED_BYTES + block_ack_bitmap_bytes(window))
}

/// Duration of the Ack of a frame sent outside an A-MPDU, at the 24 Mbit/s basic rate.
pub fn ack_time() -> Nanos {
    control_frame_time(ACK_BYTES)
}

/// A named chipset: the hardware of the published studies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Preset {
    pub name: &'static str,
    /// The chip, its driver, and where its PHY numbers come from.
    pub about: &'static str,
    pub phy: PhySpec,
    /// Whether the driver aggregates voice (AC_VO) frames. mac80211's own rate control
    /// (minstrel_ht, used by ath9k and ath9k_htc) starts no Block Ack session for VO
    /// (`minstrel_aggr_check`, `ieee80211_aggr_check`); ath10k's firmware sets its sessions up
    /// itself (`TX_AMPDU_SETUP_IN_HW`) and iwlwifi's rate scaling starts one for every TID.
    pub aggregates_vo: bool,
    /// The Linux driver of the chip, whose model the BSS runs by default.
    pub driver: DriverKind,
}

const fn preset_phy(
    standard: Standard,
    width_mhz: u32,
    streams: u32,
    mcs: u32,
    gi: Nanos,
) -> PhySpec {
    PhySpec {
        standard,
        width_mhz,
        streams,
        mcs,
        guard_interval: Dur(gi),
    }
}

/// The chipset presets. Each PHY is the chip's best rate: its stream count and widest channel
/// from the vendor's product brief, at the top MCS of that standard and the short guard
/// interval (HT/VHT) or 0.8 us GI (HE); the rates follow from the MCS tables above.
pub const PRESETS: [Preset; 6] = [
    Preset {
        name: "ath9k-htc",
        about: "Atheros AR9271 USB (ath9k_htc): 802.11n 1x1, HT40 MCS7 short GI, 150 Mb/s \
                (108 x 6 x 5/6 bits / 3.6 us)",
        phy: preset_phy(Standard::Ht, 40, 1, 7, 400),
        aggregates_vo: false,
        driver: DriverKind::Ath9kHtc,
    },
    Preset {
        name: "ath9k",
        about: "Atheros AR928x/AR938x PCIe (ath9k): 802.11n 2x2, HT40 MCS15 short GI, 300 Mb/s \
                (2 x 108 x 6 x 5/6 bits / 3.6 us)",
        phy: preset_phy(Standard::Ht, 40, 2, 7, 400),
        aggregates_vo: false,
        driver: DriverKind::Ath9k,
    },
    Preset {
        name: "ath10k-1x1",
        about: "Qualcomm Atheros QCA988x (ath10k) with one stream: 802.11ac 1x1, VHT80 MCS9 \
                short GI, 433.3 Mb/s (234 x 8 x 5/6 bits / 3.6 us)",
        phy: preset_phy(Standard::Vht, 80, 1, 9, 400),
        aggregates_vo: true,
        driver: DriverKind::Ath10k,
    },
    Preset {
        name: "ath10k",
        about: "Qualcomm Atheros QCA988x (ath10k): 802.11ac 2x2, VHT80 MCS9 short GI, \
                866.7 Mb/s (2 x 234 x 8 x 5/6 bits / 3.6 us)",
        phy: preset_phy(Standard::Vht, 80, 2, 9, 400),
        aggregates_vo: true,
        driver: DriverKind::Ath10k,
    },
    Preset {
        name: "qca9377",
        about: "Qualcomm Atheros QCA9377 (ath10k): 802.11ac 1x1, VHT80 MCS9 short GI, \
                433.3 Mb/s (234 x 8 x 5/6 bits / 3.6 us)",
        phy: preset_phy(Standard::Vht, 80, 1, 9, 400),
        aggregates_vo: true,
        driver: DriverKind::Ath10k,
    },
    Preset {
        name: "ax201",
        about: "Intel Wi-Fi 6 AX201 (iwlwifi): 802.11ax 2x2, HE160 MCS11 0.8 us GI, 2401.9 Mb/s \
                (floor(2 x 1960 x 10 x 5/6) = 32666 bits / 13.6 us)",
        phy: preset_phy(Standard::He, 160, 2, 11, 800),
        aggregates_vo: true,
        driver: DriverKind::Iwlwifi,
    },
];

/// The preset called `name`.
pub fn preset(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// Never called: `resolve` fails first for an unknown preset.
fn unreachable_phy() -> PhySpec {
    PRESETS[0].phy
}

/// The chipset of a BSS: a preset's name or a custom PHY table.
#[derive(Debug, Clone, PartialEq)]
pub enum ChipsetSpec {
    Preset(String),
    Custom(PhySpec),
}

impl Default for ChipsetSpec {
    /// `ath9k`, the chipset of most of the studies' experiments.
    fn default() -> Self {
        ChipsetSpec::Preset("ath9k".to_string())
    }
}

impl ChipsetSpec {
    /// Whether this chipset's driver aggregates voice frames: the preset's answer; a custom
    /// PHY is taken to run mac80211's own rate control, which does not.
    pub fn aggregates_vo(&self) -> bool {
        match self {
            ChipsetSpec::Preset(name) => preset(name).is_some_and(|p| p.aggregates_vo),
            ChipsetSpec::Custom(_) => false,
        }
    }

    /// The PHY table of this chipset (a preset's, or the custom one).
    pub fn spec(&self) -> Result<PhySpec, String> {
        match self {
            ChipsetSpec::Preset(name) => match preset(name) {
                Some(p) => Ok(p.phy),
                None => self.resolve().map(|_| unreachable_phy()),
            },
            ChipsetSpec::Custom(spec) => Ok(*spec),
        }
    }

    /// The PHY this chipset runs.
    pub fn resolve(&self) -> Result<Phy, String> {
        match self {
            ChipsetSpec::Preset(name) => match preset(name) {
                Some(p) => p.phy.resolve(),
                None => {
                    let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
                    Err(format!(
                        "chipset = {name:?}: expected a preset ({}) or a table \
                         {{standard, width_mhz, streams, mcs, guard_interval}}",
                        names.join(", ")
                    ))
                }
            },
            ChipsetSpec::Custom(spec) => spec.resolve(),
        }
    }
}

impl Serialize for ChipsetSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ChipsetSpec::Preset(name) => s.serialize_str(name),
            ChipsetSpec::Custom(spec) => spec.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ChipsetSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ChipsetSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a chipset preset name or a table {standard, width_mhz, streams, mcs}")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ChipsetSpec, E> {
                Ok(ChipsetSpec::Preset(v.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ChipsetSpec, A::Error> {
                PhySpec::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(ChipsetSpec::Custom)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phy(name: &str) -> Phy {
        ChipsetSpec::Preset(name.to_string()).resolve().unwrap()
    }

    #[test]
    fn preset_rates_follow_from_the_mcs_tables() {
        // HT40 MCS7 1 stream SGI: 108 x 6 x 5/6 = 540 bits / 3.6 us = 150 Mb/s.
        assert_eq!(
            (phy("ath9k-htc").n_dbps, phy("ath9k-htc").rate()),
            (540, 150_000_000)
        );
        // HT40 MCS15: 1080 bits / 3.6 us = 300 Mb/s.
        assert_eq!(
            (phy("ath9k").n_dbps, phy("ath9k").rate()),
            (1080, 300_000_000)
        );
        // VHT80 MCS9 1 stream SGI: 234 x 8 x 5/6 = 1560 bits / 3.6 us = 433.33 Mb/s.
        assert_eq!(
            (phy("ath10k-1x1").n_dbps, phy("ath10k-1x1").rate()),
            (1560, 433_333_333)
        );
        assert_eq!(phy("qca9377"), phy("ath10k-1x1"));
        // 2 streams: 3120 bits / 3.6 us = 866.67 Mb/s.
        assert_eq!(
            (phy("ath10k").n_dbps, phy("ath10k").rate()),
            (3120, 866_666_666)
        );
        // HE160 MCS11 2 streams: floor(2 x 1960 x 10 x 5/6) = 32666 bits / 13.6 us.
        assert_eq!(
            (phy("ax201").n_dbps, phy("ax201").rate()),
            (32666, 2_401_911_764)
        );
    }

    #[test]
    fn preambles_per_format_and_stream_count() {
        // HT mixed: 20 + 8 + 4 + 4 x {1, 2} us.
        assert_eq!(phy("ath9k-htc").preamble, 36_000);
        assert_eq!(phy("ath9k").preamble, 40_000);
        // VHT: 20 + 8 + 4 + 4 x {1, 2} + 4 us.
        assert_eq!(phy("ath10k-1x1").preamble, 40_000);
        assert_eq!(phy("ath10k").preamble, 44_000);
        // HE SU: 20 + 4 + 8 + 4 + 2 x (6.4 + 0.8) us.
        assert_eq!(phy("ax201").preamble, 50_400);
    }

    #[test]
    fn ppdu_durations_for_a_few_aggregates() {
        // A 1500-byte datagram in a subframe: 4 + 26 + 8 + 1500 + 4 = 1542 B, padded 1544 B.
        assert_eq!(subframe_bytes(1500), 1542);
        assert_eq!(subframe_pad(1542), 2);
        // ath9k, k = 1: PSDU 1542 B; bits 16 + 12336 + 6 = 12358; 1080 bits a symbol -> 12
        // symbols; short GI: 12 x 3.6 = 43.2 us, rounded up to 4 us -> 44 us; + 40 us preamble.
        assert_eq!(phy("ath9k").ppdu_time(1542), 84_000);
        // ath9k, k = 42: PSDU 42 x 1544 - 2 = 64846 B; bits 518790 -> 481 symbols; 481 x 3.6 =
        // 1731.6 us -> 1732 us; + 40 = 1772 us.
        assert_eq!(phy("ath9k").ppdu_time(64_846), 1_772_000);
        // ath10k, k = 64: PSDU 98814 B; bits 790534 / 3120 -> 254 symbols; 914.4 us -> 916 us;
        // + 44 = 960 us.
        assert_eq!(phy("ath10k").ppdu_time(98_814), 960_000);
        // ax201, k = 256: PSDU 256 x 1544 - 2 = 395262 B; bits 16 + 3162096 = 3162112 (LDPC,
        // no tail) / 32666 -> 97 symbols (96.8); 97 x 13.6 = 1319.2 us; + 50.4 = 1369.6 us.
        assert_eq!(phy("ax201").ppdu_time(395_262), 1_369_600);
        // ax201, k = 1: 12352 bits -> 1 symbol: 50.4 + 13.6 = 64 us.
        assert_eq!(phy("ax201").ppdu_time(1542), 64_000);
        // Long GI HT20 MCS0 (6.5 Mb/s, 26 bits a symbol): 100 B -> 16 + 800 + 6 = 822 bits
        // -> 32 symbols x 4 us = 128 us + 36 us.
        let slow = PhySpec {
            standard: Standard::Ht,
            width_mhz: 20,
            streams: 1,
            mcs: 0,
            guard_interval: Dur(800),
        }
        .resolve()
        .unwrap();
        assert_eq!((slow.n_dbps, slow.rate()), (26, 6_500_000));
        assert_eq!(slow.ppdu_time(100), 164_000);
    }

    #[test]
    fn block_ack_durations() {
        // 64-MPDU window: 32-byte frame; 16 + 256 + 6 = 278 bits -> 3 symbols: 20 + 12 = 32 us.
        assert_eq!(block_ack_time(64), 32_000);
        // Ack: 16 + 8 x 14 + 6 = 134 bits, 2 symbols of 96 bits: 20 + 2 x 4 = 28 us.
        assert_eq!(ack_time(), 28_000);
        // 256: 32-byte bitmap, 56-byte frame; 470 bits -> 5 symbols: 40 us.
        assert_eq!(block_ack_time(256), 40_000);
        // 1024: 128-byte bitmap, 152-byte frame; 1238 bits -> 13 symbols: 72 us.
        assert_eq!(block_ack_time(1024), 72_000);
        assert_eq!(block_ack_bitmap_bytes(1), 8);
        assert_eq!(block_ack_bitmap_bytes(65), 16);
    }

    #[test]
    fn he_guard_intervals_change_symbol_and_training_fields() {
        let spec = |gi| PhySpec {
            standard: Standard::He,
            width_mhz: 80,
            streams: 1,
            mcs: 11,
            guard_interval: Dur(gi),
        };
        // 980 x 10 x 5/6 = 8166.7 -> 8166 bits.
        let a = spec(800).resolve().unwrap();
        assert_eq!((a.n_dbps, a.symbol, a.preamble), (8166, 13_600, 43_200));
        let b = spec(1600).resolve().unwrap();
        assert_eq!((b.symbol, b.preamble), (14_400, 44_000));
        // 4x HE-LTF: 12.8 + 3.2 = 16 us.
        let c = spec(3200).resolve().unwrap();
        assert_eq!((c.symbol, c.preamble), (16_000, 52_000));
    }

    #[test]
    fn invalid_phys_name_field_value_and_expectation() {
        let base = PhySpec {
            standard: Standard::Vht,
            width_mhz: 20,
            streams: 1,
            mcs: 9,
            guard_interval: Dur(800),
        };
        assert_eq!(
            base.resolve().unwrap_err(),
            "chipset.mcs = 9: VHT-MCS 9 is not defined for 20 MHz with 1 stream(s) (N_DBPS not \
             a whole number of bits); expected another MCS"
        );
        let ht160 = PhySpec {
            standard: Standard::Ht,
            width_mhz: 160,
            ..base
        };
        assert_eq!(
            ht160.resolve().unwrap_err(),
            "chipset.width_mhz = 160: expected 20 or 40 MHz for HT"
        );
        let he_gi = PhySpec {
            standard: Standard::He,
            guard_interval: Dur(400),
            mcs: 0,
            ..base
        };
        assert_eq!(
            he_gi.resolve().unwrap_err(),
            "chipset.guard_interval = \"0.4us\": expected \"0.8us\" or \"1.6us\" or \"3.2us\" for HE"
        );
        let streams = PhySpec {
            streams: 9,
            mcs: 0,
            ..base
        };
        assert_eq!(
            streams.resolve().unwrap_err(),
            "chipset.streams = 9: expected 1 to 8 spatial streams for VHT"
        );
        let mcs = PhySpec {
            standard: Standard::Ht,
            mcs: 8,
            ..base
        };
        assert_eq!(
            mcs.resolve().unwrap_err(),
            "chipset.mcs = 8: expected an MCS of 0 to 7 per stream for HT"
        );
        let e = ChipsetSpec::Preset("ath11k".into()).resolve().unwrap_err();
        assert!(
            e.starts_with("chipset = \"ath11k\": expected a preset (ath9k-htc, ath9k,"),
            "{e}"
        );
    }

    #[test]
    fn chipset_parses_from_a_name_or_a_table() {
        let p: ChipsetSpec = serde_json::from_str("\"ax201\"").unwrap();
        assert_eq!(p, ChipsetSpec::Preset("ax201".into()));
        let c: ChipsetSpec = toml::from_str::<toml::Value>(
            "standard = \"11ac\"\nwidth_mhz = 40\nstreams = 3\nmcs = 7\nguard_interval = \"0.4us\"",
        )
        .unwrap()
        .try_into()
        .unwrap();
        let ChipsetSpec::Custom(spec) = c.clone() else {
            panic!("{c:?}")
        };
        // VHT40 MCS7 3 streams SGI: 108 x 6 x 5/6 x 3 = 1620 bits / 3.6 us = 450 Mb/s.
        assert_eq!(spec.resolve().unwrap().rate(), 450_000_000);
        let back: ChipsetSpec = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
        assert_eq!(back, c);
        let e = serde_json::from_str::<ChipsetSpec>(
            r#"{"standard": "he", "width_mhz": 80, "streams": 1, "mcs": 1, "gi": "0.8us"}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("unknown field `gi`"), "{e}");
    }
}
