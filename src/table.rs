//! Terminal tables: every table macbench prints (`list`, `selftest`, `run`'s rows and matrices, `model`,
//! `compare`, `diff`, `net`) goes through [`Table`], one small layer over `comfy-table`.
//!
//! Two styles, chosen by where the lines land rather than by each command. In pipes and files
//! ([`Style::Plain`]) a row is the cells separated by two spaces, first column at the start of the line,
//! no rules and no trailing blanks: scripts and the tests find rows with `starts_with(function)` and
//! split them on whitespace. On a terminal ([`Style::Ruled`]) a `│` separates the columns and a rule
//! underlines the header.
//!
//! `run` and `net` print a row as each result arrives, long before the last one is known, so their
//! columns carry minimum widths: [`Table::header`] and every [`Table::row`] are laid out against the
//! same widths and line up without knowing later rows (a wider cell pushes only its own row over, as
//! `format!` padding did).
//!
//! It sits below every other module, beside [`crate::stdio`], because the exporters (`report`), `net`,
//! `peers` and the CLI all print tables.

use comfy_table::{CellAlignment, ColumnConstraint, ContentArrangement, TableComponent, Width};

/// Where a column's cells sit: text on the left, numbers on the right so that digits line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// How a table is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Two spaces between columns, nothing else: for pipes and files.
    Plain,
    /// `│` between columns and a `─` rule under the header: for a person at a terminal.
    Ruled,
}

impl Style {
    /// Ruled when macbench's printed lines land on a terminal, plain otherwise.
    pub fn detect() -> Style {
        if crate::stdio::prints_to_terminal() {
            Style::Ruled
        } else {
            Style::Plain
        }
    }
}

#[derive(Debug, Clone)]
struct Column {
    name: String,
    align: Align,
    /// Characters of content the column keeps even when every cell is narrower.
    min_width: usize,
}

/// A table's columns and style. Rows are given as cells already formatted (`format!("{v:.2}")`), one
/// per column; a row with fewer cells is blank on the right.
#[derive(Debug, Clone)]
pub struct Table {
    columns: Vec<Column>,
    style: Style,
}

impl Table {
    pub fn new(style: Style) -> Table {
        Table {
            columns: Vec::new(),
            style,
        }
    }

    /// A text column, left-aligned.
    pub fn left(self, name: &str) -> Table {
        self.column(name, Align::Left)
    }

    /// A numeric column, right-aligned.
    pub fn right(self, name: &str) -> Table {
        self.column(name, Align::Right)
    }

    pub fn column(mut self, name: &str, align: Align) -> Table {
        self.columns.push(Column {
            name: name.to_string(),
            align,
            min_width: 0,
        });
        self
    }

    /// Whether a column of this name is in the table.
    pub fn has_column(&self, name: &str) -> bool {
        self.columns.iter().any(|c| c.name == name)
    }

    /// The last column added stays at least `width` characters wide (for tables printed row by row).
    pub fn min_width(mut self, width: usize) -> Table {
        if let Some(last) = self.columns.last_mut() {
            last.min_width = width;
        }
        self
    }

    /// Header and rows, each line ending in a newline.
    pub fn render<R: AsRef<[String]>>(&self, rows: &[R]) -> String {
        let mut out = String::new();
        for line in self.lines(rows) {
            out.push_str(&line);
            out.push('\n');
        }
        out
    }

    /// Header and a row of `cells` for each of `items`, each line ending in a newline.
    pub fn render_each<T>(&self, items: &[T], cells: impl FnMut(&T) -> Vec<String>) -> String {
        self.render(&items.iter().map(cells).collect::<Vec<_>>())
    }

    /// The header line (and its rule, when ruled), without a final newline.
    pub fn header(&self) -> String {
        self.lines::<Vec<String>>(&[]).join("\n")
    }

    /// One row laid out as under [`Table::header`], without a final newline.
    pub fn row(&self, cells: &[String]) -> String {
        // Laid out with the header present so that a header wider than the minimum widens the column
        // in both; the lines before the row's are the header's.
        let skip = self.lines::<Vec<String>>(&[]).len();
        self.lines(&[cells]).split_off(skip).join("\n")
    }

    fn lines<R: AsRef<[String]>>(&self, rows: &[R]) -> Vec<String> {
        let mut table = comfy_table::Table::new();
        table
            .load_preset(comfy_table::presets::NOTHING)
            // No wrapping: a cell wider than its column widens the column, never splits a row.
            .set_content_arrangement(ContentArrangement::Disabled)
            .set_header(self.columns.iter().map(|c| c.name.as_str()));
        if self.style == Style::Ruled {
            table
                .set_style(TableComponent::VerticalLines, '│')
                .set_style(TableComponent::HeaderLines, '─')
                .set_style(TableComponent::MiddleHeaderIntersections, '┼');
        }
        for row in rows {
            table.add_row(row.as_ref().iter().map(String::as_str));
        }
        let last = self.columns.len().saturating_sub(1);
        for (i, (column, spec)) in table.column_iter_mut().zip(&self.columns).enumerate() {
            // No blank before the first column or after the last; between columns two spaces, or
            // one either side of the `│`.
            let padding = match self.style {
                Style::Plain => (0, if i == last { 0 } else { 2 }),
                Style::Ruled => (u16::from(i > 0), u16::from(i < last)),
            };
            column.set_padding(padding);
            column.set_cell_alignment(match spec.align {
                Align::Left => CellAlignment::Left,
                Align::Right => CellAlignment::Right,
            });
            if spec.min_width > 0 {
                // comfy-table's bounds include the padding.
                let width = spec.min_width + usize::from(padding.0 + padding.1);
                column.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(
                    u16::try_from(width).unwrap_or(u16::MAX),
                )));
            }
        }
        let mut lines: Vec<String> = table.lines().map(|l| l.trim_end().to_string()).collect();
        if self.style == Style::Ruled && lines.len() >= 2 {
            // The rule ends with the header's last word: under a long last column (a reason, a
            // note) a full-width rule would run far past everything else on most lines.
            let header_chars = lines[0].chars().count();
            lines[1] = lines[1].chars().take(header_chars).collect();
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn sample(style: Style) -> Table {
        Table::new(style)
            .left("function")
            .right("size")
            .left("note")
    }

    #[test]
    fn plain_tables_have_no_rules_and_align_numbers_right() {
        let rows = [
            cells(&["hmac-sha256/openssl/hw", "64", "fast"]),
            cells(&["null/null/hw", "1500", ""]),
        ];
        assert_eq!(
            sample(Style::Plain).render(&rows),
            "function                size  note\n\
             hmac-sha256/openssl/hw    64  fast\n\
             null/null/hw            1500\n"
        );
    }

    #[test]
    fn ruled_tables_separate_columns_and_underline_the_header() {
        let rows = [cells(&["a", "1", "x"])];
        assert_eq!(
            sample(Style::Ruled).render(&rows),
            "function │ size │ note\n\
             ─────────┼──────┼─────\n\
             a        │    1 │ x\n"
        );
    }

    #[test]
    fn streamed_rows_line_up_with_the_header_through_minimum_widths() {
        for style in [Style::Plain, Style::Ruled] {
            let table = Table::new(style)
                .left("function")
                .min_width(12)
                .right("size")
                .min_width(6)
                .left("flags");
            let header = table.header();
            let row = table.row(&cells(&["cmac/x/hw", "64", "noisy"]));
            assert!(!row.contains('\n'), "{row:?}");
            let header_line = header.lines().next().unwrap_or_default();
            // The size's last digit sits under the header's last letter; flags start together.
            assert_eq!(
                header_line.find("size").map(|i| i + 4),
                row.find("64").map(|i| i + 2),
                "{header}\n{row}"
            );
            assert_eq!(
                header_line.find("flags"),
                row.find("noisy"),
                "{header}\n{row}"
            );
            assert_eq!(
                style == Style::Ruled,
                header.lines().count() == 2,
                "{header}"
            );
        }
    }

    #[test]
    fn the_rule_stops_at_the_end_of_the_header() {
        let rows = [cells(&["a", "1", "a note much longer than its header"])];
        let text = sample(Style::Ruled).render(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "─────────┼──────┼─────", "{text}");
        assert_eq!(lines[1].chars().count(), lines[0].chars().count());
    }

    #[test]
    fn a_cell_wider_than_its_minimum_widens_its_row_and_is_never_wrapped() {
        let table = Table::new(Style::Plain).left("f").min_width(4).right("n");
        let long = "a-function-name-longer-than-its-column";
        let row = table.row(&cells(&[long, "7"]));
        assert_eq!(row, format!("{long}  7"));
    }

    #[test]
    fn short_rows_are_blank_on_the_right_and_lines_carry_no_trailing_blanks() {
        let rows = [cells(&["HMAC"]), cells(&["  Γ", "12.665", "x"])];
        let text = sample(Style::Plain).render(&rows);
        assert!(text.lines().all(|l| l == l.trim_end()), "{text:?}");
        assert_eq!(text.lines().nth(1), Some("HMAC"));
        // Γ is one column wide, as unicode-width counts it.
        assert_eq!(text.lines().nth(2), Some("  Γ       12.665  x"));
    }
}
