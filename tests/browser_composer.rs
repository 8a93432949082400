//! The composer in a real browser (Debian's chromium over WebDriver; skipped with a line when it is not installed): a placeholder tied to a column through its select and the first recipient's message previewed live as the text is typed, a placeholder typed anew getting its own list, and a refused save keeping the typed text; screenshots of the Korean edit page on a desktop and a phone land in `MSGBATCH_SCREENSHOTS` when it is set.

mod common;

#[path = "common/webdriver.rs"]
mod webdriver;

use common::console::{team, uploaded, PASSWORD};
use webdriver::{driver, screenshots, Look, Session};

const PEOPLE: &str = "휴대폰,고객명,쿠폰코드\n01050000001,김하나,WIN-1\n01050000002,이두리,WIN-2\n";

const SMS: &str = r##"name = "새해 쿠폰"
kind = "text"
[message]
service = 3001
text = "#{이름}님, 쿠폰 #{VAR1} 도착"
callback_no = "0212345678"

[recipients]
path = "r.csv"
phone = "휴대폰"
name = "고객명"
"##;

const KOREAN_DESKTOP: Look = Look {
    width: 1366,
    height: 900,
    lang: Some("ko"),
};

/// The value of the page's main text box.
async fn typed_text(session: &Session) -> String {
    session
        .script("return document.querySelector(\"textarea[name='message.text']\").value")
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_column_chosen_and_a_text_typed_show_in_the_preview_and_a_refusal_keeps_the_text() {
    let Some(driver) = driver().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (shots, _temporary) = screenshots();
    let mut team = team(dir.path()).await;
    let id = uploaded(&mut team.editor, SMS, PEOPLE).await;

    let mina = Session::open_as(&driver, &team.console.base, KOREAN_DESKTOP).await;
    mina.goto("/signin").await;
    mina.fill("input[name=name]", "mina").await;
    mina.fill("input[name=password]", PASSWORD).await;
    mina.wait("form[action='/signin'] button[type=submit]")
        .await
        .click()
        .await
        .unwrap();
    mina.wait("form.who").await;
    mina.goto(&format!("/campaigns/{id}/edit")).await;

    // The placeholder's list holds the file's own header; choosing the coupon column fills the preview.
    let bubble = ".composer-preview .bubble";
    mina.wait_text(bubble, "the preview before a column is chosen", |text| {
        text == "김하나님, 쿠폰 #{VAR1} 도착"
    })
    .await;
    mina.wait("select[name='var.VAR1']")
        .await
        .select_by_label("쿠폰코드")
        .await
        .unwrap();
    mina.wait_text(bubble, "the first recipient's coupon", |text| {
        text == "김하나님, 쿠폰 WIN-1 도착"
    })
    .await;

    // Typed: the preview follows, line break and all, with its size; a new placeholder gets a list.
    mina.fill(
        "textarea[name='message.text']",
        "#{이름}님, 새해 쿠폰 #{VAR1}\n#{VAR2}까지 쓰세요",
    )
    .await;
    mina.wait_text(bubble, "the typed text filled", |text| {
        text.starts_with("김하나님, 새해 쿠폰 WIN-1\n#{VAR2}")
    })
    .await;
    mina.wait("select[name='var.VAR2']").await;
    let size = mina
        .wait_text(".composer-preview .phone-size", "the size in Korean", |size| {
            size.contains("바이트")
        })
        .await;
    assert!(size.contains("SMS"), "{size}");
    mina.screenshot(&shots, "composer-ko-desktop.png").await;
    mina.resize(390, 844).await;
    let overflow = mina
        .number("return document.documentElement.scrollWidth - window.innerWidth")
        .await;
    assert!(overflow <= 0.0, "no horizontal scroll at 390 px: {overflow}");
    mina.screenshot(&shots, "composer-ko-phone.png").await;
    mina.resize(1366, 900).await;

    // A placeholder left open: the save is refused, the form comes back with the text as typed.
    let broken = "#{이름}님, 쿠폰 #{VAR1 도착";
    mina.fill("textarea[name='message.text']", broken).await;
    mina.wait("form.composer button[type=submit]")
        .await
        .click()
        .await
        .unwrap();
    let summary = mina
        .wait_text(".error-summary", "the error summary", |text| {
            text.contains("문제가 있습니다")
        })
        .await;
    assert!(summary.contains("본문의 변수가"), "{summary}");
    assert_eq!(typed_text(&mina).await, broken);
    mina.screenshot(&shots, "composer-ko-refused.png").await;
    // Its link leads to the field.
    mina.wait(".error-summary a[href='#f-message-text']")
        .await
        .click()
        .await
        .unwrap();
    let focused = mina.script("return document.activeElement.name").await;
    assert_eq!(focused.as_str(), Some("message.text"));
    mina.close().await;
}
