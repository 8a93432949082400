//! The composer over HTTP: each placeholder's column chosen from the recipients file's own header, the first recipient's message previewed, a refused save or create shown again as the form with the person's input and an error summary linking to the field, and the kinds named in the page's language.

mod common;

use common::console::{between, html_unescape, team, uploaded, Browser};
use reqwest::multipart::Form;
use reqwest::StatusCode;

/// A Korean team's export: Hangul headers, the phone column not called `phone`.
const PEOPLE: &str = "휴대폰,고객명,쿠폰코드\n01050000001,김하나,WIN-1\n01050000002,이두리,WIN-2\n";

const SMS: &str = r##"name = "coupon"
kind = "sms"
[message]
service = 3001
text = "#{이름}님, 쿠폰 #{VAR1} 도착"
callback_no = "0212345678"

[recipients]
path = "r.csv"
phone = "휴대폰"
name = "고객명"
"##;

/// The advanced settings box of an edit page.
fn advanced(page: &str) -> String {
    html_unescape(
        &between(
            page,
            "<textarea name=\"settings\" rows=\"16\" class=\"code\">",
            "</textarea>",
        )
        .unwrap(),
    )
}

/// The edit form as the page sends it, with the text, the placeholder's column and the settings given.
fn edit_form(editor: &Browser, text: &str, coupon_column: &str, settings: &str) -> Form {
    Form::new()
        .text("csrf", editor.csrf.clone())
        .text("form_kind", "sms")
        .text("mapping", "1")
        .text("message.service", "3001")
        .text("message.callback_no", "0212345678")
        .text("message.text", text.to_string())
        .text("sheet", "")
        .text("phone", "휴대폰")
        .text("name", "고객명")
        .text("var.VAR1", coupon_column.to_string())
        .text("settings", settings.to_string())
}

fn bubble(page: &str) -> String {
    between(page, "<div class=\"bubble\">", "</div>").unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_placeholder_is_tied_to_a_column_of_the_files_header_and_the_first_recipient_previewed() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let id = uploaded(&mut team.editor, SMS, PEOPLE).await;
    let edit = format!("/campaigns/{id}/edit");

    // Each placeholder has a list of the file's own columns; the name's is chosen already.
    let (status, page) = team.editor.page(&edit).await;
    assert_eq!(status, StatusCode::OK);
    for select in [
        "<select name=\"var.VAR1\" data-column>",
        "<select name=\"name\" data-column>",
    ] {
        let list = between(&page, select, "</select>").unwrap_or_else(|| panic!("{select}: {page}"));
        for column in ["휴대폰", "고객명", "쿠폰코드"] {
            assert!(list.contains(&format!(">{column}</option>")), "{column} in {list}");
        }
    }
    let name_list = between(&page, "<select name=\"name\" data-column>", "</select>").unwrap();
    assert!(name_list.contains("<option selected>고객명</option>"), "{name_list}");
    // The preview fills what it can from the first row; the unmapped placeholder stays as written.
    assert_eq!(bubble(&page), "김하나님, 쿠폰 #{VAR1} 도착");
    assert!(
        page.contains("data-column=\"쿠폰코드\" data-value=\"WIN-1\""),
        "the first row for the live preview"
    );
    assert!(!page.contains("01050000001"), "the first row's phone number is masked");
    let settings = advanced(&page);
    assert!(
        !settings.contains("고객명") && !settings.contains("variables"),
        "the columns are the form's: {settings}"
    );

    // Saved with the column chosen: the mapping is the engine's `variables`.
    let form = edit_form(&team.editor, "#{이름}님, 쿠폰 #{VAR1} 도착", "쿠폰코드", &settings);
    let response = team.editor.post_multipart(&edit, form).await;
    assert_eq!(
        response.status(),
        StatusCode::SEE_OTHER,
        "{}",
        response.text().await.unwrap()
    );
    let saved =
        std::fs::read_to_string(team.console.workspace.join("campaigns").join(&id).join("campaign.toml")).unwrap();
    let saved: toml::Table = toml::from_str(&saved).unwrap();
    assert_eq!(saved["recipients"]["variables"]["VAR1"].as_str(), Some("쿠폰코드"));
    assert_eq!(saved["recipients"]["name"].as_str(), Some("고객명"));

    // The page after the save previews the whole message; so does the check.
    let (_, page) = team.editor.page(&edit).await;
    assert_eq!(bubble(&page), "김하나님, 쿠폰 WIN-1 도착");
    let response = team.editor.post(&format!("/campaigns/{id}/check"), &[]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let (_, check) = team.editor.page(&format!("/campaigns/{id}/check")).await;
    assert!(check.contains("김하나님, 쿠폰 WIN-1 도착"), "{check}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_save_shows_the_form_again_with_the_input_and_a_summary_linking_to_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    team.editor.language = Some("ko-KR,ko;q=0.9".into());
    let id = uploaded(&mut team.editor, SMS, PEOPLE).await;
    let edit = format!("/campaigns/{id}/edit");
    let file = team.console.workspace.join("campaigns").join(&id).join("campaign.toml");
    let (_, page) = team.editor.page(&edit).await;
    let settings = advanced(&page);
    let before = std::fs::read_to_string(&file).unwrap();

    // (typed text, column, settings) → the field in error, and the start of its message.
    let typed = "#{이름}님, 새 쿠폰 #{VAR1} 도착 #{VAR2";
    let cases = [
        (typed, "쿠폰코드", settings.clone(), "f-message-text", "본문의 변수가"),
        (
            "#{이름}님, 새 쿠폰 #{VAR1}",
            "쿠폰번호",
            settings.clone(),
            "f-var-VAR1",
            "쿠폰번호 열은",
        ),
        (
            "#{이름}님, 새 쿠폰 #{VAR1}",
            "쿠폰코드",
            format!("{settings}\n[[[\n"),
            "f-settings",
            "설정을 쓸 수 없습니다",
        ),
    ];
    for (text, column, settings, field, message) in cases {
        let form = edit_form(&team.editor, text, column, &settings);
        let response = team.editor.post_multipart(&edit, form).await;
        assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY, "{field}");
        let page = response.text().await.unwrap();
        let summary = between(&page, "<div class=\"error-summary\" role=\"alert\"", "</div>")
            .unwrap_or_else(|| panic!("an error summary: {page}"));
        assert!(summary.contains("문제가 있습니다"), "in the page's language: {summary}");
        assert!(
            summary.contains(&format!("<a href=\"#{field}\">{message}")),
            "{field}: {summary}"
        );
        assert!(
            page.contains(&format!("id=\"{field}\"")),
            "the field is there to link to"
        );
        assert!(
            page.contains(&format!("<span class=\"field-error\">{message}")),
            "and the message beside it"
        );
        assert!(
            page.contains(&format!(">{text}</textarea>")),
            "the typed text is kept: {page}"
        );
        assert!(
            page.contains("파일은 보관되지 않았습니다"),
            "files are to be chosen again"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), before, "nothing is saved");
    }

    // The new-campaign form: no kind and no file is refused on the kind, the name kept.
    team.editor.page("/campaigns/new").await;
    let form = Form::new()
        .text("csrf", team.editor.csrf.clone())
        .text("name", "겨울 쿠폰")
        .text("kind", "");
    let response = team.editor.post_multipart("/campaigns", form).await;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let page = response.text().await.unwrap();
    assert!(page.contains("<a href=\"#f-kind\">종류를 고르거나"), "{page}");
    assert!(page.contains("value=\"겨울 쿠폰\""), "{page}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kinds_are_named_in_the_pages_language() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    team.editor.language = Some("ko-KR,ko;q=0.9".into());
    let (_, page) = team.editor.page("/campaigns/new").await;
    for name in ["알림톡", "브랜드 메시지", "단문 문자(SMS)", "장문 문자(LMS)"] {
        assert!(page.contains(&format!(">{name}</option>")), "{name}: {page}");
    }
    assert!(!page.contains(">alimtalk</option>"), "{page}");
    assert!(
        page.contains("<option value=\"alimtalk\""),
        "the kind sent is still the engine's"
    );
    let id = uploaded(&mut team.editor, SMS, PEOPLE).await;
    let (_, page) = team.editor.page(&format!("/campaigns/{id}/edit")).await;
    assert!(page.contains("<legend>단문 문자(SMS)</legend>"), "{page}");
    assert!(page.contains("<summary>고급 설정</summary>"), "{page}");
    // The same name on the campaign's page and in its summary: one name for a kind.
    let (_, page) = team.editor.page(&format!("/campaigns/{id}")).await;
    assert!(page.contains("<dd>단문 문자(SMS)</dd>"), "{page}");
    assert!(!page.contains("<dd>sms</dd>"), "{page}");

    team.editor.language = Some("en".into());
    let (_, page) = team.editor.page("/campaigns/new").await;
    assert!(page.contains(">Brand message</option>"), "{page}");
}
