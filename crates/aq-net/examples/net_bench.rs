//! Broker cost on loopback: bulk throughput and connection setup, direct
//! against through the in-process proxy (HTTP CONNECT), in the same run.
//! Run by `bench/net/run.sh`; see `bench/net/RESULTS.md`.
//!
//! `net_bench [--mib N] [--rounds R] [--conns C]` (defaults 256, 5, 500).

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use aq_net::{Allowlist, Broker, ConnectionRecord, ProxyServer};

const CHUNK: usize = 1 << 20;

/// Reads everything, then answers with the byte count.
fn sink_server() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    thread::spawn(move || {
        for c in l.incoming() {
            let mut c = c.unwrap();
            thread::spawn(move || {
                let mut buf = vec![0u8; CHUNK];
                let mut n = 0u64;
                loop {
                    match c.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(k) => n += k as u64,
                    }
                }
                let _ = c.write_all(&n.to_be_bytes());
            });
        }
    });
    addr
}

/// Answers one byte with one byte, then closes.
fn ping_server() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    thread::spawn(move || {
        for c in l.incoming() {
            let mut c = c.unwrap();
            thread::spawn(move || {
                let _ = c.set_nodelay(true);
                let mut b = [0u8; 1];
                if c.read_exact(&mut b).is_ok() {
                    let _ = c.write_all(&b);
                }
            });
        }
    });
    addr
}

/// Opens a stream to `name:port`, directly or through the proxy.
fn open(proxy: Option<SocketAddr>, name: &str, target: SocketAddr) -> TcpStream {
    let Some(p) = proxy else {
        let s = TcpStream::connect(target).unwrap();
        s.set_nodelay(true).unwrap();
        return s;
    };
    let mut s = TcpStream::connect(p).unwrap();
    s.set_nodelay(true).unwrap();
    write!(
        s,
        "CONNECT {name}:{} HTTP/1.1\r\nHost: {name}\r\n\r\n",
        target.port()
    )
    .unwrap();
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        s.read_exact(&mut b).unwrap();
        head.push(b[0]);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 200 "),
        "{}",
        String::from_utf8_lossy(&head)
    );
    s
}

/// CPU seconds (user + system) of this whole process: client, servers and
/// broker threads alike.
fn cpu_secs() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// Sends `bytes` and waits for the sink's count; returns wall and CPU
/// seconds.
fn bulk_cpu(proxy: Option<SocketAddr>, sink: SocketAddr, bytes: u64) -> (f64, f64) {
    let c0 = cpu_secs();
    let wall = bulk(proxy, sink, bytes);
    (wall, cpu_secs() - c0)
}

/// Sends `bytes` and waits for the sink's count; returns seconds.
fn bulk(proxy: Option<SocketAddr>, sink: SocketAddr, bytes: u64) -> f64 {
    let buf = vec![0x5au8; CHUNK];
    let start = Instant::now();
    let mut s = open(proxy, "sink.example.invalid", sink);
    let mut left = bytes;
    while left > 0 {
        let k = left.min(CHUNK as u64) as usize;
        s.write_all(&buf[..k]).unwrap();
        left -= k as u64;
    }
    s.shutdown(Shutdown::Write).unwrap();
    let mut n = [0u8; 8];
    s.read_exact(&mut n).unwrap();
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(u64::from_be_bytes(n), bytes);
    secs
}

/// Connect, one byte each way; returns microseconds.
fn setup(proxy: Option<SocketAddr>, ping: SocketAddr) -> f64 {
    let start = Instant::now();
    let mut s = open(proxy, "ping.example.invalid", ping);
    s.write_all(b"x").unwrap();
    let mut b = [0u8; 1];
    s.read_exact(&mut b).unwrap();
    start.elapsed().as_secs_f64() * 1e6
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn arg(args: &[String], name: &str, default: u64) -> u64 {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |v| v.parse().expect("a number"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mib = arg(&args, "--mib", 256);
    let rounds = arg(&args, "--rounds", 5) as usize;
    let conns = arg(&args, "--conns", 500) as usize;
    let bytes = mib << 20;

    let sink = sink_server();
    let ping = ping_server();
    let list = Allowlist::from_entries(
        &["sink.example.invalid", "ping.example.invalid"],
        &[
            "sink.example.invalid=127.0.0.1",
            "ping.example.invalid=127.0.0.1",
        ],
        &[],
    )
    .unwrap();
    let records = Arc::new(AtomicU64::new(0));
    let r2 = Arc::clone(&records);
    let broker = Broker::new(list).with_records(Arc::new(move |_: &ConnectionRecord| {
        r2.fetch_add(1, Ordering::Relaxed);
    }));
    let proxy = ProxyServer::bind(Arc::new(broker)).unwrap();
    let p = Some(proxy.local_addr());

    // Warm-up: page cache, thread stacks, TCP autotuning.
    bulk(None, sink, 32 << 20);
    bulk(p, sink, 32 << 20);

    println!("# bulk: {mib} MiB per transfer, {rounds} rounds, direct then broker each round");
    let (mut direct, mut brokered) = (Vec::new(), Vec::new());
    let (mut dcpu, mut bcpu) = (Vec::new(), Vec::new());
    for r in 0..rounds {
        let (d, dc) = bulk_cpu(None, sink, bytes);
        let (b, bc) = bulk_cpu(p, sink, bytes);
        let (dm, bm) = (mib as f64 / d, mib as f64 / b);
        println!(
            "bulk round {r}: direct {dm:.0} MiB/s ({dc:.3} s CPU), broker {bm:.0} MiB/s \
             ({bc:.3} s CPU), ratio {:.3}",
            bm / dm
        );
        direct.push(dm);
        brokered.push(bm);
        dcpu.push(dc);
        bcpu.push(bc);
    }
    let (dmed, bmed) = (median(&mut direct), median(&mut brokered));
    let (dcmed, bcmed) = (median(&mut dcpu), median(&mut bcpu));

    println!("# setup: {conns} connections per mode per round, connect + 1 byte each way");
    let (mut sd, mut sb) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        for _ in 0..conns {
            sd.push(setup(None, ping));
            sb.push(setup(p, ping));
        }
        // Let TIME_WAIT and the client threads settle between rounds.
        thread::sleep(Duration::from_millis(50));
    }
    let (sdm, sbm) = (median(&mut sd), median(&mut sb));
    let p90 = |v: &[f64]| v[(v.len() * 9) / 10];
    println!(
        "setup direct: median {sdm:.0} us, p90 {:.0} us; broker: median {sbm:.0} us, p90 {:.0} us",
        p90(&sd),
        p90(&sb)
    );
    drop(proxy);
    println!(
        "SUMMARY bulk_direct_mibs={dmed:.0} bulk_broker_mibs={bmed:.0} ratio={:.3} \
         cpu_direct_s={dcmed:.3} cpu_broker_s={bcmed:.3} \
         setup_direct_us={sdm:.0} setup_broker_us={sbm:.0} setup_added_us={:.0} records={}",
        bmed / dmed,
        sbm - sdm,
        records.load(Ordering::Relaxed)
    );
}
