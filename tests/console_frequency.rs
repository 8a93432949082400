//! The workspace's frequency cap over HTTP on loopback: an administrator sets "at most N advertising messages a number in D days"; what a run's service accepted is recorded; the next advertising campaign's check holds the numbers over the cap back as their own figure (`capped`) and lists them among the rejected rows with the last send's date; a notification is neither counted nor held back; a start applies the rule as it stands then; a restarted console still knows what was sent.

mod common;

use common::console::{
    approved, between, connect_to, html_unescape, team, until_ended, uploaded, Browser, NOTIFICATION,
};
use reqwest::StatusCode;

/// People `from..from + n` (010-7300-xxxx), with an order number for the notification.
fn people(range: std::ops::Range<usize>) -> String {
    let mut csv = String::from("phone,name,order\n");
    for i in range {
        csv.push_str(&format!("0107300{i:04},고객{i},A-{i}\n"));
    }
    csv
}

async fn set_cap(admin: &mut Browser, times: &str, days: &str) {
    admin.page("/month").await;
    let response = admin.post("/month/cap", &[("times", times), ("days", days)]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "the cap is set");
}

/// The check page's accounting line.
async fn checked_line(browser: &mut Browser, id: &str) -> String {
    let (_, page) = browser.page(&format!("/campaigns/{id}/check")).await;
    html_unescape(&between(&page, "id=\"accounting\">", "<").unwrap_or_else(|| panic!("{page}")))
}

/// Starts an approved campaign with its estimate typed out and waits for its end.
async fn sent(team: &mut common::console::Team, id: &str) -> String {
    let (_, page) = team.approver.page(&format!("/campaigns/{id}")).await;
    let amount = between(&page, "id=\"start-estimate\">", "<").unwrap_or_else(|| panic!("{page}"));
    let response = team
        .approver
        .post(&format!("/campaigns/{id}/start"), &[("amount", &amount)])
        .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "{id} starts");
    until_ended(&mut team.approver, id).await
}

/// The numbers the sandbox's ledger charged an SMS for (the advertising campaigns here are SMS).
async fn charged_sms(sandbox: &common::TestSandbox) -> std::collections::BTreeSet<String> {
    let client = sandbox.client();
    let ledger = sandbox.admin(&client).ledger().await.unwrap();
    ledger
        .entries
        .iter()
        .filter(|entry| {
            entry.kind == msgbatch::api::ledger::LedgerKind::Charge
                && entry.billing_class == msgbatch::api::ledger::BillingClass::Sms
        })
        .map(|entry| msgbatch::phone::normalize(&entry.recipient).unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cap_holds_back_numbers_sent_to_lately_at_the_check_and_again_at_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let sandbox = common::TestSandbox::demo().await;
    connect_to(&team.console.workspace, &sandbox, dir.path());

    // Only an administrator sets it; it is off until one does.
    team.editor.page("/month").await;
    let response = team.editor.post("/month/cap", &[("times", "1"), ("days", "7")]).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let (_, month) = team.viewer.page("/month").await;
    assert!(month.contains("<strong>Off</strong>"), "{month}");

    // An editor cannot set the cap's list in a campaign's settings.
    let sneaky =
        common::console::ADVERTISING.replace("name = \"name\"\n", "name = \"name\"\nfrequency_capped = \"r.csv\"\n");
    team.editor.page("/campaigns/new").await;
    let form = reqwest::multipart::Form::new()
        .text("csrf", team.editor.csrf.clone())
        .part(
            "campaign_file",
            reqwest::multipart::Part::text(sneaky).file_name("campaign.toml"),
        )
        .part(
            "recipients",
            reqwest::multipart::Part::text(people(0..2)).file_name("people.csv"),
        );
    let response = team.editor.post_multipart("/campaigns", form).await;
    let text = html_unescape(&response.text().await.unwrap());
    assert!(
        text.contains("`recipients.frequency_capped` is not a campaign's to set"),
        "{text}"
    );

    // The first advertising campaign reaches 0..4 while the cap is off.
    let first = uploaded(&mut team.editor, common::console::ADVERTISING, &people(0..4)).await;
    approved(&mut team, &first).await;
    assert_eq!(sent(&mut team, &first).await, "done");

    // A notification to 0..2 is neither held back nor counted.
    let notice = uploaded(&mut team.editor, NOTIFICATION, &people(0..2)).await;
    set_cap(&mut team.admin, "1", "7").await;
    let (_, month) = team.viewer.page("/month").await;
    assert!(
        month.contains("At most 1 advertising messages a number in 7 days"),
        "{month}"
    );
    approved(&mut team, &notice).await;
    assert!(!checked_line(&mut team.editor, &notice).await.contains("capped"));
    assert_eq!(sent(&mut team, &notice).await, "done");

    // The second advertising campaign, to 2..6: 2 and 3 had one advertising message today.
    let second = uploaded(&mut team.editor, common::console::ADVERTISING, &people(2..6)).await;
    team.editor.page(&format!("/campaigns/{second}")).await;
    team.editor.post(&format!("/campaigns/{second}/check"), &[]).await;
    assert_eq!(
        checked_line(&mut team.editor, &second).await,
        "rows 4 = valid 2 + rejected 0 + duplicates 0 + suppressed 0 + capped 2"
    );
    let (_, check) = team.editor.page(&format!("/campaigns/{second}/check")).await;
    let today = chrono::Utc::now()
        .with_timezone(&chrono::FixedOffset::east_opt(9 * 3600).unwrap())
        .format("%Y-%m-%d")
        .to_string();
    let listed = html_unescape(&check);
    assert!(
        listed.contains(&format!("last sent {today}; 1 sends in 7 days (at most 1)")),
        "the rejected rows name the last send: {listed}"
    );
    let rejects = team
        .editor
        .csv_for_excel(&format!("/campaigns/{second}/rejects.csv"))
        .await;
    // Exactly the numbers of the list the sandbox's ledger charged an advertising SMS for.
    let charged = charged_sms(&sandbox).await;
    let held_rows: Vec<u64> = rejects
        .lines()
        .filter(|line| line.contains("frequency_cap"))
        .map(|line| line.split(',').next().unwrap().parse().unwrap())
        .collect();
    let expected: Vec<u64> = (2..6)
        .enumerate()
        .filter(|(_, i)| charged.contains(&format!("0107300{i:04}")))
        .map(|(index, _)| index as u64 + 2)
        .collect();
    assert_eq!(expected.len(), 2, "{charged:?}");
    assert_eq!(held_rows, expected, "{rejects}");

    // The third, to 6..8, is checked and approved while nobody there was sent anything...
    let third = uploaded(&mut team.editor, common::console::ADVERTISING, &people(6..8)).await;
    approved(&mut team, &third).await;
    assert!(!checked_line(&mut team.editor, &third).await.contains("capped"));
    // ...then the second reaches 4..6 (and 6 is not in it), and a fourth reaches 6 first.
    approved(&mut team, &second).await;
    assert_eq!(sent(&mut team, &second).await, "done");
    let fourth = uploaded(&mut team.editor, common::console::ADVERTISING, &people(6..7)).await;
    approved(&mut team, &fourth).await;
    assert_eq!(sent(&mut team, &fourth).await, "done");
    // The third's start applies the rule as it stands now: 6 is held back, 7 is sent.
    assert_eq!(sent(&mut team, &third).await, "done");
    let status = common::console::run_status(&team.console.workspace.join("runs").join(&third)).await;
    assert_eq!((status.rows, status.capped, status.sent), (2, 1, 1), "{status:?}");
    assert!(status.balanced());
    let report = team
        .approver
        .csv_for_excel(&format!("/campaigns/{third}/files/report.csv"))
        .await;
    assert!(
        report
            .lines()
            .any(|line| line.contains("01073000006") && line.contains("CAPPED")),
        "{report}"
    );

    // By the sandbox's ledger, no number got more than one advertising message.
    let client = sandbox.client();
    let ledger = sandbox.admin(&client).ledger().await.unwrap();
    let mut reached = std::collections::BTreeMap::<String, u32>::new();
    for entry in ledger.entries.iter().filter(|entry| {
        entry.kind == msgbatch::api::ledger::LedgerKind::Charge
            && entry.billing_class == msgbatch::api::ledger::BillingClass::Sms
    }) {
        *reached
            .entry(msgbatch::phone::normalize(&entry.recipient).unwrap().to_string())
            .or_default() += 1;
    }
    assert_eq!(reached.len(), 8, "{reached:?}");
    assert!(reached.values().all(|count| *count == 1), "{reached:?}");

    // A restarted console knows what was sent: a fifth campaign to 0..8 holds back all eight.
    let workspace = team.console.workspace.clone();
    team.console.stop().await;
    let console = common::console::TestConsole::start(&workspace).await;
    let mut editor = console.browser();
    editor.sign_in("mina", common::console::PASSWORD).await;
    let fifth = uploaded(&mut editor, common::console::ADVERTISING, &people(0..8)).await;
    editor.page(&format!("/campaigns/{fifth}")).await;
    editor.post(&format!("/campaigns/{fifth}/check"), &[]).await;
    assert_eq!(
        checked_line(&mut editor, &fifth).await,
        "rows 8 = valid 0 + rejected 0 + duplicates 0 + suppressed 0 + capped 8"
    );
    console.stop().await;
}
