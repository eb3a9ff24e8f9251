//! wificc-core: a packet-level discrete-event simulator of Linux TCP senders over wired and
//! Wi-Fi links. See `docs/architecture.md` for the path of a packet through these modules.

pub mod cc;
pub mod net;
pub mod parse;
pub mod sim;
pub mod tcp;
pub mod units;
