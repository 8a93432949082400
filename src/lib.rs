//! msgbatch: a batch engine for notification, brand, SMS and LMS campaigns, with a sandbox of the messaging service.

pub mod api;
pub mod cli;
pub mod client;
pub mod phone;
pub mod sandbox;
pub mod template;
pub mod text;
