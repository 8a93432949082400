//! `msgbatch serve`: the console's flags, checked here and handed to the library's `console::serve`.

use super::exit::Exit;
use anyhow::{bail, Result};
use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The workspace folder: console.db, campaigns/, runs/, tests/ (made if missing).
    #[arg(long, default_value = "msgbatch-workspace")]
    pub workspace: PathBuf,
    /// Address to listen on; off loopback it needs --tls-cert/--tls-key or --behind-proxy.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// PEM certificate chain for HTTPS.
    #[arg(long, requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// PEM private key for HTTPS.
    #[arg(long, requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// A proxy in front terminates TLS; --public-url is the address people open.
    #[arg(long, requires = "public_url")]
    pub behind_proxy: bool,
    /// The https:// address of the console behind the proxy.
    #[arg(long, requires = "behind_proxy")]
    pub public_url: Option<String>,
    /// The proxy's address, whose X-Forwarded-For names the client (repeatable, or a comma list);
    /// without it, behind a proxy, loopback peers are trusted (a proxy on the same host).
    #[arg(
        long = "trusted-proxy",
        value_name = "ADDR",
        requires = "behind_proxy",
        value_delimiter = ','
    )]
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// The pages' language (default: the browser's).
    #[arg(long, value_enum)]
    pub lang: Option<crate::report::Lang>,
    /// Largest upload in MB.
    #[arg(long, default_value_t = 2048)]
    pub max_upload_mb: u64,
    /// Largest decompressed size of an uploaded .xlsx or .ods, in MB.
    #[arg(long, default_value_t = 4096)]
    pub max_unpacked_mb: u64,
    /// Let an approver approve a campaign they made or submitted (off: two people, the default).
    #[arg(long)]
    pub allow_self_approval: bool,
    /// Serve `/metrics` (Prometheus text) on this address too, without a token (on the console's
    /// own address it needs a token with the metrics scope).
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<SocketAddr>,
    /// A throwaway workspace with the sample campaigns against the embedded sandbox.
    #[arg(long)]
    pub demo: bool,
    /// How a gateway run's results are collected when someone presses "Collect now".
    #[command(flatten)]
    pub collect: super::CollectArgs,
}

pub async fn serve(args: ServeArgs) -> Result<Exit> {
    let (workspace, _keep) = if args.demo {
        let dir = tempfile_dir()?;
        (dir.clone(), Some(dir))
    } else {
        (args.workspace, None)
    };
    if args.tls_cert.is_some() && args.public_url.is_some() {
        bail!(crate::engine::Refusal(
            "give either --tls-cert/--tls-key or --behind-proxy --public-url, not both".into()
        ));
    }
    let mut options = crate::console::ServeOptions::new(workspace);
    options.listen = args.listen;
    options.tls = args
        .tls_cert
        .zip(args.tls_key)
        .map(|(cert, key)| crate::console::TlsFiles { cert, key });
    options.public_url = args.public_url;
    options.trusted_proxies = args.trusted_proxies;
    options.lang = args.lang;
    options.max_upload = args.max_upload_mb << 20;
    options.max_unpacked = args.max_unpacked_mb << 20;
    options.two_person = !args.allow_self_approval;
    options.demo = args.demo;
    options.metrics_listen = args.metrics_listen;
    options.collect = args.collect.options();
    let result = crate::console::serve(options).await;
    if let Some(dir) = _keep {
        let _ = std::fs::remove_dir_all(dir);
    }
    result?;
    Ok(Exit::Done)
}

/// The demo's workspace: a new folder under the system's temporary folder, removed at the end.
fn tempfile_dir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("msgbatch-demo-{}", uuid::Uuid::new_v4().simple()));
    crate::files::create_private_dir(&dir)?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::ServeArgs;
    use clap::Parser;

    #[derive(Parser)]
    struct Serve {
        #[command(flatten)]
        args: ServeArgs,
    }

    #[test]
    fn trusted_proxies_repeat_or_come_as_a_list_and_need_a_proxy() {
        let parsed = Serve::try_parse_from([
            "serve",
            "--behind-proxy",
            "--public-url",
            "https://send.example.com",
            "--trusted-proxy",
            "10.0.0.2",
            "--trusted-proxy",
            "10.0.0.3,::1",
        ])
        .unwrap();
        let expected: Vec<std::net::IpAddr> = ["10.0.0.2", "10.0.0.3", "::1"]
            .iter()
            .map(|address| address.parse().unwrap())
            .collect();
        assert_eq!(parsed.args.trusted_proxies, expected);
        assert!(Serve::try_parse_from(["serve", "--trusted-proxy", "10.0.0.2"]).is_err());
        assert!(Serve::try_parse_from([
            "serve",
            "--behind-proxy",
            "--public-url",
            "https://send.example.com",
            "--trusted-proxy",
            "proxy.local",
        ])
        .is_err());
    }
}
