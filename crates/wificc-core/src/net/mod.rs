//! Packets, links, queues.

pub mod packet;
pub mod qdisc;
