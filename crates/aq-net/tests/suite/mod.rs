mod netns;
mod proxy;
mod util;
