mod fail_closed;
mod filesystem;
mod masking;
mod namespaces;
mod net;
mod probe;
mod util;
