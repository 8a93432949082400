//! Progress of long work: indicatif bars on a terminal, plain lines every few seconds otherwise.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One phase of work ("read", "send") with a known or unknown total.
pub struct Progress {
    label: &'static str,
    unit: &'static str,
    total: Option<u64>,
    done: AtomicU64,
    started: Instant,
    bar: Option<ProgressBar>,
    last_line: Mutex<Instant>,
    quiet: bool,
}

const PLAIN_EVERY: Duration = Duration::from_secs(2);

impl Progress {
    /// `quiet` prints nothing (for `--json`).
    pub fn new(label: &'static str, unit: &'static str, total: Option<u64>, quiet: bool) -> Progress {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = match total {
                Some(total) => ProgressBar::new(total).with_style(
                    ProgressStyle::with_template(
                        "{prefix:>5} [{bar:30}] {human_pos}/{human_len} {msg} {per_sec} ETA {eta}",
                    )
                    .expect("valid template")
                    .progress_chars("=> "),
                ),
                None => ProgressBar::new_spinner().with_style(
                    ProgressStyle::with_template("{prefix:>5} {spinner} {human_pos} {msg} {per_sec}")
                        .expect("valid template"),
                ),
            };
            bar.set_prefix(label);
            bar.set_message(unit);
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        Progress {
            label,
            unit,
            total,
            done: AtomicU64::new(0),
            started: Instant::now(),
            bar,
            last_line: Mutex::new(Instant::now()),
            quiet,
        }
    }

    pub fn add(&self, amount: u64) {
        let done = self.done.fetch_add(amount, Ordering::Relaxed) + amount;
        if let Some(bar) = &self.bar {
            bar.set_position(done);
            return;
        }
        if self.quiet {
            return;
        }
        let mut last = self.last_line.lock().expect("progress lock");
        if last.elapsed() >= PLAIN_EVERY {
            *last = Instant::now();
            eprintln!("{}", self.line(done));
        }
    }

    fn line(&self, done: u64) -> String {
        let elapsed = self.started.elapsed().as_secs_f64().max(1e-9);
        let rate = done as f64 / elapsed;
        match self.total {
            Some(total) if total > 0 => {
                let left = total.saturating_sub(done) as f64;
                let eta = if rate > 0.0 {
                    format!("{:.0}s", left / rate)
                } else {
                    "?".into()
                };
                format!(
                    "{}: {done}/{total} {} ({:.1}%), {rate:.0}/s, ETA {eta}",
                    self.label,
                    self.unit,
                    100.0 * done as f64 / total as f64
                )
            }
            _ => format!("{}: {done} {}, {rate:.0}/s", self.label, self.unit),
        }
    }

    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        if !self.quiet {
            let done = self.done();
            let seconds = self.started.elapsed().as_secs_f64();
            eprintln!("{}: {done} {} in {seconds:.1}s", self.label, self.unit);
        }
    }

    /// Prints a notice (an uncertain chunk, a pause) without tearing the bar, even when quiet:
    /// notices are not progress.
    pub fn say(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => eprintln!("{text}"),
        }
    }
}
