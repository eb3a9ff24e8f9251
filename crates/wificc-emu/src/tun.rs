//! TUN devices (Linux Documentation/networking/tuntap.rst): a file descriptor on
//! `/dev/net/tun` bound to a layer-3 device with `TUNSETIFF`, `IFF_TUN | IFF_NO_PI`, so every
//! `read` returns one IP datagram the kernel sent through the device and every `write` hands
//! one datagram to the kernel as if the device had received it. The descriptor is non-blocking
//! (the loop polls it) and close-on-exec (traffic generators started later must not hold it).
//! The device is not made persistent: it disappears when the descriptor is closed, so the
//! emulator's exit, however abrupt, removes it. Moving the device into another network
//! namespace keeps the descriptor working.
//!
//! **GRO.** With `IFF_NAPI` (drivers/net/tun.c `tun_napi_init`, root only) a written datagram
//! is queued and received by the device's NAPI poll through `napi_gro_receive`
//! (`tun_get_user` -> `napi_schedule` -> `tun_napi_poll`), as a NIC driver with NAPI (ath10k,
//! iwlwifi) delivers frames. Each `write` runs its own poll, which would flush GRO at once;
//! the device's `gro_flush_timeout` ([`GRO_FLUSH_TIMEOUT_NS`]) keeps the held skb across
//! polls (`napi_complete_done` then flushes only packets older than a jiffy and arms a timer
//! that flushes the rest), so the datagrams the emulator writes back to back at one model
//! instant (one RX interrupt's batch) merge as in one poll, and GRO's own rules (next in
//! sequence, same options, 64 KB) decide the skbs.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;

/// Longest interface name (Linux IFNAMSIZ less the terminating NUL).
pub const MAX_IFNAME: usize = libc::IFNAMSIZ - 1;
/// `IFF_NAPI` (include/uapi/linux/if_tun.h).
const IFF_NAPI: libc::c_int = 0x0010;
/// The GRO flush timeout of a TUN device with NAPI, ns: longer than the time the emulator
/// takes to write one batch (a few microseconds per datagram, the kernel's receive processing
/// included), far shorter than the gap between two RX interrupts of a Wi-Fi station (the end
/// of one PPDU and the next). An emulation artefact: a received batch's last GRO skb reaches
/// TCP up to this much later than the batch.
pub const GRO_FLUSH_TIMEOUT_NS: u64 = 50_000;

pub struct Tun {
    file: File,
    name: String,
}

impl Tun {
    /// Create the TUN device `name` (at most 15 bytes) in the current namespace; with `napi`,
    /// received datagrams go through NAPI and GRO (see the module documentation).
    pub fn create(name: &str, napi: bool) -> io::Result<Tun> {
        if name.is_empty() || name.len() > MAX_IFNAME {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("interface name {name:?}: expected 1 to {MAX_IFNAME} bytes"),
            ));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open("/dev/net/tun")?;
        // SAFETY: ifreq is plain data; zeroed is a valid value, and we fill the name (NUL
        // terminated: at most 15 bytes in 16) and the flags before the ioctl reads it.
        let rc = unsafe {
            let mut req: libc::ifreq = std::mem::zeroed();
            for (dst, &b) in req.ifr_name.iter_mut().zip(name.as_bytes()) {
                *dst = b as libc::c_char;
            }
            let napi_flag = if napi { IFF_NAPI } else { 0 };
            req.ifr_ifru.ifru_flags =
                (libc::IFF_TUN | libc::IFF_NO_PI | napi_flag) as libc::c_short;
            libc::ioctl(file.as_raw_fd(), libc::TUNSETIFF, &req)
        };
        if rc != 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(e.kind(), format!("TUNSETIFF {name}: {e}")));
        }
        if napi {
            let path = format!("/sys/class/net/{name}/gro_flush_timeout");
            std::fs::write(&path, GRO_FLUSH_TIMEOUT_NS.to_string())
                .map_err(|e| io::Error::new(e.kind(), format!("{path}: {e}")))?;
        }
        Ok(Tun {
            file,
            name: name.to_string(),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }

    /// Read one datagram into `buf`; `Ok(None)` when none is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: reading into a buffer we own, at most its length.
        let n = unsafe { libc::read(self.fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
            _ => Err(e),
        }
    }

    /// Hand one datagram to the kernel.
    pub fn send(&self, datagram: &[u8]) -> io::Result<()> {
        // SAFETY: writing from a buffer we own, at most its length.
        let n = unsafe { libc::write(self.fd(), datagram.as_ptr().cast(), datagram.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Waits for any of a fixed set of descriptors to become readable.
pub struct Poller {
    pfds: Vec<libc::pollfd>,
}

impl Poller {
    pub fn new(fds: &[RawFd]) -> Poller {
        Poller {
            pfds: fds
                .iter()
                .map(|&fd| libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                })
                .collect(),
        }
    }

    /// Wait until a descriptor is readable (or hung up) or `timeout_ns` has passed; an
    /// interrupting signal returns early too. Returns whether a descriptor is ready.
    pub fn wait(&mut self, timeout_ns: u64) -> io::Result<bool> {
        let ts = libc::timespec {
            tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: pfds and ts live across the call; a null sigmask keeps the current mask.
        let rc = unsafe {
            libc::ppoll(
                self.pfds.as_mut_ptr(),
                self.pfds.len() as libc::nfds_t,
                &ts,
                std::ptr::null(),
            )
        };
        if rc < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::Interrupted => Ok(false),
                _ => Err(e),
            };
        }
        Ok(rc > 0)
    }

    /// Whether descriptor `i` (in the order given to [`Poller::new`]) was readable or hung up
    /// at the last [`Poller::wait`].
    pub fn ready(&self, i: usize) -> bool {
        self.pfds[i].revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0
    }
}
