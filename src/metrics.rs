//! What the process counts for `/metrics`: each request to the messaging service by endpoint and status with its time, and the requests tried again; the console adds its own figures when it is scraped.

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use std::sync::LazyLock;
use std::time::Duration;

/// Label pairs, as the text format writes them.
pub type Labels = Vec<(&'static str, String)>;

type Latency = Family<Labels, Histogram, fn() -> Histogram>;

struct Service {
    requests: Family<Labels, Counter>,
    latency: Latency,
    retries: Counter,
}

static SERVICE: LazyLock<Service> = LazyLock::new(|| Service {
    requests: Family::default(),
    // 5 ms to about 20 s.
    latency: Family::new_with_constructor(|| Histogram::new(exponential_buckets(0.005, 2.0, 12))),
    retries: Counter::default(),
});

/// A request to the service: its endpoint (`/alimTalk`, `/result/{id}`), its HTTP status (none
/// when no answer came) and how long it took.
pub fn service_request(endpoint: &'static str, status: Option<u16>, took: Duration) {
    let status = status.map_or_else(|| "none".to_string(), |status| status.to_string());
    SERVICE
        .requests
        .get_or_create(&vec![("endpoint", endpoint.to_string()), ("status", status)])
        .inc();
    SERVICE
        .latency
        .get_or_create(&vec![("endpoint", endpoint.to_string())])
        .observe(took.as_secs_f64());
}

/// A request tried again after a failure that provably took no effect (429, 503, no connection).
pub fn service_retry() {
    SERVICE.retries.inc();
}

/// Registers the service's figures in `registry`.
pub fn register_service(registry: &mut Registry) {
    registry.register(
        "msgbatch_service_requests",
        "Requests to the messaging service, by endpoint and HTTP status (none: no answer)",
        SERVICE.requests.clone(),
    );
    registry.register(
        "msgbatch_service_request_seconds",
        "Time of each request to the messaging service, by endpoint",
        SERVICE.latency.clone(),
    );
    registry.register(
        "msgbatch_service_retries",
        "Requests to the messaging service tried again (429, 503, no connection)",
        SERVICE.retries.clone(),
    );
}
