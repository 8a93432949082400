//! A large CSV file is read in blocks on every core; the plan made that way must be the plan made from the file read in one piece: the same accounting, the same rejects, and chunks the checkpoint recognises row for row.
//!
//! The real binary, with `MSGBATCH_CSV_BLOCK_BYTES` set to a few hundred bytes so that a file of
//! a few thousand rows is cut into a hundred blocks or more, against the same file read whole.

mod common;

use common::process::{exec, msgbatch_at, path_str, Outcome};
use polars::prelude::*;
use serde_json::Value;
use std::path::Path;

const DAYTIME: &str = "2026-11-23T11:00:00+09:00";
const BLOCK_VAR: &str = "MSGBATCH_CSV_BLOCK_BYTES";
const SMALL_BLOCKS: &str = "400";
const ONE_PIECE: &str = "1073741824";

/// Rows as lists hold them: phone spellings mixed, repeated numbers, landlines, blanks, a name
/// with a comma and a line break in quotes, a name EUC-KR cannot carry, and now and then a row
/// with a field too many.
fn people(rows: usize) -> String {
    let mut text = String::from("hp,name,coupon\n");
    for i in 0..rows {
        let n = i % 1500;
        let digits = format!("{:08}", 20_000_000 + n);
        let phone = match i % 7 {
            0 | 4 => format!("010{digits}"),
            1 => format!("010-{}-{}", &digits[..4], &digits[4..]),
            2 => format!("+82 10-{}-{}", &digits[..4], &digits[4..]),
            3 if i % 3 == 0 => "02-1234-5678".to_string(),
            3 => String::new(),
            _ => format!("010 {} {}", &digits[..4], &digits[4..]),
        };
        let name = match i % 11 {
            0 => "\"김,\n민수\"".to_string(),
            5 if i % 5 == 0 => "이모지😀".to_string(),
            _ => format!("고객{i}"),
        };
        let extra = if i % 97 == 0 { ",extra" } else { "" };
        text.push_str(&format!("{phone},{name},C{i:05}{extra}\n"));
    }
    text
}

fn setup(rows: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("people.csv"), people(rows)).unwrap();
    std::fs::write(
        dir.path().join("campaign.toml"),
        "name = \"blocks\"\nkind = \"sms\"\n[message]\nservice = 3001\n\
         text = \"[데모몰] #{name}님 쿠폰 #{VAR1}\"\ncallback_no = \"0212345678\"\n\
         [recipients]\npath = \"people.csv\"\nphone = \"hp\"\nname = \"name\"\n\
         variables = { VAR1 = \"coupon\" }\n[send]\nchunk_size = 10\n[prices]\nsms = 9\n",
    )
    .unwrap();
    dir
}

fn msgbatch(dir: &Path, block_bytes: &str, args: &[&str]) -> Outcome {
    let mut command = msgbatch_at(dir, DAYTIME);
    command.env(BLOCK_VAR, block_bytes);
    exec(command, args)
}

/// `validate --json` read with `block_bytes`: the accounting and rejects.csv.
fn validated(dir: &Path, block_bytes: &str) -> (Value, String) {
    validated_as(dir, block_bytes, "campaign.toml", &[])
}

/// As [`validated`], of `campaign` with `extra` arguments (the preview itself left out).
fn validated_as(dir: &Path, block_bytes: &str, campaign: &str, extra: &[&str]) -> (Value, String) {
    let rejects = dir.join(format!("rejects-{campaign}-{block_bytes}-{}.csv", extra.len()));
    let mut args = vec!["validate", campaign, "--rejects", path_str(&rejects), "--json"];
    args.extend_from_slice(extra);
    let mut json = msgbatch(dir, block_bytes, &args).expect_code(0, "validate").json();
    json.as_object_mut().unwrap().remove("rejects");
    json.as_object_mut().unwrap().remove("preview");
    (json, std::fs::read_to_string(rejects).unwrap())
}

#[test]
fn a_file_read_in_blocks_is_accounted_row_for_row_as_the_file_read_whole() {
    let dir = setup(3000);
    let (whole, whole_rejects) = validated(dir.path(), ONE_PIECE);
    let (blocks, block_rejects) = validated(dir.path(), SMALL_BLOCKS);
    assert_eq!(blocks, whole, "the same accounting");
    assert_eq!(
        block_rejects, whole_rejects,
        "the same rejects, row numbers and reasons"
    );
    for reason in ["phone_invalid", "phone_missing", "unencodable", "ragged"] {
        assert!(
            whole["rejected_by_reason"][reason].as_u64().unwrap_or(0) > 0,
            "the file holds {reason} rows: {whole:#}"
        );
    }
    assert!(whole["duplicates"].as_u64().unwrap() > 0, "and repeated numbers");
}

#[test]
fn chunks_sent_from_a_file_read_in_blocks_are_recognised_when_it_is_read_whole() {
    let dir = setup(2000);
    let run = dir.path().join("run");
    msgbatch(
        dir.path(),
        SMALL_BLOCKS,
        &["run", "campaign.toml", "--out", path_str(&run), "--json"],
    )
    .expect_code(0, "run with the file read in blocks");
    // `report` cuts the plan again and refuses (exit 2) any chunk whose first row, last row,
    // count or digest of rows and numbers differs from the one recorded when it was sent.
    let report = |block_bytes: &str, out: &str, what: &str| {
        let out = dir.path().join(out);
        let summary = msgbatch(
            dir.path(),
            block_bytes,
            &["report", path_str(&run), "--out", path_str(&out), "--json"],
        )
        .expect_code(0, what)
        .json();
        (summary, std::fs::read_to_string(out.join("report.csv")).unwrap())
    };
    let (whole, whole_csv) = report(ONE_PIECE, "report-whole", "report with the file read whole");
    let (blocks, blocks_csv) = report(SMALL_BLOCKS, "report-blocks", "report with the file read in blocks");
    assert!(whole["status"]["sent"].as_u64().unwrap() > 1000, "{whole:#}");
    assert_eq!(whole["status"], blocks["status"]);
    assert_eq!(whole_csv, blocks_csv, "every row joined with the same result");
}

/// The same rows as a CP949 export and as a Parquet file (the first three fields of each record),
/// each with its campaign.
fn copies(dir: &Path, rows: usize) -> [&'static str; 2] {
    let text = people(rows);
    let (cp949, _, _) = encoding_rs::EUC_KR.encode(&text);
    std::fs::write(dir.join("people-cp949.csv"), &cp949).unwrap();
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(text.as_bytes());
    let (mut phones, mut names, mut coupons) = (Vec::new(), Vec::new(), Vec::new());
    for record in reader.records() {
        let record = record.unwrap();
        phones.push(record[0].to_string());
        names.push(record[1].to_string());
        coupons.push(record[2].to_string());
    }
    let mut frame = df!("hp" => phones, "name" => names, "coupon" => coupons).unwrap();
    ParquetWriter::new(std::fs::File::create(dir.join("people.parquet")).unwrap())
        .finish(&mut frame)
        .unwrap();
    let campaign = std::fs::read_to_string(dir.join("campaign.toml")).unwrap();
    for (file, recipients) in [
        ("campaign-cp949.toml", "people-cp949.csv"),
        ("campaign-parquet.toml", "people.parquet"),
    ] {
        std::fs::write(dir.join(file), campaign.replace("people.csv", recipients)).unwrap();
    }
    ["campaign-cp949.toml", "campaign-parquet.toml"]
}

#[test]
fn the_accounting_alone_is_the_accounting_that_builds_every_row_in_blocks_in_cp949_and_in_parquet() {
    // `validate` drafts each row where it was read and keeps none; with a preview every row is
    // built and settled whole. Both must count and reject the same rows.
    let dir = setup(3000);
    let [cp949, parquet] = copies(dir.path(), 3000);
    for campaign in ["campaign.toml", cp949, parquet] {
        for block_bytes in [SMALL_BLOCKS, ONE_PIECE] {
            let alone = validated_as(dir.path(), block_bytes, campaign, &[]);
            let built = validated_as(dir.path(), block_bytes, campaign, &["--preview", "1"]);
            assert_eq!(alone, built, "{campaign} in blocks of {block_bytes} bytes");
            assert_eq!(alone.0["rows"], 3000, "{campaign}: {:#}", alone.0);
            assert!(alone.0["rejected"].as_u64().unwrap() > 0 && alone.0["duplicates"].as_u64().unwrap() > 0);
        }
    }
}
