//! Management commands: sender profiles, categories, channels and gateway results.

use super::exit::Exit;
use super::output::{self, CHANNEL_HEADER, RECORD_HEADER};
use super::{ChannelAction, ResultAction, SenderAction};
use crate::api::channel::{ChannelCreate, ChannelUpdate, SenderIssue};
use crate::client::Client;
use crate::phone::Masked;
use anyhow::{bail, Result};
use futures::TryStreamExt;
use std::collections::BTreeMap;

pub async fn sender(client: &Client, action: SenderAction, json: bool) -> Result<Exit> {
    match action {
        SenderAction::Token { phone, yellow_id } => {
            let answer = client.sender_token(&phone, yellow_id.as_deref()).await?;
            if json {
                output::json(&answer)?;
            } else {
                println!(
                    "{}: verification token sent by SMS to {}",
                    answer.status,
                    Masked(&phone)
                );
            }
        }
        SenderAction::Issue {
            token,
            phone,
            yellow_id,
            category,
        } => {
            let request = SenderIssue {
                token,
                phone_number: phone,
                yellow_id,
                category_code: category,
            };
            let profile = client.sender_issue(&request).await?;
            if json {
                output::json(&profile)?;
            } else {
                println!("sender key {} ({})", profile.sender_key, profile.status);
            }
        }
        SenderAction::Status { sender_key } => {
            let profile = client.sender_status(&sender_key).await?;
            if json {
                output::json(&profile)?;
            } else {
                println!("sender key {} is {}", profile.sender_key, profile.status);
            }
        }
    }
    Ok(Exit::Done)
}

pub async fn category(client: &Client, json: bool) -> Result<Exit> {
    let list = client.categories().await?;
    if json {
        output::json(&list)?;
    } else {
        let rows: Vec<Vec<String>> = list
            .categories
            .iter()
            .map(|c| vec![c.code.clone(), c.name.clone()])
            .collect();
        output::table(&["CODE", "NAME"], &rows);
    }
    Ok(Exit::Done)
}

pub async fn channel(client: &Client, action: ChannelAction, json: bool) -> Result<Exit> {
    let single = match action {
        ChannelAction::Create {
            name,
            sender_key,
            kakao_search_id,
            callback_no,
        } => {
            client
                .channel_create(&ChannelCreate {
                    name,
                    sender_key,
                    kakao_search_id,
                    callback_no,
                })
                .await?
        }
        ChannelAction::Get { id } => client.channel_get(&id).await?,
        ChannelAction::Update {
            id,
            name,
            callback_no,
            sender_key,
        } => {
            let update = ChannelUpdate {
                name,
                callback_no,
                sender_key,
            };
            if update.is_empty() {
                bail!("channel update {id}: give at least one of --name, --callback-no, --sender-key");
            }
            client.channel_update(&id, &update).await?
        }
        ChannelAction::Delete { id } => client.channel_delete(&id).await?,
        ChannelAction::List { status, limit } => {
            let channels: Vec<_> = client.channels(status.as_deref(), limit).try_collect().await?;
            if json {
                output::json(&channels)?;
            } else {
                let rows: Vec<_> = channels.iter().map(output::channel_row).collect();
                output::table(&CHANNEL_HEADER, &rows);
                println!("{} channel(s)", channels.len());
            }
            return Ok(Exit::Done);
        }
    };
    if json {
        output::json(&single)?;
    } else {
        output::table(&CHANNEL_HEADER, &[output::channel_row(&single)]);
    }
    Ok(Exit::Done)
}

pub async fn result(client: &Client, action: ResultAction, json: bool) -> Result<Exit> {
    match action {
        ResultAction::Get { id } => {
            let record = client.result(&id).await?;
            if json {
                output::json(&record)?;
            } else {
                output::table(&RECORD_HEADER, &[output::record_row(&record)]);
            }
        }
        ResultAction::Group { send_group_id, limit } => {
            let records: Vec<_> = client.results(&send_group_id, Some(limit)).try_collect().await?;
            if json {
                output::json(&records)?;
            } else {
                let rows: Vec<_> = records.iter().map(output::record_row).collect();
                output::table(&RECORD_HEADER, &rows);
                let mut by_result: BTreeMap<&str, usize> = BTreeMap::new();
                for record in &records {
                    *by_result.entry(record.result.as_deref().unwrap_or("?")).or_default() += 1;
                }
                let summary: Vec<String> = by_result.iter().map(|(r, n)| format!("{r} {n}")).collect();
                println!("{} record(s): {}", records.len(), summary.join(", "));
            }
        }
    }
    Ok(Exit::Done)
}
