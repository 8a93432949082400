//! Approval as a decision (issue 27, point 6): the approver's page shows the first recipient's message as a phone shows it, the cost against the budget, the quiet-hours decision and the opt-out list's figures; a first approval says it is the first; after an edit voids the approval, the page shows what changed (settings lines old and new, the recipients file, the estimate) and says the approval before was voided.

mod common;

#[path = "common/webdriver.rs"]
mod webdriver;

use common::console::{between, location, team, uploaded, Browser, Team};
use msgbatch::console::words::{EN, KO};
use reqwest::multipart::{Form, Part};
use reqwest::StatusCode;

/// An advertising SMS whose quiet hours only warn (so the test does not depend on the hour), with
/// a budget; the sandbox connection prices an SMS at ₩9.
const SETTINGS: &str = r##"name = "winter-approval"
kind = "sms"
[message]
service = 3001
text = "(광고) #{이름}님\n겨울 세일 쿠폰 #{VAR1}\n무료거부 0801234567"
callback_no = "0212345678"
advertising = true

[recipients]
path = "r.csv"
name = "name"
variables = { VAR1 = "coupon" }

[send]
quiet_hours = "warn"
budget = 1000
"##;

/// Three people; the third has opted out of advertising.
const PEOPLE: &str = "phone,name,coupon\n01050000001,고객1,C-1\n01050000002,고객2,C-2\n01050000003,고객3,C-3\n";

/// Checks and submits as the editor; the approver's page.
async fn submitted(editor: &mut Browser, approver: &mut Browser, id: &str) -> String {
    editor.page(&format!("/campaigns/{id}")).await;
    let response = editor.post(&format!("/campaigns/{id}/check"), &[]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let response = editor.post(&format!("/campaigns/{id}/submit"), &[]).await;
    assert_eq!(
        location(&response),
        format!("/campaigns/{id}"),
        "the check passed and it is submitted"
    );
    let (status, page) = approver.page(&format!("/campaigns/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        between(&page, "<span class=\"state ", "\"").as_deref(),
        Some("awaiting_approval")
    );
    page
}

async fn approve(approver: &mut Browser, id: &str) {
    let response = approver
        .post(&format!("/campaigns/{id}/approve"), &[("quiet_hours_ack", "on")])
        .await;
    assert_eq!(location(&response), format!("/campaigns/{id}"), "approved");
}

/// The rows of the changes' tables of one kind (`added` or `removed`).
fn diff_rows(changes: &str, kind: &str) -> Vec<String> {
    changes
        .split(&format!("<tr class=\"{kind}\">"))
        .skip(1)
        .map(|row| row.split("</tr>").next().unwrap().to_string())
        .collect()
}

/// The opt-out list holds the third person's number; the campaign is uploaded by the editor.
async fn created(team: &mut Team) -> String {
    team.editor.page("/opt-outs").await;
    let response = team.editor.post("/opt-outs/add", &[("numbers", "01050000003")]).await;
    assert_eq!(
        response.status(),
        StatusCode::SEE_OTHER,
        "the number is on the opt-out list"
    );
    uploaded(&mut team.editor, SETTINGS, PEOPLE).await
}

/// The editor changes a line of the text and uploads the people with a fourth one (which voids
/// the approval); the new recipients file.
async fn edited(team: &mut Team, id: &str) -> String {
    let stored =
        std::fs::read_to_string(team.console.workspace.join("campaigns").join(id).join("campaign.toml")).unwrap();
    assert!(stored.contains("겨울 세일"), "{stored}");
    let edited = stored.replace("겨울 세일", "봄 세일");
    let edit = format!("/campaigns/{id}/edit");
    team.editor.page(&edit).await;
    let people = format!("{PEOPLE}01050000004,고객4,C-4\n");
    let form = Form::new()
        .text("csrf", team.editor.csrf.clone())
        .text("settings", edited)
        .part("recipients", Part::text(people.clone()).file_name("people-v2.csv"));
    let response = team.editor.post_multipart(&edit, form).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "the edit is saved");
    people
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_approver_decides_on_the_messages_the_cost_the_rules_and_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let id = created(&mut team).await;
    let page = submitted(&mut team.editor, &mut team.approver, &id).await;
    let decision = between(&page, "id=\"decision\"", "</section>").expect("the decision section");

    // The first recipient's message as the phone shows it: filled, line breaks kept, its size as
    // the service counts it (EUC-KR bytes) and its billing class.
    let first = "(광고) 고객1님\n겨울 세일 쿠폰 C-1\n무료거부 0801234567";
    let bubble = between(&decision, "<div class=\"bubble\">", "</div>").expect("a phone bubble");
    assert_eq!(bubble, first);
    let size = between(&decision, "<p class=\"phone-size\">", "</p>").unwrap();
    let bytes = msgbatch::text::euc_kr_len(first).unwrap();
    assert!(
        size.contains(&format!("{}{}", first.chars().count(), EN.approval_chars))
            && size.contains(&format!("{bytes}{}", EN.approval_bytes))
            && size.contains("<strong>SMS</strong>"),
        "{size}"
    );
    assert!(decision.contains("0212345678"), "the sender: {decision}");

    // The cost against the budget: two recipients at ₩9, a budget of ₩1,000, ₩982 left.
    let cost = between(&decision, "id=\"cost\"", "</dl>").expect("the cost");
    for figure in ["₩18", "₩1,000", "₩982", EN.approval_left] {
        assert!(cost.contains(figure), "{figure}: {cost}");
    }
    assert!(!decision.contains(EN.approval_over_budget), "{decision}");

    // The quiet-hours decision in words, with the acknowledgement the approve form asks for.
    let quiet = between(&decision, "id=\"quiet-decision\"", "</p>").unwrap();
    assert!(
        quiet.contains(EN.quiet_warn) && quiet.contains("21:00–08:00"),
        "{quiet}"
    );
    assert!(page.contains("name=\"quiet_hours_ack\""), "{page}");

    // The opt-out list: it removed one recipient, and holds one number.
    let opt_outs = between(&decision, "id=\"opt-out-figures\"", "</dl>").unwrap();
    assert!(
        opt_outs.contains(&format!("<dt>{}</dt><dd>1</dd>", EN.approval_opted_out))
            && opt_outs.contains(&format!("<dt>{}</dt><dd>1</dd>", EN.approval_list_size)),
        "{opt_outs}"
    );

    // Never approved before: it says it is the first; the raw settings are under "advanced".
    assert!(decision.contains("id=\"first-approval\""), "{decision}");
    assert!(!decision.contains("id=\"approval-voided\""));
    assert!(page.contains("<details class=\"advanced\">"), "{page}");
    // The decision comes before the approve button.
    assert!(page.find("id=\"decision\"").unwrap() < page.find("/approve\"").unwrap());

    approve(&mut team.approver, &id).await;

    // The editor changes the text and adds a person: the approval is void, the campaign a draft.
    let people = edited(&mut team, &id).await;

    let page = submitted(&mut team.editor, &mut team.approver, &id).await;
    let changes = between(&page, "<div id=\"changes\">", "</section>").expect("what changed");
    assert!(changes.contains("id=\"approval-voided\""), "{changes}");
    assert!(changes.contains(EN.approval_voided), "{changes}");
    assert!(changes.contains("joon"), "who approved before: {changes}");
    assert!(!changes.contains("id=\"first-approval\""));

    // The changed line, old and new; nothing else of the text is listed.
    let removed = diff_rows(&changes, "removed");
    let added = diff_rows(&changes, "added");
    assert!(removed.iter().any(|row| row.contains("겨울 세일 쿠폰")), "{removed:?}");
    assert!(added.iter().any(|row| row.contains("봄 세일 쿠폰")), "{added:?}");
    assert!(
        !removed.iter().chain(&added).any(|row| row.contains("무료거부")),
        "{changes}"
    );

    // The recipients file by name and size, before and now; the estimate before and now.
    let files = between(
        &changes,
        &format!("<th scope=\"row\">{}</th>", EN.recipients_file),
        "</tr>",
    )
    .expect("the recipients file changed");
    assert!(
        files.contains(&format!("people.csv ({} B)", PEOPLE.len()))
            && files.contains(&format!("people-v2.csv ({} B)", people.len())),
        "{files}"
    );
    assert!(
        changes.contains(&format!("{} ₩18", EN.approval_was)) && changes.contains("₩27"),
        "{changes}"
    );
}

/// The approver's page in Korean, in a real browser at a desktop's size, after an edit voided the
/// approval: the Korean words of the decision are there, and its screenshot goes to
/// `MSGBATCH_SCREENSHOTS` as `approve-ko.png` (skipped without chromium).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_decision_in_korean_in_a_browser() {
    let Some(driver) = webdriver::driver().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (shots, _temporary) = webdriver::screenshots();
    let mut team = team(dir.path()).await;
    let id = created(&mut team).await;
    submitted(&mut team.editor, &mut team.approver, &id).await;
    approve(&mut team.approver, &id).await;
    edited(&mut team, &id).await;
    submitted(&mut team.editor, &mut team.approver, &id).await;

    let look = webdriver::Look {
        width: 1366,
        height: 900,
        lang: Some("ko"),
    };
    let approver = webdriver::Session::open_as(&driver, &team.console.base, look).await;
    // Signed in as a person does (the shared helper reads the English button).
    approver.goto("/signin").await;
    approver.fill("input[name=name]", "joon").await;
    approver.fill("input[name=password]", common::console::PASSWORD).await;
    approver
        .wait("form[action='/signin'] button[type=submit]")
        .await
        .click()
        .await
        .unwrap();
    approver.wait("form.who").await;
    approver.goto(&format!("/campaigns/{id}")).await;
    approver.wait("#decision .bubble").await;
    let text = approver.text().await;
    for word in [KO.approval_changes, KO.approval_voided, KO.approval_cost, KO.quiet_warn] {
        assert!(text.contains(word), "{word}: {text}");
    }
    // The whole page in one picture: the window as tall as the page.
    let height = approver.number("return document.documentElement.scrollHeight").await;
    approver.resize(1366, height as u32 + 120).await;
    approver.screenshot(&shots, "approve-ko.png").await;
    approver.close().await;
}
