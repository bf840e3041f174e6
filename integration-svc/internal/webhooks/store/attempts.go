package store

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Attempts: the log of every attempt to send a delivery, kept for the attempt retention
// (7 days by default).

type attemptDoc struct {
	ID              string    `bson:"_id"`
	AccountID       string    `bson:"account_id"`
	WebhookID       int64     `bson:"webhook_id"`
	Delivery        string    `bson:"delivery"`
	Attempt         int       `bson:"attempt"`
	At              time.Time `bson:"at"`
	StatusCode      int       `bson:"status_code"`
	LatencyMS       int64     `bson:"latency_ms"`
	Error           string    `bson:"error"`
	ResponseExcerpt string    `bson:"response_excerpt"`
	OK              bool      `bson:"ok"`
}

// PruneAttempts deletes attempts made before cutoff (the log keeps 7 days).
func (s *Store) PruneAttempts(ctx context.Context, cutoff time.Time) (int64, error) {
	r, err := s.attempts.DeleteMany(ctx, bson.D{{Key: "at", Value: bson.D{{Key: "$lt", Value: cutoff}}}})
	if err != nil {
		return 0, err
	}
	return r.DeletedCount, nil
}
