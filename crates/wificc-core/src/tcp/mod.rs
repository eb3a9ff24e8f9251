//! The Linux-like TCP sender and receiver.

pub mod config;
pub mod rate;
pub mod rate_sample;
pub mod receiver;
pub mod sender;
pub mod sock;
