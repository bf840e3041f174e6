package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/libs/mongostore"
)

const suppressionsColl = "suppressions"

// Suppression is an address of an account no mail is sent to (it bounced), _id
// "<account>:<address>".
type Suppression struct {
	Account   string    `bson:"account"`
	Address   string    `bson:"address"` // lower-cased
	Reason    string    `bson:"reason"`  // the server's answer to the bounce
	MessageID string    `bson:"message"` // the message that bounced (its natural id)
	Created   time.Time `bson:"created"`
}

// Suppressions is the accounts' suppression lists.
type Suppressions struct {
	coll *mongo.Collection
}

// NewSuppressions returns the suppression lists of db, creating their collection and index.
func NewSuppressions(ctx context.Context, db *mongo.Database) (*Suppressions, error) {
	err := mongostore.Ensure(ctx, db, []string{suppressionsColl}, []mongostore.Index{
		{Collection: suppressionsColl, Keys: bson.D{{Key: "account", Value: 1}, {Key: "created", Value: -1}}},
	})
	if err != nil {
		return nil, fmt.Errorf("suppressions: %w", err)
	}
	return &Suppressions{coll: db.Collection(suppressionsColl)}, nil
}

// suppressionsAddress is an address as the list keeps it.
func suppressionsAddress(a string) string { return strings.ToLower(strings.TrimSpace(a)) }

func suppressionsID(account, address string) string { return account + ":" + address }

// Add puts sup.Address on sup.Account's list; an address already there keeps its first entry.
func (s *Suppressions) Add(ctx context.Context, sup Suppression) error {
	sup.Address = suppressionsAddress(sup.Address)
	if sup.Account == "" || sup.Address == "" {
		return fmt.Errorf("suppressions: add %q for %q: no account or address", sup.Address, sup.Account)
	}
	sup.Created = messagesTime(sup.Created)
	_, err := s.coll.InsertOne(ctx, bson.D{{Key: "_id", Value: suppressionsID(sup.Account, sup.Address)},
		{Key: "account", Value: sup.Account}, {Key: "address", Value: sup.Address},
		{Key: "reason", Value: sup.Reason}, {Key: "message", Value: sup.MessageID},
		{Key: "created", Value: sup.Created}})
	if err != nil && !mongostore.IsDuplicate(err) {
		return fmt.Errorf("suppressions: add: %w", err)
	}
	return nil
}

// Has tells whether address is on the account's list.
func (s *Suppressions) Has(ctx context.Context, account, address string) (bool, error) {
	address = suppressionsAddress(address)
	err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: suppressionsID(account, address)},
		{Key: "account", Value: account}}, options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("suppressions: has: %w", err)
	}
	return true, nil
}

// List answers the account's list, newest first.
func (s *Suppressions) List(ctx context.Context, account string) ([]Suppression, error) {
	cur, err := s.coll.Find(ctx, bson.D{{Key: "account", Value: account}},
		options.Find().SetSort(bson.D{{Key: "created", Value: -1}, {Key: "address", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("suppressions: list: %w", err)
	}
	list := []Suppression{}
	if err := cur.All(ctx, &list); err != nil {
		return nil, fmt.Errorf("suppressions: list: %w", err)
	}
	return list, nil
}

// Remove takes address off the account's list; false when it was not on it.
func (s *Suppressions) Remove(ctx context.Context, account, address string) (bool, error) {
	address = suppressionsAddress(address)
	res, err := s.coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: suppressionsID(account, address)},
		{Key: "account", Value: account}})
	if err != nil {
		return false, fmt.Errorf("suppressions: remove: %w", err)
	}
	return res.DeletedCount > 0, nil
}

// Erase deletes the account's list (account erased).
func (s *Suppressions) Erase(ctx context.Context, account string) error {
	if _, err := s.coll.DeleteMany(ctx, bson.D{{Key: "account", Value: account}}); err != nil {
		return fmt.Errorf("suppressions: erase %s: %w", account, err)
	}
	return nil
}
