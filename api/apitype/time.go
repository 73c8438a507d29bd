package apitype

import (
	"strconv"
	"time"
)

// timeLayouts are the ISO forms accepted for anchors and --since/--until.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"}

// ParseTimeFilter parses a --since/--until value: epoch milliseconds or what ParseTime takes.
func ParseTimeFilter(s string) (int64, bool) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	return ParseTime(s)
}

// ParseTime parses an ISO date or date-time (UTC unless it carries a zone) into epoch ms.
func ParseTime(s string) (int64, bool) {
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UnixMilli(), true
		}
	}
	return 0, false
}
