//! Gateway channels: create, list page by page, read, update and soft delete.

use super::{parse_limit, random_hex, ChannelState, GroupRef, Rejection, SandboxState};
use crate::api::channel::{
    channel_status, Channel, ChannelCreate, ChannelPage, ChannelUpdate, CHANNEL_PAGE_DEFAULT, CHANNEL_PAGE_MAX,
};
use crate::api::now_millis;

impl SandboxState {
    /// `POST {gateway_url}/channel`.
    pub fn channel_create(&mut self, group: GroupRef, request: &ChannelCreate) -> Result<Channel, Rejection> {
        let g = self.group(group);
        if request.name.trim().is_empty() {
            return Err(Rejection::fail("SBX_NAME_REQUIRED", "name is required"));
        }
        if !g.senders.contains_key(&request.sender_key) {
            return Err(Rejection::fail(
                "SBX_UNKNOWN_SENDER_KEY",
                "senderKey is not a sender profile of this group",
            ));
        }
        if let Some(callback) = &request.callback_no {
            g.check_callback_registered(callback, Rejection::fail)?;
        }
        let now = now_millis();
        let record = Channel {
            id: format!("ch-{}", random_hex(16)),
            group_id: g.config.id.clone(),
            name: request.name.clone(),
            sender_key: request.sender_key.clone(),
            callback_no: request.callback_no.clone(),
            status: channel_status::ENABLE.into(),
            channel_status: "ACTIVE".into(),
            created_at: now,
            updated_at: now,
        };
        g.insert_channel(ChannelState {
            record: record.clone(),
            friends: 0,
            nm_approved: false,
        });
        Ok(record)
    }

    /// `GET {gateway_url}/channel`.
    pub fn channel_page(
        &mut self,
        group: GroupRef,
        status: Option<&str>,
        limit: Option<&str>,
        last_key: Option<&str>,
    ) -> Result<ChannelPage, Rejection> {
        let limit = parse_limit(limit, CHANNEL_PAGE_DEFAULT, CHANNEL_PAGE_MAX)?;
        if let Some(status) = status {
            if status != channel_status::ENABLE && status != channel_status::DELETED {
                return Err(Rejection::fail("SBX_BAD_STATUS", "status must be ENABLE or DELETED"));
            }
        }
        let g = self.group(group);
        let start = match last_key {
            None => 0,
            Some(key) => match g.channel_position.get(key) {
                Some(&position) => position + 1,
                None => {
                    return Err(Rejection::fail(
                        "SBX_BAD_LAST_KEY",
                        "lastKey is not a key this listing gave",
                    ))
                }
            },
        };
        let mut matching = g.channel_order[start.min(g.channel_order.len())..]
            .iter()
            .map(|id| &g.channels[id].record)
            .filter(|record| status.is_none_or(|s| record.status == s));
        let items: Vec<Channel> = matching.by_ref().take(limit).cloned().collect();
        let more = matching.next().is_some();
        let last_key = if more { items.last().map(|c| c.id.clone()) } else { None };
        Ok(ChannelPage {
            count: items.len() as u64,
            items,
            last_key,
        })
    }

    /// `GET {gateway_url}/channel/:id`.
    pub fn channel_get(&mut self, group: GroupRef, id: &str) -> Result<Channel, Rejection> {
        let g = self.group(group);
        g.channels
            .get(id)
            .map(|c| c.record.clone())
            .ok_or_else(|| Rejection::not_found(format!("no channel {id}")))
    }

    /// `PUT {gateway_url}/channel/:id`.
    pub fn channel_update(&mut self, group: GroupRef, id: &str, update: &ChannelUpdate) -> Result<Channel, Rejection> {
        let g = self.group(group);
        if !g.channels.contains_key(id) {
            return Err(Rejection::not_found(format!("no channel {id}")));
        }
        if update.is_empty() {
            return Err(Rejection::fail(
                "SBX_EMPTY_UPDATE",
                "give at least one of name, callbackNo, senderKey",
            ));
        }
        if let Some(sender_key) = &update.sender_key {
            if !g.senders.contains_key(sender_key) {
                return Err(Rejection::fail(
                    "SBX_UNKNOWN_SENDER_KEY",
                    "senderKey is not a sender profile of this group",
                ));
            }
        }
        if let Some(callback) = &update.callback_no {
            g.check_callback_registered(callback, Rejection::fail)?;
        }
        let channel = g.channels.get_mut(id).expect("checked");
        if channel.record.status == channel_status::DELETED {
            return Err(Rejection::fail(
                "SBX_CHANNEL_DELETED",
                format!("channel {id} is deleted"),
            ));
        }
        if let Some(name) = &update.name {
            channel.record.name = name.clone();
        }
        if let Some(callback) = &update.callback_no {
            channel.record.callback_no = Some(callback.clone());
        }
        if let Some(sender_key) = &update.sender_key {
            channel.record.sender_key = sender_key.clone();
        }
        channel.record.updated_at = now_millis();
        Ok(channel.record.clone())
    }

    /// `DELETE {gateway_url}/channel/:id`: soft delete.
    pub fn channel_delete(&mut self, group: GroupRef, id: &str) -> Result<Channel, Rejection> {
        let g = self.group(group);
        let Some(channel) = g.channels.get_mut(id) else {
            return Err(Rejection::not_found(format!("no channel {id}")));
        };
        if channel.record.status != channel_status::DELETED {
            channel.record.status = channel_status::DELETED.into();
            channel.record.updated_at = now_millis();
        }
        Ok(channel.record.clone())
    }
}
