//! The month page: this month's limit, charged, reserved and left for everyone; the limit and its alert thresholds set by an administrator (every run of the month meets a new limit at its next chunk).

use super::{render, to, Me};
use crate::console::auth::{Admin, Posted, Signed};
use crate::console::error::ConsoleError;
use crate::console::month::{this_month, MonthFigures, MonthLimit};
use crate::console::store::Role;
use crate::console::words::Words;
use crate::console::Shared;
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
}

pub async fn page(Console(console): Console<Shared>, signed: Signed) -> Result<Response, ConsoleError> {
    let setting = console.months.setting();
    render(MonthPage {
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
                    |w| w.refuse_month_limit,
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
                    |w| w.refuse_month_thresholds,
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

    proptest! {
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
