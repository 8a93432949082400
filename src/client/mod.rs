//! Typed async client of the messaging service: one call per endpoint, errors that keep the service's code and message.

mod endpoint;
mod error;
mod paginate;

pub use error::{Cause, ClientError, ErrorKind};

use crate::api::channel::{
    CategoryList, Channel, ChannelCreate, ChannelPage, ChannelUpdate, SenderIssue, SenderProfile, TokenSent,
};
use crate::api::faults::FaultConfig;
use crate::api::gateway::{GatewayAlimTalkRequest, GatewaySendResponse, ResultPage, SendRecord};
use crate::api::ledger::{Ledger, SentCounts, TokenOutbox};
use crate::api::standard::{AlimTalkRequest, BrandRequest, SendResponse, TextMessageRequest};
use crate::api::{HEADER_API_KEY, HEADER_GROUP_ID};
use futures::Stream;
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fmt;
use std::time::Duration;

/// The API key. It never shows in `Debug` or `Display`, so it cannot reach a log by accident.
#[derive(Clone)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> ApiKey {
        ApiKey(key.into())
    }
    fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// A request's URL, and the endpoint it is counted under.
struct Target {
    url: String,
    endpoint: &'static str,
}

/// Where the two deployments are and who is calling.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// `{base_url}` of the standard deployment.
    pub base_url: String,
    /// `{gateway_url}` of the gateway deployment.
    pub gateway_url: String,
    pub api_key: ApiKey,
    pub group_id: String,
    /// Whole-request time limit (a request that times out after being sent is uncertain).
    pub timeout: Duration,
    pub connect_timeout: Duration,
    /// Plain `http://` to a host that is not loopback: the key would cross the network readable.
    pub allow_insecure_http: bool,
}

impl ClientConfig {
    pub fn new(
        base_url: impl Into<String>,
        gateway_url: impl Into<String>,
        api_key: ApiKey,
        group_id: impl Into<String>,
    ) -> Self {
        ClientConfig {
            base_url: base_url.into(),
            gateway_url: gateway_url.into(),
            api_key,
            group_id: group_id.into(),
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            allow_insecure_http: false,
        }
    }
}

/// Which credential headers a call carries.
#[derive(Clone, Copy)]
enum Auth {
    /// `apikey` only (notification and brand: the group travels in the body).
    KeyOnly,
    /// `apikey` and the group header.
    KeyAndGroup,
}

#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    config: ClientConfig,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client").field("config", &self.config).finish()
    }
}

fn trim_slash(url: &str) -> &str {
    url.trim_end_matches('/')
}

impl Client {
    pub fn new(config: ClientConfig) -> Result<Client, ClientError> {
        for url in [&config.base_url, &config.gateway_url] {
            endpoint::check(url, config.allow_insecure_http)?;
        }
        let http = reqwest::Client::builder()
            // A redirect would carry `apikey`, `groupid` and the recipients to another host.
            .redirect(reqwest::redirect::Policy::none())
            .timeout(config.timeout)
            .connect_timeout(config.connect_timeout)
            .pool_max_idle_per_host(64)
            .tcp_nodelay(true)
            .build()
            .map_err(ClientError::from_builder)?;
        Ok(Client { http, config })
    }

    pub fn group_id(&self) -> &str {
        &self.config.group_id
    }

    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// One request, counted for `/metrics` under its endpoint with its status (or none, for a
    /// request that got no answer) and its time.
    async fn call<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        method: Method,
        target: Target,
        auth: Auth,
        query: &[(&str, String)],
        body: Option<&B>,
        expected: StatusCode,
    ) -> Result<T, ClientError> {
        let started = std::time::Instant::now();
        let endpoint = target.endpoint;
        let answer = self.request(method, target.url, auth, query, body, expected).await;
        let status = match &answer {
            Ok(_) => Some(expected.as_u16()),
            Err(error) => error.http_status(),
        };
        crate::metrics::service_request(endpoint, status, started.elapsed());
        answer
    }

    async fn request<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        method: Method,
        url: String,
        auth: Auth,
        query: &[(&str, String)],
        body: Option<&B>,
        expected: StatusCode,
    ) -> Result<T, ClientError> {
        let path = url.clone();
        let mut request = self
            .http
            .request(method, &url)
            .header(HEADER_API_KEY, self.config.api_key.expose());
        if let Auth::KeyAndGroup = auth {
            request = request.header(HEADER_GROUP_ID, &self.config.group_id);
        }
        if !query.is_empty() {
            request = request.query(query);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request
            .send()
            .await
            .map_err(|source| ClientError::from_send(path.clone(), source))?;
        let status = response.status();
        if status.is_redirection() {
            return Err(ClientError::redirect(path, status, response.headers()));
        }
        let retry_after = error::retry_after(response.headers());
        let bytes = response
            .bytes()
            .await
            .map_err(|source| ClientError::from_send(path.clone(), source))?;
        if status == expected || (expected == StatusCode::OK && status.is_success()) {
            return serde_json::from_slice(&bytes)
                .map_err(|source| ClientError::from_decode(path, status, source, &bytes));
        }
        Err(ClientError::from_status(path, status, retry_after, &bytes))
    }

    fn standard(&self, path: &'static str) -> Target {
        Target {
            url: format!("{}{path}", trim_slash(&self.config.base_url)),
            endpoint: path,
        }
    }

    fn gateway(&self, path: &'static str) -> Target {
        self.gateway_at(path, path)
    }

    /// A gateway path holding an id, counted under its template (`/result/{id}`).
    fn gateway_at(&self, endpoint: &'static str, path: &str) -> Target {
        Target {
            url: format!("{}{path}", trim_slash(&self.config.gateway_url)),
            endpoint,
        }
    }

    /// `POST {base_url}/alimTalk`.
    pub async fn send_alimtalk(&self, request: &AlimTalkRequest) -> Result<SendResponse, ClientError> {
        self.call(
            Method::POST,
            self.standard("/alimTalk"),
            Auth::KeyOnly,
            &[],
            Some(request),
            StatusCode::OK,
        )
        .await
    }

    /// `POST {base_url}/friendTalk/brand`.
    pub async fn send_brand(&self, request: &BrandRequest) -> Result<SendResponse, ClientError> {
        self.call(
            Method::POST,
            self.standard("/friendTalk/brand"),
            Auth::KeyOnly,
            &[],
            Some(request),
            StatusCode::OK,
        )
        .await
    }

    /// `POST {base_url}/sms`.
    pub async fn send_sms(&self, request: &TextMessageRequest) -> Result<SendResponse, ClientError> {
        self.call(
            Method::POST,
            self.standard("/sms"),
            Auth::KeyAndGroup,
            &[],
            Some(request),
            StatusCode::OK,
        )
        .await
    }

    /// `POST {base_url}/sms/lms`.
    pub async fn send_lms(&self, request: &TextMessageRequest) -> Result<SendResponse, ClientError> {
        self.call(
            Method::POST,
            self.standard("/sms/lms"),
            Auth::KeyAndGroup,
            &[],
            Some(request),
            StatusCode::OK,
        )
        .await
    }

    /// `POST {gateway_url}/alimTalk`.
    pub async fn send_gateway_alimtalk(
        &self,
        request: &GatewayAlimTalkRequest,
    ) -> Result<GatewaySendResponse, ClientError> {
        self.call(
            Method::POST,
            self.gateway("/alimTalk"),
            Auth::KeyAndGroup,
            &[],
            Some(request),
            StatusCode::OK,
        )
        .await
    }

    /// `GET {gateway_url}/result/:id`.
    pub async fn result(&self, id: &str) -> Result<SendRecord, ClientError> {
        let url = self.gateway_at("/result/{id}", &format!("/result/{}", encode_segment(id)));
        self.call::<(), _>(Method::GET, url, Auth::KeyAndGroup, &[], None, StatusCode::OK)
            .await
    }

    /// One page of `GET {gateway_url}/result/sendGroup/:sendGroupId`.
    pub async fn result_page(
        &self,
        send_group_id: &str,
        limit: Option<u32>,
        last_key: Option<&str>,
    ) -> Result<ResultPage, ClientError> {
        let url = self.gateway_at(
            "/result/sendGroup/{sendGroupId}",
            &format!("/result/sendGroup/{}", encode_segment(send_group_id)),
        );
        let query = page_query(limit, last_key, None);
        self.call::<(), _>(Method::GET, url, Auth::KeyAndGroup, &query, None, StatusCode::OK)
            .await
    }

    /// Every record of a send group, following `lastKey` to the end.
    pub fn results(
        &self,
        send_group_id: &str,
        limit: Option<u32>,
    ) -> impl Stream<Item = Result<SendRecord, ClientError>> + '_ {
        let send_group_id = send_group_id.to_string();
        paginate::paginate(move |last_key| {
            let send_group_id = send_group_id.clone();
            async move {
                let page = self.result_page(&send_group_id, limit, last_key.as_deref()).await?;
                Ok((page.items, page.last_key))
            }
        })
    }

    /// `GET {gateway_url}/channel/sender/token`.
    pub async fn sender_token(&self, phone_number: &str, yellow_id: Option<&str>) -> Result<TokenSent, ClientError> {
        let mut query = vec![("phoneNumber", phone_number.to_string())];
        if let Some(yellow_id) = yellow_id {
            query.push(("yellowId", yellow_id.to_string()));
        }
        self.call::<(), _>(
            Method::GET,
            self.gateway("/channel/sender/token"),
            Auth::KeyAndGroup,
            &query,
            None,
            StatusCode::OK,
        )
        .await
    }

    /// `POST {gateway_url}/channel/sender`.
    pub async fn sender_issue(&self, request: &SenderIssue) -> Result<SenderProfile, ClientError> {
        self.call(
            Method::POST,
            self.gateway("/channel/sender"),
            Auth::KeyAndGroup,
            &[],
            Some(request),
            StatusCode::OK,
        )
        .await
    }

    /// `GET {gateway_url}/channel/sender`.
    pub async fn sender_status(&self, sender_key: &str) -> Result<SenderProfile, ClientError> {
        let query = [("senderKey", sender_key.to_string())];
        self.call::<(), _>(
            Method::GET,
            self.gateway("/channel/sender"),
            Auth::KeyAndGroup,
            &query,
            None,
            StatusCode::OK,
        )
        .await
    }

    /// `GET {gateway_url}/category`.
    pub async fn categories(&self) -> Result<CategoryList, ClientError> {
        self.call::<(), _>(
            Method::GET,
            self.gateway("/category"),
            Auth::KeyAndGroup,
            &[],
            None,
            StatusCode::OK,
        )
        .await
    }

    /// `POST {gateway_url}/channel` (answers 201).
    pub async fn channel_create(&self, request: &ChannelCreate) -> Result<Channel, ClientError> {
        self.call(
            Method::POST,
            self.gateway("/channel"),
            Auth::KeyAndGroup,
            &[],
            Some(request),
            StatusCode::CREATED,
        )
        .await
    }

    /// One page of `GET {gateway_url}/channel`.
    pub async fn channel_page(
        &self,
        status: Option<&str>,
        limit: Option<u32>,
        last_key: Option<&str>,
    ) -> Result<ChannelPage, ClientError> {
        let query = page_query(limit, last_key, status);
        self.call::<(), _>(
            Method::GET,
            self.gateway("/channel"),
            Auth::KeyAndGroup,
            &query,
            None,
            StatusCode::OK,
        )
        .await
    }

    /// Every channel (optionally of one `status`), following `lastKey` to the end.
    pub fn channels<'a>(
        &'a self,
        status: Option<&'a str>,
        limit: Option<u32>,
    ) -> impl Stream<Item = Result<Channel, ClientError>> + 'a {
        paginate::paginate(move |last_key| async move {
            let page = self.channel_page(status, limit, last_key.as_deref()).await?;
            Ok((page.items, page.last_key))
        })
    }

    /// `GET {gateway_url}/channel/:id`.
    pub async fn channel_get(&self, id: &str) -> Result<Channel, ClientError> {
        let url = self.gateway_at("/channel/{id}", &format!("/channel/{}", encode_segment(id)));
        self.call::<(), _>(Method::GET, url, Auth::KeyAndGroup, &[], None, StatusCode::OK)
            .await
    }

    /// `PUT {gateway_url}/channel/:id`.
    pub async fn channel_update(&self, id: &str, update: &ChannelUpdate) -> Result<Channel, ClientError> {
        let url = self.gateway_at("/channel/{id}", &format!("/channel/{}", encode_segment(id)));
        self.call(Method::PUT, url, Auth::KeyAndGroup, &[], Some(update), StatusCode::OK)
            .await
    }

    /// `DELETE {gateway_url}/channel/:id` (soft delete to `DELETED`).
    pub async fn channel_delete(&self, id: &str) -> Result<Channel, ClientError> {
        let url = self.gateway_at("/channel/{id}", &format!("/channel/{}", encode_segment(id)));
        self.call::<(), _>(Method::DELETE, url, Auth::KeyAndGroup, &[], None, StatusCode::OK)
            .await
    }

    /// The sandbox's admin paths, under its root URL (`http://ADDR`).
    pub fn sandbox_admin(&self, root_url: impl Into<String>) -> SandboxAdmin<'_> {
        SandboxAdmin {
            client: self,
            root_url: root_url.into(),
        }
    }
}

/// Calls to the sandbox-only admin paths (`/_sandbox/...`), with the group's credentials.
pub struct SandboxAdmin<'a> {
    client: &'a Client,
    root_url: String,
}

impl SandboxAdmin<'_> {
    fn url(&self, path: &'static str) -> Target {
        Target {
            url: format!("{}/_sandbox{path}", trim_slash(&self.root_url)),
            endpoint: path,
        }
    }

    /// Every charge and refund of the group, and its balance.
    pub async fn ledger(&self) -> Result<Ledger, ClientError> {
        self.client
            .call::<(), _>(
                Method::GET,
                self.url("/ledger"),
                Auth::KeyAndGroup,
                &[],
                None,
                StatusCode::OK,
            )
            .await
    }

    /// How many times each number was sent.
    pub async fn sent(&self) -> Result<SentCounts, ClientError> {
        self.client
            .call::<(), _>(
                Method::GET,
                self.url("/sent"),
                Auth::KeyAndGroup,
                &[],
                None,
                StatusCode::OK,
            )
            .await
    }

    /// Verification tokens the sandbox "sent by SMS".
    pub async fn tokens(&self) -> Result<TokenOutbox, ClientError> {
        self.client
            .call::<(), _>(
                Method::GET,
                self.url("/tokens"),
                Auth::KeyAndGroup,
                &[],
                None,
                StatusCode::OK,
            )
            .await
    }

    pub async fn faults(&self) -> Result<FaultConfig, ClientError> {
        self.client
            .call::<(), _>(
                Method::GET,
                self.url("/faults"),
                Auth::KeyAndGroup,
                &[],
                None,
                StatusCode::OK,
            )
            .await
    }

    pub async fn set_faults(&self, faults: &FaultConfig) -> Result<FaultConfig, ClientError> {
        self.client
            .call(
                Method::PUT,
                self.url("/faults"),
                Auth::KeyAndGroup,
                &[],
                Some(faults),
                StatusCode::OK,
            )
            .await
    }
}

fn page_query(limit: Option<u32>, last_key: Option<&str>, status: Option<&str>) -> Vec<(&'static str, String)> {
    let mut query = Vec::new();
    if let Some(status) = status {
        query.push(("status", status.to_string()));
    }
    if let Some(limit) = limit {
        query.push(("limit", limit.to_string()));
    }
    if let Some(last_key) = last_key {
        query.push(("lastKey", last_key.to_string()));
    }
    query
}

/// Percent-encodes a path segment so an identifier cannot change the path.
fn encode_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(byte as char),
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    out
}
