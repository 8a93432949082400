//! `/metrics` over HTTP: scraped while a campaign sends and after, its figures equal the run's status at the end (recipients, won charged, the month, campaigns by state, requests to the service, the console's own requests); only a token with the metrics scope reads it on the console's address; `--metrics-listen` serves it alone, and `--log-format json` writes the server's log as JSON lines, phone numbers masked.

mod common;

use common::api::{metrics_token_of, token_of, Api};
use common::console::{connect_to, run_status, slow, team, SMS};
use reqwest::StatusCode;

/// A sample's value: the line `NAME{LABELS} VALUE`.
fn sample(text: &str, name_and_labels: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(name_and_labels)?.strip_prefix(' '))
        .map(|value| value.trim().parse().unwrap())
}

async fn scrape(base: &str, token: &str) -> String {
    let response = reqwest::Client::new()
        .get(format!("{base}/metrics"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    response.text().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_scraped_during_a_run_end_equal_to_its_status() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let sandbox = common::TestSandbox::demo().await;
    connect_to(&team.console.workspace, &sandbox, dir.path());
    let base = team.console.base.clone();
    let monitoring = metrics_token_of(&mut team.admin, "prometheus").await;
    let plain = token_of(&mut team.viewer, "no scope").await;
    let editor = Api::new(&base, Some(token_of(&mut team.editor, "crm").await)).await;
    let approver = Api::new(&base, Some(token_of(&mut team.approver, "ops").await)).await;

    // Only a token with the scope reads it.
    let refused = reqwest::Client::new()
        .get(format!("{base}/metrics"))
        .bearer_auth(&plain)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    let refused: serde_json::Value = refused.json().await.unwrap();
    assert_eq!(refused["type"], "urn:msgbatch:problem:refuse_metrics_scope");
    let anonymous = reqwest::Client::new()
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);

    let mut csv = String::from("phone,name\n");
    for i in 0..40 {
        csv.push_str(&format!("0107500{i:04},고객{i}\n"));
    }
    // One request in five answered 429: each is counted under its status, and tried again.
    let client = sandbox.client();
    sandbox
        .admin(&client)
        .set_faults(&msgbatch::api::faults::FaultConfig {
            rate_limited_share: 0.2,
            ..Default::default()
        })
        .await
        .unwrap();
    let id = common::api::started(&editor, &approver, &slow(SMS), &csv).await;

    // Scraped while it sends: the counts only grow, and never pass the recipients.
    let accepted = format!("msgbatch_run_recipients{{campaign=\"{id}\",outcome=\"accepted\"}}");
    let mut scrapes = 0;
    let mut last = 0.0;
    loop {
        let text = scrape(&base, &monitoring).await;
        scrapes += 1;
        let now = sample(&text, &accepted).unwrap_or(0.0);
        assert!(now >= last && now <= 40.0, "{last} then {now}");
        last = now;
        let status = approver.get(&format!("/api/v1/campaigns/{id}/status")).await;
        if status.json["phase"] == "finished" && status.json["state"] != "sending" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(scrapes > 1, "scraped during the run");

    let status = run_status(&team.console.workspace.join("runs").join(&id)).await;
    let text = scrape(&base, &monitoring).await;
    let figure = |labels: &str| sample(&text, labels).unwrap_or_else(|| panic!("{labels} in\n{text}"));
    for (outcome, count) in [
        ("sent", status.sent),
        ("accepted", status.accepted),
        ("not_accepted", status.not_accepted),
        ("uncertain", status.uncertain),
    ] {
        assert_eq!(
            figure(&format!(
                "msgbatch_run_recipients{{campaign=\"{id}\",outcome=\"{outcome}\"}}"
            )),
            count as f64,
            "{outcome}"
        );
    }
    assert_eq!(status.accepted, 40);
    let charged = status.budget.as_ref().unwrap().charged;
    assert_eq!(
        figure(&format!("msgbatch_run_won{{campaign=\"{id}\",kind=\"charged\"}}")),
        charged as f64
    );
    assert_eq!(
        figure(&format!("msgbatch_run_won{{campaign=\"{id}\",kind=\"reserved\"}}")),
        0.0
    );
    let month = (chrono::Utc::now() + chrono::Duration::hours(9))
        .format("%Y-%m")
        .to_string();
    assert_eq!(
        figure(&format!("msgbatch_month_won{{month=\"{month}\",kind=\"charged\"}}")),
        charged as f64
    );
    assert_eq!(figure("msgbatch_campaigns{state=\"done\"}"), 1.0);
    assert_eq!(figure("msgbatch_campaigns{state=\"sending\"}"), 0.0);
    // The requests to the service: one a chunk (of one recipient, in the slow settings), each
    // answered 200.
    let sms = figure("msgbatch_service_requests_total{endpoint=\"/sms\",status=\"200\"}");
    assert_eq!(sms, status.sent as f64);
    let limited = figure("msgbatch_service_requests_total{endpoint=\"/sms\",status=\"429\"}");
    assert!(limited >= 1.0, "the sandbox answered 429");
    assert_eq!(
        ((sms + limited) / 5.0).floor(),
        limited,
        "one request in five was answered 429, as the sandbox spreads them"
    );
    assert_eq!(
        figure("msgbatch_service_retries_total"),
        limited,
        "each 429 tried again"
    );
    assert_eq!(
        figure("msgbatch_service_request_seconds_count{endpoint=\"/sms\"}"),
        sms + limited,
        "each request timed"
    );
    assert!(
        figure(
            "msgbatch_console_requests_total{route=\"/api/v1/campaigns/{id}/status\",method=\"GET\",status=\"200\"}"
        ) >= scrapes as f64,
        "the console counts its requests by route"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_listen_serves_metrics_alone_and_the_log_is_json_with_numbers_masked() {
    let dir = tempfile::tempdir().unwrap();
    // A folder whose name looks like a phone number: the log names it, masked.
    let workspace = dir.path().join("team-01098765432");
    let (process, base, _, said) =
        common::serve::serve_with(&workspace, &["--log-format", "json", "--metrics-listen", "127.0.0.1:0"]);
    let metrics = said
        .lines()
        .find_map(|line| line.strip_prefix("metrics: "))
        .unwrap_or_else(|| panic!("{said}"))
        .to_string();
    let text = reqwest::get(&metrics).await.unwrap().text().await.unwrap();
    assert!(text.contains("# TYPE msgbatch_campaigns gauge"), "{text}");
    assert!(text.ends_with("# EOF\n"), "{text}");
    // Nothing else there.
    let page = reqwest::get(metrics.replace("/metrics", "/campaigns")).await.unwrap();
    assert_eq!(page.status(), StatusCode::NOT_FOUND);

    // The workspace's uploads folder replaced by a file (even root cannot write in it): /readyz
    // says so, and the log has one JSON line for it.
    let uploads = workspace.join("uploads");
    std::fs::remove_dir_all(&uploads).unwrap();
    std::fs::write(&uploads, "").unwrap();
    let ready = reqwest::get(format!("{base}/readyz")).await.unwrap();
    assert_eq!(ready.status(), StatusCode::SERVICE_UNAVAILABLE);
    let healthy = reqwest::get(format!("{base}/healthz")).await.unwrap();
    assert_eq!(healthy.status(), StatusCode::OK, "the process still answers");
    let finished = process.kill();
    let line = finished
        .stderr
        .lines()
        .find(|line| line.contains("not ready"))
        .unwrap_or_else(|| panic!("{}", finished.stderr));
    let event: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}"));
    assert_eq!(event["level"], "WARN", "{line}");
    assert!(
        !line.contains("01098765432") && line.contains("010-****-5432"),
        "{line}"
    );
}
