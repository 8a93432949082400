//! The spend cap of a run's last start, kept in the checkpoint beside its chunk records (their costs are in the records).

use super::{store_error, Checkpoint, CheckpointError};

const BUDGET_KEY: &[u8] = b"budget";

impl Checkpoint {
    /// The spend cap in force for the run's last start (`None`: prices but no cap), or `None`
    /// outside when the campaign gives no prices and the run was never priced.
    pub fn budget(&self) -> Result<Option<Option<i64>>, CheckpointError> {
        match self.db.get(BUDGET_KEY).map_err(store_error(&self.path))? {
            None => Ok(None),
            Some(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| CheckpointError::Store {
                    path: self.path.clone(),
                    message: format!("budget: {e}"),
                }),
        }
    }

    /// Records the spend cap of this start (durable with the next flush).
    pub fn put_budget(&self, limit: Option<i64>) -> Result<(), CheckpointError> {
        let bytes = serde_json::to_vec(&limit).expect("a budget serialises");
        self.db.insert(BUDGET_KEY, bytes).map_err(store_error(&self.path))?;
        Ok(())
    }
}
