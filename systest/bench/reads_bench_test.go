package bench

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkReads: the reads websites and channels poll besides quotes, calendars and the
// search — the rate table (interface B getratetable), a property's detail and its gallery
// (owner-token reads) — through edge on each stack, each beside the bare Fiber app sending
// the same bytes, closed and open loop.
func BenchmarkReads(b *testing.B) {
	eachStore(b, func(b *testing.B, s *store) {
		ids := s.setupBookable(b)
		b.Run("getratetable", func(b *testing.B) {
			body := []byte(fmt.Sprintf(`{"key":%q,"pass":%q,"action":"getratetable","propertyId":%d}`, s.creds.Key, s.creds.Pass, ids[0]))
			s.readLoads(b, s.st.EdgeURL+"/vros/external-booking", body)
		})
		for _, read := range []string{"property-detail", "property-gallery"} {
			b.Run(read, func(b *testing.B) {
				s.readLoads(b, fmt.Sprintf("%s/vros/api/%s/owner_token/%s/property/%d", s.st.EdgeURL, read, s.creds.OwnerToken, ids[0]), []byte(`{}`))
			})
		}
	})
}

// readLoads waits until the read answers, then runs the same-bytes baseline and edge's
// closed and open loops.
func (s *store) readLoads(b *testing.B, url string, body []byte) {
	awaitAnswer(b, url, body)
	sameBytes(b, url, noHeaders, body)
	edgeLoads(b, url, noHeaders, once(body))
}

// awaitAnswer waits up to 30 s until the read answers successfully: the catalog is fed by
// events, so a property just set up shows a moment later.
func awaitAnswer(b *testing.B, url string, body []byte) {
	deadline := time.Now().Add(30 * time.Second)
	for code, resp := send("POST", url, noHeaders(), body); !answered(code, resp); code, resp = send("POST", url, noHeaders(), body) {
		if time.Now().After(deadline) {
			b.Fatalf("the read never answered: HTTP %d %.300s", code, resp)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
