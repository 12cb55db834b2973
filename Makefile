# inkwell developer tasks. `make` (or `make help`) lists them.
#
# Settings come from the environment: DATABASE_URL, REDIS_URL, INKWELL_ADDR, ... for the app
# (see README); TEST_DATABASE_URL / TEST_REDIS_URL for the tests.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# Tests create their own databases from TEST_DATABASE_URL (a server plus a maintenance database)
# and use key prefixes on TEST_REDIS_URL. Unless set, they follow DATABASE_URL / REDIS_URL (same
# servers, the `postgres` maintenance database) or else use the local defaults.
ifeq ($(origin TEST_DATABASE_URL),undefined)
  ifneq ($(DATABASE_URL),)
    TEST_DATABASE_URL := $(shell printf '%s' '$(DATABASE_URL)' | sed -E 's|^([A-Za-z0-9+.-]+://[^/?]*)(/[^?]*)?|\1/postgres|')
  else
    TEST_DATABASE_URL := postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
  endif
endif
ifeq ($(origin TEST_REDIS_URL),undefined)
  TEST_REDIS_URL := $(or $(REDIS_URL),redis://127.0.0.1:6379/0)
endif
export TEST_DATABASE_URL TEST_REDIS_URL

.PHONY: help
help: ## List the targets
	@echo "Usage: make TARGET"
	@echo
	@awk 'BEGIN { FS = ":.*## " } /^[a-zA-Z_-]+:.*## / { printf "  %-14s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

.PHONY: services
services: ## Make sure PostgreSQL and Redis (DATABASE_URL, REDIS_URL) are running
	scripts/services.sh

.PHONY: services-stop
services-stop: ## Stop the project-local PostgreSQL/Redis that `services` started under .data/
	scripts/services.sh stop

.PHONY: run
run: services ## Start the API server (migrates on start; INKWELL_ADDR defaults to :8080)
	INKWELL_MIGRATE_ON_START=true VERSION_LDFLAGS="$(VERSION_LDFLAGS)" scripts/run.sh

.PHONY: migrate
migrate: services ## Apply database migrations to DATABASE_URL
	go run ./cmd/inkwell migrate up

# How many packages' tests run at once (go test -p), and how many tests at once in each
# (-parallel; pinned to the 2-core default, so a bigger machine does not multiply the load).
# PostgreSQL connections cannot run out whatever these are: every test connection takes a slot of
# a machine-wide budget (internal/testenv/connbudget.go, TEST_PG_CONNECTIONS, default 80 of the
# server's 100), and one over it waits for another to close. -p 2 keeps the waiting rare: a whole
# run peaked at 57 connections sampled from pg_stat_activity.
TEST_P ?= 2
TEST_PARALLEL ?= 2
# Listed first because go test starts packages in command-line order: the longest ones (tens of
# seconds each) then overlap instead of one of them running alone at the end, and the busiest on
# the CPU (resilience, e2e) each run beside one that mostly waits for PostgreSQL (job,
# repository), then the seeder's and the search room's (split off repository's, 20-35 s each).
# ./... adds the rest. (A package renamed or removed must leave this list too.)
TEST_SLOW_PKGS ?= ./resilience ./job ./e2e ./repository ./cmd/inkwell/seed ./repository/search

.PHONY: test
test: ## Start services, vet, run all tests with -race, then the e2e suite through a fleet and through a mixed-release fleet (generated code and tidiness: make check)
	DATABASE_URL='$(TEST_DATABASE_URL)' REDIS_URL='$(TEST_REDIS_URL)' scripts/services.sh
	@# e2e's browser test of /api/docs drives a headless Chromium and its fleet tests a HAProxy;
	@# both installed here (from the OS packages when missing) so a fresh machine runs them.
	scripts/services.sh chromium
	scripts/services.sh haproxy
	@# The read-replica tests (repository/pg, repository) read a real streaming replica: a primary
	@# on 5433 and its standby on 5434 under .data/ (TEST_REPLICA_PRIMARY_URL, TEST_REPLICA_URL).
	REPLICA_DELAY=500ms scripts/services.sh replica
	scripts/services.sh pgbouncer
	go vet ./...
	go test -race -count=1 -p $(TEST_P) -parallel $(TEST_PARALLEL) -timeout 20m $(TEST_SLOW_PKGS) ./...
	$(MAKE) test-fleet
	$(MAKE) test-upgrade
	$(MAKE) test-pooler
	$(MAKE) fuzz FUZZTIME=10s

# The e2e suite again, every startApp a fleet: TEST_FLEET_SIZE instances on one database and one
# Redis key prefix behind a round-robin HAProxy (the OS package; scripts/services.sh haproxy
# installs it), so each request of a test may land on another instance. Tests that need one
# process skip themselves, saying why (go test -v shows it). It runs after the other packages:
# a fleet holds more connections than one instance (each instance keeps its two LISTEN
# connections), so apptest caps a fleet instance's pools (FleetPoolMaxConns = 4), closes its idle
# connections after 500 ms and polls for jobs every 3 s (NOTIFY wakes it sooner), and in a fleet
# run a test's subtests run in order (e2e's parallel helper), so -parallel bounds the fleets alive
# at once. Peak sampled from pg_stat_activity: 36 connections with -parallel 2.
TEST_FLEET_SIZE ?= 3

.PHONY: test-fleet
test-fleet: ## Run the e2e suite through a fleet: TEST_FLEET_SIZE (3) instances behind HAProxy for every test (~4 min)
	DATABASE_URL='$(TEST_DATABASE_URL)' REDIS_URL='$(TEST_REDIS_URL)' scripts/services.sh
	scripts/services.sh haproxy
	INKWELL_E2E_FLEET=$(TEST_FLEET_SIZE) go test -race -count=1 -p 1 -parallel 2 -timeout 15m ./e2e

# The e2e suite through a fleet in the middle of a rolling upgrade (docs/OPERATIONS.md, "Upgrading
# a fleet"): every startApp is two processes on one database and one Redis key prefix behind a
# round-robin HAProxy, one of the previous release (scripts/previous-release pins its commit; the
# test builds it with `git archive` and the Go module proxy, once, under $TMPDIR by commit, and
# fails saying so when the commit is not in the clone) and one of the working tree, so requests
# alternate between old and new. TEST_UPGRADE_RUN picks the tests: by default the cross-version
# tests (TestUpgrade_*: invalidation, fan-out, revocation, the old release on the new schema) and
# the RealWorld flows, about a minute and a half with the two builds; TEST_UPGRADE_RUN=. runs the
# whole suite (~4 min). Tests that drive an instance's internals skip themselves (go test -v says
# why), as do those e2e/harness_test.go lists as new since the previous release.
TEST_UPGRADE_RUN ?= ^(TestUpgrade_.*|TestAccountsJourney|TestArticlesJourney|TestArticleDraftsAndPublishing|TestArticleKeysetPaging|TestConcurrentFavoritesAndComments|TestTagsAcrossInstances|TestNotificationsJourney|TestFleet_ThreeInstancesBehaveAsOne|TestFleet_ViewerReadsTheirOwnWrites|TestSessions)$$

.PHONY: test-upgrade
test-upgrade: ## Run the RealWorld flows and cross-version tests through the previous release and the working tree side by side behind HAProxy (TEST_UPGRADE_RUN=. for the whole e2e suite)
	DATABASE_URL='$(TEST_DATABASE_URL)' REDIS_URL='$(TEST_REDIS_URL)' scripts/services.sh
	scripts/services.sh haproxy
	INKWELL_E2E_UPGRADE=1 go test -race -count=1 -p 1 -parallel 2 -timeout 15m -run '$(TEST_UPGRADE_RUN)' ./e2e

# The RealWorld flows (and TestPooler_*) again, every startApp one instance whose DATABASE_URL is a
# real PgBouncer 1.18 in transaction pooling mode (scripts/services.sh pgbouncer, port 6432) before
# the replica pair's primary, DATABASE_POOLER=pgbouncer, DATABASE_DIRECT_URL the primary itself and
# DATABASE_REPLICA_URLS its streaming replica 500 ms behind (docs/OPERATIONS.md, "PgBouncer").
# TEST_POOLER_RUN picks the tests (. for the whole e2e suite).
TEST_POOLER_RUN ?= ^(TestPooler_.*|TestAccountsJourney|TestArticlesJourney|TestArticleDraftsAndPublishing|TestArticleKeysetPaging|TestConcurrentFavoritesAndComments|TestNotificationsJourney|TestSessions|TestCommentThreads|TestRevisions.*|TestSearch.*)$$

.PHONY: test-pooler
test-pooler: ## Run the RealWorld flows through PgBouncer (transaction pooling) and a streaming replica (TEST_POOLER_RUN=. for the whole e2e suite)
	REPLICA_DELAY=500ms scripts/services.sh replica
	scripts/services.sh pgbouncer
	INKWELL_E2E_POOLER=1 go test -race -count=1 -p 1 -parallel 2 -timeout 15m -run '$(TEST_POOLER_RUN)' ./e2e

# Packages `make test-cluster` runs on a throwaway Redis Cluster; they need no PostgreSQL.
CLUSTER_TEST_PKGS ?= ./cache/... ./events/...

.PHONY: test-cluster
test-cluster: ## Run the Redis integration tests on a throwaway 3-master Redis Cluster (ports 7101-7103)
	trap 'scripts/redis-cluster.sh stop' EXIT; \
	scripts/redis-cluster.sh start; \
	TEST_REDIS_MODE=cluster TEST_REDIS_URL="$$(scripts/redis-cluster.sh url)" \
	  go test -race -count=1 -timeout 15m $(CLUSTER_TEST_PKGS)

.PHONY: fuzz
fuzz: ## Fuzz the HTTP decoders and parameters, the Markdown renderer, search queries against PostgreSQL, and stored text through the wired app, for a bounded time each (FUZZTIME, default 20s)
	go test ./web -run '^$$' -fuzz '^FuzzJSONBodies$$' -fuzztime $(or $(FUZZTIME),20s)
	go test ./web -run '^$$' -fuzz '^FuzzQueryParams$$' -fuzztime $(or $(FUZZTIME),20s)
	go test ./web -run '^$$' -fuzz '^FuzzPathParams$$' -fuzztime $(or $(FUZZTIME),20s)
	go test ./repository/search -run '^$$' -fuzz '^FuzzSearchQuery$$' -fuzztime $(or $(FUZZTIME),20s) -parallel 2
	go test ./render -run '^$$' -fuzz '^FuzzRender$$' -fuzztime $(or $(FUZZTIME),20s)
	go test ./e2e -run '^$$' -fuzz '^FuzzStoredText$$' -fuzztime $(or $(FUZZTIME),20s) -parallel 2

.PHONY: generate
generate: ## Regenerate code (sqlc, wire, mocks)
	go generate ./...

# What `inkwell --version` prints as the commit and build time. go build records the commit
# itself only in a plain checkout (not in a git worktree, not with GOFLAGS=-buildvcs=false), so
# the build passes it too.
INKWELL_COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)$(shell git rev-parse HEAD >/dev/null 2>&1 && ! git diff --quiet HEAD 2>/dev/null && echo ' (with uncommitted changes)')
VERSION_LDFLAGS = -X 'main.commit=$(INKWELL_COMMIT)' -X 'main.buildTime=$(shell date -u +%Y-%m-%dT%H:%M:%SZ)'

.PHONY: build
build: ## Build bin/inkwell (inkwell --version names its commit and build time)
	go build -ldflags "$(VERSION_LDFLAGS)" -o bin/inkwell ./cmd/inkwell

.PHONY: bench
bench: ## Run every load test (API reads and writes vs bare gin, two instances and propagation, read events, job queue, ranking pass, lists at 1k and 1M articles, search at 1M articles, image uploads and serving, live notification streams and webhook deliveries, list reads with a read replica); rewrites docs/BENCHMARKS.md (~5 min, plus ~9 min for the search section, ~5 for the realtime one and ~5 for the replica one)
	BENCH_WRITE=1 BENCH_COMMAND='make bench' BENCH_BUDGET=3600 scripts/bench.sh

.PHONY: bench-fleet
bench-fleet: ## Only the two-instance rows of make bench (cached read per instance, propagation delay); rewrites their section of docs/BENCHMARKS.md (~1.5-3 min)
	BENCH_WRITE=1 BENCH_FLEET_ONLY=1 BENCH_COMMAND='make bench-fleet' scripts/bench.sh

.PHONY: bench-scale
bench-scale: ## Only the scale section of make bench (list rows at 1k and 1M bulk-seeded articles, server RSS); rewrites its section of docs/BENCHMARKS.md (~3-4 min)
	BENCH_WRITE=1 BENCH_SCALE_ONLY=1 BENCH_COMMAND='make bench-scale' scripts/bench.sh

.PHONY: bench-search
bench-search: ## Only the search section of make bench (article, people and tag search, suggestions at 1M bulk-seeded articles, seed time, publish latency); rewrites its section of docs/BENCHMARKS.md (~9 min on 2 cores, about 4 of them the two seeds)
	BENCH_WRITE=1 BENCH_SEARCH_ONLY=1 BENCH_COMMAND='make bench-search' BENCH_BUDGET=2400 scripts/bench.sh

.PHONY: bench-media
bench-media: ## Only the media section of make bench (2 MB JPEG uploads: p50 and server CPU per upload; a stored thumbnail served next to the ceiling; 16 concurrent ~9.5 MB uploads: server peak RSS); rewrites its section of docs/BENCHMARKS.md (~2 min)
	BENCH_WRITE=1 BENCH_MEDIA_ONLY=1 BENCH_COMMAND='make bench-media' scripts/bench.sh

.PHONY: bench-realtime
bench-realtime: ## Only the realtime section of make bench (#33: RSS of 10,000 idle notification streams, publish-to-receive p50/p99 at 1,000 streams, webhook deliveries/s and CPU per delivery); rewrites its section of docs/BENCHMARKS.md (~4-6 min)
	BENCH_WRITE=1 BENCH_REALTIME_ONLY=1 BENCH_COMMAND='make bench-realtime' BENCH_BUDGET=1800 scripts/bench.sh

.PHONY: bench-replica
bench-replica: ## Only the replica section of make bench (#34: list rows on a server without and one with a streaming read replica, three rounds: req/s, the primary's and the replica's CPU per request, the replica's share of reads, the routing overhead); rewrites its section of docs/BENCHMARKS.md (~4-5 min)
	BENCH_WRITE=1 BENCH_REPLICA_ONLY=1 BENCH_COMMAND='make bench-replica' scripts/bench.sh

.PHONY: bench-wrk
bench-wrk: ## Only the hot reads (#35): ceiling, article anonymous and signed in, list, tags, feed, sitemap index, once through loadgen with CPU per request, then three rounds through wrk -t2 -c64 with the ratios against their goals; rewrites their section of docs/BENCHMARKS.md (~6 min)
	BENCH_WRITE=1 BENCH_WRK_ONLY=1 BENCH_COMMAND='make bench-wrk' scripts/bench.sh

.PHONY: bench-versus
bench-versus: ## The cached article read of BENCH_VERSUS_REF (a git revision) against the working tree, interleaved in one run (3 × 10 s each); prints new/old (~2 min)
	scripts/bench-versus.sh

.PHONY: bench-schedule
bench-schedule: ## Lateness of scheduled publishing (#32): 120 articles scheduled through a 3-instance fleet, publication minus publishAt (p50/p90/p99); prints the figures for docs/BENCHMARKS.md (~15 s)
	INKWELL_BENCH_SCHEDULE=1 go test -count=1 -v -run '^TestScheduleLateness$$' ./e2e

.PHONY: bench-sse
bench-sse: ## Live notification streams (#33) on one instance (a process): RSS of 10,000 idle streams (BENCH_SSE_STREAMS), publish-to-receive p50/p99 at 1,000 streams; prints the figures for docs/BENCHMARKS.md (~1-2 min)
	INKWELL_BENCH_SSE=1 go test -count=1 -v -timeout 20m -run '^TestNotificationStreamBench$$' ./e2e

.PHONY: bench-go
bench-go: ## Run the Go micro-benchmarks (go test -bench)
	go test -run '^$$' -bench . -benchmem ./...

.PHONY: fmt
fmt: ## Format the Go code
	git ls-files -z --cached --others --exclude-standard '*.go' | xargs -0 -r gofmt -w

.PHONY: lint
lint: ## go vet, golangci-lint (.golangci.yml; the version pinned in go.mod), and fail on unformatted Go files
	go vet ./...
	go tool golangci-lint run ./...
	@unformatted=$$(git ls-files -z --cached --others --exclude-standard '*.go' | xargs -0 -r gofmt -l); \
	if [[ -n $$unformatted ]]; then echo "not gofmt-ed (run make fmt):"; echo "$$unformatted"; exit 1; fi

.PHONY: fleet
fleet: ## Run FLEET_SIZE (3) instances on ports 8081.. behind HAProxy on 127.0.0.1:8080 (FLEET_PORT); Ctrl-C stops them
	scripts/fleet.sh

.PHONY: check
# Kept out of make test: regenerating compiles sqlc, wire and mockgen (6-8 minutes on a fresh
# machine, before the first test could start). CI runs both (.ci/run), so stale generated code or
# an untidy go.mod still fails it.
check: lint check-alerts check-vuln ## Every static check: generated code up to date (go generate changes nothing), go.mod/go.sum tidy, lint, alert rules, known vulnerabilities
	scripts/check-generated.sh
	scripts/check-tidy.sh

# promtool comes with Debian's prometheus package (scripts/services.sh promtool installs it). Without
# it the rules are not checked: say so and go on, so a machine without it still runs make check.
PROMTOOL ?= $(shell command -v promtool 2>/dev/null)

.PHONY: check-alerts
check-alerts: ## Check the Prometheus configuration and its alert rules (deploy/prometheus.yml, deploy/alerts.yml), run the rules' unit tests (deploy/alerts_test.yml) with promtool
	@if [[ -z "$(PROMTOOL)" ]]; then \
	  echo "check-alerts: SKIPPED, promtool not found (install it: scripts/services.sh promtool, or apt-get install prometheus)"; \
	else \
	  "$(PROMTOOL)" check config deploy/prometheus.yml && "$(PROMTOOL)" test rules deploy/alerts_test.yml; \
	fi

# govulncheck is pinned as a tool in go.mod. It needs the vulnerability database (GOVULNDB,
# default vuln.go.dev): where that cannot be reached, the step says SKIPPED and why, and goes on.
.PHONY: check-vuln
check-vuln: ## Look for known vulnerabilities in the code's dependencies and Go itself (govulncheck; skipped, saying why, without the vulnerability database)
	scripts/check-vuln.sh
