-- The last Markdown scraped of a URL with change tracking, per organization: what the next scrape
-- with change tracking compares with.
CREATE TABLE scrape_snapshots (
  organization_id  TEXT NOT NULL,
  url              TEXT NOT NULL,
  -- Hex SHA-256 of the Markdown: "same" or "changed" is decided on it.
  content_hash     TEXT NOT NULL,
  -- NULL when the page was too large to keep; a change is then reported without a diff.
  markdown         TEXT,
  scraped_at       TEXT NOT NULL,
  PRIMARY KEY (organization_id, url)
);
