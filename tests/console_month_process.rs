//! The month's limit under load, with `msgbatch serve` as a process and a sandbox process that drops connections and answers 429 and 503: three campaigns started at once, each sending eight requests at a time, together never make the sandbox's ledger pass the month's limit; the console killed with SIGKILL and started again rebuilds the month from the runs' checkpoints to the same figures.

mod common;

use common::child::Sandbox;
use common::console::{between, campaign_id, location, Browser};
use common::serve::{serve, write_connection};
use msgbatch::api::ledger::LedgerKind;
use msgbatch::sandbox::accounts::FaultConfig;
use reqwest::multipart::{Form, Part};
use reqwest::StatusCode;
use std::time::{Duration, Instant};

const RECIPIENTS: usize = 150;
/// ₩8 a notification: each campaign's estimate is ₩1,200; the three together ₩3,600.
const LIMIT: i64 = 2_000;

fn campaign_toml(name: &str) -> String {
    format!(
        r##"name = "{name}"
kind = "alimtalk"
connection = "process"

[message]
service = 1001
template = "ORDER_SHIPPED"
text = "#{{이름}}님, 주문하신 상품이 발송되었습니다. 송장번호: #{{VAR1}}"
callback_no = "0212345678"

[recipients]
path = "x.csv"
name = "name"
variables = {{ VAR1 = "order_no" }}

[send]
chunk_size = 4
concurrency = 8
max_attempts = 8
"##
    )
}

fn recipients(campaign: usize) -> String {
    let mut csv = String::from("phone,name,order_no\n");
    for i in 0..RECIPIENTS {
        csv.push_str(&format!("010{:08},고객{i},A-{i}\n", 50_000_000 + campaign * 1_000 + i));
    }
    csv
}

/// The month's figures as the campaigns page shows them: limit, charged, reserved, left.
async fn month(browser: &mut Browser) -> Vec<String> {
    let (_, page) = browser.page("/campaigns").await;
    ["month-limit", "month-charged", "month-reserved", "month-left"]
        .iter()
        .map(|id| between(&page, &format!("id=\"{id}\">"), "</dd>").unwrap_or_else(|| panic!("{id}: {page}")))
        .collect()
}

/// What the sandbox's ledger holds: charges less refunds.
fn billed(sandbox: &Sandbox) -> i64 {
    sandbox
        .ledger()
        .entries
        .iter()
        .map(|entry| match entry.kind {
            LedgerKind::Charge => entry.amount,
            LedgerKind::Refund => -entry.amount,
        })
        .sum()
}

#[test]
fn three_campaigns_at_once_under_faults_stay_within_the_month_and_a_killed_console_rebuilds_it() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    let sandbox = Sandbox::start(None);
    write_connection(&workspace, &sandbox.root_url());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (process, base, link, _) = serve(&workspace);
    let mut admin = Browser::new(&base);
    let ids: Vec<String> = runtime.block_on(async {
        admin
            .welcome(&link.expect("a new workspace prints a sign-in link"))
            .await;
        admin.page("/month").await;
        let response = admin
            .post(
                "/month",
                &[("limit", &LIMIT.to_string()), ("thresholds", "70, 90, 100")],
            )
            .await;
        assert_eq!(response.status(), StatusCode::SEE_OTHER);
        // Three campaigns, each within what is left when it is approved.
        let mut ids = Vec::new();
        for campaign in 0..3 {
            admin.page("/campaigns/new").await;
            let form = Form::new()
                .text("csrf", admin.csrf.clone())
                .text("name", format!("month-{campaign}"))
                .part(
                    "campaign_file",
                    Part::text(campaign_toml(&format!("month-{campaign}"))).file_name("c.toml"),
                )
                .part("recipients", Part::text(recipients(campaign)).file_name("list.csv"));
            let id = campaign_id(&location(&admin.post_multipart("/campaigns", form).await));
            admin.page(&format!("/campaigns/{id}")).await;
            admin.post(&format!("/campaigns/{id}/check"), &[]).await;
            admin.post(&format!("/campaigns/{id}/submit"), &[]).await;
            let response = admin.post(&format!("/campaigns/{id}/approve"), &[]).await;
            assert_eq!(response.status(), StatusCode::SEE_OTHER, "₩1,200 fits in ₩2,000");
            ids.push(id);
        }
        ids
    });
    sandbox.set_faults(FaultConfig {
        drop_share: 0.1,
        rate_limited_share: 0.1,
        unavailable_share: 0.1,
        retry_after_secs: 0,
        latency_ms: 5,
        ..FaultConfig::default()
    });
    // Started at once, from three connections.
    runtime.block_on(async {
        let amount = (RECIPIENTS * 8).to_string();
        let mut starts = Vec::new();
        for id in &ids {
            let mut browser = Browser::new(&base);
            browser.cookie = admin.cookie.clone();
            browser.page(&format!("/campaigns/{id}")).await;
            let (id, amount) = (id.clone(), amount.clone());
            starts.push(tokio::spawn(async move {
                browser
                    .post(&format!("/campaigns/{id}/start"), &[("amount", amount.as_str())])
                    .await
                    .status()
            }));
        }
        for start in starts {
            assert_eq!(
                start.await.unwrap(),
                StatusCode::SEE_OTHER,
                "each starts: within what is left then"
            );
        }
        let deadline = Instant::now() + Duration::from_secs(120);
        for id in &ids {
            loop {
                let (_, page) = admin.page(&format!("/campaigns/{id}")).await;
                let state = between(&page, "<span class=\"state ", "\"").unwrap_or_default();
                if ["done", "incomplete", "failed"].contains(&state.as_str()) {
                    break;
                }
                assert!(Instant::now() < deadline, "the runs end: {state}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    });
    let billed = billed(&sandbox);
    assert!(
        billed <= LIMIT,
        "the sandbox billed ₩{billed}, over the month's ₩{LIMIT}"
    );
    assert!(
        billed > LIMIT / 2,
        "the runs went on until the month was nearly spent: ₩{billed}"
    );
    let sent = sandbox.sent();
    assert!(sent.repeated().is_empty(), "no number twice: {:?}", sent.repeated());
    let before = runtime.block_on(month(&mut admin));
    println!("the sandbox billed ₩{billed}; the month: {before:?}");
    let charged: i64 = before[1].trim_start_matches('₩').replace(',', "").parse().unwrap();
    let reserved: i64 = before[2].trim_start_matches('₩').replace(',', "").parse().unwrap();
    assert!(charged + reserved <= LIMIT, "{before:?}");
    assert!(
        billed <= charged + reserved,
        "what the console counts covers the bill: {before:?}, ₩{billed}"
    );

    // Killed and started again: the month is rebuilt from the runs' checkpoints.
    process.kill();
    let (_process, base, _, _) = serve(&workspace);
    let mut again = Browser::new(&base);
    again.cookie = admin.cookie.clone();
    assert_eq!(runtime.block_on(month(&mut again)), before, "rebuilt equal");
}
