// Package domain holds inkwell's entities, value objects and domain errors. It imports the
// standard library only: no storage, transport or framework package may appear here.
package domain
