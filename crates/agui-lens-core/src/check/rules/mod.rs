//! The rules' checks, one file per family (`schema` per event, `protocol` following the
//! stream and handing each event to the others); what each rule is for is in `catalog`.

pub mod lifecycle;
pub mod order;
pub mod pairing;
pub mod protocol;
pub mod reference;
pub mod schema;
pub mod state;
pub mod tool_args;
