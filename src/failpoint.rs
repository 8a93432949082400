//! Crash points for tests of at-most-once: `MSGBATCH_FAILPOINT=NAME:N` aborts the process (like `kill -9`) at the N-th time it reaches NAME.
//!
//! `NAME:N:panic` panics there instead, to test that a panic in a task fails the run.
//! Names: `after-in-flight` (chunk durably marked, request not yet sent), `after-response`
//! (answer received, results not yet written), `after-done` (results and `done` written);
//! `parquet-reader` and `spreadsheet-reader` (inside the readers' calls, where a damaged file can
//! make the library panic: with `:panic`, the containment of such a panic is tested).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

pub const ENV: &str = "MSGBATCH_FAILPOINT";

struct Armed {
    name: String,
    at: u64,
    panic: bool,
    hits: AtomicU64,
}

fn armed() -> Option<&'static Armed> {
    static ARMED: OnceLock<Option<Armed>> = OnceLock::new();
    ARMED
        .get_or_init(|| {
            let text = std::env::var(ENV).ok()?;
            let mut parts = text.split(':');
            let name = parts.next()?.to_string();
            let at = parts.next()?.trim().parse().ok()?;
            let panic = parts.next() == Some("panic");
            Some(Armed {
                name,
                at,
                panic,
                hits: AtomicU64::new(0),
            })
        })
        .as_ref()
}

/// Marks that the run reached `name`; aborts if this is the armed hit.
pub fn reached(name: &str) {
    if let Some(armed) = armed() {
        if armed.name == name && armed.hits.fetch_add(1, Ordering::SeqCst) + 1 == armed.at {
            if armed.panic {
                panic!("failpoint {name}:{} reached", armed.at);
            }
            eprintln!("msgbatch: failpoint {name}:{} reached, aborting", armed.at);
            std::process::abort();
        }
    }
}
