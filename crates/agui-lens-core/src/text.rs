//! Text for people: values and sizes shortened for a message, counted nouns.

/// Shortens text for display: at most `max` characters, cut on a character boundary, with an
/// ellipsis and the count of what was left out.
pub fn abbreviate(text: &str, max: usize) -> String {
    let text = text.trim_end_matches(['\r', '\n']);
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((cut, _)) => {
            let rest = text.len() - cut;
            format!("{}… ({rest} more bytes)", &text[..cut])
        }
    }
}

/// Shortens two texts shown one above the other, each to about `max` characters, so that
/// where they part can be seen: when they agree on more than three quarters of what would be
/// shown, each is shown from a little before that point, with the bytes left out before it
/// counted (`…(2890 bytes) aaaX…`).
pub fn abbreviate_pair(a: &str, b: &str, max: usize) -> (String, String) {
    let context = max / 4;
    let common: usize = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    if common <= max - context {
        return (abbreviate(a, max), abbreviate(b, max));
    }
    // The same characters before the point on both sides: the same bytes.
    let skip = a
        .char_indices()
        .nth(common - context)
        .map_or(a.len(), |(at, _)| at);
    let shown = |text: &str| format!("…({skip} bytes) {}", abbreviate(&text[skip..], max));
    (shown(a), shown(b))
}

/// Shortens a value's JSON for display, like [`abbreviate`], without writing out more than a
/// bounded amount of a large value: past 1 MiB the count of what was left out is a floor.
pub fn abbreviate_value(value: &serde_json::Value, max: usize) -> String {
    const COUNTED: usize = 1 << 20;
    struct Bounded {
        kept: Vec<u8>,
        keep: usize,
        total: usize,
    }
    impl std::io::Write for Bounded {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let room = self.keep.saturating_sub(self.kept.len());
            self.kept.extend_from_slice(&buf[..buf.len().min(room)]);
            self.total += buf.len();
            if self.total > COUNTED {
                return Err(std::io::Error::other("enough"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    // Characters are at most four bytes, so this keeps enough for `max` of them.
    let mut out = Bounded {
        kept: Vec::new(),
        keep: max.saturating_mul(4).saturating_add(4),
        total: 0,
    };
    let complete = serde_json::to_writer(&mut out, value).is_ok();
    let text = String::from_utf8_lossy(&out.kept);
    let Some((cut, _)) = text.char_indices().nth(max) else {
        return text.into_owned();
    };
    let rest = out.total - cut;
    if complete {
        format!("{}… ({rest} more bytes)", &text[..cut])
    } else {
        format!("{}… (over {rest} more bytes)", &text[..cut])
    }
}

/// `1536` → `1.5 KiB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: &[&str] = &["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} bytes")
    } else if value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// `1 error`, `2 warnings`.
pub fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// Whether `text` matches the glob `pattern` as a whole: `*` any run of characters, `?` one
/// character, everything else itself (ASCII case ignored when `ignore_case`).
pub fn glob_matches(pattern: &str, text: &str, ignore_case: bool) -> bool {
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
            Some(&c)
                if c == '?'
                    || c == text[t]
                    || (ignore_case && c.eq_ignore_ascii_case(&text[t])) =>
            {
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
    use super::*;

    #[test]
    fn abbreviate_cuts_on_char_boundary() {
        assert_eq!(abbreviate("héllo", 10), "héllo");
        assert_eq!(abbreviate("héllo wörld", 3), "hél… (9 more bytes)");
        let value = serde_json::json!({"k": "héllo wörld"});
        assert_eq!(abbreviate_value(&value, 8), "{\"k\":\"hé… (12 more bytes)");
        assert_eq!(abbreviate_value(&value, 80), value.to_string());
        let big = serde_json::Value::String("x".repeat(3 << 20));
        let shown = abbreviate_value(&big, 2);
        assert!(shown.starts_with("\"x… (over "), "{shown}");
        assert_eq!(abbreviate("line\r\n", 10), "line");
    }
}
