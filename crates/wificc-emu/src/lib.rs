//! wificc-emu: wificc-core's link models applied to real packets, driven by the wall clock.
//!
//! **What it builds.** One network namespace per host of a scenario's path (the server and each
//! client or Wi-Fi station), each with a loopback and one TUN device, in the spirit of Mahimahi
//! (Netravali et al., "Mahimahi: Accurate Record-and-Replay for HTTP", USENIX ATC 2015), which also
//! shells traffic through TUN devices. The emulator process stays in the root namespace and holds
//! the file descriptor of every TUN device: a packet a host's kernel sends leaves through its TUN
//! device and is read here; it then crosses the same [`wificc_core::net::link::Link`]s the
//! simulator builds for the scenario, through the simulator's own network and dispatch
//! ([`wificc_core::net::network::Network`], built by [`wificc_core::scenario::build_network`]; wired: the client's
//! NIC, the bottleneck with its qdisc and buffer, half the base RTT of propagation each way, the
//! server's NIC; trace: Mahimahi-style trace links; Wi-Fi: the server's NIC, the backhaul and the
//! [`wificc_core::net::wifi::Bss`] of the AP and its stations, so a download is aggregated into
//! A-MPDUs at the AP from whatever its TXQ holds) and is written into the destination host's TUN
//! device when the model says it arrives. The kernels in the namespaces run real TCP (any
//! congestion control they have, including BPF ones) over that path; nothing else can reach it, and
//! nothing in it reaches anything else, because the namespaces hold no other device and no route
//! beyond the emulated network (198.18.0.0/15, the benchmarking range of RFC 2544).
//!
//! **Time.** The links take explicit times: a packet read from a TUN device is accepted at the
//! instant it was read; the end of a transmission and the arrival of a packet at the end of the
//! delay line are events at the times the model computes, handled in time order at those model
//! times however late the process gets to them, so lateness never accumulates into the model.
//! Only the write of a packet into its destination happens at a real instant, and its lateness
//! (actual minus scheduled delivery time) is measured for every packet ([`clock::Lateness`]).
//! To keep it small on a busy machine the loop sleeps in `ppoll` (woken early by a packet to
//! read) until a short spin window before the next event, then spins on the clock; the process
//! asks for a real-time scheduling class so that its wake-ups are not delayed by other work.
//!
//! **What a TUN device cannot reproduce.** The TUN driver frees ("orphans") a sent packet's
//! socket buffer as soon as the packet is queued for the reader, so the sender's TCP Small
//! Queues budget is released at once: TSQ and the pacing shift of the scenario's stack are not
//! reproduced at the sender (the simulator models them; the emulator reports it). On a Wi-Fi
//! path this matters for uploads: the station's radio aggregates whatever its kernel hands
//! over at once, where the simulator's TSQ would hold the sender back (the run's notes say so);
//! downloads reach the AP through the backhaul and aggregate there as in the simulator. A
//! station whose driver delivers through NAPI (`driver.gro`: ath10k, iwlwifi) gets a TUN
//! device with `IFF_NAPI` and a GRO flush timeout, so the datagrams of one RX batch reach its
//! TCP as GRO skbs ([`tun`]); the others receive each datagram alone, as ath9k's stack does.
//! The pure ACKs every receiver writes are counted per connection ([`acks`]). Linux
//! stack settings that have a per-namespace or per-route form (ECN, initial cwnd, RTO floor,
//! delayed ACK, output-bytes limit, pacing ratios, minimum TSO segments, fq pacing) are applied
//! in the namespaces ([`netns`]).
//!
//! **Clean-up.** Namespaces are created through `ip netns` and removed when the run ends,
//! fails or is interrupted (SIGINT, SIGTERM, SIGHUP, the parent's death, or end of its standard
//! input); TUN devices are not persistent, so they vanish with the emulator's file descriptors
//! or with their namespace. `wificc-emu cleanup` removes anything left under a name prefix.

pub mod acks;
pub mod clock;
pub mod emulator;
pub mod ip;
pub mod netns;
pub mod path;
pub mod signals;
pub mod slots;
pub mod tun;
