//! Stop requests: SIGINT, SIGTERM and SIGHUP set a flag that the loop polls, so the run ends
//! through the normal path that removes the namespaces. The parent's death is turned into a
//! SIGTERM (`PR_SET_PDEATHSIG`), so a killed front end does not leave an emulator running.
//! SIGPIPE is ignored: a closed standard output must fail a write, not kill the process before
//! it has cleaned up.

use std::sync::atomic::{AtomicI32, Ordering};

/// The signal that asked to stop, 0 while none has.
static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    STOP_SIGNAL.store(sig, Ordering::SeqCst);
}

/// Install the handlers and the parent-death signal.
pub fn install() -> std::io::Result<()> {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe; the
        // sigaction struct is fully initialised before use.
        let rc = unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as libc::sighandler_t;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut())
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    // SAFETY: plain syscalls with constant arguments.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        let parent = libc::getppid();
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // The parent may have died before the request took effect (we were re-parented).
        if libc::getppid() != parent {
            STOP_SIGNAL.store(libc::SIGTERM, Ordering::SeqCst);
        }
    }
    Ok(())
}

/// The signal that asked to stop, if any.
pub fn stop_requested() -> Option<i32> {
    match STOP_SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_sets_the_stop_flag() {
        install().unwrap();
        assert_eq!(stop_requested(), None);
        // SAFETY: raising a signal whose handler we installed just above.
        unsafe { libc::raise(libc::SIGHUP) };
        assert_eq!(stop_requested(), Some(libc::SIGHUP));
        STOP_SIGNAL.store(0, Ordering::SeqCst);
    }
}
