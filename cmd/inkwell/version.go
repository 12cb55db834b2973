package main

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Set by the linker where the build has no VCS information to record (the Docker build has no
// .git): -ldflags "-X main.commit=... -X main.buildTime=...". buildTime is also set by make build.
var (
	commit    string
	buildTime string
)

// versionInfo is `inkwell --version`: the module version, the commit it was built from (and
// whether the tree had uncommitted changes), the commit's time, the build time when the build
// recorded one, and the Go version. A plain `go build` in a checkout records the commit
// (-buildvcs=auto); `go run` and builds outside a checkout do not, and say so.
func versionInfo() string {
	version, rev, committed, modified, goVersion := "(devel)", commit, "", false, ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if rev == "" {
					rev = s.Value
				}
			case "vcs.time":
				committed = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	var b strings.Builder
	line := func(label, value string) {
		if value != "" {
			fmt.Fprintf(&b, "%-13s%s\n", label+":", value)
		}
	}
	fmt.Fprintf(&b, "inkwell %s\n", version)
	switch {
	case rev == "":
		line("commit", "unknown (built without VCS information)")
	case modified:
		line("commit", rev+" (with uncommitted changes)")
	default:
		line("commit", rev)
	}
	line("commit time", committed)
	line("built", buildTime)
	line("go", goVersion)
	return b.String()
}
