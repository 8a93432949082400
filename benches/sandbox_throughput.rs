//! How many SMS recipients per second the sandbox accepts over loopback, in chunks of 100.
//!
//! Request bodies are serialised once up front so the figure is the sandbox's (plus HTTP), not
//! the load generator's JSON work. Run: `cargo bench --bench sandbox_throughput`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use futures::StreamExt;
use msgbatch::api::standard::TextMessageRequest;
use msgbatch::sandbox::{Accounts, SandboxHandle};

const CHUNK: usize = 100;
const REQUESTS_PER_ITERATION: usize = 200;
const IN_FLIGHT: usize = 16;

fn bodies() -> Vec<bytes::Bytes> {
    (0..REQUESTS_PER_ITERATION)
        .map(|request| {
            let numbers = (0..CHUNK)
                .map(|i| format!("010{:04}{:04}", request % 10_000, i))
                .collect();
            let body = TextMessageRequest {
                service: 3001,
                message: "[msgbatch] 주문이 접수되었습니다.".into(),
                numbers,
                group_id: "demo".into(),
                callback_no: "0212345678".into(),
                mapping: None,
                subject: None,
            };
            bytes::Bytes::from(serde_json::to_vec(&body).expect("serialises"))
        })
        .collect()
}

fn sms_chunks(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let sandbox = runtime
        .block_on(SandboxHandle::start(Accounts::demo()))
        .expect("sandbox starts");
    let url = format!("{}/sms", sandbox.base_url());
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(IN_FLIGHT)
        .build()
        .expect("client");
    let bodies = bodies();

    let mut group = c.benchmark_group("sandbox");
    group.throughput(Throughput::Elements((CHUNK * REQUESTS_PER_ITERATION) as u64));
    group.sample_size(20);
    group.bench_function("sms_recipients_in_chunks_of_100", |b| {
        b.iter(|| {
            runtime.block_on(async {
                futures::stream::iter(bodies.iter().cloned())
                    .map(|body| {
                        let request = http
                            .post(&url)
                            .header("apikey", "sbx-demo-key")
                            .header("groupId", "demo")
                            .header("content-type", "application/json")
                            .body(body);
                        async move {
                            let response = request.send().await.expect("sandbox answers");
                            assert!(response.status().is_success());
                            response.bytes().await.expect("body")
                        }
                    })
                    .buffer_unordered(IN_FLIGHT)
                    .for_each(|_| async {})
                    .await
            })
        })
    });
    group.finish();
    runtime.block_on(sandbox.stop());
}

criterion_group!(benches, sms_chunks);
criterion_main!(benches);
