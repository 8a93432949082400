//! Panics a library raises where an error was due (rust_xlsxwriter's streamed sheets when a write fails, polars and calamine on a damaged file), turned back into errors and kept out of the internal-error report.

use std::cell::Cell;
use std::panic::AssertUnwindSafe;

thread_local! {
    static CONTAINING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `work`; a panic inside it becomes the error "`what`: the panic's message".
pub fn contain<R>(what: &str, work: impl FnOnce() -> anyhow::Result<R>) -> anyhow::Result<R> {
    catch(work).unwrap_or_else(|message| Err(anyhow::anyhow!("{what}: {message}")))
}

/// Runs `work`; a panic inside it is answered as its message (`a panic` when it gave none), and
/// the panic hook prints nothing of it: the caller reports one error line, no backtrace.
pub fn catch<R>(work: impl FnOnce() -> R) -> Result<R, String> {
    let before = CONTAINING.replace(true);
    let result = std::panic::catch_unwind(AssertUnwindSafe(work));
    CONTAINING.set(before);
    result.map_err(|panic| panic_message(panic.as_ref()).unwrap_or_else(|| "a panic".into()))
}

/// What a panic said, when it said it in words.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> Option<String> {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
}

/// Whether this thread is inside [`contain`]: the panic hook stays quiet, the caller reports.
pub fn is_contained() -> bool {
    CONTAINING.get()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_inside_becomes_an_error_with_its_message_and_the_flag_is_restored() {
        let error = contain("cannot write report.xlsx", || -> anyhow::Result<()> {
            assert!(is_contained());
            panic!("Couldn't write to xml file: disk full");
        })
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "cannot write report.xlsx: Couldn't write to xml file: disk full"
        );
        assert!(!is_contained());
        assert_eq!(contain("x", || Ok(7)).unwrap(), 7);
    }
}
