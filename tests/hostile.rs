//! Hostile servers on loopback against the `msgbatch` binary: a redirect to another host, error answers that echo phone numbers or cut Hangul, a closed port.

mod common;

use common::process::{copy_samples, exec, msgbatch_at, path_str, Outcome};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

/// A Monday morning in Seoul: outside every quiet-hours window.
const DAYTIME: &str = "2026-11-23T11:00:00+09:00";
const SECRET: &str = "sbx-SECRET-hostile-5b0e71";
const GROUP: &str = "demo";
/// One number in each common spelling, as a service might echo a request back.
const ECHOED: [&str; 5] = [
    "01020001234",
    "010-2000-1235",
    "+82 10-2000-1236",
    "82-10-2000-1237",
    "010.2000.1238",
];

/// A request as a tiny server read it.
#[derive(Debug, Clone)]
struct Seen {
    request_line: String,
    headers: Vec<(String, String)>,
}

/// An HTTP/1.1 server on a loopback port 0 that gives every request the same answer and keeps
/// what it was sent. One request per connection (`Connection: close`).
struct TinyServer {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl TinyServer {
    /// `answer` makes the whole response (status line, headers, body) from the request target.
    fn start(answer: impl Fn(&str) -> String + Send + Sync + 'static) -> TinyServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&seen);
        let answer = Arc::new(answer);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let record = Arc::clone(&record);
                let answer = Arc::clone(&answer);
                std::thread::spawn(move || serve_one(stream, &record, answer.as_ref()));
            }
        });
        TinyServer { addr, seen }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn serve_one(stream: TcpStream, record: &Mutex<Vec<Seen>>, answer: &(dyn Fn(&str) -> String + Send + Sync)) {
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return;
    }
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim_end().is_empty() {
            break;
        }
        if let Some((name, value)) = line.trim_end().split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
    let length: usize = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    let target = request_line.split_whitespace().nth(1).unwrap_or("/").to_string();
    record.lock().unwrap().push(Seen {
        request_line: request_line.trim_end().to_string(),
        headers,
    });
    let _ = reader.get_mut().write_all(answer(&target).as_bytes());
}

fn response(status: &str, extra_headers: &str, content_type: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\n{extra_headers}Content-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// A server that sends every request on to `to` with a 307, a phone number in the `Location`.
fn redirecting_to(to: &TinyServer) -> TinyServer {
    let elsewhere = to.url("");
    TinyServer::start(move |target| {
        let location = format!("{elsewhere}{target}?phoneNumber=01020001234");
        response(
            "307 Temporary Redirect",
            &format!("Location: {location}\r\n"),
            "text/plain",
            "",
        )
    })
}

/// A server that would take anything, and records it: the host a redirect points to.
fn recorder() -> TinyServer {
    TinyServer::start(|_| response("200 OK", "", "application/json", r#"{"categories":[]}"#))
}

/// A management command against `server` with the secret key, nothing else from the environment.
fn management(server: &TinyServer) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_msgbatch"));
    command
        .env_clear()
        .stdin(std::process::Stdio::null())
        .env("MSGBATCH_API_KEY", SECRET)
        .env("MSGBATCH_GROUP_ID", GROUP)
        .env("MSGBATCH_BASE_URL", server.url("/standard"))
        .env("MSGBATCH_GATEWAY_URL", server.url("/gateway"));
    command
}

/// The sample SMS campaign and its recipients copied into `dir`, sending to `server`.
fn sms_campaign_against(dir: &Path, server: &TinyServer) -> PathBuf {
    copy_samples(dir, &["sms.toml", "recipients.csv"]);
    let campaign = dir.join("sms.toml");
    let sample = std::fs::read_to_string(&campaign).unwrap();
    let endpoint = format!(
        "endpoint = {{ base_url = \"{}\", gateway_url = \"{}\" }}\n",
        server.url("/standard"),
        server.url("/gateway")
    );
    std::fs::write(&campaign, format!("{endpoint}{sample}")).unwrap();
    campaign
}

/// `msgbatch run` of `campaign` into `dir/run`, with the secret key and the group from the environment.
fn run_campaign(dir: &Path, campaign: &Path) -> Outcome {
    let mut command = msgbatch_at(dir, DAYTIME);
    command.env("MSGBATCH_API_KEY", SECRET).env("MSGBATCH_GROUP_ID", GROUP);
    let out = dir.join("run");
    exec(command, &["run", path_str(campaign), "--out", path_str(&out)])
}

/// The redirect was not followed: `redirecting` got the one request, `elsewhere` nothing.
fn assert_not_followed(redirecting: &TinyServer, elsewhere: &TinyServer) -> Seen {
    assert!(
        elsewhere.seen().is_empty(),
        "the redirect was followed: {:?}",
        elsewhere.seen()
    );
    let asked = redirecting.seen();
    assert_eq!(asked.len(), 1, "one request, not retried: {asked:?}");
    asked[0].clone()
}

fn assert_no_phone_shown(outcome: &Outcome) {
    for number in ECHOED {
        assert!(!outcome.stderr.contains(number), "{number} shown:\n{}", outcome.show());
    }
    assert!(!outcome.stderr.contains("2000-123"), "{}", outcome.show());
    assert!(!outcome.stderr.contains(SECRET), "{}", outcome.show());
}

#[test]
fn a_redirect_of_a_management_call_is_not_followed() {
    let elsewhere = recorder();
    let redirecting = redirecting_to(&elsewhere);

    let outcome = exec(management(&redirecting), &["category"]);

    assert_ne!(outcome.code, Some(0), "{}", outcome.show());
    let asked = assert_not_followed(&redirecting, &elsewhere);
    assert!(asked.headers.iter().any(|(name, _)| name == "apikey"), "{asked:?}");
    assert!(outcome.stderr.contains("HTTP 307"), "{}", outcome.show());
    let location = format!("{}/gateway/category?phoneNumber=010-****-1234", elsewhere.url(""));
    assert!(outcome.stderr.contains(&location), "{}", outcome.show());
    assert_no_phone_shown(&outcome);
}

#[test]
fn a_redirect_of_a_campaign_send_is_not_followed_and_its_chunk_is_uncertain() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = recorder();
    let redirecting = redirecting_to(&elsewhere);
    let campaign = sms_campaign_against(dir.path(), &redirecting);

    let outcome = run_campaign(dir.path(), &campaign);

    // Not retried either: a 3xx is no proof that nothing was taken.
    let asked = assert_not_followed(&redirecting, &elsewhere);
    assert!(asked.request_line.starts_with("POST /standard/sms "), "{asked:?}");
    assert_eq!(outcome.code, Some(3), "incomplete: {}", outcome.show());
    assert!(outcome.stderr.contains("HTTP 307"), "{}", outcome.show());
    assert!(outcome.stdout.contains("uncertain"), "{}", outcome.show());
    let status = exec(
        msgbatch_at(dir.path(), DAYTIME),
        &["status", path_str(&dir.path().join("run")), "--json"],
    );
    let status = status.expect_code(0, "status").json();
    assert!(status["uncertain"].as_u64().unwrap() > 0, "{status:#}");
    assert_eq!(status["sent"].as_u64(), Some(0), "{status:#}");
    assert_no_phone_shown(&outcome);
}

/// A 400 whose message quotes the request's numbers back.
fn echoing_server() -> TinyServer {
    let message = format!("refused numbers: {}", ECHOED.join(", "));
    let body = serde_json::json!({"status": "fail", "code": "SBX_BAD_REQUEST", "message": message}).to_string();
    TinyServer::start(move |_| response("400 Bad Request", "", "application/json", &body))
}

fn assert_every_number_masked(outcome: &Outcome) {
    assert!(outcome.stderr.contains("SBX_BAD_REQUEST"), "{}", outcome.show());
    for last in 1234..=1238 {
        let masked = format!("010-****-{last}");
        assert!(
            outcome.stderr.contains(&masked),
            "{masked} missing:\n{}",
            outcome.show()
        );
    }
    assert_no_phone_shown(outcome);
}

#[test]
fn numbers_a_service_error_echoes_are_masked() {
    let server = echoing_server();
    let outcome = exec(management(&server), &["channel", "list"]);
    assert_ne!(outcome.code, Some(0), "{}", outcome.show());
    assert_every_number_masked(&outcome);

    let dir = tempfile::tempdir().unwrap();
    let campaign = sms_campaign_against(dir.path(), &server);
    let outcome = run_campaign(dir.path(), &campaign);
    assert_eq!(
        outcome.code,
        Some(1),
        "a refused chunk fails the run: {}",
        outcome.show()
    );
    assert_every_number_masked(&outcome);
}

#[test]
fn an_echoed_body_is_cut_between_characters() {
    // One ASCII byte, then three-byte Hangul: the 200th byte falls inside a character.
    let body = format!("x{}", "오류".repeat(80));
    let server = TinyServer::start(move |_| response("502 Bad Gateway", "", "text/plain; charset=utf-8", &body));
    let outcome = exec(management(&server), &["category"]);
    assert_ne!(outcome.code, Some(0), "{}", outcome.show());
    assert!(outcome.stderr.contains("HTTP 502: x오류"), "{}", outcome.show());
    assert!(
        !outcome.stderr.contains('\u{FFFD}'),
        "a character was cut:\n{}",
        outcome.show()
    );
}

#[test]
fn a_connect_error_does_not_show_the_phone_in_the_url() {
    let closed = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let mut command = Command::new(env!("CARGO_BIN_EXE_msgbatch"));
    command
        .env_clear()
        .env("MSGBATCH_API_KEY", SECRET)
        .env("MSGBATCH_GROUP_ID", GROUP)
        .env("MSGBATCH_GATEWAY_URL", format!("http://{closed}/gateway"))
        .env("MSGBATCH_LOG", "trace");
    let outcome = exec(
        command,
        &["sender", "token", "--phone", "010-2000-1234", "--yellow-id", "_myShop"],
    );
    assert_eq!(outcome.code, Some(1), "{}", outcome.show());
    assert!(outcome.stderr.contains("could not connect"), "{}", outcome.show());
    assert!(
        outcome.stderr.contains("phoneNumber=010-****-1234"),
        "{}",
        outcome.show()
    );
    assert_no_phone_shown(&outcome);
}

#[test]
fn a_panic_inside_a_reader_prints_the_one_error_line_naming_the_file_and_no_backtrace() {
    for (campaign, files, failpoint, file) in [
        (
            "text.toml",
            &["text.toml", "recipients.parquet", "suppression.csv"][..],
            "parquet-reader:1:panic",
            "recipients.parquet",
        ),
        (
            "excel-campaign.toml",
            &["excel-campaign.toml", "recipients.xlsx", "suppression.csv"][..],
            "spreadsheet-reader:1:panic",
            "recipients.xlsx",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        common::process::copy_samples(dir.path(), files);
        let mut command = common::process::msgbatch_at(dir.path(), "2026-11-23T11:00:00+09:00");
        command.env("MSGBATCH_FAILPOINT", failpoint).env("RUST_BACKTRACE", "1");
        let refused = common::process::exec(command, &["validate", campaign]);
        assert_eq!(refused.code, Some(2), "{}", refused.show());
        let lines: Vec<&str> = refused.stderr.lines().filter(|line| !line.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "one error line: {}", refused.show());
        assert!(lines[0].contains(file), "{}", refused.show());
        assert!(!refused.stderr.contains("internal error"), "{}", refused.show());
    }
}
