package ioc

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// DefaultDevSecretFile is where dev keeps its JWT secret when INKWELL_JWT_SECRET is not set,
// relative to the working directory (`.data/` is git-ignored).
const DefaultDevSecretFile = ".data/jwt-secret"

// devSecretMin is the shortest secret a dev secret file may hold, the same floor as
// INKWELL_JWT_SECRET's. A created file holds 32 random bytes as 64 hex digits.
const devSecretMin = 32

// LoadDevSecret returns the JWT secret kept in the file at path, creating the file first when it
// does not exist (created reports that this call made it). Creation is atomic: the secret is
// written to a temporary file in the same directory and hard-linked into place, so when several
// processes start at once exactly one link succeeds and every process reads the winner's secret;
// nobody ever reads a half-written file. A file that other users may read or write, or that holds
// fewer than 32 bytes, is refused.
func LoadDevSecret(path string) (secret string, created bool, err error) {
	if path == "" {
		return "", false, errors.New("INKWELL_DEV_SECRET_FILE is empty: set it to a file path (default " + DefaultDevSecretFile + ") or set INKWELL_JWT_SECRET")
	}
	secret, err = readDevSecret(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return secret, false, err
	}
	if created, err = createDevSecret(path); err != nil {
		return "", false, err
	}
	secret, err = readDevSecret(path)
	return secret, created, err
}

func readDevSecret(path string) (string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", err
	} else if err != nil {
		return "", fmt.Errorf("dev JWT secret file %s: %w (fix the file, or set INKWELL_JWT_SECRET)", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("dev JWT secret file %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("dev JWT secret file %s is not a regular file: remove it (a new secret is created at the next start) or point INKWELL_DEV_SECRET_FILE elsewhere", path)
	}
	// Windows reports made-up permission bits; elsewhere the secret must be the owner's alone.
	if perm := fi.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		return "", fmt.Errorf("dev JWT secret file %s has mode %04o: other users can read or change it; run `chmod 600 %s` (or delete it to have a new secret created at the next start)", path, perm, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", fmt.Errorf("dev JWT secret file %s: %w", path, err)
	}
	secret := string(bytes.TrimSpace(data))
	if len(secret) < devSecretMin {
		return "", fmt.Errorf("dev JWT secret file %s holds %d bytes, fewer than the %d a JWT secret needs: delete it to have a new secret created at the next start, or write one into it (e.g. `openssl rand -hex 32 > %s`)", path, len(secret), devSecretMin, path)
	}
	return secret, nil
}

// createDevSecret makes the file at path with a new random secret unless another process gets
// there first; created reports whether this call's secret is the one in the file.
func createDevSecret(path string) (created bool, err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, fmt.Errorf("dev JWT secret file %s: %w (create the directory, point INKWELL_DEV_SECRET_FILE at a writable place, or set INKWELL_JWT_SECRET)", path, err)
	}
	buf := make([]byte, 32)
	_, _ = rand.Read(buf) // crypto/rand never fails
	// CreateTemp makes the file with mode 0600, in the same directory so that it can be linked.
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return false, fmt.Errorf("dev JWT secret file %s: %w (point INKWELL_DEV_SECRET_FILE at a writable place, or set INKWELL_JWT_SECRET)", path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(hex.EncodeToString(buf) + "\n")
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, fmt.Errorf("dev JWT secret file %s: writing %s: %w", path, tmp.Name(), err)
	}
	// link(2) fails when path exists, unlike rename(2): the first process to link wins, the others
	// read its complete file.
	switch err := os.Link(tmp.Name(), path); {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrExist):
		return false, nil
	default:
		return false, fmt.Errorf("dev JWT secret file %s: %w (the file system must support hard links; or set INKWELL_JWT_SECRET)", path, err)
	}
}
