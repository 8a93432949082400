//! The sandbox: a faithful emulator of both deployments of the messaging service, served over HTTP on one listener.
//!
//! The standard deployment answers under `/standard`, the gateway under `/gateway`, and the
//! sandbox-only admin paths under `/_sandbox`.

pub mod accounts;
pub mod faults;
mod http;
pub mod state;

pub use accounts::Accounts;

use faults::Faults;
use http::{ConnectionKill, Shared};
use hyper_util::rt::TokioIo;
use parking_lot::Mutex;
use state::SandboxState;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::{watch, Notify};
use tower::ServiceExt;

/// Serves the sandbox on `listener` until `shutdown` completes. Connections still open then are closed.
pub async fn run(listener: TcpListener, accounts: Accounts, shutdown: impl Future<Output = ()>) -> std::io::Result<()> {
    let shared = Shared {
        state: Arc::new(Mutex::new(SandboxState::new(&accounts))),
        faults: Arc::new(Faults::new(accounts.faults.clone())),
    };
    let router = http::router(shared);
    let (closing_tx, closing_rx) = watch::channel(false);
    tokio::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors and the like: keep serving the connections we have.
                    tracing::warn!("sandbox accept failed: {error}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let kill = Arc::new(Notify::new());
        let router = router.clone();
        let kill_for_requests = kill.clone();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
            request
                .extensions_mut()
                .insert(ConnectionKill(kill_for_requests.clone()));
            router.clone().oneshot(request)
        });
        let mut closing = closing_rx.clone();
        tokio::spawn(async move {
            let connection = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                _ = connection => {}
                _ = kill.notified() => {}
                _ = closing.changed() => {}
            }
        });
    }
    let _ = closing_tx.send(true);
    Ok(())
}

/// A sandbox running on a task of the current runtime, bound to a free loopback port.
pub struct SandboxHandle {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl SandboxHandle {
    /// Starts the sandbox on `127.0.0.1:0`.
    pub async fn start(accounts: Accounts) -> std::io::Result<SandboxHandle> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(run(listener, accounts, async move {
            let _ = stopped.await;
        }));
        Ok(SandboxHandle {
            addr,
            stop: Some(stop),
            task: Some(task),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `{base_url}` of the standard deployment.
    pub fn base_url(&self) -> String {
        format!("http://{}/standard", self.addr)
    }

    /// `{gateway_url}` of the gateway deployment.
    pub fn gateway_url(&self) -> String {
        format!("http://{}/gateway", self.addr)
    }

    /// Root URL, under which the admin paths `/_sandbox/...` live.
    pub fn root_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting, closes open connections and waits for the server task.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for SandboxHandle {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
