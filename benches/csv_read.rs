//! CSV reader throughput on realistic rows: read in one piece against read in parallel blocks, UTF-8 and CP949. Run: `cargo bench --bench csv_read`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use msgbatch::campaign::Encoding;
use msgbatch::input::{self, ColumnSpec, DEFAULT_MAX_FIELD_BYTES};
use std::io::Write;
use std::path::Path;

const ROWS: usize = 200_000;

/// Rows shaped like a campaign list (see `benches/scale.sh`): mixed phone spellings, Hangul
/// names, a coupon code and a date; about 41 bytes a row in UTF-8.
fn realistic(rows: usize) -> String {
    let surnames: Vec<char> = "김이박최정강조윤장임".chars().collect();
    let given: Vec<char> = "민서지현우준도하윤수영진예은".chars().collect();
    let mut text = String::from("hp,name,VAR1,VAR2\n");
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for i in 0..rows {
        let digits = format!("{:08}", 10_000_000 + i);
        let phone = match next() % 100 {
            0 => "02-123-4567".to_string(),
            1..=60 => format!("010{digits}"),
            61..=90 => format!("010-{}-{}", &digits[..4], &digits[4..]),
            _ => format!("+82 10-{}-{}", &digits[..4], &digits[4..]),
        };
        let name: String = [
            surnames[next() as usize % surnames.len()],
            given[next() as usize % given.len()],
            given[next() as usize % given.len()],
        ]
        .iter()
        .collect();
        text.push_str(&format!(
            "{phone},{name},C{:05X},2026-12-{:02}\n",
            next() % 0xFFFFF,
            1 + next() % 28
        ));
    }
    text
}

fn spec() -> ColumnSpec {
    ColumnSpec {
        phone: "hp".into(),
        name: Some("name".into()),
        vars: vec!["VAR1".into(), "VAR2".into()],
    }
}

fn read_all(path: &Path, encoding: Encoding, block_bytes: usize) -> usize {
    let mut source =
        input::open_csv_in_blocks(path, encoding, &spec(), DEFAULT_MAX_FIELD_BYTES, block_bytes).expect("opens");
    let mut rows = 0;
    match source.in_parallel() {
        Some(parallel) => parallel
            .read(
                |_| (),
                |batch, ()| {
                    rows += batch.len();
                    true
                },
            )
            .expect("reads"),
        None => {
            while let Some(batch) = source.next_batch(16 * 1024).expect("reads") {
                rows += batch.len();
            }
        }
    }
    assert_eq!(rows, ROWS);
    rows
}

fn csv_read(c: &mut Criterion) {
    let text = realistic(ROWS);
    let dir = tempfile::tempdir().unwrap();
    let utf8 = dir.path().join("utf8.csv");
    std::fs::File::create(&utf8)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let cp949 = dir.path().join("cp949.csv");
    let (encoded, _, _) = encoding_rs::EUC_KR.encode(&text);
    std::fs::File::create(&cp949).unwrap().write_all(&encoded).unwrap();

    let mut group = c.benchmark_group("csv_read");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(text.len() as u64));
    for (label, path, encoding) in [("utf8", &utf8, Encoding::Utf8), ("cp949", &cp949, Encoding::Cp949)] {
        group.bench_function(format!("{label}_one_piece"), |b| {
            b.iter(|| read_all(path, encoding, usize::MAX / 4))
        });
        group.bench_function(format!("{label}_blocks"), |b| {
            b.iter(|| read_all(path, encoding, 1 << 20))
        });
    }
    group.finish();
}

criterion_group!(benches, csv_read);
criterion_main!(benches);
