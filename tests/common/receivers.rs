//! Receivers a test starts on loopback for the console's notifications: an HTTP endpoint that keeps what it is sent (or answers 500, or never answers), and a minimal SMTP server that keeps each mail's envelope and text.

use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// How the HTTP receiver answers.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Ok,
    ServerError,
    /// Takes the request and never answers.
    Hang,
}

/// An incoming-webhook receiver: what it was sent, as JSON, in order.
pub struct Webhook {
    pub url: String,
    pub received: Arc<Mutex<Vec<serde_json::Value>>>,
}

impl Webhook {
    pub async fn start(answer: Answer) -> Webhook {
        let received: Arc<Mutex<Vec<serde_json::Value>>> = Arc::default();
        let kept = received.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |axum::Json(body): axum::Json<serde_json::Value>| {
                let kept = kept.clone();
                async move {
                    kept.lock().unwrap().push(body);
                    match answer {
                        Answer::Ok => axum::http::StatusCode::OK,
                        Answer::ServerError => axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                        Answer::Hang => std::future::pending().await,
                    }
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Webhook { url, received }
    }

    /// The `text` of each message received so far.
    pub fn texts(&self) -> Vec<String> {
        self.received
            .lock()
            .unwrap()
            .iter()
            .map(|body| body["text"].as_str().unwrap_or_default().to_string())
            .collect()
    }
}

/// One mail as the SMTP server took it.
#[derive(Debug, Clone)]
pub struct Mail {
    pub from: String,
    pub to: Vec<String>,
    pub data: String,
}

/// A minimal SMTP server (EHLO, MAIL, RCPT, DATA, QUIT) that keeps every mail.
pub struct Smtp {
    pub port: u16,
    pub mails: Arc<Mutex<Vec<Mail>>>,
}

impl Smtp {
    pub async fn start() -> Smtp {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let mails: Arc<Mutex<Vec<Mail>>> = Arc::default();
        let kept = mails.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(session(stream, kept.clone()));
            }
        });
        Smtp { port, mails }
    }
}

async fn session(stream: tokio::net::TcpStream, mails: Arc<Mutex<Vec<Mail>>>) {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    let _ = write.write_all(b"220 localhost ESMTP test\r\n").await;
    let (mut from, mut to) = (String::new(), Vec::new());
    while let Ok(Some(line)) = lines.next_line().await {
        let upper = line.to_ascii_uppercase();
        let reply: &[u8] = if upper.starts_with("EHLO") || upper.starts_with("HELO") {
            b"250-localhost\r\n250 8BITMIME\r\n"
        } else if upper.starts_with("MAIL FROM:") {
            from = line[10..].trim().trim_matches(['<', '>']).to_string();
            b"250 OK\r\n"
        } else if upper.starts_with("RCPT TO:") {
            to.push(line[8..].trim().trim_matches(['<', '>']).to_string());
            b"250 OK\r\n"
        } else if upper == "DATA" {
            let _ = write.write_all(b"354 end with .\r\n").await;
            let mut data = String::new();
            while let Ok(Some(line)) = lines.next_line().await {
                if line == "." {
                    break;
                }
                data.push_str(&line);
                data.push('\n');
            }
            mails.lock().unwrap().push(Mail {
                from: std::mem::take(&mut from),
                to: std::mem::take(&mut to),
                data,
            });
            b"250 OK queued\r\n"
        } else if upper == "QUIT" {
            let _ = write.write_all(b"221 bye\r\n").await;
            return;
        } else {
            b"250 OK\r\n"
        };
        if write.write_all(reply).await.is_err() {
            return;
        }
    }
}
