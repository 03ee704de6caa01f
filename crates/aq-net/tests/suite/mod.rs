mod intercept;
mod intercept_red_team;
#[cfg(target_os = "linux")]
mod netns;
mod proxy;
mod rebinding;
mod util;
