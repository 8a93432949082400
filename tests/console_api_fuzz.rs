//! The console's API fuzzed from its own OpenAPI document with Schemathesis, on a viewer's, an editor's and an approver's token in turn: no server error, no answer outside the document, and nothing done beyond the token's role (read back from the audit log). Skipped, saying so, where Schemathesis is not installed (`.ci/run` installs it into target/schemathesis).

mod common;

use common::api::{token_of, Api};
use common::console::{team, SMS};
use reqwest::StatusCode;
use std::path::PathBuf;

fn schemathesis() -> Option<PathBuf> {
    let path = std::env::var_os("MSGBATCH_SCHEMATHESIS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/schemathesis/bin/schemathesis"));
    path.exists().then_some(path)
}

/// What each role may leave in the audit log, at the most.
fn allowed(role: &str, action: &str) -> bool {
    // Their own: a sign-in, a password, a token made on the account page.
    let anyone = [
        "signed in",
        "set password",
        "made an API token",
        "signed in with an API token",
    ];
    let reading = ["downloaded", "statement"];
    let editing = [
        "created",
        "edited",
        "checked",
        "submitted",
        "test send",
        "opt-outs added",
        "voided",
    ];
    let approving = [
        "approved",
        "started",
        "resumed",
        "opt-outs removed",
        "pause",
        "resume",
        "stop",
        "rate",
    ];
    anyone.contains(&action)
        || reading.contains(&action)
        || (role != "viewer" && editing.contains(&action))
        || (role == "approver" && approving.contains(&action))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fuzzing_the_api_from_its_document_finds_no_server_error_no_stray_answer_and_no_step_beyond_a_role() {
    let Some(schemathesis) = schemathesis() else {
        println!(
            "skipped: Schemathesis is not installed (target/schemathesis/bin/schemathesis or MSGBATCH_SCHEMATHESIS)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let base = team.console.base.clone();
    let people = [
        ("vera", "viewer", token_of(&mut team.viewer, "fuzz").await),
        ("mina", "editor", token_of(&mut team.editor, "fuzz").await),
        ("joon", "approver", token_of(&mut team.approver, "fuzz").await),
    ];
    // A campaign the fuzzer may find by listing.
    let editor = Api::new(&base, Some(people[1].2.clone())).await;
    let form = common::api::campaign_form(SMS, "phone,name\n01012345678,김\n");
    assert_eq!(
        editor.post_form("/api/v1/campaigns", None, form).await.status,
        StatusCode::CREATED
    );

    for (name, role, token) in &people {
        let mut command = std::process::Command::new(&schemathesis);
        command
            .arg("run")
            .arg(format!("{base}/api/v1/openapi.json"))
            .args(["--url", &base])
            .args(["--header", &format!("Authorization: Bearer {token}")])
            .args([
                "--checks",
                "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
            ])
            .args(["--max-examples", "15", "--seed", "29", "--workers", "1"])
            .args(["--phases", "examples,coverage,fuzzing"])
            .args(["--request-timeout", "30"])
            .env("NO_COLOR", "1")
            // Its cache goes in the test's folder, not the source tree.
            .current_dir(dir.path());
        // Run beside the console, which serves from this test's runtime.
        let output = tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            output.status.success(),
            "Schemathesis on {name}'s token ({role}) failed:\n{text}"
        );
        println!(
            "{role}: {}",
            text.lines()
                .rev()
                .find(|line| line.contains("passed") || line.contains("cases"))
                .unwrap_or("")
        );
    }

    let admin = Api::new(&base, Some(token_of(&mut team.admin, "audit").await)).await;
    let audit = admin.get("/api/v1/audit").await;
    for entry in audit.json.as_array().unwrap() {
        let user = entry["user"].as_str().unwrap();
        let action = entry["action"].as_str().unwrap();
        if let Some((_, role, _)) = people.iter().find(|(name, _, _)| *name == user) {
            assert!(allowed(role, action), "{user} ({role}) did {action}: {entry}");
        }
    }
}
