package domain

import "time"

// UploadQuota bounds one user's uploads: the bytes uploaded in any day (a rolling 24 hours) and
// the bytes stored in all (INKWELL_UPLOAD_QUOTA, "100MB/day,1GB"). Bytes are the stored
// originals' (derived sizes are not counted). 0 is no bound.
type UploadQuota struct {
	PerDay int64
	Total  int64
}

// UploadUsage is what a user has used of the quota: the stored bytes in all, the bytes uploaded
// in the last 24 hours and when the oldest of those leaves the window.
type UploadUsage struct {
	Total      int64
	Day        int64
	DayFreesAt time.Time
}

// QuotaError refuses an upload over the user's quota: the total (413, until some uploads are
// deleted) or the day's (429, RetryAfter says when the window frees some bytes).
type QuotaError struct {
	Daily      bool
	RetryAfter time.Duration
}

func (e *QuotaError) Error() string { return e.Message() }

// Message is the client's explanation.
func (e *QuotaError) Message() string {
	if e.Daily {
		return "is over your daily upload quota; retry later"
	}
	return "is over your storage quota; delete some uploads"
}

// Check refuses adding n bytes to u under q.
func (q UploadQuota) Check(u UploadUsage, n int64, now time.Time) error {
	if q.Total > 0 && u.Total+n > q.Total {
		return &QuotaError{}
	}
	if q.PerDay > 0 && u.Day+n > q.PerDay {
		return &QuotaError{Daily: true, RetryAfter: max(u.DayFreesAt.Sub(now), time.Second)}
	}
	return nil
}
