//! Order rules: timestamps run forward, in milliseconds since the epoch.

use super::protocol::Out;
use crate::check::catalog::RuleId;
use crate::protocol::event::{Location, SECONDS};

#[derive(Default)]
pub struct Order {
    last: Option<i64>,
    unit_reported: bool,
}

impl Order {
    pub fn on_timestamp(&mut self, timestamp: Option<i64>, loc: &Location, out: &mut Out<'_>) {
        let Some(ts) = timestamp else {
            return;
        };
        if !self.unit_reported && SECONDS.contains(&ts) {
            self.unit_reported = true;
            out.report(
                RuleId::OrderTimestampUnit,
                loc,
                format!("timestamp {ts} reads as seconds since the epoch, not milliseconds"),
                "send milliseconds since the epoch (seconds × 1000)",
            );
        }
        if let Some(last) = self.last {
            if ts < last {
                out.report_about(
                    RuleId::OrderTimestampDecreasing,
                    loc,
                    "",
                    format!(
                        "timestamp {ts} is {} ms earlier than the previous event's ({last})",
                        last.abs_diff(ts)
                    ),
                    "events are sent in order; check for reordering or a second clock",
                );
            }
        }
        self.last = Some(ts);
    }
}
