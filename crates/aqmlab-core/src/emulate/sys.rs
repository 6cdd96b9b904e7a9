//! The Linux system calls of the emulator, each wrapped once.
//!
//! TUN devices follow the kernel's `Documentation/networking/tuntap.rst`: open
//! `/dev/net/tun`, `ioctl(TUNSETIFF)` with `IFF_TUN | IFF_NO_PI` (raw IP datagrams, no
//! packet-information prefix); the device lives as long as the descriptor (not
//! persistent), so a crashed emulator leaves no interface behind. It is created in the
//! network namespace the calling thread is in, hence `setns(2)` first. Waiting uses
//! `ppoll(2)` (nanosecond timeout) on `CLOCK_MONOTONIC` deadlines, with the thread's
//! timer slack set to 1 ns (`prctl(PR_SET_TIMERSLACK)`; the default 50 µs would add up
//! to 50 µs to every wake-up).

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::sim::time::Nanos;

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// CLOCK_MONOTONIC in ns (the clock every timestamp of an emulation uses).
#[inline]
pub fn mono_ns() -> Nanos {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Move the calling thread into the network namespace bound at `path`
/// (e.g. `/var/run/netns/NAME`, as `ip netns add` creates it).
pub fn enter_netns(path: &str) -> io::Result<()> {
    let f = std::fs::File::open(path)?;
    // SAFETY: plain syscall on a descriptor we own.
    check(unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) })?;
    Ok(())
}

/// `struct ifreq` as TUNSETIFF reads it: the name, then the flags (a 40-byte union).
#[repr(C)]
struct IfReq {
    name: [u8; 16],
    flags: libc::c_short,
    _pad: [u8; 22],
}

const TUNSETIFF: libc::c_ulong = 0x4004_54ca; // _IOW('T', 202, int)
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;

/// Create TUN device `name` in the current namespace; returns its non-blocking fd.
pub fn open_tun(name: &str) -> io::Result<OwnedFd> {
    if name.is_empty() || name.len() > 15 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("TUN name {name:?}: expected 1 to 15 bytes"),
        ));
    }
    let path = CString::new("/dev/net/tun").expect("no NUL");
    // SAFETY: valid C string; the returned descriptor is owned below.
    let fd = check(unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    })?;
    // SAFETY: `fd` was just opened and is owned by nothing else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut req = IfReq {
        name: [0; 16],
        flags: IFF_TUN | IFF_NO_PI,
        _pad: [0; 22],
    };
    req.name[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: `req` has the layout TUNSETIFF expects and outlives the call.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF, &mut req) })?;
    Ok(fd)
}

/// Make `fd` non-blocking (the control pipe).
pub fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on a caller-provided descriptor.
    let fl = check(unsafe { libc::fcntl(fd, libc::F_GETFL) })?;
    check(unsafe { libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK) })?;
    Ok(())
}

/// Outcome of a non-blocking read.
pub enum Read {
    Got(usize),
    WouldBlock,
    Eof,
}

pub fn read(fd: RawFd, buf: &mut [u8]) -> io::Result<Read> {
    // SAFETY: `buf` is valid for `buf.len()` bytes.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n > 0 {
        return Ok(Read::Got(n as usize));
    }
    if n == 0 {
        return Ok(Read::Eof);
    }
    let e = io::Error::last_os_error();
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(Read::WouldBlock),
        _ => Err(e),
    }
}

pub fn write(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: `buf` is valid for `buf.len()` bytes.
    let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Wait until one of `fds` is readable or `timeout` ns passed (None: forever).
/// Returns a bit mask of the readable ones (bit i: `fds[i]`).
pub fn wait_readable(fds: &[RawFd], timeout: Option<Nanos>) -> io::Result<u32> {
    let mut pfds: [libc::pollfd; 4] = [libc::pollfd {
        fd: -1,
        events: 0,
        revents: 0,
    }; 4];
    for (p, &fd) in pfds.iter_mut().zip(fds) {
        p.fd = fd;
        p.events = libc::POLLIN;
    }
    let ts = timeout.map(|t| libc::timespec {
        tv_sec: (t / 1_000_000_000) as libc::time_t,
        tv_nsec: (t % 1_000_000_000) as libc::c_long,
    });
    let tsp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const _);
    // SAFETY: `pfds` holds `fds.len()` (≤ 4) initialised entries; `tsp` is null or valid.
    let r = unsafe {
        libc::ppoll(
            pfds.as_mut_ptr(),
            fds.len().min(4) as libc::nfds_t,
            tsp,
            std::ptr::null(),
        )
    };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
        return Ok(0);
    }
    Ok(pfds
        .iter()
        .take(fds.len())
        .enumerate()
        .filter(|(_, p)| p.revents != 0)
        .fold(0, |m, (i, _)| m | 1 << i))
}

/// Timer slack of 1 ns for this thread (see the module doc).
pub fn precise_timers() {
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Ask for SCHED_FIFO at `priority`, or one above the priority this process already
/// runs at if that is higher (needs CAP_SYS_NICE); the priority granted, None if refused. The emulator is
/// the wire: a caller started under `chrt -f 20` must not preempt it (SCHED_FIFO runs
/// the higher priority first, and an equal one only when the running task blocks).
/// The kernel's RT throttling (`sched_rt_runtime_us`) still leaves 5 % to other tasks.
pub fn realtime(priority: i32) -> Option<i32> {
    // SAFETY: plain syscalls on the calling thread with valid arguments.
    unsafe {
        let current = match libc::sched_getscheduler(0) {
            libc::SCHED_FIFO | libc::SCHED_RR => {
                let mut p = libc::sched_param { sched_priority: 0 };
                if libc::sched_getparam(0, &mut p) == 0 {
                    p.sched_priority
                } else {
                    0
                }
            }
            _ => 0,
        };
        let max = libc::sched_get_priority_max(libc::SCHED_FIFO);
        let p = libc::sched_param {
            sched_priority: priority.max(current + 1).min(max),
        };
        (libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0).then_some(p.sched_priority)
    }
}

/// The CPUs this thread may run on (`sched_getaffinity(2)`).
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; the size passed is its own.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        check(libc::sched_getaffinity(
            0,
            std::mem::size_of::<libc::cpu_set_t>(),
            &mut set,
        ))?;
        Ok((0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect())
    }
}

/// Run this thread on `cpu` only (`sched_setaffinity(2)`).
pub fn pin_to_cpu(cpu: usize) -> io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    // SAFETY: as in `allowed_cpus`; `cpu` is below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        check(libc::sched_setaffinity(
            0,
            std::mem::size_of::<libc::cpu_set_t>(),
            &set,
        ))
        .map(|_| ())
    }
}
