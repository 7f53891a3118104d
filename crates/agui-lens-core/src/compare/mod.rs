//! Comparing streams by meaning: normalised (volatile fields dropped, minted ids made
//! tokens), then item by item, with the first difference and a unified diff.

pub mod comparison;
pub mod difference;
pub mod normalize;
pub mod streams;

/// What two streams are compared as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Level {
    /// Event by event, after normalisation.
    Events,
    /// After compacting both (so how deltas were split does not matter).
    Compact,
    /// Only the messages and state both fold to.
    Fold,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::Events => "events",
            Level::Compact => "compact",
            Level::Fold => "fold",
        }
    }

    pub fn parse(text: &str) -> Option<Level> {
        match text {
            "events" => Some(Level::Events),
            "compact" => Some(Level::Compact),
            "fold" => Some(Level::Fold),
            _ => None,
        }
    }
}
