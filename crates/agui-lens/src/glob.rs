//! Glob patterns for event type names (`TEXT_*`, `RUN_?????ED`): `*` any run of characters,
//! `?` one character, everything else itself, ASCII case ignored.

/// Whether `text` matches `pattern` as a whole.
pub fn matches(pattern: &str, text: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = text.chars().collect();
    // Iterative matching with one backtrack point: the last `*` seen, and where in the text
    // it started. Linear in practice, never exponential.
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == '?' || c.eq_ignore_ascii_case(&text[t]) => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
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
