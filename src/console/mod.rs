//! `msgbatch serve`: the console, a second face on the engine's library for marketing teams in a browser (see DESIGN.md, "The console").
//!
//! It never re-implements a rule of the CLI: the check is the engine's `validate`, a start is the
//! engine's `run`, the live page reads the engine's events, the results are `report`'s files. The
//! server takes its listener and shutdown signal as arguments, so the tests run the same code.

pub mod api;
mod approval;
pub mod auth;
pub mod backup;
pub mod campaigns;
mod check;
pub mod client_address;
pub mod collecting;
mod compose;
pub mod connections;
mod demo;
pub mod error;
mod form;
pub mod frequency;
mod guard;
mod headers;
mod jobs;
mod live_chart;
mod live_view;
pub mod metrics;
mod month;
pub mod notify;
mod opt_outs;
mod pages;
mod phone_view;
mod retention;
mod runner;
mod settings;
pub mod sign_in_limit;
mod starters;
pub mod store;
mod tls;
pub mod tokens;
pub mod webhooks;
pub mod words;
mod workflow;

use anyhow::{bail, Context, Result};
use campaigns::Workspace;
use error::ConsoleError;
use sign_in_limit::SignInLimiter;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use store::{Role, SignInLink, Store, User};
use tokio::net::TcpListener;

pub use tls::TlsFiles;

/// How `msgbatch serve` was asked to run.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub workspace: PathBuf,
    pub listen: SocketAddr,
    pub tls: Option<TlsFiles>,
    /// `--behind-proxy --public-url URL`: a proxy terminates TLS and forwards to `listen`.
    pub public_url: Option<String>,
    /// `--trusted-proxy ADDR`: the proxies whose `X-Forwarded-For` names the client (behind a
    /// proxy only; none declared trusts loopback peers, as a proxy on the same host).
    pub trusted_proxies: Vec<std::net::IpAddr>,
    pub lang: Option<crate::report::Lang>,
    /// Upload cap in bytes, and the cap on a spreadsheet's decompressed size.
    pub max_upload: u64,
    pub max_unpacked: u64,
    /// Nobody approves their own campaign (on by default).
    pub two_person: bool,
    pub demo: bool,
    /// `--metrics-listen`: `/metrics` alone, without a token, on this address too.
    pub metrics_listen: Option<SocketAddr>,
    /// When webhooks are attempted again, and how long a receiver may take.
    pub webhook_schedule: webhooks::Schedule,
    /// How "Collect now" reads a gateway run's results (`msgbatch collect`'s options).
    pub collect: crate::engine::collect::CollectOptions,
}

impl ServeOptions {
    pub fn new(workspace: PathBuf) -> ServeOptions {
        ServeOptions {
            workspace,
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            tls: None,
            public_url: None,
            trusted_proxies: Vec::new(),
            lang: None,
            max_upload: 2 << 30,
            max_unpacked: 4 << 30,
            two_person: true,
            demo: false,
            metrics_listen: None,
            webhook_schedule: webhooks::Schedule::default(),
            collect: crate::engine::collect::CollectOptions::default(),
        }
    }
}

/// The console's state, shared by every request.
pub struct Console {
    pub store: Store,
    pub workspace: Workspace,
    pub hosts: Vec<String>,
    /// Served over HTTPS (TLS here or at the proxy): cookies are `Secure` and `__Host-`.
    pub secure: bool,
    pub base_url: String,
    pub lang: Option<&'static words::Words>,
    /// What this process does for each campaign: its run, or the collection of its results.
    pub jobs: jobs::Jobs,
    pub limiter: SignInLimiter,
    /// Whose `X-Forwarded-For` is believed when telling clients apart for the sign-in limits.
    pub proxies: client_address::TrustedProxies,
    /// One campaign state change at a time: two "start"s pressed at once start one run.
    pub transitions: tokio::sync::Mutex<()>,
    pub max_upload: u64,
    pub max_unpacked: u64,
    pub two_person: bool,
    pub collect: crate::engine::collect::CollectOptions,
    /// The month's limit and the ledger every run of it is part of.
    pub months: month::Months,
    /// Notices queued for the administrators' channels.
    pub notices: notify::Notices,
    /// The API's `Idempotency-Key`s being answered now.
    pub api_keys: api::idempotency::InFlight,
    pub metrics: metrics::ConsoleMetrics,
    pub webhooks: webhooks::Webhooks,
    /// The key of `POST /internal/backup`, also in the workspace's `serve.json`.
    pub control_key: String,
}

pub type Shared = Arc<Console>;

impl Console {
    pub fn cookie_name(&self) -> &'static str {
        if self.secure {
            "__Host-msgbatch"
        } else {
            "msgbatch"
        }
    }

    pub fn words_for(&self, headers: &axum::http::HeaderMap) -> &'static words::Words {
        words::for_request(self.lang, headers)
    }

    pub fn report_lang(&self) -> crate::report::Lang {
        self.lang.map_or(crate::report::Lang::En, words::Words::report_lang)
    }

    /// A one-time sign-in link for a user.
    pub fn sign_in_link(&self, user: &str) -> Result<String, ConsoleError> {
        let token = auth::random_token();
        self.store.put_link(
            &token,
            &SignInLink {
                user: user.to_string(),
                expires: auth::unix_now() + auth::LINK_LIFETIME.as_secs() as i64,
            },
        )?;
        Ok(format!("{}/welcome/{token}", self.base_url))
    }
}

/// A console ready to serve: its workspace opened, the address it answers to known.
pub struct Prepared {
    pub console: Shared,
    pub listener: TcpListener,
    pub tls: Option<tokio_rustls::TlsAcceptor>,
    /// The first admin's one-time sign-in link, on an empty workspace.
    pub first_link: Option<String>,
    pub interrupted: usize,
    /// `--metrics-listen`'s listener.
    pub metrics: Option<TcpListener>,
}

/// Opens the workspace and binds the listener; refuses an address off loopback without TLS or a
/// declared proxy.
pub async fn prepare(options: &ServeOptions) -> Result<Prepared> {
    if !options.listen.ip().is_loopback() && options.tls.is_none() && options.public_url.is_none() {
        bail!(crate::engine::Refusal(format!(
            "refusing to serve on {} without TLS: passwords and phone numbers would cross the network in clear. Give --tls-cert and --tls-key, or --behind-proxy --public-url https://… when a proxy terminates TLS, or listen on 127.0.0.1",
            options.listen
        )));
    }
    if let Some(url) = &options.public_url {
        if !url.starts_with("https://") {
            bail!(crate::engine::Refusal(format!(
                "--public-url must be an https:// address (the proxy's), not {url}"
            )));
        }
    }
    let tls = options.tls.as_ref().map(tls::acceptor).transpose()?;
    let metrics = match options.metrics_listen {
        Some(address) => Some(
            TcpListener::bind(address)
                .await
                .with_context(|| format!("cannot listen on {address} for /metrics"))?,
        ),
        None => None,
    };
    crate::files::create_private_dir(&options.workspace)
        .with_context(|| format!("cannot create the workspace {}", options.workspace.display()))?;
    let workspace = Workspace {
        root: options.workspace.clone(),
    };
    workspace.create().context("cannot create the workspace's folders")?;
    let store = Store::open(&options.workspace.join("console.db")).map_err(|error| anyhow::anyhow!("{error:#}"))?;
    let listener = TcpListener::bind(options.listen)
        .await
        .with_context(|| format!("cannot listen on {}", options.listen))?;
    let address = listener.local_addr()?;
    let secure = tls.is_some() || options.public_url.is_some();
    let base_url = match &options.public_url {
        Some(url) => url.trim_end_matches('/').to_string(),
        None => format!(
            "{}://{}",
            if tls.is_some() { "https" } else { "http" },
            match address.ip() {
                std::net::IpAddr::V4(ip) if ip.is_loopback() => format!("localhost:{}", address.port()),
                _ => address.to_string(),
            }
        ),
    };
    // Where `msgbatch workspace backup` finds this console: the listener itself (plain HTTP behind
    // a proxy), with a new control key.
    let control_url = match (&tls, &options.public_url) {
        (None, _) => format!("http://{address}"),
        (Some(_), _) => base_url.clone(),
    };
    let serving = backup::write_serving(&options.workspace, &control_url)
        .with_context(|| format!("cannot write {}", options.workspace.join(backup::SERVE_FILE).display()))?;
    // Every run's spend, from its checkpoint, before any run starts again.
    let months = month::Months::rebuild(&store, &workspace).map_err(|error| anyhow::anyhow!("{error:#}"))?;
    let console = Arc::new(Console {
        months,
        notices: notify::Notices::default(),
        api_keys: api::idempotency::InFlight::default(),
        metrics: metrics::ConsoleMetrics::default(),
        webhooks: webhooks::Webhooks::new(options.webhook_schedule.clone()),
        control_key: serving.control_key,
        store,
        workspace,
        hosts: guard::served_hosts(address, options.public_url.as_deref()),
        secure,
        base_url,
        lang: options.lang.map(|lang| match lang {
            crate::report::Lang::Ko => &words::KO,
            crate::report::Lang::En => &words::EN,
        }),
        jobs: jobs::Jobs::default(),
        limiter: SignInLimiter::default(),
        proxies: client_address::TrustedProxies::for_serving(options.public_url.is_some(), &options.trusted_proxies),
        transitions: tokio::sync::Mutex::new(()),
        max_upload: options.max_upload,
        max_unpacked: options.max_unpacked,
        two_person: options.two_person,
        collect: options.collect.clone(),
    });
    notify::spawn(&console);
    webhooks::spawn(&console);
    let interrupted = runner::mark_interrupted(&console).map_err(|error| anyhow::anyhow!("{error:#}"))?;
    // The frequency cap counts what every ended run sent, the interrupted ones included.
    frequency::record_ended(&console.store, &console.workspace)?;
    retention::spawn(&console);
    let first_link = first_admin(&console).map_err(|error| anyhow::anyhow!("{error:#}"))?;
    if options.demo {
        demo::fill(&console).map_err(|error| anyhow::anyhow!("{error:#}"))?;
    }
    Ok(Prepared {
        console,
        listener,
        tls,
        first_link,
        interrupted,
        metrics,
    })
}

/// On an empty workspace: the user `admin`, with a one-time link to set its password.
fn first_admin(console: &Console) -> Result<Option<String>, ConsoleError> {
    if !console.store.users()?.is_empty() {
        return Ok(None);
    }
    console.store.put_user(&User {
        name: "admin".into(),
        role: Role::Admin,
        password_hash: None,
        disabled: false,
        created_at: campaigns::now_text(),
    })?;
    console
        .store
        .audit("console", "first start", None, "made the user admin")?;
    console.sign_in_link("admin").map(Some)
}

/// Every route of the console: its pages, its API under `/api/v1`, and the probes; each answer
/// passes the guard (the `Host` check and the security headers).
pub fn router(console: Shared) -> axum::Router {
    axum::Router::new()
        .merge(pages::routes(&console))
        .nest("/api/v1", api::routes(&console))
        .merge(api::probes())
        .route("/metrics", axum::routing::get(metrics::on_token))
        .route("/internal/backup", axum::routing::post(backup::route))
        .fallback(|| async { ConsoleError::NotFound })
        .layer(axum::middleware::from_fn_with_state(console.clone(), metrics::count))
        .layer(axum::middleware::from_fn_with_state(console.clone(), guard::guard))
        .with_state(console)
}

/// `--metrics-listen`: `/metrics` alone, without a token, for the monitoring's network.
pub fn metrics_router(console: Shared) -> axum::Router {
    axum::Router::new()
        .route("/metrics", axum::routing::get(metrics::open))
        .with_state(console)
}

/// Serves until `shutdown` completes.
pub async fn run(prepared: Prepared, shutdown: impl Future<Output = ()>) -> std::io::Result<()> {
    let router = router(prepared.console.clone());
    let metrics = prepared.metrics.map(|listener| {
        tokio::spawn(std::future::IntoFuture::into_future(axum::serve(
            listener,
            metrics_router(prepared.console.clone()),
        )))
    });
    let served = tls::serve(prepared.listener, prepared.tls, router, shutdown).await;
    if let Some(metrics) = metrics {
        metrics.abort();
    }
    served
}

/// `msgbatch serve`: prints where it listens (and the first sign-in link), then serves until Ctrl-C.
pub async fn serve(options: ServeOptions) -> Result<()> {
    let prepared = prepare(&options).await?;
    let console = prepared.console.clone();
    println!("msgbatch console: {}", console.base_url);
    println!("workspace: {}", options.workspace.display());
    if prepared.interrupted > 0 {
        println!(
            "{} campaign(s) were sending when the console last ended: they are `interrupted`; an approver resumes them",
            prepared.interrupted
        );
    }
    if let Some(address) = prepared
        .metrics
        .as_ref()
        .and_then(|listener| listener.local_addr().ok())
    {
        println!("metrics: http://{address}/metrics");
    }
    if let Some(link) = &prepared.first_link {
        println!("first sign-in (user admin, works once, for 24 hours): {link}");
    }
    println!("Ctrl-C stops it.");
    run(prepared, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await?;
    stop_runs(&console).await;
    let _ = std::fs::remove_file(options.workspace.join(backup::SERVE_FILE));
    Ok(())
}

/// At Ctrl-C: every run is stopped through its handle (requests in flight end and are recorded,
/// nothing new goes) and every collection ends, so that each campaign is left `stopped` with its
/// report written, for an approver to resume. A second Ctrl-C leaves them as they are
/// (`interrupted` at the next start).
async fn stop_runs(console: &Console) {
    let stopping = console.jobs.stop_all();
    if stopping == 0 {
        return;
    }
    println!(
        "stopping {stopping} campaign(s): requests in flight end and are recorded, nothing new goes (Ctrl-C again leaves them `interrupted`)"
    );
    let ended = console.jobs.wait();
    tokio::select! {
        () = ended => println!("stopped: an approver resumes them"),
        _ = tokio::signal::ctrl_c() => println!("left as they were: `interrupted` at the next start"),
    }
}
