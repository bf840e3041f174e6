package aristore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
)

// BenchmarkFullSync100: a full sync of 500 days of two plans for 100 mapped properties, each
// pushed to a channel manager that answers at once: the sender's own cost (projection reads,
// pricing, diff, marks and sent values in the embedded MongoDB) per full sync of all 100.
func BenchmarkFullSync100(b *testing.B) {
	ctx := context.Background()
	e := newEnv(b)
	c := channel.Connection{Account: "b1", ID: 1, Adapter: channel.Channex, Channel: "channex", Enabled: true, Days: 500}
	var ms []channel.Mapping
	for id := int64(1); id <= 100; id++ {
		ms = append(ms, channel.Mapping{Account: "b1", ConnectionID: 1, PropertyID: id, RemotePropertyID: fmt.Sprint("P", id),
			RatePlans: []channel.PlanMapping{{RatePlanID: 0, RemoteRatePlanID: "STD"}, {RatePlanID: 1, RemoteRatePlanID: "NR"}}, Enabled: true})
	}
	e.conns.put(c, ms...)
	for id := int64(1); id <= 100; id++ {
		p := property("b1", 1, "100.00")
		p.PropertyID = id
		e.putProperty(b, p)
	}
	e.drain(b, ctx)
	e.rec.taken()
	for b.Loop() {
		for id := int64(1); id <= 100; id++ {
			if err := e.snd.MarkDirty(ctx, "b1", 1, id, true); err != nil {
				b.Fatal(err)
			}
		}
		e.drain(b, ctx)
		if n := len(e.rec.taken()); n != 200 {
			b.Fatalf("%d requests, want 200", n)
		}
	}
}
