//! Order rules: timestamps run forward, in milliseconds since the epoch.

use super::protocol::Out;
use super::{Level, Rule, RuleId};
use crate::event::Location;

pub const TIMESTAMP_DECREASING: Rule = Rule {
    name: "order/timestamp-decreasing",
    default: Level::Warn,
    summary: "an event's timestamp is earlier than the previous event's",
    why: "Timelines and durations are computed from timestamps; going back in time usually \
          means events were reordered or two clocks were mixed.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","timestamp":1732000000500}
{"type":"RUN_FINISHED","threadId":"t1","runId":"r1","timestamp":1732000000100}
"#,
};

pub const TIMESTAMP_UNIT: Rule = Rule {
    name: "order/timestamp-unit",
    default: Level::Warn,
    summary: "timestamps that read as seconds, not milliseconds since the epoch",
    why: "AG-UI timestamps are milliseconds; seconds (Python's int(time.time())) put every \
          event in January 1970 for a client.",
    example: r#"{"type":"RUN_STARTED","threadId":"t1","runId":"r1","timestamp":1732000000}
"#,
};

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
        // 2001-09-09 to 2286-11-20 when read as seconds; years 1970-1973 as milliseconds.
        if !self.unit_reported && (1_000_000_000..100_000_000_000).contains(&ts) {
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
