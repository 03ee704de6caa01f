mod intercept;
mod netns;
mod proxy;
mod rebinding;
mod util;
