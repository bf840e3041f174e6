// Package accountstore keeps accounts and their credentials in MongoDB (database
// vros_edge). Every lookup on the request path is by `_id`.
package accountstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/libs/mongostore"
)

const (
	collAccounts    = "accounts"
	collCredentials = "credentials"
	collCounters    = "counters"
	// firstAccountID keeps account ids at four digits or more.
	firstAccountID = 1000
)

// Store is the accounts repository.
type Store struct {
	accounts    *mongo.Collection
	credentials *mongo.Collection
	ids         *mongostore.Sequence
}

// New returns a store over db, creating its collections.
func New(ctx context.Context, db *mongo.Database) (*Store, error) {
	if err := mongostore.Ensure(ctx, db, []string{collAccounts, collCredentials, collCounters}, nil); err != nil {
		return nil, err
	}
	return &Store{
		accounts:    db.Collection(collAccounts),
		credentials: db.Collection(collCredentials),
		ids:         mongostore.NewSequence(db.Collection(collCounters), "account", 1),
	}, nil
}

type accountDoc struct {
	ID          string            `bson:"_id"`
	Name        string            `bson:"name"`
	Status      string            `bson:"status"`
	CreatedAt   time.Time         `bson:"created_at"`
	UpdatedAt   time.Time         `bson:"updated_at"`
	Identifiers map[string]string `bson:"identifiers"`
	// TokenHash is the owner token's hash, so that rotation can delete its credential.
	TokenHash string `bson:"token_hash,omitempty"`
}

type credentialDoc struct {
	ID         string `bson:"_id"` // "<kind>:<identifier>"
	AccountID  string `bson:"account_id"`
	SecretHash string `bson:"secret_hash"`
}

func credentialID(kind account.Kind, identifier string) string {
	return string(kind) + ":" + identifier
}

// NextID allocates a new account id.
func (s *Store) NextID(ctx context.Context) (string, error) {
	n, err := s.ids.Next(ctx)
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(firstAccountID+n, 10), nil
}

// Create stores a new account and its credentials. Credentials are written first: an
// account document never exists without a way to use it.
func (s *Store) Create(ctx context.Context, a account.Account, creds []account.Credential) error {
	if err := s.putCredentials(ctx, creds); err != nil {
		return err
	}
	doc := toDoc(a, creds)
	if _, err := s.accounts.InsertOne(ctx, doc); err != nil {
		return fmt.Errorf("insert account: %w", err)
	}
	return nil
}

func (s *Store) putCredentials(ctx context.Context, creds []account.Credential) error {
	for _, c := range creds {
		_, err := s.credentials.InsertOne(ctx, credentialDoc{ID: credentialID(c.Kind, c.Identifier), AccountID: c.AccountID, SecretHash: c.SecretHash})
		if err != nil {
			return fmt.Errorf("insert credential: %w", err)
		}
	}
	return nil
}

func toDoc(a account.Account, creds []account.Credential) accountDoc {
	doc := accountDoc{ID: a.ID, Name: a.Name, Status: string(a.Status), CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
		Identifiers: map[string]string{}}
	for k, v := range a.Identifiers {
		doc.Identifiers[string(k)] = v
	}
	for _, c := range creds {
		if c.Kind == account.OwnerToken {
			doc.TokenHash = c.Identifier
		} else {
			doc.Identifiers[string(c.Kind)] = c.Identifier
		}
	}
	return doc
}

// Get returns the account id.
func (s *Store) Get(ctx context.Context, id string) (account.Account, error) {
	d, err := s.get(ctx, id)
	if err != nil {
		return account.Account{}, err
	}
	return fromDoc(d), nil
}

func (s *Store) get(ctx context.Context, id string) (accountDoc, error) {
	var d accountDoc
	err := s.accounts.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return d, account.ErrNotFound
	}
	return d, err
}

func fromDoc(d accountDoc) account.Account {
	a := account.Account{ID: d.ID, Name: d.Name, Status: account.Status(d.Status), CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
		Identifiers: map[account.Kind]string{}}
	for k, v := range d.Identifiers {
		a.Identifiers[account.Kind(k)] = v
	}
	return a
}

// List returns accounts in id order, at most limit after the id after.
func (s *Store) List(ctx context.Context, after string, limit int64) ([]account.Account, error) {
	filter := bson.D{}
	if after != "" {
		filter = bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: after}}}}
	}
	cur, err := s.accounts.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(limit))
	if err != nil {
		return nil, err
	}
	var docs []accountDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	out := make([]account.Account, len(docs))
	for i, d := range docs {
		out[i] = fromDoc(d)
	}
	return out, nil
}

// Credential looks up a credential by kind and identifier.
func (s *Store) Credential(ctx context.Context, kind account.Kind, identifier string) (account.Credential, error) {
	var d credentialDoc
	err := s.credentials.FindOne(ctx, bson.D{{Key: "_id", Value: credentialID(kind, identifier)}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return account.Credential{}, account.ErrNotFound
	}
	if err != nil {
		return account.Credential{}, err
	}
	return account.Credential{Kind: kind, Identifier: identifier, AccountID: d.AccountID, SecretHash: d.SecretHash}, nil
}

// Replace swaps the credentials of the given kinds for new ones. The new ones are stored
// before the old ones are deleted, so a crash leaves both valid rather than neither.
func (s *Store) Replace(ctx context.Context, id string, creds []account.Credential) error {
	d, err := s.get(ctx, id)
	if err != nil {
		return err
	}
	if err := s.putCredentials(ctx, creds); err != nil {
		return err
	}
	set := bson.D{{Key: "updated_at", Value: time.Now().UTC()}}
	var old []string
	for _, c := range creds {
		if c.Kind == account.OwnerToken {
			if d.TokenHash != "" {
				old = append(old, credentialID(c.Kind, d.TokenHash))
			}
			set = append(set, bson.E{Key: "token_hash", Value: c.Identifier})
			continue
		}
		if prev := d.Identifiers[string(c.Kind)]; prev != "" {
			old = append(old, credentialID(c.Kind, prev))
		}
		set = append(set, bson.E{Key: "identifiers." + string(c.Kind), Value: c.Identifier})
	}
	if _, err := s.accounts.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: set}}); err != nil {
		return err
	}
	for _, oid := range old {
		if _, err := s.credentials.DeleteOne(ctx, bson.D{{Key: "_id", Value: oid}}); err != nil {
			return err
		}
	}
	return nil
}

// SetStatus changes an account's status.
func (s *Store) SetStatus(ctx context.Context, id string, st account.Status) (account.Account, error) {
	var d accountDoc
	err := s.accounts.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: id}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: string(st)}, {Key: "updated_at", Value: time.Now().UTC()}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return account.Account{}, account.ErrNotFound
	}
	if err != nil {
		return account.Account{}, err
	}
	return fromDoc(d), nil
}
