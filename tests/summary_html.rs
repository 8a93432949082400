//! summary.html rendered by headless Chromium: the page shows what summary.json holds (name, funnel, won amounts, send times), under its own headings, in English or Korean, escapes what the campaign and the service wrote, and logs no console error.
//!
//! Chromium is Debian's `chromium` package (`.ci/run` installs it when missing). Without it each
//! test prints why and returns. Each page is loaded once with `--dump-dom` (the document after
//! parsing, which is where an unescaped `<script>` would show up as an element) and
//! `--enable-logging=stderr --v=0`, which writes every console message of the page to stderr as
//! a line holding `:CONSOLE`: an uncaught exception, a `console.error`, and every load the page's
//! Content-Security-Policy (`default-src 'none'`) blocks, be it a script, a stylesheet, a font or
//! an image from anywhere. The page has no script and loads nothing, so any such line is a fault;
//! `the_console_check_sees_what_a_page_must_not_do` shows the check is not blind.

mod common;

use common::process::{exec, msgbatch_at, path_str, SandboxProcess};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const DAYTIME: &str = "2026-11-23T11:00:00+09:00";
const HOSTILE_NAME: &str = "Winter <script>alert(1)</script> & \"sale\"";

/// Chromium on PATH; without it, says the test skipped.
fn chromium() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|folder| folder.join("chromium"))
            .find(|candidate| candidate.is_file())
    });
    if found.is_none() {
        eprintln!("skipped: no `chromium` on PATH (.ci/run installs Debian's chromium package)");
    }
    found
}

/// What Chromium made of a page: the DOM after loading, and the console lines it logged.
struct Rendered {
    dom: String,
    console: Vec<String>,
}

impl Rendered {
    /// The page's text as a reader sees it: the body without tags, entities decoded, spaces collapsed.
    fn text(&self) -> String {
        let body = self.dom.split_once("<body").map_or(self.dom.as_str(), |(_, body)| body);
        let mut text = String::new();
        let mut in_tag = false;
        for c in body.chars() {
            match c {
                '<' => in_tag = true,
                '>' if in_tag => {
                    in_tag = false;
                    text.push(' ');
                }
                c if !in_tag => text.push(c),
                _ => {}
            }
        }
        let text = text
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&nbsp;", " ")
            .replace("&amp;", "&");
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

fn render(chromium: &Path, page: &Path) -> Rendered {
    let profile = tempfile::tempdir().unwrap();
    let output = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium starts");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && !output.stdout.is_empty(),
        "chromium rendered nothing ({:?}):\n{stderr}",
        output.status
    );
    Rendered {
        dom: String::from_utf8_lossy(&output.stdout).into_owned(),
        console: stderr
            .lines()
            .filter(|line| line.contains(":CONSOLE"))
            .map(str::to_string)
            .collect(),
    }
}

/// `1,234,567`, as the page groups digits.
fn grouped(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// `2026-11-23T11:00:01.234+09:00` as the page writes it: `2026-11-23 11:00:01`.
fn page_time(rfc3339: &str) -> String {
    format!("{} {}", &rfc3339[..10], &rfc3339[11..19])
}

/// A campaign of `kind` in a fresh folder: valid numbers (one ending in 91, a channel failure
/// that falls back to an SMS; on the gateway 93, delivery failed), a duplicate, an invalid and a
/// missing phone, with prices high enough to need thousands separators.
fn campaign(kind: &str, endpoint: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut people = String::from("phone,name,order\n");
    for (serial, suffix) in ["10", "11", "12", "91", "93", "13", "14"].iter().enumerate() {
        people.push_str(&format!("010300{serial:02}0{suffix},고객{serial},B-{serial}\n"));
    }
    people.push_str("01030000010,중복,B-dup\n02-555-0000,유선,B-x\n,없음,B-y\n");
    std::fs::write(dir.path().join("people.csv"), people).unwrap();
    let message = match kind {
        "alimtalk" => "[message]\nservice = 1001\ntemplate = \"ORDER_SHIPPED\"\n".to_string(),
        _ => format!(
            "[message]\nsender_key = \"{}\"\ntemplate = \"ORDER_SHIPPED\"\n",
            common::DEMO_SENDER_KEY
        ),
    };
    let text = format!(
        "name = {HOSTILE_NAME:?}\nkind = \"{kind}\"\n{endpoint}[credentials]\ngroup_id = \"demo\"\n{message}\
         text = \"#{{이름}}님, 주문하신 상품이 발송되었습니다. 송장번호: #{{VAR1}}\"\nalter = true\ncallback_no = \"0212345678\"\n\
         [recipients]\npath = \"people.csv\"\nname = \"name\"\nvariables = {{ VAR1 = \"order\" }}\n\
         [send]\nchunk_size = 2\n[prices]\nalimtalk = 1500\nfallback_sms = 1200\n"
    );
    std::fs::write(dir.path().join("campaign.toml"), text).unwrap();
    dir
}

/// Runs the campaign in `dir` and reports it with `report_args`; answers summary.json and the page.
fn run_and_report(dir: &Path, run_args: &[&str], report_args: &[&str]) -> (Value, PathBuf) {
    let run = dir.join("run");
    let mut args = vec!["run", "campaign.toml", "--out", path_str(&run)];
    args.extend(run_args);
    exec(msgbatch_at(dir, DAYTIME), &args).expect_code(0, "run");
    let mut args = vec!["report", path_str(&run), "--json"];
    args.extend(report_args);
    let summary = exec(msgbatch_at(dir, DAYTIME), &args).expect_code(0, "report").json();
    (summary, run.join("summary.html"))
}

#[test]
fn the_page_shows_summary_json_figures_escaped_and_without_a_console_error() {
    let Some(chromium) = chromium() else {
        return;
    };
    let dir = campaign("alimtalk", "");
    let (summary, page) = run_and_report(dir.path(), &[], &[]);
    let rendered = render(&chromium, &page);
    assert!(rendered.console.is_empty(), "console: {:#?}", rendered.console);
    let text = rendered.text();

    // The name as written, as text: its `<script>` is not an element of the page.
    assert!(text.contains(&format!("Delivery report {HOSTILE_NAME}")), "{text}");
    assert!(!rendered.dom.contains("<script"), "{}", rendered.dom);
    assert!(text.contains("Notification message (alimTalk) alimtalk"), "{text}");
    // No path of the campaign: the folder it lives in appears nowhere.
    let folder = dir.path().to_str().unwrap();
    assert!(!rendered.dom.contains(folder), "the page shows {folder}");

    let funnel = &summary["funnel"];
    let stages = [
        ("Input rows", "rows"),
        ("Valid recipients", "valid"),
        ("Sent (answered)", "sent"),
        ("Accepted by the service", "accepted"),
        ("Delivered (final result OK)", "delivered"),
    ];
    for (label, field) in stages {
        let value = funnel[field].as_u64().unwrap();
        assert!(
            text.contains(&format!("{label} {}", grouped(value))),
            "{label} {value}: {text}"
        );
    }
    assert_eq!(
        (
            funnel["rows"].as_u64(),
            funnel["valid"].as_u64(),
            funnel["delivered"].as_u64()
        ),
        (Some(10), Some(7), Some(6)),
        "the fixture: 3 not sent, one channel failure"
    );

    // The table per lane: its one lane's row holds summary.json's figures in column order.
    let lane = &summary["lanes"]["alimtalk"];
    let figures: Vec<String> = [
        "rows",
        "sent",
        "accepted",
        "not_accepted",
        "delivered",
        "fallback_sent",
        "uncertain",
        "pending",
    ]
    .iter()
    .map(|field| grouped(lane[field].as_u64().unwrap()))
    .collect();
    assert!(
        text.contains(&format!("By lane Lane Recipients Sent Accepted Not accepted Delivered Fallback Uncertain Not sent yet Notification (alimTalk) {}", figures.join(" "))),
        "{figures:?}: {text}"
    );

    let sends = &summary["sends"];
    for (label, field) in [("First send", "first_sent_at"), ("Last send", "last_sent_at")] {
        let at = page_time(sends[field].as_str().unwrap());
        assert!(text.contains(&format!("{label} {at} KST")), "{label} {at}: {text}");
    }
    let bars: u64 = sends["bars"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(bars, funnel["sent"].as_u64().unwrap(), "every answered row is in a bar");
    assert!(text.contains(&format!("{bars} recipients sent; one bar =")), "{text}");

    // Acceptance and final results each under their own heading, the failure listed once per table.
    assert!(text.contains("Acceptance The service's answer"), "{text}");
    assert!(
        text.contains("Accepted by the service 6 OK 6 Not accepted 1 CH_SBX_BLOCKED 1"),
        "{text}"
    );
    assert!(text.contains("Final results On the standard deployment"), "{text}");
    assert!(
        text.contains("Delivered (final result OK) 6 Not accepted 1 Fallback SMS/LMS sent 1"),
        "{text}"
    );

    // Charges in won with thousands separators, equal to summary.json's.
    let classes = summary["classes"].as_object().unwrap();
    let charged = |class: &str| classes[class]["charged"].as_u64().unwrap();
    assert_eq!((charged("alimtalk"), charged("fallback_sms")), (9_000, 1_200));
    assert!(
        text.contains("Notification (alimTalk) 6 ₩9,000 ₩0 ₩0 ₩0 ₩9,000"),
        "{text}"
    );
    assert!(text.contains("Fallback SMS 1 ₩1,200"), "{text}");
    assert!(text.contains("Total 7 ₩10,200 ₩0 ₩0 ₩0 ₩10,200"), "{text}");

    let rejected = &summary["status"]["rejected_by_reason"];
    assert!(
        text.contains(&format!(
            "phone_invalid not a Korean mobile number {}",
            rejected["phone_invalid"]
        )),
        "{text}"
    );
    assert!(text.contains("phone_missing no phone number 1"), "{text}");
}

#[test]
fn lang_ko_labels_the_page_in_korean_with_the_gateway_final_results() {
    let Some(chromium) = chromium() else {
        return;
    };
    let sandbox = SandboxProcess::start_with(&["--settle-after", "0s"]);
    let dir = campaign("gateway-alimtalk", &sandbox.endpoint_toml());
    let (summary, page) = run_and_report(
        dir.path(),
        &["--wait", "--min-age", "0s", "--poll-every", "10ms"],
        &["--lang", "ko"],
    );
    let rendered = render(&chromium, &page);
    assert!(rendered.console.is_empty(), "console: {:#?}", rendered.console);
    assert!(rendered.dom.contains("<html lang=\"ko\">"), "{}", rendered.dom);
    let text = rendered.text();
    assert!(text.contains(&format!("발송 결과 보고서 {HOSTILE_NAME}")), "{text}");
    let funnel = &summary["funnel"];
    for (label, field) in [
        ("입력 행", "rows"),
        ("유효 수신자", "valid"),
        ("최종 성공", "delivered"),
    ] {
        let value = funnel[field].as_u64().unwrap();
        assert!(
            text.contains(&format!("{label} {}", grouped(value))),
            "{label} {value}: {text}"
        );
    }
    for heading in [
        "발송 단계별 현황",
        "접수 결과",
        "최종 결과",
        "요금",
        "시간대별 발송 수",
        "거부 사유별 행",
    ] {
        assert!(text.contains(heading), "{heading}: {text}");
    }
    let finals = summary["final_results"].as_object().unwrap();
    assert_eq!(finals["FAILED"].as_u64(), Some(1), "{finals:?}");
    assert!(text.contains(&format!("OK 전달 성공 {}", finals["OK"])), "{text}");
    assert!(text.contains("FAILED 실패(요금 환불) 1"), "{text}");
    assert!(text.contains("순 청구액"), "{text}");
}

#[test]
fn the_console_check_sees_what_a_page_must_not_do() {
    let Some(chromium) = chromium() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("bad.html");
    std::fs::write(
        &page,
        "<!doctype html><html><head><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\
         </head><body><p>x</p><script>alert(1)</script><img src=\"https://example.invalid/x.png\"></body></html>",
    )
    .unwrap();
    let rendered = render(&chromium, &page);
    assert_eq!(
        rendered.console.len(),
        2,
        "a blocked script and a blocked image: {:#?}",
        rendered.console
    );
}
