package web

import "time"

// timestamp renders as ISO 8601 in UTC with exactly three fractional digits
// ("2026-11-30T03:42:04.902Z"), the form RealWorld clients and test suites expect. Go's default
// RFC 3339 rendering drops the fraction when it is zero, which some clients reject.
type timestamp time.Time

const timestampLayout = "2006-01-02T15:04:05.000Z07:00"

func (t timestamp) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(timestampLayout)+2)
	b = append(b, '"')
	b = time.Time(t).UTC().AppendFormat(b, timestampLayout)
	return append(b, '"'), nil
}
