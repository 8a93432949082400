//! The month page: this month's limit, charged, reserved and left for everyone; the limit and its alert thresholds set by an administrator (every run of the month meets a new limit at its next chunk), and the workspace's frequency cap.

use super::{render, to, Me};
use crate::console::auth::{Admin, Posted, Signed};
use crate::console::error::ConsoleError;
use crate::console::month::{this_month, MonthFigures, MonthLimit};
use crate::console::store::Role;
use crate::console::words::Words;
use crate::console::Shared;
use crate::plan::capped::CapRule;
use askama::Template;
use axum::extract::State as Console;
use axum::response::Response;
use serde::Deserialize;

/// The month as a page shows it: its figures in won and the thresholds reached.
pub struct MonthView {
    pub month: String,
    pub limit: String,
    pub charged: String,
    pub reserved: String,
    pub left: String,
    /// `limit` set and charged + reserved past a threshold: the highest one reached.
    pub reached: Option<u32>,
}

impl MonthView {
    pub fn of(console: &Shared) -> MonthView {
        let month = this_month();
        let figures: MonthFigures = console.months.figures(&month);
        let setting = console.months.setting();
        MonthView {
            limit: crate::text::won_opt(figures.limit),
            charged: crate::text::won(figures.charged),
            reserved: crate::text::won(figures.reserved),
            left: crate::text::won_opt(figures.left()),
            reached: figures.reached(&setting.thresholds).last().copied(),
            month,
        }
    }
}

#[derive(Template)]
#[template(path = "console/month.html")]
struct MonthPage {
    w: &'static Words,
    me: Me,
    m: MonthView,
    limit: String,
    thresholds: String,
    can_set: bool,
    cap_text: String,
    cap_times: String,
    cap_days: String,
    retention_text: String,
    retention_days: String,
}

pub async fn page(Console(console): Console<Shared>, signed: Signed) -> Result<Response, ConsoleError> {
    let setting = console.months.setting();
    let cap = crate::console::frequency::rule(&console.store)?;
    let retention = crate::console::retention::days(&console.store)?;
    render(MonthPage {
        retention_text: retention_text(signed.words, retention),
        retention_days: retention.map(|days| days.to_string()).unwrap_or_default(),
        cap_text: cap_text(signed.words, cap),
        cap_times: cap.map(|rule| rule.times.to_string()).unwrap_or_default(),
        cap_days: cap.map_or_else(|| "7".to_string(), |rule| rule.days.to_string()),
        w: signed.words,
        me: Me::of(&signed),
        m: MonthView::of(&console),
        limit: setting.limit.map(|limit| limit.to_string()).unwrap_or_default(),
        thresholds: thresholds_text(&setting.thresholds),
        can_set: signed.can(Role::Admin),
    })
}

#[derive(Deserialize)]
pub struct MonthForm {
    #[serde(default)]
    limit: String,
    #[serde(default)]
    thresholds: String,
}

/// An administrator sets the monthly limit (empty: none) and its thresholds (`70, 90, 100`).
pub async fn set(
    Console(console): Console<Shared>,
    posted: Posted<MonthForm, Admin>,
) -> Result<Response, ConsoleError> {
    let Admin(signed) = posted.signed;
    let setting = read_form(&posted.form)?;
    console.months.set(&console.store, setting.clone())?;
    console.store.audit(
        &signed.user.name,
        "month limit",
        None,
        &format!(
            "{} · {}",
            crate::text::won_opt(setting.limit),
            thresholds_text(&setting.thresholds)
        ),
    )?;
    Ok(to("/month".into()))
}

/// The cap in words: its rule, or off.
fn cap_text(w: &Words, cap: Option<CapRule>) -> String {
    match cap {
        Some(rule) => crate::console::words::fill(
            w.cap_rule,
            &[("times", &rule.times.to_string()), ("days", &rule.days.to_string())],
        ),
        None => w.cap_off.to_string(),
    }
}

#[derive(Deserialize)]
pub struct CapForm {
    #[serde(default)]
    times: String,
    #[serde(default)]
    days: String,
}

/// An administrator sets the frequency cap (no number of messages: off). Campaigns checked
/// before meet the new rule at their start.
pub async fn set_cap(
    Console(console): Console<Shared>,
    posted: Posted<CapForm, Admin>,
) -> Result<Response, ConsoleError> {
    let Admin(signed) = posted.signed;
    let rule = read_cap(&posted.form)?;
    crate::console::frequency::set_rule(&console.store, rule)?;
    console.store.audit(
        &signed.user.name,
        "frequency cap",
        None,
        &cap_text(&crate::console::words::EN, rule),
    )?;
    Ok(to("/month#cap".into()))
}

/// The retention in words.
fn retention_text(w: &Words, days: Option<u32>) -> String {
    match days {
        Some(days) => crate::console::words::fill(w.retention_rule, &[("days", &days.to_string())]),
        None => w.retention_kept.to_string(),
    }
}

#[derive(Deserialize)]
pub struct RetentionForm {
    #[serde(default)]
    days: String,
}

/// An administrator sets how long personal data is kept (empty: kept); runs past it are purged
/// at once, then every hour.
pub async fn set_retention(
    Console(console): Console<Shared>,
    posted: Posted<RetentionForm, Admin>,
) -> Result<Response, ConsoleError> {
    let Admin(signed) = posted.signed;
    let days = read_retention(&posted.form)?;
    crate::console::retention::set_days(&console.store, days)?;
    console.store.audit(
        &signed.user.name,
        "retention",
        None,
        &retention_text(&crate::console::words::EN, days),
    )?;
    let sweeping = console.clone();
    tokio::spawn(async move {
        if let Err(error) = crate::console::retention::sweep(&sweeping).await {
            tracing::error!("retention: {error}");
        }
    });
    Ok(to("/month#retention".into()))
}

fn read_retention(form: &RetentionForm) -> Result<Option<u32>, ConsoleError> {
    let typed = form.days.trim();
    if typed.is_empty() {
        return Ok(None);
    }
    match typed.parse::<u32>() {
        Ok(days) if days <= crate::console::retention::MAX_DAYS => Ok(Some(days)),
        _ => Err(ConsoleError::invalid(
            crate::word!(refuse_retention),
            vec![("typed", format!("{typed:?}").into())],
        )),
    }
}

/// The cap as typed: empty messages for off; otherwise both figures within the rule's bounds.
fn read_cap(form: &CapForm) -> Result<Option<CapRule>, ConsoleError> {
    let times = form.times.trim();
    if times.is_empty() {
        return Ok(None);
    }
    let refused = || {
        ConsoleError::invalid(
            crate::word!(refuse_cap),
            vec![("typed", format!("{:?} / {:?}", times, form.days.trim()).into())],
        )
    };
    let times: u16 = times.parse().map_err(|_| refused())?;
    let days: u16 = form.days.trim().parse().map_err(|_| refused())?;
    CapRule::new(times, days).map(Some).map_err(|_| refused())
}

fn thresholds_text(thresholds: &[u32]) -> String {
    thresholds
        .iter()
        .map(|percent| format!("{percent} %"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The form read by the rules the page states: the limit in won as typed (`₩200,000`,
/// `200000원`), thresholds 1 to 100 percent.
fn read_form(form: &MonthForm) -> Result<MonthLimit, ConsoleError> {
    let limit = match form.limit.trim() {
        "" => None,
        typed => match crate::engine::rules::typed_amount(typed) {
            Some(limit) if limit > 0 => Some(limit),
            _ => {
                return Err(ConsoleError::invalid(
                    crate::word!(refuse_month_limit),
                    vec![("typed", format!("{typed:?}").into())],
                ))
            }
        },
    };
    let mut thresholds = Vec::new();
    for part in form
        .thresholds
        .split([',', ' ', '%'])
        .filter(|part| !part.trim().is_empty())
    {
        match part.trim().parse::<u32>() {
            Ok(percent) if (1..=100).contains(&percent) => thresholds.push(percent),
            _ => {
                return Err(ConsoleError::invalid(
                    crate::word!(refuse_month_thresholds),
                    vec![("typed", format!("{:?}", part.trim()).into())],
                ))
            }
        }
    }
    thresholds.sort_unstable();
    thresholds.dedup();
    Ok(MonthLimit { limit, thresholds })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn form(limit: &str, thresholds: &str) -> MonthForm {
        MonthForm {
            limit: limit.into(),
            thresholds: thresholds.into(),
        }
    }

    #[test]
    fn the_limit_is_read_as_a_person_types_won_and_thresholds_as_percents() {
        let read = read_form(&form("₩200,000", "90 %, 70, 100%")).unwrap();
        assert_eq!(
            read,
            MonthLimit {
                limit: Some(200_000),
                thresholds: vec![70, 90, 100]
            }
        );
        assert_eq!(read_form(&form("", "")).unwrap().limit, None);
        assert!(read_form(&form("0", "")).is_err());
        assert!(read_form(&form("100", "150")).is_err());
    }

    fn cap(times: &str, days: &str) -> CapForm {
        CapForm {
            times: times.into(),
            days: days.into(),
        }
    }

    #[test]
    fn the_cap_is_off_without_a_number_of_messages_and_refused_out_of_bounds() {
        assert_eq!(read_cap(&cap("", "7")).unwrap(), None);
        assert_eq!(read_cap(&cap(" 2 ", "7")).unwrap(), Some(CapRule { times: 2, days: 7 }));
        for (times, days) in [("0", "7"), ("2", "0"), ("2", "366"), ("two", "7"), ("2", "")] {
            assert!(read_cap(&cap(times, days)).is_err(), "{times} / {days}");
        }
    }

    #[test]
    fn the_retention_is_days_or_kept() {
        let form = |days: &str| RetentionForm { days: days.into() };
        assert_eq!(read_retention(&form("")).unwrap(), None);
        assert_eq!(read_retention(&form(" 30 ")).unwrap(), Some(30));
        assert_eq!(read_retention(&form("0")).unwrap(), Some(0));
        for typed in ["-1", "3651", "thirty", "1.5"] {
            assert!(read_retention(&form(typed)).is_err(), "{typed}");
        }
    }

    proptest! {
        /// Any typed cap: off, a rule within bounds, or refused; never a panic.
        #[test]
        fn any_typed_cap_is_read_in_bounds_or_refused(times in "\\PC{0,6}", days in "[0-9 a-z]{0,5}") {
            if let Ok(Some(rule)) = read_cap(&cap(&times, &days)) {
                prop_assert!(rule.times >= 1);
                prop_assert!((1..=CapRule::MAX_DAYS).contains(&rule.days));
            }
        }

        /// Any typed text: read or refused, never a panic; what is read is in range and sorted.
        #[test]
        fn any_typed_form_is_read_in_range_or_refused(limit in "\\PC{0,12}", thresholds in "[0-9, %a-z]{0,20}") {
            if let Ok(read) = read_form(&form(&limit, &thresholds)) {
                prop_assert!(read.limit.is_none_or(|limit| limit > 0));
                prop_assert!(read.thresholds.iter().all(|percent| (1..=100).contains(percent)));
                prop_assert!(read.thresholds.windows(2).all(|pair| pair[0] < pair[1]));
            }
        }
    }
}
