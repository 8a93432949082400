//! Checks of the test harness itself: the sandbox starts on port 0 and answers both deployments.

mod common;

use common::*;

#[tokio::test]
async fn sandbox_on_port_zero_serves_both_deployments() {
    let sandbox = TestSandbox::demo().await;
    assert_ne!(sandbox.handle.addr().port(), 0);
    let client = sandbox.client();
    let categories = client.categories().await.expect("gateway answers");
    assert!(!categories.categories.is_empty());
    let unknown = sandbox
        .raw()
        .get(format!("{}/nowhere", sandbox.handle.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
}

#[test]
fn numbers_end_with_the_suffix() {
    assert_eq!(number_ending(12, "91"), "01000001291");
    assert_eq!(number_ending(1234567, "7"), "01012345677");
    assert_ne!(number_ending(12, "91"), number_ending(13, "91"));
    assert!(msgbatch::phone::is_mobile(&number_ending(5, "93")));
}
