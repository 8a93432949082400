//! Every console page on a phone and for assistive technology, in a real Korean browser (Debian's chromium over WebDriver): no English word of the list and no UTC stamp on any Korean page; at 390×844 no page scrolls sideways, `<html lang>` is set, the nav's links all show (none taller than two lines), sign-out is not cut off and the buttons are big enough to touch; at phone and at desktop size axe-core (from the npm registry, injected by the test) finds no critical or serious violation. Phone and desktop screenshots of every page land in `MSGBATCH_SCREENSHOTS` when it is set.

mod common;

#[path = "common/webdriver.rs"]
mod webdriver;

use common::console::{approved, from_kind_picker, stop_from_live, team, until_ended, uploaded, Team, NOTIFICATION};
use reqwest::StatusCode;
use std::path::Path;
use webdriver::{axe_source, driver, screenshots, Look, Session, Violation};

/// The phone of issue 27 (an iPhone 12 to 15).
const PHONE: (u32, u32) = (390, 844);
/// A laptop, where axe-core looks at the pages.
const DESKTOP: (u32, u32) = (1280, 1000);
/// The smallest a button is to be pressed with a thumb (WCAG 2.5.5's 44 CSS pixels).
const TOUCH: f64 = 44.0;

/// `n` notification recipients (numbers ending in 0: none of the sandbox's failing endings).
fn people(n: usize) -> String {
    let mut csv = String::from("phone,name,order\n");
    for i in 0..n {
        csv.push_str(&format!("0105{:07},고객{i},A-{i}\n", i * 10));
    }
    csv
}

/// A campaign of `n` notifications at ₩8, uploaded, checked, submitted, approved and started.
async fn started(team: &mut Team, settings: &str, n: usize) -> String {
    let id = uploaded(&mut team.editor, settings, &people(n)).await;
    approved(team, &id).await;
    common::console::started(team, &id, &(n * 8).to_string(), "the run starts").await;
    id
}

/// What one page showed.
struct Seen {
    page: String,
    /// `phone` or `desktop`.
    size: &'static str,
    violations: Vec<Violation>,
}

/// The phone's checks on the page in the browser now, as JSON: widths, `lang`, the nav's links,
/// sign-out and the buttons.
const PHONE_CHECKS: &str = r#"
const width = window.innerWidth;
const inside = r => r.width > 0 && r.height > 0 && r.left >= 0 && r.right <= width + 0.5;
const lines = e => {
  const range = document.createRange();
  range.selectNodeContents(e);
  return new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top))).size;
};
const visible = e => { const s = getComputedStyle(e); const r = e.getBoundingClientRect();
  return s.visibility !== 'hidden' && s.display !== 'none' && r.width > 0 && r.height > 0; };
const hit = e => { const r = e.getBoundingClientRect();
  const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return at !== null && (at === e || e.contains(at)); };
const nav = [...document.querySelectorAll('header.bar nav a')].map(a => ({
  text: a.textContent.trim(), inside: inside(a.getBoundingClientRect()), lines: lines(a) }));
const out = document.querySelector('form.who button');
const buttons = [...document.querySelectorAll('main button, main .button, main input[type=submit]')]
  .filter(visible).map(b => { const r = b.getBoundingClientRect();
    return { text: b.textContent.trim() || b.value || b.id, height: r.height, width: r.width, inside: inside(r) }; });
return {
  lang: document.documentElement.getAttribute('lang') || '',
  width: width,
  scroll: document.documentElement.scrollWidth,
  // Without the window's scroll bar (a phone's scroll bar takes no room; headless chromium's does).
  client: document.documentElement.clientWidth,
  nav: nav,
  sign_out: out === null ? null : { inside: inside(out.getBoundingClientRect()), hit: hit(out) },
  buttons: buttons,
};
"#;

/// Looks at the page in the browser now: at phone size what a phone needs (each failure kept in
/// `wrong`, asserted by the caller for every page), a screenshot, then axe-core at desktop size
/// (kept in `seen`).
async fn look(
    session: &Session,
    axe: Option<&str>,
    shots: &Path,
    page: &str,
    seen: &mut Vec<Seen>,
    wrong: &mut Vec<String>,
) {
    session.resize(PHONE.0, PHONE.1).await;
    let phone = session.script(PHONE_CHECKS).await;
    println!("{page} at {} px: {phone}", PHONE.0);
    let mut fails = |what: String| wrong.push(format!("{page}: {what}"));
    if phone["lang"] != "ko" {
        fails(format!(
            "<html lang> does not say the page is Korean: {}",
            phone["lang"]
        ));
    }
    // What a Korean reader sees: no English word of the list, no UTC stamp.
    let html = session.script("return document.documentElement.outerHTML;").await;
    let html = html.as_str().unwrap_or_default();
    let english = common::korean::english_on(html);
    if !english.is_empty() {
        fails(format!("English on the Korean page: {english:?}"));
    }
    let stamps = common::korean::utc_stamps(html);
    if !stamps.is_empty() {
        fails(format!("UTC stamps on a KST console: {stamps:?}"));
    }
    let (scroll, width) = (phone["scroll"].as_f64().unwrap(), phone["width"].as_f64().unwrap());
    assert_eq!(width, f64::from(PHONE.0), "{page}: the viewport is the phone's");
    // Within the viewport (scrollWidth <= innerWidth), and within the room left beside the scroll
    // bar, which is stricter.
    let room = phone["client"].as_f64().unwrap().min(width);
    if scroll > room {
        fails(format!(
            "it scrolls sideways at {width} px (the page is {scroll} px wide, the room {room} px)"
        ));
    }
    let nav = phone["nav"].as_array().unwrap();
    for link in nav {
        if link["inside"] != true {
            fails(format!("a nav link is not (wholly) on the screen: {link}"));
        }
        if !(1..=2).contains(&link["lines"].as_u64().unwrap()) {
            fails(format!("a nav link is taller than two lines: {link}"));
        }
    }
    if page != "signin" && page != "welcome" {
        // An admin's nav: campaigns, statement, opt-outs, audit, users, connections, account.
        if nav.len() != 7 {
            fails(format!("the nav lacks links: {nav:?}"));
        }
        let out = &phone["sign_out"];
        if out["inside"] != true || out["hit"] != true {
            fails(format!("sign-out is cut off or covered: {out}"));
        }
    }
    for button in phone["buttons"].as_array().unwrap() {
        let (height, width) = (button["height"].as_f64().unwrap(), button["width"].as_f64().unwrap());
        if button["inside"] != true || height < TOUCH || width < TOUCH {
            fails(format!(
                "a button is off the screen or smaller than {TOUCH} px: {button}"
            ));
        }
    }
    session.screenshot(shots, &format!("phone-{page}.png")).await;
    // axe-core on the phone too: a table that scrolls inside its box is a region a keyboard must
    // reach.
    if let Some(axe) = axe {
        let violations = session.axe(axe).await;
        seen.push(Seen {
            page: page.to_string(),
            size: "phone",
            violations,
        });
    }

    session.resize(DESKTOP.0, DESKTOP.1).await;
    session.screenshot(shots, &format!("desktop-{page}.png")).await;
    if let Some(axe) = axe {
        let violations = session.axe(axe).await;
        seen.push(Seen {
            page: page.to_string(),
            size: "desktop",
            violations,
        });
    }
}

/// On the page now, the button `css` is there (a phone's checks then find it touch-sized).
async fn has_button(session: &Session, css: &str, page: &str) {
    assert!(session.has(css).await, "{page} has {css}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_fits_a_phone_and_axe_finds_nothing_grave() {
    let Some(driver) = driver().await else {
        return;
    };
    // Without axe-core the phone's checks still run; the axe part says it skipped.
    let axe = axe_source();
    let axe = axe.as_deref();
    let dir = tempfile::tempdir().unwrap();
    let (shots, _temporary) = screenshots();
    let mut team = team(dir.path()).await;

    // The campaigns that make every page exist: one sending slowly (the live page with its
    // controls), one done (results), one checked (check, test send), one waiting for approval,
    // one approved (the start form), one from the kind picker (the composer).
    let slow = format!("{NOTIFICATION}\n[send]\nchunk_size = 1\nmessages_per_second = 1\n");
    let running = started(&mut team, &slow, 120).await;
    let done = started(&mut team, NOTIFICATION, 3).await;
    assert_eq!(until_ended(&mut team.approver, &done).await, "done");
    let checked = uploaded(&mut team.editor, NOTIFICATION, &people(3)).await;
    team.editor.page(&format!("/campaigns/{checked}")).await;
    let response = team.editor.post(&format!("/campaigns/{checked}/check"), &[]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "the check runs");
    let awaiting = uploaded(&mut team.editor, NOTIFICATION, &people(3)).await;
    team.editor.page(&format!("/campaigns/{awaiting}")).await;
    team.editor.post(&format!("/campaigns/{awaiting}/check"), &[]).await;
    let response = team.editor.post(&format!("/campaigns/{awaiting}/submit"), &[]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "it waits for approval");
    let to_start = uploaded(&mut team.editor, NOTIFICATION, &people(3)).await;
    approved(&mut team, &to_start).await;
    let composed = from_kind_picker(&mut team.editor, "lms", &people(3)).await;
    // A token of the editor's (the users page lists it) and a webhook endpoint.
    common::api::token_of(&mut team.editor, "crm").await;
    team.admin.page("/webhooks").await;
    let response = team
        .admin
        .post(
            "/webhooks",
            &[("url", "https://crm.example/hook"), ("event", "campaign.results")],
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK, "the endpoint is added");
    // A second admin, who signs in through the browser.
    let link = team.admin.add_user("nara", "admin").await;

    let session = Session::open_as(
        &driver,
        &team.console.base,
        Look {
            width: DESKTOP.0,
            height: DESKTOP.1,
            lang: Some("ko"),
        },
    )
    .await;
    let mut seen = Vec::new();
    let mut wrong = Vec::new();

    session.goto("/signin").await;
    session.wait("input[name=password]").await;
    look(&session, axe, &shots, "signin", &mut seen, &mut wrong).await;
    session.goto(&link).await;
    session.wait("input[name=again]").await;
    look(&session, axe, &shots, "welcome", &mut seen, &mut wrong).await;
    session.welcome(&link).await;

    // The run still sending first, while its controls show.
    session.goto(&format!("/campaigns/{running}/live")).await;
    for control in ["#pause", "#stop"] {
        session.wait(control).await;
    }
    look(&session, axe, &shots, "live-running", &mut seen, &mut wrong).await;
    has_button(&session, "#stop", "the live page").await;

    let pages = [
        ("campaigns", "/campaigns".to_string()),
        ("new", "/campaigns/new".into()),
        ("edit", format!("/campaigns/{checked}/edit")),
        ("edit-composer", format!("/campaigns/{composed}/edit")),
        ("check", format!("/campaigns/{checked}/check")),
        ("campaign-awaiting", format!("/campaigns/{awaiting}")),
        ("campaign-approved", format!("/campaigns/{to_start}")),
        ("campaign-done", format!("/campaigns/{done}")),
        ("live-ended", format!("/campaigns/{done}/live")),
        ("results", format!("/campaigns/{done}/results")),
        ("statement", "/statement".into()),
        ("opt-outs", "/opt-outs".into()),
        ("audit", "/audit".into()),
        ("users", "/users".into()),
        ("connections", "/connections".into()),
        ("month", "/month".into()),
        ("notifications", "/notifications".into()),
        ("webhooks", "/webhooks".into()),
        ("account", "/account".into()),
        ("error", "/campaigns/no-such-campaign".into()),
        ("campaign-checked", format!("/campaigns/{checked}")),
    ];
    for (page, path) in &pages {
        session.goto(path).await;
        session.wait("main").await;
        look(&session, axe, &shots, page, &mut seen, &mut wrong).await;
        match *page {
            "campaign-awaiting" => has_button(&session, "form[action$='/approve'] button", page).await,
            "campaign-approved" => has_button(&session, "form[action$='/start'] button", page).await,
            _ => {}
        }
    }

    // The test send's page answers the checked campaign's form.
    session.goto(&format!("/campaigns/{checked}")).await;
    session.fill("textarea[name=numbers]", "010-5555-0000").await;
    session
        .wait("form[action$='/test-send'] button")
        .await
        .click()
        .await
        .unwrap();
    session
        .wait_path("the test send's page", |path| path.ends_with("/test-send"))
        .await;
    session.wait("main .phone-preview").await;
    look(&session, axe, &shots, "test-send", &mut seen, &mut wrong).await;

    // The same steps in English, for the docs (the pages are the ones above, in other words).
    let english = Session::open_as(
        &driver,
        &team.console.base,
        Look {
            width: DESKTOP.0,
            height: DESKTOP.1,
            lang: None,
        },
    )
    .await;
    english.sign_in("nara").await;
    for (page, path) in pages.iter().filter(|(page, _)| {
        [
            "campaigns",
            "edit-composer",
            "check",
            "campaign-awaiting",
            "campaign-approved",
            "results",
            "statement",
        ]
        .contains(page)
    }) {
        english.goto(path).await;
        english.wait("main").await;
        english.screenshot(&shots, &format!("en-desktop-{page}.png")).await;
        english.resize(PHONE.0, PHONE.1).await;
        english.screenshot(&shots, &format!("en-phone-{page}.png")).await;
        english.resize(DESKTOP.0, DESKTOP.1).await;
    }
    english.close().await;

    stop_from_live(&mut team.approver, &running).await;
    until_ended(&mut team.approver, &running).await;
    session.close().await;

    let mut grave = Vec::new();
    for Seen { page, size, violations } in &seen {
        for v in violations {
            println!(
                "axe: {page} ({size}): {} ({}) {}: {:?}",
                v.id, v.impact, v.help, v.targets
            );
            if v.grave() {
                grave.push(format!("{page} ({size}): {} ({}) {:?}", v.id, v.impact, v.targets));
            }
        }
    }
    assert!(
        grave.is_empty(),
        "axe-core finds critical or serious violations: {grave:#?}"
    );
    team.console.stop().await;
}
