//! The console's sign-in limits behind a proxy: clients told apart by the address the declared proxy forwards, so a stranger's failures refuse the stranger and never lock a real user out from elsewhere; a client that is not a trusted proxy cannot choose its address; one name guessed from many addresses meets a slower limit of its own.

mod common;

use common::console::{between, Browser, TestConsole, PASSWORD};
use reqwest::header::{CONTENT_TYPE, COOKIE, HOST};
use reqwest::StatusCode;
use std::net::IpAddr;
use std::path::Path;

const PUBLIC_HOST: &str = "send.example.com";

/// What a sign-in answered.
struct Answer {
    status: StatusCode,
    page: String,
}

/// A console behind a proxy at `https://send.example.com`, trusting `trusted_proxies` (none: the
/// default), its admin's password set through the first link.
async fn behind_a_proxy(workspace: &Path, trusted_proxies: &[&str]) -> TestConsole {
    let trusted: Vec<IpAddr> = trusted_proxies.iter().map(|address| address.parse().unwrap()).collect();
    let console = TestConsole::start_with(workspace, |options| {
        options.public_url = Some(format!("https://{PUBLIC_HOST}"));
        options.trusted_proxies = trusted;
    })
    .await;
    let link = console.first_link.clone().unwrap();
    let path = link.trim_start_matches(&format!("https://{PUBLIC_HOST}")).to_string();
    let mut admin = through_the_proxy(&console, None);
    admin.page(&path).await;
    let response = admin
        .post_raw(&path, &[("password", PASSWORD), ("again", PASSWORD)])
        .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "the admin sets a password");
    console
}

/// A browser whose requests carry the public host, connecting from `local_address` (a loopback
/// address; None: the system's choice, 127.0.0.1).
fn through_the_proxy(console: &TestConsole, local_address: Option<&str>) -> Browser {
    let mut browser = console.browser();
    browser.host = Some(PUBLIC_HOST.into());
    browser.client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .local_address(local_address.map(|address| address.parse::<IpAddr>().unwrap()))
        .build()
        .unwrap();
    browser
}

/// Signs in as `name` with the sign-in page's token, both requests saying `X-Forwarded-For:
/// forwarded_for` (as the proxy would append the client's address) when given.
async fn sign_in(browser: &Browser, forwarded_for: Option<&str>, name: &str, password: &str) -> Answer {
    let with_headers = |request: reqwest::RequestBuilder| {
        let request = request.header(HOST, PUBLIC_HOST);
        match forwarded_for {
            Some(addresses) => request.header("x-forwarded-for", addresses),
            None => request,
        }
    };
    let page = with_headers(browser.client.get(format!("{}/signin", browser.base)))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let token = between(&page, "name=\"token\" value=\"", "\"").expect("the sign-in form has a token");
    let response = with_headers(browser.client.post(format!("{}/signin", browser.base)))
        .header(COOKIE, format!("msgbatch_signin={token}"))
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(serde_urlencoded::to_string([("token", token.as_str()), ("name", name), ("password", password)]).unwrap())
        .send()
        .await
        .unwrap();
    Answer {
        status: response.status(),
        page: response.text().await.unwrap(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_proxy_a_stranger_failing_under_made_up_names_is_refused_and_the_admin_elsewhere_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let console = behind_a_proxy(&dir.path().join("w"), &["127.0.0.1"]).await;
    let proxy = through_the_proxy(&console, None);
    let stranger = Some("203.0.113.9");
    for n in 0..20 {
        let answer = sign_in(&proxy, stranger, &format!("made-up-{n}"), "a guess").await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "guess {n}");
    }
    // The stranger is refused, under any name, even with the right password.
    let answer = sign_in(&proxy, stranger, "made-up-20", "a guess").await;
    assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS);
    let answer = sign_in(&proxy, stranger, "admin", PASSWORD).await;
    assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(answer.page.contains("from your address"), "{}", answer.page);
    // The admin, through the same proxy from another client, is not.
    let answer = sign_in(&proxy, Some("198.51.100.7"), "admin", PASSWORD).await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.page);
    console.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_proxy_on_the_same_host_wrong_passwords_for_the_admin_refuse_only_the_client_that_typed_them() {
    let dir = tempfile::tempdir().unwrap();
    // No proxy declared: a loopback peer is the proxy (on the same host).
    let console = behind_a_proxy(&dir.path().join("w"), &[]).await;
    let proxy = through_the_proxy(&console, None);
    // A proxy that appends to what the client sent: the client's own words stay on the left.
    let stranger = Some("198.51.100.7, 203.0.113.9");
    for n in 0..5 {
        let answer = sign_in(&proxy, stranger, "admin", "a guess").await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "guess {n}");
    }
    let answer = sign_in(&proxy, stranger, "admin", PASSWORD).await;
    assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS);
    let answer = sign_in(&proxy, Some("198.51.100.7"), "admin", PASSWORD).await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.page);
    console.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_is_not_a_trusted_proxy_cannot_choose_its_address_with_x_forwarded_for() {
    let dir = tempfile::tempdir().unwrap();
    // The declared proxy is elsewhere: nobody connecting here is it.
    let console = behind_a_proxy(&dir.path().join("w"), &["192.0.2.1"]).await;
    let stranger = through_the_proxy(&console, Some("127.0.0.2"));
    // Each guess names another address, one of them the admin's own.
    for claimed in ["203.0.113.1", "203.0.113.2", "127.0.0.1", "203.0.113.4", "203.0.113.5"] {
        let answer = sign_in(&stranger, Some(claimed), "admin", "a guess").await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "as {claimed}");
    }
    // Counted against its real address, whatever it claims next...
    let answer = sign_in(&stranger, Some("203.0.113.6"), "admin", PASSWORD).await;
    assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS);
    let answer = sign_in(&stranger, None, "admin", PASSWORD).await;
    assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS);
    // ...and not against the address it named.
    let admin = through_the_proxy(&console, Some("127.0.0.1"));
    let answer = sign_in(&admin, None, "admin", PASSWORD).await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.page);
    console.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_of_one_name_from_many_addresses_meet_a_slower_limit_for_that_name() {
    let dir = tempfile::tempdir().unwrap();
    let console = behind_a_proxy(&dir.path().join("w"), &["127.0.0.1"]).await;
    let proxy = through_the_proxy(&console, None);
    // The admin signs in from home first.
    let home = Some("198.51.100.7");
    assert_eq!(
        sign_in(&proxy, home, "admin", PASSWORD).await.status,
        StatusCode::SEE_OTHER
    );
    // Fifty guesses from thirteen addresses, each under its own limit of five.
    for n in 0..50 {
        let address = format!("10.0.0.{}", n / 4 + 1);
        let answer = sign_in(&proxy, Some(&address), "admin", "a guess").await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "guess {n} from {address}");
    }
    // The name is now refused from a place it has not signed in from, even with the right
    // password, while another name there is not; from home the admin still signs in.
    let answer = sign_in(&proxy, Some("192.0.2.44"), "admin", PASSWORD).await;
    assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(answer.page.contains("many addresses"), "{}", answer.page);
    let answer = sign_in(&proxy, Some("192.0.2.44"), "someone", "a guess").await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    let answer = sign_in(&proxy, home, "admin", PASSWORD).await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.page);
    console.stop().await;
}
