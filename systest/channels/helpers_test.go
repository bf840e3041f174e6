package channels

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/systest/chantest"
)

// waitProjected waits until integration-svc's ARI projection (chan_snaps, docs/channels.md
// "ARI out") holds the property's newest version — the version property-svc stored — so that
// a mapping created next is synced from it, and the test can expect its values exactly
// rather than a sync of an older snapshot followed by the difference.
func waitProjected(t *testing.T, acc chantest.Account, pid int64) {
	t.Helper()
	ctx := context.Background()
	id := acc.AccountID + ":" + strconv.FormatInt(pid, 10)
	err := chantest.Eventually(within, func() error {
		var want, got struct {
			Version int64 `bson:"version"`
		}
		if err := mongoDB.Database("vros_property").Collection("properties").FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&want); err != nil {
			return err
		}
		err := mongoDB.Database("vros_integration").Collection("chan_snaps").FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&got)
		if errors.Is(err, mongo.ErrNoDocuments) || err == nil && got.Version < want.Version {
			return fmt.Errorf("projected version %d, stored %d", got.Version, want.Version)
		}
		return err
	})
	if err != nil {
		t.Fatalf("the ARI projection of property %s: %v", id, err)
	}
}
