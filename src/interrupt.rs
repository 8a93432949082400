//! Ctrl-C, listened for from the moment the listener is made rather than from the first poll of a task.
//!
//! `tokio::signal::ctrl_c()` installs its handler only when its future is first polled. Spawned
//! as a task, that happens at some later moment on another worker, and a Ctrl-C that comes before
//! it takes the default action and kills the process: a run that has just printed "Ctrl-C leaves
//! the run ready to resume" would then die by the signal instead of stopping cleanly. Making the
//! listener here, on the caller's thread, installs the handler before anything that promises it.

use std::io;

/// A registered Ctrl-C handler; `next` waits for the next Ctrl-C.
pub struct Interrupts {
    #[cfg(unix)]
    signal: tokio::signal::unix::Signal,
    #[cfg(windows)]
    signal: tokio::signal::windows::CtrlC,
}

impl Interrupts {
    /// Installs the handler now (inside a Tokio runtime). From here on a Ctrl-C is delivered to
    /// `next` and no longer ends the process.
    pub fn listen() -> io::Result<Interrupts> {
        #[cfg(unix)]
        let signal = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
        #[cfg(windows)]
        let signal = tokio::signal::windows::ctrl_c()?;
        Ok(Interrupts { signal })
    }

    /// The next Ctrl-C; `None` once no more can come.
    pub async fn next(&mut self) -> Option<()> {
        self.signal.recv().await
    }
}
