package events

import (
	"context"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// ParkedCollection is where each consuming service keeps events it could not apply.
const ParkedCollection = "parked_events"

// ParkIn returns a Parker that keeps messages in coll, one document per message (`_id`
// "<topic>:<partition>:<offset>", so parking again is harmless), for an operator to inspect
// and replay.
func ParkIn(coll *mongo.Collection) Parker {
	return func(ctx context.Context, m kafka.Message, reason error) error {
		id := fmt.Sprintf("%s:%d:%d", m.Topic, m.Partition, m.Offset)
		_, err := coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{
			{Key: "_id", Value: id}, {Key: "topic", Value: m.Topic}, {Key: "partition", Value: m.Partition},
			{Key: "offset", Value: m.Offset}, {Key: "key", Value: string(m.Key)}, {Key: "value", Value: string(m.Value)},
			{Key: "error", Value: reason.Error()}, {Key: "parked_at", Value: time.Now().UTC()},
		}, options.Replace().SetUpsert(true))
		return err
	}
}
