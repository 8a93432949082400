//! The console's connections: plain HTTP on loopback or behind a proxy, HTTPS with rustls (`--tls-cert`, `--tls-key`); each request knows its peer's address (for the sign-in limit).

use anyhow::{Context, Result};
use axum::extract::ConnectInfo;
use axum::Router;
use hyper_util::rt::TokioIo;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

#[derive(Debug, Clone)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

pub fn acceptor(files: &TlsFiles) -> Result<TlsAcceptor> {
    let certs = CertificateDer::pem_file_iter(&files.cert)
        .with_context(|| format!("cannot read the certificate {}", files.cert.display()))?
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("cannot read the certificate {}", files.cert.display()))?;
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .with_context(|| format!("cannot read the private key {}", files.key.display()))?;
    let config = tokio_rustls::rustls::ServerConfig::builder_with_provider(Arc::new(
        tokio_rustls::rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .context("TLS set-up")?
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .context("the certificate and the key do not make a TLS identity")?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Accepts connections until `shutdown`; open connections then end.
pub async fn serve(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    router: Router,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let (closing_tx, closing_rx) = tokio::sync::watch::channel(false);
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!("console accept failed: {error}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let router = router.clone();
        let tls = tls.clone();
        let mut closing = closing_rx.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
                request.extensions_mut().insert(ConnectInfo(peer));
                router.clone().oneshot(request.map(axum::body::Body::new))
            });
            let builder = hyper::server::conn::http1::Builder::new();
            match tls {
                None => {
                    let connection = builder.serve_connection(TokioIo::new(stream), service);
                    tokio::select! {
                        _ = connection => {}
                        _ = closing.changed() => {}
                    }
                }
                Some(tls) => {
                    let Ok(stream) = tls.accept(stream).await else { return };
                    let connection = builder.serve_connection(TokioIo::new(stream), service);
                    tokio::select! {
                        _ = connection => {}
                        _ = closing.changed() => {}
                    }
                }
            }
        });
    }
    let _ = closing_tx.send(true);
    Ok(())
}
