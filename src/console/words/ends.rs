//! A run's end as the run's record keeps it (the English of the live view's `end_text`) said again in a page's words.

use super::{fill, Words, EN};

/// A run's end as its record keeps it (the live view's `end_text`, or the start refused, the error, the console
/// ended), in the words `w`; the engine's own reason, if any, stays as it was given.
pub fn end_words(w: &Words, end: &str) -> String {
    let fixed = [
        (EN.live_end_complete, w.live_end_complete),
        (EN.live_end_stopped, w.live_end_stopped),
        (EN.live_end_interrupted, w.live_end_interrupted),
    ];
    if let Some((_, word)) = fixed.iter().find(|(english, _)| *english == end) {
        return word.to_string();
    }
    let with_hole = [
        (EN.live_end_failed, w.live_end_failed, "reason"),
        (EN.live_end_error, w.live_end_error, "reason"),
        (EN.live_end_not_started, w.live_end_not_started, "reason"),
        (EN.live_end_budget, w.live_end_budget, "won"),
        (EN.live_end_month_limit, w.live_end_month_limit, "won"),
    ];
    for (english, word, hole) in with_hole {
        let marker = format!("{{{hole}}}");
        let Some((before, after)) = english.split_once(&marker) else {
            continue;
        };
        if let Some(value) = end.strip_prefix(before).and_then(|rest| rest.strip_suffix(after)) {
            return fill(word, &[(hole, value)]);
        }
    }
    end.to_string()
}
