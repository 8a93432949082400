//! A scheduled start (`run --start-at`): the time parsed in Asia/Seoul unless an offset is given, and the wait before sending, showing the time left.

use crate::campaign::quiet::{kst, now_kst};
use chrono::{DateTime, FixedOffset, NaiveDateTime, TimeZone};
use std::time::Duration;
use tokio::sync::watch;

/// How far in the past a start time may lie before it is taken for a mistake rather than "now".
const PAST_TOLERANCE: chrono::Duration = chrono::Duration::minutes(1);

/// Parses `2026-11-23T10:00`, `2026-11-23 10:00`, with seconds or not, in Asia/Seoul; or a time
/// with its own offset (`2026-11-23T01:00:00Z`, `2026-11-23T10:00+09:00`). Both faces read a
/// start time here: `run --start-at` and the console's start form.
pub fn parse_start_at(text: &str) -> Result<DateTime<FixedOffset>, String> {
    let text = text.trim();
    if let Ok(time) = DateTime::parse_from_rfc3339(text) {
        return Ok(time.with_timezone(&kst()));
    }
    // RFC 3339 wants seconds; people writing an offset often leave them out.
    for format in ["%Y-%m-%dT%H:%M%:z", "%Y-%m-%d %H:%M%:z"] {
        if let Ok(time) = DateTime::parse_from_str(text, format) {
            return Ok(time.with_timezone(&kst()));
        }
    }
    for format in [
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%d %H:%M",
        "%Y-%m-%d %H:%M:%S",
    ] {
        if let Ok(local) = NaiveDateTime::parse_from_str(text, format) {
            return kst()
                .from_local_datetime(&local)
                .single()
                .ok_or_else(|| format!("{text:?} is not a time in Asia/Seoul"));
        }
    }
    Err(format!(
        "{text:?} is not a start time: write 2026-11-23T10:00 (Asia/Seoul) or 2026-11-23T10:00+09:00"
    ))
}

/// The start time checked against now: a time more than a minute past is refused (a typo of the
/// date should not send at once); one just past means now.
pub fn check_start(start: DateTime<FixedOffset>) -> Result<DateTime<FixedOffset>, String> {
    let now = now_kst()?;
    if start < now - PAST_TOLERANCE {
        return Err(format!(
            "the start time {} is in the past (it is {})",
            start.format("%Y-%m-%d %H:%M KST"),
            now.format("%Y-%m-%d %H:%M KST")
        ));
    }
    Ok(start.max(now))
}

/// Waits until `start`, telling `events` how long is left every second; answers false if a stop
/// came first.
pub async fn wait_until(
    start: DateTime<FixedOffset>,
    controls: &mut watch::Receiver<super::control::Controls>,
    events: &dyn super::events::Sink,
) -> bool {
    let Ok(now) = now_kst() else { return true };
    let left = (start - now).to_std().unwrap_or_default();
    if left.is_zero() {
        return true;
    }
    let deadline = tokio::time::Instant::now() + left;
    loop {
        let remaining = deadline.saturating_duration_since(tokio::time::Instant::now());
        if remaining.is_zero() {
            return true;
        }
        events.event(&super::events::Event::Waiting {
            start_at: start.format("%Y-%m-%d %H:%M:%S KST").to_string(),
            seconds_left: remaining.as_secs() + u64::from(remaining.subsec_nanos() > 0),
        });
        tokio::select! {
            _ = tokio::time::sleep(remaining.min(Duration::from_secs(1))) => {}
            _ = super::control::until_stopped(controls) => return false,
        }
    }
}

/// Seconds left, for people: `42s`, `3m 5s`, `4h 0m`.
pub fn human(seconds: u64) -> String {
    match seconds {
        0..=59 => format!("{seconds}s"),
        60..=3599 => format!("{}m {}s", seconds / 60, seconds % 60),
        _ => format!("{}h {}m", seconds / 3600, seconds % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_without_an_offset_are_seoul_times() {
        let seoul = parse_start_at("2026-11-23T10:00").unwrap();
        assert_eq!(seoul.to_rfc3339(), "2026-11-23T10:00:00+09:00");
        assert_eq!(
            parse_start_at("2026-11-23 10:00:30").unwrap().to_rfc3339(),
            "2026-11-23T10:00:30+09:00"
        );
        let utc = parse_start_at("2026-11-23T01:00:00Z").unwrap();
        assert_eq!(utc, seoul, "an explicit offset is honoured");
        assert!(parse_start_at("tomorrow 10:00")
            .unwrap_err()
            .contains("2026-11-23T10:00"));
        assert_eq!(parse_start_at("2026-11-23T10:00+09:00").unwrap(), seoul);
        assert_eq!(parse_start_at("2026-11-23 10:00").unwrap(), seoul);
    }

    /// A wall time in Asia/Seoul within the years a campaign is scheduled in.
    fn seoul_wall_time() -> impl proptest::strategy::Strategy<Value = NaiveDateTime> {
        use proptest::prelude::*;
        let first = chrono::NaiveDate::from_ymd_opt(2000, 1, 1)
            .unwrap()
            .and_time(chrono::NaiveTime::MIN);
        (0i64..100 * 366 * 24 * 3600).prop_map(move |seconds| first + chrono::Duration::seconds(seconds))
    }

    proptest::proptest! {
        #[test]
        fn any_text_is_a_start_time_or_an_error_never_a_panic(text in "\\PC*") {
            let _ = parse_start_at(&text);
        }

        #[test]
        fn text_shaped_like_a_time_is_a_start_time_or_an_error_never_a_panic(
            text in "[0-9]{1,6}-[0-9]{1,3}-[0-9]{1,3}[T ][0-9]{1,3}:[0-9]{1,3}(:[0-9]{1,3})?([+-][0-9]{2}:[0-9]{2}|Z)?"
        ) {
            let _ = parse_start_at(&text);
        }

        #[test]
        fn a_written_seoul_time_reads_back_as_itself(wall in seoul_wall_time()) {
            let time = kst().from_local_datetime(&wall).single().unwrap();
            for written in [
                wall.format("%Y-%m-%d %H:%M:%S").to_string(),
                wall.format("%Y-%m-%dT%H:%M:%S").to_string(),
                time.to_rfc3339(),
                time.with_timezone(&chrono::Utc).to_rfc3339(),
            ] {
                proptest::prop_assert_eq!(parse_start_at(&written), Ok(time), "{}", written);
            }
            let minute = kst().from_local_datetime(&chrono::Timelike::with_second(&wall, 0).unwrap()).single().unwrap();
            for written in [
                wall.format("%Y-%m-%d %H:%M").to_string(),
                minute.format("%Y-%m-%dT%H:%M%:z").to_string(),
            ] {
                proptest::prop_assert_eq!(parse_start_at(&written), Ok(minute), "{}", written);
            }
        }
    }
}
