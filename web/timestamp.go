package web

import "time"

// timestamp renders as ISO 8601 in UTC with exactly three fractional digits
// ("2026-11-30T03:42:04.902Z"), the form RealWorld clients and test suites expect. Go's default
// RFC 3339 rendering drops the fraction when it is zero, which some clients reject.
type timestamp time.Time

const timestampLayout = "2006-01-02T15:04:05.000Z07:00"

// MarshalText rather than MarshalJSON: encoding/json validates and compacts what a MarshalJSON
// returns, a measurable cost with two timestamps per list item; a text form it only quotes.
func (t timestamp) MarshalText() ([]byte, error) {
	return appendTimestamp(make([]byte, 0, len(timestampLayout)), time.Time(t)), nil
}

// appendTimestamp is AppendFormat(timestampLayout) written out for the one layout: a list page
// renders forty of them, and the general formatter is several times slower.
func appendTimestamp(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, timestampLayout)
	}
	hour, minute, sec := t.Clock()
	b = appendDigits(b, year, 4)
	b = append(b, '-')
	b = appendDigits(b, int(month), 2)
	b = append(b, '-')
	b = appendDigits(b, day, 2)
	b = append(b, 'T')
	b = appendDigits(b, hour, 2)
	b = append(b, ':')
	b = appendDigits(b, minute, 2)
	b = append(b, ':')
	b = appendDigits(b, sec, 2)
	b = append(b, '.')
	b = appendDigits(b, t.Nanosecond()/int(time.Millisecond), 3)
	return append(b, 'Z')
}

// appendDigits appends v (0 <= v < 10^width) zero-padded to width digits.
func appendDigits(b []byte, v, width int) []byte {
	var buf [4]byte
	for i := width - 1; i >= 0; i-- {
		buf[i] = byte('0' + v%10)
		v /= 10
	}
	return append(b, buf[:width]...)
}
