//! The `msgbatch` command: parse arguments, run, print errors with their cause chain, exit with a status.

use clap::Parser;
use msgbatch::cli::exit::Exit;
use msgbatch::phone::mask_phones;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

// Rows are allocated on the reader thread and freed on others; mimalloc handles that far better than glibc.
// Without transparent huge pages (feature `no_thp`): with them, peak memory grew in 2 MB steps
// (validate of 1 M rows: 67–81 MB against 44–49 MB) for no measured gain in time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    restore_default_sigpipe();
    make_created_files_private();
    mask_phones_in_panics();
    let cli = msgbatch::cli::Cli::parse();
    let log = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("MSGBATCH_LOG").unwrap_or_else(|_| "info".into()))
        .with_writer(MaskedStderr::default)
        .with_target(false);
    match cli.log_format {
        msgbatch::cli::LogFormat::Text => log.with_ansi(std::io::stderr().is_terminal()).init(),
        msgbatch::cli::LogFormat::Json => log.json().with_ansi(false).init(),
    }
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
            // Any error of the chain may quote a URL's query or a row; none may show a phone number.
            eprintln!("msgbatch: error: {}", mask_phones(&error.to_string()));
            for cause in error.chain().skip(1) {
                eprintln!("  caused by: {}", mask_phones(&cause.to_string()));
            }
            Exit::of_error(&error).into()
        }
    }
}

/// Rust ignores SIGPIPE, which turns every `println!` into a panic (exit 101) once the reader of
/// stdout is gone (`msgbatch status RUN | head -1`). With the default disposition the process
/// ends quietly as any Unix filter does. Sockets are unaffected: the standard library sends with
/// `MSG_NOSIGNAL` (`SO_NOSIGPIPE` on macOS), so a peer that hangs up is still an error to handle.
fn restore_default_sigpipe() {
    #[cfg(unix)]
    {
        use std::os::raw::c_int;
        // The C library the standard library already links; the `libc` crate is not needed for one call.
        extern "C" {
            fn signal(signum: c_int, handler: usize) -> usize;
        }
        const SIGPIPE: c_int = 13;
        const SIG_DFL: usize = 0;
        // SAFETY: setting the default disposition of SIGPIPE before any thread starts; no handler runs.
        unsafe {
            signal(SIGPIPE, SIG_DFL);
        }
    }
}

/// Run directories, checkpoints (including the files sled creates), reports and rejects hold
/// phone numbers: whatever the process creates is readable by its owner only.
fn make_created_files_private() {
    #[cfg(unix)]
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
}

/// A panic's message may quote data; it goes out masked like every other line of stderr.
fn mask_phones_in_panics() {
    std::panic::set_hook(Box::new(|info| {
        if msgbatch::contained::is_contained() {
            // A library's panic where an error was due: its caller reports it as an error.
            return;
        }
        let thread = std::thread::current();
        let text = format!(
            "msgbatch: internal error in thread '{}': {info}",
            thread.name().unwrap_or("<unnamed>")
        );
        eprintln!("{}", mask_phones(&text));
        let backtrace = std::backtrace::Backtrace::capture();
        if backtrace.status() == std::backtrace::BacktraceStatus::Captured {
            eprintln!("{}", mask_phones(&backtrace.to_string()));
        }
    }));
}

/// The log's writer: one event is buffered, then written to stderr with phone numbers masked,
/// so a library's log line (a URL with its query, say) cannot show one.
#[derive(Default)]
struct MaskedStderr {
    buffer: Vec<u8>,
}

impl Write for MaskedStderr {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.buffer.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for MaskedStderr {
    fn drop(&mut self) {
        let text = String::from_utf8_lossy(&self.buffer);
        // A log line that cannot be written is not worth failing the command for.
        let _ = std::io::stderr().write_all(mask_phones(&text).as_bytes());
    }
}
