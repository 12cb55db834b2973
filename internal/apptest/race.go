//go:build race

package apptest

// raceEnabled: the tests run with the race detector, so the binaries they start are built with it.
const raceEnabled = true
