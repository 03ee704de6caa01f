//! The accept loop: one listening socket, one thread per client, the first
//! byte picks the protocol (5: SOCKS5, anything else: HTTP).
//!
//! The listener can be one the broker bound itself ([`ProxyServer::bind`],
//! the in-process mode) or one bound inside the sandbox's network namespace
//! and handed out ([`ProxyServer::serve`] with a listener from
//! [`crate::handoff::recv_listener`]): the code that serves it is the same.

use std::collections::HashMap;
use std::io;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::broker::{Broker, FrontEnd};
use crate::{http, socks5};

/// Clients served at once; more are closed at once (and recorded).
pub const MAX_CLIENTS: usize = 512;
/// How long a client may take to send its request.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);

/// How long shutdown waits for client threads to record and finish.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

type Clients = Arc<Mutex<HashMap<u64, TcpStream>>>;

/// A running proxy front end. Dropping it (or [`ProxyServer::shutdown`])
/// stops accepting, closes every open tunnel and waits (up to 5 s) until
/// each has sent its record.
#[derive(Debug)]
pub struct ProxyServer {
    local_addr: SocketAddr,
    listener: Arc<TcpListener>,
    stop: Arc<AtomicBool>,
    clients: Clients,
    accept: Option<JoinHandle<()>>,
}

impl ProxyServer {
    /// In-process mode: binds `127.0.0.1:0` and serves it.
    pub fn bind(broker: Arc<Broker>) -> io::Result<ProxyServer> {
        Self::serve(TcpListener::bind(("127.0.0.1", 0))?, broker)
    }

    /// Serves an already listening socket.
    pub fn serve(listener: TcpListener, broker: Arc<Broker>) -> io::Result<ProxyServer> {
        listener.set_nonblocking(false)?;
        let local_addr = listener.local_addr()?;
        let listener = Arc::new(listener);
        let stop = Arc::new(AtomicBool::new(false));
        let clients: Clients = Arc::default();
        let accept = {
            let (listener, stop, clients) = (
                Arc::clone(&listener),
                Arc::clone(&stop),
                Arc::clone(&clients),
            );
            thread::Builder::new()
                .name("aq-net-accept".into())
                .spawn(move || accept_loop(&listener, &broker, &stop, &clients))?
        };
        Ok(ProxyServer {
            local_addr,
            listener,
            stop,
            clients,
            accept: Some(accept),
        })
    }

    /// The address served (inside the sandbox's namespace, for a handed-off
    /// listener).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops accepting, closes every client and waits for the accept loop.
    pub fn shutdown(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // SAFETY: shutdown(2) on our own listening socket; on Linux it wakes
        // a thread blocked in accept(2), which then fails with EINVAL.
        unsafe { libc::shutdown(self.listener.as_raw_fd(), libc::SHUT_RDWR) };
        if let Some(a) = self.accept.take() {
            let _ = a.join();
        }
        if let Ok(clients) = self.clients.lock() {
            for c in clients.values() {
                let _ = c.shutdown(Shutdown::Both);
            }
        }
        // Each client thread records its tunnel, then leaves the table: wait
        // (a bounded time: a resolution may still be running) so that every
        // record is out when shutdown returns.
        let deadline = Instant::now() + SHUTDOWN_GRACE;
        while Instant::now() < deadline && self.clients.lock().is_ok_and(|m| !m.is_empty()) {
            thread::sleep(Duration::from_millis(2));
        }
    }
}

impl Drop for ProxyServer {
    fn drop(&mut self) {
        self.stop_now();
    }
}

fn accept_loop(listener: &TcpListener, broker: &Arc<Broker>, stop: &AtomicBool, clients: &Clients) {
    let next_id = AtomicU64::new(0);
    loop {
        let accepted = listener.accept();
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let client = match accepted {
            Ok((c, _)) => c,
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => return,
            // EMFILE and friends: back off rather than spin.
            Err(_) => {
                thread::sleep(Duration::from_millis(20));
                continue;
            }
        };
        let id = next_id.fetch_add(1, Ordering::Relaxed);
        let registered = clients.lock().map(|mut m| {
            if m.len() >= MAX_CLIENTS {
                return false;
            }
            if let Ok(c) = client.try_clone() {
                m.insert(id, c);
            }
            true
        });
        if !matches!(registered, Ok(true)) {
            broker.record_bad_request(
                FrontEnd::Direct,
                &format!("more than {MAX_CLIENTS} clients at once"),
                Instant::now(),
            );
            continue;
        }
        let (broker, clients2) = (Arc::clone(broker), Arc::clone(clients));
        let spawned = thread::Builder::new()
            .name("aq-net-client".into())
            .spawn(move || {
                let _ = serve_client(client, &broker);
                if let Ok(mut m) = clients2.lock() {
                    m.remove(&id);
                }
            });
        if spawned.is_err()
            && let Ok(mut m) = clients.lock()
            && let Some(c) = m.remove(&id)
        {
            let _ = c.shutdown(Shutdown::Both);
        }
    }
}

fn serve_client(client: TcpStream, broker: &Broker) -> io::Result<()> {
    client.set_read_timeout(Some(HANDSHAKE_TIMEOUT))?;
    let _ = client.set_nodelay(true);
    let mut first = [0u8; 1];
    if client.peek(&mut first)? == 0 {
        return Ok(());
    }
    match first[0] {
        5 => socks5::serve(client, broker),
        4 => {
            broker.record_bad_request(
                FrontEnd::Socks5,
                "SOCKS4 is not served; use SOCKS5 with remote names (socks5h://)",
                Instant::now(),
            );
            // SOCKS4 "request rejected".
            let mut c = client;
            io::Write::write_all(&mut c, &[0, 0x5b, 0, 0, 0, 0, 0, 0])
        }
        _ => http::serve(client, broker),
    }
}
