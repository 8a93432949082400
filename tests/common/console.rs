//! The console under test: `msgbatch serve` in-process on port 0 (the library's own `prepare` and `run`), and a browser-like HTTP client that keeps its session cookie and sends each form's CSRF token.
#![allow(dead_code)]

use msgbatch::console::{prepare, run, ServeOptions};
use reqwest::header::{HeaderMap, COOKIE, LOCATION, SET_COOKIE};
use reqwest::{Response, StatusCode};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const PASSWORD: &str = "correct horse battery";

/// The sandbox demo account's ORDER_SHIPPED notification, its order number from the column
/// `order` (no quiet hours, no opt-outs): the workspace's one connection serves it.
pub const NOTIFICATION: &str = r##"name = "order-shipped"
kind = "alimtalk"
[message]
service = 1001
template = "ORDER_SHIPPED"
text = "#{이름}님, 주문하신 상품이 발송되었습니다. 송장번호: #{VAR1}"
callback_no = "0212345678"

[recipients]
path = "r.csv"
name = "name"
variables = { VAR1 = "order" }
"##;

/// The sandbox's SMS (service 3001) to each row's `name`: the simplest campaign there is.
pub const SMS: &str = r##"name = "monthly-news"
kind = "sms"
[message]
service = 3001
text = "#{이름}님, 이번 달 소식입니다."
callback_no = "0212345678"

[recipients]
path = "r.csv"
name = "name"
"##;

/// An advertising SMS campaign (service 3001); quiet hours only warn, so a test runs at any hour.
pub const ADVERTISING: &str = r##"name = "winter-sale"
kind = "sms"
[message]
service = 3001
text = "(광고) #{이름}님 겨울 세일 무료거부 0801234567"
callback_no = "0212345678"
advertising = true

[recipients]
path = "r.csv"
name = "name"

[send]
quiet_hours = "warn"

"##;

/// Every file under `dir` (sled's files too, read as bytes) that holds one of `texts`, with the
/// text: what a purge must leave none of.
pub fn files_holding(dir: &Path, texts: &[String]) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            for text in texts {
                if bytes.windows(text.len()).any(|window| window == text.as_bytes()) {
                    found.push((path.clone(), text.clone()));
                }
            }
        }
    }
    found
}

/// `settings` sent one recipient a request, two a second: slow enough to watch a run.
pub fn slow(settings: &str) -> String {
    format!("{settings}\n[send]\nchunk_size = 1\nmessages_per_second = 2\n")
}

/// The text of a page's text area as a browser would send it back.
pub fn html_unescape(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&#34;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// Every run of the workspace sends to one sandbox, so that its ledger holds every campaign's sends.
pub fn connect_to(workspace: &std::path::Path, sandbox: &super::TestSandbox, dir: &std::path::Path) {
    let key = dir.join("api-key");
    std::fs::write(&key, super::DEMO_KEY).unwrap();
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    std::fs::write(
        workspace.join(msgbatch::console::connections::CONNECTIONS_FILE),
        format!(
            "[ledgered]\nendpoint = {{ base_url = \"{}\", gateway_url = \"{}\" }}\n\n[ledgered.credentials]\ngroup_id = \"{}\"\napi_key_file = \"{}\"\n\n[ledgered.prices]\nalimtalk = 8\nsms = 9\nlms = 30\n",
            sandbox.handle.base_url(),
            sandbox.handle.gateway_url(),
            super::DEMO_GROUP,
            key.display()
        ),
    )
    .unwrap();
}

/// A console serving a workspace in a temporary folder.
pub struct TestConsole {
    weak: std::sync::Weak<msgbatch::console::Console>,
    pub base: String,
    pub workspace: PathBuf,
    pub first_link: Option<String>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl TestConsole {
    pub async fn start(workspace: &Path) -> TestConsole {
        TestConsole::start_with(workspace, |_| {}).await
    }

    pub async fn start_with(workspace: &Path, tweak: impl FnOnce(&mut ServeOptions)) -> TestConsole {
        let mut options = ServeOptions::new(workspace.to_path_buf());
        options.listen = "127.0.0.1:0".parse().unwrap();
        // The admin with shell access sets the workspace's connections up beside console.db: the
        // embedded sandbox, with the demo prices.
        write_connections(workspace, msgbatch::console::connections::DEMO_CONNECTIONS);
        tweak(&mut options);
        let prepared = prepare(&options).await.expect("the console starts");
        // Where to connect: the listener itself (behind a proxy, the public URL is elsewhere).
        let base = format!("http://{}", prepared.listener.local_addr().unwrap());
        let weak = std::sync::Arc::downgrade(&prepared.console);
        let first_link = prepared
            .first_link
            .clone()
            .map(|link| link.replace("localhost", "127.0.0.1"));
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(run(prepared, async {
            let _ = stopped.await;
        }));
        TestConsole {
            weak,
            base,
            workspace: workspace.to_path_buf(),
            first_link,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// Stops serving and waits until the console's state (and with it console.db's lock) is
    /// gone, as when the process ends.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while self.weak.upgrade().is_some() {
            assert!(std::time::Instant::now() < deadline, "the console's connections end");
            tokio::task::yield_now().await;
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }

    pub fn browser(&self) -> Browser {
        Browser::new(&self.base)
    }

    /// The admin, signed in through the first link.
    pub async fn admin(&self) -> Browser {
        let mut admin = self.browser();
        admin
            .welcome(self.first_link.as_deref().expect("an empty workspace prints a link"))
            .await;
        admin
    }
}

/// A person at a browser: a session cookie and the CSRF token of the last page.
pub struct Browser {
    pub client: reqwest::Client,
    pub base: String,
    pub cookie: Option<String>,
    pub csrf: String,
    pub host: Option<String>,
    /// The browser's `Accept-Language`, when it sends one.
    pub language: Option<String>,
    /// The page a form was sent from (`Referer`), as a browser sends it.
    pub from_page: Option<String>,
}

impl Browser {
    pub fn new(base: &str) -> Browser {
        Browser {
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            base: base.to_string(),
            cookie: None,
            csrf: String::new(),
            host: None,
            language: None,
            from_page: None,
        }
    }

    fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(cookie) = &self.cookie {
            headers.insert(COOKIE, cookie.parse().unwrap());
        }
        if let Some(host) = &self.host {
            headers.insert(reqwest::header::HOST, host.parse().unwrap());
        }
        if let Some(language) = &self.language {
            headers.insert(reqwest::header::ACCEPT_LANGUAGE, language.parse().unwrap());
        }
        if let Some(page) = &self.from_page {
            headers.insert(reqwest::header::REFERER, self.url(page).parse().unwrap());
        }
        headers
    }

    fn url(&self, path: &str) -> String {
        if path.starts_with("http") {
            path.to_string()
        } else {
            format!("{}{path}", self.base)
        }
    }

    /// Keeps the session cookie a response sets (or clears).
    fn keep_cookie(&mut self, response: &Response) {
        for value in response.headers().get_all(SET_COOKIE) {
            let text = value.to_str().unwrap();
            let pair = text.split(';').next().unwrap();
            let (name, value) = pair.split_once('=').unwrap();
            if name == "msgbatch" || name == "__Host-msgbatch" {
                self.cookie = (!value.is_empty()).then(|| pair.to_string());
            }
        }
    }

    /// A download's bytes, as the browser saves them.
    pub async fn bytes(&mut self, path: &str) -> Vec<u8> {
        self.get(path).await.bytes().await.unwrap().to_vec()
    }

    /// A CSV for people: it must start with the UTF-8 byte-order mark (Korean Excel); its text
    /// after it.
    pub async fn csv_for_excel(&mut self, path: &str) -> String {
        let bytes = self.bytes(path).await;
        assert!(
            bytes.starts_with(b"\xEF\xBB\xBF"),
            "{path} starts with the byte-order mark"
        );
        String::from_utf8(bytes[3..].to_vec()).unwrap()
    }

    pub async fn get(&mut self, path: &str) -> Response {
        let response = self
            .client
            .get(self.url(path))
            .headers(self.headers())
            .send()
            .await
            .unwrap();
        self.keep_cookie(&response);
        response
    }

    /// A page's text; its CSRF token kept for the next form.
    pub async fn page(&mut self, path: &str) -> (StatusCode, String) {
        let response = self.get(path).await;
        let status = response.status();
        let text = response.text().await.unwrap();
        if let Some(token) = csrf_in(&text) {
            self.csrf = token;
        }
        (status, text)
    }

    /// Posts a form with the CSRF token of the last page.
    pub async fn post(&mut self, path: &str, fields: &[(&str, &str)]) -> Response {
        let csrf = self.csrf.clone();
        let mut form: Vec<(&str, &str)> = vec![("csrf", csrf.as_str())];
        form.extend_from_slice(fields);
        self.post_raw(path, &form).await
    }

    /// Posts exactly these fields (no CSRF token added).
    pub async fn post_raw(&mut self, path: &str, fields: &[(&str, &str)]) -> Response {
        let body = serde_urlencoded::to_string(fields).unwrap();
        let response = self
            .client
            .post(self.url(path))
            .headers(self.headers())
            .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .unwrap();
        self.keep_cookie(&response);
        response
    }

    pub async fn post_multipart(&mut self, path: &str, form: reqwest::multipart::Form) -> Response {
        let response = self
            .client
            .post(self.url(path))
            .headers(self.headers())
            .multipart(form)
            .send()
            .await
            .unwrap();
        self.keep_cookie(&response);
        response
    }

    /// Sets the password through a one-time link and signs in.
    pub async fn welcome(&mut self, link: &str) {
        let (status, _) = self.page(link).await;
        assert_eq!(status, StatusCode::OK, "the sign-in link {link} opens");
        let response = self
            .post_raw(link, &[("password", PASSWORD), ("again", PASSWORD)])
            .await;
        assert_eq!(
            response.status(),
            StatusCode::SEE_OTHER,
            "setting the password signs in"
        );
        assert!(self.cookie.is_some(), "a session cookie is set");
        self.page("/campaigns").await;
    }

    pub async fn sign_in(&mut self, name: &str, password: &str) -> Response {
        let (_, page) = self.page("/signin").await;
        let token = between(&page, "name=\"token\" value=\"", "\"").expect("the sign-in form has a token");
        let response = self
            .client
            .post(self.url("/signin"))
            .header(COOKIE, format!("msgbatch_signin={token}"))
            .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(
                serde_urlencoded::to_string([("token", token.as_str()), ("name", name), ("password", password)])
                    .unwrap(),
            )
            .send()
            .await
            .unwrap();
        self.keep_cookie(&response);
        response
    }

    /// Replaces the workspace's connections on the Connections page (as an admin); answers the page.
    pub async fn set_connections(&mut self, text: &str) -> String {
        self.page("/connections").await;
        let response = self.post("/connections", &[("text", text)]).await;
        assert_eq!(response.status(), StatusCode::OK, "the admin saves the connections");
        let page = response.text().await.unwrap();
        assert!(!page.contains("role=\"alert\""), "the connections are taken: {page}");
        page
    }

    /// Adds a user (as an admin) and returns their one-time link.
    pub async fn add_user(&mut self, name: &str, role: &str) -> String {
        self.page("/users").await;
        let response = self.post("/users", &[("name", name), ("role", role)]).await;
        assert_eq!(response.status(), StatusCode::OK, "the admin adds {name}");
        let page = response.text().await.unwrap();
        let link = between(&page, &format!("{name}: "), "<").expect("the page shows the new user's link");
        link.replace("localhost", "127.0.0.1")
    }
}

/// Writes the workspace's connections file, as an admin with shell access does (kept when there is one).
pub fn write_connections(workspace: &Path, text: &str) {
    let path = workspace.join(msgbatch::console::connections::CONNECTIONS_FILE);
    if !path.exists() {
        std::fs::create_dir_all(workspace).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

pub fn csrf_in(page: &str) -> Option<String> {
    between(page, "name=\"csrf\" value=\"", "\"")
}

pub fn between(text: &str, start: &str, end: &str) -> Option<String> {
    let from = text.find(start)? + start.len();
    let to = text[from..].find(end)? + from;
    Some(text[from..to].to_string())
}

/// Where a redirect goes.
pub fn location(response: &Response) -> String {
    response
        .headers()
        .get(LOCATION)
        .map(|value| value.to_str().unwrap().to_string())
        .unwrap_or_default()
}

/// The id in a `/campaigns/ID...` path.
pub fn campaign_id(path: &str) -> String {
    path.trim_start_matches("/campaigns/")
        .split('/')
        .next()
        .unwrap()
        .to_string()
}

/// A console with four people: admin, mina (editor), joon (approver), vera (viewer).
pub struct Team {
    pub console: TestConsole,
    pub admin: Browser,
    pub editor: Browser,
    pub approver: Browser,
    pub viewer: Browser,
}

pub async fn team(dir: &Path) -> Team {
    team_with(dir, |_| {}).await
}

/// [`team`] on a console started with options of its own.
pub async fn team_with(dir: &Path, tweak: impl FnOnce(&mut ServeOptions)) -> Team {
    let console = TestConsole::start_with(&dir.join("workspace"), tweak).await;
    let mut admin = console.admin().await;
    let mut people = Vec::new();
    for (name, role) in [("mina", "editor"), ("joon", "approver"), ("vera", "viewer")] {
        let link = admin.add_user(name, role).await;
        let mut browser = console.browser();
        browser.welcome(&link).await;
        people.push(browser);
    }
    let viewer = people.pop().unwrap();
    let approver = people.pop().unwrap();
    let editor = people.pop().unwrap();
    Team {
        console,
        admin,
        editor,
        approver,
        viewer,
    }
}

/// Checks, submits and approves a campaign (editor, then approver).
pub async fn approved(team: &mut Team, id: &str) {
    team.editor.page(&format!("/campaigns/{id}")).await;
    let response = team.editor.post(&format!("/campaigns/{id}/check"), &[]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let response = team.editor.post(&format!("/campaigns/{id}/submit"), &[]).await;
    assert_eq!(
        response.status(),
        StatusCode::SEE_OTHER,
        "a checked campaign is submitted"
    );
    let (_, page) = team.approver.page(&format!("/campaigns/{id}")).await;
    // An advertising campaign that does not enforce quiet hours: the approver ticks that they saw it.
    let fields: &[(&str, &str)] = if page.contains("name=\"quiet_hours_ack\"") {
        &[("quiet_hours_ack", "on")]
    } else {
        &[]
    };
    let response = team.approver.post(&format!("/campaigns/{id}/approve"), fields).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "another person approves it");
}

/// An approved campaign started by the approver with the estimate typed as `amount`; the start
/// leads to its live page (`why` says why the amount is the estimate).
pub async fn started(team: &mut Team, id: &str, amount: &str, why: &str) {
    team.approver.page(&format!("/campaigns/{id}")).await;
    let response = team
        .approver
        .post(&format!("/campaigns/{id}/start"), &[("amount", amount)])
        .await;
    assert_eq!(location(&response), format!("/campaigns/{id}/live"), "{why}");
}

/// `form` with a new campaign's campaign file and recipients CSV.
pub fn with_campaign_files(
    form: reqwest::multipart::Form,
    settings: &str,
    recipients_csv: &str,
) -> reqwest::multipart::Form {
    form.part(
        "campaign_file",
        reqwest::multipart::Part::text(settings.to_string()).file_name("campaign.toml"),
    )
    .part(
        "recipients",
        reqwest::multipart::Part::text(recipients_csv.to_string()).file_name("people.csv"),
    )
}

/// A new campaign from a campaign file and a recipients CSV, as an editor uploads them; its id.
pub async fn uploaded(editor: &mut Browser, settings: &str, recipients_csv: &str) -> String {
    editor.page("/campaigns/new").await;
    // The page's form: its CSRF token first.
    let form = with_campaign_files(
        reqwest::multipart::Form::new().text("csrf", editor.csrf.clone()),
        settings,
        recipients_csv,
    );
    let response = editor.post_multipart("/campaigns", form).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "the upload makes a campaign");
    campaign_id(&location(&response))
}

/// A new campaign of `kind` from the kind picker (the console's starting settings) with a
/// recipients CSV, as an editor makes it; its id.
pub async fn from_kind_picker(editor: &mut Browser, kind: &str, recipients_csv: &str) -> String {
    editor.page("/campaigns/new").await;
    let form = reqwest::multipart::Form::new()
        .text("csrf", editor.csrf.clone())
        .text("name", format!("new {kind}"))
        .text("kind", kind.to_string())
        .part(
            "recipients",
            reqwest::multipart::Part::text(recipients_csv.to_string()).file_name("people.csv"),
        );
    let response = editor.post_multipart("/campaigns", form).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "the campaign is made");
    let id = campaign_id(&location(&response));
    // A new campaign names no account: the team types its own service and sender number (here
    // the sandbox's demo account's),
    // and ties the text's #{VAR1} to their file's third column.
    let third_column = recipients_csv
        .lines()
        .next()
        .and_then(|header| header.split(',').nth(2))
        .unwrap_or_default();
    let account: &[(&str, &str)] = match kind {
        "sms" | "lms" | "text" => &[
            ("message.service", "3001"),
            ("message.callback_no", "0212345678"),
            ("var.VAR1", third_column),
        ],
        _ => &[],
    };
    if !account.is_empty() {
        saved_edit_form(editor, &id, account).await;
    }
    id
}

/// Sends the campaign's edit form as a browser does: every field as the page holds it (inputs,
/// ticked boxes, chosen options, text areas), with `changes` typed over it.
pub async fn saved_edit_form(editor: &mut Browser, id: &str, changes: &[(&str, &str)]) {
    let edit = format!("/campaigns/{id}/edit");
    let (_, page) = editor.page(&edit).await;
    let start = page.find(&format!("action=\"{edit}\"")).expect("the edit form");
    let end = start + page[start..].find("</form>").expect("the form's end");
    let mut fields = form_fields(&page[start..end]);
    for (name, value) in changes {
        fields.retain(|(field, _)| field != name);
        fields.push((name.to_string(), value.to_string()));
    }
    let mut form = reqwest::multipart::Form::new();
    for (name, value) in fields {
        form = form.text(name, value);
    }
    let response = editor.post_multipart(&edit, form).await;
    assert_eq!(
        response.status(),
        StatusCode::SEE_OTHER,
        "the edit is saved: {}",
        response.text().await.unwrap_or_default()
    );
}

/// The named fields of an HTML form and the values a browser would send (no file inputs).
fn form_fields(form: &str) -> Vec<(String, String)> {
    let attribute =
        |tag: &str, name: &str| between(tag, &format!(" {name}=\""), "\"").map(|value| html_unescape(&value));
    let mut fields = Vec::new();
    let mut rest = form;
    while let Some(open) = rest.find('<') {
        rest = &rest[open + 1..];
        let tag_end = rest.find('>').unwrap_or(rest.len());
        let tag = format!(" {}", &rest[..tag_end]);
        let element = tag.split_whitespace().next().unwrap_or("").to_string();
        let Some(name) = attribute(&tag, "name") else { continue };
        match element.as_str() {
            "input" => {
                let kind = attribute(&tag, "type").unwrap_or_default();
                match kind.as_str() {
                    "file" | "submit" => {}
                    "checkbox" => {
                        if tag.contains(" checked") {
                            fields.push((name, attribute(&tag, "value").unwrap_or_else(|| "on".into())));
                        }
                    }
                    _ => fields.push((name, attribute(&tag, "value").unwrap_or_default())),
                }
            }
            "textarea" => {
                let body = &rest[tag_end + 1..];
                let text = &body[..body.find("</textarea>").unwrap_or(0)];
                fields.push((name, html_unescape(text)));
            }
            "select" => {
                let body = &rest[tag_end + 1..];
                let options = &body[..body.find("</select>").unwrap_or(0)];
                let chosen = options
                    .split("<option")
                    .skip(1)
                    .find(|option| option.split('>').next().unwrap_or("").contains(" selected"))
                    .map(|option| {
                        let (head, text) = option.split_once('>').unwrap_or((option, ""));
                        let text = text.split("</option>").next().unwrap_or("");
                        between(&format!(" {head}"), " value=\"", "\"").unwrap_or_else(|| text.to_string())
                    })
                    .unwrap_or_default();
                fields.push((name, html_unescape(&chosen)));
            }
            _ => {}
        }
    }
    fields
}

/// Presses Stop on the campaign's live page, as an approver does; the console answers with a redirect.
pub async fn stop_from_live(browser: &mut Browser, id: &str) {
    browser.page(&format!("/campaigns/{id}/live")).await;
    let response = browser
        .post(&format!("/campaigns/{id}/control"), &[("action", "stop")])
        .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "the stop is taken");
}

/// Waits for the campaign's run to end (each look is a page load, as a person reloading).
pub async fn until_ended(browser: &mut Browser, id: &str) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (_, page) = browser.page(&format!("/campaigns/{id}")).await;
        let state = between(&page, "<span class=\"state ", "\"").unwrap_or_default();
        // `approved` again after a start: the run was refused before it recorded anything.
        if ["done", "stopped", "incomplete", "approved"].contains(&state.as_str()) {
            if state != "done" {
                println!("{page}");
            }
            return state;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the run ends within a minute: {state}\n{page}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The run's status once nothing holds its directory (the console writes the report right after
/// the run ends, and the lock keeps a reader out meanwhile).
pub async fn run_status(run_dir: &Path) -> msgbatch::engine::Status {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        match msgbatch::engine::status(run_dir) {
            Ok(status) => return status,
            Err(error) if error.to_string().contains("in use") && std::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(error) => panic!("status of {}: {error:#}", run_dir.display()),
        }
    }
}
