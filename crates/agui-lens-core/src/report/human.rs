//! The default format: rustc-like blocks and a one-line summary, plain or painted by the front
//! end (the library has no terminal: a terminal's colours are the front end's).

use std::io::{self, Write};

use crate::check::diagnostic::{Diagnostic, Severity};
use crate::report::group::{Repeated, places_text};
use crate::report::{FileSummary, Reporter, Summary, plural};

/// How a part of the output is shown: the front end paints each (a terminal's colours).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paint {
    Error,
    Warning,
    /// A rule, a message, a label.
    Bold,
    /// The arrows and bars that frame a finding.
    Frame,
}

/// Paints a part of the output; `None` leaves it plain.
pub type Painter = Box<dyn Fn(&str, Paint) -> String>;

pub struct Human {
    out: Box<dyn Write>,
    painter: Option<Painter>,
    /// Each input's verdict, listed before the summary when there are several.
    verdicts: Option<Vec<(String, String)>>,
}

impl Human {
    /// Plain text, as it is shown without colour.
    pub fn plain(out: Box<dyn Write>) -> Self {
        Human {
            out,
            painter: None,
            verdicts: None,
        }
    }

    /// Each part painted by `painter`.
    pub fn painted(out: Box<dyn Write>, painter: Painter) -> Self {
        Human {
            painter: Some(painter),
            ..Human::plain(out)
        }
    }

    fn paint(&self, text: &str, paint: Paint) -> String {
        match &self.painter {
            Some(painter) => painter(text, paint),
            None => text.to_owned(),
        }
    }
}

impl Reporter for Human {
    fn start_run(&mut self, inputs: usize) -> io::Result<()> {
        if inputs > 1 {
            self.verdicts = Some(Vec::new());
        }
        Ok(())
    }

    fn end_file(&mut self, file: &FileSummary) -> io::Result<()> {
        // What is said of the input that is no finding (a run that ended in RUN_ERROR, a
        // file beside a recording left out), as every other format says it.
        for remark in &file.notes {
            let label = self.paint("remark", Paint::Bold);
            let arrow = self.paint("-->", Paint::Frame);
            // On one line: a remark may quote an agent (a RUN_ERROR's message), whose line
            // breaks wrote lines of their own into a CI log (`::error …`).
            writeln!(self.out, "{label}: {}", visible_path(remark))?;
            writeln!(self.out, "  {arrow} {}", visible_path(&file.path))?;
        }
        if self.verdicts.is_some() {
            // (It may say why the input could not be read, naming a file or a URL.)
            let verdict = visible(&file.verdict()).into_owned();
            let shown = if file.failure.is_some() || file.stats.errors > 0 {
                self.paint(&verdict, Paint::Error)
            } else if file.stats.warnings > 0 {
                self.paint(&verdict, Paint::Warning)
            } else {
                verdict
            };
            let events = if file.skipped.is_some() {
                String::new()
            } else if file.recorded_findings {
                " (recorded findings)".to_owned()
            } else {
                format!(" ({})", plural(file.stats.events, "event"))
            };
            if let Some(verdicts) = &mut self.verdicts {
                verdicts.push((format!("{}{events}", visible_path(&file.path)), shown));
            }
        }
        Ok(())
    }

    fn diagnostic(&mut self, d: &Diagnostic) -> io::Result<()> {
        let label = match d.severity {
            Severity::Error => self.paint("error", Paint::Error),
            Severity::Warning => self.paint("warning", Paint::Warning),
            Severity::Note => self.paint("note", Paint::Bold),
        };
        let rule = self.paint(&format!("[{}]", d.rule), Paint::Bold);
        let message = self.paint(&visible(&d.message), Paint::Bold);
        writeln!(self.out, "{label}{rule}: {message}")?;
        let mut place = visible_path(&d.path).into_owned();
        if let Some(line) = d.line {
            place.push_str(&format!(":{line}"));
        }
        let mut context = Vec::new();
        if let Some(index) = d.event_index {
            context.push(format!("event {index}"));
        }
        if let Some(ty) = &d.event_type {
            context.push(visible(ty).into_owned());
        }
        let arrow = self.paint("-->", Paint::Frame);
        if context.is_empty() {
            writeln!(self.out, "  {arrow} {place}")?;
        } else {
            writeln!(self.out, "  {arrow} {place} ({})", context.join(", "))?;
        }
        let bar = self.paint("|", Paint::Frame);
        if let Some(excerpt) = &d.excerpt {
            writeln!(self.out, "   {bar} {}", visible(excerpt))?;
        }
        let eq = self.paint("=", Paint::Frame);
        if let (Some(pointer), Some(keyword)) = (&d.pointer, &d.keyword) {
            let pointer = if pointer.is_empty() {
                "the event root"
            } else {
                pointer
            };
            writeln!(
                self.out,
                "   {eq} at {}, schema keyword `{keyword}`",
                visible(pointer)
            )?;
        }
        if let Some(help) = &d.help {
            let label = self.paint("help", Paint::Bold);
            writeln!(self.out, "   {eq} {label}: {}", visible(help))?;
        }
        writeln!(self.out)
    }

    fn repeated(&mut self, group: &Repeated) -> io::Result<()> {
        let label = self.paint("note", Paint::Bold);
        let rule = self.paint(&format!("[{}]", group.rule), Paint::Bold);
        let about = if group.subject.is_empty() {
            String::new()
        } else {
            format!(" for \"{}\"", visible(&group.subject))
        };
        writeln!(
            self.out,
            "{label}{rule}: and {} more like the {} above{about}",
            group.count, group.severity
        )?;
        let arrow = self.paint("-->", Paint::Frame);
        writeln!(
            self.out,
            "  {arrow} {}: {}",
            visible(&group.path),
            places_text(group, 12)
        )?;
        let eq = self.paint("=", Paint::Frame);
        writeln!(self.out, "   {eq} --no-group shows each")?;
        writeln!(self.out)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        if let Some(verdicts) = self.verdicts.take() {
            let width = verdicts
                .iter()
                .map(|(name, _)| name.chars().count())
                .max()
                .unwrap_or(0);
            for (name, verdict) in verdicts {
                writeln!(self.out, "  {name:<width$}  {verdict}")?;
            }
        }
        let line = summary.line(&|text, severity| match severity {
            Severity::Error => self.paint(text, Paint::Error),
            Severity::Warning => self.paint(text, Paint::Warning),
            Severity::Note => text.to_owned(),
        });
        writeln!(self.out, "{line}")?;
        self.out.flush()
    }
}

/// Text from a capture as a terminal may show it: control characters (an escape sequence that
/// would recolour, move the cursor or retitle the terminal, a carriage return that would write
/// over the line), bidi overrides and isolates (which show text in another order than it is)
/// and marks that take no room are written as escapes (`\x1b`, `\u{202e}`, `\u{200b}`); tabs
/// and line breaks stay.
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(acted_on) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if acted_on(c) {
            let code = u32::from(c);
            if code < 0x100 {
                shown.push_str(&format!("\\x{code:02x}"));
            } else {
                shown.push_str(&format!("\\u{{{code:x}}}"));
            }
        } else {
            shown.push(c);
        }
    }
    std::borrow::Cow::Owned(shown)
}

/// A file's name as one line shows it: [`visible`], and its line breaks and tabs escaped
/// too (`\n`), so that a name is never taken for two lines of the report.
pub fn visible_path(path: &str) -> std::borrow::Cow<'_, str> {
    let shown = visible(path);
    if !shown.contains(['\n', '\t']) {
        return shown;
    }
    std::borrow::Cow::Owned(shown.replace('\n', "\\n").replace('\t', "\\t"))
}

/// A writer of text for a terminal, which writes what a terminal would act on as [`visible`]
/// does, whatever reaches it. `write!` hands each piece over whole (a literal, or an
/// argument's text), so neither a character nor the mark is split between two writes.
pub struct Visible<W> {
    out: W,
    /// Written in place of ESC by whoever writes colour codes through this writer, which
    /// come out as codes (see [`Visible::marked`]); none for a writer of plain text.
    mark: String,
    finder: memchr::memmem::Finder<'static>,
    /// Whether text may hold stand-ins for halves of UTF-16 pairs, written as the escapes
    /// they were read from (see [`crate::read::halves`]).
    stand_ins: bool,
}

impl<W: Write> Visible<W> {
    pub fn new(out: W) -> Self {
        Visible {
            out,
            mark: String::new(),
            finder: memchr::memmem::Finder::new(b"").into_owned(),
            stand_ins: false,
        }
    }

    /// A writer whose user writes its own colour codes with [`Visible::mark`] in place of
    /// ESC: a mark no stream can know in advance, characters of a private-use plane picked
    /// anew for each writer from the process's random hashing keys, so that only those codes
    /// come out as codes, and a stream's own (`ESC [ 8 m` hides text, `ESC [ 2 J` clears the
    /// screen) are escaped.
    pub fn marked(out: W) -> Self {
        use std::hash::{BuildHasher, Hasher};
        let mut bits = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        let mark: String = (0..4)
            .map(|_| {
                let c = char::from_u32(0xF_0000 + (bits & 0xFFFF) as u32).unwrap_or('\u{F8FF}');
                bits >>= 16;
                c
            })
            .collect();
        let finder = memchr::memmem::Finder::new(mark.as_bytes()).into_owned();
        Visible {
            out,
            mark,
            finder,
            stand_ins: false,
        }
    }

    /// Writes stand-ins for halves of UTF-16 pairs as the escapes they were read from, when
    /// `held` (the text was read keeping halves).
    pub fn stand_ins(&mut self, held: bool) {
        self.stand_ins = held;
    }

    /// What stands for ESC in colour codes written through this writer.
    pub fn mark(&self) -> &str {
        &self.mark
    }
}

impl<W: Write> Write for Visible<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        // Most text holds none of the bytes that begin what is looked for: written at once.
        if !buf.iter().any(|&b| LOOKED_AT[usize::from(b)]) {
            return self.out.write_all(buf);
        }
        let mut text = String::from_utf8_lossy(buf);
        if self.stand_ins
            && let std::borrow::Cow::Owned(escaped) = crate::read::halves::escape_stand_ins(&text)
        {
            text = std::borrow::Cow::Owned(escaped);
        }
        if self.mark.is_empty() {
            return self.out.write_all(visible(&text).as_bytes());
        }
        // The text between the marks escaped, each mark an ESC.
        let mut from = 0;
        for at in self.finder.find_iter(text.as_bytes()) {
            self.out.write_all(visible(&text[from..at]).as_bytes())?;
            self.out.write_all(b"\x1b")?;
            from = at + self.mark.len();
        }
        self.out.write_all(visible(&text[from..]).as_bytes())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The bytes that begin what [`Visible`] looks for: the C0 controls but tab and line feed,
/// DEL, the lead bytes of the C1 controls and the no-break space and soft hyphen
/// (U+0080–U+00BF), of the bidi controls and the marks that take no room (see [`acted_on`]:
/// U+034F, U+061C, U+1xxx, U+2xxx, U+3164, U+Fxxx, the tags of plane 14), of the mark's
/// plane (15) and of the stand-ins' (16).
static LOOKED_AT: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b != b'\t' as usize && b != b'\n' as usize;
        b += 1;
    }
    table[0x7F] = true;
    table[0xC2] = true;
    table[0xCD] = true;
    table[0xD8] = true;
    table[0xE1] = true;
    table[0xE2] = true;
    table[0xE3] = true;
    table[0xEF] = true;
    table[0xF3] = true;
    table[0xF4] = true;
    table
};

/// Whether a terminal acts on the character rather than shows it (see [`visible`]).
pub fn acted_on(c: char) -> bool {
    (c.is_control() && c != '\t' && c != '\n')
        || matches!(
            c,
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{061c}'
            // What takes no room or looks like a plain space: zero-width and other spaces, the
            // left-to-right and right-to-left marks, joiners of words and graphemes, a soft
            // hyphen, fillers, line and paragraph separators, invisible operators, tags, a
            // byte order mark. (The zero-width joiners that make up emoji and scripts are
            // left alone.)
            | '\u{00a0}' | '\u{00ad}' | '\u{034f}' | '\u{115f}' | '\u{1160}'
            | '\u{17b4}' | '\u{17b5}' | '\u{180e}' | '\u{2000}'..='\u{200b}'
            | '\u{200e}' | '\u{200f}' | '\u{2028}' | '\u{2029}' | '\u{202f}'
            | '\u{205f}'..='\u{2064}' | '\u{206a}'..='\u{206f}' | '\u{3164}'
            | '\u{feff}' | '\u{ffa0}' | '\u{fff9}'..='\u{fffb}' | '\u{e0000}'..='\u{e007f}'
        )
}
