package durable_test

// These tests run against the real PostgreSQL (TEST_DATABASE_URL). Each top-level test migrates a
// database of its own.
