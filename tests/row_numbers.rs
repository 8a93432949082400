//! Row numbers as a spreadsheet shows them: the same person on the same row from a CSV, an .xlsx, an .xls and an .ods of one sheet (header on row 1, first person on row 2, a CSV record across two lines still one row), in rejects, report.csv and previews written by the binary; a CSV's record i on row i + 2 whatever line breaks its fields hold; a run whose checkpoint numbered rows the old way refused on resume and report.

mod common;

use common::process::{exec, msgbatch_at, path_str, Outcome};
use msgbatch::campaign::{Encoding, InputFormat};
use msgbatch::engine::checkpoint::Checkpoint;
use msgbatch::engine::CHECKPOINT_DIR;
use msgbatch::input::{self, ColumnSpec, RawRow};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const DAYTIME: &str = "2026-11-23T11:00:00+09:00";
/// The fixtures' sheet, made by `tests/fixtures/make_row_number_fixtures.py`, in every format.
const FORMATS: [(&str, InputFormat); 4] = [
    ("csv", InputFormat::Csv),
    ("xlsx", InputFormat::Xlsx),
    ("xls", InputFormat::Xls),
    ("ods", InputFormat::Ods),
];
/// Who is on which row of the sheet, as Excel and LibreOffice show it.
const PEOPLE: [(u64, &str); 5] = [(2, "김하나"), (3, "이둘"), (4, "박셋"), (5, "최넷"), (6, "정다섯")];
/// The person whose phone is no phone number.
const REJECTED_ROW: u64 = 5;

fn fixture(extension: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("row_numbers.{extension}"))
}

fn spec() -> ColumnSpec {
    ColumnSpec {
        phone: "phone".into(),
        name: Some("name".into()),
        vars: vec!["memo".into()],
    }
}

fn read_all(mut source: Box<dyn input::RowSource>) -> Vec<RawRow> {
    let mut rows = Vec::new();
    while let Some(batch) = source.next_batch(2).unwrap() {
        rows.extend(batch);
    }
    rows
}

/// A copy of the fixture in `extension` and an SMS campaign over it, in `dir`.
fn campaign(dir: &Path, extension: &str) -> PathBuf {
    let recipients = format!("people.{extension}");
    std::fs::copy(fixture(extension), dir.join(&recipients)).unwrap();
    let path = dir.join("campaign.toml");
    std::fs::write(
        &path,
        format!(
            "kind = \"sms\"\n[message]\nservice = 3001\ntext = \"[데모몰] #{{name}}님 #{{VAR1}}\"\ncallback_no = \"0212345678\"\n[recipients]\npath = \"{recipients}\"\nname = \"name\"\nvariables = {{ VAR1 = \"memo\" }}\n"
        ),
    )
    .unwrap();
    path
}

fn msgbatch(dir: &Path, args: &[&str]) -> Outcome {
    exec(msgbatch_at(dir, DAYTIME), args)
}

/// A CSV file's records, header excluded.
fn records(path: &Path) -> Vec<csv::StringRecord> {
    csv::Reader::from_path(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .records()
        .map(Result::unwrap)
        .collect()
}

fn row_of(record: &csv::StringRecord) -> u64 {
    record[0]
        .parse()
        .unwrap_or_else(|_| panic!("a row number first: {record:?}"))
}

#[test]
fn every_format_of_the_sheet_reads_each_person_on_the_row_the_sheet_shows() {
    for (extension, format) in FORMATS {
        let source = input::open(&fixture(extension), format, Encoding::Auto, &spec()).unwrap();
        let rows: Vec<(u64, String)> = read_all(source)
            .into_iter()
            .map(|row| (row.row, row.name.unwrap().to_string()))
            .collect();
        let expected: Vec<(u64, String)> = PEOPLE.iter().map(|(row, name)| (*row, name.to_string())).collect();
        assert_eq!(rows, expected, "{extension}");
    }
}

#[test]
fn the_binary_rejects_the_same_person_on_the_same_row_in_every_format() {
    for (extension, _) in FORMATS {
        let dir = tempfile::tempdir().unwrap();
        let campaign = campaign(dir.path(), extension);

        // validate: CAMPAIGN.rejects.csv, and the previews' rows.
        let validated = msgbatch(
            dir.path(),
            &["validate", path_str(&campaign), "--preview", "5", "--json"],
        )
        .expect_code(0, extension)
        .json();
        let rejects = records(&dir.path().join("campaign.rejects.csv"));
        let rejected: Vec<(u64, &str, &str)> = rejects.iter().map(|r| (row_of(r), &r[1], &r[2])).collect();
        assert_eq!(rejected, [(REJECTED_ROW, "phone", "phone_invalid")], "{extension}");
        let previewed: BTreeMap<u64, String> = validated["preview"]
            .as_object()
            .unwrap_or_else(|| panic!("{extension}: previews in {validated:#}"))
            .values()
            .flat_map(|lane| lane.as_array().unwrap())
            .map(|message| {
                (
                    message["row"].as_u64().unwrap(),
                    message["text"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(
            previewed.keys().copied().collect::<Vec<_>>(),
            [2, 3, 4, 6],
            "{extension}: {validated:#}"
        );
        assert!(
            previewed[&3].contains("이둘님 서울\n강남점"),
            "{extension}: row 3 is 이둘, her memo on two lines: {previewed:?}"
        );

        // run and report: the run's rejects.csv and report.csv's row column.
        let run_dir = dir.path().join("run");
        msgbatch(dir.path(), &["run", path_str(&campaign), "--out", path_str(&run_dir)]).expect_code(0, extension);
        let run_rejects: Vec<u64> = records(&run_dir.join("rejects.csv")).iter().map(row_of).collect();
        assert_eq!(run_rejects, [REJECTED_ROW], "{extension}");
        msgbatch(dir.path(), &["report", path_str(&run_dir)]).expect_code(0, extension);
        let report = records(&run_dir.join("report.csv"));
        let rows: Vec<(u64, &str)> = report.iter().map(|r| (row_of(r), &r[2])).collect();
        assert_eq!(rows, PEOPLE, "{extension}: report.csv's row and name");
        let acceptance: BTreeMap<u64, &str> = report.iter().map(|r| (row_of(r), &r[9])).collect();
        assert_eq!(acceptance[&REJECTED_ROW], "REJECTED:phone_invalid", "{extension}");
    }
}

#[test]
fn a_run_whose_checkpoint_numbered_rows_the_old_way_is_refused_on_resume_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let campaign = campaign(dir.path(), "csv");
    let run_dir = dir.path().join("run");
    msgbatch(dir.path(), &["run", path_str(&campaign), "--out", path_str(&run_dir)]).expect_code(0, "run");
    msgbatch(dir.path(), &["report", path_str(&run_dir)]).expect_code(0, "report of this release's run");
    {
        // What a release that numbered CSV rows from 1 recorded: checkpoint layout 2.
        let checkpoint = Checkpoint::open(&run_dir.join(CHECKPOINT_DIR), false).unwrap();
        let mut meta = checkpoint.meta().unwrap().unwrap();
        meta.format = 2;
        checkpoint.put_meta(&meta).unwrap();
        checkpoint.flush().unwrap();
    }
    for command in ["resume", "report"] {
        let refused = msgbatch(dir.path(), &[command, path_str(&run_dir)]).expect_code(2, command);
        assert!(
            refused.stderr.contains("layout 2")
                && refused.stderr.contains("numbered as a spreadsheet shows them")
                && refused.stderr.contains("finish it"),
            "{command}: {}",
            refused.show()
        );
    }
}

// ---------------------------------------------------------------------------------------------
// A CSV record's row, whatever line breaks its fields hold.

/// A field: plain text, or quoted text holding commas, quotes and line breaks (LF, CRLF or CR).
fn field() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[0-9a-z가-힣 ]{0,8}",
        2 => prop::collection::vec(
            prop_oneof![Just("\n"), Just("\r\n"), Just("\r"), Just(","), Just("\""), Just("가"), Just("b")],
            1..8
        )
        .prop_map(|parts| parts.concat()),
    ]
}

proptest! {
    #![proptest_config(common::proptest_config(128))]

    /// Record i (from 0) is on row i + 2, read in one piece or in blocks (parsed by the csv crate
    /// or split on line breaks), whatever line breaks the fields before it hold.
    #[test]
    fn a_csv_record_is_on_row_index_plus_two_whatever_line_breaks_it_holds(
        memos in prop::collection::vec(field(), 0..40),
        crlf in any::<bool>(),
        block_bytes in 1usize..200,
    ) {
        let mut writer = csv::WriterBuilder::new()
            .terminator(if crlf { csv::Terminator::CRLF } else { csv::Terminator::Any(b'\n') })
            .from_writer(Vec::new());
        writer.write_record(["phone", "name", "memo"]).unwrap();
        for (index, memo) in memos.iter().enumerate() {
            writer.write_record([format!("0102000{index:04}"), format!("n{index}"), memo.clone()]).unwrap();
        }
        let mut file = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut file, &writer.into_inner().unwrap()).unwrap();
        let open = |block| input::open_csv_in_blocks(file.path(), Encoding::Utf8, &spec(), 1 << 16, block).unwrap();
        let mut readings = vec![("in one piece", read_all(open(1 << 20))), ("in blocks", read_all(open(block_bytes)))];
        let mut blocked = open(block_bytes);
        if let Some(parallel) = blocked.in_parallel() {
            let mut rows = Vec::new();
            parallel.read(|_| (), |piece, ()| { rows.extend(piece); true }).unwrap();
            readings.push(("in blocks on every core", rows));
        }
        for (how, rows) in readings {
            prop_assert_eq!(rows.len(), memos.len());
            for (index, row) in rows.iter().enumerate() {
                prop_assert_eq!(row.row, index as u64 + 2, "record {} read {} (blocks of {})", index, how, block_bytes);
                let name = format!("n{index}");
                prop_assert_eq!(row.name.as_deref(), Some(name.as_str()));
                prop_assert_eq!(row.vars[0].as_deref(), Some(memos[index].as_str()));
            }
        }
    }
}
