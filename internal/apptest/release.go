package apptest

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Release is an inkwell binary a test runs as a process of its own (StartProcess).
type Release struct {
	Name   string // "v0.1.0", or "working tree"
	Commit string // what it was built from
	Path   string // the binary
}

// workingTree is the name of the release built from this tree (CurrentRelease).
const workingTree = "working tree"

// PreviousReleaseFile names, relative to the module root, the file that pins the release a fleet
// upgrades from: its tag and commit. The commit is what counts (a clone need not carry tags).
const PreviousReleaseFile = "scripts/previous-release"

// PreviousRelease is the binary of the release pinned in PreviousReleaseFile, built from its
// commit (git archive, go build with the module proxy) the first time and then kept in the
// temporary directory under the commit's name, so later runs start at once. It fails the test
// when the commit is not in this clone.
func PreviousRelease(t testing.TB) Release {
	t.Helper()
	r, err := previousRelease()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var previousRelease = sync.OnceValues(func() (Release, error) {
	root, err := moduleRoot()
	if err != nil {
		return Release{}, err
	}
	name, commit, err := readPreviousRelease(filepath.Join(root, PreviousReleaseFile))
	if err != nil {
		return Release{}, err
	}
	if err := run(root, nil, "git", "cat-file", "-e", commit+"^{commit}"); err != nil {
		return Release{}, fmt.Errorf("the previous release %s (commit %s, pinned in %s) is not in this clone: "+
			"fetch it (git fetch origin %s, or clone with full history) to test rolling upgrades: %w",
			name, commit, PreviousReleaseFile, commit, err)
	}
	dir := filepath.Join(os.TempDir(), "inkwell-release-"+commit+raceSuffix())
	bin := filepath.Join(dir, "inkwell")
	err = buildOnce(dir, bin, func() error {
		src := filepath.Join(dir, "src")
		if err := os.RemoveAll(src); err != nil {
			return err
		}
		if err := extractCommit(root, commit, src); err != nil {
			return err
		}
		// Built beside bin and renamed, so an interrupted build leaves no binary to trust.
		if err := goBuild(src, commit, bin+".partial"); err != nil {
			return err
		}
		if err := os.Rename(bin+".partial", bin); err != nil {
			return err
		}
		return os.RemoveAll(src)
	})
	if err != nil {
		return Release{}, fmt.Errorf("build the previous release %s (%s): %w", name, commit, err)
	}
	return Release{Name: name, Commit: commit, Path: bin}, nil
})

// CurrentRelease is the binary of the working tree, built once per test process (go build skips
// the work when nothing changed since the last run).
func CurrentRelease(t testing.TB) Release {
	t.Helper()
	r, err := currentRelease()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var currentRelease = sync.OnceValues(func() (Release, error) {
	root, err := moduleRoot()
	if err != nil {
		return Release{}, err
	}
	commit, err := output(root, "git", "rev-parse", "HEAD")
	if err != nil {
		commit = "unknown"
	}
	commit += " (working tree)"
	dir := filepath.Join(os.TempDir(), "inkwell-worktree-"+shortHash(root)+raceSuffix())
	bin := filepath.Join(dir, "inkwell")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Release{}, err
	}
	unlock, err := lockFile(dir + ".lock")
	if err != nil {
		return Release{}, err
	}
	defer unlock()
	if err := goBuild(root, commit, bin); err != nil {
		return Release{}, fmt.Errorf("build the working tree: %w", err)
	}
	return Release{Name: workingTree, Commit: commit, Path: bin}, nil
})

// readPreviousRelease reads "TAG COMMIT" from the first line of path that is not a comment.
func readPreviousRelease(path string) (name, commit string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 || len(fields[1]) != 40 {
			return "", "", fmt.Errorf("%s: %q: want TAG COMMIT (the full 40-character hash)", path, line)
		}
		return fields[0], fields[1], nil
	}
	if err := sc.Err(); err != nil {
		return "", "", err
	}
	return "", "", fmt.Errorf("%s names no release", path)
}

// buildOnce runs build unless bin exists, under a lock beside dir, so test processes that start
// together build it once.
func buildOnce(dir, bin string, build func() error) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	unlock, err := lockFile(dir + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return build()
}

// goBuild builds ./cmd/inkwell of the module in dir into bin, with the race detector when the
// tests run with it, naming commit in `inkwell --version`. go build leaves a bin that is up to
// date alone (no link: under a second).
func goBuild(dir, commit, bin string) error {
	args := []string{"build", "-o", bin, "-ldflags", "-X 'main.commit=" + commit + "'"}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "./cmd/inkwell")
	return run(dir, []string{"GOWORK=off"}, "go", args...)
}

// extractCommit writes the files of commit into dir (git archive: what the commit tracks, nothing
// of the working tree).
func extractCommit(root, commit, dir string) error {
	cmd := exec.Command("git", "archive", "--format=tar", commit)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	untarErr := untar(out, dir)
	_, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git archive %s: %w: %s", commit, err, stderr.Bytes())
	}
	return untarErr
}

// untar writes the regular files and directories of a tar stream under dir.
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		path := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(path, filepath.Clean(dir)+string(os.PathSeparator)) {
			return fmt.Errorf("archive entry %q leaves %s", h.Name, dir)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o777)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.Symlink(h.Linkname, path); err != nil {
				return err
			}
		}
	}
}

// moduleRoot is the directory of the go.mod of the package under test.
func moduleRoot() (string, error) {
	gomod, err := output("", "go", "env", "GOMOD")
	if err != nil {
		return "", err
	}
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the inkwell module")
	}
	return filepath.Dir(gomod), nil
}

func run(dir string, env []string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

func output(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// lockFile takes an exclusive lock on path (created when missing) until unlock.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() { _ = f.Close() }, nil
}

func raceSuffix() string {
	if raceEnabled {
		return "-race"
	}
	return ""
}

// shortHash names a directory after s.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}
