package inkwell

// Code generation for the whole module: `go generate ./...` (make generate) runs sqlc here, wire
// through the directive wire writes into wire_gen.go, and the mockgen lines beside each port.
// Every generator is pinned by a `tool` line in go.mod.
//go:generate go tool sqlc generate
