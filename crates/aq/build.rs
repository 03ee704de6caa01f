//! Links the unwinder into `aq` and `aq-shim` instead of loading
//! `libgcc_s.so.1` at every start.
//!
//! On Linux with glibc, Rust's standard library asks the linker for
//! `-lgcc_s`: one more shared library for the dynamic loader to open, map
//! and relocate, whose constructor probes the CPU with a dozen `cpuid`
//! instructions (each a trap to the hypervisor in a VM, about 7 µs on this
//! project's machine). That is about 0.12 ms of every process: of each hook
//! answer, each session start, and each shimmed command. GCC's
//! `-static-libgcc` does the same for C programs; Rust's own `crt-static`
//! builds link these very archives.
//!
//! How: a linker script named `libgcc_s.so`, found first on the search
//! path, that names the static unwinder (`libgcc_eh.a`) and `libgcc.a`
//! instead. Panics still unwind (aq-shell catches brush-parser's) and
//! backtraces still print. Where the C compiler has no `libgcc_eh.a`, the
//! build is already static, or it is a cross build, nothing changes.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=crates/aq/build.rs");
    println!("cargo:rerun-if-env-changed=CC");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let static_build = var("CARGO_CFG_TARGET_FEATURE")
        .split(',')
        .any(|f| f == "crt-static");
    // Native builds only: a cross build's C compiler is not `cc`, and the
    // host's archives would not link.
    let native = var("TARGET") == var("HOST");
    if var("CARGO_CFG_TARGET_OS") != "linux"
        || var("CARGO_CFG_TARGET_ENV") != "gnu"
        || static_build
        || !native
    {
        return;
    }
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let archive = |name: &str| -> Option<PathBuf> {
        let out = Command::new(&cc)
            .arg(format!("-print-file-name={name}"))
            .output()
            .ok()?;
        let path = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
        // Not found: the compiler prints the bare name back.
        (path.is_absolute() && path.is_file()).then_some(path)
    };
    let (Some(eh), Some(gcc)) = (archive("libgcc_eh.a"), archive("libgcc.a")) else {
        println!(
            "cargo:warning=no libgcc_eh.a from `{cc}`: aq links libgcc_s.so.1 (it starts about 0.1 ms slower)"
        );
        return;
    };
    let dir = PathBuf::from(var("OUT_DIR")).join("static-unwinder");
    std::fs::create_dir_all(&dir).expect("create the static-unwinder directory");
    let script = format!(
        "/* Written by aq's build script: the unwinder linked in, not libgcc_s.so.1. */\nGROUP ( {} {} )\n",
        eh.display(),
        gcc.display()
    );
    std::fs::write(dir.join("libgcc_s.so"), script).expect("write the libgcc_s.so linker script");
    println!("cargo:rustc-link-search=native={}", dir.display());
}
