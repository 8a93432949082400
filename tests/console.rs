//! The console over HTTP on loopback, as a browser speaks to it: the whole flow by two people against the embedded sandbox (with the report compared to `report`'s own), and each security refusal: session, CSRF, `Host`, roles, the two-person rule, the sign-in limit, upload caps, two starts at once, restarts.

mod common;

use common::console::{approved, campaign_id, location, run_status, team, until_ended, Browser, TestConsole, PASSWORD};
use msgbatch::console::store::{Role, Store};
use reqwest::multipart::{Form, Part};
use reqwest::StatusCode;
use std::time::Duration;

/// A notification campaign against the embedded sandbox, priced, with a budget.
const CAMPAIGN: &str = r##"name = "order-shipped"
kind = "alimtalk"
[message]
service = 1001
template = "ORDER_SHIPPED"
text = "#{이름}님, 주문하신 상품이 발송되었습니다. 송장번호: #{VAR1}"
callback_no = "0212345678"

[recipients]
path = "whatever-the-uploader-had.csv"
name = "name"
variables = { VAR1 = "order_no" }

[send]
chunk_size = 5
budget = 100000

"##;

/// 12 valid rows, a bad number and a missing variable: 14 rows.
fn recipients_csv() -> String {
    let mut csv = String::from("phone,name,order_no\n");
    for i in 0..12 {
        csv.push_str(&format!("010-3000-{:04},고객{i},A-{i}\n", 100 + i));
    }
    csv.push_str("02-123-4567,지점,A-90\n");
    csv.push_str("010-3000-0999,빈칸,\n");
    csv
}

fn upload_form(csrf: &str, campaign: &str, recipients: &str) -> Form {
    Form::new()
        .text("csrf", csrf.to_string())
        .text("name", "order-shipped")
        .part(
            "campaign_file",
            Part::text(campaign.to_string()).file_name("campaign.toml"),
        )
        .part(
            "recipients",
            Part::bytes(recipients.as_bytes().to_vec()).file_name("../../etc/고객 목록.csv"),
        )
}

/// An editor's new campaign, uploaded; its id.
async fn upload(editor: &mut Browser) -> String {
    editor.page("/campaigns/new").await;
    let response = editor
        .post_multipart(
            "/campaigns",
            upload_form(&editor.csrf.clone(), CAMPAIGN, &recipients_csv()),
        )
        .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "the upload makes a campaign");
    campaign_id(&location(&response))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_people_check_test_approve_start_and_download_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let id = upload(&mut team.editor).await;

    // The uploaded file is kept under a generated name, never the uploader's.
    let folder = team.console.workspace.join("campaigns").join(&id);
    let mut names: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["campaign.toml", "composed.toml", "recipients.csv"]);
    assert!(!team.console.workspace.join("etc").exists());

    // Check: the accounting, the rejected rows with their row numbers, the estimate.
    team.editor.page(&format!("/campaigns/{id}")).await;
    team.editor.post(&format!("/campaigns/{id}/check"), &[]).await;
    let (_, check) = team.editor.page(&format!("/campaigns/{id}/check")).await;
    assert!(
        check.contains("rows 14 = valid 12 + rejected 2 + duplicates 0 + suppressed 0"),
        "{check}"
    );
    assert!(
        check.contains("phone_invalid") && check.contains("variable_missing"),
        "{check}"
    );
    assert!(check.contains("₩96"), "12 notifications at ₩8: {check}");
    assert!(!check.contains("010-3000-0100"), "phones are masked on the check page");
    let rejects = team.editor.get(&format!("/campaigns/{id}/rejects.csv")).await;
    assert_eq!(rejects.status(), StatusCode::OK);
    assert_eq!(
        rejects.text().await.unwrap().lines().count(),
        3,
        "a header and the two rejected rows"
    );

    // Test send to one number: its answer is shown.
    team.editor.page(&format!("/campaigns/{id}")).await;
    let response = team
        .editor
        .post(&format!("/campaigns/{id}/test-send"), &[("numbers", "010-9999-0001")])
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let page = response.text().await.unwrap();
    assert!(page.contains("010-****-0001") && page.contains("answered"), "{page}");

    // Submit; the editor cannot approve, nor can the approver approve their own.
    team.editor.post(&format!("/campaigns/{id}/submit"), &[]).await;
    let response = team.editor.post(&format!("/campaigns/{id}/approve"), &[]).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN, "an editor cannot approve");
    team.approver.page(&format!("/campaigns/{id}")).await;
    let response = team.approver.post(&format!("/campaigns/{id}/approve"), &[]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);

    // Start asks for the estimate typed out.
    team.approver.page(&format!("/campaigns/{id}")).await;
    let response = team
        .approver
        .post(&format!("/campaigns/{id}/start"), &[("amount", "95")])
        .await;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let response = team
        .approver
        .post(&format!("/campaigns/{id}/start"), &[("amount", "₩96")])
        .await;
    assert_eq!(location(&response), format!("/campaigns/{id}/live"));
    assert_eq!(until_ended(&mut team.approver, &id).await, "done");

    // The run is an ordinary run directory: `status` reads it, and the console's report.csv is
    // the one `report` writes.
    let run_dir = team.console.workspace.join("runs").join(&id);
    let status = run_status(&run_dir).await;
    assert_eq!(
        (status.rows, status.sent, status.accepted, status.pending),
        (14, 12, 12, 0)
    );
    let mut downloaded = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while downloaded.is_empty() {
        let response = team.viewer.get(&format!("/campaigns/{id}/files/report.csv")).await;
        if response.status() == StatusCode::OK {
            downloaded = response.bytes().await.unwrap().to_vec();
        } else {
            assert!(std::time::Instant::now() < deadline, "the report is written");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let again = dir.path().join("report-again");
    msgbatch::report::write(
        &run_dir,
        Some(&again),
        &msgbatch::report::ReportOptions {
            lang: msgbatch::report::Lang::En,
            csv_bom: false,
            xlsx: msgbatch::report::Workbook::Never,
            raw_csv: msgbatch::report::RawCsv::Leave,
        },
    )
    .unwrap();
    // Ready for Korean Excel: the byte-order mark, then report's own bytes.
    assert_eq!(&downloaded[..3], b"\xEF\xBB\xBF");
    assert_eq!(&downloaded[3..], &std::fs::read(again.join("report.csv")).unwrap()[..]);

    // The results page shows summary.html inside it: framed by the console alone, with no script.
    let (_, results) = team.viewer.page(&format!("/campaigns/{id}/results")).await;
    assert!(
        results.contains(&format!("<iframe class=\"summary\" src=\"/campaigns/{id}/summary\"")),
        "{results}"
    );
    let summary = team.viewer.get(&format!("/campaigns/{id}/summary")).await;
    assert_eq!(summary.status(), StatusCode::OK);
    assert_eq!(summary.headers()["x-frame-options"], "SAMEORIGIN");
    let policy = summary.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        policy.contains("default-src 'none'") && policy.contains("frame-ancestors 'self'"),
        "{policy}"
    );
    assert_eq!(
        summary.bytes().await.unwrap(),
        std::fs::read(run_dir.join("summary.html")).unwrap()
    );
    let results = team.viewer.get(&format!("/campaigns/{id}/results")).await;
    assert_eq!(
        results.headers()["x-frame-options"],
        "DENY",
        "every other page stays unframed"
    );

    // The audit log tells who did what.
    let (_, audit) = team.admin.page("/audit").await;
    for (who, what) in [
        ("mina", "created"),
        ("mina", "checked"),
        ("mina", "test send"),
        ("mina", "submitted"),
        ("joon", "approved"),
        ("joon", "started"),
        ("vera", "downloaded"),
    ] {
        assert!(
            audit.contains(&format!("<td>{who}</td><td>{what}</td>")),
            "the audit log has {who} {what}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roles_and_the_two_person_rule_are_enforced_on_every_route() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    // A viewer cannot make a campaign.
    team.viewer.page("/campaigns").await;
    let form = upload_form(&team.viewer.csrf.clone(), CAMPAIGN, &recipients_csv());
    let response = team.viewer.post_multipart("/campaigns", form).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(std::fs::read_dir(team.console.workspace.join("campaigns"))
        .unwrap()
        .next()
        .is_none());

    let id = upload(&mut team.editor).await;
    team.editor.page(&format!("/campaigns/{id}")).await;
    team.editor.post(&format!("/campaigns/{id}/check"), &[]).await;
    team.editor.post(&format!("/campaigns/{id}/submit"), &[]).await;

    // The approver who submitted cannot approve it: make the approver the submitter.
    let own = upload(&mut team.editor).await;
    team.editor.page(&format!("/campaigns/{own}")).await;
    team.editor.post(&format!("/campaigns/{own}/check"), &[]).await;
    team.approver.page(&format!("/campaigns/{own}")).await;
    let response = team.approver.post(&format!("/campaigns/{own}/submit"), &[]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let response = team.approver.post(&format!("/campaigns/{own}/approve"), &[]).await;
    assert_eq!(
        response.status(),
        StatusCode::FORBIDDEN,
        "nobody approves what they submitted"
    );
    assert!(response.text().await.unwrap().contains("another approver"));

    // A viewer cannot approve, start, or change users; an approver cannot change users.
    team.viewer.page("/campaigns").await;
    for path in [format!("/campaigns/{id}/approve"), format!("/campaigns/{id}/check")] {
        let response = team.viewer.post(&path, &[]).await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "a viewer is refused {path}");
    }
    team.approver.page(&format!("/campaigns/{id}")).await;
    team.approver.post(&format!("/campaigns/{id}/approve"), &[]).await;
    let response = team
        .viewer
        .post(&format!("/campaigns/{id}/start"), &[("amount", "96")])
        .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN, "a viewer cannot start");
    let response = team
        .editor
        .post(&format!("/campaigns/{id}/start"), &[("amount", "96")])
        .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN, "an editor cannot start");
    let response = team.approver.post("/users", &[("name", "x"), ("role", "admin")]).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN, "an approver cannot add users");
    assert_eq!(team.viewer.get("/users").await.status(), StatusCode::FORBIDDEN);
    // Nothing was started by the refused requests.
    assert!(!team.console.workspace.join("runs").join(&id).exists());
    let _ = &team.admin;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_session_or_token_or_the_right_host_nothing_happens() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let id = upload(&mut team.editor).await;

    // No session: pages and downloads send the person to sign in.
    let mut stranger = team.console.browser();
    for path in [
        "/campaigns".to_string(),
        format!("/campaigns/{id}"),
        format!("/campaigns/{id}/rejects.csv"),
        format!("/campaigns/{id}/files/report.csv"),
        format!("/campaigns/{id}/summary"),
        format!("/campaigns/{id}/live/events"),
        "/opt-outs".to_string(),
        "/opt-outs.csv".to_string(),
        "/statement?month=2026-11".to_string(),
        "/statement/2026-11/statement.csv".to_string(),
    ] {
        let response = stranger.get(&path).await;
        assert_eq!(response.status(), StatusCode::SEE_OTHER, "{path} needs a session");
        // To sign in, then back to the page asked for.
        let next = serde_urlencoded::to_string([("next", path.as_str())]).unwrap();
        assert_eq!(location(&response), format!("/signin?{next}"));
    }

    // No CSRF token, or another session's: refused, nothing changes.
    team.editor.page(&format!("/campaigns/{id}")).await;
    let response = team.editor.post_raw(&format!("/campaigns/{id}/check"), &[]).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let other_token = team.approver.csrf.clone();
    let response = team
        .editor
        .post_raw(&format!("/campaigns/{id}/check"), &[("csrf", &other_token)])
        .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let form = upload_form("not-the-token", CAMPAIGN, &recipients_csv());
    let response = team.editor.post_multipart("/campaigns", form).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN, "an upload without the token");
    // The workspace's forms too: the opt-out list, the statement's ledger, a collection.
    for path in [
        "/opt-outs/add".to_string(),
        "/opt-outs/remove".to_string(),
        format!("/campaigns/{id}/collect"),
    ] {
        let response = team.admin.post_raw(&path, &[("numbers", "010-4000-0001")]).await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{path} without the token");
    }
    for path in ["/opt-outs/upload", "/statement"] {
        let form = Form::new()
            .text("csrf", "not-the-token")
            .part("list", Part::text("phone\n01040000001\n").file_name("l.csv"));
        let response = team.admin.post_multipart(path, form).await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{path} without the token");
    }
    let (_, opt_outs) = team.admin.page("/opt-outs").await;
    assert!(
        opt_outs.contains("<strong id=\"opt-out-count\">0</strong>"),
        "nothing was added"
    );
    let (_, page) = team.editor.page(&format!("/campaigns/{id}")).await;
    assert!(page.contains("state draft"), "still a draft: nothing was checked");
    assert_eq!(
        std::fs::read_dir(team.console.workspace.join("campaigns"))
            .unwrap()
            .count(),
        1
    );

    // Another Host (DNS rebinding): refused before anything else.
    let mut rebound = team.console.browser();
    rebound.cookie = team.editor.cookie.clone();
    rebound.host = Some("attacker.example:80".into());
    let response = rebound.get("/campaigns").await;
    assert_eq!(response.status(), StatusCode::MISDIRECTED_REQUEST);

    // Every page: the CSP, no framing, the session cookie's flags.
    let response = team.editor.get("/campaigns").await;
    let csp = response.headers()["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("default-src 'self'") && csp.contains("frame-ancestors 'none'"),
        "{csp}"
    );
    let page = response.text().await.unwrap();
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "nothing is loaded from elsewhere"
    );
    assert_eq!(team.editor.get("/assets/console.css").await.status(), StatusCode::OK);
    let mut newcomer = team.console.browser();
    let response = newcomer.sign_in("mina", PASSWORD).await;
    let cookie = response.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(cookie.starts_with("msgbatch="), "{cookie}");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );

    // The API key never reaches a page (the sample names only where it comes from).
    let (_, page) = team.editor.page(&format!("/campaigns/{id}")).await;
    assert!(!page.contains("sbx-demo-key"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_links_work_once_passwords_are_argon2id_and_guessing_is_limited() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    let console = TestConsole::start(&workspace).await;
    let link = console.first_link.clone().unwrap();
    let mut admin = console.browser();
    admin.welcome(&link).await;
    let mut again = console.browser();
    let (status, page) = again.page(&link).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "the link works once");
    assert!(page.contains("ask an administrator for a new one"), "{page}");

    // Five wrong passwords, then even the right one is refused for a while.
    let mut guesser = console.browser();
    for _ in 0..5 {
        let response = guesser.sign_in("admin", "wrong password").await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    }
    let response = guesser.sign_in("admin", PASSWORD).await;
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    console.stop().await;

    // The stored password is an argon2id hash, not the password.
    let store = Store::open(&workspace.join("console.db")).unwrap();
    let user = store.user("admin").unwrap().unwrap();
    assert_eq!(user.role, Role::Admin);
    let hash = user.password_hash.unwrap();
    assert!(hash.starts_with("$argon2id$") && !hash.contains(PASSWORD), "{hash}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_starts_at_once_start_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let id = upload(&mut team.editor).await;
    approved(&mut team, &id).await;
    team.approver.page(&format!("/campaigns/{id}")).await;
    let mut second = team.console.browser();
    second.cookie = team.approver.cookie.clone();
    second.csrf = team.approver.csrf.clone();
    let path = format!("/campaigns/{id}/start");
    let (first, other) = tokio::join!(
        team.approver.post(&path, &[("amount", "96")]),
        second.post(&path, &[("amount", "96")])
    );
    let mut statuses = [first.status(), other.status()];
    statuses.sort();
    assert_eq!(statuses, [StatusCode::SEE_OTHER, StatusCode::CONFLICT]);
    until_ended(&mut team.approver, &id).await;
    let (_, audit) = team.admin.page("/audit").await;
    assert_eq!(audit.matches("<td>started</td>").count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_after_approval_voids_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let id = upload(&mut team.editor).await;
    approved(&mut team, &id).await;
    // The recipients file changes on disk behind the console's back.
    let file = team
        .console
        .workspace
        .join("campaigns")
        .join(&id)
        .join("recipients.csv");
    std::fs::write(&file, recipients_csv() + "010-3000-0777,새 고객,A-77\n").unwrap();
    team.approver.page(&format!("/campaigns/{id}")).await;
    let response = team
        .approver
        .post(&format!("/campaigns/{id}/start"), &[("amount", "96")])
        .await;
    assert_eq!(response.status(), StatusCode::CONFLICT);
    assert!(response.text().await.unwrap().contains("draft again"));
    let (_, page) = team.approver.page(&format!("/campaigns/{id}")).await;
    assert!(page.contains("state draft"));
    assert!(
        !team.console.workspace.join("runs").join(&id).exists(),
        "nothing was sent"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_past_the_caps_are_refused_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let console = TestConsole::start_with(&dir.path().join("workspace"), |options| {
        options.max_upload = 64 * 1024;
        options.max_unpacked = 1024 * 1024;
    })
    .await;
    let mut admin = console.admin().await;
    admin.page("/campaigns/new").await;
    let big = "phone\n".to_string() + &"010-1234-5678\n".repeat(10_000);
    let response = admin
        .post_multipart("/campaigns", upload_form(&admin.csrf.clone(), CAMPAIGN, &big))
        .await;
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);

    // A small .xlsx that unpacks past the cap (a zip bomb's shape).
    let mut bomb = Vec::new();
    {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(&mut bomb));
        zip.start_file("xl/worksheets/sheet1.xml", zip::write::SimpleFileOptions::default())
            .unwrap();
        std::io::Write::write_all(&mut zip, &vec![b' '; 2 * 1024 * 1024]).unwrap();
        zip.finish().unwrap();
    }
    assert!(bomb.len() < 64 * 1024);
    let form = Form::new()
        .text("csrf", admin.csrf.clone())
        .text("name", "bomb")
        .part("campaign_file", Part::text(CAMPAIGN).file_name("campaign.toml"))
        .part("recipients", Part::bytes(bomb).file_name("list.xlsx"));
    let response = admin.post_multipart("/campaigns", form).await;
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert!(response.text().await.unwrap().contains("unpacks to 2 MB"));

    // An extension the engine does not read is refused naming the file.
    let form = Form::new()
        .text("csrf", admin.csrf.clone())
        .part("campaign_file", Part::text(CAMPAIGN).file_name("campaign.toml"))
        .part("recipients", Part::bytes(b"x".to_vec()).file_name("list.xlsb"));
    let response = admin.post_multipart("/campaigns", form).await;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(response.text().await.unwrap().contains("list.xlsb"));
    let workspace = dir.path().join("workspace");
    assert_eq!(std::fs::read_dir(workspace.join("campaigns")).unwrap().count(), 0);
    assert_eq!(
        std::fs::read_dir(workspace.join("uploads")).unwrap().count(),
        0,
        "no part left"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_sessions_campaigns_and_the_audit_log_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    let console = TestConsole::start(&workspace).await;
    let mut admin = console.admin().await;
    let link = admin.add_user("mina", "editor").await;
    let mut editor = console.browser();
    editor.welcome(&link).await;
    let id = upload(&mut editor).await;
    console.stop().await;

    let console = TestConsole::start(&workspace).await;
    assert!(
        console.first_link.is_none(),
        "a workspace with users prints no new link"
    );
    let mut editor_again = console.browser();
    editor_again.cookie = editor.cookie.clone();
    let (status, page) = editor_again.page(&format!("/campaigns/{id}")).await;
    assert_eq!(status, StatusCode::OK, "the session survived");
    assert!(page.contains("order-shipped") && page.contains("<td>mina</td><td>created</td>"));
    let response = console.browser().sign_in("mina", PASSWORD).await;
    assert_eq!(
        response.status(),
        StatusCode::SEE_OTHER,
        "the user and password survived"
    );
}

#[tokio::test]
async fn off_loopback_without_tls_or_a_proxy_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = msgbatch::console::ServeOptions::new(dir.path().join("w"));
    options.listen = "0.0.0.0:0".parse().unwrap();
    let error = msgbatch::console::prepare(&options).await.err().expect("refused");
    assert!(error.to_string().contains("without TLS"), "{error}");
    assert!(!dir.path().join("w").exists(), "refused before anything is made");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_proxy_the_cookie_is_secure_and_only_the_public_host_is_served() {
    let dir = tempfile::tempdir().unwrap();
    let console = TestConsole::start_with(&dir.path().join("w"), |options| {
        options.public_url = Some("https://send.example.com".into());
    })
    .await;
    let link = console.first_link.clone().unwrap();
    assert!(link.starts_with("https://send.example.com/welcome/"), "{link}");
    let mut admin = console.browser();
    admin.host = Some("send.example.com".into());
    let path = link.trim_start_matches("https://send.example.com");
    admin.page(path).await;
    let response = admin
        .post_raw(path, &[("password", PASSWORD), ("again", PASSWORD)])
        .await;
    let cookie = response.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(
        cookie.starts_with("__Host-msgbatch=") && cookie.contains("Secure"),
        "{cookie}"
    );
    assert!(response.headers().contains_key("strict-transport-security"));
}
