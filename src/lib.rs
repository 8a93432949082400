//! msgbatch: a batch engine for notification, brand, SMS and LMS campaigns, with a sandbox of the messaging service.

pub mod api;
pub mod campaign;
pub mod cli;
pub mod client;
pub mod console;
pub mod contained;
pub mod engine;
pub mod failpoint;
pub mod files;
pub mod input;
pub mod interrupt;
pub mod metrics;
pub mod phone;
pub mod plan;
pub mod preview;
pub mod purge;
pub mod reconcile;
pub mod report;
pub mod retry;
pub mod sandbox;
pub mod statement;
pub mod template;
pub mod text;
