//! Every campaign kind end to end through the `msgbatch` binary (CSV and Parquet recipients): report and status buckets, per-recipient outcomes, sandbox sent counts and ledger classes, the text lane split, run-directory reuse and chunking.

mod common;

use common::process::{exec, msgbatch_at, path_str, Outcome, SandboxProcess};
use msgbatch::api::ledger::{BillingClass, LedgerKind};
use msgbatch::sandbox::Accounts;
use msgbatch::text::euc_kr_len;
use polars::prelude::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A Monday morning in Seoul: outside every quiet-hours window.
const DAYTIME: &str = "2026-11-23T11:00:00+09:00";
const DEMO_GROUP: &str = "demo";
const SENDER_KEY: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f001234567";
const SMS_MAX: usize = 90;

// ---------------------------------------------------------------------------------------------
// Running the binary.

/// The binary with an empty environment plus PATH/HOME, a daytime clock and the demo key.
fn msgbatch(dir: &Path) -> Command {
    msgbatch_at(dir, DAYTIME)
}

/// `msgbatch run CAMPAIGN --out DIR --json`.
fn run_json(dir: &Path, campaign: &Path, out: &Path) -> Outcome {
    exec(
        msgbatch(dir),
        &["run", path_str(campaign), "--out", path_str(out), "--json"],
    )
}

fn status_json(dir: &Path, run_dir: &Path) -> Value {
    exec(msgbatch(dir), &["status", path_str(run_dir), "--json"])
        .expect_code(0, "status --json")
        .json()
}

// ---------------------------------------------------------------------------------------------
// An external sandbox: `msgbatch sandbox --listen 127.0.0.1:0` as a child process.

/// Where a campaign sends.
enum Target<'a> {
    InProcess,
    External(&'a SandboxProcess),
}

impl Target<'_> {
    fn toml(&self) -> String {
        match self {
            Target::InProcess => "endpoint = \"sandbox\"\n".into(),
            Target::External(sandbox) => sandbox.endpoint_toml(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The recipients fixture and what the demo outcome rules predict for it.

/// What the engine should make of a row, decided by hand for each spelling below.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fate {
    /// A mobile number, normalised.
    Valid(&'static str),
    /// The same number as an earlier row.
    Duplicate,
    PhoneInvalid,
    PhoneMissing,
}

#[derive(Clone, Debug)]
struct Person {
    phone: Option<String>,
    fate: Fate,
    name: String,
    order_no: String,
    amount: i64,
    coupon: String,
}

fn person(phone: &str, fate: Fate, name: &str, order_no: &str, amount: i64) -> Person {
    Person {
        phone: (!phone.is_empty()).then(|| phone.to_string()),
        fate,
        name: name.into(),
        order_no: order_no.into(),
        amount,
        coupon: "WINTER10".into(),
    }
}

/// Numbers ending in every demo outcome suffix (91–96) and two plain ones, in several spellings,
/// plus a landline, an empty phone and a duplicate. Two order numbers are long enough to push
/// the `text` kind's message past 90 bytes.
fn people() -> Vec<Person> {
    let long_order = "A-1002-추가배송-선물포장-부분취소-재발송-주말배송";
    vec![
        person("010-3000-0001", Fate::Valid("01030000001"), "김민수", "A-1001", 12900),
        person(
            "+82 10-3000-0002",
            Fate::Valid("01030000002"),
            "이서연",
            long_order,
            45000,
        ),
        person("010.3000.0091", Fate::Valid("01030000091"), "박지훈", "A-1003", 8900),
        person("1030000092", Fate::Valid("01030000092"), "최유진", "A-1004", 23000),
        person("82-10-3000-0093", Fate::Valid("01030000093"), "정하늘", "A-1005", 15500),
        person("01030000094", Fate::Valid("01030000094"), "강도윤", "A-1006", 99000),
        person("010-3000-0095", Fate::Valid("01030000095"), "조, 은비", "A-1007", 5400),
        person("010-3000-0096", Fate::Valid("01030000096"), "윤서준", long_order, 31000),
        person("02-123-4567", Fate::PhoneInvalid, "임재현", "A-1010", 8000),
        person("", Fate::PhoneMissing, "한소희", "A-1011", 6000),
        person("010 3000 0001", Fate::Duplicate, "김민수", "A-1001", 12900),
    ]
}

fn write_csv(path: &Path, people: &[Person]) {
    let mut writer = csv::Writer::from_path(path).expect("create CSV");
    writer
        .write_record(["phone", "name", "order_no", "amount", "coupon"])
        .unwrap();
    for p in people {
        writer
            .write_record([
                p.phone.clone().unwrap_or_default(),
                p.name.clone(),
                p.order_no.clone(),
                p.amount.to_string(),
                p.coupon.clone(),
            ])
            .unwrap();
    }
    writer.flush().unwrap();
}

/// The same rows as Parquet: phone as nullable text, `amount` as Int64.
fn write_parquet(path: &Path, people: &[Person]) {
    let phones: Vec<Option<&str>> = people.iter().map(|p| p.phone.as_deref()).collect();
    let names: Vec<&str> = people.iter().map(|p| p.name.as_str()).collect();
    let orders: Vec<&str> = people.iter().map(|p| p.order_no.as_str()).collect();
    let amounts: Vec<i64> = people.iter().map(|p| p.amount).collect();
    let coupons: Vec<&str> = people.iter().map(|p| p.coupon.as_str()).collect();
    let mut frame = df!(
        "phone" => phones,
        "name" => names,
        "order_no" => orders,
        "amount" => amounts,
        "coupon" => coupons,
    )
    .expect("data frame");
    ParquetWriter::new(std::fs::File::create(path).expect("create Parquet"))
        .finish(&mut frame)
        .expect("write Parquet");
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Source {
    Csv,
    Parquet,
}

fn write_people(dir: &Path, source: Source, people: &[Person]) -> PathBuf {
    match source {
        Source::Csv => {
            let path = dir.join("people.csv");
            write_csv(&path, people);
            path
        }
        Source::Parquet => {
            let path = dir.join("people.parquet");
            write_parquet(&path, people);
            path
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Alimtalk,
    /// Brand FREE text to friends (targeting I).
    Brand,
    /// Brand FREE text with targeting M through an approved channel (reaches non-friends).
    BrandNonFriends,
    Sms,
    Lms,
    Text,
    Gateway,
}

const ORDER_SHIPPED: &str = "#{이름}님, 주문하신 상품이 발송되었습니다. 송장번호: #{VAR1}";
const SMS_TEXT: &str = "[데모몰] #{name}님, 쿠폰 #{VAR1} 도착";
const LMS_TEXT: &str = "(광고) #{name}님, 데모몰 겨울 세일이 시작되었습니다.\n쿠폰 코드 #{VAR1}을 결제 화면에 입력하시면 추가 할인이 적용됩니다.\n무료거부 080-000-0000";
const TEXT_TEXT: &str = "[데모몰] #{name}님, 주문 #{VAR1} 결제가 완료되었습니다.";
const PAYMENT_DONE: &str = "#{이름}님, #{VAR1}원 결제가 완료되었습니다.";
const BRAND_TEXT: &str = "(광고) 겨울 세일! 전 품목 최대 30% 할인\\n무료거부 080-000-0000";

impl Kind {
    fn toml_kind(self) -> &'static str {
        match self {
            Kind::Alimtalk => "alimtalk",
            Kind::Brand | Kind::BrandNonFriends => "brand",
            Kind::Sms => "sms",
            Kind::Lms => "lms",
            Kind::Text => "text",
            Kind::Gateway => "gateway-alimtalk",
        }
    }

    /// The `[message]` table.
    fn message(self) -> String {
        match self {
            Kind::Alimtalk => format!(
                "service = 1001\ntemplate = \"ORDER_SHIPPED\"\ntext = \"{ORDER_SHIPPED}\"\nalter = true\ncallback_no = \"0212345678\"\n"
            ),
            Kind::Brand => format!(
                "service = 2001\nchat_bubble_type = \"TEXT\"\nsend_type = \"FREE\"\ntargeting = \"I\"\ntext = \"{BRAND_TEXT}\"\n"
            ),
            Kind::BrandNonFriends => format!(
                "service = 2001\nchat_bubble_type = \"TEXT\"\nsend_type = \"FREE\"\ntargeting = \"M\"\nchannel_id = \"ch-demo-large\"\ntext = \"{BRAND_TEXT}\"\n"
            ),
            Kind::Sms => format!("service = 3001\ntext = \"{SMS_TEXT}\"\ncallback_no = \"0212345678\"\n"),
            Kind::Lms => format!(
                "service = 3001\nsubject = \"겨울 세일 안내\"\ntext = \"\"\"{LMS_TEXT}\"\"\"\ncallback_no = \"0212345678\"\nadvertising = true\n"
            ),
            Kind::Text => format!("service = 3001\ntext = \"{TEXT_TEXT}\"\ncallback_no = \"0212345678\"\n"),
            Kind::Gateway => format!(
                "sender_key = \"{SENDER_KEY}\"\ntemplate = \"PAYMENT_DONE\"\ntitle = \"결제 완료\"\ntext = \"{PAYMENT_DONE}\"\n"
            ),
        }
    }

    /// The variable mapping of `[recipients]`.
    fn mapping(self) -> &'static str {
        match self {
            Kind::Alimtalk | Kind::Text => "name = \"name\"\nvariables = { VAR1 = \"order_no\" }\n",
            Kind::Brand | Kind::BrandNonFriends => "",
            Kind::Sms | Kind::Lms => "name = \"name\"\nvariables = { VAR1 = \"coupon\" }\n",
            Kind::Gateway => "name = \"name\"\nvariables = { VAR1 = \"amount\" }\n",
        }
    }

    /// The message a person gets, filled by hand from the fixture (None for the fixed brand text).
    fn filled(self, p: &Person) -> Option<String> {
        let text = match self {
            Kind::Alimtalk => ORDER_SHIPPED
                .replace("#{이름}", &p.name)
                .replace("#{VAR1}", &p.order_no),
            Kind::Sms => SMS_TEXT.replace("#{name}", &p.name).replace("#{VAR1}", &p.coupon),
            Kind::Lms => LMS_TEXT.replace("#{name}", &p.name).replace("#{VAR1}", &p.coupon),
            Kind::Text => TEXT_TEXT.replace("#{name}", &p.name).replace("#{VAR1}", &p.order_no),
            Kind::Gateway => PAYMENT_DONE
                .replace("#{이름}", &p.name)
                .replace("#{VAR1}", &p.amount.to_string()),
            Kind::Brand | Kind::BrandNonFriends => return None,
        };
        Some(text)
    }

    fn bytes(self, p: &Person) -> usize {
        euc_kr_len(&self.filled(p).expect("a text kind")).expect("fixture text is EUC-KR")
    }

    /// The lane a valid person goes to.
    fn lane(self, p: &Person) -> &'static str {
        match self {
            Kind::Alimtalk => "alimtalk",
            Kind::Brand | Kind::BrandNonFriends => "brand",
            Kind::Sms => "sms",
            Kind::Lms => "lms",
            Kind::Text if self.bytes(p) <= SMS_MAX => "sms",
            Kind::Text => "lms",
            Kind::Gateway => "gateway",
        }
    }
}

/// One recipient's predicted answer: status code, whether it counts as accepted, the charges.
struct Prediction {
    status: &'static str,
    accepted: bool,
    charges: Vec<BillingClass>,
}

/// The demo outcome rules (by the number's last two digits) applied to one valid person.
fn predict(kind: Kind, number: &str, p: &Person) -> Prediction {
    let suffix = &number[number.len() - 2..];
    let ok = |status, class| Prediction {
        status,
        accepted: true,
        charges: vec![class],
    };
    let refused = |status| Prediction {
        status,
        accepted: false,
        charges: vec![],
    };
    match kind {
        Kind::Alimtalk => match suffix {
            // Channel failure; `alter = true` sends the filled text as a fallback SMS or LMS.
            "91" => Prediction {
                status: "CH_SBX_BLOCKED",
                accepted: false,
                charges: vec![if kind.bytes(p) <= SMS_MAX {
                    BillingClass::FallbackSms
                } else {
                    BillingClass::FallbackLms
                }],
            },
            _ => ok("OK", BillingClass::Alimtalk),
        },
        Kind::Brand => match suffix {
            "91" => refused("CH_SBX_BLOCKED"),
            "92" => refused("CH_SBX_NOT_FRIEND"),
            _ => ok("OK", BillingClass::BmFriend),
        },
        Kind::BrandNonFriends => match suffix {
            "91" => refused("CH_SBX_BLOCKED"),
            _ => ok("OK", BillingClass::BmNonfriend),
        },
        Kind::Sms | Kind::Lms | Kind::Text => {
            let sms = kind.lane(p) == "sms";
            match suffix {
                "96" => refused("ERROR"),
                _ if sms => ok("SMS_00", BillingClass::Sms),
                _ => ok("MMS_0000", BillingClass::Lms),
            }
        }
        Kind::Gateway => match suffix {
            "95" => refused("FAILED"),
            _ => ok("GW_PENDING", BillingClass::Alimtalk),
        },
    }
}

fn price(class: BillingClass) -> i64 {
    let accounts = Accounts::demo();
    let group = accounts.groups.iter().find(|g| g.id == DEMO_GROUP).expect("demo group");
    group.prices.of(class)
}

/// Everything a run of `kind` over `people` should report, computed from the fixture.
#[derive(Debug, Default)]
struct Expected {
    rows: u64,
    rejected: u64,
    rejected_by_reason: BTreeMap<String, u64>,
    duplicates: u64,
    suppressed: u64,
    sent: u64,
    accepted: u64,
    statuses: BTreeMap<String, u64>,
    lanes: BTreeMap<String, u64>,
    /// (number, class, amount), sorted.
    charges: Vec<(String, BillingClass, i64)>,
    valid_numbers: Vec<String>,
}

fn expected(kind: Kind, people: &[Person]) -> Expected {
    let mut e = Expected::default();
    for p in people {
        e.rows += 1;
        match p.fate {
            Fate::Duplicate => e.duplicates += 1,
            Fate::PhoneInvalid => {
                e.rejected += 1;
                *e.rejected_by_reason.entry("phone_invalid".into()).or_default() += 1;
            }
            Fate::PhoneMissing => {
                e.rejected += 1;
                *e.rejected_by_reason.entry("phone_missing".into()).or_default() += 1;
            }
            Fate::Valid(number) => {
                let prediction = predict(kind, number, p);
                e.sent += 1;
                e.accepted += prediction.accepted as u64;
                *e.statuses.entry(prediction.status.into()).or_default() += 1;
                *e.lanes.entry(kind.lane(p).into()).or_default() += 1;
                for class in prediction.charges {
                    e.charges.push((number.to_string(), class, price(class)));
                }
                e.valid_numbers.push(number.to_string());
            }
        }
    }
    e.charges
        .sort_by(|a, b| (&a.0, a.1.as_str()).cmp(&(&b.0, b.1.as_str())));
    e
}

fn campaign_text(target: &Target, kind: Kind, recipients: &Path, send: &str) -> String {
    format!(
        "name = \"{kind:?}\"\nkind = \"{}\"\n{}\n[credentials]\ngroup_id = \"demo\"\n\n[message]\n{}\n[recipients]\npath = \"{}\"\nphone = \"phone\"\n{}\n[send]\n{send}",
        kind.toml_kind(),
        target.toml(),
        kind.message(),
        path_str(recipients),
        kind.mapping(),
    )
}

fn write_campaign(dir: &Path, file: &str, text: &str) -> PathBuf {
    let path = dir.join(file);
    std::fs::write(&path, text).expect("write campaign");
    path
}

fn u(value: &Value, key: &str) -> u64 {
    value[key]
        .as_u64()
        .unwrap_or_else(|| panic!("`{key}` is not a number in {value:#}"))
}

fn counts(value: &Value) -> BTreeMap<String, u64> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().expect("a count")))
        .collect()
}

/// The status buckets against the expectation: the equation holds, nothing pending or uncertain.
fn check_status(status: &Value, e: &Expected, what: &str) {
    let buckets = ["rejected", "duplicates", "suppressed", "sent", "uncertain", "pending"];
    let sum: u64 = buckets.iter().map(|k| u(status, k)).sum();
    assert_eq!(u(status, "rows"), sum, "{what}: rows = sum of the buckets: {status:#}");
    assert_eq!(u(status, "rows"), e.rows, "{what}: rows");
    assert_eq!(u(status, "pending"), 0, "{what}: pending");
    assert_eq!(u(status, "uncertain"), 0, "{what}: uncertain");
    assert_eq!(u(status, "rejected"), e.rejected, "{what}: rejected");
    assert_eq!(
        counts(&status["rejected_by_reason"]),
        e.rejected_by_reason,
        "{what}: rejected_by_reason"
    );
    assert_eq!(u(status, "duplicates"), e.duplicates, "{what}: duplicates");
    assert_eq!(u(status, "suppressed"), e.suppressed, "{what}: suppressed");
    assert_eq!(u(status, "sent"), e.sent, "{what}: sent");
    assert_eq!(u(status, "accepted"), e.accepted, "{what}: accepted");
    assert_eq!(u(status, "not_accepted"), e.sent - e.accepted, "{what}: not_accepted");
    assert_eq!(
        counts(&status["statuses"]),
        e.statuses,
        "{what}: per-recipient statuses"
    );
    let lanes: BTreeMap<String, u64> = status["lanes"]
        .as_object()
        .expect("lanes")
        .iter()
        .map(|(lane, detail)| (lane.clone(), u(detail, "valid")))
        .collect();
    assert_eq!(lanes, e.lanes, "{what}: valid rows per lane");
    assert_eq!(status["complete"], Value::Bool(true), "{what}: complete");
}

/// The sandbox saw every valid number exactly once and charged the predicted classes, no refunds.
fn check_sandbox(sandbox: &SandboxProcess, e: &Expected, what: &str) {
    let sent = sandbox.sent();
    let expected_sent: BTreeMap<String, u32> = e.valid_numbers.iter().map(|n| (n.clone(), 1)).collect();
    assert_eq!(sent.numbers, expected_sent, "{what}: numbers the sandbox received");
    assert_eq!(sent.total, e.valid_numbers.len() as u64, "{what}: total sent");
    let ledger = sandbox.ledger();
    let mut charges: Vec<(String, BillingClass, i64)> = ledger
        .entries
        .iter()
        .filter(|entry| entry.kind == LedgerKind::Charge)
        .map(|entry| (entry.recipient.clone(), entry.billing_class, entry.amount))
        .collect();
    charges.sort_by(|a, b| (&a.0, a.1.as_str()).cmp(&(&b.0, b.1.as_str())));
    assert_eq!(charges, e.charges, "{what}: ledger charges");
    assert!(
        ledger.entries.iter().all(|entry| entry.kind == LedgerKind::Charge),
        "{what}: no refunds expected: {:?}",
        ledger.entries
    );
}

/// Runs `kind` over the fixture from `source` against a fresh external sandbox and checks the
/// report, `status`, the sent counts and the ledger.
fn end_to_end(kind: Kind, source: Source) {
    let dir = tempfile::tempdir().unwrap();
    let people = people();
    let recipients = write_people(dir.path(), source, &people);
    let sandbox = SandboxProcess::start();
    let campaign = write_campaign(
        dir.path(),
        "campaign.toml",
        &campaign_text(&Target::External(&sandbox), kind, &recipients, ""),
    );
    let out = dir.path().join("run");
    let what = format!("{kind:?} from {source:?}");
    let report = run_json(dir.path(), &campaign, &out)
        .expect_code(0, &format!("{what}: run --json"))
        .json();
    assert_eq!(report["end"]["end"], "complete", "{what}: {report:#}");
    let e = expected(kind, &people);
    check_status(&report["status"], &e, &what);
    assert_eq!(
        status_json(dir.path(), &out),
        report["status"],
        "{what}: status --json after the run"
    );
    check_sandbox(&sandbox, &e, &what);
}

// ---------------------------------------------------------------------------------------------
// Every kind, from CSV and from Parquet.

#[test]
fn alimtalk_from_csv_sends_each_valid_number_once_and_bills_alimtalk_with_fallback_sms() {
    end_to_end(Kind::Alimtalk, Source::Csv);
}

#[test]
fn alimtalk_from_parquet_sends_each_valid_number_once_and_bills_alimtalk_with_fallback_sms() {
    end_to_end(Kind::Alimtalk, Source::Parquet);
}

#[test]
fn brand_from_csv_reaches_friends_and_bills_bm_friend() {
    end_to_end(Kind::Brand, Source::Csv);
}

#[test]
fn brand_from_parquet_reaches_friends_and_bills_bm_friend() {
    end_to_end(Kind::Brand, Source::Parquet);
}

#[test]
fn brand_with_targeting_m_reaches_non_friends_and_bills_bm_nonfriend() {
    end_to_end(Kind::BrandNonFriends, Source::Csv);
}

#[test]
fn sms_from_csv_sends_each_valid_number_once_and_bills_sms() {
    end_to_end(Kind::Sms, Source::Csv);
}

#[test]
fn sms_from_parquet_sends_each_valid_number_once_and_bills_sms() {
    end_to_end(Kind::Sms, Source::Parquet);
}

#[test]
fn lms_from_csv_sends_each_valid_number_once_and_bills_lms() {
    end_to_end(Kind::Lms, Source::Csv);
}

#[test]
fn lms_from_parquet_sends_each_valid_number_once_and_bills_lms() {
    end_to_end(Kind::Lms, Source::Parquet);
}

#[test]
fn text_from_csv_sends_each_valid_number_once_in_its_lane() {
    end_to_end(Kind::Text, Source::Csv);
}

#[test]
fn text_from_parquet_sends_each_valid_number_once_in_its_lane() {
    end_to_end(Kind::Text, Source::Parquet);
}

#[test]
fn gateway_alimtalk_from_csv_is_accepted_pending_and_bills_alimtalk() {
    end_to_end(Kind::Gateway, Source::Csv);
}

#[test]
fn gateway_alimtalk_from_parquet_with_integer_amounts_is_accepted_pending_and_bills_alimtalk() {
    end_to_end(Kind::Gateway, Source::Parquet);
}

#[test]
fn fixture_exercises_every_outcome_rule_and_both_text_lanes() {
    // The end-to-end tests above are only as good as the fixture: check it covers what they claim.
    let people = people();
    let valid: Vec<&str> = people
        .iter()
        .filter_map(|p| match p.fate {
            Fate::Valid(number) => Some(number),
            _ => None,
        })
        .collect();
    for suffix in ["91", "92", "93", "94", "95", "96"] {
        assert!(valid.iter().any(|n| n.ends_with(suffix)), "no number ending {suffix}");
    }
    let text = expected(Kind::Text, &people);
    assert!(text.lanes.get("sms").copied().unwrap_or(0) > 0, "{:?}", text.lanes);
    assert!(text.lanes.get("lms").copied().unwrap_or(0) > 0, "{:?}", text.lanes);
    for p in people.iter().filter(|p| matches!(p.fate, Fate::Valid(_))) {
        assert!(Kind::Sms.bytes(p) <= SMS_MAX, "the sms fixture fits 90 bytes: {p:?}");
    }
    for kind in [Kind::Alimtalk, Kind::Brand, Kind::Sms, Kind::Lms, Kind::Gateway] {
        let e = expected(kind, &people);
        assert!(
            e.accepted > 0 && e.accepted < e.sent,
            "{kind:?} has both outcomes: {e:?}"
        );
    }
}

#[test]
fn every_kind_runs_against_the_in_process_sandbox_from_csv_and_parquet() {
    let dir = tempfile::tempdir().unwrap();
    let people = people();
    for source in [Source::Csv, Source::Parquet] {
        let recipients = write_people(dir.path(), source, &people);
        for kind in [
            Kind::Alimtalk,
            Kind::Brand,
            Kind::Sms,
            Kind::Lms,
            Kind::Text,
            Kind::Gateway,
        ] {
            let what = format!("{kind:?} from {source:?}, in-process sandbox");
            let campaign = write_campaign(
                dir.path(),
                &format!("{kind:?}-{source:?}.toml"),
                &campaign_text(&Target::InProcess, kind, &recipients, ""),
            );
            let out = dir.path().join(format!("run-{kind:?}-{source:?}"));
            let report = run_json(dir.path(), &campaign, &out).expect_code(0, &what).json();
            check_status(&report["status"], &expected(kind, &people), &what);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The text lane split.

/// Padding that brings `prefix` to exactly `target` EUC-KR bytes (Hangul 2 bytes, ASCII 1).
fn pad_to(prefix: &str, target: usize) -> String {
    let base = euc_kr_len(prefix).unwrap();
    assert!(base < target, "{prefix:?} is already {base} bytes");
    let left = target - base;
    let padding = format!("{}{}", "가".repeat(left / 2), "x".repeat(left % 2));
    assert_eq!(euc_kr_len(&format!("{prefix}{padding}")).unwrap(), target);
    padding
}

#[test]
fn text_kind_sends_90_byte_messages_as_sms_and_91_byte_ones_as_lms() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = SandboxProcess::start();
    let template = "[데모몰] #{name}님 #{VAR1}";
    // (number, name, target bytes of the filled text)
    let rows: [(&str, &str, usize); 7] = [
        ("01050000001", "김민수", 90),
        ("01050000002", "Kim", 90),
        ("01050000003", "남궁민수", 90),
        ("01050000004", "이서연", 91),
        ("01050000005", "Lee", 91),
        ("01050000006", "박지훈", 2000),
        ("01050000007", "최유진", 2001),
    ];
    let mut writer = csv::Writer::from_path(dir.path().join("text.csv")).unwrap();
    writer.write_record(["phone", "name", "pad"]).unwrap();
    for (number, name, target) in rows {
        let prefix = template.replace("#{name}", name).replace("#{VAR1}", "");
        writer.write_record([number, name, &pad_to(&prefix, target)]).unwrap();
    }
    writer.flush().unwrap();
    let campaign = write_campaign(
        dir.path(),
        "text.toml",
        &format!(
            "kind = \"text\"\n{}[credentials]\ngroup_id = \"demo\"\n[message]\nservice = 3001\ntext = \"{template}\"\ncallback_no = \"0212345678\"\n[recipients]\npath = \"text.csv\"\nname = \"name\"\nvariables = {{ VAR1 = \"pad\" }}\n",
            sandbox.endpoint_toml()
        ),
    );
    let out = dir.path().join("run");
    let report = run_json(dir.path(), &campaign, &out).expect_code(0, "text run").json();

    let sms: Vec<&str> = rows.iter().filter(|r| r.2 <= 90).map(|r| r.0).collect();
    let lms: Vec<&str> = rows.iter().filter(|r| r.2 > 90 && r.2 <= 2000).map(|r| r.0).collect();
    let too_long = rows.iter().filter(|r| r.2 > 2000).count() as u64;

    let status = status_json(dir.path(), &out);
    assert_eq!(status, report["status"], "status --json equals the run's report");
    assert_eq!(u(&status["lanes"]["sms"], "valid"), sms.len() as u64, "{status:#}");
    assert_eq!(u(&status["lanes"]["sms"], "sent"), sms.len() as u64, "{status:#}");
    assert_eq!(u(&status["lanes"]["lms"], "valid"), lms.len() as u64, "{status:#}");
    assert_eq!(u(&status["lanes"]["lms"], "sent"), lms.len() as u64, "{status:#}");
    assert_eq!(u(&status, "rejected"), too_long, "{status:#}");
    assert_eq!(u(&status["rejected_by_reason"], "too_long"), too_long, "{status:#}");
    assert_eq!(
        counts(&status["statuses"]),
        BTreeMap::from([
            ("SMS_00".to_string(), sms.len() as u64),
            ("MMS_0000".to_string(), lms.len() as u64)
        ]),
        "the sandbox took every message in its lane: {status:#}"
    );

    let ledger = sandbox.ledger();
    let classes: BTreeMap<String, BillingClass> = ledger
        .entries
        .iter()
        .map(|entry| (entry.recipient.clone(), entry.billing_class))
        .collect();
    let mut expected_classes = BTreeMap::new();
    for number in &sms {
        expected_classes.insert(number.to_string(), BillingClass::Sms);
    }
    for number in &lms {
        expected_classes.insert(number.to_string(), BillingClass::Lms);
    }
    assert_eq!(classes, expected_classes, "ledger classes per number");
    assert_eq!(ledger.entries.len(), sms.len() + lms.len(), "{:?}", ledger.entries);
}

// ---------------------------------------------------------------------------------------------
// Status, run-directory reuse, chunking.

#[test]
fn status_after_a_run_gives_the_same_buckets_as_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let people = people();
    let recipients = write_people(dir.path(), Source::Csv, &people);
    let campaign = write_campaign(
        dir.path(),
        "sms.toml",
        &campaign_text(&Target::InProcess, Kind::Sms, &recipients, ""),
    );
    let out = dir.path().join("run");
    let report = run_json(dir.path(), &campaign, &out).expect_code(0, "run").json();
    let status = status_json(dir.path(), &out);
    check_status(&status, &expected(Kind::Sms, &people), "status --json");
    assert_eq!(status, report["status"]);
    // The text form prints the same equation.
    let text = exec(msgbatch(dir.path()), &["status", path_str(&out)]).expect_code(0, "status");
    let equation = format!(
        "rows {} = rejected {} + duplicates {} + suppressed {} + sent {} + uncertain {} + pending {}",
        u(&status, "rows"),
        u(&status, "rejected"),
        u(&status, "duplicates"),
        u(&status, "suppressed"),
        u(&status, "sent"),
        u(&status, "uncertain"),
        u(&status, "pending")
    );
    assert!(text.stdout.contains(&equation), "{}", text.show());
}

#[test]
fn run_into_a_directory_that_holds_a_run_is_refused_naming_resume() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = SandboxProcess::start();
    let people = people();
    let recipients = write_people(dir.path(), Source::Csv, &people);
    let campaign = write_campaign(
        dir.path(),
        "sms.toml",
        &campaign_text(&Target::External(&sandbox), Kind::Sms, &recipients, ""),
    );
    let out = dir.path().join("run");
    let first = run_json(dir.path(), &campaign, &out).expect_code(0, "first run").json();
    let second = exec(
        msgbatch(dir.path()),
        &["run", path_str(&campaign), "--out", path_str(&out)],
    )
    .expect_code(2, "second run into the same directory");
    assert!(second.stderr.contains("msgbatch resume"), "{}", second.show());
    // Nothing was sent twice, and the first run's record is intact.
    let e = expected(Kind::Sms, &people);
    check_sandbox(&sandbox, &e, "after the refused second run");
    assert_eq!(status_json(dir.path(), &out), first["status"]);
}

#[test]
fn two_hundred_fifty_valid_rows_with_chunk_size_100_make_three_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let people: Vec<Person> = (0..250)
        .map(|i| Person {
            phone: Some(format!("010-4000-{i:04}")),
            fate: Fate::Valid(""),
            name: format!("고객{i}"),
            order_no: format!("A-{i}"),
            amount: 1000 + i,
            coupon: "WINTER10".into(),
        })
        .collect();
    let recipients = write_people(dir.path(), Source::Csv, &people);
    let campaign = write_campaign(
        dir.path(),
        "sms.toml",
        &campaign_text(&Target::InProcess, Kind::Sms, &recipients, "chunk_size = 100\n"),
    );
    let out = dir.path().join("run");
    let report = run_json(dir.path(), &campaign, &out).expect_code(0, "run").json();
    let status = status_json(dir.path(), &out);
    assert_eq!(status, report["status"]);
    let lane = &status["lanes"]["sms"];
    assert_eq!(u(lane, "valid"), 250, "{status:#}");
    assert_eq!(u(lane, "chunks"), 250u64.div_ceil(100), "{status:#}");
    assert_eq!(u(lane, "chunks_done"), 3, "{status:#}");
    assert_eq!(u(lane, "chunks_uncertain"), 0, "{status:#}");
    assert_eq!(u(&status, "sent"), 250);
    assert_eq!(u(&status, "pending"), 0);
    // Numbers 010-4000-0096 and 010-4000-0196 end in 96: the demo rules answer ERROR.
    let errors = (0..250).filter(|i| i % 100 == 96).count() as u64;
    assert_eq!(
        counts(&status["statuses"]),
        BTreeMap::from([("ERROR".to_string(), errors), ("SMS_00".to_string(), 250 - errors)]),
        "{status:#}"
    );
    // `validate` plans the same chunks.
    let validate = exec(msgbatch(dir.path()), &["validate", path_str(&campaign), "--json"])
        .expect_code(0, "validate")
        .json();
    assert_eq!(validate["chunks"]["sms"], 3, "{validate:#}");
}

#[test]
fn chunk_size_over_one_thousand_is_refused_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let recipients = write_people(dir.path(), Source::Csv, &people());
    let campaign = write_campaign(
        dir.path(),
        "sms.toml",
        &campaign_text(&Target::InProcess, Kind::Sms, &recipients, "chunk_size = 1001\n"),
    );
    let out = dir.path().join("run");
    let run = exec(
        msgbatch(dir.path()),
        &["run", path_str(&campaign), "--out", path_str(&out)],
    )
    .expect_code(2, "run with chunk_size 1001");
    assert!(run.stderr.contains("send.chunk_size"), "{}", run.show());
    assert!(!out.join("checkpoint").exists(), "a refused run leaves no checkpoint");
    let validate =
        exec(msgbatch(dir.path()), &["validate", path_str(&campaign)]).expect_code(2, "validate with chunk_size 1001");
    assert!(validate.stderr.contains("send.chunk_size"), "{}", validate.show());
    // The largest allowed size is accepted.
    let allowed = write_campaign(
        dir.path(),
        "sms-1000.toml",
        &campaign_text(&Target::InProcess, Kind::Sms, &recipients, "chunk_size = 1000\n"),
    );
    exec(msgbatch(dir.path()), &["validate", path_str(&allowed)]).expect_code(0, "chunk_size 1000");
}
