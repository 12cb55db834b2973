package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/ioc"
)

// TestServeHelpListsTheSettingsByGroup: `inkwell serve --help` names every setting, at most 50,
// under its group's heading in the order of ioc.Groups, and no removed setting.
func TestServeHelpListsTheSettingsByGroup(t *testing.T) {
	var out bytes.Buffer
	if code := exitCode(run(context.Background(), []string{"serve", "--help"}, &out, &bytes.Buffer{}), &bytes.Buffer{}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	help := out.String()
	if n := strings.Count(help, "\n  -"); n != len(ioc.Settings()) || n > 50 {
		t.Errorf("serve --help lists %d settings, want all %d (at most 50)", n, len(ioc.Settings()))
	}
	at := 0
	for _, g := range ioc.Groups {
		i := strings.Index(help, "\n "+g+":\n")
		if i < at {
			t.Errorf("group %s missing or out of order in:\n%s", g, help)
		}
		at = i
	}
	for _, s := range ioc.Settings() {
		at := strings.Index(help, "\n  -"+s.Name+" ")
		if at < 0 {
			at = strings.Index(help, "\n  -"+s.Name+"\n") // a bool flag
		}
		heading := strings.LastIndex(help[:max(at+1, 0)], ":\n")
		if !strings.Contains(help, "(env "+s.Env+")") || heading < 0 || !strings.HasSuffix(help[:heading], " "+s.Group) {
			t.Errorf("-%s (%s) is not listed under %s", s.Name, s.Env, s.Group)
		}
	}
	for _, r := range ioc.RemovedSettings {
		if strings.Contains(help, "-"+r.Name+" ") || strings.Contains(help, r.Env()+")") {
			t.Errorf("removed setting %s is listed", r.Name)
		}
	}
}

// TestRemovedFlagFails: a removed setting on the command line is a usage error saying what
// replaced it.
func TestRemovedFlagFails(t *testing.T) {
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"serve", "-queue-poll", "1s"}, &bytes.Buffer{}, &stderr)
	if code := exitCode(err, &stderr); code != 2 || !strings.Contains(stderr.String(), "-queue-poll was removed") || !strings.Contains(stderr.String(), "job.QueuePoll") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}
