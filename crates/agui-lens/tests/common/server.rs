//! A scripted HTTP/1.1 server on 127.0.0.1 for the live tests: each route answers with a
//! script of bytes, pauses and faults, written by hand so every fault is exactly the one
//! asked for. Requests are kept for the tests to inspect.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One step of an answer.
#[derive(Clone, Debug)]
pub enum Step {
    /// Body bytes (sent as one chunk when the answer is chunked). `{threadId}` and `{runId}`
    /// are replaced by the request's.
    Send(Vec<u8>),
    /// Body bytes, one byte per write (and per chunk), with a pause between.
    Trickle(Vec<u8>, Duration),
    Pause(Duration),
    /// Reset the connection (RST), whatever is in flight.
    Reset,
    /// Close the connection without ending the body.
    Close,
    /// Keep the connection open and silent until the client goes away.
    Hang,
}

/// An answer: a status line and headers (none at all when empty), then steps. A chunked answer ends with the last
/// chunk unless a step ended the connection first.
#[derive(Clone, Debug)]
pub struct Script {
    pub head: String,
    pub steps: Vec<Step>,
}

impl Script {
    /// `200 OK`, `text/event-stream`, chunked.
    pub fn sse(steps: Vec<Step>) -> Script {
        Script {
            head: "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n".into(),
            steps,
        }
    }

    /// Any status and content type with a fixed body.
    pub fn fixed(status: &str, content_type: &str, body: &str) -> Script {
        Script {
            head: format!(
                "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n",
                body.len()
            ),
            steps: vec![Step::Send(body.as_bytes().to_vec())],
        }
    }

    fn chunked(&self) -> bool {
        self.head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
    }
}

/// A request as received.
#[derive(Clone, Debug)]
pub struct Received {
    pub path: String,
    /// Lowercased names.
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
    /// When the request had been read, and when its answer was written (None while it is
    /// being written, or when the connection ended first).
    pub started: std::time::Instant,
    pub finished: Option<std::time::Instant>,
}

pub struct Server {
    pub addr: SocketAddr,
    pub received: Arc<Mutex<Vec<Received>>>,
}

impl Server {
    /// Serves every path with one script.
    pub fn start(script: Script) -> Server {
        Server::routes(vec![("/", script)])
    }

    /// Serves each path with its script; `/` also answers unknown paths.
    pub fn routes(routes: Vec<(&str, Script)>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let routes: HashMap<String, Script> = routes
            .into_iter()
            .map(|(path, script)| (path.to_owned(), script))
            .collect();
        let received = Arc::new(Mutex::new(Vec::new()));
        let kept = received.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let routes = routes.clone();
                let kept = kept.clone();
                std::thread::spawn(move || {
                    let _ = serve(stream, &routes, &kept);
                });
            }
        });
        Server { addr, received }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn requests(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

fn serve(
    stream: TcpStream,
    routes: &HashMap<String, Script>,
    kept: &Mutex<Vec<Received>>,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_owned();
    let mut headers = HashMap::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body)?;
    let ids: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let index = {
        let mut kept = kept.lock().unwrap();
        kept.push(Received {
            path: path.clone(),
            headers,
            body,
            started: std::time::Instant::now(),
            finished: None,
        });
        kept.len() - 1
    };
    let script = routes
        .get(&path)
        .or_else(|| routes.get("/"))
        .cloned()
        .unwrap_or_else(|| Script::fixed("404 Not Found", "text/plain", "no such route"));
    let fill = |bytes: &[u8]| -> Vec<u8> {
        let text = String::from_utf8_lossy(bytes)
            .replace("{threadId}", ids["threadId"].as_str().unwrap_or("t1"))
            .replace("{runId}", ids["runId"].as_str().unwrap_or("r1"));
        text.into_bytes()
    };
    let chunked = script.chunked();
    let mut out = stream;
    // A fixed length is the length of the body once the request's ids are filled in.
    let head = match script.head.to_ascii_lowercase().find("content-length:") {
        Some(at) if !chunked => {
            let end = at
                + script.head[at..]
                    .find("\r\n")
                    .unwrap_or(script.head.len() - at);
            let filled: usize = script
                .steps
                .iter()
                .map(|step| match step {
                    Step::Send(bytes) | Step::Trickle(bytes, _) => fill(bytes).len(),
                    _ => 0,
                })
                .sum();
            format!(
                "{}Content-Length: {filled}{}",
                &script.head[..at],
                &script.head[end..]
            )
        }
        _ => script.head.clone(),
    };
    // An empty head: the request is read and never answered.
    if !head.is_empty() {
        out.write_all(head.as_bytes())?;
        out.write_all(b"\r\n")?;
        out.flush()?;
    }
    let send = |out: &mut TcpStream, bytes: &[u8]| -> std::io::Result<()> {
        if chunked {
            write!(out, "{:x}\r\n", bytes.len())?;
            out.write_all(bytes)?;
            out.write_all(b"\r\n")?;
        } else {
            out.write_all(bytes)?;
        }
        out.flush()
    };
    for step in &script.steps {
        match step {
            Step::Send(bytes) => send(&mut out, &fill(bytes))?,
            Step::Trickle(bytes, pause) => {
                for byte in fill(bytes) {
                    send(&mut out, &[byte])?;
                    std::thread::sleep(*pause);
                }
            }
            Step::Pause(d) => std::thread::sleep(*d),
            Step::Reset => {
                reset(&out);
                return Ok(());
            }
            Step::Close => return Ok(()),
            Step::Hang => {
                // Wait for the client to go away: a read returns when it closes.
                let mut sink = [0u8; 64];
                let _ = out.set_read_timeout(Some(Duration::from_secs(120)));
                while matches!(reader.read(&mut sink), Ok(n) if n > 0) {}
                return Ok(());
            }
        }
    }
    if chunked {
        out.write_all(b"0\r\n\r\n")?;
        out.flush()?;
    }
    kept.lock().unwrap()[index].finished = Some(std::time::Instant::now());
    Ok(())
}

/// Closes with a TCP reset: SO_LINGER on with a zero timeout, then close.
fn reset(stream: &TcpStream) {
    #[cfg(unix)]
    {
        use std::os::unix::io::AsRawFd;
        let linger = libc::linger {
            l_onoff: 1,
            l_linger: 0,
        };
        // SAFETY: a valid socket and a correctly sized option value.
        unsafe {
            libc::setsockopt(
                stream.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_LINGER,
                (&linger as *const libc::linger).cast(),
                std::mem::size_of::<libc::linger>() as libc::socklen_t,
            );
        }
    }
    // The reset goes out when the last handle to the socket is closed, on return.
}

/// An SSE frame for an event.
pub fn frame(json: &str) -> Vec<u8> {
    format!("data: {json}\n\n").into_bytes()
}

/// A whole run whose one message comes in `deltas` content events: a long answer, SSE framed.
pub fn long_answer(deltas: usize) -> Vec<u8> {
    let mut body = frame(r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}"}"#);
    body.extend(frame(
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}"#,
    ));
    for i in 0..deltas {
        body.extend(frame(&format!(
            r#"{{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"word {i:05} of a long answer "}}"#
        )));
    }
    body.extend(frame(r#"{"type":"TEXT_MESSAGE_END","messageId":"m1"}"#));
    body.extend(frame(
        r#"{"type":"RUN_FINISHED","threadId":"{threadId}","runId":"{runId}"}"#,
    ));
    body
}

/// A complete, clean run that echoes the request's ids.
pub fn clean_run() -> Vec<u8> {
    [
        r#"{"type":"RUN_STARTED","threadId":"{threadId}","runId":"{runId}","protocolVersion":"1.1"}"#,
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}"#,
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hello"}"#,
        r#"{"type":"TEXT_MESSAGE_END","messageId":"m1"}"#,
        r#"{"type":"RUN_FINISHED","threadId":"{threadId}","runId":"{runId}"}"#,
    ]
    .iter()
    .flat_map(|e| frame(e))
    .collect()
}
