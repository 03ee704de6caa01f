//! Compiles the shim program without a C library (`tiny/main.rs`) for
//! `aq_shim::tiny`, where it can run: x86-64 Linux, built on the machine it
//! is for. It is compiled with `rustc` directly because it needs
//! `panic = abort` (it has no standard library to unwind with), which a
//! Cargo profile sets for every crate or none. Anywhere else, or when this
//! compile fails (a warning says why), the shim links point to the
//! `aq-shim` binary, which does the same with the standard library.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rustc-check-cfg=cfg(aq_tiny_shim)");
    println!("cargo:rerun-if-changed=tiny/main.rs");
    println!("cargo:rerun-if-changed=src/wire.rs");
    let env = |k: &str| std::env::var(k).unwrap_or_default();
    let target = env("TARGET");
    if env("CARGO_CFG_TARGET_OS") != "linux"
        || env("CARGO_CFG_TARGET_ARCH") != "x86_64"
        || target != env("HOST")
    {
        return;
    }
    let out = PathBuf::from(env("OUT_DIR")).join("aq-shim-tiny");
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let made = Command::new(rustc)
        .args(["--edition", "2024", "--crate-type", "bin", "--crate-name"])
        .arg("aq_shim_tiny")
        .args(["--target", &target])
        .args([
            "-C",
            "panic=abort",
            "-C",
            "opt-level=2",
            "-C",
            "codegen-units=1",
        ])
        .args([
            "-C",
            "relocation-model=static",
            "-C",
            "debuginfo=0",
            "-C",
            "strip=symbols",
        ])
        .args(["-C", "link-arg=-nostartfiles", "-C", "link-arg=-nostdlib"])
        .args(["-C", "link-arg=-static", "-C", "link-arg=-no-pie"])
        .args(["-D", "warnings"])
        .arg("tiny/main.rs")
        .arg("-o")
        .arg(&out)
        .output();
    match made {
        Ok(o) if o.status.success() => {
            let bytes = std::fs::read(&out).expect("the program just made");
            // FNV-1a: a name for this build of the program, not a check.
            let id = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
                (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
            });
            println!("cargo:rustc-env=AQ_TINY_SHIM_ID={id:016x}");
            println!("cargo:rustc-cfg=aq_tiny_shim");
        }
        Ok(o) => println!(
            "cargo:warning=the shim without a C library did not compile; shims use aq-shim: {}",
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .next()
                .unwrap_or_default()
        ),
        Err(e) => {
            println!("cargo:warning=cannot run rustc for the small shim ({e}); shims use aq-shim")
        }
    }
}
