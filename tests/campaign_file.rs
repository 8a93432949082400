//! The campaign file through the `msgbatch` binary: `#<…>` placeholders sent in the service's spelling, malformed placeholders and empty text refused with their setting and position, and `insecure_http` in the endpoint table.

mod common;

use common::process::{exec, msgbatch_at, path_str, Outcome};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A Monday morning in Seoul: outside every quiet-hours window.
const DAYTIME: &str = "2026-11-23T11:00:00+09:00";
const PEOPLE: &str = "phone,name,order_no\n010-7600-0001,김민수,A-1001\n010-7600-0002,이서연,A-1002\n";

fn msgbatch(dir: &Path, args: &[&str]) -> Outcome {
    exec(msgbatch_at(dir, DAYTIME), args)
}

/// A campaign file `campaign.toml` of `kind` with `[message]` lines, over `PEOPLE`.
fn campaign(dir: &Path, kind: &str, endpoint: &str, message: &str) -> PathBuf {
    std::fs::write(dir.join("people.csv"), PEOPLE).unwrap();
    let path = dir.join("campaign.toml");
    std::fs::write(
        &path,
        format!(
            "kind = \"{kind}\"\n{endpoint}\n[message]\n{message}\n[recipients]\npath = \"people.csv\"\nname = \"name\"\nvariables = {{ VAR1 = \"order_no\" }}\n"
        ),
    )
    .unwrap();
    path
}

fn run(dir: &Path, campaign: &Path) -> Outcome {
    let out = dir.join("run");
    msgbatch(dir, &["run", path_str(campaign), "--out", path_str(&out), "--json"])
}

fn count(value: &Value, key: &str) -> u64 {
    value[key]
        .as_u64()
        .unwrap_or_else(|| panic!("`{key}` is not a number in {value:#}"))
}

/// `validate` and `run` both refuse (exit 2) naming `key` and `detail` on stderr.
fn refused(dir: &Path, campaign: &Path, key: &str, detail: &str) {
    for outcome in [msgbatch(dir, &["validate", path_str(campaign)]), run(dir, campaign)] {
        let outcome = outcome.expect_code(2, key);
        assert!(
            outcome.stderr.contains(key) && outcome.stderr.contains(detail),
            "expected {key} and {detail:?}: {}",
            outcome.show()
        );
    }
}

#[test]
fn a_notification_written_with_angle_brackets_is_accepted_as_the_registered_template() {
    let dir = tempfile::tempdir().unwrap();
    let campaign = campaign(
        dir.path(),
        "alimtalk",
        "endpoint = \"sandbox\"",
        "service = 1001\ntemplate = \"ORDER_SHIPPED\"\ntext = \"#<이름>님, 주문하신 상품이 발송되었습니다. 송장번호: #<VAR1>\"",
    );
    let report = run(dir.path(), &campaign).expect_code(0, "run").json();
    let status = &report["status"];
    assert_eq!((count(status, "sent"), count(status, "accepted")), (2, 2), "{report:#}");
}

#[test]
fn angle_bracket_variables_are_filled_before_the_text_lane_is_chosen() {
    let dir = tempfile::tempdir().unwrap();
    // 20 bytes of text plus an order number of 80: over the 90 bytes of an SMS only when filled.
    let people = format!("phone,name,order_no\n010-7600-0001,김민수,{}\n", "X".repeat(80));
    let campaign = campaign(
        dir.path(),
        "text",
        "endpoint = \"sandbox\"",
        "service = 3001\ncallback_no = \"0212345678\"\ntext = \"order #<VAR1> is ready\"",
    );
    std::fs::write(dir.path().join("people.csv"), people).unwrap();
    let json = msgbatch(dir.path(), &["validate", path_str(&campaign), "--json"])
        .expect_code(0, "validate")
        .json();
    assert_eq!(json["per_lane"], serde_json::json!({ "lms": 1 }), "{json:#}");
}

#[test]
fn an_unclosed_placeholder_is_refused_naming_the_setting_and_its_position() {
    let dir = tempfile::tempdir().unwrap();
    for (text, written) in [("주문 #{VAR1 도착", "#{VAR1"), ("주문 #<VAR1 도착", "#<VAR1")] {
        let campaign = campaign(
            dir.path(),
            "sms",
            "endpoint = \"sandbox\"",
            &format!("service = 3001\ncallback_no = \"0212345678\"\ntext = \"{text}\""),
        );
        refused(dir.path(), &campaign, "message.text", written);
        refused(dir.path(), &campaign, "message.text", "line 1, column 4");
    }
}

#[test]
fn an_empty_placeholder_is_refused_in_either_spelling() {
    let dir = tempfile::tempdir().unwrap();
    for text in ["안녕 #{} 님", "안녕 #<> 님"] {
        let campaign = campaign(
            dir.path(),
            "sms",
            "endpoint = \"sandbox\"",
            &format!("service = 3001\ncallback_no = \"0212345678\"\ntext = \"{text}\""),
        );
        refused(dir.path(), &campaign, "message.text", "line 1, column 4");
    }
}

#[test]
fn a_malformed_placeholder_in_text_file_is_refused_with_its_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("message.txt"),
        "(광고) 겨울 세일\n#{name}님 쿠폰 #<VAR1\n무료거부 080-000-0000\n",
    )
    .unwrap();
    let campaign = campaign(
        dir.path(),
        "lms",
        "endpoint = \"sandbox\"",
        "service = 3001\ncallback_no = \"0212345678\"\ntext_file = \"message.txt\"",
    );
    refused(dir.path(), &campaign, "message.text_file", "line 2, column 13");
}

#[test]
fn an_empty_message_text_is_refused_before_anything_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let campaign = campaign(
        dir.path(),
        "sms",
        "endpoint = \"sandbox\"",
        "service = 3001\ncallback_no = \"0212345678\"\ntext = \"\"",
    );
    refused(dir.path(), &campaign, "message.text", "empty");
    assert!(!dir.path().join("run").exists(), "no run was started");
}

#[test]
fn the_endpoint_table_takes_insecure_http_and_names_it_when_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let urls = "base_url = \"http://10.0.0.5/standard\", gateway_url = \"http://10.0.0.5/gateway\"";
    let message = "service = 3001\ncallback_no = \"0212345678\"\ntext = \"#{name}님 주문 #{VAR1}\"";
    let allowed = campaign(
        dir.path(),
        "sms",
        &format!("endpoint = {{ {urls}, insecure_http = true }}"),
        message,
    );
    msgbatch(dir.path(), &["validate", path_str(&allowed)]).expect_code(0, "insecure_http = true");
    let wrong_type = campaign(
        dir.path(),
        "sms",
        &format!("endpoint = {{ {urls}, insecure_http = \"yes\" }}"),
        message,
    );
    let outcome = msgbatch(dir.path(), &["validate", path_str(&wrong_type)]).expect_code(2, "insecure_http = \"yes\"");
    assert!(outcome.stderr.contains("insecure_http"), "{}", outcome.show());
    let misspelt = campaign(
        dir.path(),
        "sms",
        &format!("endpoint = {{ {urls}, insecure = true }}"),
        message,
    );
    let outcome = msgbatch(dir.path(), &["validate", path_str(&misspelt)]).expect_code(2, "insecure");
    assert!(outcome.stderr.contains("`insecure`"), "{}", outcome.show());
}
