//! The hosts of an emulated run: one network namespace per host, each with a TUN device, its
//! address and the scenario's Linux stack settings; and their guaranteed removal.
//!
//! **Names.** Every namespace and device is named `wcc-<tag>-s` (the server) or
//! `wcc-<tag>-c<i>` (client i), at most 15 bytes (IFNAMSIZ), so `wificc-emu cleanup` can find
//! anything a run left behind by its prefix, and runs with different tags can coexist.
//!
//! **Addresses.** The emulated network is 198.18.0.0/15, reserved for benchmarking network
//! devices (RFC 2544, RFC 6890): the server is 198.18.0.1, client i is 198.18.(1 + i / 250).
//! (1 + i % 250). A host's only route is that /15 through its TUN device, so traffic can go to
//! the other emulated hosts and nowhere else.
//!
//! **Stack settings.** What Linux offers per namespace or per route is set from the scenario's
//! `[stack]`: `tcp_ecn` (1 to request ECN, else the kernel default 2, which only accepts it),
//! `tcp_limit_output_bytes`, the pacing ratios (`tcp_pacing_ss_ratio` 200% and
//! `tcp_pacing_ca_ratio` 120% times `tp`), `tcp_min_tso_segs`, `tcp_tso_rtt_log`; and on the
//! route `initcwnd`, `rto_min`, `advmss` (MSS + 12 bytes of timestamp option, Linux's
//! `tcp_advertise_mss`), and `quickack` when delayed ACKs are off; the fq qdisc on the device
//! when `fq_pacing` is set. Every namespace also gets `tcp_no_metrics_save` (no cached
//! ssthresh or RTT from an earlier connection: the simulator has no such cache), IPv6 off (the
//! emulated network is IPv4), and send and receive buffers that can grow to
//! [`SOCKET_BUFFER_MAX`] (the simulator's receive window never limits). What has no kernel
//! knob is listed in [`Network::notes`].
//!
//! **Removal.** [`Network`] deletes every namespace it created when dropped, whether the run
//! ended, failed part-way through the setup, or was interrupted; the TUN devices go with their
//! descriptors. [`cleanup`] removes whatever a killed emulator left: namespaces and root
//! namespace devices whose names start with a given `wcc-` prefix.

use std::fs::File;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::process::Command;

use wificc_core::net::packet::TCP_IP_HEADER;
use wificc_core::parse::show_secs;
use wificc_core::scenario::StackSpec;
use wificc_core::tcp::config::TsqMode;
use wificc_core::units::NSEC_PER_MSEC;

use crate::tun::{Tun, MAX_IFNAME};

/// Every name the emulator creates starts with this.
pub const PREFIX: &str = "wcc-";
/// The emulated network: 198.18.0.0/15 (RFC 2544 benchmarking range).
pub const NETWORK: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 0);
pub const NETWORK_PREFIX_LEN: u8 = 15;
/// Clients per /24 of client addresses (.1 to .250).
const CLIENTS_PER_OCTET: usize = 250;
/// Most clients: the names of client 0 to 999 fit in 15 bytes with the longest tag.
pub const MAX_CLIENTS: usize = 1000;
/// Longest run tag: `wcc-` + tag + `-c` + 3 digits fits in 15 bytes.
pub const MAX_TAG: usize = 6;
/// Largest send and receive buffer (tcp_wmem[2], tcp_rmem[2]), bytes: 64 MiB, several BDPs of
/// a 1 Gbit/s, 100 ms path.
pub const SOCKET_BUFFER_MAX: u64 = 64 << 20;
/// Transmit queue length of the TUN devices, packets: Linux's Ethernet default
/// (DEFAULT_TX_QUEUE_LEN) instead of TUN's 500.
pub const TXQUEUELEN: u32 = 1000;
/// Linux's pacing ratios in percent (net.ipv4.tcp_pacing_ss_ratio, tcp_pacing_ca_ratio).
const PACING_SS_RATIO: u32 = 200;
const PACING_CA_RATIO: u32 = 120;
/// Bytes of the TCP timestamp option (with padding) that the advertised MSS does not count.
const TIMESTAMP_OPTION: u32 = 12;
/// Where `ip netns` keeps its namespaces (iproute2 NETNS_RUN_DIR).
const NETNS_RUN_DIR: &str = "/var/run/netns";

/// Address of host `h` (0 the server, c + 1 client c).
pub fn host_addr(h: usize) -> Ipv4Addr {
    if h == 0 {
        return Ipv4Addr::new(198, 18, 0, 1);
    }
    let c = h - 1;
    let block = 1 + c / CLIENTS_PER_OCTET;
    Ipv4Addr::new(198, 18, block as u8, (1 + c % CLIENTS_PER_OCTET) as u8)
}

/// The host an address belongs to, among `hosts` hosts.
pub fn host_of(addr: Ipv4Addr, hosts: usize) -> Option<usize> {
    let o = addr.octets();
    if o[0] != 198 || o[1] != 18 {
        return None;
    }
    let h = match (o[2] as usize, o[3] as usize) {
        (0, 1) => 0,
        (0, _) => return None,
        (b, last) if (1..=CLIENTS_PER_OCTET).contains(&last) => (b - 1) * CLIENTS_PER_OCTET + last,
        _ => return None,
    };
    (h < hosts).then_some(h)
}

/// Name of host `h`'s namespace and TUN device in run `tag`.
pub fn host_name(tag: &str, h: usize) -> String {
    if h == 0 {
        format!("{PREFIX}{tag}-s")
    } else {
        format!("{PREFIX}{tag}-c{}", h - 1)
    }
}

/// Check a run tag: 1 to 6 lowercase letters or digits.
pub fn check_tag(tag: &str) -> Result<(), String> {
    let ok = !tag.is_empty()
        && tag.len() <= MAX_TAG
        && tag
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "--tag {tag:?}: expected 1 to {MAX_TAG} lowercase letters or digits"
        ))
    }
}

/// The per-namespace sysctls for `stack`: (path under /proc/sys, value).
pub fn stack_sysctls(stack: &StackSpec) -> Vec<(&'static str, String)> {
    let ecn = if stack.ecn { 1 } else { 2 };
    // The scenario's values, or its kernel profile's.
    let profile = stack.profile();
    let limit_output_bytes = stack
        .limit_output_bytes
        .map_or(profile.limit_output_bytes, |s| s.0);
    let tso_rtt_log = stack.tso_rtt_log.unwrap_or(profile.tso_rtt_log);
    vec![
        ("net/ipv6/conf/all/disable_ipv6", "1".into()),
        ("net/ipv6/conf/default/disable_ipv6", "1".into()),
        ("net/ipv4/tcp_no_metrics_save", "1".into()),
        ("net/ipv4/tcp_ecn", ecn.to_string()),
        (
            "net/ipv4/tcp_limit_output_bytes",
            limit_output_bytes.to_string(),
        ),
        (
            "net/ipv4/tcp_pacing_ss_ratio",
            (PACING_SS_RATIO * stack.tp).to_string(),
        ),
        (
            "net/ipv4/tcp_pacing_ca_ratio",
            (PACING_CA_RATIO * stack.tp).to_string(),
        ),
        ("net/ipv4/tcp_min_tso_segs", stack.min_tso_segs.to_string()),
        ("net/ipv4/tcp_tso_rtt_log", tso_rtt_log.to_string()),
        (
            "net/ipv4/tcp_rmem",
            format!("4096 131072 {SOCKET_BUFFER_MAX}"),
        ),
        (
            "net/ipv4/tcp_wmem",
            format!("4096 16384 {SOCKET_BUFFER_MAX}"),
        ),
    ]
}

/// The metrics of the route to the emulated network: `ip route` keywords and values.
pub fn route_metrics(stack: &StackSpec) -> Vec<String> {
    let rto_ms = stack.rto_min.0.div_ceil(NSEC_PER_MSEC);
    let mut m = vec![
        "initcwnd".to_string(),
        stack.init_cwnd.to_string(),
        "rto_min".to_string(),
        format!("{rto_ms}ms"),
        "advmss".to_string(),
        (stack.mss + TIMESTAMP_OPTION).to_string(),
    ];
    if !stack.delayed_ack {
        m.extend(["quickack".to_string(), "1".to_string()]);
    }
    m
}

/// The stack settings that no kernel knob reproduces through a TUN device, as sentences.
pub fn stack_notes(stack: &StackSpec) -> Vec<String> {
    let mut notes = vec![format!(
        "stack.tsq = {:?}: not reproduced: the TUN driver frees a sent packet's buffer as soon \
         as it is queued for the emulator, so TCP Small Queues never holds the sender back \
         (the simulator models it)",
        stack.tsq
    )];
    if let Ok((TsqMode::Rate, shift)) = stack.tsq_mode() {
        if shift != 10 {
            notes.push(format!(
                "sk_pacing_shift {shift}: not settable from user space (a driver sets it); \
                 the kernel's shift 10 sizes TSO bursts"
            ));
        }
    }
    if let Some(d) = stack.read_delay {
        notes.push(format!(
            "stack.read_delay = {}: not applied: the kernel's receiver reads when the \
             emulator's reading thread wakes",
            show_secs(d.0)
        ));
    }
    if !stack.offloads {
        notes.push(
            "stack.offloads = false: not applied (TUN devices segment in software)".to_string(),
        );
    }
    if stack.tp != 1 {
        notes.push(format!(
            "stack.tp = {}: applied to the kernel's pacing ratios; the BBR family's own pacing \
             gain is not scaled",
            stack.tp
        ));
    }
    if stack.mss + TCP_IP_HEADER != stack.mtu {
        notes.push(format!(
            "stack.mss = {}: advertised as MSS {} on the route; the device MTU is {}",
            stack.mss,
            stack.mss + TIMESTAMP_OPTION,
            stack.mtu
        ));
    }
    notes
}

/// The tc commands (after `tc -n NETNS`) that give device `dev` the stack's qdiscs: a host
/// shaper as htb at the root (one class, rate = ceil, burst = cburst, tc's `overhead`), and
/// fq for `fq_pacing` (at the root, or as the shaper's leaf).
pub fn qdisc_commands(dev: &str, stack: &StackSpec) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    let words = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
    if let Some(h) = &stack.host_shaper {
        commands.push(words(&format!(
            "qdisc replace dev {dev} root handle 1: htb default 1"
        )));
        // quantum only spreads the DRR rounds among classes: with one class it changes nothing,
        // and an explicit one keeps tc from warning at high rates.
        commands.push(words(&format!(
            "class add dev {dev} parent 1: classid 1:1 htb rate {r}bit ceil {r}bit burst {b}b \
             cburst {b}b overhead {o} quantum 65536",
            r = h.rate.0,
            b = h.burst.0,
            o = h.overhead
        )));
    }
    if stack.fq_pacing {
        let parent = if stack.host_shaper.is_some() {
            "parent 1:1"
        } else {
            "root"
        };
        commands.push(words(&format!("qdisc replace dev {dev} {parent} fq")));
    }
    commands
}

/// Run `tc -n netns` with `args`; an error carries the command and its stderr.
fn tc(netns: &str, args: &[String]) -> io::Result<()> {
    let mut all = vec!["-n", netns];
    all.extend(args.iter().map(String::as_str));
    iproute2("tc", &all).map(drop)
}

/// One emulated host.
pub struct Host {
    pub name: String,
    pub addr: Ipv4Addr,
    pub tun: Tun,
}

/// The namespaces of one run; dropping it removes them.
pub struct Network {
    pub hosts: Vec<Host>,
    /// Namespaces created so far, removed on drop.
    created: Vec<String>,
    pub notes: Vec<String>,
}

/// Run `ip` with `args`; an error carries the command and its stderr.
fn ip(args: &[&str]) -> io::Result<String> {
    iproute2("ip", args)
}

/// Run iproute2's `tool` with `args`: its output, or an error with the command and its stderr.
fn iproute2(tool: &str, args: &[&str]) -> io::Result<String> {
    let out = Command::new(tool)
        .args(args)
        .output()
        .map_err(|e| io::Error::new(e.kind(), format!("cannot run {tool} (iproute2): {e}")))?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "{tool} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Run `f` on a thread inside namespace `name` (setns applies to the calling thread only).
fn in_netns<T: Send>(name: &str, f: impl FnOnce() -> io::Result<T> + Send) -> io::Result<T> {
    let ns = File::open(format!("{NETNS_RUN_DIR}/{name}"))?;
    std::thread::scope(|s| {
        s.spawn(|| {
            // SAFETY: setns on this thread with a namespace descriptor we hold open.
            if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                return Err(io::Error::last_os_error());
            }
            f()
        })
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("namespace setup thread panicked")))
    })
}

impl Network {
    /// Create the server and `clients` client namespaces of run `tag`, each with its TUN
    /// device, address, route and the settings of `stack` (MTU included); with `client_gro`
    /// the clients' devices deliver through NAPI and GRO, as a Wi-Fi station whose driver has
    /// NAPI ([`crate::tun`]).
    pub fn create(
        tag: &str,
        clients: usize,
        stack: &StackSpec,
        client_gro: bool,
    ) -> io::Result<Network> {
        check_tag(tag).map_err(|m| io::Error::new(io::ErrorKind::InvalidInput, m))?;
        if clients == 0 || clients > MAX_CLIENTS {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("path.clients = {clients}: expected 1 to {MAX_CLIENTS}"),
            ));
        }
        let mut net = Network {
            hosts: Vec::new(),
            created: Vec::new(),
            notes: stack_notes(stack),
        };
        for h in 0..=clients {
            let host = net.add_host(tag, h, stack, client_gro && h > 0)?;
            net.hosts.push(host);
        }
        Ok(net)
    }

    fn add_host(&mut self, tag: &str, h: usize, stack: &StackSpec, gro: bool) -> io::Result<Host> {
        let name = host_name(tag, h);
        debug_assert!(name.len() <= MAX_IFNAME);
        let addr = host_addr(h);
        ip(&["netns", "add", &name])?;
        self.created.push(name.clone());
        let tun = Tun::create(&name, gro)?;
        ip(&["link", "set", "dev", &name, "netns", &name])?;
        let n = name.as_str();
        ip(&["-n", n, "link", "set", "dev", "lo", "up"])?;
        let (mtu, qlen) = (stack.mtu.to_string(), TXQUEUELEN.to_string());
        ip(&[
            "-n",
            n,
            "link",
            "set",
            "dev",
            n,
            "mtu",
            &mtu,
            "txqueuelen",
            &qlen,
            "up",
        ])?;
        let cidr = format!("{addr}/32");
        ip(&["-n", n, "addr", "add", &cidr, "dev", n])?;
        let net = format!("{NETWORK}/{NETWORK_PREFIX_LEN}");
        let src = addr.to_string();
        let metrics = route_metrics(stack);
        let mut route = vec!["-n", n, "route", "add", &net, "dev", n, "src", &src];
        route.extend(metrics.iter().map(String::as_str));
        ip(&route)?;
        let sysctls = stack_sysctls(stack);
        let missing = in_netns(n, || {
            let mut missing = Vec::new();
            for (key, value) in &sysctls {
                let path = format!("/proc/sys/{key}");
                match std::fs::write(&path, value) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::NotFound => missing.push(*key),
                    Err(e) => {
                        return Err(io::Error::new(e.kind(), format!("{path} = {value}: {e}")))
                    }
                }
            }
            Ok(missing)
        })?;
        if h == 0 {
            for key in missing {
                self.notes
                    .push(format!("{key}: not in this kernel; left unset"));
            }
        }
        for command in qdisc_commands(n, stack) {
            tc(n, &command)?;
        }
        Ok(Host { name, addr, tun })
    }

    /// Each host's TUN device's (receive, transmit) drop counts: a transmit drop is a packet
    /// the host's kernel sent that the device's ring (txqueuelen) had no room for because
    /// the emulator read too late; it never entered the emulated path. None where unreadable.
    /// (`/proc/net` follows the process's main thread; the thread that entered the namespace
    /// reads its own through `/proc/thread-self`.)
    pub fn tun_drops(&self) -> Vec<Option<(u64, u64)>> {
        self.hosts
            .iter()
            .map(|h| {
                in_netns(&h.name, || {
                    std::fs::read_to_string("/proc/thread-self/net/dev")
                })
                .ok()
                .and_then(|text| dev_drops(&text, &h.name))
            })
            .collect()
    }

    /// Remove the namespaces now (also done on drop); returns the first error.
    pub fn remove(&mut self) -> io::Result<()> {
        let mut first = Ok(());
        while let Some(name) = self.created.pop() {
            if let Err(e) = ip(&["netns", "del", &name]) {
                if first.is_ok() {
                    first = Err(e);
                }
            }
        }
        first
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        if let Err(e) = self.remove() {
            eprintln!("wificc-emu: removing namespaces: {e}");
        }
    }
}

/// Remove every namespace, and every device of the root namespace, whose name starts with
/// `prefix` (which must start with `wcc-`); returns the names removed.
pub fn cleanup(prefix: &str) -> io::Result<Vec<String>> {
    if !prefix.starts_with(PREFIX) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("--prefix {prefix:?}: expected a prefix starting with {PREFIX:?}"),
        ));
    }
    let mut removed = Vec::new();
    for name in netns_names(&ip(&["netns", "list"])?) {
        if name.starts_with(prefix) {
            ip(&["netns", "del", &name])?;
            removed.push(name);
        }
    }
    for name in link_names(&ip(&["-o", "link", "show"])?) {
        if name.starts_with(prefix) {
            ip(&["link", "del", "dev", &name])?;
            removed.push(name);
        }
    }
    Ok(removed)
}

/// The (receive, transmit) drop counts of device `dev` in `/proc/net/dev` text (its columns:
/// receive bytes, packets, errs, drop, ...; transmit bytes, packets, errs, drop, ...).
fn dev_drops(text: &str, dev: &str) -> Option<(u64, u64)> {
    text.lines().find_map(|l| {
        let (name, fields) = l.split_once(':')?;
        if name.trim() != dev {
            return None;
        }
        let f: Vec<u64> = fields
            .split_whitespace()
            .map(|x| x.parse().unwrap_or(0))
            .collect();
        Some((*f.get(3)?, *f.get(11)?))
    })
}

/// Namespace names in `ip netns list` output ("name" or "name (id: 3)" per line).
fn netns_names(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// Device names in `ip -o link show` output ("3: name: <...>" or "3: name@peer: <...>").
fn link_names(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.split(": ").nth(1))
        .map(|n| n.split('@').next().unwrap_or(n).to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stack(extra: serde_json::Value) -> StackSpec {
        serde_json::from_value(extra).unwrap()
    }

    #[test]
    fn addresses_and_hosts_map_both_ways() {
        assert_eq!(host_addr(0), Ipv4Addr::new(198, 18, 0, 1));
        assert_eq!(host_addr(1), Ipv4Addr::new(198, 18, 1, 1));
        // Client 249 is the last of block 1; client 250 opens block 2.
        assert_eq!(host_addr(250), Ipv4Addr::new(198, 18, 1, 250));
        assert_eq!(host_addr(251), Ipv4Addr::new(198, 18, 2, 1));
        // The last client, 999, is the 249th (from 0) of block 4.
        assert_eq!(host_addr(MAX_CLIENTS), Ipv4Addr::new(198, 18, 4, 250));
        for h in [0, 1, 250, 251, MAX_CLIENTS] {
            assert_eq!(host_of(host_addr(h), MAX_CLIENTS + 1), Some(h), "host {h}");
        }
        assert_eq!(host_of(host_addr(3), 3), None, "only hosts 0..3 exist");
        assert_eq!(host_of(Ipv4Addr::new(198, 18, 0, 2), 10), None);
        assert_eq!(host_of(Ipv4Addr::new(198, 18, 1, 251), 1000), None);
        assert_eq!(host_of(Ipv4Addr::new(10, 0, 0, 1), 10), None);
    }

    #[test]
    fn names_fit_interface_names() {
        assert_eq!(host_name("abc", 0), "wcc-abc-s");
        assert_eq!(host_name("abc", 1), "wcc-abc-c0");
        assert_eq!(host_name("zzzzzz", 1000).len(), MAX_IFNAME);
        assert!(check_tag("a1b2c3").is_ok());
        for bad in ["", "toolong", "Upper", "a-b"] {
            let e = check_tag(bad).unwrap_err();
            assert!(e.contains(&format!("{bad:?}")), "{e}");
        }
    }

    #[test]
    fn stack_settings_become_sysctls_and_route_metrics() {
        // Defaults: ECN not requested (2), 1 MiB output limit, ratios 200/120 x tp 1, min TSO
        // 2, TSO RTT log 9; route initcwnd 10, rto_min 200ms, advmss 1448 + 12.
        let s = stack(json!({}));
        let sys = stack_sysctls(&s);
        let get = |k: &str| sys.iter().find(|(p, _)| *p == k).unwrap().1.clone();
        assert_eq!(get("net/ipv4/tcp_ecn"), "2");
        assert_eq!(get("net/ipv4/tcp_limit_output_bytes"), "1048576");
        assert_eq!(get("net/ipv4/tcp_pacing_ss_ratio"), "200");
        assert_eq!(get("net/ipv4/tcp_pacing_ca_ratio"), "120");
        assert_eq!(get("net/ipv4/tcp_min_tso_segs"), "2");
        assert_eq!(get("net/ipv4/tcp_tso_rtt_log"), "9");
        assert_eq!(get("net/ipv4/tcp_rmem"), "4096 131072 67108864");
        assert_eq!(
            route_metrics(&s),
            ["initcwnd", "10", "rto_min", "200ms", "advmss", "1460"]
        );
        // ECN on, tp 3 (ratios 600/360), initcwnd 4, rto_min 1.5 ms rounded up to 2 ms, no
        // delayed ACK.
        let s = stack(
            json!({"ecn": true, "tp": 3, "init_cwnd": 4, "rto_min": "1500us",
                             "delayed_ack": false}),
        );
        let sys = stack_sysctls(&s);
        let get = |k: &str| sys.iter().find(|(p, _)| *p == k).unwrap().1.clone();
        assert_eq!(get("net/ipv4/tcp_ecn"), "1");
        assert_eq!(get("net/ipv4/tcp_pacing_ss_ratio"), "600");
        assert_eq!(get("net/ipv4/tcp_pacing_ca_ratio"), "360");
        assert_eq!(
            route_metrics(&s),
            ["initcwnd", "4", "rto_min", "2ms", "advmss", "1460", "quickack", "1"]
        );
    }

    #[test]
    fn a_host_shaper_becomes_htb_with_fq_as_its_leaf() {
        let plain = qdisc_commands("d", &stack(serde_json::json!({})));
        assert!(plain.is_empty());
        let fq = qdisc_commands("d", &stack(serde_json::json!({"fq_pacing": true})));
        assert_eq!(fq, vec![vec!["qdisc", "replace", "dev", "d", "root", "fq"]]);
        let shaped = qdisc_commands(
            "d",
            &stack(serde_json::json!({
                "fq_pacing": true,
                "host_shaper": {"rate": "20mbit", "overhead": 14}
            })),
        );
        let lines: Vec<String> = shaped.iter().map(|c| c.join(" ")).collect();
        assert_eq!(
            lines,
            vec![
                "qdisc replace dev d root handle 1: htb default 1",
                "class add dev d parent 1: classid 1:1 htb rate 20000000bit ceil 20000000bit \
                 burst 1600b cburst 1600b overhead 14 quantum 65536",
                "qdisc replace dev d parent 1:1 fq",
            ]
        );
    }

    #[test]
    fn notes_name_what_is_not_reproduced() {
        let n = stack_notes(&stack(json!({})));
        assert_eq!(n.len(), 1);
        assert!(
            n[0].starts_with("stack.tsq = \"default\": not reproduced"),
            "{n:?}"
        );
        let n = stack_notes(&stack(json!({"tsq": "4ms", "offloads": false, "tp": 2})));
        assert_eq!(n.len(), 4, "{n:?}");
        assert!(n[1].starts_with("sk_pacing_shift 8:"), "{n:?}");
        assert!(n[2].starts_with("stack.offloads = false"), "{n:?}");
        assert!(n[3].starts_with("stack.tp = 2"), "{n:?}");
    }

    #[test]
    fn device_drops_are_read_from_proc_net_dev() {
        let text = "Inter-|   Receive                            |  Transmit\n \
             face |bytes packets errs drop fifo frame compressed multicast|bytes packets errs drop fifo colls carrier compressed\n    \
             lo: 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n\
             wcc-ab-s: 100 10 0 7 0 0 0 0 2000 20 0 103 0 0 0 0\n";
        assert_eq!(dev_drops(text, "wcc-ab-s"), Some((7, 103)));
        assert_eq!(dev_drops(text, "lo"), Some((0, 0)));
        assert_eq!(dev_drops(text, "wcc-ab-c0"), None);
    }

    #[test]
    fn listings_are_parsed() {
        let netns = "wcc-ab-s (id: 1)\nwcc-ab-c0 (id: 0)\nother\n";
        assert_eq!(netns_names(netns), ["wcc-ab-s", "wcc-ab-c0", "other"]);
        let links = "1: lo: <LOOPBACK,UP> mtu 65536\n7: wcc-x-s@NONE: <POINTOPOINT> mtu 1500\n";
        assert_eq!(link_names(links), ["lo", "wcc-x-s"]);
    }

    #[test]
    fn cleanup_refuses_foreign_prefixes() {
        for bad in ["", "eth", "wcc"] {
            let e = cleanup(bad).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
            assert!(e.to_string().contains(&format!("{bad:?}")));
        }
    }
}
