//! A session that ends while someone types loses nothing: the save leads to sign-in, which leads back to the page, with the typed text back in the form (real chromium over WebDriver; skipped with a message without it).

mod common;
#[path = "common/webdriver.rs"]
mod webdriver;

use common::console::{uploaded, TestConsole, NOTIFICATION, PASSWORD};
use webdriver::{driver, Session};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_session_keeps_the_typed_text_through_sign_in() {
    let Some(driver) = driver().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let console = TestConsole::start(&dir.path().join("workspace")).await;
    let mut admin = console.admin().await;
    let id = uploaded(&mut admin, NOTIFICATION, "phone,name,order\n010-2000-0001,김민수,A-1\n").await;

    let browser = Session::open(&driver, &console.base).await;
    browser.sign_in("admin").await;
    let edit = format!("/campaigns/{id}/edit");
    browser.goto(&edit).await;
    let typed = "#{이름}님, 겨울 세일이 시작되었습니다. 주문번호 #{VAR1}";
    browser.fill("main form textarea", typed).await;

    // The session ends (its cookie is gone, as after 30 idle minutes), then the person saves.
    browser.client.delete_cookie("msgbatch").await.unwrap();
    browser
        .script("document.querySelector('main form textarea').form.requestSubmit(); return 0;")
        .await;
    browser
        .wait_path("the save leads to sign-in", |path| path == "/signin")
        .await;
    let page = browser.text().await;
    assert!(page.contains("sign in to go on where you were"), "it says why: {page}");

    browser.fill("input[name=name]", "admin").await;
    browser.fill("input[name=password]", PASSWORD).await;
    browser
        .script("document.querySelector(\"form[action='/signin']\").requestSubmit(); return 0;")
        .await;
    browser
        .wait_path("signing in leads back to the form", |path| path == edit)
        .await;
    let value = browser
        .script("return document.querySelector('main form textarea').value;")
        .await;
    assert_eq!(value.as_str(), Some(typed), "the typed text is back in the form");
    assert!(
        !browser.has("#draft-restored[hidden]").await,
        "the page says the text was kept"
    );

    // Having saved (or gone elsewhere), the kept copy is gone: the form shows what the console has.
    browser.goto(&format!("/campaigns/{id}")).await;
    browser.goto(&edit).await;
    browser.wait("main form textarea").await;
    let value = browser
        .script("return document.querySelector('main form textarea').value;")
        .await;
    assert_ne!(
        value.as_str(),
        Some(typed),
        "a draft is restored only on the page it was typed on"
    );
    browser.close().await;
    console.stop().await;
}
