//! Loopback HTTP: free ports, plain GETs and readiness probes (`cargo xtask validate`'s
//! local runs, `cargo xtask kind`'s port-forwards).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::time::Duration;

use crate::step::{Error, Result};

/// A loopback port free at the time of asking and not handed out before by this process:
/// the kernel may give a port just released to the next `bind(0)`, so two ports asked for
/// before either server binds its own could otherwise be the same.
pub(crate) fn free_port() -> Result<u16> {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut given = GIVEN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    loop {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .map_err(|e| Error::Usage(format!("no free loopback port: {e}")))?;
        if !given.contains(&port) {
            given.push(port);
            return Ok(port);
        }
    }
}

/// `GET base + path` over HTTP/1.0 (`base` is `http://host:port`, as in a kubeconfig), with
/// one second to connect and five to answer: the status and the body.
pub(crate) fn http_get(base: &str, path: &str) -> std::io::Result<(u16, Vec<u8>)> {
    http_get_within(base, path, Duration::from_secs(1), Duration::from_secs(5))
}

/// [`http_get`] with `connect` to connect and `answer` for each read of the answer.
pub(crate) fn http_get_within(
    base: &str,
    path: &str,
    connect: Duration,
    answer: Duration,
) -> std::io::Result<(u16, Vec<u8>)> {
    let invalid =
        |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned());
    let host = base
        .strip_prefix("http://")
        .ok_or_else(|| invalid("not an http:// address"))?
        .trim_end_matches('/');
    let addr = host
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| invalid("no address"))?;
    let mut stream = TcpStream::connect_timeout(&addr, connect)?;
    stream.set_read_timeout(Some(answer))?;
    // One write: `write!` on an unbuffered stream sends each piece on its own, and a server
    // that answers after its first read would close with the rest unread (a reset).
    stream.write_all(format!("GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n").as_bytes())?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    let split = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| invalid("no end of the headers"))?;
    let status = std::str::from_utf8(&response[..split])
        .ok()
        .and_then(|head| head.split_whitespace().nth(1))
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| invalid("no status line"))?;
    Ok((status, response[split + 4..].to_vec()))
}

/// `name`'s probe `path` on loopback `port` answers 200, within 10 s.
pub(crate) fn probe(name: &str, port: u16, path: &str) -> Result {
    let base = format!("http://127.0.0.1:{port}");
    let mut last = String::from("no answer");
    for _ in 0..50 {
        match http_get(&base, path) {
            Ok((200, _)) => return Ok(()),
            Ok((status, _)) => last = status.to_string(),
            Err(e) => last = e.to_string(),
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Err(Error::Failed(format!(
        "{name} probe {path} answered {last}"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_get_gives_the_status_and_the_body() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            // The whole request head, however the client's writes arrive.
            let mut request = Vec::new();
            let mut chunk = [0; 1024];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = conn.read(&mut chunk).unwrap();
                assert!(n > 0, "the request ended before its head did");
                request.extend_from_slice(&chunk[..n]);
            }
            conn.write_all(b"HTTP/1.0 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy")
                .unwrap();
            String::from_utf8_lossy(&request).into_owned()
        });
        let (status, body) = http_get(&format!("http://127.0.0.1:{port}"), "/readyz?x=1").unwrap();
        assert_eq!((status, body.as_slice()), (503, &b"busy"[..]));
        let request = server.join().unwrap();
        assert!(
            request.starts_with("GET /readyz?x=1 HTTP/1.0\r\n"),
            "{request}"
        );
        assert!(http_get("https://127.0.0.1:1", "/").is_err());
    }
}
