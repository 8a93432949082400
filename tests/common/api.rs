//! The console's API under test: a client on one person's token that checks every answer against the API's own OpenAPI document.
#![allow(dead_code)]

use super::console::{between, Browser};
use reqwest::StatusCode;
use serde_json::Value;

/// Makes an API token on the person's account page, as they would; its text (shown once).
pub async fn token_of(browser: &mut Browser, name: &str) -> String {
    made_token(browser, &[("name", name)]).await
}

/// [`token_of`], the box "May read /metrics" ticked.
pub async fn metrics_token_of(browser: &mut Browser, name: &str) -> String {
    made_token(browser, &[("name", name), ("metrics", "on")]).await
}

async fn made_token(browser: &mut Browser, fields: &[(&str, &str)]) -> String {
    browser.page("/account").await;
    let response = browser.post("/account/tokens", fields).await;
    assert_eq!(response.status(), StatusCode::OK, "the token is made");
    let page = response.text().await.unwrap();
    let token = between(&page, "<code>", "</code>").expect("the page shows the token once");
    assert!(token.starts_with("msgbatch_"), "{token}");
    let (_, again) = browser.page("/account").await;
    assert!(!again.contains(&token), "the token is shown only once");
    token
}

/// A new campaign's multipart form for the API (no CSRF field): its campaign file and its
/// recipients CSV.
pub fn campaign_form(settings: &str, recipients_csv: &str) -> reqwest::multipart::Form {
    super::console::with_campaign_files(reqwest::multipart::Form::new(), settings, recipients_csv)
}

/// A campaign made by `editor`, checked and submitted, approved by `approver` and started with
/// its estimate typed out, all by API; its id.
pub async fn started(editor: &Api, approver: &Api, settings: &str, recipients_csv: &str) -> String {
    let created = editor
        .post_form("/api/v1/campaigns", None, campaign_form(settings, recipients_csv))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.json);
    let id = created.json["id"].as_str().unwrap().to_string();
    let check = editor
        .post(&format!("/api/v1/campaigns/{id}/check"), serde_json::json!({}))
        .await;
    let estimate = check.json["check"]["estimate"]
        .as_i64()
        .expect("the connection has prices");
    editor
        .post(&format!("/api/v1/campaigns/{id}/submit"), serde_json::json!({}))
        .await;
    approver
        .post(&format!("/api/v1/campaigns/{id}/approve"), serde_json::json!({}))
        .await;
    let started = approver
        .post(
            &format!("/api/v1/campaigns/{id}/start"),
            serde_json::json!({ "amount": estimate.to_string() }),
        )
        .await;
    assert_eq!(started.status, StatusCode::ACCEPTED, "{}", started.json);
    id
}

/// An answer of the API.
pub struct Answer {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub json: Value,
    pub bytes: Vec<u8>,
}

impl Answer {
    /// A problem document's stable type, without its prefix.
    pub fn problem(&self) -> String {
        self.json["type"]
            .as_str()
            .unwrap_or_else(|| panic!("not a problem: {} {}", self.status, self.json))
            .trim_start_matches("urn:msgbatch:problem:")
            .to_string()
    }
}

/// A system acting on one token.
#[derive(Clone)]
pub struct Api {
    pub base: String,
    pub token: Option<String>,
    pub language: Option<&'static str>,
    client: reqwest::Client,
    /// The API's OpenAPI document, as it served it.
    pub document: std::sync::Arc<Value>,
}

impl Api {
    pub async fn new(base: &str, token: Option<String>) -> Api {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let document: Value = client
            .get(format!("{base}/api/v1/openapi.json"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(document["openapi"].as_str().map(|v| &v[..3]), Some("3.1"), "{document}");
        Api {
            base: base.to_string(),
            token,
            language: None,
            client,
            document: std::sync::Arc::new(document),
        }
    }

    pub fn with_token(&self, token: Option<String>) -> Api {
        Api { token, ..self.clone() }
    }

    pub fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let mut request = self.client.request(method, format!("{}{path}", self.base));
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(language) = self.language {
            request = request.header("Accept-Language", language);
        }
        request
    }

    pub async fn get(&self, path: &str) -> Answer {
        self.send(reqwest::Method::GET, path, self.request(reqwest::Method::GET, path))
            .await
    }

    pub async fn post(&self, path: &str, body: Value) -> Answer {
        let request = self.request(reqwest::Method::POST, path).json(&body);
        self.send(reqwest::Method::POST, path, request).await
    }

    pub async fn post_keyed(&self, path: &str, key: &str, body: Value) -> Answer {
        let request = self
            .request(reqwest::Method::POST, path)
            .header("Idempotency-Key", key)
            .json(&body);
        self.send(reqwest::Method::POST, path, request).await
    }

    pub async fn post_form(&self, path: &str, key: Option<&str>, form: reqwest::multipart::Form) -> Answer {
        let mut request = self.request(reqwest::Method::POST, path).multipart(form);
        if let Some(key) = key {
            request = request.header("Idempotency-Key", key);
        }
        self.send(reqwest::Method::POST, path, request).await
    }

    /// Sends, and checks the answer against the document: its path and method are there, its
    /// status is one the operation names, and its JSON body is valid against that answer's schema.
    pub async fn send(&self, method: reqwest::Method, path: &str, request: reqwest::RequestBuilder) -> Answer {
        let response = request.send().await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.bytes().await.unwrap().to_vec();
        let json = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        let answer = Answer {
            status,
            headers,
            json,
            bytes,
        };
        check_against(&self.document, &method, path, &answer);
        answer
    }
}

/// The document's operation for a concrete path (`/api/v1/campaigns/abc/check?page=1`).
fn operation<'a>(document: &'a Value, method: &reqwest::Method, path: &str) -> Option<&'a Value> {
    let path = path.split('?').next().unwrap();
    let segments: Vec<&str> = path.split('/').collect();
    document["paths"].as_object()?.iter().find_map(|(template, item)| {
        let parts: Vec<&str> = template.split('/').collect();
        let fits = parts.len() == segments.len()
            && parts
                .iter()
                .zip(&segments)
                .all(|(part, segment)| part.starts_with('{') || part == segment);
        fits.then(|| &item[method.as_str().to_ascii_lowercase()])
            .filter(|operation| !operation.is_null())
    })
}

pub fn check_against(document: &Value, method: &reqwest::Method, path: &str, answer: &Answer) {
    let operation =
        operation(document, method, path).unwrap_or_else(|| panic!("{method} {path} is not in the OpenAPI document"));
    let responses = &operation["responses"];
    let code = answer.status.as_str().to_string();
    let range = format!("{}XX", &code[..1]);
    let response = [code.as_str(), range.as_str(), "default"]
        .iter()
        .map(|key| &responses[*key])
        .find(|response| !response.is_null())
        .unwrap_or_else(|| {
            panic!(
                "{method} {path} answered {code}, which the document does not name: {}",
                answer.json
            )
        });
    let content_type = answer
        .headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let Some(content) = response["content"].as_object() else {
        return;
    };
    let media = content.get(&content_type).unwrap_or_else(|| {
        panic!(
            "{method} {path} answered {code} as {content_type}, not as the document says ({:?})",
            content.keys().collect::<Vec<_>>()
        )
    });
    // A file's bytes are what they are; a JSON answer is checked against its schema.
    let Some(schema) = media
        .get("schema")
        .and_then(Value::as_object)
        .filter(|_| content_type.ends_with("json"))
    else {
        return;
    };
    let mut root = schema.clone();
    root.insert("components".into(), document["components"].clone());
    let validator = jsonschema::draft202012::new(&Value::Object(root)).expect("the document's schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&answer.json)
        .map(|error| error.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "{method} {path} answered {code} outside the document: {errors:?}\n{}",
        answer.json
    );
}
