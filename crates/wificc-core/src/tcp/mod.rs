//! The Linux-like TCP sender and receiver.

#[cfg(feature = "ack-log")]
pub mod ack_log;
pub mod config;
pub mod rate;
pub mod rate_sample;
pub mod receiver;
pub mod sender;
pub mod sock;
