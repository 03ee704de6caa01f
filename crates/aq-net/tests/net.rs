//! aq-net end to end: real curl through the proxy to servers on 127.0.0.1,
//! names pinned or resolved, refusals checked by their text and rule id.

mod suite;
