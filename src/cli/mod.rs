//! Command-line interface: argument parsing and dispatch to the sandbox and management commands.
//!
//! Past 600 lines on purpose: the whole command table (clap's derive) and its dispatch stay in one
//! place, which `--help`, the manual pages and the completions are made from; what each command
//! does lives in a module of its own.

mod campaign;
mod control;
pub mod exit;
mod manage;
mod manual;
mod output;
pub mod progress;
mod purge;
mod serve;
mod statement;
mod workspace;

use crate::client::Client;
use crate::engine::rules::parse_duration;
use crate::engine::RunOptions;
use crate::sandbox::accounts::{Accounts, DEMO_ACCOUNTS};
use anyhow::{Context, Result};
use chrono::{DateTime, FixedOffset};
use clap::{Args, Parser, Subcommand};
use exit::Exit;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser, Debug)]
#[command(name = "msgbatch", version, about = "Send notification, brand, SMS and LMS campaigns, each recipient at most once", long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// The log's lines on stderr: `text` for people, `json` (one object a line) for a log
    /// collector; phone numbers are masked in both.
    #[arg(long, global = true, value_enum, env = "MSGBATCH_LOG_FORMAT", default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Check a campaign and its recipients without sending: accounting, rejects.csv, estimated charge.
    Validate {
        campaign: PathBuf,
        /// Where to write the rejected rows (default: CAMPAIGN.rejects.csv beside the campaign).
        #[arg(long)]
        rejects: Option<PathBuf>,
        /// Exit non-zero when any row is rejected.
        #[arg(long)]
        strict: bool,
        /// Show, per lane, the messages of N recipients as they will be sent (the first rows, and the longest message).
        #[arg(long, value_name = "N")]
        preview: Option<usize>,
        #[arg(long)]
        json: bool,
    },
    /// Send a campaign: every recipient at most once, checkpointed in a run directory.
    Run {
        campaign: PathBuf,
        /// Run directory (default: the campaign's [output] dir, else runs/NAME-TIMESTAMP).
        #[arg(long)]
        out: Option<PathBuf>,
        #[arg(long)]
        json: bool,
        /// After sending, collect the gateway results (see `collect`).
        #[arg(long)]
        wait: bool,
        /// Validate and write the run directory now, send from this time on: 2026-11-23T10:00 (Asia/Seoul unless an offset is given).
        #[arg(long, value_parser = start_time)]
        start_at: Option<DateTime<FixedOffset>>,
        /// Spend cap in won; wins over the campaign's [send] budget (needs [prices]).
        #[arg(long, value_name = "WON", value_parser = budget)]
        budget: Option<i64>,
        #[command(flatten)]
        collect: CollectArgs,
    },
    /// Send the messages of chosen rows to a few test numbers (never to the recipients), in a directory of their own.
    SendTest {
        campaign: PathBuf,
        /// Test numbers, comma-separated (at most 20), like 01012345678,010-9876-5432.
        #[arg(long, required = true, value_delimiter = ',')]
        to: Vec<String>,
        /// Input rows to send, comma-separated, numbered as a spreadsheet shows them (header on row 1), as in rejects and previews (default: the first valid row of each lane and its longest message).
        #[arg(long, value_delimiter = ',')]
        rows: Option<Vec<u64>>,
        /// Directory of the test send (default: tests/NAME-TIMESTAMP beside the campaign).
        #[arg(long)]
        out: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Pause a running campaign from another terminal: no new chunk; requests in flight end.
    Pause { run_dir: PathBuf },
    /// Stop a running campaign from another terminal, as Ctrl-C does: requests in flight end, the run exits 3, resumable.
    Stop { run_dir: PathBuf },
    /// Change a running campaign's rate or concurrency, in effect within a second.
    Adjust {
        run_dir: PathBuf,
        /// Messages per second.
        #[arg(long, value_parser = rate)]
        rate: Option<f64>,
        /// Requests at once (1 to 256).
        #[arg(long, value_parser = concurrency)]
        concurrency: Option<usize>,
    },
    /// Write the delivery report of a run: report.csv, report.parquet, report.xlsx and summary.json/.md/.html.
    Report {
        run_dir: PathBuf,
        /// Folder for the report files (default: the run directory).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Language of summary.html.
        #[arg(long, value_enum, default_value = "en")]
        lang: crate::report::Lang,
        /// Start report.csv with a UTF-8 byte-order mark, so that Excel reads its Hangul right.
        #[arg(long)]
        csv_bom: bool,
        /// Also write report.raw.csv: report.csv with every cell as it is, for programs (report.csv marks a text that looks like a formula with a leading ').
        #[arg(long)]
        raw_csv: bool,
        /// Do not write report.xlsx. By default it is written when the rows fit one Excel sheet (1,048,575).
        #[arg(long, conflicts_with = "xlsx")]
        no_xlsx: bool,
        /// Write report.xlsx whatever the rows, on as many sheets as they need (most of the time of a report of millions of rows).
        #[arg(long)]
        xlsx: bool,
        #[arg(long)]
        json: bool,
    },
    /// Compare a ledger export (the sandbox's /_sandbox/ledger JSON) with a run's report; write the mismatches.
    Reconcile {
        run_dir: PathBuf,
        #[arg(long)]
        ledger: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Sum a month's charges over runs (by billing class, campaign and day): statement.csv, .xlsx and .html; with --ledger, compare them with the month's ledger export.
    Statement {
        #[arg(required = true, value_name = "RUN_DIR")]
        run_dirs: Vec<PathBuf>,
        /// The month, like 2026-11 (Asia/Seoul; default: the one month the runs sent in).
        #[arg(long, value_parser = month)]
        month: Option<crate::statement::Month>,
        /// Folder for the statement files (default: statement-MONTH in the current folder).
        #[arg(long)]
        out: Option<PathBuf>,
        /// A ledger export (the sandbox's /_sandbox/ledger JSON) to compare with the runs, entry by entry.
        #[arg(long)]
        ledger: Option<PathBuf>,
        /// Start statement.csv and ledger-mismatches.csv with a UTF-8 byte-order mark, for Excel.
        #[arg(long)]
        csv_bom: bool,
        #[arg(long)]
        json: bool,
    },
    /// Destroy finished runs' personal data (every name, variable and full number in their reports and checkpoints; numbers kept masked) and keep their totals, charges and statement; a run that can still send is refused.
    Purge {
        #[arg(required = true, value_name = "RUN_DIR")]
        run_dirs: Vec<PathBuf>,
        /// Purge only runs whose last answer came at least this many days ago (the others are kept).
        #[arg(long, value_name = "DAYS")]
        older_than: Option<u32>,
        #[arg(long)]
        json: bool,
    },
    /// Make a campaign of a run's failed or uncertain recipients (never one whose message was accepted).
    Retry {
        run_dir: PathBuf,
        #[arg(long, value_enum)]
        only: crate::retry::Only,
        /// Folder for the retry campaign (default: RUN_DIR-retry-ONLY beside the run).
        #[arg(long)]
        out: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Read the final results of a gateway run into its checkpoint.
    Collect {
        run_dir: PathBuf,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        collect: CollectArgs,
    },
    /// Continue a paused run, or a run after a stop or a crash; refuses if the campaign or the input changed.
    Resume {
        run_dir: PathBuf,
        /// Also send the chunks whose earlier request may or may not have reached the service.
        #[arg(long)]
        resend_uncertain: bool,
        /// Wait until this time before sending (as for `run --start-at`).
        #[arg(long, value_parser = start_time)]
        start_at: Option<DateTime<FixedOffset>>,
        /// Spend cap in won; wins over the campaign's [send] budget.
        #[arg(long, value_name = "WON", value_parser = budget)]
        budget: Option<i64>,
        /// Messages per second from now on (the campaign file is left as it is).
        #[arg(long, value_parser = rate)]
        rate: Option<f64>,
        /// Requests at once from now on (1 to 256).
        #[arg(long, value_parser = concurrency)]
        concurrency: Option<usize>,
        #[arg(long)]
        json: bool,
    },
    /// Where every row of a run stands: from its checkpoint, or live while the run is going.
    Status {
        run_dir: PathBuf,
        /// Follow a running campaign, printing each change, until it ends.
        #[arg(long)]
        watch: bool,
        #[arg(long)]
        json: bool,
    },
    /// The console: campaigns from the browser, with roles, approval and live control.
    Serve(serve::ServeArgs),
    /// A console workspace's backup and restore.
    #[command(subcommand)]
    Workspace(workspace::WorkspaceCommand),
    /// Run the sandbox of both deployments on one listener (standard under /standard, gateway under /gateway).
    Sandbox(SandboxArgs),
    /// Print a shell completion script: `msgbatch completions bash > /etc/bash_completion.d/msgbatch`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) on stdout, or with --out write msgbatch.1 and one page per command.
    Man {
        /// Folder for msgbatch.1 and msgbatch-COMMAND.1.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Sender profiles: request a verification token, issue a sender key, read its status.
    Sender {
        #[command(subcommand)]
        action: SenderAction,
        #[command(flatten)]
        service: ServiceArgs,
    },
    /// List the category codes for sender profiles.
    Category {
        #[command(flatten)]
        service: ServiceArgs,
    },
    /// Sending channels of the gateway deployment.
    Channel {
        #[command(subcommand)]
        action: ChannelAction,
        #[command(flatten)]
        service: ServiceArgs,
    },
    /// Gateway send results.
    Result {
        #[command(subcommand)]
        action: ResultAction,
        #[command(flatten)]
        service: ServiceArgs,
    },
}

#[derive(Args, Debug)]
pub struct SandboxArgs {
    /// Address to listen on, like 127.0.0.1:7070 (port 0 picks a free one and prints it).
    #[arg(long, default_value = "127.0.0.1:7070")]
    pub listen: String,
    /// Accounts file (TOML); without it the built-in demo accounts are used.
    #[arg(long)]
    pub accounts: Option<PathBuf>,
    /// How long gateway sends stay GW_PENDING, like 2s (overrides the accounts file).
    #[arg(long, value_parser = duration)]
    pub settle_after: Option<Duration>,
    /// Print the built-in demo accounts file and exit.
    #[arg(long)]
    pub print_accounts: bool,
}

/// How results are collected.
#[derive(Args, Debug, Clone)]
pub struct CollectArgs {
    /// No lookup before a send is this old (the service settles results about 5 minutes after acceptance).
    #[arg(long, default_value = "300s", value_parser = duration)]
    pub min_age: Duration,
    /// First wait between re-reads of pending records; doubles up to 5 minutes.
    #[arg(long, default_value = "60s", value_parser = positive_duration)]
    pub poll_every: Duration,
    /// Records still pending this long after acceptance are left provisional.
    #[arg(long, default_value = "1h", value_parser = duration)]
    pub horizon: Duration,
    /// Page size of the result listing (1 to 500).
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u32).range(1..=500))]
    pub page_size: u32,
}

impl CollectArgs {
    pub(crate) fn options(&self) -> crate::engine::collect::CollectOptions {
        crate::engine::collect::CollectOptions {
            min_age: self.min_age,
            poll_every: self.poll_every,
            horizon: self.horizon,
            page_size: self.page_size,
        }
    }
}

/// A start time flag: `2026-11-23T10:00` in Asia/Seoul, or with its own offset.
fn start_time(text: &str) -> Result<DateTime<FixedOffset>, String> {
    crate::engine::schedule::parse_start_at(text)
}

/// A number flag, read as the console reads a typed number (`150,000`, `₩150,000`, `150_000`),
/// or the error that says what was expected.
fn number<T: std::str::FromStr>(text: &str, expected: &str) -> Result<T, String> {
    crate::engine::rules::typed_number(text).ok_or_else(|| format!("{text:?} is not {expected}"))
}

/// A `--budget` in won.
fn budget(text: &str) -> Result<i64, String> {
    crate::campaign::check_budget(number(text, "an amount in won, like 150000")?)
}

/// A `--rate` in messages per second.
fn rate(text: &str) -> Result<f64, String> {
    crate::campaign::check_rate(number(text, "a number of messages per second")?)
}

/// A `--concurrency`.
fn concurrency(text: &str) -> Result<usize, String> {
    crate::campaign::check_concurrency(number(text, "a number of requests")?)
}

/// A month flag like `2026-11`.
fn month(text: &str) -> Result<crate::statement::Month, String> {
    crate::statement::Month::parse(text)
}

/// A duration flag like `300s`, `2s`, `500ms`, `5m` or `1h`; a bad value is a usage error (exit 2).
fn duration(text: &str) -> Result<Duration, String> {
    parse_duration(text)
}

/// A duration flag that must be more than zero (a zero wait would poll the service in a loop).
fn positive_duration(text: &str) -> Result<Duration, String> {
    match parse_duration(text)? {
        zero if zero.is_zero() => Err("must be more than zero".into()),
        duration => Ok(duration),
    }
}

/// Where the service is and how to print. Credentials come from the environment only.
#[derive(Args, Debug, Clone)]
pub struct ServiceArgs {
    /// {base_url} of the standard deployment.
    #[arg(
        long,
        env = "MSGBATCH_BASE_URL",
        global = true,
        default_value = "http://127.0.0.1:7070/standard"
    )]
    pub base_url: String,
    /// {gateway_url} of the gateway deployment.
    #[arg(
        long,
        env = "MSGBATCH_GATEWAY_URL",
        global = true,
        default_value = "http://127.0.0.1:7070/gateway"
    )]
    pub gateway_url: String,
    /// Print JSON for scripts instead of text.
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Subcommand, Debug)]
pub enum SenderAction {
    /// Ask the service to send a verification token by SMS to the channel admin's phone.
    Token {
        #[arg(long)]
        phone: String,
        /// Channel unique id: the part of the channel URL that starts with `_`.
        #[arg(long)]
        yellow_id: Option<String>,
    },
    /// Issue a sender key with the token received by SMS.
    Issue {
        #[arg(long)]
        token: String,
        #[arg(long)]
        phone: String,
        #[arg(long)]
        yellow_id: String,
        #[arg(long)]
        category: Option<String>,
    },
    /// Show a sender profile's status.
    Status { sender_key: String },
}

#[derive(Subcommand, Debug)]
pub enum ChannelAction {
    /// Connect a sender key to a new channel.
    Create {
        #[arg(long)]
        name: String,
        #[arg(long)]
        sender_key: String,
        #[arg(long)]
        kakao_search_id: Option<String>,
        #[arg(long)]
        callback_no: Option<String>,
    },
    /// List channels, every page.
    List {
        /// ENABLE or DELETED.
        #[arg(long)]
        status: Option<String>,
        /// Page size asked of the service (1 to 200).
        #[arg(long)]
        limit: Option<u32>,
    },
    /// Show one channel.
    Get { id: String },
    /// Change a channel's name, callback number or sender key.
    Update {
        id: String,
        #[arg(long)]
        name: Option<String>,
        #[arg(long)]
        callback_no: Option<String>,
        #[arg(long)]
        sender_key: Option<String>,
    },
    /// Soft-delete a channel (status DELETED).
    Delete { id: String },
}

#[derive(Subcommand, Debug)]
pub enum ResultAction {
    /// One send record by its id (the `results[].id` of a gateway send).
    Get { id: String },
    /// Every record of a send request, all pages.
    Group {
        send_group_id: String,
        /// Page size asked of the service (1 to 500).
        #[arg(long, default_value_t = 500)]
        limit: u32,
    },
}

fn client_from(service: &ServiceArgs) -> Result<Client> {
    let credentials = crate::engine::session::management_credentials();
    let terminal = progress::Terminal::new(true);
    crate::engine::session::client(&service.base_url, &service.gateway_url, &credentials, &terminal)
}

/// Runs the parsed command and returns the process exit status.
pub async fn run(cli: Cli) -> Result<Exit> {
    match cli.command {
        Command::Validate {
            campaign: path,
            rejects,
            strict,
            preview,
            json,
        } => campaign::validate(&path, rejects, strict, preview, json),
        Command::Run {
            campaign: path,
            out,
            json,
            wait,
            start_at,
            budget,
            collect,
        } => {
            let options = RunOptions {
                out,
                wait: wait.then(|| collect.options()),
                start_at,
                budget,
                ..RunOptions::default()
            };
            campaign::run(&path, options, json).await
        }
        Command::SendTest {
            campaign: path,
            to,
            rows,
            out,
            json,
        } => {
            let options = crate::engine::test_send::TestSendOptions { to, rows, out };
            campaign::send_test(&path, &options, json).await
        }
        Command::Collect { run_dir, json, collect } => campaign::collect(&run_dir, &collect.options(), json).await,
        Command::Resume {
            run_dir,
            resend_uncertain,
            start_at,
            budget,
            rate,
            concurrency,
            json,
        } => {
            let options = RunOptions {
                resend_uncertain,
                start_at,
                budget,
                rate,
                concurrency,
                ..RunOptions::default()
            };
            control::resume(&run_dir, options, json).await
        }
        Command::Pause { run_dir } => control::pause(&run_dir).await,
        Command::Stop { run_dir } => control::stop(&run_dir).await,
        Command::Adjust {
            run_dir,
            rate,
            concurrency,
        } => control::adjust(&run_dir, rate, concurrency).await,
        Command::Status { run_dir, watch, json } => campaign::status(&run_dir, watch, json).await,
        Command::Report {
            run_dir,
            out,
            lang,
            csv_bom,
            raw_csv,
            no_xlsx,
            xlsx,
            json,
        } => {
            let options = crate::report::ReportOptions {
                lang,
                csv_bom,
                xlsx: match (xlsx, no_xlsx) {
                    (true, _) => crate::report::Workbook::Always,
                    (_, true) => crate::report::Workbook::Never,
                    _ => crate::report::Workbook::WhenOneSheet,
                },
                raw_csv: if raw_csv {
                    crate::report::RawCsv::Write
                } else {
                    crate::report::RawCsv::Leave
                },
            };
            campaign::report(&run_dir, out.as_deref(), &options, json)
        }
        Command::Reconcile { run_dir, ledger, json } => campaign::reconcile(&run_dir, &ledger, json),
        Command::Statement {
            run_dirs,
            month,
            out,
            ledger,
            csv_bom,
            json,
        } => statement::statement(
            &run_dirs,
            &crate::statement::StatementOptions {
                month,
                out,
                ledger,
                csv_bom,
            },
            json,
        ),
        Command::Purge {
            run_dirs,
            older_than,
            json,
        } => purge::purge(&run_dirs, older_than, json),
        Command::Retry {
            run_dir,
            only,
            out,
            json,
        } => campaign::retry(&run_dir, only, out.as_deref(), json),
        Command::Sandbox(args) => run_sandbox(args).await,
        Command::Serve(args) => serve::serve(args).await,
        Command::Workspace(command) => workspace::workspace(command).await,
        Command::Completions { shell } => manual::completions(shell),
        Command::Man { out } => manual::pages(out.as_deref()),
        Command::Sender { action, service } => manage::sender(&client_from(&service)?, action, service.json).await,
        Command::Category { service } => manage::category(&client_from(&service)?, service.json).await,
        Command::Channel { action, service } => manage::channel(&client_from(&service)?, action, service.json).await,
        Command::Result { action, service } => manage::result(&client_from(&service)?, action, service.json).await,
    }
}

async fn run_sandbox(args: SandboxArgs) -> Result<Exit> {
    if args.print_accounts {
        print!("{DEMO_ACCOUNTS}");
        return Ok(Exit::Done);
    }
    let mut accounts = match &args.accounts {
        Some(path) => Accounts::load(path)?,
        None => Accounts::demo(),
    };
    if let Some(settle) = args.settle_after {
        accounts.settle_after = format!("{}ms", settle.as_millis());
    }
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let addr = listener.local_addr()?;
    let groups: Vec<&str> = accounts.groups.iter().map(|g| g.id.as_str()).collect();
    eprintln!(
        "sandbox listening on http://{addr}\n  base_url    http://{addr}/standard\n  gateway_url http://{addr}/gateway\n  groups      {}\n  settle      {}\nCtrl-C stops it.",
        groups.join(", "),
        accounts.settle_after
    );
    let mut interrupts = crate::interrupt::Interrupts::listen().context("cannot listen for Ctrl-C")?;
    let shutdown = async move {
        interrupts.next().await;
    };
    crate::sandbox::run(listener, accounts, shutdown).await?;
    eprintln!("sandbox stopped");
    Ok(Exit::Done)
}
