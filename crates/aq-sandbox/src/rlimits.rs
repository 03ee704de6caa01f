//! Resource limits, set in the command process just before `exec`.

use crate::spec::{Rlimit, RlimitResource};
use crate::syscall::{Call, Fail, check};

fn resource(r: RlimitResource) -> libc::__rlimit_resource_t {
    match r {
        RlimitResource::CpuSeconds => libc::RLIMIT_CPU,
        RlimitResource::AddressSpace => libc::RLIMIT_AS,
        RlimitResource::Processes => libc::RLIMIT_NPROC,
        RlimitResource::OpenFiles => libc::RLIMIT_NOFILE,
        RlimitResource::FileSize => libc::RLIMIT_FSIZE,
    }
}

/// `setrlimit` with soft = hard = `limit.limit`.
pub(crate) fn apply_rlimit(limit: Rlimit, step: u32) -> Result<(), Fail> {
    let value = libc::rlimit {
        rlim_cur: limit.limit,
        rlim_max: limit.limit,
    };
    // SAFETY: value is a valid rlimit.
    check(
        unsafe { libc::setrlimit(resource(limit.resource), &value) }.into(),
        step,
        Call::Setrlimit,
    )
    .map(|_| ())
}
