//! Agent presets: what each coding agent needs inside the sandbox, as data.
//!
//! A new user types `aq run -- claude` and expects the agent to start and
//! work. An agent needs more than a build does: its own state directories,
//! its own switches in the environment, its model API and its key. A preset
//! says exactly that and no more, so the sandbox opens what the agent needs
//! and keeps everything else closed:
//!
//! - `state`: files and directories the agent writes (created if missing);
//! - `config`: its files that make something *run* (hooks, MCP servers,
//!   notify commands), kept read-only, so an agent cannot plant a hook that
//!   later runs outside `aq`;
//! - `env` and `set_env`: its own non-secret variables, passed or set;
//! - `keys` and `api`: the secret it authenticates with, and how the model
//!   API is served on a loopback endpoint inside the sandbox so the key
//!   itself stays outside (the key proxy in `aq-net`);
//! - `hosts`: what else it must reach, through the network broker;
//! - `housekeeping`: commands the agent runs itself (not for the model),
//!   allowed when the agent's own process starts them.
//!
//! The built-in presets are a TOML file compiled in (`presets.toml`); a
//! policy file's `[agent.NAME]` extends one (lists grow, scalars are
//! replaced) or defines a new one. Everything is pure (text in, values
//! out) but [`grant`], which resolves a preset for one session: it creates
//! the agent's missing state and looks up its configuration files, and
//! [`agent_process`], which reads the agent's process in `/proc` for its hook.
#![deny(missing_docs)]

pub mod agent_process;
pub mod endpoints;
mod error;
mod grants;
pub mod hooks;
pub mod install;
pub mod mcp_config;
mod preset;
mod recognize;
pub mod shadow;

pub use grants::{GrantInputs, Grants, KeyProxyPlan, grant};

pub use preset::{
    Api, EndpointSource, KeyHeader, LayerError, Preset, PresetLayer, PresetSet, RawPreset,
    check_layer,
};
pub use recognize::{Recognized, recognize};
