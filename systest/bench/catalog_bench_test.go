package bench

import (
	"fmt"
	"sync/atomic"
	"testing"
)

// BenchmarkGetcalendar: a 365-day calendar through edge on each stack (about 60 KB of JSON,
// every price from the pricing engine), beside the bare Fiber baseline answering the same
// request.
func BenchmarkGetcalendar(b *testing.B) {
	bare := []byte(fmt.Sprintf(`{"key":"k","pass":"p","action":"getcalendar","propertyId":"a_1","startDate":%q,"endDate":%q}`, day(1), day(365)))
	b.Run("bare-fiber", func(b *testing.B) { load(b, bareURL+"/vros/external-booking", noHeaders, bare) })
	eachStore(b, func(b *testing.B, s *store) {
		ids := s.setupBookable(b)
		body := s.creds.calendarBody(ids[0], 1, 365)
		awaitAnswer(b, s.st.EdgeURL+"/vros/external-booking", body)
		sameBytes(b, s.st.EdgeURL+"/vros/external-booking", noHeaders, body)
		edgeLoads(b, s.st.EdgeURL+"/vros/external-booking", noHeaders, once(body))
		// Every request a range no other asked for lately (300 start dates in turn, more than
		// catalog-svc keeps answers of): each answer is computed, none is kept.
		var n atomic.Int64
		b.Run("edge-uncached", func(b *testing.B) {
			loadBodies(b, s.st.EdgeURL+"/vros/external-booking", noHeaders, func() []byte {
				k := int(n.Add(1) % 300)
				return s.creds.calendarBody(ids[0], 1+k, 365+k)
			})
		})
	})
}
