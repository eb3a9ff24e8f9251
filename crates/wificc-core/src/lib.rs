//! wificc-core: a packet-level discrete-event simulator of Linux TCP senders over wired and
//! Wi-Fi links. See `docs/architecture.md` for the path of a packet through these modules.

/// Fingerprint of the simulator's sources (see build.rs): results carry it as
/// `summary.model`, and a sweep re-runs stored runs whose model differs.
pub const MODEL: &str = env!("WIFICC_MODEL");

pub mod api;
pub mod cc;
pub mod kernel;
pub mod metrics;
pub mod net;
pub mod parse;
pub mod scenario;
pub mod schema;
pub mod sim;
pub mod tcp;
pub mod topology;
pub mod units;
pub mod world;
