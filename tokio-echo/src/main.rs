// SPDX-License-Identifier: GPL-2.0
//
// tokio-echo-server: a TCP echo server as Rust's async community writes one:
// tokio's multi-threaded runtime, a task per connection, read into the
// task's own buffer and write_all it back. Nothing here is tuned for the
// bench: the worker threads are the runtime's (one per CPU the process may
// run on), and TCP_NODELAY is set, as a service that answers small requests
// sets it.

use std::net::{Ipv4Addr, SocketAddr};
use std::process::exit;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::signal::unix::{signal, SignalKind};

const PROG: &str = "tokio-echo-server";

const USAGE: &str = "Usage: tokio-echo-server [options]
A TCP echo server as Rust's async community writes one: tokio, a task per
connection, every byte received is sent back.

  -p, --port N         port to listen on (default 12345)
      --addr ADDR      IPv4 address to listen on (default 127.0.0.1: this
                       machine only); 0.0.0.0 is every interface, open to any
                       host that can reach this machine
      --threads N      tokio's worker threads, 1 to 256 (default: the
                       runtime's, the CPUs this process may run on)
      --buffer-size BYTES  each connection's buffer, the most one read takes
                       (1024 to 67108864, default 262144)
  -v, --verbose        log every connection and error to stderr
  -h, --help           this text

SIGINT or SIGTERM stops it. Exit status: 0 after a clean stop, 1 when it
cannot serve (port busy, no privileges), 2 on bad usage.
";

struct Options {
    addr: Ipv4Addr,
    port: u16,
    threads: Option<usize>,
    buffer_size: usize,
    verbose: bool,
}

/// Ends the process as every server of the suite does on bad usage.
fn usage_error(msg: String) -> ! {
    eprintln!("{PROG}: {msg}\nTry '{PROG} --help'.");
    exit(2);
}

fn number(name: &str, s: &str, lo: usize, hi: usize) -> usize {
    let n: usize = s
        .parse()
        .unwrap_or_else(|_| usage_error(format!("{name}: '{s}' is not a number")));
    if n < lo || n > hi {
        usage_error(format!("{name}: {n} is out of range [{lo}, {hi}]"));
    }
    n
}

fn parse(mut args: impl Iterator<Item = String>) -> Options {
    let mut o = Options {
        addr: Ipv4Addr::LOCALHOST,
        port: 12345,
        threads: None,
        buffer_size: 256 * 1024,
        verbose: false,
    };
    while let Some(a) = args.next() {
        let mut value = || {
            args.next()
                .unwrap_or_else(|| usage_error(format!("{a} needs a value")))
        };
        match a.as_str() {
            "-h" | "--help" => {
                print!("{USAGE}");
                exit(0);
            }
            "-v" | "--verbose" => o.verbose = true,
            "-p" | "--port" => o.port = number(&a, &value(), 1, 65535) as u16,
            "--addr" => {
                let s = value();
                o.addr = s.parse().unwrap_or_else(|_| {
                    usage_error(format!(
                        "--addr: '{s}' is not an IPv4 address (a dotted quad such as 127.0.0.1 or 0.0.0.0)"
                    ))
                });
            }
            "--threads" => o.threads = Some(number(&a, &value(), 1, 256)),
            "--buffer-size" => o.buffer_size = number(&a, &value(), 1024, 64 << 20),
            _ if a.starts_with('-') => usage_error(format!("unknown option '{a}'")),
            _ => usage_error(format!("unexpected argument '{a}'")),
        }
    }
    o
}

/// Sends back every byte until the client's EOF, then shuts this side
/// down, so the client reads its echo and then EOF.
async fn echo(mut socket: TcpStream, size: usize) -> std::io::Result<()> {
    let mut buf = vec![0u8; size];
    loop {
        let n = socket.read(&mut buf).await?;
        if n == 0 {
            return socket.shutdown().await;
        }
        socket.write_all(&buf[..n]).await?;
    }
}

async fn serve(o: Options) {
    let listener = match TcpListener::bind(SocketAddr::from((o.addr, o.port))).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{PROG}: cannot listen on {} port {}: {e}", o.addr, o.port);
            exit(1);
        }
    };
    // Before the line that says it listens: whoever reads that line may
    // send SIGTERM at once, and must see the clean stop (exit 0).
    let (mut term, mut int) = match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(t), Ok(i)) => (t, i),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("{PROG}: cannot catch SIGINT and SIGTERM: {e}");
            exit(1);
        }
    };
    if o.addr.is_unspecified() {
        eprintln!("{PROG}: warning: listening on 0.0.0.0 (every interface): any host that can reach this machine can connect");
    }
    let threads = tokio::runtime::Handle::current().metrics().num_workers();
    eprintln!(
        "{PROG}: listening on {} port {} (threads={threads} buffer_size={})",
        o.addr, o.port, o.buffer_size
    );
    loop {
        tokio::select! {
            _ = term.recv() => return,
            _ = int.recv() => return,
            accepted = listener.accept() => match accepted {
                Ok((socket, peer)) => {
                    let _ = socket.set_nodelay(true);
                    let (size, verbose) = (o.buffer_size, o.verbose);
                    if verbose {
                        eprintln!("{PROG}: {peer}: accepted");
                    }
                    tokio::spawn(async move {
                        let end = echo(socket, size).await;
                        if verbose {
                            match end {
                                Ok(()) => eprintln!("{PROG}: {peer}: closed"),
                                Err(e) => eprintln!("{PROG}: {peer}: {e}"),
                            }
                        }
                    });
                }
                // Out of descriptors, say (EMFILE): the client waits in the
                // backlog until a connection closes. Pause rather than spin,
                // as hyper's and axum's accept loops do.
                Err(e) => {
                    if o.verbose {
                        eprintln!("{PROG}: accept: {e}");
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
        }
    }
}

fn main() {
    let o = parse(std::env::args().skip(1));
    let mut rt = tokio::runtime::Builder::new_multi_thread();
    rt.enable_all();
    if let Some(n) = o.threads {
        rt.worker_threads(n);
    }
    match rt.build() {
        Ok(rt) => {
            rt.block_on(serve(o));
            // Tasks still echoing are dropped with the runtime, at once.
            rt.shutdown_background();
        }
        Err(e) => {
            eprintln!("{PROG}: cannot start tokio's runtime: {e}");
            exit(1);
        }
    }
}
