//! Secret reads: the fake key, credentials, `.env` and `.pem` must read
//! empty or not at all, by every route (links, `/proc`, a file handle).

use std::ffi::CString;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{CATALOG_MARKER, Context, Outcome, SSH_KEY_MARKER, contains, errno_text};

/// Read `path`: the boundary held when it cannot be read or holds nothing of the secret.
pub(super) fn read_secret(path: &Path, marker: &str) -> Outcome {
    match std::fs::read(path) {
        Err(e) => Outcome::Held(errno_text(&e)),
        Ok(data) if contains(&data, marker.as_bytes()) => {
            Outcome::Leak(format!("read the fake secret ({} bytes)", data.len()))
        }
        Ok(data) if data.is_empty() => Outcome::Held("read 0 bytes: masked".to_string()),
        Ok(data) => Outcome::Held(format!("read {} bytes, none of the secret", data.len())),
    }
}

pub(super) fn list_secret_dir(dir: &Path) -> Outcome {
    match std::fs::read_dir(dir) {
        Err(e) => Outcome::Held(errno_text(&e)),
        Ok(entries) => {
            let names: Vec<String> = entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            if names.is_empty() {
                Outcome::Held("empty: masked".to_string())
            } else {
                Outcome::Leak(format!("lists {}", names.join(", ")))
            }
        }
    }
}

pub(super) fn secret_via_symlink(c: &Context) -> Outcome {
    let link = c.workspace.join("aq-verify-key-link");
    let _ = std::fs::remove_file(&link);
    if let Err(e) = std::os::unix::fs::symlink(c.ssh_key(), &link) {
        return Outcome::Error(format!(
            "cannot make a symlink in the workspace: {}",
            errno_text(&e)
        ));
    }
    read_secret(&link, SSH_KEY_MARKER)
}

pub(super) fn secret_via_hard_link(c: &Context) -> Outcome {
    let link = c.workspace.join("aq-verify-key-hardlink");
    let _ = std::fs::remove_file(&link);
    match std::fs::hard_link(c.ssh_key(), &link) {
        Err(e) => Outcome::Held(format!("link: {}", errno_text(&e))),
        Ok(()) => read_secret(&link, SSH_KEY_MARKER),
    }
}

pub(super) fn secret_via_child_cwd(c: &Context) -> Outcome {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return Outcome::Error(format!("cannot find aq: {}", errno_text(&e))),
    };
    let child = Command::new(exe)
        .args(["__probe", "helper-hold"])
        .current_dir(&c.home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn();
    let mut child = match child {
        Ok(ch) => ch,
        Err(e) => {
            return Outcome::Error(format!("cannot start a child in ~: {}", errno_text(&e)));
        }
    };
    let path = PathBuf::from(format!("/proc/{}/cwd/.ssh/id_ed25519", child.id()));
    let outcome = read_secret(&path, SSH_KEY_MARKER);
    let _ = child.kill();
    let _ = child.wait();
    outcome
}

/// `struct file_handle` with room for any handle.
#[repr(C)]
pub(super) struct FileHandle {
    handle_bytes: u32,
    handle_type: i32,
    f_handle: [u8; 128],
}

/// The file handle of `path` (`name_to_handle_at`), as hex: bytes, type, handle.
pub fn file_handle_hex(path: &Path) -> io::Result<String> {
    let c = CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)?;
    let mut h = FileHandle {
        handle_bytes: 128,
        handle_type: 0,
        f_handle: [0; 128],
    };
    let mut mount_id: libc::c_int = 0;
    // SAFETY: c is NUL-terminated; h has room for handle_bytes bytes.
    let r = unsafe {
        libc::syscall(
            libc::SYS_name_to_handle_at,
            libc::AT_FDCWD,
            c.as_ptr(),
            &mut h as *mut FileHandle,
            &mut mount_id as *mut libc::c_int,
            0,
        )
    };
    if r == -1 {
        return Err(io::Error::last_os_error());
    }
    let n = (h.handle_bytes as usize).min(128);
    let mut hex = format!("{:08x}{:08x}", h.handle_bytes, h.handle_type as u32);
    for b in &h.f_handle[..n] {
        hex.push_str(&format!("{b:02x}"));
    }
    Ok(hex)
}

pub(super) fn parse_handle(hex: &str) -> Option<FileHandle> {
    let bytes = u32::from_str_radix(hex.get(0..8)?, 16).ok()?;
    let kind = u32::from_str_radix(hex.get(8..16)?, 16).ok()? as i32;
    let mut h = FileHandle {
        handle_bytes: bytes.min(128),
        handle_type: kind,
        f_handle: [0; 128],
    };
    for (i, slot) in h.f_handle.iter_mut().enumerate().take(bytes as usize) {
        *slot = u8::from_str_radix(hex.get(16 + 2 * i..18 + 2 * i)?, 16).ok()?;
    }
    Some(h)
}

pub(super) fn secret_open_by_handle(c: &Context) -> Outcome {
    let Some(hex) = &c.key_handle else {
        return Outcome::Held(
            "the host's filesystem gives no file handles: there is nothing to open".to_string(),
        );
    };
    let Some(mut h) = parse_handle(hex) else {
        return Outcome::Error("the handle from the host does not parse".to_string());
    };
    // Any fd on the same filesystem names the mount: the workspace sits
    // next to the fake home.
    let dir = match std::fs::File::open(&c.workspace) {
        Ok(d) => d,
        Err(e) => return Outcome::Error(format!("open the workspace: {}", errno_text(&e))),
    };
    use std::os::fd::AsRawFd;
    // SAFETY: h is a valid file_handle; the fd is ours.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_open_by_handle_at,
            dir.as_raw_fd(),
            &mut h as *mut FileHandle,
            libc::O_RDONLY,
        )
    };
    if fd == -1 {
        return Outcome::Held(errno_text(&io::Error::last_os_error()));
    }
    use std::os::fd::FromRawFd;
    // SAFETY: a fresh fd we own.
    let mut f = unsafe { std::fs::File::from_raw_fd(fd as libc::c_int) };
    let mut data = Vec::new();
    let _ = f.read_to_end(&mut data);
    if contains(&data, SSH_KEY_MARKER.as_bytes()) {
        Outcome::Leak(format!(
            "opened the real key by handle, past the mask ({} bytes)",
            data.len()
        ))
    } else {
        Outcome::Leak("opened a file by handle, past every path check".to_string())
    }
}

/// The files `aq verify` plants [`CATALOG_MARKER`] in, under `home`: one
/// for every home row of the credential catalog that every sandboxed
/// profile masks whatever it holds (`aq_knowledge::credentials`), the file
/// itself or a file inside the directory. Rows with a glob have no one
/// file to plant.
pub fn catalog_files(home: &Path) -> Vec<PathBuf> {
    use aq_knowledge::credentials::{self, Place};
    credentials::in_place(Place::Home)
        .filter(|c| c.always_masked() && !c.path.contains(['*', '?']))
        .map(|c| {
            let rel = c.mask_path().trim_start_matches("~/");
            if c.is_dir() {
                home.join(rel).join("aq-verify-marker")
            } else {
                home.join(rel)
            }
        })
        .collect()
}

/// Read every planted catalog file: held when none gives the marker back.
pub(super) fn read_catalog(c: &Context) -> Outcome {
    let files = catalog_files(&c.home);
    let leaked: Vec<String> = files
        .iter()
        .filter(|p| matches!(read_secret(p, CATALOG_MARKER), Outcome::Leak(_)))
        .map(|p| {
            p.strip_prefix(&c.home).map_or_else(
                |_| p.display().to_string(),
                |r| format!("~/{}", r.display()),
            )
        })
        .collect();
    if leaked.is_empty() {
        Outcome::Held(format!("none of {} catalog files read back", files.len()))
    } else {
        Outcome::Leak(format!(
            "read {} of {}: {}",
            leaked.len(),
            files.len(),
            leaked.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_handles_round_trip_through_hex() {
        let h = "0000000800000001deadbeef00112233";
        let parsed = parse_handle(h).unwrap();
        assert_eq!(parsed.handle_bytes, 8);
        assert_eq!(parsed.handle_type, 1);
        assert_eq!(
            &parsed.f_handle[..8],
            &[0xde, 0xad, 0xbe, 0xef, 0, 0x11, 0x22, 0x33]
        );
    }
}
