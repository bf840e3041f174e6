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
	// locks serialize the writes to one account (see lock).
	locks *mongostore.DocLocks
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
		locks:       mongostore.NewDocLocks(),
	}, nil
}

type accountDoc struct {
	ID      string `bson:"_id"`
	Name    string `bson:"name"`
	Status  string `bson:"status"`
	Sandbox bool   `bson:"sandbox,omitempty"`
	// LegacyOff: absent (on) in every account stored before the setting existed.
	LegacyOff   bool              `bson:"legacy_credentials_off,omitempty"`
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
	doc := accountDoc{ID: a.ID, Name: a.Name, Status: string(a.Status), Sandbox: a.Sandbox, LegacyOff: a.LegacyOff, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
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
	a := account.Account{ID: d.ID, Name: d.Name, Status: account.Status(d.Status), Sandbox: d.Sandbox, LegacyOff: d.LegacyOff, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
		Identifiers: map[account.Kind]string{}, TokenHash: d.TokenHash}
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

// Replace makes creds the account's credentials of their kinds. The new credentials are
// stored first and then listed in the account document by one update, which is the moment
// of the switch: authentication accepts only the credentials the account lists. The
// update returns the document as it was before, so exactly the credentials it unlisted are
// then deleted, whatever ran concurrently. A crash between the steps leaves credential
// documents that no account lists, which authenticate nobody.
func (s *Store) Replace(ctx context.Context, id string, creds []account.Credential) (account.Account, error) {
	unlock := s.lock(id)
	defer unlock()
	if err := s.putCredentials(ctx, creds); err != nil {
		return account.Account{}, err
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	set := bson.D{{Key: "updated_at", Value: now}}
	for _, c := range creds {
		if c.Kind == account.OwnerToken {
			set = append(set, bson.E{Key: "token_hash", Value: c.Identifier})
		} else {
			set = append(set, bson.E{Key: "identifiers." + string(c.Kind), Value: c.Identifier})
		}
	}
	var d accountDoc
	err := s.accounts.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: set}},
		options.FindOneAndUpdate().SetReturnDocument(options.Before)).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		s.deleteCredentials(ctx, creds)
		return account.Account{}, account.ErrNotFound
	}
	if err != nil {
		return account.Account{}, err
	}
	if d.Identifiers == nil {
		d.Identifiers = map[string]string{}
	}
	var old []account.Credential
	for _, c := range creds {
		prev := d.Identifiers[string(c.Kind)]
		if c.Kind == account.OwnerToken {
			prev, d.TokenHash = d.TokenHash, c.Identifier
		} else {
			d.Identifiers[string(c.Kind)] = c.Identifier
		}
		if prev != "" && prev != c.Identifier {
			old = append(old, account.Credential{Kind: c.Kind, Identifier: prev})
		}
	}
	d.UpdatedAt = now
	// Unlisted, the old credentials already authenticate nobody: deleting them is
	// housekeeping, and its failure does not undo the rotation.
	s.deleteCredentials(ctx, old)
	return fromDoc(d), nil
}

func (s *Store) deleteCredentials(ctx context.Context, creds []account.Credential) {
	for _, c := range creds {
		_, _ = s.credentials.DeleteOne(ctx, bson.D{{Key: "_id", Value: credentialID(c.Kind, c.Identifier)}})
	}
}

// lock serializes the writes to one account made through this store (see
// mongostore.DocLocks: the embedded FerretDB could otherwise lose a status change to a
// concurrent rotation). Edge replicas sharing a FerretDB are not supported; `make run` runs one.
func (s *Store) lock(id string) (unlock func()) { return s.locks.Lock(id) }

// SetStatus changes an account's status.
func (s *Store) SetStatus(ctx context.Context, id string, st account.Status) (account.Account, error) {
	return s.set(ctx, id, bson.E{Key: "status", Value: string(st)})
}

// SetLegacy turns the account's legacy_credentials setting on or off.
func (s *Store) SetLegacy(ctx context.Context, id string, on bool) (account.Account, error) {
	return s.set(ctx, id, bson.E{Key: "legacy_credentials_off", Value: !on})
}

// set changes one field of an account and its updated_at.
func (s *Store) set(ctx context.Context, id string, field bson.E) (account.Account, error) {
	unlock := s.lock(id)
	defer unlock()
	var d accountDoc
	err := s.accounts.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: id}},
		bson.D{{Key: "$set", Value: bson.D{field, {Key: "updated_at", Value: time.Now().UTC().Truncate(time.Millisecond)}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return account.Account{}, account.ErrNotFound
	}
	if err != nil {
		return account.Account{}, err
	}
	return fromDoc(d), nil
}
