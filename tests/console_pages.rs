//! The console's workspace pages over HTTP on loopback: the opt-out list (applied to advertising campaigns on top of their suppression file, an approval voided when it changes, roles), the monthly statement, and a gateway run's collection.

mod common;

use common::console::{
    approved, between, campaign_id, html_unescape, location, run_status, team, team_with, until_ended, Browser,
    NOTIFICATION,
};
use common::process::SandboxProcess;
use reqwest::multipart::{Form, Part};
use reqwest::StatusCode;

/// Six people, 010-4000-0001 to 0006, with an order number each.
fn people_csv() -> String {
    let mut csv = String::from("phone,name,order\n");
    for i in 1..=6 {
        csv.push_str(&format!("0104000000{i},고객{i},A-{i}\n"));
    }
    csv
}

async fn new_campaign(editor: &mut Browser, settings: &str, name: &str) -> String {
    editor.page("/campaigns/new").await;
    let form = Form::new()
        .text("csrf", editor.csrf.clone())
        .text("name", name.to_string())
        .part(
            "campaign_file",
            Part::text(settings.to_string()).file_name("campaign.toml"),
        )
        .part("recipients", Part::text(people_csv()).file_name("people.csv"));
    let response = editor.post_multipart("/campaigns", form).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "the upload makes a campaign");
    campaign_id(&location(&response))
}

/// The count the opt-out page shows.
async fn listed(browser: &mut Browser) -> usize {
    let (status, page) = browser.page("/opt-outs").await;
    assert_eq!(status, StatusCode::OK);
    between(&page, "<strong id=\"opt-out-count\">", "<")
        .unwrap()
        .parse()
        .unwrap()
}

async fn state_of(browser: &mut Browser, id: &str) -> String {
    let (_, page) = browser.page(&format!("/campaigns/{id}")).await;
    between(&page, "<span class=\"state ", "\"").unwrap_or_default()
}

async fn opted_out_line(browser: &mut Browser, id: &str) -> String {
    let (_, check) = browser.page(&format!("/campaigns/{id}/check")).await;
    between(&check, "<p id=\"opted-out\">", "</p>").unwrap_or_else(|| panic!("no opt-out line: {check}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_opt_out_list_keeps_advertising_from_its_numbers_and_voids_an_approval_when_it_grows() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;

    // Typed numbers, any spelling; a line that is not a mobile number refuses the whole form.
    team.editor.page("/opt-outs").await;
    let response = team
        .editor
        .post("/opt-outs/add", &[("numbers", "010-4000-0001\n+82 10 4000 0002\n")])
        .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let response = team
        .editor
        .post("/opt-outs/add", &[("numbers", "010-4000-0005\nhello")])
        .await;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        response.text().await.unwrap().contains("hello"),
        "the refused item is named"
    );
    assert_eq!(
        listed(&mut team.viewer).await,
        2,
        "nothing of the refused form was added"
    );

    // Roles: a viewer adds nothing and downloads nothing; an editor cannot take a number off.
    team.viewer.page("/opt-outs").await;
    let response = team.viewer.post("/opt-outs/add", &[("numbers", "01040000006")]).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(team.viewer.get("/opt-outs.csv").await.status(), StatusCode::FORBIDDEN);
    let response = team
        .editor
        .post("/opt-outs/remove", &[("numbers", "01040000001")])
        .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let (_, page) = team.viewer.page("/opt-outs").await;
    assert!(
        page.contains("010-****-0001") && !page.contains("01040000001"),
        "numbers are masked on the page"
    );

    // The check of an advertising campaign says how many rows the list removed.
    let advertising = new_campaign(&mut team.editor, common::console::ADVERTISING, "winter-sale").await;
    approved(&mut team, &advertising).await;
    let line = opted_out_line(&mut team.editor, &advertising).await;
    assert!(line.contains(": 2 ") && line.contains("list of 2"), "{line}");
    let (_, check) = team.editor.page(&format!("/campaigns/{advertising}/check")).await;
    assert!(
        check.contains("rows 6 = valid 4 + rejected 0 + duplicates 0 + suppressed 2"),
        "{check}"
    );

    // A number added from a file after the approval: the campaign is a draft again.
    assert_eq!(state_of(&mut team.editor, &advertising).await, "approved");
    team.editor.page("/opt-outs").await;
    let form = Form::new()
        .text("csrf", team.editor.csrf.clone())
        .part("list", Part::text("phone\n010-4000-0003\n").file_name("수신거부.csv"));
    let response = team.editor.post_multipart("/opt-outs/upload", form).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(listed(&mut team.viewer).await, 3);
    assert_eq!(state_of(&mut team.editor, &advertising).await, "draft");
    let (_, audit) = team.admin.page("/audit").await;
    assert!(audit.contains("<td>mina</td><td>voided</td>"), "{audit}");

    // Checked again and sent: the three listed numbers are suppressed, the others sent.
    approved(&mut team, &advertising).await;
    let line = opted_out_line(&mut team.editor, &advertising).await;
    assert!(line.contains(": 3 ") && line.contains("list of 3"), "{line}");
    team.approver.page(&format!("/campaigns/{advertising}")).await;
    let response = team
        .approver
        .post(&format!("/campaigns/{advertising}/start"), &[("amount", "27")])
        .await;
    assert_eq!(location(&response), format!("/campaigns/{advertising}/live"));
    assert_eq!(until_ended(&mut team.approver, &advertising).await, "done");
    let run_dir = team.console.workspace.join("runs").join(&advertising);
    let status = run_status(&run_dir).await;
    assert_eq!((status.rows, status.sent, status.suppressed), (6, 3, 3));
    // The CLI resumes and reports it as it is: the run reads the list it was checked with.
    let campaign = msgbatch::campaign::Campaign::load(
        &team
            .console
            .workspace
            .join("campaigns")
            .join(&advertising)
            .join("composed.toml"),
    )
    .unwrap();
    assert!(campaign.opt_outs_applied().is_some());

    // A notification to the same people is not touched by the list.
    let notification = new_campaign(&mut team.editor, NOTIFICATION, "order-shipped").await;
    team.editor.page(&format!("/campaigns/{notification}")).await;
    team.editor.post(&format!("/campaigns/{notification}/check"), &[]).await;
    let line = opted_out_line(&mut team.editor, &notification).await;
    assert!(line.contains("does not advertise"), "{line}");

    // An approver takes a number off; the download holds the list; the log says who did what.
    team.approver.page("/opt-outs").await;
    let response = team
        .approver
        .post("/opt-outs/remove", &[("numbers", "010-4000-0003")])
        .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let download = team.editor.get("/opt-outs.csv").await;
    assert_eq!(download.status(), StatusCode::OK);
    assert_eq!(download.text().await.unwrap(), "phone\n01040000001\n01040000002\n");
    let (_, audit) = team.admin.page("/audit").await;
    for (who, what) in [
        ("mina", "opt-outs added"),
        ("joon", "opt-outs removed"),
        ("mina", "downloaded"),
    ] {
        assert!(
            audit.contains(&format!("<td>{who}</td><td>{what}</td>")),
            "{who} {what}: {audit}"
        );
    }
    // The finished campaign kept the list it was sent with.
    let snapshot = team
        .console
        .workspace
        .join("campaigns")
        .join(&advertising)
        .join("opt-outs.csv");
    assert_eq!(std::fs::read_to_string(snapshot).unwrap().lines().count(), 4);
}

/// An SMS campaign against a sandbox process, so that its ledger holds this test's sends alone.
/// The workspace's connection `process` to a sandbox process, with the demo group's key in a file.
fn process_connection(sandbox: &SandboxProcess, key_file: &std::path::Path, prices: &str) -> String {
    format!(
        "[process]\n{}[process.credentials]\napi_key_file = {:?}\ngroup_id = \"demo\"\n{prices}",
        sandbox.endpoint_toml(),
        key_file.display().to_string()
    )
}

fn sms_to() -> String {
    "name = \"monthly-news\"\nkind = \"sms\"\nconnection = \"process\"\n\n[message]\nservice = 3001\ntext = \"#{이름}님, 이번 달 소식입니다.\"\ncallback_no = \"0212345678\"\n\n[recipients]\npath = \"r.csv\"\nname = \"name\"\n".into()
}

/// Starts the six-SMS campaign with its estimate typed and waits for it to end.
async fn start_54(approver: &mut Browser, id: &str) -> String {
    approver.page(&format!("/campaigns/{id}")).await;
    let response = approver
        .post(&format!("/campaigns/{id}/start"), &[("amount", "54")])
        .await;
    assert_eq!(location(&response), format!("/campaigns/{id}/live"), "six SMS at ₩9");
    until_ended(approver, id).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_statement_sums_the_months_runs_as_the_cli_does_and_agrees_with_the_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = tokio::task::spawn_blocking(SandboxProcess::start).await.unwrap();
    let key_file = dir.path().join("api-key");
    std::fs::write(&key_file, common::DEMO_KEY).unwrap();
    let mut team = team(dir.path()).await;
    team.admin
        .set_connections(&process_connection(&sandbox, &key_file, "[process.prices]\nsms = 9\n"))
        .await;
    let id = new_campaign(&mut team.editor, &sms_to(), "monthly-news").await;
    approved(&mut team, &id).await;
    // A key file others can read: the engine refuses to start, and the page says why.
    assert_eq!(start_54(&mut team.approver, &id).await, "approved");
    let (_, page) = team.approver.page(&format!("/campaigns/{id}")).await;
    assert!(page.contains("not started: the API key file"), "{page}");
    std::fs::set_permissions(&key_file, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    assert_eq!(start_54(&mut team.approver, &id).await, "done");
    let run_dir = team.console.workspace.join("runs").join(&id);
    run_status(&run_dir).await;

    let ledger = tokio::task::spawn_blocking(move || sandbox.ledger()).await.unwrap();
    let month = msgbatch::statement::Month::of(msgbatch::statement::day_of(ledger.entries[0].date));
    let ledger_charged: i64 = ledger
        .entries
        .iter()
        .filter(|entry| entry.kind == msgbatch::api::ledger::LedgerKind::Charge)
        .map(|entry| entry.amount)
        .sum();
    assert!(ledger_charged > 0);

    // A viewer makes the month's statement: the total is what the service's ledger charged.
    let (status, page) = team.viewer.page(&format!("/statement?month={month}")).await;
    assert_eq!(status, StatusCode::OK);
    let classes = between(&page, "<table id=\"classes\">", "</table>").unwrap();
    let total = between(&classes, "<td>total</td><td class=\"n\">", "<").unwrap();
    assert_eq!(total, msgbatch::report::won(ledger_charged), "{classes}");

    // Its statement.csv is the one `msgbatch statement` writes over the same run.
    let downloaded = team
        .viewer
        .get(&format!("/statement/{month}/statement.csv"))
        .await
        .bytes()
        .await
        .unwrap();
    let again = dir.path().join("statement-again");
    msgbatch::statement::write(
        std::slice::from_ref(&run_dir),
        &msgbatch::statement::StatementOptions {
            month: Some(month),
            out: Some(again.clone()),
            ledger: None,
            // The console's is for Korean Excel: with the byte-order mark.
            csv_bom: true,
        },
    )
    .unwrap();
    assert_eq!(
        &downloaded[..],
        &std::fs::read(again.join("statement.csv")).unwrap()[..]
    );
    assert_eq!(&downloaded[..3], b"\xEF\xBB\xBF");
    // The same CSV for programs, by name: without the byte-order mark.
    assert!(
        page.contains(&format!("/statement/{month}/statement.raw.csv")),
        "{page}"
    );
    let raw = team
        .viewer
        .bytes(&format!("/statement/{month}/statement.raw.csv"))
        .await;
    assert_eq!(&raw[..], &downloaded[3..]);

    // The ledger export compared: an upload, so an editor's; every entry matched.
    let ledger_json = serde_json::to_vec(&ledger).unwrap();
    let form = |csrf: String| {
        Form::new()
            .text("csrf", csrf)
            .text("month", month.to_string())
            .part("ledger", Part::bytes(ledger_json.clone()).file_name("ledger.json"))
    };
    let response = team
        .viewer
        .post_multipart("/statement", form(team.viewer.csrf.clone()))
        .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    team.editor.page("/statement").await;
    let response = team
        .editor
        .post_multipart("/statement", form(team.editor.csrf.clone()))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let page = response.text().await.unwrap();
    let verdict = between(&page, "<p id=\"ledger\"", "</p>").unwrap();
    assert!(
        verdict.contains("class=\"ok\"") && verdict.contains(&format!("ledger: {}", ledger.entries.len())),
        "{verdict}"
    );
    let mismatches = team
        .editor
        .get(&format!("/statement/{month}/ledger-mismatches.csv"))
        .await;
    assert_eq!(
        mismatches.text().await.unwrap().lines().count(),
        1,
        "a header and no mismatch"
    );

    // A file that is not a ledger export is named as the person called it.
    let form = Form::new()
        .text("csrf", team.editor.csrf.clone())
        .text("month", month.to_string())
        .part("ledger", Part::text("[1, 2]").file_name("장부.json"));
    let response = team.editor.post_multipart("/statement", form).await;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let page = response.text().await.unwrap();
    assert!(
        page.contains("장부.json") && page.contains("not a ledger export") && !page.contains(".part"),
        "{page}"
    );

    // A bad month is named; without a session nothing is served.
    let (status, page) = team.viewer.page("/statement?month=2026-13").await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(page.contains("2026-13"), "{page}");
    let mut stranger = Browser::new(&team.console.base);
    let response = stranger.get(&format!("/statement/{month}/statement.csv")).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let (_, audit) = team.admin.page("/audit").await;
    assert!(audit.contains("<td>vera</td><td>statement</td>") && audit.contains("<td>mina</td><td>statement</td>"));
}

/// A gateway notification to ten people: number 0 settles FAILED, 1 GIVEUP, 2 is refused when
/// sent, the rest settle OK (the sandbox's rule by the number's last digits).
fn gateway_to() -> (String, String) {
    let mut csv = String::from("phone,name,order\n");
    for i in 0..10 {
        let suffix = match i {
            0 => "93",
            1 => "94",
            2 => "95",
            _ => "10",
        };
        csv.push_str(&format!("010{i:06}{suffix},고객{i},A-{i}\n"));
    }
    let settings = format!(
        "name = \"gateway-shipped\"\nkind = \"gateway-alimtalk\"\nconnection = \"process\"\n[message]\nsender_key = \"{}\"\ntemplate = \"ORDER_SHIPPED\"\ntext = \"#{{이름}}님, 주문하신 상품이 발송되었습니다. 송장번호: #{{VAR1}}\"\n[recipients]\npath = \"r.csv\"\nname = \"name\"\nvariables = {{ VAR1 = \"order\" }}\n[send]\nchunk_size = 4\n",
        common::DEMO_SENDER_KEY
    );
    (settings, csv)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_runs_results_are_collected_by_an_approvers_click_and_shown() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = tokio::task::spawn_blocking(|| SandboxProcess::start_with(&["--settle-after", "0s"]))
        .await
        .unwrap();
    let key_file = dir.path().join("api-key");
    std::fs::write(&key_file, common::DEMO_KEY).unwrap();
    std::fs::set_permissions(&key_file, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let mut team = team_with(dir.path(), |options| {
        options.collect.min_age = std::time::Duration::ZERO;
        options.collect.poll_every = std::time::Duration::from_secs(1);
    })
    .await;
    // A connection without prices: the number of recipients is typed to start.
    team.admin
        .set_connections(&process_connection(&sandbox, &key_file, ""))
        .await;
    let (settings, csv) = gateway_to();
    team.editor.page("/campaigns/new").await;
    let form = Form::new()
        .text("csrf", team.editor.csrf.clone())
        .text("name", "gateway-shipped")
        .part("campaign_file", Part::text(settings).file_name("campaign.toml"))
        .part("recipients", Part::text(csv).file_name("people.csv"));
    let id = campaign_id(&location(&team.editor.post_multipart("/campaigns", form).await));
    approved(&mut team, &id).await;
    team.approver.page(&format!("/campaigns/{id}")).await;
    let response = team
        .approver
        .post(&format!("/campaigns/{id}/start"), &[("amount", "10")])
        .await;
    assert_eq!(
        location(&response),
        format!("/campaigns/{id}/live"),
        "no prices: the recipients are typed"
    );
    assert_eq!(until_ended(&mut team.approver, &id).await, "done");
    run_status(&team.console.workspace.join("runs").join(&id)).await;

    // Results: the gateway's section; a viewer sees no button and cannot collect.
    let results = format!("/campaigns/{id}/results");
    let (_, page) = team.viewer.page(&results).await;
    assert!(
        page.contains("id=\"collection\"") && !page.contains("/collect\""),
        "{page}"
    );
    let response = team.viewer.post(&format!("/campaigns/{id}/collect"), &[]).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);

    // The approver collects; the page shows the final results when it is done.
    team.approver.page(&results).await;
    let response = team.approver.post(&format!("/campaigns/{id}/collect"), &[]).await;
    assert_eq!(location(&response), results);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let page = loop {
        let (_, page) = team.viewer.page(&results).await;
        if page.contains("id=\"collected\"") && page.contains("id=\"final-results\"") {
            break page;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "collected within a minute: {page}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let finals = between(&page, "id=\"final-results\">", "</table>").unwrap();
    for (result, meaning, count) in [
        ("OK", "delivered", 7),
        ("FAILED", "failed; the charge is refunded", 1),
        ("GIVEUP", "no result received; charged, disputed", 1),
    ] {
        assert!(
            finals.contains(&format!(
                "<td><code>{result}</code> · {meaning}</td><td class=\"n\">{count}</td>"
            )),
            "{result} {count}, with what it means: {finals}"
        );
    }
    let collected = between(&page, "<p id=\"collected\">", "</p>").unwrap();
    assert!(collected.starts_with("collected 9 accepted"), "{collected}");

    // The two the gateway took and did not deliver, as a list for Excel with the campaign's
    // columns; the one refused when sent is in the other list, not this one.
    assert!(page.contains(&format!("/campaigns/{id}/not-delivered.csv")), "{page}");
    let list = team
        .viewer
        .csv_for_excel(&format!("/campaigns/{id}/not-delivered.csv"))
        .await;
    assert_eq!(
        list.lines().collect::<Vec<_>>(),
        ["phone,name,order", "01000000093,고객0,A-0", "01000000194,고객1,A-1"],
        "{list}"
    );
    let listed_files: Vec<_> = std::fs::read_dir(team.console.workspace.join("uploads"))
        .map(|entries| entries.flatten().map(|entry| entry.file_name()).collect())
        .unwrap_or_default();
    assert!(
        !listed_files
            .iter()
            .any(|name| name.to_string_lossy().starts_with("not-delivered")),
        "no scratch list left behind: {listed_files:?}"
    );
    let (_, audit) = team.admin.page("/audit").await;
    assert!(
        audit.contains("<td>joon</td><td>collect</td>") && audit.contains("<td>console</td><td>collected</td>"),
        "{audit}"
    );
}

/// The form fields of an edit page: name → value (text inputs, selects and text areas).
fn field_value(page: &str, name: &str) -> Option<String> {
    between(page, &format!("name=\"{name}\""), "<").map(|rest| {
        rest.split_once("value=\"")
            .map(|(_, value)| value.split('"').next().unwrap_or("").to_string())
            .unwrap_or_else(|| {
                rest.split_once('>')
                    .map(|(_, text)| text.to_string())
                    .unwrap_or_default()
            })
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_edit_page_is_a_form_of_the_kind_with_the_text_measured_and_parquet_columns_listed() {
    use polars::prelude::*;
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let id = new_campaign(&mut team.editor, common::console::ADVERTISING, "winter-sale").await;

    // The SMS form: the text with its EUC-KR size, the sender number, the advertising flag,
    // the price; what the form shows is not repeated in the other settings.
    let edit = format!("/campaigns/{id}/edit");
    let (status, page) = team.editor.page(&edit).await;
    assert_eq!(status, StatusCode::OK);
    let text = "(광고) #{이름}님 겨울 세일 무료거부 0801234567";
    let expected_size = format!("{} / 90 bytes EUC-KR", msgbatch::text::euc_kr_len(text).unwrap());
    assert!(page.contains(&expected_size), "{expected_size}: {page}");
    assert_eq!(field_value(&page, "message.callback_no").as_deref(), Some("0212345678"));
    assert_eq!(
        field_value(&page, "prices.sms"),
        None,
        "prices are the connection's, not a field of the campaign"
    );
    assert!(page.contains("name=\"message.advertising\" checked"), "{page}");
    let others = between(
        &page,
        "<textarea name=\"settings\" rows=\"16\" class=\"code\">",
        "</textarea>",
    )
    .unwrap();
    assert!(
        !others.contains("callback_no") && others.contains("[recipients]"),
        "{others}"
    );
    assert!(
        page.contains("/assets/form.js"),
        "the live count is a script of the console's own"
    );

    // Saved: a longer text, a budget typed with a won sign, the flag left as it is.
    let long = "(광고) #{이름}님 ".to_string() + &"겨울 세일 ".repeat(12) + "무료거부 0801234567";
    let form = Form::new()
        .text("csrf", team.editor.csrf.clone())
        .text("form_kind", "sms")
        .text("message.service", "3001")
        .text("message.callback_no", "0212345678")
        .text("message.text", long.clone())
        .text("message.advertising", "on")
        .text("send.budget", "₩1,000")
        .text("send.quiet_hours", "warn")
        .text("settings", html_unescape(&others));
    let response = team.editor.post_multipart(&edit, form).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let saved =
        msgbatch::campaign::Campaign::load(&team.console.workspace.join("campaigns").join(&id).join("composed.toml"))
            .unwrap();
    assert_eq!(saved.message_text(), Some(long.as_str()));
    assert_eq!(saved.send.budget, Some(1000));
    assert!(saved.is_advertising());
    // The check measures it: every row is too long for an SMS.
    team.editor.post(&format!("/campaigns/{id}/check"), &[]).await;
    let (_, check) = team.editor.page(&format!("/campaigns/{id}/check")).await;
    assert!(check.contains("message too long for its lane (too_long)"), "{check}");

    // A field written in the other settings as well is refused, named; nothing changes.
    let (_, page) = team.editor.page(&edit).await;
    let form = Form::new()
        .text("csrf", team.editor.csrf.clone())
        .text("form_kind", "sms")
        .text("message.text", "short")
        .text("settings", "[message]\ntext = \"other\"\n");
    let response = team.editor.post_multipart(&edit, form).await;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(response.text().await.unwrap().contains("message.text"));
    assert!(page.contains("겨울 세일"));

    // A Parquet recipients file: its columns fill the lists.
    let mut frame = df!("hp" => &["01040000001"], "고객명" => &["고객"]).unwrap();
    let mut bytes = Vec::new();
    ParquetWriter::new(&mut bytes).finish(&mut frame).unwrap();
    let form = Form::new()
        .text("csrf", team.editor.csrf.clone())
        .part("recipients", Part::bytes(bytes).file_name("people.parquet"))
        .text("settings", html_unescape(&others));
    let response = team.editor.post_multipart(&edit, form).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let (_, page) = team.editor.page(&edit).await;
    let phone_list = between(&page, "<select name=\"phone\">", "</select>").unwrap();
    assert!(
        phone_list.contains("<option>hp</option>") && phone_list.contains("<option>고객명</option>"),
        "{phone_list}"
    );
}

/// Starts a notification to the six people, slow enough for a reader to be reading when the run
/// ends: a notification a chunk, two a second (about two seconds). Its id and run directory.
async fn start_slow(team: &mut common::console::Team) -> (String, std::path::PathBuf) {
    let slow = format!("{NOTIFICATION}[send]\nchunk_size = 1\nmessages_per_second = 2\n");
    let id = new_campaign(&mut team.editor, &slow, "order-shipped").await;
    approved(team, &id).await;
    team.approver.page(&format!("/campaigns/{id}")).await;
    let response = team
        .approver
        .post(&format!("/campaigns/{id}/start"), &[("amount", "48")])
        .await;
    assert_eq!(
        location(&response),
        format!("/campaigns/{id}/live"),
        "six notifications at ₩8"
    );
    let run_dir = team.console.workspace.join("runs").join(&id);
    (id, run_dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_report_is_written_even_while_someone_keeps_reading_the_runs_status() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let (id, run_dir) = start_slow(&mut team).await;
    // Once the run holds its directory, `msgbatch status` (or a status page) reads it again and
    // again: each read that gets in holds the run a moment, as the run ends and the console
    // writes the report.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        // The live page, which reads the run's events and not its directory.
        let (_, live) = team.approver.page(&format!("/campaigns/{id}/live")).await;
        let sent: u64 = between(&live, "<td data-live=\"sent\">", "<")
            .and_then(|sent| sent.parse().ok())
            .unwrap_or(0);
        if sent > 0 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the run sends: {live}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let reader = Reader::start(&run_dir);
    assert_eq!(until_ended(&mut team.approver, &id).await, "done");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    while !run_dir.join("report.csv").exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the report is written while the status is read"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // The campaign list shows what was sent while the reader still reads: it does not open the run.
    let (_, list) = team.viewer.page("/campaigns").await;
    let row = between(&list, &format!("<a href=\"/campaigns/{id}\">"), "</tr>").unwrap();
    assert!(row.contains("<td class=\"n\">6</td>") && row.contains("₩48"), "{row}");
    assert!(reader.stop() > 0, "the status was read meanwhile");
    assert_eq!(run_status(&run_dir).await.sent, 6);
}

/// `msgbatch status` (or a status page) read again and again on another thread.
struct Reader {
    reading: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<u64>,
}

impl Reader {
    fn start(run_dir: &std::path::Path) -> Reader {
        let reading = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let thread = {
            let (reading, run_dir) = (reading.clone(), run_dir.to_path_buf());
            std::thread::spawn(move || {
                let mut reads = 0u64;
                while reading.load(std::sync::atomic::Ordering::Relaxed) {
                    reads += u64::from(msgbatch::engine::status(&run_dir).is_ok());
                }
                reads
            })
        };
        Reader { reading, thread }
    }

    /// Stops reading; the reads that got in.
    fn stop(self) -> u64 {
        self.reading.store(false, std::sync::atomic::Ordering::Relaxed);
        self.thread.join().unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_goes_on_while_someone_keeps_reading_the_runs_status() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let (id, run_dir) = start_slow(&mut team).await;
    common::console::stop_from_live(&mut team.approver, &id).await;
    assert_eq!(until_ended(&mut team.approver, &id).await, "stopped");
    let before = run_status(&run_dir).await;
    assert!(before.pending > 0, "{}", before.equation());

    // The approver resumes while the status is read over and over.
    let reader = Reader::start(&run_dir);
    team.approver.page(&format!("/campaigns/{id}")).await;
    let response = team.approver.post(&format!("/campaigns/{id}/resume"), &[]).await;
    assert_eq!(location(&response), format!("/campaigns/{id}/live"));
    assert_eq!(until_ended(&mut team.approver, &id).await, "done");
    reader.stop();
    let after = run_status(&run_dir).await;
    assert_eq!((after.sent, after.pending), (6, 0), "{}", after.equation());
}
