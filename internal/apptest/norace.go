//go:build !race

package apptest

// raceEnabled: the tests run without the race detector, so the binaries they start are too.
const raceEnabled = false
