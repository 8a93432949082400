//! Results as people use them: figures and won with separators on the results page, the CSVs for people ready for Korean Excel (a byte-order mark; the raw CSV for programs without), and the statement page opening on the current month.

mod common;

use common::console::{approved, between, team, until_ended, uploaded, NOTIFICATION};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_read_with_separators_csvs_open_in_excel_and_the_statement_opens_on_this_month() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let mut people = String::from("phone,name,order\n");
    for i in 0..1_250 {
        // Numbers ending in 0: none of the sandbox's failing endings (…91 to …96).
        people.push_str(&format!("0105{:07},고객{i},A-{i}\n", i * 10));
    }
    let id = uploaded(&mut team.editor, NOTIFICATION, &people).await;
    approved(&mut team, &id).await;
    common::console::started(&mut team, &id, "₩10,000", "1,250 notifications at ₩8").await;
    assert_eq!(until_ended(&mut team.approver, &id).await, "done");
    common::console::run_status(&team.console.workspace.join("runs").join(&id)).await;

    let (_, results) = team.viewer.page(&format!("/campaigns/{id}/results")).await;
    assert!(results.contains(">1,250<"), "counts with separators: {results}");
    assert!(results.contains("₩10,000"), "won with separators: {results}");
    assert!(
        !results.contains("?bom="),
        "no second link: the people's CSV is Excel's already"
    );

    assert!(
        results.contains("<code>OK</code> · accepted"),
        "a code with its meaning: {results}"
    );

    // A Korean browser's page says what the code means in Korean.
    let get = |path: String, lang: &'static str| {
        let viewer = team.viewer.client.clone();
        let (base, cookie) = (team.viewer.base.clone(), team.viewer.cookie.clone().unwrap());
        async move {
            viewer
                .get(format!("{base}{path}"))
                .header(reqwest::header::COOKIE, cookie)
                .header(reqwest::header::ACCEPT_LANGUAGE, lang)
                .send()
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap()
        }
    };
    let korean = get(format!("/campaigns/{id}/results"), "ko-KR").await;
    let korean = String::from_utf8_lossy(&korean);
    assert!(
        korean.contains("<code>OK</code> · 접수 완료"),
        "in the page's language: {korean}"
    );
    let bom = b"\xEF\xBB\xBF";
    for name in ["report.csv", "rejects.csv"] {
        let bytes = get(format!("/campaigns/{id}/files/{name}"), "en").await;
        assert!(
            bytes.is_empty() || bytes.starts_with(bom),
            "{name} opens in Korean Excel"
        );
    }
    assert!(get(format!("/campaigns/{id}/files/report.csv"), "en")
        .await
        .starts_with(bom));
    assert!(!get(format!("/campaigns/{id}/files/report.raw.csv"), "en")
        .await
        .starts_with(bom));
    assert!(get(format!("/campaigns/{id}/rejects.csv"), "en").await.starts_with(bom));

    // The statement page, opened, shows this month's statement.
    let (_, statement) = team.viewer.page("/statement").await;
    let classes = between(&statement, "<table id=\"classes\">", "</table>").expect("the month's classes");
    assert!(classes.contains("₩10,000"), "{classes}");
}
