//! The console's pages print the times they recorded in Korean wall time (`2026-11-26 21:38 KST`), never as UTC stamps (`…T12:38:30Z`).

mod common;

use common::console::{approved, from_kind_picker, team, uploaded, NOTIFICATION};

/// Whether `page` holds an RFC 3339 UTC stamp such as `2026-11-26T12:38:30Z`.
fn has_utc_stamp(page: &str) -> bool {
    let bytes = page.as_bytes();
    bytes.windows(9).any(|window| {
        let digit = |at: usize| window[at].is_ascii_digit();
        digit(0)
            && digit(1)
            && window[2] == b':'
            && digit(3)
            && digit(4)
            && window[5] == b':'
            && digit(6)
            && digit(7)
            && window[8] == b'Z'
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_print_recorded_times_in_korean_wall_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let id = uploaded(
        &mut team.editor,
        NOTIFICATION,
        "phone,name,order
01050000001,고객1,A-1
",
    )
    .await;
    approved(&mut team, &id).await;
    from_kind_picker(&mut team.editor, "sms", "phone,name,coupon\n01050000002,고객2,C-2\n").await;
    let today = chrono::Utc::now()
        .with_timezone(&msgbatch::campaign::quiet::kst())
        .format("%Y-%m-%d")
        .to_string();
    for path in [
        "/campaigns".to_string(),
        format!("/campaigns/{id}"),
        format!("/campaigns/{id}/check"),
        "/audit".to_string(),
    ] {
        let (_, page) = team.admin.page(&path).await;
        assert!(!has_utc_stamp(&page), "{path} prints a UTC stamp: {page}");
        assert!(page.contains(&today) && page.contains(" KST"), "{path}: {page}");
    }
}

#[test]
fn the_stamp_finder_finds_stamps() {
    assert!(has_utc_stamp("<td>2026-11-26T12:38:30Z</td>"));
    assert!(!has_utc_stamp("<td>2026-11-26 21:38 KST</td>"));
}
