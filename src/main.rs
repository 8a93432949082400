//! The `msgbatch` command: parse arguments, run, print errors with their cause chain, exit with a status.

use clap::Parser;
use msgbatch::cli::exit::Exit;
use std::io::IsTerminal;
use std::process::ExitCode;

// Rows are allocated on the reader thread and freed on others; mimalloc handles that far better than glibc.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = msgbatch::cli::Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("MSGBATCH_LOG").unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("msgbatch: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(msgbatch::cli::run(cli)) {
        Ok(exit) => exit.into(),
        Err(error) => {
            eprintln!("msgbatch: error: {error}");
            for cause in error.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            Exit::of_error(&error).into()
        }
    }
}
