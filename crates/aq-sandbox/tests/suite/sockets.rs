//! The socket guard: a Unix socket of the host is out of reach from the
//! sandbox (`EACCES`, and the host's listener never sees a connection),
//! whatever the address says and however it races; the sandbox's own
//! listeners, and the ones aq names, stay reachable. Each refusal has a
//! control: the same probe with the guard left out reaches the host.
//! Also: descriptors inherited from the caller do not cross into the sandbox.

use std::io::{Read, Write};
use std::os::unix::net::{UnixDatagram, UnixListener};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use aq_sandbox::{ExecEvent, ExecJudge, ExecVerdict, NetworkMode, SocketGuardMode, Step};

use super::probe::{DONE, DONE_WITH_DATA};
use super::util::{Outcome, Scratch, run_probe, run_probe_judged_pub, run_probe_without};

/// A host service on a Unix socket: answers `pong` to whatever it reads,
/// and counts the connections it accepted.
struct HostService {
    accepted: Arc<AtomicUsize>,
    _listener: Arc<UnixListener>,
}

impl HostService {
    fn at(path: &Path) -> HostService {
        let listener = Arc::new(UnixListener::bind(path).unwrap());
        let accepted = Arc::new(AtomicUsize::new(0));
        let (l, n) = (listener.clone(), accepted.clone());
        std::thread::spawn(move || {
            for conn in l.incoming() {
                let Ok(mut conn) = conn else { return };
                n.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || {
                    let mut b = [0u8; 16];
                    let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
                    if conn.read(&mut b).is_ok_and(|n| n > 0) {
                        let _ = conn.write_all(b"pong\n");
                    }
                });
            }
        });
        HostService {
            accepted,
            _listener: listener,
        }
    }

    fn accepted(&self) -> usize {
        // Let an accept already under way be counted.
        std::thread::sleep(Duration::from_millis(50));
        self.accepted.load(Ordering::SeqCst)
    }
}

fn without_guard(s: &Step) -> bool {
    matches!(s, Step::AttachSocketGuard)
}

fn unguarded(spec: &aq_sandbox::SandboxSpec) -> aq_sandbox::SandboxSpec {
    let mut spec = spec.clone();
    spec.socket_guard = SocketGuardMode::Off;
    spec
}

#[test]
fn a_host_unix_socket_is_refused_and_its_service_never_sees_a_connection() {
    let s = Scratch::new();
    let bus = s.root.join("outside/bus");
    let service = HostService::at(&bus);
    let Some(got) = run_probe(&s.spec(), &format!("unix-exchange:{}", bus.display())) else {
        return;
    };
    assert_eq!(got, Outcome::Errno(libc::EACCES));
    assert_eq!(service.accepted(), 0, "the host's service saw a connection");
    // Control: the same exchange without the guard reaches the service.
    let got = run_probe(
        &unguarded(&s.spec()),
        &format!("unix-exchange:{}", bus.display()),
    );
    assert_eq!(got, Some(Outcome::DoneWithData));
    assert_eq!(service.accepted(), 1);
}

#[test]
fn a_host_socket_inside_the_workspace_is_refused_too() {
    // Where a socket lives says nothing of whose it is.
    let s = Scratch::new();
    let path = s.ws.join("daemon.ipc");
    let service = HostService::at(&path);
    let got = run_probe(&s.spec(), &format!("unix-exchange:{}", path.display()));
    if got.is_none() {
        return;
    }
    assert_eq!(got, Some(Outcome::Errno(libc::EACCES)));
    // A relative path, from the working directory, is the same file.
    let mut spec = s.spec();
    spec.env.push(("AQ_PROBE_CWD".into(), s.ws.clone().into()));
    assert_eq!(
        run_probe(&spec, "unix-exchange:./daemon.ipc"),
        Some(Outcome::Errno(libc::EACCES))
    );
    // A symbolic link in the workspace to the host's socket.
    std::os::unix::fs::symlink(&path, s.ws.join("link.sock")).unwrap();
    assert_eq!(
        run_probe(
            &s.spec(),
            &format!("unix-exchange:{}", s.ws.join("link.sock").display())
        ),
        Some(Outcome::Errno(libc::EACCES))
    );
    assert_eq!(service.accepted(), 0);
}

#[test]
fn the_sandboxs_own_listeners_are_reachable_in_both_network_modes() {
    let s = Scratch::new();
    for network in [NetworkMode::Off, NetworkMode::Host] {
        let mut spec = s.spec();
        spec.network = network;
        let path = s.ws.join(format!("own-{network:?}.sock"));
        let got = run_probe(&spec, &format!("unix-own:{}", path.display()));
        if got.is_none() {
            return;
        }
        assert_eq!(got, Some(Outcome::DoneWithData), "{network:?}");
        let got = run_probe(
            &spec,
            &format!(
                "unix-own-abstract:aq-test-{network:?}-{}",
                std::process::id()
            ),
        );
        assert_eq!(got, Some(Outcome::DoneWithData), "abstract, {network:?}");
    }
}

#[test]
fn with_the_hosts_network_host_sockets_stay_out_of_reach() {
    let s = Scratch::new();
    let mut spec = s.spec();
    spec.network = NetworkMode::Host;
    spec.writable.push(s.root.join("outside"));
    // In a writable place, where the sandbox could have made it.
    let agent = s.root.join("outside/agent.1");
    let service = HostService::at(&agent);
    let got = run_probe(&spec, &format!("unix-exchange:{}", agent.display()));
    if got.is_none() {
        return;
    }
    assert_eq!(got, Some(Outcome::Errno(libc::EACCES)));
    assert_eq!(service.accepted(), 0);
    let got = run_probe(
        &unguarded(&spec),
        &format!("unix-exchange:{}", agent.display()),
    );
    assert_eq!(
        got,
        Some(Outcome::DoneWithData),
        "control: reachable without the guard"
    );
    // An abstract name of the host's network namespace: refused by the
    // guard (EACCES) before Landlock's scope (EPERM) would be asked.
    let name = format!("aq-test-host-{}", std::process::id());
    let _abstract = abstract_listener(&name);
    assert_eq!(
        run_probe(&spec, &format!("unix-abstract:{name}")),
        Some(Outcome::Errno(libc::EACCES))
    );
}

fn abstract_listener(name: &str) -> UnixListener {
    use std::os::linux::net::SocketAddrExt;
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name).unwrap();
    UnixListener::bind_addr(&addr).unwrap()
}

#[test]
fn a_socket_aq_names_is_reachable() {
    let s = Scratch::new();
    let own = s.root.join("outside/supervisor.sock");
    let service = HostService::at(&own);
    let mut spec = s.spec();
    spec.allowed_sockets = vec![own.clone()];
    let got = run_probe(&spec, &format!("unix-exchange:{}", own.display()));
    if got.is_none() {
        return;
    }
    assert_eq!(got, Some(Outcome::DoneWithData));
    assert_eq!(service.accepted(), 1);
}

#[test]
fn a_path_through_a_directory_held_open_is_judged_like_the_path() {
    // `/proc/self/fd/N/name`: how a socket path too long for `sun_path` is
    // reached (aq's own shims do it for a deep session directory).
    let s = Scratch::new();
    let own = s.root.join("outside/supervisor.sock");
    let _aq = HostService::at(&own);
    let host = s.root.join("outside/bus");
    let service = HostService::at(&host);
    let mut spec = s.spec();
    spec.allowed_sockets = vec![own.clone()];
    let outside = s.root.join("outside");
    let via = |name: &str| format!("unix-via-dirfd:{}:{name}", outside.display());
    let Some(got) = run_probe(&spec, &via("supervisor.sock")) else {
        return;
    };
    assert_eq!(got, Outcome::DoneWithData, "aq's own socket");
    assert_eq!(
        run_probe(&spec, &via("bus")),
        Some(Outcome::Errno(libc::EACCES))
    );
    assert_eq!(service.accepted(), 0);
    assert_eq!(
        run_probe(&spec, &format!("unix-own-via-dirfd:{}", s.ws.display())),
        Some(Outcome::DoneWithData),
        "the sandbox's own socket"
    );
}

#[test]
fn the_hosts_datagram_sockets_are_masked() {
    let s = Scratch::new();
    let log = s.root.join("outside/dev-log");
    let receiver = UnixDatagram::bind(&log).unwrap();
    receiver.set_nonblocking(true).unwrap();
    let got = run_probe(&s.spec(), &format!("unix-dgram-send:{}", log.display()));
    if got.is_none() {
        return;
    }
    // An empty read-only file in its place: the send fails (EROFS).
    assert_eq!(got, Some(Outcome::Errno(libc::EROFS)));
    let mut b = [0u8; 64];
    assert!(
        receiver.recv(&mut b).is_err(),
        "the host's socket got a datagram"
    );
    // Control: without the guard (and its masks) the datagram arrives.
    let got = run_probe(
        &unguarded(&s.spec()),
        &format!("unix-dgram-send:{}", log.display()),
    );
    assert_eq!(got, Some(Outcome::Done));
    receiver.set_nonblocking(false).unwrap();
    receiver
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    assert!(receiver.recv(&mut b).is_ok());
}

/// Records the guard's reports.
#[derive(Default)]
struct Reports(std::sync::Mutex<Vec<(String, &'static str)>>);

impl ExecJudge for Reports {
    fn judge(&self, _event: &ExecEvent) -> ExecVerdict {
        ExecVerdict::Allow
    }
    fn socket_refused(&self, _pid: u32, target: &str, why: &'static str) {
        self.0.lock().unwrap().push((target.to_string(), why));
    }
}

#[test]
fn a_refusal_is_reported_once_per_target() {
    let s = Scratch::new();
    let bus = s.root.join("outside/bus");
    let _service = HostService::at(&bus);
    let reports = Arc::new(Reports::default());
    let got = run_probe_judged_pub(
        &s.spec(),
        &format!("unix-exchange-twice:{}", bus.display()),
        Some(reports.clone()),
    );
    if got.is_none() {
        return;
    }
    assert_eq!(got, Some(Outcome::Errno(libc::EACCES)));
    let seen = reports.0.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].0, bus.display().to_string());
}

#[test]
fn a_racing_thread_cannot_turn_an_allowed_connect_into_a_host_one() {
    // One thread connects again and again with an address another thread
    // flips between the sandbox's own socket and the host's: a check that
    // read the address and let the kernel go on would lose the race.
    let s = Scratch::new();
    let host = s.root.join("outside/h");
    let service = HostService::at(&host);
    let own = s.ws.join("o");
    let probe = format!("unix-race-addr:{}:{}:3000", own.display(), host.display());
    let got = run_probe(&s.spec(), &probe);
    if got.is_none() {
        return;
    }
    assert_eq!(
        got,
        Some(Outcome::DoneWithData),
        "the own socket was reached"
    );
    assert_eq!(service.accepted(), 0, "the host's socket was reached");
    // Control: without the guard the race reaches the host at once.
    std::fs::remove_file(&own).unwrap();
    let _ = run_probe(&unguarded(&s.spec()), &probe);
    assert!(service.accepted() > 0, "the control never reached the host");
}

#[test]
fn a_racing_dup2_cannot_swap_a_unix_socket_under_an_inet_connect() {
    let s = Scratch::new();
    let host = s.root.join("outside/h2");
    let service = HostService::at(&host);
    let probe = format!("unix-race-fd:{}:3000", host.display());
    let got = run_probe(&s.spec(), &probe);
    if got.is_none() {
        return;
    }
    assert_eq!(got, Some(Outcome::Done));
    assert_eq!(service.accepted(), 0, "the host's socket was reached");
    let _ = run_probe(&unguarded(&s.spec()), &probe);
    assert!(service.accepted() > 0, "the control never reached the host");
}

#[test]
fn tcp_and_udp_still_connect_through_the_guard() {
    let s = Scratch::new();
    let Some(got) = run_probe(&s.spec(), "own-loopback") else {
        return;
    };
    assert_eq!(got, Outcome::Done);
    assert_eq!(run_probe(&s.spec(), "udp-connect"), Some(Outcome::Done));
}

#[test]
fn descriptors_the_caller_inherited_do_not_cross_into_the_sandbox() {
    let s = Scratch::new();
    let key = s.root.join("outside/key");
    std::fs::write(&key, "FAKE-KEY-0000").unwrap();
    let c = std::ffi::CString::new(key.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: opening a file without O_CLOEXEC, as a launcher might leave it.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY) };
    assert!(fd > 2);
    let got = run_probe(&s.spec(), &format!("read-fd:{fd}"));
    let passed = {
        let mut spec = s.spec();
        spec.pass_fds = vec![fd];
        run_probe(&spec, &format!("read-fd:{fd}"))
    };
    // Control: without the step, the descriptor reaches the command.
    let leaked = run_probe_without(&s.spec(), &format!("read-fd:{fd}"), |st| {
        matches!(st, Step::CloseInheritedFds(_))
    });
    // SAFETY: closing what we opened.
    unsafe { libc::close(fd) };
    if got.is_none() {
        return;
    }
    assert_eq!(got, Some(Outcome::Errno(libc::EBADF)));
    assert_eq!(passed, Some(Outcome::DoneWithData), "passed explicitly");
    assert_eq!(leaked, Some(Outcome::DoneWithData), "control");
    let _ = without_guard;
}

#[test]
fn the_pipe_the_sandbox_ends_on_is_out_of_its_reach() {
    let s = Scratch::new();
    let got = run_probe(&s.spec(), "pipes-reachable:");
    if got.is_none() {
        return;
    }
    assert_eq!(
        got,
        Some(Outcome::Done),
        "a pipe is reachable in the sandbox"
    );
    // Control: a pipe passed on explicitly is seen by the same probe.
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds is a valid two-int array.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let mut spec = s.spec();
    spec.pass_fds = vec![fds[1]];
    let passed = run_probe(&spec, "pipes-reachable:");
    // SAFETY: closing what we opened.
    unsafe {
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
    assert_eq!(passed, Some(Outcome::DoneWithData), "control");
}

// --- the probes (inside the sandbox) ---

fn sockaddr_un(path: &[u8]) -> (libc::sockaddr_un, libc::socklen_t) {
    // SAFETY: an all-zero sockaddr_un is valid.
    let mut a: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    a.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (i, b) in path.iter().enumerate().take(107) {
        a.sun_path[i] = *b as libc::c_char;
    }
    let len = (std::mem::size_of::<libc::sa_family_t>() + path.len().min(107)) as libc::socklen_t;
    (a, len)
}

fn last<T>() -> std::io::Result<T> {
    Err(std::io::Error::last_os_error())
}

/// Connect to `path`, send `ping`, read the answer.
fn exchange(path: &[u8]) -> std::io::Result<i32> {
    // SAFETY: plain socket calls on our own descriptor and buffers.
    unsafe {
        let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return last();
        }
        let (a, len) = sockaddr_un(path);
        if libc::connect(fd, (&a as *const libc::sockaddr_un).cast(), len) != 0 {
            let e = std::io::Error::last_os_error();
            libc::close(fd);
            return Err(e);
        }
        libc::write(fd, b"ping\n".as_ptr().cast(), 5);
        let mut b = [0u8; 16];
        let tv = libc::timeval {
            tv_sec: 2,
            tv_usec: 0,
        };
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as u32,
        );
        let n = libc::read(fd, b.as_mut_ptr().cast(), b.len());
        libc::close(fd);
        Ok(if n > 0 { DONE_WITH_DATA } else { DONE })
    }
}

/// A listener at `addr` answering `pong`, in a forked child of the probe.
fn serve_in_child(listener: UnixListener) -> libc::pid_t {
    // SAFETY: the child only serves and _exits.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        if let Ok((mut c, _)) = listener.accept() {
            let mut b = [0u8; 16];
            let _ = c.read(&mut b);
            let _ = c.write_all(b"pong\n");
        }
        // SAFETY: leaving the forked child.
        unsafe { libc::_exit(0) };
    }
    pid
}

fn reap(pid: libc::pid_t) {
    let mut status = 0;
    // SAFETY: waiting for our child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
}

pub fn probe(op: &str, arg: &str) -> std::io::Result<i32> {
    use std::os::unix::ffi::OsStrExt;
    if let Some(cwd) = std::env::var_os("AQ_PROBE_CWD") {
        std::env::set_current_dir(cwd)?;
    }
    match op {
        "unix-exchange" => exchange(arg.as_bytes()),
        "unix-exchange-twice" => {
            let _ = exchange(arg.as_bytes());
            exchange(arg.as_bytes())
        }
        "unix-abstract" => {
            let mut name = vec![0u8];
            name.extend_from_slice(arg.as_bytes());
            exchange(&name)
        }
        "unix-own" => {
            let listener = UnixListener::bind(arg)?;
            let child = serve_in_child(listener);
            let r = exchange(Path::new(arg).as_os_str().as_bytes());
            reap(child);
            r
        }
        "unix-own-abstract" => {
            let listener = abstract_listener(arg);
            let child = serve_in_child(listener);
            let mut name = vec![0u8];
            name.extend_from_slice(arg.as_bytes());
            let r = exchange(&name);
            reap(child);
            r
        }
        "unix-via-dirfd" => {
            let (dir, name) = arg.rsplit_once(':').unwrap_or((arg, ""));
            let d = std::fs::File::open(dir)?;
            use std::os::fd::AsRawFd;
            exchange(format!("/proc/self/fd/{}/{name}", d.as_raw_fd()).as_bytes())
        }
        "unix-own-via-dirfd" => {
            let listener = UnixListener::bind(Path::new(arg).join("own-dirfd.sock"))?;
            let child = serve_in_child(listener);
            let d = std::fs::File::open(arg)?;
            use std::os::fd::AsRawFd;
            let r = exchange(format!("/proc/self/fd/{}/own-dirfd.sock", d.as_raw_fd()).as_bytes());
            reap(child);
            r
        }
        "unix-dgram-send" => {
            let sock = UnixDatagram::unbound()?;
            sock.send_to(b"<13>forged", arg)?;
            Ok(DONE)
        }
        "unix-race-addr" => race_addr(arg),
        "unix-race-fd" => race_fd(arg),
        "udp-connect" => {
            let u = std::net::UdpSocket::bind("127.0.0.1:0")?;
            u.connect("127.0.0.1:9")?;
            Ok(DONE)
        }
        "pipes-reachable" => {
            // DONE_WITH_DATA when a pipe other than the probe's own standard
            // streams is open here or in init (what the sandbox's supervisor
            // reports the sandbox's end on must be out of reach).
            let mut found = false;
            for (dir, skip_std) in [("/proc/self/fd", true), ("/proc/1/fd", false)] {
                let Ok(entries) = std::fs::read_dir(dir) else {
                    continue;
                };
                for e in entries.flatten() {
                    let n: i32 = e.file_name().to_string_lossy().parse().unwrap_or(-1);
                    if skip_std && (0..=2).contains(&n) {
                        continue;
                    }
                    if std::fs::read_link(e.path())
                        .is_ok_and(|t| t.to_string_lossy().starts_with("pipe:"))
                    {
                        found = true;
                    }
                }
            }
            Ok(if found { DONE_WITH_DATA } else { DONE })
        }
        "read-fd" => {
            let fd: i32 = arg.parse().map_err(std::io::Error::other)?;
            let mut b = [0u8; 64];
            // SAFETY: reading into b from a descriptor number.
            let n = unsafe { libc::pread(fd, b.as_mut_ptr().cast(), b.len(), 0) };
            if n < 0 {
                return last();
            }
            Ok(if n > 0 { DONE_WITH_DATA } else { DONE })
        }
        _ => Ok(0),
    }
}

/// `own:host:iterations`: DONE_WITH_DATA once the own socket was reached.
fn race_addr(arg: &str) -> std::io::Result<i32> {
    let mut parts = arg.splitn(3, ':');
    let own = PathBuf::from(parts.next().unwrap_or_default());
    let host = PathBuf::from(parts.next().unwrap_or_default());
    let iterations: usize = parts.next().unwrap_or("1000").parse().unwrap_or(1000);
    use std::os::unix::ffi::OsStrExt;
    let listener = UnixListener::bind(&own)?;
    listener.set_nonblocking(true)?;
    let (a_own, len_own) = sockaddr_un(own.as_os_str().as_bytes());
    let (a_host, len_host) = sockaddr_un(host.as_os_str().as_bytes());
    let len = len_own.max(len_host);
    // One buffer both threads see; the flipper rewrites it byte by byte.
    let shared: &'static mut libc::sockaddr_un = Box::leak(Box::new(a_own));
    let ptr = shared as *mut libc::sockaddr_un as usize;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flips = Arc::new(AtomicUsize::new(0));
    let flipper = {
        let (stop, flips) = (stop.clone(), flips.clone());
        std::thread::spawn(move || {
            let mut which = false;
            while !stop.load(Ordering::Relaxed) {
                flips.fetch_add(1, Ordering::Relaxed);
                let src = if which { &a_host } else { &a_own };
                // SAFETY: racing writes to a leaked buffer are the point.
                unsafe {
                    std::ptr::write_volatile(ptr as *mut libc::sockaddr_un, *src);
                }
                which = !which;
            }
        })
    };
    while flips.load(Ordering::Relaxed) == 0 {
        std::thread::yield_now();
    }
    let mut reached_own = false;
    let started = std::time::Instant::now();
    let mut done = 0;
    while done < iterations || started.elapsed() < Duration::from_millis(300) {
        done += 1;
        // SAFETY: socket calls on our own descriptor; the address buffer is
        // read by the kernel (or the guard) while the other thread writes it.
        unsafe {
            let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            if libc::connect(fd, (ptr as *const libc::sockaddr_un).cast(), len) == 0
                && listener.accept().is_ok()
            {
                reached_own = true;
            }
            libc::close(fd);
        }
    }
    stop.store(true, Ordering::Relaxed);
    let _ = flipper.join();
    Ok(if reached_own { DONE_WITH_DATA } else { DONE })
}

/// `host:iterations`: connect a descriptor number to the host's socket
/// again and again while another thread keeps `dup2`ing a TCP socket and a
/// Unix socket over it (a fresh Unix socket once one got connected).
fn race_fd(arg: &str) -> std::io::Result<i32> {
    let (host, n) = arg.rsplit_once(':').unwrap_or((arg, "1000"));
    let iterations: usize = n.parse().unwrap_or(1000);
    use std::os::unix::ffi::OsStrExt;
    let (a_host, len_host) = sockaddr_un(Path::new(host).as_os_str().as_bytes());
    const TARGET: libc::c_int = 900;
    let new_socket = |family| {
        // SAFETY: a plain socket call.
        unsafe { libc::socket(family, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) as usize }
    };
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let current = Arc::new([
        AtomicUsize::new(new_socket(libc::AF_INET)),
        AtomicUsize::new(new_socket(libc::AF_UNIX)),
    ]);
    let flips = Arc::new(AtomicUsize::new(0));
    let flipper = {
        let (stop, current, flips) = (stop.clone(), current.clone(), flips.clone());
        std::thread::spawn(move || {
            let mut which = 0;
            while !stop.load(Ordering::Relaxed) {
                let fd = current[which].load(Ordering::Relaxed) as libc::c_int;
                // SAFETY: dup2 of our own descriptors is the race.
                unsafe { libc::dup2(fd, TARGET) };
                which ^= 1;
                flips.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    while flips.load(Ordering::Relaxed) == 0 {
        std::thread::yield_now();
    }
    let started = std::time::Instant::now();
    let mut done = 0;
    while done < iterations || started.elapsed() < Duration::from_millis(300) {
        done += 1;
        // SAFETY: connecting whatever the descriptor number is right now.
        let r = unsafe {
            libc::connect(
                TARGET,
                (&a_host as *const libc::sockaddr_un).cast(),
                len_host,
            )
        };
        if r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EISCONN) {
            // That Unix socket is spent: the flipper takes a fresh one.
            current[1].store(new_socket(libc::AF_UNIX), Ordering::Relaxed);
        }
    }
    stop.store(true, Ordering::Relaxed);
    let _ = flipper.join();
    Ok(DONE)
}
