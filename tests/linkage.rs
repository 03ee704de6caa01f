//! How `aq` and `aq-shim` are linked: the unwinder is linked in
//! (`crates/aq/build.rs`), so no start loads `libgcc_s.so.1`, and panics
//! still unwind.

use std::process::Command;

/// Whether the C compiler has the static unwinder the build script uses.
fn static_unwinder_available() -> bool {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    Command::new(cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .ok()
        .map(|o| std::path::PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .is_some_and(|p| p.is_absolute() && p.is_file())
}

/// The shared libraries the dynamic loader loads for `program` (what
/// `ldd` prints: the loader lists them and exits, nothing of it runs).
fn loaded_libraries(program: &str) -> String {
    let out = Command::new(program)
        .env("LD_TRACE_LOADED_OBJECTS", "1")
        .output()
        .expect("run the program under the loader's trace");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn aq_and_its_shim_start_without_libgcc_s() {
    if !static_unwinder_available() {
        aq_testkit::skip("the C compiler has no libgcc_eh.a: aq links libgcc_s.so.1");
        return;
    }
    for program in [env!("CARGO_BIN_EXE_aq"), env!("CARGO_BIN_EXE_aq-shim")] {
        let libs = loaded_libraries(program);
        // The method sees what is loaded: glibc is.
        assert!(libs.contains("libc.so.6"), "{program}: {libs}");
        assert!(
            !libs.contains("libgcc_s"),
            "{program} loads libgcc_s: {libs}"
        );
    }
}

/// This test binary is linked as `aq` is; a panic in it still unwinds, on
/// this thread and on another, and is caught.
#[test]
fn a_panic_unwinds_with_the_unwinder_linked_in() {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    assert!(maps.contains("libc.so.6"), "{maps}");
    if static_unwinder_available() {
        assert!(
            !maps.contains("libgcc_s"),
            "this test loads libgcc_s: {maps}"
        );
    }
    let caught = std::panic::catch_unwind(|| {
        let empty: Vec<u8> = Vec::new();
        empty[std::hint::black_box(3)]
    });
    assert!(caught.is_err(), "the panic was caught");
    let joined = std::thread::spawn(|| panic!("a panic on another thread")).join();
    assert!(joined.is_err(), "the thread's panic came back as an error");
}
