//! End-to-end tests of the `aq` binary: one test binary, one module per area.
//! `util` runs the real `aq` in a scratch home and workspace.

mod util;

mod agent_aider;
mod agent_cline;
mod agent_copilot;
mod agent_kilo;
mod agent_opencode;
mod agent_qwen;
mod approve;
mod aq_state;
mod audit;
mod completions;
mod credentials;
mod doctor;
mod exec_guard;
mod exec_identity;
mod export;
mod git_guard;
mod grants;
mod hook;
mod learn;
mod lint;
mod managed;
mod managed_red_team;
mod mcp;
mod model_endpoints;
mod network;
mod policy;
mod preflight;
mod presets;
mod private_home;
mod real_agents;
mod red_team;
mod red_team_network;
mod red_team_round2;
mod red_team_round3;
mod red_team_walk_records;
mod report_html;
mod run;
mod sandbox;
mod sandbox_profile;
mod soak;
mod undo;
mod verify;
mod watch;
