//! The campaign file through the `msgbatch` binary: `#<…>` placeholders sent in the service's spelling, and `insecure_http` in the endpoint table.

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
