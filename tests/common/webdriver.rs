//! A real browser for the console's tests: chromedriver started on a free port (with the chromium it starts, killed together), one WebDriver session per person (headless chromium, its own profile, a window size and a browser language of its own), the few steps the tests take in it, and axe-core run on a page.
#![allow(dead_code)]

use crate::common::console::PASSWORD;
use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// The longest any wait for a condition lasts.
pub const DEADLINE: Duration = Duration::from_secs(60);
/// How often a condition is looked at again.
pub const POLL: Duration = Duration::from_millis(100);

/// chromedriver, started by the test on a free port; killed (with the browsers it started, all in
/// its process group) when dropped.
pub struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(group) = rustix::process::Pid::from_raw(self.child.id() as i32) {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// chromedriver once its `/status` says ready; `None` (with a line saying so) when chromium or
/// chromedriver is not installed.
pub async fn driver() -> Option<Driver> {
    if !Path::new(CHROMIUM).exists() || !Path::new(CHROMEDRIVER).exists() {
        println!("skipped: chromium/chromedriver not installed");
        return None;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut command = Command::new(CHROMEDRIVER);
    command
        .arg(format!("--port={port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let driver = Driver {
        child: command.spawn().expect("chromedriver starts"),
        url: format!("http://127.0.0.1:{port}"),
    };
    let http = reqwest::Client::new();
    let deadline = Instant::now() + DEADLINE;
    loop {
        if let Ok(response) = http.get(format!("{}/status", driver.url)).send().await {
            if let Ok(status) = response.json::<serde_json::Value>().await {
                if status["value"]["ready"] == serde_json::Value::Bool(true) {
                    return Some(driver);
                }
            }
        }
        assert!(Instant::now() < deadline, "chromedriver answers ready within a minute");
        tokio::time::sleep(POLL).await;
    }
}

/// One person's browser: a WebDriver session of headless chromium with its own profile.
pub struct Session {
    pub client: Client,
    base: String,
    _profile: tempfile::TempDir,
}

/// How a session's browser looks: its window size and the language it asks pages in.
#[derive(Clone, Copy)]
pub struct Look {
    pub width: u32,
    pub height: u32,
    /// The browser's language (`--lang` and `Accept-Language`); `None`: chromium's default.
    pub lang: Option<&'static str>,
}

/// A desktop browser, as [`Session::open`] opens it.
pub const DESKTOP: Look = Look {
    width: 1280,
    height: 1000,
    lang: None,
};

impl Session {
    pub async fn open(driver: &Driver, base: &str) -> Session {
        Session::open_as(driver, base, DESKTOP).await
    }

    /// A session whose browser has the window size and language of `look`.
    pub async fn open_as(driver: &Driver, base: &str, look: Look) -> Session {
        let profile = tempfile::tempdir().unwrap();
        let mut args = vec![
            "--headless=new".to_string(),
            "--no-sandbox".into(),
            "--disable-gpu".into(),
            "--disable-quic".into(),
            "--no-first-run".into(),
            "--disable-background-networking".into(),
            "--disable-component-update".into(),
            "--disable-sync".into(),
            format!("--user-data-dir={}", profile.path().display()),
            format!("--window-size={},{}", look.width, look.height),
        ];
        let mut prefs = serde_json::Map::new();
        if let Some(lang) = look.lang {
            args.push(format!("--lang={lang}"));
            prefs.insert("intl.accept_languages".into(), lang.into());
        }
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "goog:chromeOptions".into(),
            serde_json::json!({ "binary": CHROMIUM, "args": args, "prefs": prefs }),
        );
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(capabilities)
            .connect(&driver.url)
            .await
            .expect("a WebDriver session of chromium");
        Session {
            client,
            base: base.to_string(),
            _profile: profile,
        }
    }

    pub async fn goto(&self, path: &str) {
        let url = if path.starts_with("http") {
            path.to_string()
        } else {
            format!("{}{path}", self.base)
        };
        self.client.goto(&url).await.unwrap();
    }

    /// The current path (what follows the host).
    pub async fn path(&self) -> String {
        self.client.current_url().await.unwrap().path().to_string()
    }

    /// The element, once the page has it (after a click's navigation, say).
    pub async fn wait(&self, css: &str) -> Element {
        let deadline = Instant::now() + DEADLINE;
        loop {
            if let Ok(element) = self.client.find(Locator::Css(css)).await {
                return element;
            }
            assert!(
                Instant::now() < deadline,
                "{css} shows within a minute on {}",
                self.path().await
            );
            tokio::time::sleep(POLL).await;
        }
    }

    /// An element's text, once the page has it and the text passes `ready`.
    pub async fn wait_text(&self, css: &str, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + DEADLINE;
        let mut last = String::new();
        loop {
            if let Ok(element) = self.client.find(Locator::Css(css)).await {
                if let Ok(text) = element.text().await {
                    if ready(&text) {
                        return text;
                    }
                    last = text;
                }
            }
            if Instant::now() >= deadline {
                let page = self.client.source().await.unwrap_or_default();
                panic!(
                    "{what} within a minute (last {css}: {last:?}) on {}: {page}",
                    self.path().await
                );
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Waits until the browser is on a page whose path passes `ready`; the path.
    pub async fn wait_path(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let path = self.path().await;
            if ready(&path) {
                return path;
            }
            assert!(Instant::now() < deadline, "{what} within a minute (at {path})");
            tokio::time::sleep(POLL).await;
        }
    }

    /// Clicks the button `css`, after checking its label.
    pub async fn click(&self, css: &str, label: &str) {
        let button = self.wait(css).await;
        assert_eq!(button.text().await.unwrap().trim(), label, "the button {css}");
        button.click().await.unwrap();
    }

    pub async fn fill(&self, css: &str, text: &str) {
        let field = self.wait(css).await;
        field.clear().await.unwrap();
        field.send_keys(text).await.unwrap();
    }

    /// The page's visible text.
    pub async fn text(&self) -> String {
        self.wait("body").await.text().await.unwrap()
    }

    pub async fn has(&self, css: &str) -> bool {
        !self.client.find_all(Locator::Css(css)).await.unwrap().is_empty()
    }

    /// Sets the password through a one-time link (which signs in).
    pub async fn welcome(&self, link: &str) {
        self.goto(link).await;
        self.fill("input[name=password]", PASSWORD).await;
        self.fill("input[name=again]", PASSWORD).await;
        self.wait("form[action^='/welcome/'] button[type=submit]")
            .await
            .click()
            .await
            .unwrap();
        self.wait_path("setting the password signs in", |path| !path.starts_with("/welcome/"))
            .await;
        self.wait("form.who").await;
    }

    pub async fn sign_in(&self, name: &str) {
        self.goto("/signin").await;
        self.fill("input[name=name]", name).await;
        self.fill("input[name=password]", PASSWORD).await;
        self.click("form[action='/signin'] button[type=submit]", "Sign in")
            .await;
        let who = self.wait_text("form.who span", "the top bar names who signed in", |who| {
            who.starts_with(name)
        });
        who.await;
    }

    pub async fn sign_out(&self) {
        self.click("form.who button", "Sign out").await;
        self.wait_path("signing out leaves the console", |path| path == "/signin")
            .await;
    }

    pub async fn screenshot(&self, folder: &Path, name: &str) {
        let png = self.client.screenshot().await.unwrap();
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        std::fs::write(folder.join(name), png).unwrap();
    }

    /// Resizes the window, and waits until the page's viewport has the new width.
    pub async fn resize(&self, width: u32, height: u32) {
        self.client.set_window_size(width, height).await.unwrap();
        let deadline = Instant::now() + DEADLINE;
        loop {
            let inner = self.number("return window.innerWidth").await;
            if inner == f64::from(width) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the viewport is {width} px wide within a minute (it is {inner})"
            );
            tokio::time::sleep(POLL).await;
        }
    }

    /// What a script returns, as a number.
    pub async fn number(&self, script: &str) -> f64 {
        let value = self.client.execute(script, vec![]).await.unwrap();
        value
            .as_f64()
            .unwrap_or_else(|| panic!("{script} answers a number: {value}"))
    }

    /// What a script returns, as JSON.
    pub async fn script(&self, script: &str) -> serde_json::Value {
        self.client.execute(script, vec![]).await.unwrap()
    }

    /// axe-core's violations on the page as it is now (`source`: axe.min.js, see [`axe_source`]).
    pub async fn axe(&self, source: &str) -> Vec<Violation> {
        let present = self.script("return typeof window.axe === 'object'").await;
        if present != serde_json::Value::Bool(true) {
            self.client.execute(source, vec![]).await.unwrap();
        }
        let answer = self
            .client
            .execute_async(
                "const done = arguments[arguments.length - 1];
                 axe.run(document, { resultTypes: ['violations'] })
                    .then(r => done(JSON.stringify(r.violations.map(v => ({
                        id: v.id, impact: v.impact || '', help: v.help,
                        targets: v.nodes.map(n => n.target.join(' ')) })))))
                    .catch(e => done(JSON.stringify({ error: String(e) })));",
                vec![],
            )
            .await
            .unwrap();
        let text = answer.as_str().expect("axe answers its violations as JSON text");
        serde_json::from_str(text).unwrap_or_else(|_| panic!("axe ran: {text}"))
    }

    pub async fn close(self) {
        let _ = self.client.close().await;
    }
}

/// Where the screenshots go: `MSGBATCH_SCREENSHOTS`, else a temporary folder.
pub fn screenshots() -> (PathBuf, Option<tempfile::TempDir>) {
    match std::env::var_os("MSGBATCH_SCREENSHOTS") {
        Some(folder) => {
            let folder = PathBuf::from(folder);
            std::fs::create_dir_all(&folder).unwrap();
            (folder, None)
        }
        None => {
            let temporary = tempfile::tempdir().unwrap();
            (temporary.path().to_path_buf(), Some(temporary))
        }
    }
}

/// One rule that axe-core finds broken on a page, and where.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Violation {
    pub id: String,
    /// `minor`, `moderate`, `serious` or `critical`.
    pub impact: String,
    pub help: String,
    /// The CSS selectors of the elements that break it.
    pub targets: Vec<String>,
}

impl Violation {
    /// Critical or serious: what a person with a screen reader or a keyboard cannot get past.
    pub fn grave(&self) -> bool {
        self.impact == "critical" || self.impact == "serious"
    }
}

/// axe-core's `axe.min.js`: `MSGBATCH_AXE`, else where `.ci/run` installs it from the npm registry
/// (`target/axe/node_modules/axe-core/axe.min.js`); `None` (with a line saying so) when absent.
pub fn axe_source() -> Option<String> {
    let path = std::env::var_os("MSGBATCH_AXE")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/axe/node_modules/axe-core/axe.min.js"));
    match std::fs::read_to_string(&path) {
        Ok(source) => Some(source),
        Err(_) => {
            println!(
                "skipped: axe-core not installed at {} (`.ci/run` installs it; or set MSGBATCH_AXE)",
                path.display()
            );
            None
        }
    }
}
