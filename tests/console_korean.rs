//! The console in the page's language: a Korean page says in Korean what the engine found (the accounting line, each reject's reason and detail, states, roles), a refusal is a page in the person's language with a way back, and the run's summary follows the viewer's language, not the console's.

mod common;

use common::console::{approved, team, team_with, until_ended, uploaded, Browser, NOTIFICATION};
use common::korean::{english_on, utc_stamps};
use msgbatch::report::Lang;
use reqwest::StatusCode;

/// Six people: two good, one with a number that is no mobile, one without an order number, one
/// twice.
const PEOPLE: &str = "phone,name,order\n\
    010-2000-0001,김민수,A-1\n\
    010-2000-0002,이서연,A-2\n\
    02-123-4567,박지훈,A-3\n\
    010-2000-0004,최유나,\n\
    010-2000-0001,김민수,A-1\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_korean_page_says_what_the_check_found_in_korean() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team_with(dir.path(), |options| options.lang = Some(Lang::Ko)).await;
    let id = uploaded(&mut team.editor, NOTIFICATION, PEOPLE).await;
    let response = {
        team.editor.page(&format!("/campaigns/{id}")).await;
        team.editor.post(&format!("/campaigns/{id}/check"), &[]).await
    };
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let (_, check) = team.editor.page(&format!("/campaigns/{id}/check")).await;
    assert!(
        check.contains("행 5 = 유효 2 + 거부 2 + 중복 1 + 제외 0"),
        "the accounting line in Korean: {check}"
    );
    assert!(
        check.contains("휴대전화 번호 아님 (phone_invalid)"),
        "a reason's meaning, its code beside"
    );
    assert!(
        check.contains("한국 휴대전화 번호가 아닙니다"),
        "the detail in Korean, not the engine's English: {check}"
    );
    assert!(
        check.contains("#{VAR1}에 값이 없습니다"),
        "a missing value said in Korean"
    );
    assert!(check.contains("알림톡"), "the lane by its Korean name");
    assert!(
        check.contains("class=\"phone-preview\"") && check.contains("첫 수신자"),
        "the chosen messages as a phone shows them, in Korean: {check}"
    );
    assert_eq!(
        english_on(&check),
        Vec::<&str>::new(),
        "no English on the Korean check page"
    );

    // The campaign's page names its kind; the test send says what the service answered.
    let (_, campaign) = team.editor.page(&format!("/campaigns/{id}")).await;
    assert!(campaign.contains("<dd>알림톡</dd>"), "{campaign}");
    assert_eq!(
        english_on(&campaign),
        Vec::<&str>::new(),
        "no English on the campaign page"
    );
    let response = team
        .editor
        .post(&format!("/campaigns/{id}/test-send"), &[("numbers", "010-9999-0001")])
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let tested = response.text().await.unwrap();
    assert!(
        tested.contains("010-****-0001") && tested.contains("응답 받음") && tested.contains("접수됨"),
        "{tested}"
    );
    assert_eq!(
        english_on(&tested),
        Vec::<&str>::new(),
        "no English on the test send's page"
    );

    let (_, list) = team.editor.page("/campaigns").await;
    assert!(
        list.contains(">검사 완료<") || list.contains(">작성 중<"),
        "the state in words: {list}"
    );
    assert!(list.contains("(작성자)"), "the person's role in words");
    assert_eq!(english_on(&list), Vec::<&str>::new(), "no English on the campaign list");
    for path in ["/statement", "/opt-outs", "/audit", "/account"] {
        let (status, page) = team.editor.page(path).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert!(page.contains("<html lang=\"ko\""), "{path} says its language");
        assert_eq!(english_on(&page), Vec::<&str>::new(), "no English on {path}");
    }
    let (_, users) = team.admin.page("/users").await;
    assert_eq!(english_on(&users), Vec::<&str>::new(), "no English on the users page");
    team.console.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_checks_advertising_warnings_are_in_the_pages_language() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team_with(dir.path(), |options| options.lang = Some(Lang::Ko)).await;
    // An advertising SMS without its (광고) mark or a free opt-out line.
    let settings = common::console::SMS.replace("callback_no", "advertising = true\ncallback_no");
    let id = uploaded(&mut team.editor, &settings, "phone,name\n010-2000-0001,김민수\n").await;
    team.editor.page(&format!("/campaigns/{id}")).await;
    team.editor.post(&format!("/campaigns/{id}/check"), &[]).await;
    let (_, check) = team.editor.page(&format!("/campaigns/{id}/check")).await;
    assert!(check.contains("광고: 본문이 (광고)로 시작하지 않습니다"), "{check}");
    assert!(check.contains("광고: 본문에 무료 수신거부 안내"), "{check}");
    assert!(!check.contains("does not start with"), "{check}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_is_a_page_in_the_persons_language_with_a_way_back() {
    let dir = tempfile::tempdir().unwrap();
    // The console's own language is English; the approver's browser asks for Korean.
    let mut team = team_with(dir.path(), |_| {}).await;
    let people = "phone,name,order\n010-2000-0001,김민수,A-1\n";
    let id = uploaded(&mut team.editor, NOTIFICATION, people).await;
    approved(&mut team, &id).await;
    team.approver.language = Some("ko-KR,ko;q=0.9,en;q=0.5".into());
    let page = format!("/campaigns/{id}");
    team.approver.page(&page).await;
    team.approver.from_page = Some(page.clone());
    let response = team
        .approver
        .post(&format!("/campaigns/{id}/start"), &[("amount", "₩1")])
        .await;
    assert_eq!(
        response.status(),
        StatusCode::UNPROCESSABLE_ENTITY,
        "a wrong amount is refused"
    );
    let refusal = response.text().await.unwrap();
    assert!(
        refusal.contains("<html lang=\"ko\">"),
        "the page says its language: {refusal}"
    );
    assert!(refusal.contains("<h1>거부됨</h1>"), "a Korean title");
    assert!(refusal.contains("돌아가서 고친 뒤"), "it says what to do, in Korean");
    assert!(
        refusal.contains("시작하려면 예상 금액 ₩8을 입력하세요: 입력한 값(&#34;₩1&#34;)이 다릅니다")
            || refusal.contains("시작하려면 예상 금액 ₩8을 입력하세요: 입력한 값(&quot;₩1&quot;)이 다릅니다"),
        "the refusal itself in Korean, with the figures: {refusal}"
    );
    assert_eq!(english_on(&refusal), Vec::<&str>::new(), "no English on the refusal");
    assert!(
        refusal.contains(&format!("href=\"{page}\" id=\"way-back\"")),
        "back to the campaign it came from: {refusal}"
    );
    assert!(refusal.contains("role=\"alert\""), "the refusal is announced");

    // A page from elsewhere is no way back (no open redirect): the list instead.
    team.approver.from_page = Some("http://evil.example/phish".into());
    let response = team
        .approver
        .post(&format!("/campaigns/{id}/start"), &[("amount", "₩1")])
        .await;
    let refusal = response.text().await.unwrap();
    assert!(refusal.contains("href=\"/campaigns\" id=\"way-back\""), "{refusal}");

    // The same refusal for an English browser is English.
    team.approver.language = Some("en-US".into());
    team.approver.from_page = None;
    let response = team
        .approver
        .post(&format!("/campaigns/{id}/start"), &[("amount", "₩1")])
        .await;
    let refusal = response.text().await.unwrap();
    assert!(
        refusal.contains("<html lang=\"en\">") && refusal.contains("<h1>Refused</h1>"),
        "{refusal}"
    );

    team.approver.language = Some("ko".into());
    let (status, missing) = team.approver.page("/campaigns/nosuch/results").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(missing.contains("찾을 수 없음"), "not found, in Korean: {missing}");
    team.console.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runs_summary_follows_the_viewers_language() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team_with(dir.path(), |_| {}).await;
    let people = "phone,name,order\n010-2000-0001,김민수,A-1\n010-2000-0002,이서연,A-2\n";
    let id = uploaded(&mut team.editor, NOTIFICATION, people).await;
    approved(&mut team, &id).await;
    team.approver.page(&format!("/campaigns/{id}")).await;
    let response = team
        .approver
        .post(&format!("/campaigns/{id}/start"), &[("amount", "₩16")])
        .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "two notifications at ₩8");
    assert_eq!(until_ended(&mut team.approver, &id).await, "done");
    let korean = summary_in(&mut team.viewer, &id, "ko-KR").await;
    assert!(
        korean.contains("lang=\"ko\""),
        "a Korean viewer reads it in Korean: {korean}"
    );
    assert!(korean.contains("발송"), "{korean}");
    let english = summary_in(&mut team.viewer, &id, "en").await;
    assert!(english.contains("lang=\"en\""), "an English viewer in English");

    // The results page around it, for the Korean viewer: the run's line and the charges in words.
    team.viewer.language = Some("ko-KR".into());
    let (_, results) = team.viewer.page(&format!("/campaigns/{id}/results")).await;
    assert!(
        results.contains("행 2 = 거부 0 + 중복 0 + 제외 0 + 발송 2"),
        "the run's accounting in Korean: {results}"
    );
    assert!(results.contains("알림톡"), "the billing class by its name");
    assert_eq!(
        english_on(&results),
        Vec::<&str>::new(),
        "no English on the Korean results page"
    );
    team.console.stop().await;
}

/// The run's summary as a browser asking for `language` reads it, once the report is written.
async fn summary_in(browser: &mut Browser, id: &str, language: &str) -> String {
    browser.language = Some(language.to_string());
    let path = format!("/campaigns/{id}/summary");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (status, page) = browser.page(&path).await;
        if status == StatusCode::OK || std::time::Instant::now() > deadline {
            return page;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[test]
fn utc_stamps_are_found_and_kst_is_not() {
    assert_eq!(utc_stamps("<p>at 2026-11-26T12:38:30Z</p>").len(), 1);
    assert_eq!(utc_stamps("<p>시각 2026-11-26 21:38 KST, 12:38Z</p>").len(), 1);
    assert!(utc_stamps("<p>2026-11-26 21:38:30 KST · Zone</p>").is_empty());
}

/// The account page in Korean: its password fields, its token form and the message after a change
/// are in Korean (they were English: "(current)", "(new)", "password changed").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_account_page_and_its_tokens_are_in_korean() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    team.editor.language = Some("ko-KR".into());
    let (_, page) = team.editor.page("/account").await;
    for korean in ["현재 비밀번호", "새 비밀번호", "API 토큰", "토큰 만들기"] {
        assert!(page.contains(korean), "{korean}: {page}");
    }
    for english in ["(current)", "(new)", "Make a token"] {
        assert!(!page.contains(english), "{english}: {page}");
    }
    assert_eq!(english_on(&page), Vec::<&str>::new(), "{page}");
    let response = team
        .editor
        .post(
            "/account",
            &[
                ("current", common::console::PASSWORD),
                ("password", "another long password"),
                ("again", "another long password"),
            ],
        )
        .await;
    let page = response.text().await.unwrap();
    assert!(page.contains("비밀번호를 바꿨습니다"), "{page}");
    assert!(!page.contains("password changed"), "{page}");
}
