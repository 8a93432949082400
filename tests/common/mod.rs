//! Shared test harness: a sandbox on a free loopback port and clients of its groups.
#![allow(dead_code)]

pub mod api;
pub mod child;
pub mod console;
pub mod korean;
pub mod process;
pub mod serve;

use msgbatch::client::{ApiKey, Client, ClientConfig, SandboxAdmin};
use msgbatch::sandbox::{Accounts, SandboxHandle};

/// Demo group credentials (see `src/sandbox/demo_accounts.toml`).
pub const DEMO_GROUP: &str = "demo";
pub const DEMO_KEY: &str = "sbx-demo-key";
pub const OTHER_GROUP: &str = "other";
pub const OTHER_KEY: &str = "sbx-other-key";
pub const DEMO_SENDER_KEY: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f001234567";
pub const DEMO_CALLBACK: &str = "0212345678";
pub const ALIMTALK_SERVICE: u64 = 1001;
pub const BRAND_SERVICE: u64 = 2001;
pub const SMS_SERVICE: u64 = 3001;
pub const ORDER_SHIPPED_TEXT: &str = "#{이름}님, 주문하신 상품이 발송되었습니다. 송장번호: #{VAR1}";

/// A running sandbox and what a test needs to talk to it.
pub struct TestSandbox {
    pub handle: SandboxHandle,
}

impl TestSandbox {
    /// The built-in demo accounts.
    pub async fn demo() -> TestSandbox {
        TestSandbox::with(Accounts::demo()).await
    }

    /// The demo accounts with gateway sends settling after `settle_after` (like `"0s"`).
    pub async fn demo_settling(settle_after: &str) -> TestSandbox {
        let mut accounts = Accounts::demo();
        accounts.settle_after = settle_after.to_string();
        TestSandbox::with(accounts).await
    }

    /// Accounts from TOML text.
    pub async fn from_toml(text: &str) -> TestSandbox {
        TestSandbox::with(Accounts::parse(text, "test accounts").expect("valid test accounts")).await
    }

    pub async fn with(accounts: Accounts) -> TestSandbox {
        TestSandbox {
            handle: SandboxHandle::start(accounts).await.expect("sandbox starts on port 0"),
        }
    }

    /// A client of `group` with `key`.
    pub fn client_as(&self, key: &str, group: &str) -> Client {
        let config = ClientConfig::new(
            self.handle.base_url(),
            self.handle.gateway_url(),
            ApiKey::new(key),
            group,
        );
        Client::new(config).expect("client builds")
    }

    /// A client of the demo group.
    pub fn client(&self) -> Client {
        self.client_as(DEMO_KEY, DEMO_GROUP)
    }

    /// A client of the other group, for isolation checks.
    pub fn other(&self) -> Client {
        self.client_as(OTHER_KEY, OTHER_GROUP)
    }

    pub fn admin<'a>(&self, client: &'a Client) -> SandboxAdmin<'a> {
        client.sandbox_admin(self.handle.root_url())
    }

    /// A raw HTTP client for requests the typed client would never make (missing headers, bad bodies).
    pub fn raw(&self) -> reqwest::Client {
        reqwest::Client::new()
    }
}

/// A valid mobile number `010` + `serial` + `suffix` (outcome rules of the demo accounts match on
/// the end); distinct serials give distinct numbers for the same suffix.
pub fn number_ending(serial: u32, suffix: &str) -> String {
    let width = 8 - suffix.len();
    let serial = format!("{serial:0width$}");
    assert!(
        serial.len() == width,
        "serial {serial} does not fit before suffix {suffix}"
    );
    format!("010{serial}{suffix}")
}

/// A property test's configuration: `cases` cases, unless `PROPTEST_CASES` asks for another
/// number (for the long runs the README gives).
pub fn proptest_config(cases: u32) -> proptest::prelude::ProptestConfig {
    let default = proptest::prelude::ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_some() {
        default
    } else {
        proptest::prelude::ProptestConfig { cases, ..default }
    }
}
