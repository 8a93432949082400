//! The audit log as people read it: each line names its campaign (not its id) and its person, and the page filters by campaign, person and month (Korean time).

mod common;

use common::console::{approved, team, uploaded, Browser, NOTIFICATION};

async fn create(editor: &mut Browser, name: &str) -> String {
    let settings = NOTIFICATION.replace("name = \"order-shipped\"", &format!("name = \"{name}\""));
    uploaded(editor, &settings, "phone,name,order\n01050000001,고객1,A-1\n").await
}

/// The rows of the audit page's table: (person, action, campaign cell).
fn rows(page: &str) -> Vec<(String, String, String)> {
    let body = page.split("<tbody>").nth(1).unwrap().split("</tbody>").next().unwrap();
    body.split("<tr>")
        .skip(1)
        .map(|row| {
            let cells: Vec<String> = row
                .split("<td>")
                .skip(1)
                .map(|cell| cell.split("</td>").next().unwrap().to_string())
                .collect();
            (cells[1].clone(), cells[2].clone(), cells[3].clone())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_log_names_campaigns_and_people_and_filters_by_campaign_person_and_month() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let alpha = create(&mut team.editor, "alpha").await;
    let beta = create(&mut team.editor, "beta").await;
    approved(&mut team, &alpha).await;

    let (_, page) = team.viewer.page("/audit").await;
    let all = rows(&page);
    assert!(
        all.iter().any(|(_, _, campaign)| campaign.contains(">alpha</a>")),
        "{all:?}"
    );
    assert!(
        all.iter().any(|(_, _, campaign)| campaign.contains(">beta</a>")),
        "{all:?}"
    );
    assert!(
        !all.iter()
            .any(|(_, _, campaign)| campaign.contains(&format!(">{alpha}<"))),
        "names, not ids"
    );

    let (_, page) = team.viewer.page(&format!("/audit?campaign={alpha}")).await;
    let of_alpha = rows(&page);
    assert!(!of_alpha.is_empty() && of_alpha.iter().all(|(_, _, campaign)| campaign.contains(">alpha</a>")));
    assert!(of_alpha.iter().any(|(_, action, _)| action == "approved"));
    let (_, page) = team.viewer.page(&format!("/audit?campaign={beta}&user=joon")).await;
    assert!(rows(&page).is_empty(), "joon did nothing to beta: {page}");
    let (_, page) = team.viewer.page("/audit?user=joon").await;
    let by_joon = rows(&page);
    assert!(
        !by_joon.is_empty() && by_joon.iter().all(|(user, _, _)| user == "joon"),
        "{by_joon:?}"
    );

    let month = chrono::Utc::now()
        .with_timezone(&msgbatch::campaign::quiet::kst())
        .format("%Y-%m")
        .to_string();
    let (_, page) = team.viewer.page(&format!("/audit?month={month}")).await;
    assert_eq!(rows(&page).len(), all.len(), "every entry is of this month");
    let (_, page) = team.viewer.page("/audit?month=2020-01").await;
    assert!(rows(&page).is_empty());
    assert!(page.contains("value=\"2020-01\""), "the filter is shown as chosen");
}
