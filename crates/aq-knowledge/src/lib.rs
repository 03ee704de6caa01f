//! What agent-quarantine knows about the world, as data that every other
//! crate reads: one table per subject, sorted, with a note on how to keep it,
//! and checks (at build time where the compiler can, in unit tests
//! otherwise) that keep it consistent.
//!
//! The design follows ripgrep's `default_types.rs`: the data is a plain
//! sorted Rust table, so a lookup parses nothing and a mistake is a build or
//! test failure, not a wrong decision at run time. The crate depends on
//! nothing, reads no files, clock or environment and holds no `unsafe`; the
//! few functions that look at a file's bytes take them as arguments.
//!
//! # Subjects
//!
//! - [`credentials`]: where credentials live (home files and directories,
//!   agent sockets, workspace file names) and how to recognise one by its
//!   content. The sandbox masks read it, and so do the engine's secret rules.
//! - [`programs`]: what programs can be made to do (`programs.toml`, compiled
//!   into static tables by `build.rs`): which option runs a command, which
//!   argument is a file read, which mode serves a port.
//! - [`secret_names`]: which variable, flag and field names hold a secret
//!   value (`secret_names.toml`): the audit redactor, the engine, the shims
//!   and preflight all ask it.
//! - [`areas`]: areas of the file system by what a write there means
//!   (system configuration and programs, scratch space, build caches, the
//!   home's settings): the engine judges writes outside the workspace by
//!   them, and the `dev` profile writes the build caches.
//! - [`git`]: the configuration keys that make git run a program, and how
//!   git reads its config, attributes and hooks.
//! - [`project_code`]: the files of a project its tools run as code
//!   (`Makefile`, `conftest.py`, `build.rs`, `package.json`, git hooks).
//! - [`tasks`]: project task runners (`make`, `npm run`, `gradle`) and the
//!   task names that deploy or publish (`make deploy`, `npm run release`).
//! - [`tool_config`]: the settings of other tools that make them run a
//!   command later (npm's `script-shell`, ssh's `ProxyCommand`, `.pth`
//!   files, editors' startup files), the words of an agent's settings that
//!   hold its hooks, and the guard's own processes and variables.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod areas;
pub mod credentials;
pub mod git;
#[allow(missing_docs)]
pub mod programs;
pub mod project_code;
pub mod secret_names;
pub mod tasks;
pub mod tool_config;
