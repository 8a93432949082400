//! Files people open in spreadsheets, with the real binary against the embedded sandbox: recipient values and names that look like formulas are marked with a leading `'` in report.csv, rejects.csv and statement.csv (numbers left alone), report.raw.csv keeps them as they are, and no file names a run or campaign by a server path.

mod common;
#[path = "common/xlsx.rs"]
mod xlsx;

use common::process::{exec, msgbatch_at, path_str};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const DAYTIME: &str = "2026-11-23T11:00:00+09:00";

/// Names a spreadsheet would evaluate, by the first row that carries one (rows 1 to 5).
const FORMULA_NAMES: [&str; 5] = [
    "=HYPERLINK(\"http://x\",\"y\")",
    "+SUM(1,2)",
    "@cmd",
    "-2+3",
    "\ttab-led",
];

/// A campaign name that looks like a formula: statement.csv's `campaign` column.
const CAMPAIGN_NAME: &str = "+spring sale";

/// The recipients' variable column, named like a formula: rejects.csv's `column` of a row whose
/// value is missing.
const ORDER_COLUMN: &str = "=order";

/// A campaign of SMS recipients whose names look like formulas, sent to the embedded sandbox.
struct FormulaRun {
    dir: tempfile::TempDir,
}

impl FormulaRun {
    fn sent() -> FormulaRun {
        let dir = tempfile::tempdir().unwrap();
        let mut people = csv::Writer::from_writer(Vec::new());
        people.write_record(["phone", "name", ORDER_COLUMN]).unwrap();
        for (index, name) in FORMULA_NAMES.iter().enumerate() {
            people
                .write_record([
                    format!("010200000{}", 10 + index),
                    name.to_string(),
                    format!("A-{index}"),
                ])
                .unwrap();
        }
        // Row 7 (the header is row 1): a name that is a plain negative number, no formula: left as it is.
        people.write_record(["01020000020", "-1200", "A-6"]).unwrap();
        // Row 8: a phone written as a formula, rejected, reported as written.
        people.write_record(["=1+1", "유선", "A-7"]).unwrap();
        // Row 9: no order: rejected, its column named in rejects.csv.
        people.write_record(["01020000021", "빈값", ""]).unwrap();
        std::fs::write(dir.path().join("people.csv"), people.into_inner().unwrap()).unwrap();
        let campaign = format!(
            "name = \"{CAMPAIGN_NAME}\"\nkind = \"sms\"\n[credentials]\ngroup_id = \"demo\"\n\
             [message]\nservice = 3001\ntext = \"#{{name}}님 주문 #{{VAR1}}\"\ncallback_no = \"0212345678\"\n\
             [recipients]\npath = \"people.csv\"\nname = \"name\"\nvariables = {{ VAR1 = \"{ORDER_COLUMN}\" }}\n\
             [prices]\nalimtalk = 8\nbm_friend = 20\nbm_nonfriend = 25\nsms = 9\nlms = 30\nfallback_sms = 9\nfallback_lms = 30\n"
        );
        std::fs::write(dir.path().join("campaign.toml"), campaign).unwrap();
        let run = FormulaRun { dir };
        let campaign = run.dir.path().join("campaign.toml");
        let run_dir = run.run_dir();
        run.msgbatch(&["run", path_str(&campaign), "--out", path_str(&run_dir)]);
        run
    }

    fn run_dir(&self) -> PathBuf {
        self.dir.path().join("spring-run")
    }

    /// msgbatch with `args`, which must succeed; its standard output.
    fn msgbatch(&self, args: &[&str]) -> String {
        let mut command = msgbatch_at(self.dir.path(), DAYTIME);
        command.env("MSGBATCH_GROUP_ID", "demo");
        let outcome = exec(command, args);
        assert_eq!(outcome.code, Some(0), "{}", outcome.show());
        outcome.stdout
    }
}

/// A CSV file's records, header first.
fn records(path: &Path) -> Vec<Vec<String>> {
    let mut reader = csv::ReaderBuilder::new().has_headers(false).from_path(path).unwrap();
    reader
        .records()
        .map(|record| record.unwrap().iter().map(str::to_string).collect())
        .collect()
}

/// The rows of a CSV file with a header, each by column name.
fn rows_by_column(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut all = records(path).into_iter();
    let header = all.next().expect("a header");
    all.map(|record| header.iter().cloned().zip(record).collect()).collect()
}

#[test]
fn report_csv_marks_formula_like_texts_and_report_raw_csv_keeps_them_as_they_are() {
    let run = FormulaRun::sent();
    let run_dir = run.run_dir();
    run.msgbatch(&["report", path_str(&run_dir), "--raw-csv", "--json"]);

    let people = rows_by_column(&run_dir.join("report.csv"));
    let raw = rows_by_column(&run_dir.join("report.raw.csv"));
    assert_eq!(people.len(), 8, "{people:?}");
    for (index, formula) in FORMULA_NAMES.iter().enumerate() {
        assert_eq!(people[index]["name"], format!("'{formula}"), "row {}", index + 2);
        assert_eq!(raw[index]["name"], *formula, "row {}", index + 2);
        assert_eq!(people[index]["charge_state"], "charged", "row {} was sent", index + 2);
        assert_eq!(people[index]["amount"], "9", "a number stays a number");
    }
    assert_eq!(people[5]["name"], "-1200", "a plain number is no formula");
    assert_eq!(people[6]["phone"], "'=1+1", "a rejected phone, as written, marked");
    assert_eq!(raw[6]["phone"], "=1+1");
    assert!(people[6]["acceptance"].starts_with("REJECTED:"), "{:?}", people[6]);

    // Every other cell is the same in both files, and report.csv only ever adds a leading `'`.
    let mut marked = 0;
    for (people_row, raw_row) in people.iter().zip(&raw) {
        for (column, cell) in people_row {
            let as_it_is = &raw_row[column];
            if cell != as_it_is {
                assert_eq!(cell, &format!("'{as_it_is}"), "{column}");
                marked += 1;
            }
        }
    }
    // Row 9's error names its column first: `=order: #{VAR1} has no value`.
    assert_eq!(people[7]["error"], format!("'{}", raw[7]["error"]));
    assert!(raw[7]["error"].starts_with(ORDER_COLUMN), "{:?}", raw[7]);
    assert_eq!(
        marked,
        FORMULA_NAMES.len() + 2,
        "the five names, the phone and the error, nothing else"
    );

    // For programs: no byte-order mark, whatever report.csv has.
    assert!(!std::fs::read(run_dir.join("report.raw.csv"))
        .unwrap()
        .starts_with(b"\xEF\xBB\xBF"));

    // A report without --raw-csv takes the earlier raw file away: it would no longer match.
    run.msgbatch(&["report", path_str(&run_dir), "--json"]);
    assert!(!run_dir.join("report.raw.csv").exists());
    assert_eq!(rows_by_column(&run_dir.join("report.csv")), people);
}

#[test]
fn rejects_csv_marks_a_column_named_like_a_formula() {
    let run = FormulaRun::sent();
    let rejects = rows_by_column(&run.run_dir().join("rejects.csv"));
    let missing = rejects
        .iter()
        .find(|reject| reject["row"] == "9")
        .unwrap_or_else(|| panic!("row 9 is rejected: {rejects:?}"));
    assert_eq!(missing["reason"], "variable_missing");
    assert_eq!(missing["column"], format!("'{ORDER_COLUMN}"));
    let phone = rejects
        .iter()
        .find(|reject| reject["row"] == "8")
        .expect("row 8 is rejected");
    assert_eq!(phone["reason"], "phone_invalid");
    assert_eq!(phone["column"], "phone");
}

#[test]
fn report_xlsx_names_the_campaign_by_its_name_not_its_file_path() {
    let run = FormulaRun::sent();
    let run_dir = run.run_dir();
    run.msgbatch(&["report", path_str(&run_dir), "--json"]);
    let book = xlsx::Workbook::open(&run_dir.join("report.xlsx"));
    let campaign = book.sheet("Summary").labelled("campaign").text().to_string();
    assert_eq!(campaign, CAMPAIGN_NAME);
    let temp = run.dir.path().to_string_lossy().into_owned();
    assert!(!campaign.contains('/') && !campaign.contains(&temp), "{campaign}");
    // Text cells of the workbook are strings, never formulas: they stay as they are.
    let names: Vec<&str> = book
        .sheet("Rows")
        .column("C", 2)
        .into_iter()
        .map(|cell| cell.text())
        .take(FORMULA_NAMES.len())
        .collect();
    assert_eq!(names, FORMULA_NAMES);
}

#[test]
fn statement_names_a_run_by_its_folder_and_marks_formula_like_texts() {
    let run = FormulaRun::sent();
    let out = run.dir.path().join("statement");
    run.msgbatch(&["statement", path_str(&run.run_dir()), "--out", path_str(&out), "--json"]);
    let temp = run.dir.path().to_string_lossy().into_owned();

    let lines = rows_by_column(&out.join("statement.csv"));
    assert!(!lines.is_empty());
    for line in &lines {
        assert_eq!(line["run"], "spring-run", "the run directory's own name");
        assert_eq!(line["campaign"], format!("'{CAMPAIGN_NAME}"), "marked for spreadsheets");
        assert_eq!(line["charged"], "54", "six sent rows at 9: numbers as they are");
    }
    let text = std::fs::read_to_string(out.join("statement.csv")).unwrap();
    assert!(!text.contains(&temp) && !text.contains('/'), "{text}");

    let book = xlsx::Workbook::open(&out.join("statement.xlsx"));
    for (sheet, column) in [("Lines", "C"), ("Runs", "A")] {
        let runs: Vec<&str> = book
            .sheet(sheet)
            .column(column, 2)
            .into_iter()
            .map(|cell| cell.text())
            .collect();
        assert_eq!(runs, ["spring-run"], "{sheet}");
    }
    let html = std::fs::read_to_string(out.join("statement.html")).unwrap();
    assert!(!html.contains(&temp), "statement.html shows no server path");
    assert!(html.contains("spring-run"));
}
