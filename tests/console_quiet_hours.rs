//! A start inside quiet hours, with the clock fixed at 21:49 KST (`MSGBATCH_CLOCK`; alone in its test binary, since the clock is the process's): an advertising campaign under `enforce` is refused on its own page, which offers the next 08:00 KST as a scheduled start, and nothing is sent.

mod common;

use chrono::{FixedOffset, TimeZone};
use common::console::{approved, between, from_kind_picker, location, stop_from_live, team};
use reqwest::StatusCode;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_inside_quiet_hours_is_refused_on_the_campaigns_page_offering_eight_oclock() {
    // 21:49 today in Seoul: the next 08:00 is then in the real future, whenever this runs.
    let kst = FixedOffset::east_opt(9 * 3600).unwrap();
    let today = chrono::Utc::now().with_timezone(&kst).date_naive();
    let evening = kst.from_local_datetime(&today.and_hms_opt(21, 49, 0).unwrap()).unwrap();
    std::env::set_var(msgbatch::campaign::quiet::CLOCK_ENV, evening.to_rfc3339());
    let tomorrow = today + chrono::Days::new(1);
    let next_morning = tomorrow.format("%Y-%m-%d 08:00").to_string();
    // The start form's date-time field holds it as a browser sends it back, in Seoul wall time.
    let next_morning_field = tomorrow.format("%Y-%m-%dT08:00").to_string();

    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let people = "phone,name,coupon\n01050000001,고객1,C-1\n01050000002,고객2,C-2\n";
    let id = from_kind_picker(&mut team.editor, "lms", people).await;
    approved(&mut team, &id).await;

    // The start form says so before anything is pressed, with the time filled in.
    let page_path = format!("/campaigns/{id}");
    let (_, page) = team.approver.page(&page_path).await;
    let notice = between(&page, "id=\"quiet-hours-now\"", "</p>").expect("the page says it is quiet hours");
    assert!(notice.contains(&next_morning), "{notice}");
    assert!(
        page.contains(&format!(
            "type=\"datetime-local\" name=\"start_at\" value=\"{next_morning_field}\""
        )),
        "{page}"
    );

    // Start now anyway: refused on the campaign's own page, nothing recorded.
    let response = team
        .approver
        .post(&format!("/campaigns/{id}/start"), &[("amount", "60")])
        .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let back = location(&response);
    assert!(back.starts_with(&page_path) && !back.ends_with("/live"), "{back}");
    let (_, page) = team.approver.page(&back).await;
    assert!(page.contains("role=\"alert\""), "{page}");
    assert_eq!(
        between(&page, "<span class=\"state ", "\"").as_deref(),
        Some("approved")
    );
    assert!(
        !team.console.workspace.join("runs").join(&id).exists(),
        "no run was made"
    );

    // The offered time, as the form holds it, schedules it.
    let response = team
        .approver
        .post(
            &format!("/campaigns/{id}/start"),
            &[("amount", "60"), ("start_at", next_morning_field.as_str())],
        )
        .await;
    assert_eq!(location(&response), format!("/campaigns/{id}/live"), "scheduled");
    stop_from_live(&mut team.approver, &id).await;
    let state = common::console::until_ended(&mut team.approver, &id).await;
    assert_ne!(state, "done", "nothing was sent before 08:00");
}
