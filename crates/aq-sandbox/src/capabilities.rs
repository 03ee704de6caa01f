//! Capabilities: the command runs with none, in any set, even when the caller
//! is root (uid 0 inside the user namespace would otherwise get every
//! capability of that namespace back at `execve`).
//!
//! Order inside [`apply_drop_all`]: the bounding set first (dropping from it
//! needs `CAP_SETPCAP`, which the next step removes), then the ambient set,
//! then `capset` with empty effective, permitted and inheritable sets. Then the
//! result is read back; anything left is a failure (fail closed). With the
//! bounding set empty, `execve` of a root-owned or file-capability binary
//! cannot grant anything either (and `no_new_privs` already forbids it).

use crate::syscall::{Call, Fail, check, errno};

const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Drop every capability from every set, then check that none is left.
pub(crate) fn apply_drop_all(step: u32) -> Result<(), Fail> {
    // Bounding set: capabilities 0..=cap_last_cap; the kernel answers EINVAL
    // past the last one it knows, which ends the loop.
    for cap in 0..64 {
        // SAFETY: prctl with integer arguments.
        if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) } == -1 {
            if errno() == libc::EINVAL && cap > 0 {
                break;
            }
            return Err(Fail {
                step,
                call: Call::Prctl,
                errno: errno(),
            });
        }
    }
    // SAFETY: prctl with integer arguments.
    let ret = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        )
    };
    check(ret.into(), step, Call::Prctl)?;
    let header = CapHeader {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let data = [CapData::default(); 2];
    // SAFETY: header and a two-element data array, as capset v3 expects.
    let ret = unsafe { libc::syscall(libc::SYS_capset, &header, data.as_ptr()) };
    check(ret, step, Call::Capset)?;
    if capabilities_left(step)? {
        return Err(Fail {
            step,
            call: Call::CapabilitiesLeft,
            errno: 0,
        });
    }
    Ok(())
}

/// Whether any capability remains in the effective, permitted, inheritable,
/// bounding or ambient set.
fn capabilities_left(step: u32) -> Result<bool, Fail> {
    let mut header = CapHeader {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: header and a two-element data array, as capget v3 expects.
    let ret = unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) };
    check(ret, step, Call::Capget)?;
    if data
        .iter()
        .any(|d| d.effective | d.permitted | d.inheritable != 0)
    {
        return Ok(true);
    }
    for cap in 0..64 {
        // SAFETY: prctl with integer arguments.
        let in_bounding = unsafe { libc::prctl(libc::PR_CAPBSET_READ, cap, 0, 0, 0) };
        // SAFETY: prctl with integer arguments.
        let in_ambient =
            unsafe { libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_IS_SET, cap, 0, 0) };
        if in_bounding == -1 {
            break; // past the last capability
        }
        if in_bounding == 1 || in_ambient == 1 {
            return Ok(true);
        }
    }
    Ok(false)
}
