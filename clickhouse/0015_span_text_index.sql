-- Full-text search of traces (GET /api/traces?q=, and data teams' queries through POST /api/sql):
-- a text index (the engine's inverted index) over each span's detail, the span's wire shape as
-- JSON (clickhouse/0003), which holds its name, input, output, status message and attributes.
-- JSON escapes (\n, \t, \", \\ …) become spaces first, so `line\nword` holds the word `word`;
-- the text is lowercased with lowerUTF8 and cut into words at every character that is not an
-- ASCII letter or digit (bytes of non-ASCII letters stay inside words). A query that asks
-- `hasAllTokens(<the same expression>, [...lowercased words])` reads only the granules holding
-- every word (clickhouse/README.md, "Full-text search"). The index narrows; the reads still check the
-- exact text (src/traces/spans-table.ts), so a hit is never decided by the index alone.
ALTER TABLE {{local:spans}} {{on_cluster}} ADD INDEX IF NOT EXISTS idx_detail_text lowerUTF8(replaceRegexpAll(detail, '\\\\[nrtbf"\\\\/]', ' ')) TYPE text(tokenizer = splitByNonAlpha);

-- Parts written before this migration get the index now, not only when merges rewrite them.
ALTER TABLE {{local:spans}} {{on_cluster}} MATERIALIZE INDEX idx_detail_text SETTINGS mutations_sync = 2;
