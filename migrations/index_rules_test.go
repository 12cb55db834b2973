package migrations_test

import (
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/migrations"
)

// grandfatheredIndexes are the indexes existing migrations build on a table an earlier migration
// created, without CONCURRENTLY. They ran before this rule, while those tables were small (a
// development or freshly deployed database), and editing an applied migration changes nothing on
// the databases that ran it. Never add to this list: build new indexes CONCURRENTLY.
var grandfatheredIndexes = []string{
	"00004_ranking.sql: articles_published_at_idx ON articles",
	"00005_jobs_outbox_notifications.sql: users_phone_key ON users",
	"00008_sessions_revoked_idx.sql: sessions_revoked_idx ON sessions",
	"00013_list_counts.sql: articles_author_status_idx ON articles",
	"00013_list_counts.sql: likes_item_idx ON likes",
	"00015_sessions_devices_key_scopes.sql: sessions_user_live_idx ON sessions",
	"00016_code_login_budget_canonical_emails.sql: users_email_key ON users",
	// Constraints added to existing tables the blocking way (same reasons, same rule: never add).
	"00007_job_lease_invariant.sql: jobs_lease_check ON jobs",
	"00014_interactive_shards.sql: interactives_biz_shard_key ON interactives",
}

var (
	lineComment  = regexp.MustCompile(`--[^\n]*`)
	createTable  = regexp.MustCompile(`(?is)\bCREATE\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([\w."]+)`)
	createIndex  = regexp.MustCompile(`(?is)\bCREATE\s+(?:UNIQUE\s+)?INDEX\s+(CONCURRENTLY\s+)?(?:IF\s+NOT\s+EXISTS\s+)?([\w."]+)\s+ON\s+(?:ONLY\s+)?([\w."]+)`)
	noTxAnnotate = regexp.MustCompile(`(?m)^--\s*\+goose\s+NO\s+TRANSACTION\s*$`)
	dollarBody   = regexp.MustCompile(`(?s)\$\$.*?\$\$`) // function bodies: not statements of the migration
	alterTable   = regexp.MustCompile(`(?is)^\s*ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?([\w."]+)\s+(.*)$`)
	addConstr    = regexp.MustCompile(`(?is)^\s*ADD\s+(?:CONSTRAINT\s+([\w"]+)\s+)?(UNIQUE|PRIMARY\s+KEY|FOREIGN\s+KEY|CHECK)\b(.*)$`)
	usingIndex   = regexp.MustCompile(`(?is)\bUSING\s+INDEX\b`)
	notValid     = regexp.MustCompile(`(?is)\bNOT\s+VALID\b`)
)

// topLevelSplit splits s at sep where no parenthesis is open (an ALTER TABLE's actions, a
// migration's statements once function bodies are gone).
func topLevelSplit(s string, sep rune) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')':
			depth--
		case r == sep && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// constraintRuleViolations checks one migration's ALTER TABLE statements against tables an
// earlier migration created: ADD … UNIQUE or PRIMARY KEY builds its index under the ACCESS
// EXCLUSIVE lock (no reads or writes for the whole build), so it must take an index built
// beforehand (CREATE UNIQUE INDEX CONCURRENTLY, then ADD CONSTRAINT … USING INDEX); ADD …
// FOREIGN KEY or CHECK scans the whole table under its lock, so it must be added NOT VALID (and
// validated by a later VALIDATE CONSTRAINT, which locks nothing that blocks writes).
func constraintRuleViolations(name, sql string, earlier map[string]bool) []string {
	var out []string
	for _, stmt := range topLevelSplit(dollarBody.ReplaceAllString(sql, "''"), ';') {
		m := alterTable.FindStringSubmatch(stmt)
		if m == nil || !earlier[tableName(m[1])] {
			continue
		}
		table := tableName(m[1])
		for _, action := range topLevelSplit(m[2], ',') {
			a := addConstr.FindStringSubmatch(action)
			if a == nil {
				continue
			}
			constraint, kind := strings.ReplaceAll(a[1], `"`, ""), strings.ToUpper(strings.Join(strings.Fields(a[2]), " "))
			if constraint == "" {
				constraint = "unnamed " + kind
			}
			where := name + ": " + constraint + " ON " + table
			switch kind {
			case "UNIQUE", "PRIMARY KEY":
				if !usingIndex.MatchString(a[3]) {
					out = append(out, where+": the table exists already, build a UNIQUE INDEX CONCURRENTLY and ADD CONSTRAINT … USING INDEX")
				}
			default: // FOREIGN KEY, CHECK
				if !notValid.MatchString(a[3]) {
					out = append(out, where+": the table exists already, add the "+kind+" NOT VALID and VALIDATE CONSTRAINT it later")
				}
			}
		}
	}
	return out
}

// upSection is the part of a goose migration between "-- +goose Up" and "-- +goose Down".
func upSection(src string) string {
	if i := strings.Index(src, "-- +goose Up"); i >= 0 {
		src = src[i:]
	}
	if i := strings.Index(src, "-- +goose Down"); i >= 0 {
		src = src[:i]
	}
	return src
}

// tableName is a table reference without quotes and without the default schema.
func tableName(ref string) string {
	return strings.TrimPrefix(strings.ReplaceAll(ref, `"`, ""), "public.")
}

// indexRuleViolations checks migrations (file name → SQL) in file-name order: an index on a table
// an earlier migration created must be built CONCURRENTLY (a plain CREATE INDEX blocks every
// write to the table for the whole build), a migration that builds one CONCURRENTLY must run
// outside a transaction (-- +goose NO TRANSACTION), where PostgreSQL allows it, and constraints
// added to such a table must not build an index or scan it under their lock
// (constraintRuleViolations). Each violation is "file: index or constraint ON table" plus what is
// wrong.
func indexRuleViolations(files map[string]string) []string {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	earlier := map[string]bool{} // tables created by the migrations checked so far
	var out []string
	for _, name := range names {
		up := upSection(files[name])
		noTx := noTxAnnotate.MatchString(files[name]) // goose reads it anywhere in the file
		sql := lineComment.ReplaceAllString(up, "")
		for _, m := range createIndex.FindAllStringSubmatch(sql, -1) {
			concurrently, index, table := m[1] != "", m[2], tableName(m[3])
			where := name + ": " + index + " ON " + table
			switch {
			case concurrently && !noTx:
				out = append(out, where+": CONCURRENTLY needs -- +goose NO TRANSACTION")
			case !concurrently && earlier[table]:
				out = append(out, where+": the table exists already, build the index CONCURRENTLY")
			}
		}
		out = append(out, constraintRuleViolations(name, sql, earlier)...)
		for _, m := range createTable.FindAllStringSubmatch(sql, -1) {
			earlier[tableName(m[1])] = true
		}
	}
	return out
}

// TestIndexesOnExistingTablesAreConcurrent also covers the constraints that build an index or scan
// the table (constraintRuleViolations).
func TestIndexesOnExistingTablesAreConcurrent(t *testing.T) {
	t.Parallel()

	t.Run("embedded migrations", func(t *testing.T) {
		t.Parallel()
		names, err := fs.Glob(migrations.FS, "*.sql")
		if err != nil || len(names) == 0 {
			t.Fatalf("embedded migrations: %v, %v", names, err)
		}
		files := map[string]string{}
		for _, name := range names {
			b, err := fs.ReadFile(migrations.FS, name)
			if err != nil {
				t.Fatal(err)
			}
			files[name] = string(b)
		}
		var left []string
		for _, v := range indexRuleViolations(files) {
			if !slices.ContainsFunc(grandfatheredIndexes, func(g string) bool { return strings.HasPrefix(v, g+":") }) {
				left = append(left, v)
			}
		}
		for _, v := range left {
			t.Errorf("%s", v)
		}
		// A grandfathered entry that no longer matches is stale: keep the list exact.
		all := strings.Join(indexRuleViolations(files), "\n")
		for _, g := range grandfatheredIndexes {
			if !strings.Contains(all, g+":") {
				t.Errorf("grandfathered %q matches no migration: remove it", g)
			}
		}
	})

	t.Run("the check catches what it should", func(t *testing.T) {
		t.Parallel()
		files := map[string]string{
			"00001_a.sql": "-- +goose Up\nCREATE TABLE posts (id bigint);\nCREATE INDEX posts_id_idx ON posts (id); -- same migration: fine\n-- +goose Down\nCREATE INDEX down_only_idx ON posts (id);\n",
			"00002_b.sql": "-- +goose Up\ncreate unique index if not exists posts_plain_idx on public.posts (id);\n",
			"00003_c.sql": "-- +goose Up\nCREATE INDEX CONCURRENTLY posts_in_tx_idx ON posts (id);\n",
			"00004_d.sql": "-- +goose NO TRANSACTION\n-- +goose Up\nCREATE INDEX CONCURRENTLY IF NOT EXISTS posts_ok_idx ON posts (id);\n-- CREATE INDEX commented_idx ON posts (id);\n",
			"00005_e.sql": "-- +goose Up\nCREATE TABLE tags (id bigint, post_id bigint);\n" +
				"ALTER TABLE tags ADD CONSTRAINT tags_new_key UNIQUE (id), ADD FOREIGN KEY (post_id) REFERENCES posts (id); -- new table: fine\n" +
				"ALTER TABLE posts ADD CONSTRAINT posts_id_key UNIQUE (id);\n" +
				"alter table only public.posts add primary key (id);\n" +
				"ALTER TABLE posts ADD COLUMN tag_id bigint, ADD CONSTRAINT posts_tag_fk FOREIGN KEY (tag_id) REFERENCES tags (id);\n" +
				"ALTER TABLE posts ADD CONSTRAINT posts_positive CHECK (id > 0);\n" +
				"ALTER TABLE posts ADD CONSTRAINT posts_ok_key UNIQUE USING INDEX posts_ok_idx, ADD CONSTRAINT posts_ok_fk FOREIGN KEY (tag_id) REFERENCES tags (id) NOT VALID;\n" +
				"ALTER TABLE posts VALIDATE CONSTRAINT posts_ok_fk;\n" +
				"CREATE FUNCTION f() RETURNS trigger AS $$ BEGIN ALTER TABLE posts ADD CONSTRAINT in_body_key UNIQUE (id); END $$ LANGUAGE plpgsql;\n" +
				"-- +goose Down\nALTER TABLE posts ADD CONSTRAINT down_key UNIQUE (id);\n",
		}
		got := indexRuleViolations(files)
		want := []string{
			"00002_b.sql: posts_plain_idx ON posts: the table exists already, build the index CONCURRENTLY",
			"00003_c.sql: posts_in_tx_idx ON posts: CONCURRENTLY needs -- +goose NO TRANSACTION",
			"00005_e.sql: posts_id_key ON posts: the table exists already, build a UNIQUE INDEX CONCURRENTLY and ADD CONSTRAINT … USING INDEX",
			"00005_e.sql: unnamed PRIMARY KEY ON posts: the table exists already, build a UNIQUE INDEX CONCURRENTLY and ADD CONSTRAINT … USING INDEX",
			"00005_e.sql: posts_tag_fk ON posts: the table exists already, add the FOREIGN KEY NOT VALID and VALIDATE CONSTRAINT it later",
			"00005_e.sql: posts_positive ON posts: the table exists already, add the CHECK NOT VALID and VALIDATE CONSTRAINT it later",
		}
		if !slices.Equal(got, want) {
			t.Fatalf("violations\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}
