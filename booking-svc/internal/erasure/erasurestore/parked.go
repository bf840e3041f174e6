package erasurestore

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/booking-svc/internal/erasure"
	"github.com/vros/vros/libs/mongostore"
)

// ParkedEvents is the part that deletes the account's parked events (`parked_events`, whose
// key begins with "<account>:"): they hold its snapshots.
func ParkedEvents(parked *mongo.Collection) erasure.Part {
	return erasure.Part{Name: "parked events", Erase: func(ctx context.Context, account string) error {
		_, err := parked.DeleteMany(ctx, bson.D{{Key: "key", Value: mongostore.OwnedBy(account)}})
		return err
	}}
}
