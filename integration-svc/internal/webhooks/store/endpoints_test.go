package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/integration-svc/internal/webhooks/hooks"
	"github.com/vros/vros/integration-svc/internal/webhooks/store"
	"github.com/vros/vros/integration-svc/internal/webhooks/webhook"
)

// EndpointCached serves a recent copy and drops it when this process writes the endpoint.
func TestEndpointCachedDroppedByWrites(t *testing.T) {
	ctx := context.Background()
	f := setup(t)
	if _, err := f.st.EndpointCached(ctx, f.account, f.ep.ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	// a write by another process: the copy is served until it ages
	if _, err := db.Collection(store.Endpoints).UpdateOne(ctx, bson.D{{Key: "_id", Value: f.account + ":" + fmt.Sprint(f.ep.ID)}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "url", Value: "https://example.com/other"}}}}); err != nil {
		t.Fatal(err)
	}
	if e, _ := f.st.EndpointCached(ctx, f.account, f.ep.ID, time.Minute); e.URL != f.ep.URL {
		t.Fatalf("copy not used: %s", e.URL)
	}
	if e, _ := f.st.EndpointCached(ctx, f.account, f.ep.ID, 0); e.URL != "https://example.com/other" {
		t.Fatalf("aged copy used: %s", e.URL)
	}
	third := "https://example.com/third"
	if _, _, err := f.st.ModifyEndpoint(ctx, f.account, f.ep.ID, time.Now(), func(e *webhook.Endpoint) bool { e.URL = third; return true }); err != nil {
		t.Fatal(err)
	}
	if e, _ := f.st.EndpointCached(ctx, f.account, f.ep.ID, time.Minute); e.URL != third {
		t.Fatalf("copy kept after this process's write: %s", e.URL)
	}
	if err := f.st.DeleteEndpoint(ctx, f.account, f.ep.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.EndpointCached(ctx, f.account, f.ep.ID, time.Minute); !errors.Is(err, hooks.ErrNotFound) {
		t.Fatalf("deleted endpoint served: %v", err)
	}
}
