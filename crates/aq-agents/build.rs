//! Turns `src/presets.toml` into JSON at build time: every `aq` start reads
//! the built-in presets, and JSON deserializes several times faster than
//! TOML. The text is only re-encoded here; `preset.rs` checks every field
//! at run time as before (and its tests hold the data to them).

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=src/presets.toml");
    let text = std::fs::read_to_string("src/presets.toml").expect("read src/presets.toml");
    let value: toml::Value = toml::from_str(&text).expect("src/presets.toml is TOML");
    let json = serde_json::to_string(&value).expect("presets as JSON");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    std::fs::write(out.join("presets.json"), json).expect("write presets.json");
}
