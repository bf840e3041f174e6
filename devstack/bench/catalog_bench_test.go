package bench

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkGetcalendar: a 365-day calendar through edge (about 60 KB of JSON, every price
// from the pricing engine), beside the bare Fiber baseline answering the same request.
func BenchmarkGetcalendar(b *testing.B) {
	ids := setupBookable(b)
	body := []byte(fmt.Sprintf(`{"key":%q,"pass":%q,"action":"getcalendar","propertyId":"%s_%d","startDate":%q,"endDate":%q}`,
		creds.Key, creds.Pass, creds.AccountID, ids[0], day(1), day(365)))
	// The catalog is fed by events: wait until it serves the property.
	deadline := time.Now().Add(30 * time.Second)
	for code, _ := send("POST", st.EdgeURL+"/vros/external-booking", noHeaders(), body); code != 200; code, _ = send("POST", st.EdgeURL+"/vros/external-booking", noHeaders(), body) {
		if time.Now().After(deadline) {
			b.Fatal("catalog-svc never served the benchmark property")
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Run("bare-fiber", func(b *testing.B) { load(b, bareURL+"/vros/external-booking", noHeaders, body) })
	b.Run("edge", func(b *testing.B) { load(b, st.EdgeURL+"/vros/external-booking", noHeaders, body) })
}
