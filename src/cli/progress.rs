//! The terminal face of a run's events: indicatif bars on a terminal, plain lines every few seconds otherwise, and the notices a person must see (warnings, uncertain chunks, pauses, the budget).

use crate::engine::events::{Event, Pace, PauseCause, Sink};
use crate::engine::schedule::human;
use crate::report::won;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One phase of work ("read", "send", "collect") with a known or unknown total.
struct Phase {
    label: &'static str,
    unit: &'static str,
    total: Option<u64>,
    done: u64,
    started: Instant,
    bar: Option<ProgressBar>,
    last_line: Instant,
}

const PLAIN_EVERY: Duration = Duration::from_secs(2);
/// How often a scheduled start's countdown is printed when stderr is not a terminal.
const WAIT_LINE_EVERY: Duration = Duration::from_secs(60);

impl Phase {
    fn new(label: &'static str, unit: &'static str, total: Option<u64>, terminal: bool) -> Phase {
        let bar = terminal.then(|| {
            let bar = match total {
                Some(total) => ProgressBar::new(total).with_style(
                    ProgressStyle::with_template(
                        "{prefix:>7} [{bar:30}] {human_pos}/{human_len} {msg} {per_sec} ETA {eta}",
                    )
                    .expect("valid template")
                    .progress_chars("=> "),
                ),
                None => ProgressBar::new_spinner().with_style(
                    ProgressStyle::with_template("{prefix:>7} {spinner} {human_pos} {msg} {per_sec}")
                        .expect("valid template"),
                ),
            };
            bar.set_prefix(label);
            bar.set_message(unit);
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        Phase {
            label,
            unit,
            total,
            done: 0,
            started: Instant::now(),
            bar,
            last_line: Instant::now(),
        }
    }

    /// Moves to `done`; a plain line at most every two seconds.
    fn reach(&mut self, done: u64) {
        self.done = done;
        if let Some(bar) = &self.bar {
            bar.set_position(done);
            return;
        }
        if self.last_line.elapsed() >= PLAIN_EVERY {
            self.last_line = Instant::now();
            eprintln!("{}", self.line());
        }
    }

    fn line(&self) -> String {
        let elapsed = self.started.elapsed().as_secs_f64().max(1e-9);
        let rate = self.done as f64 / elapsed;
        match self.total {
            Some(total) if total > 0 => {
                let left = total.saturating_sub(self.done) as f64;
                let eta = if rate > 0.0 {
                    format!("{:.0}s", left / rate)
                } else {
                    "?".into()
                };
                format!(
                    "{}: {}/{total} {} ({:.1}%), {rate:.0}/s, ETA {eta}",
                    self.label,
                    self.done,
                    self.unit,
                    100.0 * self.done as f64 / total as f64
                )
            }
            _ => format!("{}: {} {}, {rate:.0}/s", self.label, self.done, self.unit),
        }
    }

    fn finish(self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        let seconds = self.started.elapsed().as_secs_f64();
        eprintln!("{}: {} {} in {seconds:.1}s", self.label, self.done, self.unit);
    }
}

/// Prints a run's events on stderr. `quiet` (for `--json`) keeps only what a person must see:
/// warnings, uncertain chunks, pauses, the budget and a stop.
pub struct Terminal {
    quiet: bool,
    terminal: bool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    phase: Option<Phase>,
    last_wait_line: Option<Instant>,
    /// The stop notice was printed (Ctrl-C prints it at once; the engine says it again).
    stopping: bool,
}

impl Terminal {
    pub fn new(quiet: bool) -> Terminal {
        Terminal {
            quiet,
            terminal: !quiet && std::io::stderr().is_terminal(),
            state: Mutex::new(State::default()),
        }
    }

    /// A notice, printed without tearing a bar.
    fn say(&self, state: &State, text: &str) {
        match state.phase.as_ref().and_then(|phase| phase.bar.as_ref()) {
            Some(bar) => bar.println(text),
            None => eprintln!("{text}"),
        }
    }

    /// Starts a phase, ending the one before.
    fn begin(&self, state: &mut State, label: &'static str, unit: &'static str, total: Option<u64>) {
        if let Some(phase) = state.phase.take() {
            phase.finish();
        }
        state.phase = Some(Phase::new(label, unit, total, self.terminal));
    }

    fn advance(&self, state: &mut State, label: &'static str, by: u64) {
        if let Some(phase) = state.phase.as_mut().filter(|phase| phase.label == label) {
            let done = phase.done + by;
            phase.reach(done);
        }
    }
}

/// `12 per second, 4 at once`.
fn pace_text(pace: &Pace) -> String {
    let rate = match pace.rate {
        Some(rate) => format!("{rate} message(s) per second"),
        None => "no rate limit".into(),
    };
    format!("{rate}, {} request(s) at once", pace.concurrency)
}

impl Sink for Terminal {
    fn event(&self, event: &Event) {
        let mut state = self.state.lock().expect("terminal lock");
        match event {
            Event::Warning { text } => self.say(&state, &format!("warning: {text}")),
            Event::Uncertain {
                key,
                reason,
                recipients,
            } => {
                self.say(&state, &format!("chunk {key}: uncertain, not resent: {reason}"));
                self.advance(&mut state, "send", *recipients);
            }
            Event::Paused(PauseCause::Asked) => self.say(
                &state,
                "paused: no new chunk is sent; requests in flight end (msgbatch resume RUN_DIR goes on)",
            ),
            Event::Paused(PauseCause::QuietHours { window, reason, until }) => self.say(
                &state,
                &format!("paused: quiet hours {window} began ({reason}); going on at {until}"),
            ),
            Event::Paused(PauseCause::Failing { percent, window, failed }) => self.say(
                &state,
                &format!(
                    "paused: {failed} of the last {window} answered recipients were not accepted (more than {percent} %); look into it, then msgbatch resume RUN_DIR goes on, or msgbatch stop RUN_DIR"
                ),
            ),
            Event::Resumed => self.say(&state, "resumed"),
            Event::Pace(pace) => self.say(&state, &format!("pace: {}", pace_text(pace))),
            Event::BudgetReached(reached) => self.say(
                &state,
                &format!(
                    "budget reached: charged {} + reserved {} of {}; the next chunk needs up to {}: no new chunk is sent",
                    won(reached.charged),
                    won(reached.reserved),
                    won(reached.limit),
                    won(reached.next_chunk)
                ),
            ),
            Event::Stopping if !state.stopping => {
                state.stopping = true;
                self.say(
                    &state,
                    "stopping: no new chunks; waiting for the requests in flight (Ctrl-C again to quit now)",
                );
            }
            _ if self.quiet => {}
            Event::Read { rows } => {
                if state.phase.as_ref().is_none_or(|phase| phase.label != "read") {
                    self.begin(&mut state, "read", "rows", None);
                }
                if let Some(phase) = state.phase.as_mut() {
                    phase.reach(*rows);
                }
            }
            Event::ReadDone { rows, .. } => {
                if let Some(mut phase) = state.phase.take() {
                    phase.done = *rows;
                    phase.finish();
                }
            }
            Event::Started {
                run_dir,
                to_send,
                uncertain_before,
                resend_uncertain,
                pace,
                budget,
                spend,
                ..
            } => {
                eprintln!("run directory {}", run_dir.display());
                if *uncertain_before > 0 {
                    let action = if *resend_uncertain {
                        "sending them again (--resend-uncertain)"
                    } else {
                        "not resending them (use --resend-uncertain to)"
                    };
                    eprintln!(
                        "{uncertain_before} recipient(s) in chunks that may or may not have been sent: {action}"
                    );
                }
                eprintln!("pace: {}", pace_text(pace));
                if let Some(limit) = budget {
                    eprintln!(
                        "budget {}: charged {} and reserved {} so far",
                        won(*limit),
                        won(spend.charged),
                        won(spend.reserved)
                    );
                }
                self.begin(&mut state, "send", "recipients", Some(*to_send));
            }
            Event::Waiting {
                start_at,
                seconds_left,
            } => {
                let every = if self.terminal {
                    Duration::from_secs(1)
                } else {
                    WAIT_LINE_EVERY
                };
                if state.last_wait_line.is_none_or(|last| last.elapsed() >= every) {
                    state.last_wait_line = Some(Instant::now());
                    eprintln!(
                        "waiting to start at {start_at} (in {}); Ctrl-C leaves the run ready to resume",
                        human(*seconds_left)
                    );
                }
            }
            Event::Answered { recipients, .. } => self.advance(&mut state, "send", *recipients),
            Event::Collecting { settled, total } => {
                if state.phase.as_ref().is_none_or(|phase| phase.label != "collect") {
                    self.begin(&mut state, "collect", "results", Some(*total));
                }
                if let Some(phase) = state.phase.as_mut() {
                    phase.reach(*settled);
                }
            }
            Event::CollectWait { seconds } => self.say(
                &state,
                &format!("collect: next read in {seconds}s (results settle about 5 minutes after acceptance)"),
            ),
            Event::Finished { .. } => {
                if let Some(phase) = state.phase.take() {
                    phase.finish();
                }
            }
            _ => {}
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        if let Ok(state) = self.state.get_mut() {
            if let Some(phase) = state.phase.take() {
                if !self.quiet {
                    phase.finish();
                }
            }
        }
    }
}
