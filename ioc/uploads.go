package ioc

import (
	"fmt"
	"strconv"
	"strings"
)

// UploadQuota is INKWELL_UPLOAD_QUOTA read: bytes per rolling day and in all (0: no bound).
type UploadQuota struct {
	PerDay int64
	Total  int64
}

// ParseUploadQuota reads "100MB/day,1GB": a daily bound (with "/day") and a total, either
// optional, each a byte size (ParseByteSize); "0" or "" is no quota.
func ParseUploadQuota(s string) (UploadQuota, error) {
	var q UploadQuota
	s = strings.TrimSpace(s)
	if s == "" || s == "0" {
		return q, nil
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		size, daily := strings.CutSuffix(part, "/day")
		n, err := ParseByteSize(size)
		if err != nil {
			return UploadQuota{}, fmt.Errorf("quota %q: %w", part, err)
		}
		if daily {
			q.PerDay = n
		} else {
			q.Total = n
		}
	}
	return q, nil
}

// ParseByteSize reads a byte count with an optional unit: B, KB, MB, GB (powers of 1000) or KiB,
// MiB, GiB (powers of 1024): "10MB", "512KiB", "1048576".
func ParseByteSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a byte size (like 10MB, 512KiB or 1048576)", s)
	}
	return n * mult, nil
}
