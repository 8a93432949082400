//! `msgbatch statement`: a month's charges over many runs, by billing class, campaign and day (Asia/Seoul), and their comparison with the month's ledger export.
//!
//! Each run is read from its checkpoint, its rows joined the way `report` joins them, so a run
//! needs no report written first and a partial run counts only what the service answered for.
//! A charge belongs to the day its request was answered; a run whose sends straddle months
//! contributes to each month by its send days.

mod files;

pub use crate::report::won;

use crate::api::ledger::{BillingClass, Ledger};
use crate::campaign::quiet::kst;
use crate::engine::{Refusal, Status};
use crate::reconcile::{self, Expected, Mismatch};
use crate::report::{self, ClassSummary, ReportRow, RunRows};
use anyhow::{Context, Result};
use chrono::{DateTime, Datelike, NaiveDate};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// A calendar month in Asia/Seoul.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Month {
    pub year: i32,
    pub month: u32,
}

impl Month {
    pub fn of(day: NaiveDate) -> Month {
        Month {
            year: day.year(),
            month: day.month(),
        }
    }

    /// `2026-11`.
    pub fn parse(text: &str) -> Result<Month, String> {
        let wrong = || format!("{text:?} is not a month like 2026-11");
        let (year, month) = text.trim().split_once('-').ok_or_else(wrong)?;
        if year.len() != 4 || month.len() != 2 {
            return Err(wrong());
        }
        let year: i32 = year.parse().map_err(|_| wrong())?;
        let month: u32 = month.parse().map_err(|_| wrong())?;
        NaiveDate::from_ymd_opt(year, month, 1).ok_or_else(wrong)?;
        Ok(Month { year, month })
    }
}

impl fmt::Display for Month {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}", self.year, self.month)
    }
}

impl Serialize for Month {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The day (Asia/Seoul) of a service `date` (epoch ms).
pub fn day_of(epoch_ms: i64) -> NaiveDate {
    DateTime::from_timestamp_millis(epoch_ms)
        .unwrap_or_default()
        .with_timezone(&kst())
        .date_naive()
}

pub struct StatementOptions {
    /// Default: the one month of the runs' sends.
    pub month: Option<Month>,
    /// Default: `statement-YYYY-MM` in the current folder.
    pub out: Option<PathBuf>,
    /// A ledger export to compare with the runs, entry by entry.
    pub ledger: Option<PathBuf>,
    pub csv_bom: bool,
}

/// One run in the statement.
#[derive(Debug, Clone, Serialize)]
pub struct RunInfo {
    /// The folder as given, to read the run; the files name the run by `name`.
    pub run_dir: PathBuf,
    /// The run directory's own name (its last component: the campaign's id in the console's
    /// workspace), which the statement's files show: never a path of the server's folders.
    pub name: String,
    pub campaign: String,
    pub kind: String,
    /// Rows the service answered for in the month.
    pub sends_in_month: u64,
    pub status: Status,
}

/// What one run's rows sent on one day were charged, per billing class.
#[derive(Debug, Clone, Serialize)]
pub struct Line {
    /// `2026-11-23`.
    pub day: String,
    pub campaign: String,
    /// The run's name ([`RunInfo::name`]).
    pub run: String,
    pub kind: String,
    pub billing_class: BillingClass,
    #[serde(flatten)]
    pub totals: ClassSummary,
}

/// The month's ledger against the runs.
#[derive(Debug, Clone, Serialize)]
pub struct LedgerComparison {
    pub ledger: PathBuf,
    /// Entries of the month (Asia/Seoul), compared.
    pub entries: u64,
    /// Entries of other months, left out.
    pub other_months: u64,
    /// Per billing class: (ledger charged, ledger refunded, runs charged, runs refunded).
    pub classes: BTreeMap<BillingClass, [i64; 4]>,
    pub mismatches: Vec<Mismatch>,
    pub mismatches_file: PathBuf,
    pub balanced: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Statement {
    pub month: Month,
    pub runs: Vec<RunInfo>,
    pub lines: Vec<Line>,
    pub classes: BTreeMap<BillingClass, ClassSummary>,
    pub campaigns: BTreeMap<String, ClassSummary>,
    /// By day (`2026-11-23`).
    pub days: BTreeMap<String, ClassSummary>,
    pub total: ClassSummary,
    pub ledger: Option<LedgerComparison>,
    pub files: Vec<PathBuf>,
}

/// What one run's rows sent on one day came to.
#[derive(Debug, Default)]
struct DayTally {
    sends: u64,
    classes: BTreeMap<BillingClass, ClassSummary>,
    /// The ledger entries the day's rows account for (kept only to compare with a ledger).
    expected: Expected,
}

/// The runs' rows, by run and send day, before the month is known.
#[derive(Debug, Default)]
struct Tally {
    days: BTreeMap<(usize, NaiveDate), DayTally>,
    keep_expected: bool,
}

impl Tally {
    /// Adds a row of run `run`; a row the service never answered for (rejected, pending,
    /// uncertain) has no send day and no charge.
    fn add(&mut self, run: usize, row: &ReportRow, sent_at: Option<i64>) {
        let Some(sent_at) = sent_at else {
            return;
        };
        let day = self.days.entry((run, day_of(sent_at))).or_default();
        day.sends += 1;
        report::add_charges(&mut day.classes, row);
        if self.keep_expected {
            day.expected.add(row, run);
        }
    }

    fn months(&self) -> BTreeSet<Month> {
        self.days.keys().map(|(_, day)| Month::of(*day)).collect()
    }
}

/// Reads every run, picks the month, sums its charges and writes `statement.csv`,
/// `statement.xlsx` and `statement.html` (and `ledger-mismatches.csv` with a ledger).
pub fn write(run_dirs: &[PathBuf], options: &StatementOptions) -> Result<Statement> {
    let mut seen = BTreeSet::new();
    for run_dir in run_dirs {
        let canonical = run_dir.canonicalize().unwrap_or_else(|_| run_dir.clone());
        if !seen.insert(canonical) {
            return Err(Refusal(format!(
                "{} is given twice: its charges would count twice",
                run_dir.display()
            ))
            .into());
        }
    }
    let ledger = options
        .ledger
        .as_deref()
        .map(|path| reconcile::load_ledger(path).map(|ledger| (path, ledger)))
        .transpose()?;
    let mut tally = Tally {
        keep_expected: ledger.is_some(),
        ..Tally::default()
    };
    let mut runs = Vec::new();
    for (index, run_dir) in run_dirs.iter().enumerate() {
        let rows = RunRows::open(run_dir).with_context(|| format!("run {}", run_dir.display()))?;
        let summary = rows
            .walk_sent(|walked| {
                tally.add(index, &walked.row, walked.sent_at);
                Ok(())
            })
            .with_context(|| format!("run {}", run_dir.display()))?;
        runs.push(RunInfo {
            run_dir: run_dir.clone(),
            name: run_name(run_dir),
            campaign: rows.campaign().name.clone(),
            kind: summary.kind,
            sends_in_month: 0,
            status: summary.status,
        });
    }
    let month = match options.month {
        Some(month) => month,
        None => only_month(&tally)?,
    };
    let (mut statement, expected) = assemble(tally.days, month, runs);
    let out = options
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("statement-{month}")));
    crate::files::create_private_dir(&out).with_context(|| format!("cannot create {}", out.display()))?;
    if let Some((path, ledger)) = ledger {
        statement.ledger = Some(compare(&statement, expected, path, ledger, &out, options.csv_bom)?);
    }
    statement.files = files::write_all(&statement, &out, options.csv_bom)?;
    if let Some(comparison) = &statement.ledger {
        statement.files.push(comparison.mismatches_file.clone());
    }
    Ok(statement)
}

/// A run's name in the statement: its directory's own name, the path's last component
/// (`runs/coupon` and `/srv/msgbatch/runs/coupon` are both `coupon`).
pub fn run_name(run_dir: &Path) -> String {
    let named = match run_dir.file_name() {
        Some(name) => Some(name.to_owned()),
        // `runs/coupon/..` or `.`: the name of the folder it stands for.
        None => run_dir
            .canonicalize()
            .ok()
            .and_then(|path| path.file_name().map(ToOwned::to_owned)),
    };
    named.map_or_else(
        || run_dir.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    )
}

/// The one month the runs sent in; several (or none) need `--month`.
fn only_month(tally: &Tally) -> Result<Month> {
    let months = tally.months();
    match months.len() {
        1 => Ok(*months.first().expect("one month")),
        0 => Err(Refusal("the runs sent nothing: give the month with --month 2026-11".into()).into()),
        _ => {
            let names: Vec<String> = months.iter().map(Month::to_string).collect();
            Err(Refusal(format!(
                "the runs sent in {} months ({}): give one with --month",
                names.len(),
                names.join(", ")
            ))
            .into())
        }
    }
}

/// The month's lines and totals, from the runs' days, and the ledger entries they account for.
fn assemble(
    days: BTreeMap<(usize, NaiveDate), DayTally>,
    month: Month,
    mut runs: Vec<RunInfo>,
) -> (Statement, Expected) {
    let mut statement = Statement {
        month,
        runs: Vec::new(),
        lines: Vec::new(),
        classes: BTreeMap::new(),
        campaigns: BTreeMap::new(),
        days: BTreeMap::new(),
        total: ClassSummary::default(),
        ledger: None,
        files: Vec::new(),
    };
    let mut expected = Expected::default();
    for ((run, day), tally) in days {
        if Month::of(day) != month {
            continue;
        }
        let info = &mut runs[run];
        let day = day.to_string();
        info.sends_in_month += tally.sends;
        for (class, totals) in tally.classes {
            statement.classes.entry(class).or_default().absorb(&totals);
            statement
                .campaigns
                .entry(info.campaign.clone())
                .or_default()
                .absorb(&totals);
            statement.days.entry(day.clone()).or_default().absorb(&totals);
            statement.total.absorb(&totals);
            statement.lines.push(Line {
                day: day.clone(),
                campaign: info.campaign.clone(),
                run: info.name.clone(),
                kind: info.kind.clone(),
                billing_class: class,
                totals,
            });
        }
        expected.extend(tally.expected);
    }
    statement.lines.sort_by(|a, b| {
        (&a.day, &a.campaign, &a.run, a.billing_class).cmp(&(&b.day, &b.campaign, &b.run, b.billing_class))
    });
    statement.runs = runs;
    (statement, expected)
}

/// Compares the month's ledger entries with what the runs' rows account for.
fn compare(
    statement: &Statement,
    expected: Expected,
    path: &Path,
    ledger: Ledger,
    out: &Path,
    bom: bool,
) -> Result<LedgerComparison> {
    let total = ledger.entries.len() as u64;
    let month = statement.month;
    let in_month = Ledger {
        entries: ledger
            .entries
            .into_iter()
            .filter(|entry| Month::of(day_of(entry.date)) == month)
            .collect(),
        ..ledger
    };
    let mismatches = expected.compare(&in_month.entries);
    let classes = reconcile::class_balance(&in_month.totals(), &statement.classes);
    let mismatches_file = out.join("ledger-mismatches.csv");
    // ledger-mismatches.csv names a run as the other files do, by its name.
    let runs: Vec<PathBuf> = statement.runs.iter().map(|run| PathBuf::from(&run.name)).collect();
    reconcile::write_mismatches(&mismatches_file, &mismatches, Some(&runs), bom)?;
    Ok(LedgerComparison {
        ledger: path.to_path_buf(),
        entries: in_month.entries.len() as u64,
        other_months: total - in_month.entries.len() as u64,
        balanced: reconcile::balanced(&mismatches, &classes),
        classes,
        mismatches,
        mismatches_file,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::charged_row;

    /// Epoch ms of an RFC 3339 time.
    fn at(time: &str) -> i64 {
        DateTime::parse_from_rfc3339(time).unwrap().timestamp_millis()
    }

    fn run(name: &str) -> RunInfo {
        RunInfo {
            run_dir: PathBuf::from(name),
            name: name.into(),
            campaign: name.into(),
            kind: "sms".into(),
            sends_in_month: 0,
            status: Status::default(),
        }
    }

    #[test]
    fn months_parse_strictly() {
        assert_eq!(Month::parse("2026-11"), Ok(Month { year: 2026, month: 11 }));
        assert_eq!(Month::parse("2026-11").unwrap().to_string(), "2026-11");
        for wrong in ["2026-13", "2026-1", "26-11", "2026/11", "2026-11-01", "november"] {
            assert!(Month::parse(wrong).is_err(), "{wrong}");
        }
    }

    #[test]
    fn a_send_belongs_to_its_day_in_seoul() {
        // 15:30 UTC on 31 October is 00:30 on 1 November in Seoul.
        assert_eq!(
            day_of(at("2026-10-31T15:30:00Z")),
            NaiveDate::from_ymd_opt(2026, 11, 1).unwrap()
        );
        assert_eq!(
            day_of(at("2026-10-31T14:59:59Z")),
            NaiveDate::from_ymd_opt(2026, 10, 31).unwrap()
        );
    }

    #[test]
    fn a_run_whose_sends_straddle_months_counts_in_each_by_its_send_days() {
        let mut tally = Tally::default();
        tally.add(
            0,
            &charged_row(1, "01020000001", 9),
            Some(at("2026-10-31T23:59:00+09:00")),
        );
        tally.add(
            0,
            &charged_row(2, "01020000002", 9),
            Some(at("2026-11-01T00:01:00+09:00")),
        );
        tally.add(
            0,
            &charged_row(3, "01020000003", 9),
            Some(at("2026-11-02T10:00:00+09:00")),
        );
        // Not answered (pending or uncertain): no day, no charge.
        tally.add(0, &charged_row(4, "01020000004", 9), None);
        let october = Month { year: 2026, month: 10 };
        let november = Month { year: 2026, month: 11 };
        assert_eq!(tally.months(), BTreeSet::from([october, november]));
        let refusal = only_month(&tally).unwrap_err().to_string();
        assert!(
            refusal.contains("2026-10, 2026-11") && refusal.contains("--month"),
            "{refusal}"
        );

        let (statement, _) = assemble(std::mem::take(&mut tally.days), november, vec![run("a")]);
        assert_eq!(statement.total.charged, 18);
        assert_eq!(statement.total.charged_count, 2);
        assert_eq!(statement.runs[0].sends_in_month, 2);
        let days: Vec<&String> = statement.days.keys().collect();
        assert_eq!(days, ["2026-11-01", "2026-11-02"]);
        assert_eq!(statement.lines.len(), 2, "one line per day, run and class");
    }

    #[test]
    fn only_the_months_rows_are_expected_in_its_ledger() {
        let mut tally = Tally {
            keep_expected: true,
            ..Tally::default()
        };
        tally.add(
            0,
            &charged_row(1, "01020000001", 9),
            Some(at("2026-10-31T12:00:00+09:00")),
        );
        tally.add(
            1,
            &charged_row(2, "01020000002", 9),
            Some(at("2026-11-15T12:00:00+09:00")),
        );
        let november = Month { year: 2026, month: 11 };
        let (_, expected) = assemble(tally.days, november, vec![run("a"), run("b")]);
        // Nothing in the ledger: November's one charge is missing from it, October's is not asked for.
        let mismatches = expected.compare(std::iter::empty());
        assert_eq!(mismatches.len(), 1);
        assert_eq!(mismatches[0].reference, "1002");
        assert_eq!(mismatches[0].origin.map(|o| o.run), Some(1));
    }
}
