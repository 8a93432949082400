//! What the admin paths and the result lookups answer after a mix of every kind of send, pinned byte for byte against a golden file, so a change of storage cannot change an answer.

use super::*;
use crate::api::gateway::GatewayAlimTalkRequest;
use crate::api::standard::{AlimTalkRequest, BrandRequest, TextMessageRequest};
use crate::sandbox::faults::ListingFaults;
use crate::text::TextLane;
use serde_json::json;
use std::collections::HashMap;

const GOLDEN: &str = include_str!("golden_admin_views.txt");
const GOLDEN_PATH: &str = "src/sandbox/state/golden_admin_views.txt";

fn request<T: serde::de::DeserializeOwned>(body: serde_json::Value) -> T {
    serde_json::from_value(body).expect("a valid request body")
}

fn demo_group(state: &SandboxState) -> GroupRef {
    let credentials = Credentials {
        api_key: Some("sbx-demo-key"),
        group_header: Some("demo"),
        group_body: None,
    };
    state.authenticate(&credentials, true).expect("demo credentials")
}

/// One request of each send endpoint, over numbers that trigger every outcome rule, invalid
/// numbers, spellings that normalise, and recipients sent twice: their answers, and the gateway's
/// send groups.
fn send_everything(state: &mut SandboxState, group: GroupRef) -> (Vec<String>, Vec<String>) {
    let mut answers = Vec::new();
    let sms: TextMessageRequest = request(json!({
        "service": 3001, "groupId": "demo", "callbackNo": "02-1234-5678",
        "message": "#{name}님 쿠폰 #{VAR1}",
        "numbers": ["01011112201", "+82 10-1111-2202", "01011112296", "not-a-number", "01011112201", "010111122"],
        "mapping": [{"name": "김", "VAR1": "A"}, {"name": "이", "VAR1": "B"}, {"name": "박", "VAR1": "C"},
                    {"name": "최", "VAR1": "D"}, {"name": "정"}, {"name": "강", "VAR1": "F"}]
    }));
    answers.push(to_json(
        &state.text_message(group, TextLane::Sms, &sms).expect("sms accepted"),
    ));
    let lms: TextMessageRequest = request(json!({
        "service": 3001, "groupId": "demo", "callbackNo": "0212345678", "subject": "제목",
        "message": "긴 본문 ".repeat(20), "numbers": ["01011112203", "011-222-3344"]
    }));
    answers.push(to_json(
        &state.text_message(group, TextLane::Lms, &lms).expect("lms accepted"),
    ));
    let alimtalk: AlimTalkRequest = request(json!({
        "service": 1001, "template": "ORDER_SHIPPED", "groupId": "demo", "alter": true,
        "callbackNo": "0212345678",
        "message": "#{이름}님, 주문하신 상품이 발송되었습니다. 송장번호: #{VAR1}",
        "numbers": [{"key": 1, "hp": "01011112204", "name": "김", "VAR1": "T1"},
                    {"key": 2, "hp": "01011112291", "name": "이", "VAR1": "T2"},
                    {"key": 3, "hp": "01011112205", "name": "박"},
                    {"key": 4, "hp": "bad", "name": "최", "VAR1": "T4"}]
    }));
    answers.push(to_json(&state.alimtalk(group, &alimtalk).expect("alimtalk accepted")));
    let brand: BrandRequest = request(json!({
        "service": 2001, "chatBubbleType": "TEXT", "groupId": "demo", "alter": true,
        "callbackNo": "01000001234", "message": "(광고) #{name}님 세일", "alterMessage": "(광고) 세일 문자",
        "numbers": [{"key": 1, "hp": "01011112206", "name": "김"},
                    {"key": 2, "hp": "01011112292", "name": "이"},
                    {"key": 3, "hp": "01011112291", "name": "박"}]
    }));
    answers.push(to_json(&state.brand(group, &brand).expect("brand accepted")));
    let mut send_groups = Vec::new();
    for alter in [true, false] {
        let gateway: GatewayAlimTalkRequest = request(json!({
            "groupId": "demo", "service": "0f1e2d3c4b5a69788796a5b4c3d2e1f001234567",
            "template": "ORDER_SHIPPED", "alter": alter, "alterMessage": "#{이름}님 발송 문자",
            "message": "#{이름}님, 주문하신 상품이 발송되었습니다. 송장번호: #{VAR1}",
            "numbers": [{"hp": "01011112207", "name": "김", "VAR1": "G1"},
                        {"hp": "010-1111-2293", "name": "이", "VAR1": "G2"},
                        {"hp": "01011112294", "name": "박", "VAR1": "G3"},
                        {"hp": "01011112295", "name": "최", "VAR1": "G4"},
                        {"hp": "01011112208", "name": "정"},
                        {"hp": "12#34", "name": "강", "VAR1": "G6"},
                        {"hp": "+82 10 1111 2209", "name": "윤", "VAR1": "G7"}]
        }));
        let accepted = state.gateway_send(group, &gateway).expect("gateway accepted");
        answers.push(to_json(&accepted));
        send_groups.push(accepted.send_group_id);
    }
    (answers, send_groups)
}

fn to_json(answer: &impl serde::Serialize) -> String {
    serde_json::to_string(answer).expect("serialises")
}

/// Every answer the views give, in order, one per line.
fn admin_views(state: &mut SandboxState, group: GroupRef, send_groups: &[String]) -> Vec<String> {
    let mut lines = vec![
        String::from_utf8(state.ledger_json(group)).expect("UTF-8"),
        String::from_utf8(state.sent_json(group)).expect("UTF-8"),
    ];
    for send_group in send_groups {
        let mut last_key: Option<String> = None;
        loop {
            let page = state
                .result_page(
                    group,
                    send_group,
                    Some("2"),
                    last_key.as_deref(),
                    ListingFaults {
                        hidden_share: 0.0,
                        repeats_last_key: false,
                    },
                )
                .expect("listing");
            lines.push(to_json(&page));
            for item in &page.items {
                let record = state.result(group, &item.id).expect("single lookup");
                lines.push(to_json(&record));
            }
            match page.last_key {
                Some(key) => last_key = Some(key),
                None => break,
            }
        }
    }
    lines
}

/// Dates become 0, datetimes `<datetime>` and each UUID its order of first appearance: the only
/// parts that differ run to run.
fn canonical(lines: &[String]) -> String {
    let mut uuids: HashMap<String, usize> = HashMap::new();
    let mut out = String::new();
    for line in lines {
        let mut rest = line.as_str();
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix("\"date\":") {
                out.push_str("\"date\":0");
                rest = after.trim_start_matches(|c: char| c.is_ascii_digit());
                continue;
            }
            if let Some(after) = rest.strip_prefix("\"datetime\":\"") {
                out.push_str("\"datetime\":\"<datetime>\"");
                rest = after.split_once('"').map_or("", |(_, tail)| tail);
                continue;
            }
            let candidate = rest
                .get(..36)
                .filter(|s| uuid::Uuid::try_parse(s).is_ok() && s.contains('-'));
            if let Some(id) = candidate {
                let next = uuids.len();
                let number = *uuids.entry(id.to_string()).or_insert(next);
                out.push_str(&format!("<uuid {number}>"));
                rest = &rest[36..];
                continue;
            }
            let c = rest.chars().next().expect("not empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
        out.push('\n');
    }
    out
}

fn views_after_everything(settle_after: &str) -> String {
    let mut accounts = Accounts::demo();
    accounts.settle_after = settle_after.into();
    let mut state = SandboxState::new(&accounts);
    let group = demo_group(&state);
    let (mut lines, send_groups) = send_everything(&mut state, group);
    lines.extend(admin_views(&mut state, group, &send_groups));
    canonical(&lines)
}

#[test]
fn admin_views_and_result_lookups_answer_as_pinned() {
    let views = format!(
        "# settle_after 300s: gateway records still pending\n{}# settle_after 0s: settled at once\n{}",
        views_after_everything("300s"),
        views_after_everything("0s")
    );
    if std::env::var_os("MSGBATCH_BLESS").is_some() {
        std::fs::write(GOLDEN_PATH, &views).expect("golden file written");
    }
    assert!(views == GOLDEN, "admin views differ from {GOLDEN_PATH}:\n{views}");
}
