//! Collecting a gateway run's final results from the console: the engine's `collect_results` in a task, its progress from the engine's events, one collection per campaign and never beside its run, the report written again when it ends.

use super::error::ConsoleError;
use super::jobs::Kind;
use super::{Console, Shared};
use crate::engine::{self, Control, Event, Sink};
use parking_lot::Mutex;
use std::sync::Arc;

/// How far a collection has come, from the engine's events.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    pub settled: u64,
    pub total: u64,
    /// Seconds until the next read, while it waits for results to settle.
    pub next_read_in: Option<u64>,
}

/// One collection going on.
pub struct Collection {
    pub control: Control,
    progress: Mutex<Progress>,
}

impl Collection {
    pub fn progress(&self) -> Progress {
        self.progress.lock().clone()
    }
}

impl Sink for Collection {
    fn event(&self, event: &Event) {
        let mut progress = self.progress.lock();
        match event {
            Event::Collecting { settled, total } => {
                progress.settled = *settled;
                progress.total = *total;
                progress.next_read_in = None;
            }
            Event::CollectWait { seconds } => progress.next_read_in = Some(*seconds),
            _ => {}
        }
    }
}

/// The collection of the campaign's results, while it goes on.
pub fn active(console: &Console, id: &str) -> Option<Arc<Collection>> {
    console.jobs.get(id, Kind::Collection)
}

/// Starts collecting the campaign's results in a task. Refused while its run sends or a
/// collection of it goes on (one job a campaign: `jobs.rs`).
pub fn start(console: &Shared, id: &str) -> Result<(), ConsoleError> {
    let collection = Arc::new(Collection {
        control: Control::new(),
        progress: Mutex::new(Progress::default()),
    });
    let (task_console, task_id, task_collection) = (console.clone(), id.to_string(), collection.clone());
    let control = collection.control.clone();
    super::jobs::spawn(console, id, Kind::Collection, control, collection, async move {
        let (collection, console, id) = (task_collection, task_console, task_id);
        let run_dir = console.workspace.run_dir(&id);
        let found = engine::collect_results(&run_dir, &console.collect, &collection.control, collection.as_ref()).await;
        let text = match &found {
            Ok(report) if report.left_by_stop > 0 => format!(
                "{}; stopped with {} still to read: collect again to go on",
                report.line(),
                report.left_by_stop
            ),
            Ok(report) => report.line(),
            Err(error) => format!(
                "collection ended by an error: {}",
                crate::phone::mask_phones(&format!("{error:#}"))
            ),
        };
        if let Err(error) = finish(&console, &id, &text, found.is_ok()).await {
            tracing::error!("campaign {id}: cannot record its collection: {error}");
        }
    })
}

/// Records what the collection found and, when it read anything, writes the report again so
/// that its files and the results page carry the final results.
async fn finish(console: &Shared, id: &str, text: &str, read: bool) -> Result<(), ConsoleError> {
    if read {
        super::runner::write_report(console, id).await?;
    }
    // Refunds of failed results change what was charged.
    let figures = super::runner::status_when_free(&console.workspace.run_dir(id))
        .await
        .ok()
        .map(|status| super::campaigns::RunFigures::of(&status));
    let _transition = console.transitions.lock().await;
    let mut record = super::campaigns::find(&console.store, id)?;
    if let Some(run) = &mut record.run {
        run.collected = Some(text.to_string());
        if figures.is_some() {
            run.figures = figures;
        }
    }
    console.store.put_campaign(id, &record)?;
    console.store.audit("console", "collected", Some(id), text)
}
