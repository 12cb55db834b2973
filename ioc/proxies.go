package ioc

import (
	"fmt"
	"net"
	"strings"
)

// ParseTrustedProxies reads INKWELL_TRUSTED_PROXIES: comma-separated IPs or CIDRs, blanks ignored.
// An entry that is neither is an error, not skipped: a mistyped proxy would otherwise leave the
// server reading every client as the proxy (one rate-limit bucket for all) without a word.
func ParseTrustedProxies(s string) ([]string, error) {
	var proxies []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		// The same parse gin's SetTrustedProxies applies, so whatever passes here it accepts.
		_, _, cidrErr := net.ParseCIDR(p)
		if strings.Contains(p, "/") && cidrErr != nil || !strings.Contains(p, "/") && net.ParseIP(p) == nil {
			return nil, fmt.Errorf("INKWELL_TRUSTED_PROXIES: %q is not an IP address or CIDR (e.g. 10.0.0.1 or 10.0.0.0/8)", p)
		}
		proxies = append(proxies, p)
	}
	return proxies, nil
}
