//! Glob patterns for event type names (`TEXT_*`, `RUN_?????ED`): `*` any run of characters,
//! `?` one character, everything else itself, ASCII case ignored.

/// Whether `text` matches `pattern` as a whole.
pub fn matches(pattern: &str, text: &str) -> bool {
    agui_lens_core::text::glob_matches(pattern, text, true)
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn globs() {
        assert!(matches("TEXT_*", "TEXT_MESSAGE_CONTENT"));
        assert!(matches("text_*", "TEXT_MESSAGE_CONTENT"));
        assert!(matches("*_END", "TOOL_CALL_END"));
        assert!(matches("*CALL*", "TOOL_CALL_ARGS"));
        assert!(matches("RUN_STARTED", "RUN_STARTED"));
        assert!(matches("RUN_?????ED", "RUN_STARTED"));
        assert!(matches("*", ""));
        assert!(matches("**A", "BA"));
        assert!(!matches("TEXT_*", "TOOL_CALL_START"));
        assert!(!matches("RUN_STARTED", "RUN_STARTED_X"));
        assert!(!matches("?", ""));
        assert!(!matches("*_END", "TOOL_CALL_ENDS"));
        assert!(matches("A*B*C", "AxxBxxBxxC"));
        assert!(!matches("A*B*C", "AxxBxxBxx"));
    }
}
