//! Render and plan throughput: classifying batches of rows (phone, template fill, EUC-KR length, lane, duplicates)
//! and cutting them into chunks. Run: `cargo bench --bench prepare`.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use msgbatch::campaign::Campaign;
use msgbatch::input::RawRow;
use msgbatch::plan::{Classifier, Fate};
use std::path::Path;

const BATCH: usize = 16 * 1024;

fn campaign(kind: &str) -> Campaign {
    let text = format!(
        "kind = \"{kind}\"\n[message]\nservice = 3001\ntext = \"[데모몰] #{{name}}님 쿠폰 #{{VAR1}} 도착, 앱에서 확인하세요\"\ncallback_no = \"0212345678\"\n\
         [recipients]\npath = \"r.csv\"\nname = \"name\"\nvariables = {{ VAR1 = \"coupon\" }}\n"
    );
    Campaign::parse(&text, Path::new("/tmp/bench/campaign.toml")).expect("valid bench campaign")
}

fn rows(offset: usize) -> Vec<RawRow> {
    (0..BATCH)
        .map(|i| {
            let n = offset + i;
            RawRow {
                row: n as u64 + 1,
                phone: Some(format!("010-{:04}-{:04}", (n / 10_000) % 10_000, n % 10_000).into()),
                name: Some(if n.is_multiple_of(50) {
                    "아주 긴 이름을 가진 고객님 VIP".into()
                } else {
                    "김민수".into()
                }),
                vars: [Some(format!("C{:04}", n % 1000).into())].into_iter().collect(),
                unreadable: None,
            }
        })
        .collect()
}

fn classify(c: &mut Criterion) {
    let mut group = c.benchmark_group("prepare");
    group.throughput(Throughput::Elements(BATCH as u64));
    for kind in ["sms", "text"] {
        let campaign = campaign(kind);
        let mut classifier = Classifier::new(&campaign).expect("classifier");
        let mut offset = 0;
        group.bench_function(format!("classify_{kind}_rows"), |b| {
            b.iter_batched(
                || {
                    offset += BATCH;
                    rows(offset)
                },
                |batch| {
                    let fates = classifier.classify(batch);
                    // Cut chunks of 100 per lane, as the run does.
                    let mut chunks = 0usize;
                    let mut filled = [0usize; 5];
                    for (_, fate) in &fates {
                        if let Fate::Valid(recipient) = fate {
                            let lane = recipient.lane.index() as usize;
                            filled[lane] += 1;
                            if filled[lane] == 100 {
                                filled[lane] = 0;
                                chunks += 1;
                            }
                        }
                    }
                    chunks
                },
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, classify);
criterion_main!(benches);
