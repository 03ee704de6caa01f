mod intercept;
mod intercept_red_team;
mod netns;
mod proxy;
mod rebinding;
mod util;
