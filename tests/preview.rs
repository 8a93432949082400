//! `validate --preview N`: per lane, the first rows and the longest message, rendered as they will be sent, with lengths, billing class and fallback.

mod common;

use common::process::{exec, msgbatch_at, path_str};
use msgbatch::text::euc_kr_len;

#[test]
fn previews_show_each_lanes_first_rows_and_longest_message_exactly_as_filled() {
    let dir = tempfile::tempdir().unwrap();
    let long_name = "가".repeat(50);
    std::fs::write(
        dir.path().join("people.csv"),
        format!("phone,name,coupon\n01020001001,김민수,C1\n01020001002,이서연,C2\n01020001003,{long_name},C3\n01020001004,박지호,C4\n"),
    )
    .unwrap();
    let campaign = dir.path().join("campaign.toml");
    std::fs::write(
        &campaign,
        "kind = \"text\"\n[message]\nservice = 3001\ntext = \"[데모몰] #{name}님 쿠폰 #{VAR1}\"\ncallback_no = \"0212345678\"\n[recipients]\npath = \"people.csv\"\nname = \"name\"\nvariables = { VAR1 = \"coupon\" }\n",
    )
    .unwrap();
    let validated = exec(
        msgbatch_at(dir.path(), "2026-11-23T11:00:00+09:00"),
        &["validate", path_str(&campaign), "--preview", "1", "--json"],
    )
    .expect_code(0, "validate --preview");
    let preview = &validated.json()["preview"];

    let sms = preview["sms"].as_array().expect("an SMS lane");
    let rows: Vec<(u64, &str)> = sms
        .iter()
        .map(|m| (m["row"].as_u64().unwrap(), m["chosen"].as_str().unwrap()))
        .collect();
    assert_eq!(
        rows,
        [(2, "first")],
        "one SMS row asked for (the first person, on row 2 under the header); no longer SMS row exists"
    );
    let first = &sms[0];
    assert_eq!(first["text"], "[데모몰] 김민수님 쿠폰 C1");
    assert_eq!(first["phone"], "010-****-1001", "phones are masked");
    assert_eq!(first["bytes"], euc_kr_len("[데모몰] 김민수님 쿠폰 C1").unwrap());
    assert_eq!(first["billing_class"], "sms");

    let lms = preview["lms"].as_array().expect("the long name makes an LMS message");
    let expected = format!("[데모몰] {long_name}님 쿠폰 C3");
    assert_eq!(lms[0]["text"], expected.as_str());
    assert_eq!(lms[0]["bytes"], euc_kr_len(&expected).unwrap());
    assert_eq!(lms[0]["billing_class"], "lms");
}

#[test]
fn the_longest_message_is_shown_after_the_first_rows() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("people.csv"),
        "phone,name\n01020001001,김민수\n01020001002,이서연\n01020001003,남궁민수현\n01020001004,박지호\n",
    )
    .unwrap();
    let campaign = dir.path().join("campaign.toml");
    std::fs::write(
        &campaign,
        "kind = \"sms\"\n[message]\nservice = 3001\ntext = \"#{name}님 안녕하세요\"\ncallback_no = \"0212345678\"\n[recipients]\npath = \"people.csv\"\nname = \"name\"\n",
    )
    .unwrap();
    let validated = exec(
        msgbatch_at(dir.path(), "2026-11-23T11:00:00+09:00"),
        &["validate", path_str(&campaign), "--preview", "1"],
    )
    .expect_code(0, "validate --preview");
    assert!(
        validated.stdout.contains("row 2 010-****-1001 (first;"),
        "{}",
        validated.show()
    );
    assert!(
        validated.stdout.contains("row 4 010-****-1003 (longest;"),
        "{}",
        validated.show()
    );
    assert!(
        validated.stdout.contains("| 남궁민수현님 안녕하세요"),
        "{}",
        validated.show()
    );
    assert!(
        !validated.stdout.contains("01020001003"),
        "no phone in full: {}",
        validated.show()
    );
}
