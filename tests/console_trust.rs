//! The console's promises against a dishonest editor, over HTTP on loopback: a campaign reads only its own folder, names the workspace's connection instead of an endpoint, key or price, uploads are judged by their bytes, no page shows a server path, and advertising holds to quiet hours unless an approver acknowledges otherwise.

mod common;

use common::console::{approved, between, campaign_id, location, team, team_with, Browser, NOTIFICATION};
use reqwest::multipart::{Form, Part};
use reqwest::StatusCode;

/// An LMS advertisement as an editor might write it; `{EXTRA}` is where a dishonest line goes.
const LMS: &str = r##"name = "winter-sale"
kind = "lms"
[message]
service = 3001
subject = "겨울 세일"
text = "(광고) #{이름}님 겨울 세일 무료거부 0801234567"
callback_no = "0212345678"
advertising = true

[recipients]
path = "r.csv"
name = "name"
"##;

fn people_csv() -> String {
    let mut csv = String::from("phone,name,order\n");
    for i in 1..=4 {
        csv.push_str(&format!("0105000000{i},고객{i},A-{i}\n"));
    }
    csv
}

fn new_form(editor: &Browser, settings: &str, recipients: Part) -> Form {
    Form::new()
        .text("csrf", editor.csrf.clone())
        .text("name", "c")
        .part(
            "campaign_file",
            Part::text(settings.to_string()).file_name("campaign.toml"),
        )
        .part("recipients", recipients)
}

/// Creates a campaign; the response.
async fn create(editor: &mut Browser, settings: &str, recipients: Part) -> reqwest::Response {
    editor.page("/campaigns/new").await;
    let form = new_form(editor, settings, recipients);
    editor.post_multipart("/campaigns", form).await
}

/// Creates a campaign that must be taken; its id.
async fn created(editor: &mut Browser, settings: &str) -> String {
    let response = create(editor, settings, Part::text(people_csv()).file_name("people.csv")).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "the campaign is made");
    campaign_id(&location(&response))
}

/// Saves new settings on the edit page; the response.
async fn edit_settings(editor: &mut Browser, id: &str, settings: &str) -> reqwest::Response {
    let edit = format!("/campaigns/{id}/edit");
    editor.page(&edit).await;
    let form = Form::new()
        .text("csrf", editor.csrf.clone())
        .text("settings", settings.to_string());
    editor.post_multipart(&edit, form).await
}

/// Finding 1 and 2: `text_file` reaching another campaign's upload or any server file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_campaign_reads_only_files_in_its_own_folder() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let secret = dir.path().join("server-secret.txt");
    std::fs::write(&secret, "SERVER-SECRET-0123\nline two\n").unwrap();

    // Campaign B's upload holds a harmless text; A points its text_file at it, or at a server file.
    let b = {
        let response = create(
            &mut team.editor,
            NOTIFICATION,
            Part::text("harmless text\nsecond line\n").file_name("msg.txt"),
        )
        .await;
        campaign_id(&location(&response))
    };
    let stored = std::fs::read_dir(team.console.workspace.join("campaigns").join(&b))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .find(|name| name.starts_with("recipients."))
        .unwrap();
    let outside = [
        format!("../{b}/{stored}"),
        secret.display().to_string(),
        "/etc/hostname".to_string(),
    ];
    for path in &outside {
        let settings = LMS.replace(
            "text = \"(광고) #{이름}님 겨울 세일 무료거부 0801234567\"",
            &format!("text_file = {path:?}"),
        );
        let response = create(&mut team.editor, &settings, Part::text(people_csv()).file_name("p.csv")).await;
        assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY, "{path}");
        let page = response.text().await.unwrap();
        assert!(page.contains("message.text_file"), "the setting is named: {page}");
        assert!(!page.contains("SERVER-SECRET"), "{page}");
    }
    // The same through the edit page of a campaign that exists.
    let a = created(&mut team.editor, LMS).await;
    let settings = LMS.replace(
        "text = \"(광고) #{이름}님 겨울 세일 무료거부 0801234567\"",
        &format!("text_file = {:?}", outside[0]),
    );
    let response = edit_settings(&mut team.editor, &a, &settings).await;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);

    // A campaign whose settings reached outside before this release (written on disk): approved,
    // then B's upload changes. Neither its check nor its start reads B's file.
    let a_dir = team.console.workspace.join("campaigns").join(&a);
    approved(&mut team, &a).await;
    std::fs::write(
        a_dir.join("campaign.toml"),
        settings.replace("path = \"r.csv\"", "path = \"recipients.csv\""),
    )
    .unwrap();
    std::fs::write(
        team.console.workspace.join("campaigns").join(&b).join(&stored),
        "PHISHING http://evil.example #{이름}\nsecond\n",
    )
    .unwrap();
    team.approver.page(&format!("/campaigns/{a}")).await;
    let response = team
        .approver
        .post(&format!("/campaigns/{a}/start"), &[("amount", "120")])
        .await;
    assert_ne!(location(&response), format!("/campaigns/{a}/live"), "it does not start");
    let page = response.text().await.unwrap();
    assert!(
        page.contains("message.text_file") && !page.contains("PHISHING"),
        "{page}"
    );
    assert!(
        !team.console.workspace.join("runs").join(&a).exists(),
        "no run was made"
    );

    // A symbolic link put in the campaign's folder is not followed.
    #[cfg(unix)]
    {
        let c = created(&mut team.editor, NOTIFICATION).await;
        let c_dir = team.console.workspace.join("campaigns").join(&c);
        let recipients = c_dir.join("recipients.csv");
        std::fs::remove_file(&recipients).unwrap();
        std::os::unix::fs::symlink(&secret, &recipients).unwrap();
        team.editor.page(&format!("/campaigns/{c}")).await;
        let response = team.editor.post(&format!("/campaigns/{c}/check"), &[]).await;
        let page = response.text().await.unwrap();
        assert!(
            page.contains("symbolic link") && !page.contains("SERVER-SECRET"),
            "{page}"
        );
    }
}

/// Findings 3 and 4: an endpoint, a key variable or prices of the editor's choosing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_names_a_connection_never_an_endpoint_a_key_or_a_price() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    // A listener of the editor's: nothing may ever connect to it.
    let trap = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    trap.set_nonblocking(true).unwrap();
    let trap_url = format!("http://{}/", trap.local_addr().unwrap());
    for (line, key) in [
        (
            format!("endpoint = {{ base_url = {trap_url:?}, gateway_url = {trap_url:?} }}\n"),
            "endpoint",
        ),
        ("[credentials]\napi_key_env = \"HOME\"\n".to_string(), "credentials"),
        ("[prices]\nlms = 0\n".to_string(), "prices"),
        ("[output]\ndir = \"/tmp\"\n".to_string(), "output"),
    ] {
        let settings = if line.starts_with('[') {
            format!("{LMS}{line}")
        } else {
            format!("{line}{LMS}")
        };
        let response = create(&mut team.editor, &settings, Part::text(people_csv()).file_name("p.csv")).await;
        assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY, "{key}");
        let page = response.text().await.unwrap();
        assert!(page.contains(&format!("`{key}`")), "{key} is named: {page}");
    }
    let unknown = created(&mut team.editor, NOTIFICATION).await;
    let response = edit_settings(
        &mut team.editor,
        &unknown,
        &format!("connection = \"elsewhere\"\n{NOTIFICATION}"),
    )
    .await;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(response.text().await.unwrap().contains("elsewhere"));

    // Written behind the console's back (a campaign from before), a test send still goes nowhere.
    let id = created(&mut team.editor, NOTIFICATION).await;
    let file = team.console.workspace.join("campaigns").join(&id).join("campaign.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        format!("endpoint = {{ base_url = {trap_url:?}, gateway_url = {trap_url:?} }}\n{text}"),
    )
    .unwrap();
    team.editor.page(&format!("/campaigns/{id}")).await;
    let response = team
        .editor
        .post(&format!("/campaigns/{id}/test-send"), &[("numbers", "01012345678")])
        .await;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        matches!(trap.accept(), Err(error) if error.kind() == std::io::ErrorKind::WouldBlock),
        "nothing connected to the editor's address"
    );

    // The estimate rests on the connection's prices: four notifications at ₩8.
    let id = created(&mut team.editor, NOTIFICATION).await;
    approved(&mut team, &id).await;
    let (_, page) = team.approver.page(&format!("/campaigns/{id}")).await;
    assert!(page.contains("₩32"), "{page}");

    // Only an admin changes a connection; a change voids the approval of campaigns using it.
    for browser in [&mut team.editor, &mut team.approver] {
        browser.page("/campaigns").await;
        let response = browser
            .post("/connections", &[("text", "[sandbox]\nendpoint = \"sandbox\"\n")])
            .await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN);
    }
    let dearer = msgbatch::console::connections::DEMO_CONNECTIONS.replace("alimtalk = 8", "alimtalk = 10");
    team.admin.set_connections(&dearer).await;
    let (_, page) = team.approver.page(&format!("/campaigns/{id}")).await;
    assert_eq!(
        between(&page, "<span class=\"state ", "\"").as_deref(),
        Some("draft"),
        "{page}"
    );
    let (_, audit) = team.admin.page("/audit").await;
    assert!(
        audit.contains("connections changed") && audit.contains("its connection changed"),
        "{audit}"
    );
    // Checked again, the estimate is the new price's.
    approved(&mut team, &id).await;
    let (_, page) = team.approver.page(&format!("/campaigns/{id}")).await;
    assert!(page.contains("₩40"), "{page}");
    // A connection the engine would refuse is refused whole, named, and nothing changes.
    team.admin.page("/connections").await;
    let response = team
        .admin
        .post(
            "/connections",
            &[("text", "[sandbox]\nendpoint = \"sandbox\"\nprices = { lmss = 3 }\n")],
        )
        .await;
    let page = response.text().await.unwrap();
    assert!(page.contains("role=\"alert\"") && page.contains("sandbox"), "{page}");
    let (_, page) = team.approver.page(&format!("/campaigns/{id}")).await;
    assert_eq!(
        between(&page, "<span class=\"state ", "\"").as_deref(),
        Some("approved")
    );
}

/// A zip whose one member unpacks to `size` bytes of spaces (a zip bomb's shape), as a workbook.
fn bomb(size: usize) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(&mut bytes));
    zip.start_file("xl/workbook.xml", zip::write::SimpleFileOptions::default())
        .unwrap();
    std::io::Write::write_all(&mut zip, &vec![b' '; size]).unwrap();
    zip.finish().unwrap();
    bytes
}

/// Finding 5: the unpacked-size cap bypassed by a name, and empty lists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_are_judged_by_their_bytes_not_their_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team_with(dir.path(), |options| options.max_unpacked = 1 << 20).await;
    let settings = format!("{}format = \"xlsx\"\n", NOTIFICATION);
    for name in ["list.csv", "list.parquet", "list"] {
        let response = create(&mut team.editor, &settings, Part::bytes(bomb(3 << 20)).file_name(name)).await;
        assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE, "{name}");
        assert!(response.text().await.unwrap().contains("unpacks to 3 MB"));
    }
    for (bytes, said) in [
        (Vec::new(), "is empty"),
        (b"phone,name,order\n".to_vec(), "no recipient"),
        (b"phone,name,order\n\n,,\n".to_vec(), "no recipient"),
    ] {
        let response = create(
            &mut team.editor,
            NOTIFICATION,
            Part::bytes(bytes).file_name("people.csv"),
        )
        .await;
        assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
        let page = response.text().await.unwrap();
        assert!(page.contains(said) && page.contains("people.csv"), "{page}");
    }
    // A real workbook named .csv is stored and read as the workbook it is.
    let mut workbook = rust_xlsxwriter::Workbook::new();
    let sheet = workbook.add_worksheet();
    for (column, header) in ["phone", "name", "order"].iter().enumerate() {
        sheet.write_string(0, column as u16, *header).unwrap();
    }
    for row in 1..=3u32 {
        sheet.write_string(row, 0, format!("0105100000{row}")).unwrap();
        sheet.write_string(row, 1, format!("고객{row}")).unwrap();
        sheet.write_string(row, 2, format!("B-{row}")).unwrap();
    }
    let bytes = workbook.save_to_buffer().unwrap();
    let response = create(
        &mut team.editor,
        NOTIFICATION,
        Part::bytes(bytes).file_name("export.csv"),
    )
    .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let id = campaign_id(&location(&response));
    let folder = team.console.workspace.join("campaigns").join(&id);
    assert!(folder.join("recipients.xlsx").exists() && !folder.join("recipients.csv").exists());
    team.editor.page(&format!("/campaigns/{id}")).await;
    team.editor.post(&format!("/campaigns/{id}/check"), &[]).await;
    let (_, page) = team.editor.page(&format!("/campaigns/{id}/check")).await;
    assert!(page.contains("valid 3"), "{page}");
}

/// Finding 8: a refusal of the file names the file as the person gave it, never the server's path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_page_shows_a_server_path() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    // A workbook the engine cannot read: the check refuses it.
    let response = create(
        &mut team.editor,
        NOTIFICATION,
        Part::bytes(bomb(100)).file_name("broken.xlsx"),
    )
    .await;
    let id = campaign_id(&location(&response));
    team.editor.page(&format!("/campaigns/{id}")).await;
    team.editor.post(&format!("/campaigns/{id}/check"), &[]).await;
    let (_, page) = team.editor.page(&format!("/campaigns/{id}/check")).await;
    assert!(page.contains("recipients.xlsx"), "the refusal names the file: {page}");
    let workspace = team.console.workspace.display().to_string();
    let root = dir.path().display().to_string();
    for path in [workspace.as_str(), root.as_str()] {
        assert!(!page.contains(path), "{path} shown: {page}");
    }
}

/// Finding 9: the kind picker's advertising LMS starts with quiet hours enforced, and an approver
/// must acknowledge an advertising campaign that relaxes them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn advertising_from_the_console_holds_to_quiet_hours_unless_an_approver_acknowledges() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let id = common::console::from_kind_picker(&mut team.editor, "lms", &people_csv()).await;
    let composed =
        msgbatch::campaign::Campaign::load(&team.console.workspace.join("campaigns").join(&id).join("composed.toml"))
            .unwrap();
    assert!(composed.is_advertising());
    assert_eq!(composed.send.quiet_hours, msgbatch::campaign::QuietHoursMode::Enforce);
    assert!(
        composed.message_text().unwrap().starts_with("(광고)"),
        "the text is inline, not a hidden file"
    );

    // `warn` on an advertising campaign: shown to the approver, who must tick it.
    let relaxed = format!("{LMS}[send]\nquiet_hours = \"warn\"\n");
    let id = created(&mut team.editor, &relaxed).await;
    team.editor.page(&format!("/campaigns/{id}")).await;
    team.editor.post(&format!("/campaigns/{id}/check"), &[]).await;
    team.editor.post(&format!("/campaigns/{id}/submit"), &[]).await;
    let (_, page) = team.approver.page(&format!("/campaigns/{id}")).await;
    assert!(
        page.contains("id=\"quiet-hours-relaxed\"") && page.contains("warn"),
        "{page}"
    );
    let response = team.approver.post(&format!("/campaigns/{id}/approve"), &[]).await;
    assert_eq!(
        response.status(),
        StatusCode::UNPROCESSABLE_ENTITY,
        "not without the tick"
    );
    let response = team
        .approver
        .post(&format!("/campaigns/{id}/approve"), &[("quiet_hours_ack", "on")])
        .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let (_, audit) = team.admin.page("/audit").await;
    assert!(audit.contains("acknowledged on an advertising campaign"), "{audit}");
}

/// Findings 7 and 8 through the console's own downloads: report.csv (also "for Excel") marks a
/// recipient's formula-like text while report.raw.csv keeps it, and summary.json and statement.csv
/// name the campaign and the run without the workspace's path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downloads_are_safe_in_a_spreadsheet_and_name_no_server_path() {
    let dir = tempfile::tempdir().unwrap();
    let mut team = team(dir.path()).await;
    let people = "phone,name,order\n\
        01050000001,\"=HYPERLINK(\"\"http://evil.example\"\",\"\"x\"\")\",A-1\n\
        01050000002,+SUM(1;2),A-2\n\
        01050000003,@cmd,A-3\n\
        01050000004,고객4,-2+3\n";
    let response = create(
        &mut team.editor,
        NOTIFICATION,
        Part::text(people).file_name("people.csv"),
    )
    .await;
    let id = campaign_id(&location(&response));
    approved(&mut team, &id).await;
    common::console::started(&mut team, &id, "32", "four notifications at ₩8").await;
    assert_eq!(common::console::until_ended(&mut team.approver, &id).await, "done");
    common::console::run_status(&team.console.workspace.join("runs").join(&id)).await;

    for path in [
        format!("/campaigns/{id}/files/report.csv"),
        format!("/campaigns/{id}/files/report.csv?bom=1"),
    ] {
        let csv = team.viewer.get(&path).await.text().await.unwrap();
        for formula in ["=HYPERLINK(", "+SUM(1;2)", "@cmd"] {
            assert!(
                !csv.contains(&format!(",{formula}")),
                "{path}: {formula} as it was: {csv}"
            );
            assert!(csv.contains(&format!("'{formula}")), "{path}: {formula} marked: {csv}");
        }
    }

    // The raw CSV, for programs, by its name: every cell as it was.
    let raw = team
        .viewer
        .get(&format!("/campaigns/{id}/files/report.raw.csv"))
        .await
        .text()
        .await
        .unwrap();
    assert!(raw.contains(",@cmd,") && !raw.contains("'@cmd"), "{raw}");
    // summary.json names the campaign file, never where the server keeps it.
    let summary = team
        .viewer
        .get(&format!("/campaigns/{id}/files/summary.json"))
        .await
        .text()
        .await
        .unwrap();
    assert!(summary.contains("composed.toml"), "{summary}");
    assert!(
        !summary.contains(&team.console.workspace.display().to_string()),
        "{summary}"
    );

    let month = chrono::Utc::now()
        .with_timezone(&msgbatch::campaign::quiet::kst())
        .format("%Y-%m")
        .to_string();
    let (status, _) = team.viewer.page(&format!("/statement?month={month}")).await;
    assert_eq!(status, StatusCode::OK);
    let statement = team
        .viewer
        .get(&format!("/statement/{month}/statement.csv"))
        .await
        .text()
        .await
        .unwrap();
    assert!(statement.contains(&id), "the run is named by its id: {statement}");
    let workspace = team.console.workspace.display().to_string();
    assert!(!statement.contains(&workspace), "no server path: {statement}");
}
