//! Property tests of the plan on generated recipient lists: every row ends in exactly one bucket, a rejected row has a reason and a line in rejects.csv, every valid row has one chunk slot, no number is sent twice and no listed number is sent at all.
//!
//! A bounded number of cases runs in `cargo test`; `PROPTEST_CASES=20000 cargo test --release
//! --test plan_properties` runs a long search.

mod common;

use msgbatch::campaign::Campaign;
use msgbatch::phone;
use msgbatch::plan::{self, ChunkIdentity, ChunkKey, Fate, PlanError, PlannedRow, Visitor};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Phone spellings as lists hold them: a small pool of mobile numbers in several spellings (so that
/// duplicates happen), landlines, foreign numbers, junk and blanks.
fn phone() -> impl Strategy<Value = String> {
    let mobile = (0u32..40).prop_flat_map(|n| {
        let digits = format!("1020{:06}", n);
        prop_oneof![
            Just(format!("0{digits}")),
            Just(format!("0{}-{}-{}", &digits[..2], &digits[2..6], &digits[6..])),
            Just(format!("+82 {}-{}-{}", &digits[..2], &digits[2..6], &digits[6..])),
            Just(format!("82{digits}")),
            Just(digits.clone()),
        ]
    });
    prop_oneof![
        6 => mobile,
        1 => Just("02-1234-5678".to_string()),
        1 => Just("+1 415 555 0100".to_string()),
        1 => "[0-9+ ()-]{0,16}",
        1 => Just(String::new()),
    ]
}

/// A name cell: Hangul, ASCII, empty, an emoji EUC-KR cannot carry, a quote or a comma, a NUL, or
/// one too long for an SMS.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[가-힣]{2,4}",
        2 => "[A-Za-z ]{0,12}",
        1 => Just(String::new()),
        1 => Just("김😀".to_string()),
        1 => Just("O\"Brien, Jr".to_string()),
        1 => Just("a\0b".to_string()),
        1 => Just("가".repeat(60)),
    ]
}

/// One CSV record: usually phone and name; sometimes a field too many or too few (never a blank
/// line, which CSV does not count as a record).
#[derive(Debug, Clone)]
enum Record {
    Row(String, String),
    Ragged(Vec<String>),
}

fn record() -> impl Strategy<Value = Record> {
    prop_oneof![
        12 => (phone(), name()).prop_map(|(p, n)| Record::Row(p, n)),
        1 => prop::collection::vec("[a-z0-9]{1,5}", 1..5)
            .prop_filter("not two fields", |f| f.len() != 2)
            .prop_map(Record::Ragged),
    ]
}

fn quoted(field: &str) -> String {
    format!("\"{}\"", field.replace('"', "\"\""))
}

fn write_csv(path: &Path, records: &[Record]) {
    let mut text = String::from("phone,name\n");
    for record in records {
        let fields = match record {
            Record::Row(phone, name) => vec![quoted(phone), quoted(name)],
            Record::Ragged(fields) => fields.clone(),
        };
        text.push_str(&fields.join(","));
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}

#[derive(Default)]
struct Recorder {
    rows: Vec<PlannedRow>,
    chunks: Vec<(ChunkKey, ChunkIdentity)>,
}

impl Visitor for Recorder {
    type Error = PlanError;
    fn row(&mut self, row: PlannedRow) -> Result<(), PlanError> {
        self.rows.push(row);
        Ok(())
    }
    fn chunk(&mut self, key: ChunkKey, identity: ChunkIdentity) -> Result<(), PlanError> {
        self.chunks.push((key, identity));
        Ok(())
    }
}

/// The frequency cap's list as the console writes it, holding back `numbers` (those that are mobile numbers).
fn write_capped(path: &Path, numbers: &BTreeSet<String>) {
    use msgbatch::plan::capped::{number_key, CapMark, CapRule, CappedNumber, CappedWriter};
    let mut writer = CappedWriter::new(
        std::fs::File::create(path).unwrap(),
        CapRule::new(1, 7).unwrap(),
        20_000,
    )
    .unwrap();
    let keys: BTreeSet<u64> = numbers.iter().filter_map(|number| number_key(number)).collect();
    for key in keys {
        let mark = CapMark {
            last_sent: 20_000,
            sends: 1,
        };
        writer.push(CappedNumber { key, mark }).unwrap();
    }
    writer.finish().unwrap();
}

fn campaign(dir: &Path, chunk_size: usize, suppressed: &[String], capped: &BTreeSet<String>) -> Campaign {
    let suppression = if suppressed.is_empty() {
        String::new()
    } else {
        let mut list = String::from("phone\n");
        for number in suppressed {
            list.push_str(&quoted(number));
            list.push('\n');
        }
        std::fs::write(dir.join("optout.csv"), list).unwrap();
        "suppression = \"optout.csv\"\n".to_string()
    };
    // With a frequency cap's list, the campaign advertises (the list applies to nothing else).
    let (advertising, cap) = if capped.is_empty() {
        ("", "")
    } else {
        write_capped(&dir.join("capped.bin"), capped);
        ("advertising = true\n", "frequency_capped = \"capped.bin\"\n")
    };
    let text = format!(
        "kind = \"sms\"\n[credentials]\ngroup_id = \"demo\"\n[message]\nservice = 3001\ntext = \"[데모몰] #{{name}}님 쿠폰 도착\"\ncallback_no = \"0212345678\"\n{advertising}[recipients]\npath = \"people.csv\"\nname = \"name\"\n{suppression}{cap}[send]\nchunk_size = {chunk_size}\n"
    );
    let path = dir.join("campaign.toml");
    std::fs::write(&path, &text).unwrap();
    Campaign::load(&path).unwrap()
}

fn check(records: &[Record], suppressed: &[String], capped: &[String], chunk_size: usize) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    write_csv(&dir.path().join("people.csv"), records);
    let capped: BTreeSet<String> = capped
        .iter()
        .filter_map(|n| phone::normalize(n).ok().map(String::from))
        .collect();
    let campaign = campaign(dir.path(), chunk_size, suppressed, &capped);
    let mut recorder = Recorder::default();
    let scan = plan::walk(&campaign, &mut recorder).map_err(|e| TestCaseError::fail(e.to_string()))?;

    // Rows out equal records in, in order (record i on spreadsheet row i + 2, the header on row 1),
    // each in exactly one bucket.
    prop_assert_eq!(scan.rows, records.len() as u64);
    prop_assert!(scan.balanced(), "{scan:?}");
    let numbers: Vec<u64> = recorder.rows.iter().map(|r| r.row.row).collect();
    prop_assert_eq!(numbers, (2..records.len() as u64 + 2).collect::<Vec<_>>());

    let listed: BTreeSet<String> = suppressed
        .iter()
        .filter_map(|n| phone::normalize(n).ok().map(String::from))
        .collect();
    let mut sent = BTreeSet::new();
    let mut slots = BTreeMap::<ChunkKey, BTreeSet<u32>>::new();
    for planned in &recorder.rows {
        let row = planned.row.row;
        match &planned.fate {
            Fate::Rejected(rejection) => {
                prop_assert!(planned.chunk.is_none());
                prop_assert!(
                    !rejection.detail.is_empty() && !rejection.column.is_empty(),
                    "row {row}: {rejection:?}"
                );
                if let Record::Ragged(_) = &records[row as usize - 2] {
                    prop_assert_eq!(rejection.reason.as_str(), "ragged");
                }
            }
            Fate::Suppressed | Fate::Duplicate => prop_assert!(planned.chunk.is_none()),
            Fate::Capped(_) => {
                prop_assert!(planned.chunk.is_none());
                prop_assert!(!capped.is_empty(), "row {row} capped without a list");
            }
            Fate::Valid(recipient) => {
                prop_assert!(!matches!(records[row as usize - 2], Record::Ragged(_)), "row {row}");
                prop_assert!(sent.insert(recipient.phone.clone()), "{} sent twice", recipient.phone);
                prop_assert!(
                    !listed.contains(recipient.phone.as_str()),
                    "{} is on the list",
                    recipient.phone
                );
                prop_assert!(
                    !capped.contains(recipient.phone.as_str()),
                    "{} is held back by the cap",
                    recipient.phone
                );
                let slot = planned.chunk.expect("a valid row has a chunk slot");
                prop_assert!((slot.position as usize) < chunk_size);
                prop_assert!(slots.entry(slot.key).or_default().insert(slot.position));
            }
        }
    }
    prop_assert_eq!(sent.len() as u64, scan.valid);
    // Every chunk was closed once, holding exactly the rows placed in it.
    let closed: BTreeMap<ChunkKey, u32> = recorder.chunks.iter().map(|(k, i)| (*k, i.recipients)).collect();
    prop_assert_eq!(closed.len(), recorder.chunks.len(), "a chunk closed twice");
    let placed: BTreeMap<ChunkKey, u32> = slots.iter().map(|(k, s)| (*k, s.len() as u32)).collect();
    prop_assert_eq!(closed, placed);

    // rejects.csv holds exactly the rejected rows and those the cap held back, each with a reason.
    let rejects = dir.path().join("rejects.csv");
    let again = plan::account(&campaign, &rejects, |_| {}, None).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&again, &scan);
    let mut reader = csv::Reader::from_path(&rejects).unwrap();
    let headers = reader.headers().unwrap().clone();
    let reason = headers.iter().position(|h| h == "reason").expect("a reason column");
    let row_column = headers.iter().position(|h| h == "row").expect("a row column");
    let mut rejected_rows = Vec::new();
    for line in reader.records() {
        let line = line.unwrap();
        prop_assert!(!line[reason].is_empty());
        rejected_rows.push(line[row_column].parse::<u64>().unwrap());
    }
    let expected: Vec<u64> = recorder
        .rows
        .iter()
        .filter(|r| matches!(r.fate, Fate::Rejected(_) | Fate::Capped(_)))
        .map(|r| r.row.row)
        .collect();
    prop_assert_eq!(rejected_rows, expected);

    // The accounting that only counts most rows (no one to see them) is the accounting that
    // builds every row for a preview: the same totals and the same rejects.csv.
    let inspected = dir.path().join("rejects-inspected.csv");
    let mut seen = 0u64;
    let with_every_row = plan::account(&campaign, &inspected, |_| {}, Some(&mut |_: &PlannedRow| seen += 1))
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&with_every_row, &scan);
    prop_assert_eq!(seen, scan.rows);
    prop_assert_eq!(std::fs::read(&inspected).unwrap(), std::fs::read(&rejects).unwrap());
    Ok(())
}

proptest! {
    #![proptest_config(common::proptest_config(48))]

    #[test]
    fn every_row_ends_in_exactly_one_bucket(
        records in prop::collection::vec(record(), 0..120),
        suppressed in prop::collection::vec(phone(), 0..6),
        capped in prop::collection::vec(phone(), 0..6),
        chunk_size in 1usize..8,
    ) {
        check(&records, &suppressed, &capped, chunk_size)?;
    }
}

/// The fallbacks of a notification campaign with prices are counted from each valid row's filled
/// text, so the accounting builds every row for them, and counts each row's class once.
#[test]
fn the_accounting_alone_counts_each_valid_rows_fallback_by_its_filled_text() {
    let dir = tempfile::tempdir().unwrap();
    let mut people = String::from("phone,name\n");
    for serial in 0..40 {
        // Every fifth name is long enough to push the fallback text past an SMS.
        let name = if serial % 5 == 0 {
            "가".repeat(60)
        } else {
            format!("고객{serial}")
        };
        people.push_str(&format!("0104000{serial:04},{name}\n"));
    }
    people.push_str("01040000001,중복\n02-555-0000,유선\n");
    std::fs::write(dir.path().join("people.csv"), people).unwrap();
    let text = "kind = \"alimtalk\"\n[credentials]\ngroup_id = \"demo\"\n[message]\nservice = 1001\n\
                template = \"ORDER_SHIPPED\"\ntext = \"#{이름}님, 주문하신 상품이 발송되었습니다.\"\nalter = true\n\
                callback_no = \"0212345678\"\n[recipients]\npath = \"people.csv\"\nname = \"name\"\n\
                [prices]\nalimtalk = 8\nfallback_sms = 9\nfallback_lms = 30\n";
    let path = dir.path().join("campaign.toml");
    std::fs::write(&path, text).unwrap();
    let campaign = Campaign::load(&path).unwrap();

    let mut recorder = Recorder::default();
    plan::walk(&campaign, &mut recorder).unwrap();
    let mut expected: BTreeMap<_, u64> = BTreeMap::new();
    for planned in &recorder.rows {
        if let Fate::Valid(recipient) = &planned.fate {
            *expected
                .entry(plan::billing::fallback_class(&campaign, recipient).unwrap())
                .or_default() += 1;
        }
    }
    let scan = plan::account(&campaign, &dir.path().join("rejects.csv"), |_| {}, None).unwrap();
    assert_eq!((scan.valid, scan.duplicates, scan.rejected), (40, 1, 1));
    assert_eq!(expected.len(), 2, "both fallback classes occur: {expected:?}");
    assert_eq!(scan.fallbacks, expected);
}
