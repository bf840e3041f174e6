// Package idempotency makes retried writes safe: a request carrying an Idempotency-Key
// header is executed once per account, action and key; a retry gets the first answer back
// and changes nothing.
package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/mongostore"
	"github.com/vros/vros/libs/tenancy"
)

// Header is the request header clients set.
const Header = "Idempotency-Key"

// Collection keeps the answers.
const Collection = "idempotency"

// TTL is how long an answer is kept for replay.
const TTL = 24 * time.Hour

// Keys stores first answers.
type Keys struct {
	coll *mongo.Collection
	now  func() time.Time
}

// New returns Keys over db.
func New(ctx context.Context, db *mongo.Database) (*Keys, error) {
	if err := mongostore.Ensure(ctx, db, []string{Collection}, nil); err != nil {
		return nil, err
	}
	return &Keys{coll: db.Collection(Collection), now: time.Now}, nil
}

type record struct {
	ID          string    `bson:"_id"` // "<account>:<action>:<key>"
	Hash        string    `bson:"hash"`
	Done        bool      `bson:"done"`
	Status      int       `bson:"status,omitempty"`
	ContentType string    `bson:"content_type,omitempty"`
	Body        []byte    `bson:"body,omitempty"`
	At          time.Time `bson:"at"`
}

// Middleware guards the action the route serves. Without the header it does nothing.
func (k *Keys) Middleware(action string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		key := c.Get(Header)
		if key == "" {
			return c.Next()
		}
		if len(key) > 255 {
			return httpapi.InvalidField(Header, "must be at most 255 characters")
		}
		sum := sha256.Sum256(c.Body())
		rec := record{ID: tenancy.From(c).AccountID + ":" + action + ":" + key, Hash: hex.EncodeToString(sum[:]), At: k.now().UTC()}
		ctx := c.UserContext()
		if _, err := k.coll.InsertOne(ctx, rec); err != nil {
			if !mongostore.IsDuplicate(err) {
				return err
			}
			return k.replay(c, rec)
		}
		err := c.Next()
		if err != nil {
			// Write the error answer now, so that it can be kept like any other.
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				return herr
			}
		}
		status := c.Response().StatusCode()
		if status >= 500 {
			// Nothing was promised: let a retry run the request again.
			_, derr := k.coll.DeleteOne(context.WithoutCancel(ctx), bson.D{{Key: "_id", Value: rec.ID}})
			return derr
		}
		_, uerr := k.coll.UpdateOne(context.WithoutCancel(ctx), bson.D{{Key: "_id", Value: rec.ID}}, bson.D{{Key: "$set", Value: bson.D{
			{Key: "done", Value: true}, {Key: "status", Value: status},
			{Key: "content_type", Value: string(c.Response().Header.ContentType())},
			{Key: "body", Value: append([]byte(nil), c.Response().Body()...)},
		}}})
		return uerr
	}
}

func (k *Keys) replay(c *fiber.Ctx, rec record) error {
	var first record
	err := k.coll.FindOne(c.UserContext(), bson.D{{Key: "_id", Value: rec.ID}}).Decode(&first)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return httpapi.Conflict(httpapi.StatusConflict, "a request with this Idempotency-Key has just failed; retry")
	}
	if err != nil {
		return err
	}
	switch {
	case first.Hash != rec.Hash:
		return &httpapi.Error{HTTP: fiber.StatusUnprocessableEntity, Type: "idempotency_key_reused", Status: httpapi.StatusInvalid,
			Message: "Idempotency-Key was already used with a different request"}
	case !first.Done:
		return httpapi.Conflict(httpapi.StatusConflict, "a request with this Idempotency-Key is still in progress")
	}
	c.Set("Idempotent-Replayed", "true")
	c.Set(fiber.HeaderContentType, first.ContentType)
	return c.Status(first.Status).Send(first.Body)
}

// Expire deletes answers older than TTL.
func (k *Keys) Expire(ctx context.Context) error {
	_, err := k.coll.DeleteMany(ctx, bson.D{{Key: "at", Value: bson.D{{Key: "$lt", Value: k.now().UTC().Add(-TTL)}}}})
	return err
}
