//! Quiet hours in Asia/Seoul time: advertising SMS/LMS not 21:00–08:00, brand messages not 20:50–08:00.

use super::{Campaign, Kind};
use chrono::{DateTime, Duration, FixedOffset, NaiveTime, TimeZone, Utc};

/// Fixes "now" for quiet-hours decisions (RFC 3339), to rehearse a run at another hour.
pub const CLOCK_ENV: &str = "MSGBATCH_CLOCK";

/// Korea Standard Time: UTC+9 all year (no daylight saving).
pub fn kst() -> FixedOffset {
    FixedOffset::east_opt(9 * 3600).expect("valid offset")
}

/// Now in KST, or the time `MSGBATCH_CLOCK` fixes.
pub fn now_kst() -> Result<DateTime<FixedOffset>, String> {
    match std::env::var(CLOCK_ENV) {
        Ok(text) if !text.trim().is_empty() => DateTime::parse_from_rfc3339(text.trim())
            .map(|t| t.with_timezone(&kst()))
            .map_err(|e| format!("{CLOCK_ENV}={text:?} is not an RFC 3339 time: {e}")),
        _ => Ok(Utc::now().with_timezone(&kst())),
    }
}

/// A recorded time (RFC 3339) in Korean wall time, `2026-11-26 21:38 KST`, as the console's pages
/// show times; any other text as it is.
pub fn wall_time(stamp: &str) -> String {
    match DateTime::parse_from_rfc3339(stamp) {
        Ok(at) => at.with_timezone(&kst()).format("%Y-%m-%d %H:%M KST").to_string(),
        Err(_) => stamp.to_string(),
    }
}

/// A nightly window during which a campaign must not send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuietWindow {
    pub starts: NaiveTime,
    pub ends: NaiveTime,
    pub reason: &'static str,
}

impl QuietWindow {
    /// What `validate` and the console's check say when the campaign's quiet hours are in force
    /// now; `None` outside them (or without any).
    pub fn in_force_now(campaign: &Campaign) -> Option<String> {
        let window = QuietWindow::for_campaign(campaign)?;
        let now = now_kst().ok()?;
        window.contains(now).then(|| {
            format!(
                "{} now: {} ({:?})",
                window.describe(),
                window.reason,
                campaign.send.quiet_hours
            )
        })
    }

    /// When a start at `at` is one the engine refuses (its quiet hours under `enforce`): the
    /// moment they end, which is the next time it may start.
    pub fn enforced_end(campaign: &Campaign, at: DateTime<FixedOffset>) -> Option<DateTime<FixedOffset>> {
        let window = QuietWindow::for_campaign(campaign)?;
        (campaign.send.quiet_hours == super::QuietHoursMode::Enforce && window.contains(at))
            .then(|| window.next_end(at))
    }

    /// The window that applies to a campaign, if any.
    pub fn for_campaign(campaign: &Campaign) -> Option<QuietWindow> {
        let at = |h, m| NaiveTime::from_hms_opt(h, m, 0).expect("valid time");
        match campaign.kind {
            Kind::Brand => Some(QuietWindow {
                starts: at(20, 50),
                ends: at(8, 0),
                reason: "brand messages are blocked by the platform 20:50–08:00 KST",
            }),
            _ if campaign.is_advertising() => Some(QuietWindow {
                starts: at(21, 0),
                ends: at(8, 0),
                reason: "advertising messages need separate prior consent 21:00–08:00 KST (Information and Communications Network Act, art. 50)",
            }),
            _ => None,
        }
    }

    /// Whether `time` falls inside the window (which wraps past midnight).
    pub fn contains(&self, time: DateTime<FixedOffset>) -> bool {
        let clock = time.with_timezone(&kst()).time();
        clock >= self.starts || clock < self.ends
    }

    /// The next moment the window ends, at or after `time`.
    pub fn next_end(&self, time: DateTime<FixedOffset>) -> DateTime<FixedOffset> {
        let local = time.with_timezone(&kst());
        let today_end = kst()
            .from_local_datetime(&local.date_naive().and_time(self.ends))
            .single()
            .expect("fixed offsets are unambiguous");
        if today_end > local {
            today_end
        } else {
            today_end + Duration::days(1)
        }
    }

    /// The next moment the window starts, at or after `time`.
    pub fn next_start(&self, time: DateTime<FixedOffset>) -> DateTime<FixedOffset> {
        let local = time.with_timezone(&kst());
        let today_start = kst()
            .from_local_datetime(&local.date_naive().and_time(self.starts))
            .single()
            .expect("fixed offsets are unambiguous");
        if today_start > local {
            today_start
        } else {
            today_start + Duration::days(1)
        }
    }

    pub fn describe(&self) -> String {
        format!("{}–{} KST", self.starts.format("%H:%M"), self.ends.format("%H:%M"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<FixedOffset> {
        DateTime::parse_from_rfc3339(text).unwrap()
    }

    fn advertising() -> QuietWindow {
        let t = |h, m| NaiveTime::from_hms_opt(h, m, 0).unwrap();
        QuietWindow {
            starts: t(21, 0),
            ends: t(8, 0),
            reason: "",
        }
    }

    #[test]
    fn window_wraps_past_midnight() {
        let window = advertising();
        assert!(window.contains(at("2026-11-21T21:00:00+09:00")));
        assert!(window.contains(at("2026-11-22T03:00:00+09:00")));
        assert!(!window.contains(at("2026-11-22T08:00:00+09:00")));
        assert!(!window.contains(at("2026-11-21T20:59:59+09:00")));
        // 12:30 UTC is 21:30 in Seoul.
        assert!(window.contains(at("2026-11-21T12:30:00Z")));
    }

    #[test]
    fn next_end_is_the_coming_eight_oclock() {
        let window = advertising();
        assert_eq!(
            window.next_end(at("2026-11-21T22:00:00+09:00")),
            at("2026-11-22T08:00:00+09:00")
        );
        assert_eq!(
            window.next_end(at("2026-11-22T03:00:00+09:00")),
            at("2026-11-22T08:00:00+09:00")
        );
        assert_eq!(
            window.next_start(at("2026-11-22T09:00:00+09:00")),
            at("2026-11-22T21:00:00+09:00")
        );
    }
}
