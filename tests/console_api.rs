//! The console's JSON API over HTTP on loopback, against `serve` and a sandbox as processes for the whole flow: a campaign from a CSV to its report by API alone on two people's tokens; the roles and the two-person rule refused as problem documents in the page's words; a start retried after a dropped connection sends nothing twice; tokens act with their user's role now and never on pages; every answer valid against the API's OpenAPI document.

mod common;

use common::api::{campaign_form, token_of, Api};
use common::console::{team, Browser, SMS};
use common::serve::{order_campaign, orders, write_connection};
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Write;

fn people(n: usize) -> String {
    let mut csv = String::from("phone,name\n");
    for i in 0..n {
        csv.push_str(&format!("0107400{i:04},고객{i}\n"));
    }
    csv
}

/// How many times the sandbox's ledger charged each number.
fn charges(ledger: &msgbatch::api::ledger::Ledger) -> BTreeMap<String, usize> {
    let mut charged = BTreeMap::new();
    for entry in &ledger.entries {
        if entry.kind == msgbatch::api::ledger::LedgerKind::Charge {
            *charged.entry(entry.recipient.clone()).or_insert(0) += 1;
        }
    }
    charged
}

/// Polls the run's status until it has ended.
async fn until_finished(api: &Api, id: &str) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let status = api.get(&format!("/api/v1/campaigns/{id}/status")).await;
        if status.status == StatusCode::OK && status.json["report_ready"] == true {
            return status.json;
        }
        assert!(std::time::Instant::now() < deadline, "the run ends: {}", status.json);
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Sends a request and closes the connection at once, without reading the answer.
fn send_and_hang_up(base: &str, path: &str, token: &str, key: &str, body: &str) {
    let address = base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\nIdempotency-Key: {key}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    stream.flush().unwrap();
    stream.shutdown(std::net::Shutdown::Both).unwrap();
}

/// `msgbatch serve` and `msgbatch sandbox` as processes, as a team runs them.
#[test]
fn a_campaign_goes_from_a_csv_to_its_report_by_api_alone_on_two_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    let sandbox = common::child::Sandbox::start(None);
    write_connection(&workspace, &sandbox.root_url());
    let (_process, base, link, _) = common::serve::serve_with(&workspace, &[]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (mut admin, editor, approver, viewer) = runtime.block_on(async {
        let mut admin = Browser::new(&base);
        admin
            .welcome(&link.expect("a new workspace prints a sign-in link"))
            .await;
        let mut apis = Vec::new();
        for (name, role) in [("mina", "editor"), ("joon", "approver"), ("vera", "viewer")] {
            let mut person = Browser::new(&base);
            person.welcome(&admin.add_user(name, role).await).await;
            apis.push(Api::new(&base, Some(token_of(&mut person, name).await)).await);
        }
        let viewer = apis.pop().unwrap();
        let approver = apis.pop().unwrap();
        (admin, apis.pop().unwrap(), approver, viewer)
    });

    let (id, estimate) = runtime.block_on(async {
        // Created once, though the request is sent twice with its key.
        let created = editor
            .post_form(
                "/api/v1/campaigns",
                Some("create-1"),
                campaign_form(&order_campaign(), &orders(12)),
            )
            .await;
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.json);
        let again = editor
            .post_form(
                "/api/v1/campaigns",
                Some("create-1"),
                campaign_form(&order_campaign(), &orders(12)),
            )
            .await;
        assert_eq!(again.status, StatusCode::CREATED);
        assert_eq!(again.json, created.json, "a retry gets the first answer");
        assert_eq!(again.headers["idempotent-replayed"], "true");
        let id = created.json["id"].as_str().unwrap().to_string();
        let listed = viewer.get("/api/v1/campaigns").await;
        assert_eq!(
            listed.json.as_array().unwrap().len(),
            1,
            "one campaign made: {}",
            listed.json
        );
        assert_eq!(created.json["state"], "draft");
        assert_eq!(created.json["recipients"], "people.csv");

        // A viewer reads but does not check; the editor checks.
        let refused = viewer.post(&format!("/api/v1/campaigns/{id}/check"), json!({})).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN);
        assert_eq!(refused.problem(), "refuse_role");
        let check = editor.post(&format!("/api/v1/campaigns/{id}/check"), json!({})).await;
        assert_eq!(check.status, StatusCode::OK, "{}", check.json);
        assert_eq!(check.json["check"]["passed"], true, "{}", check.json);
        assert_eq!(check.json["check"]["rows"], 12);
        assert_eq!(check.json["check"]["valid"], 12);
        assert_eq!(check.json["current"], true);
        let estimate = check.json["check"]["estimate"]
            .as_i64()
            .expect("the connection has prices");

        // Submitted by the editor; an editor cannot approve, the approver can.
        let submitted = editor
            .post_keyed(&format!("/api/v1/campaigns/{id}/submit"), "submit-1", json!({}))
            .await;
        assert_eq!(submitted.json["state"], "awaiting_approval", "{}", submitted.json);
        let refused = editor.post(&format!("/api/v1/campaigns/{id}/approve"), json!({})).await;
        assert_eq!(
            (refused.status, refused.problem().as_str()),
            (StatusCode::FORBIDDEN, "refuse_role")
        );
        let approved = approver
            .post_keyed(&format!("/api/v1/campaigns/{id}/approve"), "approve-1", json!({}))
            .await;
        assert_eq!(approved.json["state"], "approved", "{}", approved.json);
        assert_eq!(approved.json["approval"]["by"], "joon");

        // The amount is typed out, as on the page.
        let refused = approver
            .post(&format!("/api/v1/campaigns/{id}/start"), json!({ "amount": "1" }))
            .await;
        assert_eq!(
            (refused.status, refused.problem().as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, "refuse_amount")
        );

        // The start is sent and the connection dropped before its answer; the retry with the same
        // key gets the start's answer, and nothing starts twice.
        let body = json!({ "amount": format!("₩{estimate}") }).to_string();
        let path = format!("/api/v1/campaigns/{id}/start");
        send_and_hang_up(&base, &path, approver.token.as_deref().unwrap(), "start-1", &body);
        let retried = approver
            .post_keyed(&path, "start-1", serde_json::from_str(&body).unwrap())
            .await;
        assert_eq!(retried.status, StatusCode::ACCEPTED, "{}", retried.json);
        let third = approver
            .post_keyed(&path, "start-1", serde_json::from_str(&body).unwrap())
            .await;
        assert_eq!((third.status, &third.json), (StatusCode::ACCEPTED, &retried.json));
        assert_eq!(third.headers["idempotent-replayed"], "true");
        let unkeyed = approver.post(&path, serde_json::from_str(&body).unwrap()).await;
        assert_eq!(
            unkeyed.status,
            StatusCode::CONFLICT,
            "without its key a second start is refused"
        );
        assert_eq!(unkeyed.problem(), "refuse_state");

        let ended = until_finished(&viewer, &id).await;
        assert_eq!(ended["sent"], 12, "{ended}");
        assert_eq!(ended["accepted"], 12, "{ended}");
        assert_eq!(ended["uncertain"], 0, "{ended}");
        (id, estimate)
    });
    let charged = charges(&sandbox.ledger());
    assert_eq!(charged.len(), 12, "{charged:?}");
    assert!(
        charged.values().all(|times| *times == 1),
        "no number twice: {charged:?}"
    );
    assert!(sandbox.sent().repeated().is_empty());

    runtime.block_on(async {
        let (_, audit) = admin.page(&format!("/audit?campaign={id}")).await;
        assert_eq!(audit.matches(">started<").count(), 1, "one start in the audit log");

        // The report by API: one line a recipient.
        let report = viewer.get(&format!("/api/v1/campaigns/{id}/files/report.csv")).await;
        assert_eq!(report.status, StatusCode::OK);
        let text = String::from_utf8(report.bytes.clone()).unwrap();
        assert_eq!(text.lines().count(), 13, "{text}");
        assert_eq!(
            text.lines().filter(|line| line.contains(",charged,8,")).count(),
            12,
            "each recipient charged once, as the ledger says: {text}"
        );
        let total: i64 = charged.values().map(|times| *times as i64 * 8).sum();
        assert_eq!(total, estimate, "the bill is the estimate typed at the start");

        // The month's statement, the opt-out list and the audit log, by API.
        let month = (chrono::Utc::now() + chrono::Duration::hours(9))
            .format("%Y-%m")
            .to_string();
        let statement = viewer.get(&format!("/api/v1/statement/{month}/statement.csv")).await;
        assert_eq!(statement.status, StatusCode::OK);
        let statement = String::from_utf8(statement.bytes).unwrap();
        assert!(
            statement.contains(&estimate.to_string()),
            "the statement bills the run: {statement}"
        );
        let refused = viewer.get("/api/v1/opt-outs").await;
        assert_eq!(
            (refused.status, refused.problem().as_str()),
            (StatusCode::FORBIDDEN, "refuse_role")
        );
        let added = editor
            .post(
                "/api/v1/opt-outs",
                json!({ "numbers": ["010-7400-0001", "+82 10 7400 0002"] }),
            )
            .await;
        assert_eq!(
            added.json["numbers"],
            json!(["01074000001", "01074000002"]),
            "{}",
            added.json
        );
        let refused = editor
            .post("/api/v1/opt-outs/remove", json!({ "numbers": ["01074000001"] }))
            .await;
        assert_eq!(refused.problem(), "refuse_role", "taking a number off is an approver's");
        let removed = approver
            .post("/api/v1/opt-outs/remove", json!({ "numbers": ["01074000001"] }))
            .await;
        assert_eq!(removed.json["count"], 1);
        let refused = editor
            .post("/api/v1/opt-outs", json!({ "numbers": ["02-123-4567"] }))
            .await;
        assert_eq!(refused.problem(), "refuse_not_mobile");
        let audit = viewer.get(&format!("/api/v1/audit?campaign={id}")).await;
        let actions: Vec<&str> = audit
            .json
            .as_array()
            .unwrap()
            .iter()
            .map(|entry| entry["action"].as_str().unwrap())
            .collect();
        for step in ["created", "checked", "submitted", "approved", "started"] {
            assert_eq!(
                actions.iter().filter(|action| **action == step).count(),
                1,
                "{step} once: {actions:?}"
            );
        }
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_are_problems_with_stable_types_in_the_pages_words_and_tokens_act_with_their_users_role_now() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let base = team.console.base.clone();
    let approver_token = token_of(&mut team.approver, "ops").await;
    let editor_token = token_of(&mut team.editor, "crm").await;
    let approver = Api::new(&base, Some(approver_token.clone())).await;
    let editor = Api::new(&base, Some(editor_token.clone())).await;

    // The two-person rule: an approver cannot approve what they made and submitted.
    let created = approver
        .post_form("/api/v1/campaigns", None, campaign_form(SMS, &people(3)))
        .await;
    let id = created.json["id"].as_str().unwrap().to_string();
    // Not checked yet: the state refuses the submit.
    let refused = approver
        .post(&format!("/api/v1/campaigns/{id}/submit"), json!({}))
        .await;
    assert_eq!(
        (refused.status, refused.problem().as_str()),
        (StatusCode::CONFLICT, "refuse_state")
    );
    approver.post(&format!("/api/v1/campaigns/{id}/check"), json!({})).await;
    approver
        .post(&format!("/api/v1/campaigns/{id}/submit"), json!({}))
        .await;
    let refused = approver
        .post(&format!("/api/v1/campaigns/{id}/approve"), json!({}))
        .await;
    assert_eq!(
        (refused.status, refused.problem().as_str()),
        (StatusCode::FORBIDDEN, "refuse_own_approval")
    );
    // In the words the page says it, in the request's language.
    let mut korean = approver.clone();
    korean.language = Some("ko-KR,ko;q=0.9");
    let refused = korean.post(&format!("/api/v1/campaigns/{id}/approve"), json!({})).await;
    assert_eq!(refused.problem(), "refuse_own_approval");
    assert_eq!(
        refused.json["detail"],
        "자기 캠페인은 승인할 수 없습니다: 다른 승인자가 승인해야 합니다"
    );
    team.approver.page(&format!("/campaigns/{id}")).await;
    let page = team.approver.post(&format!("/campaigns/{id}/approve"), &[]).await;
    let page = common::console::html_unescape(&page.text().await.unwrap());
    assert!(
        page.contains("nobody approves their own campaign: another approver must approve it"),
        "the page says the same: {page}"
    );

    // An editor's settings that name an endpoint are refused on their field.
    let sneaky = SMS.replace(
        "kind = \"sms\"\n",
        "kind = \"sms\"\nendpoint = \"http://127.0.0.1:9/\"\n",
    );
    let refused = editor
        .post_form("/api/v1/campaigns", None, campaign_form(&sneaky, &people(2)))
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", refused.json);
    assert_eq!(refused.problem(), "field");
    assert_eq!(refused.json["field"], "campaign_file");

    // An edit by API: a new recipients file voids the check; what is left out (the settings) stays;
    // settings that name an endpoint are refused on their field and change nothing.
    let draft = editor
        .post_form("/api/v1/campaigns", None, campaign_form(SMS, &people(2)))
        .await;
    let draft = draft.json["id"].as_str().unwrap().to_string();
    let checked = editor
        .post(&format!("/api/v1/campaigns/{draft}/check"), json!({}))
        .await;
    assert_eq!(checked.json["check"]["valid"], 2);
    let form = reqwest::multipart::Form::new().part(
        "recipients",
        reqwest::multipart::Part::text(people(5)).file_name("more.csv"),
    );
    let edited = editor
        .post_form(&format!("/api/v1/campaigns/{draft}/edit"), Some("edit-1"), form)
        .await;
    assert_eq!(edited.status, StatusCode::OK, "{}", edited.json);
    assert_eq!(
        (edited.json["state"].as_str(), edited.json["recipients"].as_str()),
        (Some("draft"), Some("more.csv"))
    );
    assert!(edited.json["check"].is_null(), "the change voids the check");
    let checked = editor
        .post(&format!("/api/v1/campaigns/{draft}/check"), json!({}))
        .await;
    assert_eq!(
        checked.json["check"]["valid"], 5,
        "the settings stayed, the new file is read"
    );
    let form = reqwest::multipart::Form::new().text("settings", sneaky.clone());
    let refused = editor
        .post_form(&format!("/api/v1/campaigns/{draft}/edit"), None, form)
        .await;
    assert_eq!(
        (refused.status, refused.problem().as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, "field")
    );
    assert_eq!(refused.json["field"], "settings");
    let kept = editor.get(&format!("/api/v1/campaigns/{draft}")).await;
    assert_eq!(kept.json["check"]["valid"], 5, "a refused edit changes nothing");

    // A key given again for another request is refused.
    editor
        .post_keyed(&format!("/api/v1/campaigns/{id}/check"), "k-1", json!({}))
        .await;
    let first = editor
        .post_keyed(&format!("/api/v1/campaigns/{id}/submit"), "k-2", json!({}))
        .await;
    let reused = editor
        .post_keyed(&format!("/api/v1/campaigns/{id}/approve"), "k-2", json!({}))
        .await;
    assert_ne!(first.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        (reused.status, reused.problem().as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, "refuse_idempotency_reused")
    );

    // Unknown campaign, unknown path, no token, a wrong token.
    let missing = editor.get("/api/v1/campaigns/nosuch").await;
    assert_eq!(
        (missing.status, missing.problem().as_str()),
        (StatusCode::NOT_FOUND, "not_found")
    );
    let anonymous = editor.with_token(None);
    let refused = anonymous.get("/api/v1/campaigns").await;
    assert_eq!(
        (refused.status, refused.problem().as_str()),
        (StatusCode::UNAUTHORIZED, "unauthorized")
    );
    assert_eq!(refused.headers["www-authenticate"], "Bearer");
    let lower_case = reqwest::Client::new()
        .get(format!("{base}/api/v1/campaigns"))
        .header("Authorization", format!("bearer {editor_token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(lower_case.status(), StatusCode::OK, "the scheme's name in any case");
    let forged = editor.with_token(Some(format!("msgbatch_{}", "0".repeat(64))));
    assert_eq!(forged.get("/api/v1/campaigns").await.status, StatusCode::UNAUTHORIZED);

    // No cookie acts on the API, and no token on a page.
    let cookie = team.editor.cookie.clone().unwrap();
    let response = reqwest::Client::new()
        .get(format!("{base}/api/v1/campaigns"))
        .header("Cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.status(),
        StatusCode::UNAUTHORIZED,
        "a session cookie is not a token"
    );
    let response = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(format!("{base}/campaigns"))
        .bearer_auth(&editor_token)
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.status(),
        StatusCode::SEE_OTHER,
        "a page asks for a sign-in, token or not"
    );

    // A token acts with its user's role at the time of use: the editor demoted to viewer.
    team.admin.page("/users").await;
    let response = team.admin.post("/users/mina", &[("role", "viewer")]).await;
    assert!(response.status().is_success() || response.status().is_redirection());
    let refused = editor.post(&format!("/api/v1/campaigns/{id}/check"), json!({})).await;
    assert_eq!(
        (refused.status, refused.problem().as_str()),
        (StatusCode::FORBIDDEN, "refuse_role")
    );
    assert_eq!(
        editor.get("/api/v1/campaigns").await.status,
        StatusCode::OK,
        "a viewer still reads"
    );

    // Revoked by an administrator: refused from then on; the audit log has both.
    let (_, users) = team.admin.page("/users").await;
    let token_id = common::console::between(&users, "crm <small>(", ")").unwrap();
    let response = team
        .admin
        .post(&format!("/account/tokens/{token_id}/revoke"), &[])
        .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(editor.get("/api/v1/campaigns").await.status, StatusCode::UNAUTHORIZED);
    let (_, audit) = team.admin.page("/audit").await;
    assert!(audit.contains("made an API token"), "{audit}");
    assert!(audit.contains("revoked an API token"), "{audit}");
    assert!(audit.contains("signed in with an API token"), "{audit}");
    assert!(!audit.contains(&editor_token[9..]), "no token text in the audit log");
    // Kept as its digest only: its text is nowhere in the workspace.
    let stored = common::console::files_holding(&team.console.workspace, &[approver_token[9..].to_string()]);
    assert!(stored.is_empty(), "{stored:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_probes_answer_and_the_document_is_openapi_3_1() {
    let dir = tempfile::tempdir().unwrap();
    let team = team(dir.path()).await;
    let client = reqwest::Client::new();
    let base = &team.console.base;
    let health = client.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    let ready = client.get(format!("{base}/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), StatusCode::OK);
    let document = Api::new(base, None).await.document;
    assert!(document["openapi"].as_str().unwrap().starts_with("3.1"));
    assert_eq!(document["components"]["securitySchemes"]["token"]["scheme"], "bearer");
    for operation in ["/api/v1/campaigns/{id}/start", "/api/v1/campaigns/{id}/approve"] {
        let parameters = document["paths"][operation]["post"]["parameters"].to_string();
        assert!(parameters.contains("Idempotency-Key"), "{operation}: {parameters}");
    }
    // The workspace's uploads folder replaced by a file: not ready.
    let uploads = team.console.workspace.join("uploads");
    std::fs::remove_dir_all(&uploads).unwrap();
    std::fs::write(&uploads, "").unwrap();
    let ready = client.get(format!("{base}/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), StatusCode::SERVICE_UNAVAILABLE);
}
