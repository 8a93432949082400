//! The console in a real browser: Debian's chromium driven through chromedriver (WebDriver, with `fantoccini`), two people in two sessions through the whole flow with real clicks, uploads and the live page's Server-Sent Events, and what a role forbids left off the pages; screenshots of the main pages land in `MSGBATCH_SCREENSHOTS` when it is set.

mod common;

#[path = "common/webdriver.rs"]
mod webdriver;

use common::console::{Browser, TestConsole};
use fantoccini::Locator;
use std::path::Path;
use std::time::Instant;
use webdriver::{driver, screenshots, Session, DEADLINE, POLL};

/// A notification campaign against the embedded sandbox, priced, sending 5 messages a second in
/// chunks of 2 (a run of ten lasts long enough to be paused).
const CAMPAIGN: &str = r##"name = "order-shipped"
kind = "alimtalk"
[message]
service = 1001
template = "ORDER_SHIPPED"
text = "#{이름}님, 주문하신 상품이 발송되었습니다. 송장번호: #{VAR1}"
callback_no = "0212345678"

[recipients]
path = "whatever-the-uploader-had.xlsx"
name = "name"
variables = { VAR1 = "order_no" }

[send]
chunk_size = 2
messages_per_second = 5
budget = 100000

"##;

/// The campaign's name as typed in the browser.
const NAME: &str = "주문 발송 안내";

/// Ten valid rows (sheet rows 2 to 11), a landline (row 12) and a row without its order number
/// (row 13).
fn recipients_xlsx(path: &Path) {
    let mut workbook = rust_xlsxwriter::Workbook::new();
    let sheet = workbook.add_worksheet();
    for (column, title) in ["phone", "name", "order_no"].into_iter().enumerate() {
        sheet.write_string(0, column as u16, title).unwrap();
    }
    let mut rows: Vec<[String; 3]> = (0..10)
        .map(|i| [format!("010-3000-01{i:02}"), format!("고객{i}"), format!("A-{i}")])
        .collect();
    rows.push(["02-123-4567".into(), "지점".into(), "A-90".into()]);
    rows.push(["010-3000-0999".into(), "빈칸".into(), String::new()]);
    for (row, cells) in rows.iter().enumerate() {
        for (column, cell) in cells.iter().enumerate() {
            if !cell.is_empty() {
                sheet.write_string(row as u32 + 1, column as u16, cell).unwrap();
            }
        }
    }
    workbook.save(path).unwrap();
}

/// The campaign id in a `/campaigns/ID...` path.
fn campaign_id(path: &str) -> String {
    common::console::campaign_id(path)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_flow_in_a_real_browser() {
    let Some(driver) = driver().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (shots, _temporary) = screenshots();
    let console = TestConsole::start(&dir.path().join("workspace")).await;
    let first = Session::open(&driver, &console.base).await;
    let second = Session::open(&driver, &console.base).await;

    // The admin sets a password through the first link and adds two people.
    let first_link = console.first_link.as_deref().expect("an empty workspace prints a link");
    first.goto(first_link).await;
    first.wait("input[name=password]").await;
    first.screenshot(&shots, "welcome.png").await;
    first.welcome(first_link).await;
    let mut links = Vec::new();
    for (name, role) in [("mina", "editor"), ("joon", "approver")] {
        first.goto("/users").await;
        first.fill("form[action='/users'] input[name=name]", name).await;
        first
            .wait("form[action='/users'] select[name=role]")
            .await
            .select_by_label(role)
            .await
            .unwrap();
        first.click("form[action='/users'] button", "Add a user").await;
        let link = first
            .wait_text("p.notice code", "the one-time link of the new user", |link| {
                link.contains("/welcome/")
            })
            .await;
        // The code element reads "NAME: URL".
        let url = link
            .strip_prefix(&format!("{name}: "))
            .unwrap_or_else(|| panic!("the link is named: {link}"));
        links.push(url.replace("localhost", "127.0.0.1"));
    }
    first.sign_out().await;

    // joon sets his password in his own browser, and signs out until there is something to
    // approve; mina sets hers in the first.
    second.welcome(&links[1]).await;
    second.sign_out().await;
    first.welcome(&links[0]).await;

    // mina: a new campaign from a campaign file and a workbook with two bad rows.
    let toml = dir.path().join("campaign.toml");
    std::fs::write(&toml, CAMPAIGN).unwrap();
    let xlsx = dir.path().join("고객 목록.xlsx");
    recipients_xlsx(&xlsx);
    first.goto("/campaigns").await;
    first.click("a[href='/campaigns/new']", "New campaign").await;
    first
        .wait_path("the new campaign page", |path| path == "/campaigns/new")
        .await;
    // A Hangul name, so that every screenshot shows whether Hangul renders.
    first.fill("input[name=name]", NAME).await;
    first.screenshot(&shots, "new.png").await;
    first
        .wait("input[type=file][name=campaign_file]")
        .await
        .send_keys(&toml.display().to_string())
        .await
        .unwrap();
    first
        .wait("input[type=file][name=recipients]")
        .await
        .send_keys(&xlsx.display().to_string())
        .await
        .unwrap();
    first
        .wait("form[action='/campaigns'] button[type=submit]")
        .await
        .click()
        .await
        .unwrap();
    let path = first
        .wait_path("the upload makes a campaign", |path| {
            path.starts_with("/campaigns/") && path != "/campaigns/new"
        })
        .await;
    // The upload leads to the campaign's edit page (columns and settings); the campaign's own
    // page has the steps.
    println!("after the upload: {path}");
    let id = campaign_id(&path);

    // The edit page is the kind's form: the notification's text counts its characters as it is
    // typed (the console's own script), against the service's limit of 1,000.
    first.goto(&format!("/campaigns/{id}/edit")).await;
    let text = "output.size[data-for='message.text']";
    let typed = "#{이름}님, 주문하신 상품이 발송되었습니다. 송장번호: #{VAR1} 감사합니다";
    first.fill("textarea[name='message.text']", typed).await;
    let expected = format!("{} / 1000 characters", typed.chars().count());
    first.wait_text(text, "the live count", |shown| shown == expected).await;
    first.screenshot(&shots, "edit.png").await;
    first.goto(&format!("/campaigns/{id}")).await;
    assert_eq!(first.wait_text("h1 span.state", "a draft", |_| true).await, "draft");

    // Check now: the accounting and the rejected rows with their sheet rows.
    first.click("form[action$='/check'] button", "Check now").await;
    first.wait_path("the check page", |path| path.ends_with("/check")).await;
    let equation = first.wait_text("p.equation", "the accounting", |_| true).await;
    assert!(equation.starts_with("rows 12 = valid 10 + rejected 2"), "{equation}");
    let mut rejected = Vec::new();
    for row in first
        .client
        .find_all(Locator::Css("table thead + tbody tr"))
        .await
        .unwrap()
    {
        let cells: Vec<String> = {
            let mut cells = Vec::new();
            for cell in row.find_all(Locator::Css("td")).await.unwrap() {
                cells.push(cell.text().await.unwrap());
            }
            cells
        };
        rejected.push(cells);
    }
    println!("rejected rows on the check page: {rejected:?}");
    for (reason, row) in [("phone_invalid", "12"), ("variable_missing", "13")] {
        assert!(
            rejected.iter().any(
                |cells| cells.iter().any(|c| c.ends_with(&format!("({reason})"))) && cells.iter().any(|c| c == row)
            ),
            "{reason} at sheet row {row}: {rejected:?}"
        );
    }
    let check = first.text().await;
    assert!(check.contains("₩80"), "ten notifications at ₩8: {check}");
    first.screenshot(&shots, "check.png").await;

    // A test to one number; its answer, masked.
    first.goto(&format!("/campaigns/{id}")).await;
    first.fill("textarea[name=numbers]", "010-9999-0001").await;
    first.click("form[action$='/test-send'] button", "Send the test").await;
    first
        .wait_path("the test's answer page", |path| path.ends_with("/test-send"))
        .await;
    let answer = first.text().await;
    assert!(answer.contains("010-****-0001"), "{answer}");
    first.screenshot(&shots, "test-send.png").await;
    first.goto(&format!("/campaigns/{id}")).await;
    first
        .click("form[action$='/submit'] button", "Submit for approval")
        .await;
    first
        .wait_text("h1 span.state", "submitted", |state| state == "awaiting approval")
        .await;
    assert!(
        !first.has("form[action$='/approve'] button").await,
        "mina does not approve her own"
    );

    // joon: approves, then starts with the estimate typed out.
    second.sign_in("joon").await;
    second.goto("/campaigns").await;
    second.click(&format!("a[href='/campaigns/{id}']"), NAME).await;
    second.click("form[action$='/approve'] button", "Approve").await;
    second
        .wait_text("h1 span.state", "approved", |state| state == "approved")
        .await;
    let estimate = second
        .wait_text("#start-estimate", "the estimate", |text| text.starts_with('₩'))
        .await;
    assert_eq!(estimate, "₩80");
    second.fill("input[name=amount]", &estimate).await;
    second.screenshot(&shots, "start.png").await;
    second.click("form[action$='/start'] button", "Start").await;
    second
        .wait_path("starting opens the live page", |path| path.ends_with("/live"))
        .await;

    // The live figures move without a reload; pause part way, then resume.
    let sent = second
        .wait_text("[data-live=sent]", "some but not all are sent", |sent| {
            let sent: u64 = sent.parse().unwrap_or(0);
            assert!(sent < 10, "the run ended before it could be paused");
            sent > 0
        })
        .await;
    println!("paused at sent {sent}");
    second.click("button#pause", "Pause").await;
    second
        .wait_text("[data-live=phase]", "the run pauses", |phase| phase == "paused")
        .await;
    let held: u64 = second
        .wait_text("[data-live=sent]", "the sent figure", |_| true)
        .await
        .parse()
        .unwrap();
    assert!(held < 10, "paused before the end: {held}");
    second.screenshot(&shots, "live.png").await;
    second.click("button#resume", "Resume").await;
    // The resume's form is posted before the browser is sent anywhere else: going to another page
    // at once can cancel its request, and the run then waits paused.
    second
        .wait_text("[data-live=phase]", "the run resumes", |phase| phase != "paused")
        .await;
    let deadline = Instant::now() + DEADLINE;
    loop {
        second.goto(&format!("/campaigns/{id}")).await;
        let state = second.wait_text("h1 span.state", "the state", |_| true).await;
        if state == "finished" {
            break;
        }
        assert!(
            !["stopped", "incomplete", "interrupted"].contains(&state.as_str()),
            "the run ends done: {state}"
        );
        assert!(Instant::now() < deadline, "the run ends within a minute: {state}");
        tokio::time::sleep(POLL).await;
    }
    second.goto("/campaigns").await;
    second.screenshot(&shots, "campaigns.png").await;

    // Results: report.csv, fetched with the browser's session, is what `report` writes.
    let deadline = Instant::now() + DEADLINE;
    let href = loop {
        second.goto(&format!("/campaigns/{id}/results")).await;
        if let Ok(link) = second
            .client
            .find(Locator::Css("ul.downloads a[href$='/files/report.csv']"))
            .await
        {
            break link.attr("href").await.unwrap().unwrap();
        }
        assert!(Instant::now() < deadline, "the results list report.csv within a minute");
        tokio::time::sleep(POLL).await;
    };
    second.screenshot(&shots, "results.png").await;
    let session = second
        .client
        .get_all_cookies()
        .await
        .unwrap()
        .into_iter()
        .find(|cookie| cookie.name() == "msgbatch")
        .expect("the browser holds the session cookie");
    let response = reqwest::Client::new()
        .get(format!("{}{href}", console.base))
        .header(reqwest::header::COOKIE, format!("msgbatch={}", session.value()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), reqwest::StatusCode::OK);
    let downloaded = response.bytes().await.unwrap().to_vec();
    let run_dir = console.workspace.join("runs").join(&id);
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
    let status = msgbatch::engine::status(&run_dir).unwrap();
    assert_eq!((status.rows, status.sent, status.pending), (12, 10, 0));

    // The workspace's pages: the opt-out list takes typed numbers; the month's statement lists the run.
    second.goto("/opt-outs").await;
    second
        .fill(
            "form[action='/opt-outs/add'] textarea",
            "010-3000-0100\n+82 10 3000 0101",
        )
        .await;
    second.click("form[action='/opt-outs/add'] button", "Add numbers").await;
    second
        .wait_text("#opt-out-count", "the list's count", |count| count == "2")
        .await;
    second.screenshot(&shots, "opt-outs.png").await;
    let month = msgbatch::statement::Month::of(
        chrono::Utc::now()
            .with_timezone(&msgbatch::campaign::quiet::kst())
            .date_naive(),
    );
    second.goto(&format!("/statement?month={month}")).await;
    let total = second
        .wait_text("#classes tbody tr:last-child", "the statement's total", |row| {
            row.starts_with("total")
        })
        .await;
    assert!(total.contains("₩80"), "ten notifications at ₩8: {total}");
    second.screenshot(&shots, "statement.png").await;
    println!("screenshots in {}", shots.display());

    first.close().await;
    second.close().await;
    drop(driver);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_is_refused_what_the_role_forbids() {
    let Some(driver) = driver().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let console = TestConsole::start(&dir.path().join("workspace")).await;

    // The people and a campaign awaiting approval, over plain HTTP.
    let mut admin = console.admin().await;
    let mut people: Vec<Browser> = Vec::new();
    for (name, role) in [("mina", "editor"), ("vera", "viewer")] {
        let link = admin.add_user(name, role).await;
        let mut person = console.browser();
        person.welcome(&link).await;
        people.push(person);
    }
    let editor = &mut people[0];
    editor.page("/campaigns/new").await;
    let mut recipients = String::from("phone,name,order_no\n");
    for i in 0..3 {
        recipients.push_str(&format!("010-3000-{:04},고객{i},A-{i}\n", 100 + i));
    }
    let form = reqwest::multipart::Form::new()
        .text("csrf", editor.csrf.clone())
        .text("name", "order-shipped")
        .part(
            "campaign_file",
            reqwest::multipart::Part::text(CAMPAIGN).file_name("campaign.toml"),
        )
        .part(
            "recipients",
            reqwest::multipart::Part::text(recipients).file_name("recipients.csv"),
        );
    let response = editor.post_multipart("/campaigns", form).await;
    let id = campaign_id(&common::console::location(&response));
    editor.page(&format!("/campaigns/{id}")).await;
    editor.post(&format!("/campaigns/{id}/check"), &[]).await;
    let response = editor.post(&format!("/campaigns/{id}/submit"), &[]).await;
    assert_eq!(response.status(), reqwest::StatusCode::SEE_OTHER);

    let browser = Session::open(&driver, &console.base).await;
    // The editor sees the campaign awaiting approval, and no Approve button.
    browser.sign_in("mina").await;
    assert!(
        browser.has("a[href='/campaigns/new']").await,
        "an editor makes campaigns"
    );
    browser.goto(&format!("/campaigns/{id}")).await;
    assert_eq!(
        browser.wait_text("h1 span.state", "the state", |_| true).await,
        "awaiting approval"
    );
    assert!(!browser.has("form[action$='/approve']").await);
    assert!(browser.text().await.contains("An approver approves it."));
    browser.sign_out().await;

    // A viewer has no New campaign link.
    browser.sign_in("vera").await;
    browser.goto("/campaigns").await;
    browser.wait(&format!("a[href='/campaigns/{id}']")).await;
    assert!(!browser.has("a[href='/campaigns/new']").await, "a viewer makes none");
    browser.close().await;
    drop(driver);
}
